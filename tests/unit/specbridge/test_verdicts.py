"""Chapter 19's criteria pass on numbers that meet them and fail on numbers that miss them."""

import pytest

from neurips26.criteria import decide
from neurips26.specbridge import verdicts as V


def rates(**over):
    base = {
        "direct": (0.30, 0.05, 0.05),
        "few_shot": (0.50, 0.20, 0.15),
        "few_shot_cot": (0.60, 0.30, 0.20),
        "nlfp": (0.62, 0.40, 0.35),
        "specbridge": (0.66, 0.50, 0.50),
        "no_round_trip": (0.60, 0.45, 0.40),
    }
    base.update(over)
    return {m: dict(zip(V.LAYERS, v, strict=True)) for m, v in base.items()}


def test_gains_and_ordering():
    assert decide(V.gain_criteria(rates())).verdict == "reproduced"
    flat = rates(specbridge=(0.62, 0.40, 0.35))  # no better than NLFP-only
    assert decide(V.gain_criteria(flat)).verdict == "partly"


def test_rigour_needs_growing_gains():
    assert decide(V.rigour_criteria(rates())).verdict == "reproduced"
    assert decide(V.rigour_criteria(rates(specbridge=(0.80, 0.50, 0.40)))).verdict == "not reproduced"


def test_mining():
    ok = V.mining_criteria(12, 20, 0.95, 0.7, {"specbridge": 0.5, "no_round_trip": 0.4})
    assert all(c.passed for c in ok)
    bad = V.mining_criteria(20, 20, 0.95, 0.7, {"specbridge": 0.5, "no_round_trip": 0.48})
    assert [c.passed for c in bad] == [False, True, False]


def test_leniency_and_unbounded():
    crit = V.leniency_criteria({"direct": 2, "few_shot": 0, "few_shot_cot": 3}, rates())
    assert [c.passed for c in crit] == [True, False, True, True]
    assert decide(V.unbounded_criteria(6, 2, 0)).verdict == "reproduced"
    assert [c.passed for c in V.unbounded_criteria(6, 0, 1)] == [True, False, False]


def test_missing_method_is_a_key_error():
    r = rates()
    r.pop("nlfp")
    with pytest.raises(KeyError):
        V.gain_criteria(r)
