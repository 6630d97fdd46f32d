"""Metrics: forecast MSE by horizon, IQM, NRMSE, H(B|F) on the high-margin slice, ARI/NMI/purity and the
asymptotic-basin accuracy, on hand-made cases with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import trim_mean

from neurips26.skae.metrics import (
    aggregate,
    alignment,
    asymptotic_basin_accuracy,
    conditional_entropy,
    forecast_mse,
    high_margin_slice,
    iqm,
    nrmse,
    partition_scores,
    purity,
)
from neurips26.skae.rollout import mse_through


def test_forecast_mse_is_the_rollout_reducer() -> None:
    rng = np.random.default_rng(0)
    p, y = rng.normal(size=(4, 12, 2)), rng.normal(size=(4, 12, 2))
    p[1, 7:] = np.nan
    got = forecast_mse(p, y, (3, 12))
    for h in (3, 12):
        want = mse_through(p, y, h)
        assert (got[h].mse, got[h].diverged) == (want.mse, want.diverged)
        np.testing.assert_array_equal(got[h].per_start, want.per_start)
    assert got[12].diverged == 1
    with pytest.raises(ValueError, match="horizons"):
        forecast_mse(p, y, (0,))


def test_iqm_is_trim_mean_quarter() -> None:
    v = [1.0, 2.0, 3.0, 4.0, 100.0, -50.0, 7.0, 8.0]
    assert iqm(v) == pytest.approx(trim_mean(v, 0.25))
    assert iqm([1.0, 2.0, 3.0, 1000.0]) == pytest.approx(2.5)  # one of four cut from each end
    with pytest.raises(ValueError, match="values"):
        iqm([1.0, float("nan")])
    with pytest.raises(ValueError, match="values"):
        iqm([])


def test_aggregate_is_iqm_then_mean() -> None:
    per = {"a": [1.0, 2.0, 3.0, 1000.0], "b": [4.0, 4.0, 4.0, 4.0]}
    assert aggregate(per) == pytest.approx((2.5 + 4.0) / 2)
    with pytest.raises(ValueError, match="per_system"):
        aggregate({})
    with pytest.raises(ValueError, match=r"per_system\['a'\]"):
        aggregate({"a": [float("nan")]})


def test_nrmse_known_value() -> None:
    y = np.zeros((2, 3, 2))
    y[0, :, 0], y[1, :, 0] = 1.0, -1.0  # std of truth over all entries: sqrt(0.5)
    p = y.copy()
    p[:, 1] += 1.0  # error 1 everywhere at step 1
    got = nrmse(p, y)
    np.testing.assert_allclose(got, [0.0, 1.0 / math.sqrt(0.5), 0.0])
    np.testing.assert_allclose(nrmse(p, y, scale=2.0), [0.0, 0.5, 0.0])
    with pytest.raises(ValueError, match="scale"):
        nrmse(p, y, scale=0.0)
    with pytest.raises(ValueError, match="truth"):
        nrmse(p, y[:, :2])


def test_conditional_entropy_known_cases() -> None:
    basins = np.array([0, 0, 1, 1, 2, 2])
    assert conditional_entropy(basins, basins) == 0.0  # families equal the basins
    assert conditional_entropy(basins, basins + 7) == 0.0  # names do not matter
    assert conditional_entropy(basins, np.zeros(6, dtype=int)) == pytest.approx(math.log(3))  # one family
    # two families: {0,0,1} and {1,2,2}; H = ½ H(2/3,1/3) + ½ H(1/3,2/3)
    h = -(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3))
    assert conditional_entropy(basins, np.array([0, 0, 0, 1, 1, 1])) == pytest.approx(h)
    with pytest.raises(TypeError, match="basins"):
        conditional_entropy(basins.astype(float), basins)
    with pytest.raises(ValueError, match="families"):
        conditional_entropy(basins, basins[:3])


def test_high_margin_slice_is_per_label_with_ties() -> None:
    labels = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    margin = np.array([0.1, 0.2, 0.3, 0.4, 5.0, 5.0, 5.0, 1.0])
    keep = high_margin_slice(margin, labels)
    # label 0: quantile .75 of (.1,.2,.3,.4) = .325 → only .4; label 1: ties at 5.0 all kept
    assert keep.tolist() == [False, False, False, True, True, True, True, False]
    with pytest.raises(ValueError, match="margin"):
        high_margin_slice(np.array([np.nan] * 8), labels)
    with pytest.raises(ValueError, match="quantile"):
        high_margin_slice(margin, labels, 1.5)


def test_alignment_on_the_slice() -> None:
    # low-margin states are mixed, high-margin states are pure: the slice sees H = 0 and 2 families
    basins = np.array([0] * 4 + [1] * 4)
    families = np.array([0, 1, 0, 0, 1, 0, 1, 1])
    margin = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    a = alignment(basins, families, margin)
    assert (a.entropy, a.families, a.states) == (0.0, 2, 2)
    one = alignment(basins, np.zeros(8, dtype=int), margin)
    assert one.entropy == pytest.approx(math.log(2)) and one.families == 1


def test_partition_scores_known_labelings() -> None:
    b = np.array([0, 0, 0, 1, 1, 1])
    same = partition_scores(b, np.array([5, 5, 5, 2, 2, 2]))
    assert (same.ari, same.nmi, same.purity) == pytest.approx((1.0, 1.0, 1.0))
    one = partition_scores(b, np.zeros(6, dtype=int))
    assert one.ari == pytest.approx(0.0) and one.nmi == pytest.approx(0.0) and one.purity == 0.5
    # singletons: purity 1 (every family is pure), ARI 0
    single = partition_scores(b, np.arange(6))
    assert single.purity == 1.0 and single.ari == pytest.approx(0.0)
    assert purity(b, np.array([0, 0, 1, 1, 2, 2])) == pytest.approx(5 / 6)


def test_asymptotic_basin_accuracy() -> None:
    centers = np.array([[-1.0, 0.0], [1.0, 0.0]])
    final = np.array([[-0.9, 0.1], [0.8, 0.0], [0.2, 0.0], [np.nan, 0.0]])
    basins = np.array([0, 1, 0, 1])
    assert asymptotic_basin_accuracy(final, basins, centers) == 0.5  # third wrong, NaN counts wrong
    with pytest.raises(ValueError, match="basins"):
        asymptotic_basin_accuracy(final, np.array([0, 1, 2, 0]), centers)
    with pytest.raises(ValueError, match="final_states"):
        asymptotic_basin_accuracy(final[:, :1], basins, centers)
