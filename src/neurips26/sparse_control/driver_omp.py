"""Driver-OMP: choose the driver nodes by orthogonal matching pursuit of the desired displacement, with
the preservation readouts as extra rows that must stay at zero.

With the dictionary ``D = [G_T; √λ_P G_P]`` and the signal ``b = [Δ; 0]``: start from ``r = b`` and no
nodes; repeatedly add the node whose normalised column ``D_j / ‖D_j‖`` is most correlated with the residual,
refit the amplitudes of all chosen nodes by ridge least squares ``a_C = argmin ‖D_C a − b‖² + λ_E ‖a‖²``
(inside the energy ball when a bound is given) and update ``r = b − D_C a_C``; stop at ``k`` nodes or when
``‖r‖ ≤ η ‖b‖``. Options: at most one node per site, and a re-linearisation around the current control
every few picks (the caller's ``relinearise`` returns the new ``G_T``, ``Δ`` and ``G_P`` for a full refit).

With an energy bound ``E`` (our change, chapter 12's "What we changed and why"): OMP's pick is the node
that most decreases ``‖r‖`` in one step; plain OMP measures that decrease with a free amplitude (hence the
normalised columns), which favours tiny columns that could only help at amplitudes far outside the bound.
We measure it with ``|a_j| ≤ E`` (:func:`~neurips26.sparse_control.controllability.capped_gain`: the same
pick as plain OMP whenever the free amplitude is within the bound), and refit inside the ball
(:func:`~neurips26.sparse_control.controllability.ball_least_squares`) instead of scaling onto it at the
end.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from neurips26.sparse_control.controllability import ball_least_squares, capped_gain, check_system
from neurips26.validation import check_float, check_int

Relinearise = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray | None]]


@dataclass(frozen=True)
class Control:
    """A control: the chosen ``nodes`` (indices), their shared ``amplitudes``, the relative residual of the
    linear fit ``‖r‖ / ‖b‖`` and the selector's name."""

    nodes: np.ndarray
    amplitudes: np.ndarray
    residual: float
    method: str

    def __len__(self) -> int:
        return len(self.nodes)

    def scaled(self, alpha: float) -> Control:
        """The same nodes at ``alpha`` times the amplitudes."""
        return Control(self.nodes, alpha * self.amplitudes, self.residual, self.method)


def dictionary(G_T: np.ndarray, delta: np.ndarray, G_P: np.ndarray | None, lam_p: float) -> tuple:
    """``D = [G_T; √λ_P G_P]`` and ``b = [Δ; 0]``."""
    G_T, delta = check_system(G_T, delta)
    if G_P is None or lam_p == 0 or not len(G_P):
        return G_T, delta
    G_P = np.asarray(G_P, dtype=float)
    if G_P.ndim != 2 or G_P.shape[1] != G_T.shape[1]:
        raise ValueError(f"G_P must be (M, {G_T.shape[1]}); got {G_P.shape}")
    return np.vstack([G_T, np.sqrt(lam_p) * G_P]), np.concatenate([delta, np.zeros(len(G_P))])


def driver_omp(
    G_T: np.ndarray,
    delta: np.ndarray,
    G_P: np.ndarray | None = None,
    *,
    k: int,
    lam_p: float = 1.0,
    lam_e: float = 1e-3,
    eta: float = 0.1,
    energy: float | None = None,
    site_of: np.ndarray | None = None,
    relinearise: Relinearise | None = None,
    every: int = 2,
) -> Control:
    """Driver-OMP (module doc). ``site_of`` ``(K,)``, when given, allows at most one node per site."""
    k = check_int("k", k, minimum=1)
    lam_p = check_float("lam_p", lam_p, minimum=0.0)
    lam_e = check_float("lam_e", lam_e, minimum=0.0)
    eta = check_float("eta", eta, minimum=0.0)
    every = check_int("every", every, minimum=1)
    if energy is not None:
        check_float("energy", energy, minimum=0.0, strict_min=True)
    D, b = dictionary(G_T, delta, G_P, lam_p)
    n_nodes = D.shape[1]
    if site_of is not None and np.asarray(site_of).shape != (n_nodes,):
        raise ValueError(f"site_of must have shape ({n_nodes},)")
    chosen: list[int] = []
    a = np.zeros(0)
    r = b.copy()
    goal = eta * np.linalg.norm(b)

    def fit(D_C: np.ndarray, b: np.ndarray) -> np.ndarray:
        return ball_least_squares(D_C, b, energy, lam_e=lam_e)

    while len(chosen) < min(k, n_nodes) and np.linalg.norm(r) > goal:
        score = capped_gain(D, r, energy)
        score[chosen] = -1.0
        if site_of is not None and chosen:
            score[np.isin(site_of, np.asarray(site_of)[chosen])] = -1.0
        j = int(np.argmax(score))
        if score[j] <= 0:
            break
        chosen.append(j)
        a = fit(D[:, chosen], b)
        if relinearise is not None and len(chosen) % every == 0 and len(chosen) < k:
            G_T, delta, G_P = relinearise(np.array(chosen), a)
            D, b = dictionary(G_T, delta, G_P, lam_p)
            a = fit(D[:, chosen], b)
        r = b - D[:, chosen] @ a
    residual = float(np.linalg.norm(r) / max(np.linalg.norm(b), 1e-300))
    return Control(np.array(chosen, dtype=int), a, residual, "driver-omp")
