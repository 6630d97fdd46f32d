"""Typed numbers in the prose of the chapters: what the repository test holds to a source.

A measured number that the prose quotes comes from the run through myst-nb's glue
(``{glue:text}`key:.2f``` or ``{glue:text}`03-claims.md::key:.2f``` from another page; the build fails
on a missing key); a number quoted from the paper is marked ``{paper}`+8–13 %``` and stays typed; a
constant we chose is written as math (``$\\varepsilon = 0.002$``). :func:`typed_numbers` lists every
decimal number and percentage left in the Markdown prose outside those, outside code, math, links and
other roles, so a test can fail on it.

    python tests/notebooks/prose_numbers.py chapters/10-specblock     # list them, file:line: number
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_MATH_BLOCK_OPEN = re.compile(
    r"^\s*(`{3,}|~{3,})\{(math|code-cell|code-block|code|literalinclude|glue:[a-z]+)\}"
)
_DIRECTIVE_OPEN = re.compile(r"^\s*(`{3,}|~{3,})\{[a-zA-Z][\w:-]*\}")
_DISPLAY_MATH_END = re.compile(r"\$\$\s*(\([^)]*\))?\s*$")
_ROLE = re.compile(r"\{[a-zA-Z:-]+\}`[^`]*`")
_INLINE_CODE = re.compile(r"`[^`]*`")
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]+\$")
_LINK_TARGET = re.compile(r"\]\([^)]*\)|<https?://[^>]*>|https?://\S+")
_HTML = re.compile(r"<!--.*?-->|<[^>]+>")
# a decimal number (not a version like 1.0.4, not a section number after §, Eq., Table, Python ...), or
# any number followed by a per cent sign
_NUMBER = re.compile(r"(?<![\w.§])(?<!§ )(\d+\.\d+)(?![\w.]*\d)|(?<![\w.])(\d+(?:\.\d+)?)\s?%")
_REFERENCE_WORDS = re.compile(
    r"(§|Eq\.|Eqs\.|equation|Table|Figure|Fig\.|Section|Sec\.|Algorithm|Appendix|Python|version|"
    r"v|arXiv:|Theorem|Lemma|Corollary|Proposition|Definition|Assumption|Remark|chapter)\s*\(?$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TypedNumber:
    """A number typed in the prose: the file, its line, the number and the text around it."""

    path: Path
    line: int
    number: str
    context: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.number!r} in “{self.context}”"


def prose_lines(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of the Markdown prose: no front matter, code or math blocks, headings,
    directive fences and options, or HTML comments. A directive's body (a note, an exercise) is prose."""
    out: list[tuple[int, str]] = []
    lines = text.splitlines()
    i = 0
    if lines and lines[0].strip() == "---":  # front matter
        i = 1
        while i < len(lines) and lines[i].strip() != "---":
            i += 1
        i += 1
    skip_until: str | None = None  # the fence that closes the code or math block we are in
    directives: list[str] = []  # fences of the prose directives we are in (innermost last)
    in_comment = False
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if in_comment:
            in_comment = "-->" not in line
        elif skip_until is not None:
            if skip_until == "$$" and _DISPLAY_MATH_END.match(stripped):
                skip_until = None  # $$, or $$ (label) for a labelled equation
            elif skip_until != "$$" and stripped.startswith(skip_until) and stripped.strip("`~") == "":
                skip_until = None
        elif _MATH_BLOCK_OPEN.match(line):
            skip_until = _MATH_BLOCK_OPEN.match(line).group(1)
        elif stripped.startswith("$$"):
            one_line = len(stripped) > 2 and _DISPLAY_MATH_END.search(stripped[2:])
            skip_until = None if one_line else "$$"
        elif _DIRECTIVE_OPEN.match(line):
            directives.append(_DIRECTIVE_OPEN.match(line).group(1))
        elif directives and stripped == directives[-1]:
            directives.pop()
        elif _FENCE.match(line):
            skip_until = _FENCE.match(line).group(1)  # a plain code fence
        elif stripped.startswith("<!--"):
            in_comment = "-->" not in stripped
        elif stripped.startswith("#") or stripped.startswith(":"):
            pass  # headings, directive options and colon fences (their body is prose)
        else:
            out.append((i + 1, line))
        i += 1
    return out


def _strip(line: str) -> str:
    for pattern in (_HTML, _ROLE, _INLINE_CODE, _MATH, _LINK_TARGET):
        line = pattern.sub(lambda m: " " * len(m.group(0)), line)
    return line


def typed_numbers(path: Path) -> list[TypedNumber]:
    """Every decimal number and percentage typed in the prose of ``path`` without a source."""
    found = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        text = _strip(line)
        for match in _NUMBER.finditer(text):
            if _REFERENCE_WORDS.search(text[: match.start()].rstrip()):
                continue
            value = match.group(1) or match.group(2) + " %"
            context = line[max(0, match.start() - 40) : match.end() + 30].strip()
            found.append(TypedNumber(path, number, value, context))
    return found


def chapter_prose(chapter: Path) -> list[Path]:
    """The Markdown files of one chapter folder whose prose a reader reads: index and notebooks."""
    return sorted(chapter.glob("*.md"))


if __name__ == "__main__":
    for folder in sys.argv[1:] or sorted(str(p) for p in Path("chapters").glob("*")):
        for md in chapter_prose(Path(folder)):
            for item in typed_numbers(md):
                print(item)
