"""Which latent chunks of a trajectory are the reference, the history and the future targets of a decision.

The time axis follows the paper and its released code. Video runs at 4 FPS and the codec compresses 4 frames
into one latent chunk, so **1 chunk = 4 frames = 1 s**. A decision is taken at chunk index ``d`` (called
``ref_end``: the exclusive end of the reference), and

- the **reference** is the last :data:`REFERENCE_CHUNKS` = 2 chunks, ``(d - 2, d - 1)`` (the last 8 frames);
- the **history** is every chunk before them, ``0, 1, ..., d - 3`` (possibly none);
- the **future targets** are the chunks ``d + o`` for each offset ``o``. The paper's sparse offsets are
  :data:`SPARSE_OFFSETS` ``= (0, 1, 4, 7, 10, 13, 16, 19)``: the chunk covering second ``o + 1`` after the
  decision, i.e. +1, +2, +5, +8, ..., +20 s. Two consecutive chunks then a stride of 3 — in general
  ``(0, 1, 1 + k, 1 + 2k, ...)`` for a stride ``k`` (:func:`interval_offsets`); the dense generators and the
  "continuous 2 s / 10 s" ablations use ``range(n)`` (:func:`continuous_offsets`).

**Temporal positions.** A generator sees ``2 + len(offsets)`` generated slots (reference, then future). Their
temporal embedding can use the *true* chunk index relative to the reference start, ``(0, 1, 2 + o, ...)``
(mode ``"chunk"``: a sparse model's offset ``o`` embeds exactly like a dense model's index ``o``), or number
the slots ``0, 1, 2, ...`` as the released model does (mode ``"slot"``). With fixed offsets the two differ
only by a relabelling; they differ in substance when models with different offsets are compared.

**Frames near the end of a trajectory.** The maze is static, so an agent that has stopped keeps seeing the
same view: targets past the last recorded chunk come from repeating the last frame (:func:`pad_frames`).
Frame lists whose length is not a multiple of 4 are trimmed *at the start* (:func:`trim_to_chunks`), as
the released code does, so that the chunk grid ends on the latest frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neurips26.validation import check_choice, check_int

#: Frames per latent chunk (4 FPS, so one chunk is one second).
CHUNK_FRAMES = 4
#: Chunks of the current observation the generator is conditioned on (the last 8 frames).
REFERENCE_CHUNKS = 2
#: The paper's sparse future: offsets from ``ref_end``, i.e. +1, +2, +5, +8, +11, +14, +17, +20 s.
SPARSE_OFFSETS: tuple[int, ...] = (0, 1, 4, 7, 10, 13, 16, 19)

_MODES = ("chunk", "slot")


def interval_offsets(interval: int, count: int = 8) -> tuple[int, ...]:
    """``count`` future offsets: two consecutive, then a stride of ``interval`` chunks.

    ``(0, 1, 1 + interval, 1 + 2 interval, ...)``; offset ``k >= 1`` is ``1 + (k - 1) interval``. Interval 3
    gives :data:`SPARSE_OFFSETS`; interval 1 gives ``count`` consecutive chunks.
    """
    interval = check_int("interval", interval, minimum=1)
    count = check_int("count", count, minimum=1)
    return tuple(0 if k == 0 else 1 + (k - 1) * interval for k in range(count))


def continuous_offsets(seconds: int) -> tuple[int, ...]:
    """The dense future ``(0, 1, ..., seconds - 1)``: every chunk of the next ``seconds`` seconds."""
    seconds = check_int("seconds", seconds, minimum=1)
    return tuple(range(seconds))


def check_offsets(offsets: object) -> tuple[int, ...]:
    """Future offsets as a tuple of ints: non-empty, each ``>= 0``, strictly rising.

    Accepts a tuple, list or 1-D integer array. Raises ``TypeError`` for a non-sequence or a non-integer
    item and ``ValueError`` otherwise; every message names ``offsets``.
    """
    if isinstance(offsets, np.ndarray):
        if offsets.ndim != 1:
            raise ValueError(f"offsets must be 1-dimensional; got shape {offsets.shape}")
        offsets = offsets.tolist()
    if isinstance(offsets, str | bytes) or not isinstance(offsets, Sequence):
        raise TypeError(f"offsets must be a sequence of ints; got {type(offsets).__name__}")
    if len(offsets) == 0:
        raise ValueError("offsets must not be empty")
    checked = tuple(check_int(f"offsets[{i}]", o, minimum=0) for i, o in enumerate(offsets))
    if any(b <= a for a, b in zip(checked, checked[1:], strict=False)):
        raise ValueError(f"offsets must be strictly increasing; got {checked}")
    return checked


def horizon_seconds(offsets: object) -> int:
    """How far ahead the last target chunk reaches, in seconds: ``max(offsets) + 1`` (sparse: 20)."""
    return check_offsets(offsets)[-1] + 1


def positions(offsets: object, mode: str) -> np.ndarray:
    """The temporal index of each generated slot, int64 of shape ``(2 + len(offsets),)``.

    Slots are the 2 reference chunks then the future chunks. ``mode="chunk"``: the true chunk index counted
    from the reference start, ``(0, 1, 2 + o_0, 2 + o_1, ...)``. ``mode="slot"``: ``0, 1, 2, ...`` (the
    released model's consecutive numbering).
    """
    offsets = check_offsets(offsets)
    mode = check_choice("mode", mode, _MODES)
    if mode == "slot":
        return np.arange(REFERENCE_CHUNKS + len(offsets), dtype=np.int64)
    return np.array(
        [*range(REFERENCE_CHUNKS), *(REFERENCE_CHUNKS + o for o in offsets)],
        dtype=np.int64,
    )


@dataclass(frozen=True, eq=False)
class Window:
    """The chunk indices one decision reads: ``history`` ``(H,)`` (may be empty), ``reference`` ``(2,)`` and
    ``future`` ``(len(offsets),)``, all int64 indices into a trajectory's chunk sequence.

    ``future`` may point past the trajectory's last chunk; :attr:`needed_chunks` says how many chunks the
    trajectory must have after padding (:func:`pad_frames`).
    """

    history: np.ndarray
    reference: np.ndarray
    future: np.ndarray

    @property
    def decision_chunk(self) -> int:
        """``ref_end``: the index just after the reference."""
        return int(self.reference[-1]) + 1

    @property
    def needed_chunks(self) -> int:
        """Chunks a (padded) trajectory needs so that every index of the window exists: ``future[-1] + 1``."""
        return int(self.future[-1]) + 1


def window(decision_chunk: int, offsets: object, n_chunks: int) -> Window:
    """The history, reference and future chunk indices of a decision at ``decision_chunk`` (= ``ref_end``).

    With ``d = decision_chunk``: reference ``(d - 2, d - 1)``, history ``0 .. d - 3``, future ``d + offsets``.
    The reference must lie inside the ``n_chunks`` recorded chunks (``2 <= d <= n_chunks``); future indices
    ``>= n_chunks`` are returned as they are and must be served by padding the frames.
    """
    n_chunks = check_int("n_chunks", n_chunks, minimum=REFERENCE_CHUNKS)
    d = check_int("decision_chunk", decision_chunk, minimum=REFERENCE_CHUNKS, maximum=n_chunks)
    offsets = check_offsets(offsets)
    history = np.arange(d - REFERENCE_CHUNKS, dtype=np.int64)
    reference = np.arange(d - REFERENCE_CHUNKS, d, dtype=np.int64)
    future = d + np.asarray(offsets, dtype=np.int64)
    return Window(history=history, reference=reference, future=future)


def _check_frame_list(name: str, frames: object) -> np.ndarray:
    if not isinstance(frames, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray; got {type(frames).__name__}")
    if frames.ndim < 1:
        raise ValueError(f"{name} must have a leading time axis (T, ...); got shape {frames.shape}")
    return frames


def pad_frames(frames: np.ndarray, n_frames: int) -> np.ndarray:
    """``frames`` ``(T, ...)`` extended to ``(n_frames, ...)`` by repeating the last frame (a new array).

    A stopped agent in the static maze keeps seeing its last view. Never truncates: ``n_frames < T`` is a
    ``ValueError``; ``n_frames == T`` returns a copy.
    """
    frames = _check_frame_list("frames", frames)
    if frames.shape[0] == 0:
        raise ValueError("frames must hold at least one frame to repeat; got 0 frames")
    n_frames = check_int("n_frames", n_frames)
    if n_frames < frames.shape[0]:
        raise ValueError(
            f"n_frames must be >= the {frames.shape[0]} frames given (never truncated); got {n_frames}"
        )
    extra = np.repeat(frames[-1:], n_frames - frames.shape[0], axis=0)
    return np.concatenate([frames, extra], axis=0)


def trim_to_chunks(frames: np.ndarray) -> np.ndarray:
    """``frames`` ``(T, ...)`` minus its first ``T mod 4`` frames (a view): whole chunks up to the last frame.

    This is the released code's convention: the oldest frames are the ones dropped.
    """
    frames = _check_frame_list("frames", frames)
    return frames[frames.shape[0] % CHUNK_FRAMES :]


def check_history(frames: np.ndarray) -> np.ndarray:
    """A history clip ``(T, ...)`` with ``T`` a multiple of 4 (``T = 0`` allowed); returns it unchanged."""
    frames = _check_frame_list("history", frames)
    if frames.shape[0] % CHUNK_FRAMES:
        raise ValueError(
            f"history must be a whole number of chunks (T a multiple of {CHUNK_FRAMES}); "
            f"got T = {frames.shape[0]}"
        )
    return frames
