"""The criteria of claims C1–C6, built from measured numbers, each with its value, threshold and margin.

The claims notebook measures; these functions turn its numbers into :class:`neurips26.criteria.Criterion`
objects, one per check, with the thresholds and directions the chapter fixed before its committed run (a
criterion passes exactly when the boolean check it replaces held). The notebook decides each claim from
them with :func:`neurips26.criteria.decide`.

A comparison of two measured quantities ``a > b`` becomes ``a − b > 0``, and a threshold of 0 needs a
scale for its relative margin: the size of the quantities compared, the larger of their magnitudes
(:func:`size`: two accuracies, two gaps of accuracy); shares of the wins use their whole, 1. A check over
a sweep ("non-decreasing", "at every rate") becomes its worst case across the sweep: the smallest change
between neighbouring settings, or the smallest gap, with the sweep's tolerance ``-1e-9`` for ties.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from neurips26.criteria import Criterion, above, at_least, at_most, below

TIE = 1e-9
"""Tolerance of the sweeps' "non-decreasing" and "at every rate" checks: equal accuracies count as ties."""

PAPER_CATEGORIES: tuple[str, ...] = ("camera_motion", "relative_direction", "object_perspective")
"""The families matching the paper's categories with the largest gains of code over tool calls (C2)."""


def size(*values: float) -> float:
    """The scale of a comparison: the largest magnitude of the quantities compared (1 if all are 0)."""
    largest = max(abs(float(v)) for v in values)
    return largest if largest > 0 else 1.0


def interface_order_criteria(acc: Mapping[str, float]) -> list[Criterion]:
    """C1 from the accuracy of each interface (``code``, ``single_pass``, ``tool_call``, ``no_tool``):
    code is the most accurate; tool calls beat the single program; every tool interface beats no tool."""
    best = max((i for i in acc if i != "code"), key=lambda i: acc[i])
    worst = min(("code", "single_pass", "tool_call"), key=lambda i: acc[i])
    return [
        above(
            "code is the most accurate: code − best other interface",
            acc["code"] - acc[best],
            0.0,
            scale=size(acc["code"], acc[best]),
        ),
        above(
            "tool calls > single pass: tool calls − single pass",
            acc["tool_call"] - acc["single_pass"],
            0.0,
            scale=size(acc["tool_call"], acc["single_pass"]),
        ),
        above(
            "every tool interface > no tool: worst tool interface − no tool",
            acc[worst] - acc["no_tool"],
            0.0,
            scale=size(acc[worst], acc["no_tool"]),
        ),
    ]


def gain_by_group_criteria(
    gap: Mapping[str, float],
    per_family: Mapping[str, float],
    named: Sequence[str] = PAPER_CATEGORIES,
    *,
    share: float = 0.85,
) -> list[Criterion]:
    """C2 from code − tool calls per group (``gap``: ``chained``, ``perception``) and per family: the
    chained gap exceeds the perception gap; the mean gap over the ``named`` families exceeds the mean over
    the others; code ≥ tool calls in at least ``share`` of the families. The first two need both groups
    and families on both sides (not at smoke scale)."""
    families = list(per_family)
    inside = [f for f in named if f in per_family]
    others = [f for f in families if f not in inside]
    out = []
    if inside and others and "chained" in gap and "perception" in gap:
        mean_named = float(np.mean([per_family[f] for f in inside]))
        mean_rest = float(np.mean([per_family[f] for f in others]))
        out += [
            above(
                "chained gap − perception gap",
                gap["chained"] - gap["perception"],
                0.0,
                scale=size(gap["chained"], gap["perception"]),
            ),
            above(
                "gap on camera motion / direction / viewpoint − gap on the rest",
                mean_named - mean_rest,
                0.0,
                scale=size(mean_named, mean_rest),
            ),
        ]
    fraction = float(np.mean([per_family[f] >= 0 for f in families]))
    out.append(at_least("share of families with code ≥ tool calls", fraction, share))
    return out


def _neighbour_changes(values: Sequence[float]) -> list[float]:
    return [float(b) - float(a) for a, b in zip(values[:-1], values[1:], strict=True)]


