"""Tests of the chapter's model table and checkpoints at smoke scale: every model trains, loads back fresh
and reproduces its metric; a student is bound to its teacher's weights."""

from __future__ import annotations

import json

import pytest

from neurips26.checkpoint_files import StaleCheckpointError
from neurips26.jag import prepare as P
from neurips26.jag.model import JAGModel


@pytest.fixture(scope="module")
def smoke_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("jag-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(folder))
        written = P.prepare("smoke", progress=False)
        assert [m.name for m in written] == list(P.MODEL_NAMES)
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
