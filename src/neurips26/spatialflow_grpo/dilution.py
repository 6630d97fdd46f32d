"""The dilution toy (claim T1): how much of one region's credit survives in a whole-image advantage.

Take an edit with ``K`` regions whose rewards vary independently across a group, each with the same
variance. Flow-GRPO scores a rollout by the mean ``R = (1/K) Σ_k r_k`` and normalises it in the group; the
region advantage ``A_k`` normalises ``r_k`` alone. Then

    corr(A^scalar, A_k) = Cov(R, r_k) / (std R · std r_k) = (σ²/K) / (σ/√K · σ) = 1/√K,

so with three edit regions only 58 % of a region's signal reaches the update, and a rollout's scalar
advantage has the sign of region k's advantage with probability ``1/2 + arcsin(1/√K)/π`` (a bivariate
normal's quadrant probability): 0.70 for K = 3, against 1 for the region advantage. :func:`dilution_toy`
measures both by simulation, with standard errors from independent replicates.

GRPO normalises within groups of ``G`` rollouts, so the measured correlation is the mean of within-group
sample correlations of ``G`` pairs, which is biased towards 0; its expectation for a bivariate normal with
correlation ρ is (Olkin & Pratt, 1958)

    E[r] = Γ(G/2)² / (Γ((G − 1)/2) Γ((G + 1)/2)) · ρ · ₂F₁(1/2, 1/2; (G + 1)/2; ρ²)

(:func:`expected_correlation`; 0.548 for K = 3 and G = 8, against 1/√3 = 0.577).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from scipy.special import gammaln, hyp2f1

from neurips26.rl import group_advantages
from neurips26.validation import check_int, check_seed


@dataclass(frozen=True)
class DilutionResult:
    """For ``regions`` K and ``group_size`` G: the measured correlation of the scalar and the region advantage
    (mean over ``replicates`` and its standard error), the sign agreement (and SE), and the theory."""

    regions: int
    correlation: float
    correlation_se: float
    sign_agreement: float
    sign_agreement_se: float
    replicates: int
    group_size: int

    @property
    def theory(self) -> float:
        """``1/√K``."""
        return 1.0 / math.sqrt(self.regions)

    @property
    def expected(self) -> float:
        """The expected within-group correlation for this group size (:func:`expected_correlation`)."""
        return expected_correlation(self.regions, self.group_size)

    @property
    def theory_sign(self) -> float:
        """``1/2 + arcsin(1/√K)/π``."""
        return 0.5 + math.asin(self.theory) / math.pi


def dilution_toy(
    regions: int, *, groups: int = 256, group_size: int = 8, replicates: int = 20, seed: int = 0
) -> DilutionResult:
    """Simulate ``replicates`` batches of ``groups`` groups of ``group_size`` rollouts with ``regions``
    i.i.d. standard-normal region rewards; correlate region 1's advantage with the scalar mean's."""
    regions = check_int("regions", regions, minimum=1)
    groups = check_int("groups", groups, minimum=1)
    group_size = check_int("group_size", group_size, minimum=2)
    replicates = check_int("replicates", replicates, minimum=2)
    generator = torch.Generator().manual_seed(check_seed("seed", seed))
    corr, sign = [], []
    for _ in range(replicates):
        r = torch.randn(groups, group_size, regions, generator=generator, dtype=torch.float64)
        region = group_advantages(r, clip=None)[..., 0].reshape(-1)
        scalar = group_advantages(r.mean(-1), clip=None).reshape(-1)
        corr.append(float(torch.corrcoef(torch.stack([region, scalar]))[0, 1]))
        sign.append(float((torch.sign(region) == torch.sign(scalar)).double().mean()))
    c, s = np.array(corr), np.array(sign)
    return DilutionResult(
        regions=regions,
        correlation=float(c.mean()),
        correlation_se=float(c.std(ddof=1) / math.sqrt(replicates)),
        sign_agreement=float(s.mean()),
        sign_agreement_se=float(s.std(ddof=1) / math.sqrt(replicates)),
        replicates=replicates,
        group_size=group_size,
    )


def expected_correlation(regions: int, group_size: int) -> float:
    """``E[r]`` of a sample correlation of ``group_size`` pairs at ρ = 1/√``regions`` (module docstring)."""
    rho = 1.0 / math.sqrt(check_int("regions", regions, minimum=1))
    n = check_int("group_size", group_size, minimum=3)
    if rho == 1.0:
        return 1.0
    scale = math.exp(2 * gammaln(n / 2) - gammaln((n - 1) / 2) - gammaln((n + 1) / 2))
    return float(scale * rho * hyp2f1(0.5, 0.5, (n + 1) / 2, rho**2))
