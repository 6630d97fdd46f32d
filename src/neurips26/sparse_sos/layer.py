"""The differentiable sparse SOS layer: ``c(θ) ↦ (γ*, {Q_k}, y*)`` as torch autograd functions.

Two backward paths share one forward solve:

* :func:`sos_bound` returns ``γ*`` only, and its backward is Danskin's (``∂γ*/∂c = y*``, the moments) —
  no linear solve, no Gram matrix;
* :class:`SparseSOSLayer` returns ``γ*``, the Gram blocks and the moments, and its backward is the
  structured adjoint (:func:`~neurips26.sparse_sos.backward.structured_adjoint`).

:func:`conic_solution` is the generic layer under both: the program's data ``(b, q, A's values)`` in, the
primal-dual solution ``(x, y, s)`` out; the tasks whose parameters enter ``q`` or ``A`` (MaxCut weights,
constraint data) use it directly, and :func:`conic_value` is its Danskin counterpart.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neurips26.sparse_sos.assemble import SOSProgram
from neurips26.sparse_sos.backward import danskin, structured_adjoint
from neurips26.sparse_sos.conic import BlockConicProgram
from neurips26.sparse_sos.solve import solve
from neurips26.sparse_sos.svec import triangle_indices
from neurips26.validation import check_choice

_F64 = torch.float64


def _numpy(t: torch.Tensor | None) -> np.ndarray | None:
    return None if t is None else t.detach().cpu().numpy().astype(float)


def _like(array: np.ndarray, reference: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(array, dtype=_F64, device=reference.device)


@dataclass
class SolveOptions:
    """What the layer's forward and backward use: the solver and its tolerance (None: the solver's default,
    :func:`~neurips26.sparse_sos.solve.solve`), and the adjoint's method and LSQR tolerance.

    Gradients of moments or certificates see the solution's accuracy, not only the gap: on the chapter's
    degenerate SOS programs Clarabel's moments at gap 1e-8 are off by about 6e-5, so reference gradients
    use ``solver_tolerance=1e-10``.
    """

    solver: str = "clarabel"
    method: str = "lsqr"
    tol: float = 1e-10
    solver_tolerance: float | None = None


class _ConicSolution(torch.autograd.Function):
    @staticmethod
    def forward(ctx, program, options, b, q, a_values):  # type: ignore[override]
        data = program.with_data(b=_numpy(b), q=_numpy(q), a_values=_numpy(a_values))
        solution = solve(data, options.solver, tolerance=options.solver_tolerance)
        ctx.data, ctx.solution, ctx.options = data, solution, options
        return _like(solution.x, b), _like(solution.y, b), _like(solution.s, b)

    @staticmethod
    def backward(ctx, dx, dy, ds):  # type: ignore[override]
        grad = structured_adjoint(
            ctx.data,
            ctx.solution,
            dx.detach().cpu().numpy(),
            dy.detach().cpu().numpy(),
            ds.detach().cpu().numpy(),
            method=ctx.options.method,
            tol=ctx.options.tol,
        )
        ref = dx
        return None, None, _like(grad.db, ref), _like(grad.dq, ref), _like(grad.dA, ref)


class _ConicValue(torch.autograd.Function):
    @staticmethod
    def forward(ctx, program, options, b, q, a_values):  # type: ignore[override]
        data = program.with_data(b=_numpy(b), q=_numpy(q), a_values=_numpy(a_values))
        solution = solve(data, options.solver, tolerance=options.solver_tolerance)
        ctx.data, ctx.solution = data, solution
        return torch.as_tensor(solution.value, dtype=_F64, device=b.device)

    @staticmethod
    def backward(ctx, dvalue):  # type: ignore[override]
        grad = danskin(ctx.data, ctx.solution)
        scale = float(dvalue)
        ref = dvalue
        return (
            None,
            None,
            _like(scale * grad.db, ref),
            _like(scale * grad.dq, ref),
            _like(scale * grad.dA, ref),
        )


def _data(
    program: BlockConicProgram, b: torch.Tensor | None, q: torch.Tensor | None, a_values: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    ref = next((t for t in (b, q, a_values) if t is not None), None)
    device = ref.device if ref is not None else torch.device("cpu")

    def fill(t: torch.Tensor | None, default: np.ndarray, name: str) -> torch.Tensor:
        if t is None:
            return torch.as_tensor(default, dtype=_F64, device=device)
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor; got {type(t).__name__}")
        if tuple(t.shape) != default.shape:
            raise ValueError(f"{name} must have shape {default.shape}; got {tuple(t.shape)}")
        return t.to(_F64)

    return (
        fill(b, program.b, "b"),
        fill(q, program.q, "q"),
        fill(a_values, program.A.tocsc().data, "a_values"),
    )


def conic_solution(
    program: BlockConicProgram,
    *,
    b: torch.Tensor | None = None,
    q: torch.Tensor | None = None,
    a_values: torch.Tensor | None = None,
    options: SolveOptions | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(x*, y*, s*)`` of the program with the given data (``None`` keeps the program's); backward by the
    structured adjoint. ``a_values`` are the values of ``A``'s stored entries (CSC order)."""
    options = options or SolveOptions()
    return _ConicSolution.apply(program, options, *_data(program, b, q, a_values))


