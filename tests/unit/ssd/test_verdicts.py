"""The criteria of D1–D7 translate the old pass/fail checks exactly and carry their margins."""

import dataclasses
import math

import numpy as np
import pytest
import scipy.stats

from neurips26.criteria import decide, lower
from neurips26.ssd.covariance_checks import (
    BetaSpectrumConfig,
    CovarianceCheckConfig,
    CovarianceCheckResult,
    beta_spectrum_digits,
)
from neurips26.ssd.field_score import PopulationScoreConfig, PopulationScoreResult
from neurips26.ssd.sample_quality import QualityConfig, QualityResult
from neurips26.ssd.small_data import MemorisationConfig, MemorisationResult, StabilityConfig, StabilityResult
from neurips26.ssd.twin_consistency import ConsistencyConfig, ConsistencyResult
from neurips26.ssd.verdicts import (
    consistency_criteria,
    covariance_criteria,
    memorisation_criteria,
    population_criteria,
    quality_criteria,
    spectrum_criteria,
    stability_criteria,
    stability_noise,
    t_half_width,
)


def test_lower_passes_exactly_when_smaller_with_a_margin_relative_to_the_larger_value():
    c = lower("a < b", 0.5, 2.0, unit=1.0)
    assert c.passed and c.threshold == 0 and c.scale == 2.0 and c.relative_margin == pytest.approx(0.75)
    assert not lower("a < b", 2.0, 2.0, unit=1.0).passed
    worse = lower("a < b", 3.0, 1.0, unit=1.0)
    assert not worse.passed and worse.relative_margin == pytest.approx(-2.0 / 3.0)
    tie = lower("a < b", 0.0, 0.0, unit=0.25)
    assert not tie.passed and tie.scale == 0.25


def _covariance(fraction, max_z, bound=4.5):
    config = CovarianceCheckConfig()
    return CovarianceCheckResult(
        config,
        ("field", "digits"),
        np.array(config.etas),
        np.array(fraction, dtype=float),
        np.array(max_z, dtype=float),
        np.zeros((2, 2)),
        np.array([2080, 2080]),
        bound,
    )


def test_covariance_criteria_split_each_cell_into_its_two_checks():
    result = _covariance([[0.004, 0.002], [0.02, 0.001]], [[3.0, 4.6], [3.1, np.inf]])
    criteria = covariance_criteria(result)
    assert len(criteria) == 8
    by_cell = np.array([c.passed for c in criteria]).reshape(2, 2, 2).all(axis=-1)
    np.testing.assert_array_equal(by_cell, result.passed)
    inf = criteria[-1]
    assert inf.name == "digits, η = 0.9: max |z| ≤ Bonferroni bound" and not inf.passed
    assert math.isnan(inf.value)
    ok = covariance_criteria(_covariance([[0.004] * 2] * 2, [[3.0] * 2] * 2))
    assert decide(ok).verdict == "reproduced"
    assert ok[1].relative_margin == pytest.approx((4.5 - 3.0) / 4.5)


def test_spectrum_criteria_match_the_old_checks_on_the_digits():
    result = beta_spectrum_digits(BetaSpectrumConfig())
    criteria = spectrum_criteria(result, top=10)
    old = []
    for k in range(len(result.etas)):
        ratio = result.beta[k, :10] / result.floor[k]
        old.append(bool(np.all(np.abs(ratio - 1) <= 0.25)))
        old.append(bool(result.beta[k, -10:].mean() > 2 * result.beta[k, :10].mean()))
    assert [c.passed for c in criteria] == old
    assert decide(criteria).verdict == "partly"
    with pytest.raises(ValueError, match="top"):
        spectrum_criteria(result, top=0)


def _quality(set_fid):
    config = QualityConfig.for_scale("smoke")
    set_fid = np.array(set_fid, dtype=float)
    return QualityResult(
        config, config.models, np.array([0.0, 0.98]), set_fid[:, 0].copy(), (), np.array([]), 1.0, 0.9, {},
        ("digits-eta0", "digits-eta0.98"), set_fid,
    )  # fmt: skip


def test_quality_criteria_read_a_t_interval_of_the_ratio_over_sample_sets():
    # per-set ratios 1.0, 1.1, 1.2, 1.1: mean 1.1, sd 0.0816, 95 % half-width t(3) · sd / 2 = 0.130
    result = _quality([[30.0, 30.0, 30.0, 30.0], [30.0, 33.0, 36.0, 33.0]])
    np.testing.assert_allclose(result.set_ratio, [1.0, 1.1, 1.2, 1.1])
    half = scipy.stats.t.ppf(0.975, 3) * np.std([1.0, 1.1, 1.2, 1.1], ddof=1) / 2
    upper, lower_end = quality_criteria(result)
    assert upper.value == pytest.approx(1.1 + half) and lower_end.value == pytest.approx(1.1 - half)
    assert upper.threshold == lower_end.threshold == 1.15
    assert decide([upper, lower_end]).verdict == "partly"  # the interval holds 1.15: noise cannot decide
    assert decide(quality_criteria(result, max_ratio=1.3)).verdict == "reproduced"
    assert decide(quality_criteria(result, max_ratio=0.9)).verdict == "not reproduced"


def test_a_ratio_that_passes_on_one_sample_set_is_not_reproduced_inside_the_noise():
    """Set 0 alone gives 1.07 (passes 1.15), the other sets 1.4–1.8: the sets decide, not one draw."""
    result = _quality([[42.4, 30.0, 28.0, 31.0], [45.2, 42.0, 50.4, 55.8]])
    assert result.set_ratio[0] < 1.15
    assert decide(quality_criteria(result)).verdict != "reproduced"
    with pytest.raises(ValueError, match="sample sets"):
        quality_criteria(_quality([[30.0], [33.0]]))


