"""The chapter's trained models: the tiny VLM under the paper's four training conditions (chapter 15).

``python -m neurips26.spatial_iq.prepare --scale default`` trains, in order, on the training views
(:mod:`~neurips26.spatial_iq.dataset`) and writes ``NAME.pt`` / ``NAME.json`` (float16) into
``src/neurips26/spatial_iq/checkpoints/``:

1. ``backbone`` — brief multi-task SFT on every question (the zero-shot model's stand-in);
2. ``sft-plain`` — the backbone fine-tuned on the total, integer answers;
3. ``sft-cot`` — the backbone fine-tuned on the total, chain-of-thought answers, all training views;
4. ``warmup`` — the backbone fine-tuned like ``sft-cot`` on 10 % of the views;
5. ``dapo`` — the warm-up, then GRPO with the DAPO recipe on the other 90 %, rewarded on the total only.

``--scale smoke`` writes small versions into the user cache. A checkpoint is fresh when its validation
accuracies are re-measured within 2 points (another CPU can flip a few greedy answers).

``--scale paper`` trains :data:`PAPER_PLAN` into the user cache, every model on the device
:func:`~neurips26.train.choose_device` picks. The paper fine-tunes Qwen2.5-VL-7B and 32B-Instruct on a
68,000-sample training set (SFT at lr 2e-5, global batch 16, up to 3 epochs; GRPO with the DAPO recipe,
8 prompts x 8 generations, up to 500 steps at lr 5e-7) and evaluates on 3,000 samples; no such model exists
offline. So ``paper`` keeps the paper's data sizes and recipe shape with the largest model our 48-pixel
views and 23-token answers call for: 17,000 training scenes (68,000 views, rendered in one process per
CPU core) and 750 evaluation scenes (3,000 views); a decoder of 6 blocks of width 256 with 8 heads over a
CNN of (64, 128, 256) channels (5.1 M parameters, 39x the default's); the backbone for 20,000 updates of 64
(19 passes over the views, one question each), SFT-plain and SFT-CoT for 3 epochs of the 68,000 views
(3,188 updates of 64), the warm-up for 3 epochs of its 6,800 views (319 updates), then GRPO for the
paper's 500 steps of 8 prompts x 8 replies. The learning rates are ours: 1e-3 for the backbone, halved to
5e-4 for the fine-tunes and to 5e-5 for GRPO (the wider model's). About 10 minutes on one H100 plus
2-3 minutes of rendering on 16 cores (an estimate, not measured: ~6e15 FLOPs of SFT; GRPO is bound by its
23 sequential decoding steps a draw). Both loops (:func:`~neurips26.spatial_iq.training.sft`,
:func:`~neurips26.spatial_iq.training.grpo`) are the chapter's own and train in one process, not
data-parallel: under ``torchrun --nproc_per_node=N`` rank 0 renders the views, every rank trains the same
chain, and rank 0 writes the checkpoints. ``--trial`` (:func:`neurips26.scales.trial_run`) trains every
model for one update on 8 scenes (:func:`trial_caps`); the networks keep their sizes.
"""

from __future__ import annotations

import copy
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

import numpy as np
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
from neurips26.scales import pick, trial_run
from neurips26.spatial_iq.dataset import DATA_FILES, PAPER_SCENES, TRIAL_SCENES, ViewSet, build, views
from neurips26.spatial_iq.evaluate import answer_sheet, ask
from neurips26.spatial_iq.training import GRPOConfig, SFTRecipe, grpo, new_model, sft, warmup_split
from neurips26.spatial_iq.vlm import TinyVLM, VLMConfig
from neurips26.train import choose_device, shipped_threads, torch_threads

PKG = "neurips26.spatial_iq"
PACKAGE_DIR = Path(__file__).resolve().parent / "checkpoints"
SOURCE_FILES = (
    *DATA_FILES,
    *((PKG, f) for f in ("tokens.py", "vlm.py", "training.py", "evaluate.py")),
)
#: Accuracies are recorded as fractions; a re-measurement may differ by this much.
METRIC_ATOL = 0.02
CURVE_EVERY = 10
#: The validation scenes (their own seed range, neither train nor eval).
VALIDATION_SEED = 2_000_000
VALIDATION_SCENES = 50
#: The questions the validation accuracies are measured on: the total, the visible and the hidden count.
MEASURED = ("T1", "S5", "S9")


