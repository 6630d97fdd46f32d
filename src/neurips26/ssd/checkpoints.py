"""The chapter's checkpoint files: float16 weights of an EDM denoiser plus a JSON sidecar (chapter 05).

A checkpoint ``NAME`` is two files in one directory::

    NAME.pt     the denoiser's state dict in float16 (``torch.save``; read back with ``weights_only=True``)
    NAME.json   a :class:`CheckpointMeta`: the denoiser and training configuration, its hash, a fingerprint
                of the network's source code, the validation metric(s) and the logged curves

The file format, hashing and freshness check are :mod:`neurips26.checkpoint_files` (shared with
chapter 10); this module adds the denoiser's sidecar fields and source files.

float16 halves the files (a 106k-parameter U-Net is ~213 KB) and changes the denoiser's outputs by about
``1e-3`` relative; the validation loss in the sidecar is measured on the float16 weights, so a loaded
checkpoint reproduces it up to floating-point reordering (the test of the committed checkpoints).

A checkpoint is *fresh* when the configuration that would train it now hashes as the one in its sidecar
(:func:`check_config`), its state dict fits today's denoiser exactly (:func:`build_denoiser`: keys, shapes,
dtypes), and the loaded denoiser reproduces the validation loss recorded beside it
(:func:`neurips26.ssd.prepare.load_checkpoint`); otherwise :class:`StaleCheckpointError` says which. The
network's source (:data:`SOURCE_FILES`) is fingerprinted in the sidecar as information only: a comment in
``neurips26.nn`` leaves the checkpoints fresh, a changed forward does not. Which names exist, and how each
is trained, is the table of :mod:`neurips26.ssd.prepare`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import torch

from neurips26 import checkpoint_files as _files
from neurips26.checkpoint_files import (
    FORMAT,
    CheckpointError,
    MissingCheckpointError,
    Sidecar,
    StaleCheckpointError,
    config_hash,
    half_state,
    load_half_state,
    save_checkpoint,
    weights_hash,
)
from neurips26.ssd.denoiser import DenoiserConfig, EDMDenoiser

__all__ = [
    "FORMAT",
    "PACKAGE_DIR",
    "SOURCE_FILES",
    "CheckpointError",
    "CheckpointMeta",
    "MissingCheckpointError",
    "StaleCheckpointError",
    "build_denoiser",
    "check_config",
    "check_metric",
    "config_hash",
    "half_state",
    "read_checkpoint",
    "save_checkpoint",
    "source_fingerprint",
    "weights_hash",
]

PACKAGE_DIR = Path(__file__).resolve().parent / "checkpoints"
"""Where the committed (default-scale) checkpoints live: package data of ``neurips26.ssd``."""

SOURCE_FILES: tuple[tuple[str, str], ...] = (
    ("neurips26.ssd", "denoiser.py"),
    ("neurips26.nn", "conv.py"),
    ("neurips26.nn", "embeddings.py"),
)
"""The modules whose code decides what a stored state dict computes (the U-Net, its time embedding, EDM);
fingerprinted in the sidecar and shown when a behaviour check fails."""


@dataclass(frozen=True)
class CheckpointMeta(Sidecar):
    """The sidecar of a checkpoint (``NAME.json``).

    name: the checkpoint's name; config_hash: :func:`config_hash` of everything that trained it;
    source: :func:`source_fingerprint` when it was written; denoiser: the :class:`DenoiserConfig` fields;
    spec: the training description (JSON-able, for readers); metrics: validation numbers measured on the
    float16 weights (``val_loss`` is the one :mod:`tests` re-measure); curves: logged values, e.g.
    ``eval_step`` and ``proxy_fid`` every 250 updates, ``loss_step`` and a smoothed ``loss``;
    weights_hash: SHA-256 prefix of the float16 tensors; version, torch: library and torch versions;
    train_seconds: wall time of the training run.
    """

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "config_hash", "source", "denoiser")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ("denoiser", "spec", "metrics", "curves")

    name: str
    config_hash: str
    source: str
    denoiser: dict[str, Any]
    spec: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    curves: dict[str, list[float]] = field(default_factory=dict)
    weights_hash: str = ""
    version: str = ""
    torch: str = ""
    train_seconds: float = 0.0
    format: int = FORMAT

    def denoiser_config(self) -> DenoiserConfig:
        """The :class:`DenoiserConfig` to build the network these weights belong to."""
        fields = dict(self.denoiser)
        fields["channels"] = tuple(fields["channels"])
        return DenoiserConfig(**fields)


def source_fingerprint() -> str:
    """SHA-256 prefix of the network's source files (:data:`SOURCE_FILES`), line endings normalised."""
    return _files.source_fingerprint(SOURCE_FILES)


def build_denoiser(meta: CheckpointMeta, state: dict[str, torch.Tensor]) -> EDMDenoiser:
    """The denoiser of ``meta`` with ``state`` loaded strictly (float32 weights), in eval mode.

    :class:`StaleCheckpointError` when ``state`` does not fit today's denoiser (keys, shapes, float16).
    """
    model = EDMDenoiser(meta.denoiser_config(), seed=0)
    load_half_state(meta.name, model, state)
    return model.eval()


def read_checkpoint(directory: Path | str, name: str) -> tuple[dict[str, torch.Tensor], CheckpointMeta]:
    """The float16 state dict and the sidecar of checkpoint ``name`` in ``directory``.

    Raises :class:`MissingCheckpointError` when a file is absent and :class:`CheckpointError` when the
    sidecar is unreadable or the weights do not match its ``weights_hash`` (a truncated or edited file).
    """
    return _files.read_checkpoint(directory, name, CheckpointMeta)


def check_config(meta: CheckpointMeta, expected_hash: str) -> None:
    """Raise :class:`StaleCheckpointError` unless ``meta`` has today's format and configuration hash."""
    _files.check_config(meta, expected_hash)


def check_metric(meta: CheckpointMeta, val_loss: float) -> None:
    """Raise :class:`StaleCheckpointError` unless ``val_loss``, re-measured now, reproduces the recorded one
    (relative :data:`~neurips26.checkpoint_files.METRIC_RTOL`); the error shows the source fingerprints."""
    _files.check_metrics(meta, {"val_loss": val_loss}, files=SOURCE_FILES)
