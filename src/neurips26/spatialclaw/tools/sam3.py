"""``tools.SAM3``: a seeded stand-in for the SAM3 segmenter, reading the renderer's instance-id buffer.

Point and box prompts are exact: they return the whole visible region of the instance under the
points (or the instance the box best encloses). Text prompts go through a strict lexicon
(:mod:`.lexicon`: ``"<colour> <category>"``, ``"<category>"``, plurals) and return every matching
instance seen in at least :data:`MIN_PIXELS` pixels, with the failure modes of a real open-vocabulary
segmenter (our choice of the typical ones):

* a word outside the lexicon (a synonym such as ``"couch"``) finds nothing;
* each instance is dropped with probability ``p_miss``;
* each mask is eroded or dilated by up to ``boundary_px`` pixels (drawn per frame);
* with probability ``split_prob`` an instance comes back as two objects (its mask cut across its
  principal axis), an ambiguity the agent has to notice;
* several instances of a category come back as several objects, largest first.

Randomness is keyed on ``(seed, method, frame indices, prompt, instance)`` (:func:`.noise.keyed_rng`),
so a call returns the same masks whenever it is made; ``is_object_exist`` agrees with
``segment_image_by_text`` frame by frame. Video calls track by instance id: object ``k`` is the same
instance in every frame (empty where it is out of view).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from scipy import ndimage

from neurips26.spatialclaw.per_frame_mask import PerFrameMask
from neurips26.spatialclaw.scene_types import Frames, SpatialScene
from neurips26.spatialclaw.tools.frame_input import frame_index, frame_indices
from neurips26.spatialclaw.tools.lexicon import parse_prompt
from neurips26.spatialclaw.tools.noise import PerceptionNoise, keyed_rng
from neurips26.validation import check_int

if TYPE_CHECKING:
    from neurips26.spatialclaw.kernel_types import FrameImage

#: Fewest visible pixels for a text prompt to detect an instance (as ``scenes.MIN_PIXELS``).
MIN_PIXELS = 20
MAX_VIDEO_FRAMES = 64


def _normalised(prompt: object, name: str) -> str:
    if not isinstance(prompt, str):
        raise TypeError(f"{name} must be a str; got {type(prompt).__name__}")
    text = " ".join(prompt.lower().split())
    if not text:
        raise ValueError(f"{name} must be a non-empty string")
    return text


def _jitter(mask: np.ndarray, step: int) -> np.ndarray:
    """Dilate (``step > 0``) or erode (``step < 0``) by ``|step|`` pixels; an erosion that would empty
    the mask leaves it as it is."""
    if step == 0 or not mask.any():
        return mask
    if step > 0:
        return ndimage.binary_dilation(mask, iterations=step)
    out = ndimage.binary_erosion(mask, iterations=-step)
    return out if out.any() else mask


def _split(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cut ``mask`` across its principal axis at the median: (the left/upper part, the rest)."""
    rows, cols = np.nonzero(mask)
    first, second = np.zeros_like(mask), np.zeros_like(mask)
    if len(rows) < 2:
        return mask.copy(), second
    xy = np.stack([cols, rows], axis=1).astype(float)
    centred = xy - xy.mean(axis=0)
    _, vectors = np.linalg.eigh(centred.T @ centred)
    axis = vectors[:, -1]
    if axis[0] < 0 or (axis[0] == 0 and axis[1] < 0):
        axis = -axis
    proj = centred @ axis
    low = proj <= np.median(proj)
    first[rows[low], cols[low]] = True
    second[rows[~low], cols[~low]] = True
    return first, second


