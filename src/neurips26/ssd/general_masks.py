"""Second moments of any mask: Eq. (3), (4) and (5) of chapter 05 for masks other than Bernoulli's.

Eq. (3) holds for masks whose pairs are kept with one common probability. The masks of
:func:`~neurips26.ssd.masks.sample_mask` differ in their *pair* statistics ``M_ij = P(m_i = m_j = 1)``
(``M_ii = P(m_i = 1)``): Bernoulli masks have ``M_ij = (1 − η)²``, fixed-count masks
``k(k − 1)/(d(d − 1))``, and patch masks keep two pixels of one block together as often as one. For any mask
independent of the image,

    Cov(m ⊙ x) = M ∘ (Σ + μμᵀ) − (q ∘ μ)(q ∘ μ)ᵀ,       q = diag(M),                               (3')

which is Eq. (3) when ``M`` is Bernoulli's and ``μ = 0``. From it follow the correlation factor
``ρ̃_ij / ρ_ij = M_ij / √(M_ii M_jj)`` (Eq. (4) generalised) and the mode factors
``β_i = u_iᵀ(M ∘ Σ)u_i / λ_i`` (Eq. (5) generalised). The explore notebook of chapter 05 builds on it.
"""

from __future__ import annotations

import numpy as np
import torch

from neurips26.ssd.covariance import BetaSpectrum, mask_moments
from neurips26.ssd.loss import NORMALISERS, per_example_loss
from neurips26.ssd.masks import MASK_TYPES, check_eta, check_images, kept_count, sample_mask
from neurips26.validation import check_array, check_choice, check_float, check_int, check_seed


