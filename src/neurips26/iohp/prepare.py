"""The chapter's one trained model, the ATISS-style layout decoder, as a float16 checkpoint (chapter 18).

``python -m neurips26.iohp.prepare --scale default`` builds the 2,000-layout corpus
(:func:`~neurips26.iohp.corpus.build_corpus`), trains :func:`~neurips26.iohp.baselines.atiss.train_atiss` on
its training split for 1,500 updates and writes ``atiss.pt`` and ``atiss.json`` into
``src/neurips26/iohp/checkpoints/`` (package data); ``--scale smoke`` writes a 40-layout, 20-update version
into the user cache. The sidecar records the validation NLL on the first :data:`CHECK_LAYOUTS` held-out
corpus layouts (the freshness metric, re-measured at every load: a forward pass, so another CPU moves it
only in the low bits), the NLL on the whole validation split, the loss curve, and how well unconstrained
samples reproduce the corpus's category counts per room type (Pearson r over one sample per held-out room;
sampled tokens may flip on another CPU, so it is recorded, not re-checked).

``--scale paper`` trains :data:`PAPER_PLAN` into the user cache, on the device
:func:`~neurips26.train.choose_device` picks (``torchrun --nproc_per_node=N -m neurips26.iohp.prepare --scale
paper`` trains data-parallel; rank 0 builds the corpus, in one process per CPU core, and the other ranks read
it from the results cache). IOHP itself trains nothing; the paper compares it with ATISS, which its authors
trained on 3D-FRONT, a download we cannot make. So ``paper`` keeps our procedural corpus and grows the rest
toward ATISS: the decoder gets ATISS's transformer (4 layers, 8 heads, width 512, feed-forward 1,024;
8.6 M parameters) and learns from 20,000 layouts (ten times the default corpus; 18,000 for training) over
20,000 updates of 128 layouts at learning rate 1e-3 with 1,000 warm-up updates, the validation NLL every
1,000 updates. ``--trial`` trains it for one update of 8 layouts from a 16-layout corpus
(:func:`neurips26.scales.trial_run`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

import torch

import neurips26
from neurips26 import distributed
from neurips26.cache import cached
from neurips26.checkpoint_files import (
    FORMAT,
    ModelRow,
    Registry,
    Sidecar,
    committed_form,
    config_hash,
    half_state,
    load_half_state,
    prepare_main,
    source_fingerprint,
    weights_hash,
)
from neurips26.iohp.baselines.atiss import (
    ATISS_CONFIG,
    AtissTraining,
    atiss_model,
    category_count_correlation,
    train_atiss,
    validation_nll,
)
from neurips26.iohp.corpus import CORPUS_SEED, FLAW_RATE, build_corpus, corpus_layout, split_corpus
from neurips26.nn import Decoder, DecoderConfig
from neurips26.scales import pick, trial_run
from neurips26.train import choose_device

PACKAGE_DIR = Path(__file__).resolve().parent / "checkpoints"
NAME = "atiss"
SOURCE_FILES = tuple(
    ("neurips26.iohp", f)
    for f in ("rooms.py", "layout.py", "initial.py", "proxy.py", "corpus.py", "baselines/atiss.py")
)
CHECK_LAYOUTS = 64
"""Held-out corpus layouts whose NLL is the checkpoint's freshness metric."""
METRIC_ATOL = 0.01
"""Nats per token: another CPU's kernels move a float16 model's NLL by far less."""
CURVE_EVERY = 10
SEED = 0
VALIDATION = 0.1


@dataclass(frozen=True)
class AtissPlan:
    """What trains the decoder at one scale: corpus size, updates, batch, learning rate, evaluation period,
    warm-up updates, the decoder's ``config`` and the processes that build the corpus (``workers``; 0: one
    per CPU core)."""

    corpus: int = 2000
    steps: int = 1500
    batch: int = 32
    lr: float = 3e-3
    eval_every: int = 100
    warmup: int = 50
    config: DecoderConfig = ATISS_CONFIG
    workers: int = 1


