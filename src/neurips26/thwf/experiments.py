"""The claim experiments of chapter 01 (ThWF), at the three scales of the book.

1. :func:`phase_transition` — success rate (``err < 1e-3``, noiseless) over an ``M × s`` grid for
   ThWF, RGD, SPF and the two ablations, all on the same instances; :func:`boundary_m50` and
   :func:`~neurips26.stats.loglog_fit` turn it into 50 % boundaries and their growth in ``s``.
2. :func:`support_recovery` — how often the sparse spectral initialiser finds both supports
   exactly (equal-modulus nonzeros), its ``M50`` and slope in ``s``.
3. :func:`convergence` — ``log err`` vs iteration for ThWF and RGD above the boundary, with the
   linear rate ``ρ`` and ``R²`` fitted on the straight tail (:func:`fit_linear_rate`).
4. :func:`noise_sweep` — final error vs bounded-noise level for ThWF and its log-log slope.
5. :func:`convex_comparison` — success and wall time of convex lifting vs ThWF on tiny instances (timed
   side by side in interleaved rounds, :func:`neurips26.timing.time_interleaved`).

Every experiment takes a frozen config (``Config.for_scale(scale)``) and a seed, and returns a
plain dataclass of NumPy arrays (easy to plot, cache or pickle). Instances for one ``M`` are drawn
from ``SeedSequence([seed, index])``, so every method sees the same data.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from threadpoolctl import threadpool_limits

from neurips26.scales import check_scale, pick
from neurips26.seeding import sub_seed
from neurips26.stats import loglog_fit
from neurips26.thwf.baselines.convex import MAX_SIZE, convex_lifting
from neurips26.thwf.baselines.rgd import rgd_batch
from neurips26.thwf.baselines.spf import spf_batch
from neurips26.thwf.init import sparse_spectral_init
from neurips26.thwf.metrics import SUCCESS_TOLERANCE
from neurips26.thwf.model import Problem, ProblemBatch, make_problem_batch
from neurips26.thwf.thwf import thwf, thwf_batch
from neurips26.timing import Timing, time_interleaved
from neurips26.validation import (
    check_array,
    check_choice,
    check_float,
    check_float_tuple,
    check_int,
    check_int_tuple,
    check_seed,
)

METHODS: tuple[str, ...] = ("thwf", "rgd", "spf", "sparse_init_no_threshold", "dense_init_threshold")
METHOD_LABELS: dict[str, str] = {
    "thwf": "ThWF",
    "rgd": "RGD (Li et al.)",
    "spf": "SPF",
    "sparse_init_no_threshold": "sparse init, no thresholding",
    "dense_init_threshold": "dense init + thresholding",
}


# --------------------------------------------------------------------------------------------
# shared helpers

F = TypeVar("F", bound=Callable)


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Run the enclosed code with one BLAS thread.

    The experiments make thousands of tiny batched BLAS/LAPACK calls (Gram matrices, solves and
    SVDs of 32×32 blocks). A multi-threaded OpenBLAS spends more time synchronising its threads
    than computing on them: on a busy 2-core machine the phase transition took ~2× (and, before
    ``B`` was applied by FFT, ~15×) longer than with one thread.
    """
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _blas_single_thread(function: F) -> F:
    """Decorator form of :func:`single_threaded_blas` for the experiment functions."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with single_threaded_blas():
            return function(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _final_errors(result) -> np.ndarray:
    """The lifted error of the last iterate of every instance of a batched result."""
    return result.errors[np.arange(result.errors.shape[0]), result.iterations]


def boundary_m50(m_grid: np.ndarray, rates: np.ndarray, level: float = 0.5) -> np.ndarray | float:
    """The ``M`` at which a success (or recovery) rate first reaches ``level``.

    Linear interpolation in ``log M`` between the last grid point below ``level`` and the first at
    or above it. NaN when the boundary is not bracketed by the grid (the rate is already
    ``>= level`` at the smallest ``M``, or never reaches it). ``rates`` may be 2-D (one row per ``s``).
    """
    m_grid = check_array("m_grid", np.asarray(m_grid, dtype=float), ndim=1)
    rates = check_array("rates", np.asarray(rates, dtype=float), complex_ok=False)
    level = check_float("level", level, minimum=0.0, maximum=1.0)
    if rates.shape[-1] != m_grid.size:
        raise ValueError(f"rates must have last axis of length len(m_grid)={m_grid.size}; got {rates.shape}")
    if np.any(m_grid <= 0):
        raise ValueError("m_grid must be positive")
    if rates.ndim == 2:
        return np.array([boundary_m50(m_grid, row, level) for row in rates])
    above = np.nonzero(rates >= level)[0]
    if above.size == 0 or above[0] == 0:
        return float("nan")
    j = above[0]
    r0, r1 = rates[j - 1], rates[j]
    frac = (level - r0) / (r1 - r0)
    return float(np.exp(np.log(m_grid[j - 1]) + frac * (np.log(m_grid[j]) - np.log(m_grid[j - 1]))))


def fit_linear_rate(
    errors: np.ndarray, upper: float = 1e-2, lower: float = 1e-12
) -> tuple[float, float, int, int]:
    """Fit ``log10 err_t = a + t log10 ρ`` on the straight tail of one error history.

    The window starts at the first iterate with ``err <= upper`` (inside the basin) and ends at
    the last iterate with ``err >= lower`` (before machine precision). Returns
    ``(ρ, R², start, stop)`` (``stop`` exclusive); NaNs when the window holds fewer than 5 iterates.
    """
    errors = np.asarray(errors, dtype=float)
    if errors.ndim != 1:
        raise ValueError(f"errors must be 1-D; got shape {errors.shape}")
    upper = check_float("upper", upper, minimum=0.0, strict_min=True)
    lower = check_float("lower", lower, minimum=0.0, strict_min=True)
    finite = np.isfinite(errors) & (errors > 0)
    inside = np.nonzero(finite & (errors <= upper))[0]
    if inside.size == 0:
        return float("nan"), float("nan"), 0, 0
    start = inside[0]
    tail = np.nonzero(finite[start:] & (errors[start:] >= lower))[0]
    stop = start + (tail[-1] + 1 if tail.size else 0)
    if stop - start < 5 or not np.all(finite[start:stop]):
        return float("nan"), float("nan"), int(start), int(stop)
    t = np.arange(start, stop)
    log_err = np.log10(errors[start:stop])
    slope, intercept = np.polyfit(t, log_err, 1)
    residual = log_err - (slope * t + intercept)
    total = np.sum((log_err - log_err.mean()) ** 2)
    r2 = 1.0 - np.sum(residual**2) / total if total > 0 else float("nan")
    return float(10.0**slope), float(r2), int(start), int(stop)


# --------------------------------------------------------------------------------------------
# 1. phase transition


@dataclass(frozen=True)
class PhaseTransitionConfig:
    """Grid and budgets of the phase-transition experiment (``s_h = s_x = s``).

    ``max_iter``/``tol`` apply to the gradient methods, ``spf_sweeps``/``htp_iterations`` to SPF.
    The iteration budget matters for the dense methods only: near its boundary RGD (and plain WF)
    converges slowly, so 200 iterations would understate it (its 50 % boundary at ``K = N = 32``
    moves from ``M ≈ 115`` at 200 iterations to ``≈ 90`` at 1000), whereas ThWF and SPF give the
    same success rates at 200 and 1000. ``max_iter = 1000`` is the default for that reason.
    """

    k: int = 32
    n: int = 32
    m_grid: tuple[int, ...] = (32, 40, 48, 64, 80, 96, 128, 160, 192, 256)
    s_grid: tuple[int, ...] = (4, 6, 8, 10, 12)
    trials: int = 20
    methods: tuple[str, ...] = METHODS
    max_iter: int = 1000
    tol: float = 1e-8
    eta: float = 0.5
    spf_sweeps: int = 30
    htp_iterations: int = 5
    success_tol: float = SUCCESS_TOLERANCE

    def __post_init__(self) -> None:
        check_int("k", self.k, minimum=1)
        check_int("n", self.n, minimum=1)
        check_int_tuple("m_grid", self.m_grid, minimum=self.k)
        check_int_tuple("s_grid", self.s_grid, minimum=1)
        if self.s_grid[-1] > min(self.k, self.n):
            raise ValueError(f"s_grid must not exceed min(k, n)={min(self.k, self.n)}; got {self.s_grid}")
        check_int("trials", self.trials, minimum=1)
        if not isinstance(self.methods, tuple) or not self.methods:
            raise TypeError(f"methods must be a non-empty tuple drawn from {METHODS}; got {self.methods!r}")
        for i, method in enumerate(self.methods):
            check_choice(f"methods[{i}]", method, METHODS)
        check_int("max_iter", self.max_iter, minimum=1)
        check_float("tol", self.tol, minimum=0.0)
        check_float("eta", self.eta, minimum=0.0, strict_min=True)
        check_int("spf_sweeps", self.spf_sweeps, minimum=1)
        check_int("htp_iterations", self.htp_iterations, minimum=1)
        check_float("success_tol", self.success_tol, minimum=0.0, strict_min=True)

    @classmethod
    def for_scale(cls, scale: str) -> PhaseTransitionConfig:
        check_scale(scale)
        return pick(
            scale,
            smoke=cls(
                k=16,
                n=16,
                m_grid=(16, 24, 32, 48, 64),
                s_grid=(2, 3, 4),
                trials=3,
                max_iter=60,
                spf_sweeps=10,
            ),
            default=cls(),
            paper=cls(
                k=64,
                n=64,
                m_grid=(64, 80, 96, 128, 160, 192, 256, 320, 384, 512),
                s_grid=(8, 10, 12, 16, 20, 24),
                trials=50,
                max_iter=3000,
            ),
        )


@dataclass(frozen=True)
class PhaseTransitionResult:
    """``success[i, j, k]``: success rate of ``methods[i]`` at ``s_grid[j]``, ``m_grid[k]``.

    ``final_error`` adds a trailing axis of trials; ``seconds[i]`` is the wall time of method ``i``.
    """

    config: PhaseTransitionConfig
    methods: tuple[str, ...]
    m_grid: np.ndarray
    s_grid: np.ndarray
    success: np.ndarray
    final_error: np.ndarray
    seconds: np.ndarray

    def rates(self, method: str) -> np.ndarray:
        """Success rates of one method, shape ``(len(s_grid), len(m_grid))``."""
        return self.success[self.methods.index(check_choice("method", method, self.methods))]

    def m50(self, method: str) -> np.ndarray:
        """The 50 % boundary ``M50(s)`` of one method (NaN where the grid does not bracket it)."""
        return boundary_m50(self.m_grid, self.rates(method))

    def slope(self, method: str) -> float:
        """Log-log slope of ``M50`` vs ``s`` for one method."""
        return loglog_fit(self.s_grid, self.m50(method), skip_invalid=True)[0]


def run_method(method: str, batch: ProblemBatch, s: np.ndarray, config: PhaseTransitionConfig) -> np.ndarray:
    """Final lifted errors of one method on a batch (sparsities ``s_h = s_x = s`` per instance)."""
    check_choice("method", method, METHODS)
    common = {"max_iter": config.max_iter, "tol": config.tol}
    if method == "thwf":
        result = thwf_batch(batch, s, s, eta=config.eta, **common)
    elif method == "sparse_init_no_threshold":
        result = thwf_batch(batch, s, s, threshold="none", eta=config.eta, **common)
    elif method == "dense_init_threshold":
        result = thwf_batch(batch, s, s, init="dense", eta=config.eta, **common)
    elif method == "rgd":
        result = rgd_batch(batch, **common)
    else:
        result = spf_batch(
            batch, s, s, max_iter=config.spf_sweeps, tol=config.tol, htp_iterations=config.htp_iterations
        )
    return _final_errors(result)


@_blas_single_thread
def phase_transition(config: PhaseTransitionConfig, seed: int = 0) -> PhaseTransitionResult:
    """Success rates of every configured method over the ``M × s`` grid (claims (b) and (e)).

    For each ``M`` one batch holds ``trials`` instances of every ``s`` (Gaussian nonzeros), and
    every method runs on that same batch.
    """
    if not isinstance(config, PhaseTransitionConfig):
        raise TypeError(f"config must be a PhaseTransitionConfig; got {type(config).__name__}")
    seed = check_seed("seed", seed)
    n_s, n_m = len(config.s_grid), len(config.m_grid)
    s = np.repeat(np.array(config.s_grid), config.trials)
    errors = np.empty((len(config.methods), n_s, n_m, config.trials))
    seconds = np.zeros(len(config.methods))
    for j, m in enumerate(config.m_grid):
        batch = make_problem_batch(
            config.k, config.n, m, s.tolist(), s.tolist(), s.size, seed=sub_seed(seed, j)
        )
        for i, method in enumerate(config.methods):
            start = time.perf_counter()
            errors[i, :, j, :] = run_method(method, batch, s, config).reshape(n_s, config.trials)
            seconds[i] += time.perf_counter() - start
    success = (np.nan_to_num(errors, nan=np.inf) < config.success_tol).mean(axis=-1)
    return PhaseTransitionResult(
        config, config.methods, np.array(config.m_grid), np.array(config.s_grid), success, errors, seconds
    )


# --------------------------------------------------------------------------------------------
# 2. support recovery by the initialiser


@dataclass(frozen=True)
class SupportRecoveryConfig:
    """Grid of the support-recovery experiment (equal-modulus nonzeros, ``s_h = s_x = s``)."""

    k: int = 32
    n: int = 32
    m_grid: tuple[int, ...] = (32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536)
    s_grid: tuple[int, ...] = (4, 6, 8, 10, 12)
    trials: int = 20
    rule: str = "top_s"
    alpha: float = 2.0

    def __post_init__(self) -> None:
        check_int("k", self.k, minimum=1)
        check_int("n", self.n, minimum=1)
        check_int_tuple("m_grid", self.m_grid, minimum=self.k)
        check_int_tuple("s_grid", self.s_grid, minimum=1)
        if self.s_grid[-1] > min(self.k, self.n):
            raise ValueError(f"s_grid must not exceed min(k, n)={min(self.k, self.n)}; got {self.s_grid}")
        check_int("trials", self.trials, minimum=1)
        check_choice("rule", self.rule, ("top_s", "adaptive"))
        check_float("alpha", self.alpha, minimum=0.0, strict_min=True)

    @classmethod
    def for_scale(cls, scale: str) -> SupportRecoveryConfig:
        check_scale(scale)
        return pick(
            scale,
            smoke=cls(k=16, n=16, m_grid=(16, 32, 64, 128, 256), s_grid=(2, 3, 4), trials=4),
            default=cls(),
            paper=cls(
                k=64, n=64, m_grid=(64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072), trials=50
            ),
        )


@dataclass(frozen=True)
class SupportRecoveryResult:
    """``probability[j, k]``: both supports exact at ``s_grid[j]``, ``m_grid[k]``; also per factor."""

    config: SupportRecoveryConfig
    m_grid: np.ndarray
    s_grid: np.ndarray
    probability: np.ndarray
    probability_h: np.ndarray
    probability_x: np.ndarray
    m50: np.ndarray
    slope: float
    seconds: float


@_blas_single_thread
def support_recovery(config: SupportRecoveryConfig, seed: int = 0) -> SupportRecoveryResult:
    """How often :func:`~neurips26.thwf.init.sparse_spectral_init` finds both supports (claim (a))."""
    if not isinstance(config, SupportRecoveryConfig):
        raise TypeError(f"config must be a SupportRecoveryConfig; got {type(config).__name__}")
    seed = check_seed("seed", seed)
    start = time.perf_counter()
    n_s, n_m = len(config.s_grid), len(config.m_grid)
    s = np.repeat(np.array(config.s_grid), config.trials)
    exact_h = np.empty((n_s, n_m, config.trials), dtype=bool)
    exact_x = np.empty_like(exact_h)
    for j, m in enumerate(config.m_grid):
        batch = make_problem_batch(
            config.k, config.n, m, s.tolist(), s.tolist(), s.size, amplitudes="equal", seed=sub_seed(seed, j)
        )
        init = sparse_spectral_init(batch, s, s, rule=config.rule, alpha=config.alpha)
        exact_h[:, j] = np.all(init.support_h == (batch.h0 != 0), axis=-1).reshape(n_s, config.trials)
        exact_x[:, j] = np.all(init.support_x == (batch.x0 != 0), axis=-1).reshape(n_s, config.trials)
    probability = (exact_h & exact_x).mean(axis=-1)
    m50 = boundary_m50(np.array(config.m_grid), probability)
    slope = loglog_fit(np.array(config.s_grid), m50, skip_invalid=True)[0]
    return SupportRecoveryResult(
        config,
        np.array(config.m_grid),
        np.array(config.s_grid),
        probability,
        exact_h.mean(axis=-1),
        exact_x.mean(axis=-1),
        m50,
        slope,
        time.perf_counter() - start,
    )


# --------------------------------------------------------------------------------------------
# 3. convergence rate


@dataclass(frozen=True)
class ConvergenceConfig:
    """ThWF and RGD error histories at a few ``M`` above ThWF's boundary (``s_h = s_x = s``)."""

    k: int = 32
    n: int = 32
    s: int = 4
    m_values: tuple[int, ...] = (96, 128, 192, 256)
    trials: int = 6
    max_iter: int = 400
    eta: float = 0.5
    fit_upper: float = 1e-2
    fit_lower: float = 1e-12

    def __post_init__(self) -> None:
        check_int("k", self.k, minimum=1)
        check_int("n", self.n, minimum=1)
        check_int("s", self.s, minimum=1, maximum=min(self.k, self.n))
        check_int_tuple("m_values", self.m_values, minimum=self.k)
        check_int("trials", self.trials, minimum=1)
        check_int("max_iter", self.max_iter, minimum=1)
        check_float("eta", self.eta, minimum=0.0, strict_min=True)
        check_float("fit_lower", self.fit_lower, minimum=0.0, strict_min=True)
        check_float("fit_upper", self.fit_upper, minimum=self.fit_lower, strict_min=True)

    @classmethod
    def for_scale(cls, scale: str) -> ConvergenceConfig:
        check_scale(scale)
        return pick(
            scale,
            smoke=cls(k=16, n=16, s=2, m_values=(48, 96), trials=2, max_iter=150),
            default=cls(),
            paper=cls(k=64, n=64, s=6, m_values=(128, 192, 256, 384, 512), trials=20, max_iter=600),
        )


