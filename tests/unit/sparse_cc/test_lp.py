"""Metric LP: lower bound on every clustering, equals ILP OPT when integral, cutting plane = full LP."""

import numpy as np
import pytest

from neurips26.sparse_cc import (
    blobs,
    cost,
    geometric_graph_metric,
    metric_lp,
    noisy_cluster_metric,
    opt_ilp,
    sample_observed,
    sbm_signed,
    triangle_rows,
)

INSTANCES = [
    lambda s: blobs(9, 3, 0.5, s)[0],
    lambda s: geometric_graph_metric(9, 0.45, s)[0],
    lambda s: noisy_cluster_metric(9, 3, 0.25, s)[0],
    lambda s: sbm_signed(9, 3, 0.7, 0.3, s)[0],
]


def test_lp_lower_bounds_every_clustering_and_ilp():
    rng = np.random.default_rng(0)
    integral_cases = 0
    for make in INSTANCES:
        for seed in range(3):
            inst = make(seed)
            lp = metric_lp(inst)
            opt, opt_labels = opt_ilp(inst)
            assert cost(inst, opt_labels) == pytest.approx(opt)
            assert lp.value <= opt + 1e-7
            for _ in range(20):
                labels = rng.integers(0, rng.integers(1, 6), size=inst.n)
                assert lp.value <= cost(inst, labels) + 1e-7
            if np.all(np.minimum(lp.x, 1 - lp.x) < 1e-7):
                integral_cases += 1
                assert lp.value == pytest.approx(opt, abs=1e-7)
    assert integral_cases >= 3  # the equality branch is exercised


def test_lp_is_fractional_with_a_gap_on_a_signed_star():
    # "+" from centre 0 to four leaves, "-" between leaves: x = 1/2 on the star costs 2, OPT = 3
    from neurips26.sparse_cc import CCInstance, pairs

    star = pairs(5)[:, 0] == 0
    inst = CCInstance(n=5, w_plus=star.astype(float), w_minus=(~star).astype(float))
    lp = metric_lp(inst)
    assert lp.value <= 2.0 + 1e-7
    assert opt_ilp(inst)[0] == pytest.approx(3.0)
    assert np.any(np.minimum(lp.x, 1 - lp.x) > 0.1)


@pytest.mark.parametrize("make", INSTANCES[:3] + [lambda s: sbm_signed(14, 3, 0.7, 0.3, s)[0]])
def test_cutting_plane_equals_full_lp(make):
    for seed in range(2):
        inst = make(seed)
        full = metric_lp(inst)
        cut = metric_lp(inst, cutting_plane=True)
        assert cut.value == pytest.approx(full.value, abs=1e-7)
        assert cut.n_rows <= full.n_rows
        assert cut.rounds >= 1 and full.rounds == 1
        viol = (
            cut.x[full_rows(inst.n)[:, 0]] - cut.x[full_rows(inst.n)[:, 1]] - cut.x[full_rows(inst.n)[:, 2]]
        )
        assert viol.max() <= 1e-9


def full_rows(n):
    return triangle_rows(n, np.arange(n * (n - 1) // 2))


def test_observed_lp_cutting_plane_and_row_count():
    inst, _ = blobs(20, 4, 0.5, 0)
    E = sample_observed(20, 100, seed=1)
    full = metric_lp(inst, E)
    cut = metric_lp(inst, E, cutting_plane=True)
    assert cut.value == pytest.approx(full.value, abs=1e-7)
    np.testing.assert_array_equal(full.observed, E)
    # brute-force count of fully observed triples: three rows each
    seen = set(E.tolist())
    from itertools import combinations

    from neurips26.sparse_cc import pair_index

    n_tri = sum(
        all(pair_index(20, a, b) in seen for a, b in ((u, v), (u, w), (v, w)))
        for u, v, w in combinations(range(20), 3)
    )
    assert full.n_candidate_rows == 3 * n_tri == full.n_rows


def test_full_triangle_row_count():
    assert full_rows(6).shape == (3 * 20, 3)


def test_bad_observed_and_n():
    inst, _ = blobs(6, 2, 0.5, 0)
    with pytest.raises(ValueError, match="observed"):
        metric_lp(inst, np.array([0, 15]))
    with pytest.raises(ValueError, match="observed"):
        metric_lp(inst, np.array([0, 3, 3]))
    with pytest.raises(ValueError, match="observed"):
        metric_lp(inst, np.array([[0, 1], [1, 0]]))
    with pytest.raises(ValueError, match="observed"):
        metric_lp(inst, np.array([[0, 6]]))
    with pytest.raises(ValueError, match="n"):
        opt_ilp(blobs(13, 2, 0.5, 0)[0])
