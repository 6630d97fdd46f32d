"""Spectral initialisers: exact supports at generous M, correct scaling, batch == single."""

import numpy as np
import pytest

from neurips26.thwf.init import back_projection, dense_spectral_init, sparse_spectral_init
from neurips26.thwf.metrics import exact_support, lifted_error
from neurips26.thwf.model import make_problem, make_problem_batch


@pytest.mark.parametrize("seed", range(5))
def test_top_s_rule_recovers_both_supports_at_generous_m(seed):
    # Equal-modulus nonzeros: with Gaussian ones the weakest coefficient can be arbitrarily small.
    p = make_problem(32, 32, 256, 3, 3, amplitudes="equal", seed=seed)
    init = sparse_spectral_init(p, 3, 3)
    assert exact_support(init.support_h, p.h0) and exact_support(init.support_x, p.x0)
    assert exact_support(init.h, p.h0) and exact_support(init.x, p.x0)  # zero outside the supports
    assert lifted_error(init.h, init.x, p.h0, p.x0) < 0.5


def test_adaptive_rule_recovers_supports_without_knowing_s():
    p = make_problem(32, 32, 1024, 2, 2, amplitudes="equal", seed=0)
    init = sparse_spectral_init(p, 1, 1, rule="adaptive")  # s is ignored by this rule
    assert exact_support(init.support_h, p.h0) and exact_support(init.support_x, p.x0)


def test_adaptive_rule_falls_back_to_one_entry_when_nothing_passes():
    p = make_problem(16, 16, 16, 4, 4, seed=0)
    init = sparse_spectral_init(p, 1, 1, rule="adaptive", alpha=1e6)
    assert init.support_h.sum() == 1 and init.support_x.sum() == 1


def test_initial_factors_are_the_scaled_leading_pair():
    p = make_problem(16, 12, 64, 3, 2, seed=1)
    y_back = back_projection(p)
    init = sparse_spectral_init(p, 3, 2)
    sub = y_back * init.support_h[:, None] * init.support_x[None, :]
    sigma = np.linalg.svd(sub, compute_uv=False)
    assert np.isclose(init.sigma1, sigma[0])
    assert np.isclose(np.linalg.norm(init.h), np.sqrt(sigma[0]))
    assert np.isclose(np.linalg.norm(init.x), np.sqrt(sigma[0]))
    # h x^* is the best rank-one approximation of the restricted back-projection
    assert np.isclose(
        np.linalg.norm(sub - np.outer(init.h, np.conj(init.x))), np.sqrt(np.sum(sigma[1:] ** 2))
    )
    assert np.isclose(init.d_hat, np.linalg.norm(p.y))


def test_dense_init_uses_the_whole_back_projection():
    p = make_problem(16, 12, 64, 3, 2, seed=2)
    init = dense_spectral_init(p)
    assert init.support_h.all() and init.support_x.all()
    y_back = back_projection(p)
    u, sigma, vh = np.linalg.svd(y_back)
    np.testing.assert_allclose(
        np.outer(init.h, np.conj(init.x)), sigma[0] * np.outer(u[:, 0], vh[0]), atol=1e-12
    )


def test_batched_init_equals_single_init():
    s = np.array([2, 3, 4, 5])
    batch = make_problem_batch(16, 16, 96, s.tolist(), s.tolist(), 4, seed=3)
    init = sparse_spectral_init(batch, s, s)
    for i in range(4):
        single = sparse_spectral_init(batch.problem(i), int(s[i]), int(s[i]))
        np.testing.assert_array_equal(init.support_h[i], single.support_h)
        np.testing.assert_array_equal(init.support_x[i], single.support_x)
        np.testing.assert_allclose(
            np.outer(init.h[i], np.conj(init.x[i])), np.outer(single.h, np.conj(single.x)), atol=1e-12
        )


def test_init_rejects_bad_arguments():
    p = make_problem(8, 8, 16, 2, 2, seed=0)
    with pytest.raises(ValueError, match="s_h"):
        sparse_spectral_init(p, 0, 2)
    with pytest.raises(ValueError, match="s_x"):
        sparse_spectral_init(p, 2, 9)
    with pytest.raises(ValueError, match="rule"):
        sparse_spectral_init(p, 2, 2, rule="median")
    with pytest.raises(TypeError, match="problem"):
        sparse_spectral_init(p.a, 2, 2)
    with pytest.raises(TypeError, match="s_h"):
        sparse_spectral_init(p, [2], 2)  # one sparsity per instance needs a batch
