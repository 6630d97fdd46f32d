"""Budgets, policies and gain recovered: the oracle recovers 1, random 0, the argmin at most 0."""

import numpy as np
import pytest

from neurips26.expansion_utility.allocation import (
    budget,
    gain_recovered,
    oracle_gap,
    policy_value,
    random_value,
    regenerated_tokens,
    top_b,
)


def _cell(seed=0, C=40, n_max=12):
    rng = np.random.default_rng(seed)
    n = rng.integers(3, n_max + 1, C)
    sel = rng.normal(size=(C, n_max))
    ev = sel + 0.3 * rng.normal(size=(C, n_max))
    mask = np.arange(n_max)[None, :] >= n[:, None]
    sel[mask] = ev[mask] = np.nan
    return sel, ev, n


def test_budget():
    assert budget(np.array([1, 9, 10, 11, 20]), 0.1).tolist() == [1, 1, 1, 2, 2]
    assert budget(7, 1.0).tolist() == 7
    with pytest.raises(ValueError, match="beta"):
        budget(5, 0.0)
    with pytest.raises(ValueError, match="beta"):
        budget(5, 1.5)


@pytest.mark.parametrize("beta", [0.1, 0.25, 0.5])
def test_top_b_picks_exactly_the_budget(beta):
    sel, _, n = _cell()
    picks = top_b(sel, n, beta)
    assert (picks.sum(1) == budget(n, beta)).all()
    assert not (picks & (np.arange(sel.shape[1])[None, :] >= n[:, None])).any()


def test_gain_recovered_of_oracle_random_and_argmin():
    sel, ev, n = _cell()
    oracle = top_b(sel, n, 0.2)
    assert gain_recovered(oracle, sel, ev, n, 0.2) == pytest.approx(1.0)
    worst = top_b(-np.nan_to_num(sel, nan=0.0) + np.where(np.isnan(sel), np.nan, 0.0), n, 0.2)
    assert gain_recovered(worst, sel, ev, n, 0.2) <= 0
    # the random policy in expectation: every step picked with equal weight gives exactly V_rand
    everything = top_b(np.zeros_like(sel), n, 1.0)
    assert np.allclose(policy_value(everything, ev), random_value(ev))
    assert gain_recovered(everything, sel, ev, n, 0.2) == pytest.approx(0.0, abs=1e-12)
    assert gain_recovered(oracle, sel, ev, n, 0.2, act=np.zeros(len(n), bool)) == 0.0  # gate never fires
    assert oracle_gap(sel, ev, n, 0.2) > 0


def test_regenerated_tokens_count_the_suffix():
    picks = np.array([[False, True, False], [True, False, False]])
    length = np.array([[3, 4, 5], [1, 1, 1]])
    assert regenerated_tokens(picks, length).tolist() == [9, 3]


def test_bad_scores():
    sel, _, n = _cell()
    with pytest.raises(ValueError, match="scores"):
        top_b(sel[:3], n, 0.1)
    bad = sel.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        top_b(bad, n, 0.1)
