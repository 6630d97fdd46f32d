"""Loss and Wirtinger gradients: finite differences, zero at the truth, batch consistency."""

import numpy as np
import pytest

from neurips26.thwf.loss import loss, wirtinger_gradients
from neurips26.thwf.model import forward, make_problem, make_problem_batch


def crandn(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


@pytest.fixture
def point():
    p = make_problem(6, 5, 24, 2, 3, noise=0.3, seed=0)
    rng = np.random.default_rng(1)
    return p, crandn(rng, 6), crandn(rng, 5)


def test_loss_is_the_squared_residual(point):
    p, h, x = point
    expected = np.sum(np.abs(forward(p.a, h, x) - p.y) ** 2)
    assert np.isclose(loss(p.a, p.y, h, x), expected)


@pytest.mark.parametrize("unit", [1.0, 1j], ids=["real", "imaginary"])
def test_wirtinger_gradients_match_finite_differences(point, unit):
    """dF/dt at t=0 of F(h + t d) is 2 Re⟨∇_h F, d⟩; checked for every coordinate direction."""
    p, h, x = point
    grad_h, grad_x = wirtinger_gradients(p.a, p.y, h, x)
    step = 1e-6
    for which, base, grad in (("h", h, grad_h), ("x", x, grad_x)):
        for i in range(base.size):
            d = np.zeros_like(base)
            d[i] = unit
            if which == "h":
                plus, minus = loss(p.a, p.y, h + step * d, x), loss(p.a, p.y, h - step * d, x)
            else:
                plus, minus = loss(p.a, p.y, h, x + step * d), loss(p.a, p.y, h, x - step * d)
            numeric = (plus - minus) / (2 * step)
            analytic = 2 * np.real(np.vdot(grad, d))
            assert abs(numeric - analytic) <= 1e-6 * max(1.0, abs(analytic)), (which, i)


def test_gradients_vanish_at_the_truth_on_noiseless_data():
    p = make_problem(16, 16, 48, 3, 3, seed=2)
    grad_h, grad_x = wirtinger_gradients(p.a, p.y, p.h0, p.x0)
    assert np.linalg.norm(grad_h) < 1e-13 and np.linalg.norm(grad_x) < 1e-13
    assert loss(p.a, p.y, p.h0, p.x0) < 1e-28
    # and do not vanish elsewhere
    assert np.linalg.norm(wirtinger_gradients(p.a, p.y, 2 * p.h0, p.x0)[0]) > 0.1


def test_batched_gradients_equal_single_ones():
    batch = make_problem_batch(8, 8, 32, 2, 2, 3, noise=0.1, seed=3)
    rng = np.random.default_rng(4)
    h, x = crandn(rng, 3, 8), crandn(rng, 3, 8)
    grad_h, grad_x = wirtinger_gradients(batch.a, batch.y, h, x)
    values = loss(batch.a, batch.y, h, x)
    for i in range(3):
        gh, gx = wirtinger_gradients(batch.a[i], batch.y[i], h[i], x[i])
        np.testing.assert_allclose(grad_h[i], gh, atol=1e-12)
        np.testing.assert_allclose(grad_x[i], gx, atol=1e-12)
        assert np.isclose(values[i], loss(batch.a[i], batch.y[i], h[i], x[i]))


def test_loss_rejects_mismatched_shapes(point):
    p, h, x = point
    with pytest.raises(ValueError, match="y"):
        loss(p.a, p.y[:-1], h, x)
    with pytest.raises(ValueError, match="x"):
        wirtinger_gradients(p.a, p.y, h, x[:-1])
