"""The training stages of the generator (the paper's Stages 0–2), one function each.

- **Stage 0, text-to-video** (our stand-in for Wan's pretraining): a dense generator (20 future chunks)
  learns the flow of whole clips from the words alone: every slot is noised and trained, no reference.
- **Stage 1, image-to-video with sparse supervision**: the same weights now see the clean reference
  (re-injected) and learn only the sparse future slots, ``L₁ = E ‖u_θ(x_t, l, c_T, t) − (ε − x₀)‖²``.
  Because positions are true chunk indices, offset ``k`` lands on the dense model's index ``k``: the
  Stage-0 weights carry over unchanged (the slot layout is not a parameter).
- **Stage 2, history injection**: the Former and the zero-initialised history cross-attention are added
  (:func:`~neurips26.sparsevideonav.generator.load_stage`) and trained with the rest,
  ``L₂ = E ‖u_θ(x_t, l, c_T, h_T, t) − (ε − x₀)‖²``.

Each update draws ``batch`` decisions uniformly from the episodes (seeded by the update's index) and
runs :func:`neurips26.train.fit` (AdamW, warm-up, cosine decay, gradient clipping).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from neurips26.seeding import sub_seed
from neurips26.sparsevideonav.dataset import Episode, decision_index, make_batch, sample_pairs
from neurips26.sparsevideonav.former import Former, FormerConfig
from neurips26.sparsevideonav.generator import GeneratorConfig, SparseVideoGenerator, flow_loss, load_stage
from neurips26.train import fit
from neurips26.validation import check_float, check_int

#: History chunks a training example keeps at most (the longest demonstration has about 62).
MAX_HISTORY = 64


@dataclass(frozen=True)
class Recipe:
    """steps, batch, lr, seed of one training run."""

    steps: int = 2000
    batch: int = 64
    lr: float = 1e-3
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("steps", self.steps, minimum=1)
        check_int("batch", self.batch, minimum=1)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_int("seed", self.seed, minimum=0)


class Stage2(nn.Module):
    """The Stage-2 pair: ``former`` (history → h_T) and ``generator`` (history mode ``"former"``)."""

    def __init__(self, generator: SparseVideoGenerator, former: Former):
        super().__init__()
        if generator.config.history != "former":
            raise ValueError(f"generator must be in history mode 'former'; got {generator.config.history!r}")
        self.generator = generator
        self.former = former

    def memory(self, history: torch.Tensor, history_mask: torch.Tensor, words: torch.Tensor) -> torch.Tensor:
        return self.former(history, history_mask, words)


def _fit(
    model: nn.Module, loss, episodes: Sequence[Episode], offsets, recipe: Recipe, desc: str, progress: bool
):
    index = decision_index(episodes)

    def batch_at(step: int):
        return make_batch(
            episodes,
            sample_pairs(index, recipe.batch, sub_seed(recipe.seed, 14, step)),
            offsets,
            max_history=MAX_HISTORY,
        )

    return fit_recipe(model, loss, batch_at, recipe, desc, progress=progress)


def fit_recipe(
    model: nn.Module,
    loss,
    batch_at,
    recipe: Recipe,
    desc: str,
    *,
    progress: bool = False,
    freeze: bool = False,
) -> list[float]:
    """Every training run of the chapter: :func:`neurips26.train.fit` with ``recipe``'s steps, learning rate
    and seed, a 5 % warm-up and weight decay 0.01; the model is left in eval mode (and frozen with
    ``freeze``). Returns the loss of every update."""
    history = fit(
        model,
        loss,
        batch_at,
        steps=recipe.steps,
        seed=recipe.seed,
        lr=recipe.lr,
        warmup=max(1, recipe.steps // 20),
        weight_decay=0.01,
        progress=progress,
        desc=desc,
    )
    model.eval()
    if freeze:
        for p in model.parameters():
            p.requires_grad_(False)
    return list(history.loss)


def _seeded(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def train_t2v(
    config: GeneratorConfig, episodes: Sequence[Episode], recipe: Recipe, *, progress: bool = False
) -> tuple[SparseVideoGenerator, list[float]]:
    """Stage 0: every slot noised and trained from the words alone (a dense config is expected)."""
    torch.manual_seed(recipe.seed)
    model = SparseVideoGenerator(config)
    noise = _seeded(sub_seed(recipe.seed, 140))

    def loss(m, b):
        return flow_loss(m, b.clip, b.words, generator=noise, reference=False)

    return model, _fit(model, loss, episodes, config.offsets, recipe, "stage 0 (text to video)", progress)


def train_i2v(
    config: GeneratorConfig,
    episodes: Sequence[Episode],
    recipe: Recipe,
    *,
    init: SparseVideoGenerator | None = None,
    progress: bool = False,
) -> tuple[SparseVideoGenerator, list[float]]:
    """Stage 1: sparse image-to-video from ``init``'s weights (Stage 0), or from scratch when None."""
    if config.history != "none":
        raise ValueError(f"config.history must be 'none' for Stage 1; got {config.history!r}")
    torch.manual_seed(recipe.seed)
    model = SparseVideoGenerator(config)
    if init is not None:
        load_stage(model, init)
    noise = _seeded(sub_seed(recipe.seed, 141))

    def loss(m, b):
        return flow_loss(m, b.clip, b.words, generator=noise)

    return model, _fit(
        model, loss, episodes, config.offsets, recipe, "stage 1 (sparse image to video)", progress
    )


def train_history(
    stage1: SparseVideoGenerator,
    former_config: FormerConfig,
    episodes: Sequence[Episode],
    recipe: Recipe,
    *,
    progress: bool = False,
) -> tuple[Stage2, list[float]]:
    """Stage 2: the Stage-1 generator plus a new Former and zero-initialised history cross-attention."""
    torch.manual_seed(recipe.seed)
    config = stage1.config.with_history("former")
    if former_config.memory_tokens != config.memory_tokens or former_config.width != config.width:
        raise ValueError("former_config must give h_T the generator's memory_tokens and width")
    generator = SparseVideoGenerator(config)
    load_stage(generator, stage1)
    model = Stage2(generator, Former(former_config))
    noise = _seeded(sub_seed(recipe.seed, 142))

    def loss(m: Stage2, b):
        memory = m.memory(b.history, b.history_mask, b.words)
        return flow_loss(m.generator, b.clip, b.words, generator=noise, memory=memory)

    return model, _fit(model, loss, episodes, config.offsets, recipe, "stage 2 (history)", progress)


__all__ = ["MAX_HISTORY", "Recipe", "Stage2", "fit_recipe", "train_history", "train_i2v", "train_t2v"]
