"""The chapter's seven trained networks, their training and float16 checkpoints (chapter 06).

``python -m neurips26.picsb.prepare --scale default`` trains the models of :data:`MODELS` and writes float16
checkpoints into ``src/neurips26/picsb/checkpoints/`` (package data); ``--scale smoke`` trains tiny
versions into the user cache; ``--only NAME`` (repeatable) restricts the run, and a checkpoint already there
and fresh is kept. The notebooks get a model through :func:`pretrained` (the rule of the chapter's
:class:`~neurips26.checkpoint_files.Registry`): the checkpoint of its scale when it is there and fresh,
otherwise the same training through :func:`neurips26.cache.cached`.

The models, all on the same training split (:mod:`neurips26.picsb.data`) and the same step budget:

- ``picsb`` — the method (:func:`neurips26.picsb.picsb.train_picsb`): no HF field;
- ``no-refresh``, ``no-pde``, ``soft-obs``, ``lf-only`` — its ablations (:mod:`neurips26.picsb.ablations`);
- ``oracle`` — the same bridge trained on the true HF fields (:mod:`neurips26.picsb.baselines.oracle_bridge`);
- ``dps-prior`` — DPS's unconditional DDPM prior on the true HF fields (:mod:`neurips26.picsb.baselines.dps`),
  trained for :data:`PRIOR_BUDGET` (4) times the bridges' steps.

Sizes at default [our choice, settled on the 32 validation cases before any test case was scored; the
pilot is in the chapter's "What we changed and why"]: ``R_max = 3`` rounds of ``S = 800`` steps at batch
32, a refresh of ``N_s = 10`` OT-ODE steps polished by ``K₁ = 300`` projected Adam steps on ``E``,
``κ = 1``. Measured (one thread, two shared cores): ≈ 160 s for PICSB, ≈ 100 s for a model without refresh.

A checkpoint is fresh when today's configuration hashes as recorded, its state dict fits the network
exactly and it reproduces the validation metrics recorded beside it (bridges: mean rel-L2 and mean ‖R‖ of
the OT-ODE reconstruction of the validation split; the prior: its loss on the validation fields at a fixed
draw) within relative :data:`~neurips26.checkpoint_files.METRIC_RTOL` plus :data:`METRIC_ATOL`.

``--scale paper`` trains the same seven models into the user cache, on the device
:func:`~neurips26.train.choose_device` picks; ``torchrun --nproc_per_node=N -m neurips26.picsb.prepare
--scale paper`` trains each of them data-parallel (every bridge round and the prior's run are one
:func:`~neurips26.train.fit` call; the ranks share the global batch and draw their own bridge noise; the
refreshes run on every rank over all training cases and rank 0's surrogates are kept). The paper's fluid
benchmarks, grids, sensors, networks and training lengths are not known to us (only its abstract could be
read), and its 2-D flows are not implemented here. So ``paper`` is the largest run of the chapter's own
twin experiment rather than the paper's: the same Burgers problem (64 × 32 HF field, 8-point LF run, four
probe columns), whose claims the chapter is about, with 16 times the training cases (:data:`PAPER_DATA`:
8,192 / 256 / 1,024; they are generated in seconds), a wider U-Net (:data:`PAPER_DENOISER`: channels
(128, 256), 2.18 M parameters, 4.4 MB in float16, and the same widths for DPS's prior) and
:data:`PAPER_PICSB`: five rounds of 4,000 steps at batch 64 with the default's refresh (10 OT-ODE steps,
300 polish steps), so the prior trains 80,000 steps. About half an hour on one H100 for the seven models
(an estimate from FLOPs and step counts, not measured). ``--trial`` (:func:`neurips26.scales.trial_run`)
applies :func:`trial_caps`: one round of one update of 4 cases on 8 training cases, 2 sampling and 2
polish steps, one prior update, 4 validation cases.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cache
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
from neurips26.picsb import ablations
from neurips26.picsb.baselines import dps
from neurips26.picsb.baselines.oracle_bridge import train_oracle
from neurips26.picsb.burgers import BurgersConfig, relative_l2
from neurips26.picsb.data import DataConfig, Split, make_split
from neurips26.picsb.denoiser import Denoiser, DenoiserConfig
from neurips26.picsb.metrics import residual_norm
from neurips26.picsb.picsb import PICSBConfig, PICSBResult, reconstruct, truth_monitor
from neurips26.scales import pick, trial_run
from neurips26.train import choose_device
from neurips26.validation import check_choice

PACKAGE_DIR = Path(__file__).resolve().parent / "checkpoints"
"""Where the committed (default-scale) checkpoints live: package data of ``neurips26.picsb``."""

SOURCE_FILES: tuple[tuple[str, str], ...] = tuple(
    ("neurips26.picsb", f)
    for f in (
        "burgers.py",
        "observations.py",
        "data.py",
        "energy.py",
        "bridge.py",
        "denoiser.py",
        "picsb.py",
        "ablations.py",
        "baselines/oracle_bridge.py",
        "baselines/dps.py",
    )
)
"""The modules whose code decides what a stored state dict computes (fingerprinted, shown when stale)."""

BRIDGES = ("picsb", "no-refresh", "no-pde", "soft-obs", "lf-only", "oracle")
"""The bridge networks (a :class:`~neurips26.picsb.denoiser.Denoiser` each)."""
PRIOR = "dps-prior"
MODEL_NAMES: tuple[str, ...] = (*BRIDGES, PRIOR)
MAX_TOTAL_BYTES = 4_000_000
"""The chapter's own cap on its checkpoint directory (under the book's 6 MB)."""
METRIC_ATOL = 1e-6
"""Absolute slack of the metric check (on top of the relative one), for metrics near zero."""
PRIOR_BUDGET = 4
"""DPS's prior trains for this many times the bridges' steps: an unconditional DDPM must learn the whole
field distribution, and at the bridges' budget its ancestral samples came out ten times too large (a
validation pilot); at four times they have about the right size."""
HELD_OUT_SEED = 12345
"""The seed of the prior's fixed validation draw (noise levels and noise)."""