@dataclass(frozen=True)
class Row:
    name: str
    role: str
    kind: str  # how it answers: "plain" or "cot"
    parent: str | None


MODELS = (
    Row("backbone", "multi-task SFT on every question (zero-shot stand-in)", "plain", None),
    Row("sft-plain", "backbone + SFT on the total, integer answers", "plain", "backbone"),
    Row("sft-cot", "backbone + SFT on the total, chain-of-thought answers", "cot", "backbone"),
    Row("warmup", "backbone + chain-of-thought SFT on 10 % of the views", "cot", "backbone"),
    Row("dapo", "warm-up + GRPO (DAPO recipe) on the other 90 %, reward on the total", "cot", "warmup"),
)
NAMES = tuple(r.name for r in MODELS)


def row(name: str) -> Row:
    for r in MODELS:
        if r.name == name:
            return r
    raise ValueError(f"name must be one of {', '.join(NAMES)}; got {name!r}")


@dataclass(frozen=True)
class Plan:
    """Sizes and recipes at one scale; ``train_scenes`` and ``validation_scenes`` (None: the scale's
    :func:`~neurips26.spatial_iq.dataset.scene_count` and :func:`validation_views` sizes) set the data."""

    vlm: VLMConfig
    backbone: SFTRecipe
    plain: SFTRecipe
    cot: SFTRecipe
    warmup: SFTRecipe
    grpo: GRPOConfig
    warmup_fraction: float = 0.1
    train_scenes: int | None = None
    validation_scenes: int | None = None


#: The fields added with the ``paper`` scale and their committed values: they enter the hash only once
#: they leave them, so the default and smoke hashes are those recorded before the fields existed.
GROWTH_FIELDS = {"train_scenes": None, "validation_scenes": None}

PAPER_VLM = VLMConfig(width=256, depth=6, heads=8, channels=(64, 128, 256))
"""The ``paper`` scale's model: 6 blocks of width 256, 8 heads, CNN channels (64, 128, 256); 5.1 M
parameters."""
PAPER_PLAN = Plan(
    vlm=PAPER_VLM,
    backbone=SFTRecipe(steps=20_000, batch=64, lr=1e-3),
    plain=SFTRecipe(steps=3_188, batch=64, lr=5e-4, seed=1),
    cot=SFTRecipe(steps=3_188, batch=64, lr=5e-4, seed=2),
    warmup=SFTRecipe(steps=319, batch=64, lr=5e-4, seed=3),
    grpo=GRPOConfig(steps=500, prompts=8, group=8, lr=5e-5),
    train_scenes=PAPER_SCENES["train"],
)
"""The ``paper`` scale (module docstring): 3 epochs of the 68,000 views for each SFT, of the 6,800
warm-up views for the warm-up, the paper's 500 GRPO steps of 8 x 8."""
#: The validation scenes of a trial run (4 views).
TRIAL_VALIDATION_SCENES = 1


def trial_caps(p: Plan) -> Plan:
    """``p`` for a trial run (:func:`neurips26.scales.trial_run`): every SFT one update of 4 views, GRPO one
    step of one prompt x 2 replies without redraws, on :data:`~neurips26.spatial_iq.dataset.TRIAL_SCENES`
    training scenes, validated on :data:`TRIAL_VALIDATION_SCENES` scenes; the model keeps its size."""
    one = {"steps": 1, "batch": 4}
    return replace(
        p,
        backbone=replace(p.backbone, **one),
        plain=replace(p.plain, **one),
        cot=replace(p.cot, **one),
        warmup=replace(p.warmup, **one),
        grpo=replace(p.grpo, steps=1, prompts=1, group=2, extra_draws=0),
        train_scenes=TRIAL_SCENES["train"],
        validation_scenes=TRIAL_VALIDATION_SCENES,
    )


