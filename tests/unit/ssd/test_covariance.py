"""Masked covariance: brute-force enumeration, Monte Carlo within 3 SE, circulant case, β, dropout ridge."""

import itertools

import numpy as np
import pytest

from neurips26.ssd.covariance import (
    beta_spectrum,
    circulant_masked_eigenvalues,
    correlation,
    correlation_shrink,
    dropout_ridge,
    mask_moments,
    masked_covariance,
    masked_input_least_squares,
    monte_carlo_covariance,
)
from neurips26.ssd.fields import GaussianField


def enumerated_covariance(X, masks, probs):
    """Exact Cov(m ⊙ x) for x uniform over the rows of X and m from a finite list with probabilities."""
    second = np.zeros((X.shape[1],) * 2)
    first = np.zeros(X.shape[1])
    for m, p in zip(masks, probs, strict=True):
        Y = X * m
        second += p * Y.T @ Y / len(X)
        first += p * Y.mean(axis=0)
    return second - np.outer(first, first)


@pytest.fixture
def small_data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((7, 5)) @ rng.standard_normal((5, 5)) + rng.standard_normal(5)  # mean ≠ 0


def empirical(X):
    return np.cov(X.T, bias=True), X.mean(axis=0)


def test_bernoulli_formula_equals_enumeration_over_all_masks(small_data):
    eta = 0.3
    masks = [np.array(bits, dtype=float) for bits in itertools.product([0, 1], repeat=5)]
    probs = [(1 - eta) ** m.sum() * eta ** (5 - m.sum()) for m in masks]
    Sigma, mu = empirical(small_data)
    exact = enumerated_covariance(small_data, masks, probs)
    assert np.allclose(masked_covariance(Sigma, eta, mean=mu), exact, atol=1e-12)
    # zero-mean data: the paper's (1 − η)²Σ + η(1 − η)diag(Σ)
    centred = small_data - small_data.mean(axis=0)
    paper = (1 - eta) ** 2 * Sigma + eta * (1 - eta) * np.diag(np.diag(Sigma))
    assert np.allclose(enumerated_covariance(centred, masks, probs), paper, atol=1e-12)
    assert np.allclose(masked_covariance(Sigma, eta), paper, atol=1e-15)


def test_fixed_count_formula_equals_enumeration_over_all_masks(small_data):
    eta = 0.6  # keeps k = round(0.4 · 5) = 2 of 5 pixels
    masks = []
    for kept in itertools.combinations(range(5), 2):
        m = np.zeros(5)
        m[list(kept)] = 1.0
        masks.append(m)
    Sigma, mu = empirical(small_data)
    exact = enumerated_covariance(small_data, masks, [1 / len(masks)] * len(masks))
    assert np.allclose(masked_covariance(Sigma, eta, mean=mu, mask_type="fixed"), exact, atol=1e-12)
    assert mask_moments(5, eta, "fixed") == (2 / 5, 2 / 20)
    # the Bernoulli weights are not exact for fixed-count masks
    assert not np.allclose(masked_covariance(Sigma, eta, mean=mu), exact, atol=1e-3)


@pytest.mark.parametrize("mask_type", ["fixed", "bernoulli"])
@pytest.mark.parametrize("eta", [0.5, 0.9])
def test_monte_carlo_agrees_with_the_formula_within_3_se(mask_type, eta):
    X = GaussianField(size=6).sample(400, seed=1).reshape(400, -1).double().numpy()
    Sigma, mu = empirical(X)
    est, se = monte_carlo_covariance(X, eta, n_masks=50, seed=2, mask_type=mask_type)
    z = (est - masked_covariance(Sigma, eta, mean=mu, mask_type=mask_type)) / se
    upper = np.triu_indices(X.shape[1])
    assert np.mean(np.abs(z[upper]) > 3) < 0.01  # ≈ 0.27 % expected for a correct formula
    assert np.abs(z).max() < 5.5  # no entry far off (666 distinct entries)


