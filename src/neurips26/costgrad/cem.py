"""The cross-entropy method over action sequences, batched over episodes.

For every episode a diagonal Gaussian over ``(H, A)`` action sequences starts at ``μ = 0``, ``σ = σ₀``;
each iteration draws ``N`` sequences, clips them to ``[−1, 1]``, scores them with the caller's cost
``J (E, N, H, A) → (E, N)``, and refits ``μ`` and ``σ`` to the ``elites`` cheapest (a floor ``σ_min`` keeps
the search alive). The plan is the final ``μ`` (clipped); MPC executes its first action and plans again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from neurips26.validation import check_float, check_int

Cost = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class CEMConfig:
    """Samples ``N``, horizon ``H``, iterations, elites, initial and floor standard deviations."""

    samples: int = 32
    horizon: int = 4
    iterations: int = 4
    elites: int = 4
    init_std: float = 1.0
    min_std: float = 0.05

    def __post_init__(self) -> None:
        check_int("samples", self.samples, minimum=1)
        check_int("horizon", self.horizon, minimum=1)
        check_int("iterations", self.iterations, minimum=1)
        check_int("elites", self.elites, minimum=1, maximum=self.samples)
        check_float("init_std", self.init_std, minimum=0.0, strict_min=True)
        check_float("min_std", self.min_std, minimum=0.0)


@dataclass(frozen=True)
class CEMResult:
    """The plans ``(E, H, A)``, the cost of each episode's best sampled sequence ``(E,)`` and the number
    of cost evaluations (sequences scored)."""

    plan: np.ndarray
    best_cost: np.ndarray
    evaluations: int


def cem(cost: Cost, episodes: int, action_dim: int, config: CEMConfig, rng: np.random.Generator) -> CEMResult:
    """Plan ``episodes`` action sequences at once (module doc)."""
    episodes = check_int("episodes", episodes, minimum=1)
    action_dim = check_int("action_dim", action_dim, minimum=1)
    if not isinstance(config, CEMConfig):
        raise TypeError(f"config must be a CEMConfig; got {type(config).__name__}")
    shape = (episodes, config.horizon, action_dim)
    mu, sigma = np.zeros(shape), np.full(shape, config.init_std)
    best = np.full(episodes, np.inf)
    evaluations = 0
    for _ in range(config.iterations):
        noise = rng.standard_normal((episodes, config.samples, *shape[1:]))
        actions = np.clip(mu[:, None] + sigma[:, None] * noise, -1.0, 1.0)
        costs = np.asarray(cost(actions), dtype=float)
        if costs.shape != (episodes, config.samples):
            raise ValueError(f"cost must return shape ({episodes}, {config.samples}); got {costs.shape}")
        evaluations += episodes * config.samples
        order = np.argsort(costs, axis=1, kind="stable")[:, : config.elites]
        elite = np.take_along_axis(actions, order[:, :, None, None], axis=1)
        mu = elite.mean(1)
        sigma = np.maximum(elite.std(1), config.min_std)
        best = np.minimum(best, np.take_along_axis(costs, order[:, :1], axis=1)[:, 0])
    return CEMResult(np.clip(mu, -1.0, 1.0), best, evaluations)
