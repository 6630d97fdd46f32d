"""The world models: smoke checkpoints train, load fresh and reproduce their metrics; the committed ones
load within 5% of their recorded validation MSE on any CPU and predict better than "nothing moves"."""

import pytest

from neurips26.costgrad import prepare as P
from tests.unit.committed_checkpoints import assert_complete_and_within_budget, committed, none_committed


@pytest.fixture(scope="module")
def smoke_cache(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cg-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(folder))
        written = P.prepare("smoke", only=["wall-adaln-0", "wall-concat-1"])
        assert sorted(m.name for m in written) == ["wall-adaln-0", "wall-concat-1"]
        yield folder


def test_smoke_models_load_fresh_and_frozen(smoke_cache):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(smoke_cache))
        for name in ("wall-adaln-0", "wall-concat-1"):
            model, meta = P.REGISTRY.load(name, "smoke")
            assert P.measure(name, "smoke", model) == pytest.approx(meta.metrics, rel=1e-9)
            assert not any(p.requires_grad for p in model.parameters()) and not model.training
            assert model.spec.cond == P.row(name).cond and model.spec.seed == P.row(name).seed


def test_the_table_and_bad_names():
    assert len(P.NAMES) == 7 and len(set(P.NAMES)) == 7
    with pytest.raises(ValueError, match="name"):
        P.row("wall-film-0")


COMMITTED = committed(P.PACKAGE_DIR)
_NONE = none_committed("costgrad")


def test_committed_checkpoints_are_complete_and_within_budget():
    if not COMMITTED:
        pytest.skip(_NONE)
    assert_complete_and_within_budget(P.PACKAGE_DIR, P.NAMES, 1_000_000)


@pytest.mark.committed
@pytest.mark.parametrize("name", P.NAMES)
def test_committed_predictors_reach_their_recorded_mse(name):
    if not COMMITTED:
        pytest.skip(_NONE)
    model, meta = P.REGISTRY.load(name, "default")  # fresh: within 5% of the recorded validation MSE
    assert meta.metrics["val_mse"] < 0.5 * meta.metrics["still_mse"]