PAPER_DATA = DataConfig(train=8192, validation=256, test=1024)
"""The ``paper`` cases: 16 times the default's training split (the Burgers runs are procedural)."""
PAPER_DENOISER = DenoiserConfig(channels=(128, 256))
"""The ``paper`` U-Net: 2,176,288 parameters (the default's 250,912), 173 MFLOP per forward."""
PAPER_PICSB = PICSBConfig(
    rounds=5, steps=4000, batch=64, sample_steps=10, polish_steps=300, denoiser=PAPER_DENOISER
)
"""The ``paper`` bridges: 20,000 updates of 64 cases in five rounds, refreshed as at default."""


@dataclass(frozen=True)
class ModelSpec:
    """One row of the table: ``name`` and what it is (for ``prepare --list``)."""

    name: str
    role: str

    def __str__(self) -> str:
        return f"{self.name}  ({self.role})"


MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("picsb", "PICSB: surrogate refresh, residual loss, hard conditioning; no HF field"),
    ModelSpec("no-refresh", "ablation: R_max = 0, same total steps"),
    ModelSpec("no-pde", "ablation: lambda_R = 0"),
    ModelSpec("soft-obs", "ablation: sensors as a loss only, no hard conditioning"),
    ModelSpec("lf-only", "ablation: bridge to the LF prior with sensors spread in, no PDE, no refresh"),
    ModelSpec("oracle", "baseline: the same bridge trained on the true HF fields"),
    ModelSpec("dps-prior", "baseline: DPS's DDPM prior on the true HF fields, same steps"),
)


