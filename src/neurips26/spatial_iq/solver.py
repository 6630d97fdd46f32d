"""The compositional solver: perceive the visible blocks, then compose every answer from them.

It stands in for the human reference profile. Perception reads the view's visible set ``V`` and the
structure's columns, with seeded errors at rate ``p`` (:class:`Perception`):

- each visible block is *missed* with probability ``p / 2``, or *doubled* (a phantom block seen on top of it,
  where that slot is empty) with probability ``p / 2``;
- with probability ``p``, two neighbouring columns are seen as one (the column count drops by one).

Every answer is then computed from the perceived structure with the benchmark's own rules
(:mod:`~neurips26.spatial_iq.tasks`): the total is the needed set of the perceived visible blocks, so it is
built from the visible count and the inferred hidden blocks, and its errors are the sum of theirs. With
``p = 0`` the solver is exact on every question.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neurips26.spatial_iq.tasks import NUMERIC, ViewLabels, clusters, over_hidden, top_support_sets
from neurips26.spatial_iq.visibility import heights_of, needed, occupancy
from neurips26.validation import check_float


@dataclass(frozen=True)
class Perception:
    """Error rates: ``p`` for blocks (half misses, half phantoms) and for merging two columns."""

    p: float = 0.0

    def __post_init__(self) -> None:
        check_float("p", self.p, minimum=0.0, maximum=1.0)


def perceive(labels: ViewLabels, p: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, int]:
    """Perceived ``(height map, visible set, column merges)`` of one view at error rate ``p``."""
    vis = labels.visible.copy()
    occ = occupancy(labels.scene.heights)
    u = rng.random(vis.shape)
    missed = vis & (u < p / 2)
    doubled = vis & (u >= p / 2) & (u < p)
    vis &= ~missed
    phantom = np.zeros_like(vis)
    phantom[:, :, 1:] = doubled[:, :, :-1]
    phantom &= ~occ
    # a phantom floats only above a real block, so the perceived structure stays a height map
    blocks = occ | phantom
    vis |= phantom
    merges = int(rng.random() < p)
    return heights_of(blocks), vis, merges


def answers_from(heights: np.ndarray, visible: np.ndarray, merges: int = 0) -> dict[str, int]:
    """Every numeric single-view answer composed from a (perceived) structure and visible set."""
    need = needed(heights, visible)
    top, direct, below = top_support_sets(heights, visible)
    return {
        "S2": int(clusters(need).max()),
        "S3": max(int((heights > 0).sum()) - merges, 0),
        "S4": int(heights.max(initial=0)),
        "S5": int(visible.sum()),
        "S6": int(top.sum()),
        "S7": int(direct.sum()),
        "S8": int(below.sum()),
        "S9": int(over_hidden(visible).sum()),
        "T1": int(need.sum()),
        "hidden": int(need.sum() - visible.sum()),
    }


def solve(
    views: Sequence[ViewLabels],
    partners: dict[str, Sequence[ViewLabels]],
    perception: Perception,
    *,
    seed: int,
) -> dict[str, np.ndarray]:
    """The solver's answer sheet over ``views`` (task → one value per view; S1 is always right).

    ``partners["T2a"][n]`` / ``["T2b"][n]`` is view ``n``'s partner 90° / 180° further round; the solver
    perceives it with its own errors and counts the blocks it sees here but not there.
    """
    if not isinstance(perception, Perception):
        raise TypeError(f"perception must be a Perception; got {type(perception).__name__}")
    rng = np.random.default_rng(seed)
    rows: list[dict[str, int]] = []
    for n, labels in enumerate(views):
        h, vis, merges = perceive(labels, perception.p, rng)
        row = answers_from(h, vis, merges)
        for task in ("T2a", "T2b"):
            _, other, _ = perceive(partners[task][n], perception.p, rng)
            row[task] = int((vis & ~other).sum())
        rows.append(row)
    sheet = {t: np.array([r[t] for r in rows], dtype=np.int64) for t in (*NUMERIC, "hidden")}
    sheet["S1"] = np.array([v.scene.category for v in views], dtype=object)
    return sheet


__all__ = ["Perception", "answers_from", "perceive", "solve"]
