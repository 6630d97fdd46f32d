"""The criteria that decide chapter 01's claims, built from the experiments' result objects.

Each function turns one run (one seed) of an experiment into the :class:`~neurips26.criteria.Criterion`
list of one claim, with the thresholds and directions fixed before the run; the notebook decides a claim
with :func:`~neurips26.criteria.decide_over_seeds` over the per-seed lists. Every criterion passes exactly
when the boolean check the chapter used before margins were recorded was true; a quantity that cannot be
measured (a boundary outside the grid, a trial without a straight tail) is NaN, and its criterion fails.

Scales (what a relative margin is relative to), where the default ``|threshold|`` does not fit:

* slopes compared with each other: 1, the unit of an exponent (the claimed exponents are 2 and 1);
* ``R²`` against 0.98: 0.02, the room between the threshold and a perfect fit (``R² <= 1``);
* a rise of the rate ``ρ`` between consecutive ``M``: the largest ``ρ`` compared;
* PSNR differences and PSNRs compared (dB): ``10 / ln 10 ≈ 4.34`` dB, so the relative margin is, to first
  order, the relative difference of the mean squared errors behind the two PSNRs.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from neurips26.criteria import Criterion, above, at_least, at_most, below, holds
from neurips26.stats import loglog_fit
from neurips26.thwf.experiments import (
    ConvergenceResult,
    NoiseSweepResult,
    PhaseTransitionConfig,
    PhaseTransitionResult,
)
from neurips26.thwf.image_experiment import DeblurComparison

BOUNDARY_SLOPE_BAND: tuple[float, float] = (0.7, 1.4)
"""``thwf-boundary-linear``: ThWF's M50 slope in this band (claimed: 1)."""
SUPPORT_SLOPE_MIN = 1.3
"""``init-support-slope``: the initialiser's exact-support M50 slope at least this (claimed: 2)."""
GOOD_RATE, ABLATION_MAX = 0.9, 0.5
"""``thresholding-matters``: where ThWF first succeeds ≥ GOOD_RATE, the ablation succeeds ≤ ABLATION_MAX."""
R2_MIN = 0.98
"""``linear-convergence``: every fitted ``R²`` above this."""
NOISE_SLOPE_BAND: tuple[float, float] = (0.8, 1.2)
"""``noise-linear``: log-log slope of the final error vs the noise level in this band."""
DB_SCALE = 10.0 / math.log(10.0)
"""dB per unit of relative MSE change: a PSNR gap over this is the relative MSE difference (first order)."""


PHASE_CLAIM_METHODS: tuple[str, ...] = ("thwf", "rgd", "sparse_init_no_threshold")
"""The phase-transition methods the claims read (SPF and the dense-init ablation only illustrate)."""


def claim_phase_config(config: PhaseTransitionConfig) -> PhaseTransitionConfig:
    """``config`` with only :data:`PHASE_CLAIM_METHODS`: a further seed's run for the claims, cheaper.

    Every method runs on the same batch and none depends on another, so each of these methods gives the
    same numbers as in the full run of that seed.
    """
    if not isinstance(config, PhaseTransitionConfig):
        raise TypeError(f"config must be a PhaseTransitionConfig; got {type(config).__name__}")
    return dataclasses.replace(config, methods=PHASE_CLAIM_METHODS)


def _nan_if_not_finite(value: float) -> float:
    value = float(value)
    return value if math.isfinite(value) else float("nan")


def thwf_slope(phase: PhaseTransitionResult) -> float:
    """Log-log slope of ThWF's 50 % success boundary vs ``s`` (NaN with fewer than two boundaries)."""
    return loglog_fit(phase.s_grid, phase.m50("thwf"), skip_invalid=True)[0]


