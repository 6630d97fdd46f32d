"""Tests of the chapter's model table, its training and checkpoints: a smoke prepare whose checkpoints load
back fresh and reproduce their metrics, stale detection, and the committed default checkpoints."""

from __future__ import annotations

import json

import pytest
import torch

from neurips26.checkpoint_files import StaleCheckpointError
from neurips26.picsb import prepare as P
from neurips26.picsb.baselines.dps import Prior
from neurips26.picsb.denoiser import Denoiser
from tests.unit.committed_checkpoints import assert_complete_and_within_budget, committed, none_committed

NAMES = ("picsb", "soft-obs", "dps-prior")


def test_the_table_and_its_sizes():
    assert P.MODEL_NAMES == ("picsb", "no-refresh", "no-pde", "soft-obs", "lf-only", "oracle", "dps-prior")
    assert [m.name for m in P.MODELS] == list(P.MODEL_NAMES)
    default = P.PrepareConfig.for_scale("default")
    assert (default.picsb.rounds, default.picsb.steps, default.picsb.polish_steps) == (3, 800, 300)
    assert default.prior.train_steps == 4 * 3 * 800  # DPS's prior: four times the bridges' steps
    assert (default.data.train, default.data.validation, default.data.test) == (512, 32, 64)
    smoke = P.PrepareConfig.for_scale("smoke")
    assert smoke.data.train == 128 and smoke.picsb.rounds == 2
    assert P.expected_hash("picsb", default) != P.expected_hash("picsb", smoke)
    assert P.expected_hash("picsb", default) != P.expected_hash("oracle", default)
    assert P.variant("soft-obs", default.picsb).hard is False
    assert P.variant("no-refresh", default.picsb).config.steps == 2400
    with pytest.raises(ValueError, match="only"):
        P.prepare("smoke", only=["picsb-2"])


@pytest.fixture(scope="module")
def smoke_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("picsb-smoke")
    written = P.prepare("smoke", only=list(NAMES), out=folder, progress=False)
    assert [m.name for m in written] == list(NAMES)
    return folder


def test_smoke_checkpoints_load_back_fresh_and_reproduce_their_metrics(smoke_dir):
    for name in NAMES:
        model, meta = P.load_checkpoint(name, "smoke", directory=smoke_dir)
        assert isinstance(model, Prior if name == "dps-prior" else Denoiser) and not model.training
        assert meta.config_hash == P.expected_hash(name, P.PrepareConfig.for_scale("smoke"))
        measured = P.validation_metrics(name, model, "smoke")
        assert measured == pytest.approx(meta.metrics, rel=1e-6)
        state = torch.load(smoke_dir / f"{name}.pt", weights_only=True)
        assert all(v.dtype == torch.float16 for v in state.values() if v.is_floating_point())
    meta = P.load_checkpoint("picsb", "smoke", directory=smoke_dir)[1]
    assert set(meta.metrics) == {"val_rel_l2", "val_residual"}
    assert meta.curves["round"] == [0.0, 1.0, 2.0] and len(meta.curves["round_energy"]) == 3
    assert meta.spec["residual_weight"] > 0 and meta.spec["hard"] is True


def test_a_changed_checkpoint_is_stale(smoke_dir, tmp_path):
    name = "picsb"
    for suffix in (".pt", ".json"):
        (tmp_path / f"{name}{suffix}").write_bytes((smoke_dir / f"{name}{suffix}").read_bytes())
    sidecar = tmp_path / f"{name}.json"
    data = json.loads(sidecar.read_text())
    data["metrics"]["val_rel_l2"] *= 1.5
    sidecar.write_text(json.dumps(data))
    with pytest.raises(StaleCheckpointError, match="val_rel_l2"):
        P.load_checkpoint(name, "smoke", directory=tmp_path)
    with pytest.raises(StaleCheckpointError, match="configuration"):
        P.load_checkpoint(name, "default", directory=smoke_dir)


def test_list_prints_the_table(capsys):
    assert P.main(["--list"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 7 and lines[0].startswith("picsb")


# ------------------------------------------------------------------------------- the committed ones

COMMITTED = committed(P.PACKAGE_DIR)
_NONE = none_committed("picsb")


def test_committed_checkpoints_are_complete_and_within_budget():
    if not COMMITTED:
        pytest.skip(_NONE)
    assert_complete_and_within_budget(P.PACKAGE_DIR, P.MODEL_NAMES, P.MAX_TOTAL_BYTES)


@pytest.mark.committed
@pytest.mark.parametrize("name", COMMITTED or ["(none committed)"])
def test_committed_checkpoint_is_fresh_and_reaches_its_recorded_metrics(name):
    """The registry's load re-measures the validation metrics (OT-ODE reconstructions of the 32 validation
    cases, or the prior's loss at a fixed draw) and raises when one moved beyond its tolerance."""
    if not COMMITTED:
        pytest.skip(_NONE)
    model, meta = P.load_checkpoint(name, "default")
    assert not model.training and meta.name == name
    assert meta.config_hash == P.expected_hash(name, P.PrepareConfig.for_scale("default"))


@pytest.mark.committed
def test_a_changed_forward_makes_a_committed_checkpoint_stale(monkeypatch):
    if not COMMITTED:
        pytest.skip(_NONE)
    forward = Denoiser.forward
    monkeypatch.setattr(Denoiser, "forward", lambda self, x, t, c: 0.9 * forward(self, x, t, c))
    with pytest.raises(StaleCheckpointError, match="no longer reproduces its recorded"):
        P.load_checkpoint("picsb", "default")