def plan(scale: str) -> Plan:
    """The plan at ``scale`` (:func:`trial_caps` applied in a trial run)."""
    default = Plan(
        vlm=VLMConfig(),
        backbone=SFTRecipe(steps=2000, lr=1e-3),
        plain=SFTRecipe(steps=800, lr=1e-3, seed=1),
        cot=SFTRecipe(steps=800, lr=1e-3, seed=2),
        warmup=SFTRecipe(steps=800, lr=1e-3, seed=3),
        grpo=GRPOConfig(steps=500, lr=1e-4),
    )
    tiny = SFTRecipe(steps=20, batch=16, lr=1e-3)
    smoke = replace(
        default,
        backbone=tiny,
        plain=replace(tiny, seed=1),
        cot=replace(tiny, seed=2),
        warmup=replace(tiny, seed=3),
        grpo=GRPOConfig(steps=3, prompts=2, group=4),
    )
    chosen = pick(scale, smoke=smoke, default=default, paper=PAPER_PLAN)
    return trial_caps(chosen) if trial_run() else chosen


def validation_views(scale: str) -> ViewSet:
    """The fixed validation views the sidecar metrics are measured on."""
    # paper keeps the default's 200 views: the freshness check re-measures them at every load, on the CPU
    n = plan(scale).validation_scenes or pick(
        scale, smoke=4, default=VALIDATION_SCENES, paper=VALIDATION_SCENES
    )
    seeds = range(VALIDATION_SEED, VALIDATION_SEED + n)
    return cached(
        "siq-validation",
        {"scenes": n, "source": source_fingerprint(DATA_FILES)},
        lambda: build(seeds),
        verbose=False,
    )


def expected_hash(name: str, scale: str) -> str:
    chain = []
    r: Row | None = row(name)
    while r is not None:  # a model's hash covers its ancestors' recipes
        chain.append(r.name)
        r = row(r.parent) if r.parent else None
    form = committed_form(plan(scale), GROWTH_FIELDS)
    return config_hash(
        {"name": name, "chain": chain, "plan": form, "validation": VALIDATION_SCENES, "format": FORMAT}
    )


