"""VC dimension of the disagreement class: Bell numbers, n - 1 by brute force, the star is shattered."""

from itertools import combinations, product

import numpy as np
import pytest

from neurips26.sparse_cc import blobs, pairs, separation
from neurips26.sparse_cc.vc import (
    disagreement_matrix,
    is_shattered,
    set_partitions,
    star_witness,
    vc_dimension,
)

BELL = [1, 1, 2, 5, 15, 52, 203, 877]


def _h(labels, point):
    """h_C(z) straight from the definition: x_uv for "+", 1 - x_uv for "-"."""
    u, v, sign = point
    x = int(labels[u] != labels[v])
    return x if sign == "+" else 1 - x


def _brute_shattered(n, points):
    patterns = {tuple(_h(lab, p) for p in points) for lab in set_partitions(n)}
    return len(patterns) == 2 ** len(points)


def _domain(n):
    return [(int(u), int(v), s) for s in "+-" for u, v in pairs(n)]


@pytest.mark.parametrize("n", range(1, 8))
def test_set_partitions_count_bell_and_are_canonical(n):
    parts = np.array(list(set_partitions(n)))
    assert parts.shape == (BELL[n], n)
    assert len({tuple(p) for p in parts}) == BELL[n]
    for p in parts:  # restricted growth string: each label at most one above the running maximum
        assert p[0] == 0
        assert np.all(p[1:] <= np.maximum.accumulate(p)[:-1] + 1)


def test_set_partitions_match_all_label_functions():
    n = 5
    seen = set()
    for f in product(range(n), repeat=n):
        first = {}
        seen.add(tuple(first.setdefault(c, len(first)) for c in f))
    assert seen == {tuple(p) for p in set_partitions(n)}


def test_disagreement_matrix_is_h_of_each_clustering():
    n = 5
    inst, _ = blobs(n, 2, 0.5, 0)
    H = disagreement_matrix(n)
    P = n * (n - 1) // 2
    assert H.shape == (BELL[n], 2 * P) and H.dtype == bool
    for row, lab in zip(H, set_partitions(n), strict=True):
        x = separation(inst, lab).astype(bool)
        np.testing.assert_array_equal(row[:P], x)
        np.testing.assert_array_equal(row[P:], ~x)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_vc_dimension_is_n_minus_1_and_set_is_shattered(n):
    res = vc_dimension(n)
    assert res.dimension == n - 1
    assert res.n_clusterings == BELL[n]
    assert len(res.shattered) == n - 1
    assert _brute_shattered(n, res.shattered)
    assert res.n_shattered[-1] >= 1 and len(res.n_shattered) == n


@pytest.mark.parametrize("n", [3, 4])
def test_no_n_set_is_shattered_exhaustively(n):
    # the upper bound, checked without the level-wise pruning: every n-subset of the domain fails
    assert not any(_brute_shattered(n, s) for s in combinations(_domain(n), n))


def test_vc_dimension_n6():
    assert vc_dimension(6).dimension == 5


@pytest.mark.parametrize("n", [2, 3, 5, 6])
def test_star_witness_is_shattered(n):
    star = star_witness(n)
    assert len(star) == n - 1 and all(s == "+" for _, _, s in star)
    assert is_shattered(n, star)
    if n <= 5:
        assert _brute_shattered(n, star)


def test_is_shattered_agrees_with_brute_force_and_rejects_complements():
    rng = np.random.default_rng(0)
    dom = _domain(4)
    for _ in range(30):
        k = int(rng.integers(1, 5))
        pts = [dom[i] for i in rng.choice(len(dom), size=k, replace=False)]
        assert is_shattered(4, pts) == _brute_shattered(4, pts)
    assert not is_shattered(4, [(0, 1, "+"), (0, 1, "-")])  # h(uv,+) + h(uv,-) = 1 always


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="n"):
        vc_dimension(7)
    with pytest.raises(ValueError, match="n"):
        vc_dimension(1)
    with pytest.raises(TypeError, match="n"):
        vc_dimension(4.0)
    with pytest.raises(ValueError, match="sign"):
        is_shattered(4, [(0, 1, "*")])
    with pytest.raises(ValueError, match="repeat"):
        is_shattered(4, [(0, 1, "+"), (1, 0, "+")])
    with pytest.raises(ValueError, match="v"):
        is_shattered(4, [(0, 4, "+")])
    with pytest.raises(ValueError, match="n"):
        disagreement_matrix(1)
