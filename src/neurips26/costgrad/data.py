"""Training data for the world model: random walks with a goal bias, stored as states and actions and
encoded on the fly.

Each trajectory starts from a random state and takes ``length`` planner actions; an action is a smoothed
random walk (``a_t = ρ a_{t−1} + √(1 − ρ²) ε_t``) plus a pull of strength ``bias`` toward a random point of
the arena, clipped to ``[−1, 1]``. The pull makes trajectories travel across the arena (and through Wall's
gap, or into Push's block) instead of dithering in place. Frames are rendered and encoded per batch, so the
stored data are a few hundred kilobytes whatever the encoder's size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neurips26.costgrad import envs
from neurips26.costgrad.encoder import FrozenEncoder
from neurips26.costgrad.envs import EnvSpec, State
from neurips26.seeding import sub_seed
from neurips26.validation import check_float, check_int

SMOOTH = 0.7
BIAS = 0.6


@dataclass(frozen=True)
class Trajectories:
    """``states[t]`` for ``t = 0 … length`` (each a batch of ``n`` states) and ``actions`` ``(n, length,
    action_dim)``."""

    spec: EnvSpec
    states: list[State]
    actions: np.ndarray

    @property
    def count(self) -> int:
        return len(self.actions)

    @property
    def length(self) -> int:
        return self.actions.shape[1]


def random_walks(
    spec: EnvSpec, n: int, length: int, *, seed: int, smooth: float = SMOOTH, bias: float = BIAS
) -> Trajectories:
    """``n`` goal-biased random walks of ``length`` actions (module doc)."""
    n = check_int("n", n, minimum=1)
    length = check_int("length", length, minimum=1)
    smooth = check_float("smooth", smooth, minimum=0.0, maximum=1.0)
    bias = check_float("bias", bias, minimum=0.0)
    rng = np.random.default_rng(sub_seed(seed, 7))
    state = envs.random_state(spec, n, rng)
    target = rng.uniform(0.1, 0.9, (n, 2))
    noise = rng.standard_normal((n, 2))
    states, actions = [state], []
    for _ in range(length):
        subs = []
        for _ in range(spec.skip):
            noise = smooth * noise + np.sqrt(1 - smooth**2) * rng.standard_normal((n, 2))
            pull = target - state.agent
            pull /= np.maximum(np.linalg.norm(pull, axis=1, keepdims=True), 1e-9)
            subs.append(np.clip(0.6 * noise + bias * pull, -1.0, 1.0))
        action = np.concatenate(subs, axis=1)
        state = envs.step(spec, state, action)
        states.append(state)
        actions.append(action)
        arrived = np.linalg.norm(state.agent - target, axis=1) < 0.1
        target[arrived] = rng.uniform(0.1, 0.9, (int(arrived.sum()), 2))
    return Trajectories(spec, states, np.stack(actions, axis=1))


def transitions(
    data: Trajectories, encoder: FrozenEncoder, rows: np.ndarray, steps: np.ndarray
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Encoded ``(z_t, a_t, z_{t+1})`` for trajectory ``rows[i]`` at step ``steps[i]``: tokens ``(B, P, D)``,
    actions ``(B, A)`` (float32)."""
    rows, steps = np.asarray(rows), np.asarray(steps)
    now, nxt, back = _grouped(data, rows, steps)
    z = encoder.encode(envs.render(data.spec, now))[back]
    z_next = encoder.encode(envs.render(data.spec, nxt))[back]
    a = torch.from_numpy(data.actions[rows, steps].astype(np.float32))
    return z, a, z_next


def _grouped(data: Trajectories, rows: np.ndarray, steps: np.ndarray) -> tuple[State, State, np.ndarray]:
    """The states ``s_t`` and ``s_{t+1}`` of the transitions, grouped by step ``t``, and the permutation
    ``back`` that puts the groups back in the order of ``rows``."""
    now = State.stack([data.states[t].take(rows[steps == t]) for t in range(data.length)])
    nxt = State.stack([data.states[t + 1].take(rows[steps == t]) for t in range(data.length)])
    order = np.concatenate([np.flatnonzero(steps == t) for t in range(data.length)])
    return now, nxt, np.argsort(order)


STATE_FIELDS = ("agent", "gap", "block")


def state_transitions(data: Trajectories, rows: np.ndarray, steps: np.ndarray) -> dict[str, torch.Tensor]:
    """The transitions of :func:`transitions` before rendering: the fields of ``s_t`` (``agent``, ``gap``,
    ``block``, float64), those of ``s_{t+1}`` (``agent_next``, …) and ``action`` (float32), each with one
    row per transition. :func:`~neurips26.costgrad.envs.render_tensors` draws their frames wherever the
    batch is (the ``paper`` scale's training path)."""
    rows, steps = np.asarray(rows), np.asarray(steps)
    now, nxt, back = _grouped(data, rows, steps)
    out = {f: torch.from_numpy(getattr(now, f)[back]) for f in STATE_FIELDS}
    out |= {f"{f}_next": torch.from_numpy(getattr(nxt, f)[back]) for f in STATE_FIELDS}
    out["action"] = torch.from_numpy(data.actions[rows, steps].astype(np.float32))
    return out
