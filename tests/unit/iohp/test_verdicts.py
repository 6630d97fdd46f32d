"""Chapter 18's criteria: each passes on numbers that meet it and fails on numbers that miss it."""

import pytest

from neurips26.criteria import decide
from neurips26.iohp import verdicts as V

BASE = {"layoutvlm": 0.60, "holodeck": 0.70, "atiss": 0.55, "layoutgpt": 0.50}


def test_usability_names_the_best_baseline_and_needs_ten_points():
    good = {**BASE, "iohp": 0.81}
    crit = V.usability_criteria(good, good, good, good)
    assert all(c.passed for c in crit)
    assert "holodeck" in crit[0].name
    close = {**BASE, "iohp": 0.79}
    assert decide(V.usability_criteria(close, good, good, good)).verdict == "partly"
    assert decide(V.usability_criteria(close, close, close, close)).verdict == "not reproduced"


def test_validity_bounds_and_the_conflict_ratio():
    ok = V.validity_criteria(0.0, 0.02, {"iohp": 0.30, "layoutvlm": 0.60})
    assert all(c.passed for c in ok)
    bad = V.validity_criteria(0.03, 0.0, {"iohp": 0.31, "layoutvlm": 0.60})
    assert [c.passed for c in bad] == [False, True, False]


def test_function_needs_the_lead_and_layoutvlm_failing_reach_and_sit():
    functional = {**BASE, "iohp": 0.80}
    crit = V.function_criteria(functional, {"iohp": 0.9, "layoutvlm": 0.5}, {"iohp": 0.6, "layoutvlm": 0.55})
    assert [c.passed for c in crit] == [True, True, False]


def test_inferred_gives_partly_when_only_one_measure_gains():
    decision = decide(V.inferred_criteria({"iohp": 0.7, "clearance": 0.6}, {"iohp": 0.4, "clearance": 0.38}))
    assert decision.verdict == "partly"


def test_preference_band_is_two_sided():
    assert all(c.passed for c in V.preference_criteria({"atiss": 0.6, "corpus": 0.74, "iohp": 0.71}))
    assert not V.preference_criteria({"atiss": 0.9, "corpus": 0.74, "iohp": 1.0})[0].passed


def test_ablations_and_robustness():
    crit = V.ablation_criteria(
        {"iohp": 0.5, "conflict_only": 0.39, "functional_only": 0.5},
        {"iohp": 0.8, "conflict_only": 0.8, "functional_only": 0.75},
    )
    assert [c.passed for c in crit] == [True, False]
    assert V.robustness_criteria({"noisy": 0.66, "layoutvlm": 0.6})[0].passed
    assert not V.robustness_criteria({"noisy": 0.64, "layoutvlm": 0.6})[0].passed


@pytest.mark.parametrize("missing", ["iohp", "atiss"])
def test_a_missing_method_is_a_key_error(missing):
    rates = {**BASE, "iohp": 0.8}
    rates.pop(missing)
    with pytest.raises(KeyError):
        V.usability_criteria(rates, rates, rates, rates)
