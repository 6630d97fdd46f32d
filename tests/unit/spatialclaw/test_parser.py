"""Response parser: four headings and exactly one python block; planner checklist; boxed answers."""

from __future__ import annotations

import pytest

from neurips26.spatialclaw.parser import (
    ChecklistItem,
    ChecklistWarning,
    ParsedResponse,
    ResponseFormatError,
    format_response,
    parse_boxed,
    parse_checklist,
    parse_response,
)

CANONICAL = """**Purpose**: Segment the chair.

**Reasoning**: The question asks about the chair, so I need its mask first.
It may be missing.

**Next Goal**: A mask with at least one object.

**Code**:
```python
masks = tools.SAM3.segment_image_by_text(InputImages[0], "chair")
if masks.num_objects == 0:
    print("empty")
```
"""


def test_canonical_response():
    parsed = parse_response(CANONICAL)
    assert parsed.purpose == "Segment the chair."
    assert (
        parsed.reasoning == "The question asks about the chair, so I need its mask first.\nIt may be missing."
    )
    assert parsed.next_goal == "A mask with at least one object."
    assert parsed.code.splitlines()[0].startswith("masks = tools.SAM3")
    assert parsed.code.splitlines()[-1] == '    print("empty")'
    assert parsed.warnings == ()


@pytest.mark.parametrize(
    "purpose_line",
    [
        "**Purpose**: P.",
        "**Purpose:** P.",
        "**purpose** : P.",
        "## Purpose\nP.",
        "Purpose: P.",
        "  __PURPOSE__:  P.  ",
    ],
)
def test_lenient_headings(purpose_line):
    text = f"\n\n{purpose_line}\n**REASONING:**\nR.\n### Next goal:\nG.\n**Code**\n```Python\nx = 1\n```\n\n"
    parsed = parse_response(text)
    assert (parsed.purpose, parsed.reasoning, parsed.next_goal, parsed.code) == ("P.", "R.", "G.", "x = 1")
    assert parsed.warnings == ()


@pytest.mark.parametrize("tag", ["python", "py", "Python", "PY", "python3"])
def test_python_tags(tag):
    assert parse_response(f"**Code**:\n```{tag}\nx = 1\n```").code == "x = 1"


def test_other_language_blocks_are_ignored():
    text = '**Purpose**: p\n```json\n{"a": 1}\n```\n**Code**:\n```python\ny = 2\n```\n```text\nout\n```'
    assert parse_response(text).code == "y = 2"


def test_missing_code_block_is_an_error():
    with pytest.raises(ResponseFormatError, match="no"):
        parse_response("**Purpose**: p\n**Reasoning**: r\n**Next Goal**: g\n**Code**: x = 1")
    with pytest.raises(ResponseFormatError):
        parse_response('**Code**:\n```json\n{"tool": "show"}\n```')


def test_several_python_blocks_are_an_error():
    text = "**Code**:\n```python\nx = 1\n```\nand\n```py\ny = 2\n```"
    with pytest.raises(ResponseFormatError, match="2 python code blocks"):
        parse_response(text)


def test_empty_block_is_an_error():
    with pytest.raises(ResponseFormatError, match="empty"):
        parse_response("**Code**:\n```python\n\n```")


def test_tolerated_problems_become_warnings():
    untagged = parse_response(
        "**Purpose**: p\n**Reasoning**: r\n**Next Goal**: g\n**Code**:\n```\nx = 1\n```"
    )
    assert untagged.code == "x = 1" and any("language tag" in w for w in untagged.warnings)
    unclosed = parse_response(
        "**Purpose**: p\n**Reasoning**: r\n**Next Goal**: g\n**Code**:\n```python\nx = 1\n"
    )
    assert unclosed.code == "x = 1" and any("closing fence" in w for w in unclosed.warnings)
    missing = parse_response("```python\nx = 1\n```")
    assert (missing.purpose, missing.reasoning, missing.next_goal) == ("", "", "")
    assert len(missing.warnings) == 4


def test_headings_inside_code_are_not_sections():
    text = "**Purpose**: p\n**Code**:\n```python\n# Reasoning: not a heading\nx = 1\n```\n"
    parsed = parse_response(text)
    assert parsed.reasoning == "" and "# Reasoning" in parsed.code