@dataclass(frozen=True)
class ConvergenceResult:
    """``errors[i, j, t, :]``: history of ``methods[i]`` at ``m_values[j]``, trial ``t`` (NaN after stop).

    ``rho``/``r2`` (methods × M × trials): fitted linear rate and its ``R²`` (NaN where no tail).
    """

    config: ConvergenceConfig
    methods: tuple[str, ...]
    m_values: np.ndarray
    errors: np.ndarray
    rho: np.ndarray
    r2: np.ndarray
    seconds: np.ndarray

    def median_rho(self, method: str) -> np.ndarray:
        """Median fitted rate per ``M`` (ignoring trials without a straight tail)."""
        return np.nanmedian(
            self.rho[self.methods.index(check_choice("method", method, self.methods))], axis=-1
        )

    def min_r2(self, method: str) -> np.ndarray:
        """Worst ``R²`` per ``M`` over the fitted trials."""
        return np.nanmin(self.r2[self.methods.index(check_choice("method", method, self.methods))], axis=-1)


@_blas_single_thread
def convergence(config: ConvergenceConfig, seed: int = 0) -> ConvergenceResult:
    """Linear convergence of ThWF (vs RGD) above the boundary (claim (c)).

    Runs until the iterates stop changing at machine precision (``tol = 1e-15``) so the straight
    part of ``log err`` is long, then fits ρ on ``fit_lower <= err <= fit_upper``.
    """
    if not isinstance(config, ConvergenceConfig):
        raise TypeError(f"config must be a ConvergenceConfig; got {type(config).__name__}")
    seed = check_seed("seed", seed)
    methods = ("thwf", "rgd")
    n_m = len(config.m_values)
    errors = np.full((2, n_m, config.trials, config.max_iter + 1), np.nan)
    seconds = np.zeros(2)
    for j, m in enumerate(config.m_values):
        batch = make_problem_batch(
            config.k, config.n, m, config.s, config.s, config.trials, seed=sub_seed(seed, j)
        )
        start = time.perf_counter()
        errors[0, j] = thwf_batch(
            batch, config.s, config.s, eta=config.eta, max_iter=config.max_iter, tol=1e-15
        ).errors
        seconds[0] += time.perf_counter() - start
        start = time.perf_counter()
        errors[1, j] = rgd_batch(batch, max_iter=config.max_iter, tol=1e-15).errors
        seconds[1] += time.perf_counter() - start
    rho = np.full((2, n_m, config.trials), np.nan)
    r2 = np.full_like(rho, np.nan)
    for index in np.ndindex(rho.shape):
        rho[index], r2[index], _, _ = fit_linear_rate(errors[index], config.fit_upper, config.fit_lower)
    return ConvergenceResult(config, methods, np.array(config.m_values), errors, rho, r2, seconds)


