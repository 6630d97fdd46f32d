"""Baselines that choose nodes from the linearisation: attribution top-k, random-k, the single best node.
(The dense steering vector and activation patching need the model itself; see
:mod:`~neurips26.sparse_control.model_baselines`.)

- **Attribution top-k**: rank nodes once by their first-order effect on the desired displacement,
  ``|⟨G_T[:, j], Δ⟩| / ‖Δ‖``, without orthogonalisation; take the top ``k`` and fit their amplitudes by
  least squares.
- **Random-k**: ``draws`` distinct random node sets with least-squares amplitudes; the draw whose linear
  residual is the median is returned (the typical random set, not the lucky one).
- **Single best node**: the one node whose least-squares fit leaves the smallest residual.
"""

from __future__ import annotations

import numpy as np

from neurips26.sparse_control.controllability import ball_least_squares, capped_gain, check_system
from neurips26.sparse_control.driver_omp import Control
from neurips26.validation import check_int, check_seed

RANDOM_DRAWS = 20


def least_squares_control(
    G_T: np.ndarray, delta: np.ndarray, nodes: np.ndarray, energy: float | None, method: str
) -> Control:
    """The control of ``nodes`` with the least-squares shared amplitudes inside ``‖a‖ ≤ E`` (the fit every
    selector's nodes get, so that selectors differ only in their choice)."""
    A = G_T[:, nodes]
    a = ball_least_squares(A, delta, energy)
    residual = float(np.linalg.norm(A @ a - delta) / np.linalg.norm(delta))
    return Control(np.asarray(nodes, dtype=int), a, residual, method)


def attribution_top_k(G_T: np.ndarray, delta: np.ndarray, *, k: int, energy: float | None = None) -> Control:
    """The ``k`` nodes of largest ``|⟨G_T[:, j], Δ⟩|``, least-squares amplitudes."""
    G_T, delta = check_system(G_T, delta)
    k = check_int("k", k, minimum=1, maximum=G_T.shape[1])
    score = np.abs(G_T.T @ delta) / np.linalg.norm(delta)
    return least_squares_control(G_T, delta, np.argsort(-score, kind="stable")[:k], energy, "attribution")


def random_k(
    G_T: np.ndarray,
    delta: np.ndarray,
    *,
    k: int,
    seed: int,
    draws: int = RANDOM_DRAWS,
    energy: float | None = None,
) -> Control:
    """The median-residual control of ``draws`` distinct random ``k``-node sets."""
    G_T, delta = check_system(G_T, delta)
    k = check_int("k", k, minimum=1, maximum=G_T.shape[1])
    draws = check_int("draws", draws, minimum=1)
    rng = np.random.default_rng(check_seed("seed", seed))
    seen: set[tuple[int, ...]] = set()
    controls = []
    while len(controls) < draws:
        nodes = tuple(sorted(rng.choice(G_T.shape[1], size=k, replace=False).tolist()))
        if nodes in seen:
            continue
        seen.add(nodes)
        controls.append(least_squares_control(G_T, delta, np.array(nodes), energy, "random"))
    order = np.argsort([c.residual for c in controls], kind="stable")
    return controls[order[len(order) // 2]]


def single_best(G_T: np.ndarray, delta: np.ndarray, *, energy: float | None = None) -> Control:
    """The node whose least-squares fit alone (within ``|a| ≤ E``) leaves the smallest residual."""
    G_T, delta = check_system(G_T, delta)
    gain = capped_gain(G_T, delta, energy)
    return least_squares_control(G_T, delta, np.array([int(np.argmax(gain))]), energy, "single best")
