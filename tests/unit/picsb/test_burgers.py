"""Tests of the Burgers solvers: the residual's exactness, the scheme's order, the lifts, the LF gap."""

import math

import pytest
import torch

from neurips26.picsb import burgers as B

CFG = B.BurgersConfig()


# --- the HF scheme and its residual ------------------------------------------------------------------------


def test_residual_of_the_hf_solution_vanishes_single_and_batched():
    u0 = B.initial_conditions(8, seed=0)
    hf = B.solve(u0)
    assert hf.shape == (8, 32, 64) and hf.dtype == torch.float64
    assert torch.equal(hf[:, 0], u0)
    assert B.residual(hf).abs().max().item() < 1e-10
    assert B.residual(hf[3]).shape == (31, 64)
    assert B.residual(hf[3]).abs().max().item() < 1e-10
    assert torch.allclose(B.solve(u0[3]), hf[3], rtol=0, atol=1e-14)  # batched = one by one


def test_residual_of_a_constant_is_zero_and_of_the_lf_field_is_not():
    const = torch.full((2, 32, 64), 0.7, dtype=torch.float64)
    assert B.residual(const).abs().max().item() < 1e-14
    u0 = B.initial_conditions(4, seed=1)
    lf_norm = B.residual(B.low_fidelity(u0)).norm(dim=(-2, -1))
    assert lf_norm.min().item() > 1e-3  # the LF prior is not a solution of the HF scheme


def test_one_step_is_euler_with_spectral_derivatives_by_hand():
    # u = sin x: (u²/2)_x = sin x cos x = sin(2x)/2, u_xx = -sin x (all modes kept by the 2/3 rule).
    x = 2 * math.pi * torch.arange(64, dtype=torch.float64) / 64
    u = torch.sin(x)
    expected = u + 0.02 * (-0.5 * torch.sin(2 * x) - 0.1 * torch.sin(x))
    assert torch.allclose(B.step(u, 0.02, 0.1), expected, atol=1e-14)


def test_step_removes_the_aliased_modes_of_the_product():
    # u = cos(20 x): u² = (1 + cos(40 x))/2, and 40 > 64/3 is cut, so the advection tendency vanishes.
    x = 2 * math.pi * torch.arange(64, dtype=torch.float64) / 64
    u = torch.cos(20 * x)
    diffused = u - 0.02 * 0.1 * 400 * u
    assert torch.allclose(B.step(u, 0.02, 0.1), diffused, atol=1e-12)


def test_scheme_is_first_order_in_time_and_keeps_the_mean():
    u0 = B.initial_conditions(2, seed=2)
    horizon = 0.32

    def end_state(dt):
        return B.rollout(u0, round(horizon / dt) + 1, dt, 0.1)[..., -1, :]

    reference = end_state(0.02 / 64)
    errors = [(end_state(0.02 / m) - reference).norm().item() for m in (1, 2, 4)]
    ratios = [errors[0] / errors[1], errors[1] / errors[2]]
    assert all(1.7 < r < 2.3 for r in ratios), ratios  # explicit Euler: error ∝ Δt
    hf = B.solve(u0 + 0.3)
    assert torch.allclose(hf.mean(-1), torch.full_like(hf.mean(-1), 0.3), atol=1e-13)


def test_solve_is_differentiable_gradient_matches_central_differences():
    u0 = B.initial_conditions(2, seed=3)
    target = B.solve(B.initial_conditions(2, seed=4))
    v = torch.randn(u0.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(0))

    def loss(a):
        return (B.solve(a) - target).square().sum()

    x = u0.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(loss(x), x)
    h = 1e-6
    fd = (loss(u0 + h * v) - loss(u0 - h * v)) / (2 * h)
    assert torch.allclose((grad * v).sum(), fd, rtol=1e-4)


def test_float32_and_device_follow_the_input():
    u0 = B.initial_conditions(3, seed=0, dtype=torch.float32)
    assert B.solve(u0).dtype == torch.float32
    assert B.low_fidelity(u0).dtype == torch.float32
    assert B.residual(B.solve(u0)).abs().max().item() < 1e-5


# --- initial conditions -------------------------------------------------------------------------------------


