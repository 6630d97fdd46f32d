"""What the agent's code sees in the kernel (paper §3.1), and what the harness reads back after each cell.

This module runs *inside* the kernel (a Jupyter kernel or the in-process namespace), so it imports only
NumPy, PIL and, lazily, matplotlib — never torch.

* :class:`FrameImage`: one RGB frame that remembers its absolute video frame index (PIL-like: ``size``,
  ``width``, ``height``, ``mode``, :meth:`~FrameImage.to_pil`).
* :class:`InputImages`: the sample's frames. Integer indexing is by *position*; slices keep the absolute
  indices (``InputImages[4:8].frame_indices == [4, 5, 6, 7]``); :meth:`~InputImages.by_frame` looks a
  frame up by its absolute index.
* :class:`Metadata`: the frozen facts about the input (video or not, fps, counts, duration).
* :class:`SessionState`: one per kernel namespace (bound under :data:`STATE_NAME`). Its
  :meth:`~SessionState.return_answer` and :meth:`~SessionState.show` are the kernel's ``ReturnAnswer`` and
  ``show``; it counts the answer attempts (at most :data:`MAX_ANSWER_ATTEMPTS`) and the show budget
  (:data:`SHOW_BUDGET` images per session), and captures matplotlib figures (``plt.show()`` or left open)
  as shown images.
* :func:`collect_cell_outputs`: after a cell, a JSON-able dict of the answers submitted, the images shown,
  the new or changed variables (type, shape, dtype, len, frame indices, short value) and, when the cell
  failed, the exception's frames. Both executors build their ``CellResult`` from this one dict, which is
  why their transcripts are identical.

``ReturnAnswer`` only *records* an answer; the cell runs to its end and the agent loop stops after the cell
when a valid answer was submitted.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import math
import numbers
import sys
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from neurips26.spatialclaw.safety import is_reserved

#: The name under which a kernel namespace holds its :class:`SessionState` (hidden: it starts with ``_``).
STATE_NAME = "_spatialclaw_session"
#: Images ``show()`` may register in one session (paper §3.1).
SHOW_BUDGET = 250
#: ``ReturnAnswer`` calls accepted in one session (paper §3.2); the next one raises ``RuntimeError``.
MAX_ANSWER_ATTEMPTS = 5
#: Arrays up to this many bytes are hashed to notice in-place changes; larger ones by identity and shape.
_HASH_BYTES = 1 << 16
#: Scalar and string values in variable summaries are cut to this many characters.
_VALUE_CHARS = 80


# --------------------------------------------------------------------------------------------------------
# frames
# --------------------------------------------------------------------------------------------------------
class FrameImage:
    """One RGB frame: ``array`` (H, W, 3) uint8 (read-only) and ``frame_index``, its absolute video frame.

    PIL-compatible where agents need it: ``size`` is ``(W, H)``, ``width``, ``height``, ``mode == "RGB"``,
    :meth:`to_pil` for a real ``PIL.Image``; ``np.asarray(frame)`` gives the pixels.
    """

    __slots__ = ("_array", "_frame_index")
    mode = "RGB"

    def __init__(self, array: np.ndarray, frame_index: int) -> None:
        if not isinstance(array, np.ndarray):
            raise TypeError(f"array must be a numpy.ndarray; got {type(array).__name__}")
        if array.ndim != 3 or array.shape[2] != 3:
            raise ValueError(f"array must have shape (H, W, 3); got {array.shape}")
        if array.dtype != np.uint8:
            raise TypeError(f"array must have dtype uint8; got {array.dtype}")
        if isinstance(frame_index, bool) or not isinstance(frame_index, numbers.Integral):
            raise TypeError(f"frame_index must be an int; got {type(frame_index).__name__}")
        if frame_index < 0:
            raise ValueError(f"frame_index must be >= 0; got {frame_index}")
        view = array.view()
        view.flags.writeable = False  # the frames are shared (render cache): agents must not paint on them
        self._array = view
        self._frame_index = int(frame_index)

    @property
    def array(self) -> np.ndarray:
        return self._array

    @property
    def frame_index(self) -> int:
        return self._frame_index

    @property
    def width(self) -> int:
        return int(self._array.shape[1])

    @property
    def height(self) -> int:
        return int(self._array.shape[0])

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)``, as in PIL."""
        return (self.width, self.height)

    @property
    def shape(self) -> tuple[int, int, int]:
        """``(height, width, 3)``, as in NumPy."""
        return tuple(self._array.shape)  # type: ignore[return-value]

    def to_pil(self) -> Any:
        """A ``PIL.Image.Image`` copy of the frame."""
        from PIL import Image

        return Image.fromarray(np.array(self._array))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        out = self._array if dtype is None else self._array.astype(dtype)
        return np.array(out) if copy else out

    def __repr__(self) -> str:
        return f"FrameImage(frame {self._frame_index}, {self.width}x{self.height})"


