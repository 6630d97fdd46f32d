"""The criteria that decide the claims D1–D7 of chapter 05, built from the experiments' results.

Each function takes one result of :mod:`neurips26.ssd.experiments` and returns the criteria
(:mod:`neurips26.criteria`) of its claim, with the thresholds written down before the run; the claims
notebook passes them to :func:`~neurips26.criteria.decide` (one run) or
:func:`~neurips26.criteria.decide_over_seeds` (one list per seed).

* D1 :func:`covariance_criteria` — per (data set, η): share of entries beyond 3 SE ≤ ``max_fraction``, and
  the largest ``|z|`` ≤ the Bonferroni bound.
* D2 :func:`spectrum_criteria` — per η: the worst ``|β_i/(1 − η)² − 1|`` over the top modes ≤ 0.25, and the
  mean ``β`` of the last modes over that of the top modes > 2.
* D3 :func:`quality_criteria` — proxy FID of SSD over that of ``η = 0`` ≤ 1.15.
* D4–D7 — "SSD lower than ``η = 0``" as a difference ``SSD − η = 0 < 0``
  (:func:`~neurips26.criteria.lower`), its margin relative to the larger of the two values compared.
"""

from __future__ import annotations

import math

from neurips26.criteria import Criterion, above, at_most, lower
from neurips26.ssd.experiments import (
    BetaSpectrumResult,
    ConsistencyResult,
    CovarianceCheckResult,
    MemorisationResult,
    PopulationScoreResult,
    QualityResult,
    StabilityResult,
)

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


def quality_criteria(result: QualityResult, *, max_ratio: float = 1.15) -> list[Criterion]:
    """D3: proxy FID of SSD (η = 0.98) over the proxy FID of η = 0 ``≤ max_ratio``."""
    if not isinstance(result, QualityResult):
        raise TypeError(f"result must be a QualityResult; got {type(result).__name__}")
    fid = dict(zip(result.models, result.proxy_fid, strict=True))
    ssd, full = fid[SSD_MODEL["digits"]], fid[FULL_MODEL["digits"]]
    return [at_most(f"proxy FID(η = 0.98) / proxy FID(η = 0) ≤ {max_ratio:g}", float(ssd / full), max_ratio)]


def stability_criteria(result: StabilityResult) -> list[Criterion]:
    """D4: SSD's end − best proxy FID below that of η = 0 (unit when both gaps are 0: η = 0's best FID)."""
    if not isinstance(result, StabilityResult):
        raise TypeError(f"result must be a StabilityResult; got {type(result).__name__}")
    gap = dict(zip(result.models, result.end_minus_best, strict=True))
    best = dict(zip(result.models, result.best, strict=True))
    ssd, full = SSD_MODEL["digits64"], FULL_MODEL["digits64"]
    unit = float(best[full]) if best[full] > 0 else 1.0
    return [lower("end − best proxy FID, SSD − η = 0 < 0", gap[ssd], gap[full], unit=unit)]


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
