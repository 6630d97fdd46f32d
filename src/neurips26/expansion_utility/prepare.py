"""The chapter's two float16 checkpoints (chapter 11): the trained routers of every fold, and the tiny
language model whose chains :mod:`~neurips26.expansion_utility.tiny_lm` samples.

``python -m neurips26.expansion_utility.prepare --scale default`` writes both into
``src/neurips26/expansion_utility/checkpoints/`` (package data); ``--scale smoke`` writes tiny versions
into the user cache.

- ``routers``: runs the oracle sweep, trains the three nets of each of the nine leave-one-family-out folds
  (:mod:`~neurips26.expansion_utility.lofo`), and chooses their gate thresholds with the float16-rounded
  nets. The sidecar's configuration hash covers the sweep's selection-half utilities, so a change of the
  simulator makes the checkpoint stale. Fresh when it also reproduces its recorded mean gated GR and AUC@10
  within 0.02 (another CPU moves router scores in their low bits).
- ``tiny_lm``: the character-level model of arithmetic chains; fresh when it reproduces its recorded loss
  and greedy accuracy on the fixed evaluation chains within 0.02.

``--scale paper`` writes both into the user cache, trained on the device
:func:`~neurips26.train.choose_device` picks (``torchrun --nproc_per_node=N -m
neurips26.expansion_utility.prepare --scale paper`` trains each net data-parallel). The paper measures
6,500 chains of nine LLM families (8B–123B) on seven benchmarks with ``r = 8`` resamples per step and
trains a small MLP router; the LLMs cannot run offline, and the default sweep already matches that sample
(9 × 7 cells × 100 simulated chains, ``r = 8``). So ``paper`` keeps the grid, ``r`` and the nets, and
samples ten times the chains (1,000 per cell, :data:`~neurips26.expansion_utility.sweep.PAPER_CHAINS`),
with ten times the router updates (3,000 of 256 chains, the same number of passes over the larger
training folds). The tiny language model stays at its default size and recipe: it stands in for the
LLMs by erring now and then, which a larger one would do less (its cells would leave the healthy accuracy
range). Nothing here is bound by arithmetic: a GPU does not shorten it much. ``--trial`` trains each net
and the tiny model for one update on a two-family, one-benchmark sweep of 20 chains per cell and checks
the tiny model on four problems per length (:func:`neurips26.scales.trial_run`).
"""

from __future__ import annotations

import hashlib
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch
from torch import nn

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
from neurips26.expansion_utility.lofo import NETS, Fold, evaluate_fold, split_training, train_fold
from neurips26.expansion_utility.router import RouterNet, feature_names
from neurips26.expansion_utility.router_fit import (
    StepData,
    choose_theta,
    router_scores,
    step_data,
)
from neurips26.expansion_utility.simulator import BENCHMARKS, FAMILIES
from neurips26.expansion_utility.sweep import BUDGET, SweepConfig, run_cell, summarise
from neurips26.expansion_utility.tiny_lm import (
    ALPHABET,
    EVAL_PROBLEMS,
    TinyLMSpec,
    evaluate_tiny_lm,
    train_tiny_lm,
)
from neurips26.nn import Decoder
from neurips26.scales import pick, trial_run

PACKAGE_DIR = Path(__file__).resolve().parent / "checkpoints"
SOURCE_FILES = tuple(
    ("neurips26.expansion_utility", f)
    for f in (
        "simulator.py",
        "utility.py",
        "allocation.py",
        "router.py",
        "router_fit.py",
        "lofo.py",
        "baselines.py",
    )
)
NAME = "routers"
LM_NAME = "tiny_lm"
LM_SOURCE_FILES = (("neurips26.expansion_utility", "tiny_lm.py"),)
METRIC_ATOL = 0.02