@dataclass(frozen=True)
class PrepareConfig:
    """What trains every model at one scale: the ``data``, PICSB's ``picsb`` config (the ablations and the
    oracle derive from it) and the DPS ``prior`` (same step budget)."""

    data: DataConfig = field(default_factory=DataConfig)
    picsb: PICSBConfig = field(default_factory=PICSBConfig)
    prior: dps.PriorConfig = field(default_factory=dps.PriorConfig)

    @classmethod
    def for_scale(cls, scale: str) -> PrepareConfig:
        """smoke: 128 training cases, two rounds of 15 steps; default: the module docstring's sizes;
        paper: :data:`PAPER_DATA` and :data:`PAPER_PICSB` (not run here). A trial run
        (:func:`neurips26.scales.trial_run`) applies :func:`trial_caps` at any scale."""
        smoke = PICSBConfig(rounds=2, steps=15, batch=16, sample_steps=5, polish_steps=20)
        default = PICSBConfig(rounds=3, steps=800, batch=32, sample_steps=10, polish_steps=300)
        data = pick(
            scale, smoke=DataConfig(train=128, validation=8, test=16), default=DataConfig(), paper=PAPER_DATA
        )
        picsb_config = pick(scale, smoke=smoke, default=default, paper=PAPER_PICSB)
        total = PRIOR_BUDGET * picsb_config.rounds * picsb_config.steps
        net = picsb_config.denoiser  # the prior's U-Net has the bridges' widths
        prior = dps.PriorConfig(
            channels=net.channels,
            time_dim=net.time_dim,
            groups=net.groups,
            train_steps=total,
            batch=picsb_config.batch,
            lr=picsb_config.lr,
        )
        config = cls(data=data, picsb=picsb_config, prior=prior)
        return trial_caps(config) if trial_run() else config


def trial_caps(config: PrepareConfig) -> PrepareConfig:
    """``config`` cut to a trial run (:func:`neurips26.scales.trial_run`): 8 / 4 / 4 cases, at most one
    round of one update of 4 cases, 2 sampling and at most 2 polish steps, one prior update of 4 fields;
    the networks keep their sizes. The caps enter the configuration hash."""
    picsb_config = replace(
        config.picsb,
        rounds=min(config.picsb.rounds, 1),
        steps=1,
        batch=4,
        sample_steps=2,
        polish_steps=min(config.picsb.polish_steps, 2),
    )
    return PrepareConfig(
        data=replace(config.data, train=8, validation=4, test=4),
        picsb=picsb_config,
        prior=replace(config.prior, train_steps=1, batch=4),
    )


def expected_hash(name: str, config: PrepareConfig) -> str:
    """:func:`~neurips26.checkpoint_files.config_hash` of everything that trains ``name`` under ``config``:
    the data and the bridges' config, or for the prior the data and the prior's config."""
    train = config.prior if name == PRIOR else config.picsb
    return config_hash({"model": name, "data": config.data, "train": train, "format": FORMAT})


@dataclass(frozen=True)
class PICSBMeta(Sidecar):
    """The sidecar of a checkpoint (``NAME.json``).

    name; config_hash: :func:`expected_hash`; source: fingerprint of :data:`SOURCE_FILES` (information);
    model: the network's config; spec: the training description (``residual_weight`` ``λ_R`` included);
    metrics: measured with the float16 weights (the behaviour check); curves: the logged training loss and
    the per-round surrogate energy and display-only rel-L2; weights_hash, version, torch, train_seconds,
    format.
    """

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "config_hash", "source")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ("model", "spec", "metrics", "curves")

    name: str
    config_hash: str
    source: str
    model: dict[str, Any] = field(default_factory=dict)
    spec: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    curves: dict[str, list[float]] = field(default_factory=dict)
    weights_hash: str = ""
    version: str = ""
    torch: str = ""
    train_seconds: float = 0.0
    format: int = FORMAT


# --------------------------------------------------------------------------------------------
# data, building and measuring


def split(name: str, scale: str) -> Split:
    """Split ``name`` of the data at ``scale``, on the CPU (made once per process and data configuration;
    a few seconds at default)."""
    return _split(name, PrepareConfig.for_scale(scale).data)


@cache
def _split(name: str, data: DataConfig) -> Split:
    return make_split(name, data)


def _check_name(name: str) -> str:
    return check_choice("name", name, MODEL_NAMES)


def variant(name: str, config: PICSBConfig) -> ablations.Variant:
    """The :class:`~neurips26.picsb.ablations.Variant` that trains bridge ``name`` (the oracle trains as
    PICSB's config without refresh, on the truth)."""
    if name in ablations.ABLATIONS:
        return ablations.ablate(name, config)
    return ablations.picsb_full(config)