# --------------------------------------------------------------------------------------------
# 4. noise


@dataclass(frozen=True)
class NoiseSweepConfig:
    """Bounded noise ``||e|| = ε ||𝒜(h0 x0^*)||`` at one ``(M, s)`` above the boundary."""

    k: int = 32
    n: int = 32
    m: int = 128
    s: int = 4
    noise_levels: tuple[float, ...] = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1)
    trials: int = 10
    max_iter: int = 300
    eta: float = 0.5

    def __post_init__(self) -> None:
        check_int("k", self.k, minimum=1)
        check_int("n", self.n, minimum=1)
        check_int("m", self.m, minimum=self.k)
        check_int("s", self.s, minimum=1, maximum=min(self.k, self.n))
        check_float_tuple("noise_levels", self.noise_levels, minimum=0.0, strict_min=True)
        check_int("trials", self.trials, minimum=1)
        check_int("max_iter", self.max_iter, minimum=1)
        check_float("eta", self.eta, minimum=0.0, strict_min=True)

    @classmethod
    def for_scale(cls, scale: str) -> NoiseSweepConfig:
        check_scale(scale)
        return pick(
            scale,
            smoke=cls(k=16, n=16, m=64, s=2, noise_levels=(1e-3, 1e-2, 1e-1), trials=2, max_iter=100),
            default=cls(),
            paper=cls(k=64, n=64, m=256, s=6, trials=50),
        )


