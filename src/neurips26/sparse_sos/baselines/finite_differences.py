"""Central finite differences through re-solves: the gradient a user gets without any backward pass.

``∂f/∂θ_i ≈ (f(θ + h e_i) − f(θ − h e_i)) / (2h)`` costs two solves per parameter. Step rule: the error is
``h² |f'''| / 6`` (truncation) plus ``ε / h`` (each solve returns ``f`` only to its accuracy ``ε``);
the sum is smallest at ``h ≈ (3ε / |f'''|)^{1/3}``. Clarabel at gap 1e-8 gives ``ε ≈ 1e-8``, hence
``h ≈ 2·10⁻³`` for ``|f'''| = O(1)``: the default ``h = 1e-3`` leaves about ``1e-5`` of solver noise and
``1e-7`` of truncation, while ``h = 1e-5`` would leave ``1e-3`` of noise. The rule holds for the optimal
*value*, which an interior-point solver returns to its gap. A loss on the *solution* (moments, a
certificate) sees the solution's accuracy instead, which on a degenerate program is far worse than the gap
(chain quartic ``n = 5``: Clarabel's moments at gap 1e-8 are off by ~6e-5, so ``ε/h ≈ 0.06`` at
``h = 1e-3``): solve such losses to a tighter tolerance, or with a solver whose solution is accurate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from neurips26.validation import check_float

_F64 = torch.float64


@dataclass(frozen=True)
class FiniteDifferenceGradient:
    """The central-difference gradient, the step used and how many evaluations (solves) it took."""

    gradient: torch.Tensor
    step: float
    solves: int


def central_differences(
    f: Callable[[torch.Tensor], float | torch.Tensor], theta: torch.Tensor, *, step: float = 1e-3
) -> FiniteDifferenceGradient:
    """``∇f(θ)`` by central differences (two evaluations of ``f`` per entry of ``θ``; module docstring).

    ``f`` maps a float64 tensor shaped like ``θ`` to a scalar (a float or a 0-d tensor); each call is one
    solve. No gradient flows through the result.
    """
    if not callable(f):
        raise TypeError(f"f must be callable; got {type(f).__name__}")
    if not isinstance(theta, torch.Tensor):
        raise TypeError(f"theta must be a torch.Tensor; got {type(theta).__name__}")
    if not torch.all(torch.isfinite(theta)):
        raise ValueError("theta must be finite")
    step = check_float("step", step, minimum=0.0, strict_min=True)
    base = theta.detach().to(_F64)
    flat = base.reshape(-1)
    gradient = torch.empty_like(flat)
    solves = 0
    with torch.no_grad():
        for i in range(flat.numel()):
            values = []
            for sign in (1.0, -1.0):
                point = flat.clone()
                point[i] += sign * step
                value = f(point.reshape(base.shape))
                if isinstance(value, torch.Tensor):
                    if value.numel() != 1:
                        raise ValueError(f"f must return a scalar; got shape {tuple(value.shape)}")
                    value = float(value)
                values.append(float(value))
                solves += 1
            gradient[i] = (values[0] - values[1]) / (2.0 * step)
    return FiniteDifferenceGradient(gradient.reshape(base.shape), step, solves)
