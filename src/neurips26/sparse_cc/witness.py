"""Triangle witnesses and imputation of the unobserved LP marginals.

A vertex ``w`` witnesses the pair ``uv`` when ``uw`` and ``wv`` are both observed; the witness count
``|W_uv|`` is the ``(u, v)`` entry of ``A^2`` for the observed adjacency ``A``. If ``x̄`` is (the
restriction of) a pseudometric, every witness brackets the unseen value (eq. W):

    L_uv = max_w |x̄_uw - x̄_wv|  <=  x_uv  <=  U_uv = min(1, min_w x̄_uw + x̄_wv).

Imputation rules: ``"upper"`` takes ``U`` (our default [ours]: the natural reading of the paper's
"imputes missing LP marginals via triangle inequalities"; it joins ``uv`` only when some witness is close
to both), ``"midpoint"`` takes ``(L + U) / 2``, ``"median"`` [ours] takes the median over witnesses of
each witness's own midpoint ``(|x̄_uw - x̄_wv| + min(1, x̄_uw + x̄_wv)) / 2``, clipped into ``[L, U]``.
Pairs with no witness get 1 (separate: the safe choice when nothing is known) and are counted.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from neurips26.sparse_cc.instances import pair_matrix
from neurips26.sparse_cc.observed import adjacency, check_observed
from neurips26.validation import check_array, check_choice, check_int

IMPUTE_RULES = ("upper", "midpoint", "median")


def witness_counts(n: int, observed: np.ndarray) -> np.ndarray:
    """``|W_uv| = (A^2)_uv`` for every pair (row-major), from the sparse observed adjacency ``A``."""
    n = check_int("n", n, minimum=2)
    A = adjacency(n, observed)
    A2 = (A @ A).toarray()
    u, v = np.triu_indices(n, 1)
    return np.rint(A2[u, v]).astype(np.int64)


def _check_x(observed: np.ndarray, x: object) -> np.ndarray:
    x = check_array("x", x, ndim=1, shape=(observed.shape[0],))
    if np.any(x < 0) or np.any(x > 1):
        raise ValueError(f"x must lie in [0, 1]; got range [{x.min()}, {x.max()}]")
    return x.astype(float)


@dataclass(frozen=True)
class Imputation:
    """Imputed marginals over all pairs and the witness statistics behind them.

    ``lower``/``upper`` are NaN on pairs without witnesses; ``n_no_witness`` counts unobserved pairs
    without a witness (they were set to 1).
    """

    x_hat: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    witnesses: np.ndarray
    n_no_witness: int
    rule: str


def impute(n: int, observed: np.ndarray, x: np.ndarray, rule: str = "upper") -> Imputation:
    """Fill the unobserved pairs of ``x`` (values on ``observed``, sorted) by the witness brackets."""
    n = check_int("n", n, minimum=2)
    idx = check_observed(n, observed)
    x = _check_x(idx, x)
    rule = check_choice("rule", rule, IMPUTE_RULES)
    P = n * (n - 1) // 2
    seen = np.zeros(P, dtype=bool)
    seen[idx] = True
    full = np.zeros(P)
    full[idx] = x
    X = pair_matrix(n, full)
    S = pair_matrix(n, seen.astype(float)) > 0
    lower = np.full((n, n), np.nan)
    upper = np.full((n, n), np.nan)
    median = np.full((n, n), np.nan)
    for u in range(n - 1):
        # witnesses of (u, v) for every v at once: columns w with uw and vw observed
        M = S[u][None, :] & S[u + 1 :]
        has = M.any(axis=1)
        a, b = X[u][None, :], X[u + 1 :]
        low_w = np.abs(a - b)
        up_w = np.minimum(1.0, a + b)
        lower[u, u + 1 :] = np.where(has, np.where(M, low_w, -np.inf).max(axis=1), np.nan)
        upper[u, u + 1 :] = np.where(has, np.where(M, up_w, np.inf).min(axis=1), np.nan)
        if rule == "median" and has.any():
            mids = np.where(M[has], 0.5 * (low_w[has] + up_w[has]), np.nan)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                median[u, u + 1 :][has] = np.nanmedian(mids, axis=1)
    iu, iv = np.triu_indices(n, 1)
    lo, up = lower[iu, iv], upper[iu, iv]
    if rule == "upper":
        guess = up
    elif rule == "midpoint":
        guess = 0.5 * (lo + up)
    else:
        guess = np.clip(median[iu, iv], lo, up)
    counts = witness_counts(n, idx)
    x_hat = np.where(seen, full, np.where(counts > 0, guess, 1.0))
    return Imputation(
        x_hat=np.clip(x_hat, 0.0, 1.0),
        lower=lo,
        upper=up,
        witnesses=counts,
        n_no_witness=int(np.sum(~seen & (counts == 0))),
        rule=rule,
    )
