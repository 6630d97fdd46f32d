"""PICSB ablations: each changes only what it names, same total steps, soft sampling, determinism."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from neurips26.picsb import burgers
from neurips26.picsb.ablations import (
    ABLATIONS,
    Variant,
    ablate,
    lf_only,
    no_pde,
    no_refresh,
    reconstruct_variant,
    sample_soft,
    soft_obs,
    train_variant,
)
from neurips26.picsb.burgers import BurgersConfig
from neurips26.picsb.denoiser import DenoiserConfig
from neurips26.picsb.observations import observe, probe_mask
from neurips26.picsb.picsb import PICSBConfig, TrainingSet, reconstruct, train_picsb

PDE = BurgersConfig(grid=16, frames=8, lf_grid=8)
NET = DenoiserConfig(frames=8, channels=(16, 16), time_dim=16, groups=2)
BASE = PICSBConfig(rounds=2, steps=3, batch=4, sample_steps=3, denoiser=NET, burgers=PDE)


@pytest.fixture(scope="module")
def data() -> TrainingSet:
    u0 = burgers.initial_conditions(5, seed=3, config=PDE, dtype=torch.float32)
    truth = burgers.solve(u0, PDE)
    mask = probe_mask((2, 9), PDE.frames, PDE.grid).expand(5, -1, -1).clone()
    return TrainingSet(burgers.low_fidelity(u0, PDE), observe(truth, mask), mask)


def changed(a: PICSBConfig, b: PICSBConfig) -> dict[str, object]:
    return {
        f.name: getattr(b, f.name) for f in dataclasses.fields(a) if getattr(a, f.name) != getattr(b, f.name)
    }


def test_registry_names() -> None:
    assert set(ABLATIONS) == {"no-refresh", "no-pde", "soft-obs", "lf-only"}
    for name, fn in ABLATIONS.items():
        assert fn(BASE).name == name and ablate(name, BASE) == fn(BASE)


def test_each_ablation_changes_exactly_its_fields() -> None:
    assert changed(BASE, no_refresh(BASE).config) == {"rounds": 0, "steps": 6}
    assert changed(BASE, no_pde(BASE).config) == {"residual_weight": 0.0}
    soft = soft_obs(BASE)
    assert changed(BASE, soft.config) == {} and not soft.hard
    assert changed(BASE, lf_only(BASE).config) == {"rounds": 0, "steps": 6, "residual_weight": 0.0}
    assert all(ABLATIONS[n](BASE).hard for n in ("no-refresh", "no-pde", "lf-only"))


@pytest.mark.parametrize("rounds", [0, 1, 3])
def test_no_refresh_keeps_total_steps(rounds: int) -> None:
    cfg = dataclasses.replace(BASE, rounds=rounds, steps=5)
    out = no_refresh(cfg).config
    assert out.rounds == 0 and out.steps == max(rounds, 1) * 5


def test_ablations_are_pure() -> None:
    before = dataclasses.replace(BASE)
    for fn in ABLATIONS.values():
        fn(BASE)
    assert BASE == before


def test_no_refresh_trains_same_number_of_steps(data) -> None:
    full = train_picsb(data, BASE)
    abl = train_variant(data, no_refresh(BASE))
    assert len(full.losses) == len(abl.losses) == 6
    assert len(abl.logs) == 2  # row 0 and the single fit


def test_soft_obs_trains_and_does_not_pin_sensors(data) -> None:
    variant = soft_obs(BASE)
    a = train_variant(data, variant)
    b = train_variant(data, variant)
    assert torch.equal(a.surrogates, b.surrogates) and a.losses == b.losses
    assert len(a.losses) == 6 and torch.isfinite(a.surrogates).all()
    soft = reconstruct_variant(variant, a, data.x1, data.y, data.mask)
    hard = reconstruct(a.model, data.x1, data.y, data.mask, BASE.sample_steps)
    assert torch.equal(hard[data.mask], data.y[data.mask])
    assert not torch.equal(soft[data.mask], data.y[data.mask])
    # Off the sensors the hard sampler differs only through the conditioning; both are finite.
    assert torch.isfinite(soft).all()


def test_hard_variant_matches_train_picsb(data) -> None:
    a = train_variant(data, no_pde(BASE))
    b = train_picsb(data, no_pde(BASE).config)
    assert torch.equal(a.surrogates, b.surrogates) and a.residual_weight == b.residual_weight == 0.0
    out = reconstruct_variant(no_pde(BASE), a, data.x1, data.y, data.mask)
    assert torch.equal(out[data.mask], data.y[data.mask])


def test_soft_polish_runs(data) -> None:
    variant = soft_obs(dataclasses.replace(BASE, rounds=1, polish_steps=2, kappa=0.5))
    res = train_variant(data, variant)
    assert torch.isfinite(res.surrogates).all() and len(res.logs) == 2


def test_bad_inputs(data) -> None:
    with pytest.raises(TypeError, match="cfg"):
        no_pde("nope")
    with pytest.raises(ValueError, match="name"):
        ablate("no-such", BASE)
    with pytest.raises(TypeError, match="variant"):
        train_variant(data, BASE)
    with pytest.raises(TypeError, match="variant"):
        reconstruct_variant(BASE, None, data.x1, data.y, data.mask)
    with pytest.raises(TypeError, match="model"):
        sample_soft(3, data.x1, data.y, data.mask, 2)
    with pytest.raises(ValueError, match="steps"):
        sample_soft(lambda *a: a[0], data.x1, data.y, data.mask, 0)
    bad = TrainingSet(data.x1[:, :4], data.y[:, :4], data.mask[:, :4])
    with pytest.raises(ValueError, match="data"):
        train_variant(bad, soft_obs(BASE))
    assert isinstance(soft_obs(BASE), Variant)
