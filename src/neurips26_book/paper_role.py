"""The ``{paper}`` role: a number quoted from the paper, typed in the prose and marked as the paper's.

Measured numbers reach the prose through glue (:mod:`neurips26.glue`); the paper's own numbers are typed,
and ``{paper}`+8–13 %``` marks them, so that a reader tells the two apart (a dotted underline and a
tooltip) and the repository test of typed numbers (``tests/notebooks/prose_numbers.py``) lets them pass.
"""

from __future__ import annotations

import html
from typing import Any

from docutils import nodes

PAPER_CLASS = "neurips26-paper-number"
TOOLTIP = "the paper's number (typed from the paper, not measured here)"


def paper_role(
    name: str, rawtext: str, text: str, lineno: int, inliner: Any, options: Any = None, content: Any = ()
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """Render ``text`` as the paper's number: dotted underline, tooltip, screen-reader label."""
    markup = (
        f'<span class="{PAPER_CLASS}" title="{TOOLTIP}" style="border-bottom:1px dotted currentColor">'
        f"{html.escape(text)}</span>"
    )
    return [nodes.raw(rawtext, markup, format="html")], []


def setup(app: Any) -> dict[str, Any]:
    app.add_role("paper", paper_role)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
