"""The criteria that decide the claims D1–D7 of chapter 05, built from the experiments' results.

Each function takes one result of a claim experiment (:mod:`~neurips26.ssd.covariance_checks`,
:mod:`~neurips26.ssd.sample_quality`, :mod:`~neurips26.ssd.small_data`, :mod:`~neurips26.ssd.field_score`,
:mod:`~neurips26.ssd.twin_consistency`) and returns the criteria
(:mod:`neurips26.criteria`) of its claim, with the thresholds written down before the run; the claims
notebook passes them to :func:`~neurips26.criteria.decide` (one run) or
:func:`~neurips26.criteria.decide_over_seeds` (one list per seed).

* D1 :func:`covariance_criteria` — per (data set, η): share of entries beyond 3 SE ≤ ``max_fraction``, and
  the largest ``|z|`` ≤ the Bonferroni bound.
* D2 :func:`spectrum_criteria` — per η: the worst ``|β_i/(1 − η)² − 1|`` over the top modes ≤ 0.25, and the
  mean ``β`` of the last modes over that of the top modes > 2.
* D3 :func:`quality_criteria` — proxy FID of SSD over that of ``η = 0`` ≤ 1.15, decided on a 95 % interval
  over independent sample sets: both ends below → reproduced, the interval across 1.15 → partly.
* D4 :func:`stability_criteria` — SSD's tail gap (mean of the last logged values − best) below that of
  ``η = 0``, by more than the sampling noise of the difference (both ends of its 95 % interval < 0).
* D5–D7 — "SSD lower than ``η = 0``" as a difference ``SSD − η = 0 < 0``
  (:func:`~neurips26.criteria.lower`), its margin relative to the larger of the two values compared.
"""

from __future__ import annotations

import math

import scipy.stats

from neurips26.criteria import Criterion, above, at_most, below, lower
from neurips26.ssd.covariance_checks import BetaSpectrumResult, CovarianceCheckResult
from neurips26.ssd.field_score import PopulationScoreResult
from neurips26.ssd.sample_quality import QualityResult
from neurips26.ssd.small_data import MemorisationResult, StabilityResult
from neurips26.ssd.twin_consistency import ConsistencyResult
from neurips26.validation import check_float, check_int

SSD_MODEL = {
    "digits": "digits-eta0.98",
    "digits64": "digits64-eta0.98",
    "twins": "twins-eta0.98",
}
"""The SSD row (η = 0.98) of each family of checkpointed models."""
FULL_MODEL = {"digits": "digits-eta0", "digits64": "digits64-eta0", "twins": "twins-eta0"}
"""The full-supervision row (η = 0) of each family, the baseline every claim compares SSD with."""


def covariance_criteria(result: CovarianceCheckResult) -> list[Criterion]:
    """D1: per data set and η, share beyond 3 SE ≤ ``max_fraction`` and max ``|z|`` ≤ the Bonferroni bound.

    Together they pass exactly when :attr:`CovarianceCheckResult.passed` is true in every cell. A
    ``|z| = inf`` (an entry with zero standard error that misses the formula) is recorded as a failed
    measurement.
    """
    if not isinstance(result, CovarianceCheckResult):
        raise TypeError(f"result must be a CovarianceCheckResult; got {type(result).__name__}")
    limit = result.config.max_fraction
    out = []
    for i, ds in enumerate(result.datasets):
        for j, eta in enumerate(result.etas):
            fraction = float(result.fraction_beyond_3se[i, j])
            max_z = float(result.max_abs_z[i, j])
            out.append(
                at_most(
                    f"{ds}, η = {eta:g}: share beyond 3 SE ≤ {limit:.0%}",
                    fraction,
                    limit,
                    scale=None if limit > 0 else 1.0 / float(result.n_entries[i]),
                )
            )
            out.append(
                at_most(
                    f"{ds}, η = {eta:g}: max |z| ≤ Bonferroni bound",
                    max_z if math.isfinite(max_z) else float("nan"),
                    result.bound,
                )
            )
    return out


