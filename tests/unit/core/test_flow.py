"""The shared flow-matching module: the linear path and its inversions, time grids and the timestep shift,
training-time draws, the Euler step and sampler (exact on straight paths, convergent on a Gaussian), and
bad input."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest
import torch

import neurips26.flow as flow
from neurips26.flow import (
    euler_sample,
    euler_step,
    interpolate,
    noise_from_velocity,
    sample_times,
    shift_time,
    shifted_grid,
    uniform_grid,
    velocity_target,
    x0_from_velocity,
)

SHAPE = (4, 3, 5)  # (B, F, D): a batch of short "videos" of vectors


def pair(dtype: torch.dtype = torch.float64, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Data ``x0`` (far from the origin) and noise ``ε`` of :data:`SHAPE`."""
    g = torch.Generator().manual_seed(seed)
    x0 = 2.0 + 3.0 * torch.randn(SHAPE, generator=g, dtype=dtype)
    return x0, torch.randn(SHAPE, generator=g, dtype=dtype)


def per_sample_times(seed: int = 1) -> torch.Tensor:
    return torch.rand(SHAPE[0], generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


# ----------------------------------------------------------------------------------------------------------
# the path
# ----------------------------------------------------------------------------------------------------------


def test_interpolate_endpoints_are_exact() -> None:
    x0, eps = pair()
    assert torch.equal(interpolate(x0, eps, 0.0), x0)
    assert torch.equal(interpolate(x0, eps, 1.0), eps)
    assert torch.equal(interpolate(x0, eps, torch.zeros(SHAPE[0], dtype=torch.float64)), x0)
    assert torch.equal(interpolate(x0, eps, torch.ones(SHAPE[:2], dtype=torch.float64)), eps)


def test_times_broadcast_per_sample_and_per_frame() -> None:
    x0, eps = pair()
    t = torch.rand(SHAPE[:2], generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    z = interpolate(x0, eps, t)  # (B, F) levels: one per frame
    for b in range(SHAPE[0]):
        for f in range(SHAPE[1]):
            s = float(t[b, f])
            torch.testing.assert_close(z[b, f], (1 - s) * x0[b, f] + s * eps[b, f], rtol=0, atol=1e-14)
    ts = per_sample_times()
    z = interpolate(x0, eps, ts)  # (B,) levels: one per sample
    torch.testing.assert_close(z[2], interpolate(x0[2:3], eps[2:3], float(ts[2]))[0], rtol=0, atol=1e-14)
    assert torch.equal(
        interpolate(x0, eps, torch.tensor(0.25, dtype=torch.float64)), interpolate(x0, eps, 0.25)
    )


def test_time_tensor_follows_the_sample_dtype() -> None:
    x0, eps = pair(torch.float32)
    z = interpolate(x0, eps, per_sample_times())  # float64 levels, float32 samples
    assert z.dtype == torch.float32
    assert x0_from_velocity(z, velocity_target(x0, eps), per_sample_times()).dtype == torch.float32


def test_velocity_target_is_the_path_derivative() -> None:
    x0, eps = pair()
    u = velocity_target(x0, eps)
    for t in (0.1, 0.5, 0.9):
        h = 1e-4
        fd = (interpolate(x0, eps, t + h) - interpolate(x0, eps, t - h)) / (2 * h)
        torch.testing.assert_close(fd, u, rtol=0, atol=1e-9)


@pytest.mark.parametrize("t", [0.0, 0.3, 1.0, "tensor"])
def test_inversions_recover_both_ends_from_the_true_target(t: object) -> None:
    x0, eps = pair()
    t = per_sample_times() if t == "tensor" else t
    z, u = interpolate(x0, eps, t), velocity_target(x0, eps)
    torch.testing.assert_close(x0_from_velocity(z, u, t), x0, rtol=0, atol=1e-12)
    torch.testing.assert_close(noise_from_velocity(z, u, t), eps, rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------------------------------------
# grids and the shift
# ----------------------------------------------------------------------------------------------------------


def test_uniform_grid() -> None:
    assert uniform_grid(1) == (1.0, 0.0)
    assert uniform_grid(4) == (1.0, 0.75, 0.5, 0.25, 0.0)
    g = uniform_grid(32)
    assert len(g) == 33 and g[0] == 1.0 and g[-1] == 0.0
    assert all(b < a for a, b in zip(g, g[1:], strict=False))


@pytest.mark.parametrize("shift", [0.1, 0.5, 1.0, 3.0, 5.0, 12.0])
def test_shifted_grid_ends_monotone_and_formula(shift: float) -> None:
    g = shifted_grid(16, shift)
    assert len(g) == 17 and g[0] == 1.0 and g[-1] == 0.0  # exact ends, even where 1 + (s − 1) ≠ s in floats
    assert all(b < a for a, b in zip(g, g[1:], strict=False))
    for t, ts in zip(uniform_grid(16), g, strict=True):
        assert math.isclose(ts, shift * t / (1 + (shift - 1) * t), rel_tol=1e-14, abs_tol=1e-15)
        # s > 1 moves every level towards the noise end, s < 1 towards the data end
        assert (ts >= t) if shift >= 1 else (ts <= t)


def test_shift_one_is_uniform_and_tensor_matches_float() -> None:
    assert shifted_grid(7, 1.0) == uniform_grid(7)
    t = torch.linspace(0, 1, 11, dtype=torch.float64)
    assert torch.equal(shift_time(t, 1.0), t)
    torch.testing.assert_close(
        shift_time(t, 5.0), torch.tensor([shift_time(float(x), 5.0) for x in t], dtype=torch.float64)
    )
    # the Self Forcing setting: denoising steps {1000, 750, 500, 250} with shift 5
    sf = shift_time(torch.tensor([1.0, 0.75, 0.5, 0.25], dtype=torch.float64), 5.0)
    torch.testing.assert_close(sf, torch.tensor([1.0, 15 / 16, 5 / 6, 5 / 8], dtype=torch.float64))
    # the shift composes: s₁ then s₂ is s₁·s₂
    torch.testing.assert_close(shift_time(shift_time(t, 3.0), 2.0), shift_time(t, 6.0), rtol=0, atol=1e-15)


# ----------------------------------------------------------------------------------------------------------
# training times
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("distribution", flow.DISTRIBUTIONS)
def test_sample_times_is_deterministic_and_in_range(distribution: str) -> None:
    def draw(seed: int, **kw: object) -> torch.Tensor:
        return sample_times(64, torch.Generator().manual_seed(seed), distribution=distribution, **kw)

    a, b = draw(0), draw(0)
    assert torch.equal(a, b) and not torch.equal(a, draw(1))
    assert a.shape == (64,) and a.dtype == torch.float32
    assert bool(((a >= 0) & (a <= 1)).all())
    a64 = draw(0, dtype=torch.float64)  # drawn in float64 first: the dtype only rounds
    assert a64.dtype == torch.float64 and torch.equal(a64.float(), a)
    frames = sample_times((8, 3), torch.Generator().manual_seed(0), distribution=distribution)
    assert frames.shape == (8, 3)


def test_sample_times_distributions() -> None:
    g = torch.Generator().manual_seed(0)
    u = sample_times(20000, g, dtype=torch.float64)
    assert abs(u.mean().item() - 0.5) < 0.01 and abs(u.var().item() - 1 / 12) < 0.003
    ln = sample_times(
        20000, g, dtype=torch.float64, distribution="logit-normal", logit_mean=0.5, logit_std=2.0
    )
    logits = torch.logit(ln)
    assert abs(logits.mean().item() - 0.5) < 0.05 and abs(logits.std().item() - 2.0) < 0.05


# ----------------------------------------------------------------------------------------------------------
# Euler
# ----------------------------------------------------------------------------------------------------------


def random_grid(seed: int, start: float = 1.0) -> tuple[float, ...]:
    """A decreasing grid from ``start`` to 0 with random spacing."""
    cuts = torch.rand(6, generator=torch.Generator().manual_seed(seed), dtype=torch.float64).sort().values
    return (start, *(start * (1 - c) for c in cuts.tolist()), 0.0)


@pytest.mark.parametrize(
    "grid",
    [uniform_grid(1), uniform_grid(5), shifted_grid(4, 5.0), random_grid(0), random_grid(1, start=0.6)],
)
def test_euler_lands_exactly_on_a_straight_path(grid: tuple[float, ...]) -> None:
    x0, eps = pair()
    calls: list[torch.Tensor] = []

    def straight(z: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        calls.append(t)
        return eps - x0  # the exact velocity of the path through (x0, eps)

    start = interpolate(x0, eps, grid[0])
    out, path = euler_sample(straight, start, grid, return_path=True)
    torch.testing.assert_close(out, x0, rtol=0, atol=1e-12)
    assert len(path) == len(grid) and path[0] is start and path[-1] is out
    for z, t in zip(path, grid, strict=True):  # every state lies on the path at its grid time
        torch.testing.assert_close(z, interpolate(x0, eps, t), rtol=0, atol=1e-12)
    assert len(calls) == len(grid) - 1
    for c, t in zip(calls, grid[:-1], strict=True):  # velocity_fn saw (B,) levels in the sample's dtype
        assert c.shape == (SHAPE[0],) and c.dtype == x0.dtype and bool((c == t).all())


def test_project_reinjects_reference_frames_and_is_inert_when_absent() -> None:
    """Reference injection: frame 0 is known; after every step it is put back at the new level on its
    own path, so it stays exactly there while the other frames move; ``project=None`` is the old loop."""
    x0, eps = pair()
    grid = (1.0, 0.75, 0.5, 0.25, 0.0)

    def velocity(z: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return 0.3 * z - x0  # anything: not the path's velocity

    def project(z: torch.Tensor, t_next: float) -> torch.Tensor:
        z = z.clone()
        z[:, 0] = interpolate(x0[:, 0], eps[:, 0], t_next)
        return z

    plain = euler_sample(velocity, eps, grid)
    out, path = euler_sample(velocity, eps, grid, return_path=True, project=project)
    for z, t in zip(path[1:], grid[1:], strict=True):
        assert torch.equal(z[:, 0], interpolate(x0[:, 0], eps[:, 0], t))
    assert torch.equal(out[:, 0], x0[:, 0]) and not torch.equal(out, plain)
    assert torch.equal(euler_sample(velocity, eps, grid, project=None), plain)
    with pytest.raises(ValueError, match="project"):
        euler_sample(velocity, eps, grid, project=lambda z, t: z[:, :1])
    with pytest.raises(TypeError, match="project"):
        euler_sample(velocity, eps, grid, project=3)


def test_increasing_grid_inverts_data_to_noise() -> None:
    x0, eps = pair()
    out = euler_sample(lambda z, t: eps - x0, x0, tuple(reversed(random_grid(2))))
    torch.testing.assert_close(out, eps, rtol=0, atol=1e-12)


def test_euler_step_moves_each_frame_at_its_own_level() -> None:
    x0, eps = pair()
    t = torch.tensor([[1.0, 0.5, 0.0]] * SHAPE[0], dtype=torch.float64)
    t_next = torch.tensor([[0.75, 0.25, 0.0]] * SHAPE[0], dtype=torch.float64)  # last frame held clean
    z = interpolate(x0, eps, t)
    out = euler_step(z, velocity_target(x0, eps), t, t_next)
    torch.testing.assert_close(out, interpolate(x0, eps, t_next), rtol=0, atol=1e-12)
    assert torch.equal(out[:, 2], z[:, 2])
    torch.testing.assert_close(euler_step(z, velocity_target(x0, eps), 0.4, 0.1), z - 0.3 * (eps - x0))


def gaussian_velocity(mu: torch.Tensor, sigma: torch.Tensor):
    """The optimal velocity ``E[ε − x₀ | z_t = z]`` for data ``x₀ ~ N(μ, diag σ²)``.

    ``z_t ~ N((1 − t) μ, (1 − t)² σ² + t²)`` and ``Cov(ε − x₀, z_t) = t − (1 − t) σ²``, so the conditional
    mean is ``−μ + (t − (1 − t) σ²) / ((1 − t)² σ² + t²) · (z − (1 − t) μ)``.
    """

    def v(z: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        t = t.reshape(-1, *(1,) * (z.ndim - 1))
        gain = (t - (1 - t) * sigma**2) / ((1 - t) ** 2 * sigma**2 + t**2)
        return -mu + gain * (z - (1 - t) * mu)

    return v


def test_euler_on_a_gaussian_converges_to_the_data_distribution() -> None:
    mu = torch.tensor([1.0, -2.0, 0.0], dtype=torch.float64)
    sigma = torch.tensor([0.5, 2.0, 0.1], dtype=torch.float64)
    v = gaussian_velocity(mu, sigma)
    # the ODE is affine in z, z₀ ↦ a z₀ + b; the exact flow has a = σ, b = μ. Probe it with z₀ = 0 and 1.
    probes = torch.stack([torch.zeros(3), torch.ones(3)]).to(torch.float64)
    errors = []
    for steps in (25, 50, 100, 200):
        out = euler_sample(v, probes, uniform_grid(steps))
        b, a = out[0], out[1] - out[0]
        torch.testing.assert_close(b, mu, rtol=0, atol=1e-12)  # the mean travels a straight line: exact
        errors.append((a / sigma - 1).abs().max().item())  # relative error of the std
    assert errors[-1] < 0.025
    for coarse, fine in zip(errors, errors[1:], strict=False):  # first order: the error halves with the step
        assert 0.45 < fine / coarse < 0.55
    # the narrow coordinate (σ = 0.1, μ = 0) bends near the data end: a grid denser there (s < 1) does better
    grids = [shifted_grid(200, s) for s in (1 / 3, 1.0, 3.0)]
    narrow = [euler_sample(v, probes, g)[1, 2].item() - 0.1 for g in grids]
    assert abs(narrow[0]) < abs(narrow[1]) < abs(narrow[2])
    # and on samples: the right mean and std
    noise = torch.randn(20000, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    x = euler_sample(v, noise, shifted_grid(200, 0.5))
    torch.testing.assert_close(x.mean(0), mu, rtol=0, atol=0.03)
    torch.testing.assert_close(x.std(0), sigma, rtol=0.03, atol=0)


def test_euler_sample_grad_switch() -> None:
    w = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    noise = torch.ones(2, 3, dtype=torch.float64)
    out = euler_sample(lambda z, t: w * z, noise, uniform_grid(3))
    assert not out.requires_grad
    out = euler_sample(lambda z, t: w * z, noise, uniform_grid(3), grad=True)
    # three steps of −1/3: z = (1 − w/3)³, d/dw = −(1 − w/3)²
    (grad,) = torch.autograd.grad(out.sum(), w)
    torch.testing.assert_close(grad, torch.tensor(-6 * (1 - 0.5 / 3) ** 2, dtype=torch.float64))


# ----------------------------------------------------------------------------------------------------------
# bad input and imports
# ----------------------------------------------------------------------------------------------------------


def test_bad_times_name_t() -> None:
    x0, eps = pair()
    for bad in (1.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match="t must"):
            interpolate(x0, eps, bad)
    with pytest.raises(ValueError, match="t must lie in"):
        interpolate(x0, eps, torch.full((SHAPE[0],), 1.2))
    with pytest.raises(ValueError, match="t must lie in"):
        interpolate(x0, eps, torch.full((SHAPE[0],), float("nan")))
    with pytest.raises(ValueError, match="t must be a number or a tensor of shape"):
        interpolate(x0, eps, torch.rand(SHAPE[1]))
    with pytest.raises(TypeError, match="t must"):
        interpolate(x0, eps, torch.zeros(SHAPE[0], dtype=torch.long))
    with pytest.raises(TypeError, match="t must"):
        x0_from_velocity(x0, eps, "0.5")
    with pytest.raises(ValueError, match="t_next must"):
        euler_step(x0, eps, 0.5, 2.0)
    with pytest.raises(ValueError, match="t must"):
        shift_time(1.5, 3.0)


def test_bad_shapes_name_the_argument() -> None:
    x0, eps = pair()
    with pytest.raises(ValueError, match="noise must have shape"):
        interpolate(x0, eps[:, :2], 0.5)
    with pytest.raises(ValueError, match="noise must have shape"):
        velocity_target(x0, eps[:2])
    with pytest.raises(ValueError, match="v must have shape"):
        x0_from_velocity(x0, eps[0], 0.5)
    with pytest.raises(ValueError, match="v must have shape"):
        euler_step(x0, eps[..., :1], 0.5, 0.25)
    with pytest.raises(TypeError, match="x0 must be a floating"):
        interpolate(x0.long(), eps, 0.5)
    with pytest.raises(ValueError, match="velocity_fn must return a tensor of shape"):
        euler_sample(lambda z, t: z[:1], eps, uniform_grid(2))
    with pytest.raises(TypeError, match="velocity_fn must be callable"):
        euler_sample(None, eps, uniform_grid(2))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="noise must have a batch dimension"):
        euler_sample(lambda z, t: z, torch.tensor(1.0), uniform_grid(2))


def test_bad_grids_and_settings_name_the_argument() -> None:
    eps = pair()[1]
    for bad in ((1.0, 0.5, 0.7, 0.0), (1.0, 1.0, 0.0), (1.0,), (1.2, 0.0), torch.ones(2, 2)):
        with pytest.raises(ValueError, match="grid"):
            euler_sample(lambda z, t: z, eps, bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="grid"):
        euler_sample(lambda z, t: z, eps, 0.5)  # type: ignore[arg-type]
    for steps in (0, -3):
        with pytest.raises(ValueError, match="steps"):
            uniform_grid(steps)
        with pytest.raises(ValueError, match="steps"):
            shifted_grid(steps, 3.0)
    for shift in (0.0, -1.0, float("inf")):
        with pytest.raises(ValueError, match="shift"):
            shifted_grid(4, shift)
    g = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="batch"):
        sample_times(0, g)
    with pytest.raises(ValueError, match="distribution"):
        sample_times(4, g, distribution="beta")
    with pytest.raises(TypeError, match="generator"):
        sample_times(4, 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="logit_std"):
        sample_times(4, g, distribution="logit-normal", logit_std=0.0)


def test_flow_imports_no_chapter() -> None:
    """A shared part: only torch, the standard library and the shared ``neurips26.validation``."""
    allowed = ("neurips26.flow", "neurips26.validation")
    for path in Path(flow.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("neurips26"):
                assert node.module.startswith(allowed), f"{path.name} imports {node.module}"
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("neurips26") for a in node.names), path.name
