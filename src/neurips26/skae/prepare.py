"""The chapter's trained models: the table the claims need, their training and float16 checkpoints.

``python -m neurips26.skae.prepare --scale default`` trains every model of :func:`model_table` and writes
float16 checkpoints into ``src/neurips26/skae/checkpoints/`` (package data); ``--scale smoke`` trains the
seven rows on one system and seed (d_z = 16, 100 steps) into the user cache; ``--only NAME`` (repeatable)
restricts the run, and a checkpoint already in the directory and fresh is kept, so an interrupted run
resumes where it stopped. The notebooks get a model through :func:`pretrained`, the rule of the chapter's
:class:`~neurips26.checkpoint_files.Registry` (:data:`REGISTRY`): the checkpoint of its scale when it is
there and fresh, otherwise the same training through :func:`neurips26.cache.cached`.

The table (:func:`model_table`; names ``ROW-SYSTEM-sSEED``), sized for the claims of the chapter:

- k1 forecast, k2 alignment, k5 identity, k7 collapse and the staged routing of k4 (which trains on top of
  the LISTA checkpoints): the rows LISTA, LISTA-BD, LISTA-SB, Sparse MLP and Dense MLP on the five
  controlled systems × seeds 0, 1, 2 (75 models);
- k3 sparsity: our top-k row and LISTA without the ℓ1 term (λ_sp = 0) on the five controlled systems,
  seed 0 (10 models; Sparse MLP and LISTA come from the k1 rows);
- k6 chaos: LISTA and Dense MLP on Shimizu–Morioka, Sakarya, Lorenz-63 and Lorenz-96 × seeds 0, 1, 2
  (24 models; a block count needs a basin count, which a flow lacks).

109 models. The paper's sixth row, Sparse MLP-BD (:data:`ROWS` has it), is left out of the table to keep
the run within its budget (``--only`` cannot add it). Measured (one thread, load ≈ 1 on two cores): 15 s
for a LISTA model at 1.5k steps, 11 s for a Dense MLP, so the table takes ≈ 25 min.

Training [ours, sized for the CPU; the paper's protocol is 200k steps at 5e-5]: ``fit`` with AdamW,
``lr = 1e-3`` for the encoder and decoder and ``0.1 ×`` that for ``K`` without weight decay (the paper's
ratio: ``lr_scale={"transition": 0.1}, no_decay=("transition",)``), weight decay 1e-4 on the other
matrices, cosine decay to 0.1 ×, gradients clipped at 1, batch 256, fresh windows every step
(:mod:`neurips26.skae.data`), d_z = 64, λ_sp = 3e-3 (6e-3 on the flows), ``L = 8`` (10 on the flows).
A model's initial weights, its training windows and its ``fit`` seed all derive from the table's seed.

``--scale paper`` trains the same table at :data:`PAPER` into the user cache, each model on the device
:func:`~neurips26.train.choose_device` picks; ``torchrun --nproc_per_node=N -m neurips26.skae.prepare
--scale paper`` trains each model data-parallel (every rank simulates the step's global batch of 256
windows and keeps its share). The paper's systems are closed-form, so its per-model protocol runs as
written: d_z = 256 (95k parameters for a LISTA model), batch 256, 200k AdamW updates on the controlled
systems and 100k on the flows, lr 5e-5 for the encoder and decoder and 5e-6 for ``K`` (undecayed), weight
decay 1e-4, and flow caches of 200 trajectories of 30,000 stored steps (float64, rolled on the CPU: about
1.9 GB per Lorenz-96 seed). Still ours: five of the paper's fifteen controlled systems and three of its
fifteen seeds, three flows and Lorenz-96 at d = 40 (the paper's high-dimensional check: d = 128 with
d_z = 512), one ``K`` rate for every row (the paper gives ``K`` 1e-5 on its flows' MLP rows), the cosine
decay, and no checkpoint selection (the paper picks one every 500 updates by a rollout). A step costs
about 2 GFLOP but is bound by kernel launches and the CPU simulation of its windows: about 4-6 ms, so
about 15 min per controlled model, 8 min per flow model and **about 26 h for the table in one process on
one GPU** (an estimate, not a measured run). Run the rows in parallel processes instead, each with its own
``--only`` list (e.g. one per system; about 12 processes share one H100 node's 16 cores, about 2.5 h): a
checkpoint already fresh in the directory is kept. ``--trial`` (:func:`neurips26.scales.trial_run`)
trains every row for one update under :func:`trial_caps` (the whole table in about 10 s of CPU).

A checkpoint is fresh when today's table row and sizes hash as recorded, its state dict fits today's KAE
exactly, and it reproduces the validation metrics recorded beside it (``val_loss`` on ``val_windows`` (256)
held-out windows, ``val_mse``: MSE through ``val_horizon`` with re-encoding every ``val_period`` steps on
the validation starts) within relative :data:`~neurips26.checkpoint_files.METRIC_RTOL`.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
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
    committed_form,
    config_hash,
    half_state,
    load_half_state,
    prepare_main,
    source_fingerprint,
    weights_hash,
)
from neurips26.scales import pick, trial_run
from neurips26.skae.data import (
    FLOW_WINDOW,
    DataConfig,
    EvalConfig,
    WindowSampler,
    has_box,
    trajectories,
    validation_windows,
)
from neurips26.skae.losses import WINDOW, LossWeights, default_weights, kae_loss
from neurips26.skae.model import ENCODERS, KAE, TRANSITIONS
from neurips26.skae.rollout import mse_through, rollout
from neurips26.skae.systems import CONTROLLED, FLOWS, SYSTEMS, HardPoolConfig, make_system
from neurips26.train import choose_device, fit
from neurips26.validation import check_choice, check_float, check_int, check_seed

PACKAGE_DIR = Path(__file__).resolve().parent / "checkpoints"
"""Where the committed (default-scale) checkpoints live: package data of ``neurips26.skae``."""

SOURCE_FILES: tuple[tuple[str, str], ...] = (
    ("neurips26.skae", "model.py"),
    ("neurips26.skae", "losses.py"),
    ("neurips26.skae", "data.py"),
    ("neurips26.skae", "systems.py"),
)
"""The modules whose code decides what a stored state dict computes (fingerprinted, shown when stale)."""

MAX_TOTAL_BYTES = 3_500_000
"""The chapter's own cap on its checkpoint directory (under the book's 6 MB)."""


# --------------------------------------------------------------------------------------------
# rows and the table


@dataclass(frozen=True)
class Row:
    """A model row: ``encoder`` and ``transition`` of :class:`~neurips26.skae.model.KAE`; ``sparsity``
    False drops the ℓ1 term (λ_sp = 0) of a sparse row; ``k`` for the top-k row."""

    key: str
    label: str
    encoder: str
    transition: str = "dense"
    sparsity: bool = True
    k: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key or any(c in self.key for c in "/\\"):
            raise ValueError(f"key must be a non-empty str without path separators; got {self.key!r}")
        check_choice("encoder", self.encoder, ENCODERS)
        check_choice("transition", self.transition, TRANSITIONS)
        if not isinstance(self.sparsity, bool):
            raise TypeError(f"sparsity must be a bool; got {type(self.sparsity).__name__}")
        if (self.k is not None) != (self.encoder == "topk"):
            raise ValueError(f"k must be given for encoder 'topk' and only then; got k={self.k}")


#: Every row the chapter knows, by key (the paper's six, our top-k, LISTA with λ_sp = 0).
ROWS: dict[str, Row] = {
    row.key: row
    for row in (
        Row("lista", "LISTA", "lista"),
        Row("lista-bd", "LISTA-BD", "lista", "block"),
        Row("lista-sb", "LISTA-SB", "lista", "softblock"),
        Row("sparse-mlp", "Sparse MLP", "mlp_sparse"),
        Row("sparse-mlp-bd", "Sparse MLP-BD", "mlp_sparse", "block"),
        Row("dense-mlp", "Dense MLP", "mlp_dense"),
        Row("topk", "top-k", "topk", k=8),
        Row("lista-nosp", "LISTA, λ_sp = 0", "lista", sparsity=False),
    )
}

#: The rows of the forecasting comparison (claim k1) and of alignment, identity and collapse.
FORECAST_ROWS = ("lista", "lista-bd", "lista-sb", "sparse-mlp", "dense-mlp")
#: The extra rows of the sparsity claim k3 (seed 0 only).
SPARSITY_ROWS = ("topk", "lista-nosp")
#: The rows of the chaos claim k6.
CHAOS_ROWS = ("lista", "dense-mlp")
#: The high-dimensional check of k6.
LORENZ96 = "lorenz-96"
SEEDS = (0, 1, 2)


@dataclass(frozen=True)
class ModelSpec:
    """One model of the table: ``row`` (a key of :data:`ROWS`) on ``system`` with ``seed``."""

    row: str
    system: str
    seed: int

    def __post_init__(self) -> None:
        check_choice("row", self.row, tuple(ROWS))
        check_choice("system", self.system, tuple(SYSTEMS))
        check_seed("seed", self.seed)
        row = ROWS[self.row]
        if row.transition != "dense" and make_system(self.system).count is None:
            raise ValueError(f"row {self.row!r} needs a basin count, which system {self.system!r} lacks")

    @property
    def name(self) -> str:
        """``ROW-SYSTEM-sSEED``, the checkpoint's file name."""
        return f"{self.row}-{self.system}-s{self.seed}"

    @property
    def claims(self) -> tuple[str, ...]:
        """The claims this model serves."""
        if self.system in CONTROLLED:
            if self.row in SPARSITY_ROWS:
                return ("k3",)
            out = ["k1", "k2"]
            if self.row in ("lista", "sparse-mlp", "dense-mlp"):
                out.append("k3")
            if self.row == "lista":
                out.append("k4")
                if self.system == "local-linear-gates":
                    out.append("k5")
            if self.row in ("lista", "dense-mlp"):
                out.append("k7")
            return tuple(out)
        return ("k6",)

    def __str__(self) -> str:
        return f"{self.name}  ({ROWS[self.row].label}; claims {', '.join(self.claims)})"


