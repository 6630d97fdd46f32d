"""Precomputations for the explore notebook of chapter 05: any mask's second moments, and live field runs.

Eq. (3) holds for masks whose pairs are kept with one common probability. The masks of
:func:`~neurips26.ssd.masks.sample_mask` differ in their *pair* statistics ``M_ij = P(m_i = m_j = 1)``
(``M_ii = P(m_i = 1)``): Bernoulli masks have ``M_ij = (1 − η)²``, fixed-count masks
``k(k − 1)/(d(d − 1))``, and patch masks keep two pixels of one block together as often as one. For any mask
independent of the image,

    Cov(m ⊙ x) = M ∘ (Σ + μμᵀ) − (q ∘ μ)(q ∘ μ)ᵀ,       q = diag(M),                               (3')

which is Eq. (3) when ``M`` is Bernoulli's and ``μ = 0``. From it follow the correlation factor
``ρ̃_ij / ρ_ij = M_ij / √(M_ii M_jj)`` (Eq. (4) generalised) and the mode factors
``β_i = u_iᵀ(M ∘ Σ)u_i / λ_i`` (Eq. (5) generalised). :func:`train_field_run` trains one small denoiser on
the Gaussian field with any setting of the trainer and scores it against the exact score (Eq. (9)): the
live panel of the notebook.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from neurips26.cache import cached
from neurips26.ssd.covariance import BetaSpectrum, mask_moments
from neurips26.ssd.denoiser import DenoiserConfig, EDMDenoiser, score
from neurips26.ssd.fields import GaussianField, empirical_optimal_denoiser
from neurips26.ssd.loss import NORMALISERS, per_example_loss
from neurips26.ssd.masks import MASK_TYPES, check_eta, check_images, kept_count, sample_mask
from neurips26.ssd.metrics import SCORE_SIGMAS, relative_score_error
from neurips26.ssd.prepare import (
    MODEL_NAMES,
    PrepareConfig,
    model_spec,
    model_threads,
    pretrained,
    sample_images,
)
from neurips26.ssd.sampler import heun_sample
from neurips26.ssd.train import TrainConfig, train_denoiser
from neurips26.train.device import torch_threads
from neurips26.validation import check_array, check_choice, check_float, check_int, check_seed

# --------------------------------------------------------------------------------------------
# second moments of any mask


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


# --------------------------------------------------------------------------------------------
# samples of the committed checkpoints


@dataclass(frozen=True)
class CheckpointSamples:
    """Heun samples of chapter models, all from the same starting noise.

    names: model names; etas: their mask ratios; samples[name]: (n, C, S, S) float32 in data units;
    curve_steps, curves[name]: the proxy FID (or twin asymmetry) logged while training; metrics[name]:
    the sidecar's validation numbers (the selected step's proxy FID among them).
    """

    names: tuple[str, ...]
    etas: np.ndarray
    samples: dict[str, np.ndarray] = field(repr=False)
    curve_steps: np.ndarray = field(repr=False)
    curves: dict[str, np.ndarray] = field(repr=False)
    metrics: dict[str, dict[str, float]] = field(repr=False)


def checkpoint_samples(
    names: Sequence[str],
    scale: str = "default",
    *,
    n_samples: int = 64,
    seed: int = 0,
    sampler_steps: int = 18,
    verbose: bool = True,
) -> CheckpointSamples:
    """``n_samples`` Heun samples of each model in ``names`` (from :func:`~neurips26.ssd.prepare.pretrained`).

    Every model starts from the noise of ``seed``; the result is kept in the cache under the models'
    weight hashes, so a second call only loads the checkpoints.
    """
    names = tuple(names)
    if not names:
        raise ValueError("names must list at least one model")
    for i, name in enumerate(names):
        check_choice(f"names[{i}]", name, MODEL_NAMES)
        if names.count(name) > 1:
            raise ValueError(f"names must not repeat a model; names[{i}] = {name!r} appears twice")
    n_samples = check_int("n_samples", n_samples, minimum=1)
    seed = check_seed("seed", seed)
    sampler_steps = check_int("sampler_steps", sampler_steps, minimum=1)
    models = {name: pretrained(name, scale, verbose=verbose) for name in names}
    prep = PrepareConfig.for_scale(scale)

    def compute() -> CheckpointSamples:
        with model_threads(prep):
            samples = {
                n: sample_images(m, n_samples, seed, sampler_steps).numpy() for n, (m, _) in models.items()
            }
        metas = {n: meta for n, (_, meta) in models.items()}
        first = metas[names[0]].curves
        monitor = "proxy_fid" if "proxy_fid" in first else "asymmetry"
        return CheckpointSamples(
            names,
            np.array([model_spec(n).eta for n in names]),
            samples,
            np.array(first.get("eval_step", [])),
            {n: np.array(m.curves.get(monitor, [])) for n, m in metas.items()},
            {n: dict(m.metrics) for n, m in metas.items()},
        )

    key = {
        "names": names,
        "scale": scale,
        "n": n_samples,
        "seed": seed,
        "steps": sampler_steps,
        "weights": [models[n][1].weights_hash for n in names],
    }
    return cached("ssd-explore-samples", key, compute, package="neurips26.ssd", verbose=verbose)


# --------------------------------------------------------------------------------------------
# one live run on the Gaussian field


@dataclass(frozen=True)
class FieldRunConfig:
    """One small denoiser on the 8×8 Gaussian field, with any setting of the trainer.

    eta, mask_type, normaliser, input_masking: as in :class:`~neurips26.ssd.train.TrainConfig`;
    n_train: training images; steps, batch, lr: Adam; field_size; n_eval: fresh population points per σ of
    the score error; n_samples, sampler_steps: Heun samples drawn at the end; sigmas: the σ of the error.
    """

    eta: float = 0.9
    n_train: int = 64
    mask_type: str = "fixed"
    normaliser: str = "kept"
    input_masking: bool = False
    steps: int = 300
    batch: int = 64
    lr: float = 2e-3
    field_size: int = 8
    n_eval: int = 256
    n_samples: int = 32
    sampler_steps: int = 18
    sigmas: tuple[float, ...] = SCORE_SIGMAS

    def __post_init__(self) -> None:
        check_int("n_train", self.n_train, minimum=1)
        check_int("field_size", self.field_size, minimum=4)
        # TrainConfig checks eta, mask_type, normaliser, input_masking, steps, batch and lr
        self.train_config(0)
        if self.eta > 0 or self.input_masking:
            if self.mask_type == "patch":
                blocks = (-(-self.field_size // 4)) ** 2
                kept_count(blocks, self.eta)  # patch masks of 4×4 blocks must keep one block
            else:
                kept_count(self.field_size**2, self.eta)
        check_int("n_eval", self.n_eval, minimum=1)
        check_int("n_samples", self.n_samples, minimum=1)
        check_int("sampler_steps", self.sampler_steps, minimum=1)
        if not isinstance(self.sigmas, tuple) or not self.sigmas:
            raise TypeError(f"sigmas must be a non-empty tuple of noise levels; got {self.sigmas!r}")
        for i, s in enumerate(self.sigmas):
            check_float(f"sigmas[{i}]", s, minimum=0.0, strict_min=True)

    def train_config(self, seed: int) -> TrainConfig:
        """The :class:`~neurips26.ssd.train.TrainConfig` of this run."""
        return TrainConfig(
            eta=self.eta,
            mask_type=self.mask_type,
            normaliser=self.normaliser,
            input_masking=self.input_masking,
            steps=self.steps,
            batch=self.batch,
            lr=self.lr,
            eval_every=self.steps,
            seed=seed,
        )

    def denoiser(self) -> DenoiserConfig:
        """The field denoiser of the chapter's D6 runs (small, circular, σ_d = 1), plus the mask channel."""
        return DenoiserConfig(
            self.field_size,
            1,
            channels=(16, 32),
            circular=True,
            sigma_data=1.0,
            small=True,
            extra_input_channels=1 if self.input_masking else 0,
        )


