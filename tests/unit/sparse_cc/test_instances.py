"""Instances: pair indexing, validation, generators are pseudometrics and seeded."""

import numpy as np
import pytest

from neurips26.sparse_cc import (
    CCInstance,
    blobs,
    flipped_sbm,
    fractional_share,
    geometric_graph_metric,
    hidden_heavy,
    metric_closure,
    metric_lp,
    noisy_cluster_metric,
    opt_hidden_heavy,
    opt_ilp,
    pair_index,
    pair_matrix,
    pairs,
    random_metric,
    sbm_signed,
)


def test_pairs_row_major_and_pair_index_inverse():
    n = 7
    P = pairs(n)
    assert P.shape == (21, 2)
    assert np.all(P[:, 0] < P[:, 1])
    for i, (u, v) in enumerate(P):
        assert pair_index(n, int(u), int(v)) == i
        assert pair_index(n, int(v), int(u)) == i
    assert list(map(tuple, P[:3])) == [(0, 1), (0, 2), (0, 3)]


def test_pair_index_rejects_self_pair():
    with pytest.raises(ValueError, match="differ"):
        pair_index(5, 2, 2)


def test_instance_validation():
    with pytest.raises(TypeError, match="n"):
        CCInstance(n=3.0, w_plus=np.ones(3), w_minus=np.zeros(3))
    with pytest.raises(ValueError, match="w_plus"):
        CCInstance(n=3, w_plus=np.array([1.0, -1.0, 0.0]), w_minus=np.zeros(3))
    with pytest.raises(ValueError, match="w_minus"):
        CCInstance(n=3, w_plus=np.ones(3), w_minus=np.array([0.0, np.nan, 0.0]))
    with pytest.raises(ValueError, match="= 6"):
        CCInstance(n=4, w_plus=np.ones(5), w_minus=np.zeros(6))
    inst = CCInstance(n=3, w_plus=np.ones(3), w_minus=np.zeros(3))
    with pytest.raises(ValueError):
        inst.w_plus[0] = 5.0  # stored read-only


def _is_pseudometric(inst: CCInstance) -> bool:
    d = pair_matrix(inst.n, inst.w_minus)
    ok_sum = np.allclose(inst.w_plus + inst.w_minus, 1.0)
    triangle = d[:, None, :] <= d[:, :, None] + d[None, :, :] + 1e-12  # [u, w, v]: d_uv <= d_uw + d_wv
    return ok_sum and bool(np.all((d >= 0) & (d <= 1))) and bool(np.all(triangle))


@pytest.mark.parametrize(
    "make",
    [
        lambda s: blobs(15, 3, 0.5, s)[0],
        lambda s: geometric_graph_metric(15, 0.4, s)[0],
        lambda s: noisy_cluster_metric(15, 3, 0.2, s)[0],
        lambda s: random_metric(15, 0.2, s),
    ],
)
def test_pseudometric_generators_are_pseudometrics_and_seeded(make):
    a, b, c = make(0), make(0), make(1)
    assert _is_pseudometric(a)
    np.testing.assert_array_equal(a.w_minus, b.w_minus)
    assert not np.array_equal(a.w_minus, c.w_minus)


def test_pseudometric_check_can_fail():
    from neurips26.sparse_cc import CCInstance

    d = np.array([1.0, 0.2, 0.3])  # d_01 = 1 > d_02 + d_12 = 0.5
    assert not _is_pseudometric(CCInstance(n=3, w_plus=1.0 - d, w_minus=d))


def test_metric_closure_repairs_triangle_violation():
    d = np.array([[0.0, 1.0, 0.2], [1.0, 0.0, 0.3], [0.2, 0.3, 0.0]])
    out = metric_closure(d)
    assert out[0, 1] == pytest.approx(0.5)
    assert out[0, 2] == pytest.approx(0.2)


def test_sbm_signed_unit_weights_and_planted_structure():
    inst, labels = sbm_signed(30, 3, 1.0, 0.0, 0)
    assert np.all(inst.w_plus + inst.w_minus == 1.0)
    u, v = np.triu_indices(30, 1)
    np.testing.assert_array_equal(inst.w_plus, (labels[u] == labels[v]).astype(float))
    noisy, _ = sbm_signed(30, 3, 0.8, 0.2, 5)
    np.testing.assert_array_equal(noisy.w_plus, sbm_signed(30, 3, 0.8, 0.2, 5)[0].w_plus)


@pytest.mark.parametrize(("n", "H"), [(7, 2.5), (7, 40.0), (9, 6.0)])
def test_hidden_heavy_opt_closed_form_matches_ilp(n, H):
    inst, hidden = hidden_heavy(n, H, seed=3)
    assert inst.w_minus[hidden] == H and inst.w_plus[hidden] == 0.0
    assert np.sum(inst.w_minus > 0) == 1
    value, _ = opt_ilp(inst)
    assert value == pytest.approx(opt_hidden_heavy(n, H))


def test_random_metric_validates_low():
    with pytest.raises(ValueError, match="low"):
        random_metric(10, 1.5, 0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_flipped_sbm_full_lp_is_substantially_fractional(seed):
    """The family exists to test rounding: a quarter or more of its full-LP values must be fractional."""
    inst, _ = flipped_sbm(20, 4, 0.25, seed)
    x = metric_lp(inst).x  # all triangle rows: the exact full LP
    assert fractional_share(x) >= 0.25  # measured 34-39 % at n = 20, 35, 40


def test_flipped_sbm_is_the_signed_sbm_with_symmetric_flips_and_validates_flip():
    inst, labels = flipped_sbm(24, 4, 0.25, 7)
    ref, ref_labels = sbm_signed(24, 4, 0.75, 0.25, 7)
    np.testing.assert_array_equal(inst.w_plus, ref.w_plus)
    np.testing.assert_array_equal(labels, ref_labels)
    assert np.all(inst.w_plus + inst.w_minus == 1.0)
    assert not np.array_equal(inst.w_plus, flipped_sbm(24, 4, 0.25, 8)[0].w_plus)  # seeded
    assert not _is_pseudometric(inst)  # unit "+"/"-" weights: not a pseudometric instance
    clean, clean_labels = flipped_sbm(12, 3, 0.0, 0)
    u, v = np.triu_indices(12, 1)
    np.testing.assert_array_equal(clean.w_plus, (clean_labels[u] == clean_labels[v]).astype(float))
    for bad in (0.5, 0.7, -0.1):
        with pytest.raises(ValueError, match="flip"):
            flipped_sbm(12, 3, bad, 0)
    with pytest.raises(TypeError, match="flip"):
        flipped_sbm(12, 3, "0.2", 0)


@pytest.mark.parametrize("noise", [0.1, 0.3])
def test_noisy_cluster_metric_lp_is_integral_as_its_docstring_says(noise):
    """The closure keeps the LP integral at every noise level; the docstring must not claim otherwise."""
    for seed in (0, 1):
        inst, _ = noisy_cluster_metric(16, 4, noise, seed)
        assert fractional_share(metric_lp(inst).x) == 0.0
    doc = noisy_cluster_metric.__doc__
    assert "integral" in doc and "keeps the metric LP\n    fractional" not in doc
