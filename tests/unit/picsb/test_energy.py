"""Tests of the auxiliary energy: P_low, the projection, the energy's zero, gradients vs finite diffs."""

import math

import pytest
import torch

from neurips26.picsb import energy as E
from neurips26.picsb.burgers import initial_conditions, low_fidelity, residual, solve
from neurips26.picsb.observations import ObservationConfig, make_masks, observe


def _case(n=3, seed=0, sigma_o=0.0, kind="probes"):
    u0 = initial_conditions(n, seed=seed)
    hf, x1 = solve(u0), low_fidelity(u0)
    mask = make_masks(n, 32, 64, ObservationConfig(kind=kind), seed=seed)
    return hf, x1, mask, observe(hf, mask, sigma_o, seed=seed)


def _directional_check(fn, x, seeds=(0, 1, 2), h=1e-6):
    """⟨∇fn(x), v⟩ against the central difference (fn(x + h v) − fn(x − h v)) / 2h, float64."""
    xg = x.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(fn(xg), xg)
    for s in seeds:
        v = torch.randn(x.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(s))
        fd = (fn(x + h * v) - fn(x - h * v)) / (2 * h)
        torch.testing.assert_close((grad * v).sum(), fd, rtol=1e-4, atol=0.0)
    coords = [(0, 5, 7), (1, 0, 63), (2, 31, 30)]
    for c in coords:
        e = torch.zeros_like(x)
        e[c] = 1.0
        fd = (fn(x + h * e) - fn(x - h * e)) / (2 * h)
        torch.testing.assert_close(grad[c], fd, rtol=1e-4, atol=1e-9)


def test_low_pass_is_an_idempotent_orthogonal_projection_keeping_modes_up_to_two():
    x = torch.randn(4, 32, 64, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    z = torch.randn(4, 32, 64, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    p = E.low_pass(x)
    torch.testing.assert_close(E.low_pass(p), p, rtol=0, atol=1e-13)
    torch.testing.assert_close((E.low_pass(x) * z).sum(), (x * E.low_pass(z)).sum())  # self-adjoint
    grid = 2 * math.pi * torch.arange(64, dtype=torch.float64) / 64
    low = 0.2 + torch.sin(grid) + torch.cos(2 * grid - 0.3)
    torch.testing.assert_close(E.low_pass(low + torch.sin(3 * grid) + torch.cos(32 * grid)), low)
    assert E.low_pass(torch.sin(3 * grid)).abs().max().item() < 1e-14


def test_projection_enforces_the_observations_and_leaves_the_rest():
    hf, x1, mask, y = _case()
    x = E.project(x1, mask, y)
    assert torch.equal(x[mask], y[mask]) and torch.equal(x[~mask], x1[~mask])
    assert torch.equal(E.project(x, mask, y), x)


def test_truth_with_its_own_prior_has_zero_energy_the_lf_prior_does_not():
    hf, x1, mask, y = _case()
    for sigma_o in (0.0, 0.01):
        cfg = E.EnergyConfig(sigma_o=sigma_o)
        assert E.energy(hf, hf, y, mask, cfg).abs().max().item() < 1e-18
    terms = E.energy_terms(x1, x1, y, mask, E.EnergyConfig(sigma_o=0.01))
    assert terms["total"].shape == (3,) and (terms["residual"] > 0).all() and (terms["data"] > 0).all()
    assert torch.equal(terms["prior"], torch.zeros(3, dtype=torch.float64))
    torch.testing.assert_close(terms["total"], terms["residual"] + terms["data"] + terms["prior"])
    hard = E.energy_terms(x1, x1, y, mask, E.EnergyConfig(sigma_o=0.0))
    assert torch.equal(hard["data"], torch.zeros(3, dtype=torch.float64))


def test_energy_terms_by_hand():
    hf, x1, mask, y = _case(n=2, seed=4, sigma_o=0.01, kind="random")
    x = 0.5 * (hf + x1)
    cfg = E.EnergyConfig(lambda_r=2.0, lambda_o=0.5, lambda_p=0.1, sigma_o=0.01)
    expected = (
        2.0 * residual(x).square().sum((-2, -1))
        + 0.5 / (2 * 0.01**2) * (mask * (x - y)).square().sum((-2, -1))
        + 0.1 * E.low_pass(x - x1).square().sum((-2, -1))
    )
    torch.testing.assert_close(E.energy(x, x1, y, mask, cfg), expected)
    torch.testing.assert_close(E.energy(x[1], x1[1], y[1], mask[1], cfg), expected[1])  # unbatched


def test_gradient_of_squared_residual_matches_central_differences():
    hf, x1, _, _ = _case()
    _directional_check(lambda x: residual(x).square().sum(), 0.5 * (hf + x1))


def test_gradient_of_the_energy_matches_central_differences():
    hf, x1, mask, y = _case(sigma_o=0.01)
    cfg = E.EnergyConfig(lambda_r=1.0, lambda_o=1e-4, lambda_p=0.1, sigma_o=0.01)
    _directional_check(lambda x: E.energy(x, x1, y, mask, cfg).sum(), 0.5 * (hf + x1))
    hard = E.EnergyConfig(sigma_o=0.0, lambda_p=0.1)
    _directional_check(lambda x: E.energy(E.project(x, mask, y), x1, y, mask, hard).sum(), x1.clone())


def test_bad_inputs_name_the_argument():
    hf, x1, mask, y = _case(n=2)
    with pytest.raises(ValueError, match="mask"):
        E.energy(hf, x1, y, mask[0])
    with pytest.raises(ValueError, match="mask"):
        E.project(hf, mask[:, :16], y)
    with pytest.raises(ValueError, match="x1"):
        E.energy(hf, x1[0], y, mask)
    with pytest.raises(ValueError, match="y"):
        E.project(hf, mask, y[0])
    with pytest.raises(ValueError, match="lambda_r"):
        E.EnergyConfig(lambda_r=-1.0)
    with pytest.raises(ValueError, match="sigma_o"):
        E.EnergyConfig(sigma_o=-0.01)
    with pytest.raises(ValueError, match="k_low"):
        E.low_pass(hf, k_low=-1)
