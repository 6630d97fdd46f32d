"""Scaled half-vectorisation of symmetric matrices, in the two solvers' orders.

``svec(Q)`` stacks one triangle of ``Q`` with the off-diagonal entries scaled by ``√2``, so that
``⟨A, Q⟩ = svec(A)ᵀ svec(Q)`` and the PSD cone is self-dual in these coordinates. Clarabel's
``PSDTriangleConeT`` takes the upper triangle column by column — ``(0,0), (0,1), (1,1), (0,2), ...`` — and
SCS takes the lower triangle column by column — ``(0,0), (1,0), (2,0), ..., (1,1), ...``. The library
works in Clarabel's order (:func:`svec`) and permutes for SCS (:func:`clarabel_to_scs`).
"""

from __future__ import annotations

import math

import numpy as np

from neurips26.validation import check_int

SQRT2 = math.sqrt(2.0)


def svec_dim(s: int) -> int:
    """``s(s+1)/2``, the length of ``svec`` of an ``s × s`` matrix."""
    s = check_int("s", s, minimum=1)
    return s * (s + 1) // 2


def triangle_indices(s: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of each ``svec`` entry in Clarabel's order (upper triangle, column by column)."""
    s = check_int("s", s, minimum=1)
    rows = [i for j in range(s) for i in range(j + 1)]
    cols = [j for j in range(s) for i in range(j + 1)]
    return np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)


def svec_dim_inverse(t: int) -> int:
    """The ``s`` with ``s(s+1)/2 = t``; ``ValueError`` naming ``t`` when there is none."""
    s = int(round((math.sqrt(8 * t + 1) - 1) / 2))
    if s < 1 or s * (s + 1) // 2 != t:
        raise ValueError(f"t must be a triangular number s(s+1)/2; got {t}")
    return s


def svec(matrix: np.ndarray) -> np.ndarray:
    """``svec`` of a symmetric matrix (Clarabel's order); ``ValueError`` naming ``matrix`` if asymmetric."""
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"matrix must be square; got shape {matrix.shape}")
    if not np.allclose(matrix, matrix.T, atol=1e-12 * max(1.0, float(np.abs(matrix).max(initial=0.0)))):
        raise ValueError("matrix must be symmetric")
    rows, cols = triangle_indices(matrix.shape[0])
    return np.where(rows == cols, 1.0, SQRT2) * matrix[rows, cols]


def smat(vector: np.ndarray) -> np.ndarray:
    """The symmetric matrix whose :func:`svec` is ``vector`` (inverse of :func:`svec`)."""
    vector = np.asarray(vector, dtype=float)
    if vector.ndim != 1:
        raise ValueError(f"vector must be 1-dimensional; got shape {vector.shape}")
    s = svec_dim_inverse(vector.size)
    rows, cols = triangle_indices(s)
    values = np.where(rows == cols, 1.0, 1.0 / SQRT2) * vector
    out = np.zeros((s, s))
    out[rows, cols] = values
    out[cols, rows] = values
    return out


def clarabel_to_scs(s: int) -> np.ndarray:
    """The permutation ``p`` with ``svec_scs = svec_clarabel[p]`` for an ``s × s`` block.

    SCS's lower triangle by columns is the upper triangle by rows, so entry ``(i, j)``, ``i ≤ j``, of the
    upper triangle is found at row-major position in the SCS vector.
    """
    rows, cols = triangle_indices(s)
    position = {(int(i), int(j)): k for k, (i, j) in enumerate(zip(rows, cols, strict=True))}
    # SCS walks the lower triangle column by column: (j, i) for i in range(s), j in range(i, s); as an upper
    # entry that is (i, j)
    return np.array([position[(i, j)] for i in range(s) for j in range(i, s)], dtype=np.int64)
