"""The cached runners at smoke scale: same results from the cache, a summary per policy."""

import numpy as np
import pytest

from neurips26.expansion_utility import experiments as X
from neurips26.expansion_utility.lofo import POLICIES


def test_smoke_runners(tmp_path):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_CACHE_DIR", str(tmp_path))
        cells = X.sweep("smoke")
        assert [c.gap for c in X.sweep("smoke")] == [c.gap for c in cells]
        curse = X.curse("smoke")
        assert set(curse) == {2, 4}
        results = X.routers("smoke")
        everything = {(c.family, c.benchmark) for c in cells}
        summary = results.summary(everything)
        assert set(summary) == set(POLICIES)
        assert summary["listwise -gate"]["coverage"] == 1.0
        assert all(np.isfinite(v["tokens"]) for v in summary.values())
        assert X.healthy_cells(cells) == set()  # 20 chains per smoke cell
