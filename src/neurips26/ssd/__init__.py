"""SSD: sparsely supervised diffusion, a denoiser trained on a random 2–10 % of the pixels (chapter 05).

Random supervision masks (:mod:`~neurips26.ssd.masks`), the masked denoising loss
(:mod:`~neurips26.ssd.loss`), what masking does to the data covariance
(:mod:`~neurips26.ssd.covariance`), a Gaussian field with an exact score and the reference denoisers
(:mod:`~neurips26.ssd.fields`), the image data (:mod:`~neurips26.ssd.data`), the EDM-preconditioned
U-Net denoiser (:mod:`~neurips26.ssd.denoiser`), the Heun sampler (:mod:`~neurips26.ssd.sampler`), the
metrics — population-score error, memorisation, proxy FID, twin-blob consistency
(:mod:`~neurips26.ssd.metrics`) — and the training loop shared by SSD and its baselines
(:mod:`~neurips26.ssd.train`). The claims notebook runs one module per family of claims: the checks of
Eqs. (3) and (5) (:mod:`~neurips26.ssd.covariance_checks`, D1–D2), sample quality against η
(:mod:`~neurips26.ssd.sample_quality`, D3), stability and memorisation on 64 digits
(:mod:`~neurips26.ssd.small_data`, D4–D5), the score error on the Gaussian field
(:mod:`~neurips26.ssd.field_score`, D6) and twin-blob consistency (:mod:`~neurips26.ssd.twin_consistency`,
D7), which share :mod:`~neurips26.ssd.claim_runs`; :mod:`~neurips26.ssd.verdicts` decides them.

Equation numbers in the docstrings of this package refer to this list:

(1) full loss ``ℓ_full = λ(σ)/(CHW) · Σ_p Σ_c r_{c,p}²`` on the residual ``r`` of the parametrisation;
(2) SSD loss ``ℓ_SSD = λ(σ)/Z · Σ_p m_p Σ_c r_{c,p}²``, ``Z`` = kept entries (or all entries);
(3) masked covariance ``Σ̃ = (1 − η)²Σ + η(1 − η)D``, ``D = diag(Σ)`` (+ ``diag(μ²)`` for non-zero mean);
(4) correlation shrink ``ρ̃_ij = (1 − η)ρ_ij``;
(5) spectral factors ``β_i = (1 − η)² + η(1 − η) u_iᵀDu_i / λ_i``;
(6) circulant case ``λ̃ = (1 − η)²λ + η(1 − η)s²``;
(7) input dropout in least squares = a diagonal ridge;
(8) field spectrum ``λ(k) ∝ (1 + |k|²/k₀²)^(−α)``;
(9) exact score ``s*(x, σ) = −(Σ + σ²I)⁻¹x``;
(10) Wiener denoiser ``D*(x, σ) = Σ(Σ + σ²I)⁻¹x``;
(11) empirical optimal denoiser ``Σ_n softmax_n(−||x − x_n||²/(2σ²)) x_n``.
"""

from neurips26.ssd.covariance import (
    COVARIANCE_MASK_TYPES,
    BetaSpectrum,
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
from neurips26.ssd.data import DIGIT_SPLITS, TwinBlobParams, digits_8, load_digits_16, twin_blobs
from neurips26.ssd.denoiser import (
    NOISE_EMBEDDING_SCALE,
    DenoiserConfig,
    EDMDenoiser,
    Preconditioning,
    edm_target,
    eps_prediction,
    loss_weight,
    preconditioning,
    sample_sigma,
    score,
    v_prediction,
    v_target,
)
from neurips26.ssd.fields import GaussianField, check_sigma, empirical_optimal_denoiser
from neurips26.ssd.loss import (
    NORMALISERS,
    PARAMETRISATIONS,
    full_loss,
    input_masked,
    per_example_loss,
    ssd_loss,
)
from neurips26.ssd.masks import (
    MASK_TYPES,
    check_eta,
    check_images,
    check_mask,
    draw_device,
    kept_count,
    sample_mask,
)
from neurips26.ssd.metrics import (
    SCORE_SIGMAS,
    DigitCNN,
    DigitCNNConfig,
    Memorisation,
    ProxyFID,
    ScoreError,
    blob_centres,
    classifier_accuracy,
    colour_mismatch,
    digit_classifier,
    feature_statistics,
    frechet_distance,
    gaussian_frechet_distance,
    memorisation_rate,
    nearest_neighbours,
    relative_score_error,
    train_digit_cnn,
    twin_asymmetry,
)
from neurips26.ssd.sampler import heun_sample, karras_sigmas
from neurips26.ssd.train import TrainConfig, train_denoiser, training_loss

__all__ = [
    "COVARIANCE_MASK_TYPES",
    "DIGIT_SPLITS",
    "MASK_TYPES",
    "NOISE_EMBEDDING_SCALE",
    "NORMALISERS",
    "PARAMETRISATIONS",
    "SCORE_SIGMAS",
    "beta_spectrum",
    "BetaSpectrum",
    "blob_centres",
    "check_eta",
    "check_images",
    "check_mask",
    "check_sigma",
    "circulant_masked_eigenvalues",
    "classifier_accuracy",
    "colour_mismatch",
    "correlation",
    "correlation_shrink",
    "DenoiserConfig",
    "digit_classifier",
    "DigitCNN",
    "DigitCNNConfig",
    "digits_8",
    "draw_device",
    "dropout_ridge",
    "edm_target",
    "EDMDenoiser",
    "empirical_optimal_denoiser",
    "eps_prediction",
    "feature_statistics",
    "frechet_distance",
    "full_loss",
    "gaussian_frechet_distance",
    "GaussianField",
    "heun_sample",
    "input_masked",
    "karras_sigmas",
    "kept_count",
    "load_digits_16",
    "loss_weight",
    "mask_moments",
    "masked_covariance",
    "masked_input_least_squares",
    "Memorisation",
    "memorisation_rate",
    "monte_carlo_covariance",
    "nearest_neighbours",
    "per_example_loss",
    "Preconditioning",
    "preconditioning",
    "ProxyFID",
    "relative_score_error",
    "sample_mask",
    "sample_sigma",
    "score",
    "ScoreError",
    "ssd_loss",
    "train_denoiser",
    "train_digit_cnn",
    "TrainConfig",
    "training_loss",
    "twin_asymmetry",
    "twin_blobs",
    "TwinBlobParams",
    "v_prediction",
    "v_target",
]