@dataclass(frozen=True)
class RouterTraining:
    """Updates per net and the training seed."""

    steps: int = 300
    seed: int = 0

    @classmethod
    def for_scale(cls, scale: str) -> RouterTraining:
        """Smoke 5 updates, default 300, paper 3,000 (ten times the chains); a trial run: one."""
        training = pick(scale, smoke=cls(steps=5), default=cls(), paper=cls(steps=3000))
        return replace(training, steps=1) if trial_run() else training


TRIAL_SWEEP = {"families": (1, 3), "benchmarks": (0,), "chains": 20, "r": 4}
"""The sweep of a trial run (:func:`neurips26.scales.trial_run`): one fold of each of two families."""
TRIAL_EVAL_PROBLEMS = 4
"""Problems per length on which a trial run checks the tiny model."""


def sweep_config(scale: str) -> SweepConfig:
    """The sweep the routers train and are measured on (:meth:`SweepConfig.for_scale`; a trial run:
    :data:`TRIAL_SWEEP`)."""
    config = SweepConfig.for_scale(scale)
    return replace(config, **TRIAL_SWEEP) if trial_run() else config


def sweep_data(scale: str) -> tuple[StepData, list]:
    """The pooled step data of the scale's sweep (:func:`sweep_config`) and its cell summaries."""
    config = sweep_config(scale)
    cells, results = [], []
    for f in config.families:
        for b in config.benchmarks:
            chains, u = run_cell(FAMILIES[f], BENCHMARKS[b], config)
            cells.append((chains, u))
            results.append(summarise(chains, u))
    return step_data(cells), results


def utilities_hash(data: StepData) -> str:
    """A hash of the sweep's selection-half utilities (exact multiples of 2/r) and the chains' layout."""
    digest = hashlib.sha256()
    for array in (np.nan_to_num(data.sel, nan=-9.0), data.n, data.bench, data.family):
        digest.update(np.ascontiguousarray(array).astype(np.float64).tobytes())
    return digest.hexdigest()[:16]


def folds_of(scale: str) -> tuple[int, ...]:
    return sweep_config(scale).families


def lm_spec(scale: str) -> TinyLMSpec:
    """The tiny model's spec at ``scale`` (smoke: 20 updates of 16 chains; paper: the default, see the
    module doc; a trial run: one update of two chains)."""
    spec = pick(scale, smoke=TinyLMSpec(steps=20, batch=16), default=TinyLMSpec(), paper=TinyLMSpec())
    return replace(spec, steps=1, batch=2) if trial_run() else spec


def lm_evaluation(scale: str) -> int:
    """Problems per length of the tiny model's check (``tiny_lm.EVAL_PROBLEMS``; a trial run:
    :data:`TRIAL_EVAL_PROBLEMS`)."""
    return TRIAL_EVAL_PROBLEMS if trial_run() else EVAL_PROBLEMS


def expected_hash(name: str, scale: str) -> str:
    if name == LM_NAME:
        config = {"spec": lm_spec(scale), "alphabet": ALPHABET, "format": FORMAT}
        if lm_evaluation(scale) != EVAL_PROBLEMS:  # only a trial run checks on fewer problems
            config["evaluation"] = lm_evaluation(scale)
        return config_hash(config)
    data, _ = sweep_data(scale)
    return config_hash(
        {
            "training": RouterTraining.for_scale(scale),
            "sweep": sweep_config(scale),
            "utilities": utilities_hash(data),
            "nets": NETS,
            "budget": BUDGET,
            "format": FORMAT,
        }
    )


@dataclass(frozen=True)
class CheckpointMeta(Sidecar):
    """The sidecar: name, config_hash, source, metrics, weights_hash, version, torch, train_seconds,
    format."""

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "config_hash", "source")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ("metrics",)

    name: str
    config_hash: str
    source: str
    metrics: dict[str, float] = field(default_factory=dict)
    weights_hash: str = ""
    version: str = ""
    torch: str = ""
    train_seconds: float = 0.0
    format: int = FORMAT


