"""Reading what the models write: the agent's four-heading step, the planner's checklist, a boxed answer.

The main agent answers every step in a fixed markdown format (paper §3.2, step 2)::

    **Purpose**: ...
    **Reasoning**: ...
    **Next Goal**: ...
    **Code**:
    ```python
    ...
    ```

:func:`parse_response` is lenient where models vary harmlessly (heading case, ``#`` or ``**`` markup, a
colon inside or outside the bold, surrounding blank lines; a missing prose heading only adds a warning) and
strict where the loop depends on it: exactly one python block (tagged ``python``, ``py``, any case). Blocks
in other languages (``json``, ``text``) are ignored; a single *untagged* block is accepted with a warning
when there is no tagged one; a final block missing its closing fence (a reply cut at the token limit) is
accepted with a warning. A response without a python block, or with several, raises
:class:`ResponseFormatError`; the loop counts that step as failed and sends the message back to the agent.

:func:`parse_checklist` reads the planner's ``### CHECKLIST`` JSON list (paper §3.2, step 1). A plan is
advice, not a contract, so a missing heading or invalid JSON gives an empty list and a
:class:`ChecklistWarning` rather than an exception; malformed items are skipped with a warning.

:func:`parse_boxed` extracts the no-tool answer, the content of the last complete ``\\boxed{...}``.
"""

from __future__ import annotations

import json
import re
import textwrap
import warnings
from dataclasses import dataclass

#: The agent's headings, in the order :func:`format_response` writes them.
HEADINGS: tuple[str, ...] = ("Purpose", "Reasoning", "Next Goal", "Code")
#: Fence tags read as python.
PYTHON_TAGS: frozenset[str] = frozenset({"python", "py", "python3"})
#: Checklist priorities.
PRIORITIES: tuple[str, ...] = ("HIGH", "MEDIUM", "LOW")

_FENCE_OPEN = re.compile(r"^[ \t]*```[ \t]*([^\s`]*)[^\n]*$", re.MULTILINE)
_FENCE_CLOSE = re.compile(r"^[ \t]*```[ \t]*$", re.MULTILINE)
# A heading line: optional '#'s, optional bold/underline markup, the name, a colon inside or outside the
# markup; the rest of the line starts the section's text. Markup or a colon is required, so a sentence that
# merely begins with "Purpose" is not a heading.
_HEADING = re.compile(
    r"^[ \t]*(?P<hash>\#{1,6}[ \t]*)?(?P<open>\*\*|__)?[ \t]*"
    r"(?P<name>purpose|reasoning|next[ \t_-]*goal|code)(?![A-Za-z0-9])"
    r"[ \t]*(?P<c1>:)?[ \t]*(?P<close>\*\*|__)?[ \t]*(?P<c2>:)?"
    r"[ \t]*(?P<rest>.*)$",
    re.MULTILINE | re.IGNORECASE,
)
_CHECKLIST = re.compile(
    r"^[ \t]*(?:(?:\#{1,6}|\*\*)[ \t]*checklist\b|checklist[ \t]*:)[^\n]*$", re.MULTILINE | re.IGNORECASE
)
_BOXED = re.compile(r"\\boxed[ \t]*\{")


class ResponseFormatError(ValueError):
    """The agent's response has no python block, or more than one."""


class ChecklistWarning(UserWarning):
    """The planner's checklist was missing or malformed; the plan is used without it."""


@dataclass(frozen=True)
class ParsedResponse:
    """One agent step: the three prose sections (``""`` when missing), the ``code`` of the python block, and
    ``warnings`` about whatever was tolerated."""

    purpose: str
    reasoning: str
    next_goal: str
    code: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChecklistItem:
    """One planner checklist entry: ``priority`` in :data:`PRIORITIES` and a ``description``."""

    priority: str
    description: str

    def __post_init__(self) -> None:
        if self.priority not in PRIORITIES:
            raise ValueError(f"priority must be one of {PRIORITIES}; got {self.priority!r}")
        if not isinstance(self.description, str) or not self.description.strip():
            raise ValueError(f"description must be a non-empty str; got {self.description!r}")


@dataclass(frozen=True)
class _Fence:
    tag: str
    body: str
    start: int  # offset of the opening fence line
    end: int  # offset just past the closing fence (or the end of the text)
    closed: bool


def _fences(text: str) -> list[_Fence]:
    """Every fenced block in order; an opening fence without a closing one runs to the end."""
    found, pos = [], 0
    while (opening := _FENCE_OPEN.search(text, pos)) is not None:
        body_start = min(opening.end() + 1, len(text))
        closing = _FENCE_CLOSE.search(text, body_start)
        if closing is None:
            found.append(
                _Fence(opening.group(1).lower(), text[body_start:], opening.start(), len(text), False)
            )
            break
        body = text[body_start : closing.start()]
        found.append(_Fence(opening.group(1).lower(), body, opening.start(), closing.end(), True))
        pos = closing.end()
    return found


def _canonical(name: str) -> str:
    return "Next Goal" if name.lower().startswith("next") else name.capitalize()


