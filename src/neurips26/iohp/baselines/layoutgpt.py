"""The LayoutGPT-style baseline of chapter 18 (IOHP): copy the nearest corpus exemplar, rescaled (§4).

LayoutGPT (Feng et al., 2023) prompts a language model with in-context exemplars retrieved from a layout
dataset by room size and lets it write numeric boxes, with no optimisation afterwards. Without a model the
chapter keeps the two parts that decide where things go: the retrieval and the copying of the exemplar's
poses. The exemplars are :mod:`neurips26.iohp.corpus` layouts (their usability flaws included).

**Retrieval** ([our choice]). Among the corpus layouts of the same room type (all of them when none has it),
the exemplar minimises

    dist = |W_e - W| + |D_e - D| + SHAPE_WEIGHT [shape_e != shape] + OBJECT_WEIGHT sum_c |n_e(c) - n(c)|,

with ``W x D`` the bounding box (m), ``shape`` the rectangle or the L-shape's notch corner (the corner of the
bounding box it cuts), ``n(c)`` the number of pieces of category ``c`` (:data:`SHAPE_WEIGHT` = 1 m,
:data:`OBJECT_WEIGHT` = 0.5 m per missing or extra piece). Ties go to the lowest corpus index, so retrieval
is deterministic.

**Copy.** Our pieces are matched to the exemplar's category by category, by size: within a category the
pairing minimises the total ``|w - w_e| + |d - d_e|`` (an optimal assignment, ties by list order). A matched
piece takes its exemplar's heading as-is and its position rescaled from the exemplar's bounding box to ours,

    x = x_0 + (x_e - x_{0,e}) W / W_e,      y = y_0 + (y_e - y_{0,e}) D / D_e,

and keeps its own size. Pieces without a partner (a category the exemplar lacks, or more pieces than it
has) keep their pose in the given layout (the chapter passes the shared initial layout). Nothing is
optimised or repaired: overlaps, pieces in an L-shape's notch and blocked zones stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from neurips26.iohp.corpus import CorpusLayout
from neurips26.iohp.layout import ROOM_TYPES, Layout, Room
from neurips26.iohp.rooms import CATEGORIES
from neurips26.validation import check_float

#: Distance weight (m) of a shape mismatch (rectangle vs L-shape, or another notch corner).
SHAPE_WEIGHT = 1.0
#: Distance weight (m) of one missing or extra piece of a category.
OBJECT_WEIGHT = 0.5

_CATEGORY_NAMES: tuple[str, ...] = tuple(CATEGORIES)


def room_shape(room: Room) -> int:
    """``-1`` for a rectangle, else the bounding-box corner the notch cuts (0..3 counter-clockwise from
    ``(x_min, y_min)``)."""
    if not isinstance(room, Room):
        raise TypeError(f"room must be a Room; got {type(room).__name__}")
    return -1 if room.notch is None else room.notch_corner


def category_counts(categories: Sequence[str]) -> np.ndarray:
    """Counts per category of :data:`neurips26.iohp.rooms.CATEGORIES` (others ignored): (C,) float."""
    out = np.zeros(len(_CATEGORY_NAMES))
    for c in categories:
        if c in _CATEGORY_NAMES:
            out[_CATEGORY_NAMES.index(c)] += 1
    return out


@dataclass(frozen=True, eq=False)
class ExemplarIndex:
    """The corpus as arrays for retrieval: ``layouts``, room ``types`` (N,) int, bounding-box ``sizes``
    (N, 2), ``shapes`` (N,) int (:func:`room_shape`) and category ``counts`` (N, C)."""

    layouts: tuple[Layout, ...]
    types: np.ndarray
    sizes: np.ndarray
    shapes: np.ndarray
    counts: np.ndarray

    def __len__(self) -> int:
        return len(self.layouts)


def exemplar_index(corpus: Sequence[CorpusLayout | Layout]) -> ExemplarIndex:
    """An :class:`ExemplarIndex` of ``corpus`` (:class:`~neurips26.iohp.corpus.CorpusLayout` or layouts)."""
    if isinstance(corpus, ExemplarIndex):
        return corpus
    if isinstance(corpus, str) or not isinstance(corpus, Sequence):
        raise TypeError(f"corpus must be a sequence of CorpusLayout or Layout; got {type(corpus).__name__}")
    layouts = []
    for i, item in enumerate(corpus):
        item = item.layout if isinstance(item, CorpusLayout) else item
        if not isinstance(item, Layout):
            raise TypeError(f"corpus[{i}] must be a CorpusLayout or a Layout; got {type(item).__name__}")
        layouts.append(item)
    if not layouts:
        raise ValueError("corpus must not be empty")
    bounds = np.array([lay.room.bounds for lay in layouts], dtype=float)
    return ExemplarIndex(
        layouts=tuple(layouts),
        types=np.array([ROOM_TYPES.index(lay.room.room_type) for lay in layouts]),
        sizes=bounds[:, 2:] - bounds[:, :2],
        shapes=np.array([room_shape(lay.room) for lay in layouts]),
        counts=np.stack([category_counts(lay.categories) for lay in layouts]),
    )


def exemplar_distances(
    index: ExemplarIndex | Sequence[CorpusLayout | Layout],
    layout: Layout,
    *,
    shape_weight: float = SHAPE_WEIGHT,
    object_weight: float = OBJECT_WEIGHT,
) -> np.ndarray:
    """The retrieval distance (module docstring) of every exemplar to ``layout``: (N,); ``inf`` for another
    room type when some exemplar has ``layout``'s type."""
    index = exemplar_index(index)
    if not isinstance(layout, Layout):
        raise TypeError(f"layout must be a Layout; got {type(layout).__name__}")
    shape_weight = check_float("shape_weight", shape_weight, minimum=0.0)
    object_weight = check_float("object_weight", object_weight, minimum=0.0)
    x0, y0, x1, y1 = layout.room.bounds
    dist = np.abs(index.sizes - np.array([x1 - x0, y1 - y0])).sum(axis=1)
    dist = dist + shape_weight * (index.shapes != room_shape(layout.room))
    dist = dist + object_weight * np.abs(index.counts - category_counts(layout.categories)).sum(axis=1)
    same = index.types == ROOM_TYPES.index(layout.room.room_type)
    return np.where(same, dist, np.inf) if same.any() else dist


