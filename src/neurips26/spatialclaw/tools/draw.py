"""``tools.Draw``: annotate an image with boxes, lines and points (paper §3.1 names), with PIL.

Every method takes a kernel image or an ``(H, W, 3)`` array, leaves it untouched and returns a new
``(H, W, 3)`` uint8 RGB array (pass it to ``show``). Coordinates are pixels ``(x, y)`` = (column, row);
colours are names PIL knows (``"red"``, ``"lime"``, ``"#ff8800"``) or ``(r, g, b)`` in 0–255.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from PIL import Image, ImageColor, ImageDraw

from neurips26.spatialclaw.tools.frame_input import image_array

if TYPE_CHECKING:
    from neurips26.spatialclaw.kernel_types import FrameImage


def _colour(colour: object) -> tuple[int, int, int]:
    if isinstance(colour, str):
        try:
            return ImageColor.getrgb(colour)[:3]  # type: ignore[return-value]
        except ValueError as err:
            raise ValueError(f"color must be a colour name or (r, g, b); got {colour!r}") from err
    try:
        rgb = tuple(int(v) for v in colour)  # type: ignore[union-attr]
    except TypeError as err:
        raise TypeError(f"color must be a colour name or (r, g, b); got {colour!r}") from err
    if len(rgb) != 3 or not all(0 <= v <= 255 for v in rgb):
        raise ValueError(f"color must be (r, g, b) with values in 0..255; got {colour!r}")
    return rgb  # type: ignore[return-value]


def _rows(value: object, size: int, name: str) -> np.ndarray:
    """One item of ``size`` numbers or a list of them → (K, size) floats."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"{name} must be numbers: one item of {size} or a list of them; got {value!r}"
        ) from err
    if arr.ndim == 1:
        arr = arr[None]
    if arr.ndim != 2 or arr.shape[1] != size or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite items of {size} numbers; got shape {arr.shape}")
    return arr


def _canvas(image: object) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    pil = Image.fromarray(np.array(image_array(image, "image"), copy=True))
    return pil, ImageDraw.Draw(pil)


class Draw:
    """Draw boxes, lines and points on a copy of an image → new (H, W, 3) uint8 array."""

    @staticmethod
    def draw_bbox(
        image: FrameImage | np.ndarray,
        boxes: ArrayLike,
        color: str | tuple[int, int, int] = "red",
        thickness: int = 1,
    ) -> np.ndarray:
        """Rectangles for pixel box (x0, y0, x1, y1) or a list of boxes."""
        pil, draw = _canvas(image)
        for x0, y0, x1, y1 in _rows(boxes, 4, "boxes"):
            draw.rectangle(
                (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)),
                outline=_colour(color),
                width=max(int(thickness), 1),
            )
        return np.asarray(pil)

    @staticmethod
    def draw_line(
        image: FrameImage | np.ndarray,
        lines: ArrayLike,
        color: str | tuple[int, int, int] = "lime",
        thickness: int = 1,
    ) -> np.ndarray:
        """Segments for pixel line (x0, y0, x1, y1) or a list of lines."""
        pil, draw = _canvas(image)
        for x0, y0, x1, y1 in _rows(lines, 4, "lines"):
            draw.line((x0, y0, x1, y1), fill=_colour(color), width=max(int(thickness), 1))
        return np.asarray(pil)

    @staticmethod
    def draw_point(
        image: FrameImage | np.ndarray,
        points: ArrayLike,
        color: str | tuple[int, int, int] = "blue",
        radius: int = 2,
    ) -> np.ndarray:
        """Filled discs of ``radius`` pixels at pixel point (x, y) or a list of points."""
        pil, draw = _canvas(image)
        r = max(int(radius), 0)
        for x, y in _rows(points, 2, "points"):
            draw.ellipse((x - r, y - r, x + r, y + r), fill=_colour(color))
        return np.asarray(pil)

    def __repr__(self) -> str:
        return "tools.Draw (draw_bbox, draw_line, draw_point -> new RGB arrays)"
