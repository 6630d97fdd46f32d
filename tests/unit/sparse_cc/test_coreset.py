"""Coresets: unbiased estimates (both schemes), shrinking sup error, exact reweighting, local optima."""

import numpy as np
import pytest

from neurips26.sparse_cc import (
    CCInstance,
    blobs,
    cost,
    metric_lp,
    noisy_cluster_metric,
    pairs,
    sbm_signed,
)
from neurips26.sparse_cc.coreset import (
    SCHEMES,
    clustering_pool,
    coreset_instance,
    coreset_lp_pivot,
    estimate_cost,
    estimate_costs,
    exact_costs,
    local_search,
    sample_coreset,
    sup_error,
)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(
    "make", [lambda: noisy_cluster_metric(9, 3, 0.3, 0)[0], lambda: sbm_signed(9, 3, 0.8, 0.2, 1)[0]]
)
def test_estimator_is_unbiased_within_3_standard_errors(scheme, make):
    inst = make()
    pool = clustering_pool(inst, n_random=4, seed=2, n_local=1)
    truth = exact_costs(inst, pool)
    est = np.array([estimate_costs(sample_coreset(inst, 25, seed, scheme), pool) for seed in range(600)])
    se = est.std(axis=0, ddof=1) / np.sqrt(est.shape[0])
    assert np.all(se > 0)
    assert np.all(np.abs(est.mean(axis=0) - truth) <= 3 * se)


def test_estimates_match_a_loop_over_samples_and_exact_costs_match_cost():
    inst, _ = noisy_cluster_metric(12, 3, 0.3, 0)
    pool = clustering_pool(inst, n_random=6, seed=0, n_local=2)
    np.testing.assert_allclose(exact_costs(inst, pool), [cost(inst, lab) for lab in pool])
    pr = pairs(inst.n)
    for scheme in SCHEMES:
        cs = sample_coreset(inst, 40, 3, scheme)
        for lab in pool:
            loop = 0.0
            for p, s, w in zip(cs.pair, cs.sign, cs.weight, strict=True):
                x = lab[pr[p, 0]] != lab[pr[p, 1]]
                loop += w * (x if s else not x)
            assert estimate_cost(cs, lab) == pytest.approx(loop)


def test_weighted_scheme_draws_in_proportion_to_weight():
    inst, _ = sbm_signed(10, 2, 0.9, 0.1, 0)  # half the domain points have weight 0
    cs = sample_coreset(inst, 500, 0, "weighted")
    w = np.where(cs.sign, inst.w_plus[cs.pair], inst.w_minus[cs.pair])
    assert np.all(w > 0)
    np.testing.assert_allclose(cs.weight, cs.W / cs.S)
    assert cs.W == pytest.approx(inst.w_plus.sum() + inst.w_minus.sum())


def test_sup_error_shrinks_with_S():
    inst, _ = blobs(20, k=20, r=1.0, seed=0, spread=0.0)
    pool = clustering_pool(inst, n_random=60, seed=0, n_local=5)
    for scheme in SCHEMES:
        small = np.mean([sup_error(inst, sample_coreset(inst, 100, s, scheme), pool) for s in range(5)])
        large = np.mean([sup_error(inst, sample_coreset(inst, 6400, s, scheme), pool) for s in range(5)])
        assert large < small / 4  # ~ S^{-1/2}: a 64x budget should cut the error ~8x


def test_coreset_instance_carries_exactly_the_sample_weights():
    inst, _ = noisy_cluster_metric(15, 3, 0.3, 1)
    pool = clustering_pool(inst, n_random=10, seed=1, n_local=2)
    for scheme in SCHEMES:
        cs = sample_coreset(inst, 120, 5, scheme)
        tilde, E = coreset_instance(inst, cs)
        np.testing.assert_array_equal(E, np.unique(cs.pair))
        assert tilde.w_plus.sum() == pytest.approx(cs.weight[cs.sign].sum())
        assert tilde.w_minus.sum() == pytest.approx(cs.weight[~cs.sign].sum())
        unseen = np.setdiff1d(np.arange(inst.n_pairs), E)
        assert np.all(tilde.w_plus[unseen] == 0) and np.all(tilde.w_minus[unseen] == 0)
        # the reweighted instance's cost is the coreset estimate, for every clustering
        np.testing.assert_allclose(exact_costs(tilde, pool), estimate_costs(cs, pool))
        if scheme == "weighted":
            assert tilde.w_plus.sum() + tilde.w_minus.sum() == pytest.approx(cs.W)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_coreset_instance_sign_totals_are_unbiased(scheme):
    inst, _ = noisy_cluster_metric(10, 2, 0.3, 2)
    tot = np.array(
        [
            [t.w_plus.sum(), t.w_minus.sum()]
            for t, _ in (coreset_instance(inst, sample_coreset(inst, 30, s, scheme)) for s in range(400))
        ]
    )
    se = tot.std(axis=0, ddof=1) / np.sqrt(tot.shape[0])
    target = np.array([inst.w_plus.sum(), inst.w_minus.sum()])
    assert np.all(np.abs(tot.mean(axis=0) - target) <= 3 * se)


