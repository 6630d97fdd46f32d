"""Invariants of the real 2-D deblurring model (chapter 01, §3.6): transforms, operators, gradients."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.fft
import scipy.ndimage

from neurips26.thwf.image_model import (
    camera_crop,
    convolve2d_circular,
    correlate2d_circular,
    crop_kernel,
    dct2,
    embed_kernel,
    forward,
    gradients,
    idct2,
    keep_largest,
    loss,
    make_deblur_problem,
    sparse_blur_kernel,
    sparse_test_image,
)

N, W = 16, 5  # the toy of the chapter's unit-test list: 16×16 image, 5×5 kernel window


@pytest.fixture
def toy() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return rng.standard_normal((W, W)), rng.standard_normal((N, N)), rng.standard_normal((N, N))


def _convolution_matrix(full: np.ndarray) -> np.ndarray:
    """Explicit circular convolution: (C a)[n] = Σ_m full[m] a[n − m], row-major vec of 2-D arrays."""
    n1, n2 = full.shape
    c = np.zeros((n1 * n2, n1 * n2))
    for p1 in range(n1):
        for p2 in range(n2):
            # column for the unit image at (p1, p2): full shifted by (p1, p2)
            c[:, p1 * n2 + p2] = np.roll(full, (p1, p2), axis=(0, 1)).ravel()
    return c


def _dct_matrix(n: int) -> np.ndarray:
    """Orthonormal DCT-II matrix built from its cosine formula (independent of scipy)."""
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    d = np.sqrt(2.0 / n) * np.cos(np.pi * (2 * j + 1) * i / (2 * n))
    d[0] /= np.sqrt(2.0)
    return d


def _embedding_matrix(w: int, shape: tuple[int, int]) -> np.ndarray:
    """Explicit E: window taps → full circular grid, tap (i, j) at ((i−c) mod n1, (j−c) mod n2)."""
    e = np.zeros((shape[0] * shape[1], w * w))
    c = w // 2
    for i in range(w):
        for j in range(w):
            e[((i - c) % shape[0]) * shape[1] + (j - c) % shape[1], i * w + j] = 1.0
    return e


def test_dct_matrix_matches_scipy_and_round_trip_is_lossless(toy) -> None:
    _, coeffs, _ = toy
    d = np.kron(_dct_matrix(N), _dct_matrix(N))  # D acting on row-major vec
    np.testing.assert_allclose(dct2(coeffs).ravel(), d @ coeffs.ravel(), atol=1e-12)
    np.testing.assert_allclose(idct2(dct2(coeffs)), coeffs, atol=1e-13)
    np.testing.assert_allclose(dct2(idct2(coeffs)), coeffs, atol=1e-13)
    assert np.linalg.norm(dct2(coeffs)) == pytest.approx(np.linalg.norm(coeffs), rel=1e-13)  # orthonormal


def test_forward_equals_ndimage_wrap_and_explicit_loops(toy) -> None:
    kernel, _, image = toy
    fast = convolve2d_circular(kernel, image)
    np.testing.assert_allclose(fast, scipy.ndimage.convolve(image, kernel, mode="wrap"), atol=1e-12)
    c = W // 2
    slow = np.zeros_like(image)
    for n1 in range(N):
        for n2 in range(N):
            for i in range(W):
                for j in range(W):  # tap (i, j) is offset (i − c, j − c): out[n] += k · g[n − offset]
                    slow[n1, n2] += kernel[i, j] * image[(n1 - (i - c)) % N, (n2 - (j - c)) % N]
    np.testing.assert_allclose(fast, slow, atol=1e-12)
    # the model composes the synthesis D^{-1} with the convolution
    np.testing.assert_allclose(forward(kernel, dct2(image)), fast, atol=1e-12)


def test_delta_at_window_centre_is_the_identity(toy) -> None:
    _, _, image = toy
    delta = np.zeros((W, W))
    delta[W // 2, W // 2] = 1.0
    np.testing.assert_allclose(convolve2d_circular(delta, image), image, atol=1e-13)


def test_embed_and_crop_are_adjoint(toy) -> None:
    kernel, full, _ = toy
    lhs = np.sum(embed_kernel(kernel, (N, N)) * full)
    rhs = np.sum(kernel * crop_kernel(full, W))
    assert lhs == pytest.approx(rhs, rel=1e-13)
    np.testing.assert_array_equal(crop_kernel(embed_kernel(kernel, (N, N)), W), kernel)


def test_correlation_is_the_adjoint_of_convolution(toy) -> None:
    kernel, a, b = toy
    full = embed_kernel(kernel, (N, N))
    # <k ⊛ a, b> = <a, b ⋆ k>  and  <k ⊛ a, b> = <k, P_w(b ⋆ a)>
    lhs = np.sum(convolve2d_circular(kernel, a) * b)
    assert lhs == pytest.approx(np.sum(a * correlate2d_circular(b, full)), rel=1e-12)
    assert lhs == pytest.approx(np.sum(kernel * crop_kernel(correlate2d_circular(b, a), W)), rel=1e-12)


def test_fft_gradients_equal_dense_matrix_gradients(toy) -> None:
    """The chapter's check: matrix-free FFT gradients = gradients from explicit C, D, E matrices."""
    kernel, coeffs, y = toy
    d = np.kron(_dct_matrix(N), _dct_matrix(N))
    e = _embedding_matrix(W, (N, N))
    c_k = _convolution_matrix(embed_kernel(kernel, (N, N)))
    g = d.T @ coeffs.ravel()  # g = D^T x
    c_g = _convolution_matrix(g.reshape(N, N))
    r = c_k @ g - y.ravel()  # R = C_k D^T x − y = C_g E k − y
    np.testing.assert_allclose(c_g @ e @ kernel.ravel() - y.ravel(), r, atol=1e-12)
    grad = gradients(kernel, coeffs, y)
    assert grad.loss == pytest.approx(float(r @ r), rel=1e-12)
    np.testing.assert_allclose(grad.kernel.ravel(), 2.0 * e.T @ c_g.T @ r, atol=1e-10, rtol=0)
    np.testing.assert_allclose(grad.coeffs.ravel(), 2.0 * d @ c_k.T @ r, atol=1e-10, rtol=0)
    assert loss(kernel, coeffs, y) == pytest.approx(grad.loss, rel=1e-13)


