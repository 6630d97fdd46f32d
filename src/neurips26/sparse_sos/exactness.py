"""Are the gradients exact? (claim t3) Each task's two gradients against central finite differences and
against the generic SDP layer, at a small size.

* Danskin's gradient of the task's value, and the structured adjoint's gradient of its solution loss, are
  compared with central differences of the same functions through re-solves
  (:func:`~neurips26.sparse_sos.baselines.finite_differences.central_differences`, ``h = 1e-3``).
* The same two gradients through cvxpylayers/diffcp (SCS at ``eps`` :data:`GENERIC_EPS`) on the same
  sparse program.

Every solve of one task uses Clarabel at one gap, the tightest of :data:`REFERENCE_TOLERANCES` at which
all of the task's solves (the gradients' and every finite-difference re-solve) report *Solved*: moments and
certificates inherit the solution's accuracy, and at the default 1e-8 the chain quartic's moments are off
by about 6e-5, which is larger than the criterion. The Shor relaxations (MaxCut, pose sync) have rank-one
optima without a strictly complementary dual, where Clarabel stops at *AlmostSolved* below a gap of about
1e-9 (MaxCut) or 1e-8 (pose sync); the gap used is recorded per task. The error is
``‖g − g_ref‖_∞ / ‖g_ref‖_∞``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neurips26.progress import progress
from neurips26.scales import pick
from neurips26.sparse_sos.baselines.cvxpylayers_sdp import CvxpyLayersSDP
from neurips26.sparse_sos.baselines.finite_differences import central_differences
from neurips26.sparse_sos.profiles import task_loss, task_value
from neurips26.sparse_sos.solve import SolverError
from neurips26.sparse_sos.tasks.base import TaskInstance
from neurips26.sparse_sos.tasks.registry import TASKS, task_instance
from neurips26.validation import check_choice, check_int, check_seed

#: Clarabel's gap for the reference solves, tightest first (module docstring).
REFERENCE_TOLERANCES: tuple[float, ...] = (1e-10, 1e-9, 1e-8)
GENERIC_EPS = 1e-9
FD_STEP = 1e-3


def relative_error(gradient: np.ndarray, reference: np.ndarray) -> float:
    """``‖g − g_ref‖_∞ / ‖g_ref‖_∞`` (absolute when the reference is zero)."""
    scale = float(np.abs(reference).max(initial=0.0))
    return float(np.abs(gradient - reference).max(initial=0.0) / (scale if scale > 0 else 1.0))


@dataclass(frozen=True)
class ExactnessConfig:
    """(task, size) pairs to check, ``θ₀`` from ``seed``."""

    sizes: tuple[tuple[str, int], ...]
    seed: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.sizes, tuple) or not self.sizes:
            raise TypeError("sizes must be a non-empty tuple of (task, size) pairs")
        for k, pair in enumerate(self.sizes):
            if not isinstance(pair, tuple) or len(pair) != 2:
                raise ValueError(f"sizes[{k}] must be a (task, size) pair; got {pair!r}")
            check_choice(f"sizes[{k}][0]", pair[0], tuple(TASKS))
            check_int(f"sizes[{k}][1]", pair[1], minimum=2)
        check_seed("seed", self.seed)

    @classmethod
    def for_scale(cls, scale: str) -> ExactnessConfig:
        sizes = (
            ("chain_quartic", pick(scale, smoke=3, default=5, paper=8)),
            ("maxcut", pick(scale, smoke=9, default=9, paper=18)),
            ("oscillator", pick(scale, smoke=3, default=4, paper=6)),
            ("pose_sync", pick(scale, smoke=4, default=6, paper=10)),
            ("pendulum", 2),
            ("projection", 2),
        )
        return cls(sizes=sizes)


@dataclass(frozen=True)
class TaskExactness:
    """One task's relative errors: ``danskin_fd`` and ``structured_fd`` against finite differences,
    ``danskin_generic`` and ``structured_generic`` against cvxpylayers; the parameter count, the
    finite-difference solves and Clarabel's gap ``tolerance`` for every solve of the task."""

    task: str
    size: int
    parameters: int
    danskin_fd: float
    structured_fd: float
    danskin_generic: float
    structured_generic: float
    fd_solves: int
    tolerance: float