def test_a_word_that_starts_like_a_heading_is_prose():
    parsed = parse_response(
        "**Reasoning**: r\nPurposeful text\n**Codebook** is not code\n```python\nx=1\n```"
    )
    assert parsed.reasoning == "r\nPurposeful text\n**Codebook** is not code"


def test_indented_code_is_dedented():
    assert (
        parse_response("**Code**:\n```python\n    a = 1\n    if a:\n        b = 2\n```").code
        == "a = 1\nif a:\n    b = 2"
    )


@pytest.mark.parametrize(
    ("purpose", "reasoning", "next_goal", "code"),
    [
        ("Segment.", "Because.", "A mask.", "x = 1"),
        ("Multi\nline purpose", "r1\n\nr2 with **bold**", "g", "def f(a):\n    return a\n\nprint(f(2))"),
        ("", "", "", "ReturnAnswer('B')"),
    ],
)
def test_format_parse_round_trip(purpose, reasoning, next_goal, code):
    text = format_response(purpose, reasoning, next_goal, code)
    assert parse_response(text) == ParsedResponse(purpose, reasoning, next_goal, code, ())


def test_format_response_rejects_what_would_not_round_trip():
    with pytest.raises(ValueError, match="code"):
        format_response("p", "r", "g", "x = '```'")
    with pytest.raises(ValueError, match="reasoning"):
        format_response("p", "**Code**: hidden", "g", "x = 1")
    with pytest.raises(TypeError, match="next_goal"):
        format_response("p", "r", None, "x = 1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="code"):
        format_response("p", "r", "g", "  \n")


def test_parse_response_bad_type():
    with pytest.raises(TypeError, match="text"):
        parse_response(None)  # type: ignore[arg-type]


PLAN = """## Task analysis
Frame of reference: world. A checklist follows.

### CHECKLIST
```json
[
  {"priority": "HIGH", "description": "Segment both objects"},
  {"priority": "medium", "description": "Cross-check on a second frame"},
  {"priority": "LOW", "description": "Show the BEV"}
]
```
"""


def test_checklist_in_json_fence():
    assert parse_checklist(PLAN) == [
        ChecklistItem("HIGH", "Segment both objects"),
        ChecklistItem("MEDIUM", "Cross-check on a second frame"),
        ChecklistItem("LOW", "Show the BEV"),
    ]


def test_checklist_without_fence_and_trailing_text():
    plan = '**CHECKLIST**\n[{"priority": "LOW", "description": "d"}]\nThat is all.'
    assert parse_checklist(plan) == [ChecklistItem("LOW", "d")]


def test_checklist_invalid_json_gives_empty_list_and_warning():
    with pytest.warns(ChecklistWarning, match="not valid JSON"):
        assert parse_checklist("### CHECKLIST\n[{priority: HIGH}]") == []
    with pytest.warns(ChecklistWarning, match="no ### CHECKLIST"):
        assert parse_checklist("just a plan") == []
    with pytest.warns(ChecklistWarning, match="no JSON list"):
        assert parse_checklist("### CHECKLIST\nnothing") == []


def test_checklist_bad_items_are_skipped_with_a_warning():
    items = '[{"priority": "URGENT", "description": "x"}, "text", {"priority": "HIGH", "description": "y"}]'
    plan = f"### CHECKLIST\n{items}"
    with pytest.warns(ChecklistWarning, match="item"):
        assert parse_checklist(plan) == [ChecklistItem("HIGH", "y")]


def test_checklist_item_validation():
    with pytest.raises(ValueError, match="priority"):
        ChecklistItem("high", "x")
    with pytest.raises(ValueError, match="description"):
        ChecklistItem("HIGH", " ")


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        (r"So the answer is \boxed{B}.", "B"),
        (r"\boxed{1} first, then \boxed{ 2.5 m }", "2.5 m"),
        (r"\boxed{\frac{1}{2}}", r"\frac{1}{2}"),
        (r"\boxed{A} and a broken \boxed{C", "A"),
        ("no box here", None),
        (r"\boxed {front-left}", "front-left"),
    ],
)
def test_parse_boxed(text, answer):
    assert parse_boxed(text) == answer
