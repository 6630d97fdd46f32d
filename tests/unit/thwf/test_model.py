"""The random-subspace model: operators, adjoint, isotropy, instance generation, validation."""

import numpy as np
import pytest

from neurips26.thwf.model import (
    Problem,
    adjoint,
    apply_b,
    apply_b_adjoint,
    dft_columns,
    forward,
    lifted_forward,
    make_problem,
    make_problem_batch,
    stack_problems,
    time_domain_signals,
)


def crandn(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def dense_operator_matrix(b, a):
    """Test helper only: the M × KN matrix of 𝒜 acting on vec(Z) (row-major), built entrywise."""
    m, k = b.shape
    n = a.shape[1]
    # 𝒜(Z)_l = Σ_ij B[l,i] conj(A[l,j]) Z[i,j]
    return (b[:, :, None] * np.conj(a)[:, None, :]).reshape(m, k * n)


def test_dft_columns_are_orthonormal_and_cached():
    b = dft_columns(40, 12)
    assert b.shape == (40, 12)
    np.testing.assert_allclose(np.conj(b).T @ b, np.eye(12), atol=1e-13)
    assert dft_columns(40, 12) is b and not b.flags.writeable
    # B h equals the unitary FFT of the zero-padded h
    rng = np.random.default_rng(0)
    h, v = crandn(rng, 12), crandn(rng, 40)
    np.testing.assert_allclose(apply_b(h, 40), b @ h, atol=1e-12)
    np.testing.assert_allclose(apply_b_adjoint(v, 12), np.conj(b).T @ v, atol=1e-12)


def test_dft_columns_rejects_kernel_longer_than_signal():
    with pytest.raises(ValueError, match="k"):
        dft_columns(8, 9)


def test_adjoint_identity():
    rng = np.random.default_rng(1)
    m, k, n = 37, 7, 11
    a = crandn(rng, m, n)
    z, w = crandn(rng, k, n), crandn(rng, m)
    lhs = np.vdot(w, lifted_forward(a, z))  # ⟨𝒜(Z), w⟩ = w^* 𝒜(Z)
    rhs = np.vdot(adjoint(a, w, k), z)  # ⟨Z, 𝒜^*(w)⟩ = tr(𝒜^*(w)^* Z)
    assert abs(lhs - rhs) <= 1e-12 * abs(lhs)


def test_operators_match_the_dense_matrix_and_each_other():
    rng = np.random.default_rng(2)
    m, k, n = 20, 5, 6
    b, a = dft_columns(m, k), crandn(rng, m, n)
    h, x, z, w = crandn(rng, k), crandn(rng, n), crandn(rng, k, n), crandn(rng, m)
    mat = dense_operator_matrix(b, a)
    np.testing.assert_allclose(lifted_forward(a, z), mat @ z.reshape(-1), atol=1e-12)
    np.testing.assert_allclose(adjoint(a, w, k).reshape(-1), np.conj(mat).T @ w, atol=1e-12)
    np.testing.assert_allclose(forward(a, h, x), lifted_forward(a, np.outer(h, np.conj(x))), atol=1e-12)


def test_operators_accept_leading_batch_axes():
    rng = np.random.default_rng(3)
    t, m, k, n = 4, 16, 3, 5
    a = crandn(rng, t, m, n)
    h, x, w = crandn(rng, t, k), crandn(rng, t, n), crandn(rng, t, m)
    fwd, adj = forward(a, h, x), adjoint(a, w, k)
    for i in range(t):
        np.testing.assert_allclose(fwd[i], forward(a[i], h[i], x[i]), atol=1e-13)
        np.testing.assert_allclose(adj[i], adjoint(a[i], w[i], k), atol=1e-13)


def test_back_projection_is_unbiased_monte_carlo():
    """E[𝒜^*𝒜(Z)] = Z over fresh Gaussian A: the sample mean is within CLT error of Z."""
    rng = np.random.default_rng(4)
    draws, m, k, n = 4000, 12, 3, 4
    z = crandn(rng, k, n)
    a = crandn(rng, draws, m, n) / np.sqrt(2)  # rows a_l^* with i.i.d. CN(0, 1) entries
    samples = adjoint(a, lifted_forward(a, np.broadcast_to(z, (draws, k, n))), k)
    mean = samples.mean(axis=0)
    # Standard error of the mean, entrywise, from the sample spread (CLT): allow 5 standard errors.
    std_err = np.sqrt(np.sum(samples.var(axis=0)) / draws)
    deviation = np.linalg.norm(mean - z)
    assert deviation < 5 * std_err
    # ... and the test has teeth: a single draw is far from Z, and a mis-scaled A would be caught.
    assert np.linalg.norm(samples[0] - z) > 10 * std_err
    assert np.linalg.norm(2 * mean - z) > 5 * std_err


def test_make_problem_draws_unit_norm_sparse_factors_and_exact_data():
    p = make_problem(32, 24, 64, 3, 5, seed=7)
    assert p.a.shape == (64, 24) and p.y.shape == (64,) and p.k == 32
    assert np.count_nonzero(p.h0) == 3 and np.count_nonzero(p.x0) == 5
    assert np.isclose(np.linalg.norm(p.h0), 1) and np.isclose(np.linalg.norm(p.x0), 1)
    np.testing.assert_allclose(p.y, forward(p.a, p.h0, p.x0), atol=1e-14)
    q = make_problem(32, 24, 64, 3, 5, seed=7)
    np.testing.assert_array_equal(p.a, q.a)
    np.testing.assert_array_equal(p.y, q.y)
    assert not np.array_equal(p.y, make_problem(32, 24, 64, 3, 5, seed=8).y)


def test_equal_modulus_amplitudes_and_bounded_noise():
    p = make_problem(16, 16, 64, 4, 2, amplitudes="equal", seed=0)
    np.testing.assert_allclose(np.abs(p.h0[p.h0 != 0]), 0.5)
    np.testing.assert_allclose(np.abs(p.x0[p.x0 != 0]), 1 / np.sqrt(2))
    noisy = make_problem(16, 16, 64, 4, 2, amplitudes="equal", noise=0.05, seed=0)
    y0 = forward(noisy.a, noisy.h0, noisy.x0)
    assert np.isclose(np.linalg.norm(noisy.y - y0), 0.05 * np.linalg.norm(y0))


def test_batch_with_per_instance_sparsity_and_problem_access():
    batch = make_problem_batch(16, 16, 48, [1, 2, 3], [3, 2, 1], 3, seed=0)
    assert len(batch) == 3 and batch.a.shape == (3, 48, 16)
    np.testing.assert_array_equal(np.count_nonzero(batch.h0, axis=1), [1, 2, 3])
    np.testing.assert_array_equal(np.count_nonzero(batch.x0, axis=1), [3, 2, 1])
    p = batch.problem(1)
    np.testing.assert_array_equal(p.a, batch.a[1])
    again = stack_problems([batch.problem(i) for i in range(3)])
    np.testing.assert_array_equal(again.y, batch.y)


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"s_h": -1}, ValueError, "s_h"),
        ({"s_h": 0}, ValueError, "s_h"),
        ({"s_x": 17}, ValueError, "s_x"),
        ({"s_h": 2.5}, TypeError, "s_h"),
        ({"m": 8}, ValueError, "m"),
        ({"noise": -0.1}, ValueError, "noise"),
        ({"amplitudes": "uniform"}, ValueError, "amplitudes"),
    ],
)
def test_make_problem_rejects_bad_arguments(kwargs, error, name):
    args = {"k": 16, "n": 16, "m": 32, "s_h": 2, "s_x": 2}
    args.update(kwargs)
    with pytest.raises(error, match=name):
        make_problem(**args)


