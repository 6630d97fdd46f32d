"""Correlation-clustering instances: the weight vectors and seeded generators.

An instance on ``n`` items stores, for every unordered pair ``u < v`` (row-major order, the order of
``numpy.triu_indices(n, 1)``), a cost ``w_plus`` paid when the pair is separated and a cost ``w_minus``
paid when it is joined. Pseudometric instances have ``w_minus = d`` and ``w_plus = 1 - d`` for a
pseudometric ``d`` with values in ``[0, 1]``; the paper's guarantees need this structure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.validation import check_float, check_int, check_seed


def n_pairs(n: int) -> int:
    """Number of unordered pairs, ``P = n(n-1)/2``."""
    n = check_int("n", n, minimum=1)
    return n * (n - 1) // 2


def pairs(n: int) -> np.ndarray:
    """The ``(P, 2)`` array of pairs ``(u, v)``, ``u < v``, in row-major order."""
    n = check_int("n", n, minimum=1)
    u, v = np.triu_indices(n, 1)
    return np.stack([u, v], axis=1).astype(np.int64)


def pair_index(n: int, u: int, v: int) -> int:
    """Position of the pair ``{u, v}`` in :func:`pairs` (order of ``u``, ``v`` does not matter)."""
    n = check_int("n", n, minimum=2)
    u = check_int("u", u, minimum=0, maximum=n - 1)
    v = check_int("v", v, minimum=0, maximum=n - 1)
    if u == v:
        raise ValueError(f"u and v must differ; got u = v = {u}")
    u, v = min(u, v), max(u, v)
    # rows 0..u-1 hold (n-1) + (n-2) + ... + (n-u) pairs = u*n - u(u+1)/2
    return u * n - u * (u + 1) // 2 + (v - u - 1)


def pair_matrix(n: int, values: np.ndarray, diagonal: float = 0.0) -> np.ndarray:
    """Symmetric ``n x n`` matrix holding ``values`` (one per pair) off the diagonal."""
    n = check_int("n", n, minimum=1)
    out = np.full((n, n), float(diagonal))
    u, v = np.triu_indices(n, 1)
    out[u, v] = values
    out[v, u] = values
    return out


def _weights(name: str, value: object, n: int) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    expected = n * (n - 1) // 2
    if arr.ndim != 1 or arr.shape[0] != expected:
        raise ValueError(f"{name} must be 1-D of length n(n-1)/2 = {expected}; got shape {arr.shape}")
    if np.any(np.isnan(arr)) or np.any(np.isinf(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative; smallest entry is {arr.min()}")
    arr = arr.copy()
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True)
class CCInstance:
    """A weighted correlation-clustering instance.

    Clustering with separation indicators ``x`` costs ``sum_uv w_plus*x + w_minus*(1-x)``.
    """

    n: int
    w_plus: np.ndarray
    w_minus: np.ndarray

    def __post_init__(self) -> None:
        n = check_int("n", self.n, minimum=2)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "w_plus", _weights("w_plus", self.w_plus, n))
        object.__setattr__(self, "w_minus", _weights("w_minus", self.w_minus, n))

    @property
    def n_pairs(self) -> int:
        """Number of pairs ``P``."""
        return self.n * (self.n - 1) // 2

    @property
    def total_weight(self) -> np.ndarray:
        """``W_uv = w_plus + w_minus`` per pair."""
        return self.w_plus + self.w_minus

    @classmethod
    def from_pseudometric(cls, d: np.ndarray) -> CCInstance:
        """``w_minus = d``, ``w_plus = 1 - d`` from a symmetric ``n x n`` matrix ``d`` in ``[0, 1]``."""
        d = np.asarray(d, dtype=float)
        if d.ndim != 2 or d.shape[0] != d.shape[1]:
            raise ValueError(f"d must be a square matrix; got shape {d.shape}")
        if np.any(d < -1e-12) or np.any(d > 1 + 1e-12):
            raise ValueError("d must have entries in [0, 1]")
        n = d.shape[0]
        values = np.clip(d[np.triu_indices(n, 1)], 0.0, 1.0)
        return cls(n=n, w_plus=1.0 - values, w_minus=values)


def metric_closure(d: np.ndarray) -> np.ndarray:
    """Largest pseudometric below ``d``: all-pairs shortest paths (Floyd–Warshall), ``O(n^3)``."""
    out = np.array(d, dtype=float)
    np.fill_diagonal(out, 0.0)
    for k in range(out.shape[0]):
        # d_uv <- min(d_uv, d_uk + d_kv)
        np.minimum(out, out[:, k : k + 1] + out[k : k + 1, :], out=out)
    return out


def blobs(n: int, k: int, r: float, seed: int, spread: float = 0.15) -> tuple[CCInstance, np.ndarray]:
    """Gaussian blobs in the unit square; pseudometric ``d = min(1, ||p_u - p_v|| / r)``.

    Returns the instance and the ``(n, 2)`` points. Blob centres are uniform in ``[0, 1]^2`` and each
    point is its centre plus ``N(0, spread^2 I)`` noise.
    """
    n = check_int("n", n, minimum=2)
    k = check_int("k", k, minimum=1, maximum=n)
    r = check_float("r", r, minimum=0.0, strict_min=True)
    spread = check_float("spread", spread, minimum=0.0)
    rng = np.random.default_rng(check_seed("seed", seed))
    centres = rng.random((k, 2))
    members = np.arange(n) % k
    points = centres[members] + spread * rng.standard_normal((n, 2))
    dist = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=-1)
    return CCInstance.from_pseudometric(np.minimum(1.0, dist / r)), points


def geometric_graph_metric(n: int, radius: float, seed: int) -> tuple[CCInstance, np.ndarray]:
    """Shortest-path metric of a random geometric graph, divided by its largest finite value.

    Points are uniform in the unit square; ``u ~ v`` when ``||p_u - p_v|| <= radius``, with the
    Euclidean length as edge weight. Disconnected pairs get distance 1 (still a pseudometric, since
    ``min(1, d)`` of a metric is a metric). Returns the instance and the points.
    """
    n = check_int("n", n, minimum=2)
    radius = check_float("radius", radius, minimum=0.0, strict_min=True)
    rng = np.random.default_rng(check_seed("seed", seed))
    points = rng.random((n, 2))
    dist = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=-1)
    graph = np.where(dist <= radius, dist, np.inf)
    sp = metric_closure(graph)
    finite = np.isfinite(sp)
    scale = sp[finite].max()
    d = np.where(finite, sp / scale if scale > 0 else 0.0, 1.0)
    return CCInstance.from_pseudometric(np.minimum(d, 1.0)), points


def noisy_cluster_metric(n: int, k: int, noise: float, seed: int) -> tuple[CCInstance, np.ndarray]:
    """Planted clusters with noisy distances, repaired into a pseudometric.

    ``d_uv = clip(1[u, v in different clusters] + xi_uv, 0, 1)`` with ``xi ~ N(0, noise^2)``, then the
    metric closure (Floyd–Warshall) makes the triangle inequality hold. The noise does *not* make the
    metric LP fractional: the closure only lowers distances, and the LP optimum stays an integral
    clustering (the planted one, or one merged cluster once the closure shortcuts every cross-cluster
    distance below 1/2). With ``k = 4`` we measured 0 % fractional LP entries at ``n`` = 20, 35 and 40
    for every noise level 0.1–0.4 and seeds 0–5. Use :func:`flipped_sbm` for a fractional LP with a
    planted clustering. Returns the instance and the planted labels (``u mod k``).
    """
    n = check_int("n", n, minimum=2)
    k = check_int("k", k, minimum=1, maximum=n)
    noise = check_float("noise", noise, minimum=0.0)
    rng = np.random.default_rng(check_seed("seed", seed))
    labels = np.arange(n) % k
    xi = pair_matrix(n, noise * rng.standard_normal(n * (n - 1) // 2))
    d = np.clip((labels[:, None] != labels[None, :]).astype(float) + xi, 0.0, 1.0)
    return CCInstance.from_pseudometric(metric_closure(d)), labels


def random_metric(n: int, low: float, seed: int) -> CCInstance:
    """Shortest-path pseudometric of the complete graph with i.i.d. ``U(low, 1)`` edge lengths.

    No planted structure: most pairs sit near the LP's indifference point ``d = 1/2`` after the
    closure, so the metric LP is usually strongly fractional and LP-PIVOT's rounding loss is visible —
    the family the 10/3 check needs. Not always: at ``n = 40``, ``low = 0.2`` seeds 0–11 gave
    82, 90, 92, 0, 84, 0, 21, 90, 86, 0, 51, 0 % fractional pairs (an all-short closure makes the LP
    integral with one large cluster).
    """
    n = check_int("n", n, minimum=2)
    low = check_float("low", low, minimum=0.0, maximum=1.0)
    rng = np.random.default_rng(check_seed("seed", seed))
    lengths = pair_matrix(n, rng.uniform(low, 1.0, n * (n - 1) // 2))
    return CCInstance.from_pseudometric(metric_closure(lengths))


def sbm_signed(n: int, k: int, p_in: float, p_out: float, seed: int) -> tuple[CCInstance, np.ndarray]:
    """Signed stochastic block model with unit weights (not a pseudometric instance).

    A pair inside a block is "+" (``w_plus = 1, w_minus = 0``) with probability ``p_in``; a pair across
    blocks is "+" with probability ``p_out``; every other pair is "-" (``w_plus = 0, w_minus = 1``).
    Returns the instance and the planted labels (``u mod k``).
    """
    n = check_int("n", n, minimum=2)
    k = check_int("k", k, minimum=1, maximum=n)
    p_in = check_float("p_in", p_in, minimum=0.0, maximum=1.0)
    p_out = check_float("p_out", p_out, minimum=0.0, maximum=1.0)
    rng = np.random.default_rng(check_seed("seed", seed))
    labels = np.arange(n) % k
    u, v = np.triu_indices(n, 1)
    p_plus = np.where(labels[u] == labels[v], p_in, p_out)
    plus = rng.random(u.shape[0]) < p_plus
    return CCInstance(n=n, w_plus=plus.astype(float), w_minus=(~plus).astype(float)), labels


def flipped_sbm(n: int, k: int, flip: float, seed: int) -> tuple[CCInstance, np.ndarray]:
    """Complete signed graph of ``k`` planted blocks with every sign flipped with probability ``flip``.

    The :func:`sbm_signed` instance with ``p_in = 1 - flip`` and ``p_out = flip``: unit weights, each pair
    "+" (``w_plus = 1``) or "-" (``w_minus = 1``), so ``w_plus + w_minus = 1`` (ACN's probability
    constraints) but ``d = w_minus`` is not a pseudometric. Its metric LP is fractional because the flips
    create *bad triangles* (two "+" pairs and one "-" pair) throughout: each forces a disagreement on
    one of its pairs, and where such triangles overlap the LP pays less by setting their pairs to 1/2
    than any clustering pays. With ``k = 4``, ``flip = 0.25`` we measured 34–39 % fractional LP entries (every
    one at 1/2) on every instance at ``n`` = 20, 35 and 40, while at ``flip <= 0.15`` many instances
    stay integral. The planted blocks remain the signal (``flip < 1/2``), so unseen pairs are informative
    only through witnesses, as in :func:`noisy_cluster_metric`. Returns the instance and the planted
    labels (``u mod k``).
    """
    n = check_int("n", n, minimum=2)
    k = check_int("k", k, minimum=1, maximum=n)
    flip = check_float("flip", flip, minimum=0.0, maximum=0.5)
    if flip >= 0.5:
        raise ValueError(f"flip must be < 0.5 (at 1/2 the signs carry no trace of the blocks); got {flip}")
    return sbm_signed(n, k, 1.0 - flip, flip, seed)


def hidden_heavy(n: int, H: float, seed: int) -> tuple[CCInstance, int]:
    """Adversarial family: every pair "+" with weight 1 except one random hidden pair with ``w_minus = H``.

    The hidden pair has ``w_plus = 0``. Returns the instance and the hidden pair's index.
    OPT is :func:`opt_hidden_heavy`.
    """
    n = check_int("n", n, minimum=2)
    H = check_float("H", H, minimum=0.0)
    rng = np.random.default_rng(check_seed("seed", seed))
    P = n * (n - 1) // 2
    hidden = int(rng.integers(P))
    w_plus = np.ones(P)
    w_minus = np.zeros(P)
    w_plus[hidden] = 0.0
    w_minus[hidden] = H
    return CCInstance(n=n, w_plus=w_plus, w_minus=w_minus), hidden


def opt_hidden_heavy(n: int, H: float) -> float:
    """OPT of :func:`hidden_heavy`: join everything (pay ``H``) or cut the hidden pair ``{u, v}``.

    Separating ``u`` from ``v`` cuts at least the ``n - 2`` unit paths ``u-w-v`` (min cut of ``K_n``
    minus one edge), achieved by isolating ``u``; so ``OPT = min(H, n - 2)``.
    """
    n = check_int("n", n, minimum=2)
    H = check_float("H", H, minimum=0.0)
    return float(min(H, n - 2))
