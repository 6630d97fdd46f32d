"""The statistics of the chapter: Wilson intervals, Gini of per-step utility, cell health, correlation.

- :func:`wilson`: the 95 % Wilson score interval of ``s`` successes in ``N`` trials,
  ``(p̂ + z²/2N ± z √(p̂(1−p̂)/N + z²/4N²)) / (1 + z²/N)``, clipped to ``[0, 1]`` (41 of 41 → [0.914, 1]).
- :func:`gini`: ``G(x) = Σ_k Σ_l |x_k − x_l| / (2 n² x̄)`` of non-negative values (0 when equal,
  ``(n−1)/n`` when one value holds everything); a chain's utilities are clipped at 0 first
  (:func:`chain_gini`) and a cell's Gini is the mean over chains with positive mass.
- :func:`is_healthy`: a cell counts when it has at least 50 chains, at most 10 % parse failures, a base
  accuracy in ``[0.1, 0.9]`` and a median of at least three steps.
- :func:`pearson` with a bootstrap interval over cells; :func:`mean_bootstrap`, the interval of a mean.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import bootstrap

from neurips26.stats import Z95 as Z95  # shared since chapter 14 needed them too
from neurips26.stats import wilson as wilson
from neurips26.validation import check_int, check_seed


def gini(x: np.ndarray) -> float:
    """Gini coefficient of non-negative values ``x`` with a positive sum (``ValueError`` otherwise)."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or x.size == 0 or np.isnan(x).any() or (x < 0).any() or x.sum() <= 0:
        raise ValueError("x must be a non-empty 1-D array of non-negative values with a positive sum")
    n = x.size
    return float(np.abs(x[:, None] - x[None, :]).sum() / (2 * n * n * x.mean()))


def chain_gini(utility: np.ndarray) -> np.ndarray:
    """Per-chain Gini of the clipped utilities ``max(U_k, 0)`` over each chain's steps (NaN padding
    ignored); NaN for a chain without positive mass. ``utility``: ``(C, n_max)``."""
    out = np.full(len(utility), np.nan)
    for c, row in enumerate(utility):
        x = np.clip(row[~np.isnan(row)], 0, None)
        if x.size and x.sum() > 0:
            out[c] = gini(x)
    return out


def cell_gini(utility: np.ndarray) -> float:
    """A cell's Gini: the mean of :func:`chain_gini` over chains with positive mass (NaN without any)."""
    g = chain_gini(utility)
    return float(np.nanmean(g)) if np.isfinite(g).any() else float("nan")


MIN_CHAINS = 50
MAX_PARSE_FAIL = 0.10
ACCURACY_RANGE = (0.10, 0.90)
MIN_MEDIAN_STEPS = 3


def is_healthy(n_chains: int, parse_fail: float, accuracy: float, median_steps: float) -> bool:
    """Whether a cell enters the headline statistics (module doc)."""
    return (
        n_chains >= MIN_CHAINS
        and parse_fail <= MAX_PARSE_FAIL
        and ACCURACY_RANGE[0] <= accuracy <= ACCURACY_RANGE[1]
        and median_steps >= MIN_MEDIAN_STEPS
    )


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson correlation of two equal-length samples (at least 3, not constant)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 3:
        raise ValueError("x and y must be 1-D samples of one length >= 3")
    if np.std(x) == 0 or np.std(y) == 0:
        raise ValueError("x and y must not be constant")
    return float(np.corrcoef(x, y)[0, 1])


def pearson_bootstrap(
    x: np.ndarray, y: np.ndarray, *, draws: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of :func:`pearson` over resampled pairs (constant draws skipped)."""
    draws = check_int("draws", draws, minimum=10)
    rng = np.random.default_rng(check_seed("seed", seed))
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    values = []
    for _ in range(draws):
        i = rng.integers(0, len(x), len(x))
        if np.std(x[i]) > 0 and np.std(y[i]) > 0:
            values.append(np.corrcoef(x[i], y[i])[0, 1])
    lo, hi = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def mean_bootstrap(
    x: np.ndarray, *, draws: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``x`` (at least 2 finite values), by scipy."""
    draws = check_int("draws", draws, minimum=10)
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or x.size < 2 or not np.isfinite(x).all():
        raise ValueError("x must be a 1-D sample of at least 2 finite values")
    result = bootstrap(
        (x,),
        np.mean,
        n_resamples=draws,
        confidence_level=level,
        method="percentile",
        rng=np.random.default_rng(check_seed("seed", seed)),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)
