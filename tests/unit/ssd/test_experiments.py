"""Claim experiments of chapter 05: configs validate, D1 has power, smoke runs keep their invariants."""

import dataclasses

import numpy as np
import pytest
import scipy.stats
import torch

from neurips26.ssd.covariance import masked_covariance, monte_carlo_covariance
from neurips26.ssd.covariance_checks import (
    BetaSpectrumConfig,
    CovarianceCheckConfig,
    beta_spectrum_digits,
    bonferroni_bound,
    covariance_check,
    entry_z_scores,
)
from neurips26.ssd.data import digits_8
from neurips26.ssd.field_score import PopulationScoreConfig, population_score
from neurips26.ssd.sample_quality import QualityConfig, quality_vs_eta
from neurips26.ssd.small_data import MemorisationConfig, StabilityConfig, memorisation, stability_curve
from neurips26.ssd.twin_consistency import ConsistencyConfig, global_consistency
from neurips26.train.device import torch_threads

CONFIGS = (
    CovarianceCheckConfig,
    BetaSpectrumConfig,
    QualityConfig,
    StabilityConfig,
    MemorisationConfig,
    PopulationScoreConfig,
    ConsistencyConfig,
)


@pytest.mark.parametrize("config_class", CONFIGS)
@pytest.mark.parametrize("scale", ["smoke", "default", "paper"])
def test_every_config_exists_at_every_scale_and_is_frozen(config_class, scale):
    config = config_class.for_scale(scale)
    assert isinstance(config, config_class)
    field = dataclasses.fields(config)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(config, field, None)


@pytest.mark.parametrize("config_class", CONFIGS)
def test_for_scale_rejects_unknown_scales(config_class):
    with pytest.raises(ValueError, match="scale"):
        config_class.for_scale("huge")


def test_smoke_uses_8x8_models_and_eta_0_and_0_98():
    assert QualityConfig.for_scale("smoke").models == ("digits-eta0", "digits-eta0.98")
    assert PopulationScoreConfig.for_scale("smoke").etas == (0.0, 0.98)
    for config_class in (QualityConfig, StabilityConfig, MemorisationConfig, ConsistencyConfig):
        assert config_class.for_scale("smoke").checkpoints == "smoke"


@pytest.mark.parametrize(
    ("config_class", "kwargs", "error", "name"),
    [
        (CovarianceCheckConfig, {"etas": (0.9, 0.5)}, ValueError, "etas"),
        (CovarianceCheckConfig, {"etas": (0.5, 1.0)}, ValueError, "eta"),
        (CovarianceCheckConfig, {"alpha": 0.0}, ValueError, "alpha"),
        (CovarianceCheckConfig, {"field_masks": 0}, ValueError, "field_masks"),
        (BetaSpectrumConfig, {"top_modes": 0}, ValueError, "top_modes"),
        (QualityConfig, {"models": ("twins-eta0",)}, ValueError, "models"),
        (QualityConfig, {"models": ("digits-eta0.9", "digits-eta0")}, ValueError, "models"),
        (QualityConfig, {"models": ("nope",)}, ValueError, "models"),
        (QualityConfig, {"models": ()}, TypeError, "models"),
        (QualityConfig, {"baselines": ("digits-eta0",)}, ValueError, "baselines"),
        (QualityConfig, {"n_samples": 1}, ValueError, "n_samples"),
        (QualityConfig, {"checkpoints": "huge"}, ValueError, "checkpoints"),
        (QualityConfig, {"keep": 10_000}, ValueError, "keep"),
        (QualityConfig, {"n_sets": 1}, ValueError, "n_sets"),
        (QualityConfig, {"models": ("digits-eta0",)}, ValueError, "models"),
        (StabilityConfig, {"n_sets": 1}, ValueError, "n_sets"),
        (StabilityConfig, {"tail": 0}, ValueError, "tail"),
        (StabilityConfig, {"spread_models": ("digits-eta0",)}, ValueError, "spread_models"),
        (StabilityConfig, {"metric": "loss"}, ValueError, "metric"),
        (MemorisationConfig, {"models": ("digits-eta0", "digits64-eta0")}, ValueError, "models"),
        (MemorisationConfig, {"ratio": 0.0}, ValueError, "ratio"),
        (PopulationScoreConfig, {"ns": (64, 16)}, ValueError, "ns"),
        (PopulationScoreConfig, {"mask_type": "stripes"}, ValueError, "mask_type"),
        (PopulationScoreConfig, {"steps": 0}, ValueError, "steps"),
        (PopulationScoreConfig, {"sigmas": (0.1, -1.0)}, ValueError, "sigmas"),
        (ConsistencyConfig, {"models": ("digits-eta0",)}, ValueError, "models"),
    ],
)
def test_configs_reject_bad_values_naming_the_field(config_class, kwargs, error, name):
    with pytest.raises(error, match=name):
        config_class(**kwargs)


