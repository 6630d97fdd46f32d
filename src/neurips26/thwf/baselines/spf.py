"""Sparse Power Factorization (SPF) of Lee, Wu & Bresler: alternating sparse least squares.

With one factor fixed the model is linear in the other (chapter 01, Eq. (1)):

    y = diag(conj(A x)) B · h            (h-step: Φ_h = diag(conj(A x)) B, M×K),
    conj(y) = diag(conj(B h)) A · x      (x-step: Φ_x = diag(conj(B h)) A, M×N),

and each half-step solves ``min ||Φ u - y||`` over ``s``-sparse ``u`` by hard-thresholding pursuit
(HTP: support = top-``s`` of ``u + μ Φ^*(y - Φ u)``, then least squares on that support, repeated
until the support is stable), warm-started at the current factor. After each sweep the two factors
are rebalanced to equal norms (the product is unchanged).

Initialisation (our reading of SPF's thresholding initialiser **[reconstruction]**): the ``s_x``
columns of ``Y = 𝒜^*(y)`` with the largest ℓ2 norms, the leading singular pair of ``Y`` restricted to
them, then an h-step first. Least squares use the normal equations on the support (``s <= K, N``).
"""

from __future__ import annotations

import numpy as np

from neurips26.thwf.baselines.rgd import BaselineResult
from neurips26.thwf.init import sparsity_argument
from neurips26.thwf.model import Problem, ProblemBatch, adjoint_unchecked, apply_b, stack_problems
from neurips26.thwf.threshold import top_s_mask_unchecked
from neurips26.thwf.working_set import WorkingSet
from neurips26.validation import check_float, check_int


