"""Thresholded Wirtinger flow (chapter 01, Eqs. (6)–(8)).

Starting from a spectral initialisation ``(h⁰, x⁰)``, repeat

    h̃ = h^t - (η/σ̂) 𝒜^*(r^t) x^t,      x̃ = x^t - (η/σ̂) 𝒜^*(r^t)^* h^t,      r^t = 𝒜(h^t x^{t*}) - y,
    h^{t+1} = 𝒯_h(h̃),                  x^{t+1} = 𝒯_x(x̃),

with ``σ̂ = max(||y||, ||h⁰|| ||x⁰||)``. The curvature of ``F`` along ``h`` is about ``||x||²`` and
along ``x`` about ``||h||²``: ``≈ ||h⁰|| ||x⁰|| = σ1`` at the start (the leading singular value the
initialiser returns) and ``≈ ||h0|| ||x0|| ≈ ||y||`` near the solution. Scaling the step by the larger
of the two keeps it stable at both ends, and it is one rule for every start. From the sparse start
``σ1 ≈ ||y||``; the dense start's ``σ1`` exceeds ``||y||`` (its noise adds to the block), and a step of
``η/||y||`` from it overshoots and diverges even where the start is usable. Both ablations therefore
use the same rule as ThWF and differ from it in one ingredient only.

with ``𝒯`` the hard top-``s`` threshold (default), the adaptive complex soft threshold, or the
identity (``threshold="none"``: plain Wirtinger flow, an ablation). ``init="dense"`` starts from the
dense spectral pair instead (the other ablation). Defaults ``η = 0.5``, ``T = 300`` and the stopping
rule (relative change ``< 1e-10``) are our choices **[ours]**; ThWF uses no balancing or
incoherence regulariser **[ours]**.

:func:`thwf` is the readable single-instance loop; :func:`thwf_batch` runs many independent
instances at once (stacked arrays: one FFT or batched mat-vec per operator for the whole batch), drops
instances from the working set as they converge or diverge, and gives the same iterates up to
round-off.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.thwf.init import (
    SUPPORT_RULES,
    Initialization,
    dense_spectral_init,
    sparse_spectral_init,
    sparsity_argument,
)
from neurips26.thwf.loss import gradients_unchecked
from neurips26.thwf.metrics import lifted_error_unchecked
from neurips26.thwf.model import Problem, ProblemBatch
from neurips26.thwf.threshold import adaptive_soft_levels, hard_threshold_unchecked, soft_threshold_unchecked
from neurips26.validation import check_choice, check_float, check_int

INITS: tuple[str, ...] = ("sparse", "dense")
THRESHOLDS: tuple[str, ...] = ("hard", "soft", "none")
DIVERGENCE_FACTOR = 1e3  # stop as diverged once ||h|| ||x|| > 1e3 · d̂ (or anything is non-finite)


@dataclass(frozen=True)
class ThWFResult:
    """Outcome of one ThWF run.

    ``errors[t]`` is the lifted error of iterate ``t`` (``errors[0]``: the initialisation), present
    only when the problem carries its truth, else ``None``.
    """

    h: np.ndarray
    x: np.ndarray
    errors: np.ndarray | None
    iterations: int
    converged: bool
    diverged: bool
    initialization: Initialization


@dataclass(frozen=True)
class ThWFBatchResult:
    """Outcome of :func:`thwf_batch`: the fields of :class:`ThWFResult`, one row per instance.

    ``errors`` has shape ``(T, max_iter + 1)``; entries after an instance stopped are NaN.
    """

    h: np.ndarray
    x: np.ndarray
    errors: np.ndarray | None
    iterations: np.ndarray
    converged: np.ndarray
    diverged: np.ndarray
    initialization: Initialization


@dataclass(frozen=True)
class _Settings:
    init: str
    threshold: str
    eta: float
    max_iter: int
    tol: float
    beta: float
    init_rule: str
    alpha: float


def _settings(init, threshold, eta, max_iter, tol, beta, init_rule, alpha) -> _Settings:
    return _Settings(
        check_choice("init", init, INITS),
        check_choice("threshold", threshold, THRESHOLDS),
        check_float("eta", eta, minimum=0.0, strict_min=True),
        check_int("max_iter", max_iter, minimum=0),
        check_float("tol", tol, minimum=0.0),
        check_float("beta", beta, minimum=0.0),
        check_choice("init_rule", init_rule, SUPPORT_RULES),
        check_float("alpha", alpha, minimum=0.0, strict_min=True),
    )


def _initialize(problem, s_h, s_x, cfg: _Settings) -> Initialization:
    if cfg.init == "sparse":
        return sparse_spectral_init(problem, s_h, s_x, rule=cfg.init_rule, alpha=cfg.alpha)
    return dense_spectral_init(problem)


def _threshold_step(a, r, h, x, h_new, x_new, s_h, s_x, step, cfg: _Settings):
    """Apply 𝒯_h, 𝒯_x to the gradient step (Eq. (7)); works for one instance or a batch."""
    if cfg.threshold == "hard":
        return hard_threshold_unchecked(h_new, s_h), hard_threshold_unchecked(x_new, s_x)
    if cfg.threshold == "soft":
        tau_h, tau_x = adaptive_soft_levels(a, r, h, x, step, cfg.beta)
        return soft_threshold_unchecked(h_new, tau_h), soft_threshold_unchecked(x_new, tau_x)
    return h_new, x_new


def _step(eta: float, start: Initialization) -> np.ndarray:
    """The step ``η/σ̂`` with ``σ̂ = max(||y||, ||h⁰|| ||x⁰||)`` (1 if both are zero)."""
    scale = np.maximum(start.d_hat, start.sigma1)
    return eta / np.where(scale > 0, scale, 1.0)


def _relative_change(h, x, h_new, x_new) -> np.ndarray:
    """||(h', x') - (h, x)|| / ||(h, x)|| along the last axis (0 when both are zero)."""
    num = np.sqrt(np.sum(np.abs(h_new - h) ** 2, axis=-1) + np.sum(np.abs(x_new - x) ** 2, axis=-1))
    den = np.sqrt(np.sum(np.abs(h) ** 2, axis=-1) + np.sum(np.abs(x) ** 2, axis=-1))
    return num / np.maximum(den, np.finfo(float).tiny)


def _exploded(h, x, d_hat) -> np.ndarray:
    finite = np.all(np.isfinite(h), axis=-1) & np.all(np.isfinite(x), axis=-1)
    with np.errstate(over="ignore", invalid="ignore"):
        size = np.linalg.norm(h, axis=-1) * np.linalg.norm(x, axis=-1)
    return ~finite | ~(size <= DIVERGENCE_FACTOR * d_hat)


def thwf(
    problem: Problem,
    s_h: int,
    s_x: int,
    *,
    init: str = "sparse",
    threshold: str = "hard",
    eta: float = 0.5,
    max_iter: int = 300,
    tol: float = 1e-10,
    beta: float = 0.5,
    init_rule: str = "top_s",
    alpha: float = 2.0,
) -> ThWFResult:
    """Run ThWF on one instance (chapter 01, Eqs. (5)–(8)).

    ``s_h``, ``s_x``: the sparsities (known, for the hard threshold and the top-``s`` init).
    ``init``: ``"sparse"`` (ThWF) or ``"dense"`` (ablation). ``threshold``: ``"hard"`` (ThWF),
    ``"soft"`` (adaptive level with constant ``beta``) or ``"none"`` (ablation). ``eta``: step,
    scaled by ``1/σ̂`` with ``σ̂ = max(||y||, ||h⁰|| ||x⁰||)`` (the same rule for every ``init``).
    Stops at relative change ``< tol`` (converged), on a non-finite or exploding iterate (diverged),
    or after ``max_iter`` iterations.
    """
    if not isinstance(problem, Problem):
        raise TypeError(
            f"problem must be a Problem (use thwf_batch for a ProblemBatch); got {type(problem).__name__}"
        )
    cfg = _settings(init, threshold, eta, max_iter, tol, beta, init_rule, alpha)
    s_h = sparsity_argument("s_h", s_h, problem, problem.k)
    s_x = sparsity_argument("s_x", s_x, problem, problem.n)
    a, y = problem.a, problem.y

    start = _initialize(problem, s_h, s_x, cfg)
    h, x = start.h, start.x
    step = float(_step(cfg.eta, start))  # η / σ̂, σ̂ = max(||y||, ||h⁰|| ||x⁰||)
    errors = [lifted_error_unchecked(h, x, problem.h0, problem.x0)] if problem.has_truth else None
    iterations, converged, diverged = 0, False, False
    for t in range(cfg.max_iter):
        grad_h, grad_x, r = gradients_unchecked(a, y, h, x)  # 𝒜^*(r) x, 𝒜^*(r)^* h
        h_new, x_new = h - step * grad_h, x - step * grad_x  # Wirtinger gradient step, Eq. (6)
        h_new, x_new = _threshold_step(a, r, h, x, h_new, x_new, s_h, s_x, step, cfg)  # Eq. (7)
        change = float(_relative_change(h, x, h_new, x_new))
        h, x, iterations = h_new, x_new, t + 1
        if errors is not None:
            errors.append(lifted_error_unchecked(h, x, problem.h0, problem.x0))
        if _exploded(h, x, start.d_hat):
            diverged = True
            break
        if change < cfg.tol:
            converged = True
            break
    history = np.asarray(errors, dtype=float) if errors is not None else None
    return ThWFResult(h, x, history, iterations, converged, diverged, start)


def thwf_batch(
    batch: ProblemBatch,
    s_h: int | np.ndarray,
    s_x: int | np.ndarray,
    *,
    init: str = "sparse",
    threshold: str = "hard",
    eta: float = 0.5,
    max_iter: int = 300,
    tol: float = 1e-10,
    beta: float = 0.5,
    init_rule: str = "top_s",
    alpha: float = 2.0,
) -> ThWFBatchResult:
    """:func:`thwf` on ``T`` independent instances at once; same arguments and iterates.

    ``s_h``/``s_x`` may be one int or one per instance. Finished instances (converged or
    diverged) are frozen and, once a quarter of the working set has finished, dropped from it,
    so failures and early finishers cost little.
    """
    if not isinstance(batch, ProblemBatch):
        raise TypeError(f"batch must be a ProblemBatch; got {type(batch).__name__}")
    cfg = _settings(init, threshold, eta, max_iter, tol, beta, init_rule, alpha)
    total = len(batch)
    s_h = np.broadcast_to(sparsity_argument("s_h", s_h, batch, batch.k), (total,))
    s_x = np.broadcast_to(sparsity_argument("s_x", s_x, batch, batch.n), (total,))

    start = _initialize(batch, s_h, s_x, cfg)
    h_out, x_out = start.h.copy(), start.x.copy()
    step_all = _step(cfg.eta, start)
    truth = batch.has_truth
    errors = np.full((total, cfg.max_iter + 1), np.nan) if truth else None
    if truth:
        errors[:, 0] = lifted_error_unchecked(h_out, x_out, batch.h0, batch.x0)
    iterations = np.zeros(total, dtype=np.int64)
    converged = np.zeros(total, dtype=bool)
    diverged = np.zeros(total, dtype=bool)

    # The working set: global indices `work` and the matching rows of every per-instance array.
    work = np.arange(total)
    a, y, h, x = batch.a, batch.y, h_out.copy(), x_out.copy()
    step, sh, sx, d_hat = step_all, s_h, s_x, start.d_hat
    h0, x0 = (batch.h0, batch.x0) if truth else (None, None)
    live = np.ones(total, dtype=bool)
    for t in range(cfg.max_iter):
        grad_h, grad_x, r = gradients_unchecked(a, y, h, x)
        h_new = h - step[:, None] * grad_h
        x_new = x - step[:, None] * grad_x
        h_new, x_new = _threshold_step(a, r, h, x, h_new, x_new, sh, sx, step, cfg)
        change = _relative_change(h, x, h_new, x_new)
        # Finished rows stay frozen at their final iterate.
        h = np.where(live[:, None], h_new, h)
        x = np.where(live[:, None], x_new, x)
        rows = work[live]
        iterations[rows] = t + 1
        if truth:
            errors[rows, t + 1] = lifted_error_unchecked(h[live], x[live], h0[live], x0[live])
        exploded = _exploded(h, x, d_hat)
        newly_diverged = live & exploded
        newly_converged = live & ~exploded & (change < cfg.tol)
        diverged[work[newly_diverged]] = True
        converged[work[newly_converged]] = True
        live = live & ~newly_diverged & ~newly_converged
        if not live.any():
            break
        if live.sum() <= 0.75 * live.size:  # compact the working set
            finished = ~live
            h_out[work[finished]], x_out[work[finished]] = h[finished], x[finished]
            work, a, y, h, x = work[live], a[live], y[live], h[live], x[live]
            step, sh, sx, d_hat = step[live], sh[live], sx[live], d_hat[live]
            if truth:
                h0, x0 = h0[live], x0[live]
            live = np.ones(work.size, dtype=bool)
    h_out[work], x_out[work] = h, x
    return ThWFBatchResult(h_out, x_out, errors, iterations, converged, diverged, start)
