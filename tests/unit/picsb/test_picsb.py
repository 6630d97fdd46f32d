"""PICSB training: initial surrogates, the refresh, R_max = 0 as plain I2SB, no HF access, determinism."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from neurips26.picsb import bridge, burgers
from neurips26.picsb.burgers import BurgersConfig
from neurips26.picsb.denoiser import Condition, Denoiser, DenoiserConfig
from neurips26.picsb.observations import observe, probe_mask
from neurips26.picsb.picsb import (
    PICSBConfig,
    TrainingSet,
    initial_surrogates,
    reconstruct,
    refresh,
    train_picsb,
    truth_monitor,
)
from neurips26.train import fit

# A small twin: 8 frames on 16 points (LF on 8), so a step takes milliseconds.
PDE = BurgersConfig(grid=16, frames=8, lf_grid=8)
NET = DenoiserConfig(frames=8, channels=(16, 16), time_dim=16, groups=2)


def config(**changes) -> PICSBConfig:
    base = PICSBConfig(rounds=2, steps=3, batch=4, sample_steps=3, denoiser=NET, burgers=PDE)
    return dataclasses.replace(base, **changes)


@pytest.fixture(scope="module")
def problem() -> tuple[TrainingSet, torch.Tensor]:
    u0 = burgers.initial_conditions(6, seed=3, config=PDE, dtype=torch.float32)
    truth = burgers.solve(u0, PDE)
    x1 = burgers.low_fidelity(u0, PDE)
    mask = probe_mask((2, 9), PDE.frames, PDE.grid).expand(6, -1, -1).clone()
    return TrainingSet(x1, observe(truth, mask), mask), truth


def test_training_set_holds_no_hf_field(problem) -> None:
    data, _ = problem
    assert [f.name for f in dataclasses.fields(TrainingSet)] == ["x1", "y", "mask"]
    assert not hasattr(data, "truth") and len(data) == 6


def test_initial_surrogates_take_y_on_sensors_and_x1_far_away() -> None:
    g = torch.Generator().manual_seed(0)
    x1 = torch.randn(3, 4, 64, generator=g, dtype=torch.float64)
    y = torch.randn(3, 4, 64, generator=g, dtype=torch.float64)
    mask = torch.zeros(3, 4, 64, dtype=torch.bool)
    mask[..., [5, 8, 40]] = True
    mask[:, 3] = False  # a frame without sensors keeps the prior
    x0 = initial_surrogates(x1, y, mask)
    assert torch.equal(x0[mask], y[mask])
    far = [i for i in range(64) if min(min(abs(i - c), 64 - abs(i - c)) for c in (5, 8, 40)) >= 14]
    assert far and torch.allclose(x0[..., far], x1[..., far], atol=1e-3)
    assert torch.equal(x0[:, 3], x1[:, 3])
    # one sensor: the correction is exactly the Gaussian of width 3 (circular distance)
    one = torch.zeros(1, 1, 64, dtype=torch.bool)
    one[..., 62] = True
    single = initial_surrogates(x1[:1, :1], y[:1, :1], one) - x1[:1, :1]
    d = torch.tensor([min(abs(i - 62), 64 - abs(i - 62)) for i in range(64)], dtype=torch.float64)
    expected = (y[0, 0, 62] - x1[0, 0, 62]) * torch.exp(-(d**2) / 18.0)
    torch.testing.assert_close(single[0, 0], expected, atol=1e-12, rtol=0)


def test_kappa_zero_leaves_surrogates_bit_identical(problem) -> None:
    data, _ = problem
    cfg = config(kappa=0.0)
    model = Denoiser(NET, seed=0)
    x0 = initial_surrogates(data.x1, data.y, data.mask)
    before = x0.clone()
    assert torch.equal(refresh(model, data, x0, cfg, 1), before)
    result = train_picsb(data, dataclasses.replace(cfg, rounds=1))
    assert torch.equal(result.surrogates, before)


def test_rounds_zero_is_plain_conditional_i2sb(problem) -> None:
    data, _ = problem
    cfg = config(rounds=0, residual_weight=0.0, obs_weight=0.0)
    result = train_picsb(data, cfg)
    assert len(result.logs) == 2 and result.residual_weight == 0.0
    assert torch.equal(result.surrogates, initial_surrogates(data.x1, data.y, data.mask))

    # the same run written out: I2SB's loss on (x̃₀, x₁), batches and noise from one generator (seed + 1)
    model = Denoiser(NET, seed=cfg.seed)
    x0 = initial_surrogates(data.x1, data.y, data.mask)
    g = torch.Generator().manual_seed(cfg.seed + 1)

    def batches(step):
        idx = torch.randint(len(data), (cfg.batch,), generator=g)
        return x0[idx], data.x1[idx], data.y[idx], data.mask[idx]

    def loss_fn(net, batch):
        a, b, y, m = batch
        t, x_t, target = bridge.training_pair(a, b, g)
        return (net(x_t, t, Condition(b, y, m)) - target).square().mean()

    plain = fit(model, loss_fn, batches, steps=cfg.steps, seed=cfg.seed + 1, lr=cfg.lr, progress=False)
    assert result.losses == plain.loss
    for p, q in zip(result.model.parameters(), model.parameters(), strict=True):
        assert torch.equal(p, q)


def test_rounds_zero_is_the_first_round_without_refresh(problem) -> None:
    data, _ = problem
    none = train_picsb(data, config(rounds=0))
    two = train_picsb(data, config(rounds=2))
    assert none.losses == two.logs[1].history.loss
    assert none.residual_weight == two.residual_weight > 0
    assert len(two.losses) == 2 * 3 and len(two.logs) == 3


def test_residual_weight_rule_starts_at_a_tenth(problem) -> None:
    data, _ = problem
    cfg = config(rounds=0, steps=1)
    result = train_picsb(data, cfg)
    # the stated rule, by hand: untrained net, calibration batch and noise from a generator seeded `seed`
    net = Denoiser(NET, seed=cfg.seed)
    x0 = initial_surrogates(data.x1, data.y, data.mask)
    g = torch.Generator().manual_seed(cfg.seed)
    idx = torch.randint(len(data), (cfg.batch,), generator=g)
    t, x_t, target = bridge.training_pair(x0[idx], data.x1[idx], g)
    with torch.no_grad():
        pred = net(x_t, t, Condition(data.x1[idx], data.y[idx], data.mask[idx]))
        l_sb = (pred - target).square().mean()
        x0_hat = bridge.predict_x0(x_t, pred, t)
        l_r = ((1 - t) ** 2 * burgers.residual(x0_hat, PDE).square().mean((-2, -1))).mean()
    assert result.residual_weight == pytest.approx(0.1 * l_sb.item() / l_r.item(), rel=1e-6)
    assert train_picsb(data, dataclasses.replace(cfg, residual_weight=2.5)).residual_weight == 2.5


class Trap(TrainingSet):
    """A training set with an HF attribute that must never be read."""

    @property
    def truth(self) -> torch.Tensor:
        raise AssertionError("training read the HF field")


def test_training_never_reads_hf_and_monitor_is_display_only(problem) -> None:
    data, truth = problem
    trapped = Trap(data.x1, data.y, data.mask)
    cfg = config(rounds=1)
    blind = train_picsb(trapped, cfg)
    calls = []

    def monitor(surrogates):
        calls.append(surrogates.shape)
        surrogates.add_(1.0)  # a copy: scribbling on it must not reach training
        return truth_monitor(truth)(surrogates - 1.0)

    seen = train_picsb(data, cfg, monitor=monitor)
    assert len(calls) == 2 and blind.losses == seen.losses
    assert torch.equal(blind.surrogates, seen.surrogates)
    assert all(math.isnan(log.rel_l2) for log in blind.logs)
    assert all(0 < log.rel_l2 < 1 for log in seen.logs)
    assert all(math.isfinite(log.energy) for log in seen.logs)


def test_seed_makes_runs_identical_and_polish_runs(problem) -> None:
    data, _ = problem
    cfg = config(rounds=1, kappa=0.5, polish_steps=2, method="stochastic")
    a, b = train_picsb(data, cfg), train_picsb(data, cfg)
    assert a.losses == b.losses and torch.equal(a.surrogates, b.surrogates)
    c = train_picsb(data, dataclasses.replace(cfg, seed=1))
    assert a.losses != c.losses
    assert torch.equal(a.surrogates[data.mask], data.y[data.mask])


def test_reconstruct_honours_the_sensors(problem) -> None:
    data, _ = problem
    model = Denoiser(NET, seed=2)
    for method in ("ot-ode", "stochastic"):
        x = reconstruct(model, data.x1, data.y, data.mask, 4, method=method, generator=torch.Generator())
        assert x.shape == data.x1.shape and torch.equal(x[data.mask], data.y[data.mask])
    whole = reconstruct(model, data.x1, data.y, data.mask, 4)
    parts = reconstruct(model, data.x1, data.y, data.mask, 4, batch=4)
    torch.testing.assert_close(whole, parts)


def test_bad_inputs_name_the_field(problem) -> None:
    data, _ = problem
    for field, value in (("kappa", 1.5), ("kappa", -0.1), ("rounds", -1), ("sample_steps", 0), ("steps", 0)):
        with pytest.raises(ValueError, match=field):
            config(**{field: value})
    with pytest.raises(ValueError, match="method"):
        config(method="euler")
    with pytest.raises(ValueError, match="mask"):
        TrainingSet(data.x1, data.y, data.mask[:, :, :4])
    with pytest.raises(TypeError, match="mask"):
        TrainingSet(data.x1, data.y, data.mask.float())
    with pytest.raises(ValueError, match="y"):
        TrainingSet(data.x1, data.y[:3], data.mask)
    with pytest.raises(ValueError, match="x1"):
        TrainingSet(data.x1[0], data.y, data.mask)
    with pytest.raises(ValueError, match="steps"):
        reconstruct(Denoiser(NET), data.x1, data.y, data.mask, 0)
    with pytest.raises(ValueError, match="mask"):
        reconstruct(Denoiser(NET), data.x1, data.y, data.mask[:3], 2)
    with pytest.raises(TypeError, match="data"):
        train_picsb((data.x1, data.y, data.mask), config())
    with pytest.raises(ValueError, match="data"):
        train_picsb(data, config(burgers=BurgersConfig()))
