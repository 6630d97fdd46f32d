"""Tests of the chapter's model table and checkpoints at smoke scale: every model trains, loads back fresh
and reproduces its metric; a student is bound to its teacher's weights."""

from __future__ import annotations

import json

import pytest

from neurips26.checkpoint_files import StaleCheckpointError
from neurips26.jag import prepare as P
from neurips26.jag.model import JAGModel
from tests.unit.committed_checkpoints import assert_complete_and_within_budget, committed, none_committed


@pytest.fixture(scope="module")
def smoke_dir(jag_smoke_cache):
    folder, written = jag_smoke_cache
    assert [m.name for m in written] == list(P.MODEL_NAMES)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(folder))
        yield P.checkpoint_dir("smoke")


def test_the_table():
    assert P.MODEL_NAMES == (
        "teacher",
        "tf",
        "df",
        "sf-rgb",
        "jag-nosgf",
        "jag-tfmem",
        "jag-sgf",
        "jag-sgf-noreward",
    )
    config = P.PrepareConfig.for_scale("default")
    assert config.model_config(P.model_spec("sf-rgb")).geometry is False
    assert config.model_config(P.model_spec("teacher")).causal is False
    assert all(config.model_config(m).pixel_skip for m in P.MODELS)
    assert P.model_spec("jag-sgf").reward == "geo" and P.model_spec("jag-tfmem").distill_memory == "truth"
    with pytest.raises(ValueError, match="name"):
        P.model_spec("jag")


def test_smoke_checkpoints_load_fresh_and_students_are_bound_to_the_teacher(smoke_dir, tmp_path):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(smoke_dir.parent.parent))
        teacher_meta = P.load_checkpoint("teacher", "smoke")[1]
        for name in P.MODEL_NAMES:
            model, meta = P.load_checkpoint(name, "smoke")
            assert isinstance(model, JAGModel) and not model.training
            assert meta.teacher == ("" if P.model_spec(name).base else teacher_meta.weights_hash)
            assert P.validation_metrics(name, model, "smoke") == pytest.approx(meta.metrics, rel=1e-6)
        for suffix in (".pt", ".json"):
            (tmp_path / f"jag-sgf{suffix}").write_bytes((smoke_dir / f"jag-sgf{suffix}").read_bytes())
        sidecar = tmp_path / "jag-sgf.json"
        data = json.loads(sidecar.read_text())
        data["config_hash"] = P.expected_hash("jag-sgf", "smoke", "another-teacher")
        sidecar.write_text(json.dumps(data))
        with pytest.raises(StaleCheckpointError, match="configuration"):
            P.load_checkpoint("jag-sgf", "smoke", directory=tmp_path)


# ------------------------------------------------------------------------------- the committed ones

COMMITTED = committed(P.PACKAGE_DIR)
_NONE = none_committed("jag")


def test_committed_checkpoints_are_complete_and_within_budget():
    if not COMMITTED:
        pytest.skip(_NONE)
    assert_complete_and_within_budget(P.PACKAGE_DIR, P.MODEL_NAMES, P.MAX_TOTAL_BYTES)


@pytest.mark.committed
@pytest.mark.parametrize("name", COMMITTED or ["(none committed)"])
def test_committed_checkpoint_is_fresh_and_reaches_its_recorded_metric(name):
    """The registry's load re-measures the recorded metric (a base model's loss at a fixed draw, a
    student's fixed-seed rollout PSNR on eight evaluation clips) and checks a student's teacher."""
    if not COMMITTED:
        pytest.skip(_NONE)
    model, meta = P.load_checkpoint(name, "default")
    assert not model.training and meta.name == name