def build_model(name: str, meta: PICSBMeta, state: dict[str, Tensor]) -> torch.nn.Module:
    """The network of ``meta`` with the float16 ``state`` loaded in float32 (eval mode); checks the layout."""
    if _check_name(name) == PRIOR:
        model: torch.nn.Module = dps.Prior(dps.PriorConfig(**_prior_kwargs(meta.model)))
    else:
        model = Denoiser(DenoiserConfig(**{**meta.model, "channels": tuple(meta.model["channels"])}))
    load_half_state(meta.name, model, state)
    return model.eval()


def _prior_kwargs(model: dict[str, Any]) -> dict[str, Any]:
    kwargs = dict(model)
    kwargs["channels"] = tuple(kwargs["channels"])
    kwargs["burgers"] = BurgersConfig(**kwargs["burgers"])
    return kwargs


def _model_dict(name: str, config: PrepareConfig) -> dict[str, Any]:
    if name == PRIOR:
        return asdict(config.prior)
    return asdict(config.picsb.denoiser)


def bridge_fields(name: str, model: torch.nn.Module, data: Split, config: PICSBConfig) -> Tensor:
    """Bridge ``name``'s OT-ODE reconstruction of ``data`` in ``config.sample_steps`` network calls
    (hard-conditioned, except ``soft-obs``)."""
    hard = variant(name, config).hard
    with torch.no_grad():
        return reconstruct(
            model, data.x1, data.y, data.mask, config.sample_steps, "ot-ode", batch=64, hard=hard
        )


@torch.no_grad()
def validation_metrics(name: str, model: torch.nn.Module, scale: str) -> dict[str, float]:
    """Bridges: ``val_rel_l2`` and ``val_residual`` (means over the validation split of the OT-ODE
    reconstruction); the prior: ``val_loss``, its ε-loss on the validation fields at a fixed draw (drawn
    on the CPU). Computed on the model's device (the split is moved there)."""
    config = PrepareConfig.for_scale(scale)
    val = split("validation", scale).to(next(model.parameters()).device)
    if _check_name(name) == PRIOR:
        generator = torch.Generator().manual_seed(HELD_OUT_SEED)
        return {"val_loss": float(dps.prior_loss(model, val.truth, generator))}
    fields = bridge_fields(name, model, val, config.picsb)
    return {
        "val_rel_l2": float(relative_l2(fields, val.truth).mean()),
        "val_residual": float(residual_norm(fields, config.data.burgers).mean()),
    }


# --------------------------------------------------------------------------------------------
# training


def _train_bridge(name: str, scale: str, progress: bool) -> PICSBResult:
    """Bridge ``name`` trained on :func:`~neurips26.train.choose_device`'s device (the split moved there)."""
    config = PrepareConfig.for_scale(scale)
    train = split("train", scale).to(choose_device())
    data = train.training_set()
    if name == "oracle":
        return train_oracle(data, train.truth, config.picsb, progress=progress)
    monitor = truth_monitor(train.truth)  # display only: the per-round rel-L2 of the logs
    return ablations.train_variant(data, variant(name, config.picsb), monitor=monitor, progress=progress)


