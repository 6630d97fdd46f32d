"""How every model of the chapter is trained and scored: one recipe, one evaluation.

Training (the released optimiser at toy scale): AdamW with betas (0.9, 0.95), learning rate 3e-3 with
30 warm-up updates and a cosine decay, gradient clipping at 1, weight decay 0.1 on every weight matrix and
table — the learned initial state ``M₀``/``S₀`` included — but not on ``A_log`` and ``dt_bias``; batches
of 64 sequences, ``P`` cycling through 4, 8, 12, 16; loss: cross-entropy on the scored answers (in-context
and fact queries). Evaluation: 512 fresh sequences per ``P``, accuracy of the arg-max answer, in-context and
fact queries apart.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from neurips26.scales import pick
from neurips26.sdm.data import PAIRS, RecallBatch, recall_batch, training_batch
from neurips26.sdm.gates import NO_DECAY_NAMES
from neurips26.sdm.models import MixerSpec, RecallModel
from neurips26.seeding import sub_seed
from neurips26.text import masked_cross_entropy
from neurips26.train import fit
from neurips26.validation import check_int

EVAL_SEED = 90_000


@dataclass(frozen=True)
class TrainSpec:
    """Settings of one training run (hashed into a checkpoint's configuration)."""

    steps: int = 600
    batch_size: int = 64
    lr: float = 3e-3
    warmup: int = 30
    weight_decay: float = 0.1
    pairs: tuple[int, ...] = PAIRS
    data_seed: int = 1

    @classmethod
    def for_scale(cls, scale: str) -> TrainSpec:
        return pick(scale, smoke=cls(steps=10, batch_size=8, warmup=2, pairs=(4,)), default=cls())


def eval_pairs(scale: str) -> tuple[int, ...]:
    """The ``P`` values evaluated at ``scale`` (smoke: 4 only)."""
    return pick(scale, smoke=(4,), default=PAIRS)


def eval_size(scale: str) -> int:
    """Sequences per ``P`` in an evaluation (512 at default)."""
    return pick(scale, smoke=32, default=512)


def no_decay_prefixes(model: RecallModel) -> tuple[str, ...]:
    """The parameter names the released optimiser does not weight-decay (``A_log``, ``dt_bias``)."""
    return tuple(n for n, _ in model.named_parameters() if n.rsplit(".", 1)[-1] in NO_DECAY_NAMES)


def batch_loss(model: RecallModel, batch: RecallBatch) -> Tensor:
    """Cross-entropy on every scored answer of ``batch``."""
    return masked_cross_entropy(model(batch.inputs), batch.targets, batch.mask)


def train_model(
    spec: MixerSpec, train: TrainSpec, *, seed: int, progress: bool = True, desc: str = "training"
) -> tuple[RecallModel, dict[str, list[float]], float]:
    """A :class:`RecallModel` with ``spec`` initialised from ``seed`` and trained by ``train``.

    Returns the model (eval mode), its curves (``loss`` per update) and the training seconds.
    """
    model = RecallModel(spec, seed=seed)
    start = time.perf_counter()
    history = fit(
        model,
        batch_loss,
        lambda step: training_batch(
            step, batch_size=train.batch_size, seed=sub_seed(train.data_seed, seed), pairs=train.pairs
        ),
        steps=train.steps,
        seed=seed,
        lr=train.lr,
        warmup=train.warmup,
        weight_decay=train.weight_decay,
        no_decay=no_decay_prefixes(model),
        progress=progress,
        desc=desc,
    )
    seconds = time.perf_counter() - start
    return model.eval(), {"loss": [float(x) for x in history.loss]}, seconds


@torch.no_grad()
def evaluate(
    model: RecallModel, pairs: tuple[int, ...], *, size: int, seed: int = EVAL_SEED, zero_state: bool = False
) -> dict[int, dict[str, float]]:
    """Accuracy per ``P``: ``{P: {"context": …, "facts": …, "loss": …}}`` on ``size`` sequences drawn with
    ``sub_seed(seed, P)`` (the same sequences for every model). ``zero_state``: run with a zero initial
    table/state."""
    size = check_int("size", size, minimum=1)
    model.eval()
    out: dict[int, dict[str, float]] = {}
    for P in pairs:
        batch = recall_batch(size, P, sub_seed(seed, P))
        logits = model(batch.inputs, zero_state=zero_state)
        hit = logits.argmax(-1) == batch.targets
        out[P] = {
            "context": float(hit[batch.context_mask].float().mean()),
            "facts": float(hit[batch.fact_mask].float().mean()),
            "loss": float(masked_cross_entropy(logits, batch.targets, batch.mask)),
        }
    return out


def mean_over(results: dict[int, dict[str, float]], key: str) -> float:
    """The mean of ``key`` over the ``P`` of an :func:`evaluate` result."""
    return float(np.mean([r[key] for r in results.values()]))
