"""Format the code cells of the MyST notebooks with ruff, to the width of the book's text column.

    python tests/notebooks/format_code.py --write     # format every chapter and appendix notebook
    python tests/notebooks/format_code.py --check     # exit 1 and list the notebooks it would change

Each ``{code-cell}`` body is formatted by ``ruff format`` at :data:`WIDTH` characters; the rest of the
file (Markdown, the cell's options) is kept byte for byte. Before ruff runs, a trailing comment that makes
its line too long moves onto its own line above the code (so ruff does not split the code around it), and
comments are wrapped to the width. IPython magics (``%pip``, ``!ls``) are not Python: each magic line is
swapped for a ``pass`` statement carrying a placeholder comment while ruff runs, then put back.
:func:`long_code_lines` lists the lines left too long (long strings), which a person rewrites.
"""

from __future__ import annotations

import argparse
import io
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from discover import ROOT, chapter_notebooks  # noqa: E402

WIDTH = 88
"""Longest code line, in characters, that fits the rendered code cells without a scroll bar."""

_OPEN = re.compile(r"^(`{3,})\{code-cell\}.*$")
_MAGIC = re.compile(r"^(\s*)([%!].*)$")
_PLACEHOLDER = re.compile(r"^(\s*)pass  # neurips26-magic-(\d+)$")


@dataclass
class CodeCell:
    """One code cell of a notebook file: its body's line span ``[start, end)`` and its text."""

    start: int
    end: int
    body: str


def notebooks() -> list[Path]:
    """Every chapter notebook and every notebook of the appendix."""
    appendix = [p for p in sorted((ROOT / "appendix").glob("*.md")) if "{code-cell}" in p.read_text()]
    return [*chapter_notebooks(), *appendix]


def code_cells(lines: list[str]) -> list[CodeCell]:
    """The code cells of a MyST notebook's lines (options, YAML or ``:key:`` lines, are not code)."""
    cells, i = [], 0
    while i < len(lines):
        opened = _OPEN.match(lines[i])
        if not opened:
            i += 1
            continue
        fence, j = opened.group(1), i + 1
        if j < len(lines) and lines[j].strip() == "---":  # YAML options block
            j += 1
            while j < len(lines) and lines[j].strip() != "---":
                j += 1
            j += 1
        else:
            while j < len(lines) and lines[j].startswith(":"):
                j += 1
        if j < len(lines) and not lines[j].strip() and j > i + 1:
            j += 1  # the blank line after the options
        end = j
        while end < len(lines) and lines[end].rstrip() != fence:
            end += 1
        cells.append(CodeCell(j, end, "".join(lines[j:end])))
        i = end + 1
    return cells


def _mask(body: str) -> tuple[str, list[str]]:
    magics: list[str] = []
    out = []
    for line in body.splitlines(keepends=True):
        found = _MAGIC.match(line.rstrip("\n"))
        if found:
            out.append(f"{found.group(1)}pass  # neurips26-magic-{len(magics)}\n")
            magics.append(found.group(2))
        else:
            out.append(line)
    return "".join(out), magics


def _unmask(body: str, magics: list[str]) -> str:
    out = []
    for line in body.splitlines(keepends=True):
        found = _PLACEHOLDER.match(line.rstrip("\n"))
        out.append(f"{found.group(1)}{magics[int(found.group(2))]}\n" if found else line)
    return "".join(out)


def lift_long_comments(body: str, width: int = WIDTH) -> str:
    """Move each trailing comment of a line longer than ``width`` onto its own line(s) above it, and wrap
    every comment line longer than ``width``."""
    lines = body.splitlines(keepends=True)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(body).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return body  # not plain Python (magics, unfinished code): leave it to ruff and to a person
    comments = {t.start[0] - 1: t.start[1] for t in tokens if t.type == tokenize.COMMENT}
    out = []
    for k, line in enumerate(lines):
        text = line.rstrip("\n")
        if k in comments and len(text) > width:
            col = comments[k]
            indent = text[: len(text) - len(text.lstrip())]
            comment = text[col:].lstrip("#").strip()
            wrapped = textwrap.wrap(comment, width - len(indent) - 2) or [""]
            out += [f"{indent}# {part}\n" for part in wrapped]
            if text[:col].strip():
                out.append(text[:col].rstrip() + "\n")
        else:
            out.append(line)
    return "".join(out)


def _ruff() -> str:
    here = Path(sys.executable).parent / "ruff"
    found = str(here) if here.exists() else shutil.which("ruff")
    if found is None:
        raise SystemExit("format_code: ruff is not installed (make setup installs it)")
    return found


def format_bodies(bodies: list[str]) -> list[str]:
    """``bodies`` formatted by one ``ruff format`` run (isolated from the project's 110-wide config)."""
    with tempfile.TemporaryDirectory(prefix="format_code_") as tmp:
        masked = []
        for k, body in enumerate(bodies):
            text, magics = _mask(body)
            text = lift_long_comments(text)
            (Path(tmp) / f"cell{k}.py").write_text(text, encoding="utf-8")
            masked.append(magics)
        done = subprocess.run(
            [_ruff(), "format", "--isolated", "--no-cache", f"--line-length={WIDTH}"]
            + ["--target-version=py311", tmp],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(f"format_code: ruff format failed:\n{done.stderr}")
        return [
            _unmask((Path(tmp) / f"cell{k}.py").read_text(encoding="utf-8"), magics)
            for k, magics in enumerate(masked)
        ]


def formatted(path: Path) -> str:
    """The notebook's text with every code cell formatted (the rest unchanged)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    cells = code_cells(lines)
    bodies = format_bodies([c.body for c in cells])
    for cell, body in sorted(zip(cells, bodies, strict=True), key=lambda cb: -cb[0].start):
        if body.strip() or cell.body.strip():
            lines[cell.start : cell.end] = [body] if body.endswith("\n") or not body else [body + "\n"]
    return "".join(lines)


def long_code_lines(path: Path, width: int = WIDTH) -> list[tuple[int, str]]:
    """``(line number, line)`` of every code-cell line longer than ``width`` characters."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return [
        (k + 1, lines[k].rstrip("\n"))
        for cell in code_cells(lines)
        for k in range(cell.start, cell.end)
        if len(lines[k].rstrip("\n")) > width
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: all of them)")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true")
    group.add_argument("--check", action="store_true")
    args = parser.parse_args()
    paths = [p.resolve() for p in args.paths] or notebooks()
    changed, too_long = [], []
    for path in paths:
        new = formatted(path)
        if new != path.read_text(encoding="utf-8"):
            changed.append(path)
            if args.write:
                path.write_text(new, encoding="utf-8")
        too_long += [(path, n, line) for n, line in long_code_lines(path)]
    for path in changed:
        print(f"{'formatted' if args.write else 'would format'} {path.relative_to(ROOT)}")
    for path, n, line in too_long:
        print(f"{path.relative_to(ROOT)}:{n}: {len(line)} > {WIDTH} characters: {line.strip()[:60]}")
    if args.check and (changed or too_long):
        sys.exit(1)


if __name__ == "__main__":
    main()