def spectrum_criteria(
    result: BetaSpectrumResult, *, top: int = 10, tolerance: float = 0.25, factor: float = 2.0
) -> list[Criterion]:
    """D2: per η, ``max_i |β_i/(1 − η)² − 1| ≤ tolerance`` over the ``top`` largest modes, and the mean β
    of the ``top`` smallest kept modes over the mean of the ``top`` largest ``> factor``."""
    if not isinstance(result, BetaSpectrumResult):
        raise TypeError(f"result must be a BetaSpectrumResult; got {type(result).__name__}")
    if not isinstance(top, int) or not 1 <= top <= result.eigenvalues.size:
        raise ValueError(f"top must be an int in [1, {result.eigenvalues.size}]; got {top!r}")
    out = []
    for k, eta in enumerate(result.etas):
        ratio = result.beta[k, :top] / result.floor[k]
        out.append(
            at_most(
                f"η = {eta:g}: worst |β_i/(1 − η)² − 1| over the top {top} ≤ {tolerance:g}",
                float(abs(ratio - 1.0).max()),
                tolerance,
            )
        )
        out.append(
            above(
                f"η = {eta:g}: mean β of the last {top} / mean β of the top {top} > {factor:g}",
                float(result.beta[k, -top:].mean() / result.beta[k, :top].mean()),
                factor,
            )
        )
    return out


def t_half_width(sd: float, n: int, df: int, level: float = 0.95) -> float:
    """``t_{(1+level)/2, df} · sd / √n``: the half-width of a two-sided Student-t interval.

    ``sd`` is a standard deviation estimated with ``df`` degrees of freedom; ``n`` the number of values
    averaged (1 for a single value).
    """
    sd = check_float("sd", sd, minimum=0.0)
    n = check_int("n", n, minimum=1)
    df = check_int("df", df, minimum=1)
    level = check_float("level", level, minimum=0.0, maximum=1.0, strict_min=True)
    if level >= 1.0:
        raise ValueError(f"level must be < 1 (an interval of finite width); got {level}")
    return float(scipy.stats.t.ppf(0.5 + level / 2.0, df) * sd / math.sqrt(n))


def quality_criteria(
    result: QualityResult, *, max_ratio: float = 1.15, level: float = 0.95
) -> list[Criterion]:
    """D3: proxy FID(η = 0.98) / proxy FID(η = 0) ≤ ``max_ratio``, read as a ``level`` interval over sets.

    Per sample set ``r`` the ratio ``ρ_r`` is paired (both models start from the same noise); the interval
    is ``mean ± t · sd/√R`` over the ``R`` sets. Two criteria: its upper end ``≤ max_ratio`` (competitive
    beyond the sampling noise) and its lower end ``≤ max_ratio`` (not worse beyond it). Both pass →
    reproduced; only the second → partly (the interval holds the threshold: the noise cannot decide);
    neither → not reproduced.
    """
    if not isinstance(result, QualityResult):
        raise TypeError(f"result must be a QualityResult; got {type(result).__name__}")
    if tuple(result.set_models) != (FULL_MODEL["digits"], SSD_MODEL["digits"]):
        raise ValueError(
            f"result must hold sample sets of {FULL_MODEL['digits']} and {SSD_MODEL['digits']}; "
            f"got {result.set_models}"
        )
    ratios = result.set_ratio
    if ratios.size < 2:
        raise ValueError(f"result must hold at least 2 sample sets; got {ratios.size}")
    mean = float(ratios.mean())
    half = t_half_width(float(ratios.std(ddof=1)), ratios.size, ratios.size - 1, level)
    what = f"ratio SSD / η = 0 (mean of {ratios.size} sample sets)"
    pct = f"{100 * level:g} %"
    return [
        at_most(f"{what} + {pct} half-width ≤ {max_ratio:g}", mean + half, max_ratio),
        at_most(f"{what} − {pct} half-width ≤ {max_ratio:g}", mean - half, max_ratio),
    ]


