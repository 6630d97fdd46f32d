"""Gradients through a block conic program: Danskin for the optimal value, the structured adjoint otherwise.

(a) **Danskin** (envelope theorem). With ``p* = min qᵀx s.t. Ax + s = b`` and a unique optimal dual ``y*``,
``∂p*/∂q = x*``, ``∂p*/∂b = −y*``, ``∂p*/∂A = y* x*ᵀ``. For an SOS bound ``γ* = −p*`` and ``b = (c, 0)`` this
is ``∂γ*/∂c_α = y*_α`` — a moment — so a scalar loss of ``γ*`` costs ``O(|S|)`` after the solve.

(b) **Structured adjoint** of the solution map ``(A, b, q) ↦ (x, y, s)``, by implicit differentiation of
the normalised residual map of the homogeneous self-dual embedding (Busseti, Moursi, Boyd 2019; Agrawal et
al. 2019). With ``z = (x, y − s, 1)``, the skew matrix ``Q = [[0, Aᵀ, q], [−A, 0, b], [−qᵀ, −bᵀ, 0]]`` and
the projection ``Π`` onto ``Rⁿ × K* × R_+``,

    M = (Q − I) DΠ(z) + I,      Mᵀ r = (dx,  DΠ_K*(y − s)(dy + ds) − ds,  −xᵀdx − yᵀdy − sᵀds),

and the data gradients follow from ``r`` and ``Π(z) = (x, y, 1)``. What keeps the structure: ``DΠ`` is
block diagonal with one small block per PSD cone (:class:`~neurips26.sparse_sos.psd.PSDProjectionDerivative`),
``A`` stays sparse, ``M`` is never formed densely (LSQR uses its products; the LU path builds it sparse),
and ``dA`` lives on ``A``'s pattern only.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from neurips26.sparse_sos.conic import BlockConicProgram, ConicSolution
from neurips26.sparse_sos.psd import BatchedPSDDerivative, PSDProjectionDerivative
from neurips26.sparse_sos.svec import smat, svec_dim
from neurips26.validation import check_choice, check_float

METHODS: tuple[str, ...] = ("lsqr", "dense")


class ComplementarityWarning(RuntimeWarning):
    """Strict complementarity fails at the solution: the derivative is not unique."""


@dataclass(frozen=True, eq=False)
class DataGradient:
    """Gradients with respect to the data: ``dA`` (values on ``A``'s stored pattern), ``db``, ``dq``."""

    dA: np.ndarray
    db: np.ndarray
    dq: np.ndarray
    iterations: int = 0
    regularised: bool = False


def danskin(program: BlockConicProgram, solution: ConicSolution) -> DataGradient:
    """``∇ p*`` by the envelope theorem: ``dA = y x ᵀ`` on ``A``'s pattern, ``db = −y``, ``dq = x``."""
    A = sp.csc_matrix(program.A)
    cols = np.repeat(np.arange(A.shape[1]), np.diff(A.indptr))
    dA = solution.y[A.indices] * solution.x[cols]
    return DataGradient(dA, -solution.y.copy(), solution.x.copy())


class DualConeDerivative:
    """``DΠ_K*`` at ``v = y − s``, block by block: identity on the free part, ``1[v > 0]`` on ``R_+``, and
    the PSD projection's derivative on each PSD block (blocks of equal size batched together,
    :class:`~neurips26.sparse_sos.psd.BatchedPSDDerivative`)."""

    def __init__(self, program: BlockConicProgram, v: np.ndarray) -> None:
        self.program = program
        self._v = np.asarray(v, dtype=float)
        self.free = program.zero
        self.nonneg = (v[program.zero : program.zero + program.nonneg] > 0).astype(float)
        self.slices = program.psd_slices()
        self.groups: list[tuple[np.ndarray, BatchedPSDDerivative]] = []
        for size in sorted(set(program.psd)):
            members = [rows for rows, s in zip(self.slices, program.psd, strict=True) if s == size]
            index = np.stack([np.arange(r.start, r.stop) for r in members])  # (g, t)
            self.groups.append((index, BatchedPSDDerivative(np.stack([smat(v[r]) for r in members]))))

    def apply(self, vector: np.ndarray) -> np.ndarray:
        """``DΠ_K*(v)[vector]`` (self-adjoint)."""
        out = np.empty_like(vector)
        out[: self.free] = vector[: self.free]
        tail = self.free + self.nonneg.size
        out[self.free : tail] = self.nonneg * vector[self.free : tail]
        for index, block in self.groups:
            out[index] = block.apply(vector[index])
        return out

    def blocks(self) -> list[PSDProjectionDerivative]:
        """One unbatched derivative per PSD block, in the program's order (for the dense reference)."""
        return [PSDProjectionDerivative(smat(self._v[r])) for r in self.slices]

    def strictly_complementary(self) -> bool:
        return all(block.strictly_complementary() for _, block in self.groups)

    def stored_entries(self) -> int:
        """Entries of the block-diagonal ``DΠ`` as an operator: the free and ``R_+`` diagonals and one dense
        ``t_k × t_k`` block per PSD cone."""
        return self.free + self.nonneg.size + sum(svec_dim(s) ** 2 for s in self.program.psd)

    def sparse(self) -> sp.csr_matrix:
        """The block-diagonal matrix of :meth:`apply` (one dense ``t_k × t_k`` block per PSD cone)."""
        dense_blocks = [b.dense() for b in self.blocks()]
        parts = [sp.identity(self.free, format="csr"), sp.diags(self.nonneg), *dense_blocks]
        return sp.block_diag(parts, format="csr")


class ResidualMap:
    """``M = (Q − I) DΠ(z) + I`` at a solution, as products (LSQR) or as a sparse matrix (LU)."""

    def __init__(self, program: BlockConicProgram, solution: ConicSolution) -> None:
        A = sp.csc_matrix(program.A)
        m, n = A.shape
        self.m, self.n = m, n
        b, q = program.b[:, None], program.q[:, None]
        self.Q = sp.bmat([[None, A.T, q], [-A, None, b], [-q.T, -b.T, None]], format="csr")
        self.cone = DualConeDerivative(program, solution.y - solution.s)
        self.size = n + m + 1

    def _dpi(self, vector: np.ndarray) -> np.ndarray:
        n, m = self.n, self.m
        out = vector.copy()
        out[n : n + m] = self.cone.apply(vector[n : n + m])
        return out  # the last entry: w = 1 > 0, derivative 1

    def matvec(self, vector: np.ndarray) -> np.ndarray:
        d = self._dpi(vector)
        return self.Q @ d - d + vector

    def rmatvec(self, vector: np.ndarray) -> np.ndarray:
        # Qᵀ = −Q and DΠ is self-adjoint: Mᵀ u = DΠ(−Q u − u) + u
        return self._dpi(-(self.Q @ vector) - vector) + vector

    def operator(self) -> spla.LinearOperator:
        return spla.LinearOperator((self.size, self.size), matvec=self.matvec, rmatvec=self.rmatvec)

    def sparse(self) -> sp.csc_matrix:
        """``M`` as a sparse matrix (its nonzeros: ``A``'s twice, ``b``, ``q`` and the ``DΠ`` blocks)."""
        D = sp.block_diag([sp.identity(self.n), self.cone.sparse(), sp.identity(1)], format="csr")
        return sp.csc_matrix((self.Q - sp.identity(self.size)) @ D + sp.identity(self.size))


def structured_adjoint(
    program: BlockConicProgram,
    solution: ConicSolution,
    dx: np.ndarray,
    dy: np.ndarray,
    ds: np.ndarray,
    *,
    method: str = "lsqr",
    tol: float = 1e-10,
    tikhonov: float = 1e-8,
) -> DataGradient:
    """The adjoint of the derivative of ``(A, b, q) ↦ (x, y, s)`` applied to ``(dx, dy, ds)``.

    ``M`` is singular (``M z = 0``: the embedding is homogeneous), so the solve is a least-squares one:
    ``method="lsqr"`` runs matrix-free LSQR at ``tol`` (at most ``10 × dim`` iterations) and ``"dense"``
    the minimum-norm solution of the dense ``Mᵀ`` (the reference for small programs). When strict
    complementarity fails the solve gets a Tikhonov term ``tikhonov`` and a :class:`ComplementarityWarning`.
    """
    check_choice("method", method, METHODS)
    tol = check_float("tol", tol, minimum=0.0, strict_min=True)
    x, y, s = solution.x, solution.y, solution.s
    for name, value, size in (("dx", dx, x.size), ("dy", dy, y.size), ("ds", ds, s.size)):
        if np.shape(value) != (size,):
            raise ValueError(f"{name} must have shape ({size},); got {np.shape(value)}")
    residual = ResidualMap(program, solution)
    regularised = not residual.cone.strictly_complementary()
    if regularised:
        warnings.warn(
            "strict complementarity fails at this solution (an eigenvalue of y − s is near zero): "
            f"the adjoint solve adds a Tikhonov term {tikhonov:g}",
            ComplementarityWarning,
            stacklevel=2,
        )
    dw = -(x @ dx + y @ dy + s @ ds)
    rhs = np.concatenate([dx, residual.cone.apply(dy + ds) - ds, [dw]])
    iterations = 0
    if not np.any(rhs):
        r = np.zeros_like(rhs)
    elif method == "lsqr":
        MT = spla.aslinearoperator(residual.operator().adjoint())
        out = spla.lsqr(
            MT, rhs, damp=tikhonov if regularised else 0.0, atol=tol, btol=tol, iter_lim=10 * rhs.size
        )
        r, iterations = out[0], int(out[2])
    else:
        MT = residual.sparse().T.toarray()
        if regularised:
            MT = np.vstack([MT, tikhonov * np.eye(MT.shape[0])])
            rhs = np.concatenate([rhs, np.zeros(MT.shape[1])])
        r = np.linalg.lstsq(MT, rhs, rcond=1e-8)[0]  # M z = 0: drop the null direction
    n, m = x.size, y.size
    pi_x, pi_y, pi_w = x, y, 1.0
    A = sp.csc_matrix(program.A)
    rows = A.indices
    cols = np.repeat(np.arange(A.shape[1]), np.diff(A.indptr))
    dA = pi_x[cols] * r[n + rows] - pi_y[rows] * r[cols]
    db = pi_y * r[-1] - pi_w * r[n : n + m]
    dq = pi_x * r[-1] - pi_w * r[:n]
    return DataGradient(dA, db, dq, iterations, regularised)


def structured_derivative(
    program: BlockConicProgram,
    solution: ConicSolution,
    dA: np.ndarray,
    db: np.ndarray,
    dq: np.ndarray,
    *,
    tol: float = 1e-10,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The derivative of ``(A, b, q) ↦ (x, y, s)`` applied to a perturbation (``dA`` on ``A``'s pattern).

    The forward counterpart of :func:`structured_adjoint` (same ``M``, solved with LSQR): ``M dz = dQ Π(z)``,
    then ``dx = du − x dw``, ``dy = DΠ(dv) − y dw``, ``ds = DΠ(dv) − dv − s dw``, all negated. Used to check
    the adjoint (``⟨J v, w⟩ = ⟨v, Jᵀ w⟩``) and for directional derivatives.
    """
    x, y, s = solution.x, solution.y, solution.s
    A = sp.csc_matrix(program.A)
    if np.shape(dA) != A.data.shape:
        raise ValueError(f"dA must have shape {A.data.shape} (values on A's pattern); got {np.shape(dA)}")
    m, n = A.shape
    dA_matrix = sp.csc_matrix((np.asarray(dA, dtype=float), A.indices, A.indptr), shape=A.shape)
    db_col, dq_col = np.asarray(db, dtype=float)[:, None], np.asarray(dq, dtype=float)[:, None]
    dQ = sp.bmat([[None, dA_matrix.T, dq_col], [-dA_matrix, None, db_col], [-dq_col.T, -db_col.T, None]])
    rhs = sp.csr_matrix(dQ) @ np.concatenate([x, y, [1.0]])
    residual = ResidualMap(program, solution)
    dz = spla.lsqr(residual.operator(), rhs, atol=tol, btol=tol, iter_lim=10 * rhs.size)[0]
    du, dv, dw = dz[:n], dz[n : n + m], dz[-1]
    projected = residual.cone.apply(dv)
    return -(du - x * dw), -(projected - y * dw), -(projected - dv - s * dw)