def _table() -> tuple[ModelSpec, ...]:
    specs = [ModelSpec(r, s, seed) for s in CONTROLLED for r in FORECAST_ROWS for seed in SEEDS]
    specs += [ModelSpec(r, s, 0) for s in CONTROLLED for r in SPARSITY_ROWS]
    specs += [ModelSpec(r, s, seed) for s in (*FLOWS, LORENZ96) for r in CHAOS_ROWS for seed in SEEDS]
    return tuple(specs)


MODELS: tuple[ModelSpec, ...] = _table()
"""The default (and paper) table: 109 models (module docstring)."""
MODEL_NAMES: tuple[str, ...] = tuple(spec.name for spec in MODELS)

SMOKE_SYSTEM = "square-4"


def model_table(scale: str = "default") -> tuple[ModelSpec, ...]:
    """The models ``prepare`` trains at ``scale``: smoke, the seven table rows of Square-4, seed 0; default
    and paper, the whole table."""
    return pick(
        scale,
        smoke=tuple(m for m in MODELS if m.system == SMOKE_SYSTEM and m.seed == 0),
        default=MODELS,
        paper=MODELS,
    )


def model_spec(name: str) -> ModelSpec:
    """The row of :data:`MODELS` called ``name`` (``ValueError`` naming ``name`` otherwise)."""
    check_choice("name", name, MODEL_NAMES)
    return MODELS[MODEL_NAMES.index(name)]


