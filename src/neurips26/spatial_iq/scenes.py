"""The scene sampler: a 4 x 4 height map of identical objects, culled to what the reference view needs.

As the released generator (``random_height_map_with_block_count``):

1. draw the final block count ``n`` in 3..64 with the piecewise weight :func:`count_weight`;
2. draw a pre-cull count uniformly in ``[n, 64]`` and scatter that many blocks into distinct slots of the
   4 x 4 x 4 volume (a column's height is the number of slots drawn in it, as
   :func:`neurips26.world.voxel_stack` does);
3. cull: keep the blocks the reference camera sees and every block beneath them
   (:func:`~neurips26.spatial_iq.visibility.cull`), so each hidden block is *needed* as support;
4. retry up to 150 times until the culled count is ``n``; otherwise keep the closest.

Each scene also draws its object category (:data:`CATEGORIES`) and, for the dataset, the camera offset and
lens its four views share (so each view has its 90° and 180° partners for the rotation tasks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from neurips26.spatial_iq.cameras import GRID, LENSES, MAX_HEIGHT, OFFSETS, View
from neurips26.spatial_iq.visibility import SLOTS, check_heights, cull
from neurips26.validation import check_choice, check_int, check_seed

#: The smallest final count (the released ``min_blocks``) and the retry budget.
MIN_BLOCKS = 3
MAX_TRIES = 150
#: The object categories (S1): identical objects of one kind per scene.
CATEGORIES: tuple[str, ...] = ("cube", "carton", "can", "tin")


def count_weight(n: int) -> float:
    """The released weight of a final count ``n``: a linear rise 0.017 → 1.6 on 3..11, a linear fall
    0.8 → 0.2 on 12..30, then ``0.225 exp(-0.2 (n - 31))``; 0 below 3."""
    n = check_int("n", n)
    if n < MIN_BLOCKS:
        return 0.0
    if n <= 11:
        return 0.017 + (1.6 - 0.017) * (n - 3) / 8
    if n <= 30:
        return 0.8 - (0.8 - 0.2) * (n - 12) / 18
    return 0.225 * math.exp(-0.2 * (n - 31))


def count_probabilities() -> np.ndarray:
    """``p[n]`` for ``n`` = 0..64: :func:`count_weight` normalised."""
    w = np.array([count_weight(n) for n in range(SLOTS + 1)])
    return w / w.sum()


def scatter(count: int, rng: np.random.Generator) -> np.ndarray:
    """A (4, 4) height map from ``count`` distinct slots drawn uniformly (columns are the slots' cells)."""
    count = check_int("count", count, minimum=0, maximum=SLOTS)
    slots = rng.choice(SLOTS, size=count, replace=False)
    return np.bincount(slots // MAX_HEIGHT, minlength=GRID * GRID).reshape(GRID, GRID).astype(np.int64)


@dataclass(frozen=True, eq=False)
class StackScene:
    """A culled structure: ``heights`` (4, 4), its ``category``, the count it aimed at (``target``), the
    pre-cull count of the kept draw, the blocks the reference view sees, the tries used, and the camera
    ``offset`` and ``lens`` its views share."""

    seed: int
    heights: np.ndarray
    category: str
    target: int
    pre_cull: int
    reference_visible: int
    tries: int
    offset: float
    lens: str

    @property
    def total(self) -> int:
        return int(self.heights.sum())

    def view(self, k: int) -> View:
        """The scene's view at base azimuth index ``k``."""
        return View(k, self.offset, self.lens)


def sample_scene(seed: int) -> StackScene:
    """The scene of ``seed`` (module doc); deterministic in ``seed``."""
    seed = check_seed("seed", seed)
    rng = np.random.default_rng(seed)
    target = int(rng.choice(SLOTS + 1, p=count_probabilities()))
    best: tuple[int, np.ndarray, int, int] | None = None
    tries = 0
    for attempt in range(1, MAX_TRIES + 1):
        tries = attempt
        pre = int(rng.integers(target, SLOTS + 1))
        kept, n_visible = cull(scatter(pre, rng))
        gap = abs(int(kept.sum()) - target)
        if best is None or gap < best[0]:
            best = (gap, kept, pre, n_visible)
        if gap == 0:
            break
    assert best is not None
    _, kept, pre, n_visible = best
    return StackScene(
        seed=seed,
        heights=kept,
        category=CATEGORIES[int(rng.integers(len(CATEGORIES)))],
        target=target,
        pre_cull=pre,
        reference_visible=n_visible,
        tries=tries,
        offset=float(OFFSETS[int(rng.integers(len(OFFSETS)))]),
        lens=LENSES[int(rng.integers(len(LENSES)))],
    )


def scene_from_heights(
    height_map: object, *, category: str = "cube", offset: float = OFFSETS[0], lens: str = "narrow"
) -> StackScene:
    """A scene from a given height map, culled by the reference view (for figures, tests, the explorer)."""
    kept, n_visible = cull(check_heights(height_map))
    return StackScene(
        seed=0,
        heights=kept,
        category=check_choice("category", category, CATEGORIES),
        target=int(kept.sum()),
        pre_cull=int(np.asarray(height_map).sum()),
        reference_visible=n_visible,
        tries=1,
        offset=float(View(0, offset, lens).offset),
        lens=lens,
    )


__all__ = [
    "CATEGORIES",
    "MAX_TRIES",
    "MIN_BLOCKS",
    "StackScene",
    "count_probabilities",
    "count_weight",
    "sample_scene",
    "scatter",
    "scene_from_heights",
]
