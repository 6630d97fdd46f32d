"""What a notebook prints under its setup cell: the library and the versions that shape its numbers."""

from __future__ import annotations

import platform
from importlib import metadata

_PACKAGES = ("neurips26", "numpy", "scipy", "torch", "matplotlib", "plotly")


def versions(extra: tuple[str, ...] = ()) -> dict[str, str]:
    """Python and package versions (``"not installed"`` for a missing one)."""
    out = {"python": platform.python_version()}
    for name in (*_PACKAGES, *extra):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def report(extra: tuple[str, ...] = ()) -> str:
    """One line: ``python 3.11.7 | neurips26 0.1.0 | numpy 2.4.6 | ...``."""
    return " | ".join(f"{k} {v}" for k, v in versions(extra).items())
