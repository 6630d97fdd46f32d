"""Keep the ``.ipynb`` twin of every chapter notebook in sync with its ``.md`` source.

The ``.md`` (MyST, jupytext) is the source of truth. The twin, without outputs,
exists so that Colab's launch button opens a real notebook. ``--write``
regenerates the twins; ``--check`` lists twins that are missing or stale.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jupytext
import nbformat

sys.path.insert(0, str(Path(__file__).parent))
from discover import ROOT, chapter_notebooks  # noqa: E402


def twin_text(src: Path) -> str:
    """The ``.ipynb`` text generated from ``src`` (outputs empty, metadata stable)."""
    nb = jupytext.read(src)
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nbformat.writes(nb) + "\n"


def stale_twins() -> list[Path]:
    out = []
    for src in chapter_notebooks():
        twin = src.with_suffix(".ipynb")
        if not twin.is_file() or twin.read_text(encoding="utf-8") != twin_text(src):
            out.append(twin)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if args.write:
        for src in chapter_notebooks():
            src.with_suffix(".ipynb").write_text(twin_text(src), encoding="utf-8")
        print(f"wrote {len(chapter_notebooks())} twins")
        return
    stale = stale_twins()
    for twin in stale:
        print(f"stale or missing: {twin.relative_to(ROOT)}")
    sys.exit(1 if stale else 0)


if __name__ == "__main__":
    main()