def train_model(name: str, scale: str, *, progress: bool = True) -> tuple[dict[str, Tensor], PICSBMeta]:
    """Train model ``name`` at ``scale`` on :func:`~neurips26.train.choose_device`'s device (data-parallel
    under torchrun); its float16 state and sidecar (metrics on the float16 weights, on the CPU, where the
    registry re-measures them)."""
    name = _check_name(name)
    config = PrepareConfig.for_scale(scale)
    start = time.perf_counter()
    curves: dict[str, list[float]]
    if name == PRIOR:
        prior, losses = dps.train_prior(
            split("train", scale).truth.to(choose_device()),
            config.prior,
            seed=config.picsb.seed,
            progress=progress,
        )
        model: torch.nn.Module = prior
        spec: dict[str, Any] = {"steps": config.prior.train_steps, "batch": config.prior.batch}
        curves = {"loss": losses}
    else:
        result = _train_bridge(name, scale, progress)
        model = result.model
        v = variant(name, config.picsb)
        spec = {
            "rounds": v.config.rounds,
            "steps": v.config.steps,
            "batch": v.config.batch,
            "hard": v.hard,
            "residual_weight": result.residual_weight,
            "polish_steps": v.config.polish_steps,
            "sample_steps": v.config.sample_steps,
            "kappa": v.config.kappa,
        }
        curves = {
            "loss": result.losses,
            "round": [float(log.round) for log in result.logs],
            "round_energy": [log.energy for log in result.logs],
            "round_rel_l2": [log.rel_l2 for log in result.logs],
            "round_loss": [log.loss for log in result.logs],
        }
    seconds = time.perf_counter() - start
    every = max(1, len(curves["loss"]) // 200)
    curves["loss_step"] = [float(s) for s in range(0, len(curves["loss"]), every)]
    curves["loss"] = [float(v) for v in curves["loss"][::every]]
    state = half_state(model)
    stub = PICSBMeta(name=name, config_hash="", source="", model=_model_dict(name, config))
    metrics = validation_metrics(name, build_model(name, stub, state), scale)
    meta = PICSBMeta(
        name=name,
        config_hash=expected_hash(name, config),
        source=source_fingerprint(SOURCE_FILES),
        model=_model_dict(name, config),
        spec={**spec, "parameters": sum(v.numel() for v in state.values())},
        metrics=metrics,
        curves=curves,
        weights_hash=weights_hash(state),
        version=neurips26.__version__,
        torch=torch.__version__,
        train_seconds=round(seconds, 2),
    )
    return state, meta


def _trained(name: str, scale: str, verbose: bool) -> tuple[dict[str, Tensor], PICSBMeta]:
    """``train_model(name, scale)``, kept in the user cache (keyed by the config and the code)."""
    config = PrepareConfig.for_scale(scale)
    key = {
        "hash": expected_hash(name, config),
        "source": source_fingerprint(SOURCE_FILES),
        "train": cache_key("source", None, "neurips26.train"),
    }
    return cached(
        f"picsb-model-{name}-{scale}",
        key,
        lambda: train_model(name, scale, progress=verbose),
        package="neurips26.picsb",
        verbose=verbose,
    )


REGISTRY = Registry(
    chapter="picsb",
    package_dir=PACKAGE_DIR,
    names=MODEL_NAMES,
    meta_class=PICSBMeta,
    expected_hash=lambda name, scale: expected_hash(name, PrepareConfig.for_scale(scale)),
    build=lambda name, scale, meta, state: build_model(name, meta, state),
    measure=lambda name, scale, model: validation_metrics(name, model, scale),
    train=_trained,
    source_files=lambda name: SOURCE_FILES,
    atol=METRIC_ATOL,
)
"""The chapter's models in the :class:`~neurips26.checkpoint_files.Registry`."""

checkpoint_dir = REGISTRY.checkpoint_dir
load_checkpoint = REGISTRY.load
pretrained = REGISTRY.pretrained


# --------------------------------------------------------------------------------------------
# the command line


def prepare(
    scale: str = "smoke",
    *,
    only: Sequence[str] | None = None,
    out: Path | str | None = None,
    progress: bool = True,
) -> list[PICSBMeta]:
    """Train and write the models at ``scale`` (or the names in ``only``) into ``out`` (default
    :func:`checkpoint_dir`); a fresh checkpoint already there is kept. Returns the sidecars written."""
    return REGISTRY.write(
        REGISTRY.chosen(only),
        scale,
        checkpoint_dir(scale) if out is None else out,
        lambda name: train_model(name, scale, progress=progress),
        max_total=MAX_TOTAL_BYTES,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m neurips26.picsb.prepare --scale smoke|default|paper [--only NAME]... [--out DIR]``."""
    return prepare_main(
        argv,
        prog="python -m neurips26.picsb.prepare",
        description="Train and write the bridges and the DPS prior of chapter 06.",
        models=MODELS,
        prepare=prepare,
    )


if __name__ == "__main__":
    # Run the importable module's main, not this ``__main__`` copy's: what it caches on the way then
    # pickles under ``neurips26.picsb.prepare``, which a later process can read back.
    from neurips26.picsb import prepare as _importable

    sys.exit(_importable.main())
