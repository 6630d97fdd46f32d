"""LP-PIVOT: recovers a clustering from its 0/1 marginals, seeded, and Sparse-LP-Pivot with E = P."""

import numpy as np
import pytest

from neurips26.sparse_cc import (
    CMSY_A,
    CMSY_B,
    ROUNDING_RULES,
    blobs,
    cost,
    lp_pivot,
    metric_lp,
    noisy_cluster_metric,
    rounding_function,
    sample_observed,
    sbm_signed,
    separation,
    sparse_lp_pivot,
)


@pytest.mark.parametrize("rounding", ROUNDING_RULES)
def test_pivot_on_integral_marginals_returns_the_clustering(rounding):
    inst, _ = blobs(15, 3, 0.5, 0)
    truth = np.random.default_rng(1).integers(0, 4, size=15)
    x = separation(inst, truth)
    res = lp_pivot(inst, x, rounding=rounding, runs=5, seed=3)
    for labels in res.labels:
        np.testing.assert_array_equal(separation(inst, labels), x)
    assert res.mean_cost == pytest.approx(cost(inst, truth))


def test_same_seed_same_numbers_and_seeds_differ():
    inst, _ = noisy_cluster_metric(20, 3, 0.3, 0)
    x = np.full(inst.n_pairs, 0.5)
    a = lp_pivot(inst, x, runs=10, seed=4)
    b = lp_pivot(inst, x, runs=10, seed=4)
    c = lp_pivot(inst, x, runs=10, seed=5)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.costs, b.costs)
    assert not np.array_equal(a.labels, c.labels)
    assert a.mean_cost == pytest.approx(np.mean([cost(inst, lab) for lab in a.labels]))


def test_all_pairs_observed_equals_full_lp_pivot():
    inst, _ = sbm_signed(16, 3, 0.7, 0.3, 2)  # signed SBM: the LP is fractional, the pivots random
    E = np.arange(inst.n_pairs)
    assert np.any(np.minimum(metric_lp(inst).x, 1 - metric_lp(inst).x) > 0.1)
    for cutting_plane in (False, True):
        sparse = sparse_lp_pivot(inst, E, runs=8, seed=7, cutting_plane=cutting_plane)
        full = lp_pivot(inst, metric_lp(inst, cutting_plane=cutting_plane).x, runs=8, seed=7)
        np.testing.assert_array_equal(sparse.pivot.labels, full.labels)
        assert sparse.pivot.mean_cost == full.mean_cost
        assert sparse.imputation.n_no_witness == 0


def test_sparse_lp_pivot_runs_on_a_sample_and_is_seeded():
    inst, _ = blobs(20, 4, 0.5, 0)
    E = sample_observed(20, 90, 1)
    a = sparse_lp_pivot(inst, E, rule="midpoint", rounding="cmsy", runs=5, seed=0)
    b = sparse_lp_pivot(inst, E, rule="midpoint", rounding="cmsy", runs=5, seed=0)
    np.testing.assert_array_equal(a.pivot.costs, b.pivot.costs)
    assert a.lp.observed.shape == (90,)
    assert a.pivot.mean_cost >= metric_lp(inst).value - 1e-7


def test_rounding_functions():
    x = np.array([0.0, 0.1, CMSY_A, 0.3, 0.5, CMSY_B, 0.8, 1.0])
    plus = np.ones_like(x, dtype=bool)
    np.testing.assert_array_equal(rounding_function(x, plus, "acn"), x)
    np.testing.assert_array_equal(rounding_function(x, plus, "threshold"), (x >= 0.5).astype(float))
    cm = rounding_function(x, plus, "cmsy")
    np.testing.assert_allclose(
        cm,
        [
            0,
            0,
            0,
            ((0.3 - CMSY_A) / (CMSY_B - CMSY_A)) ** 2,
            ((0.5 - CMSY_A) / (CMSY_B - CMSY_A)) ** 2,
            1,
            1,
            1,
        ],
    )
    np.testing.assert_array_equal(rounding_function(x, ~plus, "cmsy"), x)


def test_bad_inputs():
    inst, _ = blobs(6, 2, 0.5, 0)
    with pytest.raises(ValueError, match="x"):
        lp_pivot(inst, np.full(inst.n_pairs, 1.2))
    with pytest.raises(ValueError, match="x"):
        lp_pivot(inst, np.full(3, 0.5))
    with pytest.raises(ValueError, match="acn"):
        lp_pivot(inst, np.full(inst.n_pairs, 0.5), rounding="round")
    with pytest.raises(ValueError, match="upper"):
        sparse_lp_pivot(inst, np.arange(5), rule="nearest")
    with pytest.raises(ValueError, match="observed"):
        sparse_lp_pivot(inst, np.array([1, 1]))
    with pytest.raises(ValueError, match="runs"):
        lp_pivot(inst, np.full(inst.n_pairs, 0.5), runs=0)
