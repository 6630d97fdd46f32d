"""The chapter's target as a shipped checkpoint, so that every CPU decodes with the same weights (chapter 10).

Training the target takes ~45 s, and its weights' low bits depend on the CPU kernels torch and MKL pick:
a target retrained on another machine answers some prompts differently, and the drafters trained for
one target do not fit another. So the default target ships as package data (``checkpoints/target.pt``,
float16, 1.35 MB: the chapter's one checkpoint allowed above 1 MB) and every drafter checkpoint is bound
to it (:func:`target_identity`).

The chapter's target is, at every scale, the trained target rounded to float16 (:func:`trained_target`): the
shipped checkpoint, and the fallback that retrains it when the checkpoint is stale, are the same model.

The sidecar (:class:`TargetMeta`) records the validation loss on held-out corpus windows (the behaviour
check, :func:`~neurips26.specblock.target.validation_loss`) and the target's greedy responses to the
drafters' validation prompts: the drafters' recorded validation data, so that their freshness check never
depends on a greedy tie that another CPU breaks the other way.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import Tensor

import neurips26
from neurips26.checkpoint_files import (
    FORMAT,
    Sidecar,
    check_config,
    check_layout,
    check_metrics,
    committed_form,
    config_hash,
    half_state,
    read_checkpoint,
    source_fingerprint,
    weights_hash,
)
from neurips26.nn.transformer import Decoder
from neurips26.specblock.target import (
    TARGET_GROWTH_FIELDS,
    TARGET_SOURCES,
    TargetConfig,
    build_target,
    greedy_batch,
    train_target,
    train_target_run,
    validation_loss,
)

TARGET_NAME = "target"
"""The checkpoint name of the target (beside the drafters' checkpoints)."""
TIED: tuple[str, ...] = ("lm_head.weight",)
"""State-dict entries the checkpoint leaves out: the output head is tied to the token embedding."""
SOURCE_FILES: tuple[tuple[str, str], ...] = (
    *TARGET_SOURCES,
    ("neurips26.nn", "transformer.py"),
    ("neurips26.nn", "attention.py"),
)
"""Modules whose code decides what the stored weights compute (recorded as information, not checked)."""


@dataclass(frozen=True)
class TargetMeta(Sidecar):
    """The sidecar of the target checkpoint (``target.json``).

    config_hash: :func:`expected_hash`; source: fingerprint of :data:`SOURCE_FILES` (information);
    model: the :class:`TargetConfig` fields; metrics: ``val_loss`` measured on the float16 weights;
    val_responses: greedy response ids to the drafters' validation prompts, one space-separated string per
    prompt (:meth:`responses`); curves: the training loss;
    weights_hash, version, torch, train_seconds (of the training run), format.
    """

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "config_hash", "source", "model")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ("model", "metrics", "val_responses", "curves")

    name: str
    config_hash: str
    source: str
    model: dict[str, Any]
    metrics: dict[str, float] = field(default_factory=dict)
    val_responses: list[str] = field(default_factory=list)
    curves: dict[str, list[float]] = field(default_factory=dict)
    weights_hash: str = ""
    version: str = ""
    torch: str = ""
    train_seconds: float = 0.0
    format: int = FORMAT

    def responses(self) -> list[list[int]]:
        """The recorded validation responses as lists of token ids."""
        return [[int(t) for t in row.split()] for row in self.val_responses]


def expected_hash(config: TargetConfig) -> str:
    """:func:`~neurips26.checkpoint_files.config_hash` of everything that trains the target of ``config``
    (its :func:`~neurips26.checkpoint_files.committed_form`)."""
    return config_hash({"target": committed_form(config, TARGET_GROWTH_FIELDS), "format": FORMAT})


def target_state(target: Decoder) -> dict[str, Tensor]:
    """The float16 state of ``target`` as a checkpoint stores it (without the tied output head)."""
    return half_state(target, drop=TIED)


def target_identity(target: Decoder) -> str:
    """The weights hash of ``target``'s float16 state: what a drafter checkpoint records as its target."""
    return weights_hash(target_state(target))


