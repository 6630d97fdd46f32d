"""Time grids for sampling and time distributions for training, on the path ``z_t = (1 − t) x₀ + t ε``.

Sampling walks a grid from noise (``t = 1``) to data (``t = 0``):

- :func:`uniform_grid`: ``t_n = 1 − n/N``, ``n = 0..N``;
- :func:`shifted_grid`: the same grid through the timestep shift of SD3 (Esser et al. 2024, its
  resolution-dependent shift with ``s = √(m/n)`` for ``m`` pixels instead of ``n``) and Wan / Self Forcing
  (a fixed ``s``, e.g. 3 or 5), as diffusers' ``FlowMatchEulerDiscreteScheduler`` computes it
  (``shift * σ / (1 + (shift − 1) σ)``):

      t' = s t / (1 + (s − 1) t) = s t / (s t + 1 − t).

  It fixes 0 and 1, is increasing in ``t``, and for ``s > 1`` spends more of the grid near the noise end
  (``t' ≥ t``), where large images and videos need it; ``s = 1`` is the identity. We evaluate the second
  form, which keeps ``t' ≤ 1`` exactly in floating point.

Training draws one level per sample (or per frame) with :func:`sample_times`: uniform on ``[0, 1]`` or
logit-normal, ``t = sigmoid(m + s·u)``, ``u ~ N(0, 1)`` (SD3's default ``m = 0, s = 1``), which weights the
middle of the path. A shifted training distribution is ``shift_time(sample_times(...), s)``.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import torch
from torch import Tensor

from neurips26.validation import check_choice, check_float, check_int

#: The training-time distributions of :func:`sample_times`.
DISTRIBUTIONS = ("uniform", "logit-normal")


def uniform_grid(steps: int) -> tuple[float, ...]:
    """``steps + 1`` times ``1 = t₀ > t₁ > … > t_N = 0``, evenly spaced (``t_n = (N − n)/N``, exact ends)."""
    steps = check_int("steps", steps, minimum=1)
    return tuple((steps - n) / steps for n in range(steps + 1))


def shift_time(t: float | Tensor, shift: float) -> float | Tensor:
    """The timestep shift ``t' = s t / (1 + (s − 1) t)`` of a number or a tensor of times in ``[0, 1]``.

    ``shift`` must be > 0; ``shift = 1`` returns ``t`` unchanged (a copy for a tensor). See the module
    docstring for the sources of the formula.
    """
    s = check_float("shift", shift, minimum=0.0, strict_min=True)
    if isinstance(t, Tensor):
        if not t.is_floating_point() or t.is_complex():
            raise TypeError(f"t must be a floating tensor; got dtype {t.dtype}")
        if t.numel() and not bool(((t >= 0) & (t <= 1)).all()):
            raise ValueError("t must lie in [0, 1]")
        return t.clone() if s == 1.0 else s * t / (s * t + (1 - t))
    if isinstance(t, bool) or not isinstance(t, numbers.Real):
        raise TypeError(f"t must be a float in [0, 1] or a tensor; got {type(t).__name__}")
    t = check_float("t", t, minimum=0.0, maximum=1.0)
    return t if s == 1.0 else s * t / (s * t + (1.0 - t))


def shifted_grid(steps: int, shift: float) -> tuple[float, ...]:
    """:func:`uniform_grid` through :func:`shift_time`: 1 to 0 in ``steps`` steps, denser near 1 if s > 1."""
    grid = uniform_grid(steps)
    check_float("shift", shift, minimum=0.0, strict_min=True)
    return check_grid(tuple(shift_time(t, shift) for t in grid))


def check_grid(grid: object, name: str = "grid") -> tuple[float, ...]:
    """A sampling grid: ≥ 2 times in ``[0, 1]``, strictly monotone (decreasing samples, increasing inverts).

    Accepts a sequence of numbers or a 1-D floating tensor; returns a tuple of floats. Errors name ``name``.
    """
    if isinstance(grid, Tensor):
        if grid.ndim != 1 or not grid.is_floating_point():
            raise ValueError(f"{name} must be a 1-D floating tensor; got {tuple(grid.shape)}, {grid.dtype}")
        grid = grid.tolist()
    if isinstance(grid, str | bytes) or not isinstance(grid, Sequence):
        raise TypeError(f"{name} must be a sequence of times or a 1-D tensor; got {type(grid).__name__}")
    if len(grid) < 2:
        raise ValueError(f"{name} must hold at least 2 times; got {len(grid)}")
    times = tuple(check_float(f"{name}[{i}]", t, minimum=0.0, maximum=1.0) for i, t in enumerate(grid))
    steps = [b - a for a, b in zip(times, times[1:], strict=False)]
    if not (all(d < 0 for d in steps) or all(d > 0 for d in steps)):
        raise ValueError(f"{name} must be strictly monotone (decreasing to sample); got {times}")
    return times


def sample_times(
    batch: int | tuple[int, ...],
    generator: torch.Generator,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
    distribution: str = "uniform",
    logit_mean: float = 0.0,
    logit_std: float = 1.0,
) -> Tensor:
    """Training levels of shape ``(batch,)`` (or ``batch`` itself, e.g. ``(B, F)`` for per-frame levels).

    ``"uniform"``: ``t ~ U[0, 1]``; ``"logit-normal"``: ``t = sigmoid(logit_mean + logit_std·u)``,
    ``u ~ N(0, 1)``. Drawn in float64 on the generator's device (so a seed gives the same levels whatever
    ``device`` and ``dtype`` ask for), then moved to ``device`` (default: the generator's) and ``dtype``.
    """
    shape = (batch,) if not isinstance(batch, tuple) else batch
    if not shape:
        raise ValueError("batch must be a positive int or a non-empty tuple of them; got ()")
    shape = tuple(check_int("batch", b, minimum=1) for b in shape)
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator; got {type(generator).__name__}")
    check_choice("distribution", distribution, DISTRIBUTIONS)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating torch.dtype; got {dtype!r}")
    mean = check_float("logit_mean", logit_mean)
    std = check_float("logit_std", logit_std, minimum=0.0, strict_min=True)
    where = generator.device
    if distribution == "uniform":
        t = torch.rand(shape, generator=generator, device=where, dtype=torch.float64)
    else:
        u = torch.randn(shape, generator=generator, device=where, dtype=torch.float64)
        t = torch.sigmoid(mean + std * u)
    return t.to(device=where if device is None else device, dtype=dtype)
