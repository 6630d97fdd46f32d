"""The VC dimension of correlation-clustering disagreements, by brute force over all set partitions.

The domain is ``Z = P x {+, -}``: the point ``(uv, +)`` has index ``i`` and ``(uv, -)`` has index
``P + i`` when ``uv`` is pair ``i`` (row-major). A clustering ``C`` labels each point with its
disagreement indicator (eq. H)

    h_C(uv, +) = x_uv,    h_C(uv, -) = 1 - x_uv,    x_uv = 1[C separates u and v],

so that ``cost(C) = sum_z w(z) h_C(z)``. A set of points is shattered when the clusterings realise all
``2^k`` patterns on it; the paper proves the largest shattered set has size ``n - 1`` (a star's "+"
pairs attain it), which :func:`vc_dimension` confirms for small ``n`` by exhaustive search.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from neurips26.sparse_cc.instances import pair_index
from neurips26.validation import check_choice, check_int

SIGNS = ("+", "-")
VC_MAX_N = 6
PARTITIONS_MAX_N = 12
MATRIX_MAX_N = 9


def set_partitions(n: int) -> Iterator[np.ndarray]:
    """Every partition of ``{0, ..., n-1}`` once, as a canonical label vector (Bell(n) of them).

    Canonical means a restricted growth string: ``labels[0] = 0`` and each label is at most one more
    than the largest label before it, so two label vectors are equal iff the partitions are.
    """
    n = check_int("n", n, minimum=1, maximum=PARTITIONS_MAX_N)
    labels = np.zeros(n, dtype=np.int64)
    # prefix_max[i] = max(labels[:i + 1]); the next label of position i may be 0..prefix_max[i-1] + 1
    prefix_max = np.zeros(n, dtype=np.int64)
    while True:
        yield labels.copy()
        # odometer: bump the last position that can still grow, reset everything after it to 0
        i = n - 1
        while i > 0 and labels[i] == prefix_max[i - 1] + 1:
            i -= 1
        if i == 0:
            return
        labels[i] += 1
        prefix_max[i] = max(prefix_max[i - 1], labels[i])
        labels[i + 1 :] = 0
        prefix_max[i + 1 :] = prefix_max[i]


def disagreement_matrix(n: int) -> np.ndarray:
    """Boolean ``(Bell(n), 2P)`` matrix of ``h_C(z)`` (eq. H) for every clustering ``C`` and point ``z``.

    Rows follow :func:`set_partitions`; columns are the ``P`` "+" points then the ``P`` "-" points.
    """
    n = check_int("n", n, minimum=2, maximum=MATRIX_MAX_N)
    labels = np.array(list(set_partitions(n)))
    u, v = np.triu_indices(n, 1)
    x = labels[:, u] != labels[:, v]
    return np.concatenate([x, ~x], axis=1)


def _point_index(n: int, point: object) -> int:
    if not isinstance(point, tuple | list) or len(point) != 3:
        raise TypeError(f"points must hold (u, v, sign) triples; got {point!r}")
    u, v, sign = point
    sign = check_choice("sign", sign, SIGNS)
    return pair_index(n, u, v) + (0 if sign == "+" else n * (n - 1) // 2)


def _point_triple(n: int, index: int) -> tuple[int, int, str]:
    P = n * (n - 1) // 2
    u, v = np.triu_indices(n, 1)
    return int(u[index % P]), int(v[index % P]), SIGNS[index // P]


def _n_patterns(H: np.ndarray, sets: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """Number of distinct patterns that the rows of ``H`` realise on each ``k``-set (rows of ``sets``)."""
    k = sets.shape[1]
    bits = (1 << np.arange(k, dtype=np.int32)).astype(np.int32)
    out = np.empty(sets.shape[0], dtype=np.int64)
    for start in range(0, sets.shape[0], chunk):
        block = sets[start : start + chunk]
        # pack the k indicators of every clustering into one integer code per set: (Bell, chunk)
        codes = H[:, block].astype(np.int32) @ bits
        codes.sort(axis=0)
        out[start : start + chunk] = 1 + np.count_nonzero(np.diff(codes, axis=0), axis=0)
    return out


def is_shattered(n: int, points: Sequence[tuple[int, int, str]]) -> bool:
    """Whether the clusterings of ``n`` items realise all ``2^k`` patterns on the ``(u, v, sign)`` points."""
    n = check_int("n", n, minimum=2, maximum=MATRIX_MAX_N)
    idx = [_point_index(n, p) for p in points]
    if len(set(idx)) != len(idx):
        raise ValueError("points must not repeat a point")
    if not idx:
        return True
    H = disagreement_matrix(n)
    return bool(_n_patterns(H, np.array([idx]))[0] == 2 ** len(idx))


def star_witness(n: int) -> tuple[tuple[int, int, str], ...]:
    """The paper's lower-bound set: the ``n - 1`` "+" pairs ``(0, v)`` of the star centred at 0.

    It is shattered: for any subset ``T`` of leaves, put the leaves of ``T`` in singletons and every
    other vertex with the centre; then ``h(0v, +) = 1`` exactly for ``v in T``.
    """
    n = check_int("n", n, minimum=2)
    return tuple((0, v, "+") for v in range(1, n))


@dataclass(frozen=True)
class VCResult:
    """Outcome of :func:`vc_dimension`.

    ``shattered`` is one largest shattered set (the first in lexicographic order of point indices);
    ``n_sets_checked`` counts the candidate sets whose patterns were counted; ``n_shattered[k]`` is the
    number of shattered ``k``-sets for ``k = 0..dimension``.
    """

    n: int
    dimension: int
    shattered: tuple[tuple[int, int, str], ...]
    n_clusterings: int
    n_sets_checked: int
    n_shattered: tuple[int, ...] = ()


def vc_dimension(n: int) -> VCResult:
    """Largest ``k`` such that some ``k`` points of ``Z = P x {+, -}`` are shattered by the clusterings.

    Exhaustive and level by level: every subset of a shattered set is shattered, so the candidate
    ``k``-sets are the shattered ``(k-1)``-sets extended by a larger point index, kept only if all
    their ``(k-1)``-subsets are shattered too; a level needs ``2^k <= Bell(n)``. Sets are bit masks
    (``2P <= 30`` points fit an ``int64``); patterns are packed into integers and counted per set.
    """
    n = check_int("n", n, minimum=2, maximum=VC_MAX_N)
    H = disagreement_matrix(n)
    n_clusterings, n_points = H.shape
    # level 1: a point is shattered iff some clustering has h = 0 and some has h = 1
    level = np.arange(n_points, dtype=np.int64)[:, None]
    ok = _n_patterns(H, level) == 2
    checked = n_points
    current = level[ok]
    counts = [1, int(current.shape[0])]
    while current.shape[0] and 2 ** (current.shape[1] + 1) <= n_clusterings:
        k = current.shape[1] + 1
        # extend each shattered (k-1)-set by every larger point
        last = current[:, -1]
        reps = n_points - 1 - last
        offsets = np.cumsum(reps) - reps  # where each set's block of extensions starts
        base = np.repeat(current, reps, axis=0)
        extra = np.repeat(last + 1 - offsets, reps) + np.arange(base.shape[0])
        cand = np.concatenate([base, extra[:, None]], axis=1)
        # Apriori pruning: every (k-1)-subset (drop one point) must be among the shattered sets
        masks = (np.int64(1) << cand).sum(axis=1)
        known = np.sort((np.int64(1) << current).sum(axis=1))
        keep = np.ones(cand.shape[0], dtype=bool)
        for j in range(k - 1):
            keep &= np.isin(masks ^ (np.int64(1) << cand[:, j]), known, assume_unique=False)
        cand = cand[keep]
        checked += int(cand.shape[0])
        if not cand.shape[0]:
            break
        nxt = cand[_n_patterns(H, cand) == 2**k]
        if not nxt.shape[0]:
            break
        current = nxt
        counts.append(int(current.shape[0]))
    best = tuple(_point_triple(n, int(i)) for i in current[0]) if current.shape[0] else ()
    return VCResult(
        n=n,
        dimension=len(best),
        shattered=best,
        n_clusterings=int(n_clusterings),
        n_sets_checked=checked,
        n_shattered=tuple(counts),
    )