def claim_counts(models: Sequence[ModelSpec] = MODELS) -> dict[str, int]:
    """How many models of ``models`` serve each claim."""
    counts: dict[str, int] = {}
    for spec in models:
        for claim in spec.claims:
            counts[claim] = counts.get(claim, 0) + 1
    return dict(sorted(counts.items()))


# --------------------------------------------------------------------------------------------
# sizes


@dataclass(frozen=True)
class PrepareConfig:
    """Sizes shared by every model of the table (equal budgets across rows).

    ``latent``: d_z; ``steps``, ``batch``, ``lr`` (encoder and decoder), ``k_lr_scale`` (K's factor),
    ``weight_decay`` (all matrices but K); ``sparsity``/``flow_sparsity``: λ_sp of the sparse rows on the
    controlled systems / flows; ``val_starts``, ``val_horizon``, ``val_period``: the recorded validation
    rollout; ``flow_trajectories``/``flow_length``: a flow's cached training trajectories; ``flow_steps``:
    the updates of a flow row (``None``: ``steps``); ``flow_warmup``: the stored steps that take a flow's
    starts onto its attractor (``None``: the flow's own, 2,000); ``val_windows``: the held-out windows of
    ``val_loss``; ``pool``: the hard-pool settings of the controlled systems' training resets.
    """

    latent: int = 64
    steps: int = 1500
    batch: int = 256
    lr: float = 1e-3
    k_lr_scale: float = 0.1
    weight_decay: float = 1e-4
    sparsity: float = 3e-3
    flow_sparsity: float = 6e-3
    val_starts: int = 16
    val_horizon: int = 100
    val_period: int = 10
    flow_trajectories: int = 64
    flow_length: int = 2000
    flow_steps: int | None = None
    flow_warmup: int | None = None
    val_windows: int = 256
    pool: HardPoolConfig = field(default_factory=HardPoolConfig)

    def __post_init__(self) -> None:
        check_int("latent", self.latent, minimum=2)
        if self.latent % 2:
            raise ValueError(f"latent must be even (the sign-split LISTA code); got {self.latent}")
        if self.latent < ROWS["topk"].k:
            raise ValueError(f"latent must be >= the top-k row's k = {ROWS['topk'].k}; got {self.latent}")
        check_int("steps", self.steps, minimum=1)
        check_int("batch", self.batch, minimum=1)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_float("k_lr_scale", self.k_lr_scale, minimum=0.0, strict_min=True)
        check_float("weight_decay", self.weight_decay, minimum=0.0)
        check_float("sparsity", self.sparsity, minimum=0.0)
        check_float("flow_sparsity", self.flow_sparsity, minimum=0.0)
        check_int("val_starts", self.val_starts, minimum=1)
        check_int("val_horizon", self.val_horizon, minimum=1)
        check_int("val_period", self.val_period, minimum=1)
        check_int("flow_trajectories", self.flow_trajectories, minimum=1)
        check_int("flow_length", self.flow_length, minimum=FLOW_WINDOW)
        if self.flow_steps is not None:
            check_int("flow_steps", self.flow_steps, minimum=1)
        if self.flow_warmup is not None:
            check_int("flow_warmup", self.flow_warmup, minimum=0)
        check_int("val_windows", self.val_windows, minimum=1)
        if not isinstance(self.pool, HardPoolConfig):
            raise TypeError(f"pool must be a HardPoolConfig; got {type(self.pool).__name__}")

    @classmethod
    def for_scale(cls, scale: str) -> PrepareConfig:
        """smoke: d_z = 16, 100 steps, batch 64; default: the fields' defaults; paper: :data:`PAPER`.

        Under a trial run (:func:`~neurips26.scales.trial_run`) :func:`trial_caps` apply to the scale's
        plan."""
        config = pick(
            scale,
            smoke=cls(
                latent=16,
                steps=100,
                batch=64,
                val_starts=8,
                val_horizon=50,
                flow_trajectories=8,
                flow_length=200,
            ),
            default=cls(),
            paper=PAPER,
        )
        return trial_caps(config) if trial_run() else config

    def steps_for(self, spec: ModelSpec) -> int:
        """The updates of ``spec``: ``flow_steps`` on a flow when it is set, ``steps`` otherwise."""
        if self.flow_steps is not None and not has_box(spec.system):
            return self.flow_steps
        return self.steps

    def data(self, spec: ModelSpec) -> DataConfig:
        """The training data of ``spec`` under these sizes."""
        flow = not has_box(spec.system)
        return DataConfig(
            system=spec.system,
            seed=spec.seed,
            window=FLOW_WINDOW if flow else WINDOW,
            batch=self.batch,
            pool=self.pool,
            flow_trajectories=self.flow_trajectories,
            flow_length=self.flow_length,
            warmup=self.flow_warmup,
        )

    def evaluation(self) -> EvalConfig:
        """The validation set of the recorded metrics (test and alignment sizes are the experiments')."""
        return EvalConfig(val_starts=self.val_starts, horizon=self.val_horizon)


