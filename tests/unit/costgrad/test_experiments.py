"""The claims' measurements run end to end at smoke scale, with every value in range."""

import numpy as np
import pytest

from neurips26.costgrad import experiments as E


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(tmp_path_factory.mktemp("cg-exp")))
        yield E.run_claims("smoke")


def test_every_measurement_is_there_and_in_range(data):
    assert set(data.headline) == set(E.METHODS)
    for outcome in data.headline.values():
        assert outcome.success.shape == (data.episodes,) and 0.0 <= outcome.rate <= 1.0
        assert all(k.shape[1] <= 64 for k in outcome.kept)
    assert set(data.sweep["costgrad"]) == set(E.SWEEP)
    assert set(data.architecture) == {"adaln", "concat"} and len(data.architecture["adaln"]) == 3
    for cond in data.drift.values():
        assert min(min(v) for v in cond.values()) >= 0.0
    assert all(0.0 <= v <= 1.0 for v in data.stability["costgrad"] + data.stability["predattn"])
    assert all(-1.0 <= v <= 1.0 for v in data.probe_spearman)
    assert data.cost["full"]["probe"] == 0 and data.cost["costgrad"]["probe"] > 0
    kept = data.headline["costgrad"].kept[0]
    assert kept.shape[1] == 32 and (np.diff(kept, axis=1) > 0).all()


def test_bad_method_is_named():
    with pytest.raises(ValueError, match="method"):
        E.selector("magic", None, 4, np.random.default_rng(0))
