"""The claim experiments run at tiny sizes and keep their invariants; configs validate their fields."""

import dataclasses

import numpy as np
import pytest

from neurips26.sparse_cc import experiments as E
from neurips26.sparse_cc.diagnostics import coverage_theory


def test_configs_for_every_scale_and_bad_fields():
    for cls in (
        E.VCConfig,
        E.CoresetConfig,
        E.CuttingPlaneConfig,
        E.WitnessConfig,
        E.RatioConfig,
        E.AdversarialConfig,
    ):
        for scale in ("smoke", "default", "paper"):
            cls.for_scale(scale)
    with pytest.raises(ValueError, match="ns"):
        E.VCConfig(ns=(2, 7))
    with pytest.raises(ValueError, match="sizes"):
        E.CoresetConfig(n=10, family="random_metric", sizes=(400, 100), pool_random=5, repeats=1)
    with pytest.raises(ValueError, match="families"):
        dataclasses.replace(E.RatioConfig.for_scale("smoke"), families=("sbm",))
    with pytest.raises(ValueError, match="holdout"):
        dataclasses.replace(E.RatioConfig.for_scale("smoke"), holdout=0.9)
    with pytest.raises(TypeError, match="trials"):
        E.AdversarialConfig(ns=(10,), trials=1.5, runs=1)


def test_ratio_grid_is_bounded_below_by_one_and_reproducible():
    cfg = E.RatioConfig(n=12, families=E.FAMILIES, instances=1, cs=(0.5, 2.0), runs=4)
    a, b = E.ratio_vs_c(cfg, seed=3), E.ratio_vs_c(cfg, seed=3)
    F = len(E.FAMILIES)
    for method in E.METHODS:
        assert a.ratio[method].shape == (F, 1, 2)
        assert np.all(a.ratio[method] >= 1 - 1e-9)  # every clustering costs at least LP*
        np.testing.assert_array_equal(a.ratio[method], b.ratio[method])
    for rule, r in a.full_ratio.items():
        assert np.all(r >= 1 - 1e-9), rule
    # the ACN rule on the imputed marginals is exactly the Sparse-LP-Pivot column
    np.testing.assert_array_equal(a.imputed_ratio["acn"], a.ratio["sparse_lp_pivot"])
    assert np.all(a.gamma_oracle >= 0) and np.all(a.gamma_holdout >= 0)
    assert a.imputed_fractional.shape == (F, 1, 2)
    assert np.all((a.imputed_fractional >= 0) & (a.imputed_fractional <= 1))


def test_grid_has_a_planted_family_with_a_fractional_lp():
    """Besides the integral noisy clusters, the grid holds planted instances whose full LP is fractional."""
    assert "flipped_sbm" in E.FAMILIES and "noisy_cluster" in E.FAMILIES
    cfg = E.RatioConfig(n=16, families=("noisy_cluster", "flipped_sbm"), instances=2, cs=(2.0,), runs=2)
    res = E.ratio_vs_c(cfg, seed=0)
    np.testing.assert_array_equal(res.fractional[0], 0.0)  # noisy clusters: integral x*
    assert np.all(res.fractional[1] >= 0.2)  # flipped SBM: fractional x*
    np.testing.assert_array_equal(res.imputed_fractional[0], 0.0)  # so every rounding rule agrees there
    for rule in ("cmsy", "threshold"):
        np.testing.assert_array_equal(res.imputed_ratio[rule][0], res.imputed_ratio["acn"][0])


def test_cutting_plane_matches_full_lp_and_keeps_few_active_rows():
    res = E.cutting_plane_vs_full(E.CuttingPlaneConfig(ns=(8, 12), repeats=1), seed=0)
    assert np.all(res.gap <= 1e-7)
    assert np.all(res.active_full <= res.n_pairs)
    assert np.all(res.rows_cut <= res.rows_full)


def test_witness_transition_follows_poisson_coverage():
    res = E.witness_transition(E.WitnessConfig(ns=(120,), cs=(0.5, 1.0), trials=3), seed=0)
    assert np.all(np.abs(res.coverage - coverage_theory(res.cs)) < 0.05)
    assert np.all((res.all_covered >= 0) & (res.all_covered <= 1))


def test_adversarial_ratio_grows_with_n():
    res = E.adversarial_ratio_vs_n(E.AdversarialConfig(ns=(10, 40), trials=2, runs=3), seed=0)
    for method in E.ADVERSARIAL_METHODS:
        assert np.all(res.ratio[method] >= 1 - 1e-9)
        assert res.ratio[method][1].mean() > 2 * res.ratio[method][0].mean()


def test_vc_and_coreset_experiments_small():
    vc = E.vc_experiment(E.VCConfig(ns=(2, 3, 4)))
    np.testing.assert_array_equal(vc.dimensions, vc.ns - 1)
    core = E.coreset_error_vs_S(
        E.CoresetConfig(n=10, family="random_metric", sizes=(50, 800), pool_random=20, repeats=2), seed=0
    )
    assert core.mean("weighted")[1] < core.mean("weighted")[0]