PAPER = PrepareConfig(
    latent=256,
    steps=200_000,
    flow_steps=100_000,
    lr=5e-5,
    flow_trajectories=200,
    flow_length=30_000,
)
"""The ``paper`` scale (module docstring): the paper's d_z = 256, batch 256, 200k updates on the controlled
systems and 100k on the flows, lr 5e-5 (K: 5e-6), weight decay 1e-4, flow caches of 200 x 30,000 steps."""

TRIAL_POOL = HardPoolConfig(candidates=16, pool=8)
"""The hard pool of a trial run: 16 scored candidates, 8 kept (the default scores 4,096)."""


def trial_caps(config: PrepareConfig) -> PrepareConfig:
    """``config`` cut to a trial run: one update of 4 windows (no learning-rate warm-up at any scale), flow
    caches of 2 trajectories of 20 steps from starts warmed up for 20 steps (not 2,000), a hard pool of 16
    candidates, and a validation of 4 windows and 2 starts to 10 steps; d_z and the learning rates stay
    ``config``'s."""
    return replace(
        config,
        steps=1,
        flow_steps=None,
        batch=4,
        val_starts=2,
        val_horizon=10,
        val_period=10,
        val_windows=4,
        flow_trajectories=2,
        flow_length=2 * FLOW_WINDOW,
        flow_warmup=20,
        pool=TRIAL_POOL,
    )


