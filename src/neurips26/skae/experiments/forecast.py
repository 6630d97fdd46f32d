"""Claims k1 (forecasting) and k3 (sparsity) of chapter 04: MSE through H of every row.

k1 (:func:`run_forecast`): every KAE row of the table (LISTA, LISTA-BD, LISTA-SB, Sparse MLP, Dense MLP) and
the paper's closed-form references (:data:`~neurips26.skae.baselines.CLOSED_FORM`; optionally our trained
consistent KAE and oracle mixture), on the five controlled systems × seeds, at H100/H500/H1000 under both
cadence rules (:func:`~neurips26.skae.experiments.common.cadence_rules`). A baseline is fitted on
``baseline_batches`` training batches of the model's own data (the same windows a KAE sees in its first
steps). Per system, the paper's IQM over seeds; over systems, their mean
(:func:`~neurips26.skae.metrics.aggregate`).

k3 (:func:`run_sparsity`): H1000 of Sparse MLP, LISTA, LISTA with λ_sp = 0 and the top-k row against Dense MLP
(seed 0, where the table has the ablation rows), best-periodic rule.

Results are kept in :mod:`neurips26.cache` (keyed by the config and this package's source).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from neurips26.scales import pick
from neurips26.seeding import sub_seed
from neurips26.skae.baselines import CLOSED_FORM, ConsistentKAE, OracleMixture, make_baseline
from neurips26.skae.data import EvalConfig, WindowSampler
from neurips26.skae.experiments.common import (
    Cadence,
    KAEForecaster,
    basin_reference,
    cadence_rules,
    check_grid,
    check_names,
    check_scale,
    evaluation_set,
    load,
    model_name,
    run_cached,
)
from neurips26.skae.metrics import aggregate, iqm
from neurips26.skae.prepare import FORECAST_ROWS, ROWS, SEEDS, SPARSITY_ROWS, PrepareConfig, model_spec
from neurips26.skae.rollout import HORIZONS, PERIODS
from neurips26.skae.systems import CONTROLLED, make_system
from neurips26.validation import check_int

#: Our trained baselines (not rows of the paper): the consistent KAE and the oracle mixture of KAEs.
TRAINED = ("consistent-kae", "oracle-mixture")
#: The sparse rows of k1 (each is compared with Dense MLP).
SPARSE_ROWS = ("lista", "lista-bd", "lista-sb", "sparse-mlp")
DENSE_ROW = "dense-mlp"
RULES = ("best", "frozen")


@dataclass(frozen=True)
class ForecastConfig:
    """k1: ``rows`` (KAE rows) and ``baselines`` (closed-form keys) plus ``trained`` (ours) on ``systems`` ×
    ``seeds``; ``horizons``, ``periods`` (the re-encoding grid), ``evaluation`` (start counts, horizon);
    ``checkpoints``: the checkpoint scale; ``baseline_batches``: training batches a baseline is fitted on;
    ``trained_steps``: updates of a trained baseline."""

    systems: tuple[str, ...] = CONTROLLED
    seeds: tuple[int, ...] = SEEDS
    rows: tuple[str, ...] = FORECAST_ROWS
    baselines: tuple[str, ...] = tuple(CLOSED_FORM)
    trained: tuple[str, ...] = ()
    horizons: tuple[int, ...] = HORIZONS
    periods: tuple[int, ...] = PERIODS
    evaluation: EvalConfig = field(default_factory=EvalConfig)
    checkpoints: str = "default"
    baseline_batches: int = 4
    trained_steps: int = 1500

    def __post_init__(self) -> None:
        check_names("systems", self.systems, CONTROLLED)
        if not isinstance(self.seeds, tuple) or not self.seeds:
            raise ValueError(f"seeds must be a non-empty tuple; got {self.seeds!r}")
        check_names("rows", self.rows, tuple(ROWS))
        if self.baselines:
            check_names("baselines", self.baselines, tuple(CLOSED_FORM))
        if self.trained:
            check_names("trained", self.trained, TRAINED)
        check_grid("horizons", self.horizons)
        check_grid("periods", self.periods)
        if not isinstance(self.evaluation, EvalConfig):
            raise TypeError(f"evaluation must be an EvalConfig; got {type(self.evaluation).__name__}")
        if self.horizons[-1] > self.evaluation.horizon:
            raise ValueError(
                f"horizons must end at or before evaluation.horizon={self.evaluation.horizon}; "
                f"got {self.horizons}"
            )
        check_scale("checkpoints", self.checkpoints)
        check_int("baseline_batches", self.baseline_batches, minimum=1)
        check_int("trained_steps", self.trained_steps, minimum=1)
        for system in self.systems:
            for seed in self.seeds:
                for row in self.rows:
                    model_name(row, system, seed)

    @classmethod
    def for_scale(cls, scale: str) -> ForecastConfig:
        """smoke: Square-4, seed 0, 8 + 4 starts to H100; default: the paper's protocol on our table."""
        return pick(
            scale,
            smoke=cls(
                systems=("square-4",),
                seeds=(0,),
                horizons=(10, 50, 100),
                periods=(10, 25),
                evaluation=EvalConfig(test_starts=8, val_starts=4, horizon=100),
                checkpoints="smoke",
                baseline_batches=1,
                trained_steps=20,
            ),
            default=cls(),
        )

    @property
    def entries(self) -> tuple[str, ...]:
        """Every row and baseline in the order of the result arrays."""
        return (*self.rows, *self.baselines, *self.trained)


