"""Image data for chapter 05: handwritten digits (shipped in scikit-learn) and the twin-blob probe.

- Digits: the 1,797 8×8 images of ``sklearn.datasets.load_digits`` (grey levels 0…16), mapped to
  ``[−1, 1]`` (background −1) and, for the diffusion models, bilinearly upsampled to 16×16 so that
  η = 0.98 still keeps about 5 of 256 pixels. Bilinear weights are convex, so the range stays ``[−1, 1]``.
- Twin blobs: 16×16 RGB images holding two Gaussian blobs at mirrored positions ``(r, c)`` and
  ``(r, W − 1 − c)`` that share one random colour, on a black (−1) background. Every training image is
  exactly left-right symmetric, so a sample that is not (a colour or position mismatch, a missing twin)
  is locally plausible but globally inconsistent.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
import torch.nn.functional as F

from neurips26.validation import check_choice, check_int, check_seed

DIGIT_SPLITS = ("all", "train", "holdout")


@lru_cache(maxsize=1)
def _digits_raw() -> tuple[np.ndarray, np.ndarray]:
    try:
        from sklearn.datasets import load_digits
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError("the digits data ship with scikit-learn: pip install scikit-learn") from error
    bunch = load_digits()
    return bunch.images.astype(np.float32), bunch.target.astype(np.int64)


def digits_8() -> tuple[torch.Tensor, torch.Tensor]:
    """All 1,797 original digits as float32 (1797, 1, 8, 8) in ``[−1, 1]``, and their labels (1797,)."""
    images, labels = _digits_raw()
    x = images / 8.0 - 1.0  # grey level g ∈ {0, …, 16} ↦ g/8 − 1 ∈ [−1, 1]
    return torch.from_numpy(x[:, None].copy()), torch.from_numpy(labels.copy())


def load_digits_16(
    split: str = "all", n_holdout: int = 1000, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Digits upsampled bilinearly to float32 (N, 1, 16, 16) in ``[−1, 1]``, and labels (N,).

    ``split="holdout"`` is a random subset of ``n_holdout`` images (drawn with ``seed``; the proxy FID's
    reference set) and ``"train"`` the rest; ``"all"`` is every image. Indices are kept in the data
    set's order inside each split.
    """
    split = check_choice("split", split, DIGIT_SPLITS)
    x8, labels = digits_8()
    n = x8.shape[0]
    n_holdout = check_int("n_holdout", n_holdout, minimum=0, maximum=n - 1)
    seed = check_seed("seed", seed)
    x16 = F.interpolate(x8, size=(16, 16), mode="bilinear", align_corners=False)
    if split == "all":
        return x16, labels
    holdout = np.zeros(n, dtype=bool)
    holdout[np.random.default_rng(seed).permutation(n)[:n_holdout]] = True
    idx = torch.from_numpy(np.flatnonzero(holdout if split == "holdout" else ~holdout))
    return x16[idx], labels[idx]


@dataclass(frozen=True)
class TwinBlobParams:
    """Per-image parameters of :func:`twin_blobs`: left-blob centre (row, col), width, colour (N, 3)."""

    row: np.ndarray
    col: np.ndarray
    width: np.ndarray
    colour: np.ndarray


def _hue_to_rgb(hue: np.ndarray, saturation: np.ndarray) -> np.ndarray:
    """HSV → RGB at full value: ``1 − s·clip(min(k, 4 − k), 0, 1)`` with ``k = (n + 6h) mod 6``."""
    n = np.array([5.0, 3.0, 1.0])  # red, green, blue
    k = (n[None, :] + 6.0 * hue[:, None]) % 6.0
    return 1.0 - saturation[:, None] * np.clip(np.minimum(k, 4.0 - k), 0.0, 1.0)


def twin_blobs(n: int, seed: int, size: int = 16) -> tuple[torch.Tensor, TwinBlobParams]:
    """``n`` twin-blob images, float32 (n, 3, size, size) in ``[−1, 1]``, and their parameters.

    The left blob ``g`` is a Gaussian bump centred at ``(r, c)`` with ``c`` in the left third of the image;
    its twin is ``g`` mirrored, so the shape is ``a = max(g, flip_lr(g))`` (exactly symmetric) and the image
    is ``−1 + 2·a·colour`` with one saturated random colour per image.
    """
    n = check_int("n", n, minimum=1)
    rng = np.random.default_rng(check_seed("seed", seed))
    size = check_int("size", size, minimum=8)
    span = size - 1.0
    row = rng.uniform(0.2, 0.8, n) * span
    col = rng.uniform(0.12, 0.32, n) * span
    width = rng.uniform(0.06, 0.11, n) * size
    colour = _hue_to_rgb(rng.uniform(0.0, 1.0, n), rng.uniform(0.6, 1.0, n))
    grid = np.arange(size, dtype=np.float64)
    dr = (grid[None, :, None] - row[:, None, None]) ** 2
    dc = (grid[None, None, :] - col[:, None, None]) ** 2
    left = np.exp(-(dr + dc) / (2.0 * width[:, None, None] ** 2))
    shape = np.maximum(left, left[:, :, ::-1])
    images = -1.0 + 2.0 * shape[:, None] * colour[:, :, None, None]
    params = TwinBlobParams(row=row, col=col, width=width, colour=colour)
    return torch.from_numpy(images.astype(np.float32)), params
