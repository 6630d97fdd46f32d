"""The I2SB bridge: marginal ends and coefficients, oracle OT-ODE recovery, posterior moments, hard
conditioning and bad input."""

from __future__ import annotations

import pytest
import torch

from neurips26.picsb.bridge import (
    BridgeSchedule,
    condition,
    oracle,
    posterior_step,
    predict_x0,
    q_sample,
    sample,
    time_grid,
    training_pair,
    training_target,
)

SHAPE = (3, 4, 8)  # (B, T, X), a small field


def fields(dtype: torch.dtype = torch.float64, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(SHAPE, generator=g, dtype=dtype), torch.randn(SHAPE, generator=g, dtype=dtype)


def sensors(x0: torch.Tensor, seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """A random mask and readings ``y`` that equal ``x0`` on it and garbage elsewhere (must be ignored)."""
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(x0.shape, generator=g) < 0.2
    y = torch.where(mask, x0, torch.full_like(x0, 1e3))
    return mask, y


def gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ----------------------------------------------------------------------------------------------------------
# schedule and marginal
# ----------------------------------------------------------------------------------------------------------


def test_schedule_integrates_beta_and_is_symmetric() -> None:
    sched = BridgeSchedule(0.3)
    t = torch.linspace(0, 1, 2001, dtype=torch.float64)
    beta = sched.beta(t)
    assert (
        beta[0] == 0 and beta[-1] == 0 and torch.isclose(beta.max(), torch.tensor(0.3, dtype=torch.float64))
    )
    # σ_t² = ∫₀ᵗ β by the trapezoid rule (exact for a piecewise-linear β with a node at ½)
    trap = torch.cat([torch.zeros(1, dtype=torch.float64), torch.cumsum((beta[1:] + beta[:-1]) / 2, 0)])
    torch.testing.assert_close(sched.sigma2(t), trap * (t[1] - t[0]), rtol=0, atol=1e-13)
    torch.testing.assert_close(sched.sigma_bar2(t), sched.sigma2(1.0) - sched.sigma2(t), rtol=0, atol=1e-15)
    torch.testing.assert_close(sched.sigma2(t) + sched.sigma_bar2(t), torch.full_like(t, 0.15))


def test_coefficients_sum_to_one_and_match_the_gaussian_product() -> None:
    sched = BridgeSchedule(0.3)
    t = torch.linspace(0, 1, 101, dtype=torch.float64)
    mu0, mu1, var = sched.coefficients(t)
    torch.testing.assert_close(mu0 + mu1, torch.ones_like(t), rtol=0, atol=1e-15)
    s2, sb2 = sched.sigma2(t), sched.sigma_bar2(t)
    torch.testing.assert_close(var, s2 * sb2 / (s2 + sb2), rtol=1e-14, atol=0)
    assert (mu0[0], mu1[0], var[0]) == (1.0, 0.0, 0.0)
    assert (mu0[-1], mu1[-1], var[-1]) == (0.0, 1.0, 0.0)
    assert bool((mu1[1:] > mu1[:-1]).all())  # the LF weight grows monotonically from 0 to 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_q_sample_is_x0_at_zero_and_x1_at_one(dtype: torch.dtype) -> None:
    x0, x1 = fields(dtype)
    assert torch.equal(q_sample(x0, x1, 0.0, gen()), x0)
    assert torch.equal(q_sample(x0, x1, 1.0, gen()), x1)
    t = torch.tensor([0.0, 1.0, 0.0], dtype=dtype)  # per-sample times
    out = q_sample(x0, x1, t, gen())
    assert torch.equal(out[0], x0[0]) and torch.equal(out[1], x1[1]) and torch.equal(out[2], x0[2])
    assert out.dtype == dtype


def test_q_sample_moments() -> None:
    """Mean ``μ₀ x₀ + μ₁ x₁`` and variance ``s_t²`` over many seeded draws, and the OT-ODE mean."""
    sched = BridgeSchedule(0.3)
    x0 = torch.tensor([[0.7, -1.2]], dtype=torch.float64).expand(200_000, 2)
    x1 = torch.tensor([[-0.4, 2.0]], dtype=torch.float64).expand(200_000, 2)
    t = 0.37
    mu0, mu1, var = (float(c) for c in sched.coefficients(t))
    draws = q_sample(x0, x1, t, gen(3), schedule=sched)
    mean = mu0 * x0[0] + mu1 * x1[0]
    se = (var / 200_000) ** 0.5
    torch.testing.assert_close(draws.mean(0), mean, rtol=0, atol=5 * se)
    torch.testing.assert_close(draws.var(0), torch.full((2,), var, dtype=torch.float64), rtol=0.02, atol=0)
    torch.testing.assert_close(q_sample(x0[:1], x1[:1], t, None, ot_ode=True)[0], mean, rtol=1e-15, atol=0)


def test_target_and_x0_prediction_are_inverse_and_training_pair_is_consistent() -> None:
    x0, x1 = fields()
    t = torch.tensor([0.05, 0.5, 1.0], dtype=torch.float64)
    x_t = q_sample(x0, x1, t, gen())
    target = training_target(x0, x_t, t)
    torch.testing.assert_close(predict_x0(x_t, target, t), x0, rtol=0, atol=1e-14)
    sigma = BridgeSchedule().sigma2(t).sqrt().reshape(-1, 1, 1)
    torch.testing.assert_close(target, (x_t - x0) / sigma)
    tt, xt2, target2 = training_pair(x0, x1, gen(5))
    assert tt.shape == (3,) and bool(((tt > 0) & (tt <= 1)).all())
    torch.testing.assert_close(predict_x0(xt2, target2, tt.double()), x0, rtol=0, atol=1e-13)
    a, b, c = training_pair(x0, x1, gen(5))
    assert torch.equal(a, tt) and torch.equal(b, xt2) and torch.equal(c, target2)  # seeded


# ----------------------------------------------------------------------------------------------------------
# samplers
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("steps", [5, 10, 37])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_ot_ode_with_the_oracle_returns_x0_along_the_mean_path(steps: int, dtype: torch.dtype) -> None:
    x0, x1 = fields(dtype)
    path = sample(oracle(x0), x1, steps, method="ot-ode", return_path=True)
    assert path.shape == (steps + 1, *SHAPE)
    torch.testing.assert_close(path[-1], x0, rtol=0, atol=1e-6)
    # every state lies on the mean path μ₀(t) x₀ + μ₁(t) x₁ (the OT-ODE is deterministic and exact)
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    for n, t in enumerate(reversed(time_grid(steps))):
        torch.testing.assert_close(path[n], q_sample(x0, x1, t, None, ot_ode=True), rtol=0, atol=tol)


def test_posterior_step_moments_at_a_middle_step() -> None:
    """Mean and variance of ``x_{t_{n−1}} | x_{t_n}`` against the closed form of eq. B3 (seeded draws)."""
    sched = BridgeSchedule(0.3)
    grid = time_grid(10)
    t, t_prev = grid[5], grid[4]
    n = 200_000
    x_t = torch.tensor([0.3, -1.1], dtype=torch.float64).expand(n, 2)
    x0_hat = torch.tensor([1.5, 0.2], dtype=torch.float64).expand(n, 2)
    draws = posterior_step(x_t, x0_hat, t, t_prev, gen(7), schedule=sched)
    s2, s2p = float(sched.sigma2(t)), float(sched.sigma2(t_prev))
    d2 = s2 - s2p
    mean = (d2 * x0_hat[0] + s2p * x_t[0]) / (s2p + d2)
    var = s2p * d2 / (s2p + d2)
    torch.testing.assert_close(draws.mean(0), mean, rtol=0, atol=5 * (var / n) ** 0.5)
    torch.testing.assert_close(draws.var(0), torch.full((2,), var, dtype=torch.float64), rtol=0.02, atol=0)
    quiet = posterior_step(x_t[:1], x0_hat[:1], t, t_prev, None, schedule=sched, ot_ode=True)
    torch.testing.assert_close(quiet[0], mean, rtol=1e-15, atol=0)
    # the last step carries no noise and returns x̂₀
    assert torch.equal(posterior_step(x_t[:1], x0_hat[:1], grid[1], 0.0, gen()), x0_hat[:1].clone())


def test_stochastic_chain_with_the_oracle_keeps_the_bridge_marginal() -> None:
    """From ``x_{t_n} ~ q(·|x₀, x₁)``, steps with ``x̂₀ = x₀`` keep ``x_t ~ q(·|x₀, x₁)`` (eq. B1 ∘ B3)."""
    sched = BridgeSchedule(0.3)
    n = 100_000
    x0 = torch.tensor([1.0, -0.5], dtype=torch.float64).expand(n, 2)
    x1 = torch.tensor([-0.2, 0.8], dtype=torch.float64).expand(n, 2)
    grid = time_grid(10)
    g = gen(11)
    x = q_sample(x0, x1, grid[8], g, schedule=sched)
    for t, t_prev in ((grid[8], grid[7]), (grid[7], grid[6]), (grid[6], grid[5])):
        x = posterior_step(x, x0, t, t_prev, g, schedule=sched)
    mu0, mu1, var = (float(c) for c in sched.coefficients(grid[5]))
    torch.testing.assert_close(x.mean(0), mu0 * x0[0] + mu1 * x1[0], rtol=0, atol=5 * (var / n) ** 0.5)
    torch.testing.assert_close(x.var(0), torch.full((2,), var, dtype=torch.float64), rtol=0.03, atol=0)


def test_stochastic_sampler_is_seeded_and_ends_at_the_oracle_x0() -> None:
    x0, x1 = fields()
    a = sample(oracle(x0), x1, 10, generator=gen(4))
    b = sample(oracle(x0), x1, 10, generator=gen(4))
    assert torch.equal(a, b)
    torch.testing.assert_close(a, x0, rtol=0, atol=1e-12)  # the last step returns x̂₀ = x₀
    path = sample(oracle(x0), x1, 10, generator=gen(4), return_path=True)
    assert not torch.allclose(path[5], q_sample(x0, x1, 0.5, None, ot_ode=True))  # noise on the way


@pytest.mark.parametrize("method", ["stochastic", "ot-ode"])
def test_hard_conditioning_holds_the_sensors_exactly(method: str) -> None:
    """``M ⊙ x = y`` for every sampler, even with a denoiser that ignores the sensors."""
    x0, x1 = fields(torch.float32)
    mask, y = sensors(x0)
    wrong = oracle(torch.zeros_like(x0))  # a "network" that disagrees with the sensors
    out = sample(wrong, x1, 7, method=method, mask=mask, y=y, generator=gen(2), return_path=True)
    assert torch.equal(out[-1][mask], y[mask])
    torch.testing.assert_close(out[-1][~mask], x0[~mask] * 0, rtol=0, atol=1e-6)  # the rest: the network
    # every intermediate state holds the marginal with HF end y on the sensors (the mean for the OT-ODE)
    if method == "ot-ode":
        for n, t in enumerate(reversed(time_grid(7))):
            pinned = q_sample(y, x1, t, None, ot_ode=True)
            torch.testing.assert_close(out[n][mask], pinned[mask], rtol=0, atol=1e-6)


def test_hard_conditioning_with_agreeing_sensors_leaves_the_ot_ode_unchanged() -> None:
    x0, x1 = fields()
    mask, y = sensors(x0)
    free = sample(oracle(x0), x1, 10, method="ot-ode", return_path=True)
    held = sample(oracle(x0), x1, 10, method="ot-ode", mask=mask, y=y, return_path=True)
    torch.testing.assert_close(held, free, rtol=0, atol=1e-12)


def test_condition_draws_the_pinned_marginal_and_keeps_other_sites() -> None:
    x0, x1 = fields()
    mask, y = sensors(x0)
    x = torch.randn(SHAPE, generator=gen(9), dtype=torch.float64)
    out = condition(x, 0.4, x1, y, mask, gen(6))
    assert torch.equal(out[~mask], x[~mask])
    torch.testing.assert_close(out[mask], q_sample(y, x1, 0.4, gen(6))[mask], rtol=0, atol=0)
    assert torch.equal(condition(x, 0.0, x1, y, mask, gen(6))[mask], y[mask])


def test_cond_is_passed_through_and_t_is_a_batch_vector() -> None:
    x0, x1 = fields()
    seen: list[tuple[torch.Tensor, object]] = []
    inner = oracle(x0)

    def net(x_t: torch.Tensor, t: torch.Tensor, cond: object) -> torch.Tensor:
        seen.append((t, cond))
        return inner(x_t, t, cond)

    token = object()
    sample(net, x1, 4, method="ot-ode", cond=token)
    assert [float(t[0]) for t, _ in seen] == [1.0, 0.75, 0.5, 0.25]  # N_s network calls, t_N..t_1
    assert all(c is token and t.shape == (3,) and t.dtype == x1.dtype for t, c in seen)


# ----------------------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------------------


def test_bad_inputs_name_the_argument() -> None:
    x0, x1 = fields()
    mask, y = sensors(x0)
    net = oracle(x0)
    with pytest.raises(ValueError, match="t must be <= 1"):
        q_sample(x0, x1, 1.5, gen())
    with pytest.raises(ValueError, match="t must"):
        q_sample(x0, x1, -0.1, gen())
    with pytest.raises(ValueError, match="t must lie in"):
        q_sample(x0, x1, torch.tensor([0.1, 1.2, 0.3]), gen())
    with pytest.raises(ValueError, match="t must"):
        q_sample(x0, x1, torch.tensor([0.1, 0.2]), gen())  # not (B,)
    with pytest.raises(ValueError, match="t must"):
        training_target(x0, x1, 0.0)
    with pytest.raises(ValueError, match="beta_max"):
        BridgeSchedule(0.0)
    with pytest.raises(ValueError, match="beta_max"):
        BridgeSchedule(-0.3)
    with pytest.raises(ValueError, match="steps"):
        sample(net, x1, 0, method="ot-ode")
    with pytest.raises(TypeError, match="steps"):
        sample(net, x1, 2.5, method="ot-ode")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="mask"):
        sample(net, x1, 3, method="ot-ode", mask=mask[:, :2], y=y)
    with pytest.raises(ValueError, match="mask"):
        condition(x1, 0.5, x1, y, mask[0], gen())
    with pytest.raises(TypeError, match="mask"):
        sample(net, x1, 3, method="ot-ode", mask=mask.float(), y=y)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="mask and y"):
        sample(net, x1, 3, method="ot-ode", mask=mask)
    with pytest.raises(ValueError, match="y must"):
        sample(net, x1, 3, method="ot-ode", mask=mask, y=y[:1])
    with pytest.raises(ValueError, match="method"):
        sample(net, x1, 3, method="ode")
    with pytest.raises(TypeError, match="generator"):
        sample(net, x1, 3)  # the stochastic sampler needs a seeded generator
    with pytest.raises(ValueError, match="x1"):
        q_sample(x0, x1[:1], 0.5, gen())
    with pytest.raises(ValueError, match="net"):
        sample(lambda x, t, c: x[:1], x1, 3, method="ot-ode")
    with pytest.raises(ValueError, match="t_prev"):
        posterior_step(x1, x0, 0.3, 0.5, gen())
