"""The oracle planner: CEM on the true simulator, scored by the same encoded goal cost as the world-model
planners (the upper bound every learned planner is measured against, and the gate that says a task is
plannable with this encoder at all)."""

from __future__ import annotations

import numpy as np
import torch

from neurips26.costgrad import envs
from neurips26.costgrad.cem import CEMConfig, cem
from neurips26.costgrad.encoder import FrozenEncoder
from neurips26.costgrad.envs import EnvSpec, State
from neurips26.costgrad.episodes import Planner


def oracle_planner(spec: EnvSpec, encoder: FrozenEncoder, config: CEMConfig, seed: int) -> Planner:
    """A planner that rolls candidate sequences through :func:`~neurips26.costgrad.envs.step` and scores
    the final frame's tokens against the goal's: ``mean ‖z_H − z_goal‖²`` over tokens and features."""
    rng = np.random.default_rng(seed)

    def plan(state: State, goal: State, t: int) -> np.ndarray:
        e = len(state)
        with torch.no_grad():
            z_goal = encoder.encode(envs.render(spec, goal)).numpy()  # (E, P, D)

        def cost(actions: np.ndarray) -> np.ndarray:  # (E, N, H, A) → (E, N)
            n = actions.shape[1]
            rows = np.repeat(np.arange(e), n)
            s = state.take(rows)
            for h in range(actions.shape[2]):
                s = envs.step(spec, s, actions[:, :, h].reshape(e * n, -1))
            z = encoder.encode(envs.render(spec, s)).numpy().reshape(e, n, *z_goal.shape[1:])
            return ((z - z_goal[:, None]) ** 2).mean((2, 3))

        return cem(cost, e, spec.action_dim, config, rng).plan[:, 0]

    return plan
