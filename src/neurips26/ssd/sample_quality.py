"""Sample quality against the mask ratio, chapter 05's claim D3.

:func:`quality_vs_eta` — proxy FID of Heun samples (18 steps) of the full-digit models per η, and of the
input-masking baseline, with independent sample sets of η = 0 and SSD for the metric's noise. The 16×16
models come from :func:`~neurips26.ssd.prepare.pretrained` (committed checkpoints, else trained through
the cache); the result is kept in :mod:`neurips26.cache` (``use_cache=False`` recomputes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from neurips26.scales import pick
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
from neurips26.ssd.prepare import PrepareConfig, digit_images, digit_proxy_fid, model_spec, model_threads
from neurips26.validation import check_int, check_seed


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
        check_models("models", self.models, "digits")
        check_models("baselines", self.baselines, "digits", allow_empty=True)
        if set(self.models) & set(self.baselines):
            raise ValueError("baselines must not repeat a model of models")
        etas = [model_spec(n).eta for n in self.models]
        if any(b <= a for a, b in zip(etas, etas[1:], strict=False)):
            raise ValueError(f"models must be ordered by increasing eta; got etas {etas}")
        if len(self.models) < 2:
            raise ValueError(f"models must hold at least two rows (η = 0 and SSD); got {self.models}")
        check_sampling(self)
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
    models = load_models(names, config.checkpoints, verbose)
    prep = PrepareConfig.for_scale(config.checkpoints)

    @model_threads(prep)
    def compute() -> QualityResult:
        fid, accuracy = digit_proxy_fid(prep, verbose)
        values, samples = {}, {}
        for name, x in same_noise_samples(models, names, config, seed, "proxy FID", verbose):
            values[name] = fid(x)
            samples[name] = x[: config.keep].numpy()
        pair = (config.models[0], config.models[-1])
        set_fid = sample_sets(models, pair, config.n_samples, config, seed, values, fid, verbose)
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

    key = weights_key(config, seed, models, names)
    return cached_run("ssd-quality-vs-eta", key, compute, use_cache, verbose)