PAPER_CONFIG = replace(ATISS_CONFIG, width=512, depth=4, heads=8, mlp_ratio=2)
"""ATISS's transformer: 4 layers, 8 heads of 64, feed-forward 1,024 (8.6 M parameters); context 128."""
PAPER_PLAN = AtissPlan(
    corpus=20_000,
    steps=20_000,
    batch=128,
    lr=1e-3,
    eval_every=1000,
    warmup=1000,
    config=PAPER_CONFIG,
    workers=0,
)
"""The ``paper`` scale (module docstring): 2.56 M layouts drawn, about 140 passes over the training split."""
TRIAL_CAPS = {"corpus": 16, "steps": 1, "batch": 8, "eval_every": 1, "warmup": 0, "workers": 1}
"""A trial run's plan (:func:`neurips26.scales.trial_run`): one update of 8 layouts from a 16-layout corpus
built in this process (the held-out split, hence the checked layouts, is 2 layouts)."""


def plan_for(scale: str) -> AtissPlan:
    """The training plan at ``scale`` (smoke: 40 layouts, 20 updates; a trial run: :data:`TRIAL_CAPS`)."""
    plan = pick(
        scale,
        smoke=AtissPlan(corpus=40, steps=20, batch=8, eval_every=10),
        default=AtissPlan(),
        paper=PAPER_PLAN,
    )
    return replace(plan, **TRIAL_CAPS) if trial_run() else plan


def _hashed_plan(plan: AtissPlan) -> dict:
    """The plan as :func:`expected_hash` hashes it: the config is hashed on its own, ``workers`` not at all
    (it does not change the corpus), and the warm-up only where it is not the default's, so the default and
    smoke plans hash exactly as they did before these fields existed (their checkpoints stay fresh)."""
    view = committed_form(plan, {"warmup": AtissPlan.warmup})
    view.pop("config")
    view.pop("workers")
    return view


def expected_hash(name: str, scale: str) -> str:
    plan = plan_for(scale)
    return config_hash(
        {
            "plan": _hashed_plan(plan),
            "config": plan.config,
            "corpus_seed": CORPUS_SEED,
            "flaw_rate": FLAW_RATE,
            "seed": SEED,
            "validation": VALIDATION,
            "format": FORMAT,
        }
    )


@dataclass(frozen=True)
class AtissMeta(Sidecar):
    """The sidecar: name, config_hash, source, metrics (the checked NLL), the full validation NLL, the
    category-count correlation, the loss curve, weights_hash, version, torch, train_seconds, format."""

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "config_hash", "source")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ("metrics", "curve", "recorded")

    name: str
    config_hash: str
    source: str
    metrics: dict[str, float] = field(default_factory=dict)
    recorded: dict[str, float] = field(default_factory=dict)
    curve: dict[str, list[float]] = field(default_factory=dict)
    weights_hash: str = ""
    version: str = ""
    torch: str = ""
    train_seconds: float = 0.0
    format: int = FORMAT


def validation_indices(scale: str) -> tuple[int, ...]:
    """The corpus indices held out from training at ``scale`` (the split :func:`train_atiss` uses)."""
    n = plan_for(scale).corpus
    return split_corpus(range(n), validation=VALIDATION, seed=SEED)[1]


def check_layouts(scale: str) -> tuple:
    """The held-out corpus layouts whose NLL is re-measured at every load (built one by one, no corpus)."""
    return tuple(corpus_layout(i) for i in validation_indices(scale)[:CHECK_LAYOUTS])


def measure(name: str, scale: str, model: Decoder) -> dict[str, float]:
    """The validation NLL (nats per object token) on :func:`check_layouts`."""
    return {"val_nll": round(validation_nll(model, check_layouts(scale), seed=SEED), 6)}


def build(name: str, scale: str, meta: AtissMeta, state: dict[str, torch.Tensor]) -> Decoder:
    model = load_half_state(name, atiss_model(plan_for(scale).config), state)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def _corpus(plan: AtissPlan, verbose: bool) -> Sequence:
    """The plan's corpus through the results cache. Under torchrun rank 0 builds it (``plan.workers``
    processes) while the other ranks wait, then they read rank 0's cache entry (or build it themselves when
    the cache is off), so N ranks do not build it N times over on one machine's cores."""
    return distributed.main_first(
        lambda first: build_corpus(plan.corpus, verbose=verbose and first, workers=plan.workers)
    )