def _gradient(fn, theta0: torch.Tensor) -> np.ndarray:
    theta = theta0.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(fn(theta), theta)
    return grad.detach().cpu().numpy()


def _generic_gradients(instance: TaskInstance) -> tuple[np.ndarray, np.ndarray]:
    """Value and solution-loss gradients through cvxpylayers on the same program."""
    theta = instance.theta0.clone().requires_grad_(True)
    b, q, a = instance.data(theta)
    parameters = tuple(
        n for n, part in zip(("b", "q", "a_values"), (b, q, a), strict=True) if part is not None
    )
    layer = CvxpyLayersSDP(instance.program, parameters, eps=GENERIC_EPS, max_iters=200_000)
    out = layer(b=b, q=q, a_values=a)
    value = instance.value_sign * out.value
    (g_value,) = torch.autograd.grad(value, theta, retain_graph=True)
    if instance.solution_loss is None:
        g_loss = g_value
    else:
        s = torch.as_tensor(instance.program.b, dtype=torch.float64) - _matvec(instance, a, out.x)
        (g_loss,) = torch.autograd.grad(instance.solution_loss(out.x, out.y, s), theta, allow_unused=True)
        g_loss = torch.zeros_like(theta) if g_loss is None else g_loss
    return g_value.detach().numpy(), g_loss.detach().numpy()


def _matvec(instance: TaskInstance, a_values: torch.Tensor | None, x: torch.Tensor) -> torch.Tensor:
    """``A x`` with ``A``'s values ``a_values`` (the program's when None), differentiable in both."""
    A = instance.program.A.tocsc()
    values = torch.as_tensor(A.data, dtype=torch.float64) if a_values is None else a_values
    rows = torch.as_tensor(A.indices)
    cols = torch.as_tensor(np.repeat(np.arange(A.shape[1]), np.diff(A.indptr)))
    return torch.zeros(A.shape[0], dtype=torch.float64).index_add(0, rows, values * x[cols])


def _task_exactness_at(instance: TaskInstance, tol: float) -> TaskExactness:
    """Every gradient of one task with all solves at Clarabel gap ``tol`` (``SolverError`` if one fails)."""

    def value(theta: torch.Tensor) -> torch.Tensor:
        return task_value(instance, theta, tolerance=tol)

    def loss(theta: torch.Tensor) -> torch.Tensor:
        return task_loss(instance, theta, tolerance=tol)

    g_value, g_loss = _gradient(value, instance.theta0), _gradient(loss, instance.theta0)
    with torch.no_grad():
        fd_value = central_differences(lambda t: float(value(t)), instance.theta0, step=FD_STEP)
        fd_loss = central_differences(lambda t: float(loss(t)), instance.theta0, step=FD_STEP)
    generic_value, generic_loss = _generic_gradients(instance)
    return TaskExactness(
        instance.task,
        instance.size,
        int(instance.theta0.numel()),
        relative_error(g_value, np.asarray(fd_value.gradient)),
        relative_error(g_loss, np.asarray(fd_loss.gradient)),
        relative_error(g_value, generic_value),
        relative_error(g_loss, generic_loss),
        fd_value.solves + fd_loss.solves,
        tol,
    )


def task_exactness(task: str, size: int, *, seed: int = 0) -> TaskExactness:
    """Check one task (module docstring) at the tightest gap of :data:`REFERENCE_TOLERANCES` where every solve
    succeeds; ``SolverError`` when none does."""
    check_choice("task", task, tuple(TASKS))
    instance = task_instance(task, size, seed, "sparse")
    failures = []
    for tol in REFERENCE_TOLERANCES:
        try:
            return _task_exactness_at(instance, tol)
        except SolverError as error:
            failures.append(f"gap {tol:g}: {error}")
    raise SolverError(f"{task} at size {size}: no reference gap worked ({'; '.join(failures)})")


def gradient_check(config: ExactnessConfig, *, verbose: bool = True) -> dict[str, TaskExactness]:
    """:func:`task_exactness` for every task of ``config``."""
    return {
        task: task_exactness(task, size, seed=config.seed)
        for task, size in progress(config.sizes, desc="tasks", show=verbose)
    }
