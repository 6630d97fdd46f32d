"""Seed every random number generator a notebook may touch, once, at the top."""

from __future__ import annotations

import os
import random

import numpy as np

from neurips26.validation import check_seed


def seed_everything(seed: int) -> np.random.Generator:
    """Seed Python's ``random``, NumPy's global state and torch (if imported); return a fresh Generator.

    Library functions take their own ``seed`` argument and never rely on global state; this
    only makes ad-hoc notebook code (a quick ``np.random.rand``) repeatable too.
    """
    seed = check_seed("seed", seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 - seeding the legacy global state on purpose
    os.environ["PYTHONHASHSEED"] = str(seed)
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency, but keep seeding usable without it
        pass
    else:
        torch.manual_seed(seed)
    return np.random.default_rng(seed)