def test_problem_and_operators_reject_bad_data():
    p = make_problem(8, 8, 16, 2, 2, seed=0)
    with pytest.raises(TypeError, match="complex"):
        Problem(p.a.real.copy(), p.y, 8)  # wrong dtype
    bad_y = p.y.copy()
    bad_y[3] = np.nan
    with pytest.raises(ValueError, match="y"):
        Problem(p.a, bad_y, 8)
    with pytest.raises(ValueError, match="y"):
        Problem(p.a, p.y[:-1], 8)  # mismatched shapes
    with pytest.raises(ValueError, match="h0"):
        Problem(p.a, p.y, 8, h0=p.h0)
    with pytest.raises(ValueError, match="h"):
        forward(p.a, np.zeros(17, complex), p.x0)  # K > M
    with pytest.raises(ValueError, match="x"):
        forward(p.a, p.h0, p.x0[:-1])
    with pytest.raises(ValueError, match="A"):
        forward(p.a[0], p.h0, p.x0)
    with pytest.raises(TypeError, match="x"):
        forward(p.a, p.h0, [1.0] * 8)
    with pytest.raises(ValueError, match="k"):
        adjoint(p.a, p.y, 17)
    with pytest.raises(ValueError, match="mixed|share"):
        stack_problems([p, make_problem(8, 8, 24, 2, 2)])


def test_the_model_is_a_circular_convolution_with_the_conjugate_code():
    # y = F_M(f ⊛ g) with f = [h; 0] and g = C x̄ (A = sqrt(M) conj(F_M C)); g = C x would not do.
    rng = np.random.default_rng(4)
    m, k, n = 24, 5, 7
    a = (rng.standard_normal((m, n)) + 1j * rng.standard_normal((m, n))) / np.sqrt(2)
    h = rng.standard_normal(k) + 1j * rng.standard_normal(k)
    x = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    f, g = time_domain_signals(a, h, x)
    conv = np.array([sum(f[j] * g[(i - j) % m] for j in range(m)) for i in range(m)])
    np.testing.assert_allclose(np.fft.fft(conv, norm="ortho"), forward(a, h, x), atol=1e-12)
    dictionary = np.fft.ifft(np.conj(a), axis=0, norm="ortho") / np.sqrt(m)
    np.testing.assert_allclose(g, dictionary @ np.conj(x), atol=1e-14)
    g_plain = dictionary @ x  # the unconjugated form
    conv_plain = np.array([sum(f[j] * g_plain[(i - j) % m] for j in range(m)) for i in range(m)])
    assert np.max(np.abs(np.fft.fft(conv_plain, norm="ortho") - forward(a, h, x))) > 1e-2
    # and the docstring states the conjugate form
    import neurips26.thwf.model as model_module

    assert "g = C x̄" in model_module.__doc__ and "g = C x " not in model_module.__doc__
