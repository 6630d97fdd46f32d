"""The claims' measurements run end to end at smoke scale, on the smoke model, with every value in range."""

import numpy as np
import pytest

from neurips26.sparse_control import experiments as E


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(tmp_path_factory.mktemp("sc-exp")))
        yield E.run_claims("smoke")


def test_every_selector_and_budget_is_measured(data):
    assert set(data.axes) == {"ioi", "refusal"}
    assert set(data.axes["ioi"]) == set(E.SELECTORS)
    for methods in data.axes.values():
        for by_k in methods.values():
            for axes in by_k.values():
                assert 0.0 <= axes.reach <= 1.0 and 0.0 <= axes.feedback <= 1.0 and axes.kl >= 0.0
                assert len(set(np.atleast_1d(axes.k))) == 1
    for task, m in data.matched.items():
        assert set(m) == {"sparse", "dense"} and m["sparse"]["kl"] >= 0.0
        assert data.linear_r2[task] <= 1.0


def test_select_names_bad_input():
    with pytest.raises(ValueError, match="method"):
        E.select(None, None, "magic", 2)
