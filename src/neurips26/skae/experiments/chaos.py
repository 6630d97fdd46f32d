"""Claim k6 of chapter 04: sparse against dense latents on chaotic flows (paper §experiments, Dysts table,
and its Lorenz-96 confirmation).

Flows (Shimizu–Morioka and Sakarya at 30× their native Δt, Lorenz-63): MSE through H of LISTA and Dense MLP
on standardised states, best-periodic rule, at ``flow_horizons`` (the paper's H100/H2000/H4000). Lorenz-96
(d = 40, Δt = 0.05): NRMSE (:func:`~neurips26.skae.metrics.nrmse`) at the physical times ``l96_times``
(the paper's 2.5 and 5), from a rollout at the period that is best through the last of them on the
validation starts. A *cell* is one (system, horizon or time); per cell the IQM over seeds of each row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from neurips26.scales import pick
from neurips26.skae.data import EvalConfig
from neurips26.skae.experiments.common import (
    KAEForecaster,
    cadence_rules,
    check_grid,
    check_names,
    check_scale,
    evaluation_set,
    load,
    model_name,
    prefetch_evaluation_sets,
    run_cached,
)
from neurips26.skae.metrics import iqm, nrmse
from neurips26.skae.prepare import CHAOS_ROWS, LORENZ96, SEEDS
from neurips26.skae.rollout import PERIODS
from neurips26.skae.systems import FLOWS, make_system
from neurips26.validation import check_float_tuple


@dataclass(frozen=True)
class ChaosConfig:
    """k6: ``rows`` (sparse first, dense second) on ``flows`` and Lorenz-96 (``lorenz96``: whether to run
    it) × ``seeds``; ``flow_horizons``; ``l96_times`` (physical); ``periods``; ``evaluation`` (its horizon
    must reach the longest flow horizon and Lorenz-96 time); ``checkpoints``: the scale."""

    flows: tuple[str, ...] = FLOWS
    lorenz96: bool = True
    seeds: tuple[int, ...] = SEEDS
    rows: tuple[str, ...] = CHAOS_ROWS
    flow_horizons: tuple[int, ...] = (100, 2000, 4000)
    l96_times: tuple[float, ...] = (2.5, 5.0)
    periods: tuple[int, ...] = PERIODS
    evaluation: EvalConfig = field(default_factory=lambda: EvalConfig(horizon=4000))
    checkpoints: str = "default"

    def __post_init__(self) -> None:
        if self.flows:
            check_names("flows", self.flows, FLOWS)
        if not isinstance(self.lorenz96, bool):
            raise TypeError(f"lorenz96 must be a bool; got {type(self.lorenz96).__name__}")
        if not self.flows and not self.lorenz96:
            raise ValueError("flows must be non-empty or lorenz96 True: no cell to measure")
        if not isinstance(self.seeds, tuple) or not self.seeds:
            raise ValueError(f"seeds must be a non-empty tuple; got {self.seeds!r}")
        check_names("rows", self.rows, CHAOS_ROWS)
        if len(self.rows) != 2:
            raise ValueError(f"rows must be (sparse, dense), two rows; got {self.rows}")
        check_grid("flow_horizons", self.flow_horizons)
        check_float_tuple("l96_times", self.l96_times, minimum=0.0, strict_min=True)
        check_grid("periods", self.periods)
        check_scale("checkpoints", self.checkpoints)
        if not isinstance(self.evaluation, EvalConfig):
            raise TypeError(f"evaluation must be an EvalConfig; got {type(self.evaluation).__name__}")
        longest = max(self.flow_horizons[-1], self.l96_steps[-1] if self.lorenz96 else 0)
        if longest > self.evaluation.horizon:
            raise ValueError(f"evaluation.horizon must be >= {longest}; got {self.evaluation.horizon}")
        for system in self.systems:
            for seed in self.seeds:
                for row in self.rows:
                    model_name(row, system, seed)

    @property
    def systems(self) -> tuple[str, ...]:
        return (*self.flows, LORENZ96) if self.lorenz96 else self.flows

    @property
    def l96_steps(self) -> tuple[int, ...]:
        """The Lorenz-96 times in stored steps (``round(t / Δt)``, at least 1)."""
        dt = make_system(LORENZ96).dt
        return tuple(max(1, round(t / dt)) for t in self.l96_times)

    @classmethod
    def for_scale(cls, scale: str) -> ChaosConfig:
        """smoke: Lorenz-63 alone (two smoke models to train, not four), seed 0, 8 + 4 starts, H ≤ 100;
        the Lorenz-96 path is covered by the unit tests."""
        return pick(
            scale,
            smoke=cls(
                flows=("lorenz-63",),
                lorenz96=False,
                seeds=(0,),
                flow_horizons=(10, 50, 100),
                l96_times=(0.5, 1.0),
                periods=(10, 25),
                evaluation=EvalConfig(test_starts=8, val_starts=4, horizon=100),
                checkpoints="smoke",
            ),
            default=cls(),
        )

    @property
    def cells(self) -> tuple[str, ...]:
        """Cell labels: ``SYSTEM H<h>`` for the flows, ``lorenz-96 t=<t>`` for Lorenz-96."""
        out = [f"{s} H{h}" for s in self.flows for h in self.flow_horizons]
        if self.lorenz96:
            out += [f"{LORENZ96} t={t:g}" for t in self.l96_times]
        return tuple(out)


@dataclass(frozen=True)
class ChaosResult:
    """``values[row]``: ``(cells, seeds)`` MSE (flow cells) or NRMSE (Lorenz-96 cells), lower is better."""

    config: ChaosConfig
    values: dict[str, np.ndarray]

    def cell_iqm(self, row: str) -> np.ndarray:
        """IQM over seeds per cell (nan where a seed is not finite)."""
        v = self.values[row]
        return np.array([iqm(r) if np.all(np.isfinite(r)) else np.nan for r in v])

    def sparse_wins(self) -> np.ndarray:
        """Per cell: sparse IQM ≤ dense IQM (a non-finite sparse value loses, a non-finite dense one wins)."""
        sparse, dense = (np.nan_to_num(self.cell_iqm(r), nan=np.inf) for r in self.config.rows)
        return sparse <= dense


def _compute_chaos(config: ChaosConfig) -> ChaosResult:
    values = {r: np.full((len(config.cells), len(config.seeds)), np.nan) for r in config.rows}
    prefetch_evaluation_sets(config.systems, config.seeds, config.checkpoints, config.evaluation)
    for j, seed in enumerate(config.seeds):
        for row in config.rows:
            c = 0
            for system in config.flows:
                val = evaluation_set(system, seed, config.checkpoints, config.evaluation, "val")
                test = evaluation_set(system, seed, config.checkpoints, config.evaluation, "test")
                f = KAEForecaster(load(row, system, seed, config.checkpoints))
                rules = cadence_rules(f, val, test, config.flow_horizons, config.periods)
                for h in config.flow_horizons:
                    values[row][c, j] = rules.best[h]
                    c += 1
            if config.lorenz96:
                val = evaluation_set(LORENZ96, seed, config.checkpoints, config.evaluation, "val")
                test = evaluation_set(LORENZ96, seed, config.checkpoints, config.evaluation, "test")
                f = KAEForecaster(load(row, LORENZ96, seed, config.checkpoints))
                last = config.l96_steps[-1]
                m = cadence_rules(f, val, test, (last,), config.periods, best=False).frozen_period[last]
                curve = nrmse(f.predict(test.starts, last, period=m), test.truth[:, :last].numpy())
                for step in config.l96_steps:
                    values[row][c, j] = curve[step - 1]
                    c += 1
    return ChaosResult(config, values)


def run_chaos(config: ChaosConfig, *, use_cache: bool = True, verbose: bool = False) -> ChaosResult:
    """k6: sparse against dense per cell on the flows and Lorenz-96 (see the module)."""
    return run_cached(
        "skae-k6-chaos", config, ChaosConfig, _compute_chaos, use_cache=use_cache, verbose=verbose
    )
