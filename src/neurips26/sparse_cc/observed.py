"""The observed pair set ``E``: validation, uniform sampling and its adjacency matrix.

``E`` is given either as a 1-D array of pair indices into :func:`~neurips26.sparse_cc.instances.pairs`
or as an ``(m, 2)`` array of vertex pairs; internally it is always the sorted 1-D index array.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from neurips26.validation import check_array, check_int, check_seed


def check_observed(n: int, observed: object) -> np.ndarray:
    """Sorted pair indices of ``E``; out-of-range, self or repeated pairs raise ValueError ``observed``."""
    n = check_int("n", n, minimum=2)
    arr = check_array("observed", observed)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"observed must hold integers; got dtype {arr.dtype}")
    P = n * (n - 1) // 2
    if arr.ndim == 2 and arr.shape[1] == 2:
        u, v = arr[:, 0].astype(np.int64), arr[:, 1].astype(np.int64)
        if arr.size and (min(u.min(), v.min()) < 0 or max(u.max(), v.max()) >= n):
            raise ValueError(f"observed vertex pairs must lie in [0, {n - 1}]")
        if np.any(u == v):
            raise ValueError("observed must not contain self-pairs (u, u)")
        lo, hi = np.minimum(u, v), np.maximum(u, v)
        idx = lo * n - lo * (lo + 1) // 2 + (hi - lo - 1)
    elif arr.ndim == 1:
        idx = arr.astype(np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= P):
            raise ValueError(f"observed pair indices must lie in [0, {P - 1}] (P = n(n-1)/2)")
    else:
        raise ValueError(f"observed must be 1-D pair indices or an (m, 2) array; got shape {arr.shape}")
    idx = np.sort(idx)
    if np.any(idx[1:] == idx[:-1]):
        raise ValueError("observed must not repeat a pair")
    return idx


def sample_observed(n: int, m: int, seed: int) -> np.ndarray:
    """``m`` pairs drawn uniformly without replacement, as sorted pair indices."""
    n = check_int("n", n, minimum=2)
    P = n * (n - 1) // 2
    m = check_int("m", m, minimum=0, maximum=P)
    rng = np.random.default_rng(check_seed("seed", seed))
    return np.sort(rng.choice(P, size=m, replace=False)).astype(np.int64)


def adjacency(n: int, observed: np.ndarray) -> sp.csr_matrix:
    """Symmetric 0/1 adjacency matrix ``A`` of the observed graph ``(V, E)``."""
    idx = check_observed(n, observed)
    u, v = np.triu_indices(n, 1)
    rows = np.concatenate([u[idx], v[idx]])
    cols = np.concatenate([v[idx], u[idx]])
    data = np.ones(rows.shape[0])
    return sp.csr_matrix((data, (rows, cols)), shape=(n, n))
