"""The step-oracle sweep over the grid of (family, benchmark) cells: health, oracle gap, sparsity, and the
winner's curse of reusing the selection resamples for evaluation.

For each cell: sample ``chains`` problems and one chain each, resample every step ``r`` times (two halves),
compute the exact utilities, and summarise (:class:`CellResult`). The grid, the seeds and ``r`` are fixed
before anything is measured.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.expansion_utility.allocation import oracle_gap
from neurips26.expansion_utility.simulator import (
    BENCHMARKS,
    FAMILIES,
    Benchmark,
    Chains,
    SolverFamily,
    cell_seed,
    sample_chains,
    sample_problems,
)
from neurips26.expansion_utility.stats import cell_gini, is_healthy
from neurips26.expansion_utility.utility import Utilities, utilities
from neurips26.scales import pick
from neurips26.validation import check_float, check_int

BUDGET = 0.1
PAPER_CHAINS = 1000
"""Chains per cell at the ``paper`` scale: ten times the paper's (the simulator's chains cost nothing), so
the per-cell gaps, Gini coefficients and the routers' held-out gains carry less sampling noise."""


@dataclass(frozen=True)
class SweepConfig:
    """The grid (``families``, ``benchmarks`` by index), ``chains`` per cell, resamples ``r`` per step
    (two halves of ``r/2``), the ``seed``."""

    families: tuple[int, ...] = tuple(range(len(FAMILIES)))
    benchmarks: tuple[int, ...] = tuple(range(len(BENCHMARKS)))
    chains: int = 100
    r: int = 8
    seed: int = 0

    @classmethod
    def for_scale(cls, scale: str) -> SweepConfig:
        """The grid at ``scale``: smoke two families × two benchmarks × 20 chains, ``r = 4``; default the
        paper's 9 × 7 grid and ``r = 8`` with 100 chains per cell (6,300 chains, the paper's 6,500);
        paper the same with :data:`PAPER_CHAINS` per cell."""
        return pick(
            scale,
            smoke=cls(families=(1, 3), benchmarks=(0, 2), chains=20, r=4),
            default=cls(),
            paper=cls(chains=PAPER_CHAINS),
        )


@dataclass(frozen=True)
class CellResult:
    """One cell: its ``family`` and ``benchmark`` names, size and health statistics, and at budget
    :data:`BUDGET` the held-out oracle ``gap`` (select on one half, score on the other), the ``gap_reuse``
    (the same resamples for both) and the ``gap_exact`` (the exact utilities for both: the ceiling); the
    cell Gini of ``U^ev``, of the exact ``U``, of the incremental ``u^ev`` and of the exact ``u``."""

    family: str
    benchmark: str
    chains: int
    accuracy: float
    parse_fail: float
    median_steps: float
    healthy: bool
    gap: float
    gap_reuse: float
    gap_exact: float
    gini: float
    gini_exact: float
    gini_inc: float
    gini_inc_exact: float


def run_cell(
    fam: SolverFamily,
    bench: Benchmark,
    config: SweepConfig,
    *,
    like: tuple[SolverFamily, Benchmark] | None = None,
) -> tuple[Chains, Utilities]:
    """Chains and utilities of one cell, with seeds derived from the cell's place in the grid — or from
    the place of the grid cell ``like`` = (family, benchmark), to rerun a cell with a modified family or
    benchmark on the same random draws."""
    seed_fam, seed_bench = (fam, bench) if like is None else like
    problems = sample_problems(bench, config.chains, cell_seed(config.seed, seed_bench, seed_fam, 0))
    chains = sample_chains(problems, fam, cell_seed(config.seed, seed_bench, seed_fam, 1))
    return chains, utilities(chains, config.r, cell_seed(config.seed, seed_bench, seed_fam, 2))


def summarise(chains: Chains, u: Utilities, beta: float = BUDGET) -> CellResult:
    """The :class:`CellResult` of one cell."""
    beta = check_float("beta", beta, minimum=0.0, maximum=1.0, strict_min=True)
    accuracy, parse_fail = float(chains.correct.mean()), float(chains.parse_failed.mean())
    median = float(np.median(chains.n))
    return CellResult(
        family=chains.family.name,
        benchmark=chains.problems.benchmark.name,
        chains=len(chains),
        accuracy=accuracy,
        parse_fail=parse_fail,
        median_steps=median,
        healthy=is_healthy(len(chains), parse_fail, accuracy, median),
        gap=oracle_gap(u.sel, u.ev, u.n, beta),
        gap_reuse=oracle_gap(u.reuse, u.reuse, u.n, beta),
        gap_exact=oracle_gap(u.exact, u.exact, u.n, beta),
        gini=cell_gini(u.ev),
        gini_exact=cell_gini(u.exact),
        gini_inc=cell_gini(u.inc_ev),
        gini_inc_exact=cell_gini(u.inc_exact),
    )


def oracle_sweep(config: SweepConfig) -> list[CellResult]:
    """Every cell of the grid, summarised."""
    return [
        summarise(*run_cell(FAMILIES[f], BENCHMARKS[b], config))
        for f in config.families
        for b in config.benchmarks
    ]


def winners_curse(
    config: SweepConfig, rs: tuple[int, ...] = (2, 4, 8, 16), *, chains: int = 20
) -> dict[int, dict[str, float]]:
    """For each ``r``: the mean over healthy cells (health judged on the sweep's own chains) of the oracle
    gap when the selection resamples are reused for evaluation and when they are held out, on ``chains``
    chains per cell. The reused estimate is biased upwards, most at small ``r``."""
    chains = check_int("chains", chains, minimum=1)
    healthy = {(c.family, c.benchmark) for c in oracle_sweep(config) if c.healthy}
    out = {}
    for r in rs:
        small = SweepConfig(config.families, config.benchmarks, chains, r, config.seed + r)
        reused, held = [], []
        for f in config.families:
            for b in config.benchmarks:
                if (FAMILIES[f].name, BENCHMARKS[b].name) not in healthy:
                    continue
                _, u = run_cell(FAMILIES[f], BENCHMARKS[b], small)
                reused.append(oracle_gap(u.reuse, u.reuse, u.n, BUDGET))
                held.append(oracle_gap(u.sel, u.ev, u.n, BUDGET))
        mean = lambda values: float(np.mean(values)) if values else float("nan")  # noqa: E731
        out[r] = {"reused": mean(reused), "held_out": mean(held), "cells": len(held)}
    return out
