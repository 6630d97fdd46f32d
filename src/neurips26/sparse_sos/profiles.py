"""One backward pass of a task instance, measured: its gradient, the declared cost, the operator's size
and the peak memory of the call.

Three backward paths on the same forward solution: ``"danskin"`` (the value's gradient, no operator),
``"structured"`` (the solution loss — or the value when the task has none — through the structured
adjoint), and the same structured algorithm on the dense formulation (a dense instance, path
``"structured"``). The gradient is with respect to the task's parameters ``θ``, by autograd through
``data(θ)``.
"""

from __future__ import annotations

import time
import tracemalloc
from dataclasses import dataclass

import numpy as np
import torch

from neurips26.sparse_sos.backward import danskin, structured_adjoint
from neurips26.sparse_sos.conic import ConicSolution
from neurips26.sparse_sos.cost_model import BackwardCost
from neurips26.sparse_sos.layer import SolveOptions, conic_solution, conic_value
from neurips26.sparse_sos.solve import solve
from neurips26.sparse_sos.tasks.base import TaskInstance
from neurips26.validation import check_choice

PATHS: tuple[str, ...] = ("danskin", "structured")


def task_value(
    instance: TaskInstance, theta: torch.Tensor, *, solver: str = "clarabel", tolerance: float | None = None
) -> torch.Tensor:
    """The task's value at ``θ`` (``value_sign · p*``) with Danskin's backward."""
    b, q, a = instance.data(theta)
    options = SolveOptions(solver=solver, solver_tolerance=tolerance)
    p = conic_value(instance.program, b=b, q=q, a_values=a, options=options)
    return instance.value_sign * p


def task_loss(
    instance: TaskInstance, theta: torch.Tensor, *, solver: str = "clarabel", tolerance: float | None = None
) -> torch.Tensor:
    """The task's solution loss at ``θ`` (its value ``sign · qᵀx*`` when it has none), structured backward."""
    b, q, a = instance.data(theta)
    options = SolveOptions(solver=solver, solver_tolerance=tolerance)
    x, y, s = conic_solution(instance.program, b=b, q=q, a_values=a, options=options)
    if instance.solution_loss is None:
        q_t = torch.as_tensor(instance.program.q, dtype=torch.float64, device=x.device) if q is None else q
        return instance.value_sign * (q_t @ x)
    return instance.solution_loss(x, y, s)


def _data_program(instance: TaskInstance, theta: torch.Tensor):
    b, q, a = instance.data(theta)
    to_np = lambda t: None if t is None else t.detach().cpu().numpy()  # noqa: E731
    return instance.program.with_data(b=to_np(b), q=to_np(q), a_values=to_np(a))


def _output_weights(
    instance: TaskInstance, solution: ConicSolution, device: torch.device
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(∂ℓ/∂x, ∂ℓ/∂y, ∂ℓ/∂s)`` of the task's solution loss at ``solution`` (or of its value)."""
    x = torch.as_tensor(solution.x, dtype=torch.float64, device=device).requires_grad_(True)
    y = torch.as_tensor(solution.y, dtype=torch.float64, device=device).requires_grad_(True)
    s = torch.as_tensor(solution.s, dtype=torch.float64, device=device).requires_grad_(True)
    if instance.solution_loss is None:
        loss = instance.value_sign * (torch.as_tensor(instance.program.q, device=device) @ x)
    else:
        loss = instance.solution_loss(x, y, s)
    grads = torch.autograd.grad(loss, (x, y, s), allow_unused=True)
    return tuple(
        np.zeros(v.numel()) if g is None else g.cpu().numpy() for g, v in zip(grads, (x, y, s), strict=True)
    )


@dataclass(frozen=True)
class BackwardProfile:
    """One backward pass: the path, the declared cost, wall seconds of the forward solve and the backward,
    the backward's peak traced memory (bytes) and the gradient with respect to ``θ``."""

    path: str
    formulation: str
    size: int
    cost: BackwardCost
    forward_seconds: float
    backward_seconds: float
    peak_bytes: int
    gradient: np.ndarray


@dataclass(frozen=True, eq=False)
class PreparedBackward:
    """A solved instance and the backward of one path on it, ready to run (and to time) repeatedly."""

    instance: TaskInstance
    path: str
    program: object
    solution: ConicSolution
    forward_seconds: float
    weights: tuple[np.ndarray, np.ndarray, np.ndarray] | None

    def run(self) -> tuple[np.ndarray, int]:
        """One backward (data gradient, then the chain rule to ``θ``); returns ``(∇θ, LSQR iterations)``."""
        instance = self.instance
        theta = instance.theta0.clone().requires_grad_(True)
        if self.path == "danskin":
            grad = danskin(self.program, self.solution)
            factor, iterations = instance.value_sign, 0  # the data gradient is of p*; the value is sign · p*
        else:
            grad = structured_adjoint(self.program, self.solution, *self.weights)
            factor, iterations = 1.0, grad.iterations
        b, q, a = instance.data(theta)
        total = torch.zeros((), dtype=torch.float64, device=theta.device)
        for part, g in ((b, grad.db), (q, grad.dq), (a, grad.dA)):
            if part is not None:
                total = total + (part * torch.as_tensor(g, dtype=torch.float64, device=part.device)).sum()
        if self.path == "structured" and instance.solution_loss is None and q is not None:
            # the value sign · qᵀx* also depends on θ directly through q
            x_star = torch.as_tensor(self.solution.x, dtype=torch.float64, device=q.device)
            total = total + instance.value_sign * (q @ x_star)
        (gradient,) = torch.autograd.grad(factor * total, theta, allow_unused=True)
        out = np.zeros(theta.numel()) if gradient is None else gradient.detach().cpu().numpy()
        return out, iterations


def prepare_backward(instance: TaskInstance, path: str, *, solver: str = "clarabel") -> PreparedBackward:
    """Solve ``instance`` at ``θ₀`` (timed) and get the backward of ``path`` ready (module docstring)."""
    check_choice("path", path, PATHS)
    program = _data_program(instance, instance.theta0)
    start = time.perf_counter()
    solution = solve(program, solver)
    forward_seconds = time.perf_counter() - start
    weights = _output_weights(instance, solution, instance.theta0.device) if path == "structured" else None
    return PreparedBackward(instance, path, program, solution, forward_seconds, weights)


def profile_backward(instance: TaskInstance, path: str, *, solver: str = "clarabel") -> BackwardProfile:
    """Solve once, then run one backward of ``path`` on it and measure it: its declared cost, wall seconds
    and peak traced memory (the chain rule to ``θ`` included, as in a layer)."""
    prepared = prepare_backward(instance, path, solver=solver)
    tracemalloc.start()
    start = time.perf_counter()
    gradient, iterations = prepared.run()
    backward_seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    if path == "danskin":
        cost = BackwardCost.danskin(instance.support_size, int(instance.theta0.numel()))
    else:
        cost = BackwardCost.structured(prepared.program, prepared.solution, iterations)
    return BackwardProfile(
        path,
        instance.formulation,
        instance.size,
        cost,
        prepared.forward_seconds,
        backward_seconds,
        int(peak),
        gradient,
    )
