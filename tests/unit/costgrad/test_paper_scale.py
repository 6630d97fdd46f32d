"""The ``paper`` scale's plan: the paper's predictor on the 256-token grid, a trial run's caps, the default
plans (and the committed checkpoints' hashes) untouched, and the training path that renders on the device
giving the same batches and loss as the host path."""

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from neurips26.costgrad import envs
from neurips26.costgrad import prepare as P
from neurips26.costgrad.data import random_walks
from neurips26.costgrad.encoder import FrozenEncoder
from neurips26.costgrad.envs import EnvSpec, State
from neurips26.costgrad.predictor import PredictorSpec, TokenPredictor
from neurips26.costgrad.training import (
    batch_at,
    one_step_loss,
    rendering_loss,
    state_batch_at,
    train_predictor,
    validate,
)
from neurips26.scales import TRIAL_ENV


@pytest.fixture
def no_trial(monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)


@pytest.mark.parametrize("name", P.NAMES)
def test_the_paper_plan_is_the_papers_predictor_on_its_grid(name, no_trial):
    plan, default = P.plan_for(name, "paper"), P.plan_for(name, "default")
    spec = plan.spec
    assert (spec.tokens, spec.width, spec.depth, spec.heads, spec.mlp_hidden) == (256, 400, 6, 16, 1600)
    assert (spec.cond, spec.seed) == (default.spec.cond, default.spec.seed)
    assert (spec.steps, spec.batch, spec.lr) == (18_750, 256, 5e-4)
    assert spec.steps * spec.batch == 20 * plan.walks[0] * plan.length  # 20 epochs of the transitions
    assert (plan.size, plan.walks, plan.frames, plan.precision) == (64, (20_000, 20), "device", "bf16")
    env = P.env_of(name, "paper")
    assert env.size == 64 and (env.size // 4) ** 2 == spec.tokens and env.action_dim == spec.action_dim
    assert P.expected_hash(name, "paper") != P.expected_hash(name, "default")


def test_the_paper_predictors_have_the_papers_parameter_counts(no_trial):
    counts = {
        cond: sum(p.numel() for p in TokenPredictor(P.spec_for(f"wall-{cond}-0", "paper")).parameters())
        for cond in ("adaln", "concat")
    }
    assert counts["adaln"] == pytest.approx(17.6e6, rel=0.02)  # the paper's "about 17.6M"
    assert counts["concat"] == pytest.approx(11.7e6, rel=0.01)


@pytest.mark.parametrize("name", P.NAMES)
def test_the_default_and_smoke_plans_are_unchanged(name, no_trial):
    r = P.row(name)
    base = PredictorSpec(cond=r.cond, seed=r.seed, steps=2000)
    assert P.plan_for(name, "default") == P.Plan(base, size=32, walks=(1000, 100), length=12)
    assert P.plan_for(name, "smoke") == P.Plan(replace(base, depth=1, steps=50), walks=(100, 20))
    assert P.env_of(name, "default") == P.env_of(name) == EnvSpec(r.env)
    assert P.walks_for("default") == (1000, 100) and P.walks_for("smoke") == (100, 20)
    sidecar = json.loads((P.PACKAGE_DIR / f"{name}.json").read_text())
    assert P.expected_hash(name, "default") == sidecar["config_hash"]


@pytest.mark.parametrize("scale", ["smoke", "default", "paper"])
def test_a_trial_run_caps_updates_and_data_at_any_scale(scale, monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)
    full = {n: (P.plan_for(n, scale), P.expected_hash(n, scale)) for n in P.NAMES}
    monkeypatch.setenv(TRIAL_ENV, "1")
    for name, (plan, hashed) in full.items():
        trial = P.plan_for(name, scale)
        assert (trial.spec.steps, trial.spec.batch, trial.walks, trial.length) == (1, 2, (1, 1), 2)
        assert trial.spec.steps // 20 == 0  # no warm-up
        assert replace(trial.spec, steps=plan.spec.steps, batch=plan.spec.batch) == plan.spec  # same sizes
        assert (trial.size, trial.frames, trial.precision) == (plan.size, plan.frames, plan.precision)
        assert P.expected_hash(name, scale) != hashed


def test_bad_plans_are_refused():
    spec = PredictorSpec()
    with pytest.raises(ValueError, match="frames"):
        P.Plan(spec, frames="gpu")
    with pytest.raises(ValueError, match="precision"):
        P.Plan(spec, precision="fp8")
    with pytest.raises(ValueError, match="walks"):
        P.Plan(spec, walks=(10, 0))
    with pytest.raises(TypeError, match="spec"):
        P.Plan("adaln")


@pytest.mark.parametrize("task", ["wall", "push"])
@pytest.mark.parametrize("size", [32, 64])
def test_rendering_tensors_draws_the_numpy_frames(task, size):
    spec = EnvSpec(task, size=size)
    state = envs.random_state(spec, 16, np.random.default_rng(3))
    tensors = [torch.from_numpy(getattr(state, f)) for f in ("agent", "gap", "block")]
    frames = envs.render_tensors(spec, *tensors)
    assert frames.dtype == torch.float32 and frames.shape == (16, 3, size, size)
    np.testing.assert_allclose(frames.numpy(), envs.render(spec, state), rtol=0, atol=1e-7)


@pytest.mark.parametrize("task", ["wall", "push"])
def test_state_batches_are_the_transitions_of_the_encoded_batches(task):
    data = random_walks(EnvSpec(task), 30, 5, seed=0)
    encoder = FrozenEncoder(seed=0)
    z, a, z_next = batch_at(data, encoder, 24, 3, 7)
    states = state_batch_at(data, 24, 3, 7)
    assert all(len(v) == 24 for v in states.values())
    assert torch.equal(states["action"], a)
    now = State(*(states[f].numpy() for f in ("agent", "gap", "block")))
    nxt = State(*(states[f"{f}_next"].numpy() for f in ("agent", "gap", "block")))
    torch.testing.assert_close(encoder.encode(envs.render(data.spec, now)), z, rtol=0, atol=1e-6)
    torch.testing.assert_close(encoder.encode(envs.render(data.spec, nxt)), z_next, rtol=0, atol=1e-6)


@pytest.mark.parametrize("cond", ["adaln", "concat"])
def test_the_rendering_loss_equals_the_one_step_loss(cond):
    data = random_walks(EnvSpec("wall"), 30, 5, seed=1)
    encoder = FrozenEncoder(seed=0)
    model = TokenPredictor(PredictorSpec(cond=cond, width=16, depth=1, heads=2, residual=False))
    host = one_step_loss(model, batch_at(data, encoder, 16, 0, 2))
    device = rendering_loss(data.spec, encoder)(model, state_batch_at(data, 16, 0, 2))
    assert device.item() == pytest.approx(host.item(), rel=1e-5)
    z, a, z_next = batch_at(data, encoder, 16, 0, 2)
    assert host.item() == pytest.approx(torch.nn.functional.mse_loss(model(z, a), z_next).item(), rel=0)


def test_training_on_either_frame_path_gives_the_same_predictor(monkeypatch):
    monkeypatch.setenv("NEURIPS26_DEVICE", "cpu")
    data = random_walks(EnvSpec("push"), 12, 3, seed=0)
    spec = PredictorSpec(width=16, depth=1, heads=2, steps=3, batch=8)
    host, host_losses = train_predictor(spec, data, FrozenEncoder(seed=0))
    device, device_losses = train_predictor(spec, data, FrozenEncoder(seed=0), frames="device")
    assert device_losses == pytest.approx(host_losses, rel=1e-5)
    for a, b in zip(host.parameters(), device.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)
    v = validate(device, random_walks(EnvSpec("push"), 2, 3, seed=1), FrozenEncoder(seed=0))
    assert 0 < v.mse and 0 < v.still
    with pytest.raises(ValueError, match="frames"):
        train_predictor(spec, data, FrozenEncoder(seed=0), frames="gpu")


def test_the_paper_frames_reach_the_claims_environment(no_trial):
    assert P.env_for("wall", "paper") == EnvSpec("wall", size=64)
    assert P.env_for("push", "default") == EnvSpec("push")


def test_the_rendering_loss_runs_under_bfloat16_autocast():
    # the paper's precision (CUDA in practice); the tokens stay float32, the predictor is rounded
    data = random_walks(EnvSpec("wall"), 10, 3, seed=2)
    model = TokenPredictor(PredictorSpec(width=16, depth=1, heads=2, residual=False))
    loss = rendering_loss(data.spec, FrozenEncoder(seed=0))
    batch = state_batch_at(data, 8, 0, 0)
    exact = loss(model, batch)
    with torch.autocast("cpu", torch.bfloat16):
        rounded = loss(model, batch)
    rounded.backward()
    assert rounded.dtype == torch.float32 and rounded.item() == pytest.approx(exact.item(), rel=0.05)
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