def _describe_indices(indices: Sequence[int]) -> str:
    """``0..15`` for a contiguous run, else the list (shortened past 8 entries)."""
    if not indices:
        return "none"
    if list(indices) == list(range(indices[0], indices[0] + len(indices))):
        return f"{indices[0]}..{indices[-1]}"
    if len(indices) <= 8:
        return "[" + ", ".join(map(str, indices)) + "]"
    return "[" + ", ".join(map(str, indices[:3])) + ", ..., " + ", ".join(map(str, indices[-2:])) + "]"


class InputImages(Sequence[FrameImage]):
    """The sample's frames, in order. ``InputImages[k]`` is the frame at *position* ``k`` (negative
    positions count from the end); ``InputImages[a:b]`` (or a list of positions) is an ``InputImages``
    that keeps the frames' absolute indices; :meth:`by_frame` finds a frame by its absolute index.
    An out-of-range position raises ``IndexError`` naming the valid positions and frame indices."""

    __slots__ = ("_frames",)

    def __init__(self, frames: Iterable[FrameImage]) -> None:
        if isinstance(frames, FrameImage | np.ndarray | str) or not isinstance(frames, Iterable):
            raise TypeError(f"frames must be an iterable of FrameImage; got {type(frames).__name__}")
        items = tuple(frames)
        for k, frame in enumerate(items):
            if not isinstance(frame, FrameImage):
                raise TypeError(f"frames[{k}] must be a FrameImage; got {type(frame).__name__}")
        indices = [f.frame_index for f in items]
        if len(set(indices)) != len(indices):
            raise ValueError(f"frames must have distinct frame_index values; got {indices}")
        self._frames = items

    @property
    def frame_indices(self) -> list[int]:
        """The absolute frame index of every position."""
        return [f.frame_index for f in self._frames]

    def __len__(self) -> int:
        return len(self._frames)

    def __iter__(self) -> Iterator[FrameImage]:
        return iter(self._frames)

    def _range_text(self) -> str:
        n = len(self._frames)
        if n == 0:
            return "InputImages is empty"
        return (
            f"valid positions are 0..{n - 1} (or -{n}..-1), holding absolute frame indices "
            f"{_describe_indices(self.frame_indices)}"
        )

    def _position(self, k: object) -> int:
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise TypeError(f"InputImages indices must be int, slice or list of int; got {type(k).__name__}")
        n = len(self._frames)
        if not -n <= int(k) < n:
            raise IndexError(
                f"InputImages position {int(k)} is out of range: {self._range_text()}. "
                "Use InputImages.by_frame(i) to look a frame up by its absolute index."
            )
        return int(k) % n

    @overload
    def __getitem__(self, key: int) -> FrameImage: ...

    @overload
    def __getitem__(self, key: slice | Sequence[int]) -> InputImages: ...

    def __getitem__(self, key: object) -> FrameImage | InputImages:
        if isinstance(key, slice):
            return InputImages(self._frames[key])
        if isinstance(key, list | tuple | np.ndarray):
            return InputImages(self._frames[self._position(k)] for k in key)
        return self._frames[self._position(key)]

    def by_frame(self, frame_index: int) -> FrameImage:
        """The frame whose absolute index is ``frame_index`` (``IndexError`` naming the valid ones)."""
        for frame in self._frames:
            if frame.frame_index == frame_index:
                return frame
        raise IndexError(
            f"no frame with absolute index {frame_index}: the frame indices are "
            f"{_describe_indices(self.frame_indices)}"
        )

    def __repr__(self) -> str:
        if not self._frames:
            return "InputImages(0 frames)"
        first = self._frames[0]
        return (
            f"InputImages({len(self)} frames, frame indices {_describe_indices(self.frame_indices)}, "
            f"{first.width}x{first.height})"
        )


