"""Segmentation masks over frames, addressed by absolute frame index: what ``tools.SAM3`` returns.

A :class:`PerFrameMask` holds ``K`` objects over ``N`` frames as a boolean ``(N, K, H, W)`` array.
Object ``k`` is the same object in every frame (video calls track it); its label is the prompt that
found it. Frames are named by their absolute index in the input video (``InputImages[i].frame_index``),
never by position in the mask, as in the paper's kernel (§3.1). Lifting a mask to 3-D goes through a
:class:`~neurips26.spatialclaw.reconstruction.Reconstruction` of the same frame: the points under the
mask, filtered by the reconstruction's confidence, and their median as a robust centroid. The mask needs
only the reconstruction's point map (:class:`~.frame_indexed.PointSource`), so this module does not import
:mod:`~.reconstruction` (which imports it).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from neurips26.spatialclaw.frame_indexed import PointSource, check_frame
from neurips26.validation import check_float

#: Overlay colours of ``visualize`` (RGB 0–255), object k gets ``_COLOURS[k % len]``.
_COLOURS = np.array(
    [(230, 25, 75), (60, 180, 75), (0, 130, 200), (255, 225, 25), (145, 30, 180), (70, 240, 240)],
    dtype=float,
)


class PerFrameMask:
    """Masks of ``num_objects`` objects over the frames ``frame_indices`` (absolute indices).

    ``masks`` is ``(N, K, H, W)`` bool; ``labels[k]`` names object ``k``; ``mask[frame]`` gives the
    ``(K, H, W)`` masks of one frame. Object ``k`` is the same object in every frame.
    """

    def __init__(
        self,
        masks: np.ndarray,
        labels: Sequence[str],
        frame_indices: Sequence[int],
        images: Mapping[int, np.ndarray] | None = None,
    ) -> None:
        masks = np.asarray(masks)
        if masks.ndim != 4:
            raise ValueError(f"masks must have shape (N, K, H, W); got {masks.shape}")
        self._frame_indices = [int(f) for f in frame_indices]
        if masks.shape[0] != len(self._frame_indices):
            raise ValueError(
                f"masks holds {masks.shape[0]} frames but frame_indices lists {len(self._frame_indices)}"
            )
        if len(set(self._frame_indices)) != len(self._frame_indices):
            raise ValueError(f"frame_indices must not repeat; got {self._frame_indices}")
        self._labels = [str(label) for label in labels]
        if len(self._labels) != masks.shape[1]:
            raise ValueError(f"labels must name the {masks.shape[1]} objects; got {len(self._labels)}")
        self._masks = masks.astype(bool)
        self._images = dict(images or {})

    # --- what it holds -------------------------------------------------------------------------------

    @property
    def frame_indices(self) -> list[int]:
        """Absolute frame indices the masks cover, in order."""
        return list(self._frame_indices)

    @property
    def num_frames(self) -> int:
        return len(self._frame_indices)

    @property
    def num_objects(self) -> int:
        """How many objects were found (0: nothing matched)."""
        return int(self._masks.shape[1])

    @property
    def labels(self) -> list[str]:
        """The label of each object (the prompt that found it)."""
        return list(self._labels)

    @property
    def masks(self) -> np.ndarray:
        """All masks, ``(N, K, H, W)`` bool (a copy)."""
        return self._masks.copy()

    @property
    def shape(self) -> tuple[int, int]:
        """``(H, W)`` of every mask."""
        return (int(self._masks.shape[2]), int(self._masks.shape[3]))

    def _local(self, frame: object) -> int:
        return self._frame_indices.index(check_frame(frame, self._frame_indices, "mask"))

    def _object(self, obj: object) -> int:
        if isinstance(obj, str):
            if obj not in self._labels:
                raise KeyError(f"no object labelled {obj!r}; labels: {self._labels}")
            return self._labels.index(obj)
        if isinstance(obj, bool) or not isinstance(obj, numbers.Integral):
            raise TypeError(f"object must be an int index or a label str; got {type(obj).__name__}")
        if not 0 <= int(obj) < self.num_objects:
            valid = f"0..{self.num_objects - 1}" if self.num_objects else "none (num_objects is 0)"
            raise IndexError(f"object {int(obj)} out of range; valid object indices: {valid}")
        return int(obj)

    def __getitem__(self, frame: int) -> np.ndarray:
        """``(K, H, W)`` bool masks of every object at absolute ``frame``."""
        return self._masks[self._local(frame)].copy()

    def __len__(self) -> int:
        return self.num_frames

    def __iter__(self):
        raise TypeError(
            "iterate over mask.frame_indices and index with mask[frame] or mask.get_mask(frame, k)"
        )

    def get_mask(self, frame: int, object: int | str = 0) -> np.ndarray:
        """``(H, W)`` bool mask of ``object`` (index or label) at absolute ``frame``."""
        return self._masks[self._local(frame), self._object(object)].copy()

    def pixel_count(self, frame: int, object: int | str = 0) -> int:
        """Number of mask pixels of ``object`` at absolute ``frame``."""
        return int(self._masks[self._local(frame), self._object(object)].sum())

    # --- lifting to 3-D ------------------------------------------------------------------------------

    def _points_and_confidence(
        self, recon: PointSource, frame: int, obj: object
    ) -> tuple[np.ndarray, np.ndarray]:
        mask = self.get_mask(frame, obj)
        points_map = getattr(recon, "points", None)
        if points_map is None or not hasattr(points_map, "confidence"):
            raise TypeError(f"recon must be a Reconstruction (tools.Reconstruct); got {type(recon).__name__}")
        points = np.asarray(points_map[frame], dtype=float)
        confidence = np.asarray(points_map.confidence[frame], dtype=float)
        if points.shape[:2] != mask.shape:
            raise ValueError(f"recon frame {frame} is {points.shape[:2]} pixels but the mask is {mask.shape}")
        keep = mask & np.all(np.isfinite(points), axis=-1)
        return points[keep], confidence[keep]

    def get_masked_points(
        self,
        recon: PointSource,
        frame: int,
        object: int | str = 0,
        min_confidence: float = 0.0,
    ) -> np.ndarray:
        """``(P, 3)`` world points of ``recon`` under the mask of ``object`` at absolute ``frame``, keeping
        pixels with a finite point and confidence ``>= min_confidence``."""
        min_confidence = check_float("min_confidence", min_confidence, minimum=0.0, maximum=1.0)
        points, confidence = self._points_and_confidence(recon, frame, object)
        return points[confidence >= min_confidence]

    def get_centroid_3d(
        self,
        recon: PointSource,
        frame: int,
        object: int | str = 0,
        min_confidence: float = 0.3,
    ) -> np.ndarray:
        """``(3,)`` median of the world points under the mask of ``object`` at absolute ``frame`` whose
        confidence is ``>= min_confidence`` (all masked points if none pass; NaNs if the mask is empty)."""
        min_confidence = check_float("min_confidence", min_confidence, minimum=0.0, maximum=1.0)
        points, confidence = self._points_and_confidence(recon, frame, object)
        if len(points) == 0:
            return np.full(3, np.nan)
        confident = points[confidence >= min_confidence]
        return np.median(confident if len(confident) else points, axis=0)

    # --- looking at it -------------------------------------------------------------------------------

    def visualize(self, frame: int | None = None) -> np.ndarray:
        """``(H, W, 3)`` uint8 RGB of absolute ``frame`` (default: the first) with each object's mask
        tinted in its own colour and its index written at its centre."""
        from PIL import Image, ImageDraw

        frame = self._frame_indices[0] if frame is None else frame
        local = self._local(frame)
        h, w = self.shape
        base = self._images.get(int(frame))
        canvas = np.full((h, w, 3), 40.0) if base is None else np.asarray(base, dtype=float).copy()
        for k in range(self.num_objects):
            m = self._masks[local, k]
            canvas[m] = 0.45 * canvas[m] + 0.55 * _COLOURS[k % len(_COLOURS)]
        image = Image.fromarray(np.clip(np.round(canvas), 0, 255).astype(np.uint8))
        draw = ImageDraw.Draw(image)
        for k in range(self.num_objects):
            rows, cols = np.nonzero(self._masks[local, k])
            if len(rows):
                draw.text((float(cols.mean()) - 2, float(rows.mean()) - 5), str(k), fill=(255, 255, 255))
        return np.asarray(image)

    def __repr__(self) -> str:
        label_set = sorted(set(self._labels))
        what = ", ".join(repr(x) for x in label_set) if label_set else "nothing"
        frames = self._frame_indices
        shown = frames if len(frames) <= 8 else [*frames[:3], "...", *frames[-2:]]
        lines = [
            f"PerFrameMask({what}: num_objects={self.num_objects}, frames={shown} "
            f"({self.num_frames} frame{'s' if self.num_frames != 1 else ''}), "
            f"{self.shape[0]}x{self.shape[1]} px)"
        ]
        counts = self._masks.sum(axis=(2, 3))
        for k in range(self.num_objects):
            per = counts[:, k]
            if self.num_frames <= 8:
                pix = ", ".join(f"{f}: {int(c)}" for f, c in zip(frames, per, strict=True))
                lines.append(f"  object {k} {self._labels[k]!r}: pixels per frame {{{pix}}}")
            else:
                seen = [f for f, c in zip(frames, per, strict=True) if c > 0]
                lines.append(
                    f"  object {k} {self._labels[k]!r}: visible in {len(seen)}/{self.num_frames} frames, "
                    f"pixels min {int(per.min())} / median {int(np.median(per))} / max {int(per.max())}"
                )
        if self.num_objects == 0:
            lines.append("  no object found (try a category name, another frame, or a point/box prompt)")
        return "\n".join(lines)
