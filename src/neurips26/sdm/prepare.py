"""The chapter's trained models: one table, float16 checkpoints, one load-or-train rule (chapter 09).

``python -m neurips26.sdm.prepare --scale default`` trains every row of :data:`MODELS` with the recipe of
:mod:`~neurips26.sdm.training` and writes float16 checkpoints into ``src/neurips26/sdm/checkpoints/``
(package data); ``--scale smoke`` writes tiny versions (10 updates, ``N = 64``) into the user cache;
``--only NAME`` restricts the run. Notebooks get a model through :func:`pretrained`.

A checkpoint is fresh when its configuration hashes as recorded, its state dict fits and it reproduces its
recorded validation loss and accuracies (64 sequences per ``P``) within ``1e-3`` relative plus ``0.01``
absolute: one arg-max flip moves an accuracy by 1/1792, another CPU's kernels flip a few at most.

``--scale paper`` trains the same fifteen rows into the user cache, on the device
:func:`~neurips26.train.choose_device` picks (``torchrun --nproc_per_node=N -m neurips26.sdm.prepare --scale
paper`` trains data-parallel). The paper trains 1.4B and 7B hybrids (24 and 32 layers, width 2,048 and
4,096, SDM tables of 65,536 slots) on DCLM text and scores them on RULER and knowledge benchmarks; none of
that exists offline. What the chapter's procedural task can take is Zoology's MQAR at its usual sizes
(:data:`~neurips26.sdm.training.PAPER_TASK`): 256 in-context tokens (128 keys), ``P`` in 8, 16, 32, 64
pairs (sequences of up to 155 tokens, context 160), the 256 global facts as at default, and a longer run
(:data:`~neurips26.sdm.training.PAPER_TRAIN`: 10,000 updates of 256 sequences, 300 warm-up updates;
``gdn-long`` four times that). The models keep the default's width 64 and mixer sizes: the claims compare
the iso-FLOP pair (GDN ``d_k = 8``, SDM ``W = R = 8``) at matched parameters, and 32 or 64 pairs over 128
keys load a 512-number GDN state and a 16,384-number SDM table far more than 16 pairs do. ``--trial``
trains each row for one update of 8 sequences (no warm-up) and checks it on :data:`TRIAL_VALIDATION_SIZE`
sequences per ``P`` (:func:`neurips26.scales.trial_run`).
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import Tensor

import neurips26
from neurips26.cache import cache_key, cached
from neurips26.checkpoint_files import (
    FORMAT,
    Registry,
    Sidecar,
    config_hash,
    half_state,
    load_half_state,
    prepare_main,
    source_fingerprint,
    weights_hash,
)
from neurips26.scales import trial_run
from neurips26.sdm.models import MixerSpec, RecallModel, matched_mlp_width
from neurips26.sdm.training import TaskSpec, TrainSpec, eval_pairs, evaluate, mean_over, task_for, train_model

PACKAGE_DIR = Path(__file__).resolve().parent / "checkpoints"
SOURCE_FILES: tuple[tuple[str, str], ...] = tuple(
    ("neurips26.sdm", f)
    for f in (
        "product_keys.py",
        "gates.py",
        "gdn.py",
        "sdm.py",
        "mamba2.py",
        "models.py",
        "data.py",
        "training.py",
    )
)
VALIDATION_SEED = 4242
VALIDATION_SIZE = 64
TRIAL_VALIDATION_SIZE = 8
"""Sequences per ``P`` of the freshness metric in a trial run (:func:`neurips26.scales.trial_run`)."""
TRIAL_CAPS = {"steps": 1, "warmup": 0, "batch_size": 8}
"""A trial run's recipe: one update of 8 sequences (``gdn-long``'s factor included)."""
METRIC_ATOL = 0.01


@dataclass(frozen=True)
class ModelRow:
    """A row of the table: checkpoint ``name``, its ``role``, the global mixer ``spec``, the ``seed`` and
    ``longer``, the factor on the recipe's number of updates (1 for every row but one)."""

    name: str
    role: str
    spec: MixerSpec
    seed: int = 0
    longer: int = 1

    def __str__(self) -> str:
        return f"{self.name}  ({self.role})"


