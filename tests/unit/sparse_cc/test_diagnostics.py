"""Diagnostics: coverage theory and simulation, witness stats vs brute force, the Γ statistics."""

import numpy as np
import pytest

from neurips26.sparse_cc import (
    CCInstance,
    blobs,
    geometric_graph_metric,
    impute,
    metric_lp,
    noisy_cluster_metric,
    pair_index,
    pairs,
    sample_observed,
)
from neurips26.sparse_cc.diagnostics import (
    all_pairs_threshold,
    coverage_theory,
    gamma_holdout,
    gamma_oracle,
    m_for,
    witness_stats,
)


def test_coverage_theory_values():
    assert coverage_theory(0.25) == pytest.approx(0.221, abs=5e-4)
    assert coverage_theory(0.5) == pytest.approx(0.632, abs=5e-4)
    assert coverage_theory(1.0) == pytest.approx(0.982, abs=5e-4)
    assert coverage_theory(0.0) == 0.0
    np.testing.assert_allclose(
        coverage_theory(np.array([0.25, 0.5, 1.0])), [0.2212, 0.6321, 0.9817], atol=1e-4
    )


@pytest.mark.parametrize("c", [0.25, 0.5, 1.0])
def test_simulated_coverage_matches_the_poisson_curve(c):
    n = 200
    stats = witness_stats(n, sample_observed(n, m_for(n, c), seed=0))
    assert abs(stats.frac_all - coverage_theory(c)) < 0.03


def test_threshold_and_budget():
    assert all_pairs_threshold(100) == pytest.approx(np.sqrt(np.log(100) / 2))
    assert m_for(100, 1.0) == 1000
    assert m_for(100, 0.0) == 1
    assert m_for(10, 5.0) == 45  # clipped to P
    assert m_for(40, 0.5) == round(0.5 * 40**1.5)


def _brute_stats(n, E):
    seen = set(E.tolist())
    counts, covered_unseen, n_unseen = [], 0, 0
    for u, v in pairs(n):
        k = sum(
            1
            for w in range(n)
            if w not in (u, v) and pair_index(n, u, w) in seen and pair_index(n, w, v) in seen
        )
        counts.append(k)
        if pair_index(n, u, v) not in seen:
            n_unseen += 1
            covered_unseen += k > 0
    counts = np.array(counts)
    return (counts > 0).mean(), covered_unseen / n_unseen, covered_unseen == n_unseen, counts.mean()


@pytest.mark.parametrize(("n", "m", "seed"), [(9, 8, 0), (12, 25, 1), (12, 50, 2), (6, 14, 3)])
def test_witness_stats_match_brute_force(n, m, seed):
    E = sample_observed(n, m, seed)
    s = witness_stats(n, E)
    frac_all, frac_unseen, all_cov, mean = _brute_stats(n, E)
    assert s.m == m
    assert s.frac_all == pytest.approx(frac_all)
    assert s.frac_unobserved == pytest.approx(frac_unseen)
    assert s.all_covered == all_cov
    assert s.all_covered == (s.n_uncovered == 0)
    assert s.mean_count == pytest.approx(mean)


def test_witness_stats_when_everything_is_observed():
    s = witness_stats(6, np.arange(15))
    assert s.frac_all == 1.0 and s.frac_unobserved == 1.0 and s.all_covered and s.mean_count == 4.0


def test_gamma_oracle_zero_exact_and_ignores_observed_pairs():
    inst, _ = noisy_cluster_metric(12, 3, 0.3, 0)
    E = sample_observed(12, 30, 0)
    x_star = metric_lp(inst).x
    assert gamma_oracle(inst, E, x_star, x_star) == 0.0
    x_hat = x_star.copy()
    x_hat[E] = 1.0 - x_hat[E]  # errors on observed pairs do not count
    assert gamma_oracle(inst, E, x_hat, x_star) == 0.0
    # hand value: n = 3, weights W = (1, 2, 3), E = {pair 0}, errors 0.5 on pair 1 and 0.25 on pair 2
    tiny = CCInstance(n=3, w_plus=np.array([1.0, 1.0, 1.0]), w_minus=np.array([0.0, 1.0, 2.0]))
    g = gamma_oracle(tiny, np.array([0]), np.array([0.9, 0.5, 0.25]), np.array([0.0, 0.0, 0.5]))
    assert g == pytest.approx((2 * 0.5 + 3 * 0.25) / 6)