def test_gradients_match_finite_differences(toy) -> None:
    kernel, coeffs, y = toy
    rng = np.random.default_rng(3)
    dk, dx = rng.standard_normal(kernel.shape), rng.standard_normal(coeffs.shape)
    grad = gradients(kernel, coeffs, y)
    t = 1e-5

    def central_difference(dk_: np.ndarray, dx_: np.ndarray) -> float:
        # (F(p + t d) − F(p − t d)) / 2t; F is quartic in t, so the error is O(t²)
        plus = loss(kernel + t * dk_, coeffs + t * dx_, y)
        minus = loss(kernel - t * dk_, coeffs - t * dx_, y)
        return (plus - minus) / (2 * t)

    # the joint direction, then each block alone
    for dk_, dx_ in ((dk, dx), (dk, 0 * dx), (0 * dk, dx)):
        analytic = np.sum(grad.kernel * dk_) + np.sum(grad.coeffs * dx_)
        assert central_difference(dk_, dx_) == pytest.approx(analytic, rel=1e-7)


def test_gradient_vanishes_at_a_noiseless_solution() -> None:
    kernel = sparse_blur_kernel(W, 3, seed=1)
    _, coeffs = sparse_test_image(N, 30)
    grad = gradients(kernel, coeffs, forward(kernel, coeffs))
    assert grad.loss < 1e-25
    assert np.max(np.abs(grad.kernel)) < 1e-12 and np.max(np.abs(grad.coeffs)) < 1e-12


def test_keep_largest_keeps_exactly_s_and_is_idempotent() -> None:
    a = np.random.default_rng(0).standard_normal((8, 8))
    kept = keep_largest(a, 10)
    assert np.count_nonzero(kept) == 10
    np.testing.assert_array_equal(keep_largest(kept, 10), kept)
    assert np.min(np.abs(kept[kept != 0])) >= np.max(np.abs(a[kept == 0]))


def test_sparse_test_image_is_exactly_sparse_and_in_range() -> None:
    crop = camera_crop(32)
    assert crop.shape == (32, 32) and crop.min() >= 0.0 and crop.max() <= 1.0
    image, coeffs = sparse_test_image(32, 100)
    assert np.count_nonzero(coeffs) == 100
    np.testing.assert_allclose(idct2(coeffs), image, atol=1e-13)
    # the kept coefficients are the camera crop's largest ones
    np.testing.assert_allclose(coeffs[coeffs != 0], dct2(crop)[coeffs != 0], atol=1e-13)


