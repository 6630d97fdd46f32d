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
