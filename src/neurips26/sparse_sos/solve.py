"""Solve a :class:`~neurips26.sparse_sos.conic.BlockConicProgram` with the solvers' native APIs.

Clarabel (interior point; gap tolerances 1e-8 by default: accurate duals, the default) or SCS (first order,
``eps`` 1e-6). Calling them directly, not through cvxpy, keeps canonicalisation out of every timing. A
status other than optimal raises :class:`SolverError` naming it.
"""

from __future__ import annotations

import time

import clarabel
import numpy as np
import scipy.sparse as sp
import scs

from neurips26.sparse_sos.conic import BlockConicProgram, ConicSolution
from neurips26.sparse_sos.svec import clarabel_to_scs, svec_dim
from neurips26.validation import check_choice, check_float

SOLVERS: tuple[str, ...] = ("clarabel", "scs")


class SolverError(RuntimeError):
    """The solver did not report an optimal solution."""


def solve(
    program: BlockConicProgram, solver: str = "clarabel", *, tolerance: float | None = None
) -> ConicSolution:
    """Solve ``min qᵀx s.t. Ax + s = b, s ∈ K``; ``tolerance`` defaults to 1e-8 (Clarabel) or 1e-6 (SCS)."""
    if not isinstance(program, BlockConicProgram):
        raise TypeError(f"program must be a BlockConicProgram; got {type(program).__name__}")
    check_choice("solver", solver, SOLVERS)
    if tolerance is not None:
        tolerance = check_float("tolerance", tolerance, minimum=0.0, strict_min=True)
    if solver == "clarabel":
        return _solve_clarabel(program, 1e-8 if tolerance is None else tolerance)
    return _solve_scs(program, 1e-6 if tolerance is None else tolerance)


def _solve_clarabel(program: BlockConicProgram, tolerance: float) -> ConicSolution:
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = tolerance
    settings.tol_gap_rel = tolerance
    settings.tol_feas = min(settings.tol_feas, tolerance)
    cones = []
    if program.zero:
        cones.append(clarabel.ZeroConeT(program.zero))
    if program.nonneg:
        cones.append(clarabel.NonnegativeConeT(program.nonneg))
    cones += [clarabel.PSDTriangleConeT(s) for s in program.psd]
    n = program.shape[1]
    P = sp.csc_matrix((n, n))
    start = time.perf_counter()
    solver = clarabel.DefaultSolver(P, program.q, sp.csc_matrix(program.A), program.b, cones, settings)
    result = solver.solve()
    seconds = time.perf_counter() - start
    status = str(result.status)
    if status != "Solved":
        raise SolverError(f"Clarabel status {status} (wanted Solved)")
    x, y, s = (np.asarray(v, dtype=float) for v in (result.x, result.z, result.s))
    return ConicSolution(x, s, y, float(program.q @ x), "clarabel", status, int(result.iterations), seconds)


def _scs_permutation(program: BlockConicProgram) -> np.ndarray:
    """Row permutation from the library's order (Clarabel svec) to SCS's (lower-triangle svec)."""
    head = np.arange(program.zero + program.nonneg)
    parts = [head]
    for rows, s in zip(program.psd_slices(), program.psd, strict=True):
        parts.append(rows.start + clarabel_to_scs(s))
        assert parts[-1].size == svec_dim(s)
    return np.concatenate(parts)


def _solve_scs(program: BlockConicProgram, tolerance: float) -> ConicSolution:
    perm = _scs_permutation(program)
    A = sp.csc_matrix(program.A)[perm, :]
    b = program.b[perm]
    cone: dict = {}
    if program.zero:
        cone["z"] = program.zero
    if program.nonneg:
        cone["l"] = program.nonneg
    if program.psd:
        cone["s"] = list(program.psd)
    start = time.perf_counter()
    solver = scs.SCS(
        {"A": sp.csc_matrix(A), "b": b, "c": program.q},
        cone,
        eps_abs=tolerance,
        eps_rel=tolerance,
        max_iters=200_000,
        verbose=False,
    )
    result = solver.solve()
    seconds = time.perf_counter() - start
    status = str(result["info"]["status"])
    if status != "solved":
        raise SolverError(f"SCS status {status} (wanted solved)")
    inverse = np.empty_like(perm)
    inverse[perm] = np.arange(perm.size)
    x = np.asarray(result["x"], dtype=float)
    y = np.asarray(result["y"], dtype=float)[inverse]
    s = np.asarray(result["s"], dtype=float)[inverse]
    iterations = int(result["info"]["iter"])
    return ConicSolution(x, s, y, float(program.q @ x), "scs", status, iterations, seconds)
