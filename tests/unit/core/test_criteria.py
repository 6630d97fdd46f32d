"""Verdict criteria: margins, close calls, deciding criteria, and verdicts over seeds."""

import math

import numpy as np
import pytest

from neurips26.criteria import (
    CLOSE_CALL,
    Criterion,
    above,
    at_least,
    at_most,
    below,
    decide,
    decide_over_seeds,
    holds,
)


def test_margins_are_signed_towards_passing_and_relative_to_the_threshold():
    c = at_least("slope", 0.747, 0.7)
    assert c.passed and c.margin == pytest.approx(0.047) and c.relative_margin == pytest.approx(0.047 / 0.7)
    assert not c.close  # 6.7 % away
    d = at_most("error", 1.2, 1.0)
    assert not d.passed and d.margin == pytest.approx(-0.2)
    assert at_least("x", 0.99, 1.0).close and at_most("x", 1.04, 1.0).close  # within 5 %, either side
    assert not above("x", 1.0, 1.0).passed and not below("x", 1.0, 1.0).passed
    assert above("x", 1.0 + 1e-9, 1.0).passed and below("x", 0.5, 1.0).passed
    assert above("x", 1.0, 1.0).text() == "✗ x: 1 > 1 (at the threshold: fails)"
    assert CLOSE_CALL == 0.05


def test_a_zero_threshold_needs_a_scale_and_exact_facts_have_no_margin():
    with pytest.raises(ValueError, match="scale"):
        at_least("gap", 0.3, 0.0)
    c = above("gap", 0.01, 0.0, scale=0.5)
    assert c.relative_margin == pytest.approx(0.02) and c.close
    fact = holds("lossless", np.bool_(True))
    assert fact.passed and fact.margin is None and not fact.close and "(exact)" in fact.text()
    assert not holds("lossless", False).passed


def test_bad_criteria_name_the_argument():
    with pytest.raises(ValueError, match="direction"):
        Criterion("x", 1.0, 1.0, "=>")
    with pytest.raises(TypeError, match="value"):
        at_least("x", "1", 1.0)
    with pytest.raises(ValueError, match="threshold"):
        at_least("x", 1.0, math.inf)
    with pytest.raises(ValueError, match="scale"):
        at_least("x", 1.0, 1.0, scale=-1)
    with pytest.raises(ValueError, match="name"):
        at_least(" ", 1.0, 1.0)
    with pytest.raises(TypeError, match="ok"):
        holds("x", 1)
    with pytest.raises(ValueError, match="criteria"):
        decide([])
    with pytest.raises(ValueError, match="repeated"):
        decide([at_least("x", 1, 0.5), at_least("x", 1, 0.5)])
    with pytest.raises(ValueError, match="per_seed"):
        decide_over_seeds({0: [at_least("x", 1, 0.5)], 1: [at_least("y", 1, 0.5)]})


def test_a_failed_measurement_fails_its_criterion_without_a_margin():
    c = at_least("x", float("nan"), 1.0)
    assert not c.passed and not c.close and "n/a" in c.text()
    assert c.to_dict()["value"] is None and Criterion.from_dict(c.to_dict()).text() == c.text()


def test_one_run_verdicts_and_deciding_criteria():
    good, bad = at_least("a", 2.0, 1.0), at_least("b", 0.5, 1.0)
    assert decide([good, good.__class__("c", 3.0, 1.0, ">=")]).verdict == "reproduced"
    assert decide([good, bad]).verdict == "partly"
    assert decide([bad]).verdict == "not reproduced"
    # partly with one passing and one failing criterion: flipping either changes the verdict
    assert decide([good, bad]).deciding() == {(0, 0), (0, 1)}
    # partly with two passing and one failing: only the failing one decides
    assert decide([good, at_least("c", 3.0, 1.0), bad]).deciding() == {(0, 2)}


def test_a_close_call_is_a_deciding_criterion_near_its_threshold():
    assert decide([at_least("slope", 0.71, 0.7)]).close_call
    assert not decide([at_least("slope", 0.9, 0.7)]).close_call
    # the close criterion does not decide (two others fail, one passes far away): no close call
    d = decide([at_least("far", 5.0, 1.0), at_least("x", 0.99, 1.0), at_least("y", 0.2, 1.0)])
    assert d.verdict == "partly" and d.deciding() == {(0, 0)} and not d.close_call


def test_verdicts_over_seeds_keep_the_per_seed_outcome():
    holds_ = {s: [at_least("ratio ≤ 1", v, 1.0)] for s, v in {0: 1.3, 1: 1.1, 2: 1.2}.items()}
    d = decide_over_seeds(holds_)
    assert d.verdict == "reproduced" and d.seeds == (0, 1, 2) and d.seed_verdicts == ("reproduced",) * 3
    mixed = decide_over_seeds({0: [at_least("r", 1.3, 1.0)], 1: [at_least("r", 0.8, 1.0)]})
    assert mixed.verdict == "partly" and mixed.seed_verdicts == ("reproduced", "not reproduced")
    assert "seed 0 → reproduced" in mixed.detail and "seed 1 → not reproduced" in mixed.detail
    none = decide_over_seeds({0: [at_least("r", 0.3, 1.0)], 1: [at_least("r", 0.8, 1.0)]})
    assert none.verdict == "not reproduced"
    rows = mixed.criteria_dicts()
    assert [r["seed"] for r in rows] == [0, 1] and all(r["deciding"] for r in rows)
    assert decide([at_least("r", 2.0, 1.0)], seed=4).detail.endswith("(seed 4 only)")
