"""The checks of committed (default-scale) checkpoints shared by the chapters that keep their models in a
:class:`~neurips26.checkpoint_files.Registry` and ship them as package data."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from neurips26.checkpoint_files import check_budget, checkpoint_sizes


def committed(package_dir: Path) -> list[str]:
    """The names of the checkpoints committed in ``package_dir`` (its sidecars), sorted; [] without one."""
    return sorted(p.stem for p in package_dir.glob("*.json")) if package_dir.is_dir() else []


def none_committed(package: str) -> str:
    """The skip message of a chapter whose checkpoints are not committed yet."""
    return f"no checkpoint is committed yet (run python -m neurips26.{package}.prepare --scale default)"


def assert_complete_and_within_budget(package_dir: Path, names: Sequence[str], max_total: int) -> None:
    """Every checkpoint of the table is committed and nothing else; each file and the total within budget."""
    assert committed(package_dir) == sorted(names), "commit every checkpoint of the table, and only those"
    sizes = checkpoint_sizes(package_dir)
    check_budget(sizes)
    assert sum(sizes.values()) <= max_total
