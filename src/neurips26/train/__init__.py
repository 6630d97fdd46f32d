"""Training for every chapter: one fit loop, device and thread choice, load-or-train checkpoints.

- :func:`fit` — AdamW with linear warm-up and cosine decay (:func:`lr_at`), gradient clipping, an
  evaluation hook and optional early stopping; returns a :class:`History` to plot.
- :func:`choose_device`, :func:`set_threads` — cuda → mps → cpu (overridable), threads = cores;
  :func:`torch_threads` — a block of code on a fixed thread count; :func:`shipped_threads` — the count
  a chapter's training keeps at each scale.
- :func:`trained` — load a model's weights from the cache or train and store them.
- :func:`seed_everything` — re-exported from :mod:`neurips26.seeding`.
"""

from neurips26.progress import PROGRESS_ENV, progress_enabled
from neurips26.seeding import seed_everything
from neurips26.train.checkpoint import Trained, trained
from neurips26.train.device import (
    DEVICE_ENV,
    available_cores,
    choose_device,
    set_threads,
    shipped_threads,
    torch_threads,
)
from neurips26.train.fit import FitConfig, History, fit, lr_at

__all__ = [
    "DEVICE_ENV",
    "PROGRESS_ENV",
    "FitConfig",
    "History",
    "Trained",
    "available_cores",
    "choose_device",
    "fit",
    "lr_at",
    "progress_enabled",
    "seed_everything",
    "set_threads",
    "shipped_threads",
    "torch_threads",
    "trained",
]
