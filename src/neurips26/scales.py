"""The three run sizes of every notebook and experiment.

``smoke`` exercises every code path on tiny sizes (CI, <= 15 s a notebook),
``default`` is what the rendered book shows (<= 90 s a notebook on 2 cores),
``paper`` documents the paper's own sizes for readers with more compute.

The environment variable ``NEURIPS26_SCALE`` overrides the *default* scale, so
a whole-book build can run at smoke without editing a notebook; an explicit
non-default request (for example papermill injecting ``scale="smoke"``) wins.
"""

from __future__ import annotations

import os
from typing import TypeVar

SCALES: tuple[str, ...] = ("smoke", "default", "paper")
ENV_VAR = "NEURIPS26_SCALE"

T = TypeVar("T")


def check_scale(scale: object) -> str:
    """Return ``scale`` if it is one of :data:`SCALES`, else raise a clear error."""
    if not isinstance(scale, str):
        raise TypeError(f"scale must be a str, one of {SCALES}; got {type(scale).__name__}")
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}; got {scale!r}")
    return scale


def resolve_scale(scale: str = "default") -> str:
    """The scale to run at: ``scale``, unless it is ``"default"`` and ``NEURIPS26_SCALE`` is set."""
    check_scale(scale)
    override = os.environ.get(ENV_VAR, "").strip()
    if scale == "default" and override:
        if override not in SCALES:
            raise ValueError(f"environment variable {ENV_VAR} must be one of {SCALES}; got {override!r}")
        return override
    return scale


def pick(scale: str, *, smoke: T, default: T, paper: T | None = None) -> T:
    """Select the value for ``scale``; ``paper`` falls back to ``default`` when not given."""
    check_scale(scale)
    if scale == "smoke":
        return smoke
    if scale == "paper" and paper is not None:
        return paper
    return default


TRIAL_ENV = "NEURIPS26_TRIAL"
"""Set to ``1`` by ``prepare --trial``: a trial run of a chapter's training path (:func:`trial_run`)."""


def trial_run() -> bool:
    """Whether this process is a trial run: ``python -m neurips26.<pkg>.prepare --trial`` (or
    ``NEURIPS26_TRIAL=1``) trains every model at its scale's sizes, but for one update on the smallest data
    and measures it on a handful of examples, to show in seconds on a CPU that the path runs (the tests
    run each chapter's ``paper`` path this way). A chapter's plan applies its trial caps when this is
    True; the caps enter the plan's hash, so a trial checkpoint is never taken for a real one."""
    raw = os.environ.get(TRIAL_ENV, "").strip()
    if raw not in ("", "0", "1"):
        raise ValueError(f"environment variable {TRIAL_ENV} must be 0 or 1; got {raw!r}")
    return raw == "1"
