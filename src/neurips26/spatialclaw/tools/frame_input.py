"""Reading the images an agent passes to a tool.

Tools accept kernel images by duck typing: anything with an integer ``frame_index`` (the absolute frame)
and an ``array`` ``(H, W, 3)`` uint8, alone or in a list, tuple or ``InputImages`` slice. Ground truth is
looked up by ``frame_index``, so a drawn-on copy (a plain array) is refused with a message naming the
argument.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable

import numpy as np


def is_frame(obj: object) -> bool:
    """Whether ``obj`` looks like a kernel image (``frame_index`` and ``array``)."""
    return hasattr(obj, "frame_index") and hasattr(obj, "array")


def frame_index(obj: object, name: str, num_frames: int) -> int:
    """The absolute frame index of the kernel image ``obj`` (argument ``name``), checked against the
    ``num_frames`` frames of the input."""
    if not is_frame(obj):
        raise TypeError(
            f"{name} must be a frame image from InputImages (with .frame_index and .array); "
            f"got {type(obj).__name__}"
        )
    index = obj.frame_index  # type: ignore[attr-defined]
    if isinstance(index, bool) or not isinstance(index, numbers.Integral):
        raise TypeError(f"{name}.frame_index must be an int; got {type(index).__name__}")
    if not 0 <= int(index) < num_frames:
        raise ValueError(f"{name}.frame_index must be in 0..{num_frames - 1}; got {index}")
    return int(index)


def frame_indices(
    images: object, name: str, num_frames: int, *, max_images: int | None = None, unique: bool = False
) -> list[int]:
    """Absolute frame indices of ``images`` (one kernel image or an iterable of them), in the given
    order; at least one, at most ``max_images``; with ``unique``, no frame twice."""
    if is_frame(images):
        items: list[object] = [images]
    elif isinstance(images, str | bytes | np.ndarray) or not isinstance(images, Iterable):
        raise TypeError(
            f"{name} must be a frame image or a list of frame images from InputImages; "
            f"got {type(images).__name__}"
        )
    else:
        items = list(images)
    if not items:
        raise ValueError(f"{name} must hold at least one image; got none")
    if max_images is not None and len(items) > max_images:
        raise ValueError(f"{name} may hold at most {max_images} images; got {len(items)} (subsample first)")
    out = [frame_index(item, f"{name}[{k}]", num_frames) for k, item in enumerate(items)]
    if unique and len(set(out)) != len(out):
        raise ValueError(f"{name} must not repeat a frame; got frame indices {out}")
    return out


def image_array(obj: object, name: str) -> np.ndarray:
    """An ``(H, W, 3)`` uint8 RGB array from a kernel image or a NumPy array."""
    array = obj.array if is_frame(obj) else obj  # type: ignore[attr-defined]
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{name} must be a frame image or an (H, W, 3) uint8 array; got {type(obj).__name__}")
    if array.ndim != 3 or array.shape[2] != 3:
        raise ValueError(f"{name} must have shape (H, W, 3); got {array.shape}")
    if array.dtype != np.uint8:
        if array.dtype.kind == "f" and array.size and np.nanmax(array) <= 1.0:
            array = np.round(np.clip(array, 0.0, 1.0) * 255.0)
        array = np.clip(array, 0, 255).astype(np.uint8)
    return array
