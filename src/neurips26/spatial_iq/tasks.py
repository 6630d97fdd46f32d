"""The 9 sub-tasks and 2 target tasks of one view, with the block sets behind each answer.

Per view, as the released generator writes them (paper IDs, released field in brackets). ``H`` is the
height map, ``L = max H`` the number of layers, ``V`` the view's visible blocks and
``N(V)`` the needed set (:func:`~neurips26.spatial_iq.visibility.needed`):

========  =============================  ===========================================================
S1        object category [task1]         the scene's category
S2        clusters [task9]                6-connected components of ``N(V)``
S3        columns [task3]                 ``#{(i, j): H_ij > 0}`` (full height map)
S4        layers [task4]                  ``L`` (full height map)
S5        visible objects [task5]         ``|V|``
S6        top layer [task2]               visible blocks in layer ``L - 1``
S7        direct support [task6]          visible blocks at ``(i, j, L - 2)`` with ``H_ij = L``
S8        support column [task7]          visible blocks at ``(i, j, k <= L - 2)`` with ``H_ij = L``
S9        hidden objects [task8]          visible blocks resting directly on a non-visible block
T1        total [task_main]               ``|N(V)|`` (= ``sum H`` in the reference view only)
hidden    ``num_hidden_blocks``           ``|N(V)| - |V|``
T2a/T2b   rotation [task10/11]            ``|V \\ V'|`` for the view 90° / 180° further round
========  =============================  ===========================================================

Note that S9 counts *visible blocks over a hidden one*, which is fewer than ``hidden`` when hidden blocks
stack on one another; so ``T1 = S5 + S9`` need not hold, and the summation mechanism is scored on errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import ndimage

from neurips26.spatial_iq.cameras import GRID, MAX_HEIGHT, View
from neurips26.spatial_iq.scenes import StackScene
from neurips26.spatial_iq.visibility import check_heights, needed, occupancy, slot_table

#: Every question, in the paper's order (S1..S9, T1, T2a, T2b).
TASKS: tuple[str, ...] = ("S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "T1", "T2a", "T2b")
#: The integer-valued questions.
NUMERIC: tuple[str, ...] = tuple(t for t in TASKS if t != "S1")
#: The released field of each task.
RELEASED_FIELD: dict[str, str] = {
    "S1": "task1",
    "S2": "task9",
    "S3": "task3",
    "S4": "task4",
    "S5": "task5",
    "S6": "task2",
    "S7": "task6",
    "S8": "task7",
    "S9": "task8",
    "T1": "task_main",
    "T2a": "task10",
    "T2b": "task11",
}
#: The six-connected (face-sharing) structuring element.
_FACES = ndimage.generate_binary_structure(3, 1)


def check_task(task: object) -> str:
    """``task`` if it names a question; ``ValueError`` naming ``task`` otherwise."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)}; got {task!r}")
    return str(task)


def clusters(blocks: np.ndarray) -> np.ndarray:
    """(4, 4, 4) cluster label of each block (1..c, 0 where empty): 6-connected components."""
    labels, _ = ndimage.label(np.asarray(blocks, dtype=bool), structure=_FACES)
    return labels


@dataclass(frozen=True, eq=False)
class ViewLabels:
    """Ground truth of one view: ``answers`` (task → value, plus ``"hidden"``) and the block sets
    (``(4, 4, 4)`` bool arrays) the answers count, for the image formats."""

    scene: StackScene
    view: View
    visible: np.ndarray
    needed: np.ndarray
    answers: dict[str, int | str]
    sets: dict[str, np.ndarray] = field(repr=False)

    def __getitem__(self, task: str) -> int | str:
        return self.answers[task]


def top_support_sets(height_map: object, visible: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The visible top-layer blocks (S6), their visible direct supporters (S7) and the visible blocks of
    the top columns below the top (S8), as (4, 4, 4) bool arrays."""
    h = check_heights(height_map)
    v = np.asarray(visible, dtype=bool)
    layers = int(h.max(initial=0))
    empty = np.zeros((GRID, GRID, MAX_HEIGHT), dtype=bool)
    if layers == 0:
        return empty, empty.copy(), empty.copy()
    k = np.arange(MAX_HEIGHT)[None, None, :]
    top_cols = (h == layers)[:, :, None]
    top = v & top_cols & (k == layers - 1)
    direct = v & top_cols & (k == layers - 2)
    below = v & top_cols & (k <= layers - 2)
    return top, direct, below


def over_hidden(visible: np.ndarray) -> np.ndarray:
    """S9's set: visible blocks ``(i, j, k >= 1)`` whose block below is not visible."""
    v = np.asarray(visible, dtype=bool)
    out = np.zeros_like(v)
    out[:, :, 1:] = v[:, :, 1:] & ~v[:, :, :-1]
    return out


def view_labels(scene: StackScene, view: View | None = None, *, size: int | None = None) -> ViewLabels:
    """Every answer of ``scene`` seen from ``view`` (default: its view 0), from slot tables at ``size``."""
    if not isinstance(scene, StackScene):
        raise TypeError(f"scene must be a StackScene; got {type(scene).__name__}")
    view = scene.view(0) if view is None else view
    kw = {} if size is None else {"size": size}
    h = scene.heights
    vis = slot_table(view, **kw).visible(h)
    need = needed(h, vis)
    top, direct, below = top_support_sets(h, vis)
    s9 = over_hidden(vis)
    rot90 = vis & ~slot_table(view.turned(1), **kw).visible(h)
    rot180 = vis & ~slot_table(view.turned(2), **kw).visible(h)
    labels = clusters(need)
    occ = occupancy(h)
    answers: dict[str, int | str] = {
        "S1": scene.category,
        "S2": int(labels.max()),
        "S3": int((h > 0).sum()),
        "S4": int(h.max(initial=0)),
        "S5": int(vis.sum()),
        "S6": int(top.sum()),
        "S7": int(direct.sum()),
        "S8": int(below.sum()),
        "S9": int(s9.sum()),
        "T1": int(need.sum()),
        "T2a": int(rot90.sum()),
        "T2b": int(rot180.sum()),
        "hidden": int(need.sum() - vis.sum()),
    }
    sets = {
        "S1": occ & vis,
        "S5": vis,
        "S6": top,
        "S7": direct,
        "S8": below,
        "S9": s9,
        "T1": need,
        "T2a": rot90,
        "T2b": rot180,
    }
    return ViewLabels(scene, view, vis, need, answers, sets)


__all__ = [
    "NUMERIC",
    "RELEASED_FIELD",
    "TASKS",
    "ViewLabels",
    "check_task",
    "clusters",
    "over_hidden",
    "top_support_sets",
    "view_labels",
]
