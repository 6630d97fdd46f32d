"""The observation the agent reads after each cell (paper §3.2, step 4).

:func:`format_feedback` turns a :class:`~.executor.CellResult` into the next user message: the captured
standard output (long output keeps its head and tail around a marker), the condensed traceback of a failed
cell, one line per new or changed variable (type, shape, dtype, len, frame indices, short value), the
images registered by ``show()`` listed as ``[image k: label]`` (their PNG bytes travel beside the text for
a vision-language backend), any submitted answer, and the budgets left. A cell refused by the safety check
says why. :func:`condense_feedback` shortens a failed step to one line, as the paper condenses errored
steps in the history. The text is a pure function of its inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from neurips26.spatialclaw.executor import CellResult, VariableSummary
from neurips26.validation import check_int

#: Standard output longer than this many characters is cut in the middle.
MAX_STDOUT_CHARS = 4000
#: A variable line lists at most this many frame indices (first and last ones).
_MAX_FRAMES_LISTED = 8


@dataclass(frozen=True)
class Feedback:
    """The next user message: ``text``, and the shown ``images`` (PNG bytes) with their ``labels``."""

    text: str
    images: tuple[bytes, ...] = field(default=(), repr=False)
    labels: tuple[str, ...] = ()


def truncate_middle(text: str, max_chars: int) -> str:
    """``text`` if short enough, else its head and tail around ``... [N characters truncated] ...``."""
    if len(text) <= max_chars:
        return text
    head = max_chars // 2
    tail = max_chars - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n... [{cut} characters truncated] ...\n{text[len(text) - tail :]}"


def _frames_text(frames: Sequence[int]) -> str:
    if len(frames) <= _MAX_FRAMES_LISTED:
        return "[" + ", ".join(map(str, frames)) + "]"
    head = ", ".join(map(str, frames[:4]))
    tail = ", ".join(map(str, frames[-2:]))
    return f"[{head}, ..., {tail}] ({len(frames)} frames)"


def variable_line(v: VariableSummary) -> str:
    """``name: type shape (2, 3) dtype float64 len 4 frames [0, 5] = value`` (parts that apply)."""
    parts = [f"{v.name}: {v.type_name}"]
    if v.shape is not None:
        parts.append(f"shape {tuple(v.shape)}")
    if v.dtype is not None:
        parts.append(f"dtype {v.dtype}")
    if v.length is not None:
        parts.append(f"len {v.length}")
    if v.frame_indices is not None:
        parts.append(f"frames {_frames_text(v.frame_indices)}")
    line = " ".join(parts)
    return f"{line} = {v.value}" if v.value is not None else line


def format_feedback(
    result: CellResult,
    *,
    step: int,
    max_steps: int,
    show_budget_left: int,
    max_stdout_chars: int = MAX_STDOUT_CHARS,
) -> Feedback:
    """The observation after ``step`` (1-based) of ``max_steps`` (module docstring)."""
    if not isinstance(result, CellResult):
        raise TypeError(f"result must be a CellResult; got {type(result).__name__}")
    max_steps = check_int("max_steps", max_steps, minimum=1)
    step = check_int("step", step, minimum=1, maximum=max_steps)
    show_budget_left = check_int("show_budget_left", show_budget_left, minimum=0)
    max_stdout_chars = check_int("max_stdout_chars", max_stdout_chars, minimum=1)
    steps_left = max_steps - step
    budgets = f"Steps left: {steps_left}. Show budget left: {show_budget_left} images."

    if result.rejected is not None:
        text = (
            f"Step {step}/{max_steps}: the cell was rejected by the safety check and did not run.\n"
            f"Reason: {result.rejected}\n{budgets}"
        )
        return Feedback(text)

    status = "timed out" if result.timed_out else ("failed" if result.error is not None else "ran")
    lines = [f"Step {step}/{max_steps}: the cell {status}."]
    lines.append("Output:")
    lines.append(truncate_middle(result.stdout.rstrip("\n"), max_stdout_chars) if result.stdout else "(none)")
    if result.error is not None:
        lines.append("Error:")
        lines.append(result.error.traceback_text)
    if result.variables:
        lines.append("Variables:")
        lines.extend(f"  {variable_line(v)}" for v in result.variables)
    labels = tuple(label for label, _ in result.images)
    if labels:
        lines.append("Images:")
        lines.extend(f"  [image {k}: {label}]" for k, label in enumerate(labels, start=1))
    for answer in result.answers:
        lines.append(f"Answer submitted: {answer!r}")
    lines.append(budgets)
    return Feedback("\n".join(lines), tuple(png for _, png in result.images), labels)


def condense_feedback(result: CellResult, *, step: int, max_steps: int) -> str:
    """One line for a failed or rejected step in the history (``""`` for a step that ran through)."""
    if not isinstance(result, CellResult):
        raise TypeError(f"result must be a CellResult; got {type(result).__name__}")
    max_steps = check_int("max_steps", max_steps, minimum=1)
    step = check_int("step", step, minimum=1, maximum=max_steps)
    if result.rejected is not None:
        return f"Step {step}/{max_steps} was rejected: {result.rejected}"
    if result.error is None:
        return ""
    where = f" at cell line {result.error.line}" if result.error.line is not None else ""
    evalue = truncate_middle(result.error.evalue.replace("\n", " "), 200)
    return f"Step {step}/{max_steps} failed{where}: {result.error.ename}: {evalue}"
