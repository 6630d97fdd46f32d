"""Controllability of a linear map and Driver-OMP: the minimum-energy control and its Gramian energy, the
rank test, the penalised control, the energy ball, and OMP recovering a sparse control exactly (as
scikit-learn's OMP does) in the noiseless, low-coherence case."""

import numpy as np
import pytest
from sklearn.linear_model import OrthogonalMatchingPursuit

from neurips26.sparse_control.controllability import (
    control_energy,
    is_target_controllable,
    min_energy_control,
    penalised_control,
    project_energy,
)
from neurips26.sparse_control.driver_omp import driver_omp


def test_min_energy_control_and_its_gramian_energy():
    rng = np.random.default_rng(0)
    G = rng.normal(size=(3, 7))
    delta = rng.normal(size=3)
    a = min_energy_control(G, delta)
    np.testing.assert_allclose(G @ a, delta, atol=1e-12)
    np.testing.assert_allclose(a, np.linalg.pinv(G) @ delta)
    assert control_energy(G, delta) == pytest.approx(a @ a, rel=1e-10)
    assert control_energy(G, delta) == pytest.approx(delta @ np.linalg.inv(G @ G.T) @ delta, rel=1e-10)
    other = a + (np.eye(7) - np.linalg.pinv(G) @ G) @ rng.normal(size=7)  # another exact control
    np.testing.assert_allclose(G @ other, delta, atol=1e-10)
    assert other @ other >= a @ a