@dataclass(frozen=True)
class ForecastResult:
    """``mse[rule][entry]``: ``(systems, seeds, horizons)`` MSE through H (``rule`` ∈ :data:`RULES`);
    ``period[rule][entry]``: the periods used; ``diverged[entry]``: starts not finite throughout under the
    frozen rule, out of ``starts``."""

    config: ForecastConfig
    mse: dict[str, dict[str, np.ndarray]]
    period: dict[str, dict[str, np.ndarray]]
    diverged: dict[str, np.ndarray]
    starts: int

    def per_system(self, entry: str, rule: str = "best") -> np.ndarray:
        """IQM over seeds, ``(systems, horizons)`` (nan where a value is not finite)."""
        a = self.mse[rule][entry]
        out = np.full(a.shape[::2], np.nan)
        for i in range(a.shape[0]):
            for k in range(a.shape[2]):
                if np.all(np.isfinite(a[i, :, k])):
                    out[i, k] = iqm(a[i, :, k])
        return out

    def aggregate(self, entry: str, rule: str = "best") -> np.ndarray:
        """The paper's number per horizon: IQM over seeds, mean over systems (nan if any is not finite)."""
        a = self.mse[rule][entry]
        out = []
        for k in range(a.shape[2]):
            values = {s: a[i, :, k] for i, s in enumerate(self.config.systems)}
            finite = all(np.all(np.isfinite(v)) for v in values.values())
            out.append(aggregate(values) if finite else np.nan)
        return np.array(out)


def _baseline_windows(system: str, seed: int, config: ForecastConfig) -> torch.Tensor:
    """The first ``baseline_batches`` training batches of the Dense MLP model's data (same law, same seed)."""
    data = PrepareConfig.for_scale(config.checkpoints).data(model_spec(model_name(DENSE_ROW, system, seed)))
    sampler = WindowSampler(data)
    return torch.cat([sampler(s) for s in range(config.baseline_batches)])


def _forecaster(entry: str, system: str, seed: int, config: ForecastConfig):
    if entry in config.rows:
        return KAEForecaster(load(entry, system, seed, config.checkpoints))
    sys_ = make_system(system)
    windows = _baseline_windows(system, seed, config)
    if entry in CLOSED_FORM:
        return make_baseline(entry, sys_.dim, seed=seed).fit(windows)
    latent = PrepareConfig.for_scale(config.checkpoints).latent
    batch = PrepareConfig.for_scale(config.checkpoints).batch
    if entry == "consistent-kae":
        model = ConsistentKAE(latent=latent, state_dim=sys_.dim, seed=seed)
        return model.fit(windows, steps=config.trained_steps, seed=seed, batch=batch)
    reference = basin_reference(system, seed, config.checkpoints, config.evaluation)
    mixture = OracleMixture(
        reference.labeler, reference.centers.shape[0], latent=latent, state_dim=sys_.dim, seed=seed
    )
    return mixture.fit(windows, steps=config.trained_steps, seed=sub_seed(seed, 1), batch=batch)


