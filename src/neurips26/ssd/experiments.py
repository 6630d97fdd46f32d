"""The claim experiments of chapter 05 (SSD), at the three scales of the book.

1. :func:`covariance_check` — Monte Carlo ``Cov(m ⊙ x)`` against Eq. (3) on the Gaussian field and on 8×8
   digits, Bernoulli masks: the share of entries more than 3 standard errors off and the largest ``|z|``
   against a Bonferroni bound (D1).
2. :func:`beta_spectrum_digits` — the spectral factors ``β_i`` of Eq. (5) for the 8×8 digits: ``≈ (1 − η)²``
   for the top modes, rising for small-variance modes (D2).
3. :func:`quality_vs_eta` — proxy FID of Heun samples (18 steps) of the full-digit models per η, and of
   the input-masking baseline, with independent sample sets of η = 0 and SSD for the metric's noise (D3).
4. :func:`stability_curve` — the proxy FID logged every 250 updates while training on N = 64 digits:
   the mean of the curve's tail minus its best, for SSD and the regulariser baselines, and the sampling
   noise of one logged value from independent sample sets of the final weights (D4).
5. :func:`memorisation` — the share of samples that copy one of the N = 64 training digits (D5), with
   the memorising empirical optimal denoiser as a reference.
6. :func:`population_score` — relative error of the learned score against the exact score of the
   Gaussian field, for ``N ∈ {16, 64, 256}`` training images and ``η ∈ {0, 0.9, 0.98}``, trained here (D6).
7. :func:`global_consistency` — twin-blob asymmetry and colour mismatch of samples (D7).

Every experiment takes a frozen config (``Config.for_scale(scale)``) and, where randomness enters, a seed,
and returns a plain dataclass of NumPy arrays. The 16×16 models come from
:func:`~neurips26.ssd.prepare.pretrained` (committed checkpoints, else trained through the cache);
experiments that sample or train keep their results in :mod:`neurips26.cache` (``use_cache=False``
recomputes). Sub-seeds come from ``SeedSequence([seed, ...])``; every model of one experiment starts its
sampler from the same noise.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.stats
import torch

from neurips26.cache import cache_key, cached
from neurips26.progress import progress
from neurips26.scales import SCALES, check_scale, pick
from neurips26.seeding import sub_seed
from neurips26.ssd.checkpoints import CheckpointMeta
from neurips26.ssd.covariance import beta_spectrum, masked_covariance, monte_carlo_covariance
from neurips26.ssd.data import digits_8, twin_blobs
from neurips26.ssd.denoiser import DenoiserConfig, EDMDenoiser, score
from neurips26.ssd.fields import GaussianField, empirical_optimal_denoiser
from neurips26.ssd.masks import MASK_TYPES, check_eta
from neurips26.ssd.metrics import (
    SCORE_SIGMAS,
    colour_mismatch,
    memorisation_rate,
    relative_score_error,
    twin_asymmetry,
)
from neurips26.ssd.prepare import (
    MODEL_NAMES,
    PrepareConfig,
    digit_images,
    digit_proxy_fid,
    model_spec,
    model_threads,
    pretrained,
    sample_images,
    training_images,
)
from neurips26.ssd.sampler import heun_sample
from neurips26.ssd.train import TrainConfig, train_denoiser
from neurips26.train.device import torch_threads
from neurips26.validation import (
    check_choice,
    check_float,
    check_int,
    check_int_tuple,
    check_seed,
    check_tuple,
)

DATASETS_D1: tuple[str, ...] = ("field", "digits")


# --------------------------------------------------------------------------------------------
# shared helpers


def _check_models(name: str, values: object, data: str, *, allow_empty: bool = False) -> tuple[str, ...]:
    """Names of :data:`~neurips26.ssd.prepare.MODELS` rows trained on ``data``, without repeats."""
    if not isinstance(values, tuple) or (not values and not allow_empty):
        raise TypeError(f"{name} must be a non-empty tuple of model names from {MODEL_NAMES}; got {values!r}")
    for i, v in enumerate(values):
        check_choice(f"{name}[{i}]", v, MODEL_NAMES)
        if model_spec(v).data != data:
            raise ValueError(f"{name}[{i}] = {v!r} is not a {data} model")
    if len(set(values)) != len(values):
        raise ValueError(f"{name} must not repeat a model; got {values}")
    return values


def _check_common(config: object) -> None:
    """Checks shared by the sampling experiments: n_samples, sampler_steps, checkpoints, keep."""
    check_int("n_samples", config.n_samples, minimum=2)
    check_int("sampler_steps", config.sampler_steps, minimum=1)
    check_choice("checkpoints", config.checkpoints, SCALES)
    check_int("keep", config.keep, minimum=0, maximum=config.n_samples)


def _models(
    names: tuple[str, ...], scale: str, verbose: bool
) -> dict[str, tuple[EDMDenoiser, CheckpointMeta]]:
    return {name: pretrained(name, scale, verbose=verbose) for name in names}


def _cached_run(
    name: str, key: dict, compute: Callable[[], object], use_cache: bool, verbose: bool
) -> object:
    """``compute()``, kept in the cache under ``key`` + the sources of ssd, nn and train (unless disabled)."""
    if not use_cache:
        return compute()
    key = {
        **key,
        "nn": cache_key("source", None, "neurips26.nn"),
        "train": cache_key("source", None, "neurips26.train"),
    }
    return cached(name, key, compute, package="neurips26.ssd", verbose=verbose)


def _same_noise_samples(
    models: dict[str, tuple[EDMDenoiser, CheckpointMeta]],
    names: tuple[str, ...],
    config: Any,
    seed: int,
    desc: str,
    verbose: bool,
) -> Iterator[tuple[str, torch.Tensor]]:
    """``(name, samples)`` of every model in ``names``: ``config.n_samples`` Heun samples, all from the same
    starting noise (the run's first seed stream), so that position ``i`` of every grid is comparable."""
    for name in progress(names, desc=desc, total=len(names), show=verbose):
        yield name, sample_images(models[name][0], config.n_samples, sub_seed(seed, 0), config.sampler_steps)


def _weights_key(config: Any, seed: int, models: dict, names: tuple[str, ...]) -> dict:
    """The cache key of a sampling experiment: its config, seed and the weights of every model it samples."""
    return {"config": config, "seed": seed, "weights": [models[n][1].weights_hash for n in names]}


def _sample_sets(
    models: dict[str, tuple[EDMDenoiser, CheckpointMeta]],
    names: tuple[str, ...],
    n_samples: int,
    config: Any,
    seed: int,
    first: dict[str, float] | None,
    fid: Callable[[torch.Tensor], float],
    verbose: bool,
) -> np.ndarray:
    """(len(names), config.n_sets) proxy FIDs of independent sample sets, the sampling noise of the metric.

    Set ``r`` starts every model from the same noise, seeded by ``sub_seed(seed, 0, r)``; set 0 is taken
    from ``first`` (name → value, already measured on the shared noise of :func:`_same_noise_samples`), or
    drawn from ``sub_seed(seed, 0)`` when ``first`` is None.
    """
    out = np.zeros((len(names), config.n_sets))
    sets = range(config.n_sets)
    for r in progress(sets, desc="sample sets", total=config.n_sets, show=verbose):
        for i, name in enumerate(names):
            if r == 0 and first is not None:
                out[i, r] = first[name]
                continue
            noise_seed = sub_seed(seed, 0) if r == 0 else sub_seed(seed, 0, r)
            x = sample_images(models[name][0], n_samples, noise_seed, config.sampler_steps)
            out[i, r] = fid(x)
    return out


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


# --------------------------------------------------------------------------------------------
# D1: Monte Carlo covariance of masked data vs Eq. (3)


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


# --------------------------------------------------------------------------------------------
# D2: spectral factors of the masked digit covariance


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


# --------------------------------------------------------------------------------------------
# D3: quality vs mask ratio


@dataclass(frozen=True)
class QualityConfig:
    """Proxy FID of ``n_samples`` Heun samples per model.

    models: the SSD rows (full digits, one per η); baselines: further rows (the input-masking baseline);
    sampler_steps: Heun steps; checkpoints: the scale of the models
    (:func:`~neurips26.ssd.prepare.pretrained`); keep: samples per model kept in the result for sample grids;
    n_sets: independent sample sets (new starting noise each) of the first and the last model, the pair D3
    compares, to measure the proxy FID's sampling noise (set 0 is the one every model shares).
    """

    models: tuple[str, ...] = ("digits-eta0", "digits-eta0.5", "digits-eta0.9", "digits-eta0.98")
    baselines: tuple[str, ...] = ("digits-maskdm-eta0.9",)
    n_samples: int = 512
    sampler_steps: int = 18
    checkpoints: str = "default"
    keep: int = 16
    n_sets: int = 4

    def __post_init__(self) -> None:
        _check_models("models", self.models, "digits")
        _check_models("baselines", self.baselines, "digits", allow_empty=True)
        if set(self.models) & set(self.baselines):
            raise ValueError("baselines must not repeat a model of models")
        etas = [model_spec(n).eta for n in self.models]
        if any(b <= a for a, b in zip(etas, etas[1:], strict=False)):
            raise ValueError(f"models must be ordered by increasing eta; got etas {etas}")
        if len(self.models) < 2:
            raise ValueError(f"models must hold at least two rows (η = 0 and SSD); got {self.models}")
        _check_common(self)
        check_int("n_sets", self.n_sets, minimum=2)

    @classmethod
    def for_scale(cls, scale: str) -> QualityConfig:
        return pick(
            scale,
            smoke=cls(
                models=("digits-eta0", "digits-eta0.98"), n_samples=64, checkpoints="smoke", keep=8, n_sets=2
            ),
            default=cls(),
            paper=cls(checkpoints="paper", n_sets=8),
        )


@dataclass(frozen=True)
class QualityResult:
    """Proxy FID per model (``proxy_fid``) and per baseline (``baseline_fid``), lower is better.

    data_fid: the proxy FID of ``n_samples`` real training digits (the floor at this sample size);
    classifier_accuracy: of the proxy-FID classifier on the held-out digits; samples: name → (keep, C, S, S);
    set_models: the first and the last model; set_fid[i, r]: the proxy FID of ``set_models[i]`` on sample
    set ``r`` (set 0 is the one of ``proxy_fid``; in every set both models start from the same noise).
    """

    config: QualityConfig
    models: tuple[str, ...]
    etas: np.ndarray
    proxy_fid: np.ndarray
    baselines: tuple[str, ...]
    baseline_fid: np.ndarray
    data_fid: float
    classifier_accuracy: float
    samples: dict[str, np.ndarray] = field(repr=False)
    set_models: tuple[str, ...] = ()
    set_fid: np.ndarray = field(default_factory=lambda: np.zeros((2, 0)))

    @property
    def relative_gap(self) -> float:
        """``FID(largest η) / FID(η of the first model) − 1`` on sample set 0."""
        return float(self.proxy_fid[-1] / self.proxy_fid[0] - 1.0)

    @property
    def set_ratio(self) -> np.ndarray:
        """Per sample set, proxy FID of the last model over that of the first (paired: the same noise)."""
        return self.set_fid[1] / self.set_fid[0]


def quality_vs_eta(
    config: QualityConfig, seed: int = 0, *, use_cache: bool = True, verbose: bool = True
) -> QualityResult:
    """Sample every model from the same noise and measure its proxy FID against the held-out digits (D3)."""
    if not isinstance(config, QualityConfig):
        raise TypeError(f"config must be a QualityConfig; got {type(config).__name__}")
    seed = check_seed("seed", seed)
    names = config.models + config.baselines
    models = _models(names, config.checkpoints, verbose)
    prep = PrepareConfig.for_scale(config.checkpoints)

    @model_threads(prep)
    def compute() -> QualityResult:
        fid, accuracy = digit_proxy_fid(prep, verbose)
        values, samples = {}, {}
        for name, x in _same_noise_samples(models, names, config, seed, "proxy FID", verbose):
            values[name] = fid(x)
            samples[name] = x[: config.keep].numpy()
        pair = (config.models[0], config.models[-1])
        set_fid = _sample_sets(models, pair, config.n_samples, config, seed, values, fid, verbose)
        real = digit_images("train", prep)[0]
        pick_rows = np.random.default_rng(sub_seed(seed, 1)).choice(
            real.shape[0], min(config.n_samples, real.shape[0]), replace=False
        )
        return QualityResult(
            config,
            config.models,
            np.array([model_spec(n).eta for n in config.models]),
            np.array([values[n] for n in config.models]),
            config.baselines,
            np.array([values[n] for n in config.baselines]),
            fid(real[torch.from_numpy(pick_rows)]),
            accuracy,
            samples,
            pair,
            set_fid,
        )

    key = _weights_key(config, seed, models, names)
    return _cached_run("ssd-quality-vs-eta", key, compute, use_cache, verbose)


# --------------------------------------------------------------------------------------------
# D4: stability on small data, from the logged curves


@dataclass(frozen=True)
class StabilityConfig:
    """Which logged curves to read, and how to measure the sampling noise of one logged value.

    models: N = 64 digit rows; metric: the logged metric; checkpoints: the checkpoint scale; tail: how
    many of the last logged values make the curve's tail (3 of 8: the last 750 of 2,000 updates);
    spread_models: the rows whose final weights are sampled ``n_sets`` times, with the curves' sample count
    (:attr:`PrepareConfig.curve_samples`) and ``sampler_steps`` Heun steps, to measure that noise.
    """

    models: tuple[str, ...] = (
        "digits64-eta0",
        "digits64-eta0.98",
        "digits64-dropout",
        "digits64-wd",
        "digits64-early",
    )
    metric: str = "proxy_fid"
    checkpoints: str = "default"
    tail: int = 3
    spread_models: tuple[str, ...] = ("digits64-eta0", "digits64-eta0.98")
    n_sets: int = 3
    sampler_steps: int = 18

    def __post_init__(self) -> None:
        _check_models("models", self.models, "digits")
        check_choice("metric", self.metric, ("proxy_fid",))
        check_choice("checkpoints", self.checkpoints, SCALES)
        check_int("tail", self.tail, minimum=1)
        _check_models("spread_models", self.spread_models, "digits")
        missing = [n for n in self.spread_models if n not in self.models]
        if missing:
            raise ValueError(f"spread_models must be rows of models; {missing} are not")
        check_int("n_sets", self.n_sets, minimum=2)
        check_int("sampler_steps", self.sampler_steps, minimum=1)

    @classmethod
    def for_scale(cls, scale: str) -> StabilityConfig:
        return pick(
            scale,
            smoke=cls(
                models=("digits64-eta0", "digits64-eta0.98", "digits64-early"),
                checkpoints="smoke",
                tail=2,  # 8 updates log 2 values
                n_sets=2,
            ),
            default=cls(),
            paper=cls(checkpoints="paper", n_sets=6),
        )


@dataclass(frozen=True)
class StabilityResult:
    """``curves[i, k]``: the logged metric of ``models[i]`` after ``steps[k]`` updates.

    best / best_step: the minimum of each curve and where; end: the value of the weights each model keeps
    (the last one, or the best one for an early-stopped row); end_minus_best: end − best (≥ 0);
    tail_mean: the mean of the last ``config.tail`` logged values; tail_gap: tail_mean − best, D4's
    degradation (≥ 0 up to the tail; it reads the curve's end, not its last point alone); loss_steps,
    losses: the smoothed training loss of each run; set_fid[i, r]: the metric of the final weights of
    ``config.spread_models[i]`` on independent sample set ``r`` of ``set_samples`` samples (the sampling
    noise of one logged value).
    """

    config: StabilityConfig
    models: tuple[str, ...]
    steps: np.ndarray
    curves: np.ndarray
    best: np.ndarray
    best_step: np.ndarray
    end: np.ndarray
    end_minus_best: np.ndarray
    loss_steps: np.ndarray
    losses: np.ndarray
    tail_mean: np.ndarray
    tail_gap: np.ndarray
    set_fid: np.ndarray
    set_samples: int


def stability_curve(
    config: StabilityConfig, seed: int = 0, *, use_cache: bool = True, verbose: bool = True
) -> StabilityResult:
    """Read each model's logged proxy-FID curve: its best, its end and its tail (D4); and sample the final
    weights of ``config.spread_models`` on ``config.n_sets`` independent sets to measure the noise of one
    logged value. Only the sampling is random (``seed``) and cached."""
    if not isinstance(config, StabilityConfig):
        raise TypeError(f"config must be a StabilityConfig; got {type(config).__name__}")
    seed = check_seed("seed", seed)
    models = _models(config.models, config.checkpoints, verbose)
    metas = [meta for _, meta in models.values()]
    steps = np.array(metas[0].curves["eval_step"])
    if any(np.array(m.curves["eval_step"]).shape != steps.shape for m in metas):
        raise ValueError("models must log their curves at the same steps")
    if config.tail > steps.size:
        raise ValueError(f"tail must be at most the {steps.size} logged values; got {config.tail}")
    curves = np.array([m.curves[config.metric] for m in metas])
    best_index = curves.argmin(axis=1)
    end = np.array([m.metrics[config.metric] for m in metas])
    tail_mean = curves[:, -config.tail :].mean(axis=1)
    prep = PrepareConfig.for_scale(config.checkpoints)

    @model_threads(prep)
    def compute() -> np.ndarray:
        fid = digit_proxy_fid(prep, verbose)[0]
        return _sample_sets(
            models, config.spread_models, prep.curve_samples, config, seed, None, fid, verbose
        )

    key = _weights_key(config, seed, models, config.spread_models)
    set_fid = _cached_run("ssd-stability-sample-sets", key, compute, use_cache, verbose)
    return StabilityResult(
        config,
        config.models,
        steps,
        curves,
        curves.min(axis=1),
        steps[best_index],
        end,
        end - curves.min(axis=1),
        np.array(metas[0].curves["loss_step"]),
        np.array([m.curves["loss"] for m in metas]),
        tail_mean,
        tail_mean - curves.min(axis=1),
        set_fid,
        prep.curve_samples,
    )


# --------------------------------------------------------------------------------------------
# D5: memorisation on small data


@dataclass(frozen=True)
class MemorisationConfig:
    """Memorisation rate of ``n_samples`` samples per model against their (shared) training set.

    models: rows trained on the same N = 64 digits; ratio: the ``‖x − NN_1‖ / ‖x − NN_2‖`` threshold;
    sampler_steps, checkpoints, keep: as in :class:`QualityConfig`.
    """

    models: tuple[str, ...] = (
        "digits64-eta0",
        "digits64-eta0.98",
        "digits64-dropout",
        "digits64-wd",
        "digits64-early",
    )
    n_samples: int = 256
    ratio: float = 1.0 / 3.0
    sampler_steps: int = 18
    checkpoints: str = "default"
    keep: int = 16

    def __post_init__(self) -> None:
        _check_models("models", self.models, "digits")
        if len({model_spec(n).n_train for n in self.models}) != 1:
            raise ValueError("models must share one training set (the same n_train)")
        check_float("ratio", self.ratio, minimum=0.0, maximum=1.0, strict_min=True)
        _check_common(self)

    @classmethod
    def for_scale(cls, scale: str) -> MemorisationConfig:
        return pick(
            scale,
            smoke=cls(
                models=("digits64-eta0", "digits64-eta0.98", "digits64-early"),
                n_samples=64,
                checkpoints="smoke",
                keep=8,
            ),
            default=cls(),
            paper=cls(checkpoints="paper"),
        )


@dataclass(frozen=True)
class MemorisationResult:
    """``rates[i]``: share of memorised samples of ``models[i]``; per sample ``ratios`` and ``nearest`` index.

    empirical_rate: the same for samples of the empirical optimal denoiser (Eq. (11)) of the training set,
    which reproduces training images (the metric's "memorises" reference); train: the training images.
    """

    config: MemorisationConfig
    models: tuple[str, ...]
    rates: np.ndarray
    ratios: np.ndarray
    nearest: np.ndarray
    empirical_rate: float
    train: np.ndarray = field(repr=False)
    samples: dict[str, np.ndarray] = field(repr=False)


def memorisation(
    config: MemorisationConfig, seed: int = 0, *, use_cache: bool = True, verbose: bool = True
) -> MemorisationResult:
    """Sample every model from the same noise and count the samples that copy a training digit (D5)."""
    if not isinstance(config, MemorisationConfig):
        raise TypeError(f"config must be a MemorisationConfig; got {type(config).__name__}")
    seed = check_seed("seed", seed)
    models = _models(config.models, config.checkpoints, verbose)
    prep = PrepareConfig.for_scale(config.checkpoints)
    train = training_images(model_spec(config.models[0]), prep)

    @model_threads(prep)
    def compute() -> MemorisationResult:
        rates, ratios, nearest, samples = [], [], [], {}
        for name, x in _same_noise_samples(models, config.models, config, seed, "memorisation", verbose):
            result = memorisation_rate(x, train, config.ratio)
            rates.append(result.rate)
            ratios.append(result.ratios.numpy())
            nearest.append(result.nearest.numpy())
            samples[name] = x[: config.keep].numpy()
        reference = heun_sample(
            lambda x, s: empirical_optimal_denoiser(x, s, train),
            (config.n_samples, *train.shape[1:]),
            steps=config.sampler_steps,
            generator=torch.Generator().manual_seed(sub_seed(seed, 0)),
        )
        return MemorisationResult(
            config,
            config.models,
            np.array(rates),
            np.stack(ratios),
            np.stack(nearest),
            memorisation_rate(reference, train, config.ratio).rate,
            train.numpy(),
            samples,
        )

    key = _weights_key(config, seed, models, config.models)
    return _cached_run("ssd-memorisation", key, compute, use_cache, verbose)


# --------------------------------------------------------------------------------------------
# D6: population score on the Gaussian field


@dataclass(frozen=True)
class PopulationScoreConfig:
    """Field denoisers trained on N images per η, scored against the exact score.

    ns: training-set sizes; etas: mask ratios; replicates: independent data/initialisation draws;
    field_size: side of the field; channels, small, sigma_data: the denoiser (8×8, circular padding);
    steps, batch, lr: training (equal for every cell; 300 updates at default rather than ~600, so that the
    nine cells train within the claims notebook's CPU budget); mask_type: the SSD mask;
    n_eval: fresh population samples per noise level; sigmas: the noise levels of the error.
    """

    ns: tuple[int, ...] = (16, 64, 256)
    etas: tuple[float, ...] = (0.0, 0.9, 0.98)
    replicates: int = 1
    field_size: int = 8
    channels: tuple[int, ...] = (16, 32)
    small: bool = True
    sigma_data: float = 1.0
    steps: int = 300
    batch: int = 64
    lr: float = 2e-3
    mask_type: str = "fixed"
    n_eval: int = 512
    sigmas: tuple[float, ...] = SCORE_SIGMAS

    def __post_init__(self) -> None:
        check_int_tuple("ns", self.ns, minimum=2)
        check_tuple("etas", self.etas, lambda name, eta: check_eta(eta, name))
        check_int("replicates", self.replicates, minimum=1)
        check_int("field_size", self.field_size, minimum=2)
        DenoiserConfig(
            self.field_size,
            1,
            channels=self.channels,
            circular=True,
            sigma_data=self.sigma_data,
            small=self.small,
        )
        TrainConfig(
            eta=max(self.etas), mask_type=self.mask_type, steps=self.steps, batch=self.batch, lr=self.lr
        )
        check_choice("mask_type", self.mask_type, MASK_TYPES)
        check_int("n_eval", self.n_eval, minimum=1)
        if not isinstance(self.sigmas, tuple) or not self.sigmas:
            raise TypeError(f"sigmas must be a non-empty tuple of noise levels; got {self.sigmas!r}")
        for i, s in enumerate(self.sigmas):
            check_float(f"sigmas[{i}]", s, minimum=0.0, strict_min=True)

    @classmethod
    def for_scale(cls, scale: str) -> PopulationScoreConfig:
        return pick(
            scale,
            smoke=cls(ns=(16, 64), etas=(0.0, 0.98), steps=6, n_eval=32),
            default=cls(),
            paper=cls(replicates=3, steps=3000, channels=(32, 64), small=False, batch=128),
        )

    def denoiser(self) -> DenoiserConfig:
        """The field denoiser: circular padding (the field is periodic), σ_d = 1 (unit pixel variance)."""
        return DenoiserConfig(
            self.field_size,
            1,
            channels=self.channels,
            circular=True,
            sigma_data=self.sigma_data,
            small=self.small,
        )


@dataclass(frozen=True)
class PopulationScoreResult:
    """``error[r, i, j]``: relative score error (mean over σ) of replicate ``r``, ``ns[i]``, ``etas[j]``.

    per_sigma adds the σ axis; empirical[r, i]: the empirical optimal denoiser of the same N images (the
    training-set minimiser, which memorises); wiener: the population-optimal denoiser per σ (0 up to
    round-off: the metric's floor); seconds: training time per cell.
    """

    config: PopulationScoreConfig
    ns: np.ndarray
    etas: np.ndarray
    sigmas: np.ndarray
    error: np.ndarray
    per_sigma: np.ndarray
    empirical: np.ndarray
    empirical_per_sigma: np.ndarray
    wiener: np.ndarray
    seconds: np.ndarray

    def mean_error(self) -> np.ndarray:
        """Error averaged over replicates, shape (len(ns), len(etas))."""
        return self.error.mean(axis=0)

    def at(self, n: int, eta: float) -> float:
        """The replicate-mean error of the cell (``n``, ``eta``)."""
        i = list(self.ns).index(n) if n in self.ns else None
        j = list(self.etas).index(eta) if eta in self.etas else None
        if i is None or j is None:
            raise ValueError(f"(n, eta) must be a cell of ns={list(self.ns)}, etas={list(self.etas)}")
        return float(self.mean_error()[i, j])


def population_score(
    config: PopulationScoreConfig, seed: int = 0, *, use_cache: bool = True, verbose: bool = True
) -> PopulationScoreResult:
    """Train one field denoiser per (replicate, N, η) and measure ``E‖s_θ − s*‖² / E‖s*‖²`` (D6).

    In a replicate every cell starts from the same weights and sees the same batch order; the N training
    images are drawn once per (replicate, N) and shared across η; the evaluation points (fresh field
    samples plus noise) are shared by every cell and reference row. Torch runs on one thread here
    (:func:`~neurips26.train.device.torch_threads`: 8×8 networks are faster so).
    """
    if not isinstance(config, PopulationScoreConfig):
        raise TypeError(f"config must be a PopulationScoreConfig; got {type(config).__name__}")
    seed = check_seed("seed", seed)

    @torch_threads(1)
    def compute() -> PopulationScoreResult:
        field_ = GaussianField(config.field_size)
        reps, n_n, n_e, n_s = config.replicates, len(config.ns), len(config.etas), len(config.sigmas)
        per_sigma = np.zeros((reps, n_n, n_e, n_s))
        empirical = np.zeros((reps, n_n, n_s))
        seconds = np.zeros((reps, n_n, n_e))
        wiener = np.zeros(n_s)
        cells = [(r, i, j) for r in range(reps) for i in range(n_n) for j in range(n_e)]
        points: dict[int, dict[float, torch.Tensor]] = {}
        trains: dict[tuple[int, int], torch.Tensor] = {}
        for r, i, j in progress(cells, desc="population score", total=len(cells), show=verbose):
            if r not in points:
                points[r] = _evaluation_points(field_, config, sub_seed(seed, r, 3))
            if (r, i) not in trains:
                trains[(r, i)] = field_.sample(config.ns[i], sub_seed(seed, r, 1, i))
            model = EDMDenoiser(config.denoiser(), seed=sub_seed(seed, r, 2))
            train_cfg = TrainConfig(
                eta=config.etas[j],
                mask_type=config.mask_type,
                steps=config.steps,
                batch=config.batch,
                lr=config.lr,
                eval_every=config.steps,
                seed=sub_seed(seed, r, 4),
            )
            start = time.perf_counter()
            train_denoiser(model, trains[(r, i)], train_cfg, progress=False)
            seconds[r, i, j] = time.perf_counter() - start
            model.eval()
            per_sigma[r, i, j] = _score_error(
                lambda x, s, m=model: score(m, x.float(), s).double(), field_, points[r], config
            )
            if j == 0:
                train_x = trains[(r, i)].double()
                empirical[r, i] = _score_error(
                    lambda x, s, t=train_x: (empirical_optimal_denoiser(x, s, t) - x) / s**2,
                    field_,
                    points[r],
                    config,
                )
            if r == 0 and i == 0 and j == 0:
                wiener[:] = _score_error(
                    lambda x, s: (field_.wiener_denoiser(x, s) - x) / s**2, field_, points[r], config
                )
        return PopulationScoreResult(
            config,
            np.array(config.ns),
            np.array(config.etas),
            np.array(config.sigmas),
            per_sigma.mean(axis=-1),
            per_sigma,
            empirical.mean(axis=-1),
            empirical,
            wiener,
            seconds,
        )

    return _cached_run("ssd-population-score", {"config": config, "seed": seed}, compute, use_cache, verbose)


def _evaluation_points(
    field_: GaussianField, config: PopulationScoreConfig, seed: int
) -> dict[float, torch.Tensor]:
    """Per σ: ``n_eval`` fresh field samples plus σ-scaled noise (float64), ``x ~ p_σ``."""
    out = {}
    for k, sigma in enumerate(config.sigmas):
        x0 = field_.sample(config.n_eval, sub_seed(seed, k, 0)).double()
        noise = torch.randn(
            x0.shape, generator=torch.Generator().manual_seed(sub_seed(seed, k, 1)), dtype=torch.float64
        )
        out[sigma] = x0 + sigma * noise
    return out


def _score_error(
    score_fn: Callable[[torch.Tensor, float], torch.Tensor],
    field_: GaussianField,
    points: dict[float, torch.Tensor],
    config: PopulationScoreConfig,
) -> np.ndarray:
    """Relative score error per σ of ``score_fn`` on the shared evaluation points."""
    result = relative_score_error(
        score_fn, field_.exact_score, lambda sigma: points[sigma], sigmas=config.sigmas
    )
    return result.per_sigma


# --------------------------------------------------------------------------------------------
# D7: global consistency on twin blobs


@dataclass(frozen=True)
class ConsistencyConfig:
    """Twin-blob samples per model: models (twin-blob rows), n_samples, sampler_steps, checkpoints, keep."""

    models: tuple[str, ...] = ("twins-eta0", "twins-eta0.98")
    n_samples: int = 256
    sampler_steps: int = 18
    checkpoints: str = "default"
    keep: int = 16

    def __post_init__(self) -> None:
        _check_models("models", self.models, "twins")
        _check_common(self)

    @classmethod
    def for_scale(cls, scale: str) -> ConsistencyConfig:
        return pick(
            scale,
            smoke=cls(n_samples=64, checkpoints="smoke", keep=8),
            default=cls(),
            paper=cls(checkpoints="paper"),
        )


@dataclass(frozen=True)
class ConsistencyResult:
    """Per model and sample: ``asymmetry`` ‖x − flip(x)‖/‖x‖ and blob ``mismatch`` (lower = more consistent).

    data_asymmetry, data_mismatch: the same means on ``n_samples`` training images (with their known
    blob centres), which are exactly symmetric: the floor.
    """

    config: ConsistencyConfig
    models: tuple[str, ...]
    asymmetry: np.ndarray
    mismatch: np.ndarray
    data_asymmetry: float
    data_mismatch: float
    samples: dict[str, np.ndarray] = field(repr=False)

    @property
    def mean_asymmetry(self) -> np.ndarray:
        return self.asymmetry.mean(axis=1)

    @property
    def mean_mismatch(self) -> np.ndarray:
        return self.mismatch.mean(axis=1)


def global_consistency(
    config: ConsistencyConfig, seed: int = 0, *, use_cache: bool = True, verbose: bool = True
) -> ConsistencyResult:
    """Sample every twin-blob model from the same noise; measure mirror asymmetry and colour mismatch (D7)."""
    if not isinstance(config, ConsistencyConfig):
        raise TypeError(f"config must be a ConsistencyConfig; got {type(config).__name__}")
    seed = check_seed("seed", seed)
    models = _models(config.models, config.checkpoints, verbose)
    prep = PrepareConfig.for_scale(config.checkpoints)

    @model_threads(prep)
    def compute() -> ConsistencyResult:
        asym, mismatch, samples = [], [], {}
        for name, x in _same_noise_samples(models, config.models, config, seed, "twin blobs", verbose):
            asym.append(twin_asymmetry(x).numpy())
            mismatch.append(colour_mismatch(x).numpy())
            samples[name] = x[: config.keep].numpy()
        data, params = twin_blobs(config.n_samples, seed=prep.seed, size=prep.image_size)
        size = prep.image_size
        centres = np.stack(
            [
                np.stack([np.rint(params.row), np.rint(params.col)], axis=1),
                np.stack([np.rint(params.row), size - 1 - np.rint(params.col)], axis=1),
            ],
            axis=1,
        ).astype(np.int64)
        return ConsistencyResult(
            config,
            config.models,
            np.stack(asym),
            np.stack(mismatch),
            float(twin_asymmetry(data).mean()),
            float(colour_mismatch(data, centres).mean()),
            samples,
        )

    key = _weights_key(config, seed, models, config.models)
    return _cached_run("ssd-global-consistency", key, compute, use_cache, verbose)
