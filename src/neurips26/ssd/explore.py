"""Precomputations for the explore notebook of chapter 05: samples of the committed checkpoints, and live
field runs. :func:`train_field_run` trains one small denoiser on the Gaussian field with any setting of the
trainer and scores it against the exact score (Eq. (9)): the live panel of the notebook. The second moments
of any mask are in :mod:`neurips26.ssd.general_masks`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from neurips26.cache import cached
from neurips26.ssd.denoiser import DenoiserConfig, EDMDenoiser, score
from neurips26.ssd.fields import GaussianField, empirical_optimal_denoiser
from neurips26.ssd.masks import kept_count
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
from neurips26.validation import check_choice, check_float, check_int, check_seed

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
