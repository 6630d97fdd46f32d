"""The baselines Sparse-LP-Pivot is compared against (chapter 02).

* :func:`full_lp_pivot` — the metric LP on **all** pairs, then LP-PIVOT: the exact-marginal
  baseline whose ACN rounding is the paper's 10/3 guarantee on pseudometric instances; its LP value
  ``LP*`` is the lower bound on OPT that every ratio in the chapter divides by.
* :func:`kwikcluster` — the combinatorial pivot of Ailon–Charikar–Newman on the observed pairs only:
  ``v`` joins pivot ``p`` iff ``pv`` was observed and is "+"-dominant (``w_plus > w_minus``);
  unobserved pairs count as "different".
* :func:`naive_lp_pivot` — the same observed LP as Sparse-LP-Pivot, but every unobserved marginal set
  to a constant (``1/2``: "don't know", or ``1``: "separate") instead of the witness brackets; it
  isolates what the triangle witnesses contribute.

The coreset LP (importance-sampled pairs) lives in :mod:`~neurips26.sparse_cc.coreset` and exact OPT
for ``n <= 12`` in :func:`~neurips26.sparse_cc.lp.opt_ilp`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.sparse_cc.instances import CCInstance
from neurips26.sparse_cc.lp import LPResult, metric_lp
from neurips26.sparse_cc.observed import check_observed
from neurips26.sparse_cc.pivot import PivotResult, lp_pivot
from neurips26.validation import check_float

NAIVE_FILLS = (0.5, 1.0)


def _check_instance(instance: object) -> CCInstance:
    if not isinstance(instance, CCInstance):
        raise TypeError(f"instance must be a CCInstance; got {type(instance).__name__}")
    return instance


@dataclass(frozen=True)
class LPPivotResult:
    """An LP (full or observed), the marginals handed to the pivot, and the pivot runs."""

    lp: LPResult
    x_hat: np.ndarray
    pivot: PivotResult


def full_lp_pivot(
    instance: CCInstance,
    *,
    rounding: str = "acn",
    runs: int = 1,
    seed: int = 0,
    cutting_plane: bool = True,
) -> LPPivotResult:
    """Exact marginals: metric LP on every pair (``x*``, value ``LP*``), then LP-PIVOT on ``x*``."""
    instance = _check_instance(instance)
    lp = metric_lp(instance, cutting_plane=cutting_plane)
    pivot = lp_pivot(instance, lp.x, rounding=rounding, runs=runs, seed=seed)
    return LPPivotResult(lp=lp, x_hat=lp.x, pivot=pivot)


def kwik_marginals(instance: CCInstance, observed: np.ndarray) -> np.ndarray:
    """0/1 marginals of KwikCluster: 0 on observed "+"-dominant pairs, 1 everywhere else."""
    instance = _check_instance(instance)
    idx = check_observed(instance.n, observed)
    x = np.ones(instance.n_pairs)
    plus = instance.w_plus[idx] > instance.w_minus[idx]
    x[idx[plus]] = 0.0
    return x


def kwikcluster(instance: CCInstance, observed: np.ndarray, *, runs: int = 1, seed: int = 0) -> PivotResult:
    """KwikCluster on the observed signs.

    LP-PIVOT with the ACN rule on 0/1 marginals joins ``v`` to ``p`` with probability ``1 - x_pv``,
    i.e. exactly when ``x_pv = 0``: so KwikCluster *is* LP-PIVOT on :func:`kwik_marginals`, and the
    two share one tested pivot loop.
    """
    return lp_pivot(instance, kwik_marginals(instance, observed), rounding="acn", runs=runs, seed=seed)


def naive_fill(n_pairs: int, observed: np.ndarray, x: np.ndarray, fill: float) -> np.ndarray:
    """Marginals over all pairs: ``x`` on the observed pairs, the constant ``fill`` elsewhere."""
    fill = check_float("fill", fill, minimum=0.0, maximum=1.0)
    x_hat = np.full(n_pairs, fill)
    x_hat[observed] = x
    return x_hat


def naive_lp_pivot(
    instance: CCInstance,
    observed: np.ndarray,
    *,
    fill: float = 0.5,
    rounding: str = "acn",
    runs: int = 1,
    seed: int = 0,
    cutting_plane: bool = True,
    lp: LPResult | None = None,
) -> LPPivotResult:
    """Observed LP, unobserved marginals set to ``fill``, LP-PIVOT.

    Pass ``lp`` (the observed LP already solved for Sparse-LP-Pivot on the same ``observed``) to
    compare the two imputations on identical LP marginals without solving twice.
    """
    instance = _check_instance(instance)
    idx = check_observed(instance.n, observed)
    if lp is None:
        lp = metric_lp(instance, idx, cutting_plane=cutting_plane)
    elif not np.array_equal(lp.observed, idx):
        raise ValueError("lp was solved on a different observed set than observed")
    x_hat = naive_fill(instance.n_pairs, idx, lp.x, fill)
    pivot = lp_pivot(instance, x_hat, rounding=rounding, runs=runs, seed=seed)
    return LPPivotResult(lp=lp, x_hat=x_hat, pivot=pivot)
