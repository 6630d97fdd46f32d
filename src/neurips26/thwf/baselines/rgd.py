"""Regularised gradient descent (RGD) of Li, Ling, Strohmer & Wei (2016): the dense baseline.

No sparsity anywhere: the dense spectral pair ``(sqrt(d) ĥ, sqrt(d) x̂)`` of ``𝒜^*(y)`` (``d = σ1``),
with ``h`` projected onto the incoherence set ``{z : sqrt(M) ||B z||_∞ <= 2 sqrt(d) μ}``, then
gradient descent on ``F̃ = F + G``, where

    G(h, x) = ρ [G0(||h||²/(2d)) + G0(||x||²/(2d)) + Σ_l G0(M |b_l^* h|² / (8 d μ²))],  G0(z) = max(z-1, 0)²,
    ∇_h G = ρ/(2d) [G0'(||h||²/(2d)) h + M/(4μ²) Σ_l G0'(M|b_l^*h|²/(8dμ²)) b_l b_l^* h],
    ∇_x G = ρ/(2d) G0'(||x||²/(2d)) x.

Our choices **[ours]**: ``μ = 2`` and ``ρ = d²`` (noise level unknown); the projection is computed
by Dykstra's alternating projections; the step comes from Armijo backtracking on ``F̃`` (start at
``1/d``, halve until sufficient decrease; after a first-try acceptance try double), since a fixed step
of ``0.5/d`` diverged in the pilot.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.thwf.init import dense_spectral_init
from neurips26.thwf.model import Problem, ProblemBatch, apply_b, apply_b_adjoint, stack_problems
from neurips26.thwf.working_set import WorkingSet
from neurips26.validation import check_float, check_int


@dataclass(frozen=True)
class BaselineResult:
    """Outcome of a baseline on a batch (one row per instance); see ``ThWFBatchResult``."""

    h: np.ndarray
    x: np.ndarray
    errors: np.ndarray | None
    iterations: np.ndarray
    converged: np.ndarray
    diverged: np.ndarray

    def instance(self, index: int) -> BaselineResult:
        """Row ``index`` as a single-instance result (scalars; ``errors`` trimmed to its run)."""
        index = check_int("index", index, minimum=0, maximum=self.h.shape[0] - 1)
        its = int(self.iterations[index])
        errors = None if self.errors is None else self.errors[index, : its + 1].copy()
        return BaselineResult(
            self.h[index], self.x[index], errors, its, bool(self.converged[index]), bool(self.diverged[index])
        )


_LADDER = 2.0 ** -np.arange(3)  # trial steps of one backtracking search, relative to the largest


def _line_norm2(v: np.ndarray, g: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """``||v - s g||²`` for every step ``s`` in ``steps`` (P, L), from three inner products."""
    vv = np.sum(np.abs(v) ** 2, axis=-1)[:, None]
    vg = np.real(np.sum(np.conj(v) * g, axis=-1))[:, None]
    gg = np.sum(np.abs(g) ** 2, axis=-1)[:, None]
    return vv - 2 * steps * vg + steps**2 * gg


def _g0(z: np.ndarray) -> np.ndarray:
    return np.maximum(z - 1.0, 0.0) ** 2


def _g0_prime(z: np.ndarray) -> np.ndarray:
    return 2.0 * np.maximum(z - 1.0, 0.0)


def _regulariser(h, x, d, rho, mu, bh):
    """``G(h, x)`` and its Wirtinger gradients (batched over the first axis); ``bh = B h``."""
    m = bh.shape[-1]
    zh = np.sum(np.abs(h) ** 2, axis=-1) / (2 * d)
    zx = np.sum(np.abs(x) ** 2, axis=-1) / (2 * d)
    zl = m * np.abs(bh) ** 2 / (8 * d[:, None] * mu**2)
    if np.all(zh <= 1) and np.all(zx <= 1) and np.all(zl <= 1):  # every G0 term is zero
        return np.zeros_like(d), np.zeros_like(h), np.zeros_like(x)
    value = rho * (_g0(zh) + _g0(zx) + np.sum(_g0(zl), axis=-1))
    coef = (rho / (2 * d))[:, None]
    incoherence = apply_b_adjoint(_g0_prime(zl) * bh, h.shape[-1])  # Σ_l G0'(z_l) b_l b_l^* h
    grad_h = coef * (_g0_prime(zh)[:, None] * h + m / (4 * mu**2) * incoherence)
    grad_x = coef * _g0_prime(zx)[:, None] * x
    return value, grad_h, grad_x


def _regulariser_value(m, h, x, d, rho, mu, bh):
    """``G(h, x)`` only, from ``bh = B h`` (``m`` = number of measurements)."""
    zh = np.sum(np.abs(h) ** 2, axis=-1) / (2 * d)
    zx = np.sum(np.abs(x) ** 2, axis=-1) / (2 * d)
    zl = m * np.abs(bh) ** 2 / (8 * d[:, None] * mu**2)
    return rho * (_g0(zh) + _g0(zx) + np.sum(_g0(zl), axis=-1))


def project_incoherent(w: np.ndarray, radius: np.ndarray, m: int, iterations: int = 100) -> np.ndarray:
    """Nearest ``z`` to ``w`` with ``|b_l^* z| <= radius`` for all ``l <= m`` (rows of ``w`` = batch).

    Since ``B^* B = I``, this is the projection of ``B w`` onto ``range(B) ∩ {|u_l| <= radius}``,
    computed by Dykstra's algorithm; the returned ``z = B^* v`` with ``v`` in ``range(B)``.
    """
    k = w.shape[-1]
    u = apply_b(w, m)
    if np.all(np.abs(u) <= radius[:, None]):
        return w.copy()
    p = np.zeros_like(u)
    q = np.zeros_like(u)
    v = u
    for _ in range(iterations):
        v = apply_b(apply_b_adjoint(u + p, k), m)  # projection onto range(B): B B^*
        p = u + p - v
        t = v + q
        modulus = np.abs(t)
        u = t * np.minimum(1.0, radius[:, None] / np.maximum(modulus, np.finfo(float).tiny))  # clip moduli
        q = t - u
    return apply_b_adjoint(v, k)


def rgd_batch(
    batch: ProblemBatch,
    *,
    mu: float = 2.0,
    max_iter: int = 300,
    tol: float = 1e-10,
    armijo: float = 0.1,
) -> BaselineResult:
    """RGD (Li et al., 2016) on ``T`` independent instances; see the module docstring."""
    if not isinstance(batch, ProblemBatch):
        raise TypeError(f"batch must be a ProblemBatch; got {type(batch).__name__}")
    mu = check_float("mu", mu, minimum=0.0, strict_min=True)
    max_iter = check_int("max_iter", max_iter, minimum=0)
    tol = check_float("tol", tol, minimum=0.0)
    armijo = check_float("armijo", armijo, minimum=0.0, maximum=0.5, strict_min=True)
    a, y = batch.a, batch.y
    m = batch.m

    start = dense_spectral_init(batch)  # h = sqrt(σ1) ĥ, x = sqrt(σ1) x̂
    d = start.sigma1
    h = project_incoherent(start.h, 2 * np.sqrt(d) * mu / np.sqrt(m), m)  # sqrt(M)|b_l^* z| <= 2 sqrt(d) μ
    x = start.x.copy()
    # The unfinished instances and the rows of every per-instance array that belong to them.
    state = {"a": a, "y": y, "d": d, "rho": d**2, "h": h, "x": x, "step": 1.0 / d}
    active = WorkingSet(state, max_iter, batch.h0, batch.x0)
    for t in range(max_iter):
        w = active.state
        h, x, d, rho = w["h"], w["x"], w["d"], w["rho"]
        bh = apply_b(h, m)  # b_l^* h
        ax = (w["a"] @ x[:, :, None])[:, :, 0]  # a_l^* x
        r = bh * np.conj(ax) - w["y"]  # residual
        g_value, g_h, g_x = _regulariser(h, x, d, rho, mu, bh)
        grad_h = apply_b_adjoint(r * ax, batch.k) + g_h  # ∇_h F̃ = 𝒜^*(r) x + ∇_h G
        grad_x = np.conj((r * np.conj(bh))[:, None, :] @ w["a"])[:, 0, :] + g_x  # ∇_x F̃ = 𝒜^*(r)^* h + ∇_x G
        current = np.sum(np.abs(r) ** 2, axis=-1) + g_value
        slope = np.sum(np.abs(grad_h) ** 2, axis=-1) + np.sum(np.abs(grad_x) ** 2, axis=-1)
        # Along (h, x) - t(∇_h, ∇_x) the residual is r + t c1 + t² c2, so F̃ at any trial step costs
        # O(M) once B∇_h and A∇_x are known: the line search needs no further products with A.
        bg = apply_b(grad_h, m)
        ag = (w["a"] @ grad_x[:, :, None])[:, :, 0]
        c1 = -(bg * np.conj(ax) + bh * np.conj(ag))
        c2 = bg * np.conj(ag)
        # Armijo backtracking, F̃(z - s∇) <= F̃(z) - c · 2 s ||∇||² (the real slope is 2||∇||²), with
        # every trial step of the ladder s_k = min(2 s_prev, 1/d) · 2^-k evaluated at once: the
        # largest passing s_k is exactly what sequential halving from min(2 s_prev, 1/d) would find.
        ladder = np.minimum(2.0 * w["step"], 1.0 / d)[:, None] * _LADDER[None, :]  # (P, L)
        t3 = ladder[:, :, None]
        value = np.sum(np.abs(r[:, None, :] + t3 * c1[:, None, :] + t3**2 * c2[:, None, :]) ** 2, axis=-1)
        # G along the line: ||h - s∇_h||² = ||h||² - 2s Re⟨h, ∇_h⟩ + s²||∇_h||², same for x.
        norm_h = _line_norm2(h, grad_h, ladder)
        norm_x = _line_norm2(x, grad_x, ladder)
        dd = 2 * d[:, None]
        value += rho[:, None] * (_g0(norm_h / dd) + _g0(norm_x / dd))
        # The incoherence terms need |b_l^*(h - s∇_h)|² for every l; skip them when the bound
        # (max|Bh| + s max|B∇_h|)² shows that none can exceed its threshold 8dμ²/M.
        bound = (np.max(np.abs(bh), axis=-1)[:, None] + ladder * np.max(np.abs(bg), axis=-1)[:, None]) ** 2
        if np.any(m * bound > 8 * d[:, None] * mu**2):
            zl = m * np.abs(bh[:, None, :] - t3 * bg[:, None, :]) ** 2 / (8 * d[:, None, None] * mu**2)
            value += rho[:, None] * np.sum(_g0(zl), axis=-1)
        passing = value <= current[:, None] - armijo * 2 * ladder * slope[:, None]
        found = passing.any(axis=1)
        chosen = ladder[np.arange(ladder.shape[0]), np.argmax(passing, axis=1)]
        # No passing step: stay, and restart the next search below the smallest step tried.
        step = np.where(found, chosen, ladder[:, -1] / 2)
        h_new = np.where(found[:, None], h - step[:, None] * grad_h, h)
        x_new = np.where(found[:, None], x - step[:, None] * grad_x, x)
        stalled = ~found & (step < 1e-12 / d)  # no decrease even for tiny steps: stationary at precision
        num = np.sqrt(
            np.sum(np.abs(h_new - w["h"]) ** 2, axis=-1) + np.sum(np.abs(x_new - w["x"]) ** 2, axis=-1)
        )
        den = np.sqrt(np.sum(np.abs(w["h"]) ** 2, axis=-1) + np.sum(np.abs(w["x"]) ** 2, axis=-1))
        change = num / np.maximum(den, np.finfo(float).tiny)
        w["step"] = step
        if active.advance(t, h_new, x_new, ((change < tol) & found) | stalled):
            break
    return BaselineResult(*active.outcome())


def rgd(
    problem: Problem, *, mu: float = 2.0, max_iter: int = 300, tol: float = 1e-10, armijo: float = 0.1
) -> BaselineResult:
    """RGD on one instance (same arguments as :func:`rgd_batch`)."""
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a Problem; got {type(problem).__name__}")
    batch = stack_problems([problem])
    return rgd_batch(batch, mu=mu, max_iter=max_iter, tol=tol, armijo=armijo).instance(0)
