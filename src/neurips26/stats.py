"""Small statistics the chapters share: power-law fits on log-log axes."""

from __future__ import annotations

import numpy as np


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
