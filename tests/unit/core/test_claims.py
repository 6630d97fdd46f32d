import json

import numpy as np
import pytest

from neurips26 import claims as claims_mod
from neurips26.claims import (
    MIME_TYPE,
    ClaimExpectationMissing,
    ClaimSet,
    ClaimVerdictChanged,
    verdict_from_checks,
)


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


def test_verdict_from_checks():
    assert verdict_from_checks({"a": True, "b": np.bool_(True)})[0] == "reproduced"
    assert verdict_from_checks({"a": True, "b": False})[0] == "partly"
    v, detail = verdict_from_checks({"a": False})
    assert v == "not reproduced" and detail == "✗ a"
    with pytest.raises(ValueError, match="checks"):
        verdict_from_checks({})
    with pytest.raises(TypeError, match="checks"):
        verdict_from_checks({"a": 1})


def test_default_scale_matching_verdict_passes(expected):
    cs = ClaimSet(chapter="01-thwf", package="thwf", scale="default")
    claim = _record(cs)
    assert claim.expected == "reproduced" and claim.measured["RGD"] == 2.5
    _record(cs, id="gap", verdict="not reproduced")  # an honest "not reproduced" is stable


def test_default_scale_changed_verdict_fails(expected):
    cs = ClaimSet(chapter="01-thwf", package="thwf", scale="default")
    with pytest.raises(ClaimVerdictChanged, match="slope"):
        _record(cs, verdict="partly")


def test_default_scale_missing_expectation_fails(expected):
    cs = ClaimSet(chapter="01-thwf", package="thwf", scale="default")
    with pytest.raises(ClaimExpectationMissing, match="expected_claims.json"):
        _record(cs, id="new-claim")


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
