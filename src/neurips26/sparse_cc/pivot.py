"""LP-PIVOT rounding and the Sparse-LP-Pivot pipeline.

LP-PIVOT: while items remain, pick a uniformly random pivot ``p`` among them; every remaining ``v``
joins ``p``'s cluster independently with probability ``1 - f(x_pv)``; remove the new cluster.
Rounding functions ``f`` (eq. R):

* ``"acn"`` (Ailon–Charikar–Newman): ``f(x) = x``;
* ``"cmsy"`` (Chawla–Makarychev–Schramm–Yaroslavtsev): on "+"-dominant pairs (``w_plus >= w_minus``)
  ``f+(x) = 0`` for ``x < a``, ``((x - a) / (b - a))^2`` for ``a <= x < b``, 1 for ``x >= b`` with
  ``a = 0.19``, ``b = 0.5095``; on the other pairs ``f-(x) = x``;
* ``"threshold"``: ``f(x) = 1[x >= 1/2]`` (not Lipschitz; the ablation).

Sparse-LP-Pivot = observed metric LP on ``E`` -> witness imputation of the rest -> LP-PIVOT.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.sparse_cc.cost import cost
from neurips26.sparse_cc.instances import CCInstance, pair_matrix
from neurips26.sparse_cc.lp import LPResult, metric_lp
from neurips26.sparse_cc.observed import check_observed
from neurips26.sparse_cc.witness import Imputation, impute
from neurips26.validation import check_array, check_choice, check_int, check_seed

ROUNDING_RULES = ("acn", "cmsy", "threshold")
CMSY_A = 0.19
CMSY_B = 0.5095


def rounding_function(x: np.ndarray, plus_dominant: np.ndarray, rounding: str) -> np.ndarray:
    """``f(x)`` per pair: the probability that a pivot does NOT take the other endpoint."""
    rounding = check_choice("rounding", rounding, ROUNDING_RULES)
    x = np.asarray(x, dtype=float)
    if rounding == "acn":
        return x.copy()
    if rounding == "threshold":
        return (x >= 0.5).astype(float)
    f_plus = np.where(x < CMSY_A, 0.0, np.where(x < CMSY_B, ((x - CMSY_A) / (CMSY_B - CMSY_A)) ** 2, 1.0))
    return np.where(plus_dominant, f_plus, x)


@dataclass(frozen=True)
class PivotResult:
    """``labels[r]`` and ``costs[r]`` of each of the ``R`` pivot runs, and their mean cost."""

    labels: np.ndarray
    costs: np.ndarray
    mean_cost: float


def lp_pivot(
    instance: CCInstance, x: np.ndarray, *, rounding: str = "acn", runs: int = 1, seed: int = 0
) -> PivotResult:
    """LP-PIVOT on marginals ``x`` (one per pair, in ``[0, 1]``), ``runs`` independent runs from ``seed``."""
    if not isinstance(instance, CCInstance):
        raise TypeError(f"instance must be a CCInstance; got {type(instance).__name__}")
    n = instance.n
    x = check_array("x", x, ndim=1, shape=(instance.n_pairs,))
    if np.any(x < 0) or np.any(x > 1):
        raise ValueError(f"x must lie in [0, 1]; got range [{x.min()}, {x.max()}]")
    rounding = check_choice("rounding", rounding, ROUNDING_RULES)
    runs = check_int("runs", runs, minimum=1)
    rng = np.random.default_rng(check_seed("seed", seed))
    # join probability 1 - f(x_pv) as an n x n matrix (diagonal 1: the pivot joins itself)
    f = rounding_function(x, instance.w_plus >= instance.w_minus, rounding)
    join = pair_matrix(n, 1.0 - f, diagonal=1.0)
    labels = np.empty((runs, n), dtype=np.int64)
    for r in range(runs):
        lab = np.full(n, -1, dtype=np.int64)
        cluster = 0
        while (remaining := np.flatnonzero(lab < 0)).size:
            p = remaining[rng.integers(remaining.size)]
            draws = rng.random(remaining.size)
            members = remaining[draws < join[p, remaining]]
            lab[members] = cluster
            lab[p] = cluster
            cluster += 1
        labels[r] = lab
    costs = np.array([cost(instance, lab) for lab in labels])
    return PivotResult(labels=labels, costs=costs, mean_cost=float(costs.mean()))


@dataclass(frozen=True)
class SparseLPPivotResult:
    """The observed LP, the imputation and the pivot runs of one Sparse-LP-Pivot call."""

    lp: LPResult
    imputation: Imputation
    pivot: PivotResult


def sparse_lp_pivot(
    instance: CCInstance,
    observed: np.ndarray,
    *,
    rule: str = "upper",
    rounding: str = "acn",
    runs: int = 1,
    seed: int = 0,
    cutting_plane: bool = True,
) -> SparseLPPivotResult:
    """Sparse-LP-Pivot: metric LP on ``E = observed``, impute the unseen pairs by ``rule``, LP-PIVOT."""
    if not isinstance(instance, CCInstance):
        raise TypeError(f"instance must be a CCInstance; got {type(instance).__name__}")
    idx = check_observed(instance.n, observed)
    lp = metric_lp(instance, idx, cutting_plane=cutting_plane)
    imputation = impute(instance.n, idx, lp.x, rule=rule)
    pivot = lp_pivot(instance, imputation.x_hat, rounding=rounding, runs=runs, seed=seed)
    return SparseLPPivotResult(lp=lp, imputation=imputation, pivot=pivot)
