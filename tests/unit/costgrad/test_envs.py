"""The tasks: the wall is never crossed outside the gap, pushes move the block, renders are deterministic,
and the oracle (CEM on the true simulator with the encoded cost) passes the planability gate."""

import numpy as np
import pytest
import torch

from neurips26.costgrad import envs
from neurips26.costgrad.cem import CEMConfig, cem
from neurips26.costgrad.encoder import FrozenEncoder
from neurips26.costgrad.envs import EnvSpec, State
from neurips26.costgrad.episodes import make_episodes, run
from neurips26.costgrad.oracle import oracle_planner


def test_the_wall_is_never_crossed_outside_the_gap():
    spec = EnvSpec("wall")
    rng = np.random.default_rng(0)
    state = envs.random_state(spec, 400, rng)
    reach = spec.wall_half + spec.radius
    for _ in range(60):
        before = state
        state = envs.step(spec, state, rng.uniform(-1, 1, (400, spec.action_dim)))
        in_slab = np.abs(state.agent[:, 0] - 0.5) < reach - 1e-12
        assert (
            np.abs(state.agent[in_slab, 1] - state.gap[in_slab]) <= spec.gap_half - spec.radius + 1e-12
        ).all()
        switched = np.sign(state.agent[:, 0] - 0.5) != np.sign(before.agent[:, 0] - 0.5)
        # a side change happens only through the gap's corridor
        assert (np.abs(before.agent[switched, 1] - before.gap[switched]) <= spec.gap_half).all()
        assert ((state.agent >= spec.radius - 1e-12) & (state.agent <= 1 - spec.radius + 1e-12)).all()


def test_an_open_move_goes_straight_and_a_blocked_one_stops_at_the_face():
    spec = EnvSpec("wall")
    s = State(np.array([[0.3, 0.5], [0.3, 0.1]]), np.array([0.5, 0.8]), np.full((2, 2), np.nan))
    after = envs.step(spec, s, np.tile([1.0, 0.0], (2, spec.skip)))
    np.testing.assert_allclose(after.agent[0], [0.3 + spec.skip * spec.step, 0.5])
    assert after.agent[1, 0] == pytest.approx(
        min(0.3 + spec.skip * spec.step, 0.5 - spec.wall_half - spec.radius)
    )


def test_a_push_moves_the_block_and_renders_are_deterministic():
    spec = EnvSpec("push")
    s = State(np.array([[0.3, 0.5]]), np.array([np.nan]), np.array([[0.45, 0.5]]))
    after = envs.step(spec, s, np.tile([1.0, 0.0], (1, spec.skip)))
    assert after.block[0, 0] > 0.45 and after.block[0, 1] == 0.5
    assert np.abs(after.agent[0] - after.block[0]).max() >= spec.block_half + spec.radius - 1e-12
    rng = np.random.default_rng(1)
    state = envs.random_state(spec, 5, rng)
    a, b = envs.render(spec, state), envs.render(spec, state)
    assert a.shape == (5, 3, spec.size, spec.size) and a.dtype == np.float32
    np.testing.assert_array_equal(a, b)
    assert 0.0 <= a.min() and a.max() <= 1.0


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="name"):
        EnvSpec("maze3d")
    with pytest.raises(ValueError, match="gap_half"):
        EnvSpec(gap_half=0.01)
    spec = EnvSpec()
    with pytest.raises(ValueError, match="actions"):
        envs.step(spec, envs.random_state(spec, 2, np.random.default_rng(0)), np.zeros((2, 3)))


def test_cem_finds_a_quadratics_minimiser():
    target = np.array([0.3, -0.6])
    result = cem(
        lambda a: ((a - target) ** 2).sum((2, 3)),
        episodes=3,
        action_dim=2,
        config=CEMConfig(samples=64, horizon=2, iterations=12, elites=8, min_std=0.0),
        rng=np.random.default_rng(0),
    )
    np.testing.assert_allclose(result.plan, np.broadcast_to(target, (3, 2, 2)), atol=0.02)
    assert result.evaluations == 3 * 64 * 12
    with pytest.raises(ValueError, match="elites"):
        CEMConfig(samples=4, elites=5)


def test_the_encoder_is_frozen_and_seeded():
    enc = FrozenEncoder(seed=3)
    frames = envs.render(EnvSpec(), envs.random_state(EnvSpec(), 2, np.random.default_rng(0)))
    z = enc.encode(frames)
    assert z.shape == (2, 64, 32) and not any(p.requires_grad for p in enc.parameters())
    torch.testing.assert_close(z, FrozenEncoder(seed=3).encode(frames), rtol=0, atol=0)
    assert not torch.equal(z, FrozenEncoder(seed=4).encode(frames))


def test_the_oracle_passes_the_planability_gate():
    spec = EnvSpec("wall")
    episodes = make_episodes(spec, 24, seed=0)
    rollout = run(episodes, oracle_planner(spec, FrozenEncoder(), CEMConfig(), seed=0), steps=10)
    assert rollout.success.mean() >= 0.7
