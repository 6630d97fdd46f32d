"""The criteria that decide the claims L and D1–D9 of chapter 10, built from the experiments' results.

Each function takes a result of :mod:`neurips26.specblock.experiments` (the decoding suite, the slot
accuracies or the domain-shift stream) and returns the criteria (:mod:`neurips26.criteria`) of its claim,
with the thresholds the chapter fixed before its first run; the claims notebook passes them to
:func:`~neurips26.criteria.decide` (claims on the trained drafters: one seed) or
:func:`~neurips26.criteria.decide_over_seeds` (D8: one list per seed of the stream).

* L :func:`lossless_criteria` — every method × budget run equals vanilla greedy decoding (an exact fact).
* D1 :func:`drafting_cost_criteria` — drafter forwards per iteration SpecBlock < EAGLE-3; drafting cost
  per iteration SpecBlock / EAGLE-3 ≤ 0.6 in the cost model and in CPU seconds (paired rounds).
* D2 :func:`speedup_criteria` — cost-model speedup SpecBlock ≥ EAGLE-3 at the paper's budgets and at
  equal ``N``.
* D3 :func:`path_dependence_criteria` — τ SpecBlock > τ Medusa; the acceptance gap over Medusa larger at
  depths 4–6 than at depths 1–2.
* D4 :func:`shift_criteria`, D7 :func:`valid_prefix_criteria` — mean accuracy (D4) or conditional
  accuracy (D7) of slots 1–3 higher than the ablation's.
* D5 :func:`multi_block_criteria`, D6 :func:`rank_head_criteria` — τ higher than the ablation's.
* D9 :func:`strict_linear_criteria` — τ and cost-model speedup of the dynamic tree > the strict-linear
  chain's (same drafter, no branching).
* D8 :func:`adaptation_criteria` — τ after the shift bandit > static; updates bandit < every window.

"A higher than B", with both measured, is written as ``A − B > 0`` (:func:`higher`, :func:`lower`): it
passes exactly when ``A > B``, and its margin is read against the larger of ``|A|`` and ``|B|``, the size
of the quantities compared (a stated natural ``unit`` stands in only when both are 0).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from neurips26.criteria import (
    Criterion,
    at_most,
    higher,
    higher_or_equal,
    holds,
    lower,
)
from neurips26.specblock.adaptation import StreamResult
from neurips26.specblock.experiments import MethodResult, SlotAccuracy, SuiteResult, per_depth_acceptance

#: D1 (b) and (c): SpecBlock's drafting cost per iteration at most this fraction of EAGLE-3's.
MAX_COST_RATIO = 0.6
#: D3: the depth bands whose mean acceptance gaps (SpecBlock − Medusa) are compared (1-based, inclusive).
SHALLOW_DEPTHS: tuple[int, int] = (1, 2)
DEEP_DEPTHS: tuple[int, int] = (4, 6)


def _check_suite(suite: object) -> SuiteResult:
    if not isinstance(suite, SuiteResult):
        raise TypeError(f"suite must be a SuiteResult; got {type(suite).__name__}")
    return suite


def lossless_criteria(suite: SuiteResult) -> tuple[list[Criterion], list[str]]:
    """L: every non-vanilla run of ``suite`` returns vanilla's tokens on every prompt (an exact fact).

    Returns the criteria and the runs that differ (``'method @ N=budget'``; empty when lossless).
    """
    rows = [r for r in _check_suite(suite).rows if r.method != "vanilla"]
    prompts = len(suite.row("vanilla", 0).tokens)
    mismatch = [f"{r.method} @ N={r.budget}" for r in rows if not r.lossless]
    name = f"all {len(rows)} method × budget runs on {prompts} prompts equal vanilla greedy decoding"
    return [holds(name, not mismatch)], mismatch


def median_draft_ms(row: MethodResult) -> float:
    """Drafter ms per iteration on this CPU: forwards per iteration × median ms of one forward."""
    return row.drafter_forwards * row.t_d_ms


def drafting_cost_criteria(
    suite: SuiteResult, n_specblock: int, n_eagle: int, *, max_ratio: float = MAX_COST_RATIO
) -> list[Criterion]:
    """D1 at SpecBlock's budget ``n_specblock`` and EAGLE-3's ``n_eagle``: (a) drafter forwards per iteration
    SpecBlock < EAGLE-3 (unit: one forward); (b) drafting cost per iteration in the cost model, SpecBlock /
    EAGLE-3 ≤ ``max_ratio``; (c) the same in CPU seconds: the median over the interleaved timing rounds of
    the two drafters' paired ratio of seconds per iteration
    (:meth:`~.experiments.SuiteResult.drafting_ratio`)."""
    sb, e3 = _check_suite(suite).row("specblock", n_specblock), suite.row("eagle3", n_eagle)
    tag = f"SpecBlock@{sb.budget} vs EAGLE-3@{e3.budget}"
    return [
        lower(
            f"drafter forwards/iter, {tag}: SpecBlock − EAGLE-3 < 0",
            sb.drafter_forwards,
            e3.drafter_forwards,
            unit=1.0,
        ),
        at_most(
            f"drafting cost/iter (cost model), SpecBlock / EAGLE-3 ≤ {max_ratio:g}",
            sb.drafting_units / e3.drafting_units,
            max_ratio,
        ),
        at_most(
            f"drafter seconds/iter (this CPU, paired rounds), SpecBlock / EAGLE-3 ≤ {max_ratio:g}",
            suite.drafting_ratio(("specblock", sb.budget), ("eagle3", e3.budget))[0],
            max_ratio,
        ),
    ]


def speedup_criteria(suite: SuiteResult, n_specblock: int, n_eagle: int, n_equal: int) -> list[Criterion]:
    """D2, cost model: (a) speedup SpecBlock@``n_specblock`` ≥ EAGLE-3@``n_eagle``; (b) SpecBlock@``n_equal``
    ≥ EAGLE-3@``n_eagle`` (unit: 1×, vanilla's speedup)."""
    e3 = _check_suite(suite).row("eagle3", n_eagle)
    sb, sb_eq = suite.row("specblock", n_specblock), suite.row("specblock", n_equal)
    return [
        higher_or_equal(
            f"cost-model speedup, SpecBlock@{sb.budget} − EAGLE-3@{e3.budget} ≥ 0",
            sb.modelled_speedup,
            e3.modelled_speedup,
            unit=1.0,
        ),
        higher_or_equal(
            f"cost-model speedup, SpecBlock@{sb_eq.budget} − EAGLE-3@{e3.budget} ≥ 0 (equal N)",
            sb_eq.modelled_speedup,
            e3.modelled_speedup,
            unit=1.0,
        ),
    ]


def depth_gaps(suite: SuiteResult, n_equal: int) -> tuple[float, float]:
    """D3: the mean per-depth acceptance gap SpecBlock − Medusa at depths 1–2 and at depths 4–6."""
    depth = per_depth_acceptance(_check_suite(suite), n_equal)
    gap = depth["specblock"] - depth["medusa"]
    (s0, s1), (d0, d1) = SHALLOW_DEPTHS, DEEP_DEPTHS
    return float(np.mean(gap[s0 - 1 : s1])), float(np.mean(gap[d0 - 1 : d1]))


def path_dependence_criteria(suite: SuiteResult, n_equal: int) -> list[Criterion]:
    """D3 at equal ``n_equal``: (a) τ SpecBlock > τ Medusa (unit: one token per target forward); (b) the mean
    acceptance gap SpecBlock − Medusa at depths 4–6 > at depths 1–2 (unit: 1, the range of a share)."""
    sb, md = _check_suite(suite).row("specblock", n_equal), suite.row("medusa", n_equal)
    shallow, deep = depth_gaps(suite, n_equal)
    return [
        higher(f"τ at N = {sb.budget}, SpecBlock − Medusa > 0", sb.tau, md.tau, unit=1.0),
        higher("mean acceptance gap over Medusa, depths 4–6 − depths 1–2 > 0", deep, shallow, unit=1.0),
    ]


def _check_slots(slots: object, names: tuple[str, ...]) -> Mapping[str, SlotAccuracy]:
    if not isinstance(slots, Mapping) or not all(isinstance(slots.get(n), SlotAccuracy) for n in names):
        raise TypeError(f"slots must map {names} to SlotAccuracy")
    return slots


def later_slot_mean(values: tuple[float, ...]) -> float:
    """The mean over slots 1 … K-1 (slot 0 is the same prediction with or without the shift)."""
    return float(np.mean(values[1:]))


def shift_criteria(slots: Mapping[str, SlotAccuracy]) -> list[Criterion]:
    """D4: mean top-1 accuracy of slots 1–3, with the shift − without > 0 (unit: 1, an accuracy's range)."""
    slots = _check_slots(slots, ("specblock", "specblock-noshift"))
    return [
        higher(
            "mean slot 1–3 accuracy, shift − no shift > 0",
            later_slot_mean(slots["specblock"].accuracy),
            later_slot_mean(slots["specblock-noshift"].accuracy),
            unit=1.0,
        )
    ]


def valid_prefix_criteria(slots: Mapping[str, SlotAccuracy]) -> list[Criterion]:
    """D7: conditional accuracy of slot k given slots < k correct, mean k = 1–3, mask − no mask > 0."""
    slots = _check_slots(slots, ("specblock", "specblock-noprefix"))
    return [
        higher(
            "conditional accuracy (mean k = 1–3), mask − no mask > 0",
            later_slot_mean(slots["specblock"].conditional),
            later_slot_mean(slots["specblock-noprefix"].conditional),
            unit=1.0,
        )
    ]


def multi_block_criteria(suite: SuiteResult, n: int) -> list[Criterion]:
    """D5 at ``n``: τ with 3-block training − τ with 1-block training > 0 (unit: one token per forward)."""
    t_multi, t_single = _check_suite(suite).row("specblock", n).tau, suite.row("specblock-1block", n).tau
    return [higher(f"τ at N = {n}, 3-block − 1-block training > 0", t_multi, t_single, unit=1.0)]


def rank_head_criteria(suite: SuiteResult, n: int) -> list[Criterion]:
    """D6 at ``n``: τ with the rank head − τ with a fixed top-k (same drafter) > 0 (unit: one token)."""
    t_rank, t_topk = _check_suite(suite).row("specblock", n).tau, suite.row("specblock-norank", n).tau
    return [higher(f"τ at N = {n}, rank head − fixed top-k > 0", t_rank, t_topk, unit=1.0)]


def strict_linear_criteria(suite: SuiteResult, n: int) -> list[Criterion]:
    """D9 at ``n``: (a) τ of the dynamic tree − τ of the strict-linear chain > 0 (unit: one token); (b) the
    same for the cost-model speedup (unit: 1×), since a chain is also cheaper to draft (one leaf a block)."""
    tree, chain = _check_suite(suite).row("specblock", n), suite.row("specblock-chain", n)
    return [
        higher(f"τ at N = {n}, dynamic tree − strict-linear chain > 0", tree.tau, chain.tau, unit=1.0),
        higher(
            f"cost-model speedup at N = {n}, dynamic tree − strict-linear chain > 0",
            tree.modelled_speedup,
            chain.modelled_speedup,
            unit=1.0,
        ),
    ]


def adaptation_criteria(runs: Mapping[str, StreamResult]) -> list[Criterion]:
    """D8 on one stream: (a) mean τ after the shift, bandit − static > 0 (unit: one token per forward);
    (b) updates, bandit − every window < 0 (unit: one update)."""
    if not isinstance(runs, Mapping) or not all(
        isinstance(runs.get(p), StreamResult) for p in ("static", "bandit", "every-window")
    ):
        raise TypeError("runs must map 'static', 'bandit' and 'every-window' to StreamResult")
    return [
        higher(
            "τ after the shift, bandit − static > 0",
            runs["bandit"].mean_tau("b"),
            runs["static"].mean_tau("b"),
            unit=1.0,
        ),
        lower(
            "updates, bandit − every window < 0",
            runs["bandit"].updates,
            runs["every-window"].updates,
            unit=1.0,
        ),
    ]