def test_gamma_holdout_is_zero_where_witnesses_recover_a_cluster_metric():
    # 0/1 cluster metric, E = P: every hidden pair keeps same-cluster witnesses, so x̂ = x̄ exactly
    inst, _ = noisy_cluster_metric(16, 2, 0.0, 0)
    E = np.arange(inst.n_pairs)
    for rule in ("upper", "midpoint", "median"):
        assert gamma_holdout(inst, E, seed=0, rule=rule) == 0.0


def test_gamma_holdout_finite_deterministic_and_x_bar_shortcut():
    inst, _ = geometric_graph_metric(20, 0.4, 1)
    E = sample_observed(20, m_for(20, 1.0), 0)
    g = gamma_holdout(inst, E, seed=3)
    assert np.isfinite(g) and 0.0 < g <= 1.0  # this sparse E leaves real imputation errors
    assert g == gamma_holdout(inst, E, seed=3)
    x_bar = metric_lp(inst, E, cutting_plane=True).x
    assert gamma_holdout(inst, E, seed=3, x_bar=x_bar) == g


def test_gamma_holdout_matches_a_manual_pipeline():
    inst, _ = blobs(18, 3, 0.6, 2)
    E = sample_observed(18, 70, 1)
    x_bar = metric_lp(inst, E).x
    # the same hidden set as the library's draw: round(0.2 * 70) = 14 positions of E from default_rng(5)
    hidden = np.zeros(70, dtype=bool)
    hidden[np.random.default_rng(5).choice(70, size=14, replace=False)] = True
    kept = E[~hidden]
    x_hat = impute(18, kept, metric_lp(inst, kept).x).x_hat[E[hidden]]
    W = inst.total_weight[E[hidden]]
    want = W @ np.abs(x_hat - x_bar[hidden]) / W.sum()
    assert gamma_holdout(inst, E, holdout=0.2, seed=5, cutting_plane=False) == pytest.approx(want, abs=1e-7)


def test_bad_inputs_name_the_argument():
    inst, _ = noisy_cluster_metric(8, 2, 0.3, 0)
    E = sample_observed(8, 10, 0)
    x = np.zeros(inst.n_pairs)
    with pytest.raises(ValueError, match="c"):
        coverage_theory(-0.1)
    with pytest.raises(ValueError, match="c"):
        coverage_theory(np.array([0.1, -1.0]))
    with pytest.raises(TypeError, match="n"):
        all_pairs_threshold(10.0)
    with pytest.raises(ValueError, match="n"):
        m_for(1, 1.0)
    with pytest.raises(ValueError, match="observed"):
        witness_stats(8, np.array([0, 0]))
    with pytest.raises(ValueError, match="x_hat"):
        gamma_oracle(inst, E, x[:-1], x)
    with pytest.raises(ValueError, match="x_star"):
        gamma_oracle(inst, E, x, x + 2.0)
    with pytest.raises(ValueError, match="holdout"):
        gamma_holdout(inst, E, holdout=0.0, seed=0)
    with pytest.raises(ValueError, match="seed"):
        gamma_holdout(inst, E, seed=-1)
    with pytest.raises(ValueError, match="rule"):
        gamma_holdout(inst, E, seed=0, rule="mean")
    with pytest.raises(ValueError, match="observed"):
        gamma_holdout(inst, E[:1], seed=0)
    with pytest.raises(ValueError, match="x_bar"):
        gamma_holdout(inst, E, seed=0, x_bar=np.zeros(3))


def test_fractional_share_counts_values_strictly_inside_the_tolerance():
    from neurips26.sparse_cc import fractional_share

    x = np.array([0.0, 1e-7, 0.5, 0.3, 1 - 1e-7, 1.0])
    assert fractional_share(x) == pytest.approx(2 / 6)
    assert fractional_share(x, tol=0.0) == pytest.approx(4 / 6)
    assert fractional_share(np.zeros(4)) == 0.0
    with pytest.raises(TypeError, match="x"):
        fractional_share([0.5])
    with pytest.raises(ValueError, match="tol"):
        fractional_share(x, tol=0.7)
    with pytest.raises(ValueError, match="x"):
        fractional_share(np.zeros(0))
