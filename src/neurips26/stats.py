"""Small statistics the chapters share: power-law fits on log-log axes, Wilson intervals of a rate.

- :func:`wilson`: the 95 % Wilson score interval of ``s`` successes in ``N`` trials,
  ``(p̂ + z²/2N ± z √(p̂(1−p̂)/N + z²/4N²)) / (1 + z²/N)``, clipped to ``[0, 1]`` (41 of 41 → [0.914, 1]).
"""

from __future__ import annotations

import math

import numpy as np

from neurips26.validation import check_float, check_int


def loglog_fit(x: object, y: object, *, skip_invalid: bool = False) -> tuple[float, float]:
    """Least-squares fit ``log y = slope · log x + intercept``; returns ``(slope, intercept)``.

    A scaling law ``y ∝ x^slope`` (a phase-transition boundary against sparsity, an error against the
    noise level, a cost against the instance size) is a straight line on log-log axes. ``x`` and ``y``
    are 1-D of equal length. With ``skip_invalid`` the points that are not finite and positive are left
    out (a grid cell where a method never succeeded) and too few points left give NaNs; without it such
    a point is a ``ValueError``.
    """
    x_arr, y_arr = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x_arr.shape != y_arr.shape or x_arr.ndim != 1:
        raise ValueError(f"x and y must be 1-D of equal length; got {x_arr.shape}, {y_arr.shape}")
    keep = np.isfinite(x_arr) & np.isfinite(y_arr) & (x_arr > 0) & (y_arr > 0)
    if not skip_invalid and (not keep.all() or keep.sum() < 2):
        raise ValueError("x and y need two or more points, every x and y finite and positive")
    if keep.sum() < 2:
        return float("nan"), float("nan")
    slope, intercept = np.polyfit(np.log(x_arr[keep]), np.log(y_arr[keep]), 1)
    return float(slope), float(intercept)


Z95 = 1.959963984540054


def wilson(successes: int, trials: int, *, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` out of ``trials``, clipped to ``[0, 1]``."""
    trials = check_int("trials", trials, minimum=1)
    successes = check_int("successes", successes, minimum=0, maximum=trials)
    z = check_float("z", z, minimum=0.0, strict_min=True)
    p = successes / trials
    centre = p + z * z / (2 * trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    scale = 1 + z * z / trials
    lo, hi = max(0.0, (centre - half) / scale), min(1.0, (centre + half) / scale)
    # the bounds at p̂ = 0 and p̂ = 1 are exactly 0 and 1 (rounding would leave 1 − 2e-16)
    return (0.0 if successes == 0 else lo), (1.0 if successes == trials else hi)