@dataclass(frozen=True)
class NoiseSweepResult:
    """``final_error[i, t]`` at ``noise_levels[i]``, trial ``t``; median and the log-log slope."""

    config: NoiseSweepConfig
    noise_levels: np.ndarray
    final_error: np.ndarray
    median_error: np.ndarray
    slope: float
    seconds: float


@_blas_single_thread
def noise_sweep(config: NoiseSweepConfig, seed: int = 0) -> NoiseSweepResult:
    """Final ThWF error vs noise level; the slope of log median error vs log ε (claim (d)).

    The same ``(A, h0, x0)`` and noise direction are reused across levels (only ``ε`` changes).
    """
    if not isinstance(config, NoiseSweepConfig):
        raise TypeError(f"config must be a NoiseSweepConfig; got {type(config).__name__}")
    seed = check_seed("seed", seed)
    start = time.perf_counter()
    levels = np.array(config.noise_levels)
    final = np.empty((levels.size, config.trials))
    for i, level in enumerate(levels):
        # Same sub-seed for every level: identical A, h0, x0 and noise direction, scaled by ε.
        batch = make_problem_batch(
            config.k,
            config.n,
            config.m,
            config.s,
            config.s,
            config.trials,
            noise=float(level),
            seed=sub_seed(seed, 0),
        )
        result = thwf_batch(batch, config.s, config.s, eta=config.eta, max_iter=config.max_iter)
        final[i] = _final_errors(result)
    median = np.median(final, axis=-1)
    slope = loglog_fit(levels, median, skip_invalid=True)[0]
    return NoiseSweepResult(config, levels, final, median, slope, time.perf_counter() - start)


