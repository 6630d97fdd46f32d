"""Values addressed by absolute frame index: the piece :mod:`~.per_frame_mask` and :mod:`~.reconstruction`
share.

Both a segmentation and a reconstruction name frames by their absolute index in the input video
(``InputImages[i].frame_index``), never by position, as in the paper's kernel (§3.1). This module holds
what both need: :func:`check_frame` (a frame index is one of a container's frames, or an error listing the
valid ones), :class:`PerFrame` and :class:`PointMap` (a reconstruction's per-frame arrays, indexed by
absolute frame) and :class:`PointSource`, what a mask needs of a reconstruction to lift itself to 3-D.
Imports run one way: ``frame_indexed`` <- ``per_frame_mask`` <- ``reconstruction``.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np


def check_frame(frame: object, valid: Sequence[int], what: str) -> int:
    """``frame`` as an int that is one of ``valid`` (the frame indices of ``what``); IndexError listing
    the valid indices otherwise."""
    if isinstance(frame, bool) or not isinstance(frame, numbers.Integral):
        raise TypeError(f"frame must be an int (an absolute frame index); got {type(frame).__name__}")
    frame = int(frame)
    if frame not in valid:
        raise IndexError(
            f"frame {frame} is not in this {what}; valid frame indices: {list(valid)} "
            "(absolute indices, as in InputImages[i].frame_index)"
        )
    return frame


class PerFrame:
    """Values of a reconstruction indexed by absolute frame index: ``x[frame]`` (a copy).
    ``np.asarray(x)`` stacks all frames in ``frame_indices`` order."""

    def __init__(
        self,
        values: np.ndarray,
        frame_indices: Sequence[int],
        what: str,
        wrap: Callable[[np.ndarray], object] | None = None,
    ) -> None:
        self._values = values
        self._frame_indices = [int(f) for f in frame_indices]
        self._what = what
        self._wrap = wrap

    @property
    def frame_indices(self) -> list[int]:
        return list(self._frame_indices)

    def __getitem__(self, frame: int):
        local = self._frame_indices.index(check_frame(frame, self._frame_indices, "reconstruction"))
        value = self._values[local]
        return self._wrap(value) if self._wrap is not None else value.copy()

    def __contains__(self, frame: object) -> bool:
        return isinstance(frame, numbers.Integral) and int(frame) in self._frame_indices

    def __len__(self) -> int:
        return len(self._frame_indices)

    def __iter__(self):
        raise TypeError(
            f"iterate over .frame_indices and index by frame: for f in recon.frame_indices: {self._what}[f]"
        )

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return np.array(self._values, dtype=dtype, copy=True)

    def __repr__(self) -> str:
        shape = self._values.shape[1:]
        return f"{self._what}[frame] -> {tuple(shape)} for frames {self._frame_indices}"


class PointMap(PerFrame):
    """World points per frame: ``points[frame]`` is ``(H, W, 3)`` metres (NaN where nothing was seen);
    ``points.confidence[frame]`` is ``(H, W)`` in ``[0, 1]``."""

    def __init__(self, points: np.ndarray, confidence: np.ndarray, frame_indices: Sequence[int]) -> None:
        super().__init__(points, frame_indices, "recon.points")
        self.confidence = PerFrame(confidence, frame_indices, "recon.points.confidence")

    @property
    def points(self) -> np.ndarray:
        """All point maps stacked, ``(N, H, W, 3)`` (a copy)."""
        return self._values.copy()


class PointSource(Protocol):
    """What lifting a mask to 3-D reads of a :class:`~.reconstruction.Reconstruction`: its ``points``
    (``points[frame]`` world points, ``points.confidence[frame]`` their confidence)."""

    points: PointMap


__all__ = ["PerFrame", "PointMap", "PointSource", "check_frame"]
