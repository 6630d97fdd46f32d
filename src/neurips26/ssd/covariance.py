"""What a random pixel mask does to the second-order statistics of the data (chapter 05, Eqs. (3)–(7)).

Let ``x ∈ R^d`` (one channel, pixels flattened) have mean ``μ`` and covariance ``Σ``, and let the mask
``m ∈ {0,1}^d`` be independent of ``x`` with ``E[m_i] = q`` and ``E[m_i m_j] = q₂`` (``i ≠ j``). Since
``E[m mᵀ] = q₂·11ᵀ + (q − q₂)·I``, the masked signal ``x̃ = m ⊙ x`` has

    Cov(x̃) = q₂ Σ + (q₂ − q²) μμᵀ + (q − q₂) D,      D = diag(Σ + μμᵀ) = diag(Σ) + diag(μ²).

Bernoulli(1 − η) masks have ``q = 1 − η`` and ``q₂ = q²``, which gives the paper's equation

    Σ̃ = (1 − η)² Σ + η(1 − η) D                                                      (3)

(with ``D = diag(Σ)`` for zero-mean data). Fixed-count masks keeping ``k`` of ``d`` pixels have
``q = k/d`` and ``q₂ = k(k − 1)/(d(d − 1)) < q²``: the same structure with slightly different weights
(and a small negative rank-one term when ``μ ≠ 0``). Consequences, all checked in the unit tests:

- correlations shrink uniformly, ``ρ̃_ij = (1 − η) ρ_ij`` (zero mean, Bernoulli)                   (4)
- along the eigenvectors ``u_i`` of ``Σ``, ``β_i = u_iᵀΣ̃u_i / λ_i = (1 − η)² + η(1 − η) u_iᵀDu_i / λ_i`` (5)
- for a circulant ``Σ`` with constant diagonal ``s²``, ``λ̃ = (1 − η)²λ + η(1 − η)s²`` exactly           (6)
- masking the *inputs* of a linear least-squares fit is a diagonal ridge (dropout as regulariser)      (7)

All functions work in float64 NumPy.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from neurips26.ssd.masks import check_eta, kept_count, sample_mask
from neurips26.validation import check_array, check_choice, check_float, check_int, check_seed

COVARIANCE_MASK_TYPES = ("bernoulli", "fixed")


def _check_square(name: str, matrix: object) -> np.ndarray:
    matrix = check_array(name, matrix, ndim=2, complex_ok=False)
    if matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"{name} must be square (d, d); got shape {matrix.shape}")
    return matrix.astype(np.float64)


def _diagonal(D: object, d: int) -> np.ndarray:
    """The diagonal of ``D``, given as a (d,) vector or a (d, d) diagonal matrix."""
    D = check_array("D", D, complex_ok=False)
    if D.shape == (d, d):
        if np.any(D[~np.eye(d, dtype=bool)] != 0):
            raise ValueError("D must be diagonal")
        return np.diag(D).astype(np.float64)
    if D.shape != (d,):
        raise ValueError(f"D must have shape ({d},) or ({d}, {d}); got {D.shape}")
    return D.astype(np.float64)


def mask_moments(d: int, eta: float, mask_type: str = "bernoulli") -> tuple[float, float]:
    """``(q, q₂) = (E[m_i], E[m_i m_j])`` for ``i ≠ j``, for masks over ``d`` pixels."""
    d = check_int("d", d, minimum=2)
    eta = check_eta(eta)
    mask_type = check_choice("mask_type", mask_type, COVARIANCE_MASK_TYPES)
    if mask_type == "bernoulli":
        q = 1.0 - eta
        return q, q * q
    k = kept_count(d, eta)
    return k / d, k * (k - 1) / (d * (d - 1))


def masked_covariance(
    Sigma: np.ndarray,
    eta: float,
    D: np.ndarray | None = None,
    *,
    mean: np.ndarray | None = None,
    mask_type: str = "bernoulli",
) -> np.ndarray:
    """Covariance ``Σ̃`` of ``m ⊙ x`` (Eq. (3) for Bernoulli masks; exact weights for fixed-count ones).

    Sigma: (d, d) covariance of ``x``; mean: (d,) mean of ``x`` (``None`` = zero mean);
    D: the diagonal term as a (d,) vector or a (d, d) diagonal matrix (``None`` = ``diag(Σ) + μ²``,
    which is what makes the result exact).
    """
    Sigma = _check_square("Sigma", Sigma)
    d = Sigma.shape[0]
    mu = np.zeros(d) if mean is None else check_array("mean", mean, shape=(d,), complex_ok=False)
    diag = np.diag(Sigma) + mu**2 if D is None else _diagonal(D, d)
    q, q2 = mask_moments(d, eta, mask_type)
    return q2 * Sigma + (q2 - q * q) * np.outer(mu, mu) + (q - q2) * np.diag(diag)


def correlation(Sigma: np.ndarray) -> np.ndarray:
    """Correlation matrix ``ρ_ij = Σ_ij / sqrt(Σ_ii Σ_jj)`` (entries of zero-variance pixels are 0)."""
    Sigma = _check_square("Sigma", Sigma)
    s = np.sqrt(np.clip(np.diag(Sigma), 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = Sigma / np.outer(s, s)
    return np.where(np.outer(s, s) > 0, rho, 0.0)


def correlation_shrink(
    Sigma: np.ndarray, eta: float, *, mean: np.ndarray | None = None, mask_type: str = "bernoulli"
) -> np.ndarray:
    """Correlation matrix of ``m ⊙ x``: ``(1 − η)·ρ`` off the diagonal for zero-mean data (Eq. (4))."""
    return correlation(masked_covariance(Sigma, eta, mean=mean, mask_type=mask_type))


class BetaSpectrum(NamedTuple):
    """Eigenvalues ``λ_i`` of ``Σ`` (descending, above the tolerance) and their factors ``β_i``."""

    eigenvalues: np.ndarray
    beta: np.ndarray


def beta_spectrum(
    Sigma: np.ndarray, eta: float, *, D: np.ndarray | None = None, rtol: float = 1e-9
) -> BetaSpectrum:
    """``β_i = (1 − η)² + η(1 − η) u_iᵀ D u_i / λ_i`` (Eq. (5)) for the modes with ``λ_i > rtol·λ_max``.

    ``β_i`` is the Rayleigh quotient ``u_iᵀΣ̃u_i / λ_i`` of the Bernoulli-masked covariance along the
    *original* eigenvectors (the eigenvalue ratio itself only when ``D ∝ I``). Large-variance (smooth)
    modes get ``β ≈ (1 − η)²``; small-variance modes are boosted: the spectrum flattens.
    ``D`` defaults to ``diag(Σ)``.
    """
    Sigma = _check_square("Sigma", Sigma)
    eta = check_eta(eta)
    rtol = check_float("rtol", rtol, minimum=0.0)
    diag = np.diag(Sigma) if D is None else _diagonal(D, Sigma.shape[0])
    lam, U = np.linalg.eigh(0.5 * (Sigma + Sigma.T))
    order = np.argsort(lam)[::-1]
    lam, U = lam[order], U[:, order]
    keep = lam > rtol * max(lam[0], 0.0)
    lam, U = lam[keep], U[:, keep]
    rayleigh_d = np.einsum("ij,i,ij->j", U, diag, U)  # u_iᵀ D u_i
    beta = (1.0 - eta) ** 2 + eta * (1.0 - eta) * rayleigh_d / lam
    return BetaSpectrum(lam, beta)


def circulant_masked_eigenvalues(lam: np.ndarray, s2: float | None, eta: float) -> np.ndarray:
    """``λ̃ = (1 − η)² λ + η(1 − η) s²`` (Eq. (6)): eigenvalues of Bernoulli-masked circulant data.

    lam: eigenvalues of the circulant ``Σ`` (any shape, e.g. the 2-D spectrum of a stationary field);
    s2: its constant diagonal (``None`` = ``mean(lam)``, which is the diagonal of a circulant matrix).
    """
    lam = check_array("lam", lam, complex_ok=False).astype(np.float64)
    eta = check_eta(eta)
    s2 = float(lam.mean()) if s2 is None else check_float("s2", s2, minimum=0.0)
    return (1.0 - eta) ** 2 * lam + eta * (1.0 - eta) * s2


def _masks(rows: int, d: int, eta: float, mask_type: str, seed: int) -> np.ndarray:
    """(rows, d) masks from the training sampler, so the Monte-Carlo check covers it too."""
    generator = torch.Generator().manual_seed(seed)
    return sample_mask((rows, 1, d), eta, mask_type=mask_type, generator=generator).reshape(rows, d).numpy()


def monte_carlo_covariance(
    X: np.ndarray, eta: float, n_masks: int, seed: int, mask_type: str = "fixed"
) -> tuple[np.ndarray, np.ndarray]:
    """Monte-Carlo ``Cov(m ⊙ x)`` over the rows of ``X`` and random masks, with its standard error.

    X: (N, d) data (each row an image, flattened); every row is masked ``n_masks`` times with masks from
    :func:`~neurips26.ssd.masks.sample_mask`. Returns ``(estimate, se)``, both (d, d): the mean of the
    centred products of the ``T = N·n_masks`` masked rows (centred at the exact mean ``q·mean(X)``, so the
    estimate is unbiased) and the elementwise standard error of that mean. Compare with
    ``masked_covariance(Σ_X, η, mean=μ_X, mask_type=...)`` where ``Σ_X`` is the ``1/N`` covariance of
    ``X`` (Eq. (3) is exact for the empirical distribution too).
    """
    X = check_array("X", X, ndim=2, complex_ok=False).astype(np.float64)
    n, d = X.shape
    if n < 1 or d < 2:
        raise ValueError(f"X must have at least one row and two columns; got shape {X.shape}")
    eta = check_eta(eta)
    n_masks = check_int("n_masks", n_masks, minimum=1)
    seed = check_seed("seed", seed)
    mask_type = check_choice("mask_type", mask_type, COVARIANCE_MASK_TYPES)
    masked = np.tile(X, (n_masks, 1)) * _masks(n * n_masks, d, eta, mask_type, seed)
    total = masked.shape[0]
    if total < 2:
        raise ValueError("need at least two masked rows (N * n_masks >= 2)")
    # Centre at the exact mean E[m ⊙ x] = q·mean(X): the mean over the rows of X is known, and so is
    # q = E[m_i] by design; centring at a sample mean would add an O(1/T) bias with heavy-tailed
    # errors on entries whose covariance is ~0 (e.g. η = 0.98 on 8×8, where one pixel is kept).
    q, _ = mask_moments(d, eta, mask_type)
    centred = masked - q * X.mean(axis=0)
    first = centred.T @ centred / total  # mean of z_ij = c_i c_j
    second = (centred**2).T @ (centred**2) / total  # mean of z_ij²
    se = np.sqrt(np.clip(second - first**2, 0.0, None) / (total - 1))
    return first, se


def dropout_ridge(X: np.ndarray, y: np.ndarray, eta: float) -> np.ndarray:
    """Weights minimising ``E_m ||y − (M ⊙ X) w||²`` for Bernoulli(1 − η) input masks ``M`` (Eq. (7)).

    X: (N, d) inputs, y: (N,) targets; every entry of ``X`` is dropped independently (no rescaling).
    With ``G = XᵀX`` the expected loss is ``||y − (1 − η)Xw||² + η(1 − η) wᵀ diag(G) w``, whose
    minimiser solves ``[(1 − η)² G + η(1 − η) diag(G)] w = (1 − η) Xᵀy``: the matrix is Eq. (3)
    applied to the second moment of the inputs. Equivalently ``(1 − η) w`` is the ridge solution with
    the data-dependent diagonal penalty ``η/(1 − η)·diag(G)``. SSD masks the loss, not the input: this
    is the classical cousin of Eq. (3), not the method.
    """
    X = check_array("X", X, ndim=2, complex_ok=False).astype(np.float64)
    y = check_array("y", y, shape=(X.shape[0],), complex_ok=False).astype(np.float64)
    eta = check_eta(eta)
    G = X.T @ X
    A = (1.0 - eta) ** 2 * G + eta * (1.0 - eta) * np.diag(np.diag(G))
    return np.linalg.solve(A, (1.0 - eta) * (X.T @ y))


def masked_input_least_squares(
    X: np.ndarray, y: np.ndarray, eta: float, n_masks: int, seed: int
) -> np.ndarray:
    """Least squares on ``n_masks`` Bernoulli-masked copies of ``X`` (the sampled version of Eq. (7)).

    As ``n_masks`` grows this converges to :func:`dropout_ridge`, which the chapter shows side by side.
    """
    X = check_array("X", X, ndim=2, complex_ok=False).astype(np.float64)
    y = check_array("y", y, shape=(X.shape[0],), complex_ok=False).astype(np.float64)
    eta = check_eta(eta)
    n_masks = check_int("n_masks", n_masks, minimum=1)
    seed = check_seed("seed", seed)
    n, d = X.shape
    m = np.random.default_rng(seed).random((n_masks * n, d)) < 1.0 - eta
    w, *_ = np.linalg.lstsq(np.tile(X, (n_masks, 1)) * m, np.tile(y, n_masks), rcond=None)
    return w