class RouterBank(nn.Module):
    """Every fold's nets (``fold{f}-{net}``) and, as buffers, its depth mask (``mask{f}``), the gate
    thresholds of its nets in :data:`~neurips26.expansion_utility.lofo.NETS` order (``theta{f}``; ``inf``:
    never act) and its best depth bin (``best_bin{f}``)."""

    def __init__(self, folds: tuple[int, ...]):
        super().__init__()
        features = len(feature_names())
        self.nets = nn.ModuleDict(
            {f"fold{f}-{n}": RouterNet(features, prior=c.prior) for f in folds for n, c in NETS.items()}
        )
        for f in folds:
            self.register_buffer(f"mask{f}", torch.zeros(len(BENCHMARKS), 10, dtype=torch.bool))
            self.register_buffer(f"theta{f}", torch.full((len(NETS),), float("inf")))
            self.register_buffer(f"best_bin{f}", torch.zeros((), dtype=torch.int64))
        self.folds = folds

    def fold(self, f: int) -> Fold:
        """The routers of fold ``f``."""
        nets = {n: self.nets[f"fold{f}-{n}"].eval() for n in NETS}
        theta = {n: float(t) for n, t in zip(NETS, getattr(self, f"theta{f}"), strict=True)}
        return Fold(nets, getattr(self, f"mask{f}").numpy(), theta, int(getattr(self, f"best_bin{f}")))


def measure(name: str, scale: str, bank: RouterBank | Decoder) -> dict[str, float]:
    """Routers: the mean gated GR of the listwise router over the healthy held-out cells, and its mean
    AUC@10. Tiny LM: :func:`~neurips26.expansion_utility.tiny_lm.evaluate_tiny_lm`."""
    if name == LM_NAME:
        return evaluate_tiny_lm(bank, problems=lm_evaluation(scale))
    data, results = sweep_data(scale)
    healthy = {(c.family, c.benchmark) for c in results if c.healthy}
    grs, aucs = [], []
    for f in bank.folds:
        cells, auc = evaluate_fold(bank.fold(f), data, f, beta=BUDGET)
        grs += [c.gated_gr for c in cells if c.policy == "listwise" and (c.family, c.benchmark) in healthy]
        aucs.append(auc["listwise"])
    return {"gated_gr": float(np.nanmean(grs)) if grs else 0.0, "auc": float(np.nanmean(aucs))}


def build(
    name: str, scale: str, meta: CheckpointMeta, state: dict[str, torch.Tensor]
) -> RouterBank | Decoder:
    if name == LM_NAME:
        return load_half_state(name, Decoder(lm_spec(scale).config()), state).eval()
    return load_half_state(name, RouterBank(folds_of(scale)), state).eval()


def _sealed(
    name: str, scale: str, state: dict[str, torch.Tensor], files: tuple, start: float
) -> tuple[dict[str, torch.Tensor], CheckpointMeta]:
    """The float16 ``state`` with its sidecar, the metrics measured on the model rebuilt from it."""
    meta = CheckpointMeta(
        name=name,
        config_hash=expected_hash(name, scale),
        source=source_fingerprint(files),
        weights_hash=weights_hash(state),
        version=neurips26.__version__,
        torch=torch.__version__,
        train_seconds=round(time.perf_counter() - start, 1),
    )
    return state, replace(meta, metrics=measure(name, scale, build(name, scale, meta, state)))


def _train_lm(name: str, scale: str, verbose: bool = True) -> tuple[dict[str, torch.Tensor], CheckpointMeta]:
    spec = lm_spec(scale)

    def compute() -> tuple[dict[str, torch.Tensor], CheckpointMeta]:
        start = time.perf_counter()
        model, _ = train_tiny_lm(spec, progress=verbose)
        return _sealed(name, scale, half_state(model), LM_SOURCE_FILES, start)

    return cached(
        "eu-tiny-lm", {"scale": scale, "hash": expected_hash(name, scale)}, compute, verbose=verbose
    )


