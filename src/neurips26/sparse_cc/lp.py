"""The metric LP of correlation clustering, on all pairs or on an observed set ``E``, and exact OPT.

LP (eq. LP):  minimise ``sum_{uv in E} w_plus_uv x_uv + w_minus_uv (1 - x_uv)``
subject to ``x_uv <= x_uw + x_wv`` for every triple whose three pairs are all in ``E``, and
``0 <= x <= 1``. With ``E = P`` this is the standard metric LP whose value ``LP*`` lower-bounds OPT.
Each triangle row ``x_i - x_j - x_k <= 0`` is stored as the column triple ``(i, j, k)`` and assembled
into a ``scipy.sparse`` matrix for HiGHS (:func:`scipy.optimize.linprog`).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.sparse.csgraph import connected_components

from neurips26.sparse_cc.instances import CCInstance
from neurips26.sparse_cc.observed import check_observed
from neurips26.validation import check_float, check_int

ILP_MAX_N = 12


@dataclass(frozen=True)
class LPResult:
    """Solution of the (observed) metric LP.

    ``x`` is indexed like ``observed`` (sorted pair indices). ``value`` is the LP objective over ``E``.
    ``rounds`` counts LP solves (1 for the full formulation); ``n_rows`` the triangle rows in the last
    LP; ``n_candidate_rows`` all triangle rows of fully observed triples; ``n_tight`` candidate rows
    with slack <= 1e-7 at ``x``; ``n_active`` rows of the last LP with a non-zero dual.
    """

    x: np.ndarray
    observed: np.ndarray
    value: float
    rounds: int
    n_rows: int
    n_candidate_rows: int
    n_tight: int
    n_active: int


def triangle_rows(n: int, observed: np.ndarray) -> np.ndarray:
    """``(R, 3)`` column triples ``(i, j, k)`` for the rows ``x_i - x_j - x_k <= 0``.

    Columns index ``observed``; only triples ``u < v < w`` with all three pairs observed contribute,
    each giving its three rotations.
    """
    idx = check_observed(n, observed)
    pos = np.full((n, n), -1, dtype=np.int64)
    u, v = np.triu_indices(n, 1)
    pos[u[idx], v[idx]] = np.arange(idx.shape[0])
    if n < 3:
        return np.zeros((0, 3), dtype=np.int64)
    triples = np.array(list(combinations(range(n), 3)), dtype=np.int64)
    a = pos[triples[:, 0], triples[:, 1]]
    b = pos[triples[:, 0], triples[:, 2]]
    c = pos[triples[:, 1], triples[:, 2]]
    keep = (a >= 0) & (b >= 0) & (c >= 0)
    a, b, c = a[keep], b[keep], c[keep]
    return np.concatenate([np.stack(t, axis=1) for t in ((a, b, c), (b, a, c), (c, a, b))])


def _row_matrix(rows: np.ndarray, n_cols: int) -> sp.csr_matrix:
    r = np.repeat(np.arange(rows.shape[0]), 3)
    data = np.tile([1.0, -1.0, -1.0], rows.shape[0])
    return sp.csr_matrix((data, (r, rows.ravel())), shape=(rows.shape[0], n_cols))


def _solve(c: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """HiGHS solve of ``min c.x`` over the given triangle rows and the box; returns ``x`` and duals."""
    if rows.shape[0] == 0:
        res = linprog(c, bounds=(0.0, 1.0), method="highs")
        duals = np.zeros(0)
    else:
        A = _row_matrix(rows, c.shape[0])
        res = linprog(c, A_ub=A, b_ub=np.zeros(rows.shape[0]), bounds=(0.0, 1.0), method="highs")
        duals = np.asarray(res.ineqlin.marginals) if res.status == 0 else np.zeros(0)
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the metric LP: {res.message}")
    return np.clip(res.x, 0.0, 1.0), duals


def metric_lp(
    instance: CCInstance,
    observed: np.ndarray | None = None,
    *,
    cutting_plane: bool = False,
    tol: float = 1e-9,
    max_rounds: int = 200,
) -> LPResult:
    """Solve the metric LP on ``E = observed`` (all pairs if ``None``).

    ``cutting_plane=True`` starts from the box alone and repeatedly adds every triangle row violated
    by more than ``tol`` until none is; the optimum equals the full formulation's (same feasible set at
    the end, same objective), usually with far fewer rows.
    """
    if not isinstance(instance, CCInstance):
        raise TypeError(f"instance must be a CCInstance; got {type(instance).__name__}")
    n = instance.n
    idx = np.arange(instance.n_pairs) if observed is None else check_observed(n, observed)
    tol = check_float("tol", tol, minimum=0.0)
    max_rounds = check_int("max_rounds", max_rounds, minimum=1)
    w_plus, w_minus = instance.w_plus[idx], instance.w_minus[idx]
    # objective sum w+ x + w- (1 - x) = sum w- + sum (w+ - w-) x
    c = w_plus - w_minus
    candidates = triangle_rows(n, idx)
    if cutting_plane:
        active = np.zeros(candidates.shape[0], dtype=bool)
        rounds = 0
        while True:
            rounds += 1
            x, duals = _solve(c, candidates[active])
            slack_violation = x[candidates[:, 0]] - x[candidates[:, 1]] - x[candidates[:, 2]]
            new = (~active) & (slack_violation > tol)
            if not new.any():
                break
            if rounds >= max_rounds:
                raise RuntimeError(f"cutting plane did not converge in max_rounds = {max_rounds} rounds")
            active |= new
        rows = candidates[active]
    else:
        rounds = 1
        rows = candidates
        x, duals = _solve(c, rows)
    violation = x[candidates[:, 0]] - x[candidates[:, 1]] - x[candidates[:, 2]]
    return LPResult(
        x=x,
        observed=idx,
        value=float(w_minus.sum() + c @ x),
        rounds=rounds,
        n_rows=int(rows.shape[0]),
        n_candidate_rows=int(candidates.shape[0]),
        n_tight=int(np.sum(violation >= -1e-7)),
        n_active=int(np.sum(np.abs(duals) > 1e-9)),
    )


def labels_from_separation(n: int, x: np.ndarray) -> np.ndarray:
    """Clusters of an integral ``x`` over all pairs: connected components of ``{uv : x_uv < 1/2}``."""
    n = check_int("n", n, minimum=2)
    u, v = np.triu_indices(n, 1)
    joined = np.asarray(x) < 0.5
    graph = sp.csr_matrix((np.ones(int(joined.sum())), (u[joined], v[joined])), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    return labels.astype(np.int64)


def opt_ilp(instance: CCInstance) -> tuple[float, np.ndarray]:
    """Exact OPT by the integer metric program (``scipy.optimize.milp``), for ``n <= 12``.

    Integral ``x`` satisfying every triangle inequality is an equivalence relation, so the optimum is
    a clustering; returns its cost and labels.
    """
    if not isinstance(instance, CCInstance):
        raise TypeError(f"instance must be a CCInstance; got {type(instance).__name__}")
    n = check_int("n", instance.n, maximum=ILP_MAX_N)
    idx = np.arange(instance.n_pairs)
    c = instance.w_plus - instance.w_minus
    rows = triangle_rows(n, idx)
    constraints = []
    if rows.shape[0]:
        constraints.append(LinearConstraint(_row_matrix(rows, c.shape[0]), -np.inf, 0.0))
    res = milp(c, constraints=constraints, integrality=np.ones_like(c), bounds=Bounds(0.0, 1.0))
    if res.status != 0:
        raise RuntimeError(f"milp failed: {res.message}")
    x = np.round(res.x)
    return float(instance.w_minus.sum() + c @ x), labels_from_separation(n, x)
