"""Thresholding operators: exact sparsity, idempotence, shrinkage by tau, adaptive levels."""

import numpy as np
import pytest

from neurips26.thwf.threshold import adaptive_soft_levels, hard_threshold, soft_threshold, top_s_mask


def crandn(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


@pytest.mark.parametrize("s", [0, 1, 3, 10])
def test_hard_threshold_keeps_exactly_the_s_largest_and_is_idempotent(s):
    v = crandn(np.random.default_rng(s), 10)
    out = hard_threshold(v, s)
    assert np.count_nonzero(out) == s
    kept = np.argsort(-np.abs(v))[:s]
    np.testing.assert_array_equal(out[kept], v[kept])  # kept entries unchanged
    np.testing.assert_array_equal(hard_threshold(out, s), out)


def test_hard_threshold_with_one_sparsity_per_row():
    v = crandn(np.random.default_rng(0), 4, 12)
    s = np.array([0, 2, 5, 12])
    out = hard_threshold(v, s)
    np.testing.assert_array_equal(np.count_nonzero(out, axis=1), s)
    for i in range(4):
        np.testing.assert_array_equal(out[i], hard_threshold(v[i], int(s[i])))


def test_top_s_mask_breaks_ties_by_index():
    mask = top_s_mask(np.array([1.0, 2.0, 2.0, 0.5]), 2)
    np.testing.assert_array_equal(mask, [False, True, True, False])
    np.testing.assert_array_equal(top_s_mask(np.ones(4), 2), [True, True, False, False])


def test_soft_threshold_shrinks_moduli_by_tau_and_keeps_phases():
    v = crandn(np.random.default_rng(1), 50)
    tau = 0.7
    out = soft_threshold(v, tau)
    np.testing.assert_allclose(np.abs(out), np.maximum(np.abs(v) - tau, 0.0), atol=1e-15)
    alive = np.abs(v) > tau
    np.testing.assert_allclose(np.angle(out[alive]), np.angle(v[alive]), atol=1e-12)
    assert np.all(out[~alive] == 0)
    np.testing.assert_array_equal(soft_threshold(v, 0.0), v)
    assert np.array_equal(soft_threshold(np.zeros(3, complex), 0.1), np.zeros(3))


def test_soft_threshold_with_one_level_per_row():
    v = crandn(np.random.default_rng(2), 3, 6)
    tau = np.array([0.0, 0.5, 10.0])
    out = soft_threshold(v, tau)
    for i in range(3):
        np.testing.assert_allclose(out[i], soft_threshold(v[i], float(tau[i])))
    assert np.all(out[2] == 0)


def test_adaptive_levels_vanish_with_the_residual_and_scale_with_the_step():
    rng = np.random.default_rng(3)
    a = crandn(rng, 20, 6)
    h, x, r = crandn(rng, 4), crandn(rng, 6), crandn(rng, 20)
    tau_h, tau_x = adaptive_soft_levels(a, r, h, x, 0.1, 0.5)
    assert tau_h > 0 and tau_x > 0
    tau_h2, tau_x2 = adaptive_soft_levels(a, r, h, x, 0.2, 0.5)
    assert np.isclose(tau_h2, 2 * tau_h) and np.isclose(tau_x2, 2 * tau_x)
    zero_h, zero_x = adaptive_soft_levels(a, np.zeros(20, complex), h, x, 0.1, 0.5)
    assert zero_h == 0 and zero_x == 0
    # explicit formula for τ_h: step·sqrt(β log(KN) Σ_l |r_l|² |a_l^* x|² ||b_l||_∞²) with ||b_l||_∞² = 1/M
    expected = 0.1 * np.sqrt(0.5 * np.log(24) * np.sum(np.abs(r) ** 2 * np.abs(a @ x) ** 2 / 20))
    assert np.isclose(tau_h, expected)


@pytest.mark.parametrize(
    ("s", "error"),
    [(-1, ValueError), (11, ValueError), (2.0, TypeError), (np.array([1.5]), TypeError)],
)
def test_hard_threshold_rejects_bad_sparsity(s, error):
    with pytest.raises(error, match="s"):
        hard_threshold(np.ones(10, complex), s)


def test_soft_threshold_rejects_bad_levels_and_data():
    with pytest.raises(ValueError, match="tau"):
        soft_threshold(np.ones(4, complex), -1.0)
    with pytest.raises(ValueError, match="v"):
        soft_threshold(np.array([np.nan, 1.0]), 0.1)
    with pytest.raises(TypeError, match="v"):
        hard_threshold([1.0, 2.0], 1)
