"""Learning through a certificate (claim t6): gradient ascent on ``J(θ) = γ*(θ) − λ ‖θ − θ₀‖²`` for the
chain quartic, with the bound computed by two layers side by side.

``γ*(θ)`` is the SOS bound of ``f_θ`` (task 1): raising it makes the polynomial "more certainly positive";
the proximal term keeps ``θ`` near its start, so the optimum is finite and unique. Both runs start from
``θ₀``, take the same steps with the same step size, and differ only in the layer that returns ``γ*`` and
its gradient — so equal objectives, step by step, show the two layers compute the same thing, and their
wall clocks compare the layers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from neurips26.scales import pick
from neurips26.sparse_sos.baselines.cvxpylayers_sdp import CvxpyLayersSDP
from neurips26.sparse_sos.layer import sos_bound
from neurips26.sparse_sos.tasks.chain_quartic import ChainQuartic, chain_quartic
from neurips26.validation import check_float, check_int, check_seed

#: A layer: θ ↦ γ*(θ), differentiable.
BoundLayer = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class LearningConfig:
    """Task 1 at ``n`` (``θ₀`` from ``seed``); ``steps`` of gradient ascent with step ``lr``; ``lam`` the
    proximal weight λ."""

    n: int = 6
    seed: int = 0
    steps: int = 40
    lr: float = 0.05
    lam: float = 0.5

    def __post_init__(self) -> None:
        check_int("n", self.n, minimum=3, maximum=10)
        check_seed("seed", self.seed)
        check_int("steps", self.steps, minimum=1)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_float("lam", self.lam, minimum=0.0, strict_min=True)

    @classmethod
    def for_scale(cls, scale: str) -> LearningConfig:
        return cls(
            n=pick(scale, smoke=4, default=6, paper=8), steps=pick(scale, smoke=5, default=40, paper=100)
        )


@dataclass(frozen=True)
class LearningCurve:
    """One run: the objective ``J``, the bound ``γ*`` and the step's wall seconds (forward + backward) per
    step, and the final ``θ``."""

    name: str
    objective: np.ndarray
    bound: np.ndarray
    seconds: np.ndarray
    theta: np.ndarray


def sparse_danskin_layer(task: ChainQuartic) -> BoundLayer:
    """``θ ↦ γ*`` by the sparse program (cliques ``{i, i+1}``) with Danskin's backward."""
    program = task.program()
    return lambda theta: sos_bound(program, task.coefficients(theta))


def dense_generic_layer(task: ChainQuartic) -> BoundLayer:
    """``θ ↦ γ*`` by the dense program (one clique) through cvxpylayers/diffcp with ``b`` as its parameter —
    the generic SDP layer of :mod:`~neurips26.sparse_sos.baselines.cvxpylayers_sdp` (SCS at its default
    ``eps``); ``γ* = −p*``, the coefficients ``c(θ)`` on the program's support rows of ``b``."""
    program = task.program(dense=True)
    rows = torch.as_tensor(program.support_rows)
    layer = CvxpyLayersSDP(program.conic, ("b",))

    def bound(theta: torch.Tensor) -> torch.Tensor:
        b = torch.zeros(program.conic.shape[0], dtype=torch.float64, device=theta.device)
        return -layer(b=b.index_put((rows.to(theta.device),), task.coefficients(theta))).value

    return bound


def ascend(name: str, task: ChainQuartic, layer: BoundLayer, config: LearningConfig) -> LearningCurve:
    """``config.steps`` steps of ``θ ← θ + lr ∇J(θ)`` from ``θ₀`` (module docstring)."""
    theta = task.theta0.clone()
    objective, bound, seconds = [], [], []
    for _ in range(config.steps):
        start = time.perf_counter()
        variable = theta.clone().requires_grad_(True)
        gamma = layer(variable)
        J = gamma - config.lam * ((variable - task.theta0) ** 2).sum()
        (grad,) = torch.autograd.grad(J, variable)
        seconds.append(time.perf_counter() - start)
        objective.append(float(J.detach()))
        bound.append(float(gamma.detach()))
        theta = theta + config.lr * grad
    return LearningCurve(name, np.array(objective), np.array(bound), np.array(seconds), theta.numpy())


def learning_curves(
    config: LearningConfig, layers: dict[str, BoundLayer] | None = None
) -> dict[str, LearningCurve]:
    """Run :func:`ascend` once per layer, in the given order; ``layers`` maps a name to a layer factory
    ``ChainQuartic -> BoundLayer`` (default: only the sparse Danskin layer, :func:`sparse_danskin_layer`).
    ``TypeError`` naming ``layers`` when it is not such a mapping."""
    if not isinstance(config, LearningConfig):
        raise TypeError(f"config must be a LearningConfig; got {type(config).__name__}")
    layers = {"sparse + Danskin": sparse_danskin_layer} if layers is None else layers
    if not isinstance(layers, dict) or not layers or not all(callable(f) for f in layers.values()):
        raise TypeError("layers must be a non-empty dict of name -> callable layer factory")
    task = chain_quartic(config.n, config.seed)
    return {name: ascend(name, task, factory(task), config) for name, factory in layers.items()}
