"""Prepare every chapter notebook for the papermill route (``make nbval``).

Reads each ``chapters/**/*.md`` notebook with jupytext, lets papermill inject the
parameters (``scale="smoke"``) right after the cell tagged ``parameters``, and
writes the unexecuted ``.ipynb`` under ``--out`` with the same relative path.
nbval then executes the prepared notebooks cell by cell under pytest. The repository
tests check the injection itself on every notebook (:func:`parameterized`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jupytext
import papermill
from nbformat import NotebookNode

sys.path.insert(0, str(Path(__file__).parent))
from discover import ROOT, chapter_notebooks  # noqa: E402


def parameterized(src: Path, params: dict[str, object], target: Path | None = None) -> NotebookNode:
    """The notebook ``src`` with papermill's injected-parameters cell (``prepare_only``: nothing runs).

    Written to ``target`` when one is given.
    """
    nb = jupytext.read(src)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return papermill.execute_notebook(
        nb,
        None if target is None else str(target),
        parameters=params,
        prepare_only=True,
        kernel_name="python3",
        log_output=False,
    )


def prepare(out: Path, scale: str, seed: int | None) -> list[Path]:
    params: dict[str, object] = {"scale": scale}
    if seed is not None:
        params["seed"] = seed
    written = []
    for src in chapter_notebooks():
        target = out / src.relative_to(ROOT).with_suffix(".ipynb")
        target.parent.mkdir(parents=True, exist_ok=True)
        parameterized(src, params, target)
        written.append(target)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--scale", default="smoke")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    written = prepare(args.out, args.scale, args.seed)
    print(f"prepared {len(written)} notebooks at scale={args.scale!r} under {args.out}")


if __name__ == "__main__":
    main()
