"""Claim experiments: configs, boundary/slope/rate fits on known inputs, smoke runs."""

import dataclasses
import pickle

import numpy as np
import pytest

from neurips26.thwf.experiments import (
    METHODS,
    ConvergenceConfig,
    ConvexComparisonConfig,
    NoiseSweepConfig,
    PhaseTransitionConfig,
    SupportRecoveryConfig,
    boundary_m50,
    convergence,
    convex_comparison,
    fit_linear_rate,
    noise_sweep,
    phase_transition,
    support_recovery,
)

CONFIGS = (
    PhaseTransitionConfig,
    SupportRecoveryConfig,
    ConvergenceConfig,
    NoiseSweepConfig,
    ConvexComparisonConfig,
)


@pytest.mark.parametrize("config_class", CONFIGS)
@pytest.mark.parametrize("scale", ["smoke", "default", "paper"])
def test_every_config_exists_at_every_scale_and_is_frozen(config_class, scale):
    config = config_class.for_scale(scale)
    assert isinstance(config, config_class)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.k = 3


def test_for_scale_rejects_unknown_scales():
    with pytest.raises(ValueError, match="scale"):
        PhaseTransitionConfig.for_scale("huge")


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"m_grid": (64, 48)}, ValueError, "m_grid"),
        ({"m_grid": (16, 64)}, ValueError, "m_grid"),  # M < K
        ({"s_grid": (4, 40)}, ValueError, "s_grid"),
        ({"methods": ("thwf", "magic")}, ValueError, "methods"),
        ({"methods": ()}, TypeError, "methods"),
        ({"trials": 0}, ValueError, "trials"),
        ({"tol": -1.0}, ValueError, "tol"),
        ({"m_grid": [32, 64]}, TypeError, "m_grid"),
    ],
)
def test_phase_transition_config_validates_its_fields(kwargs, error, name):
    with pytest.raises(error, match=name):
        PhaseTransitionConfig(**kwargs)


def test_other_configs_validate_their_fields():
    with pytest.raises(ValueError, match="rule"):
        SupportRecoveryConfig(rule="oracle")
    with pytest.raises(ValueError, match="s"):
        ConvergenceConfig(s=40)
    with pytest.raises(ValueError, match="noise_levels"):
        NoiseSweepConfig(noise_levels=(0.1, 0.01))
    with pytest.raises(ValueError, match="k"):
        ConvexComparisonConfig(k=30, n=30, m_values=(30, 60))


def test_boundary_m50_interpolates_in_log_m():
    m = np.array([10.0, 20.0, 40.0, 80.0])
    assert boundary_m50(m, np.array([0.0, 0.25, 0.75, 1.0])) == pytest.approx(np.sqrt(20 * 40))
    assert boundary_m50(m, np.array([0.0, 0.0, 0.5, 1.0])) == pytest.approx(40.0)
    assert np.isnan(boundary_m50(m, np.array([0.6, 0.8, 1.0, 1.0])))  # below the grid
    assert np.isnan(boundary_m50(m, np.array([0.0, 0.1, 0.2, 0.4])))  # never reached
    rows = boundary_m50(m, np.array([[0.0, 0.25, 0.75, 1.0], [0.0, 0.0, 0.0, 1.0]]))
    np.testing.assert_allclose(rows, [np.sqrt(800), np.sqrt(40 * 80)])
    with pytest.raises(ValueError, match="rates"):
        boundary_m50(m, np.zeros(3))


def test_fit_linear_rate_on_a_geometric_sequence_with_a_floor():
    t = np.arange(80)
    errors = np.maximum(0.3 * 0.6**t, 1e-16)
    errors[:3] = [1.0, 0.9, 0.5]  # a non-linear start, outside the window
    rho, r2, start, stop = fit_linear_rate(errors)
    assert rho == pytest.approx(0.6) and r2 == pytest.approx(1.0)
    assert errors[start] <= 1e-2 and errors[stop - 1] >= 1e-12 and errors[stop] < 1e-12
    assert np.isnan(fit_linear_rate(np.full(50, 0.5))[0])  # never enters the basin


