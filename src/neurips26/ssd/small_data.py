"""The claims of chapter 05 about training on N = 64 digits: stability (D4) and memorisation (D5).

1. :func:`stability_curve` — the proxy FID logged every 250 updates while training on N = 64 digits: the
   mean of the curve's tail minus its best, for SSD and the regulariser baselines, and the sampling noise
   of one logged value from independent sample sets of the final weights (D4).
2. :func:`memorisation` — the share of samples that copy one of the N = 64 training digits (D5), with the
   memorising empirical optimal denoiser as a reference.

The models come from :func:`~neurips26.ssd.prepare.pretrained`; what is sampled is kept in
:mod:`neurips26.cache` (``use_cache=False`` recomputes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from neurips26.scales import SCALES, pick
from neurips26.seeding import sub_seed
from neurips26.ssd.claim_runs import (
    cached_run,
    check_models,
    check_sampling,
    load_models,
    same_noise_samples,
    sample_sets,
    weights_key,
)
from neurips26.ssd.fields import empirical_optimal_denoiser
from neurips26.ssd.metrics import memorisation_rate
from neurips26.ssd.prepare import PrepareConfig, digit_proxy_fid, model_spec, model_threads, training_images
from neurips26.ssd.sampler import heun_sample
from neurips26.validation import check_choice, check_float, check_int, check_seed

# --------------------------------------------------------------------------------------------
# D4: stability on small data, from the logged curves


@dataclass(frozen=True)
class StabilityConfig:
    """Which logged curves to read, and how to measure the sampling noise of one logged value.

    models: N = 64 digit rows; metric: the logged metric; checkpoints: the checkpoint scale; tail: how
    many of the last logged values make the curve's tail (3 of 8: the last 750 of 2,000 updates);
    spread_models: the rows whose final weights are sampled ``n_sets`` times, with the curves' sample count
    (:attr:`~neurips26.ssd.prepare.PrepareConfig.curve_samples`) and ``sampler_steps`` Heun steps, to
    measure that noise.
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
        check_models("models", self.models, "digits")
        check_choice("metric", self.metric, ("proxy_fid",))
        check_choice("checkpoints", self.checkpoints, SCALES)
        check_int("tail", self.tail, minimum=1)
        check_models("spread_models", self.spread_models, "digits")
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
    models = load_models(config.models, config.checkpoints, verbose)
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
        return sample_sets(models, config.spread_models, prep.curve_samples, config, seed, None, fid, verbose)

    key = weights_key(config, seed, models, config.spread_models)
    set_fid = cached_run("ssd-stability-sample-sets", key, compute, use_cache, verbose)
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
    sampler_steps, checkpoints, keep: as in :class:`~neurips26.ssd.sample_quality.QualityConfig`.
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
        check_models("models", self.models, "digits")
        if len({model_spec(n).n_train for n in self.models}) != 1:
            raise ValueError("models must share one training set (the same n_train)")
        check_float("ratio", self.ratio, minimum=0.0, maximum=1.0, strict_min=True)
        check_sampling(self)

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
    models = load_models(config.models, config.checkpoints, verbose)
    prep = PrepareConfig.for_scale(config.checkpoints)
    train = training_images(model_spec(config.models[0]), prep)

    @model_threads(prep)
    def compute() -> MemorisationResult:
        rates, ratios, nearest, samples = [], [], [], {}
        for name, x in same_noise_samples(models, config.models, config, seed, "memorisation", verbose):
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

    key = weights_key(config, seed, models, config.models)
    return cached_run("ssd-memorisation", key, compute, use_cache, verbose)
