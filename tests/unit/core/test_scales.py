import pytest

from neurips26.scales import ENV_VAR, SCALES, check_scale, pick, resolve_scale


def test_pick_selects_per_scale_and_paper_falls_back():
    assert pick("smoke", smoke=1, default=2, paper=3) == 1
    assert pick("default", smoke=1, default=2, paper=3) == 2
    assert pick("paper", smoke=1, default=2, paper=3) == 3
    assert pick("paper", smoke=1, default=2) == 2


def test_env_overrides_only_the_default(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "smoke")
    assert resolve_scale("default") == "smoke"
    assert resolve_scale("paper") == "paper"  # an explicit request wins
    monkeypatch.delenv(ENV_VAR)
    assert resolve_scale("default") == "default"


def test_bad_env_value_is_named(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "huge")
    with pytest.raises(ValueError, match=ENV_VAR):
        resolve_scale("default")


@pytest.mark.parametrize("bad", ["tiny", "", "Default"])
def test_bad_scale_value(bad):
    with pytest.raises(ValueError, match="scale"):
        check_scale(bad)


def test_bad_scale_type():
    with pytest.raises(TypeError, match="scale"):
        pick(3, smoke=1, default=2)


def test_scales_are_the_three_documented():
    assert SCALES == ("smoke", "default", "paper")