def test_experiments_reject_a_config_of_another_experiment():
    with pytest.raises(TypeError, match="config"):
        covariance_check(BetaSpectrumConfig())
    with pytest.raises(TypeError, match="config"):
        quality_vs_eta(StabilityConfig())


# --------------------------------------------------------------------------------------------
# D1 and D2: closed forms, no training


def test_bonferroni_bound_matches_the_normal_quantile():
    assert bonferroni_bound(1, 0.05) == pytest.approx(1.959964, abs=1e-6)
    assert bonferroni_bound(1000, 0.05) == pytest.approx(scipy.stats.norm.isf(0.05 / 2000))
    assert bonferroni_bound(10, 0.01) < bonferroni_bound(100, 0.01)
    with pytest.raises(ValueError, match="n_tests"):
        bonferroni_bound(0)


def test_entry_z_scores_use_the_upper_triangle_and_demand_exactness_where_se_is_zero():
    exact = np.array([[1.0, 2.0], [2.0, 3.0]])
    se = np.array([[0.5, 0.0], [0.0, 0.0]])
    estimate = np.array([[2.0, 2.0], [99.0, 3.0]])  # the lower triangle is ignored
    np.testing.assert_array_equal(entry_z_scores(estimate, se, exact), [2.0, 0.0, 0.0])
    estimate[0, 1] = 2.5
    assert entry_z_scores(estimate, se, exact)[1] == np.inf


def test_covariance_check_passes_at_default_sizes():
    result = covariance_check(CovarianceCheckConfig.for_scale("default"), seed=0)
    assert result.passed.shape == (2, 2) and result.passed.all()
    assert result.n_entries.tolist() == [2080, 2080]
    assert result.bound == pytest.approx(bonferroni_bound(4 * 2080, 0.05))
    assert np.all(result.fraction_beyond_3se <= 0.01)


def test_the_d1_check_rejects_a_wrong_formula():
    """Power: dropping the diagonal term η(1 − η)D of Eq. (3) is caught by the same z-scores."""
    X = digits_8()[0].reshape(-1, 64).double().numpy()
    mean, cov = X.mean(axis=0), np.cov(X, rowvar=False, bias=True)
    estimate, se = monte_carlo_covariance(X, 0.5, 20, 0, "bernoulli")
    right = masked_covariance(cov, 0.5, mean=mean, mask_type="bernoulli")
    wrong = right - np.diag(0.25 * (np.diag(cov) + mean**2))
    bound = bonferroni_bound(2080, 0.01)
    assert np.abs(entry_z_scores(estimate, se, right)).max() < bound
    assert np.abs(entry_z_scores(estimate, se, wrong)).max() > bound


def test_beta_spectrum_of_digits_is_shrinkage_plus_a_boost_that_grows_as_lambda_falls():
    result = beta_spectrum_digits(BetaSpectrumConfig())
    etas = result.etas
    assert np.all(np.diff(result.eigenvalues) <= 0) and np.all(result.eigenvalues > 0)
    np.testing.assert_allclose(result.floor, (1 - etas) ** 2)
    assert np.all(result.beta >= result.floor[:, None])  # β = (1 − η)² + (non-negative boost)
    # Eq. (5): the boost is η(1 − η) times a factor u'Du/λ that does not depend on η
    factor = (result.beta - result.floor[:, None]) / (etas * (1 - etas))[:, None]
    np.testing.assert_allclose(factor, np.broadcast_to(factor[0], factor.shape), rtol=1e-9)
    assert np.all(result.tail_ratio > result.top_ratio)
    assert np.all(result.rank_correlation > 0.3)


# --------------------------------------------------------------------------------------------
# smoke runs (the 8×8 models train through a temporary cache)


@pytest.fixture(scope="module")
def smoke_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NEURIPS26_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        mp.setenv("NEURIPS26_PROGRESS", "0")
        mp.delenv("NEURIPS26_NO_CACHE", raising=False)
        yield


@pytest.fixture(scope="module")
def quality(smoke_cache):
    return quality_vs_eta(QualityConfig.for_scale("smoke"), seed=0, verbose=False)


def test_quality_vs_eta_smoke(quality, smoke_cache):
    config = quality.config
    assert quality.models == config.models and quality.etas.tolist() == [0.0, 0.98]
    assert np.all(quality.proxy_fid > 0) and quality.baseline_fid.shape == (1,)
    assert quality.data_fid < quality.proxy_fid.min()  # real digits beat 8-update models
    assert np.isfinite(quality.relative_gap)
    assert 0 < quality.classifier_accuracy <= 1
    for name in config.models + config.baselines:
        assert quality.samples[name].shape == (config.keep, 1, 8, 8)
    again = quality_vs_eta(config, seed=0, verbose=False)  # from the cache
    np.testing.assert_array_equal(again.proxy_fid, quality.proxy_fid)


