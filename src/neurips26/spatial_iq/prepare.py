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
from neurips26.scales import pick
from neurips26.spatial_iq.dataset import DATA_FILES, ViewSet, build, views
from neurips26.spatial_iq.evaluate import answer_sheet
from neurips26.spatial_iq.training import GRPOConfig, SFTRecipe, grpo, new_model, sft, warmup_split
from neurips26.spatial_iq.vlm import TinyVLM, VLMConfig

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
    """Sizes and recipes at one scale."""

    vlm: VLMConfig
    backbone: SFTRecipe
    plain: SFTRecipe
    cot: SFTRecipe
    warmup: SFTRecipe
    grpo: GRPOConfig
    warmup_fraction: float = 0.1


def plan(scale: str) -> Plan:
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
    return pick(scale, smoke=smoke, default=default)


def validation_views(scale: str) -> ViewSet:
    """The fixed validation views the sidecar metrics are measured on."""
    n = pick(scale, smoke=4, default=VALIDATION_SCENES)
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
    return config_hash(
        {"name": name, "chain": chain, "plan": plan(scale), "validation": VALIDATION_SCENES, "format": FORMAT}
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
    """Accuracy on the validation views (paper protocol) of the total, visible count and hidden count."""
    torch.set_num_threads(1)
    data = validation_views(scale)
    sheet = answer_sheet(model, data, row(name).kind, "paper")
    return {f"val_{t}": float(np.mean(sheet[t] == data.truth[t])) for t in ("T1", "S5", "S9") if t in sheet}


def build_model(name: str, scale: str, meta: VlmMeta, state: dict[str, torch.Tensor]) -> TinyVLM:
    model = load_half_state(name, TinyVLM(plan(scale).vlm), state).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def _curve(values: list[float]) -> list[float]:
    return [round(float(np.mean(values[i : i + CURVE_EVERY])), 5) for i in range(0, len(values), CURVE_EVERY)]


def _fit(name: str, scale: str, verbose: bool) -> tuple[TinyVLM, dict[str, list[float]]]:
    torch.set_num_threads(1)
    p = plan(scale)
    data = views("train", scale, verbose=verbose)
    r = row(name)
    if r.parent is None:
        model = new_model(p.vlm, seed=0)
    else:
        model = copy.deepcopy(pretrained(r.parent, scale, verbose=verbose)[0])
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
