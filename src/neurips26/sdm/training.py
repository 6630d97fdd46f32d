"""How every model of the chapter is trained and scored: one recipe, one evaluation.

Training (the released optimiser at toy scale): AdamW with betas (0.9, 0.95), learning rate 3e-3 with
30 warm-up updates and a cosine decay, gradient clipping at 1, weight decay 0.1 on every weight matrix and
table — the learned initial state ``M₀``/``S₀`` included — but not on ``A_log`` and ``dt_bias``; batches
of 64 sequences, ``P`` cycling through 4, 8, 12, 16; loss: cross-entropy on the scored answers (in-context
and fact queries). Evaluation: 512 fresh sequences per ``P``, accuracy of the arg-max answer, in-context and
fact queries apart.

Training runs on :func:`~neurips26.train.choose_device`'s device, data-parallel under torchrun
(:func:`neurips26.train.fit` shards every batch of sequences over the ranks; SDM's score BatchNorm then
normalises with each rank's share of the batch, and rank 0's running statistics are kept). The ``paper``
scale (:data:`PAPER_TRAIN`, :data:`PAPER_TASK`) trains on Zoology's MQAR sizes, 67 times the default's
sequences.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from neurips26.scales import pick
from neurips26.sdm.data import (
    FACT_ALPHABET,
    MQAR_VOCAB,
    PAIRS,
    RecallBatch,
    check_mqar_vocab,
    recall_batch,
    sequence_length,
    training_batch,
    vocab_size,
)
from neurips26.sdm.gates import NO_DECAY_NAMES
from neurips26.sdm.models import CONTEXT, MixerSpec, RecallModel
from neurips26.seeding import sub_seed
from neurips26.text import masked_cross_entropy
from neurips26.train import choose_device, fit
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
        smoke = cls(steps=10, batch_size=8, warmup=2, pairs=(4,))
        return pick(scale, smoke=smoke, default=cls(), paper=PAPER_TRAIN)


PAPER_PAIRS = (8, 16, 32, 64)
"""The ``P`` of the ``paper`` scale: Zoology's MQAR range (a sequence of 64 pairs has 155 tokens)."""
PAPER_TRAIN = TrainSpec(steps=10_000, batch_size=256, warmup=300, pairs=PAPER_PAIRS)
"""The ``paper`` recipe: 2.56 M sequences (67 times the default's), the released optimiser as at default."""


@dataclass(frozen=True)
class TaskSpec:
    """The recall task's sizes: the in-context vocabulary ``mqar_vocab`` (keys its lower half, values its
    upper half; the fact alphabets follow) and the models' ``context`` (longest sequence)."""

    mqar_vocab: int = MQAR_VOCAB
    context: int = CONTEXT

    def __post_init__(self) -> None:
        check_mqar_vocab(self.mqar_vocab)
        check_int("context", self.context, minimum=1)

    @property
    def vocab_size(self) -> int:
        """Token ids of a model of this task (:func:`~neurips26.sdm.data.vocab_size`)."""
        return vocab_size(self.mqar_vocab)

    def check_pairs(self, pairs: tuple[int, ...]) -> None:
        """``ValueError`` when a ``P`` of ``pairs`` needs more keys or positions than the task has."""
        for P in pairs:
            if P > self.mqar_vocab // 2 or sequence_length(P) > self.context:
                raise ValueError(
                    f"pairs must fit the task (P <= {self.mqar_vocab // 2} keys, T <= {self.context}); "
                    f"P = {P} has T = {sequence_length(P)}"
                )


PAPER_TASK = TaskSpec(mqar_vocab=256, context=160)
"""Zoology's MQAR vocabulary (256 tokens: 128 keys, 128 values); a context that holds 64 pairs (T = 155)."""


def task_for(scale: str) -> TaskSpec:
    """The task at ``scale``: the chapter's (64 in-context tokens, context 64), or :data:`PAPER_TASK`."""
    return pick(scale, smoke=TaskSpec(), default=TaskSpec(), paper=PAPER_TASK)


def eval_pairs(scale: str) -> tuple[int, ...]:
    """The ``P`` values evaluated at ``scale`` (smoke: 4 only)."""
    return pick(scale, smoke=(4,), default=PAIRS, paper=PAPER_PAIRS)


def eval_size(scale: str) -> int:
    """Sequences per ``P`` in an evaluation (512 at default)."""
    return pick(scale, smoke=32, default=512, paper=2048)


def no_decay_prefixes(model: RecallModel) -> tuple[str, ...]:
    """The parameter names the released optimiser does not weight-decay (``A_log``, ``dt_bias``)."""
    return tuple(n for n, _ in model.named_parameters() if n.rsplit(".", 1)[-1] in NO_DECAY_NAMES)


def batch_loss(model: nn.Module, batch: RecallBatch) -> Tensor:
    """Cross-entropy on every scored answer of ``batch`` (``model``: the :class:`RecallModel`, or under
    torchrun its data-parallel wrapper, whose forward this calls)."""
    return masked_cross_entropy(model(batch.inputs), batch.targets, batch.mask)


def train_model(
    spec: MixerSpec,
    train: TrainSpec,
    *,
    seed: int,
    task: TaskSpec | None = None,
    progress: bool = True,
    desc: str = "training",
) -> tuple[RecallModel, dict[str, list[float]], float]:
    """A :class:`RecallModel` with ``spec`` initialised from ``seed`` and trained by ``train`` on ``task``
    (default: the chapter's), on :func:`~neurips26.train.choose_device`'s device.

    Returns the model (eval mode), its curves (``loss`` per update) and the training seconds.
    """
    task = TaskSpec() if task is None else task
    task.check_pairs(train.pairs)
    model = RecallModel(spec, seed=seed, vocab=task.vocab_size, context=task.context).to(choose_device())
    start = time.perf_counter()
    history = fit(
        model,
        batch_loss,
        lambda step: training_batch(
            step,
            batch_size=train.batch_size,
            seed=sub_seed(train.data_seed, seed),
            pairs=train.pairs,
            mqar_vocab=task.mqar_vocab,
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
    ``sub_seed(seed, P)`` (the same sequences for every model; the task's vocabulary is the model's) on the
    model's device. ``zero_state``: run with a zero initial table/state."""
    size = check_int("size", size, minimum=1)
    model.eval()
    mqar_vocab = model.vocab - 2 * FACT_ALPHABET
    device = next(model.parameters()).device
    out: dict[int, dict[str, float]] = {}
    for P in pairs:
        batch = recall_batch(size, P, sub_seed(seed, P), mqar_vocab=mqar_vocab).to(device)
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
