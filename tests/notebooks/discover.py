"""Find the book's chapter notebooks (MyST Markdown files with a jupytext kernelspec)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def is_notebook(path: Path) -> bool:
    """A chapter ``.md`` is a notebook when its front matter declares a kernelspec."""
    head = path.read_text(encoding="utf-8")[:3000]
    return head.startswith("---") and "kernelspec:" in head.split("\n---", 1)[0]


def chapter_notebooks(root: Path = ROOT) -> list[Path]:
    """Every notebook: under ``chapters/*/`` and ``appendix/`` (``index.md`` pages are plain pages)."""
    candidates = [*(root / "chapters").glob("*/*.md"), *(root / "appendix").glob("*.md")]
    return sorted(p for p in candidates if p.name != "index.md" and is_notebook(p))