MODELS: tuple[ModelRow, ...] = (
    *(
        ModelRow(f"gdn-s{s}", f"Gated DeltaNet, H=2, d_k=8, d_v=32, seed {s}", MixerSpec("gdn"), s)
        for s in range(3)
    ),
    *(
        ModelRow(f"sdm-s{s}", f"SDM, H=2, N=256, W=R=8, learned M0, seed {s}", MixerSpec("sdm"), s)
        for s in range(3)
    ),
    ModelRow("mamba2", "Mamba-2, H=2, d_state=8", MixerSpec("mamba2")),
    ModelRow(
        "attention", "causal softmax attention with RoPE, 4 heads (ceiling)", MixerSpec("attention", heads=4)
    ),
    ModelRow("gdn-learned-s0", "GDN with a learned initial state S0", MixerSpec("gdn", learned_state=True)),
    ModelRow("sdm-zero-m0", "SDM with a zero initial table", MixerSpec("sdm", memory="zero")),
    ModelRow("sdm-n64", "SDM with N=64 slots", MixerSpec("sdm", slots=64)),
    ModelRow("sdm-n1024", "SDM with N=1024 slots", MixerSpec("sdm", slots=1024)),
    ModelRow("sdm-no-bn", "SDM without BatchNorm of the scores", MixerSpec("sdm", batchnorm=False)),
    ModelRow("gdn-dk32", "GDN with d_k=32 (key width of Eq. 6)", MixerSpec("gdn", key_dim=32)),
    ModelRow("gdn-long", "GDN trained four times longer (seed 0)", MixerSpec("gdn"), longer=4),
)
NAMES: tuple[str, ...] = tuple(m.name for m in MODELS)


def model_row(name: str) -> ModelRow:
    """The row ``name`` of :data:`MODELS` (``ValueError`` naming ``name`` otherwise)."""
    if name not in NAMES:
        raise ValueError(f"name must be one of {', '.join(NAMES)}; got {name!r}")
    return MODELS[NAMES.index(name)]


def spec_at(name: str, scale: str) -> MixerSpec:
    """The mixer of ``name`` at ``scale``: smoke shrinks every SDM table to ``N = 64``."""
    spec = model_row(name).spec
    if scale == "smoke" and spec.kind == "sdm":
        return replace(spec, slots=64)
    return spec


def train_at(name: str, scale: str) -> TrainSpec:
    """The training recipe of ``name`` at ``scale`` (the scale's, with the row's factor on the updates; a
    trial run's :data:`TRIAL_CAPS` last)."""
    train = TrainSpec.for_scale(scale)
    longer = model_row(name).longer
    train = train if longer == 1 else replace(train, steps=train.steps * longer)
    return replace(train, **TRIAL_CAPS) if trial_run() else train


def validation_size() -> int:
    """Sequences per ``P`` of the freshness metric: :data:`VALIDATION_SIZE`, or
    :data:`TRIAL_VALIDATION_SIZE` in a trial run."""
    return TRIAL_VALIDATION_SIZE if trial_run() else VALIDATION_SIZE


def expected_hash(name: str, scale: str) -> str:
    """The configuration hash of ``name`` at ``scale``: its mixer, seed, training and the MLP width, and the
    task where it is not the chapter's (so the default and smoke hashes are those the checkpoints record)."""
    spec = spec_at(name, scale)
    payload = {
        "spec": spec,
        "seed": model_row(name).seed,
        "train": train_at(name, scale),
        "mlp_width": matched_mlp_width(spec),
        "format": FORMAT,
    }
    task = task_for(scale)
    if task != TaskSpec():
        payload["task"] = task
    return config_hash(payload)


@dataclass(frozen=True)
class SDMMeta(Sidecar):
    """The sidecar: name, config_hash, source, spec, train, mlp_width, seed, metrics, curves, weights_hash,
    version, torch, train_seconds, format."""

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "config_hash", "source")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ("spec", "train", "metrics", "curves")

    name: str
    config_hash: str
    source: str
    spec: dict[str, Any] = field(default_factory=dict)
    train: dict[str, Any] = field(default_factory=dict)
    mlp_width: int = 0
    seed: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    curves: dict[str, list[float]] = field(default_factory=dict)
    weights_hash: str = ""
    version: str = ""
    torch: str = ""
    train_seconds: float = 0.0
    format: int = FORMAT


