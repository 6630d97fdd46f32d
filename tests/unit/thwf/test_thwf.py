"""ThWF iterations and the error metric: exact recovery, ablations, stopping, batch == single."""

import numpy as np
import pytest

from neurips26.thwf.loss import wirtinger_gradients
from neurips26.thwf.metrics import exact_support, lifted_error, success
from neurips26.thwf.model import make_problem, make_problem_batch
from neurips26.thwf.threshold import hard_threshold
from neurips26.thwf.thwf import thwf, thwf_batch


def crandn(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


# --- the error metric -----------------------------------------------------------------------


def test_lifted_error_is_invariant_to_the_scaling_ambiguity():
    rng = np.random.default_rng(0)
    h0, x0, h, x = crandn(rng, 7), crandn(rng, 5), crandn(rng, 7), crandn(rng, 5)
    base = lifted_error(h, x, h0, x0)
    for alpha in (2.0, -0.3, 1j, 0.4 - 3j):
        assert np.isclose(lifted_error(alpha * h, x / np.conj(alpha), h0, x0), base, rtol=1e-12)
        assert lifted_error(alpha * h0, x0 / np.conj(alpha), h0, x0) < 1e-15
    assert lifted_error(np.zeros(7, complex), x, h0, x0) == pytest.approx(1.0)


def test_lifted_error_matches_the_explicit_formula_down_to_tiny_errors():
    rng = np.random.default_rng(1)
    h0, x0 = crandn(rng, 9), crandn(rng, 6)
    for scale in (1.0, 1e-6, 1e-12):
        h, x = 1j * h0 + scale * crandn(rng, 9), -1j * x0 + scale * crandn(rng, 6)
        explicit = np.linalg.norm(np.outer(h, np.conj(x)) - np.outer(h0, np.conj(x0))) / (
            np.linalg.norm(h0) * np.linalg.norm(x0)
        )
        assert lifted_error(h, x, h0, x0) == pytest.approx(explicit, rel=1e-3 if scale < 1e-9 else 1e-9)


def test_success_counts_nan_as_failure():
    np.testing.assert_array_equal(success(np.array([1e-4, 1e-2, np.nan])), [True, False, False])


# --- ThWF -----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_noiseless_exact_recovery_at_generous_m(seed):
    p = make_problem(32, 32, 256, 3, 3, amplitudes="equal", seed=seed)
    result = thwf(p, 3, 3)
    assert result.converged and not result.diverged and result.iterations < 300
    assert result.errors[-1] < 1e-8
    assert lifted_error(result.h, result.x, p.h0, p.x0) == pytest.approx(result.errors[-1])
    assert exact_support(result.initialization.support_h, p.h0)
    assert exact_support(result.initialization.support_x, p.x0)
    assert exact_support(result.h, p.h0) and exact_support(result.x, p.x0)
    assert result.errors.shape == (result.iterations + 1,)


def test_error_decreases_linearly_at_generous_m():
    p = make_problem(32, 32, 256, 3, 3, seed=5)
    errors = thwf(p, 3, 3, tol=1e-14).errors
    tail = errors[(errors < 1e-2) & (errors > 1e-12)]
    ratios = tail[1:] / tail[:-1]
    assert np.all(ratios < 0.9)  # a contraction at every step of the tail


def test_soft_thresholding_also_recovers():
    p = make_problem(32, 32, 256, 3, 3, amplitudes="equal", seed=1)
    result = thwf(p, 3, 3, threshold="soft")
    assert result.errors[-1] < 1e-6


def test_ablation_options_change_the_iterates():
    p = make_problem(32, 32, 64, 4, 4, seed=2)
    plain = thwf(p, 4, 4, threshold="none", max_iter=20)
    assert np.count_nonzero(plain.x) > 4  # without thresholding the iterates are dense
    dense = thwf(p, 4, 4, init="dense", max_iter=20)
    assert dense.initialization.support_h.all()
    assert np.count_nonzero(dense.h) == 4 and np.count_nonzero(dense.x) == 4


@pytest.mark.parametrize(("init", "threshold"), [("sparse", "hard"), ("dense", "hard"), ("dense", "none")])
def test_every_start_takes_the_step_eta_over_the_initial_estimates_size(init, threshold):
    # One step rule for ThWF and its ablations: η / σ̂ with σ̂ = max(||y||, ||h⁰|| ||x⁰||) (not η / ||y||,
    # which is too long from the dense start, whose σ1 = ||h⁰|| ||x⁰|| exceeds ||y||).
    p = make_problem(32, 32, 96, 4, 4, seed=3)
    run = thwf(p, 4, 4, init=init, threshold=threshold, max_iter=1, eta=0.5)
    start = run.initialization
    size = np.linalg.norm(start.h) * np.linalg.norm(start.x)
    assert size == pytest.approx(float(start.sigma1), rel=1e-10)
    sigma = max(size, float(np.linalg.norm(p.y)))
    if init == "dense":
        assert size > 1.2 * np.linalg.norm(p.y)  # the case the old step η/||y|| got wrong
    grad_h, grad_x = wirtinger_gradients(p.a, p.y, start.h, start.x)
    h1, x1 = start.h - 0.5 / sigma * grad_h, start.x - 0.5 / sigma * grad_x
    if threshold == "hard":
        h1, x1 = hard_threshold(h1, 4), hard_threshold(x1, 4)
    np.testing.assert_allclose(run.h, h1, atol=1e-13)
    np.testing.assert_allclose(run.x, x1, atol=1e-13)


def test_dense_start_ablation_does_not_blow_up_above_the_dense_boundary():
    # M = 192 = 3(K + N): the dense start is usable. With the step η/||y|| the thresholded iterations from
    # it reached a lifted error of 284 after two steps on this instance (σ1 = 1.41 > ||y|| ≈ 1); with the
    # step scaled by the initial estimate they converge.
    p = make_problem(32, 32, 192, 12, 12, seed=25)
    run = thwf(p, 12, 12, init="dense")
    assert float(run.initialization.sigma1) > 1.3 * float(np.linalg.norm(p.y))
    assert np.all(run.errors[:3] < 2.0)
    assert not run.diverged and run.errors[-1] < 1e-6


def test_divergence_is_detected_and_stops_early():
    p = make_problem(16, 16, 64, 2, 2, seed=0)
    result = thwf(p, 2, 2, eta=50.0, threshold="none")
    assert result.diverged and not result.converged
    assert result.iterations < 50


def test_runs_without_ground_truth():
    p = make_problem(16, 16, 96, 2, 2, seed=0)
    blind = type(p)(p.a, p.y, p.k)
    result = thwf(blind, 2, 2)
    assert result.errors is None
    assert lifted_error(result.h, result.x, p.h0, p.x0) < 1e-8


def test_same_seed_same_result():
    a = thwf(make_problem(16, 16, 48, 2, 3, seed=9), 2, 3, max_iter=50)
    b = thwf(make_problem(16, 16, 48, 2, 3, seed=9), 2, 3, max_iter=50)
    np.testing.assert_array_equal(a.errors, b.errors)
    np.testing.assert_array_equal(a.h, b.h)


@pytest.mark.parametrize(
    ("kwargs", "options"),
    [
        ({}, {}),
        ({"noise": 0.01}, {"threshold": "soft"}),
        ({}, {"init": "dense", "max_iter": 60}),
        ({}, {"threshold": "none", "max_iter": 60}),
    ],
)
def test_batched_path_equals_single_path(kwargs, options):
    s = np.array([2, 3, 4, 6, 8, 3])
    batch = make_problem_batch(32, 32, 64, s.tolist(), s.tolist(), s.size, seed=11, **kwargs)
    result = thwf_batch(batch, s, s, **options)
    outcomes = set()
    for i in range(s.size):
        single = thwf(batch.problem(i), int(s[i]), int(s[i]), **options)
        succeeded = bool(single.errors[-1] < 1e-3)
        outcomes.add(succeeded)
        # Same iterates up to round-off. A failing run does not contract, so round-off (batched vs
        # single BLAS kernels) grows along it: compare its first 30 iterates only.
        n = single.iterations + 1 if succeeded else min(single.iterations + 1, 30)
        np.testing.assert_allclose(result.errors[i, :n], single.errors[:n], rtol=1e-6, atol=1e-12)
        if succeeded:
            assert result.iterations[i] == single.iterations
            assert result.converged[i] == single.converged and result.diverged[i] == single.diverged
            assert np.all(np.isnan(result.errors[i, single.iterations + 1 :]))
            np.testing.assert_allclose(
                np.outer(result.h[i], np.conj(result.x[i])), np.outer(single.h, np.conj(single.x)), atol=1e-9
            )
    if not options:
        assert outcomes == {True, False}  # the batch mixes successes and failures (compaction is exercised)


def test_thwf_rejects_bad_arguments():
    p = make_problem(8, 8, 16, 2, 2, seed=0)
    with pytest.raises(ValueError, match="init"):
        thwf(p, 2, 2, init="random")
    with pytest.raises(ValueError, match="threshold"):
        thwf(p, 2, 2, threshold="firm")
    with pytest.raises(ValueError, match="eta"):
        thwf(p, 2, 2, eta=-0.5)
    with pytest.raises(ValueError, match="s_h"):
        thwf(p, 9, 2)
    with pytest.raises(ValueError, match="s_x"):
        thwf(p, 2, -1)
    with pytest.raises(TypeError, match="max_iter"):
        thwf(p, 2, 2, max_iter=10.5)
    with pytest.raises(TypeError, match="problem"):
        thwf(make_problem_batch(8, 8, 16, 2, 2, 2), 2, 2)
    with pytest.raises(TypeError, match="batch"):
        thwf_batch(p, 2, 2)
    with pytest.raises(ValueError, match="s_h"):
        thwf_batch(make_problem_batch(8, 8, 16, 2, 2, 2), np.array([1, 2, 3]), 2)