def _recorded(model: Decoder, held_out: Sequence, result: AtissTraining) -> dict[str, float]:
    """The sidecar's recorded numbers: the NLL on every held-out layout, the category-count correlation of
    one unconstrained sample per held-out room, and the training's seconds per update. They are computed on
    ``model``'s device (the training device: one paper-size sample per room is too slow on one CPU core)."""
    counts = category_count_correlation(model, held_out, SEED)
    return {
        "val_nll_all": round(validation_nll(model, held_out, seed=SEED), 4),
        "count_r": round(counts.r, 4),
        "objects_generated": round(counts.mean_objects[0], 3),
        "objects_corpus": round(counts.mean_objects[1], 3),
        "seconds_per_step": round(result.seconds_per_step, 4),
    }


def _train(name: str, scale: str, verbose: bool = True) -> tuple[dict[str, torch.Tensor], AtissMeta]:
    p = plan_for(scale)

    def compute() -> tuple[dict[str, torch.Tensor], AtissMeta]:
        start = time.perf_counter()
        corpus = _corpus(p, verbose)
        result = train_atiss(
            corpus,
            p.steps,
            SEED,
            batch=p.batch,
            lr=p.lr,
            warmup=p.warmup,
            validation=VALIDATION,
            eval_every=p.eval_every,
            config=p.config,
            progress=verbose,
        )
        seconds = time.perf_counter() - start
        state = half_state(result.model)
        meta = AtissMeta(
            name=name,
            config_hash=expected_hash(name, scale),
            source=source_fingerprint(SOURCE_FILES),
            curve={
                "loss": [round(x, 4) for x in result.loss[::CURVE_EVERY]],
                "val_step": [float(s) for s in result.val_step],
                "val_nll": [round(x, 4) for x in result.val_nll],
            },
            weights_hash=weights_hash(state),
            version=neurips26.__version__,
            torch=torch.__version__,
            train_seconds=round(seconds, 1),
        )
        held_out = [corpus[i] for i in result.validation]
        on_device = build(name, scale, meta, state).to(choose_device())
        recorded = distributed.broadcast_object(
            _recorded(on_device, held_out, result) if distributed.is_main() else None
        )
        metrics = measure(name, scale, build(name, scale, meta, state))  # on the CPU, as every load does
        return state, replace(meta, metrics=metrics, recorded=recorded)

    return cached(
        "iohp-atiss", {"scale": scale, "hash": expected_hash(name, scale)}, compute, verbose=verbose
    )


REGISTRY = Registry(
    chapter="iohp",
    package_dir=PACKAGE_DIR,
    names=(NAME,),
    meta_class=AtissMeta,
    expected_hash=expected_hash,
    build=build,
    measure=measure,
    train=_train,
    source_files=lambda name: SOURCE_FILES,
    atol=METRIC_ATOL,
)


def pretrained(scale: str = "default", *, verbose: bool = True) -> tuple[Decoder, AtissMeta]:
    """The frozen ATISS-style decoder: the fresh checkpoint, else trained exactly as ``prepare`` would."""
    return REGISTRY.pretrained(NAME, scale, verbose=verbose)


def prepare(
    scale: str = "default", *, only: list[str] | None = None, out: str | None = None
) -> list[AtissMeta]:
    """Train and write the decoder's checkpoint at ``scale`` into ``out``."""
    folder = Path(out) if out else REGISTRY.checkpoint_dir(scale)
    return REGISTRY.write(REGISTRY.chosen(only), scale, folder, lambda n: _train(n, scale))


def main(argv: list[str] | None = None) -> int:
    return prepare_main(
        argv,
        prog="python -m neurips26.iohp.prepare",
        description="Train chapter 18's ATISS-style decoder on the procedural corpus; write its checkpoint.",
        models=(
            ModelRow(NAME, "2 x 64 decoder over room and object tokens, 1,500 updates on 1,800 layouts"),
        ),
        prepare=prepare,
    )


if __name__ == "__main__":
    # Run the importable module's main, not this ``__main__`` copy's: what it caches on the way then
    # pickles under ``neurips26.iohp.prepare``, which a later process can read back.
    from neurips26.iohp import prepare as _importable

    sys.exit(_importable.main())