GROWTH_FIELDS: dict[str, Any] = {
    "flow_steps": None,
    "flow_warmup": None,
    "val_windows": 256,
    "pool": HardPoolConfig(),
}
"""Fields of :class:`PrepareConfig` added with the ``paper`` scale, at the values the committed checkpoints
were trained with: at these values a field is left out of the hash."""

DATA_GROWTH_FIELDS: dict[str, Any] = {"warmup": None}
"""The same for :class:`~neurips26.skae.data.DataConfig`."""


def expected_hash(spec: ModelSpec, config: PrepareConfig) -> str:
    """:func:`~neurips26.checkpoint_files.config_hash` of everything that trains ``spec`` under ``config``.

    ``config`` and its data enter as their :func:`~neurips26.checkpoint_files.committed_form` (without the
    :data:`GROWTH_FIELDS` and :data:`DATA_GROWTH_FIELDS` that hold their committed values), so the default
    hashes are those recorded before the fields existed."""
    return config_hash(
        {
            "model": spec,
            "row": ROWS[spec.row],
            "prepare": committed_form(config, GROWTH_FIELDS),
            "data": committed_form(config.data(spec), DATA_GROWTH_FIELDS),
            "format": FORMAT,
        }
    )


# --------------------------------------------------------------------------------------------
# the sidecar


@dataclass(frozen=True)
class KAEMeta(Sidecar):
    """The sidecar of a checkpoint (``NAME.json``).

    name, row, system, seed; config_hash: :func:`expected_hash`; source: fingerprint of
    :data:`SOURCE_FILES` (information); model: the :class:`~neurips26.skae.model.KAE` arguments; spec: the
    training description; metrics: ``val_loss`` and ``val_mse`` measured with the float16 weights (the
    behaviour check); curves: the logged training loss; weights_hash, version, torch, train_seconds, format.
    """

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "row", "system", "config_hash", "source")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ("model", "spec", "metrics", "curves")

    name: str
    row: str
    system: str
    config_hash: str
    source: str
    seed: int = 0
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
# building, measuring, training