def pair_keep_probability(size: int, eta: float, mask_type: str = "fixed", *, patch: int = 4) -> np.ndarray:
    """``M_ij = P(m_i = m_j = 1)`` for the masks of :func:`~neurips26.ssd.masks.sample_mask`, shape (d, d).

    Pixels of a ``size × size`` image in row-major order (``d = size²``); the diagonal is ``P(m_i = 1)``.
    Exact for all three samplers: Bernoulli ``(1 − η)²`` off the diagonal; fixed-count
    ``k(k − 1)/(d(d − 1))`` with ``k = round((1 − η)d)``; patch masks keep ``k`` of the ``G`` blocks of
    ``patch × patch`` pixels, so two pixels of one block are kept together with probability ``k/G`` and
    two of different blocks with ``k(k − 1)/(G(G − 1))``.
    """
    size = check_int("size", size, minimum=2)
    eta = check_eta(eta)
    mask_type = check_choice("mask_type", mask_type, MASK_TYPES)
    patch = check_int("patch", patch, minimum=1)
    d = size * size
    if mask_type in ("fixed", "bernoulli"):
        q, q2 = mask_moments(d, eta, mask_type)
        return np.full((d, d), q2) + (q - q2) * np.eye(d)
    per_side = -(-size // patch)  # blocks per row (the last one may be cut, as in sample_mask)
    n_blocks = per_side * per_side
    k = kept_count(n_blocks, eta)
    rows, cols = np.divmod(np.arange(d), size)
    block = (rows // patch) * per_side + cols // patch
    same = block[:, None] == block[None, :]
    across = k * (k - 1) / (n_blocks * (n_blocks - 1)) if n_blocks > 1 else 0.0
    return np.where(same, k / n_blocks, across)


def _check_pairs(pair_prob: object, d: int) -> np.ndarray:
    pair_prob = check_array("pair_prob", pair_prob, shape=(d, d), complex_ok=False).astype(np.float64)
    if np.any(pair_prob < 0) or np.any(pair_prob > 1):
        raise ValueError("pair_prob must hold probabilities in [0, 1]")
    return pair_prob


def _check_square(name: str, matrix: object) -> np.ndarray:
    matrix = check_array(name, matrix, ndim=2, complex_ok=False)
    if matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"{name} must be square (d, d); got shape {matrix.shape}")
    return matrix.astype(np.float64)


def masked_covariance_any(
    Sigma: np.ndarray, pair_prob: np.ndarray, *, mean: np.ndarray | None = None
) -> np.ndarray:
    """``Cov(m ⊙ x) = M ∘ (Σ + μμᵀ) − (q ∘ μ)(q ∘ μ)ᵀ`` (Eq. (3')) for a mask with pair matrix ``M``.

    Sigma: (d, d) covariance of ``x``; pair_prob: ``M`` from :func:`pair_keep_probability`; mean: (d,)
    (``None`` = zero mean). Equals :func:`~neurips26.ssd.covariance.masked_covariance` for Bernoulli and
    fixed-count masks.
    """
    Sigma = _check_square("Sigma", Sigma)
    d = Sigma.shape[0]
    M = _check_pairs(pair_prob, d)
    mu = np.zeros(d) if mean is None else check_array("mean", mean, shape=(d,), complex_ok=False)
    qmu = np.diag(M) * mu
    return M * (Sigma + np.outer(mu, mu)) - np.outer(qmu, qmu)


def correlation_factor(pair_prob: np.ndarray) -> np.ndarray:
    """``ρ̃_ij / ρ_ij = M_ij / √(M_ii M_jj)`` for zero-mean data (Eq. (4) generalised); 1 on the diagonal."""
    M = _check_square("pair_prob", pair_prob)
    M = _check_pairs(M, M.shape[0])
    q = np.sqrt(np.diag(M))
    if np.any(q == 0):
        raise ValueError("pair_prob must keep every pixel with a positive probability")
    return M / np.outer(q, q)


def mode_factors(Sigma: np.ndarray, pair_prob: np.ndarray, *, rtol: float = 1e-9) -> BetaSpectrum:
    """``β_i = u_iᵀ(M ∘ Σ)u_i / λ_i`` for the modes with ``λ_i > rtol·λ_max`` (Eq. (5) generalised).

    For Bernoulli masks ``M ∘ Σ = (1 − η)²Σ + η(1 − η)diag(Σ)`` and this is
    :func:`~neurips26.ssd.covariance.beta_spectrum`. Eigenvalues descending.
    """
    Sigma = _check_square("Sigma", Sigma)
    M = _check_pairs(pair_prob, Sigma.shape[0])
    rtol = check_float("rtol", rtol, minimum=0.0)
    lam, U = np.linalg.eigh(0.5 * (Sigma + Sigma.T))
    order = np.argsort(lam)[::-1]
    lam, U = lam[order], U[:, order]
    keep = lam > rtol * max(lam[0], 0.0)
    lam, U = lam[keep], U[:, keep]
    masked = M * Sigma
    return BetaSpectrum(lam, np.einsum("ij,ik,kj->j", U, masked, U) / lam)


def distance_profile(
    values: np.ndarray, size: int, *, periodic: bool = False, keep: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Mean of the off-diagonal entries of a (d, d) pixel-pair matrix at each distinct pixel distance.

    values: e.g. a correlation matrix of ``size × size`` images (row-major); periodic: wrap-around
    distances (stationary fields); keep: optional (d, d) boolean of the pairs to use. Returns
    ``(distances, means)``, distances ascending.
    """
    size = check_int("size", size, minimum=2)
    d = size * size
    values = check_array("values", values, shape=(d, d), complex_ok=False).astype(np.float64)
    rows, cols = np.divmod(np.arange(d), size)
    dr = np.abs(rows[:, None] - rows[None, :])
    dc = np.abs(cols[:, None] - cols[None, :])
    if periodic:
        dr, dc = np.minimum(dr, size - dr), np.minimum(dc, size - dc)
    dist = np.round(np.hypot(dr, dc), 9)
    use = ~np.eye(d, dtype=bool)
    if keep is not None:
        keep = check_array("keep", keep, shape=(d, d))
        use &= keep.astype(bool)
    levels = np.unique(dist[use])
    return levels, np.array([values[use & (dist == r)].mean() for r in levels])


def loss_ratios(
    residual: torch.Tensor,
    eta: float,
    *,
    mask_type: str = "fixed",
    normaliser: str = "kept",
    n_masks: int = 64,
    patch: int = 4,
    seed: int = 0,
) -> np.ndarray:
    """``ℓ_SSD / ℓ_full`` of each example under ``n_masks`` fresh masks, shape (n_masks, B) (Eq. (2)/(1)).

    residual: (B, C, H, W), e.g. ``D_θ(x; σ) − x₀`` of some denoiser (λ cancels in the ratio). Its mean
    over masks is 1 for fixed-count and patch masks under ``"kept"``, ``1 − η`` for Bernoulli masks under
    ``"all"``; its spread is the extra noise a mask puts into one training step.
    """
    residual = check_images("residual", residual)
    eta = check_eta(eta)
    normaliser = check_choice("normaliser", normaliser, NORMALISERS)
    n_masks = check_int("n_masks", n_masks, minimum=1)
    b, _, h, w = residual.shape
    r = residual.detach().double()
    full = per_example_loss(r, torch.zeros_like(r))
    if bool((full <= 0).any()):
        raise ValueError("residual must be non-zero in every example (the ratio divides by ℓ_full)")
    masks = sample_mask(
        (n_masks * b, h, w), eta, mask_type=mask_type, patch=patch, seed=check_seed("seed", seed)
    ).double()
    rep = r.repeat(n_masks, 1, 1, 1)
    sparse = per_example_loss(rep, torch.zeros_like(rep), masks, normaliser=normaliser)
    return (sparse.reshape(n_masks, b) / full).numpy()
