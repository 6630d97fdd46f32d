"""Thresholding operators of ThWF (chapter 01, Eqs. (6)–(7)).

* hard top-``s``: keep the ``s`` largest-modulus entries (the default, known sparsity **[ours]**);
* complex soft thresholding ``𝒮_τ(z) = z/|z| · max(|z| - τ, 0)`` with the data-driven level of
  :func:`adaptive_soft_levels` (Cai–Li–Ma style; the exact level is our reconstruction **[ours]**).

All operators act along the last axis and accept leading batch axes; the sparsity ``s`` (or the
level ``τ``) may differ between batch entries.
"""

from __future__ import annotations

import numpy as np

from neurips26.thwf.model import apply_b
from neurips26.validation import check_array, check_float, check_int


def _check_sparsity(s: object, leading_shape: tuple[int, ...], length: int) -> np.ndarray | int:
    """``s`` as an int in [0, length] or an integer array broadcastable to ``leading_shape``."""
    if isinstance(s, np.ndarray):
        if s.dtype.kind not in "iu":
            raise TypeError(f"s must hold integers; got dtype {s.dtype}")
        try:
            np.broadcast_shapes(s.shape, leading_shape)
        except ValueError:
            raise ValueError(
                f"s of shape {s.shape} does not broadcast to the batch shape {leading_shape}"
            ) from None
        if s.size and (s.min() < 0 or s.max() > length):
            raise ValueError(f"s must lie in [0, {length}]; got values in [{s.min()}, {s.max()}]")
        return s
    return check_int("s", s, minimum=0, maximum=length)


def top_s_mask_unchecked(scores: np.ndarray, s: np.ndarray | int) -> np.ndarray:
    """:func:`top_s_mask` without argument checks."""
    # rank[i] = position of entry i in decreasing order of score (stable: ties keep index order)
    order = np.argsort(-scores, axis=-1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(scores.shape[-1]), axis=-1)
    return ranks < np.asarray(s)[..., None]


def top_s_mask(scores: np.ndarray, s: int | np.ndarray) -> np.ndarray:
    """Boolean mask of the ``s`` largest ``scores`` along the last axis (exactly ``s`` per row)."""
    scores = check_array("scores", scores, complex_ok=False)
    if scores.ndim < 1:
        raise ValueError("scores must have at least one axis")
    s = _check_sparsity(s, scores.shape[:-1], scores.shape[-1])
    return top_s_mask_unchecked(scores, s)


def hard_threshold_unchecked(v: np.ndarray, s: np.ndarray | int) -> np.ndarray:
    """:func:`hard_threshold` without argument checks."""
    return np.where(top_s_mask_unchecked(np.abs(v), s), v, 0.0)


def hard_threshold(v: np.ndarray, s: int | np.ndarray) -> np.ndarray:
    """``𝒯_s(v)``: keep the ``s`` largest-modulus entries of ``v`` (last axis), zero the rest."""
    v = check_array("v", v)
    if v.ndim < 1:
        raise ValueError("v must have at least one axis")
    s = _check_sparsity(s, v.shape[:-1], v.shape[-1])
    return hard_threshold_unchecked(v, s)


def soft_threshold_unchecked(v: np.ndarray, tau: np.ndarray | float) -> np.ndarray:
    """:func:`soft_threshold` without argument checks."""
    modulus = np.abs(v)
    shrunk = np.maximum(modulus - np.asarray(tau)[..., None], 0.0)
    # z/|z| · max(|z| - τ, 0), with 0 where z = 0
    return np.where(modulus > 0, v * (shrunk / np.where(modulus > 0, modulus, 1.0)), 0.0)


def soft_threshold(v: np.ndarray, tau: float | np.ndarray) -> np.ndarray:
    """Complex soft threshold ``𝒮_τ(z) = z/|z| · max(|z| - τ, 0)`` entrywise (Eq. (7)).

    ``tau`` is a non-negative number or an array of levels, one per leading batch index.
    """
    v = check_array("v", v)
    if v.ndim < 1:
        raise ValueError("v must have at least one axis")
    if isinstance(tau, np.ndarray):
        tau = check_array("tau", tau, complex_ok=False)
        np.broadcast_shapes(tau.shape, v.shape[:-1])
        if tau.size and tau.min() < 0:
            raise ValueError("tau must be non-negative")
    else:
        tau = check_float("tau", tau, minimum=0.0)
    return soft_threshold_unchecked(v, tau)


def adaptive_soft_levels(
    a: np.ndarray,
    r: np.ndarray,
    h: np.ndarray,
    x: np.ndarray,
    step: float | np.ndarray,
    beta: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Data-driven soft-threshold levels ``(τ_h, τ_x)`` of chapter 01, Eq. (8) **[ours]**.

        τ_h = step · sqrt(β log(KN) Σ_l |r_l|² |a_l^* x|² ||b_l||_∞²),
        τ_x = step · sqrt(β log(KN) Σ_l |r_l|² |b_l^* h|² ||a_l||_∞²),

    with ``||b_l||_∞² = 1/M`` for the DFT rows. Each is the size of the largest "noise" entry of the
    gradient step: entry ``i`` of ``step·𝒜^*(r) x`` is ``step·Σ_l conj(B_li) r_l (a_l^* x)``, whose
    spread is bounded by the sum above, and the max over ``KN`` entries costs ``sqrt(log(KN))``.
    The levels vanish with the residual, so exact recovery stays possible in the noiseless case.
    No argument checks (inner loop). Leading batch axes allowed.
    """
    m, n, k = a.shape[-2], a.shape[-1], h.shape[-1]
    log_kn = np.log(k * n)
    a_inf2 = np.max(np.abs(a) ** 2, axis=-1)  # ||a_l||_∞²
    r2 = np.abs(r) ** 2
    ax2 = np.abs((a @ x[..., None])[..., 0]) ** 2
    bh2 = np.abs(apply_b(h, m)) ** 2
    tau_h = step * np.sqrt(beta * log_kn * np.sum(r2 * ax2, axis=-1) / m)
    tau_x = step * np.sqrt(beta * log_kn * np.sum(r2 * bh2 * a_inf2, axis=-1))
    return tau_h, tau_x


__all__ = [
    "adaptive_soft_levels",
    "hard_threshold",
    "soft_threshold",
    "top_s_mask",
]
