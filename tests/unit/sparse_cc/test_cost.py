"""Cost: closed forms for all-singletons and all-in-one, disagreements, label validation."""

import numpy as np
import pytest

from neurips26.sparse_cc import blobs, cost, disagreements, fractional_cost, pair_matrix, sbm_signed


def test_closed_form_singletons_and_one_cluster():
    inst, _ = blobs(12, 3, 0.5, 0)
    # all singletons separate every pair: cost = sum w_plus; one cluster joins all: cost = sum w_minus
    assert cost(inst, np.arange(12)) == pytest.approx(inst.w_plus.sum())
    assert cost(inst, np.zeros(12, dtype=int)) == pytest.approx(inst.w_minus.sum())


def test_cost_of_two_clusters_by_hand():
    inst, _ = blobs(5, 2, 0.5, 1)
    labels = np.array([0, 0, 1, 1, 1])
    Wp, Wm = pair_matrix(5, inst.w_plus), pair_matrix(5, inst.w_minus)
    expected = sum(
        Wp[u, v] if labels[u] != labels[v] else Wm[u, v] for u in range(5) for v in range(u + 1, 5)
    )
    assert cost(inst, labels) == pytest.approx(expected)


def test_disagreements_count_equals_unit_weight_cost():
    inst, planted = sbm_signed(20, 4, 0.9, 0.1, 2)
    labels = np.random.default_rng(0).integers(0, 3, size=20)
    assert disagreements(inst, labels).sum() == pytest.approx(cost(inst, labels))
    assert disagreements(inst, planted).sum() == pytest.approx(cost(inst, planted))


def test_bad_labels_and_x():
    inst, _ = blobs(6, 2, 0.5, 0)
    with pytest.raises(ValueError, match="labels"):
        cost(inst, np.zeros(5, dtype=int))
    with pytest.raises(TypeError, match="labels"):
        cost(inst, np.zeros(6))
    with pytest.raises(ValueError, match="x"):
        fractional_cost(inst, np.zeros(3))
