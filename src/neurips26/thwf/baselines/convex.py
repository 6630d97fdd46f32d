"""Convex lifting (Ahmed, Recht & Romberg 2014, plus an ℓ1 term): the reference for tiny sizes.

    minimise ||Z||_* + μ ||Z||_1   subject to   ||𝒜(Z) - y||_2 <= ε,     Z in C^{K×N},

then ``(h, x) = sqrt(σ1) (u1, v1)`` from the top singular triple of the solution. The lifted
variable has ``K·N`` complex unknowns and the nuclear norm becomes a semidefinite constraint of
size ``K + N``, which is why this baseline is restricted to ``K, N <= 24``. Solved with cvxpy
(Clarabel by default, SCS as an alternative). ``μ = 1/sqrt(s_h s_x)`` in the experiments (both
terms equal at a flat truth) and ``ε = max(noise bound, 1e-8 ||y||)`` are our choices **[ours]**.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from neurips26.thwf.metrics import lifted_error_unchecked
from neurips26.thwf.model import Problem
from neurips26.validation import check_choice, check_float

MAX_SIZE = 24  # largest K or N accepted: the SDP grows like (K+N)² and cvxpy slows down quickly
SOLVERS: tuple[str, ...] = ("CLARABEL", "SCS")


@dataclass(frozen=True)
class ConvexResult:
    """Solution of the convex lifting: factors, the lifted matrix, solver status and wall time.

    ``seconds``: the solver's wall time in this one call, for information; a comparison with another
    method times both side by side (:func:`neurips26.timing.time_interleaved`, as
    :func:`~neurips26.thwf.experiments.convex_comparison` does).
    """

    h: np.ndarray
    x: np.ndarray
    z: np.ndarray
    status: str
    seconds: float
    error: float | None


def convex_lifting(
    problem: Problem,
    *,
    mu: float = 0.0,
    epsilon: float | None = None,
    solver: str = "CLARABEL",
) -> ConvexResult:
    """Solve ``min ||Z||_* + μ||Z||_1 s.t. ||𝒜(Z) - y|| <= ε`` and return its top singular pair.

    ``mu = 0`` is the pure nuclear-norm program of Ahmed–Recht–Romberg. ``epsilon`` defaults to
    ``1e-8 ||y||`` (noiseless data). Raises ``ValueError`` when ``K`` or ``N`` exceeds 24.
    """
    import cvxpy as cp  # imported here: only this baseline needs it

    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a Problem; got {type(problem).__name__}")
    if problem.k > MAX_SIZE or problem.n > MAX_SIZE:
        raise ValueError(
            f"convex_lifting is for tiny problems only: K and N must be <= {MAX_SIZE}; "
            f"got K={problem.k}, N={problem.n}"
        )
    mu = check_float("mu", mu, minimum=0.0)
    check_choice("solver", solver, SOLVERS)
    y_norm = float(np.linalg.norm(problem.y))
    epsilon = 1e-8 * y_norm if epsilon is None else check_float("epsilon", epsilon, minimum=0.0)

    z = cp.Variable((problem.k, problem.n), complex=True)
    # 𝒜(Z)_l = b_l^* Z a_l = Σ_ij B[l,i] Z[i,j] conj(A[l,j])
    measurements = cp.sum(cp.multiply(problem.b @ z, np.conj(problem.a)), axis=1)
    objective = cp.normNuc(z) + (mu * cp.sum(cp.abs(z)) if mu > 0 else 0)
    program = cp.Problem(cp.Minimize(objective), [cp.norm(measurements - problem.y, 2) <= epsilon])
    start = time.perf_counter()
    try:
        program.solve(solver=solver)
    except cp.error.SolverError:
        pass
    seconds = time.perf_counter() - start

    z_value = z.value
    if z_value is None or not np.all(np.isfinite(z_value)):
        z_value = np.zeros((problem.k, problem.n), dtype=complex)
    u, sv, vh = np.linalg.svd(z_value)
    h = np.sqrt(sv[0]) * u[:, 0]
    x = np.sqrt(sv[0]) * np.conj(vh[0])
    error = float(lifted_error_unchecked(h, x, problem.h0, problem.x0)) if problem.has_truth else None
    return ConvexResult(h, x, z_value, str(program.status), seconds, error)
