"""Routers and tiny LM: smoke checkpoints train, load fresh and reproduce their metrics; the committed ones
reproduce their recorded gated GR, loss and greedy accuracy within 0.02 (on any CPU); the folds score every
policy on the held-out family."""

import numpy as np
import pytest

from neurips26.expansion_utility import prepare as P
from neurips26.expansion_utility.lofo import POLICIES, evaluate_fold
from neurips26.expansion_utility.sweep import BUDGET
from tests.unit.committed_checkpoints import assert_complete_and_within_budget, committed, none_committed


@pytest.fixture(scope="module")
def smoke_cache(tmp_path_factory):
    folder = tmp_path_factory.mktemp("eu-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(folder))
        written = P.prepare("smoke")
        assert [m.name for m in written] == [P.NAME, P.LM_NAME]
        yield folder


def test_smoke_routers_load_fresh_and_score_every_policy(smoke_cache):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(smoke_cache))
        bank, meta = P.REGISTRY.load(P.NAME, "smoke")
        assert P.measure(P.NAME, "smoke", bank) == pytest.approx(meta.metrics, abs=1e-9)
        data, results = P.sweep_data("smoke")
        f = bank.folds[0]
        cells, auc = evaluate_fold(bank.fold(f), data, f, beta=BUDGET)
        assert {c.policy for c in cells} == set(POLICIES) and set(auc) == set(POLICIES)
        for c in cells:
            assert 0 <= c.coverage <= 1 and c.tokens > 0
            if c.policy == "listwise -gate":
                assert c.coverage == 1.0


def test_smoke_tiny_lm_loads_fresh(smoke_cache):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(smoke_cache))
        model, meta = P.REGISTRY.load(P.LM_NAME, "smoke")
        assert P.measure(P.LM_NAME, "smoke", model) == pytest.approx(meta.metrics, abs=1e-9)
        assert set(meta.metrics) == {"loss", "greedy_accuracy"}


COMMITTED = committed(P.PACKAGE_DIR)
_NONE = none_committed("expansion_utility")


def test_committed_checkpoint_is_complete_and_within_budget():
    if not COMMITTED:
        pytest.skip(_NONE)
    assert_complete_and_within_budget(P.PACKAGE_DIR, (P.NAME, P.LM_NAME), 1_000_000)


@pytest.mark.committed
def test_committed_routers_reach_their_recorded_gain():
    if not COMMITTED:
        pytest.skip(_NONE)
    bank, meta = P.REGISTRY.load(P.NAME, "default")
    now = P.measure(P.NAME, "default", bank)
    assert abs(now["gated_gr"] - meta.metrics["gated_gr"]) <= 0.02
    assert np.isfinite(now["auc"])


@pytest.mark.committed
def test_committed_tiny_lm_reaches_its_recorded_metrics():
    if not COMMITTED:
        pytest.skip(_NONE)
    model, meta = P.REGISTRY.load(P.LM_NAME, "default")
    now = P.measure(P.LM_NAME, "default", model)
    for key in ("loss", "greedy_accuracy"):
        assert abs(now[key] - meta.metrics[key]) <= 0.02
