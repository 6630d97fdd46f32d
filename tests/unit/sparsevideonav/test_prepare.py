"""The chapter's models: smoke checkpoints train in order, load fresh and reproduce their metrics; the
committed ones are complete, within budget, and load within 5 % of their recorded metrics on any CPU."""

import pytest

from neurips26.checkpoint_files import MAX_CHAPTER_BYTES
from neurips26.sparsevideonav import prepare as P
from tests.unit.committed_checkpoints import assert_complete_and_within_budget, committed, none_committed


@pytest.fixture(scope="module")
def smoke_cache(tmp_path_factory):
    folder = tmp_path_factory.mktemp("svn-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(folder))
        written = P.prepare("smoke", only=["codec", "stage1", "stage2", "student", "arm-int5"])
        assert [m.name for m in written] == ["codec", "stage1", "stage2", "student", "arm-int5"]
        yield folder


def test_smoke_models_load_fresh_and_frozen(smoke_cache):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(smoke_cache))
        for name in ("stage1", "stage2", "student", "arm-int5"):
            model, meta = P.REGISTRY.load(name, "smoke")
            assert P.measure(name, "smoke", model) == pytest.approx(meta.metrics, rel=1e-9)
            assert not any(p.requires_grad for p in model.parameters()) and not model.training
        arm, _ = P.REGISTRY.load("arm-int5", "smoke")
        assert arm.config.offsets == (0, 1, 6, 11, 16, 21, 26, 31)
        stage1, meta = P.REGISTRY.load("stage1", "smoke")
        assert set(meta.curve) == {"stage0", "loss", "scratch"}
        codec, _ = P.REGISTRY.load("codec", "smoke")
        # the codec every model saw is the float16-rounded one that is shipped
        state = P._codec_state(codec)
        assert all(v.dtype.is_floating_point and str(v.dtype) == "torch.float16" for v in state.values())


def test_the_table_and_bad_names():
    assert len(P.NAMES) == 18 and len(set(P.NAMES)) == 18
    assert P.generator_config("default", "arm-dense").offsets == tuple(range(20))
    assert P.data_fraction("arm-data10") == 0.1 and P.data_fraction("stage2") == 1.0
    with pytest.raises(ValueError, match="name"):
        P._empty("stage9", "smoke")


COMMITTED = committed(P.PACKAGE_DIR)
_NONE = none_committed("sparsevideonav")


def test_committed_checkpoints_are_complete_and_within_budget():
    if not COMMITTED:
        pytest.skip(_NONE)
    assert_complete_and_within_budget(P.PACKAGE_DIR, P.NAMES, MAX_CHAPTER_BYTES)


@pytest.mark.committed
@pytest.mark.parametrize("name", P.NAMES)
def test_committed_models_reproduce_their_recorded_metrics(name):
    if not COMMITTED or not (P.PACKAGE_DIR / f"{name}.pt").exists():
        pytest.skip(_NONE)
    model, meta = P.REGISTRY.load(name, "default")  # fresh: within 5 % of every recorded metric
    assert meta.metrics and all(v == v for v in meta.metrics.values())