def test_monte_carlo_detects_the_wrong_mask_weights():
    """The check has power: Bernoulli weights applied to fixed-count masks (2 of 4 kept) fail it."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((2000, 1)) + 0.5 * rng.standard_normal((2000, 4))  # strongly correlated pixels
    Sigma, mu = empirical(X)
    est, se = monte_carlo_covariance(X, 0.5, n_masks=50, seed=2, mask_type="fixed")
    right = (est - masked_covariance(Sigma, 0.5, mean=mu, mask_type="fixed")) / se
    wrong = (est - masked_covariance(Sigma, 0.5, mean=mu, mask_type="bernoulli")) / se
    assert np.abs(right).max() < 4
    assert np.abs(wrong).max() > 10


def test_monte_carlo_is_repeatable():
    X = np.random.default_rng(0).standard_normal((20, 4))
    a = monte_carlo_covariance(X, 0.5, 10, seed=3)
    b = monte_carlo_covariance(X, 0.5, 10, seed=3)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_correlations_shrink_by_one_minus_eta():
    Sigma = GaussianField(size=6).covariance() * np.linspace(0.5, 2, 36)[:, None] ** 0.5
    Sigma = 0.5 * (Sigma + Sigma.T) + np.eye(36)  # not stationary, unequal variances
    rho = correlation(Sigma)
    for eta in (0.5, 0.9, 0.98):
        shrunk = correlation_shrink(Sigma, eta)
        off = ~np.eye(36, dtype=bool)
        assert np.allclose(shrunk[off], (1 - eta) * rho[off], atol=1e-12)
        assert np.allclose(np.diag(shrunk), 1.0)


def test_circulant_masked_eigenvalues_to_1e10():
    field = GaussianField(size=8)
    Sigma, lam = field.covariance(), field.spectrum()
    for eta in (0.0, 0.5, 0.9, 0.98):
        numeric = np.linalg.eigvalsh(masked_covariance(Sigma, eta))
        closed = np.sort(circulant_masked_eigenvalues(lam, 1.0, eta).ravel())
        assert np.abs(numeric - closed).max() < 1e-10
        assert np.array_equal(
            circulant_masked_eigenvalues(lam, None, eta), circulant_masked_eigenvalues(lam, 1.0, eta)
        )


def test_beta_is_the_rayleigh_quotient_along_the_original_eigenvectors():
    rng = np.random.default_rng(4)
    A = rng.standard_normal((40, 12)) * np.linspace(3, 0.1, 12)
    Sigma = np.cov(A.T, bias=True)
    eta = 0.9
    spec = beta_spectrum(Sigma, eta)
    lam, U = np.linalg.eigh(Sigma)
    lam, U = lam[::-1], U[:, ::-1]
    masked = masked_covariance(Sigma, eta)
    rayleigh = np.einsum("ij,ik,kj->j", U, masked, U)
    assert np.allclose(spec.eigenvalues, lam)
    assert np.allclose(spec.beta * spec.eigenvalues, rayleigh, rtol=1e-10)
    assert np.all(spec.beta >= (1 - eta) ** 2 - 1e-12)
    assert spec.beta[-1] > 3 * spec.beta[0]  # small-variance modes are boosted: the spectrum flattens


def test_beta_drops_null_modes_and_is_exact_for_circulant():
    field = GaussianField(size=6)
    spec = beta_spectrum(field.covariance(), 0.5)
    assert np.allclose(spec.beta * spec.eigenvalues, (0.25 * spec.eigenvalues + 0.25))  # D = I
    rank_deficient = np.diag([3.0, 1.0, 0.0])
    assert beta_spectrum(rank_deficient, 0.5).eigenvalues.tolist() == [3.0, 1.0]


def test_dropout_ridge_minimises_the_expected_masked_input_loss():
    """Brute force: enumerate all 2⁶ Bernoulli masks of a 3×2 input matrix."""
    rng = np.random.default_rng(5)
    X, y, eta = rng.standard_normal((3, 2)), rng.standard_normal(3), 0.4
    rows, targets = [], []
    for bits in itertools.product([0, 1], repeat=6):
        m = np.array(bits, dtype=float).reshape(3, 2)
        p = (1 - eta) ** m.sum() * eta ** (6 - m.sum())
        rows.append(np.sqrt(p) * (X * m))
        targets.append(np.sqrt(p) * y)
    w_brute, *_ = np.linalg.lstsq(np.vstack(rows), np.concatenate(targets), rcond=None)
    w = dropout_ridge(X, y, eta)
    assert np.allclose(w, w_brute, atol=1e-10)
    G = X.T @ X  # and (1 − η)w is a ridge fit with the diagonal penalty η/(1 − η)·diag(G)
    ridge = np.linalg.solve(G + eta / (1 - eta) * np.diag(np.diag(G)), X.T @ y)
    assert np.allclose((1 - eta) * w, ridge, atol=1e-10)


def test_sampled_masked_least_squares_approaches_the_ridge():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((30, 4))
    y = X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.1 * rng.standard_normal(30)
    w = dropout_ridge(X, y, 0.5)
    far = np.linalg.norm(masked_input_least_squares(X, y, 0.5, 5, seed=0) - w)
    near = np.linalg.norm(masked_input_least_squares(X, y, 0.5, 2000, seed=0) - w)
    assert near < 0.03 * np.linalg.norm(w) and near < far


def test_bad_inputs_name_the_argument():
    Sigma = np.eye(4)
    with pytest.raises(ValueError, match="eta"):
        masked_covariance(Sigma, 1.0)
    with pytest.raises(ValueError, match="eta"):
        beta_spectrum(Sigma, -0.5)
    with pytest.raises(ValueError, match="eta"):
        masked_covariance(Sigma, 0.9, mask_type="fixed")  # round(0.1 · 4) = 0 pixels kept
    with pytest.raises(ValueError, match="Sigma"):
        masked_covariance(np.ones((3, 4)), 0.5)
    with pytest.raises(ValueError, match="D"):
        masked_covariance(Sigma, 0.5, D=np.ones(3))
    with pytest.raises(ValueError, match="D"):
        masked_covariance(Sigma, 0.5, D=np.ones((4, 4)))
    with pytest.raises(ValueError, match="mean"):
        masked_covariance(Sigma, 0.5, mean=np.ones(5))
    with pytest.raises(ValueError, match="mask_type.*bernoulli.*fixed"):
        monte_carlo_covariance(np.ones((3, 4)), 0.5, 2, seed=0, mask_type="patch")
    with pytest.raises(ValueError, match="n_masks"):
        monte_carlo_covariance(np.ones((3, 4)), 0.5, 0, seed=0)
    with pytest.raises(ValueError, match="y"):
        dropout_ridge(np.ones((3, 2)), np.ones(4), 0.5)
