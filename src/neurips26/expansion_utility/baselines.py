"""The step-picking baselines the router is compared with, as scores over steps (higher is picked first):
resample from the first step (``k = 1``, self-consistency's choice), the best single depth bin learned on
training chains, the lowest-confidence step, the highest-entropy step. The random policy and the oracle
are in :mod:`~neurips26.expansion_utility.allocation` (exact expectation; top ``B`` by ``U^sel``).
"""

from __future__ import annotations

import numpy as np

from neurips26.expansion_utility.router import BINS, feature_names
from neurips26.expansion_utility.router_fit import StepData

_NAMES = feature_names()


def _column(data: StepData, name: str) -> np.ndarray:
    return data.features[..., _NAMES.index(name)].astype(float)


def first_step_scores(data: StepData) -> np.ndarray:
    """Prefer the earliest steps (``k = 1`` first)."""
    return -np.arange(data.bins.shape[1], dtype=float)[None, :].repeat(len(data), 0)


def best_depth_bin(train: StepData) -> int:
    """The depth bin with the highest mean selection-half utility over ``train``'s steps."""
    means = [
        np.nanmean(train.sel[train.bins == b]) if (train.bins == b).any() else -np.inf for b in range(BINS)
    ]
    return int(np.argmax(means))


def depth_bin_scores(data: StepData, best: int) -> np.ndarray:
    """Prefer steps in bin ``best``, then the nearest bins."""
    return -np.abs(data.bins - best).astype(float)


def lowest_confidence_scores(data: StepData) -> np.ndarray:
    """Prefer the step the model was least sure of (its confidence)."""
    return -_column(data, "confidence")


def highest_entropy_scores(data: StepData) -> np.ndarray:
    """Prefer the step with the highest binary entropy of its confidence."""
    return _column(data, "entropy")
