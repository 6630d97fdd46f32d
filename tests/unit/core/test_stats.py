"""neurips26.stats.loglog_fit and neurips26.seeding.sub_seed, shared by several chapters."""

import numpy as np
import pytest

from neurips26.seeding import sub_seed
from neurips26.stats import loglog_fit


def test_loglog_fit_recovers_a_power_law():
    x = np.array([2.0, 4.0, 8.0, 16.0])
    slope, intercept = loglog_fit(x, 3.0 * x**1.5)
    assert slope == pytest.approx(1.5) and intercept == pytest.approx(np.log(3.0))
    assert loglog_fit(x, 3 * x**-0.5)[0] == pytest.approx(-0.5)


def test_loglog_fit_skips_invalid_points_only_when_asked():
    s = np.array([2.0, 4.0, 8.0, 16.0])
    m = np.array([np.nan, 4.0, 8.0, np.nan])
    assert loglog_fit(s, m, skip_invalid=True)[0] == pytest.approx(1.0)
    assert np.isnan(loglog_fit(s, np.array([np.nan, np.nan, 8.0, np.nan]), skip_invalid=True)[0])
    with pytest.raises(ValueError, match="finite and positive"):
        loglog_fit(s, m)
    with pytest.raises(ValueError, match="finite and positive"):
        loglog_fit(s, -s)
    with pytest.raises(ValueError, match="1-D of equal length"):
        loglog_fit(s, s[:3])


def test_sub_seeds_are_reproducible_and_distinct():
    assert sub_seed(0, 1, 2) == int(np.random.SeedSequence([0, 1, 2]).generate_state(1)[0])
    assert sub_seed(0, 1, 2) == sub_seed(0, 1, 2)
    seeds = {sub_seed(s, i, j) for s in range(3) for i in range(4) for j in range(4)}
    assert len(seeds) == 48


def test_wilson_matches_scipy_and_is_exact_at_the_ends():
    from scipy.stats import binomtest

    from neurips26.stats import wilson

    for s, n in ((0, 12), (3, 12), (12, 12), (41, 41), (7, 240)):
        ci = binomtest(s, n).proportion_ci(method="wilson")
        assert wilson(s, n) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert wilson(0, 5)[0] == 0.0 and wilson(5, 5)[1] == 1.0
    with pytest.raises(ValueError, match="successes"):
        wilson(6, 5)
    with pytest.raises(ValueError, match="trials"):
        wilson(0, 0)
