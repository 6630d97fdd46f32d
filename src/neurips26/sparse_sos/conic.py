"""A conic program with small PSD blocks: ``min qᵀx  s.t.  Ax + s = b,  s ∈ K``.

``K = {0}^zero × R_+^nonneg × PSD(s_1) × ... × PSD(s_p)``, the PSD blocks in ``svec`` coordinates
(:mod:`~neurips26.sparse_sos.svec`, Clarabel's order). Its dual is ``max -bᵀy  s.t.  Aᵀy + q = 0,
y ∈ K*`` with ``K* = R^zero × R_+^nonneg × PSD(s_1) × ...``. Every SOS program, Shor relaxation and LMI
of the chapter is written in this one form, so one solver call and one backward serve them all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from neurips26.sparse_sos.svec import svec_dim
from neurips26.validation import check_int


@dataclass(frozen=True, eq=False)
class BlockConicProgram:
    """``min qᵀx  s.t.  Ax + s = b,  s ∈ {0}^zero × R_+^nonneg × Π_k PSD(psd[k])`` (rows in that order)."""

    A: sp.csc_matrix
    b: np.ndarray
    q: np.ndarray
    zero: int
    nonneg: int
    psd: tuple[int, ...]

    def __post_init__(self) -> None:
        if not sp.issparse(self.A):
            raise TypeError(f"A must be a scipy.sparse matrix; got {type(self.A).__name__}")
        check_int("zero", self.zero, minimum=0)
        check_int("nonneg", self.nonneg, minimum=0)
        if not isinstance(self.psd, tuple):
            raise TypeError(f"psd must be a tuple of block sizes; got {type(self.psd).__name__}")
        for k, s in enumerate(self.psd):
            check_int(f"psd[{k}]", s, minimum=1)
        m = self.zero + self.nonneg + sum(svec_dim(s) for s in self.psd)
        if self.A.shape[0] != m:
            raise ValueError(f"A must have {m} rows (zero + nonneg + Σ svec dims); got {self.A.shape[0]}")
        if np.shape(self.b) != (m,):
            raise ValueError(f"b must have shape ({m},); got {np.shape(self.b)}")
        if np.shape(self.q) != (self.A.shape[1],):
            raise ValueError(f"q must have shape ({self.A.shape[1]},); got {np.shape(self.q)}")

    @property
    def shape(self) -> tuple[int, int]:
        """``(rows m, variables n)``."""
        return self.A.shape

    def psd_slices(self) -> list[slice]:
        """The rows of each PSD block in ``s`` (and ``y``)."""
        start = self.zero + self.nonneg
        out = []
        for s in self.psd:
            out.append(slice(start, start + svec_dim(s)))
            start += svec_dim(s)
        return out

    def with_data(
        self, b: np.ndarray | None = None, q: np.ndarray | None = None, a_values: np.ndarray | None = None
    ) -> BlockConicProgram:
        """The same structure with new ``b``, ``q`` or values of ``A``'s stored entries (same pattern)."""
        A = self.A
        if a_values is not None:
            a_values = np.asarray(a_values, dtype=float)
            if a_values.shape != self.A.data.shape:
                raise ValueError(f"a_values must have shape {self.A.data.shape}; got {a_values.shape}")
            A = sp.csc_matrix((a_values, self.A.indices, self.A.indptr), shape=self.A.shape)
        return BlockConicProgram(
            A,
            self.b if b is None else np.asarray(b, dtype=float),
            self.q if q is None else np.asarray(q, dtype=float),
            self.zero,
            self.nonneg,
            self.psd,
        )


@dataclass(frozen=True, eq=False)
class ConicSolution:
    """A primal-dual solution: ``x``, slack ``s``, dual ``y``; ``value = qᵀx``; the solver and its status."""

    x: np.ndarray
    s: np.ndarray
    y: np.ndarray
    value: float
    solver: str
    status: str
    iterations: int
    seconds: float
