"""The trained models: smoke checkpoints train in order, load fresh and reproduce their metrics; a variant's
file holds only what it trains; the committed ones load within their tolerance on any CPU."""

import pytest
import torch

from neurips26.spark_vla import prepare as P
from neurips26.spark_vla.model import VLAModel
from tests.unit.committed_checkpoints import assert_complete_and_within_budget, committed, none_committed


@pytest.fixture(scope="module")
def smoke_cache(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spark-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(folder))
        written = P.prepare("smoke")
        assert [m.name for m in written] == list(P.NAMES)
        yield folder


def test_smoke_models_load_fresh_and_frozen(smoke_cache):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(smoke_cache))
        for name in P.NAMES:
            model, meta = P.REGISTRY.load(name, "smoke")
            assert P.measure(name, "smoke", model) == pytest.approx(meta.metrics, abs=1e-9)
            assert not any(p.requires_grad for p in model.parameters()) and not model.training
        _, teacher = P.REGISTRY.load("teacher", "smoke")
        assert len(teacher.stats["mean"]) == len(teacher.stats["std"]) == 4


def test_variant_files_hold_what_the_variant_trains(smoke_cache):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(smoke_cache))
        folder = P.REGISTRY.checkpoint_dir("smoke")
        for name, adapters in (("2d", False), ("spark", True), ("larger", False)):
            state = torch.load(folder / f"{name}.pt", weights_only=True)
            assert any(".lora_" in k for k in state) == adapters
            assert not any(k.startswith("pathways.encoder.") and ".lora_" not in k for k in state)
            assert any(k.startswith("vit.") for k in state) == (name == "larger")
        spark, _ = P.REGISTRY.load("spark", "smoke")
        encoder, _ = P.REGISTRY.load("encoder", "smoke")
        assert isinstance(spark, VLAModel)
        # the frozen encoder inside the variant is the shipped encoder, bit for bit
        inner = spark.pathways.encoder.state_dict().items()
        base = {k.replace(".base.", "."): v for k, v in inner if ".lora_" not in k}
        assert base.keys() == encoder.state_dict().keys()
        for key, value in encoder.state_dict().items():
            assert torch.equal(value, base[key]), key


def test_hashes_differ_by_seed_and_scale_and_bad_names():
    assert P.expected_hash("2d-s1", "default") != P.expected_hash("2d", "default")
    assert P.expected_hash("spark", "smoke") != P.expected_hash("spark", "default")
    with pytest.raises(ValueError, match="name"):
        P.row("sparkle")


COMMITTED = committed(P.PACKAGE_DIR)
_NONE = none_committed("spark_vla")


def test_committed_checkpoints_are_complete_and_within_budget():
    if not COMMITTED:
        pytest.skip(_NONE)
    assert_complete_and_within_budget(P.PACKAGE_DIR, P.NAMES, 6_000_000)


@pytest.mark.committed
@pytest.mark.parametrize("name", P.NAMES)
def test_committed_models_reach_their_recorded_metrics(name):
    if not COMMITTED:
        pytest.skip(_NONE)
    P.REGISTRY.load(name, "default")  # fresh: within METRIC_ATOL of the recorded validation metrics