def test_rank_test():
    G = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    assert is_target_controllable(G)
    assert not is_target_controllable(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert not is_target_controllable(np.ones((4, 2)))  # more targets than nodes


def test_penalised_control_limits():
    rng = np.random.default_rng(1)
    G, delta, P = rng.normal(size=(10, 4)), rng.normal(size=10), rng.normal(size=(5, 4))
    ls = np.linalg.lstsq(G, delta, rcond=None)[0]
    np.testing.assert_allclose(penalised_control(G, delta, P, lam_p=0.0, lam_e=0.0), ls, atol=1e-10)
    strong = penalised_control(G, delta, P, lam_p=1e6, lam_e=0.0)
    assert np.linalg.norm(P @ strong) < 1e-3 * np.linalg.norm(P @ ls)
    capped = penalised_control(G, delta, energy=0.1)
    assert np.linalg.norm(capped) <= 0.1 + 1e-12
    np.testing.assert_allclose(project_energy(np.array([3.0, 4.0]), 10.0), [3.0, 4.0])
    np.testing.assert_allclose(np.linalg.norm(project_energy(np.array([3.0, 4.0]), 1.0)), 1.0)


def test_omp_recovers_a_sparse_control_like_sklearn():
    rng = np.random.default_rng(2)
    n, K, k = 60, 200, 4
    G = rng.normal(size=(n, K)) / np.sqrt(n)  # low coherence
    truth = np.zeros(K)
    support = rng.choice(K, size=k, replace=False)
    truth[support] = rng.choice([-1, 1], size=k) * rng.uniform(1.0, 2.0, size=k)
    delta = G @ truth
    control = driver_omp(G, delta, k=k, lam_e=0.0, eta=0.0)
    assert set(control.nodes) == set(support)
    np.testing.assert_allclose(control.amplitudes, truth[control.nodes], atol=1e-10)
    assert control.residual < 1e-10
    ref = OrthogonalMatchingPursuit(n_nonzero_coefs=k, fit_intercept=False).fit(G, delta)
    np.testing.assert_allclose(ref.coef_[control.nodes], control.amplitudes, atol=1e-8)


def test_omp_options_and_bounds():
    rng = np.random.default_rng(3)
    G, delta, P = rng.normal(size=(20, 30)), rng.normal(size=20), rng.normal(size=(8, 30))
    c = driver_omp(G, delta, P, k=5, energy=0.5)
    assert len(c) <= 5 and np.linalg.norm(c.amplitudes) <= 0.5 + 1e-12
    site_of = np.repeat(np.arange(10), 3)
    one = driver_omp(G, delta, k=6, site_of=site_of)
    assert len(set(site_of[one.nodes])) == len(one)
    calls = []

    def relin(chosen, a):
        calls.append(len(chosen))
        return G, delta, None

    driver_omp(G, delta, k=5, eta=0.0, relinearise=relin, every=2)
    assert calls == [2, 4]
    with pytest.raises(ValueError, match="k"):
        driver_omp(G, delta, k=0)
    with pytest.raises(ValueError, match="energy"):
        driver_omp(G, delta, k=2, energy=0.0)
    with pytest.raises(ValueError, match="G_P"):
        driver_omp(G, delta, np.ones((2, 3)), k=2)


def test_constrained_control_reaches_with_least_leak_or_says_it_cannot():
    from neurips26.sparse_control.controllability import constrained_control

    rng = np.random.default_rng(4)
    G, delta, P = rng.normal(size=(6, 10)), rng.normal(size=6), rng.normal(size=(8, 10))
    a, ok = constrained_control(G, delta, P, eta=0.1, energy=50.0)
    assert ok and np.linalg.norm(G @ a - delta) <= 0.1 * np.linalg.norm(delta) + 1e-6
    exact = np.linalg.pinv(G) @ delta  # feasible too, but blind to the preservation rows
    assert np.linalg.norm(P @ a) <= np.linalg.norm(P @ exact) + 1e-6
    small, ok_small = constrained_control(G, delta, P, eta=0.1, energy=1e-3)
    assert not ok_small and np.linalg.norm(small) <= 1e-3 + 1e-6
    with pytest.raises(ValueError, match="energy"):
        constrained_control(G, delta, P, energy=0.0)


def test_ball_least_squares_is_the_constrained_optimum():
    import cvxpy as cp

    from neurips26.sparse_control.controllability import ball_least_squares

    rng = np.random.default_rng(3)
    A, b = rng.normal(size=(20, 5)), rng.normal(size=20) * 10
    free = np.linalg.lstsq(A, b, rcond=None)[0]
    np.testing.assert_allclose(ball_least_squares(A, b, None), free, atol=1e-10)
    np.testing.assert_allclose(ball_least_squares(A, b, 2 * np.linalg.norm(free)), free, atol=1e-10)
    energy = 0.3 * np.linalg.norm(free)
    a = ball_least_squares(A, b, energy)
    x = cp.Variable(5)
    cp.Problem(cp.Minimize(cp.sum_squares(A @ x - b)), [cp.norm(x, 2) <= energy]).solve(solver=cp.CLARABEL)
    assert np.linalg.norm(a) <= energy * (1 + 1e-9)
    np.testing.assert_allclose(a, x.value, atol=1e-3)  # the conic solver's accuracy
    assert np.sum((A @ a - b) ** 2) <= np.sum((A @ x.value - b) ** 2) + 1e-9
    mu = -(A.T @ (A @ a - b)) / a  # stationarity: Aᵀ(Aa − b) + μ a = 0 with one μ ≥ 0
    assert mu.min() > 0 and np.ptp(mu) <= 1e-6 * mu.max()
    # better than scaling the free solution onto the ball
    scaled = free * energy / np.linalg.norm(free)
    assert np.linalg.norm(A @ a - b) < np.linalg.norm(A @ scaled - b)
    with pytest.raises(ValueError, match="energy"):
        ball_least_squares(A, b, 0.0)


def test_capped_gain_is_omps_pick_without_a_bound_and_sees_the_bound():
    from neurips26.sparse_control.controllability import capped_gain

    rng = np.random.default_rng(4)
    D, r = rng.normal(size=(30, 40)), rng.normal(size=30)
    norms = np.linalg.norm(D, axis=0)
    np.testing.assert_allclose(capped_gain(D, r, None), (D.T @ r / norms) ** 2, rtol=1e-12)
    for j in range(40):  # the gain is the best one-node decrease of ‖r‖² with |a| ≤ E
        a = np.clip(D[:, j] @ r / norms[j] ** 2, -0.05, 0.05)
        want = r @ r - np.sum((r - a * D[:, j]) ** 2)
        assert capped_gain(D, r, 0.05)[j] == pytest.approx(want, rel=1e-9, abs=1e-12)
    # a tiny column parallel to r beside a large one at 60°: plain OMP takes the tiny one, the bound the large
    r = np.array([1.0, 0.0])
    D = np.array([[1e-3, 1.0], [0.0, np.sqrt(3.0)]])
    assert np.argmax(capped_gain(D, r, None)) == 0 and np.argmax(capped_gain(D, r, 1.0)) == 1
    c = driver_omp(D, r, k=1, energy=1.0)
    assert c.nodes.tolist() == [1] and abs(c.amplitudes[0]) <= 1.0
