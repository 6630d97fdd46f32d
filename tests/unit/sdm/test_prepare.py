"""The model table and its checkpoints: smoke checkpoints train, load back fresh and reproduce their metrics;
the committed ones reproduce their recorded accuracies within 1 pp on this CPU (any CPU)."""

from __future__ import annotations

import json

import pytest
import torch

from neurips26.checkpoint_files import StaleCheckpointError
from neurips26.sdm import prepare as P
from neurips26.sdm.models import RecallModel
from tests.unit.committed_checkpoints import assert_complete_and_within_budget, committed, none_committed


@pytest.fixture(scope="module")
def smoke_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sdm-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(folder))
        written = P.prepare("smoke")
        assert [m.name for m in written] == list(P.NAMES)
        yield folder


def test_the_table():
    assert len(P.NAMES) == 15 and len(set(P.NAMES)) == 15
    assert P.train_at("gdn-long", "default").steps == 4 * P.train_at("gdn-s0", "default").steps
    assert P.model_row("sdm-s1").seed == 1 and P.model_row("sdm-s1").spec == P.model_row("sdm-s0").spec
    assert P.spec_at("sdm-n1024", "smoke").slots == 64 and P.spec_at("sdm-n1024", "default").slots == 1024
    assert P.expected_hash("sdm-s0", "default") != P.expected_hash("sdm-s1", "default")
    with pytest.raises(ValueError, match="name"):
        P.model_row("lstm")


def test_smoke_checkpoints_load_fresh(smoke_dir, tmp_path):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(smoke_dir))
        folder = P.REGISTRY.checkpoint_dir("smoke")
        for name in P.NAMES:
            model, meta = P.REGISTRY.load(name, "smoke")
            assert isinstance(model, RecallModel) and not model.training
            assert P.validation_metrics(name, "smoke", model) == pytest.approx(meta.metrics, rel=1e-6)
        stored = torch.load(folder / "sdm-s0.pt", weights_only=True)
        assert all(v.dtype == torch.float16 for v in stored.values() if v.is_floating_point())
        for suffix in (".pt", ".json"):
            (tmp_path / f"gdn-s0{suffix}").write_bytes((folder / f"gdn-s0{suffix}").read_bytes())
        sidecar = tmp_path / "gdn-s0.json"
        data = json.loads(sidecar.read_text())
        data["metrics"]["val_context"] += 0.2  # a checkpoint that no longer reproduces its accuracy
        sidecar.write_text(json.dumps(data))
        with pytest.raises(StaleCheckpointError, match="val_context"):
            P.REGISTRY.load("gdn-s0", "smoke", directory=tmp_path)


COMMITTED = committed(P.PACKAGE_DIR)
_NONE = none_committed("sdm")


def test_committed_checkpoints_are_complete_and_within_budget():
    if not COMMITTED:
        pytest.skip(_NONE)
    assert_complete_and_within_budget(P.PACKAGE_DIR, P.NAMES, 6_000_000)


@pytest.mark.committed
@pytest.mark.parametrize("name", COMMITTED or ["(none committed)"])
def test_committed_checkpoint_reproduces_its_recorded_accuracy(name):
    """Loading re-measures loss and accuracies on the validation draw; on any CPU they stay within 1 pp."""
    if not COMMITTED:
        pytest.skip(_NONE)
    model, meta = P.REGISTRY.load(name, "default")
    now = P.validation_metrics(name, "default", model)
    assert abs(now["val_context"] - meta.metrics["val_context"]) <= 0.01
    assert abs(now["val_facts"] - meta.metrics["val_facts"]) <= 0.01