def _stability(curves, set_fid, tail=3):
    config = dataclasses.replace(StabilityConfig.for_scale("smoke"), tail=tail, n_sets=len(set_fid[0]))
    curves = np.array(curves, dtype=float)
    steps = np.arange(1, curves.shape[1] + 1) * 250.0
    best = curves.min(axis=1)
    tail_mean = curves[:, -tail:].mean(axis=1)
    return StabilityResult(
        config, config.models, steps, curves, best, steps[curves.argmin(axis=1)], curves[:, -1],
        curves[:, -1] - best, np.array([1]), np.zeros((3, 1)), tail_mean, tail_mean - best,
        np.array(set_fid, dtype=float), 256,
    )  # fmt: skip


# The logged curves of the shipped N = 64 checkpoints (η = 0, SSD; the early-stopped row repeats η = 0)
ETA0_CURVE = [49.5, 44.9, 36.4, 40.2, 57.8, 50.4, 78.5, 41.8]
SSD_CURVE = [107.9, 101.3, 63.4, 160.9, 102.1, 64.5, 142.5, 53.5]


def test_stability_reads_the_tail_of_the_curve_not_its_last_point():
    """SSD's last value is its best (end − best = 0), but its tail (64.5, 142.5, 53.5) sits 33 above it,
    further than η = 0's tail (20.5): with little noise that is not reproduced."""
    quiet = _stability([ETA0_CURVE, SSD_CURVE, ETA0_CURVE], [[40.0, 40.5, 39.5], [50.0, 50.5, 49.5]])
    assert quiet.end_minus_best[1] == 0.0
    np.testing.assert_allclose(quiet.tail_gap[:2], [56.9 - 36.4, 86.833333 - 53.5], rtol=1e-4)
    delta, sd, half = stability_noise(quiet)
    assert delta == pytest.approx(quiet.tail_gap[1] - quiet.tail_gap[0])
    assert sd == pytest.approx(np.sqrt((0.25 + 0.25) * (1 / 3 + 1)))
    assert half == pytest.approx(scipy.stats.t.ppf(0.975, 4) * sd)
    assert decide(stability_criteria(quiet)).verdict == "not reproduced"


def test_stability_inside_the_noise_is_partly_and_a_clear_win_is_reproduced():
    noisy = _stability([ETA0_CURVE, SSD_CURVE, ETA0_CURVE], [[30.0, 45.0, 60.0], [40.0, 60.0, 80.0]])
    assert decide(stability_criteria(noisy)).verdict == "partly"
    flat_ssd = [60.0, 50.0, 45.0, 44.0, 43.0, 42.0, 42.5, 42.0]
    win = _stability([ETA0_CURVE, flat_ssd, ETA0_CURVE], [[40.0, 40.5, 39.5], [42.0, 42.5, 41.5]])
    upper, lower_end = stability_criteria(win)
    assert upper.passed and lower_end.passed and upper.scale == pytest.approx(win.tail_gap[0])


def test_stability_memorisation_population_and_consistency_compare_ssd_with_eta_0():
    memo_config = MemorisationConfig.for_scale("smoke")
    memo = MemorisationResult(
        memo_config, memo_config.models, np.array([0.0, 0.0, 0.0]), np.zeros((3, 1)), np.zeros((3, 1)), 1.0,
        np.zeros((1,)), {},
    )  # fmt: skip
    (c,) = memorisation_criteria(memo)
    assert not c.passed and c.scale == pytest.approx(1 / memo_config.n_samples)  # a tie is no reduction

    pop_config = PopulationScoreConfig.for_scale("smoke")  # ns (16, 64), etas (0, 0.98)
    error = np.array([[[40.0, 5.0], [3.75, 1.17]]])
    pop = PopulationScoreResult(
        pop_config, np.array(pop_config.ns), np.array(pop_config.etas), np.array([1.0]), error,
        error[..., None], np.zeros((1, 2)), np.zeros((1, 2, 1)), np.zeros(1), np.zeros((1, 2, 2)),
    )  # fmt: skip
    (c,) = population_criteria(pop)
    assert c.passed and c.value == pytest.approx(1.17 - 3.75) and c.scale == pytest.approx(3.75)

    twin_config = ConsistencyConfig.for_scale("smoke")
    twins = ConsistencyResult(
        twin_config,
        twin_config.models,
        asymmetry=np.array([[0.08, 0.09], [0.2, 0.22]]),
        mismatch=np.array([[0.4, 0.3], [0.1, 0.2]]),
        data_asymmetry=0.0,
        data_mismatch=0.0,
        samples={},
    )
    asym, mismatch = consistency_criteria(twins)
    assert not asym.passed and mismatch.passed
    assert decide([asym, mismatch]).verdict == "partly"


@pytest.mark.parametrize(
    "builder",
    [
        covariance_criteria,
        spectrum_criteria,
        quality_criteria,
        stability_criteria,
        memorisation_criteria,
        population_criteria,
        consistency_criteria,
    ],
)
def test_every_builder_rejects_a_wrong_result(builder):
    with pytest.raises(TypeError, match="result"):
        builder(object())


def test_t_half_width_and_its_arguments():
    assert t_half_width(2.0, 4, 3) == pytest.approx(scipy.stats.t.ppf(0.975, 3) * 2.0 / 2.0)
    assert t_half_width(0.0, 4, 3) == 0.0
    with pytest.raises(ValueError, match="level"):
        t_half_width(1.0, 4, 3, level=1.0)
    with pytest.raises(ValueError, match="df"):
        t_half_width(1.0, 4, 0)
    with pytest.raises(ValueError, match="sd"):
        t_half_width(-1.0, 4, 3)
