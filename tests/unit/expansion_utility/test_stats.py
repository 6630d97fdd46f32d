"""Wilson intervals, Gini, health and correlation."""

import numpy as np
import pytest
from scipy.stats import binomtest

from neurips26.expansion_utility.stats import (
    cell_gini,
    chain_gini,
    gini,
    is_healthy,
    mean_bootstrap,
    pearson,
    pearson_bootstrap,
    wilson,
)


def test_wilson_of_41_of_41_is_the_papers_interval():
    lo, hi = wilson(41, 41)
    assert lo == pytest.approx(0.9143, abs=1e-4) and hi == 1.0


@pytest.mark.parametrize(("s", "n"), [(0, 5), (3, 10), (40, 41), (17, 63), (1, 1)])
def test_wilson_equals_scipy(s, n):
    ci = binomtest(s, n).proportion_ci(method="wilson")
    assert wilson(s, n) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_gini_invariants():
    assert gini(np.ones(7)) == 0.0
    for n in (2, 5, 10):
        one_hot = np.zeros(n)
        one_hot[n // 2] = 3.0
        assert gini(one_hot) == pytest.approx((n - 1) / n)
    x = np.random.default_rng(0).random(9)
    assert gini(5 * x) == pytest.approx(gini(x))
    assert gini(x[::-1]) == pytest.approx(gini(x))
    with pytest.raises(ValueError, match="x"):
        gini(np.zeros(3))
    with pytest.raises(ValueError, match="x"):
        gini(np.array([1.0, -1.0]))


def test_chain_and_cell_gini_clip_and_skip():
    u = np.array([[0.5, -0.2, 0.0, np.nan], [-0.1, -0.1, np.nan, np.nan], [0.2, 0.2, 0.2, 0.2]])
    g = chain_gini(u)
    assert g[0] == pytest.approx(2 / 3) and np.isnan(g[1]) and g[2] == 0.0
    assert cell_gini(u) == pytest.approx(1 / 3)


def test_health_and_pearson():
    assert is_healthy(100, 0.02, 0.5, 6)
    assert not is_healthy(49, 0.02, 0.5, 6)
    assert not is_healthy(100, 0.11, 0.5, 6)
    assert not is_healthy(100, 0.02, 0.95, 6)
    assert not is_healthy(100, 0.02, 0.5, 2)
    x = np.arange(10.0)
    assert pearson(x, 2 * x + 1) == pytest.approx(1.0)
    lo, hi = pearson_bootstrap(x, -x + np.sin(x), draws=200)
    assert -1 <= lo <= hi < 0
    with pytest.raises(ValueError, match="constant"):
        pearson(x, np.ones(10))


def test_mean_bootstrap_brackets_the_mean_and_names_bad_input():
    x = np.random.default_rng(0).normal(0.3, 0.1, size=40)
    lo, hi = mean_bootstrap(x, seed=1)
    assert lo < x.mean() < hi
    assert hi - lo < 0.1  # about 4 standard errors of 0.016
    assert mean_bootstrap(x, seed=1) == (lo, hi)
    with pytest.raises(ValueError, match="x"):
        mean_bootstrap(np.array([1.0, np.nan]))
