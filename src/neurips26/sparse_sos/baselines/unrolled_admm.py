"""An unrolled first-order SDP solver: ``K`` ADMM iterations differentiated by torch autograd.

The alternative to implicit differentiation is to run a first-order solver in torch and let autograd
walk back through every iteration. It needs no optimality conditions, but its memory grows linearly in
``K`` (every iteration's eigendecompositions and iterates are kept for the backward), and its gradient is
the derivative of the *K-th iterate*, which approaches the solution map's derivative only as ``K → ∞``.

The iteration is OSQP's ADMM (Stellato et al. 2020) with ``P = 0`` on ``min qᵀx s.t. z = Ax, z ∈ b − K``
(``z = b − s``), with relaxation ``α`` and a proximal term ``σ``:

    (σI + ρAᵀA) x̃ = σx − q + Aᵀ(ρz − y),    z̃ = Ax̃,    x ← αx̃ + (1 − α)x,
    z⁺ = b − Π_K(b − (αz̃ + (1 − α)z + y/ρ)),    y ← y + ρ(αz̃ + (1 − α)z − z⁺),    z ← z⁺.

The matrix ``σI + ρAᵀA`` is factorised once per call (Cholesky, itself differentiable in ``A``); ``Π_K``
is ``0`` on the zero rows, ``max(·, 0)`` on the nonnegative rows and the PSD projection per block
(``torch.linalg.eigh``, batched over blocks of one size). The projection's backward is the divided-
difference formula of :mod:`~neurips26.sparse_sos.psd` (``DΠ(X)[H] = U(Ω ∘ UᵀHU)Uᵀ``), which stays finite
at repeated eigenvalues where the generic ``eigh`` backward divides by zero. ``y`` converges to the dual
of ``Ax + s = b`` in the library's sign (``y ∈ K*``), ``s = b − z``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch

from neurips26.sparse_sos.conic import BlockConicProgram
from neurips26.sparse_sos.layer import _data
from neurips26.sparse_sos.svec import SQRT2, svec_dim, triangle_indices
from neurips26.validation import check_float, check_int

_F64 = torch.float64


@dataclass(frozen=True)
class UnrolledOutput:
    """The K-th iterate: ``value = qᵀx``, ``x``, ``y`` (dual, ``K*``), ``s = b − z``, and the final primal
    residual ``‖Ax + s − b‖_∞`` (a float, for reporting)."""

    value: torch.Tensor
    x: torch.Tensor
    y: torch.Tensor
    s: torch.Tensor
    primal_residual: float


class _PSDProjection(torch.autograd.Function):
    """``Π(X)`` for a batch of symmetric matrices, backward by the divided differences ``Ω``."""

    @staticmethod
    def forward(ctx, X):  # type: ignore[override]
        lam, U = torch.linalg.eigh(X)
        ctx.save_for_backward(lam, U)
        return (U * lam.clamp(min=0.0).unsqueeze(-2)) @ U.transpose(-1, -2)

    @staticmethod
    def backward(ctx, G):  # type: ignore[override]
        lam, U = ctx.saved_tensors
        plus = lam.clamp(min=0.0)
        diff = lam.unsqueeze(-1) - lam.unsqueeze(-2)
        scale = lam.abs().amax(dim=-1, keepdim=True).clamp(min=1.0).unsqueeze(-1)
        tie = diff.abs() <= 1e-12 * scale
        ratio = (plus.unsqueeze(-1) - plus.unsqueeze(-2)) / torch.where(tie, torch.ones_like(diff), diff)
        positive = ((lam.unsqueeze(-1) > 0) & (lam.unsqueeze(-2) > 0)).to(lam.dtype)
        omega = torch.where(tie, positive, ratio)
        Gs = 0.5 * (G + G.transpose(-1, -2))
        return U @ (omega * (U.transpose(-1, -2) @ Gs @ U)) @ U.transpose(-1, -2)


class _ConeProjection:
    """``Π_K`` on a stacked vector: zero rows, nonnegative rows, PSD blocks batched by size."""

    def __init__(self, program: BlockConicProgram, device: torch.device) -> None:
        self.zero, self.nonneg = program.zero, program.nonneg
        self.groups: list[tuple[int, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]] = []
        slices = program.psd_slices()
        for s in sorted(set(program.psd)):
            starts = [sl.start for sl, size in zip(slices, program.psd, strict=True) if size == s]
            i, j = triangle_indices(s)
            rows = torch.as_tensor(np.add.outer(starts, np.arange(svec_dim(s))), device=device)
            scale = torch.as_tensor(np.where(i == j, 1.0, SQRT2), dtype=_F64, device=device)
            self.groups.append(
                (s, rows, torch.as_tensor(i, device=device), torch.as_tensor(j, device=device), scale)
            )

    def __call__(self, v: torch.Tensor) -> torch.Tensor:
        out = torch.zeros_like(v)
        head = self.zero + self.nonneg
        out = out.index_put(
            (torch.arange(self.zero, head, device=v.device),), v[self.zero : head].clamp(min=0.0)
        )
        for s, rows, i, j, scale in self.groups:
            entries = v[rows] / scale  # (blocks, svec) → matrix entries
            X = torch.zeros(rows.shape[0], s, s, dtype=v.dtype, device=v.device)
            X = _fill(X, i, j, entries)
            P = _PSDProjection.apply(X)
            out = out.index_put((rows.reshape(-1),), (P[:, i, j] * scale).reshape(-1))
        return out


def _fill(X: torch.Tensor, i: torch.Tensor, j: torch.Tensor, entries: torch.Tensor) -> torch.Tensor:
    """Symmetric matrices from their upper-triangle entries (differentiably)."""
    upper = torch.zeros_like(X)
    upper[:, i, j] = entries
    return upper + upper.transpose(-1, -2) - torch.diag_embed(torch.diagonal(upper, dim1=-2, dim2=-1))


def unrolled_admm(
    program: BlockConicProgram,
    *,
    b: torch.Tensor | None = None,
    q: torch.Tensor | None = None,
    a_values: torch.Tensor | None = None,
    iterations: int = 500,
    rho: float = 1.0,
    sigma: float = 1e-6,
    alpha: float = 1.6,
) -> UnrolledOutput:
    """Run ``iterations`` ADMM steps (module docstring) from zero on the program with the given data
    (``None`` keeps the program's); every operation is recorded by autograd."""
    if not isinstance(program, BlockConicProgram):
        raise TypeError(f"program must be a BlockConicProgram; got {type(program).__name__}")
    iterations = check_int("iterations", iterations, minimum=1)
    rho = check_float("rho", rho, minimum=0.0, strict_min=True)
    sigma = check_float("sigma", sigma, minimum=0.0, strict_min=True)
    alpha = check_float("alpha", alpha, minimum=0.0, maximum=2.0, strict_min=True)
    if alpha == 2.0:
        raise ValueError("alpha must be < 2 (ADMM's relaxation range is (0, 2))")
    b, q, a_values = _data(program, b, q, a_values)
    device = b.device
    A_csc = sp.csc_matrix(program.A)
    m, n = A_csc.shape
    cols = np.repeat(np.arange(n), np.diff(A_csc.indptr))
    A = torch.zeros(m, n, dtype=_F64, device=device).index_put(
        (torch.as_tensor(A_csc.indices, device=device), torch.as_tensor(cols, device=device)), a_values
    )
    project = _ConeProjection(program, device)
    L = torch.linalg.cholesky(sigma * torch.eye(n, dtype=_F64, device=device) + rho * A.T @ A)
    x = torch.zeros(n, dtype=_F64, device=device)
    z = torch.zeros(m, dtype=_F64, device=device)
    y = torch.zeros(m, dtype=_F64, device=device)
    for _ in range(iterations):
        rhs = sigma * x - q + A.T @ (rho * z - y)
        x_tilde = torch.cholesky_solve(rhs.unsqueeze(-1), L).squeeze(-1)
        z_tilde = A @ x_tilde
        x = alpha * x_tilde + (1.0 - alpha) * x
        z_relaxed = alpha * z_tilde + (1.0 - alpha) * z
        z_next = b - project(b - (z_relaxed + y / rho))
        y = y + rho * (z_relaxed - z_next)
        z = z_next
    s = b - z
    residual = float((A @ x - z).detach().abs().max())
    return UnrolledOutput(q @ x, x, y, s, residual)


def saved_tensor_bytes(fn: Callable[[], object]) -> tuple[object, int]:
    """Run ``fn()`` and count the bytes autograd saves for the backward (each storage once), via
    ``torch.autograd.graph.saved_tensors_hooks``: the unrolled backward's memory, without the allocator."""
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        seen[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return out, int(sum(seen.values()))