@pytest.mark.parametrize("s_h", [1, 3, 5, 8])
def test_sparse_blur_kernel_is_a_seeded_connected_motion_path(s_h: int) -> None:
    kernel = sparse_blur_kernel(7, s_h, seed=4, support="centred")
    assert kernel.shape == (7, 7) and np.count_nonzero(kernel) == s_h
    assert np.all(kernel >= 0) and kernel.sum() == pytest.approx(1.0, abs=1e-14)
    assert kernel[3, 3] > 0  # the path starts at the centre
    # taps are 8-connected: a flood fill from the centre reaches all of them
    labels, count = scipy.ndimage.label(kernel > 0, structure=np.ones((3, 3)))
    assert count == 1
    np.testing.assert_array_equal(sparse_blur_kernel(7, s_h, seed=4, support="centred"), kernel)
    if s_h > 1:
        assert not np.array_equal(sparse_blur_kernel(7, s_h, seed=5, support="centred"), kernel)


def test_random_support_kernels_reach_the_whole_window() -> None:
    # The model's kernel is s_h-sparse anywhere in its window: the default generator must not tie the
    # support to the centre (a centred generator hides an initialiser that only finds centred kernels).
    kernels = [sparse_blur_kernel(7, 3, seed=s) for s in range(40)]
    for kernel in kernels:
        assert np.count_nonzero(kernel) == 3 and np.all(kernel >= 0)
        assert kernel.sum() == pytest.approx(1.0, abs=1e-14)
    centre_hits = sum(kernel[3, 3] > 0 for kernel in kernels)
    assert centre_hits < 10  # 3 of 49 taps: about 2.4 of 40 kernels hold the centre
    covered = np.sum([kernel > 0 for kernel in kernels], axis=0)
    assert covered[0, :].sum() > 0 and covered[-1, :].sum() > 0  # taps reach the window's edges
    assert covered[:, 0].sum() > 0 and covered[:, -1].sum() > 0
    np.testing.assert_array_equal(sparse_blur_kernel(7, 3, seed=4), kernels[4])
    p = make_deblur_problem(size=16, window=5, s_h=3, s_x=40, seed=3)
    np.testing.assert_array_equal(p.kernel, sparse_blur_kernel(5, 3, seed=3))
    with pytest.raises(ValueError, match="support"):
        sparse_blur_kernel(7, 3, seed=0, support="center")


def test_make_deblur_problem_has_exact_noise_norm_and_is_seeded() -> None:
    p = make_deblur_problem(size=16, window=5, s_h=3, s_x=40, noise_level=0.05, seed=2)
    clean = forward(p.kernel, p.coeffs)
    assert np.linalg.norm(p.observation - clean) == pytest.approx(p.noise_norm, rel=1e-12)
    assert p.noise_norm == pytest.approx(0.05 * np.linalg.norm(clean), rel=1e-12)
    q = make_deblur_problem(size=16, window=5, s_h=3, s_x=40, noise_level=0.05, seed=2)
    np.testing.assert_array_equal(p.observation, q.observation)
    noiseless = make_deblur_problem(size=16, window=5, s_h=3, s_x=40, noise_level=0.0, seed=2)
    np.testing.assert_allclose(noiseless.observation, clean, atol=1e-14)


def test_bad_inputs_raise_errors_naming_the_argument() -> None:
    image = np.zeros((8, 8))
    with pytest.raises(ValueError, match="kernel"):
        convolve2d_circular(np.ones((9, 9)), image)  # kernel larger than image
    with pytest.raises(ValueError, match="kernel"):
        convolve2d_circular(np.ones((4, 4)), image)  # even window has no centre
    with pytest.raises(ValueError, match="image"):
        convolve2d_circular(np.ones((3, 3)), np.full((8, 8), np.nan))
    with pytest.raises(ValueError, match="image"):
        dct2(np.zeros((4, 4, 4)))  # wrong ndim
    with pytest.raises(TypeError, match="image"):
        dct2([[1.0, 2.0]])  # not an array
    with pytest.raises(TypeError, match="coeffs"):
        idct2(np.zeros((4, 4), dtype=complex))
    with pytest.raises(ValueError, match="s_x"):
        sparse_test_image(16, -1)  # negative sparsity
    with pytest.raises(ValueError, match="s_x"):
        sparse_test_image(16, 16 * 16 + 1)  # more coefficients than the image has
    with pytest.raises(ValueError, match="s_h"):
        sparse_blur_kernel(3, 10)  # more taps than the window
    with pytest.raises(ValueError, match="window"):
        make_deblur_problem(size=8, window=9)
    with pytest.raises(ValueError, match="coeffs"):
        gradients(np.ones((3, 3)), np.zeros((8, 9)), image)  # shape mismatch
    with pytest.raises(ValueError, match="noise_level"):
        make_deblur_problem(size=16, window=5, s_x=40, noise_level=-0.1)
    with pytest.raises(ValueError, match="^s must"):
        keep_largest(image, 65)
    with pytest.raises(TypeError, match="seed"):
        sparse_blur_kernel(5, 3, seed=1.5)
