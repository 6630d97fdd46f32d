"""``tools.Mask``: exact measurements on 2-D boolean masks (paper §3.1 names), NumPy only.

Pixel conventions: ``(x, y)`` = (column, row); a centroid is the mean pixel centre
``(j + 0.5, i + 0.5)``; a bounding box ``(x0, y0, x1, y1)`` holds the inclusive column and row
ranges of the mask's pixels.
"""

from __future__ import annotations

import numpy as np


def _mask2d(value: object, name: str) -> np.ndarray:
    if not isinstance(value, np.ndarray):
        raise TypeError(
            f"{name} must be a 2-D numpy bool array (e.g. seg.get_mask(frame, k)); got {type(value).__name__}"
        )
    if value.ndim != 2:
        raise ValueError(f"{name} must be 2-D (H, W); got shape {value.shape} (index objects/frames first)")
    if value.dtype != bool:
        if value.dtype.kind not in "biu" or not np.isin(value, (0, 1)).all():
            raise ValueError(f"{name} must be boolean (or 0/1); got dtype {value.dtype}")
        value = value.astype(bool)
    return value


def _pair(a: object, b: object) -> tuple[np.ndarray, np.ndarray]:
    ma, mb = _mask2d(a, "mask_a"), _mask2d(b, "mask_b")
    if ma.shape != mb.shape:
        raise ValueError(f"mask_a and mask_b must have the same shape; got {ma.shape} and {mb.shape}")
    return ma, mb


class Mask:
    """Exact measurements on (H, W) boolean masks: centroid, area, boxes, overlap."""

    @staticmethod
    def centroid(mask: np.ndarray) -> tuple[float, float]:
        """Mean pixel centre (x, y) of the mask's pixels; (nan, nan) if it is empty."""
        rows, cols = np.nonzero(_mask2d(mask, "mask"))
        if len(rows) == 0:
            return (float("nan"), float("nan"))
        return (float(cols.mean() + 0.5), float(rows.mean() + 0.5))

    @staticmethod
    def centroids(masks: np.ndarray) -> list[tuple[float, float]]:
        """``centroid`` of each mask of an (N, H, W) stack."""
        if not isinstance(masks, np.ndarray) or masks.ndim != 3:
            shape = getattr(masks, "shape", None)
            raise ValueError(f"masks must be an (N, H, W) numpy array; got {type(masks).__name__} {shape}")
        return [Mask.centroid(m) for m in masks]

    @staticmethod
    def area(mask: np.ndarray) -> int:
        """Number of True pixels."""
        return int(_mask2d(mask, "mask").sum())

    @staticmethod
    def bounding_box(mask: np.ndarray) -> tuple[int, int, int, int] | None:
        """(x0, y0, x1, y1): inclusive column and row range of the mask's pixels; None if empty."""
        rows, cols = np.nonzero(_mask2d(mask, "mask"))
        if len(rows) == 0:
            return None
        return (int(cols.min()), int(rows.min()), int(cols.max()), int(rows.max()))

    @staticmethod
    def iou(mask_a: np.ndarray, mask_b: np.ndarray) -> float:
        """Intersection over union of two same-shape masks (0.0 if both are empty)."""
        a, b = _pair(mask_a, mask_b)
        union = int((a | b).sum())
        return float((a & b).sum() / union) if union else 0.0

    @staticmethod
    def intersection(mask_a: np.ndarray, mask_b: np.ndarray) -> np.ndarray:
        """Pixel-wise AND of two same-shape masks, (H, W) bool."""
        a, b = _pair(mask_a, mask_b)
        return a & b

    @staticmethod
    def mask_to_bbox(mask: np.ndarray) -> np.ndarray | None:
        """``bounding_box`` as a float array [x0, y0, x1, y1]; None if empty."""
        box = Mask.bounding_box(mask)
        return None if box is None else np.array(box, dtype=float)

    def __repr__(self) -> str:
        return "tools.Mask (centroid, centroids, area, bounding_box, iou, intersection, mask_to_bbox)"
