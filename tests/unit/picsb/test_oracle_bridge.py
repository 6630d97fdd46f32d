"""The HF-trained oracle bridge: PICSB's budget and seeds on true endpoints, exact sensors, determinism."""

from __future__ import annotations

import pytest
import torch

from neurips26.picsb import burgers
from neurips26.picsb.baselines.oracle_bridge import oracle_bridge, train_oracle
from neurips26.picsb.burgers import BurgersConfig, relative_l2
from neurips26.picsb.denoiser import DenoiserConfig
from neurips26.picsb.observations import observe, probe_mask
from neurips26.picsb.picsb import PICSBConfig, TrainingSet, train_picsb

PDE = BurgersConfig(grid=16, frames=8, lf_grid=8)
NET = DenoiserConfig(frames=8, channels=(16, 16), time_dim=16, groups=2)
CFG = PICSBConfig(rounds=2, steps=4, batch=4, sample_steps=3, denoiser=NET, burgers=PDE)


@pytest.fixture(scope="module")
def problem() -> tuple[TrainingSet, torch.Tensor]:
    u0 = burgers.initial_conditions(5, seed=4, config=PDE, dtype=torch.float32)
    truth = burgers.solve(u0, PDE)
    mask = probe_mask((2, 9), PDE.frames, PDE.grid).expand(5, -1, -1).clone()
    return TrainingSet(burgers.low_fidelity(u0, PDE), observe(truth, mask), mask), truth


def test_oracle_trains_and_reconstructs_with_hard_sensors(problem) -> None:
    data, truth = problem
    res = train_oracle(data, truth, CFG)
    assert len(res.losses) == CFG.rounds * CFG.steps == len(train_picsb(data, CFG).losses)
    assert torch.equal(res.surrogates, truth) and not res.model.training
    out = oracle_bridge(res, data.x1, data.y, data.mask, steps=3)
    assert out.shape == truth.shape and torch.isfinite(out).all()
    assert torch.equal(out[data.mask], data.y[data.mask])
    assert torch.isfinite(relative_l2(out, truth)).all()


def test_oracle_is_seeded(problem) -> None:
    data, truth = problem
    a, b = train_oracle(data, truth, CFG), train_oracle(data, truth, CFG)
    assert a.losses == b.losses and a.residual_weight == b.residual_weight
    g = [torch.Generator().manual_seed(1) for _ in range(2)]
    ra = oracle_bridge(a, data.x1, data.y, data.mask, 3, method="stochastic", generator=g[0])
    rb = oracle_bridge(b, data.x1, data.y, data.mask, 3, method="stochastic", generator=g[1])
    assert torch.equal(ra, rb)


def test_oracle_with_lf_endpoints_is_picsb_without_refresh(problem) -> None:
    # Same machinery: with R_max = 0 and the initial surrogates as "truth" it is train_picsb exactly.
    from neurips26.picsb.picsb import initial_surrogates

    data, _ = problem
    cfg = PICSBConfig(rounds=0, steps=4, batch=4, sample_steps=3, denoiser=NET, burgers=PDE)
    a = train_oracle(data, initial_surrogates(data.x1, data.y, data.mask), cfg)
    b = train_picsb(data, cfg)
    assert a.losses == b.losses and a.residual_weight == b.residual_weight


def test_bad_inputs(problem) -> None:
    data, truth = problem
    with pytest.raises(TypeError, match="data"):
        train_oracle("x", truth, CFG)
    with pytest.raises(TypeError, match="config"):
        train_oracle(data, truth, "cfg")
    with pytest.raises(TypeError, match="truth"):
        train_oracle(data, truth.long(), CFG)
    with pytest.raises(ValueError, match="truth"):
        train_oracle(data, truth[:2], CFG)
    with pytest.raises(TypeError, match="result"):
        oracle_bridge(None, data.x1, data.y, data.mask, 3)
    with pytest.raises(ValueError, match="steps"):
        oracle_bridge(train_oracle(data, truth, CFG), data.x1, data.y, data.mask, 0)
