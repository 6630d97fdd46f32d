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
runs :func:`neurips26.train.fit` (AdamW, warm-up, cosine decay, gradient clipping) on the device
:func:`~neurips26.train.choose_device` picks; under ``torchrun`` it trains data-parallel (each loss calls the
module, :class:`Stage2` included, and each rank draws its own flow noise: rank 0 keeps the seed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from neurips26.distributed import rank_seed, world
from neurips26.seeding import sub_seed
from neurips26.sparsevideonav.dataset import Episode, decision_index, make_batch, sample_pairs
from neurips26.sparsevideonav.former import Former, FormerConfig
from neurips26.sparsevideonav.generator import GeneratorConfig, SparseVideoGenerator, flow_loss, load_stage
from neurips26.train import choose_device, fit
from neurips26.validation import check_float, check_int

#: History chunks a training example keeps at most (the longest demonstration has about 62).
MAX_HISTORY = 64


@dataclass(frozen=True)
class Recipe:
    """steps, batch, lr, seed of one training run; warmup: its warm-up updates (None: 5 % of the steps, at
    least one; the field came with the ``paper`` scale, so a plan's hash leaves it out while it is None)."""

    steps: int = 2000
    batch: int = 64
    lr: float = 1e-3
    seed: int = 0
    warmup: int | None = None

    def __post_init__(self) -> None:
        check_int("steps", self.steps, minimum=1)
        check_int("batch", self.batch, minimum=1)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_int("seed", self.seed, minimum=0)
        if self.warmup is not None:
            check_int("warmup", self.warmup, minimum=0, maximum=self.steps)

    @property
    def warmup_steps(self) -> int:
        """The warm-up updates :func:`fit_recipe` uses."""
        return max(1, self.steps // 20) if self.warmup is None else self.warmup


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

    def forward(
        self,
        x: torch.Tensor,
        t: torch.Tensor,
        words: torch.Tensor,
        *,
        memory: torch.Tensor | None = None,
        history: torch.Tensor | None = None,
        history_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The generator's velocity with ``h_T`` from the Former (``history``, ``history_mask``), or the
        given ``memory``: :func:`~.generator.flow_loss` calls the pair as one module (what DDP needs)."""
        if memory is None:
            if history is None or history_mask is None:
                raise ValueError("Stage2 needs memory, or history and history_mask for its Former")
            memory = self.memory(history, history_mask, words)
        return self.generator(x, t, words, memory=memory)


def device_of(model: nn.Module) -> torch.device:
    """Where ``model``'s parameters live."""
    return next(model.parameters()).device


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
    """Every training run of the chapter: :func:`neurips26.train.fit` with ``recipe``'s steps, learning rate,
    seed and warm-up (5 % of the steps unless set), and weight decay 0.01; the model is left in eval mode (and
    frozen with ``freeze``). Returns the loss of every update."""
    history = fit(
        model,
        loss,
        batch_at,
        steps=recipe.steps,
        seed=recipe.seed,
        lr=recipe.lr,
        warmup=recipe.warmup_steps,
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
    """The loss's noise generator: ``seed`` in one process, a seed of its own on each rank under torchrun."""
    return torch.Generator().manual_seed(rank_seed(seed, world().rank))


def train_t2v(
    config: GeneratorConfig, episodes: Sequence[Episode], recipe: Recipe, *, progress: bool = False
) -> tuple[SparseVideoGenerator, list[float]]:
    """Stage 0: every slot noised and trained from the words alone (a dense config is expected)."""
    torch.manual_seed(recipe.seed)
    model = SparseVideoGenerator(config).to(choose_device())
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
    model = SparseVideoGenerator(config).to(choose_device())
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
    model = Stage2(generator, Former(former_config)).to(choose_device())
    noise = _seeded(sub_seed(recipe.seed, 142))

    def loss(m: Stage2, b):
        return flow_loss(m, b.clip, b.words, generator=noise, history=b.history, history_mask=b.history_mask)

    return model, _fit(model, loss, episodes, config.offsets, recipe, "stage 2 (history)", progress)


__all__ = [
    "MAX_HISTORY",
    "Recipe",
    "Stage2",
    "device_of",
    "fit_recipe",
    "train_history",
    "train_i2v",
    "train_t2v",
]