def conic_value(
    program: BlockConicProgram,
    *,
    b: torch.Tensor | None = None,
    q: torch.Tensor | None = None,
    a_values: torch.Tensor | None = None,
    options: SolveOptions | None = None,
) -> torch.Tensor:
    """``p* = min qᵀx`` with Danskin's backward (``∂p*/∂b = −y*``, ``∂p*/∂q = x*``, ``∂p*/∂A = y* x*ᵀ``)."""
    options = options or SolveOptions()
    return _ConicValue.apply(program, options, *_data(program, b, q, a_values))


def _coefficients_to_b(program: SOSProgram, coefficients: torch.Tensor) -> torch.Tensor:
    if not isinstance(coefficients, torch.Tensor):
        raise TypeError(f"coefficients must be a torch.Tensor; got {type(coefficients).__name__}")
    if tuple(coefficients.shape) != (len(program.support),):
        raise ValueError(
            f"coefficients must have shape ({len(program.support)},); got {tuple(coefficients.shape)}"
        )
    b = torch.zeros(program.conic.shape[0], dtype=_F64, device=coefficients.device)
    index = torch.as_tensor(program.support_rows, device=coefficients.device)
    return b.index_put((index,), coefficients.to(_F64))


def sos_bound(program: SOSProgram, coefficients: torch.Tensor, *, solver: str = "clarabel") -> torch.Tensor:
    """``γ*(c)``, the SOS lower bound of the polynomial with coefficients ``c`` (Danskin backward)."""
    check_choice("solver", solver, ("clarabel", "scs"))
    b = _coefficients_to_b(program, coefficients)
    return -conic_value(program.conic, b=b, options=SolveOptions(solver=solver))


@dataclass(frozen=True)
class SOSOutput:
    """The layer's outputs: the bound, the Gram blocks (certificate) and the moments, all differentiable."""

    gamma: torch.Tensor
    gram: tuple[torch.Tensor, ...]
    moments: torch.Tensor
    solution: tuple[torch.Tensor, torch.Tensor, torch.Tensor]


class SparseSOSLayer(torch.nn.Module):
    """``c ↦ (γ*, {Q_k}, y*)`` for one assembled SOS program; backward by the structured adjoint.

    ``layer.bound(c)`` is the cheaper Danskin path when only ``γ*`` enters the loss.
    """

    def __init__(self, program: SOSProgram, options: SolveOptions | None = None) -> None:
        super().__init__()
        if not isinstance(program, SOSProgram):
            raise TypeError(f"program must be an SOSProgram; got {type(program).__name__}")
        self.program = program
        self.options = options or SolveOptions()
        check_choice("solver", self.options.solver, ("clarabel", "scs"))

    def forward(self, coefficients: torch.Tensor) -> SOSOutput:
        b = _coefficients_to_b(self.program, coefficients)
        x, y, s = conic_solution(self.program.conic, b=b, options=self.options)
        gram = []
        for block, cols in zip(self.program.blocks, self.program.block_columns(), strict=True):
            rows_i, cols_j = triangle_indices(block.size)
            v = x[cols]
            scale = torch.where(torch.as_tensor(rows_i == cols_j, device=v.device), 1.0, 2.0**-0.5).to(_F64)
            Q = torch.zeros(block.size, block.size, dtype=_F64, device=v.device)
            Q = Q.index_put((torch.as_tensor(rows_i), torch.as_tensor(cols_j)), v * scale)
            Q = Q + Q.T - torch.diag(torch.diagonal(Q))
            gram.append(Q)
        return SOSOutput(x[self.program.gamma], tuple(gram), y[: self.program.conic.zero], (x, y, s))

    def bound(self, coefficients: torch.Tensor) -> torch.Tensor:
        """``γ*`` with Danskin's backward."""
        return sos_bound(self.program, coefficients, solver=self.options.solver)
