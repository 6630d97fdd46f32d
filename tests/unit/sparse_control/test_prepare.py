"""The frozen model: a smoke checkpoint trains, loads fresh and reproduces its metrics; the committed one
reproduces its recorded accuracies and neutral loss within 0.02 (on any CPU) and learned every task."""

import pytest

from neurips26.sparse_control import prepare as P
from tests.unit.committed_checkpoints import assert_complete_and_within_budget, committed, none_committed


@pytest.fixture(scope="module")
def smoke_cache(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sc-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(folder))
        written = P.prepare("smoke")
        assert [m.name for m in written] == [P.NAME]
        yield folder


def test_smoke_model_loads_fresh_and_frozen(smoke_cache):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(smoke_cache))
        model, meta = P.REGISTRY.load(P.NAME, "smoke")
        assert P.measure(P.NAME, "smoke", model) == pytest.approx(meta.metrics, abs=1e-9)
        assert not any(p.requires_grad for p in model.parameters()) and not model.training
        assert len(meta.curve["loss"]) == -(-P.spec_for("smoke").steps // P.CURVE_EVERY)


COMMITTED = committed(P.PACKAGE_DIR)
_NONE = none_committed("sparse_control")


def test_committed_checkpoint_is_complete_and_within_budget():
    if not COMMITTED:
        pytest.skip(_NONE)
    assert_complete_and_within_budget(P.PACKAGE_DIR, (P.NAME,), 1_000_000)


@pytest.mark.committed
def test_committed_model_reaches_its_recorded_metrics():
    if not COMMITTED:
        pytest.skip(_NONE)
    model, meta = P.REGISTRY.load(P.NAME, "default")
    now = P.measure(P.NAME, "default", model)
    for key, value in meta.metrics.items():
        assert abs(now[key] - value) <= 0.02, key
    for task in ("ioi", "sentiment", "refusal"):
        assert meta.metrics[task] >= 0.95, task
