"""The ATISS-style checkpoint: a smoke one trains, loads fresh and reproduces its NLL; the committed one
reproduces its recorded validation NLL within 0.01 nats on any CPU and learned the category counts."""

import pytest

from neurips26.iohp import prepare as P
from tests.unit.committed_checkpoints import assert_complete_and_within_budget, committed, none_committed


@pytest.fixture(scope="module")
def smoke_cache(tmp_path_factory):
    folder = tmp_path_factory.mktemp("iohp-cache")
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
        assert meta.curve["val_step"][-1] == P.plan_for("smoke").steps
        assert set(meta.recorded) >= {"val_nll_all", "count_r"}


def test_validation_indices_are_the_training_split():
    from neurips26.iohp.corpus import split_corpus

    held_out = P.validation_indices("smoke")
    assert held_out == split_corpus(range(40), validation=P.VALIDATION, seed=P.SEED)[1]
    assert len(held_out) == 4


COMMITTED = committed(P.PACKAGE_DIR)
_NONE = none_committed("iohp")


def test_committed_checkpoint_is_complete_and_within_budget():
    if not COMMITTED:
        pytest.skip(_NONE)
    assert_complete_and_within_budget(P.PACKAGE_DIR, (P.NAME,), 500_000)


@pytest.mark.committed
def test_committed_model_reaches_its_recorded_metrics():
    if not COMMITTED:
        pytest.skip(_NONE)
    model, meta = P.REGISTRY.load(P.NAME, "default")
    now = P.measure(P.NAME, "default", model)
    assert abs(now["val_nll"] - meta.metrics["val_nll"]) <= P.METRIC_ATOL
    assert meta.recorded["count_r"] >= 0.9  # it learned which pieces each room type holds
