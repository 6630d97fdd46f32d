"""Global consistency on twin blobs, chapter 05's claim D7.

:func:`global_consistency` — twin-blob asymmetry and colour mismatch of samples of the twin-blob models,
all from the same starting noise; the result is kept in :mod:`neurips26.cache` (``use_cache=False``
recomputes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from neurips26.scales import pick
from neurips26.ssd.claim_runs import (
    cached_run,
    check_models,
    check_sampling,
    load_models,
    same_noise_samples,
    weights_key,
)
from neurips26.ssd.data import twin_blobs
from neurips26.ssd.metrics import colour_mismatch, twin_asymmetry
from neurips26.ssd.prepare import PrepareConfig, model_threads
from neurips26.validation import check_seed


@dataclass(frozen=True)
class ConsistencyConfig:
    """Twin-blob samples per model: models (twin-blob rows), n_samples, sampler_steps, checkpoints, keep."""

    models: tuple[str, ...] = ("twins-eta0", "twins-eta0.98")
    n_samples: int = 256
    sampler_steps: int = 18
    checkpoints: str = "default"
    keep: int = 16

    def __post_init__(self) -> None:
        check_models("models", self.models, "twins")
        check_sampling(self)

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
    models = load_models(config.models, config.checkpoints, verbose)
    prep = PrepareConfig.for_scale(config.checkpoints)

    @model_threads(prep)
    def compute() -> ConsistencyResult:
        asym, mismatch, samples = [], [], {}
        for name, x in same_noise_samples(models, config.models, config, seed, "twin blobs", verbose):
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

    key = weights_key(config, seed, models, config.models)
    return cached_run("ssd-global-consistency", key, compute, use_cache, verbose)
