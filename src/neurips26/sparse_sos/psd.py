"""The projection onto the PSD cone and its derivative, one small block at a time.

``Π(X) = U diag(λ⁺) Uᵀ`` for ``X = U diag(λ) Uᵀ``, and its directional derivative

    DΠ(X)[H] = U (Ω ∘ (Uᵀ H U)) Uᵀ,   Ω_ij = (λ_i⁺ − λ_j⁺) / (λ_i − λ_j),   Ω_ij = 1[λ_i > 0] when λ_i = λ_j.

``DΠ(X)`` is self-adjoint, so the same map serves the forward and the adjoint derivative. In ``svec``
coordinates (:mod:`~neurips26.sparse_sos.svec`) it acts on vectors of length ``s(s+1)/2``.
"""

from __future__ import annotations

import numpy as np

from neurips26.sparse_sos.svec import SQRT2, smat, svec, triangle_indices


def check_symmetric(name: str, matrix: object) -> np.ndarray:
    """A finite, square, symmetric float matrix; ``ValueError``/``TypeError`` naming ``name`` otherwise."""
    if not isinstance(matrix, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray; got {type(matrix).__name__}")
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"{name} must be a square matrix; got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"{name} must be finite")
    scale = max(1.0, float(np.abs(matrix).max(initial=0.0)))
    if not np.allclose(matrix, matrix.T, atol=1e-10 * scale, rtol=0.0):
        raise ValueError(f"{name} must be symmetric (the PSD projection is defined on symmetric matrices)")
    return 0.5 * (matrix + matrix.T)


def project_psd(matrix: np.ndarray) -> np.ndarray:
    """``Π(X)``: the nearest PSD matrix in the Frobenius norm (negative eigenvalues set to zero)."""
    matrix = check_symmetric("psd", matrix)
    lam, U = np.linalg.eigh(matrix)
    return (U * np.maximum(lam, 0.0)) @ U.T


def omega(lam: np.ndarray, tol: float = 1e-12) -> np.ndarray:
    """The divided differences ``Ω_ij = (λ_i⁺ − λ_j⁺)/(λ_i − λ_j)`` (``1[λ_i > 0]`` on ties)."""
    plus = np.maximum(lam, 0.0)
    diff = lam[:, None] - lam[None, :]
    tie = np.abs(diff) <= tol * max(1.0, float(np.abs(lam).max(initial=0.0)))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (plus[:, None] - plus[None, :]) / np.where(tie, 1.0, diff)
    positive = (lam[:, None] > 0) & (lam[None, :] > 0)
    return np.where(tie, positive.astype(float), out)


class PSDProjectionDerivative:
    """``H ↦ DΠ(X)[H]`` at one symmetric ``X``: one eigendecomposition, then four ``s × s`` products."""

    def __init__(self, matrix: np.ndarray) -> None:
        matrix = check_symmetric("psd", matrix)
        self.size = matrix.shape[0]
        self.eigenvalues, self.U = np.linalg.eigh(matrix)
        self.omega = omega(self.eigenvalues)

    def matrix_apply(self, direction: np.ndarray) -> np.ndarray:
        """``DΠ(X)[H]`` for a symmetric ``H``."""
        inner = self.U.T @ direction @ self.U
        return self.U @ (self.omega * inner) @ self.U.T

    def apply(self, vector: np.ndarray) -> np.ndarray:
        """``DΠ(X)`` in ``svec`` coordinates (self-adjoint: also the transpose)."""
        return svec(self.matrix_apply(smat(vector)))

    def dense(self) -> np.ndarray:
        """The ``t × t`` matrix of :meth:`apply` (``t = s(s+1)/2``), built column by column in one batch."""
        t = self.size * (self.size + 1) // 2
        basis = np.stack([smat(e) for e in np.eye(t)])  # (t, s, s)
        inner = np.einsum("ai,kab,bj->kij", self.U, basis, self.U, optimize=True)
        images = np.einsum("ia,kab,jb->kij", self.U, self.omega * inner, self.U, optimize=True)
        return np.stack([svec(0.5 * (m + m.T)) for m in images], axis=1)

    def strictly_complementary(self, tol: float = 1e-7) -> bool:
        """No eigenvalue of ``X = y − s`` near zero: ``s`` and ``y`` together span the space."""
        scale = max(1.0, float(np.abs(self.eigenvalues).max(initial=0.0)))
        return bool(np.all(np.abs(self.eigenvalues) > tol * scale))


class BatchedPSDDerivative:
    """:class:`PSDProjectionDerivative` for ``g`` blocks of one size at once (batched ``s × s`` products).

    A chain's certificate has dozens of equal blocks; one batched product per LSQR step instead of a Python
    loop over blocks keeps the structured backward's wall clock proportional to its flops.
    """

    def __init__(self, matrices: np.ndarray) -> None:
        matrices = np.asarray(matrices, dtype=float)
        if matrices.ndim != 3 or matrices.shape[1] != matrices.shape[2]:
            raise ValueError(f"matrices must have shape (g, s, s); got {matrices.shape}")
        for k, m in enumerate(matrices):
            check_symmetric(f"psd[{k}]", m)
        self.size = matrices.shape[1]
        self.eigenvalues, self.U = np.linalg.eigh(0.5 * (matrices + matrices.transpose(0, 2, 1)))
        self.omega = np.stack([omega(lam) for lam in self.eigenvalues])
        self.rows, self.cols = triangle_indices(self.size)
        self.scale = np.where(self.rows == self.cols, 1.0, SQRT2)

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        """``DΠ(X_k)[smat(v_k)]`` in svec coordinates for a ``(g, t)`` batch of vectors."""
        g, s = self.U.shape[0], self.size
        H = np.zeros((g, s, s))
        half = vectors / self.scale
        H[:, self.rows, self.cols] = half
        H[:, self.cols, self.rows] = half
        Ut = self.U.transpose(0, 2, 1)
        image = self.U @ (self.omega * (Ut @ H @ self.U)) @ Ut
        return image[:, self.rows, self.cols] * self.scale

    def strictly_complementary(self, tol: float = 1e-7) -> bool:
        """No eigenvalue of any block near zero (relative to the block's largest)."""
        scale = np.maximum(1.0, np.abs(self.eigenvalues).max(axis=1, initial=0.0))
        return bool(np.all(np.abs(self.eigenvalues) > tol * scale[:, None]))
