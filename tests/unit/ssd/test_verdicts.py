"""The criteria of D1–D7 translate the old pass/fail checks exactly and carry their margins."""

import math

import numpy as np
import pytest

from neurips26.criteria import decide, lower
from neurips26.ssd.experiments import (
    BetaSpectrumConfig,
    ConsistencyConfig,
    ConsistencyResult,
    CovarianceCheckConfig,
    CovarianceCheckResult,
    MemorisationConfig,
    MemorisationResult,
    PopulationScoreConfig,
    PopulationScoreResult,
    QualityConfig,
    QualityResult,
    StabilityConfig,
    StabilityResult,
    beta_spectrum_digits,
)
from neurips26.ssd.verdicts import (
    consistency_criteria,
    covariance_criteria,
    memorisation_criteria,
    population_criteria,
    quality_criteria,
    spectrum_criteria,
    stability_criteria,
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


def test_quality_criteria_is_the_fid_ratio_against_1_15():
    config = QualityConfig.for_scale("smoke")
    result = QualityResult(
        config, config.models, np.array([0.0, 0.98]), np.array([30.0, 33.0]), (), np.array([]), 1.0, 0.9, {}
    )
    (c,) = quality_criteria(result)
    assert c.passed and c.value == pytest.approx(1.1) and c.threshold == 1.15
    (c,) = quality_criteria(result, max_ratio=1.05)
    assert not c.passed


def test_stability_memorisation_population_and_consistency_compare_ssd_with_eta_0():
    stab_config = StabilityConfig.for_scale("smoke")  # eta0, eta0.98, early
    stab = StabilityResult(
        stab_config,
        stab_config.models,
        np.array([1, 2]),
        np.zeros((3, 2)),
        best=np.array([36.4, 53.5, 36.4]),
        best_step=np.array([1, 2, 1]),
        end=np.array([41.8, 53.5, 36.4]),
        end_minus_best=np.array([5.4, 0.0, 0.0]),
        loss_steps=np.array([1]),
        losses=np.zeros((3, 1)),
    )
    (c,) = stability_criteria(stab)
    assert c.passed and c.value == pytest.approx(-5.4) and c.relative_margin == pytest.approx(1.0)

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
