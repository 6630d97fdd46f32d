"""Model-predictive control with the token world model on a subset of tokens.

At every step the planner encodes the observation and the goal, asks its selector for ``K`` token indices
per episode, and runs CEM (:mod:`~neurips26.costgrad.cem`) on the kept tokens only: each candidate action
sequence is rolled out autoregressively from ``z[S]`` with positions ``S``, and scored by

    J_S(A) = (1 / (K D)) Σ_{j ∈ S} ‖ẑ_{H, j}(A) − z_goal, j‖²

(a mean, so that fewer tokens do not reweight the cost). The selection is fixed across candidates and
iterations and made again at the next observation. ``K = P`` with the identity selection is "Full".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from neurips26.costgrad import envs
from neurips26.costgrad.cem import CEMConfig, cem
from neurips26.costgrad.encoder import FrozenEncoder
from neurips26.costgrad.envs import EnvSpec, State
from neurips26.costgrad.episodes import Planner
from neurips26.costgrad.predictor import TokenPredictor
from neurips26.costgrad.select import Merge

# (z, z_goal, z_prev or None at the first step) → (E, K) indices, or a Merge (indices and their tokens)
Selector = Callable[[torch.Tensor, torch.Tensor, torch.Tensor | None], "np.ndarray | Merge"]


def gather(z: torch.Tensor, index: np.ndarray) -> torch.Tensor:
    """``z[e, index[e]]`` for every episode: ``(E, P, D)``, ``(E, K)`` → ``(E, K, D)``."""
    idx = torch.from_numpy(np.asarray(index, dtype=np.int64))
    return torch.gather(z, 1, idx[:, :, None].expand(-1, -1, z.shape[-1]))


@torch.no_grad()
def rollout_cost(
    model: TokenPredictor,
    z: torch.Tensor,
    z_goal: torch.Tensor,
    index: np.ndarray,
    actions: np.ndarray,
    *,
    kept: torch.Tensor | None = None,
) -> np.ndarray:
    """``J_S`` of every candidate: tokens ``(E, P, D)``, goal ``(E, P, D)``, kept ``index`` ``(E, K)``,
    actions ``(E, N, H, A)`` → ``(E, N)``. ``kept`` replaces ``z[index]`` as the start (ToMe's merged
    tokens); the goal is always compared unmerged."""
    e, n, h, _ = actions.shape
    dtype = model.head.weight.dtype
    kept = (gather(z, index) if kept is None else kept).to(dtype)
    goal = gather(z_goal, index).to(dtype)
    pos = torch.from_numpy(np.repeat(np.asarray(index, dtype=np.int64), n, axis=0))  # (E·N, K)
    x = kept.repeat_interleave(n, dim=0)
    a = torch.from_numpy(actions).to(dtype)
    for t in range(h):
        x = model(x, a[:, :, t].reshape(e * n, -1), pos)
    diff = x.reshape(e, n, *kept.shape[1:]) - goal[:, None]
    return (diff**2).mean((2, 3)).double().numpy()


@dataclass
class PlanLog:
    """What a planner did: the kept indices of every step ``[(E, K)]`` and the cost evaluations."""

    kept: list[np.ndarray] = field(default_factory=list)
    evaluations: int = 0


def world_model_planner(
    spec: EnvSpec,
    encoder: FrozenEncoder,
    model: TokenPredictor,
    selector: Selector,
    config: CEMConfig,
    seed: int,
    log: PlanLog | None = None,
) -> Planner:
    """A planner for :func:`~neurips26.costgrad.episodes.run` (module doc)."""
    rng = np.random.default_rng(seed)
    previous: list[torch.Tensor] = []

    def plan(state: State, goal: State, t: int) -> np.ndarray:
        z = encoder.encode(envs.render(spec, state))
        z_goal = encoder.encode(envs.render(spec, goal))
        chosen = selector(z, z_goal, previous[-1] if t > 0 and previous else None)
        previous[:] = [z]
        index, kept = (chosen.index, chosen.tokens) if isinstance(chosen, Merge) else (chosen, None)
        result = cem(
            lambda a: rollout_cost(model, z, z_goal, index, a, kept=kept),
            len(state),
            spec.action_dim,
            config,
            rng,
        )
        if log is not None:
            log.kept.append(index)
            log.evaluations += result.evaluations
        return result.plan[:, 0]

    return plan