def _sections(prose: str) -> dict[str, str]:
    """Heading name → the text up to the next heading (code blocks already removed from ``prose``)."""
    marks = [
        m
        for m in _HEADING.finditer(prose)
        if m.group("hash") or m.group("open") or m.group("c1") or m.group("c2")
    ]
    out: dict[str, str] = {}
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(prose)
        body = (m.group("rest") + prose[m.end() : end]).strip()
        out.setdefault(_canonical(m.group("name")), body)
    return out


def parse_response(text: str) -> ParsedResponse:
    """Split an agent response into its sections and its one python block (module docstring).

    Raises :class:`ResponseFormatError` when there is no python block or more than one.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    notes: list[str] = []
    fences = _fences(text)
    python = [f for f in fences if f.tag in PYTHON_TAGS]
    if not python:
        untagged = [f for f in fences if f.tag == ""]
        if len(untagged) == 1:
            python = untagged
            notes.append("the code block has no language tag; read as python")
    if not python:
        raise ResponseFormatError("the response has no ```python code block; write exactly one")
    if len(python) > 1:
        raise ResponseFormatError(
            f"the response has {len(python)} python code blocks; write exactly one (one logical step)"
        )
    block = python[0]
    if not block.closed:
        notes.append("the code block has no closing fence; read to the end of the response")
    code = textwrap.dedent(block.body).strip("\n").rstrip()
    if not code.strip():
        raise ResponseFormatError("the ```python code block is empty")

    prose, pos = [], 0
    for fence in fences:
        prose.append(text[pos : fence.start])
        pos = fence.end
    prose.append(text[pos:])
    sections = _sections("\n".join(prose))
    for heading in HEADINGS:
        if heading not in sections:
            notes.append(f"the **{heading}** heading is missing")
    return ParsedResponse(
        purpose=sections.get("Purpose", ""),
        reasoning=sections.get("Reasoning", ""),
        next_goal=sections.get("Next Goal", ""),
        code=code,
        warnings=tuple(notes),
    )


def format_response(purpose: str, reasoning: str, next_goal: str, code: str) -> str:
    """Write a step in the canonical four-heading format (what :func:`parse_response` reads back)."""
    for name, value in (
        ("purpose", purpose),
        ("reasoning", reasoning),
        ("next_goal", next_goal),
        ("code", code),
    ):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str; got {type(value).__name__}")
    if "```" in code:
        raise ValueError("code must not contain a ``` fence")
    if not code.strip():
        raise ValueError("code must not be empty")
    for name, value in (("purpose", purpose), ("reasoning", reasoning), ("next_goal", next_goal)):
        if "```" in value or _looks_like_heading(value):
            raise ValueError(f"{name} must not contain a code fence or one of the headings {HEADINGS}")
    return (
        f"**Purpose**: {purpose.strip()}\n\n"
        f"**Reasoning**: {reasoning.strip()}\n\n"
        f"**Next Goal**: {next_goal.strip()}\n\n"
        f"**Code**:\n```python\n{textwrap.dedent(code).strip(chr(10)).rstrip()}\n```\n"
    )


def _looks_like_heading(value: str) -> bool:
    return any(
        m.group("hash") or m.group("open") or m.group("c1") or m.group("c2") for m in _HEADING.finditer(value)
    )


def parse_checklist(plan_text: str) -> list[ChecklistItem]:
    """The planner's ``### CHECKLIST`` items (module docstring). Priorities are upper-cased; an item that is
    not ``{"priority": HIGH|MEDIUM|LOW, "description": non-empty str}`` is skipped with a warning."""
    if not isinstance(plan_text, str):
        raise TypeError(f"plan_text must be a str; got {type(plan_text).__name__}")
    headings = list(_CHECKLIST.finditer(plan_text))
    if not headings:
        warnings.warn("the plan has no ### CHECKLIST heading", ChecklistWarning, stacklevel=2)
        return []
    after = plan_text[headings[-1].end() :]  # the last heading wins (the plan may mention it earlier)
    start = after.find("[")
    if start < 0:
        warnings.warn("no JSON list follows ### CHECKLIST", ChecklistWarning, stacklevel=2)
        return []
    try:
        data, _ = json.JSONDecoder().raw_decode(after[start:])
    except json.JSONDecodeError as err:
        warnings.warn(f"the checklist is not valid JSON ({err})", ChecklistWarning, stacklevel=2)
        return []
    if not isinstance(data, list):
        warnings.warn("the checklist is not a JSON list", ChecklistWarning, stacklevel=2)
        return []
    items = []
    for k, raw in enumerate(data):
        try:
            if not isinstance(raw, dict):
                raise ValueError("not an object")
            priority = raw.get("priority")
            items.append(
                ChecklistItem(
                    priority.strip().upper() if isinstance(priority, str) else priority,
                    raw.get("description"),
                )
            )
        except ValueError as err:
            warnings.warn(f"checklist item {k} skipped: {err}", ChecklistWarning, stacklevel=2)
    return items


def parse_boxed(text: str) -> str | None:
    """The content of the last complete ``\\boxed{...}`` in ``text`` (nested braces allowed), stripped;
    ``None`` if there is none."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    answer = None
    for m in _BOXED.finditer(text):
        depth = 1
        for i in range(m.end(), len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                answer = text[m.end() : i].strip()
                break
    return answer