def build_model(name: str, scale: str, meta: SDMMeta, state: dict[str, Tensor]) -> RecallModel:
    """The model of ``meta`` (float32, eval mode, on the CPU) from its float16 state."""
    task = task_for(scale)
    model = RecallModel(
        spec_at(name, scale),
        mlp_width=meta.mlp_width,
        seed=model_row(name).seed,
        vocab=task.vocab_size,
        context=task.context,
    )
    return load_half_state(name, model, state).eval()


def validation_metrics(name: str, scale: str, model: RecallModel) -> dict[str, float]:
    """``val_loss``, ``val_context`` and ``val_facts`` on :func:`validation_size` sequences per ``P``."""
    results = evaluate(model, eval_pairs(scale), size=validation_size(), seed=VALIDATION_SEED)
    return {
        "val_loss": mean_over(results, "loss"),
        "val_context": mean_over(results, "context"),
        "val_facts": mean_over(results, "facts"),
    }


def _train(name: str, scale: str, verbose: bool = True) -> tuple[dict[str, Tensor], SDMMeta]:
    """Train ``name`` at ``scale`` (through the results cache) and return its float16 state and sidecar."""
    spec, row, train = spec_at(name, scale), model_row(name), train_at(name, scale)

    def compute() -> tuple[dict[str, Tensor], SDMMeta]:
        model, curves, seconds = train_model(
            spec, train, seed=row.seed, task=task_for(scale), progress=verbose, desc=name
        )
        state = half_state(model)
        meta = SDMMeta(
            name=name,
            config_hash=expected_hash(name, scale),
            source=source_fingerprint(SOURCE_FILES),
            spec=asdict(spec),
            train=asdict(train),
            mlp_width=model.global_block.mlp.fc.out_features,
            seed=row.seed,
            curves=curves,
            weights_hash=weights_hash(state),
            version=neurips26.__version__,
            torch=torch.__version__,
            train_seconds=round(seconds, 1),
        )
        metrics = validation_metrics(name, scale, build_model(name, scale, meta, state))
        return state, replace(meta, metrics=metrics)

    key = cache_key("sdm-model", {"name": name, "hash": expected_hash(name, scale)}, "neurips26.sdm")
    return cached(f"sdm-model-{key[:12]}", {"name": name, "scale": scale}, compute, verbose=verbose)


REGISTRY = Registry(
    chapter="sdm",
    package_dir=PACKAGE_DIR,
    names=NAMES,
    meta_class=SDMMeta,
    expected_hash=expected_hash,
    build=build_model,
    measure=validation_metrics,
    train=_train,
    source_files=lambda name: SOURCE_FILES,
    atol=METRIC_ATOL,
)


def pretrained(name: str, scale: str = "default", *, verbose: bool = True) -> tuple[RecallModel, SDMMeta]:
    """Model ``name`` at ``scale``: the fresh checkpoint, else trained exactly as ``prepare`` would."""
    return REGISTRY.pretrained(name, scale, verbose=verbose)


def prepare(
    scale: str = "default", *, only: list[str] | None = None, out: str | None = None
) -> list[SDMMeta]:
    """Train and write the checkpoints of ``only`` (default: all) at ``scale`` into ``out``."""
    names = REGISTRY.chosen(only)
    folder = Path(out) if out else REGISTRY.checkpoint_dir(scale)
    return REGISTRY.write(names, scale, folder, lambda n: _train(n, scale))


def main(argv: list[str] | None = None) -> int:
    return prepare_main(
        argv,
        prog="python -m neurips26.sdm.prepare",
        description="Train the chapter 09 models and write their float16 checkpoints.",
        models=MODELS,
        prepare=prepare,
    )


if __name__ == "__main__":
    # Run the importable module's main, not this ``__main__`` copy's: what it caches on the way then
    # pickles under ``neurips26.sdm.prepare``, which a later process can read back.
    from neurips26.sdm import prepare as _importable

    sys.exit(_importable.main())