def recovery_criteria(code_acc: Sequence[float], single_acc: Sequence[float]) -> list[Criterion]:
    """C3 from the accuracies of code and the single program along the ``p_miss`` sweep (increasing):
    the gap code − single pass is larger at the highest rate than at the first; it never falls between
    neighbouring rates (ties within :data:`TIE`); code ≥ single pass at every rate."""
    if len(code_acc) != len(single_acc) or not code_acc:
        raise ValueError("code_acc and single_acc must be non-empty and of the same length")
    gaps = [float(c) - float(s) for c, s in zip(code_acc, single_acc, strict=True)]
    changes = _neighbour_changes(gaps)
    worst = int(np.argmin(gaps))
    return [
        above(
            "gap at the highest p_miss − gap at 0",
            gaps[-1] - gaps[0],
            0.0,
            scale=size(gaps[-1], gaps[0]),
        ),
        at_least(
            "gap non-decreasing in p_miss: smallest change between neighbouring rates",
            min(changes) if changes else 0.0,
            -TIE,
            scale=size(*gaps),
        ),
        at_least(
            "code ≥ single pass at every p_miss: smallest gap",
            gaps[worst],
            -TIE,
            scale=size(code_acc[worst], single_acc[worst]),
        ),
    ]


def ablation_criteria(acc: Mapping[str, float], *, tolerance: float = 0.02) -> list[Criterion]:
    """C4 from the code agent's accuracy with the ``full`` kernel, ``no_utilities``, ``no_perception``,
    and the ``no_tool`` accuracy on the same questions: no wrappers within ``tolerance`` of full; no
    perception below full; no perception above no tool."""
    full, bare, blind, none = acc["full"], acc["no_utilities"], acc["no_perception"], acc["no_tool"]
    return [
        at_most("no wrappers within 2 pp of full: |full − no wrappers|", abs(full - bare), tolerance),
        below("no perception < full: no perception − full", blind - full, 0.0, scale=size(blind, full)),
        above("no perception > no tool: no perception − no tool", blind - none, 0.0, scale=size(blind, none)),
    ]


def step_budget_criteria(
    steps: Sequence[int], step_acc: Sequence[float], single: float, *, tolerance: float = 0.01
) -> list[Criterion]:
    """C5 from the code agent's accuracy at each step budget (increasing ``steps``) and the single-pass
    accuracy on the same questions: accuracy never falls between neighbouring budgets (ties within
    :data:`TIE`); one step is within ``tolerance`` of the single pass (fails when the sweep does not start
    at 1); when the last budget doubles the one before it, the two are within ``tolerance``."""
    if len(steps) != len(step_acc) or not steps:
        raise ValueError("steps and step_acc must be non-empty and of the same length")
    changes = _neighbour_changes(step_acc)
    one_step = abs(float(step_acc[0]) - float(single)) if steps[0] == 1 else float("nan")
    out = [
        at_least(
            "accuracy non-decreasing in max_steps: smallest change between neighbouring budgets",
            min(changes) if changes else 0.0,
            -TIE,
            scale=size(*step_acc),
        ),
        at_most("one step = single pass (±1 pp): |1 step − single pass|", one_step, tolerance),
    ]
    if len(steps) >= 2 and steps[-2] * 2 == steps[-1]:
        out.append(
            at_most(
                f"{steps[-1]} steps within 1 pp of {steps[-2]}: |{steps[-1]} steps − {steps[-2]} steps|",
                abs(float(step_acc[-1]) - float(step_acc[-2])),
                tolerance,
            )
        )
    return out


def attribution_criteria(shares: Mapping[str, float], wins: int) -> list[Criterion]:
    """C6 from the shares of the labels among code's ``wins`` over tool calls: composition is the largest
    share; composition ≥ 50 %; some wins are control flow. Without wins the first two fail."""
    composition = float(shares["composition"])
    other = max(float(v) for k, v in shares.items() if k != "composition")
    nan = float("nan")
    return [
        at_least(
            "composition is the largest share: composition − largest other share",
            composition - other if wins else nan,
            0.0,
            scale=1.0,
        ),
        at_least("composition ≥ 50 %: composition share", composition if wins else nan, 0.5),
        above(
            "some wins are control flow: control-flow share", float(shares["control_flow"]), 0.0, scale=1.0
        ),
    ]
