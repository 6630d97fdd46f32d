"""The criteria that decide chapter 11's claims, with margins fixed before the default sweep was scored.

Cells are the healthy (family, benchmark) cells of the sweep; gaps are in fractions (a percentage point,
pp, is 0.01).

* oracle-positive :func:`oracle_positive_criteria` — the share of healthy cells with a positive held-out
  oracle gap is at least :data:`POSITIVE_SHARE` (0.9) and its Wilson lower bound at least
  :data:`POSITIVE_WILSON` (0.75).
* oracle-gap :func:`oracle_gap_criteria` — the mean held-out gap's 95 % bootstrap interval over cells lies
  above 0.
* sparsity :func:`sparsity_criteria` — at least :data:`SPARSE_SHARE` (80 %) of healthy cells have a Gini
  of at least :data:`SPARSE_GINI` (0.8), for the allocation reading ``U_k`` and for the incremental
  reading ``u_k`` (each a criterion: one reading alone gives "partly").
* gini-gap :func:`gini_gap_criteria` — cell Gini and oracle gap are negatively correlated: Pearson
  ``r < 0`` with the bootstrap interval's upper end below 0.
* router :func:`router_criteria` — the listwise router's mean gated GR on held-out families is at least
  :data:`ROUTER_GR` (0.03) and above each ablation's.
* inversion :func:`inversion_criteria` — the pointwise router's pooled AUC@10 exceeds
  :data:`INVERSION_AUC` (0.6) while its gated GR is at least :data:`INVERSION_GAP` (0.03) below the
  listwise router's.
* winners-curse (ours) :func:`winners_curse_criteria` — reusing the selection resamples inflates the
  gap at every ``r``, most at the smallest.
* finite-sample-sparsity (ours) :func:`finite_sample_criteria` — the Gini from ``r/2`` resamples exceeds
  the exact Gini in at least :data:`FINITE_SHARE` (80 %) of healthy cells.
"""

from __future__ import annotations

import numpy as np

from neurips26.criteria import Criterion, at_least, at_most, higher
from neurips26.expansion_utility.stats import wilson

POSITIVE_SHARE = 0.9
POSITIVE_WILSON = 0.75
SPARSE_GINI = 0.8
SPARSE_SHARE = 0.8
ROUTER_GR = 0.03
INVERSION_AUC = 0.6
INVERSION_GAP = 0.03
FINITE_SHARE = 0.8
GR = 0.01  # the natural unit of a GR difference

CLAIM_IDS = (
    "oracle-positive",
    "oracle-gap",
    "sparsity",
    "gini-gap",
    "router",
    "inversion",
    "winners-curse",
    "finite-sample-sparsity",
)


def oracle_positive_criteria(gaps: np.ndarray) -> list[Criterion]:
    positive = int((np.asarray(gaps) > 0).sum())
    lo, _ = wilson(positive, len(gaps))
    return [
        at_least(
            f"share of healthy cells with a positive gap ≥ {POSITIVE_SHARE}",
            positive / len(gaps),
            POSITIVE_SHARE,
        ),
        at_least(f"Wilson lower bound ≥ {POSITIVE_WILSON}", lo, POSITIVE_WILSON),
    ]


def oracle_gap_criteria(ci_low: float) -> list[Criterion]:
    return [at_least("lower end of the mean gap's bootstrap interval > 0", ci_low, 0.0, scale=0.01)]


def sparsity_criteria(gini_u: np.ndarray, gini_inc: np.ndarray) -> list[Criterion]:
    share = lambda g: float(np.mean(np.asarray(g) >= SPARSE_GINI))  # noqa: E731
    return [
        at_least(
            f"cells with Gini(U_k) ≥ {SPARSE_GINI}: share ≥ {SPARSE_SHARE:.0%}", share(gini_u), SPARSE_SHARE
        ),
        at_least(
            f"cells with Gini(u_k) ≥ {SPARSE_GINI}: share ≥ {SPARSE_SHARE:.0%}", share(gini_inc), SPARSE_SHARE
        ),
    ]


def gini_gap_criteria(r: float, ci_high: float) -> list[Criterion]:
    return [
        at_most("Pearson r(Gini, gap) < 0", r, 0.0, scale=0.1),
        at_most("upper end of its bootstrap interval < 0", ci_high, 0.0, scale=0.1),
    ]


def router_criteria(listwise: float, ablations: dict[str, float]) -> list[Criterion]:
    return [
        at_least(f"listwise router's gated GR ≥ {ROUTER_GR}", listwise, ROUTER_GR),
        *(higher(f"listwise > {name}", listwise, value, unit=GR) for name, value in ablations.items()),
    ]


def inversion_criteria(auc: float, pointwise: float, listwise: float) -> list[Criterion]:
    return [
        at_least(f"pointwise AUC@10 > {INVERSION_AUC}", auc, INVERSION_AUC),
        at_least(f"listwise − pointwise gated GR ≥ {INVERSION_GAP}", listwise - pointwise, INVERSION_GAP),
    ]


def winners_curse_criteria(curse: dict[int, dict[str, float]]) -> list[Criterion]:
    rs = sorted(curse)
    bias = {r: curse[r]["reused"] - curse[r]["held_out"] for r in rs}
    return [
        *(at_least(f"r={r}: reused − held-out gap > 0", bias[r], 0.0, scale=0.01) for r in rs),
        at_least(
            f"bias at r={rs[0]} − largest other", bias[rs[0]] - max(bias[r] for r in rs[1:]), 0.0, scale=0.01
        ),
    ]


def finite_sample_criteria(gini_r: np.ndarray, gini_exact: np.ndarray) -> list[Criterion]:
    share = float(np.mean(np.asarray(gini_r) > np.asarray(gini_exact)))
    return [at_least(f"cells with Gini(r/2) > exact: share ≥ {FINITE_SHARE:.0%}", share, FINITE_SHARE)]
