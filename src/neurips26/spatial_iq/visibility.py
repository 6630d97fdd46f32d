"""Which blocks a camera sees, and which hidden blocks the visible ones need.

**Slot table.** A structure is a height map over the 4 x 4 x 4 volume: 64 block *slots*, slot
``s = (i * 4 + j) * 4 + k`` holding the block of column ``(i, j)`` at layer ``k`` (``i`` along ``+X``,
``j`` along ``+Z``, the order of :func:`neurips26.world.voxel_stack` and of the boxes of
:func:`neurips26.world.voxel_scene`). A camera casts its rays once at each slot's cube alone
(:func:`neurips26.world.cast_rays`, no ground) and keeps the z-depths, a (64, pixels) table. The
block-ID buffer of any structure is then the arg-min over its occupied slots: the same nearest hit the
full ray caster finds, without casting again (tested equal to :func:`neurips26.world.render`'s instance
mask). Culling tries up to 150 structures per scene, so this is what makes generation cheap.

**Visible** = at least :data:`MIN_PIXELS` pixels of the block in the ID buffer (at 48 px; the released
generator counts any pixel at 512 px, and 2 px at 48 px agrees best with an equal-area test).

**Needed** set ``N(V)`` = the visible blocks plus every block beneath one of them (the downward closure of
the released ``_needed_from_visible``): what must exist for the visible structure to stand.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from neurips26.spatial_iq.cameras import GRID, IMAGE_SIZE, MAX_HEIGHT, REFERENCE, View, camera
from neurips26.world import Scene, cast_rays, voxel_scene

#: Slots of the volume.
SLOTS = GRID * GRID * MAX_HEIGHT
#: Pixels a block needs in the ID buffer to count as visible.
MIN_PIXELS = 2


def check_heights(height_map: object) -> np.ndarray:
    """``height_map`` as a (4, 4) int64 array with entries in 0..4; ``ValueError`` naming it otherwise."""
    h = np.asarray(height_map)
    if h.shape != (GRID, GRID) or h.dtype.kind not in "iu":
        raise ValueError(
            f"height_map must be a ({GRID}, {GRID}) int array; got shape {h.shape}, dtype {h.dtype}"
        )
    if h.min() < 0 or h.max() > MAX_HEIGHT:
        raise ValueError(f"height_map entries must be in 0..{MAX_HEIGHT}; got {int(h.min())}..{int(h.max())}")
    return h.astype(np.int64)


def occupancy(height_map: object) -> np.ndarray:
    """(4, 4, 4) bool: ``occ[i, j, k] = k < H[i, j]``."""
    h = check_heights(height_map)
    return np.arange(MAX_HEIGHT)[None, None, :] < h[:, :, None]


def heights_of(blocks: np.ndarray) -> np.ndarray:
    """The height map of a downward-closed (4, 4, 4) block set (the top of each column)."""
    b = np.asarray(blocks, dtype=bool)
    if b.shape != (GRID, GRID, MAX_HEIGHT):
        raise ValueError(f"blocks must have shape {(GRID, GRID, MAX_HEIGHT)}; got {b.shape}")
    return (b * np.arange(1, MAX_HEIGHT + 1)).max(axis=2).astype(np.int64)


@dataclass(frozen=True, eq=False)
class SlotTable:
    """Per-slot z-depths (64, size * size) of one camera (``inf`` where a slot's cube is not hit)."""

    view: View
    size: int
    depth: np.ndarray

    def id_buffer(self, height_map: object) -> np.ndarray:
        """(size, size) slot index of the nearest block at each pixel, ``-1`` on background."""
        present = np.flatnonzero(occupancy(height_map).reshape(-1))
        if present.size == 0:
            return np.full((self.size, self.size), -1, dtype=np.int64)
        d = self.depth[present]  # rows in slot order, so ties go to the lower slot as in the ray caster
        nearest = np.argmin(d, axis=0)
        hit = np.isfinite(d[nearest, np.arange(d.shape[1])])
        return np.where(hit, present[nearest], -1).reshape(self.size, self.size)

    def pixel_counts(self, height_map: object) -> np.ndarray:
        """(4, 4, 4) pixels of each block in the ID buffer."""
        ids = self.id_buffer(height_map).reshape(-1)
        counts = np.bincount(ids[ids >= 0], minlength=SLOTS)
        return counts.reshape(GRID, GRID, MAX_HEIGHT)

    def visible(self, height_map: object) -> np.ndarray:
        """(4, 4, 4) bool: the blocks with at least :data:`MIN_PIXELS` pixels."""
        return self.pixel_counts(height_map) >= MIN_PIXELS


@lru_cache(maxsize=64)
def slot_table(view: View, size: int = IMAGE_SIZE) -> SlotTable:
    """The slot table of ``view`` (cached: 64 single-cube ray casts, float32 like :func:`render`)."""
    full = voxel_scene(np.full((GRID, GRID), MAX_HEIGHT, dtype=np.int64)).scene
    packed = Scene(full.boxes, ground=None).pack(np.float32)
    cam = camera(view, size)
    origins, directions = cam.rays(np.float32, unit=False)
    directions = directions.reshape(-1, 3)
    origin = origins[:1, :1].reshape(1, 3)
    depth = np.empty((SLOTS, directions.shape[0]), dtype=np.float32)
    for s in range(SLOTS):
        t, _, _ = cast_rays(packed, origin, directions, np.array([s]))
        depth[s] = t
    depth.setflags(write=False)
    return SlotTable(view, size, depth)


def needed(height_map: object, visible: np.ndarray) -> np.ndarray:
    """``N(V)``: the visible blocks and every block beneath one (downward transitive closure)."""
    occ = occupancy(height_map)
    v = np.asarray(visible, dtype=bool)
    if v.shape != occ.shape:
        raise ValueError(f"visible must have shape {occ.shape}; got {v.shape}")
    if np.any(v & ~occ):
        raise ValueError("visible must be a subset of the structure's blocks")
    # a block is needed when it or any block above it in its column is visible
    above_or_self = np.flip(np.logical_or.accumulate(np.flip(v, axis=2), axis=2), axis=2)
    return above_or_self & occ


def cull(height_map: object, view: View | None = None) -> tuple[np.ndarray, int]:
    """Keep the blocks ``view`` (the reference view by default) needs: ``(kept height map, |V|)``.

    As the released ``filter_height_map_for_view0``: visible blocks and their supports stay, every other
    block goes. The result is a height map again (needed sets are downward closed).
    """
    table = slot_table(REFERENCE if view is None else view)
    vis = table.visible(height_map)
    return heights_of(needed(height_map, vis)), int(vis.sum())


__all__ = [
    "MIN_PIXELS",
    "SLOTS",
    "SlotTable",
    "check_heights",
    "cull",
    "heights_of",
    "needed",
    "occupancy",
    "slot_table",
]