def boundary_linear_criteria(phase: PhaseTransitionResult) -> list[Criterion]:
    """``thwf-boundary-linear``: ThWF's M50 slope ≥ 0.7 and ≤ 1.4 (a slope not fitted fails both)."""
    low, high = BOUNDARY_SLOPE_BAND
    slope = _nan_if_not_finite(thwf_slope(phase))
    return [
        at_least(f"ThWF's M50 slope ≥ {low:g}", slope, low),
        at_most(f"ThWF's M50 slope ≤ {high:g}", slope, high),
    ]


def below_rgd_ratios(phase: PhaseTransitionResult) -> np.ndarray:
    """Per ``s``: ThWF's M50 over RGD's M50 (below 1: ThWF needs fewer measurements).

    Where RGD never reaches 50 % on the grid its boundary lies beyond the largest ``M``, and the ratio is
    bounded by ThWF's M50 over the largest ``M`` (that bound is the value). NaN where ThWF's boundary is not
    on the grid, or RGD's lies below it: no comparison can be made there.
    """
    thwf, rgd = phase.m50("thwf"), phase.m50("rgd")
    rgd_beyond = phase.rates("rgd")[:, -1] < 0.5
    m_max = float(phase.m_grid[-1])
    ratios = np.full(phase.s_grid.size, np.nan)
    for j in range(phase.s_grid.size):
        if not np.isfinite(thwf[j]):
            continue
        if np.isfinite(rgd[j]):
            ratios[j] = thwf[j] / rgd[j]
        elif rgd_beyond[j]:
            ratios[j] = thwf[j] / m_max
    return ratios


def below_rgd_criteria(phase: PhaseTransitionResult) -> list[Criterion]:
    """``thwf-below-rgd``: the largest ratio ThWF M50 / RGD M50 over every ``s`` is below 1.

    The old check was "ThWF's M50 < RGD's M50 at every ``s``"; one ratio that cannot be measured fails it.
    (One edge differs: ThWF's boundary exactly at the largest ``M`` with RGD's beyond the grid gives the
    bound 1, which fails, where the old check passed.)
    """
    ratios = below_rgd_ratios(phase)
    worst = float(np.max(ratios)) if np.all(np.isfinite(ratios)) else float("nan")
    return [below("largest ThWF M50 / RGD M50 over every s < 1", worst, 1.0)]


def first_good(phase: PhaseTransitionResult) -> dict[int, tuple[int, float] | None]:
    """Per ``s``: ThWF's first ``M`` with success ≥ 90 % and the no-threshold rate there, or None."""
    out: dict[int, tuple[int, float] | None] = {}
    for j, s in enumerate(phase.s_grid):
        good = np.nonzero(phase.rates("thwf")[j] >= GOOD_RATE)[0]
        if good.size == 0:
            out[int(s)] = None
            continue
        k = good[0]
        out[int(s)] = (int(phase.m_grid[k]), float(phase.rates("sparse_init_no_threshold")[j, k]))
    return out


def thresholding_criteria(phase: PhaseTransitionResult) -> list[Criterion]:
    """``thresholding-matters``: one criterion per ``s`` (NaN, failing, where ThWF never reaches 90 %)."""
    return [
        at_most(
            f"s={s}: no-threshold success at ThWF's first ≥ 90 % M ≤ {ABLATION_MAX:g}",
            float("nan") if point is None else point[1],
            ABLATION_MAX,
        )
        for s, point in first_good(phase).items()
    ]


def support_slope_criteria(support_slope: float, thwf_boundary_slope: float) -> list[Criterion]:
    """``init-support-slope``: the support slope exceeds ThWF's success slope, and is at least 1.3."""
    support_slope = _nan_if_not_finite(support_slope)
    gap = support_slope - _nan_if_not_finite(thwf_boundary_slope)
    return [
        above("support M50 slope − ThWF success slope > 0", gap, 0.0, scale=1.0),
        at_least(f"support M50 slope ≥ {SUPPORT_SLOPE_MIN:g}", support_slope, SUPPORT_SLOPE_MIN),
    ]