@dataclass(frozen=True)
class Metadata:
    """Facts about the input (paper §3.1): ``is_video``; ``fps`` (1 for multi-view); ``total_frames`` of
    the source video; ``num_images`` in ``InputImages``; ``duration_sec``; ``video_source`` (a label);
    ``num_videos`` (0 for multi-view images); ``videos`` (per-video dicts for multi-video samples)."""

    is_video: bool
    fps: float
    total_frames: int
    num_images: int
    duration_sec: float
    video_source: str
    num_videos: int
    videos: tuple[Mapping[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.is_video, bool):
            raise TypeError(f"is_video must be a bool; got {type(self.is_video).__name__}")
        for name in ("fps", "duration_sec"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0:
                raise ValueError(f"{name} must be a number >= 0; got {value!r}")
        for name in ("total_frames", "num_images", "num_videos"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise ValueError(f"{name} must be an int >= 0; got {value!r}")
        if not isinstance(self.video_source, str):
            raise TypeError(f"video_source must be a str; got {type(self.video_source).__name__}")
        object.__setattr__(self, "videos", tuple(self.videos))


# --------------------------------------------------------------------------------------------------------
# images for show()
# --------------------------------------------------------------------------------------------------------
def _to_uint8(array: np.ndarray) -> np.ndarray:
    """Pixels as uint8: bool masks → 0/255; floats in [0, 1] scaled by 255; other values min-max scaled."""
    if array.dtype == np.uint8:
        return array
    if array.dtype == bool:
        return array.astype(np.uint8) * 255
    values = np.nan_to_num(array.astype(float), nan=0.0, posinf=0.0, neginf=0.0)
    lo, hi = float(values.min(initial=0.0)), float(values.max(initial=0.0))
    if array.dtype.kind == "f" and lo >= 0.0 and hi <= 1.0:
        return np.round(values * 255).astype(np.uint8)
    if array.dtype.kind in "iu" and lo >= 0 and hi <= 255:
        return values.astype(np.uint8)
    scale = 255.0 / (hi - lo) if hi > lo else 0.0
    return np.round((values - lo) * scale).astype(np.uint8)


def png_bytes(array: np.ndarray, *, optimize: bool = False) -> bytes:
    """PNG of an image array ((H, W) or (H, W, 3); floats in [0, 1], 0–255 integers, or any range rescaled
    to 0–255). ``optimize`` spends more time for a smaller file (pages that embed many frames)."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(_to_uint8(array))).save(buf, format="PNG", optimize=optimize)
    return buf.getvalue()


def _png_of_figure(figure: Any) -> bytes:
    buf = io.BytesIO()
    figure.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    return buf.getvalue()


def _is_figure(x: object) -> bool:
    module = sys.modules.get("matplotlib.figure")
    return module is not None and isinstance(x, module.Figure)


def _is_pil(x: object) -> bool:
    module = sys.modules.get("PIL.Image")
    return module is not None and isinstance(x, module.Image)


def encode_image(x: object) -> tuple[str, bytes]:
    """``(default label, PNG bytes)`` of one showable object: a :class:`FrameImage`, an array (H, W) or
    (H, W, 3|4), a PIL image or a matplotlib Figure."""
    if isinstance(x, FrameImage):
        return f"frame {x.frame_index}", png_bytes(x.array)
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "biuf":
            raise TypeError(f"show: an array must hold numbers; got dtype {x.dtype}")
        if not (x.ndim == 2 or (x.ndim == 3 and x.shape[2] in (3, 4))) or 0 in x.shape:
            raise ValueError(f"show: an array must have shape (H, W), (H, W, 3) or (H, W, 4); got {x.shape}")
        return f"array {x.shape[1]}x{x.shape[0]}", png_bytes(x)
    if _is_pil(x):
        return f"image {x.width}x{x.height}", png_bytes(np.asarray(x.convert("RGB")))  # type: ignore[attr-defined]
    if _is_figure(x):
        return "figure", _png_of_figure(x)
    raise TypeError(
        "show: x must be a FrameImage, a numpy array, a PIL image, a matplotlib Figure or a list of them; "
        f"got {type(x).__name__}"
    )


# --------------------------------------------------------------------------------------------------------
# the session
# --------------------------------------------------------------------------------------------------------
#: The session whose cell is running: ``plt.show()`` inside a Jupyter kernel reports to it.
_ACTIVE: SessionState | None = None


class SessionState:
    """One kernel namespace's bookkeeping: answers, shown images, budgets, and the last cell's baseline.

    The harness calls :meth:`begin_cell` before a cell and :func:`collect_cell_outputs` (or
    :meth:`end_cell`) after it.
    """

    def __init__(self, *, show_budget: int = SHOW_BUDGET, max_answers: int = MAX_ANSWER_ATTEMPTS) -> None:
        self.show_budget = int(show_budget)
        self.max_answers = int(max_answers)
        self.answers: list[str | int | float] = []  # valid answers, in order
        self.attempts = 0
        self.shown = 0  # images registered over the whole session
        self._pending_answers: list[str | int | float] = []
        self._pending_images: list[tuple[str, bytes]] = []
        self._baseline: dict[str, tuple[object, tuple]] = {}
        self._figures_before: set[int] = set()

    # ---- the agent's entry points -------------------------------------------------------------------
    def return_answer(self, x: object) -> None:
        """``ReturnAnswer(x)``: submit ``x`` (str, int or float; NumPy scalars are converted). Every call is
        an attempt; past :data:`MAX_ANSWER_ATTEMPTS` it raises ``RuntimeError``. The cell continues; the
        agent loop ends after the cell once a valid answer was submitted."""
        if self.attempts >= self.max_answers:
            raise RuntimeError(
                f"ReturnAnswer: the budget of {self.max_answers} answer attempts is spent; no answer recorded"
            )
        self.attempts += 1
        if isinstance(x, np.generic):
            x = x.item()
        if isinstance(x, bool) or not isinstance(x, str | int | float):
            raise TypeError(f"ReturnAnswer: the answer must be a str, int or float; got {type(x).__name__}")
        if isinstance(x, float) and not math.isfinite(x):
            raise ValueError(f"ReturnAnswer: a numeric answer must be finite; got {x}")
        if isinstance(x, str) and not x.strip():
            raise ValueError("ReturnAnswer: the answer must not be an empty string")
        value: str | int | float = (
            str(x) if isinstance(x, str) else int(x) if isinstance(x, int) else float(x)
        )
        self.answers.append(value)
        self._pending_answers.append(value)

    def show(self, x: object, label: str | None = None) -> None:
        """``show(x)``: add an image, or a list of images, to the next observation. ``label`` names it
        (default: ``frame <i>``, ``figure``, ``array WxH``, ``image WxH``). Past the session budget a warning
        is printed and nothing more is registered."""
        if label is not None and not isinstance(label, str):
            raise TypeError(f"show: label must be a str or None; got {type(label).__name__}")
        many = isinstance(x, list | tuple | InputImages)
        items = list(x) if many else [x]  # type: ignore[arg-type]
        encoded = [encode_image(item) for item in items]
        for k, (default, png) in enumerate(encoded):
            name = default if label is None else (f"{label} [{k}]" if many else label)
            self._register(name, png, len(encoded) - k)

    def _register(self, label: str, png: bytes, remaining: int) -> bool:
        if self.shown >= self.show_budget:
            print(
                f"Warning: show() budget of {self.show_budget} images is spent; "
                f"{remaining} image(s) not shown."
            )
            return False
        self.shown += 1
        self._pending_images.append((label, png))
        return True

    @property
    def show_budget_left(self) -> int:
        return self.show_budget - self.shown

    # ---- figures ------------------------------------------------------------------------------------
    def capture_figures(self) -> None:
        """Register every pyplot figure opened since :meth:`begin_cell` and close it (``plt.show()``)."""
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is None:
            return
        for num in pyplot.get_fignums():
            if num in self._figures_before:
                continue
            figure = pyplot.figure(num)
            spent = self.shown >= self.show_budget  # then _register only prints the warning
            self._register("figure", b"" if spent else _png_of_figure(figure), 1)
            pyplot.close(figure)

    @contextlib.contextmanager
    def capturing_pyplot(self) -> Iterator[None]:
        """Route ``plt.show()`` to :meth:`capture_figures` while the block runs (the in-process executor;
        a Jupyter kernel installs the route once, see :func:`install_kernel_hooks`). Imports pyplot, as
        the kernel's pre-imports do, so that a cell's own ``import matplotlib.pyplot`` gets the route too."""
        import matplotlib.pyplot as pyplot

        original = pyplot.show
        pyplot.show = lambda *args, **kwargs: self.capture_figures()
        try:
            yield
        finally:
            pyplot.show = original

    # ---- cell boundaries ----------------------------------------------------------------------------
    def begin_cell(self, namespace: Mapping[str, object]) -> None:
        """Remember the namespace and the open figures, so the cell's changes can be found afterwards."""
        global _ACTIVE
        _ACTIVE = self
        self._baseline = snapshot_namespace(namespace)
        pyplot = sys.modules.get("matplotlib.pyplot")
        self._figures_before = set(pyplot.get_fignums()) if pyplot is not None else set()

    def end_cell(
        self,
        namespace: Mapping[str, object],
        error: BaseException | None = None,
        *,
        hidden: Iterable[str] = (),
    ) -> dict[str, Any]:
        """:func:`collect_cell_outputs` against this session's baseline, then a new baseline."""
        self.capture_figures()
        out = collect_cell_outputs(namespace, self._baseline, hidden=hidden)
        out["error"] = None if error is None else error_summary(error)
        self.begin_cell(namespace)
        return out

    def take_pending(self) -> tuple[list[str | int | float], list[tuple[str, bytes]]]:
        answers, images = self._pending_answers, self._pending_images
        self._pending_answers, self._pending_images = [], []
        return answers, images


def bind_session(namespace: dict[str, object], state: SessionState | None = None) -> SessionState:
    """Put a session (new unless given) and its ``ReturnAnswer`` and ``show`` into ``namespace``."""
    state = SessionState() if state is None else state
    namespace[STATE_NAME] = state
    namespace["ReturnAnswer"] = state.return_answer
    namespace["show"] = state.show
    return state


def session_state(namespace: Mapping[str, object]) -> SessionState:
    """The namespace's :class:`SessionState` (``RuntimeError`` if the bootstrap did not bind one)."""
    state = namespace.get(STATE_NAME)
    if not isinstance(state, SessionState):
        raise RuntimeError(f"the kernel namespace has no session state under {STATE_NAME!r}")
    return state


# --------------------------------------------------------------------------------------------------------
# variable diff
# --------------------------------------------------------------------------------------------------------
_SCALARS = (type(None), bool, int, float, complex, str, bytes, np.generic)


def _tracked(name: str, value: object) -> bool:
    """Whether a name belongs in the variable diff: the agent's own data, not names, modules or code."""
    if name.startswith("_") or is_reserved(name):
        return False
    code_like = types.ModuleType | type | types.FunctionType | types.BuiltinFunctionType | types.MethodType
    return not isinstance(value, code_like)


def _fingerprint(value: object) -> tuple:
    """Cheap change detector: the value for scalars; identity, shape and (small arrays) a content hash."""
    if isinstance(value, _SCALARS):
        return (
            "scalar",
            type(value).__name__,
            hash(value) if not isinstance(value, np.generic) else repr(value),
        )
    if isinstance(value, np.ndarray):
        digest = (
            hashlib.blake2b(value.tobytes(), digest_size=8).digest() if value.nbytes <= _HASH_BYTES else b""
        )
        return ("array", id(value), value.shape, value.dtype.str, digest)
    try:
        length = len(value)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - anything without a usable len()
        length = None
    return ("object", id(value), length)


def snapshot_namespace(namespace: Mapping[str, object]) -> dict[str, tuple[object, tuple]]:
    """``{name: (value, fingerprint)}`` of the tracked names. Values are kept so that their ``id`` cannot be
    reused by a new object before the next comparison."""
    return {name: (value, _fingerprint(value)) for name, value in namespace.items() if _tracked(name, value)}


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 3] + "..."


def summarize_value(name: str, value: object) -> dict[str, Any]:
    """A JSON-able summary: ``name``, ``type``, and when they apply ``shape``, ``dtype``, ``len``,
    ``frame_indices`` and ``value`` (a short repr, scalars and strings only)."""
    out: dict[str, Any] = {"name": name, "type": type(value).__name__}
    if isinstance(value, _SCALARS):
        out["value"] = _short(value)
        return out
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(s, numbers.Integral) for s in shape):
        out["shape"] = [int(s) for s in shape]
    dtype = getattr(value, "dtype", None)
    if isinstance(dtype, np.dtype):
        out["dtype"] = str(dtype)
    if not isinstance(value, np.ndarray):
        try:
            out["len"] = int(len(value))  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - not sized
            pass
    try:
        frames = getattr(value, "frame_indices", None)
    except Exception:  # noqa: BLE001 - a failing property is not the diff's business
        frames = None
    if isinstance(frames, list | tuple | np.ndarray) and all(isinstance(f, numbers.Integral) for f in frames):
        out["frame_indices"] = [int(f) for f in frames]
    return out


def collect_cell_outputs(
    namespace: Mapping[str, object],
    before: Mapping[str, tuple[object, tuple]],
    *,
    hidden: Iterable[str] = (),
) -> dict[str, Any]:
    """After a cell: a JSON-able dict with ``answers`` (values submitted since the last collect),
    ``images`` (``{"label", "png"}`` base64, since the last collect), ``variables`` (summaries of the names
    that are new or changed with respect to ``before``, a :func:`snapshot_namespace`), ``show_budget_left``
    and ``answer_attempts_left``. ``hidden`` names (the Jupyter shell's own) are skipped."""
    state = session_state(namespace)
    skip = set(hidden)
    variables = []
    for name, value in namespace.items():
        if name in skip or not _tracked(name, value):
            continue
        old = before.get(name)
        if old is None or old[1] != _fingerprint(value):
            variables.append(summarize_value(name, value))
    answers, images = state.take_pending()
    return {
        "answers": answers,
        "images": [{"label": label, "png": base64.b64encode(png).decode("ascii")} for label, png in images],
        "variables": variables,
        "show_budget_left": state.show_budget_left,
        "answer_attempts_left": state.max_answers - state.attempts,
    }


# --------------------------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------------------------
def error_summary(error: BaseException) -> dict[str, Any]:
    """``ename``, ``evalue`` and the traceback's ``frames`` from the cell's own ``<module>`` frame inward,
    each ``[line, function, in_cell]``. The cell is the first ``<module>`` frame (the executors call
    ``exec`` on it), so the same exception gives the same summary in both executors."""
    entries = []
    tb = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        entries.append((code.co_filename, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    start = next((k for k, e in enumerate(entries) if e[2] == "<module>"), len(entries))
    cell_file = entries[start][0] if start < len(entries) else None
    try:
        evalue = str(error)
    except Exception:  # noqa: BLE001 - an exception whose __str__ fails
        evalue = "<unprintable>"
    return {
        "ename": type(error).__name__,
        "evalue": evalue,
        "frames": [[line, name, filename == cell_file] for filename, line, name in entries[start:]],
    }


# --------------------------------------------------------------------------------------------------------
# Jupyter kernel side
# --------------------------------------------------------------------------------------------------------
class _JSONText(str):
    """A string whose repr is itself, so a Jupyter ``user_expression`` returns raw JSON as text/plain."""

    def __repr__(self) -> str:
        return str(self)


def install_kernel_hooks() -> None:
    """Once per Jupyter kernel: Agg backend, ``plt.show()`` routed to the running session, and plain
    ``repr`` for a cell's last expression (as the in-process executor prints it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def _show(*args: object, **kwargs: object) -> None:
        if _ACTIVE is not None:
            _ACTIVE.capture_figures()

    plt.show = _show
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None:
        shell.display_formatter.formatters["text/plain"].pprint = False


def begin_kernel_cell(namespace: Mapping[str, object]) -> None:
    """Jupyter kernel: baseline after the bootstrap (later baselines come from :func:`finish_kernel_cell`)."""
    session_state(namespace).begin_cell(namespace)


def finish_kernel_cell(namespace: Mapping[str, object], *, error: bool) -> _JSONText:
    """Jupyter kernel: the cell's outputs as JSON text (a ``user_expression``). With ``error`` the shell's
    last exception (``sys.last_value``) is summarised too."""
    exc = None
    if error:
        exc = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    hidden = tuple(shell.user_ns_hidden) if shell is not None else ()
    out = session_state(namespace).end_cell(namespace, exc, hidden=hidden)
    return _JSONText(json.dumps(out))
