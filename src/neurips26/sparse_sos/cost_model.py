"""The declared cost model of one backward pass, counted from the operator actually built.

Declared before any measurement, and used for the chapter's speed verdicts because wall clock on a busy
2-core machine is noisy (wall clock is shown beside it). For the structured adjoint (the same algorithm on
the dense program — one clique — gives the dense cost):

    flops = Σ_k 9 s_k³  +  I · (Σ_k 8 s_k³ + 4 nnz(A))

— one symmetric eigendecomposition per PSD block (≈ 9 s³), then per LSQR iteration one product with ``M``
and one with ``Mᵀ``, each costing four ``s_k × s_k`` matrix products per block (``2 s³`` each, so
``8 s³`` for the pair counted once as in the declaration) and two passes over ``A`` (``2 nnz`` each); ``I``
is the number of LSQR iterations the solve took. For Danskin's path, ``2 |S| · dim θ`` — one multiply-add
per (coefficient, parameter) pair of ``Σ_α y_α ∇c_α``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from neurips26.sparse_sos.backward import ResidualMap
from neurips26.sparse_sos.conic import BlockConicProgram, ConicSolution
from neurips26.validation import check_int


def structured_flops(block_sizes: Sequence[int], nnz_a: int, iterations: int) -> int:
    """``Σ_k 9 s_k³ + I (Σ_k 8 s_k³ + 4 nnz(A))`` (module docstring)."""
    sizes = [check_int(f"block_sizes[{k}]", s, minimum=1) for k, s in enumerate(block_sizes)]
    nnz_a = check_int("nnz_a", nnz_a, minimum=0)
    iterations = check_int("iterations", iterations, minimum=0)
    cubes = sum(s**3 for s in sizes)
    return 9 * cubes + iterations * (8 * cubes + 4 * nnz_a)


def danskin_flops(support_size: int, theta_dim: int) -> int:
    """``2 |S| · dim θ``: the chain rule ``Σ_α y_α ∇c_α`` for a dense Jacobian of ``c(θ)``."""
    return (
        2 * check_int("support_size", support_size, minimum=1) * check_int("theta_dim", theta_dim, minimum=1)
    )


def residual_nnz(program: BlockConicProgram, solution: ConicSolution) -> int:
    """Stored entries of ``M = (Q − I) DΠ + I`` as the backward builds it — the factors, never their product:
    ``Q`` (``A`` twice, ``b``, ``q``), the block-diagonal ``DΠ`` (one dense ``t_k × t_k`` block per PSD
    cone) and the identity's diagonal."""
    residual = ResidualMap(program, solution)
    return int(residual.Q.nnz + residual.cone.stored_entries() + residual.n + 1 + residual.size)


@dataclass(frozen=True)
class BackwardCost:
    """One backward pass under the declared model: flops, the LSQR iterations, ``nnz(A)``, ``nnz(M)``."""

    flops: int
    iterations: int
    nnz_a: int
    nnz_m: int

    @classmethod
    def structured(cls, program: BlockConicProgram, solution: ConicSolution, iterations: int) -> BackwardCost:
        """The structured adjoint's cost on ``program`` after ``iterations`` LSQR steps."""
        return cls(
            structured_flops(program.psd, program.A.nnz, iterations),
            iterations,
            int(program.A.nnz),
            residual_nnz(program, solution),
        )

    @classmethod
    def danskin(cls, support_size: int, theta_dim: int) -> BackwardCost:
        """Danskin's cost: no operator at all (``nnz(M) = 0``)."""
        return cls(danskin_flops(support_size, theta_dim), 0, 0, 0)
