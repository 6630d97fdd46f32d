import json

import numpy as np
import pytest

from neurips26 import claims as claims_mod
from neurips26.claims import (
    MIME_TYPE,
    STRICT_ENV,
    ClaimExpectationMissing,
    ClaimSet,
    ClaimVerdictChanged,
    claims_html,
    claims_text,
)
from neurips26.criteria import at_least, at_most, decide, decide_over_seeds


@pytest.fixture
def expected(monkeypatch):
    table = {"slope": "reproduced", "gap": "not reproduced"}
    monkeypatch.setattr(claims_mod, "load_expected", lambda package: dict(table))
    return table


def _record(cs, id="slope", verdict="reproduced"):
    return cs.record(
        id=id,
        statement="boundary is linear in s",
        paper="M ≳ s",
        measured={"ThWF": 1.02, "RGD": np.float64(2.5)},
        verdict=verdict,
        detail="slope in [0.7, 1.4]",
    )


def test_default_scale_matching_verdict_passes(expected):
    cs = ClaimSet(chapter="01-thwf", package="thwf", scale="default")
    claim = _record(cs)
    assert claim.expected == "reproduced" and claim.measured["RGD"] == 2.5
    _record(cs, id="gap", verdict="not reproduced")  # an honest "not reproduced" is stable


def test_default_scale_changed_verdict_is_marked_and_fails_only_when_strict(expected, monkeypatch):
    cs = ClaimSet(chapter="01-thwf", package="thwf", scale="default")
    claim = _record(cs, verdict="partly")  # a reader's build goes on ...
    assert claim.changed and claim.expected == "reproduced" and claim.package == "thwf"
    assert "changed: committed reproduced" in claims_html([claim]) and "CHANGED" in claims_text([claim])
    assert not _record(cs, id="gap", verdict="not reproduced").changed
    monkeypatch.setenv(STRICT_ENV, "1")  # ... make verify does not
    with pytest.raises(ClaimVerdictChanged, match="slope"):
        _record(cs, verdict="partly")


def test_default_scale_missing_expectation_is_marked_and_fails_when_strict(expected, monkeypatch):
    cs = ClaimSet(chapter="01-thwf", package="thwf", scale="default")
    assert _record(cs, id="new-claim").changed
    monkeypatch.setenv(STRICT_ENV, "1")
    with pytest.raises(ClaimExpectationMissing, match="expected_claims.json"):
        _record(cs, id="new-claim")


def test_a_decision_carries_criteria_margins_seeds_and_close_calls(expected):
    cs = ClaimSet(chapter="01-thwf", package="thwf", scale="default")
    claim = cs.record(
        id="slope",
        statement="boundary is linear in s",
        paper="M ≳ s",
        measured={"slope": 0.747},
        decision=decide([at_least("slope ≥ 0.7", 0.747, 0.7), at_most("slope ≤ 1.4", 0.747, 1.4)]),
    )
    assert claim.verdict == "reproduced" and not claim.changed and not claim.close_call
    assert claim.criteria[0]["margin"] == pytest.approx(0.047) and claim.seeds == []
    table = claims_html([claim])
    assert "0.747 ≥ 0.7 (margin +0.047, +6.7 %)" in table and "rests on one seed" in table
    close = cs.record(
        id="gap",
        statement="gap",
        paper="-",
        measured={"x": 1},
        decision=decide_over_seeds({0: [at_least("x ≥ 1", 0.98, 1.0)], 1: [at_least("x ≥ 1", 0.5, 1.0)]}),
    )
    assert close.verdict == "not reproduced" and close.close_call and close.seeds == [0, 1]
    table = claims_html([close])
    assert "close call" in table and "seed 1" in table and "decided over seeds 0, 1" in table
    with pytest.raises(ValueError, match="exactly one"):
        cs.record(id="x", statement="s", paper="p", measured={"a": 1}, verdict="partly", decision=close_dec())
    with pytest.raises(TypeError, match="decision"):
        cs.record(id="x", statement="s", paper="p", measured={"a": 1}, decision="reproduced")


def close_dec():
    return decide([at_least("a", 1.0, 1.0)])


def test_smoke_records_without_comparing(expected):
    cs = ClaimSet(chapter="01-thwf", package="thwf", scale="smoke")
    _record(cs, verdict="not reproduced")
    _record(cs, id="unknown", verdict="partly")
    assert [c.id for c in cs.claims.values()] == ["slope", "unknown"]