def stability_noise(result: StabilityResult, level: float = 0.95) -> tuple[float, float, float]:
    """D4's difference of tail gaps (SSD − η = 0), its standard deviation and its ``level`` half-width.

    Each logged value is one proxy FID on a sample set, with the single-set standard deviation ``s`` of its
    model measured on ``R`` independent sets (:attr:`StabilityResult.set_fid`). Treating the logged values
    as independent, ``var(tail mean) = s²/k`` for a tail of ``k`` values and ``var(best) ≈ s²``, so
    ``sd(gap SSD − gap η = 0) = √((s_SSD² + s_0²)(1/k + 1))``, with ``2(R − 1)`` degrees of freedom.
    """
    if not isinstance(result, StabilityResult):
        raise TypeError(f"result must be a StabilityResult; got {type(result).__name__}")
    ssd, full = SSD_MODEL["digits64"], FULL_MODEL["digits64"]
    spread = result.config.spread_models
    if ssd not in spread or full not in spread:
        raise ValueError(f"result must hold sample sets of {full} and {ssd}; got {spread}")
    gap = dict(zip(result.models, result.tail_gap, strict=True))
    sd = {n: float(result.set_fid[i].std(ddof=1)) for i, n in enumerate(spread)}
    k, sets = result.config.tail, result.set_fid.shape[1]
    sd_diff = math.sqrt((sd[ssd] ** 2 + sd[full] ** 2) * (1.0 / k + 1.0))
    return float(gap[ssd] - gap[full]), sd_diff, t_half_width(sd_diff, 1, 2 * (sets - 1), level)


def stability_criteria(result: StabilityResult, *, level: float = 0.95) -> list[Criterion]:
    """D4: SSD's tail gap (mean of the last logged values − best) below that of η = 0, beyond the noise.

    With ``Δ`` the difference of the tail gaps and ``h`` its ``level`` half-width
    (:func:`stability_noise`): ``Δ + h < 0`` (lower beyond the noise) and ``Δ − h < 0`` (not higher
    beyond it). Both → reproduced; only the second → partly (undecided within the noise); neither → not
    reproduced. Margins are relative to the larger of the two gaps (unit: η = 0's best proxy FID).
    """
    delta, _, half = stability_noise(result, level)
    gap = dict(zip(result.models, result.tail_gap, strict=True))
    best = dict(zip(result.models, result.best, strict=True))
    ssd, full = SSD_MODEL["digits64"], FULL_MODEL["digits64"]
    size = max(abs(float(gap[ssd])), abs(float(gap[full])))
    scale = size if size > 0 else (float(best[full]) if best[full] > 0 else 1.0)
    what = f"tail gap (mean of last {result.config.tail} − best), SSD − η = 0"
    pct = f"{100 * level:g} %"
    return [
        below(f"{what}, + {pct} half-width < 0", delta + half, 0.0, scale=scale),
        below(f"{what}, − {pct} half-width < 0", delta - half, 0.0, scale=scale),
    ]


def memorisation_criteria(result: MemorisationResult) -> list[Criterion]:
    """D5: SSD's memorisation rate below that of η = 0 (unit when both are 0: one sample, 1/n_samples)."""
    if not isinstance(result, MemorisationResult):
        raise TypeError(f"result must be a MemorisationResult; got {type(result).__name__}")
    rate = dict(zip(result.models, result.rates, strict=True))
    ssd, full = SSD_MODEL["digits64"], FULL_MODEL["digits64"]
    return [
        lower(
            "memorisation rate, SSD − η = 0 < 0",
            rate[ssd],
            rate[full],
            unit=1.0 / result.config.n_samples,
        )
    ]


def population_criteria(result: PopulationScoreResult, *, n: int = 64, eta: float = 0.98) -> list[Criterion]:
    """D6: the relative score error at ``N = n`` below that of η = 0 (unit: 1, the error of a zero score)."""
    if not isinstance(result, PopulationScoreResult):
        raise TypeError(f"result must be a PopulationScoreResult; got {type(result).__name__}")
    return [
        lower(
            f"relative score error at N = {n}, SSD − η = 0 < 0",
            result.at(n, eta),
            result.at(n, 0.0),
            unit=1.0,
        )
    ]


def consistency_criteria(result: ConsistencyResult) -> list[Criterion]:
    """D7: SSD's mean twin-blob asymmetry and mean colour mismatch each below those of η = 0 (unit: 1)."""
    if not isinstance(result, ConsistencyResult):
        raise TypeError(f"result must be a ConsistencyResult; got {type(result).__name__}")
    i0, i1 = result.models.index(FULL_MODEL["twins"]), result.models.index(SSD_MODEL["twins"])
    return [
        lower(
            "mean asymmetry, SSD − η = 0 < 0",
            result.mean_asymmetry[i1],
            result.mean_asymmetry[i0],
            unit=1.0,
        ),
        lower(
            "mean colour mismatch, SSD − η = 0 < 0",
            result.mean_mismatch[i1],
            result.mean_mismatch[i0],
            unit=1.0,
        ),
    ]