def test_coreset_lp_is_a_relaxation_of_the_coreset_estimates_and_is_seeded():
    inst, _ = noisy_cluster_metric(14, 3, 0.3, 0)
    res = coreset_lp_pivot(inst, 150, 4, runs=5)
    pool = clustering_pool(inst, n_random=20, seed=0, n_local=3)
    # the LP on E with fully-observed-triangle rows is a relaxation of the coreset objective
    assert np.all(res.lp.value <= estimate_costs(res.coreset, pool) + 1e-7)
    tilde, E = coreset_instance(inst, res.coreset)
    assert res.lp.value == pytest.approx(metric_lp(tilde, E, cutting_plane=False).value, abs=1e-7)
    np.testing.assert_allclose(res.pivot.costs, [cost(inst, lab) for lab in res.pivot.labels])
    again = coreset_lp_pivot(inst, 150, 4, runs=5)
    np.testing.assert_array_equal(res.pivot.labels, again.pivot.labels)
    np.testing.assert_array_equal(res.imputation.x_hat, again.imputation.x_hat)


def test_same_seed_same_numbers():
    inst, _ = noisy_cluster_metric(12, 3, 0.3, 0)
    for scheme in SCHEMES:
        a, b = sample_coreset(inst, 50, 7, scheme), sample_coreset(inst, 50, 7, scheme)
        c = sample_coreset(inst, 50, 8, scheme)
        np.testing.assert_array_equal(a.pair, b.pair)
        np.testing.assert_array_equal(a.sign, b.sign)
        np.testing.assert_array_equal(a.weight, b.weight)
        assert not (np.array_equal(a.pair, c.pair) and np.array_equal(a.sign, c.sign))
    np.testing.assert_array_equal(
        clustering_pool(inst, n_random=5, seed=3), clustering_pool(inst, n_random=5, seed=3)
    )


def test_local_search_ends_in_a_single_move_optimum():
    inst, _ = noisy_cluster_metric(10, 3, 0.4, 3)
    rng = np.random.default_rng(0)
    for _ in range(5):
        start = rng.integers(0, 4, size=10)
        lab = local_search(inst, start)
        best = cost(inst, lab)
        assert best <= cost(inst, start) + 1e-12
        for v in range(10):
            for c in [*np.unique(lab), lab.max() + 1]:  # every existing cluster and a new singleton
                moved = lab.copy()
                moved[v] = c
                assert cost(inst, moved) >= best - 1e-9


def test_clustering_pool_rows():
    inst, planted = noisy_cluster_metric(12, 3, 0.2, 0)
    pool = clustering_pool(inst, n_random=7, seed=0, planted=planted, n_local=4)
    assert pool.shape == (7 + 1 + 2 + 4, 12)
    np.testing.assert_array_equal(pool[7], planted)  # u mod 3 is already canonical
    np.testing.assert_array_equal(pool[8], np.arange(12))
    np.testing.assert_array_equal(pool[9], np.zeros(12))


def test_bad_inputs_name_the_argument():
    inst, _ = noisy_cluster_metric(8, 2, 0.3, 0)
    cs = sample_coreset(inst, 10, 0)
    with pytest.raises(ValueError, match="S"):
        sample_coreset(inst, 0, 0)
    with pytest.raises(TypeError, match="S"):
        sample_coreset(inst, 2.5, 0)
    with pytest.raises(ValueError, match="scheme"):
        sample_coreset(inst, 10, 0, scheme="stratified")
    with pytest.raises(ValueError, match="seed"):
        sample_coreset(inst, 10, -1)
    with pytest.raises(TypeError, match="instance"):
        sample_coreset("not an instance", 10, 0)
    with pytest.raises(ValueError, match="labels"):
        estimate_cost(cs, np.zeros(7, dtype=int))
    with pytest.raises(TypeError, match="labels"):
        estimate_cost(cs, np.zeros(8))
    with pytest.raises(ValueError, match="labels"):
        estimate_costs(cs, np.zeros((3, 9), dtype=int))
    with pytest.raises(ValueError, match="coreset"):  # other n
        sup_error(noisy_cluster_metric(9, 2, 0.3, 1)[0], cs, np.zeros((1, 9), dtype=int))
    heavier = sbm_signed(8, 2, 0.5, 0.5, 0)[0]
    heavier = CCInstance(n=8, w_plus=2 * heavier.w_plus, w_minus=heavier.w_minus)
    with pytest.raises(ValueError, match="coreset"):  # same n, other total weight W
        sup_error(heavier, cs, np.zeros((1, 8), dtype=int))
    with pytest.raises(ValueError, match="rule"):
        coreset_lp_pivot(inst, 10, 0, rule="mean")
    with pytest.raises(ValueError, match="rounding"):
        coreset_lp_pivot(inst, 10, 0, rounding="round")
    with pytest.raises(ValueError, match="n_random"):
        clustering_pool(inst, n_random=-1, seed=0)
    with pytest.raises(ValueError, match="labels"):
        clustering_pool(inst, n_random=1, seed=0, planted=np.zeros(3, dtype=int))
