"""How close an estimate is to the truth, modulo the scaling ambiguity (chapter 01, Eq. (9)).

The bilinear model cannot tell ``(h, x)`` from ``(α h, x / ᾱ)`` for any complex ``α ≠ 0``, because
both give the same ``h x^*``. So we measure the *lifted* relative error

    err(h, x) = ||h x^* - h0 x0^*||_F / ||h0 x0^*||_F,

which is invariant to that ambiguity, and exact support recovery of each factor.
"""

from __future__ import annotations

import numpy as np

from neurips26.validation import check_array, check_float

SUCCESS_TOLERANCE = 1e-3  # success means err < 1e-3 on noiseless data (chapter convention)


def lifted_error_unchecked(h: np.ndarray, x: np.ndarray, h0: np.ndarray, x0: np.ndarray) -> np.ndarray:
    """:func:`lifted_error` without argument checks, in ``O(K + N)`` and accurate to ~1e-16.

    Split ``h = c h0 + h⊥`` with ``c = h0^* h / ||h0||²``. Then
    ``h x^* - h0 x0^* = h0 (c̄ x - x0)^* + h⊥ x^*`` and the two terms are Frobenius-orthogonal, so
    ``||h x^* - h0 x0^*||² = ||h0||² ||c̄ x - x0||² + ||h⊥||² ||x||²``. Unlike the expanded form
    ``||h||²||x||² - 2 Re(...) + ||h0||²||x0||²`` nothing cancels, so errors resolve below 1e-8.
    """
    h0_norm2 = np.sum(np.abs(h0) ** 2, axis=-1)
    c = np.sum(np.conj(h0) * h, axis=-1) / h0_norm2
    h_perp = h - c[..., None] * h0
    x_gap = np.conj(c)[..., None] * x - x0
    num2 = h0_norm2 * np.sum(np.abs(x_gap) ** 2, axis=-1) + np.sum(np.abs(h_perp) ** 2, axis=-1) * np.sum(
        np.abs(x) ** 2, axis=-1
    )
    return np.sqrt(num2 / (h0_norm2 * np.sum(np.abs(x0) ** 2, axis=-1)))


def lifted_error(h: np.ndarray, x: np.ndarray, h0: np.ndarray, x0: np.ndarray) -> np.ndarray | float:
    """``||h x^* - h0 x0^*||_F / ||h0 x0^*||_F`` per leading batch index (Eq. (9))."""
    h = check_array("h", h)
    x = check_array("x", x)
    h0 = check_array("h0", h0, shape=h.shape)
    x0 = check_array("x0", x0, shape=x.shape)
    if h.shape[:-1] != x.shape[:-1]:
        raise ValueError(f"h and x must share leading (batch) axes; got {h.shape} and {x.shape}")
    if np.any(np.linalg.norm(h0, axis=-1) * np.linalg.norm(x0, axis=-1) == 0):
        raise ValueError("h0 x0^* must be nonzero")
    out = lifted_error_unchecked(h, x, h0, x0)
    return float(out) if np.ndim(out) == 0 else out


def support(v: np.ndarray) -> np.ndarray:
    """Boolean mask of the nonzero entries of ``v`` (last axis)."""
    return check_array("v", v) != 0


def exact_support(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray | bool:
    """Whether the nonzero patterns of ``estimate`` and ``truth`` coincide (per batch index).

    Either argument may be a vector or a boolean support mask.
    """
    estimate = check_array("estimate", estimate)
    truth = check_array("truth", truth, shape=estimate.shape)
    out = np.all((estimate != 0) == (truth != 0), axis=-1)
    return bool(out) if np.ndim(out) == 0 else out


def success(errors: np.ndarray | float, tolerance: float = SUCCESS_TOLERANCE) -> np.ndarray | bool:
    """``err < tolerance`` (default ``1e-3``); NaN errors (diverged runs) count as failures."""
    tolerance = check_float("tolerance", tolerance, minimum=0.0, strict_min=True)
    errors = np.asarray(errors, dtype=float)
    out = np.nan_to_num(errors, nan=np.inf) < tolerance
    return bool(out) if np.ndim(out) == 0 else out
