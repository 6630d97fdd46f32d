"""Baselines of chapter 01: dense RGD (Li et al.), SPF (Lee–Wu–Bresler), convex lifting."""

from neurips26.thwf.baselines.convex import ConvexResult, convex_lifting
from neurips26.thwf.baselines.rgd import BaselineResult, project_incoherent, rgd, rgd_batch
from neurips26.thwf.baselines.spf import hard_thresholding_pursuit, spf, spf_batch

__all__ = [
    "BaselineResult",
    "ConvexResult",
    "convex_lifting",
    "hard_thresholding_pursuit",
    "project_incoherent",
    "rgd",
    "rgd_batch",
    "spf",
    "spf_batch",
]
