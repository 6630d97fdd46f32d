"""Evaluation episodes and the receding-horizon loop that every planner shares.

An episode is a start state and a goal state with the same static layout (Wall: the same gap); Wall's
starts are left of the wall and its goals right of it, so every episode must pass the gap. The planner is
called once per step with the current states and the goals (encoded however it likes) and returns the
first action of its plan for every episode; the episode runs ``steps`` steps and succeeds when the final
state is within the task's success radius.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from neurips26.costgrad import envs
from neurips26.costgrad.envs import EnvSpec, State
from neurips26.seeding import sub_seed
from neurips26.validation import check_int

Planner = Callable[[State, State, int], np.ndarray]

NEAR_GAP = 0.15  # Wall: starts and goals within this vertical distance of the gap's centre


@dataclass(frozen=True)
class Episodes:
    """Starts and goals ``(E)`` of one task."""

    spec: EnvSpec
    starts: State
    goals: State

    def __len__(self) -> int:
        return len(self.starts)


def make_episodes(spec: EnvSpec, n: int, *, seed: int) -> Episodes:
    """``n`` start/goal pairs (module doc). Push: the goal moves the block by 0.15-0.3 in a random
    direction and puts the pusher anywhere."""
    n = check_int("n", n, minimum=1)
    rng = np.random.default_rng(sub_seed(seed, 13))
    if spec.name == "wall":
        starts = envs.random_state(spec, n, rng, side="left", near_gap=NEAR_GAP)
        goals = envs.random_state(spec, n, rng, side="right", near_gap=NEAR_GAP, gap=starts.gap)
        return Episodes(spec, starts, goals)
    starts = envs.random_state(spec, n, rng)
    angle = rng.uniform(0, 2 * np.pi, n)
    shift = rng.uniform(0.15, 0.3, n)[:, None] * np.stack([np.cos(angle), np.sin(angle)], 1)
    h = spec.block_half
    block = np.clip(starts.block + shift, h + 0.05, 1 - h - 0.05)
    goals = envs.random_state(spec, n, rng)
    goals = State(goals.agent, goals.gap, block)
    return Episodes(spec, starts, goals)


@dataclass(frozen=True)
class Rollout:
    """Per episode: success ``(E,)``, final distance ``(E,)`` and the visited states (one per step)."""

    success: np.ndarray
    distance: np.ndarray
    states: list[State]


def run(episodes: Episodes, planner: Planner, steps: int) -> Rollout:
    """Receding-horizon control of every episode for ``steps`` steps (module doc)."""
    steps = check_int("steps", steps, minimum=1)
    spec = episodes.spec
    state = episodes.starts
    visited = [state]
    for t in range(steps):
        action = np.asarray(planner(state, episodes.goals, t), dtype=float)
        state = envs.step(spec, state, action)
        visited.append(state)
    return Rollout(
        envs.success(spec, state, episodes.goals), envs.distance(spec, state, episodes.goals), visited
    )
