"""``vlm``: a stand-in for the isolated grounding / visual-reasoning model of the paper's kernel (§3.1).

``locate(images, question)`` grounds the first object the question names (canonical names *and*
synonyms, :func:`.lexicon.find_mentions`): per image, the largest visible instance that matches (colour
too, when given), its most interior pixel (the maximum of the distance transform of its mask) in 0–1000
normalised ``(x, y)``, plus ``N(0, locate_sigma)`` noise keyed on ``(seed, frame, question)``, clipped
and rounded; ``"Not visible"`` when nothing matching covers :data:`MIN_PIXELS` pixels. It is the
agent's way round SAM3's lexicon misses: locate a synonym, then prompt SAM3 with the point.

``ask_with_thinking(images, question)`` is deliberately weak: it answers from 2-D pixel evidence only,
so it is right on questions the image plane decides and unreliable on 3-D ones. Its rules, in order
(objects are named as in the question; "visible" = at least :data:`MIN_PIXELS` pixels):

1. *count* ("how many …", not about metres or distance): the most instances of the first named object
   visible in any one image;
2. *closest / nearest to X* (X: the first object named after "closest"/"nearest", else the first named):
   the object whose pixel centroid is nearest X's, in the first image showing X (among the other named
   objects if any are visible there, else among all objects);
3. *left / right* with three named objects A, B, C ("standing at A facing B, is C …"): left if C's
   pixel x is smaller than B's in the first image showing both; front if C is higher in the image than A
   (A not visible: front); answered as ``front-left`` etc. when the question mentions front, back or
   behind. With two named objects A, B: left if A's pixel x is smaller than B's;
4. *larger / bigger / smaller / taller / shorter / higher*: the larger (smaller) apparent pixel area,
   or pixel height for tall/short/high, in the first image showing both;
5. *closer / nearer / farther / further* (to the camera): the larger (smaller) apparent area;
6. otherwise ``"Cannot determine from the images."``.

The reply is one sentence of evidence followed by ``Answer: <answer>``. It is deterministic (no noise).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from scipy import ndimage

from neurips26.spatialclaw.scene_types import Frames, SceneObject, SpatialScene
from neurips26.spatialclaw.tools.frame_input import frame_indices
from neurips26.spatialclaw.tools.lexicon import find_mentions
from neurips26.spatialclaw.tools.noise import PerceptionNoise, keyed_rng

if TYPE_CHECKING:
    from neurips26.spatialclaw.kernel_types import FrameImage

MIN_PIXELS = 20
MAX_LOCATE_IMAGES = 8
MAX_ASK_IMAGES = 64
NOT_VISIBLE = "Not visible"
CANNOT_DETERMINE = "Cannot determine from the images."

Mention = tuple[str | None, str]


class VLM:
    """An isolated vision-language model: ``locate`` points at a named object, ``ask_with_thinking``
    answers a question from the images alone (weak on 3-D questions; never prime it with your answer)."""

    def __init__(self, scene: SpatialScene, frames: Frames, noise: PerceptionNoise, seed: int) -> None:
        self._scene = scene
        self._frames = frames
        self._noise = noise
        self._seed = seed

    # --- pixel evidence ------------------------------------------------------------------------------

    def _mask(self, frame: int, obj: SceneObject) -> np.ndarray:
        return self._frames.ids[frame] == obj.instance_id

    def _find(self, frame: int, mention: Mention) -> SceneObject | None:
        """The largest instance matching ``mention`` visible in ``frame``."""
        colour, category = mention
        best, best_count = None, MIN_PIXELS - 1
        for obj in self._scene.objects:
            if obj.category == category and (colour is None or obj.colour == colour):
                count = int(self._mask(frame, obj).sum())
                if count > best_count:
                    best, best_count = obj, count
        return best

    def _visible(self, frame: int) -> list[SceneObject]:
        return [o for o in self._scene.objects if self._mask(frame, o).sum() >= MIN_PIXELS]

    def _centroid(self, frame: int, obj: SceneObject) -> np.ndarray:
        rows, cols = np.nonzero(self._mask(frame, obj))
        return np.array([cols.mean() + 0.5, rows.mean() + 0.5])

    def _area(self, frame: int, obj: SceneObject) -> int:
        return int(self._mask(frame, obj).sum())

    def _height(self, frame: int, obj: SceneObject) -> int:
        rows = np.nonzero(self._mask(frame, obj).any(axis=1))[0]
        return int(rows.max() - rows.min() + 1)

    def _first_with(self, fis: list[int], mentions: list[Mention]) -> tuple[int, list[SceneObject]] | None:
        for f in fis:
            found = [self._find(f, m) for m in mentions]
            if all(o is not None for o in found):
                return f, found  # type: ignore[return-value]
        return None

    # --- the API -------------------------------------------------------------------------------------

    def locate(self, images: FrameImage | Sequence[FrameImage], question: str) -> list[tuple[int, int] | str]:
        """For each of ≤ 8 images, the 0–1000 normalised (x, y) centre of the object named in
        ``question`` (synonyms understood), or "Not visible". Convert with
        ``tools.Geometry.normalized_to_pixel(xy, W, H)``."""
        fis = frame_indices(images, "images", self._frames.num_frames, max_images=MAX_LOCATE_IMAGES)
        if not isinstance(question, str):
            raise TypeError(f"question must be a str; got {type(question).__name__}")
        mentions = find_mentions(question)
        key = " ".join(question.lower().split())
        h, w = self._scene.height, self._scene.width
        out: list[tuple[int, int] | str] = []
        for f in fis:
            rng = keyed_rng(self._seed, "vlm.locate", f, key)
            jitter = self._noise.locate_sigma * rng.normal(size=2)
            obj = self._find(f, mentions[0]) if mentions else None
            if obj is None:
                out.append(NOT_VISIBLE)
                continue
            inner = ndimage.distance_transform_edt(self._mask(f, obj))
            i, j = np.unravel_index(int(np.argmax(inner)), inner.shape)
            xy = np.array([(j + 0.5) / w, (i + 0.5) / h]) * 1000.0 + jitter
            x, y = np.clip(np.round(xy), 0, 1000).astype(int)
            out.append((int(x), int(y)))
        return out

    def ask_with_thinking(self, images: FrameImage | Sequence[FrameImage], question: str) -> str:
        """Answer ``question`` from ≤ 64 images by 2-D visual heuristics (counts, left/right in the
        image, apparent size): text ending in "Answer: …", or "Cannot determine from the images."."""
        fis = frame_indices(images, "images", self._frames.num_frames, max_images=MAX_ASK_IMAGES)
        if not isinstance(question, str):
            raise TypeError(f"question must be a str; got {type(question).__name__}")
        q = " ".join(question.lower().split())
        mentions = find_mentions(q)
        if not mentions:
            return CANNOT_DETERMINE
        metric = any(w in q for w in ("meter", "metre", "distance", "how far", " far "))
        if "how many" in q and not metric:
            return self._count(fis, mentions[0])
        if "closest" in q or "nearest" in q:
            cut = max(q.find("closest"), q.find("nearest"))
            after = find_mentions(q[cut:])
            anchor = after[0] if after else mentions[0]
            return self._closest(fis, [anchor, *(m for m in mentions if m != anchor)])
        if ("left" in q or "right" in q) and len(mentions) >= 2:
            return self._left_right(fis, mentions, q)
        for words, measure, largest in (
            (("larger", "bigger", "largest", "biggest"), "area", True),
            (("smaller", "smallest"), "area", False),
            (("taller", "higher", "tallest", "highest"), "height", True),
            (("shorter", "shortest"), "height", False),
            (("closer", "nearer"), "area", True),
            (("farther", "further"), "area", False),
        ):
            if any(word in q for word in words) and len(mentions) >= 2:
                return self._compare(fis, mentions[:2], measure, largest)
        return CANNOT_DETERMINE

    # --- the rules -----------------------------------------------------------------------------------

    def _count(self, fis: list[int], mention: Mention) -> str:
        colour, category = mention
        counts = [
            sum(
                1
                for o in self._visible(f)
                if o.category == category and (colour is None or o.colour == colour)
            )
            for f in fis
        ]
        best = int(np.argmax(counts))
        return f"At most {counts[best]} visible in one image (frame {fis[best]}). Answer: {counts[best]}"

    def _closest(self, fis: list[int], mentions: list[Mention]) -> str:
        hit = self._first_with(fis, mentions[:1])
        if hit is None:
            return CANNOT_DETERMINE
        frame, (anchor,) = hit
        named = [self._find(frame, m) for m in mentions[1:]]
        pool = [o for o in named if o is not None and o is not anchor] or [
            o for o in self._visible(frame) if o is not anchor
        ]
        if not pool:
            return CANNOT_DETERMINE
        c = self._centroid(frame, anchor)
        best = min(pool, key=lambda o: float(np.linalg.norm(self._centroid(frame, o) - c)))
        return (
            f"In frame {frame}, the {best.name} appears nearest the {anchor.name} in the image. "
            f"Answer: {best.name}"
        )

    def _left_right(self, fis: list[int], mentions: list[Mention], q: str) -> str:
        if len(mentions) >= 3:
            a_mention, b_mention, c_mention = mentions[:3]
            hit = self._first_with(fis, [b_mention, c_mention])
            if hit is None:
                return CANNOT_DETERMINE
            frame, (b, c) = hit
            side = "left" if self._centroid(frame, c)[0] < self._centroid(frame, b)[0] else "right"
            a = self._find(frame, a_mention)
            front = a is None or self._centroid(frame, c)[1] < self._centroid(frame, a)[1]
            answer = (
                f"{'front' if front else 'back'}-{side}"
                if any(w in q for w in ("front", "back", "behind"))
                else side
            )
            where = f"In frame {frame}, the {c.name} appears {side} of the {b.name} in the image."
            return f"{where} Answer: {answer}"
        hit = self._first_with(fis, mentions[:2])
        if hit is None:
            return CANNOT_DETERMINE
        frame, (a, b) = hit
        side = "left" if self._centroid(frame, a)[0] < self._centroid(frame, b)[0] else "right"
        return f"In frame {frame}, the {a.name} appears {side} of the {b.name} in the image. Answer: {side}"

    def _compare(self, fis: list[int], mentions: list[Mention], measure: str, largest: bool) -> str:
        hit = self._first_with(fis, mentions)
        if hit is None:
            return CANNOT_DETERMINE
        frame, (a, b) = hit
        size = self._area if measure == "area" else self._height
        va, vb = size(frame, a), size(frame, b)
        pick = a if (va >= vb) == largest else b
        return (
            f"In frame {frame}, apparent {measure}: {a.name} {va} px, {b.name} {vb} px. Answer: {pick.name}"
        )

    def __repr__(self) -> str:
        return "vlm (locate(images, question) -> 0-1000 points; ask_with_thinking(images, question) -> str)"