def _masked_least_squares(gram: np.ndarray, rhs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Solve ``G_SS u_S = c_S`` (zero off ``S``) for every batch row at once.

    Rows/columns outside ``S`` are replaced by the identity, so one batched solve handles a
    different support (and support size) per row.
    """
    both = mask[:, :, None] & mask[:, None, :]
    eye = np.eye(gram.shape[-1], dtype=bool)[None]
    system = np.where(both, gram, 0.0) + np.where(eye & ~mask[:, :, None], 1.0, 0.0)
    return np.linalg.solve(system, np.where(mask, rhs, 0.0)[..., None])[..., 0]


def hard_thresholding_pursuit(
    phi: np.ndarray, target: np.ndarray, s: np.ndarray, start: np.ndarray, iterations: int = 10
) -> np.ndarray:
    """HTP for ``min ||Φ u - target||, ||u||_0 <= s``, batched: ``phi`` (T, M, n), ``start`` (T, n).

    Each instance stops as soon as its support repeats (the standard HTP stopping rule).
    """
    gram = np.conj(np.swapaxes(phi, -1, -2)) @ phi  # Φ^*Φ (T, n, n)
    rhs = np.conj((np.conj(target)[:, None, :] @ phi)[:, 0, :])  # Φ^* target
    mu = phi.shape[-1] / np.maximum(np.real(np.trace(gram, axis1=-2, axis2=-1)), np.finfo(float).tiny)
    u = start.copy()
    mask = start != 0
    s = np.broadcast_to(s, (phi.shape[0],))
    active = np.arange(phi.shape[0])  # instances whose support may still change
    for it in range(iterations):
        g = gram[active]
        w = u[active] + mu[active, None] * (
            rhs[active] - (g @ u[active, :, None])[:, :, 0]
        )  # u + μ Φ^*(y - Φu)
        new_mask = top_s_mask_unchecked(np.abs(w), s[active])
        # The first pass always solves (the start need not be a least-squares fit on its support).
        changed = np.ones(active.size, dtype=bool) if it == 0 else np.any(new_mask != mask[active], axis=-1)
        active, new_mask, g = active[changed], new_mask[changed], g[changed]
        if active.size == 0:
            break
        u[active] = _masked_least_squares(g, rhs[active], new_mask)
        mask[active] = new_mask
    return u


def spf_batch(
    batch: ProblemBatch,
    s_h: int | np.ndarray,
    s_x: int | np.ndarray,
    *,
    max_iter: int = 100,
    tol: float = 1e-10,
    htp_iterations: int = 10,
) -> BaselineResult:
    """SPF on ``T`` independent instances; ``errors[t]`` is the lifted error after sweep ``t``."""
    if not isinstance(batch, ProblemBatch):
        raise TypeError(f"batch must be a ProblemBatch; got {type(batch).__name__}")
    total = len(batch)
    s_h = np.broadcast_to(sparsity_argument("s_h", s_h, batch, batch.k), (total,))
    s_x = np.broadcast_to(sparsity_argument("s_x", s_x, batch, batch.n), (total,))
    max_iter = check_int("max_iter", max_iter, minimum=0)
    tol = check_float("tol", tol, minimum=0.0)
    htp_iterations = check_int("htp_iterations", htp_iterations, minimum=1)
    b, a, y = batch.b, batch.a, batch.y

    # Initialisation: top-s_x columns of Y by ℓ2 norm, leading pair of that column block.
    y_back = adjoint_unchecked(a, y, batch.k)
    mask_x = top_s_mask_unchecked(np.linalg.norm(y_back, axis=-2), s_x)
    u, sv, vh = np.linalg.svd(y_back * mask_x[:, None, :], full_matrices=False)
    root = np.sqrt(sv[:, :1])
    h = root * u[:, :, 0]
    x = root * np.conj(vh[:, 0, :]) * mask_x
    h = np.where(top_s_mask_unchecked(np.abs(h), s_h), h, 0.0)

    # The unfinished instances and the rows of every per-instance array that belong to them.
    state = {"a": a, "y": y, "h": h, "x": x, "s_h": s_h, "s_x": s_x}
    active = WorkingSet(state, max_iter, batch.h0, batch.x0)
    for t in range(max_iter):
        w = active.state
        ax = (w["a"] @ w["x"][:, :, None])[:, :, 0]
        phi_h = np.conj(ax)[:, :, None] * b[None]  # Φ_h = diag(conj(A x)) B
        h_new = hard_thresholding_pursuit(phi_h, w["y"], w["s_h"], w["h"], htp_iterations)
        bh = apply_b(h_new, batch.m)
        phi_x = np.conj(bh)[:, :, None] * w["a"]  # Φ_x = diag(conj(B h)) A
        x_new = hard_thresholding_pursuit(phi_x, np.conj(w["y"]), w["s_x"], w["x"], htp_iterations)
        # Rebalance ||h|| = ||x|| (h x^* unchanged).
        nh, nx = np.linalg.norm(h_new, axis=-1), np.linalg.norm(x_new, axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.sqrt(nx / nh)[:, None]
        ratio = np.where(np.isfinite(ratio) & (ratio > 0), ratio, 1.0)
        h_new, x_new = h_new * ratio, x_new / ratio
        # Relative change of the lifted matrix h x^* (the factors themselves may rotate by a phase).
        z_old = w["h"][:, :, None] * np.conj(w["x"][:, None, :])
        z_new = h_new[:, :, None] * np.conj(x_new[:, None, :])
        den = np.maximum(np.linalg.norm(z_old, axis=(1, 2)), np.finfo(float).tiny)
        change = np.linalg.norm(z_new - z_old, axis=(1, 2)) / den
        if active.advance(t, h_new, x_new, change < tol):
            break
    return BaselineResult(*active.outcome())


def spf(
    problem: Problem, s_h: int, s_x: int, *, max_iter: int = 100, tol: float = 1e-10, htp_iterations: int = 10
) -> BaselineResult:
    """SPF on one instance (same arguments as :func:`spf_batch`)."""
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a Problem; got {type(problem).__name__}")
    batch = stack_problems([problem])
    return spf_batch(batch, s_h, s_x, max_iter=max_iter, tol=tol, htp_iterations=htp_iterations).instance(0)
