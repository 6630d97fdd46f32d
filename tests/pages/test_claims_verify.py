"""The build marks changed verdicts instead of failing; ``neurips26_book.verify`` is the check that fails."""

import json

import pytest

from neurips26 import claims as claims_mod
from neurips26.claims import Claim
from neurips26_book import verify
from neurips26_book.scoreboard import _summary


def _claim(id, verdict, expected, scale="default", close=False):
    return Claim(
        chapter="01-thwf",
        id=id,
        statement="s",
        paper="p",
        measured={"x": 1.0},
        verdict=verdict,
        scale=scale,
        expected=expected,
        close_call=close,
        package="thwf",
    )


@pytest.fixture
def committed(monkeypatch):
    table = {"a": "reproduced", "b": "partly"}
    monkeypatch.setattr(verify, "load_expected", lambda package: dict(table))
    monkeypatch.setattr(claims_mod, "load_expected", lambda package: dict(table))
    return table


def test_verify_passes_when_every_default_verdict_is_as_committed(committed, tmp_path, capsys):
    claims = [_claim("a", "reproduced", "reproduced", close=True), _claim("b", "partly", "partly")]
    assert verify.problems(claims) == []
    path = tmp_path / "claims.json"
    path.write_text(json.dumps([c.to_dict() for c in claims]))
    assert verify.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "close call: 01-thwf/a" in out and "all as committed" in out


def test_verify_fails_on_a_changed_missing_or_unmeasured_verdict(committed, tmp_path):
    changed = [_claim("a", "partly", "reproduced"), _claim("b", "partly", "partly")]
    assert verify.problems(changed) == ["01-thwf/a: measured 'partly', committed 'reproduced'"]
    unmeasured = [_claim("a", "reproduced", "reproduced")]
    assert verify.problems(unmeasured) == ["neurips26.thwf/b: committed but not measured by this build"]
    extra = [*unmeasured, _claim("b", "partly", "partly"), _claim("c", "partly", None)]
    assert verify.problems(extra) == ["01-thwf/c: measured 'partly', but no verdict is committed"]
    assert verify.problems([_claim("a", "partly", "reproduced", scale="smoke")])[0].startswith("no default")
    path = tmp_path / "claims.json"
    path.write_text(json.dumps([c.to_dict() for c in changed]))
    assert verify.main([str(path)]) == 1
    assert verify.main([str(tmp_path / "missing.json")]) == 2


def test_the_scoreboard_summary_counts_close_calls_and_lists_changed_verdicts():
    claims = [_claim("a", "partly", "reproduced", close=True), _claim("b", "partly", "partly")]
    text = _summary(claims)
    assert "1 close call " in text and "0 decided over several seeds" in text
    assert "1 verdict differ" in text and "01-thwf / a" in text and "make verify" in text
    assert "differ from the committed" not in _summary([_claim("b", "partly", "partly")])