def model_arguments(spec: ModelSpec, config: PrepareConfig) -> dict[str, Any]:
    """The :class:`~neurips26.skae.model.KAE` arguments of ``spec`` (blocks = the known basin count)."""
    row, system = ROWS[spec.row], make_system(spec.system)
    return {
        "encoder": row.encoder,
        "transition": row.transition,
        "latent": config.latent,
        "state_dim": system.dim,
        "blocks": None if row.transition == "dense" else system.count,
        "k": row.k,
        "seed": spec.seed,
    }


def loss_weights(spec: ModelSpec, model: KAE, config: PrepareConfig) -> LossWeights:
    """The paper's weights for the row (λ_sp of the controlled systems or the flows; 0 without ℓ1)."""
    sparsity = config.sparsity if has_box(spec.system) else config.flow_sparsity
    weights = default_weights(model, sparsity=sparsity)
    return weights if ROWS[spec.row].sparsity else replace(weights, sp=0.0)


def build_model(meta: KAEMeta, state: dict[str, Tensor]) -> KAE:
    """The KAE of ``meta`` with the float16 ``state`` loaded in float32 (eval mode); checks the layout."""
    model = KAE(**meta.model)
    load_half_state(meta.name, model, state)
    return model.eval()


@torch.no_grad()
def validation_metrics(spec: ModelSpec, model: KAE, config: PrepareConfig) -> dict[str, float]:
    """``val_loss`` (the row's objective on ``val_windows`` held-out windows) and ``val_mse`` (MSE through
    ``val_horizon``, re-encoding every ``val_period`` steps, on the validation starts); on the model's
    device."""
    data = config.data(spec)
    was_training = model.training
    model.eval()
    windows = validation_windows(data, config.val_windows)
    loss = kae_loss(model, windows, loss_weights(spec, model, config))
    val = trajectories(data, config.evaluation(), "val")
    predicted = rollout(model, val.starts.to(torch.float32), config.val_horizon, period=config.val_period)
    model.train(was_training)
    return {"val_loss": float(loss), "val_mse": mse_through(predicted, val.truth, config.val_horizon).mse}