# --------------------------------------------------------------------------------------------
# 5. convex lifting on tiny instances


@dataclass(frozen=True)
class ConvexComparisonConfig:
    """Tiny instances (``K, N <= 24``; 10 by default) on which the cvxpy convex lifting is affordable.

    ``rounds``: interleaved timing rounds per ``M``, each solving all ``trials`` instances with both methods
    (one discarded warm-up round before the first ``M``).
    """

    k: int = 10
    n: int = 10
    s: int = 2
    m_values: tuple[int, ...] = (10, 15, 20, 30, 40)
    trials: int = 3
    solver: str = "SCS"
    max_iter: int = 300
    rounds: int = 3

    def __post_init__(self) -> None:
        check_int("k", self.k, minimum=1, maximum=MAX_SIZE)
        check_int("n", self.n, minimum=1, maximum=MAX_SIZE)
        check_int("s", self.s, minimum=1, maximum=min(self.k, self.n))
        check_int_tuple("m_values", self.m_values, minimum=self.k)
        check_int("trials", self.trials, minimum=1)
        check_choice("solver", self.solver, ("CLARABEL", "SCS"))
        check_int("max_iter", self.max_iter, minimum=1)
        check_int("rounds", self.rounds, minimum=1)

    @classmethod
    def for_scale(cls, scale: str) -> ConvexComparisonConfig:
        check_scale(scale)
        return pick(
            scale,
            smoke=cls(k=6, n=6, s=2, m_values=(12, 24), trials=1),
            default=cls(),
            paper=cls(k=12, n=12, s=3, m_values=(12, 16, 24, 36, 48), trials=10, solver="CLARABEL"),
        )


