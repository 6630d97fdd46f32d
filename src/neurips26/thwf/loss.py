"""The bilinear least-squares loss and its Wirtinger gradients (chapter 01, Eqs. (3)–(4)).

    F(h, x) = ||𝒜(h x^*) - y||²,     r = 𝒜(h x^*) - y,     G = 𝒜^*(r) = B^* diag(r) A,
    ∇_h F = ∂F/∂h̄ = G x = B^*(r ⊙ A x),     ∇_x F = ∂F/∂x̄ = G^* h = A^*(r̄ ⊙ B h).

The gradients are computed matrix-free (``B`` by FFT, ``A`` by mat-vecs); ``G`` (K×N) is never formed.
The directional derivative of ``F`` along ``δh`` is ``2 Re⟨∇_h F, δh⟩`` (Wirtinger calculus),
which is what the finite-difference unit test checks. Leading batch axes are allowed.
"""

from __future__ import annotations

import numpy as np

from neurips26.thwf.model import (
    apply_b,
    apply_b_adjoint,
    check_complex,
    check_factors,
    check_operator_args,
    forward_unchecked,
)


def _check_loss_args(a, y, h, x):
    a = check_operator_args(a)
    h, x = check_factors(a, h, x)
    y = check_complex("y", y)
    if y.shape[-1:] != (a.shape[-2],):
        raise ValueError(f"y must have shape (..., M={a.shape[-2]}); got {y.shape}")
    return a, y, h, x


def loss_unchecked(a: np.ndarray, y: np.ndarray, h: np.ndarray, x: np.ndarray) -> np.ndarray:
    """:func:`loss` without argument checks."""
    r = forward_unchecked(a, h, x) - y
    return np.sum(np.abs(r) ** 2, axis=-1)


def loss(a: np.ndarray, y: np.ndarray, h: np.ndarray, x: np.ndarray) -> np.ndarray | float:
    """``F(h, x) = ||𝒜(h x^*) - y||²`` (Eq. (3)); one value per leading batch index."""
    out = loss_unchecked(*_check_loss_args(a, y, h, x))
    return float(out) if np.ndim(out) == 0 else out


def gradients_unchecked(
    a: np.ndarray, y: np.ndarray, h: np.ndarray, x: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(∇_h F, ∇_x F, r)`` without argument checks (the residual is returned for reuse)."""
    bh = apply_b(h, a.shape[-2])  # b_l^* h
    ax = (a @ x[..., None])[..., 0]  # a_l^* x
    r = bh * np.conj(ax) - y  # r_l = b_l^*(h x^*) a_l - y_l
    grad_h = apply_b_adjoint(r * ax, h.shape[-1])  # B^*(r ⊙ A x) = 𝒜^*(r) x
    # A^*(r̄ ⊙ B h) = conj(A^T (r ⊙ conj(B h))): avoids conjugating the large A.
    grad_x = np.conj((r * np.conj(bh))[..., None, :] @ a)[..., 0, :]
    return grad_h, grad_x, r


def wirtinger_gradients(
    a: np.ndarray, y: np.ndarray, h: np.ndarray, x: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Wirtinger gradients ``(∂F/∂h̄, ∂F/∂x̄) = (𝒜^*(r) x, 𝒜^*(r)^* h)`` of Eq. (4)."""
    grad_h, grad_x, _ = gradients_unchecked(*_check_loss_args(a, y, h, x))
    return grad_h, grad_x
