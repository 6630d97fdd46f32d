"""The six tasks by name, each a factory ``(size, seed, formulation) -> TaskInstance``.

The runners of the claims (:mod:`~neurips26.sparse_sos.speed`, :mod:`~neurips26.sparse_sos.exactness`,
:mod:`~neurips26.sparse_sos.bounds`) treat every task alike through this table.
"""

from __future__ import annotations

from collections.abc import Callable

from neurips26.sparse_sos.tasks.base import FORMULATIONS, TaskInstance
from neurips26.sparse_sos.tasks.chain_quartic import chain_quartic_instance
from neurips26.sparse_sos.tasks.maxcut import maxcut_instance
from neurips26.sparse_sos.tasks.oscillator import oscillator_instance
from neurips26.sparse_sos.tasks.pendulum import pendulum_instance
from neurips26.sparse_sos.tasks.pose_sync import pose_sync_instance
from neurips26.sparse_sos.tasks.projection import projection_instance
from neurips26.validation import check_choice

Factory = Callable[[int, int, str], TaskInstance]

#: Task name → factory, in the chapter's order (the paper's six: polynomial certification, combinatorial
#: relaxation, oscillator chains, pose-graph synchronisation, pendulum control, robotics projection).
TASKS: dict[str, Factory] = {
    "chain_quartic": chain_quartic_instance,
    "maxcut": lambda size, seed, formulation: maxcut_instance(size, seed, formulation, graph="grid"),
    "oscillator": oscillator_instance,
    "pose_sync": pose_sync_instance,
    "pendulum": pendulum_instance,
    "projection": projection_instance,
}

#: Display names for tables and figures.
LABELS: dict[str, str] = {
    "chain_quartic": "chain quartic",
    "maxcut": "MaxCut (grid)",
    "oscillator": "oscillator chain",
    "pose_sync": "SO(2) pose sync",
    "pendulum": "pendulum",
    "projection": "Putinar projection",
}


def task_instance(task: str, size: int, seed: int = 0, formulation: str = "sparse") -> TaskInstance:
    """The instance of ``task`` at ``size`` (``ValueError`` naming ``task`` or ``formulation``)."""
    check_choice("task", task, tuple(TASKS))
    check_choice("formulation", formulation, FORMULATIONS)
    return TASKS[task](size, seed, formulation)
