"""DPS baseline: closed-form noising, ζ = 0 is ancestral sampling, guidance gradient, projection."""

from __future__ import annotations

import pytest
import torch

from neurips26.picsb.baselines import dps
from neurips26.picsb.burgers import BurgersConfig, initial_conditions, solve
from neurips26.picsb.observations import observe

BURGERS = BurgersConfig(grid=16, frames=8, lf_grid=8)
CONFIG = dps.PriorConfig(burgers=BURGERS, channels=(16, 16), time_dim=16, groups=2, train_steps=3, batch=4)


def _problem(dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    u = solve(initial_conditions(2, 1, BURGERS).to(dtype), BURGERS)
    mask = torch.zeros(u.shape, dtype=torch.bool)
    mask[..., [1, 6, 11]] = True
    return u, observe(u, mask), mask


def test_forward_noising_matches_closed_form() -> None:
    prior = dps.Prior(CONFIG)
    betas = prior.betas
    a, v = 1.0, 0.0  # x_n = a x0 + sqrt(v) ε from composing x_n = √(1−β_n) x_{n−1} + √β_n ε_n
    for n in range(CONFIG.diffusion_steps):
        a, v = a * (1.0 - betas[n].item()) ** 0.5, (1.0 - betas[n].item()) * v + betas[n].item()
        if n in (0, 9, 499, 999):
            assert prior.alpha_bars[n].item() == pytest.approx(a * a, rel=1e-12)
            assert 1.0 - prior.alpha_bars[n].item() == pytest.approx(v, rel=1e-12)
    x0 = torch.randn(3, 8, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    noise = torch.randn(3, 8, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    n = torch.tensor([0, 500, 999])
    ab = torch.cumprod(1 - torch.linspace(1e-4, 0.02, 1000, dtype=torch.float64), 0)[n][:, None, None]
    torch.testing.assert_close(dps.q_sample(prior, x0, n, noise), ab.sqrt() * x0 + (1 - ab).sqrt() * noise)


def test_zeta_zero_is_seeded_ancestral_sampling() -> None:
    prior = dps.Prior(CONFIG, seed=3).eval()
    _, y, mask = _problem()
    cfg = dps.DPSConfig(steps=5, zeta_obs=0.0, zeta_pde=1.0)
    first = dps.dps_sample(prior, y, mask, cfg, generator=torch.Generator().manual_seed(7))
    again = dps.dps_sample(prior, y, mask, cfg, generator=torch.Generator().manual_seed(7))
    other = dps.dps_sample(prior, y, mask, cfg, generator=torch.Generator().manual_seed(8))
    plain = dps.ancestral_sample(prior, tuple(y.shape), y, 5, torch.Generator().manual_seed(7))
    assert torch.equal(first.field, again.field)
    assert not torch.equal(first.field, other.field)
    assert torch.equal(first.field, torch.where(mask, y, plain))
    assert (first.nfe_forward, first.nfe_backward) == (5, 0)


def test_guidance_gradient_matches_central_differences() -> None:
    cfg = dps.PriorConfig(burgers=BURGERS, channels=(4, 4), time_dim=4, groups=2)
    prior = dps.Prior(cfg, seed=1).to(torch.float64)
    _, y, mask = _problem(torch.float64)
    x = torch.randn(y.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    n = torch.tensor([300, 700])
    for zeta_pde in (0.0, 0.5):
        grad, _ = dps.guidance_gradient(prior, x, n, y, mask, zeta_pde)

        def loss(z: torch.Tensor, zeta_pde: float = zeta_pde) -> float:
            with torch.no_grad():
                x0_hat, _ = dps.tweedie_x0(prior, z, n)
                return dps.guidance_loss(x0_hat, y, mask, zeta_pde, BURGERS).sum().item()

        h = 1e-6
        for idx in [(0, 0, 0), (0, 3, 5), (1, 7, 15), (1, 2, 9)]:
            e = torch.zeros_like(x)
            e[idx] = h
            fd = (loss(x + e) - loss(x - e)) / (2 * h)
            assert grad[idx].item() == pytest.approx(fd, rel=1e-5, abs=1e-9)


def test_guided_sample_honours_sensors_and_counts_nfes() -> None:
    prior = dps.Prior(CONFIG).eval()
    u, y, mask = _problem()
    cfg = dps.DPSConfig(steps=4, zeta_obs=0.5, zeta_pde=0.1)
    result = dps.dps_sample(prior, y, mask, cfg, generator=torch.Generator().manual_seed(0), x1=u)
    assert torch.equal(result.field[mask], y[mask])
    assert torch.isfinite(result.field).all()
    assert (result.nfe_forward, result.nfe_backward) == (4, 4)


def test_step_grid_is_descending_and_spans_the_schedule() -> None:
    assert dps.step_grid(1000, 1) == (0,)
    grid = dps.step_grid(1000, 10)
    assert grid[0] == 999 and grid[-1] == 0 and list(grid) == sorted(grid, reverse=True)
    assert len(set(dps.step_grid(1000, 1000))) == 1000


def test_prior_trains_with_finite_loss() -> None:
    fields = solve(initial_conditions(8, 0, BURGERS), BURGERS)
    prior, losses = dps.train_prior(fields, CONFIG, seed=0)
    assert len(losses) == CONFIG.train_steps and all(torch.isfinite(torch.tensor(losses)))
    assert not prior.training


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"steps": 0}, "steps"), ({"zeta_obs": -1.0}, "zeta_obs"), ({"zeta_pde": -0.1}, "zeta_pde")],
)
def test_bad_dps_config_names_the_field(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        dps.DPSConfig(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"diffusion_steps": 0}, "diffusion_steps"),
        ({"beta_start": 0.0}, "beta_start"),
        ({"beta_end": 1.0}, "beta_end"),
        ({"train_steps": 0}, "train_steps"),
        ({"batch": 0}, "batch"),
        ({"lr": 0.0}, "lr"),
    ],
)
def test_bad_prior_config_names_the_field(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        dps.PriorConfig(burgers=BURGERS, channels=(4, 4), time_dim=4, groups=2, **kwargs)


def test_bad_inputs_name_the_argument() -> None:
    prior = dps.Prior(CONFIG)
    _, y, mask = _problem()
    gen = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="mask"):
        dps.dps_sample(prior, y, mask[:, :, :8], generator=gen)
    with pytest.raises(TypeError, match="mask"):
        dps.dps_sample(prior, y, mask.float(), generator=gen)
    with pytest.raises(TypeError, match="generator"):
        dps.dps_sample(prior, y, mask, generator=0)
    with pytest.raises(TypeError, match="prior"):
        dps.dps_sample(object(), y, mask, generator=gen)
    with pytest.raises(ValueError, match="steps"):
        dps.dps_sample(prior, y, mask, dps.DPSConfig(steps=1001), generator=gen)
    with pytest.raises(ValueError, match="hf_fields"):
        dps.train_prior(y[:, :4], CONFIG)


def test_residual_guidance_acts_only_from_its_alpha_bar() -> None:
    """``pde_alpha_bar = 1`` switches the residual guidance off everywhere (the sensors-only run), and
    ``0`` keeps it at every step; a threshold in between lies between the two."""
    prior = dps.Prior(CONFIG, seed=2).eval()
    _, y, mask = _problem()

    def run(**kw: float) -> torch.Tensor:
        gen = torch.Generator().manual_seed(5)
        return dps.dps_sample(prior, y, mask, dps.DPSConfig(steps=6, zeta_obs=0.5, **kw), generator=gen).field

    off = run(zeta_pde=0.0)
    assert torch.equal(run(zeta_pde=0.3, pde_alpha_bar=1.0), off)
    always = run(zeta_pde=0.3, pde_alpha_bar=0.0)
    late = run(zeta_pde=0.3, pde_alpha_bar=0.5)
    assert not torch.equal(always, off) and not torch.equal(late, off) and not torch.equal(late, always)
    with pytest.raises(ValueError, match="pde_alpha_bar"):
        dps.DPSConfig(pde_alpha_bar=1.5)
