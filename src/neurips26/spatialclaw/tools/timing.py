"""``tools.Time``: frame index ↔ time conversions (paper §3.1 names), bound to the input's frame rate.

As in the released tool, the object is built from the input's ``fps`` and frame count, so
``tools.Time.frame_to_seconds(12)`` needs no rate; every method also takes an explicit ``fps`` to
override it. Frame ``f`` is shown at ``f / fps`` seconds. (Module named ``timing`` so that it can never
shadow the standard ``time`` module; the kernel still sees it as ``tools.Time``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from neurips26.spatialclaw.tools.frame_input import frame_indices, is_frame
from neurips26.validation import check_float, check_int

if TYPE_CHECKING:
    from neurips26.spatialclaw.kernel_types import FrameImage


class Time:
    """Frame index ↔ seconds at the input's frame rate (``fps``; frame f is at f / fps s)."""

    def __init__(self, fps: float, total_frames: int) -> None:
        self.fps = check_float("fps", fps, minimum=0.0, strict_min=True)
        self.total_frames = check_int("total_frames", total_frames, minimum=1)

    def _fps(self, fps: object) -> float:
        return self.fps if fps is None else check_float("fps", fps, minimum=0.0, strict_min=True)

    def frame_to_seconds(self, frame: int, fps: float | None = None) -> float:
        """Time in seconds of absolute frame index ``frame``: frame / fps."""
        return check_float("frame", frame) / self._fps(fps)

    def seconds_to_frame(self, seconds: float, fps: float | None = None) -> int:
        """Nearest frame index to time ``seconds``, clamped to the input's frames."""
        index = round(check_float("seconds", seconds) * self._fps(fps))
        return int(min(max(index, 0), self.total_frames - 1))

    def frame_range_to_seconds(self, start_frame: int, end_frame: int, fps: float | None = None) -> float:
        """Duration in seconds from ``start_frame`` to ``end_frame``: (end − start) / fps."""
        start = check_float("start_frame", start_frame)
        return (check_float("end_frame", end_frame) - start) / self._fps(fps)

    def get_frame_at_time(
        self, images: Sequence[FrameImage], seconds: float, fps: float | None = None
    ) -> FrameImage:
        """The image of ``images`` (e.g. InputImages) whose time is nearest ``seconds`` (earlier on a tie)."""
        fis = frame_indices(images, "images", self.total_frames)
        items = [images] if is_frame(images) else list(images)  # type: ignore[call-overload]
        t = check_float("seconds", seconds)
        rate = self._fps(fps)
        best = min(range(len(fis)), key=lambda k: (abs(fis[k] / rate - t), fis[k]))
        return items[best]

    def __repr__(self) -> str:
        return f"tools.Time(fps={self.fps:g}, total_frames={self.total_frames})"
