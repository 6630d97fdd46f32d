"""Baselines: KwikCluster, naive imputation and the exact-marginal LP-PIVOT."""

import numpy as np
import pytest

from neurips26.sparse_cc import CCInstance, blobs, cost, metric_lp, pairs, random_metric, sample_observed
from neurips26.sparse_cc.baselines import (
    full_lp_pivot,
    kwik_marginals,
    kwikcluster,
    naive_fill,
    naive_lp_pivot,
)


def _planted(n: int, k: int) -> tuple[CCInstance, np.ndarray]:
    labels = np.arange(n) % k
    P = pairs(n)
    same = labels[P[:, 0]] == labels[P[:, 1]]
    return CCInstance(n=n, w_plus=same.astype(float), w_minus=(~same).astype(float)), labels


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all((a[:, None] == a[None, :]) == (b[:, None] == b[None, :])))


def test_kwikcluster_recovers_a_consistent_clustering_from_all_pairs():
    inst, labels = _planted(12, 3)
    res = kwikcluster(inst, np.arange(inst.n_pairs), runs=5, seed=1)
    assert res.mean_cost == 0.0
    assert all(_same_partition(lab, labels) for lab in res.labels)


def test_kwik_marginals_treat_unobserved_pairs_as_different():
    inst, _ = _planted(6, 2)
    observed = np.array([0, 1, 2])
    x = kwik_marginals(inst, observed)
    assert set(np.unique(x)) <= {0.0, 1.0}
    assert np.all(x[3:] == 1.0)
    np.testing.assert_array_equal(x[:3], np.where(inst.w_plus[:3] > inst.w_minus[:3], 0.0, 1.0))


def test_naive_fill_keeps_observed_values_and_fills_the_rest():
    observed = np.array([1, 4])
    x = naive_fill(6, observed, np.array([0.2, 0.7]), 0.5)
    np.testing.assert_allclose(x, [0.5, 0.2, 0.5, 0.5, 0.7, 0.5])
    with pytest.raises(ValueError, match="fill"):
        naive_fill(6, observed, np.array([0.2, 0.7]), 1.5)


def test_naive_lp_pivot_reuses_a_matching_lp_and_rejects_a_mismatched_one():
    inst = random_metric(10, 0.2, 0)
    observed = sample_observed(10, 20, 0)
    lp = metric_lp(inst, observed, cutting_plane=True)
    a = naive_lp_pivot(inst, observed, fill=1.0, runs=3, seed=2, lp=lp)
    b = naive_lp_pivot(inst, observed, fill=1.0, runs=3, seed=2)
    np.testing.assert_array_equal(a.pivot.costs, b.pivot.costs)
    with pytest.raises(ValueError, match="observed"):
        naive_lp_pivot(inst, sample_observed(10, 20, 1), lp=lp)


def test_full_lp_pivot_cost_is_bounded_below_by_lp_and_within_10_over_3():
    for seed in range(3):
        inst = random_metric(14, 0.2, seed)
        res = full_lp_pivot(inst, runs=200, seed=seed)
        assert np.all(res.pivot.costs >= res.lp.value - 1e-9)
        assert res.pivot.mean_cost <= 10 / 3 * res.lp.value


def test_full_lp_pivot_on_an_integral_lp_returns_the_lp_clustering():
    inst, _ = blobs(15, 3, 0.5, 0, spread=0.02)
    res = full_lp_pivot(inst, runs=5, seed=0)
    assert np.all(np.isin(np.round(res.lp.x, 9), [0.0, 1.0]))
    np.testing.assert_allclose(res.pivot.costs, res.lp.value, atol=1e-9)
    assert cost(inst, res.pivot.labels[0]) == pytest.approx(res.lp.value)


def test_baselines_reject_a_non_instance():
    with pytest.raises(TypeError, match="instance"):
        full_lp_pivot("not an instance")
    with pytest.raises(TypeError, match="instance"):
        kwik_marginals(None, np.array([0]))
