"""sde: Flow-GRPO's SDE step, its log-probability and KL, and the equal marginals of SDE and ODE."""

from __future__ import annotations

import math

import pytest
import torch

from neurips26.flow import uniform_grid
from neurips26.spatialflow_grpo import sde


def images(seed: int, b: int = 4) -> torch.Tensor:
    return torch.randn(b, 3, 16, 16, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_noise_std_follows_the_schedule_and_guards_t_equal_one():
    assert sde.noise_std(0.5, 0.4, 0.7) == pytest.approx(0.7)
    assert sde.noise_std(0.8, 0.6, 1.0) == pytest.approx(2.0)
    assert sde.noise_std(1.0, 0.75, 0.7) == pytest.approx(0.7 * math.sqrt(1 / 0.25))  # 1 − t at t_next


def test_log_prob_equals_the_normal_log_density_averaged_over_dimensions():
    x, v = images(0), images(1)
    step = sde.sde_step(x, v, 0.6, 0.45, a=0.7, generator=torch.Generator().manual_seed(2))
    normal = torch.distributions.Normal(step.mean, step.std)
    expected = normal.log_prob(step.sample).mean(dim=(1, 2, 3))
    assert torch.allclose(step.log_prob, expected, atol=1e-6)
    assert step.token_log_prob.shape == (4, 64)
    assert torch.allclose(step.token_log_prob.mean(1), step.log_prob, atol=1e-9)
    first = normal.log_prob(step.sample)[:, :, :2, :2].mean(dim=(1, 2, 3))  # token 0: the top-left 2x2 patch
    assert torch.allclose(step.token_log_prob[:, 0], first, atol=1e-9)
    again, tokens = sde.step_log_prob(x, v, step.sample, 0.6, 0.45, a=0.7)
    assert torch.allclose(again, step.log_prob, atol=1e-12) and torch.allclose(tokens, step.token_log_prob)


def test_the_mean_matches_the_sde_drift_and_a_zero_noise_level_is_the_euler_step():
    x, v = images(3), images(4)
    t, t_next, a = 0.7, 0.55, 0.7
    sigma = a * math.sqrt(t / (1 - t))
    dt = t_next - t
    score = -(x + (1 - t) * v) / t
    drift = v - 0.5 * sigma**2 * score  # reverse-time drift in forward time t: v − σ²/2 ∇log p
    mean, std, _ = sde.step_mean(x, v, t, t_next, a)
    assert torch.allclose(mean, x + drift * dt, atol=1e-12)
    assert std == pytest.approx(sigma * math.sqrt(-dt))
    step = sde.sde_step(x, v, t, t_next, a=0.0)
    assert torch.equal(step.sample, x + dt * v) and step.std == 0.0


def test_only_the_mean_carries_gradient():
    x, v = images(5), images(6).requires_grad_(True)
    step = sde.sde_step(x, v, 0.5, 0.3, generator=torch.Generator().manual_seed(0))
    assert not step.sample.requires_grad
    (grad,) = torch.autograd.grad(step.log_prob.sum(), v)
    mean, std, _ = sde.step_mean(x, v.detach(), 0.5, 0.3)
    sigma = sde.noise_std(0.5, 0.3)
    dmean_dv = (1 + sigma**2 * 0.5 / (2 * 0.5)) * (0.3 - 0.5)
    manual = (step.sample - mean) / std**2 * dmean_dv / (3 * 16 * 16)
    assert torch.allclose(grad, manual, atol=1e-12)


def test_step_kl_is_the_gaussian_kl_and_its_velocity_form():
    x, v, v_ref = images(7), images(8), images(9)
    t, t_next = 0.6, 0.4
    mean, std, sigma = sde.step_mean(x, v, t, t_next)
    mean_ref, _, _ = sde.step_mean(x, v_ref, t, t_next)
    kl = sde.step_kl(mean, mean_ref, std, sigma)
    torch_kl = torch.distributions.kl_divergence(
        torch.distributions.Normal(mean, std), torch.distributions.Normal(mean_ref, std)
    )
    assert torch.allclose(kl * 768, torch_kl.sum(dim=(1, 2, 3)), rtol=1e-10)
    dt = t_next - t
    closed = (
        abs(dt) / 2 * (sigma * (1 - t) / (2 * t) + 1 / sigma) ** 2 * ((v - v_ref) ** 2).mean(dim=(1, 2, 3))
    )
    assert torch.allclose(kl, closed, rtol=1e-10)
    code = sde.step_kl(mean, mean_ref, std, sigma, convention="code")
    assert torch.allclose(code, kl * abs(dt), rtol=1e-10)
    assert torch.equal(sde.step_kl(mean, mean, std, sigma), torch.zeros(4, dtype=torch.float64))


def gaussian_velocity(m: float, s: float):
    """The exact velocity E[ε − x₀ | x_t] for data x₀ ~ N(m, s²) on the linear path."""

    def v(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        tt = t.reshape(-1, 1, 1, 1)
        var = (1 - tt) ** 2 * s**2 + tt**2
        e_x0 = m + (1 - tt) * s**2 * (x - (1 - tt) * m) / var
        e_eps = tt * (x - (1 - tt) * m) / var
        return e_eps - e_x0

    return v


def test_sde_and_ode_samplers_keep_the_data_marginal():
    m, s, n = 2.0, 0.5, 40_000
    noise = torch.randn(n, 1, 1, 1, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    grid = uniform_grid(200)
    for mode in ("ode", "sde"):
        out = sde.sample(
            gaussian_velocity(m, s),
            noise,
            grid,
            mode=mode,
            generator=torch.Generator().manual_seed(1),
            patch=1,
        ).final.flatten()
        se_mean, se_std = s / math.sqrt(n), s / math.sqrt(2 * n)
        assert abs(out.mean().item() - m) < 4 * se_mean + 0.01, mode
        assert abs(out.std().item() - s) < 4 * se_std + 0.01, mode


def test_sample_records_states_and_old_log_probs():
    def v(x, t):
        return 0.5 * x

    noise = images(10, 2)
    grid = uniform_grid(6)
    tr = sde.sample(v, noise, grid, generator=torch.Generator().manual_seed(0))
    assert tr.states.shape == (7, 2, 3, 16, 16) and tr.log_probs.shape == (6, 2)
    assert tr.token_log_probs.shape == (6, 2, 64) and torch.equal(tr.states[0], noise)
    for n in range(6):
        lp, _ = sde.step_log_prob(tr.states[n], v(tr.states[n], None), tr.states[n + 1], grid[n], grid[n + 1])
        assert torch.allclose(lp, tr.log_probs[n], atol=1e-12)
    again = sde.sample(v, noise, grid, generator=torch.Generator().manual_seed(0))
    assert torch.equal(again.states, tr.states)
    ode = sde.sample(v, noise, grid, mode="ode")
    assert torch.equal(ode.log_probs, torch.zeros(6, 2, dtype=torch.float64))


def test_bad_inputs_name_the_argument():
    x = images(0)
    with pytest.raises(ValueError, match="t_next"):
        sde.noise_std(0.4, 0.5)
    with pytest.raises(ValueError, match="a"):
        sde.noise_std(0.5, 0.4, -1.0)
    with pytest.raises(TypeError, match="x"):
        sde.step_mean([1.0], x, 0.5, 0.4)
    with pytest.raises(ValueError, match="v"):
        sde.step_mean(x, x[:, :2], 0.5, 0.4)
    with pytest.raises(ValueError, match="a must be > 0"):
        sde.step_log_prob(x, x, x, 0.5, 0.4, a=0.0)
    with pytest.raises(ValueError, match="convention"):
        sde.step_kl(x, x, 0.1, 0.1, convention="paper")
    with pytest.raises(ValueError, match="grid"):
        sde.sample(lambda z, t: z, x, (0.0, 1.0))
    with pytest.raises(ValueError, match="mode"):
        sde.sample(lambda z, t: z, x, (1.0, 0.0), mode="ddim")


def test_a_window_makes_only_its_steps_stochastic():
    def v(x, t):
        return 0.5 * x

    noise = images(11, 2)
    grid = uniform_grid(4)
    tr = sde.sample(v, noise, grid, generator=torch.Generator().manual_seed(0), window=(1, 3))
    assert torch.equal(tr.log_probs[0], torch.zeros(2, dtype=torch.float64))
    assert torch.equal(tr.log_probs[3], torch.zeros(2, dtype=torch.float64))
    assert (tr.log_probs[1:3] != 0).all()
    euler = tr.states[3] + (grid[4] - grid[3]) * v(tr.states[3], None)
    assert torch.equal(tr.states[4], euler)  # the last step is deterministic
    with pytest.raises(ValueError, match="window"):
        sde.sample(v, noise, grid, window=(2, 5))
    with pytest.raises(ValueError, match="window"):
        sde.sample(v, noise, grid, window=(2, 2))
