"""Tests of the per-instance baselines: LF-paste, field TTO (Adam on E, projected), 4D-Var through solve."""

import pytest
import torch

from neurips26.picsb.baselines import check_problem
from neurips26.picsb.baselines.field_tto import field_tto
from neurips26.picsb.baselines.fourdvar import fourdvar, misfit
from neurips26.picsb.baselines.lf_paste import lf_paste
from neurips26.picsb.burgers import initial_conditions, low_fidelity, relative_l2, residual, solve
from neurips26.picsb.energy import EnergyConfig, energy, project
from neurips26.picsb.observations import ObservationConfig, make_masks, observe


def _case(n=4, seed=0, sigma_o=0.0, dtype=torch.float64):
    u0 = initial_conditions(n, seed=seed, dtype=dtype)
    hf, x1 = solve(u0), low_fidelity(u0)
    mask = make_masks(n, 32, 64, ObservationConfig(), seed=seed)
    return hf, x1, mask, observe(hf, mask, sigma_o, seed=seed)


def test_lf_paste_honours_the_sensors_and_keeps_the_prior_elsewhere():
    hf, x1, mask, y = _case()
    before = x1.clone()
    x = lf_paste(x1, y, mask)
    assert x.shape == (4, 32, 64) and x.dtype == x1.dtype
    assert torch.equal(x[mask], hf[mask]) and torch.equal(x[~mask], x1[~mask])
    assert torch.equal(x1, before)  # inputs untouched


def test_field_tto_projects_descends_and_is_deterministic():
    hf, x1, mask, y = _case()
    run = field_tto(x1, y, mask, iterations=100)
    assert run.field.shape == x1.shape and run.energy.shape == (101, 4)
    assert torch.equal(run.field[mask], y[mask])  # hard projection after every step
    torch.testing.assert_close(run.energy[0], energy(project(x1, mask, y), x1, y, mask))
    torch.testing.assert_close(run.energy[-1], energy(run.field, x1, y, mask))
    assert (run.energy[-1] < 0.05 * run.energy[0]).all()
    # on these cases TTO beats pasting (a sanity check of the whole loop, not a claim)
    assert relative_l2(run.field, hf).mean() < relative_l2(lf_paste(x1, y, mask), hf).mean()
    again = field_tto(x1, y, mask, iterations=100)
    assert torch.equal(again.field, run.field) and torch.equal(again.energy, run.energy)


def test_field_tto_treats_cases_independently_and_seeds_the_jitter():
    _, x1, mask, y = _case()
    batch = field_tto(x1, y, mask, iterations=20)
    single = field_tto(x1[2:3], y[2:3], mask[2:3], iterations=20)
    torch.testing.assert_close(single.field[0], batch.field[2], rtol=0, atol=1e-12)
    a = field_tto(x1, y, mask, iterations=5, jitter=0.1, seed=3)
    b = field_tto(x1, y, mask, iterations=5, jitter=0.1, seed=3)
    c = field_tto(x1, y, mask, iterations=5, jitter=0.1, seed=4)
    assert torch.equal(a.field, b.field) and not torch.equal(a.field, c.field)
    assert torch.equal(a.field[mask], y[mask])


def test_field_tto_with_noisy_sensors_penalises_instead_of_projecting():
    hf, x1, mask, y = _case(sigma_o=0.01)
    cfg = EnergyConfig(sigma_o=0.01)
    run = field_tto(x1, y, mask, iterations=30, config=cfg)
    torch.testing.assert_close(run.energy[0], energy(x1, x1, y, mask, cfg))  # no projected start
    assert not torch.equal(run.field[mask], y[mask])
    assert (run.energy[-1] < run.energy[0]).all()


def test_field_tto_runs_in_the_inputs_dtype():
    _, x1, mask, y = _case(n=2, dtype=torch.float32)
    run = field_tto(x1, y, mask, iterations=3)
    assert run.field.dtype == torch.float32 and run.energy.dtype == torch.float32