def test_phase_transition_smoke_run_shapes_and_determinism():
    config = PhaseTransitionConfig.for_scale("smoke")
    result = phase_transition(config, seed=0)
    n_s, n_m = len(config.s_grid), len(config.m_grid)
    assert result.methods == METHODS
    assert result.success.shape == (len(METHODS), n_s, n_m)
    assert result.final_error.shape == (len(METHODS), n_s, n_m, config.trials)
    assert np.all((result.success >= 0) & (result.success <= 1))
    assert result.rates("thwf")[:, -1].min() == 1.0  # ThWF succeeds at the largest smoke M
    assert result.m50("thwf").shape == (n_s,)
    assert np.all(result.seconds > 0)
    small = dataclasses.replace(config, methods=("thwf",), m_grid=(32, 64))
    np.testing.assert_array_equal(
        phase_transition(small, 0).final_error, phase_transition(small, 0).final_error
    )
    pickle.loads(pickle.dumps(result))


def test_support_recovery_smoke_run():
    config = SupportRecoveryConfig.for_scale("smoke")
    result = support_recovery(config, seed=0)
    assert result.probability.shape == (len(config.s_grid), len(config.m_grid))
    assert np.all(result.probability <= np.minimum(result.probability_h, result.probability_x))
    assert np.all(result.probability[:, -1] == 1.0)  # exact at the largest M
    assert result.m50.shape == (len(config.s_grid),)


def test_convergence_smoke_run_fits_a_linear_rate():
    result = convergence(ConvergenceConfig.for_scale("smoke"), seed=0)
    assert result.errors.shape[:3] == (2, 2, 2)
    rho = result.median_rho("thwf")
    assert np.all((rho > 0) & (rho < 1))
    assert np.all(result.min_r2("thwf") > 0.95)


def test_noise_sweep_smoke_run_is_linear_in_the_noise():
    result = noise_sweep(NoiseSweepConfig.for_scale("smoke"), seed=0)
    assert result.final_error.shape == (3, 2)
    assert 0.7 < result.slope < 1.3
    assert np.all(np.diff(result.median_error) > 0)


def test_convex_comparison_smoke_run():
    config = ConvexComparisonConfig.for_scale("smoke")
    result = convex_comparison(config, seed=0)
    assert result.methods == ("convex", "thwf")
    assert result.success.shape == (2, len(config.m_values))
    assert np.all(result.seconds > 0)
    # timed side by side: per M, seconds are medians over the rounds, the ratio a median of paired ratios
    assert len(result.timings) == len(config.m_values) and result.time_ratio_spread.shape == (2, 2)
    for j, timing in enumerate(result.timings):
        assert timing.names == ("convex", "thwf") and timing.rounds == config.rounds
        assert timing.warmup == (1 if j == 0 else 0)
        assert result.seconds[0, j] == pytest.approx(timing.median("convex") / config.trials)
        assert result.time_ratio[j] == timing.ratio("convex", "thwf")
        low, high = result.time_ratio_spread[j]
        assert 0 < low <= result.time_ratio[j] <= high
    with pytest.raises(ValueError, match="rounds"):
        dataclasses.replace(config, rounds=0)


def test_experiments_reject_wrong_configs_and_seeds():
    with pytest.raises(TypeError, match="config"):
        phase_transition(SupportRecoveryConfig.for_scale("smoke"))
    with pytest.raises(ValueError, match="seed"):
        noise_sweep(NoiseSweepConfig.for_scale("smoke"), seed=-1)


def test_single_threaded_blas_limits_every_blas_pool_to_one_thread():
    from threadpoolctl import threadpool_info

    from neurips26.thwf.experiments import single_threaded_blas

    with single_threaded_blas():
        blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
        assert blas and all(pool["num_threads"] == 1 for pool in blas)
