"""Result tables in notebooks: a header and rows shown as a Markdown table.

The book renders Markdown outputs as GitHub-flavoured Markdown (``nb_render_markdown_format: gfm``), so the
table is a real table in the page and stays readable as text in a terminal. Cell text is escaped where it
would break the table: a ``|`` becomes ``\\|`` and a line break ``⏎``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ⏎ ")


def markdown_table_text(header: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    """The Markdown source of a table with ``header`` and ``rows`` (each row as long as the header)."""
    if isinstance(header, str) or not isinstance(header, Sequence) or not header:
        raise TypeError(f"header must be a non-empty sequence of column names; got {header!r}")
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + " --- |" * len(header)]
    for k, row in enumerate(rows):
        if isinstance(row, str) or not isinstance(row, Sequence) or len(row) != len(header):
            raise ValueError(f"rows[{k}] must have {len(header)} cells, like the header; got {row!r}")
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return "\n".join(lines)


def markdown_table(header: Sequence[object], rows: Iterable[Sequence[object]]) -> None:
    """Display the table in the notebook (:func:`markdown_table_text`)."""
    from IPython.display import Markdown, display

    display(Markdown(markdown_table_text(header, rows)))


__all__ = ["markdown_table", "markdown_table_text"]
