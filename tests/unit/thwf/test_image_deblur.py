"""Invariants of the image-deblurring methods, quality measures and experiment of chapter 01."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest
import scipy.fft

from neurips26.thwf.image_deblur import (
    dense_wf_2d,
    discrepancy_regularization,
    initial_estimate,
    normalize_kernel_gain,
    oracle_deconvolution,
    oracle_sparse_deconvolution,
    support_screening_init,
    thwf_2d,
    tikhonov_residual_norm,
)
from neurips26.thwf.image_experiment import METHODS, ImageDeblurConfig, deblur_comparison
from neurips26.thwf.image_model import (
    embed_kernel,
    forward,
    loss,
    make_deblur_problem,
    sparse_test_image,
)
from neurips26.thwf.image_quality import (
    kernel_support,
    kernel_support_overlap,
    kernel_support_recovered,
    psnr,
    ssim,
)


@pytest.fixture(scope="module")
def small_problem():
    """32×32 crop, 5×5 window, 3 taps, 100 coefficients, 1 % noise (the smoke sizes)."""
    return make_deblur_problem(size=32, window=5, s_h=3, s_x=100, noise_level=0.01, seed=0)


def _well_conditioned_kernel() -> np.ndarray:
    # centre 0.6, other taps 0.4 in total: |K(ω)| >= 0.6 − 0.4 = 0.2 at every frequency
    kernel = np.zeros((5, 5))
    kernel[2, 2], kernel[2, 3], kernel[1, 3], kernel[3, 1] = 0.6, 0.2, 0.12, 0.08
    return kernel


# ------------------------------------------------------------------------------ oracles


def test_noiseless_oracle_with_the_true_kernel_recovers_the_image() -> None:
    image, coeffs = sparse_test_image(32, 100)
    kernel = _well_conditioned_kernel()
    assert np.min(np.abs(scipy.fft.fft2(embed_kernel(kernel, image.shape)))) > 0.19  # no spectral zeros
    restored = oracle_deconvolution(forward(kernel, coeffs), kernel, noise_norm=0.0)
    assert np.linalg.norm(restored - image) / np.linalg.norm(image) < 1e-8
    assert psnr(restored, image) > 60.0


def test_discrepancy_principle_matches_the_noise_norm(small_problem) -> None:
    p = small_problem
    lam = discrepancy_regularization(p.observation, p.kernel, p.noise_norm)
    assert lam > 0
    assert tikhonov_residual_norm(p.observation, p.kernel, lam) == pytest.approx(p.noise_norm, rel=1e-6)
    # the closed-form residual is the residual of the returned image
    restored = oracle_deconvolution(p.observation, p.kernel, regularization=lam)
    direct = np.linalg.norm(forward(p.kernel, scipy.fft.dctn(restored, norm="ortho")) - p.observation)
    assert direct == pytest.approx(p.noise_norm, rel=1e-6)
    assert discrepancy_regularization(p.observation, p.kernel, 0.0) == 0.0


def test_sparse_oracle_beats_the_blurred_input(small_problem) -> None:
    p = small_problem
    run = oracle_sparse_deconvolution(p.observation, p.kernel, p.s_x, iterations=30)
    np.testing.assert_allclose(run.kernel, p.kernel, atol=1e-15)  # the kernel is never updated
    assert np.count_nonzero(run.coeffs) <= p.s_x
    assert psnr(run.image, p.image) > psnr(p.observation, p.image) + 5.0


# ------------------------------------------------------------------------------ blind methods


def test_thwf_decreases_the_loss_and_keeps_sparsity(small_problem) -> None:
    p = small_problem
    run = thwf_2d(p.observation, 5, p.s_h, p.s_x, iterations=30)
    history = run.loss_history
    assert run.iterations == 30 and history.shape == (31,)
    assert np.all(np.diff(history) <= 0.0)  # monotone by the backtracking rule
    assert history[1] < history[0] and history[-1] < history[0]  # it moves, and downhill
    # the recorded loss is the true loss of the returned pair (no drift of the running residual)
    assert loss(run.kernel, run.coeffs, p.observation) == pytest.approx(history[-1], rel=1e-9)
    assert np.count_nonzero(run.kernel) <= p.s_h and np.count_nonzero(run.coeffs) <= p.s_x
    assert run.kernel.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(run.image, scipy.fft.idctn(run.coeffs, norm="ortho"), atol=1e-14)


def test_thwf_delta_start_is_delta_and_blurred_top_coefficients(small_problem) -> None:
    p = small_problem
    kernel, coeffs = initial_estimate(p.observation, 5, p.s_x)
    assert kernel[2, 2] == 1.0 and np.count_nonzero(kernel) == 1
    assert np.count_nonzero(coeffs) == p.s_x
    run = thwf_2d(p.observation, 5, p.s_h, p.s_x, iterations=0, init="delta")
    assert run.loss_history[0] == pytest.approx(loss(kernel, coeffs, p.observation), rel=1e-12)
    np.testing.assert_allclose(run.coeffs, coeffs, atol=1e-14)


def test_thwf_leaves_an_unblurred_sparse_image_unchanged() -> None:
    # s_h = 1 and no noise: the initial point (δ, top-s_x(D Y)) already has zero loss
    image, coeffs = sparse_test_image(16, 40)
    run = thwf_2d(image, 3, 1, 40, iterations=20, init="delta")
    assert run.loss_history[-1] < 1e-25
    np.testing.assert_allclose(run.image, image, atol=1e-12)


# A 3-tap kernel whose support avoids the window centre (the support make_deblur_problem(size=32,
# window=5, s_h=3, s_x=100, seed=2, support="random") draws), written out so the test does not depend on
# the generator.
_OFF_CENTRE_TAPS = {(1, 1): 0.3194, (2, 1): 0.3310, (4, 0): 0.3496}


def _off_centre_problem() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    image, coeffs = sparse_test_image(32, 100)
    kernel = np.zeros((5, 5))
    for tap, weight in _OFF_CENTRE_TAPS.items():
        kernel[tap] = weight
    kernel /= kernel.sum()
    clean = forward(kernel, coeffs)
    noise = np.random.default_rng(0).standard_normal(clean.shape)
    return image, kernel, clean + 0.01 * np.linalg.norm(clean) * noise / np.linalg.norm(noise)


def test_thwf_recovers_a_kernel_whose_support_avoids_the_window_centre() -> None:
    # The model's kernel is s_h-sparse anywhere in its window. From a delta at the centre ThWF stays at
    # the "no blur" solution (PSNR of the blurred input); the screened start finds the taps.
    image, kernel, y = _off_centre_problem()
    assert kernel[2, 2] == 0.0
    run = thwf_2d(y, 5, 3, 100, iterations=60)
    assert kernel_support_recovered(run.kernel, kernel)
    assert psnr(run.image, image) > psnr(y, image) + 15.0
    stuck = thwf_2d(y, 5, 3, 100, iterations=60, init="delta")
    assert psnr(stuck.image, image) < psnr(y, image) + 1.0


def test_support_screening_init_is_an_equal_weight_s_h_tap_kernel_and_finds_the_taps() -> None:
    _, kernel, y = _off_centre_problem()
    k0, x0 = support_screening_init(y, 5, 3, 100)
    assert np.count_nonzero(k0) == 3 and k0.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(k0[k0 != 0], 1.0 / 3.0)
    assert kernel_support(k0) == kernel_support(kernel)
    assert np.count_nonzero(x0) == 100
    # the start is the one the library's ThWF-2D uses, and it is deterministic
    run = thwf_2d(y, 5, 3, 100, iterations=0)
    assert run.loss_history[0] == pytest.approx(loss(k0, x0, y), rel=1e-12)
    with pytest.raises(ValueError, match="s_h"):
        support_screening_init(y, 5, 26, 100)
    with pytest.raises(ValueError, match="regularization"):
        support_screening_init(y, 5, 3, 100, regularization=0.0)
    with pytest.raises(ValueError, match="init"):
        thwf_2d(y, 5, 3, 100, init="centre")


def test_dense_wf_is_monotone_finite_and_fits_at_least_as_well_as_thwf(small_problem) -> None:
    p = small_problem
    dense = dense_wf_2d(p.observation, 5, p.s_h, p.s_x, iterations=30)
    sparse = thwf_2d(p.observation, 5, p.s_h, p.s_x, iterations=30)
    assert np.all(np.isfinite(dense.image)) and np.all(np.isfinite(dense.kernel))
    assert np.all(np.diff(dense.loss_history) <= 0.0)
    assert np.count_nonzero(dense.coeffs) > p.s_x  # nothing thresholds it
    assert dense.loss_history[-1] <= sparse.loss_history[-1]  # the larger model fits the data better


def test_normalize_kernel_gain_resolves_the_scale_ambiguity(small_problem) -> None:
    p = small_problem
    for alpha in (3.0, -0.25):
        kernel, coeffs = normalize_kernel_gain(alpha * p.kernel, p.coeffs / alpha)
        np.testing.assert_allclose(kernel, p.kernel, atol=1e-14)
        np.testing.assert_allclose(coeffs, p.coeffs, atol=1e-12)
    zero_sum = np.zeros((3, 3))
    zero_sum[1, 1], zero_sum[0, 0] = 2.0, -2.0
    kernel, coeffs = normalize_kernel_gain(zero_sum, p.coeffs)
    np.testing.assert_allclose(forward(kernel, coeffs), forward(zero_sum, p.coeffs), atol=1e-12)


def test_blind_methods_reject_bad_input(small_problem) -> None:
    y = small_problem.observation
    with pytest.raises(ValueError, match="window"):
        thwf_2d(y, 33, 3, 100)  # kernel window larger than the image
    with pytest.raises(ValueError, match="window"):
        thwf_2d(y, 4, 3, 100)
    with pytest.raises(ValueError, match="s_h"):
        thwf_2d(y, 5, -1, 100)
    with pytest.raises(ValueError, match="s_x"):
        thwf_2d(y, 5, 3, 32 * 32 + 1)
    with pytest.raises(ValueError, match="observation"):
        thwf_2d(np.full((32, 32), np.nan), 5, 3, 100)
    with pytest.raises(ValueError, match="observation"):
        dense_wf_2d(y[None], 5, 3, 100)
    with pytest.raises(TypeError, match="iterations"):
        thwf_2d(y, 5, 3, 100, iterations=2.5)
    with pytest.raises(ValueError, match="noise_norm"):
        oracle_deconvolution(y, small_problem.kernel, noise_norm=-1.0)
    with pytest.raises(ValueError, match="kernel"):
        oracle_sparse_deconvolution(y, np.ones((35, 35)), 100)


# ------------------------------------------------------------------------------ quality measures


def test_psnr_and_ssim_of_identical_and_shifted_images() -> None:
    image, _ = sparse_test_image(32, 100)
    assert psnr(image, image) == float("inf")
    assert ssim(image, image) == pytest.approx(1.0, abs=1e-12)
    assert psnr(image + 0.1, image) == pytest.approx(20.0, abs=1e-10)  # MSE 0.01, range 1
    noisy = image + 0.05 * np.random.default_rng(0).standard_normal(image.shape)
    assert ssim(noisy, image) < 0.9
    with pytest.raises(ValueError, match="shape"):
        psnr(image, image[:-1])
    with pytest.raises(ValueError, match="estimate"):
        ssim(np.full_like(image, np.nan), image)
    with pytest.raises(ValueError, match="data_range"):
        psnr(image, image, data_range=0.0)


def test_kernel_support_indicator() -> None:
    truth = np.zeros((5, 5))
    truth[2, 2], truth[2, 3], truth[3, 3] = 0.5, 0.3, 0.2
    assert kernel_support(truth) == {(2, 2), (2, 3), (3, 3)}
    estimate = truth + 0.01  # dense but with the right three largest taps
    assert kernel_support_recovered(estimate, truth)
    shifted = np.roll(truth, 1, axis=1)
    assert kernel_support_overlap(shifted, truth) == pytest.approx(1 / 3)
    assert not kernel_support_recovered(shifted, truth)
    with pytest.raises(ValueError, match="truth"):
        kernel_support_overlap(estimate, np.zeros((5, 5)))
    with pytest.raises(ValueError, match="shape"):
        kernel_support_overlap(np.ones((3, 3)), truth)


# ------------------------------------------------------------------------------ experiment


def test_smoke_comparison_runs_fast_and_is_deterministic() -> None:
    config = ImageDeblurConfig.for_scale("smoke")
    start = time.perf_counter()
    first = deblur_comparison(config, seed=0)
    assert time.perf_counter() - start < 2.0
    assert tuple(first.methods) == METHODS
    for m in first.methods.values():
        assert m.kernel.sum() == pytest.approx(1.0, abs=1e-12)
        assert m.image.shape == (config.size, config.size)
        assert np.isfinite(m.psnr) and -1.0 <= m.ssim <= 1.0
    for name in ("dense_wf", "thwf", "oracle_sparse"):
        assert first.methods[name].iterations == config.iterations
        assert first.methods[name].loss_history.shape == (config.iterations + 1,)
    assert first.methods["oracle_tikhonov"].kernel_support_recovered  # it is given the truth
    second = deblur_comparison(config, seed=0)
    assert [m.psnr for m in second.methods.values()] == [m.psnr for m in first.methods.values()]


def test_config_validation_and_scales() -> None:
    default = ImageDeblurConfig.for_scale("default")
    assert (default.size, default.window, default.iterations) == (64, 7, 300)
    with pytest.raises(ValueError, match="window"):
        dataclasses.replace(default, window=6)
    with pytest.raises(ValueError, match="s_h"):
        dataclasses.replace(default, s_h=50)
    with pytest.raises(ValueError, match="s_x"):
        dataclasses.replace(default, s_x=0)
    with pytest.raises(ValueError, match="scale"):
        ImageDeblurConfig.for_scale("huge")
    with pytest.raises(TypeError, match="config"):
        deblur_comparison({"size": 64})


def test_block_step_never_increases_the_loss() -> None:
    """The backtracking safeguard: thresholded steps on random quadratics never go uphill."""
    from neurips26.thwf.image_deblur import _block_step

    rng = np.random.default_rng(0)
    for _ in range(200):
        a = rng.standard_normal((8, 6)) @ np.diag(rng.uniform(0.1, 3.0, 6))
        y = rng.standard_normal(8)
        x = np.zeros(6)
        x[rng.choice(6, 2, replace=False)] = rng.standard_normal(2)
        residual = a @ x - y
        current = float(residual @ residual)
        apply = a.__matmul__  # d ↦ A d
        new_x, new_residual, new_loss = _block_step(x, 2 * a.T @ residual, apply, residual, current, 2)
        assert new_loss <= current
        assert np.count_nonzero(new_x) <= 2
        np.testing.assert_allclose(new_residual, a @ new_x - y, atol=1e-12)
        assert new_loss == pytest.approx(float(new_residual @ new_residual), rel=1e-12)
