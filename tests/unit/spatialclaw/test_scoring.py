"""Scoring: MRA (exact = 1, > 50 % error = 0, monotone, hand-computed points) and multiple-choice matching."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.spatialclaw.scoring import (
    THRESHOLDS,
    exact_match,
    mean_relative_accuracy,
    parse_number,
    score,
)


def test_thresholds():
    assert THRESHOLDS == (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


@pytest.mark.parametrize("truth", [1.0, 2.5, -3.0, 1e-3, 1e4])
def test_exact_answer_scores_one(truth):
    assert mean_relative_accuracy(truth, truth) == 1.0


@pytest.mark.parametrize(
    ("pred", "truth"), [(15.1, 10.0), (4.9, 10.0), (0.0, 10.0), (-10.0, 10.0), (100.0, 10.0)]
)
def test_beyond_half_relative_error_scores_zero(pred, truth):
    assert mean_relative_accuracy(pred, truth) == 0.0


@pytest.mark.parametrize(
    ("pred", "truth", "expected"),
    [
        (13.0, 10.0, 0.5),  # error 0.30: theta 0.50 ... 0.70 pass, 5 of 10
        (7.25, 10.0, 0.5),  # error 0.275: the same five
        (5.0, 4.0, 0.6),  # error 0.25 exactly: theta up to 0.75
        (3.0, 2.0, 0.1),  # error 0.50 exactly: only theta 0.50
        (10.4, 10.0, 1.0),  # error 0.04 < 0.05
        (10.6, 10.0, 0.9),  # error 0.06: all but theta 0.95
        (-2.1, -2.0, 1.0),  # error 0.05 exactly, negative truth
    ],
)
def test_hand_computed_points(pred, truth, expected):
    assert mean_relative_accuracy(pred, truth) == pytest.approx(expected)


def test_monotone_non_increasing_and_symmetric_in_relative_error():
    errors = np.linspace(0.0, 0.6, 241)
    over = [mean_relative_accuracy(3.0 * (1 + e), 3.0) for e in errors]
    under = [mean_relative_accuracy(3.0 * (1 - e), 3.0) for e in errors]
    assert all(a >= b for a, b in zip(over, over[1:], strict=False))
    assert over == under
    assert set(over) == {k / 10 for k in range(11)}


def test_scale_invariance():
    for scale in (0.01, 7.0, -2.0):
        assert mean_relative_accuracy(1.3 * scale, scale) == mean_relative_accuracy(1.3, 1.0)


@pytest.mark.parametrize(
    "pred", [None, "Cannot determine from the images.", True, float("nan"), float("inf"), [1.0]]
)
def test_unusable_predictions_score_zero(pred):
    assert mean_relative_accuracy(pred, 2.0) == 0.0


def test_text_predictions_are_parsed():
    assert mean_relative_accuracy("about 2.0 m", 2.0) == 1.0
    assert mean_relative_accuracy(np.float32(2.0), 2.0) == 1.0


def test_truth_must_be_nonzero_and_finite():
    with pytest.raises(ValueError, match="truth"):
        mean_relative_accuracy(0.0, 0.0)
    with pytest.raises(ValueError, match="truth"):
        mean_relative_accuracy(1.0, float("inf"))
    with pytest.raises(TypeError, match="truth"):
        mean_relative_accuracy(1.0, "2")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="thresholds"):
        mean_relative_accuracy(1.0, 1.0, thresholds=(1.5,))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("about 2.5 m", 2.5),
        ("-3e2", -300.0),
        ("1,200 cm", 1200.0),
        (".5", 0.5),
        ("it is 3 or 4", 3.0),
        ("+7 degrees", 7.0),
        ("front-left", None),
        ("", None),
        (4, 4.0),
        (True, None),
        (None, None),
    ],
)
def test_parse_number(text, value):
    assert parse_number(text) == value


CHOICES = ("front-left", "front-right", "back-left", "back-right")


@pytest.mark.parametrize(
    "pred", ["B", "b", "(B)", "B.", "B) front-right", "front-right", " Front Right ", "FRONT-RIGHT."]
)
def test_mc_letters_and_texts(pred):
    assert exact_match(pred, "front-right", CHOICES) == 1.0
    assert exact_match(pred, "B", CHOICES) == 1.0


@pytest.mark.parametrize("pred", ["A", "front-left", "B) back-left", "E", "the right one", "", None, 1, True])
def test_mc_wrong_or_unmatched(pred):
    assert exact_match(pred, "front-right", CHOICES) == 0.0


def test_exact_match_without_choices_normalises():
    assert exact_match("  Yes. ", "yes") == 1.0
    assert exact_match("front left", "Front-Left") == 1.0
    assert exact_match("no", "yes") == 0.0
    assert exact_match(3.0, "3", ("2", "3", "4")) == 1.0


def test_exact_match_validation():
    with pytest.raises(ValueError, match="truth"):
        exact_match("A", "sideways", CHOICES)
    with pytest.raises(TypeError, match="truth"):
        exact_match("A", 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="choices"):
        exact_match("A", "A", "ABCD")


def test_score_dispatch():
    assert score("mc", "C", "back-left", CHOICES) == 1.0
    assert score("numeric", "13", 10.0) == 0.5
    with pytest.raises(ValueError, match="question_kind"):
        score("open", "x", "x")