def test_misfit_gradient_matches_central_differences():
    _, x1, mask, y = _case(n=2)
    u0 = x1[:, 0] + 0.05 * torch.randn(2, 64, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    ug = u0.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(misfit(ug, y, mask).sum(), ug)
    h = 1e-6
    for s in range(3):
        v = torch.randn(u0.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(10 + s))
        fd = (misfit(u0 + h * v, y, mask).sum() - misfit(u0 - h * v, y, mask).sum()) / (2 * h)
        torch.testing.assert_close((grad * v).sum(), fd, rtol=1e-4, atol=0.0)


def test_fourdvar_from_the_lf_first_frame_is_exact():
    hf, x1, mask, y = _case(n=4, seed=5)
    run = fourdvar(x1, y, mask, start="lf", iterations=100)
    assert run.u0.shape == (4, 64) and run.field.shape == (4, 32, 64) and run.loss.shape == (101, 4)
    assert relative_l2(run.field, hf).max().item() < 1e-3
    torch.testing.assert_close(run.field, solve(run.u0), rtol=0, atol=0)
    assert residual(run.field).abs().max().item() < 1e-12  # a PDE solution by construction
    torch.testing.assert_close(run.loss.amin(0), misfit(run.u0, y, mask))


def test_fourdvar_from_zero_decreases_the_misfit_and_the_start_argument_is_explicit():
    hf, x1, mask, y = _case(n=4, seed=5)
    run = fourdvar(x1, y, mask, start="zero", iterations=60, lr=3e-2)
    assert (run.loss[-1] < 0.5 * run.loss[0]).all()
    torch.testing.assert_close(run.loss[0], misfit(torch.zeros_like(x1[:, 0]), y, mask))
    explicit = fourdvar(x1, y, mask, start=torch.zeros(4, 64, dtype=torch.float64), iterations=60, lr=3e-2)
    assert torch.equal(explicit.u0, run.u0) and torch.equal(explicit.loss, run.loss)
    none = fourdvar(x1, y, mask, start="zero", iterations=0)
    assert none.loss.shape == (1, 4) and none.u0.abs().max().item() == 0.0
    single = fourdvar(x1[1:2], y[1:2], mask[1:2], start="zero", iterations=60, lr=3e-2)
    torch.testing.assert_close(single.u0[0], run.u0[1], rtol=0, atol=1e-12)
    a = fourdvar(x1, y, mask, start="lf", iterations=3, jitter=0.1, seed=1)
    b = fourdvar(x1, y, mask, start="lf", iterations=3, jitter=0.1, seed=1)
    assert torch.equal(a.u0, b.u0) and relative_l2(a.field, hf).min() > 1e-3


@pytest.mark.parametrize(
    ("call", "error", "name"),
    [
        (lambda x1, y, m: lf_paste(x1[:, :, :32], y, m), ValueError, "x1"),
        (lambda x1, y, m: lf_paste(x1, y[:1], m), ValueError, "y"),
        (lambda x1, y, m: lf_paste(x1, y, m[:1]), ValueError, "mask"),
        (lambda x1, y, m: lf_paste(x1, y, m.double()), TypeError, "mask"),
        (lambda x1, y, m: lf_paste(x1.numpy(), y, m), TypeError, "x1"),
        (lambda x1, y, m: field_tto(x1, y, m, iterations=0), ValueError, "iterations"),
        (lambda x1, y, m: field_tto(x1, y, m, lr=0.0), ValueError, "lr"),
        (lambda x1, y, m: field_tto(x1, y, m, jitter=-0.1), ValueError, "jitter"),
        (lambda x1, y, m: field_tto(x1, y, m, seed=-1), ValueError, "seed"),
        (lambda x1, y, m: field_tto(x1, y, m, config={"lambda_r": 1.0}), TypeError, "config"),
        (lambda x1, y, m: fourdvar(x1, y, m, start="hf"), ValueError, "start"),
        (lambda x1, y, m: fourdvar(x1, y, m, start=torch.zeros(3, 64)), ValueError, "start"),
        (lambda x1, y, m: fourdvar(x1, y, m, iterations=-1), ValueError, "iterations"),
        (lambda x1, y, m: fourdvar(x1, y, m, lr=-1.0), ValueError, "lr"),
        (lambda x1, y, m: fourdvar(x1, y, m, jitter=-1.0), ValueError, "jitter"),
        (lambda x1, y, m: fourdvar(x1, y, m, seed=-3), ValueError, "seed"),
        (lambda x1, y, m: check_problem(x1[0], y[0], m[0]), ValueError, "x1"),
    ],
)
def test_bad_inputs_name_the_argument(call, error, name):
    _, x1, mask, y = _case(n=2)
    with pytest.raises(error, match=name):
        call(x1, y, mask)


def test_field_tto_snapshots_are_the_fields_of_shorter_runs():
    _, x1, mask, y = _case(n=2)
    run = field_tto(x1, y, mask, iterations=12, snapshots=(0, 5, 12))
    assert sorted(run.snapshots) == [0, 5, 12]
    assert torch.equal(run.snapshots[12], run.field)
    assert torch.equal(run.snapshots[0], project(x1, mask, y))
    assert torch.equal(run.snapshots[5], field_tto(x1, y, mask, iterations=5).field)
    with pytest.raises(ValueError, match="snapshots"):
        field_tto(x1, y, mask, iterations=12, snapshots=(13,))
    with pytest.raises(TypeError, match="snapshots"):
        field_tto(x1, y, mask, iterations=12, snapshots=[5])
