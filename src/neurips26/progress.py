"""Progress bars for long loops (training, experiment grids), quiet in CI and in batch runs.

:func:`progress_enabled` is the one rule every loop follows; :func:`progress` wraps an iterable in a
``tqdm.auto`` bar under that rule. It lives outside :mod:`neurips26.train` so that chapters without
torch can use it without importing torch.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import TypeVar

T = TypeVar("T")

PROGRESS_ENV = "NEURIPS26_PROGRESS"
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off", ""}


def progress_enabled(requested: bool = True, environ: Mapping[str, str] | None = None) -> bool:
    """Whether a long loop (training, an experiment grid) shows a progress bar. The rule, first match wins:

    1. ``requested`` is False → no bar (the caller decided);
    2. ``NEURIPS26_PROGRESS`` is set: ``1``/``true``/``yes``/``on`` → bar, ``0``/``false``/``no``/``off``
       → no bar (anything else is a ``ValueError``);
    3. ``CI`` is set to a true value (as on GitHub Actions) → no bar;
    4. otherwise a bar when running in a Jupyter kernel (``ipykernel`` is imported) or when standard
       error is a terminal; none when output goes to a file or pipe.
    """
    if not isinstance(requested, bool):
        raise TypeError(f"progress must be a bool; got {type(requested).__name__}")
    if not requested:
        return False
    env = os.environ if environ is None else environ
    override = env.get(PROGRESS_ENV)
    if override is not None:
        value = override.strip().lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        raise ValueError(f"environment variable {PROGRESS_ENV} must be 0 or 1; got {override!r}")
    if env.get("CI", "").strip().lower() not in _FALSE:
        return False
    return "ipykernel" in sys.modules or bool(getattr(sys.stderr, "isatty", lambda: False)())


def progress(
    iterable: Iterable[T], *, total: int | None = None, desc: str = "", show: bool = True
) -> Iterator[T]:
    """``iterable`` with a progress bar when :func:`progress_enabled` allows it (``show=False`` never)."""
    from tqdm.auto import tqdm

    yield from tqdm(iterable, total=total, desc=desc, disable=not progress_enabled(show))
