"""The simplest baseline: the LF prior with the sensor readings pasted at the sensor sites (claim P1).

``x̂ = (1 − M) ⊙ x₁ + M ⊙ y`` (:func:`neurips26.picsb.energy.project`): honours the observations
exactly, costs nothing, but leaves the LF error everywhere else and spikes at the sensors, so its PDE
residual is no better than the LF run's. PICSB has to beat it on rel-L2 (P1) and ‖R‖ (P2).
"""

from __future__ import annotations

from torch import Tensor

from neurips26.picsb.baselines import check_problem
from neurips26.picsb.energy import project


def lf_paste(x1: Tensor, y: Tensor, mask: Tensor) -> Tensor:
    """The LF prior ``x1`` ``(B, T, X)`` with ``y`` pasted where ``mask`` is set: ``M ⊙ x̂ = y`` exactly.

    Deterministic (nothing random, so no seed); a new tensor, the inputs are not modified.
    """
    x1, y, mask = check_problem(x1, y, mask)
    return project(x1, mask, y)
