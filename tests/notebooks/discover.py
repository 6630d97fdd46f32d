"""Find the book's chapter notebooks (MyST Markdown files with a jupytext kernelspec)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def is_notebook(path: Path) -> bool:
    """A chapter ``.md`` is a notebook when its front matter declares a kernelspec."""
    head = path.read_text(encoding="utf-8")[:3000]
    return head.startswith("---") and "kernelspec:" in head.split("\n---", 1)[0]


def chapter_notebooks(root: Path = ROOT) -> list[Path]:
    """Every notebook under ``chapters/``, sorted (``index.md`` pages are plain pages)."""
    return sorted(p for p in (root / "chapters").glob("*/*.md") if p.name != "index.md" and is_notebook(p))
