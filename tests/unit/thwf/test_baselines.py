"""Baselines: RGD and SPF recover easy instances, HTP and the incoherence projection, convex lifting."""

import sys

import numpy as np
import pytest

from neurips26.thwf.baselines import (
    convex_lifting,
    hard_thresholding_pursuit,
    project_incoherent,
    rgd,
    rgd_batch,
    spf,
    spf_batch,
)
from neurips26.thwf.model import dft_columns, make_problem, make_problem_batch

rgd_module = sys.modules["neurips26.thwf.baselines.rgd"]


def crandn(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def test_rgd_recovers_an_easy_instance():
    p = make_problem(16, 16, 160, 3, 3, seed=0)
    result = rgd(p, max_iter=400)
    assert result.errors[-1] < 1e-6
    assert result.converged and not result.diverged
    assert np.count_nonzero(result.x) > 3  # RGD knows nothing of sparsity


def test_rgd_regulariser_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    b = dft_columns(24, 6)
    h, x = 3 * crandn(rng, 1, 6), 3 * crandn(rng, 1, 5)  # large enough for every G0 term to be active
    d, rho, mu = np.array([1.0]), np.array([2.0]), 0.5
    _, grad_h, grad_x = rgd_module._regulariser(h, x, d, rho, mu, h @ b.T)

    def value(hh, xx):
        return rgd_module._regulariser_value(24, hh, xx, d, rho, mu, hh @ b.T)

    step = 1e-6
    for base, grad, which in ((h, grad_h, "h"), (x, grad_x, "x")):
        for i in range(base.shape[1]):
            for unit in (1.0, 1j):
                e = np.zeros_like(base)
                e[0, i] = unit
                if which == "h":
                    numeric = (value(h + step * e, x) - value(h - step * e, x)) / (2 * step)
                else:
                    numeric = (value(h, x + step * e) - value(h, x - step * e)) / (2 * step)
                analytic = 2 * np.real(np.vdot(grad[0], e[0]))
                assert abs(numeric[0] - analytic) <= 1e-5 * max(1.0, abs(analytic))


def test_incoherence_projection_is_feasible_and_no_farther_than_feasible_points():
    rng = np.random.default_rng(2)
    b = dft_columns(32, 8)
    w = crandn(rng, 3, 8)
    w[0] = 0.0
    w[0, 0] = 4.0  # a spike in h is flat in frequency: already feasible for the radius below
    radius = np.array([0.9, 0.5, 0.5]) * np.max(np.abs(w @ b.T), axis=1)
    radius[0] = 1.0
    z = project_incoherent(w, radius, 32, iterations=500)
    assert np.all(np.abs(z @ b.T) <= radius[:, None] * (1 + 1e-3))
    np.testing.assert_allclose(z[0], w[0], atol=1e-12)  # feasible points are left alone
    for i in (1, 2):
        for _ in range(20):  # random feasible points are never closer to w than the projection
            v = crandn(rng, 8)
            v *= radius[i] / np.max(np.abs(b @ v)) * rng.random()
            assert np.linalg.norm(w[i] - z[i]) <= np.linalg.norm(w[i] - v) + 1e-6


def test_spf_recovers_an_easy_instance():
    p = make_problem(32, 32, 128, 3, 3, seed=3)
    result = spf(p, 3, 3)
    assert result.errors[-1] < 1e-8 and result.converged
    assert np.count_nonzero(result.h) == 3 and np.count_nonzero(result.x) == 3


def test_hard_thresholding_pursuit_solves_compressed_sensing():
    rng = np.random.default_rng(4)
    phi = crandn(rng, 2, 40, 64) / np.sqrt(80)
    truth = np.zeros((2, 64), complex)
    truth[0, [3, 17, 40]] = crandn(rng, 3)
    truth[1, [5, 6]] = crandn(rng, 2)
    target = np.einsum("tmn,tn->tm", phi, truth)
    u = hard_thresholding_pursuit(phi, target, np.array([3, 2]), np.zeros((2, 64), complex), iterations=20)
    np.testing.assert_allclose(u, truth, atol=1e-10)


def test_batched_baselines_match_single_runs():
    batch = make_problem_batch(16, 16, 96, [2, 3], [2, 3], 2, seed=5)
    r_batch, s_batch = rgd_batch(batch, max_iter=50), spf_batch(batch, np.array([2, 3]), np.array([2, 3]))
    for i in range(2):
        r_single = rgd(batch.problem(i), max_iter=50)
        s_single = spf(batch.problem(i), [2, 3][i], [2, 3][i])
        n = r_single.iterations + 1
        np.testing.assert_allclose(r_batch.errors[i, :n], r_single.errors, rtol=1e-6, atol=1e-12)
        n = s_single.iterations + 1
        np.testing.assert_allclose(s_batch.errors[i, :n], s_single.errors, rtol=1e-6, atol=1e-12)


def test_convex_lifting_recovers_a_tiny_instance():
    p = make_problem(6, 6, 24, 2, 2, seed=0)
    result = convex_lifting(p, mu=0.5)
    assert result.status == "optimal"
    assert result.error < 1e-4
    assert result.z.shape == (6, 6) and result.seconds > 0


def test_convex_lifting_guards_its_size():
    with pytest.raises(ValueError, match="K and N must be <= 24"):
        convex_lifting(make_problem(25, 4, 32, 2, 2))
    with pytest.raises(ValueError, match="solver"):
        convex_lifting(make_problem(4, 4, 8, 1, 1), solver="MOSEK")


def test_baselines_reject_bad_arguments():
    p = make_problem(8, 8, 16, 2, 2, seed=0)
    with pytest.raises(ValueError, match="mu"):
        rgd(p, mu=0.0)
    with pytest.raises(TypeError, match="problem"):
        rgd(p.a)
    with pytest.raises(ValueError, match="s_x"):
        spf(p, 2, 9)
    with pytest.raises(TypeError, match="batch"):
        spf_batch(p, 2, 2)
    with pytest.raises(TypeError, match="problem"):
        convex_lifting(p.a)