def _train(name: str, scale: str, verbose: bool = True) -> tuple[dict[str, torch.Tensor], CheckpointMeta]:
    if name == LM_NAME:
        return _train_lm(name, scale, verbose)
    training = RouterTraining.for_scale(scale)

    def compute() -> tuple[dict[str, torch.Tensor], CheckpointMeta]:
        data, _ = sweep_data(scale)
        start = time.perf_counter()
        bank = RouterBank(folds_of(scale))
        for f in bank.folds:
            fold = train_fold(data, f, beta=BUDGET, seed=training.seed, steps=training.steps)
            for n, net in fold.nets.items():
                bank.nets[f"fold{f}-{n}"].load_state_dict(net.state_dict())
            getattr(bank, f"mask{f}").copy_(torch.from_numpy(fold.mask))
            getattr(bank, f"best_bin{f}").fill_(fold.best_bin)
            if verbose:
                print(f"[prepare] fold {FAMILIES[f].name}: trained", flush=True)
        rounded = build(name, scale, CheckpointMeta(name, "", ""), half_state(bank))
        for f in bank.folds:  # θ chosen with the float16 nets, on the fold's validation split
            _, valid = split_training(data, f, training.seed)
            mask = getattr(rounded, f"mask{f}").numpy()
            theta = [
                choose_theta(router_scores(rounded.nets[f"fold{f}-{n}"], valid), valid, mask, BUDGET)
                for n in NETS
            ]
            getattr(bank, f"theta{f}").copy_(torch.tensor(theta))
        return _sealed(name, scale, half_state(bank), SOURCE_FILES, start)

    return cached(
        "eu-routers", {"scale": scale, "hash": expected_hash(name, scale)}, compute, verbose=verbose
    )


REGISTRY = Registry(
    chapter="expansion_utility",
    package_dir=PACKAGE_DIR,
    names=(NAME, LM_NAME),
    meta_class=CheckpointMeta,
    expected_hash=expected_hash,
    build=build,
    measure=measure,
    train=_train,
    source_files=lambda name: LM_SOURCE_FILES if name == LM_NAME else SOURCE_FILES,
    atol=METRIC_ATOL,
)


def pretrained(scale: str = "default", *, verbose: bool = True) -> tuple[RouterBank, CheckpointMeta]:
    """The routers of every fold: the fresh checkpoint, else trained exactly as ``prepare`` would."""
    return REGISTRY.pretrained(NAME, scale, verbose=verbose)


def pretrained_lm(scale: str = "default", *, verbose: bool = True) -> tuple[Decoder, CheckpointMeta]:
    """The tiny language model: the fresh checkpoint, else trained exactly as ``prepare`` would."""
    return REGISTRY.pretrained(LM_NAME, scale, verbose=verbose)


def prepare(
    scale: str = "default", *, only: list[str] | None = None, out: str | None = None
) -> list[CheckpointMeta]:
    """Train and write the routers' checkpoint at ``scale`` into ``out``."""
    folder = Path(out) if out else REGISTRY.checkpoint_dir(scale)
    return REGISTRY.write(REGISTRY.chosen(only), scale, folder, lambda n: _train(n, scale))


def main(argv: list[str] | None = None) -> int:
    return prepare_main(
        argv,
        prog="python -m neurips26.expansion_utility.prepare",
        description="Train the chapter 11 routers (leave-one-family-out) and tiny language model and write "
        "their float16 checkpoints.",
        models=(
            ModelRow(NAME, "listwise, listwise without prior and pointwise nets of every fold"),
            ModelRow(LM_NAME, "character-level decoder (2 x 64) of arithmetic chains"),
        ),
        prepare=prepare,
    )


if __name__ == "__main__":
    # Run the importable module's main, not this ``__main__`` copy's: what it caches on the way then
    # pickles under ``neurips26.expansion_utility.prepare``, which a later process can read back.
    from neurips26.expansion_utility import prepare as _importable

    sys.exit(_importable.main())