@dataclass(frozen=True)
class VlmMeta(Sidecar):
    """The sidecar: name, config_hash, source, metrics (validation accuracies), curves (training loss; for
    ``dapo`` also reward, exact-total rate, KL and clip fraction), weights_hash, version, torch,
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


def measure(name: str, scale: str, model: TinyVLM) -> dict[str, float]:
    """Accuracy on the validation views (paper protocol) of the total, visible count and hidden count, on
    the model's device. A chain-of-thought model answers the total once, its chain holding the other two;
    a plain one is asked the three questions (the paper protocol's answers to them, without the others)."""
    data = validation_views(scale)
    with torch_threads(shipped_threads(scale)):
        if row(name).kind == "cot":
            sheet = answer_sheet(model, data, "cot", "paper")
        else:
            sheet = {t: ask(model, data, t) for t in MEASURED}
    return {f"val_{t}": float(np.mean(sheet[t] == data.truth[t])) for t in MEASURED if t in sheet}


def build_model(name: str, scale: str, meta: VlmMeta, state: dict[str, torch.Tensor]) -> TinyVLM:
    model = load_half_state(name, TinyVLM(plan(scale).vlm), state).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def _curve(values: list[float]) -> list[float]:
    return [round(float(np.mean(values[i : i + CURVE_EVERY])), 5) for i in range(0, len(values), CURVE_EVERY)]


def _train_views(p: Plan, scale: str, verbose: bool) -> ViewSet:
    """The training views through the results cache. Under torchrun rank 0 renders them (in processes at
    the paper scale) while the other ranks wait, then they read rank 0's cache entry (or render them
    themselves when the cache is off), so N ranks do not render them N times over on one machine."""
    return distributed.main_first(
        lambda first: views("train", scale, scenes=p.train_scenes, verbose=verbose and first)
    )


def _fit(name: str, scale: str, verbose: bool) -> tuple[TinyVLM, dict[str, list[float]]]:
    """Train ``name`` in one process on :func:`~neurips26.train.choose_device` (the parent from its
    checkpoint), on :func:`threads` intra-op threads."""
    p = plan(scale)
    data = _train_views(p, scale, verbose)
    r = row(name)
    device = choose_device()
    with torch_threads(shipped_threads(scale)):
        if r.parent is None:
            model = new_model(p.vlm, seed=0).to(device)
        else:
            model = copy.deepcopy(pretrained(r.parent, scale, verbose=verbose)[0]).to(device)
            for q in model.parameters():
                q.requires_grad_(True)
        warm, rl = warmup_split(len(data), p.warmup_fraction)
        if name == "backbone":
            log = sft(model, data, "multitask", p.backbone, progress=verbose)
        elif name == "sft-plain":
            log = sft(model, data, "plain", p.plain, progress=verbose)
        elif name == "sft-cot":
            log = sft(model, data, "cot", p.cot, progress=verbose)
        elif name == "warmup":
            log = sft(model, data, "cot", p.warmup, rows=warm, progress=verbose)
        else:
            reference = copy.deepcopy(model)
            log = grpo(model, reference, data, rl, p.grpo, progress=verbose)
            return model, {
                "loss": _curve(log.loss),
                "reward": _curve(log.reward),
                "exact": _curve(log.exact),
                "kl": _curve(log.kl),
                "clipped": _curve(log.clipped),
                "draws": _curve([float(d) for d in log.draws]),
            }
    return model, {"loss": _curve(log.loss)}


def _train(name: str, scale: str, verbose: bool = True) -> tuple[dict[str, torch.Tensor], VlmMeta]:
    def compute() -> tuple[dict[str, torch.Tensor], VlmMeta]:
        start = time.perf_counter()
        model, curves = _fit(name, scale, verbose)
        state = half_state(model)
        meta = VlmMeta(
            name=name,
            config_hash=expected_hash(name, scale),
            source=source_fingerprint(SOURCE_FILES),
            curve=curves,
            weights_hash=weights_hash(state),
            version=neurips26.__version__,
            torch=torch.__version__,
            train_seconds=round(time.perf_counter() - start, 1),
        )
        return state, replace(meta, metrics=measure(name, scale, build_model(name, scale, meta, state)))

    return cached("siq-model", {"name": name, "scale": scale, "hash": expected_hash(name, scale)}, compute)


REGISTRY = Registry(
    chapter="spatial_iq",
    package_dir=PACKAGE_DIR,
    names=NAMES,
    meta_class=VlmMeta,
    expected_hash=expected_hash,
    build=build_model,
    measure=measure,
    train=_train,
    source_files=lambda name: SOURCE_FILES,
    rtol=0.0,
    atol=METRIC_ATOL,
)


def pretrained(name: str, scale: str = "default", *, verbose: bool = True) -> tuple[TinyVLM, VlmMeta]:
    """Model ``name``: the fresh checkpoint, else trained exactly as ``prepare`` would."""
    return REGISTRY.pretrained(name, scale, verbose=verbose)


def prepare(
    scale: str = "default", *, only: list[str] | None = None, out: str | None = None
) -> list[VlmMeta]:
    """Train and write the checkpoints at ``scale`` into ``out``."""
    folder = Path(out) if out else REGISTRY.checkpoint_dir(scale)
    return REGISTRY.write(REGISTRY.chosen(only), scale, folder, lambda n: _train(n, scale))


def main(argv: list[str] | None = None) -> int:
    return prepare_main(
        argv,
        prog="python -m neurips26.spatial_iq.prepare",
        description="Train the chapter 15 vision-language models and write their float16 checkpoints.",
        models=tuple(ModelRow(r.name, r.role) for r in MODELS),
        prepare=prepare,
    )


if __name__ == "__main__":
    # Run the importable module's main, not this ``__main__`` copy's: what it caches on the way then
    # pickles under ``neurips26.spatial_iq.prepare``, which a later process can read back.
    from neurips26.spatial_iq import prepare as _importable

    sys.exit(_importable.main())
