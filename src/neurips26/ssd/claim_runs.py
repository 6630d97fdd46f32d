"""What the sampling and training claim experiments of chapter 05 share (D3–D7).

The model rows an experiment reads (:func:`check_models`, :func:`load_models`), the checks every sampling
config makes (:func:`check_sampling`), Heun samples of several models from one starting noise
(:func:`same_noise_samples`), independent sample sets for the sampling noise of the proxy FID
(:func:`sample_sets`), and the results cache (:func:`cached_run`, keyed by :func:`weights_key` for the
experiments that sample checkpoints). Sub-seeds come from ``SeedSequence([seed, ...])``
(:func:`~neurips26.seeding.sub_seed`); every model of one experiment starts its sampler from the same noise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch

from neurips26.cache import cache_key, cached
from neurips26.progress import progress
from neurips26.scales import SCALES
from neurips26.seeding import sub_seed
from neurips26.ssd.checkpoints import CheckpointMeta
from neurips26.ssd.denoiser import EDMDenoiser
from neurips26.ssd.prepare import MODEL_NAMES, model_spec, pretrained, sample_images
from neurips26.validation import check_choice, check_int


def check_models(name: str, values: object, data: str, *, allow_empty: bool = False) -> tuple[str, ...]:
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


def check_sampling(config: object) -> None:
    """Checks shared by the sampling experiments: n_samples, sampler_steps, checkpoints, keep."""
    check_int("n_samples", config.n_samples, minimum=2)
    check_int("sampler_steps", config.sampler_steps, minimum=1)
    check_choice("checkpoints", config.checkpoints, SCALES)
    check_int("keep", config.keep, minimum=0, maximum=config.n_samples)


def load_models(
    names: tuple[str, ...], scale: str, verbose: bool
) -> dict[str, tuple[EDMDenoiser, CheckpointMeta]]:
    """Name → (denoiser, sidecar) of every row in ``names``, from the checkpoints of ``scale``."""
    return {name: pretrained(name, scale, verbose=verbose) for name in names}


def cached_run(name: str, key: dict, compute: Callable[[], object], use_cache: bool, verbose: bool) -> object:
    """``compute()``, kept in the cache under ``key`` + the sources of ssd, nn and train (unless disabled)."""
    if not use_cache:
        return compute()
    key = {
        **key,
        "nn": cache_key("source", None, "neurips26.nn"),
        "train": cache_key("source", None, "neurips26.train"),
    }
    return cached(name, key, compute, package="neurips26.ssd", verbose=verbose)


def same_noise_samples(
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


def weights_key(config: Any, seed: int, models: dict, names: tuple[str, ...]) -> dict:
    """The cache key of a sampling experiment: its config, seed and the weights of every model it samples."""
    return {"config": config, "seed": seed, "weights": [models[n][1].weights_hash for n in names]}


def sample_sets(
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
    from ``first`` (name → value, already measured on the shared noise of :func:`same_noise_samples`), or
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
