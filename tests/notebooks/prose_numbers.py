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

_FENCE = re.compile(r"^\s*(`{3,}|~{3,}|\${2})")
_MATH_BLOCK_OPEN = re.compile(r"^\s*(`{3,})\{(math|code-cell|code|literalinclude|glue:[a-z]+)\}")
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
    """``(line number, line)`` of the Markdown prose: no front matter, fences, code or math blocks,
    headings, directive options or HTML comments."""
    out: list[tuple[int, str]] = []
    lines = text.splitlines()
    i = 0
    if lines and lines[0].strip() == "---":  # front matter
        i = 1
        while i < len(lines) and lines[i].strip() != "---":
            i += 1
        i += 1
    fence: str | None = None
    in_comment = False
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if in_comment:
            in_comment = "-->" not in line
        elif fence is not None:
            if stripped.startswith(fence) and stripped.strip("`~$") == "":
                fence = None
        elif _MATH_BLOCK_OPEN.match(line) or (_FENCE.match(line) and not line.strip().startswith("```{")):
            opener = _FENCE.match(line)
            fence = opener.group(1) if opener else "```"
            if stripped.startswith("$$") and stripped.endswith("$$") and len(stripped) > 2:
                fence = None  # one-line display math
        elif stripped.startswith("<!--"):
            in_comment = "-->" not in stripped
        elif stripped.startswith("#") or stripped.startswith(":") or stripped.startswith("```"):
            pass  # headings, directive options, directive fences (their body is prose)
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
