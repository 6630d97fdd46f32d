"""Seed every random number generator a notebook may touch, once, at the top; derive independent seeds."""

from __future__ import annotations

import os
import random
import sys

import numpy as np

from neurips26.validation import check_seed


def seed_everything(seed: int) -> np.random.Generator:
    """Seed Python's ``random``, NumPy's global state and torch; return a fresh Generator.

    Library functions take their own ``seed`` argument and never rely on global state; this
    only makes ad-hoc notebook code (a quick ``np.random.rand``) repeatable too. torch is seeded
    only when something already imported it, so a NumPy-only chapter does not pay its import.
    """
    seed = check_seed("seed", seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 - seeding the legacy global state on purpose
    os.environ["PYTHONHASHSEED"] = str(seed)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
    return np.random.default_rng(seed)


def sub_seed(seed: int, *index: int) -> int:
    """An independent, reproducible seed for part ``index`` of an experiment run with ``seed``.

    NumPy's ``SeedSequence`` spawns well-separated streams from ``(seed, *index)``, so a grid cell, a seed
    of a sweep or an instance of a family gets its own stream, and the same ``(seed, index)`` always the
    same one.
    """
    return int(np.random.SeedSequence([seed, *index]).generate_state(1)[0])
