"""Target controllability of a static linear map ``y = G a`` (the linearised model): can the chosen nodes
move the targets by ``Δ``, at what energy, and what is the best control under preservation and energy
limits.

- The rank test: ``G`` ``(n, k)`` can reach every displacement of its ``n`` targets exactly iff it has full
  row rank ``n`` (the Kalman-style condition restricted to the targets).
- The minimum-energy control ``a* = G⁺ Δ`` (exact when ``Δ`` lies in the range of ``G``; the least-squares
  control of least norm otherwise), with energy ``‖a*‖² = Δᵀ W⁺ Δ``, ``W = G Gᵀ`` the controllability
  Gramian of the static map.
- With preservation and energy: ``min_a ‖G_T a − Δ‖² + λ_P ‖G_P a‖² + λ_E ‖a‖²``, then the projection onto
  the energy ball ``‖a‖₂ ≤ E``.
- Least squares inside the energy ball (:func:`ball_least_squares`, the trust-region subproblem) and the
  largest decrease of a residual that one node can make within the bound (:func:`capped_gain`).
"""

from __future__ import annotations

import numpy as np

from neurips26.validation import check_float

RANK_TOL = 1e-9


def _matrix(name: str, value: object) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-d matrix; got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite")
    return arr


def _vector(name: str, value: object, rows: int) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.shape != (rows,):
        raise ValueError(f"{name} must have shape ({rows},); got {arr.shape}")
    return arr


def check_system(G_T: object, delta: object) -> tuple[np.ndarray, np.ndarray]:
    """``G_T`` ``(n, K)`` and ``delta`` ``(n,)`` as float arrays (``ValueError`` naming both otherwise)."""
    G_T = np.asarray(G_T, dtype=float)
    delta = np.asarray(delta, dtype=float)
    if G_T.ndim != 2 or delta.shape != (G_T.shape[0],):
        raise ValueError(f"G_T must be (n, K) and delta (n,); got {G_T.shape} and {delta.shape}")
    return G_T, delta


def is_target_controllable(G: np.ndarray, *, tol: float = RANK_TOL) -> bool:
    """Whether ``G`` has full row rank (every target displacement reachable)."""
    G = _matrix("G", G)
    return int(np.linalg.matrix_rank(G, tol=tol * max(1.0, np.abs(G).max()))) == G.shape[0]


