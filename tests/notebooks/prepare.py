"""Prepare every chapter notebook for the smoke test run.

Reads each ``chapters/**/*.md`` notebook with jupytext, lets papermill inject the
parameters (``scale="smoke"``) right after the cell tagged ``parameters``, and
writes the unexecuted ``.ipynb`` under ``--out`` with the same relative path.
nbval then executes the prepared notebooks cell by cell under pytest.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jupytext
import papermill

sys.path.insert(0, str(Path(__file__).parent))
from discover import ROOT, chapter_notebooks  # noqa: E402


def prepare(out: Path, scale: str, seed: int | None) -> list[Path]:
    params: dict[str, object] = {"scale": scale}
    if seed is not None:
        params["seed"] = seed
    written = []
    for src in chapter_notebooks():
        nb = jupytext.read(src)
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        target = out / src.relative_to(ROOT).with_suffix(".ipynb")
        target.parent.mkdir(parents=True, exist_ok=True)
        papermill.execute_notebook(
            nb, str(target), parameters=params, prepare_only=True, kernel_name="python3", log_output=False
        )
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
