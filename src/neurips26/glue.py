"""Numbers the prose quotes, handed from a notebook's run to its Markdown (myst-nb's glue).

``glue("d9-tau-tree", 5.88)`` records a value under a name without showing it; the page's Markdown pastes
it with ``{glue:text}`d9-tau-tree:.2f``` and another page (a chapter's ``index.md``) with
``{glue:text}`03-claims.md::d9-tau-tree:.2f```. The book is built with ``-W``, so a name that no run
recorded fails the build: a number in the prose cannot drift away from the run the page shows. The
record is myst-nb's own (a ``application/papermill.record/`` MIME bundle with ``scrapbook`` metadata),
written here so that a notebook needs no myst-nb to run (Colab, Binder).
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping
from typing import Any

GLUE_PREFIX = "application/papermill.record/"
"""MIME-type prefix of a glued value that is recorded but not shown (myst-nb's ``display=False``)."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def _plain(value: object) -> str:
    """The ``text/plain`` form myst-nb pastes (and formats with a spec such as ``.2f``)."""
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, numbers.Integral):
        return repr(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isinf(number):
            raise ValueError(f"value must be finite to be quoted in the prose; got {number}")
        return repr(number)  # NaN pastes as "nan" under any float format: a scale that does not measure it
    if isinstance(value, str):
        return repr(value)
    raise TypeError(f"value must be a number, bool or str; got {type(value).__name__}")


def glue(name: str, value: float | int | str | bool) -> None:
    """Record ``value`` under ``name`` for the prose (not shown in the notebook)."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"name must be letters, digits, '-', '_' or '.' (no spaces); got {name!r}")
    text = _plain(value)
    from IPython.display import display

    display(
        {GLUE_PREFIX + "text/plain": text},
        raw=True,
        metadata={"scrapbook": {"name": name, "mime_prefix": GLUE_PREFIX}},
    )


def glue_all(values: Mapping[str, Any], *, prefix: str = "") -> None:
    """:func:`glue` every ``prefix + name: value`` of ``values``."""
    if not isinstance(values, Mapping):
        raise TypeError(f"values must be a mapping of name -> value; got {type(values).__name__}")
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be a str; got {type(prefix).__name__}")
    for name, value in values.items():
        glue(prefix + name, value)