def min_energy_control(G: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """``a* = G⁺ Δ``."""
    G = _matrix("G", G)
    return np.linalg.pinv(G) @ _vector("delta", delta, G.shape[0])


def control_energy(G: np.ndarray, delta: np.ndarray) -> float:
    """``Δᵀ W⁺ Δ`` with the Gramian ``W = G Gᵀ`` (= ``‖G⁺ Δ‖²`` for ``Δ`` in the range of ``G``)."""
    G = _matrix("G", G)
    delta = _vector("delta", delta, G.shape[0])
    return float(delta @ np.linalg.pinv(G @ G.T) @ delta)


def project_energy(a: np.ndarray, energy: float) -> np.ndarray:
    """``a`` scaled onto the ball ``‖a‖₂ ≤ E`` when outside it."""
    energy = check_float("energy", energy, minimum=0.0, strict_min=True)
    norm = float(np.linalg.norm(a))
    return a * (energy / norm) if norm > energy else a


def ball_least_squares(
    A: np.ndarray, b: np.ndarray, energy: float | None, *, lam_e: float = 0.0
) -> np.ndarray:
    """``argmin_a ‖A a − b‖² + λ_E ‖a‖²`` subject to ``‖a‖₂ ≤ E`` (no bound when ``energy`` is None).

    Inside the ball the ridge solution; otherwise the bound is active and the solution is the ridge solution
    whose extra penalty ``μ`` puts it on the sphere (``‖a(μ)‖`` falls monotonically in ``μ``: found by
    bisection on ``log μ``). Unlike scaling the unconstrained solution onto the ball, this keeps the best
    fit the bound allows."""
    A = _matrix("A", A)
    b = _vector("b", b, A.shape[0])
    lam_e = check_float("lam_e", lam_e, minimum=0.0)
    AtA, Atb, eye = A.T @ A, A.T @ b, np.eye(A.shape[1])

    def solve(mu: float) -> np.ndarray:
        return np.linalg.lstsq(AtA + (lam_e + mu) * eye, Atb, rcond=None)[0]

    a = solve(0.0)
    if energy is None:
        return a
    energy = check_float("energy", energy, minimum=0.0, strict_min=True)
    if np.linalg.norm(a) <= energy:
        return a
    lo, hi = 0.0, max(float(np.linalg.norm(Atb)) / energy, 1e-12)  # ‖a(hi)‖ ≤ ‖Aᵀb‖ / hi = E
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if np.linalg.norm(solve(mid)) > energy:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-10 * hi:
            break
    return project_energy(solve(hi), energy)


def capped_gain(D: np.ndarray, r: np.ndarray, energy: float | None) -> np.ndarray:
    """For every column ``D_j``: the largest decrease of ``‖r‖²`` that ``a_j D_j`` makes with ``|a_j| ≤ E``.

    The free optimum ``a_j = ⟨r, D_j⟩ / ‖D_j‖²`` gives ``⟨r, D_j⟩² / ‖D_j‖²`` (the squared normalised
    correlation of plain OMP); clipped to ``±E`` it gives ``2 E |⟨r, D_j⟩| − E² ‖D_j‖²``."""
    D = _matrix("D", D)
    r = _vector("r", r, D.shape[0])
    corr = D.T @ r
    sq = np.einsum("ij,ij->j", D, D)
    free = np.divide(np.abs(corr), sq, out=np.zeros_like(corr), where=sq > 0)
    a = free if energy is None else np.minimum(free, energy)
    return 2 * a * np.abs(corr) - a**2 * sq


def penalised_control(
    G_T: np.ndarray,
    delta: np.ndarray,
    G_P: np.ndarray | None = None,
    *,
    lam_p: float = 1.0,
    lam_e: float = 1e-3,
    energy: float | None = None,
) -> np.ndarray:
    """``argmin_a ‖G_T a − Δ‖² + λ_P ‖G_P a‖² + λ_E ‖a‖²``, projected onto ``‖a‖ ≤ E`` when ``energy`` is
    given."""
    G_T = _matrix("G_T", G_T)
    delta = _vector("delta", delta, G_T.shape[0])
    lam_p = check_float("lam_p", lam_p, minimum=0.0)
    lam_e = check_float("lam_e", lam_e, minimum=0.0)
    k = G_T.shape[1]
    A = G_T.T @ G_T + lam_e * np.eye(k)
    if G_P is not None and len(G_P):
        G_P = _matrix("G_P", G_P)
        if G_P.shape[1] != k:
            raise ValueError(f"G_P must have {k} columns like G_T; got {G_P.shape[1]}")
        A = A + lam_p * G_P.T @ G_P
    a = np.linalg.lstsq(A, G_T.T @ delta, rcond=None)[0]
    return a if energy is None else project_energy(a, energy)


def constrained_control(
    G_T: np.ndarray,
    delta: np.ndarray,
    G_P: np.ndarray | None,
    *,
    eta: float = 0.1,
    energy: float,
) -> tuple[np.ndarray, bool]:
    """The least off-target control that reaches the target: ``argmin ‖G_P a‖²`` subject to
    ``‖G_T a − Δ‖ ≤ η ‖Δ‖`` and ``‖a‖ ≤ E`` (a second-order cone program, solved by Clarabel through
    cvxpy). When no such ``a`` exists, the control of least target residual within the energy ball, and
    ``False``."""
    import cvxpy as cp  # heavy to import, and only this function needs it

    G_T = _matrix("G_T", G_T)
    delta = _vector("delta", delta, G_T.shape[0])
    eta = check_float("eta", eta, minimum=0.0)
    energy = check_float("energy", energy, minimum=0.0, strict_min=True)
    a = cp.Variable(G_T.shape[1])
    ball = cp.norm(a, 2) <= energy
    target = cp.norm(G_T @ a - delta, 2) <= eta * float(np.linalg.norm(delta))
    off = cp.sum_squares(_matrix("G_P", G_P) @ a) if G_P is not None and len(G_P) else cp.sum_squares(a) * 0
    problem = cp.Problem(cp.Minimize(off), [target, ball])
    problem.solve(solver=cp.CLARABEL)
    if problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) and a.value is not None:
        return np.asarray(a.value, dtype=float), True
    fallback = cp.Problem(cp.Minimize(cp.norm(G_T @ a - delta, 2)), [ball])
    fallback.solve(solver=cp.CLARABEL)
    return np.asarray(a.value, dtype=float), False
