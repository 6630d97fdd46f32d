"""The two claims of chapter 05 about second-order statistics, checked without training (D1, D2).

1. :func:`covariance_check` — Monte Carlo ``Cov(m ⊙ x)`` against Eq. (3) on the Gaussian field and on 8×8
   digits, Bernoulli masks: the share of entries more than 3 standard errors off and the largest ``|z|``
   against a Bonferroni bound (D1).
2. :func:`beta_spectrum_digits` — the spectral factors ``β_i`` of Eq. (5) for the 8×8 digits: ``≈ (1 − η)²``
   for the top modes, rising for small-variance modes (D2).

Each takes a frozen config (``Config.for_scale(scale)``) and returns a plain dataclass of NumPy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.stats

from neurips26.scales import check_scale, pick
from neurips26.seeding import sub_seed
from neurips26.ssd.covariance import beta_spectrum, masked_covariance, monte_carlo_covariance
from neurips26.ssd.data import digits_8
from neurips26.ssd.fields import GaussianField
from neurips26.ssd.masks import check_eta
from neurips26.validation import check_float, check_int, check_seed, check_tuple

DATASETS_D1: tuple[str, ...] = ("field", "digits")


def bonferroni_bound(n_tests: int, alpha: float = 0.05) -> float:
    """The ``z`` with ``P(|Z| > z) = α / n_tests``, ``Z ~ N(0, 1)``: the family-wise bound on max |z|."""
    n_tests = check_int("n_tests", n_tests, minimum=1)
    alpha = check_float("alpha", alpha, minimum=0.0, maximum=1.0, strict_min=True)
    return float(scipy.stats.norm.isf(alpha / (2.0 * n_tests)))


def entry_z_scores(estimate: np.ndarray, se: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """``(estimate − exact) / se`` on the upper triangle (diagonal included) of symmetric (d, d) matrices.

    An entry with ``se = 0`` (every product identical) must match exactly: ``z = 0`` when it does (to
    1e-12), ``inf`` when it does not.
    """
    rows, cols = np.triu_indices(exact.shape[0])
    diff, err = (estimate - exact)[rows, cols], se[rows, cols]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(err > 0, diff / err, np.where(np.abs(diff) <= 1e-12, 0.0, np.inf))
    return z


@dataclass(frozen=True)
class CovarianceCheckConfig:
    """Monte-Carlo check of Eq. (3) with Bernoulli(1 − η) masks.

    etas: mask ratios; field_size: side of the Gaussian field; n_field: field images; field_masks,
    digit_masks: masks drawn per image; alpha: family-wise level of the Bonferroni bound on max |z|, over
    every entry of every (data set, η) cell together; max_fraction: allowed share of entries beyond 3 SE
    (0.27 % expected under the normal approximation).
    """

    etas: tuple[float, ...] = (0.5, 0.9)
    field_size: int = 8
    n_field: int = 500
    field_masks: int = 200
    digit_masks: int = 50
    alpha: float = 0.05
    max_fraction: float = 0.01

    def __post_init__(self) -> None:
        check_tuple("etas", self.etas, lambda name, eta: check_eta(eta, name))
        check_int("field_size", self.field_size, minimum=2, maximum=16)
        check_int("n_field", self.n_field, minimum=2)
        check_int("field_masks", self.field_masks, minimum=1)
        check_int("digit_masks", self.digit_masks, minimum=1)
        check_float("alpha", self.alpha, minimum=0.0, maximum=1.0, strict_min=True)
        check_float("max_fraction", self.max_fraction, minimum=0.0, maximum=1.0)

    @classmethod
    def for_scale(cls, scale: str) -> CovarianceCheckConfig:
        return pick(
            scale,
            smoke=cls(n_field=128, field_masks=40, digit_masks=10),
            default=cls(),
            paper=cls(n_field=2000, field_masks=500, digit_masks=200),
        )


@dataclass(frozen=True)
class CovarianceCheckResult:
    """Per data set (rows: ``datasets``) and η (columns): how far Monte Carlo is from Eq. (3), in SE units.

    ``n_entries`` per data set counts the distinct entries ``i ≤ j`` of its (d, d) covariance; ``bound`` is
    the Bonferroni bound on max |z| over all of them, in every cell at once (:func:`bonferroni_bound`).
    """

    config: CovarianceCheckConfig
    datasets: tuple[str, ...]
    etas: np.ndarray
    fraction_beyond_3se: np.ndarray
    max_abs_z: np.ndarray
    max_abs_error: np.ndarray
    n_entries: np.ndarray
    bound: float

    @property
    def passed(self) -> np.ndarray:
        """(datasets, etas) booleans: share beyond 3 SE ≤ ``max_fraction`` and max |z| ≤ Bonferroni bound."""
        return (self.fraction_beyond_3se <= self.config.max_fraction) & (self.max_abs_z <= self.bound)


def covariance_check(config: CovarianceCheckConfig, seed: int = 0) -> CovarianceCheckResult:
    """Compare :func:`~neurips26.ssd.covariance.monte_carlo_covariance` with Eq. (3) entry by entry (D1).

    The formula uses the data's own (1/N) covariance and mean, for which Eq. (3) is exact, so the only
    randomness is the masks. Field images are drawn from ``seed``; the digits are all 1,797 8×8 images.
    """
    if not isinstance(config, CovarianceCheckConfig):
        raise TypeError(f"config must be a CovarianceCheckConfig; got {type(config).__name__}")
    seed = check_seed("seed", seed)
    field_x = GaussianField(config.field_size).sample(config.n_field, sub_seed(seed, 0))
    data = {
        "field": (field_x.reshape(config.n_field, -1).double().numpy(), config.field_masks),
        "digits": (digits_8()[0].reshape(-1, 64).double().numpy(), config.digit_masks),
    }
    shape = (len(DATASETS_D1), len(config.etas))
    fraction, max_z, max_err = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    n_entries = np.array([d.shape[1] * (d.shape[1] + 1) // 2 for d, _ in data.values()])
    bound = bonferroni_bound(int(n_entries.sum()) * len(config.etas), config.alpha)
    for i, name in enumerate(DATASETS_D1):
        X, n_masks = data[name]
        mean, cov = X.mean(axis=0), np.cov(X, rowvar=False, bias=True)
        for j, eta in enumerate(config.etas):
            estimate, se = monte_carlo_covariance(X, eta, n_masks, sub_seed(seed, 1, i, j), "bernoulli")
            exact = masked_covariance(cov, eta, mean=mean, mask_type="bernoulli")
            z = np.abs(entry_z_scores(estimate, se, exact))
            fraction[i, j], max_z[i, j] = float(np.mean(z > 3.0)), float(z.max())
            max_err[i, j] = float(np.abs(estimate - exact).max())
    return CovarianceCheckResult(
        config, DATASETS_D1, np.array(config.etas), fraction, max_z, max_err, n_entries, bound
    )


@dataclass(frozen=True)
class BetaSpectrumConfig:
    """β_i of Eq. (5) for the 8×8 digits: etas, the eigenvalue cut-off ``rtol`` (modes with λ_i > rtol·λ_1),
    and how many top modes ``top_modes`` the summary averages."""

    etas: tuple[float, ...] = (0.5, 0.9, 0.98)
    rtol: float = 1e-9
    top_modes: int = 10

    def __post_init__(self) -> None:
        check_tuple("etas", self.etas, lambda name, eta: check_eta(eta, name))
        check_float("rtol", self.rtol, minimum=0.0)
        check_int("top_modes", self.top_modes, minimum=1, maximum=64)

    @classmethod
    def for_scale(cls, scale: str) -> BetaSpectrumConfig:
        check_scale(scale)
        return cls()  # closed form on a 64×64 matrix: the same at every scale


@dataclass(frozen=True)
class BetaSpectrumResult:
    """``beta[k, i]``: β of mode ``i`` (eigenvalues descending) at ``etas[k]``; ``floor = (1 − η)²``.

    top_ratio: mean β of the ``top_modes`` largest modes over the floor (≈ 1: plain shrinkage); tail_ratio:
    β of the smallest kept mode over the floor (≫ 1: small modes boosted); rank_correlation: Spearman
    correlation of β with the mode index (> 0: β rises as λ falls, the spectrum flattens).
    """

    config: BetaSpectrumConfig
    etas: np.ndarray
    eigenvalues: np.ndarray
    beta: np.ndarray
    floor: np.ndarray
    top_ratio: np.ndarray
    tail_ratio: np.ndarray
    rank_correlation: np.ndarray


def beta_spectrum_digits(config: BetaSpectrumConfig) -> BetaSpectrumResult:
    """β_i for the empirical covariance of the 1,797 8×8 digits, ``D = diag(Σ)`` (Eq. (5), D2)."""
    if not isinstance(config, BetaSpectrumConfig):
        raise TypeError(f"config must be a BetaSpectrumConfig; got {type(config).__name__}")
    X = digits_8()[0].reshape(-1, 64).double().numpy()
    cov = np.cov(X, rowvar=False, bias=True)
    spectra = [beta_spectrum(cov, eta, rtol=config.rtol) for eta in config.etas]
    lam = spectra[0].eigenvalues
    beta = np.stack([s.beta for s in spectra])
    floor = (1.0 - np.array(config.etas)) ** 2
    top = min(config.top_modes, lam.size)
    index = np.arange(lam.size)
    rank = np.array([scipy.stats.spearmanr(index, row).statistic for row in beta])
    return BetaSpectrumResult(
        config,
        np.array(config.etas),
        lam,
        beta,
        floor,
        beta[:, :top].mean(axis=1) / floor,
        beta[:, -1] / floor,
        rank,
    )
