"""The criteria of claims C1–C6: each passes exactly when the check it replaces holds, with its margin."""

from __future__ import annotations

import math

import pytest

from neurips26.criteria import decide
from neurips26.spatialclaw.claim_criteria import (
    ablation_criteria,
    attribution_criteria,
    gain_by_group_criteria,
    interface_order_criteria,
    recovery_criteria,
    size,
    step_budget_criteria,
)


def _passed(criteria):
    return [c.passed for c in criteria]


def test_size_is_the_largest_magnitude_or_one():
    assert size(0.3, -0.5) == 0.5
    assert size(0.0, 0.0) == 1.0


def test_interface_order_margins_and_verdict():
    acc = {"code": 0.90, "single_pass": 0.79, "tool_call": 0.58, "no_tool": 0.47}
    criteria = interface_order_criteria(acc)
    assert _passed(criteria) == [True, False, True]
    assert criteria[0].value == pytest.approx(0.11) and criteria[0].scale == 0.90
    assert criteria[1].value == pytest.approx(-0.21) and criteria[1].scale == 0.79
    assert criteria[2].value == pytest.approx(0.11) and criteria[2].scale == 0.58  # worst tool: tool calls
    assert decide(criteria).verdict == "partly"
    tie = interface_order_criteria(acc | {"single_pass": 0.90})
    assert not tie[0].passed  # strictly most accurate, as before


def test_gain_by_group_all_three_or_only_the_share():
    per_family = {"camera_motion": 0.6, "relative_direction": 0.5, "distance": 0.1, "counting": -0.04}
    gap = {"chained": 0.4, "perception": 0.1}
    criteria = gain_by_group_criteria(gap, per_family)
    assert _passed(criteria) == [True, True, False]  # 3 of 4 families: 0.75 < 0.85
    assert criteria[1].value == pytest.approx(0.55 - 0.03)
    assert criteria[2].value == 0.75 and criteria[2].threshold == 0.85
    smoke = gain_by_group_criteria({"chained": 0.2}, {"distance": 0.2, "relative_direction": 0.3})
    assert [c.name for c in smoke] == ["share of families with code ≥ tool calls"]
    assert smoke[0].passed


def test_recovery_worst_cases_over_the_sweep():
    code = [0.94, 0.91, 0.91, 0.91]
    single = [0.80, 0.77, 0.71, 0.63]
    criteria = recovery_criteria(code, single)
    assert _passed(criteria) == [True, True, True]
    assert abs(criteria[1].value) < 1e-9 and criteria[1].close  # gap equal at the first two rates: a tie
    assert criteria[2].value == pytest.approx(0.14)
    falling = recovery_criteria([0.9, 0.9, 0.7], [0.8, 0.7, 0.75])
    assert _passed(falling) == [False, False, False]
    assert decide(falling).verdict == "not reproduced"
    with pytest.raises(ValueError):
        recovery_criteria([0.9], [])


def test_ablation_criteria_match_the_checks():
    acc = {"full": 0.908, "no_utilities": 0.908, "no_perception": 0.461, "no_tool": 0.461}
    criteria = ablation_criteria(acc)
    assert _passed(criteria) == [True, True, False]
    assert criteria[2].value == 0.0 and criteria[2].close  # equal to no tool: one question from flipping
    assert not ablation_criteria(acc | {"no_utilities": 0.88})[0].passed  # 2.8 pp > 2 pp


def test_step_budget_criteria():
    steps = (1, 2, 4, 8, 16)
    acc = [0.776, 0.639, 0.908, 0.908, 0.908]
    criteria = step_budget_criteria(steps, acc, 0.776)
    assert _passed(criteria) == [False, True, True]
    assert criteria[0].value == pytest.approx(-0.137) and criteria[0].scale == 0.908
    short = step_budget_criteria((1, 4), [0.7, 0.9], 0.7)
    assert len(short) == 2 and _passed(short) == [True, True]  # 4 is not 2 × 1: no saturation check
    no_one = step_budget_criteria((2, 4), [0.7, 0.9], 0.7)
    assert not no_one[1].passed and math.isnan(no_one[1].value)


def test_attribution_criteria():
    criteria = attribution_criteria({"composition": 1.0, "control_flow": 0.0, "neutral": 0.0}, wins=72)
    assert _passed(criteria) == [True, True, False]
    assert criteria[2].close  # no control-flow win: one win from passing
    none = attribution_criteria({"composition": 0.0, "control_flow": 0.0, "neutral": 0.0}, wins=0)
    assert _passed(none) == [False, False, False]
    paper = attribution_criteria({"composition": 0.522, "control_flow": 0.195, "neutral": 0.283}, wins=100)
    assert _passed(paper) == [True, True, True]