def build_from_state(config: TargetConfig, state: dict[str, Tensor], *, name: str = TARGET_NAME) -> Decoder:
    """The target of ``config`` with the float16 ``state`` loaded (float32, eval mode).

    :class:`~neurips26.checkpoint_files.StaleCheckpointError` when ``state`` does not fit today's network.
    """
    model = build_target(config)
    reference = model.state_dict()
    check_layout(name, state, reference, dropped=TIED)
    full = {k: v.to(reference[k].dtype) for k, v in state.items()}
    full.update({k: full["token_embedding.weight"] for k in TIED})
    model.load_state_dict(full, strict=True)
    return model.eval()


def trained_target(config: TargetConfig, *, verbose: bool = True) -> Decoder:
    """The target of ``config`` trained (through the cache) and rounded to float16: the chapter's target.

    It trains on :func:`~neurips26.train.choose_device`'s device; the rounded target is built on the CPU,
    where the drafters' recorded metrics are measured (a trainer moves a copy of it to its device)."""
    model = train_target(config, verbose=verbose)
    return build_from_state(config, target_state(model))


def record_responses(
    target: Decoder, prompt_ids: Sequence[Sequence[int]], n_new: int, eos_id: int
) -> list[str]:
    """Greedy responses of ``target`` to ``prompt_ids`` (one batch), as space-separated id strings."""
    rows = greedy_batch(target, [list(p) for p in prompt_ids], n_new, eos_id)
    return [" ".join(str(t) for t in row) for row in rows]


def make_checkpoint(
    config: TargetConfig, val_prompt_ids: Sequence[Sequence[int]], n_new: int, eos_id: int
) -> tuple[dict[str, Tensor], TargetMeta]:
    """The float16 state and sidecar of the target of ``config`` (trained through the cache, then rounded).

    The sidecar's ``val_loss`` and ``val_responses`` are measured on the rounded weights, as a loaded
    checkpoint has them.
    """
    start = time.perf_counter()
    run = train_target_run(config)
    history = run.history
    # the training run's own seconds (kept with the cached run), not the time of a load from the cache
    seconds = time.perf_counter() - start
    if history is not None and history.wall_time:
        seconds = history.wall_time[-1]
    curves: dict[str, list[float]] = {}
    if history is not None and history.loss:
        every = max(1, len(history.loss) // 100)
        curves = {"loss_step": [float(s) for s in history.step[::every]], "loss": history.loss[::every]}
    state = target_state(run.model)
    loaded = build_from_state(config, state)
    meta = TargetMeta(
        name=TARGET_NAME,
        config_hash=expected_hash(config),
        source=source_fingerprint(SOURCE_FILES),
        model=dataclasses.asdict(config),
        metrics={"val_loss": validation_loss(loaded, config)},
        curves=curves,
        val_responses=record_responses(loaded, val_prompt_ids, n_new, eos_id),
        weights_hash=weights_hash(state),
        version=neurips26.__version__,
        torch=torch.__version__,
        train_seconds=round(seconds, 2),
    )
    return state, meta


def load_target(config: TargetConfig, directory: Path | str) -> tuple[Decoder, TargetMeta]:
    """The shipped target of ``config`` from ``directory`` and its sidecar, checked to be fresh.

    Fresh: today's configuration hash, a state dict that fits today's network, and the recorded
    ``val_loss`` reproduced within :data:`~neurips26.checkpoint_files.METRIC_RTOL`. Raises
    :class:`~neurips26.checkpoint_files.MissingCheckpointError` or
    :class:`~neurips26.checkpoint_files.StaleCheckpointError` (both ``CheckpointError``).
    """
    state, meta = read_checkpoint(directory, TARGET_NAME, TargetMeta)
    check_config(meta, expected_hash(config))
    model = build_from_state(config, state)
    check_metrics(meta, {"val_loss": validation_loss(model, config)}, files=SOURCE_FILES)
    return model, meta
