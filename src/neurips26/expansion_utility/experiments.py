"""The chapter's measurements, cached: the oracle sweep, the winner's curse, and every policy of the
leave-one-family-out folds on the held-out cells (routers from their checkpoint)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.cache import cached
from neurips26.expansion_utility.lofo import POLICIES, PolicyCell, evaluate_fold
from neurips26.expansion_utility.prepare import pretrained, sweep_data
from neurips26.expansion_utility.sweep import BUDGET, CellResult, SweepConfig, oracle_sweep, winners_curse
from neurips26.scales import pick


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