def _pixel_points(points: object, width: int, height: int) -> np.ndarray:
    """``(P, 2)`` pixel ``(x, y)`` from one pair or a list of pairs, inside the image. The far edges count
    as inside (``normalized_to_pixel`` maps a grounding coordinate of 1000 to ``width`` or ``height``) and
    select the last pixel column or row."""
    try:
        arr = np.asarray(points, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"points must be pixel (x, y) pairs, e.g. [[40, 52]]; got {points!r}") from err
    if arr.ndim == 1:
        arr = arr[None]
    if arr.ndim != 2 or arr.shape[1] != 2 or len(arr) == 0:
        raise ValueError(f"points must be (x, y) pixel pairs, shape (P, 2); got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("points must be finite")
    inside = (arr[:, 0] >= 0) & (arr[:, 0] <= width) & (arr[:, 1] >= 0) & (arr[:, 1] <= height)
    if not inside.all():
        raise ValueError(
            f"points must lie in the image, 0 <= x <= {width} and 0 <= y <= {height} (pixels, not 0-1000; "
            f"convert with tools.Geometry.normalized_to_pixel); got {arr[~inside].tolist()}"
        )
    return np.minimum(arr, [width - 1, height - 1])


def _point_labels(point_labels: object, count: int) -> list[int]:
    if point_labels is None:
        return [1] * count
    labels = list(np.ravel(np.asarray(point_labels)))
    if len(labels) != count or any(int(v) not in (0, 1) or int(v) != v for v in labels):
        raise ValueError(
            f"point_labels must hold one 1 (object) or 0 (not object) per point; got {point_labels!r}"
        )
    if 1 not in [int(v) for v in labels]:
        raise ValueError("point_labels must mark at least one point with 1 (on the object)")
    return [int(v) for v in labels]


def _label(label: object) -> str:
    if not isinstance(label, str):
        raise TypeError(f"label must be a str; got {type(label).__name__}")
    return label


class SAM3Tool:
    """Segmentation by text, points or box, in one image or tracked across video frames → PerFrameMask.

    Text prompts use canonical names only: ``"<colour> <category>"``, ``"<category>"`` or plurals
    (categories: chair, table, sofa, tv, box, lamp, plant, ball); other words find nothing. Results can
    miss instances, have ragged boundaries or split one object in two; check ``num_objects``.
    """

    def __init__(self, scene: SpatialScene, frames: Frames, noise: PerceptionNoise, seed: int) -> None:
        self._scene = scene
        self._frames = frames
        self._noise = noise
        self._seed = seed

    # --- internals -----------------------------------------------------------------------------------

    def _mask(self, fis: list[int], masks: list[np.ndarray], labels: list[str]) -> PerFrameMask:
        h, w = self._scene.height, self._scene.width
        stacked = np.stack(masks, axis=1) if masks else np.zeros((len(fis), 0, h, w), dtype=bool)
        return PerFrameMask(stacked, labels, fis, images={f: self._frames.rgb[f] for f in fis})

    def _text_objects(
        self, method: str, fis: list[int], prompt: str, detect_on: list[int]
    ) -> tuple[list[np.ndarray], list[str]]:
        """Masks ``(N, H, W)`` and labels of the instances ``prompt`` finds in the frames ``detect_on``
        (module docstring), tracked over ``fis``."""
        parsed = parse_prompt(prompt)
        if parsed is None:
            return [], []
        colour, category = parsed
        ids = self._frames.ids
        found: list[tuple[int, int, np.ndarray]] = []  # (-total pixels, instance id, (N, H, W) mask)
        for obj in self._scene.objects:
            if obj.category != category or (colour is not None and obj.colour != colour):
                continue
            if max(int(np.count_nonzero(ids[f] == obj.instance_id)) for f in detect_on) < MIN_PIXELS:
                continue
            rng = keyed_rng(self._seed, method, fis, prompt, obj.instance_id)
            missed = rng.random() < self._noise.p_miss
            split = rng.random() < self._noise.split_prob
            b = self._noise.boundary_px
            steps = rng.integers(-b, b + 1, size=len(fis)) if b > 0 else np.zeros(len(fis), dtype=int)
            if missed:
                continue
            track = np.stack(
                [_jitter(ids[f] == obj.instance_id, int(s)) for f, s in zip(fis, steps, strict=True)]
            )
            parts = [track]
            if split:
                halves = [_split(m) for m in track]
                parts = [np.stack([p[0] for p in halves]), np.stack([p[1] for p in halves])]
            for part in parts:
                found.append((-int(part.sum()), obj.instance_id, part))
        found.sort(key=lambda item: (item[0], item[1]))
        return [m for _, _, m in found], [prompt] * len(found)

    def _window(
        self, images: object, start_frame: object, end_frame: object, prompt_frame_idx: object
    ) -> tuple[list[int], int | None]:
        fis = frame_indices(
            images, "images", self._frames.num_frames, max_images=MAX_VIDEO_FRAMES, unique=True
        )
        if start_frame is not None:
            start = check_int("start_frame", start_frame)
            fis = [f for f in fis if f >= start]
        if end_frame is not None:
            end = check_int("end_frame", end_frame)
            fis = [f for f in fis if f < end]
        if not fis:
            raise ValueError(
                f"no image of images lies in [start_frame, end_frame) = [{start_frame}, {end_frame}) "
                "(absolute frame indices; end exclusive)"
            )
        local = None
        if prompt_frame_idx is not None:
            local = check_int("prompt_frame_idx", prompt_frame_idx, minimum=0, maximum=len(fis) - 1)
        return fis, local

    def _instance_at_points(self, frame: int, points: object, point_labels: object) -> int | None:
        ids = self._frames.ids[frame]
        pts = _pixel_points(points, self._scene.width, self._scene.height)
        labels = _point_labels(point_labels, len(pts))
        hits = [int(ids[int(y), int(x)]) for x, y in pts]
        negative = {i for i, lab in zip(hits, labels, strict=True) if lab == 0}
        positive = [
            i for i, lab in zip(hits, labels, strict=True) if lab == 1 and i != -1 and i not in negative
        ]
        return Counter(positive).most_common(1)[0][0] if positive else None

    def _instance_in_box(self, frame: int, box: object) -> int | None:
        try:
            x0, y0, x1, y1 = (float(v) for v in np.ravel(np.asarray(box, dtype=float)))
        except (TypeError, ValueError) as err:
            raise ValueError(f"box must be pixel (x0, y0, x1, y1); got {box!r}") from err
        if not all(np.isfinite([x0, y0, x1, y1])) or x1 <= x0 or y1 <= y0:
            raise ValueError(f"box must be pixel (x0, y0, x1, y1) with x1 > x0 and y1 > y0; got {box!r}")
        ids = self._frames.ids[frame]
        h, w = ids.shape
        cols = (np.arange(w) + 0.5 >= x0) & (np.arange(w) + 0.5 <= x1)
        rows = (np.arange(h) + 0.5 >= y0) & (np.arange(h) + 0.5 <= y1)
        inside = ids[np.ix_(rows, cols)]
        best: tuple[int, float, int] | None = None  # (well enclosed?, score, id)
        for inst, count in zip(*np.unique(inside[inside != -1], return_counts=True), strict=True):
            fraction = count / np.count_nonzero(ids == inst)
            key = (1, float(count), int(inst)) if fraction >= 0.5 else (0, float(fraction), int(inst))
            if best is None or key[:2] > best[:2]:
                best = key
        return None if best is None else best[2]

    def _track(self, fis: list[int], instance: int | None, label: str) -> PerFrameMask:
        h, w = self._scene.height, self._scene.width
        if instance is None:
            masks = np.zeros((len(fis), 1, h, w), dtype=bool)
        else:
            masks = np.stack([self._frames.ids[f] == instance for f in fis])[:, None]
        return PerFrameMask(masks, [label], fis, images={f: self._frames.rgb[f] for f in fis})

    # --- images --------------------------------------------------------------------------------------

    def segment_image_by_text(self, image: FrameImage, prompt: str) -> PerFrameMask:
        """Every instance matching ``prompt`` (``"red chair"``, ``"chair"``, ``"chairs"``) in one image →
        PerFrameMask over that frame, one object per instance, largest first (0 objects if none)."""
        fi = frame_index(image, "image", self._frames.num_frames)
        text = _normalised(prompt, "prompt")
        masks, labels = self._text_objects("segment_image_by_text", [fi], text, [fi])
        return self._mask([fi], masks, labels)

    def segment_image_by_points(
        self,
        image: FrameImage,
        points: Sequence[Sequence[float]],
        point_labels: Sequence[int] | None = None,
        label: str = "object",
    ) -> PerFrameMask:
        """The one object under pixel ``points`` [[x, y], ...] (x = column, y = row) in one image;
        ``point_labels`` 1 = on the object, 0 = not (default all 1). Exact; empty if only background."""
        fi = frame_index(image, "image", self._frames.num_frames)
        return self._track([fi], self._instance_at_points(fi, points, point_labels), _label(label))

    def segment_image_by_box(
        self, image: FrameImage, box: Sequence[float], label: str = "object"
    ) -> PerFrameMask:
        """The one object best enclosed by pixel ``box`` (x0, y0, x1, y1) in one image. Exact."""
        fi = frame_index(image, "image", self._frames.num_frames)
        return self._track([fi], self._instance_in_box(fi, box), _label(label))

    # --- videos --------------------------------------------------------------------------------------

    def segment_video_by_text(
        self,
        images: Sequence[FrameImage],
        prompt: str | list[str],
        start_frame: int | None = None,
        end_frame: int | None = None,
        prompt_frame_idx: int | None = None,
    ) -> PerFrameMask:
        """Track every instance matching ``prompt`` (a str, or a list: one label per prompt) over
        ``images`` restricted to absolute frames ``start_frame <= f < end_frame``. Instances are detected
        in the window's frame ``prompt_frame_idx`` (a position in the window; default: in any frame).
        Object k is the same instance in every frame (empty mask where it is not visible)."""
        fis, local = self._window(images, start_frame, end_frame, prompt_frame_idx)
        prompts = [prompt] if isinstance(prompt, str) else prompt
        if not isinstance(prompts, list | tuple) or not prompts:
            raise TypeError(f"prompt must be a str or a non-empty list of str; got {prompt!r}")
        detect_on = fis if local is None else [fis[local]]
        masks, labels = [], []
        for k, p in enumerate(prompts):
            m, lab = self._text_objects(
                "segment_video_by_text", fis, _normalised(p, f"prompt[{k}]"), detect_on
            )
            masks += m
            labels += lab
        return self._mask(fis, masks, labels)

    def segment_video_by_points(
        self,
        images: Sequence[FrameImage],
        points: Sequence[Sequence[float]],
        point_labels: Sequence[int] | None = None,
        label: str = "object",
        start_frame: int | None = None,
        end_frame: int | None = None,
        prompt_frame_idx: int = 0,
    ) -> PerFrameMask:
        """Track the one object under pixel ``points`` [[x, y], ...] of the window's frame
        ``prompt_frame_idx`` (a position in the window) over ``images`` with ``start_frame <= f <
        end_frame``. Exact."""
        fis, local = self._window(images, start_frame, end_frame, prompt_frame_idx)
        instance = self._instance_at_points(fis[local or 0], points, point_labels)
        return self._track(fis, instance, _label(label))

    def segment_video_by_box(
        self,
        images: Sequence[FrameImage],
        box: Sequence[float],
        label: str = "object",
        start_frame: int | None = None,
        end_frame: int | None = None,
        prompt_frame_idx: int = 0,
    ) -> PerFrameMask:
        """Track the one object best enclosed by pixel ``box`` (x0, y0, x1, y1) in the window's frame
        ``prompt_frame_idx`` over ``images`` with ``start_frame <= f < end_frame``. Exact."""
        fis, local = self._window(images, start_frame, end_frame, prompt_frame_idx)
        return self._track(fis, self._instance_in_box(fis[local or 0], box), _label(label))

    def is_object_exist(self, images: FrameImage | Sequence[FrameImage], object_name: str) -> bool:
        """Whether ``segment_image_by_text(image, object_name)`` finds something in any of ``images``."""
        fis = frame_indices(images, "images", self._frames.num_frames)
        text = _normalised(object_name, "object_name")
        return any(self._text_objects("segment_image_by_text", [f], text, [f])[0] for f in fis)

    def __repr__(self) -> str:
        return (
            "tools.SAM3 (segment_image_by_text/points/box, segment_video_by_text/points/box, "
            "is_object_exist -> PerFrameMask)"
        )