def _compute_forecast(config: ForecastConfig) -> ForecastResult:
    shape = (len(config.systems), len(config.seeds), len(config.horizons))
    mse = {r: {e: np.full(shape, np.nan) for e in config.entries} for r in RULES}
    period = {r: {e: np.zeros(shape, dtype=np.int64) for e in config.entries} for r in RULES}
    diverged = {e: np.zeros(shape, dtype=np.int64) for e in config.entries}
    starts = 0
    for i, system in enumerate(config.systems):
        for j, seed in enumerate(config.seeds):
            val = evaluation_set(system, seed, config.checkpoints, config.evaluation, "val")
            test = evaluation_set(system, seed, config.checkpoints, config.evaluation, "test")
            for entry in config.entries:
                rules: Cadence = cadence_rules(
                    _forecaster(entry, system, seed, config), val, test, config.horizons, config.periods
                )
                starts = rules.starts
                for k, h in enumerate(config.horizons):
                    mse["best"][entry][i, j, k] = rules.best[h]
                    mse["frozen"][entry][i, j, k] = rules.frozen[h]
                    period["best"][entry][i, j, k] = rules.best_period[h]
                    period["frozen"][entry][i, j, k] = rules.frozen_period[h]
                    diverged[entry][i, j, k] = rules.diverged[h]
    return ForecastResult(config, mse, period, diverged, starts)


def run_forecast(config: ForecastConfig, *, use_cache: bool = True, verbose: bool = False) -> ForecastResult:
    """k1: MSE through each horizon of every entry, under both cadence rules (see the module)."""
    return run_cached(
        "skae-k1-forecast", config, ForecastConfig, _compute_forecast, use_cache=use_cache, verbose=verbose
    )


# --------------------------------------------------------------------------------------------
# k3: sparsity


@dataclass(frozen=True)
class SparsityConfig:
    """k3: ``rows`` at ``horizon`` on ``systems`` with ``seed`` (the ablation rows exist for seed 0), the
    best-periodic rule over ``periods``."""

    systems: tuple[str, ...] = CONTROLLED
    seed: int = 0
    rows: tuple[str, ...] = ("sparse-mlp", "lista", *SPARSITY_ROWS, DENSE_ROW)
    horizon: int = 1000
    periods: tuple[int, ...] = PERIODS
    evaluation: EvalConfig = field(default_factory=EvalConfig)
    checkpoints: str = "default"

    def __post_init__(self) -> None:
        check_names("systems", self.systems, CONTROLLED)
        check_names("rows", self.rows, tuple(ROWS))
        if DENSE_ROW not in self.rows:
            raise ValueError(f"rows must include {DENSE_ROW!r}, the reference of k3; got {self.rows}")
        check_int("horizon", self.horizon, minimum=1, maximum=self.evaluation.horizon)
        check_grid("periods", self.periods)
        check_scale("checkpoints", self.checkpoints)
        for system in self.systems:
            for row in self.rows:
                model_name(row, system, self.seed)

    @classmethod
    def for_scale(cls, scale: str) -> SparsityConfig:
        return pick(
            scale,
            smoke=cls(
                systems=("square-4",),
                horizon=100,
                periods=(10, 25),
                evaluation=EvalConfig(test_starts=8, val_starts=4, horizon=100),
                checkpoints="smoke",
            ),
            default=cls(),
        )


@dataclass(frozen=True)
class SparsityResult:
    """``mse[row]``: best-periodic MSE through ``horizon`` per system; ``mean[row]``: over systems."""

    config: SparsityConfig
    mse: dict[str, np.ndarray]

    @property
    def mean(self) -> dict[str, float]:
        return {row: float(np.mean(v)) for row, v in self.mse.items()}


def _compute_sparsity(config: SparsityConfig) -> SparsityResult:
    mse = {row: np.full(len(config.systems), np.nan) for row in config.rows}
    for i, system in enumerate(config.systems):
        val = evaluation_set(system, config.seed, config.checkpoints, config.evaluation, "val")
        test = evaluation_set(system, config.seed, config.checkpoints, config.evaluation, "test")
        for row in config.rows:
            forecaster = KAEForecaster(load(row, system, config.seed, config.checkpoints))
            rules = cadence_rules(forecaster, val, test, (config.horizon,), config.periods)
            mse[row][i] = rules.best[config.horizon]
    return SparsityResult(config, mse)


def run_sparsity(config: SparsityConfig, *, use_cache: bool = True, verbose: bool = False) -> SparsityResult:
    """k3: H-step MSE of the sparse rows and their ablations against Dense MLP (see the module)."""
    return run_cached(
        "skae-k3-sparsity", config, SparsityConfig, _compute_sparsity, use_cache=use_cache, verbose=verbose
    )