def test_initial_conditions_are_seeded_band_limited_and_bounded():
    a = B.initial_conditions(64, seed=5)
    assert torch.equal(a, B.initial_conditions(64, seed=5))
    assert not torch.equal(a, B.initial_conditions(64, seed=6))
    spectrum = torch.fft.rfft(a, dim=-1).abs()
    assert spectrum[:, 4:].max().item() < 1e-12 and spectrum[:, 0].max().item() < 1e-12  # modes 1..3 only
    assert a.abs().max().item() <= CFG.u_max
    assert abs(CFG.u_max - 11 / 6) < 1e-15


# --- low fidelity and the lifts -----------------------------------------------------------------------------


def test_fourier_lift_is_exact_for_band_limited_fields_and_interpolates():
    xs = {n: 2 * math.pi * torch.arange(n, dtype=torch.float64) / n for n in (8, 64)}

    def field(x):
        return 0.3 + torch.sin(x + 0.4) - 0.5 * torch.cos(2 * x) + 0.2 * torch.sin(3 * x - 1.0)

    lifted = B.fourier_lift(field(xs[8]), 64)
    assert torch.allclose(lifted, field(xs[64]), atol=1e-13)
    coarse = torch.randn(5, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    assert torch.allclose(B.fourier_lift(coarse, 64)[:, ::8], coarse, atol=1e-13)  # with a Nyquist part


def test_time_lift_is_linear_interpolation():
    t = torch.arange(9, dtype=torch.float64) * 4  # LF frames at HF steps 0, 4, ..., 32
    frames = (2.0 - 0.5 * t)[:, None] * torch.ones(1, 3, dtype=torch.float64)
    lifted = B.time_lift(frames, 4, 32)
    expected = (2.0 - 0.5 * torch.arange(32, dtype=torch.float64))[:, None].expand(32, 3)
    assert torch.allclose(lifted, expected, atol=1e-14)
    assert torch.equal(lifted[::4], frames[:8])
    with pytest.raises(ValueError, match="count"):
        B.time_lift(frames, 4, 34)


def test_low_fidelity_gap_median_is_in_range():
    u0 = B.initial_conditions(32, seed=11)
    lf = B.low_fidelity(u0)
    assert lf.shape == (32, 32, 64)
    errors = B.relative_l2(lf, B.solve(u0))
    assert 0.10 <= errors.median().item() <= 0.30, errors.median().item()
    assert torch.allclose(lf[:, 0], u0, atol=1e-13)  # band-limited u0: the LF start is exact


def test_lf_config_properties():
    assert CFG.lf_frames == 9 and abs(CFG.lf_dt - 0.08) < 1e-15 and abs(CFG.lf_nu - 0.2) < 1e-15
    assert CFG.shape == (32, 64) and B.dealiased_kmax(64) == 21 and B.dealiased_kmax(8) == 2


# --- bad input ----------------------------------------------------------------------------------------------


def test_lf_grid_not_dividing_the_grid_is_rejected():
    with pytest.raises(ValueError, match="lf_grid"):
        B.BurgersConfig(lf_grid=12)
    with pytest.raises(TypeError, match="lf_grid"):
        B.BurgersConfig(lf_grid=8.0)


def test_unstable_steps_name_the_field_and_the_bound():
    with pytest.raises(ValueError, match=r"dt: .*advection-diffusion limit .*0\.02[0-9]"):
        B.BurgersConfig(dt=0.03)
    with pytest.raises(ValueError, match=r"dt: .*diffusion limit nu\*k_max\^2\*dt <= 2"):
        B.BurgersConfig(nu=1.0)
    with pytest.raises(ValueError, match="lf_dt_factor: .*limit"):
        B.BurgersConfig(lf_dt_factor=12)


def test_other_bad_inputs():
    with pytest.raises(ValueError, match="grid"):
        B.BurgersConfig(grid=63, lf_grid=7)
    with pytest.raises(ValueError, match="dt"):
        B.BurgersConfig(dt=0.0)
    with pytest.raises(ValueError, match="u0"):
        B.solve(torch.zeros(3, 32, dtype=torch.float64))
    with pytest.raises(ValueError, match="u must have shape"):
        B.residual(torch.zeros(31, 64, dtype=torch.float64))
    with pytest.raises(TypeError, match="u0"):
        B.solve(torch.zeros(64, dtype=torch.int64))
    with pytest.raises(ValueError, match="n"):
        B.initial_conditions(0, seed=0)
    with pytest.raises(ValueError, match="seed"):
        B.initial_conditions(2, seed=-1)
    with pytest.raises(ValueError, match="same shape"):
        B.relative_l2(torch.zeros(2, 32, 64), torch.ones(32, 64))
