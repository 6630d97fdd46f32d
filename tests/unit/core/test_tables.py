"""Markdown result tables: the source text, escaping, and bad shapes named."""

from __future__ import annotations

import pytest

from neurips26.tables import markdown_table_text


def test_table_text():
    text = markdown_table_text(["a", "b"], [[1, 2.5], ("x", None)])
    assert text.splitlines() == ["| a | b |", "| --- | --- |", "| 1 | 2.5 |", "| x | None |"]


def test_pipes_and_line_breaks_are_escaped():
    text = markdown_table_text(["expr"], [["$|x|$\nnext"]])
    assert text.splitlines()[-1] == "| $\\|x\\|$ ⏎ next |"


def test_bad_shapes_are_named():
    with pytest.raises(TypeError, match="header"):
        markdown_table_text("ab", [])
    with pytest.raises(ValueError, match=r"rows\[1\]"):
        markdown_table_text(["a", "b"], [[1, 2], [3]])
