"""The chapter's measurements, cached: the oracle sweep, the winner's curse, every policy of the
leave-one-family-out folds on the held-out cells (routers from their checkpoint), and the tiny language
model's chains with their resamples."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.cache import cached
from neurips26.expansion_utility.lofo import POLICIES, PolicyCell, evaluate_fold
from neurips26.expansion_utility.prepare import pretrained, pretrained_lm, sweep_data
from neurips26.expansion_utility.sweep import BUDGET, CellResult, SweepConfig, oracle_sweep, winners_curse
from neurips26.expansion_utility.tiny_lm import LMCell, TinyLMSampler, lm_cell, sample_terms
from neurips26.scales import pick
from neurips26.seeding import sub_seed


def sweep(scale: str = "default") -> list[CellResult]:
    """Every cell of the scale's grid (:func:`~neurips26.expansion_utility.sweep.oracle_sweep`)."""
    config = SweepConfig.for_scale(scale)
    return cached("eu-sweep", config, lambda: oracle_sweep(config), package="neurips26.expansion_utility")


def curse(scale: str = "default") -> dict[int, dict[str, float]]:
    """The winner's curse by ``r`` on 20 chains per healthy cell (smoke: r ∈ {2, 4})."""
    config = SweepConfig.for_scale(scale)
    rs = pick(scale, smoke=(2, 4), default=(2, 4, 8, 16))
    return cached(
        "eu-curse",
        {"sweep": config, "rs": rs},
        lambda: winners_curse(config, rs),
        package="neurips26.expansion_utility",
    )


def healthy_cells(cells: list[CellResult]) -> set[tuple[str, str]]:
    """``(family, benchmark)`` of the healthy cells."""
    return {(c.family, c.benchmark) for c in cells if c.healthy}


@dataclass(frozen=True)
class RouterResults:
    """Every policy on every held-out cell (``cells``) and each policy's AUC@10 per fold (``auc``)."""

    cells: list[PolicyCell]
    auc: dict[str, list[float]]

    def summary(self, healthy: set[tuple[str, str]]) -> dict[str, dict[str, float]]:
        """Per policy, means over the healthy held-out cells: ``gr``, ``gated_gr``, ``coverage``, ``tokens``;
        and the mean ``auc`` over folds."""
        out = {}
        for policy in POLICIES:
            rows = [c for c in self.cells if c.policy == policy and (c.family, c.benchmark) in healthy]
            out[policy] = {
                key: float(np.nanmean([getattr(c, key) for c in rows])) if rows else float("nan")
                for key in ("gr", "gated_gr", "coverage", "tokens")
            }
            out[policy]["auc"] = float(np.nanmean(self.auc[policy]))
        return out


def routers(scale: str = "default") -> RouterResults:
    """Every policy of every fold, from the routers' checkpoint (cached by its weights)."""
    bank, meta = pretrained(scale, verbose=False)

    def compute() -> RouterResults:
        data, _ = sweep_data(scale)
        cells, auc = [], {p: [] for p in POLICIES}
        for f in bank.folds:
            fold_cells, fold_auc = evaluate_fold(bank.fold(f), data, f, beta=BUDGET)
            cells += fold_cells
            for p in POLICIES:
                auc[p].append(fold_auc[p])
        return RouterResults(cells, auc)

    return cached(
        "eu-routers-eval",
        {"scale": scale, "weights": meta.weights_hash},
        compute,
        package="neurips26.expansion_utility",
    )


@dataclass(frozen=True)
class LMConfig:
    """The tiny model's cells: ``problems`` of each length in ``terms``, ``r`` continuations per step, the
    sampling ``temperature`` and the ``seed``."""

    terms: tuple[int, ...] = (5, 7)
    problems: int = 60
    r: int = 8
    temperature: float = 0.8
    seed: int = 0

    @classmethod
    def for_scale(cls, scale: str) -> LMConfig:
        return pick(scale, smoke=cls(terms=(5,), problems=10, r=4), default=cls())


def lm_cells(scale: str = "default") -> dict[int, LMCell]:
    """The tiny model's chains and resamples, one cell per number of terms (cached by the model's weights;
    on another CPU the samples may differ)."""
    config = LMConfig.for_scale(scale)
    model, meta = pretrained_lm(scale, verbose=False)

    def compute() -> dict[int, LMCell]:
        sampler = TinyLMSampler(model, temperature=config.temperature)
        return {
            m: lm_cell(
                sampler,
                sample_terms(config.problems, m, seed=sub_seed(config.seed, m)),
                config.r,
                seed=sub_seed(config.seed, 100 + m),
            )
            for m in config.terms
        }

    return cached(
        "eu-lm-cells",
        {"config": config, "weights": meta.weights_hash},
        compute,
        package="neurips26.expansion_utility",
    )