def test_mime_bundle_carries_json_html_and_text(expected):
    cs = ClaimSet(chapter="01-thwf", package="thwf", scale="smoke")
    _record(cs)
    bundle = cs._repr_mimebundle_()
    payload = bundle[MIME_TYPE]
    assert payload["chapter"] == "01-thwf" and payload["claims"][0]["measured"]["ThWF"] == 1.02
    json.dumps(payload)  # serialisable into the notebook
    assert "<table" in bundle["text/html"] and "slope" in bundle["text/plain"]


def test_claims_dir_env_writes_json(tmp_path, monkeypatch, expected):
    monkeypatch.setenv(claims_mod.CLAIMS_DIR_ENV, str(tmp_path))
    cs = ClaimSet(chapter="01-thwf", package="thwf", scale="smoke")
    _record(cs)
    _record(cs, id="gap")
    data = json.loads((tmp_path / "01-thwf.smoke.json").read_text())
    assert {c["id"] for c in data} == {"slope", "gap"}


def test_bad_inputs_are_named(expected):
    with pytest.raises(ValueError, match="chapter"):
        ClaimSet(chapter="thwf", package="thwf", scale="smoke")
    with pytest.raises(ValueError, match="scale"):
        ClaimSet(chapter="01-thwf", package="thwf", scale="big")
    cs = ClaimSet(chapter="01-thwf", package="thwf", scale="smoke")
    with pytest.raises(ValueError, match="verdict"):
        _record(cs, verdict="yes")
    with pytest.raises(ValueError, match="id"):
        _record(cs, id="Bad Id")
    with pytest.raises(TypeError, match="measured"):
        cs.record(id="x", statement="s", paper="p", measured={"a": [1]}, verdict="partly")
    with pytest.raises(TypeError, match="measured"):
        cs.record(id="x", statement="s", paper="p", measured={}, verdict="partly")


def test_load_expected_rejects_unknown_package():
    with pytest.raises(ValueError, match="package"):
        claims_mod.load_expected("no_such_chapter")


def test_non_finite_measurements_become_valid_json(expected):
    cs = ClaimSet(chapter="01-thwf", package="thwf", scale="smoke")
    claim = cs.record(
        id="slope",
        statement="s",
        paper="p",
        measured={"ThWF": float("nan"), "RGD": np.inf, "ok": np.bool_(True)},
        verdict="partly",
    )
    assert claim.measured == {"ThWF": "n/a", "RGD": "inf", "ok": True}
    json.dumps(cs._repr_mimebundle_()[MIME_TYPE], allow_nan=False)


def test_a_headline_and_a_by_construction_flag_travel_with_the_claim(expected):
    cs = ClaimSet(chapter="16-spatialclaw", package="thwf", scale="smoke")
    claim = cs.record(
        id="slope",
        statement="the code interface beats the others",
        paper="+12 points",
        measured={"code": 0.8, "react": 0.6},
        decision=decide([at_least("accuracy, code − react", 0.2, 0.0, scale=0.8)]),
        headline="accuracy 0.80 vs 0.60",
        by_construction=" The reference policy is written to use the tools better on the code path. ",
    )
    assert claim.headline == "accuracy 0.80 vs 0.60"
    assert claim.by_construction.startswith("The reference policy")  # stripped
    assert claims_mod.Claim.from_dict(claim.to_dict()) == claim
    table = claims_html([claim])
    assert "by construction" in table and "reference policy is written" in table
    assert "by construction: The reference policy" in claims_text([claim])
    plain = _record(cs, id="gap", verdict="partly")
    assert "by construction" not in claims_html([plain]) and plain.headline == ""
    with pytest.raises(TypeError, match="by_construction"):
        cs.record(id="x", statement="s", paper="p", measured={"a": 1}, verdict="partly", by_construction=1)
    with pytest.raises(TypeError, match="headline"):
        cs.record(id="x", statement="s", paper="p", measured={"a": 1}, verdict="partly", headline=2.0)


def test_show_record_prints_the_verdict_and_how_it_was_decided(expected, capsys):
    cs = ClaimSet(chapter="01-thwf", package="thwf", scale="smoke")
    _record(cs, id="slope", verdict="partly")
    cs.show_record("slope")
    assert capsys.readouterr().out == "slope: partly  [slope in [0.7, 1.4]]\n"
    with pytest.raises(KeyError, match="gap"):
        cs.show_record("gap")