def retrieve(
    index: ExemplarIndex | Sequence[CorpusLayout | Layout],
    layout: Layout,
    *,
    shape_weight: float = SHAPE_WEIGHT,
    object_weight: float = OBJECT_WEIGHT,
) -> int:
    """The index of the nearest exemplar to ``layout`` (lowest index among ties)."""
    d = exemplar_distances(index, layout, shape_weight=shape_weight, object_weight=object_weight)
    return int(np.argmin(d))  # argmin returns the first minimum


def match_objects(layout: Layout, exemplar: Layout) -> np.ndarray:
    """For each piece of ``layout``, its partner in ``exemplar`` (same category, size-matched) or -1: (n,).

    Within a category the pairing minimises ``sum |w - w_e| + |d - d_e|`` (optimal assignment).
    """
    for name, value in (("layout", layout), ("exemplar", exemplar)):
        if not isinstance(value, Layout):
            raise TypeError(f"{name} must be a Layout; got {type(value).__name__}")
    partner = np.full(layout.n, -1, dtype=np.int64)
    ours, theirs = layout.sizes()[:, :2], exemplar.sizes()[:, :2]
    for cat in dict.fromkeys(layout.categories):
        mine = [i for i, c in enumerate(layout.categories) if c == cat]
        other = [j for j, c in enumerate(exemplar.categories) if c == cat]
        if not other:
            continue
        cost = np.abs(ours[mine][:, None, :] - theirs[other][None, :, :]).sum(axis=-1)
        rows, cols = linear_sum_assignment(cost)
        for r, c in zip(rows, cols, strict=True):
            partner[mine[r]] = other[c]
    return partner


@dataclass(frozen=True)
class LayoutGPTResult:
    """The copied ``layout``, the ``exemplar`` (corpus index), its ``distance`` and each piece's
    ``partner`` in the exemplar (-1: kept its given pose)."""

    layout: Layout
    exemplar: int
    distance: float
    partner: np.ndarray


def layoutgpt_layout(
    corpus: ExemplarIndex | Sequence[CorpusLayout | Layout],
    layout: Layout,
    *,
    shape_weight: float = SHAPE_WEIGHT,
    object_weight: float = OBJECT_WEIGHT,
) -> LayoutGPTResult:
    """``layout`` (room, furniture, relations; its poses are the fallback) placed by copying the nearest
    exemplar of ``corpus`` (module docstring). Deterministic; no randomness is involved."""
    index = exemplar_index(corpus)
    if not isinstance(layout, Layout):
        raise TypeError(f"layout must be a Layout; got {type(layout).__name__}")
    dist = exemplar_distances(index, layout, shape_weight=shape_weight, object_weight=object_weight)
    e = int(np.argmin(dist))
    exemplar = index.layouts[e]
    partner = match_objects(layout, exemplar)
    poses = layout.poses().copy()
    ex0, ey0, ex1, ey1 = exemplar.room.bounds
    x0, y0, x1, y1 = layout.room.bounds
    scale = np.array([(x1 - x0) / (ex1 - ex0), (y1 - y0) / (ey1 - ey0)])
    theirs = exemplar.poses()
    for i, j in enumerate(partner):
        if j >= 0:
            poses[i, :2] = np.array([x0, y0]) + (theirs[j, :2] - np.array([ex0, ey0])) * scale
            poses[i, 2] = theirs[j, 2]
    return LayoutGPTResult(layout.with_poses(poses), e, float(dist[e]), partner)


__all__ = [
    "OBJECT_WEIGHT",
    "SHAPE_WEIGHT",
    "ExemplarIndex",
    "LayoutGPTResult",
    "category_counts",
    "exemplar_distances",
    "exemplar_index",
    "layoutgpt_layout",
    "match_objects",
    "retrieve",
    "room_shape",
]
