"""Imagining the future: integrate the generator's flow from noise to latents, re-injecting the present.

A decision starts from ``[reference latents | Gaussian noise for the future slots]`` at level ``t = 1`` and
walks a decreasing grid to ``t = 0``. After every step the reference slots are overwritten with the clean
reference latents (*reference injection*, as the released inference code does), so the present is never
re-imagined and leaves the sampler bit for bit as it came in.

Two update rules:

- **Euler** (:func:`neurips26.flow.euler_sample`): ``z ← z + (t' − t) u_θ(z, t)`` on a uniform grid; the
  teacher runs it with 50 steps, the distilled student with 4.
- **Second-order multistep, x₀-predicting** (our reading of the released UniPC scheduler's predictor,
  without its corrector): with ``x̂₀ = z − t u_θ(z, t)`` and, on the path ``z_t = (1 − t) x₀ + t ε``,
  ``λ = log((1 − t)/t)``, the step from ``t`` to ``t'`` is ``z ← (t'/t) z + (1 − t')(1 − e^{−h}) D`` with
  ``h = λ' − λ`` and ``D = x̂₀`` on the first step, ``D = (1 + 1/(2r)) x̂₀ − (1/(2r)) x̂₀^{prev}`` after
  it (``r = h_prev / h``; DPM-Solver++(2M)). From ``t = 1`` (where ``h = ∞``) it is exactly the Euler
  step, and so is the step after it (no finite ``r`` yet: on the 4-step grid, second order acts on the
  last two steps); to ``t' = 0`` it returns ``D``. The released 4-step grid is
  ``σ = 1, 0.75, 0.5, 0.25, 0`` (:data:`RELEASED_GRID`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from neurips26.flow import check_grid, euler_sample, uniform_grid
from neurips26.sparsevideonav.timeline import REFERENCE_CHUNKS
from neurips26.validation import check_choice

#: The noise levels of the released 4-step scheduler (flow-matching UniPC, shift 1).
RELEASED_GRID: tuple[float, ...] = (1.0, 0.75, 0.5, 0.25, 0.0)
METHODS: tuple[str, ...] = ("euler", "multistep")

#: ``velocity(z, t) -> u``: z (B, S, 2, 16), t (B,).
Velocity = Callable[[Tensor, Tensor], Tensor]


def initial_state(reference: Tensor, future_slots: int, *, generator: torch.Generator) -> Tensor:
    """``[reference | ε]``: (B, 2, 2, 16) reference latents and seeded noise for ``future_slots`` slots."""
    if not isinstance(reference, Tensor) or reference.dim() != 4 or reference.shape[1] != REFERENCE_CHUNKS:
        raise ValueError(
            f"reference must have shape (B, {REFERENCE_CHUNKS}, 2, 16); "
            f"got {tuple(getattr(reference, 'shape', ()))}"
        )
    b, _, k, d = reference.shape
    noise = torch.randn(b, future_slots, k, d, generator=generator, dtype=reference.dtype)
    noise = noise.to(reference.device)
    return torch.cat([reference, noise], dim=1)


def inject(z: Tensor, reference: Tensor) -> Tensor:
    """``z`` with its reference slots replaced by the clean ``reference`` (bit for bit)."""
    return torch.cat([reference, z[:, REFERENCE_CHUNKS:]], dim=1)


def sample(
    velocity: Velocity,
    reference: Tensor,
    future_slots: int,
    *,
    steps: int | None = None,
    grid: Sequence[float] | None = None,
    method: str = "euler",
    generator: torch.Generator | None = None,
    noise: Tensor | None = None,
) -> Tensor:
    """Imagine the future: (B, 2 + future_slots, 2, 16) latents at ``t = 0``, reference slots = ``reference``.

    ``grid`` (decreasing, 1 → 0) or ``steps`` (a uniform grid); ``method`` ``"euler"`` or ``"multistep"``
    (module doc). The initial state is ``noise`` when given (a full clip whose reference slots are
    ignored), else drawn from ``generator``.
    """
    method = check_choice("method", method, METHODS)
    if grid is None:
        if steps is None:
            raise ValueError("steps or grid must be given")
        grid = uniform_grid(steps)
    times = check_grid(grid)
    if times[0] != 1.0 or times[-1] != 0.0 or any(b >= a for a, b in zip(times, times[1:], strict=False)):
        raise ValueError(f"grid must fall from 1 to 0; got {times}")
    if noise is None:
        if generator is None:
            raise ValueError("generator or noise must be given")
        z = initial_state(reference, future_slots, generator=generator)
    else:
        if tuple(noise.shape) != (reference.shape[0], REFERENCE_CHUNKS + future_slots, *reference.shape[2:]):
            raise ValueError(f"noise must have shape (B, {REFERENCE_CHUNKS + future_slots}, 2, 16)")
        z = inject(noise, reference)
    if method == "euler":
        return euler_sample(velocity, z, times, project=lambda state, _t: inject(state, reference))
    return _multistep(velocity, z, times, reference)


def _lam(t: float) -> float:
    """λ = log(α/σ) = log((1 − t)/t) on the linear path (−∞ at t = 1, +∞ at t = 0)."""
    if t >= 1.0:
        return -math.inf
    if t <= 0.0:
        return math.inf
    return math.log((1.0 - t) / t)


@torch.no_grad()
def _multistep(velocity: Velocity, z: Tensor, times: list[float], reference: Tensor) -> Tensor:
    previous: Tensor | None = None
    h_prev = math.nan
    for t, t_next in zip(times, times[1:], strict=False):
        level = torch.full((z.shape[0],), t, dtype=z.dtype, device=z.device)
        x0 = z - t * velocity(z, level)  # x̂₀ = z − t u
        h = _lam(t_next) - _lam(t)
        if previous is None or not math.isfinite(h) or not math.isfinite(h_prev):
            d = x0  # first order (always from t = 1, where λ = −∞)
        else:
            r = h_prev / h
            d = (1 + 1 / (2 * r)) * x0 - (1 / (2 * r)) * previous
        if t_next <= 0.0:
            z = d
        else:
            decay = 1.0 if not math.isfinite(h) else -math.expm1(-h)  # 1 − e^{−h}
            z = (t_next / t) * z + (1 - t_next) * decay * d
        z = inject(z, reference)
        previous, h_prev = x0, h
    return z


__all__ = ["METHODS", "RELEASED_GRID", "Velocity", "initial_state", "inject", "sample"]
