"""The feedback text is a deterministic function of the cell result (checked byte for byte)."""

from __future__ import annotations

import pytest

from neurips26.spatialclaw.executor import CellError, CellResult, VariableSummary
from neurips26.spatialclaw.feedback import condense_feedback, format_feedback, truncate_middle

PNG = b"\x89PNG\r\n\x1a\nfake"


def _result(**changes) -> CellResult:
    fields = dict(
        stdout="mask found\n",
        error=CellError(
            "IndexError",
            "list index out of range",
            3,
            "  cell line 3: w = y[7]\nIndexError: list index out of range",
        ),
        images=(("frame 4", PNG), ("figure", PNG + b"2")),
        variables=(
            VariableSummary("pts", "ndarray", shape=(120, 3), dtype="float32"),
            VariableSummary("mask", "PerFrameMask", length=2, frame_indices=tuple(range(0, 20, 2))),
            VariableSummary("d", "float", value="1.25"),
        ),
        answers=(),
        timed_out=False,
        rejected=None,
        show_budget_left=248,
        answer_attempts_left=5,
        seconds=0.1,
    )
    fields.update(changes)
    return CellResult(**fields)


def test_feedback_text_is_exact():
    fb = format_feedback(_result(), step=3, max_steps=10, show_budget_left=248)
    assert fb.text == (
        "Step 3/10: the cell failed.\n"
        "Output:\n"
        "mask found\n"
        "Error:\n"
        "  cell line 3: w = y[7]\n"
        "IndexError: list index out of range\n"
        "Variables:\n"
        "  pts: ndarray shape (120, 3) dtype float32\n"
        "  mask: PerFrameMask len 2 frames [0, 2, 4, 6, ..., 16, 18] (10 frames)\n"
        "  d: float = 1.25\n"
        "Images:\n"
        "  [image 1: frame 4]\n"
        "  [image 2: figure]\n"
        "Steps left: 7. Show budget left: 248 images."
    )
    assert fb.images == (PNG, PNG + b"2") and fb.labels == ("frame 4", "figure")
    assert format_feedback(_result(), step=3, max_steps=10, show_budget_left=248) == fb


def test_feedback_for_answer_and_empty_output():
    result = _result(stdout="", error=None, images=(), variables=(), answers=("left",))
    assert format_feedback(result, step=10, max_steps=10, show_budget_left=0).text == (
        "Step 10/10: the cell ran.\nOutput:\n(none)\nAnswer submitted: 'left'\n"
        "Steps left: 0. Show budget left: 0 images."
    )


def test_rejected_cell_says_why():
    result = _result(stdout="", error=None, images=(), variables=(), rejected="line 1: forbidden import: os")
    fb = format_feedback(result, step=1, max_steps=2, show_budget_left=250)
    assert fb.text == (
        "Step 1/2: the cell was rejected by the safety check and did not run.\n"
        "Reason: line 1: forbidden import: os\n"
        "Steps left: 1. Show budget left: 250 images."
    )
    assert fb.images == ()
    assert (
        condense_feedback(result, step=1, max_steps=2)
        == "Step 1/2 was rejected: line 1: forbidden import: os"
    )


def test_long_stdout_keeps_head_and_tail():
    text = "".join(f"line {k}\n" for k in range(2000))
    fb = format_feedback(
        _result(stdout=text, error=None), step=1, max_steps=2, show_budget_left=1, max_stdout_chars=40
    )
    body = fb.text.split("Output:\n", 1)[1]
    assert body.startswith("line 0\nline 1\nline 2\n")
    assert "characters truncated] ..." in body and "line 1999\nVariables:" in body
    assert truncate_middle("short", 10) == "short"


def test_condensed_history_line():
    assert condense_feedback(_result(), step=2, max_steps=5) == (
        "Step 2/5 failed at cell line 3: IndexError: list index out of range"
    )
    assert condense_feedback(_result(error=None), step=2, max_steps=5) == ""


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"step": 0, "max_steps": 3, "show_budget_left": 1}, "step"),
        ({"step": 4, "max_steps": 3, "show_budget_left": 1}, "step"),
        ({"step": 1, "max_steps": 0, "show_budget_left": 1}, "max_steps"),
        ({"step": 1, "max_steps": 3, "show_budget_left": -1}, "show_budget_left"),
    ],
)
def test_bad_arguments_name_themselves(kwargs, name):
    with pytest.raises(ValueError, match=name):
        format_feedback(_result(), **kwargs)
    with pytest.raises(TypeError, match="result"):
        format_feedback("text", step=1, max_steps=1, show_budget_left=0)  # type: ignore[arg-type]
