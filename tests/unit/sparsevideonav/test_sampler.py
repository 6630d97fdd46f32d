"""Sampling with reference injection: one Euler step with the exact velocity lands on x₀; the reference leaves
bit for bit; the multistep rule starts as Euler and beats it on a Gaussian whose flow is known exactly."""

from __future__ import annotations

import pytest
import torch

from neurips26.sparsevideonav.sampler import RELEASED_GRID, inject, sample


@pytest.fixture(autouse=True)
def _float64():
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def _reference(batch: int = 3) -> torch.Tensor:
    return torch.randn(batch, 2, 2, 16, generator=torch.Generator().manual_seed(0))


def test_one_euler_step_with_the_exact_velocity_recovers_x0():
    ref = _reference()
    x0 = torch.randn(3, 10, 2, 16, generator=torch.Generator().manual_seed(1))

    def exact(z, t):  # a single data point: u = ε − x₀ = (z − x₀)/t
        return (z - x0) / t[:, None, None, None]

    for method in ("euler", "multistep"):
        for grid in ((1.0, 0.0), RELEASED_GRID):
            out = sample(exact, ref, 8, grid=grid, method=method, generator=torch.Generator().manual_seed(2))
            assert torch.allclose(out[:, 2:], x0[:, 2:], atol=1e-12), (method, grid)
            assert torch.equal(out[:, :2], ref)  # the reference leaves as it came, bit for bit


def test_the_reference_is_reinjected_after_every_step():
    ref = _reference()
    seen = []

    def drifting(z, t):
        seen.append(z[:, :2].clone())
        return torch.ones_like(z)  # would move the reference if it were not put back

    sample(drifting, ref, 8, steps=4, generator=torch.Generator().manual_seed(3))
    assert len(seen) == 4 and all(torch.equal(s, ref) for s in seen)


def _gaussian_flow(scale: float):
    """x₀ ~ N(0, s²): E[ε − x₀ | z_t] = z (t − (1 − t) s²) / ((1 − t)² s² + t²); the flow maps z₁ to s z₁."""

    def velocity(z, t):
        t = t[:, None, None, None]
        return z * (t - (1 - t) * scale**2) / ((1 - t) ** 2 * scale**2 + t**2)

    return velocity


def test_multistep_starts_as_euler_then_is_more_accurate():
    s = 0.3
    ref = _reference(64)
    noise = torch.randn(64, 10, 2, 16, generator=torch.Generator().manual_seed(4))
    exact = s * noise[:, 2:]
    velocity = _gaussian_flow(s)
    states = {}
    for method in ("euler", "multistep"):
        calls = []

        def recording(z, t, calls=calls):
            calls.append(z.clone())
            return velocity(z, t)

        sample(recording, ref, 8, grid=RELEASED_GRID, method=method, noise=noise)
        states[method] = calls
    # the first two steps are first order (the step from t = 1 has h = ∞, so no ratio r), i.e. Euler
    assert torch.allclose(states["euler"][2], states["multistep"][2], atol=1e-14)
    assert not torch.allclose(states["euler"][3], states["multistep"][3], atol=1e-6)  # then second order
    errors = {}
    for method in ("euler", "multistep"):
        for steps in (4, 8):
            out = sample(velocity, ref, 8, steps=steps, method=method, noise=noise)
            rms = (out[:, 2:] - exact).pow(2).mean().sqrt() / exact.pow(2).mean().sqrt()
            errors[method, steps] = float(rms)
    # at 4 steps only one step is second order (the released grid): a small gain; at 8 it halves the error
    assert errors["multistep", 4] < errors["euler", 4], errors
    assert errors["multistep", 8] < 0.6 * errors["euler", 8], errors
    assert errors["euler", 8] < 0.6 * errors["euler", 4]  # and Euler converges (first order)


def test_inject_and_bad_inputs():
    ref = _reference()
    z = torch.randn(3, 10, 2, 16)
    assert torch.equal(inject(z, ref)[:, :2], ref) and torch.equal(inject(z, ref)[:, 2:], z[:, 2:])
    with pytest.raises(ValueError, match="method"):
        sample(lambda z, t: z, ref, 8, steps=4, method="heun", generator=torch.Generator())
    with pytest.raises(ValueError, match="grid"):
        sample(lambda z, t: z, ref, 8, grid=(1.0, 0.5), generator=torch.Generator())
    with pytest.raises(ValueError, match="reference"):
        sample(lambda z, t: z, ref[:, :1], 8, steps=4, generator=torch.Generator())
    with pytest.raises(ValueError, match="noise"):
        sample(lambda z, t: z, ref, 8, steps=4, noise=torch.randn(3, 9, 2, 16))