def test_quality_measures_independent_sample_sets_of_the_compared_pair(quality, smoke_cache):
    config = quality.config
    assert quality.set_models == (config.models[0], config.models[-1])
    assert quality.set_fid.shape == (2, config.n_sets)
    np.testing.assert_array_equal(quality.set_fid[:, 0], quality.proxy_fid[[0, -1]])  # set 0 is shared
    assert len(set(quality.set_fid[0].tolist())) == config.n_sets  # new noise per set
    np.testing.assert_allclose(quality.set_ratio, quality.set_fid[1] / quality.set_fid[0])


def test_stability_curve_smoke(quality, smoke_cache):
    result = stability_curve(StabilityConfig.for_scale("smoke"), verbose=False)
    assert result.curves.shape == (3, 2) and result.steps.tolist() == [4.0, 8.0]
    assert np.all(result.end_minus_best >= 0)
    tail = result.config.tail
    np.testing.assert_allclose(result.tail_mean, result.curves[:, -tail:].mean(axis=1))
    np.testing.assert_allclose(result.tail_gap, result.tail_mean - result.best)
    assert result.set_fid.shape == (2, result.config.n_sets) and result.set_samples == 16
    assert np.all(result.set_fid > 0) and result.set_fid[0, 0] != result.set_fid[0, 1]
    early = result.models.index("digits64-early")
    plain = result.models.index("digits64-eta0")
    np.testing.assert_array_equal(result.curves[early], result.curves[plain])  # one run
    assert result.end[early] == result.best[early]
    assert result.end[plain] == result.curves[plain, -1]
    assert result.losses.shape == (3, result.loss_steps.size)


def test_memorisation_smoke(quality, smoke_cache):
    result = memorisation(MemorisationConfig.for_scale("smoke"), seed=0, verbose=False)
    n = result.config.n_samples
    assert result.ratios.shape == (3, n) and result.nearest.shape == (3, n)
    np.testing.assert_allclose(result.rates, (result.ratios < result.config.ratio).mean(axis=1))
    assert result.train.shape == (64, 1, 8, 8)
    assert result.empirical_rate == 1.0  # the training-set optimum reproduces training images


def test_global_consistency_smoke(smoke_cache):
    result = global_consistency(ConsistencyConfig.for_scale("smoke"), seed=0, verbose=False)
    assert result.asymmetry.shape == result.mismatch.shape == (2, 64)
    assert np.all((result.asymmetry >= 0) & (result.asymmetry <= 2))
    assert result.data_asymmetry == 0.0 and result.data_mismatch == 0.0  # training twins are exact
    assert result.samples["twins-eta0.98"].shape == (8, 3, 8, 8)
    np.testing.assert_allclose(result.mean_mismatch, result.mismatch.mean(axis=1))


def test_population_score_smoke_and_its_reference_rows(smoke_cache):
    result = population_score(PopulationScoreConfig.for_scale("smoke"), seed=0, verbose=False)
    assert result.error.shape == (1, 2, 2) and result.per_sigma.shape == (1, 2, 2, 8)
    np.testing.assert_allclose(result.error, result.per_sigma.mean(axis=-1))
    assert np.all(result.error > 0) and np.all(np.isfinite(result.error))
    assert np.all(result.wiener < 1e-20)  # the exact denoiser has the exact score
    # the empirical optimum memorises: its score is worst at small noise, where it snaps to training points
    assert np.all(result.empirical_per_sigma[..., 0] > result.empirical_per_sigma[..., -1])
    assert np.all(result.empirical[:, 0] > 1.0)
    assert result.at(16, 0.98) == result.mean_error()[0, 1]
    with pytest.raises(ValueError, match="cell"):
        result.at(32, 0.0)


def test_population_score_is_reproducible_without_the_cache(smoke_cache):
    config = PopulationScoreConfig(ns=(16,), etas=(0.0, 0.9), steps=3, batch=8, n_eval=16)
    first = population_score(config, seed=3, use_cache=False, verbose=False)
    second = population_score(config, seed=3, use_cache=False, verbose=False)
    np.testing.assert_array_equal(first.per_sigma, second.per_sigma)
    third = population_score(config, seed=4, use_cache=False, verbose=False)
    assert not np.array_equal(first.per_sigma, third.per_sigma)


def test_torch_threads_restores_the_thread_count_even_after_an_error():
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError), torch_threads(1):
        assert torch.get_num_threads() == 1
        raise RuntimeError("boom")
    assert torch.get_num_threads() == before
