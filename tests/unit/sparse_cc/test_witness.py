"""Witnesses: A^2 counts equal a brute-force loop; brackets contain the truth; imputation rules."""

import numpy as np
import pytest

from neurips26.sparse_cc import (
    IMPUTE_RULES,
    blobs,
    geometric_graph_metric,
    impute,
    pair_index,
    pair_matrix,
    pairs,
    sample_observed,
    witness_counts,
)


def _brute_witnesses(n, E):
    seen = set(E.tolist())
    out = np.zeros(n * (n - 1) // 2, dtype=int)
    for u, v in pairs(n):
        for w in range(n):
            if w not in (u, v) and pair_index(n, u, w) in seen and pair_index(n, w, v) in seen:
                out[pair_index(n, u, v)] += 1
    return out


@pytest.mark.parametrize(("n", "m", "seed"), [(8, 10, 0), (12, 30, 1), (15, 0, 2), (10, 45, 3)])
def test_witness_counts_match_brute_force(n, m, seed):
    E = sample_observed(n, m, seed)
    np.testing.assert_array_equal(witness_counts(n, E), _brute_witnesses(n, E))


def _brute_brackets(n, E, xbar_full):
    seen = set(E.tolist())
    X = pair_matrix(n, xbar_full)
    lo, up = {}, {}
    for u, v in pairs(n):
        ws = [
            w
            for w in range(n)
            if w not in (u, v) and pair_index(n, u, w) in seen and pair_index(n, w, v) in seen
        ]
        if ws:
            lo[(u, v)] = max(abs(X[u, w] - X[w, v]) for w in ws)
            up[(u, v)] = min(1.0, min(X[u, w] + X[w, v] for w in ws))
    return lo, up


@pytest.mark.parametrize(
    "make", [lambda s: blobs(18, 3, 0.6, s)[0], lambda s: geometric_graph_metric(18, 0.4, s)[0]]
)
def test_brackets_contain_true_metric_and_match_brute_force(make):
    for seed in range(3):
        inst = make(seed)
        n = inst.n
        E = sample_observed(n, 60, seed)
        d = inst.w_minus  # the pseudometric; x̄ = its restriction to E
        for rule in IMPUTE_RULES:
            imp = impute(n, E, d[E], rule=rule)
            has = imp.witnesses > 0
            assert np.all(imp.lower[has] <= imp.upper[has] + 1e-12)
            assert np.all(imp.lower[has] <= d[has] + 1e-12) and np.all(d[has] <= imp.upper[has] + 1e-12)
            assert np.all((imp.x_hat >= 0) & (imp.x_hat <= 1))
            np.testing.assert_array_equal(imp.x_hat[E], d[E])
            unseen = np.setdiff1d(np.arange(d.shape[0]), E)
            inside = unseen[has[unseen]]
            assert np.all(imp.x_hat[inside] >= imp.lower[inside] - 1e-12)
            assert np.all(imp.x_hat[inside] <= imp.upper[inside] + 1e-12)
            assert np.all(imp.x_hat[unseen[~has[unseen]]] == 1.0)
            assert imp.n_no_witness == int(np.sum(~has[unseen]))
        lo, up = _brute_brackets(n, E, np.where(np.isin(np.arange(d.shape[0]), E), d, 0.0))
        imp = impute(n, E, d[E])
        for (u, v), val in lo.items():
            assert imp.lower[pair_index(n, u, v)] == pytest.approx(val)
            assert imp.upper[pair_index(n, u, v)] == pytest.approx(up[(u, v)])
        np.testing.assert_allclose(
            imp.x_hat[~np.isin(np.arange(d.shape[0]), E) & (imp.witnesses > 0)],
            imp.upper[~np.isin(np.arange(d.shape[0]), E) & (imp.witnesses > 0)],
        )


def test_rules_differ_and_midpoint_is_bracket_centre():
    inst, _ = blobs(20, 4, 0.6, 0)
    E = sample_observed(20, 80, 0)
    d = inst.w_minus
    up = impute(20, E, d[E], "upper")
    mid = impute(20, E, d[E], "midpoint")
    med = impute(20, E, d[E], "median")
    unseen = ~np.isin(np.arange(d.shape[0]), E) & (up.witnesses > 0)
    np.testing.assert_allclose(mid.x_hat[unseen], 0.5 * (up.lower[unseen] + up.upper[unseen]))
    assert not np.allclose(up.x_hat, mid.x_hat)
    assert not np.allclose(med.x_hat, up.x_hat)


def test_all_pairs_observed_returns_x_unchanged():
    inst, _ = blobs(10, 2, 0.6, 0)
    E = np.arange(45)
    imp = impute(10, E, inst.w_minus)
    np.testing.assert_array_equal(imp.x_hat, inst.w_minus)
    assert imp.n_no_witness == 0


def test_bad_rule_and_x():
    E = sample_observed(8, 10, 0)
    with pytest.raises(ValueError, match="upper"):
        impute(8, E, np.full(10, 0.5), rule="mean")
    with pytest.raises(ValueError, match="x"):
        impute(8, E, np.full(10, 1.5))
    with pytest.raises(ValueError, match="x"):
        impute(8, E, np.full(9, 0.5))
    with pytest.raises(ValueError, match="observed"):
        witness_counts(8, np.array([0, 0]))