def convergence_criteria(conv: ConvergenceResult) -> list[Criterion]:
    """``linear-convergence``: worst ThWF ``R²`` > 0.98 (every trial fitted), ``ρ < 1`` and non-increasing."""
    r2 = conv.r2[conv.methods.index("thwf")]
    worst_r2 = float(np.min(r2)) if np.all(np.isfinite(r2)) else float("nan")  # an unfitted trial fails
    rho = conv.median_rho("thwf")
    finite = bool(np.all(np.isfinite(rho)))
    criteria = [
        above(f"worst ThWF R² over every M and trial > {R2_MIN:g}", worst_r2, R2_MIN, scale=1.0 - R2_MIN),
        below("largest ThWF median ρ over M < 1", float(np.max(rho)) if finite else float("nan"), 1.0),
    ]
    if rho.size < 2:
        criteria.append(holds("ThWF median ρ non-increasing in M (one M only)", finite))
    else:
        rise = float(np.max(np.diff(rho))) if finite else float("nan")
        scale = float(np.max(rho)) if finite and np.max(rho) > 0 else 1.0
        criteria.append(at_most("largest rise of ThWF median ρ to the next M ≤ 0", rise, 0.0, scale=scale))
    return criteria


def noise_criteria(noise: NoiseSweepResult) -> list[Criterion]:
    """``noise-linear``: log-log slope ≥ 0.8 and ≤ 1.2; the largest final error finite and < 1."""
    low, high = NOISE_SLOPE_BAND
    slope = _nan_if_not_finite(noise.slope)
    errors = noise.final_error
    largest = float(np.max(errors)) if np.all(np.isfinite(errors)) else float("nan")
    return [
        at_least(f"log-log slope ≥ {low:g}", slope, low),
        at_most(f"log-log slope ≤ {high:g}", slope, high),
        below("largest final error < 1 (no run diverged; 1 = the zero estimate)", largest, 1.0),
    ]


def psnr_order_criteria(deblur: Sequence[DeblurComparison]) -> list[Criterion]:
    """``image-psnr-order`` over the image seeds: median PSNRs ordered, and the ordering on every seed."""
    if not deblur:
        raise ValueError("deblur must hold at least one DeblurComparison")
    psnr = {key: np.array([d.methods[key].psnr for d in deblur]) for key in ("blurred", "dense_wf", "thwf")}
    median = {key: float(np.median(v)) for key, v in psnr.items()}
    gap = np.minimum(psnr["thwf"] - psnr["dense_wf"], psnr["dense_wf"] - psnr["blurred"])
    return [
        above("median PSNR: ThWF > dense WF (dB)", median["thwf"], median["dense_wf"], scale=DB_SCALE),
        above("median PSNR: dense WF > blurred (dB)", median["dense_wf"], median["blurred"], scale=DB_SCALE),
        above(
            "smallest PSNR step of ThWF > dense WF > blurred over the seeds > 0 dB",
            float(np.min(gap)),
            0.0,
            scale=DB_SCALE,
        ),
    ]


def by_kernel_case(per_case: dict[str, list[Criterion]]) -> list[Criterion]:
    """One claim's criteria for each kernel case (``"random"``, ``"centred"``), names prefixed by the case.

    The image claims are decided on both kinds of kernel side by side with the same thresholds:
    *reproduced* needs every criterion of both cases, *partly* some of them.
    """
    if not isinstance(per_case, dict) or not per_case:
        raise ValueError("per_case must be a non-empty dict of case -> criteria")
    return [
        dataclasses.replace(c, name=f"{case} supports: {c.name}")
        for case, criteria in per_case.items()
        for c in criteria
    ]


def kernel_support_criteria(deblur: Sequence[DeblurComparison]) -> list[Criterion]:
    """``image-kernel-support``: ThWF's exact kernel support on at least half of the image seeds."""
    if not deblur:
        raise ValueError("deblur must hold at least one DeblurComparison")
    exact = sum(d.methods["thwf"].kernel_support_recovered for d in deblur)
    return [at_least("seeds with ThWF's exact kernel support ≥ half of the seeds", exact, len(deblur) / 2)]