@dataclass(frozen=True)
class ConvexComparisonResult:
    """``success[i, j]`` and ``seconds[i, j]`` of ``methods[i]`` at ``m_values[j]``, and the time ratio.

    ``seconds[i, j]``: seconds per instance, the median over the timing rounds; ``time_ratio[j]``: convex /
    ThWF, the median over rounds of the ratio of the two methods' times in the same round;
    ``time_ratio_spread[j]``: the 25 % and 75 % quantiles of those per-round ratios; ``timings[j]``: the
    interleaved measurement at ``m_values[j]`` (:class:`neurips26.timing.Timing`).
    """

    config: ConvexComparisonConfig
    methods: tuple[str, ...]
    m_values: np.ndarray
    final_error: np.ndarray
    success: np.ndarray
    seconds: np.ndarray
    time_ratio: np.ndarray
    time_ratio_spread: np.ndarray
    timings: tuple[Timing, ...]


def _solve_each(
    solve: Callable[[Problem], float], problems: list[Problem], out: np.ndarray
) -> Callable[[], None]:
    """A callable that solves every problem and writes each final error into ``out``."""

    def run() -> None:
        for t, problem in enumerate(problems):
            out[t] = solve(problem)

    return run


@_blas_single_thread
def convex_comparison(config: ConvexComparisonConfig, seed: int = 0) -> ConvexComparisonResult:
    """Convex lifting (``μ = 1/sqrt(s_h s_x)``) vs ThWF on the same tiny instances, with wall times.

    Per ``M`` the two methods solve the same ``trials`` instances side by side in ``config.rounds``
    interleaved rounds on one thread; the first ``M`` starts with a discarded warm-up round (cvxpy's first
    solve pays for its setup), the others follow it warm. Both methods are deterministic: every round gives
    the same errors.
    """
    if not isinstance(config, ConvexComparisonConfig):
        raise TypeError(f"config must be a ConvexComparisonConfig; got {type(config).__name__}")
    seed = check_seed("seed", seed)
    methods = ("convex", "thwf")
    n_m = len(config.m_values)
    final = np.empty((2, n_m, config.trials))
    seconds = np.zeros((2, n_m))
    ratio, spread, timings = np.zeros(n_m), np.zeros((n_m, 2)), []
    mu = 1.0 / config.s  # 1/sqrt(s_h s_x) with s_h = s_x = s

    def solve_convex(problem: Problem) -> float:
        return convex_lifting(problem, mu=mu, solver=config.solver).error

    def solve_thwf(problem: Problem) -> float:
        return thwf(problem, config.s, config.s, max_iter=config.max_iter).errors[-1]

    for j, m in enumerate(config.m_values):
        batch = make_problem_batch(
            config.k, config.n, m, config.s, config.s, config.trials, seed=sub_seed(seed, j)
        )
        problems = [batch.problem(t) for t in range(config.trials)]
        timing = time_interleaved(
            {
                "convex": _solve_each(solve_convex, problems, final[0, j]),
                "thwf": _solve_each(solve_thwf, problems, final[1, j]),
            },
            rounds=config.rounds,
            warmup=1 if j == 0 else 0,
            threads=1,
            reference="thwf",
        )
        seconds[:, j] = [timing.median(name) / config.trials for name in methods]
        ratio[j], spread[j] = timing.ratio("convex", "thwf"), timing.ratio_spread("convex", "thwf")
        timings.append(timing)
    success = (np.nan_to_num(final, nan=np.inf) < SUCCESS_TOLERANCE).mean(axis=-1)
    return ConvexComparisonResult(
        config, methods, np.array(config.m_values), final, success, seconds, ratio, spread, tuple(timings)
    )
