"""The chapter's frozen model: one float16 checkpoint (chapter 12).

``python -m neurips26.sparse_control.prepare --scale default`` trains the multi-task model of
:mod:`~neurips26.sparse_control.model` and writes ``model.pt`` and ``model.json`` into
``src/neurips26/sparse_control/checkpoints/`` (package data); ``--scale smoke`` writes a one-layer,
50-update version into the user cache. The checkpoint is fresh when it reproduces its recorded task
accuracies and neutral loss within 0.02 (another CPU moves the low bits of a forward pass).

``--scale paper`` trains :data:`PAPER_SPEC` into the user cache, on the device
:func:`~neurips26.train.choose_device` picks (``torchrun --nproc_per_node=N -m
neurips26.sparse_control.prepare --scale paper`` trains data-parallel). The paper steers pre-trained
language models (GPT-2 small to Qwen3-4B), which cannot exist offline; its ``paper`` scale here is the
largest model the chapter's procedural tasks support before it only memorises their closed vocabulary
(292 words, 24 names): 4 layers of width 128, 128 prompts per task and update, 12,000 updates.
``--trial`` trains it for one update of 8 prompts (:func:`neurips26.scales.trial_run`).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

import torch

import neurips26
from neurips26.cache import cached
from neurips26.checkpoint_files import (
    FORMAT,
    ModelRow,
    Registry,
    Sidecar,
    config_hash,
    half_state,
    load_half_state,
    prepare_main,
    source_fingerprint,
    weights_hash,
)
from neurips26.nn import Decoder
from neurips26.scales import pick, trial_run
from neurips26.sparse_control.model import ModelSpec, evaluate_model, freeze, train_model
from neurips26.sparse_control.tasks import facts
from neurips26.sparse_control.vocabulary import words

PACKAGE_DIR = Path(__file__).resolve().parent / "checkpoints"
NAME = "model"
SOURCE_FILES = tuple(("neurips26.sparse_control", f) for f in ("vocabulary.py", "tasks.py", "model.py"))
METRIC_ATOL = 0.02
CURVE_EVERY = 10  # the sidecar keeps every tenth update's loss


PAPER_SPEC = ModelSpec(width=128, depth=4, heads=4, steps=12_000, batch=128)
"""The ``paper`` scale: about 0.83 M parameters, 1.5 M prompts per task over the run."""


def spec_for(scale: str) -> ModelSpec:
    """The model at ``scale`` (smoke: one layer, 50 updates; a trial run: one update of 8 prompts)."""
    spec = pick(scale, smoke=ModelSpec(depth=1, steps=50), default=ModelSpec(), paper=PAPER_SPEC)
    return replace(spec, steps=1, batch=8) if trial_run() else spec


def expected_hash(name: str, scale: str) -> str:
    return config_hash(
        {"spec": spec_for(scale), "vocabulary": words(), "facts": facts().tolist(), "format": FORMAT}
    )


@dataclass(frozen=True)
class ModelMeta(Sidecar):
    """The sidecar: name, config_hash, source, metrics, the loss curve, weights_hash, version, torch,
    train_seconds, format."""

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "config_hash", "source")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ("metrics", "curve")

    name: str
    config_hash: str
    source: str
    metrics: dict[str, float] = field(default_factory=dict)
    curve: dict[str, list[float]] = field(default_factory=dict)
    weights_hash: str = ""
    version: str = ""
    torch: str = ""
    train_seconds: float = 0.0
    format: int = FORMAT


def measure(name: str, scale: str, model: Decoder) -> dict[str, float]:
    """Accuracy on each task and the neutral next-word loss
    (:func:`~neurips26.sparse_control.model.evaluate_model`)."""
    return evaluate_model(model)


def build(name: str, scale: str, meta: ModelMeta, state: dict[str, torch.Tensor]) -> Decoder:
    return freeze(load_half_state(name, Decoder(spec_for(scale).config()), state))


def _train(name: str, scale: str, verbose: bool = True) -> tuple[dict[str, torch.Tensor], ModelMeta]:
    spec = spec_for(scale)

    def compute() -> tuple[dict[str, torch.Tensor], ModelMeta]:
        start = time.perf_counter()
        model, losses = train_model(spec, progress=verbose)
        state = half_state(model)
        meta = ModelMeta(
            name=name,
            config_hash=expected_hash(name, scale),
            source=source_fingerprint(SOURCE_FILES),
            curve={"loss": [round(x, 4) for x in losses[::CURVE_EVERY]]},
            weights_hash=weights_hash(state),
            version=neurips26.__version__,
            torch=torch.__version__,
            train_seconds=round(time.perf_counter() - start, 1),
        )
        metrics = measure(name, scale, build(name, scale, meta, state))
        return state, replace(meta, metrics=metrics)

    return cached("sc-model", {"scale": scale, "hash": expected_hash(name, scale)}, compute, verbose=verbose)


REGISTRY = Registry(
    chapter="sparse_control",
    package_dir=PACKAGE_DIR,
    names=(NAME,),
    meta_class=ModelMeta,
    expected_hash=expected_hash,
    build=build,
    measure=measure,
    train=_train,
    source_files=lambda name: SOURCE_FILES,
    atol=METRIC_ATOL,
)


def pretrained(scale: str = "default", *, verbose: bool = True) -> tuple[Decoder, ModelMeta]:
    """The frozen model: the fresh checkpoint, else trained exactly as ``prepare`` would."""
    return REGISTRY.pretrained(NAME, scale, verbose=verbose)


def prepare(
    scale: str = "default", *, only: list[str] | None = None, out: str | None = None
) -> list[ModelMeta]:
    """Train and write the model's checkpoint at ``scale`` into ``out``."""
    folder = Path(out) if out else REGISTRY.checkpoint_dir(scale)
    return REGISTRY.write(REGISTRY.chosen(only), scale, folder, lambda n: _train(n, scale))


def main(argv: list[str] | None = None) -> int:
    return prepare_main(
        argv,
        prog="python -m neurips26.sparse_control.prepare",
        description="Train the chapter 12 multi-task model and write its float16 checkpoint.",
        models=(ModelRow(NAME, "3 x 64 decoder on IOI, MCQA, sentiment, refusal and neutral text"),),
        prepare=prepare,
    )


if __name__ == "__main__":
    # Run the importable module's main, not this ``__main__`` copy's: what it caches on the way then
    # pickles under ``neurips26.sparse_control.prepare``, which a later process can read back.
    from neurips26.sparse_control import prepare as _importable

    sys.exit(_importable.main())