@dataclass(frozen=True)
class FieldRun:
    """The result of :func:`train_field_run`.

    loss: training loss per step; per_sigma, mean_error: relative score error against Eq. (9);
    empirical_per_sigma: the same for the empirical optimal denoiser of the training images (Eq. (11), the
    memorising minimiser of the training loss); samples: (n_samples, 1, S, S) Heun samples; seconds:
    training time.
    """

    config: FieldRunConfig
    loss: np.ndarray
    sigmas: np.ndarray
    per_sigma: np.ndarray
    mean_error: float
    empirical_per_sigma: np.ndarray
    samples: np.ndarray = field(repr=False)
    seconds: float = 0.0


def train_field_run(config: FieldRunConfig, seed: int = 0) -> FieldRun:
    """Train one field denoiser as ``config`` says and score it against the exact score (Eq. (9)).

    The training images, the initial weights, the batches and the evaluation points depend only on
    ``seed`` and ``n_train``, so two runs that differ in one setting differ in that setting only. Torch
    runs on one thread (8×8 networks are faster so).
    """
    if not isinstance(config, FieldRunConfig):
        raise TypeError(f"config must be a FieldRunConfig; got {type(config).__name__}")
    seed = check_seed("seed", seed)
    sub = np.random.SeedSequence(seed).generate_state(4)
    field_ = GaussianField(config.field_size)
    train = field_.sample(config.n_train, int(sub[0]))
    model = EDMDenoiser(config.denoiser(), seed=int(sub[1]))
    extra = None
    if config.input_masking:

        def extra(x: torch.Tensor, sigma: torch.Tensor | None = None) -> torch.Tensor:
            return torch.ones_like(x[:, :1])  # every pixel visible at evaluation and sampling time

    def denoise(x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return model(x, s) if extra is None else model(x, s, extra(x))

    with torch_threads(1):  # 8×8 networks are faster on one thread
        start = time.perf_counter()
        history = train_denoiser(model, train, config.train_config(int(sub[2])), progress=False)
        seconds = time.perf_counter() - start
        model.eval()
        points = {}
        gen = torch.Generator().manual_seed(int(sub[3]))
        for sigma in config.sigmas:
            x0 = field_.sample(config.n_eval, int(torch.randint(2**31 - 1, (1,), generator=gen))).double()
            points[sigma] = x0 + sigma * torch.randn(x0.shape, generator=gen, dtype=torch.float64)
        learned = relative_score_error(
            lambda x, s: score(denoise, x.float(), s).double(),
            field_.exact_score,
            points.__getitem__,
            config.sigmas,
        )
        train64 = train.double()
        empirical = relative_score_error(
            lambda x, s: (empirical_optimal_denoiser(x, s, train64) - x) / s**2,
            field_.exact_score,
            points.__getitem__,
            config.sigmas,
        )
        samples = heun_sample(
            model,
            (config.n_samples, 1, config.field_size, config.field_size),
            steps=config.sampler_steps,
            generator=torch.Generator().manual_seed(seed),
            extra_fn=extra,
        )
    return FieldRun(
        config,
        np.asarray(history.loss, dtype=np.float64),
        np.asarray(config.sigmas),
        learned.per_sigma,
        learned.mean,
        empirical.per_sigma,
        samples.numpy(),
        seconds,
    )
