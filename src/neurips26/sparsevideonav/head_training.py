"""Stage 4 (action learning on imagined futures) and the short- and long-horizon baselines.

**Stage 4** (the paper's inverse dynamics). The distilled generator is frozen. For training decisions it
imagines the sparse future (Former memory, 4 student steps, reference re-injected); the pose estimator
re-labels the action chunk from the *generated* frames (:func:`~.pose_estimator.relabel`), so the targets
match the dynamics the generator imagined rather than the real ones; the action head learns to denoise
those chunks from ``[reference ⧺ imagined future]`` and the words. The stop label stays the expert's (the
paper does not say how its robot stops). With ``labels="real"`` the head learns the expert's own actions
instead (the ablation that asks whether re-labelling helps).

**Baselines** (the "LLM VLN" stand-ins: short-horizon supervision decoded from observation, history and
language). They read the history through the *same* frozen Former as SparseVideoNav (its ``h_T``), and an
action head of the same size reads the 2 reference chunks plus ``h_T`` — no imagined future — to predict
the next 8 actions (short horizon) or the next 80 (20 s, the "just lengthen the horizon" probe), trained on
the expert's actions. Sharing the Former leaves one difference between the agents: the imagined future.

Both train through :func:`neurips26.train.fit` on :func:`~neurips26.train.choose_device` (data-parallel
under ``torchrun``: the losses call the module, and each rank draws its own flow noise); the imagined set
is computed on the student's device, the same on every rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from neurips26.distributed import rank_seed, world
from neurips26.seeding import sub_seed
from neurips26.sparsevideonav.action_head import ActionHead, ActionHeadConfig, head_loss
from neurips26.sparsevideonav.codec import Codec
from neurips26.sparsevideonav.dataset import Episode, decision_index, make_batch, sample_pairs
from neurips26.sparsevideonav.former import Former
from neurips26.sparsevideonav.generator import SparseVideoGenerator
from neurips26.sparsevideonav.pose_estimator import PoseEstimator, relabel
from neurips26.sparsevideonav.sampler import sample
from neurips26.sparsevideonav.timeline import REFERENCE_CHUNKS
from neurips26.sparsevideonav.train import MAX_HISTORY, Recipe, device_of, fit_recipe
from neurips26.train import choose_device
from neurips26.train.fit import move_batch
from neurips26.validation import check_choice

LABELS: tuple[str, ...] = ("relabelled", "real")
#: The student's sampling grid: its phase edges (4 steps).
STUDENT_STEPS = 4


@dataclass(frozen=True)
class ImaginedSet:
    """Stage-4 training data: contexts (N, 10, 2, 16) = reference ⧺ imagined future, words (N, L),
    relabelled and real action chunks (N, 8, 3), stop labels (N,)."""

    contexts: Tensor
    words: Tensor
    relabelled: Tensor
    real: Tensor
    stop: Tensor

    def __len__(self) -> int:
        return len(self.stop)


@torch.no_grad()
def imagine(
    former: Former,
    student: SparseVideoGenerator,
    reference: Tensor,
    history: Tensor,
    history_mask: Tensor,
    words: Tensor,
    *,
    generator: torch.Generator,
    steps: int = STUDENT_STEPS,
    method: str = "euler",
) -> Tensor:
    """The imagined clip (B, 2 + F, 2, 16): Former memory once, then ``steps`` sampler steps."""
    memory = former(history, history_mask, words)
    return sample(
        lambda z, t: student(z, t, words, memory=memory),
        reference,
        len(student.config.offsets),
        steps=steps,
        method=method,
        generator=generator,
    )


@torch.no_grad()
def imagined_set(
    former: Former,
    student: SparseVideoGenerator,
    estimator: PoseEstimator,
    codec: Codec,
    episodes: Sequence[Episode],
    pairs: np.ndarray,
    *,
    seed: int,
    batch: int = 256,
) -> ImaginedSet:
    """Imagine the future of every (episode, decision) row of ``pairs`` and re-label its action chunk."""
    noise = torch.Generator().manual_seed(seed)
    device = device_of(student)
    parts: list[tuple[Tensor, ...]] = []
    for start in range(0, len(pairs), batch):
        b = make_batch(
            episodes, pairs[start : start + batch], student.config.offsets, max_history=MAX_HISTORY
        )
        b = move_batch(b, device)
        reference = b.clip[:, :REFERENCE_CHUNKS]
        clip = imagine(former, student, reference, b.history, b.history_mask, b.words, generator=noise)
        labels = relabel(estimator, codec, reference, clip[:, REFERENCE_CHUNKS:]).to(device)
        parts.append((clip, b.words, labels, b.actions, b.stop))
    width = max(p[1].shape[1] for p in parts)
    words = torch.cat([nn.functional.pad(p[1], (0, width - p[1].shape[1])) for p in parts])
    return ImaginedSet(
        contexts=torch.cat([p[0] for p in parts]),
        words=words,
        relabelled=torch.cat([p[2] for p in parts]).float(),
        real=torch.cat([p[3] for p in parts]).float(),
        stop=torch.cat([p[4] for p in parts]),
    )


def train_head(
    config: ActionHeadConfig,
    data: ImaginedSet,
    recipe: Recipe,
    *,
    labels: str = "relabelled",
    progress: bool = False,
) -> tuple[ActionHead, list[float]]:
    """Stage 4: the action head on imagined contexts, with re-labelled (default) or real action chunks."""
    labels = check_choice("labels", labels, LABELS)
    torch.manual_seed(recipe.seed)
    head = ActionHead(config).to(choose_device())
    targets = data.relabelled if labels == "relabelled" else data.real
    noise = _noise(sub_seed(recipe.seed, 145))

    def batch_at(step: int):
        rows = torch.as_tensor(
            np.random.default_rng(sub_seed(recipe.seed, 146, step)).integers(0, len(data), recipe.batch)
        )
        return data.contexts[rows], data.words[rows], targets[rows], data.stop[rows]

    def loss(m: ActionHead, b):
        context, words, actions, stop = b
        return head_loss(m, actions, stop, context, words, generator=noise)

    history = _fit(head, loss, batch_at, recipe, f"stage 4 (action head, {labels} labels)", progress)
    return head, history


class BCPolicyNet(nn.Module):
    """A baseline: a frozen ``former`` (history → h_T) and ``head`` reading the 2 reference chunks, h_T."""

    def __init__(self, former: Former, head: ActionHead):
        super().__init__()
        if (
            head.config.memory_tokens != former.config.memory_tokens
            or head.config.context_slots != REFERENCE_CHUNKS
        ):
            raise ValueError("head must read the 2 reference chunks and the Former's h_T (memory_tokens)")
        self.former = former
        self.head = head

    def forward(
        self,
        actions_t: Tensor,
        t: Tensor,
        context: Tensor,
        words: Tensor,
        *,
        history: Tensor,
        history_mask: Tensor,
        memory: Tensor | None = None,
        with_stop: bool = False,
    ) -> Tensor | tuple[Tensor, Tensor]:
        """The head's output (:class:`ActionHead`) with ``h_T`` from the frozen Former over ``history``
        (``memory`` must be None: the policy computes its own)."""
        if memory is not None:
            raise ValueError("a BCPolicyNet computes its memory from history; memory must be None")
        with torch.no_grad():
            memory = self.former(history, history_mask, words)
        return self.head(actions_t, t, context, words, memory=memory, with_stop=with_stop)


def train_bc(
    former: Former,
    head_config: ActionHeadConfig,
    episodes: Sequence[Episode],
    recipe: Recipe,
    *,
    progress: bool = False,
) -> tuple[BCPolicyNet, list[float]]:
    """A short- (horizon 8) or long-horizon (80) behaviour-cloning baseline on the expert's actions; only
    the head learns (``former`` is frozen: SparseVideoNav's own)."""
    if not isinstance(former, Former):
        raise TypeError(f"former must be a Former; got {type(former).__name__}")
    former.eval()
    for p in former.parameters():
        p.requires_grad_(False)
    torch.manual_seed(recipe.seed)
    net = BCPolicyNet(former, ActionHead(head_config)).to(choose_device())
    index = decision_index(episodes)
    noise = _noise(sub_seed(recipe.seed, 147))
    # the clip is not used; any offsets that fit the padded timeline will do
    offsets = (0,)

    def batch_at(step: int):
        pairs = sample_pairs(index, recipe.batch, sub_seed(recipe.seed, 148, step))
        return make_batch(
            episodes, pairs, offsets, action_length=head_config.horizon, max_history=MAX_HISTORY
        )

    def loss(m: BCPolicyNet, b):
        context = b.clip[:, :REFERENCE_CHUNKS]
        history = {"history": b.history, "history_mask": b.history_mask}
        return head_loss(m, b.actions, b.stop, context, b.words, generator=noise, **history)

    history = _fit(net, loss, batch_at, recipe, f"baseline (horizon {head_config.horizon})", progress)
    return net, history


def _noise(seed: int) -> torch.Generator:
    """A loss's noise generator: ``seed`` in one process, a seed of its own on each rank under torchrun."""
    return torch.Generator().manual_seed(rank_seed(seed, world().rank))


def _fit(model: nn.Module, loss, batch_at, recipe: Recipe, desc: str, progress: bool) -> list[float]:
    return fit_recipe(model, loss, batch_at, recipe, desc, progress=progress, freeze=True)


__all__ = [
    "LABELS",
    "STUDENT_STEPS",
    "BCPolicyNet",
    "ImaginedSet",
    "imagine",
    "imagined_set",
    "train_bc",
    "train_head",
]
