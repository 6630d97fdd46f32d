"""Chapter 01's claim criteria: each passes exactly when the old boolean check did, with its margin."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from neurips26.criteria import above, at_least, decide, decide_over_seeds
from neurips26.thwf import claim_criteria as cc
from neurips26.thwf.experiments import (
    ConvergenceResult,
    NoiseSweepResult,
    PhaseTransitionConfig,
    PhaseTransitionResult,
)

M_GRID = np.array([32, 40, 48, 64, 80, 96, 128])
S_GRID = np.array([4, 8])
METHODS = ("thwf", "rgd", "sparse_init_no_threshold")


def phase_result(thwf, rgd, ablation) -> PhaseTransitionResult:
    """A phase transition with the given success-rate rows (one per s) of the three claim methods."""
    success = np.array([thwf, rgd, ablation], dtype=float)
    config = PhaseTransitionConfig(k=32, n=32, m_grid=tuple(M_GRID.tolist()), s_grid=(4, 8), methods=METHODS)
    errors = np.zeros(success.shape + (1,))
    return PhaseTransitionResult(config, METHODS, M_GRID, S_GRID, success, errors, np.ones(3))


THWF = [[0, 0.2, 0.6, 0.95, 1, 1, 1], [0, 0, 0, 0.3, 0.7, 0.9, 1]]  # M50 between 40-48 and 64-80
RGD = [[0, 0, 0, 0, 0.4, 0.8, 1], [0, 0, 0, 0, 0.3, 0.6, 1]]  # M50 between 80-96 (both)
ABLATION = [[0, 0, 0, 0.4, 0.9, 1, 1], [0, 0, 0, 0, 0.2, 0.7, 1]]


def test_claim_phase_config_keeps_only_the_compared_methods():
    config = cc.claim_phase_config(PhaseTransitionConfig.for_scale("smoke"))
    assert config.methods == cc.PHASE_CLAIM_METHODS and config.k == 16
    with pytest.raises(TypeError, match="PhaseTransitionConfig"):
        cc.claim_phase_config("smoke")


def test_boundary_linear_gives_two_criteria_with_margins():
    phase = phase_result(THWF, RGD, ABLATION)
    slope = cc.thwf_slope(phase)
    low, high = cc.boundary_linear_criteria(phase)
    assert low.value == high.value == pytest.approx(slope)
    assert (low.threshold, low.direction, high.threshold, high.direction) == (0.7, ">=", 1.4, "<=")
    assert low.passed == (slope >= 0.7) and high.passed == (slope <= 1.4)
    assert low.relative_margin == pytest.approx((slope - 0.7) / 0.7)
    # no fitted slope (ThWF's boundary off the grid at one s): both fail
    flat = phase_result([THWF[0], [0] * 7], RGD, ABLATION)
    assert all(not c.passed and math.isnan(c.value) for c in cc.boundary_linear_criteria(flat))


def test_below_rgd_uses_the_worst_ratio_and_the_grid_bound():
    phase = phase_result(THWF, RGD, ABLATION)
    ratios = cc.below_rgd_ratios(phase)
    np.testing.assert_allclose(ratios, phase.m50("thwf") / phase.m50("rgd"))
    (criterion,) = cc.below_rgd_criteria(phase)
    assert criterion.value == pytest.approx(ratios.max()) and criterion.passed
    assert criterion.relative_margin == pytest.approx(1 - ratios.max())
    # RGD never reaches 50 % at s=8: bounded by ThWF's M50 / the largest M, and it passes
    beyond = phase_result(THWF, [RGD[0], [0, 0, 0, 0, 0.1, 0.2, 0.4]], ABLATION)
    assert cc.below_rgd_ratios(beyond)[1] == pytest.approx(beyond.m50("thwf")[1] / 128)
    assert cc.below_rgd_criteria(beyond)[0].passed
    # ThWF above RGD at one s fails; so does a ThWF boundary outside the grid
    above = phase_result(THWF, [RGD[0], [0, 0, 0.6, 1, 1, 1, 1]], ABLATION)
    assert not cc.below_rgd_criteria(above)[0].passed
    off = phase_result([THWF[0], [0] * 7], RGD, ABLATION)
    assert math.isnan(cc.below_rgd_ratios(off)[1]) and not cc.below_rgd_criteria(off)[0].passed


def test_thresholding_one_criterion_per_s_at_thwfs_first_good_m():
    phase = phase_result(THWF, RGD, ABLATION)
    assert cc.first_good(phase) == {4: (64, 0.4), 8: (96, 0.7)}
    first, second = cc.thresholding_criteria(phase)
    assert (first.value, first.threshold, first.direction, first.passed) == (0.4, 0.5, "<=", True)
    assert (second.value, second.passed) == (0.7, False)
    assert decide([first, second]).verdict == "partly"
    never = phase_result([THWF[0], [0, 0, 0, 0.3, 0.5, 0.6, 0.8]], RGD, ABLATION)
    assert cc.first_good(never)[8] is None and not cc.thresholding_criteria(never)[1].passed
    # names do not depend on the seed's M: the seeds can be decided together
    decision = decide_over_seeds({0: cc.thresholding_criteria(phase), 1: cc.thresholding_criteria(never)})
    assert decision.verdict == "partly"


def test_support_slope_criteria():
    gap, minimum = cc.support_slope_criteria(1.8, 0.75)
    assert gap.value == pytest.approx(1.05) and gap.threshold == 0 and gap.scale == 1.0 and gap.passed
    assert minimum.passed and minimum.relative_margin == pytest.approx(0.5 / 1.3)
    assert [c.passed for c in cc.support_slope_criteria(0.7, 0.75)] == [False, False]
    assert [c.passed for c in cc.support_slope_criteria(1.2, float("nan"))] == [False, False]


def convergence_result(rho_thwf, r2_thwf) -> ConvergenceResult:
    rho = np.stack([np.asarray(rho_thwf, float), np.full_like(np.asarray(rho_thwf, float), 0.9)])
    r2 = np.stack([np.asarray(r2_thwf, float), np.ones_like(np.asarray(r2_thwf, float))])
    m = np.arange(96, 96 + 32 * rho.shape[1], 32)
    return ConvergenceResult(None, ("thwf", "rgd"), m, np.zeros(rho.shape + (2,)), rho, r2, np.ones(2))


def test_convergence_criteria_match_the_old_checks():
    good = convergence_result([[0.8, 0.8], [0.7, 0.7], [0.6, 0.6]], [[0.999, 0.9995], [0.999, 1], [1, 1]])
    r2, rho, monotone = cc.convergence_criteria(good)
    assert r2.value == pytest.approx(0.999) and r2.scale == pytest.approx(0.02) and r2.passed
    assert r2.relative_margin == pytest.approx(0.019 / 0.02)
    assert rho.value == pytest.approx(0.8) and rho.passed
    assert monotone.value == pytest.approx(-0.1) and monotone.scale == pytest.approx(0.8) and monotone.passed
    # a trial without a straight tail fails R²; a rising rate fails the monotone criterion
    bad = convergence_result([[0.8, 0.8], [0.85, 0.85]], [[np.nan, 0.999], [0.999, 0.999]])
    r2, rho, monotone = cc.convergence_criteria(bad)
    assert not r2.passed and rho.passed and not monotone.passed
    assert monotone.value == pytest.approx(0.05)


def test_noise_criteria_split_the_band_and_check_divergence():
    noise = NoiseSweepResult(
        None, np.array([1e-3, 1e-2]), np.array([[5e-4, 6e-4], [5e-3, 6e-3]]), None, 1.0, 0
    )
    low, high, finite = cc.noise_criteria(noise)
    assert low.passed and high.passed and finite.passed and finite.value == pytest.approx(6e-3)
    steep = NoiseSweepResult(None, noise.noise_levels, np.array([[1e-4, 1.0], [1.0, np.inf]]), None, 1.5, 0)
    low, high, finite = cc.noise_criteria(steep)
    assert low.passed and not high.passed and not finite.passed


def deblur(thwf, dense, blurred, overlap=1.0):
    method = SimpleNamespace
    return SimpleNamespace(
        methods={
            "thwf": method(psnr=thwf, kernel_support_recovered=overlap == 1.0),
            "dense_wf": method(psnr=dense, kernel_support_recovered=False),
            "blurred": method(psnr=blurred, kernel_support_recovered=False),
        }
    )


def test_image_criteria_pool_the_seeds():
    runs = [deblur(28.0, 25.1, 25.0), deblur(27.0, 24.2, 24.0), deblur(29.0, 26.3, 26.0, overlap=0.5)]
    median_thwf, median_dense, step = cc.psnr_order_criteria(runs)
    assert median_thwf.value == 28.0 and median_thwf.threshold == 25.1 and median_thwf.passed
    assert median_thwf.relative_margin == pytest.approx(2.9 / cc.DB_SCALE)
    assert median_dense.passed and step.value == pytest.approx(0.1) and step.passed
    assert cc.DB_SCALE == pytest.approx(10 / np.log(10))
    runs.append(deblur(27.5, 24.0, 24.1))  # the ordering fails on one seed
    assert [c.passed for c in cc.psnr_order_criteria(runs)] == [True, True, False]
    (support,) = cc.kernel_support_criteria(runs)
    assert support.value == 3 and support.threshold == 2 and support.passed  # 3 of 4 >= half
    assert not cc.kernel_support_criteria(runs + [deblur(1, 0, -1, 0.5)] * 3)[0].passed  # 3 of 7
    with pytest.raises(ValueError):
        cc.psnr_order_criteria([])


def test_image_criteria_are_kept_per_kernel_case_with_their_thresholds():
    per_case = {
        "random": [at_least("seeds with exact support", 1, 2.5)],
        "centred": [at_least("seeds with exact support", 5, 2.5), above("gap", 1.0, 0.0, scale=1.0)],
    }
    merged = cc.by_kernel_case(per_case)
    assert [c.name for c in merged] == [
        "random supports: seeds with exact support",
        "centred supports: seeds with exact support",
        "centred supports: gap",
    ]
    assert [c.threshold for c in merged] == [2.5, 2.5, 0.0]
    assert decide(merged).verdict == "partly"
    with pytest.raises(ValueError, match="per_case"):
        cc.by_kernel_case({})