def train_model(
    spec: ModelSpec, config: PrepareConfig, *, progress: bool = True
) -> tuple[dict[str, Tensor], KAEMeta]:
    """Train ``spec`` under ``config``; its float16 state and sidecar (metrics on the float16 weights, on
    the CPU, as a loaded checkpoint measures them). Trains on :func:`~neurips26.train.choose_device`'s
    device, data-parallel under torchrun (every rank draws the global batch of the step and keeps its
    share)."""
    if not isinstance(spec, ModelSpec):
        raise TypeError(f"spec must be a ModelSpec; got {type(spec).__name__}")
    if not isinstance(config, PrepareConfig):
        raise TypeError(f"config must be a PrepareConfig; got {type(config).__name__}")
    arguments = model_arguments(spec, config)
    model = KAE(**arguments).to(choose_device())
    weights = loss_weights(spec, model, config)
    sampler = WindowSampler(config.data(spec))
    start = time.perf_counter()
    history = fit(
        model,
        lambda m, batch: kae_loss(m, batch, weights),
        sampler,
        steps=config.steps_for(spec),
        seed=spec.seed,
        lr=config.lr,
        weight_decay=config.weight_decay,
        lr_scale={"transition": config.k_lr_scale},
        no_decay=("transition",),
        progress=progress,
        desc=spec.name,
    )
    seconds = time.perf_counter() - start
    state = half_state(model)
    stub = KAEMeta(
        name=spec.name, row=spec.row, system=spec.system, config_hash="", source="", model=arguments
    )
    metrics = validation_metrics(spec, build_model(stub, state), config)
    every = max(1, len(history.loss) // 20)
    meta = KAEMeta(
        name=spec.name,
        row=spec.row,
        system=spec.system,
        seed=spec.seed,
        config_hash=expected_hash(spec, config),
        source=source_fingerprint(SOURCE_FILES),
        model=arguments,
        spec={
            "row": dataclasses.asdict(ROWS[spec.row]),
            "claims": list(spec.claims),
            "train": {
                "steps": config.steps_for(spec),
                "batch": config.batch,
                "lr": config.lr,
                "k_lr_scale": config.k_lr_scale,
                "weight_decay": config.weight_decay,
                "window": config.data(spec).window,
                "sparsity": weights.sp,
            },
            "parameters": sum(v.numel() for v in state.values()),
        },
        metrics=metrics,
        curves={"loss_step": [float(s) for s in history.step[::every]], "loss": history.loss[::every]},
        weights_hash=weights_hash(state),
        version=neurips26.__version__,
        torch=torch.__version__,
        train_seconds=round(seconds, 2),
    )
    return state, meta


def _trained(spec: ModelSpec, config: PrepareConfig, verbose: bool) -> tuple[dict[str, Tensor], KAEMeta]:
    """``train_model(spec, config)``, kept in the user cache (keyed by the row, sizes and code)."""
    key = {"hash": expected_hash(spec, config), "train": cache_key("source", None, "neurips26.train")}
    return cached(
        f"skae-model-{spec.name}",
        key,
        lambda: train_model(spec, config, progress=verbose),
        package="neurips26.skae",
        verbose=verbose,
    )


REGISTRY = Registry(
    chapter="skae",
    package_dir=PACKAGE_DIR,
    names=MODEL_NAMES,
    meta_class=KAEMeta,
    expected_hash=lambda name, scale: expected_hash(model_spec(name), PrepareConfig.for_scale(scale)),
    build=lambda name, scale, meta, state: build_model(meta, state),
    measure=lambda name, scale, model: validation_metrics(
        model_spec(name), model, PrepareConfig.for_scale(scale)
    ),
    train=lambda name, scale, verbose: _trained(model_spec(name), PrepareConfig.for_scale(scale), verbose),
    source_files=lambda name: SOURCE_FILES,
    atol=1e-6,
)
"""The chapter's models in the :class:`~neurips26.checkpoint_files.Registry`: the table, the hash of a row
at a scale, the validation metrics a checkpoint must reproduce (relative
:data:`~neurips26.checkpoint_files.METRIC_RTOL` plus 1e-6 absolute), and the cached training."""

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
) -> list[KAEMeta]:
    """Train and write the models of :func:`model_table` at ``scale`` (or the names in ``only``).

    ``out`` defaults to :func:`checkpoint_dir` (the package for "default"). A checkpoint already in ``out``
    that loads fresh is kept (resuming an interrupted run); delete it to retrain. Returns the sidecars
    written. ``RuntimeError`` when a checkpoint or the directory exceeds its cap (the book's, and this
    chapter's :data:`MAX_TOTAL_BYTES`).
    """
    config = PrepareConfig.for_scale(scale)
    names = tuple(spec.name for spec in model_table(scale)) if only is None else REGISTRY.chosen(only)
    return REGISTRY.write(
        names,
        scale,
        checkpoint_dir(scale) if out is None else out,
        lambda name: train_model(model_spec(name), config, progress=progress),
        max_total=MAX_TOTAL_BYTES,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m neurips26.skae.prepare --scale smoke|default|paper [--only NAME]... [--out DIR]``."""
    return prepare_main(
        argv,
        prog="python -m neurips26.skae.prepare",
        description="Train and write the Koopman autoencoders of chapter 04.",
        models=MODELS,
        prepare=prepare,
    )


if __name__ == "__main__":
    # Run the importable module's main, not this ``__main__`` copy's: what it caches on the way then
    # pickles under ``neurips26.skae.prepare``, which a later process can read back.
    from neurips26.skae import prepare as _importable

    sys.exit(_importable.main())
