"""What the models see: one view of a structure as a 48 x 48 RGB image, with the block behind each pixel.

The released benchmark renders identical objects of one category (textured cubes, factory boxes, soup
cans, meat tins) with a path tracer at 512 px. We ray-cast unit cubes instead
(:func:`neurips26.world.render`, the camera of :func:`~neurips26.spatial_iq.cameras.camera`; the cubes of
:func:`neurips26.world.voxel_scene`, packed once for the whole volume so that a view only selects the
present ones) and paint each cube's faces by the category:

* the colour of a block pixel is ``albedo(category, face, u, v) * shade``, where ``shade = k_a + (1 - k_a)
  max(0, n . l)`` is the renderer's Lambertian term and ``(u, v)`` are the hit point's coordinates within
  its face (the fractional parts of the world point, since a block of column ``(i, j)`` and layer ``k``
  fills ``[i - 2, i - 1] x [k, k + 1] x [j - 2, j - 1]``). Cube: plain; carton: a tape stripe across the
  top; can: a round lid on the top and a dark band round the side; tin: a label band round the side;
* a block pixel is darkened (an *outline*) when a 4-neighbour belongs to another slot and is background,
  ground, nearer to the camera, or at the same depth with a lower slot index: every boundary gets a
  one-pixel line on exactly one side, so two identical neighbours stay separable and countable.

``slots`` is the block-ID buffer of :func:`~neurips26.spatial_iq.visibility.slot_table` (slot
``s = (i * 4 + j) * 4 + k``, ``-1`` on ground and background); it is checked equal to the renderer's
instance mask mapped to slots (through voxel_scene's ``ids`` array of the full volume; the present cubes
are passed in slot order, so ties between touching cubes break the same way). A ``colours`` mapping
repaints blocks in a flat colour (same shading and outlines): the multiple-choice options are such
recolourings. A key that names the empty slot on top of a column (:func:`slot_above`) draws a *phantom*
block there, a block that does not exist (the released "phantom block above the top" distractor); on a
column of height 4 that slot is layer 4, numbered ``64 + i * 4 + j`` (:data:`PHANTOM_BASE`), just outside
the volume. :func:`paint_flat` is the released compositing instead: paint the given blocks' pixels of a
rendered view with no shading at all (the ground-truth overlays and what an ideal image editor outputs).

Deterministic (no noise); about 2 ms per 48 px view on one core.
"""

from __future__ import annotations

import colorsys
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from neurips26.spatial_iq.cameras import GRID, IMAGE_SIZE, MAX_HEIGHT, View, camera
from neurips26.spatial_iq.scenes import StackScene
from neurips26.spatial_iq.visibility import SLOTS, slot_table
from neurips26.validation import check_int
from neurips26.world import AMBIENT, LIGHT_DIRECTION, PackedScene, render, voxel_scene

#: First extended slot: ``PHANTOM_BASE + i * 4 + j`` is layer 4 of column ``(i, j)`` (phantoms only).
PHANTOM_BASE = SLOTS
#: Number of slot indices a colour mapping may use (the 64 slots and the 16 layer-4 phantoms).
EXTENDED_SLOTS = SLOTS + GRID * GRID
#: Base colour and accent colour of each category.
CATEGORY_COLOURS: dict[str, tuple[tuple[float, float, float], tuple[float, float, float]]] = {
    "cube": ((0.40, 0.68, 0.44), (0.40, 0.68, 0.44)),
    "carton": ((0.70, 0.52, 0.32), (0.93, 0.87, 0.70)),
    "can": ((0.80, 0.17, 0.14), (0.84, 0.84, 0.87)),
    "tin": ((0.20, 0.34, 0.72), (0.96, 0.80, 0.22)),
}
#: Factor applied to outline pixels.
OUTLINE_SHADE = 0.4
#: Fractions of a face: half-width of the carton's tape, radius of the can's lid, the side bands.
TAPE_HALF_WIDTH = 0.14
LID_RADIUS = 0.42
CAN_BAND = (0.35, 0.65)
TIN_BAND = (0.28, 0.72)


def _palette(n: int) -> tuple[tuple[float, float, float], ...]:
    """``n`` distinct colours: golden-ratio hue steps, cycling through four (saturation, value) pairs."""
    sv = ((0.85, 0.95), (0.55, 0.75), (0.95, 0.62), (0.45, 1.0))
    out = []
    for m in range(n):
        s, v = sv[m % len(sv)]
        r, g, b = colorsys.hsv_to_rgb((m * 0.6180339887) % 1.0, s, v)
        out.append((round(r, 4), round(g, 4), round(b, 4)))
    return tuple(out)


#: 64 mutually distinct colours for per-group recolourings (columns, layers, blocks, clusters).
PALETTE: tuple[tuple[float, float, float], ...] = _palette(SLOTS)


@dataclass(frozen=True, eq=False)
class RenderedView:
    """``rgb`` (size, size, 3) float32 in [0, 1]; ``slots`` (size, size) int64 slot of each pixel, ``-1`` on
    ground and background (phantom blocks included, with their slot numbers)."""

    rgb: np.ndarray
    slots: np.ndarray


def slot_of(i: int, j: int, k: int) -> int:
    """The slot index of block ``(i, j, k)``; ``k = 4`` gives the phantom slot above the volume."""
    i = check_int("i", i, minimum=0, maximum=GRID - 1)
    j = check_int("j", j, minimum=0, maximum=GRID - 1)
    k = check_int("k", k, minimum=0, maximum=MAX_HEIGHT)
    return PHANTOM_BASE + i * GRID + j if k == MAX_HEIGHT else (i * GRID + j) * MAX_HEIGHT + k


def block_of(slot: int) -> tuple[int, int, int]:
    """``(i, j, k)`` of a slot index (0..79; 64..79 are layer 4)."""
    slot = check_int("slot", slot, minimum=0, maximum=EXTENDED_SLOTS - 1)
    if slot >= PHANTOM_BASE:
        c = slot - PHANTOM_BASE
        return c // GRID, c % GRID, MAX_HEIGHT
    return slot // (GRID * MAX_HEIGHT), (slot // MAX_HEIGHT) % GRID, slot % MAX_HEIGHT


def slot_above(heights: np.ndarray, i: int, j: int) -> int:
    """The empty slot right on top of column ``(i, j)`` of a height map (where a phantom block goes)."""
    h = np.asarray(heights)
    return slot_of(i, j, int(h[i, j]))


def _check_colour(name: str, value: object) -> tuple[float, float, float]:
    try:
        rgb = tuple(float(c) for c in value)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an RGB triple; got {value!r}") from None
    if len(rgb) != 3 or not all(0.0 <= c <= 1.0 for c in rgb):
        raise ValueError(f"{name} must be three numbers in [0, 1]; got {value!r}")
    return rgb  # type: ignore[return-value]


def check_colours(
    colours: object, heights: np.ndarray
) -> tuple[dict[int, tuple[float, float, float]], list[int]]:
    """``colours`` as ``{slot: (r, g, b)}`` plus its phantom slots; ``ValueError`` naming ``colours`` when a
    key is neither a block of ``heights`` nor the empty slot on top of its column, or a value is no RGB."""
    if colours is None:
        return {}, []
    if not isinstance(colours, Mapping):
        raise TypeError(f"colours must be a mapping slot -> RGB; got {type(colours).__name__}")
    out: dict[int, tuple[float, float, float]] = {}
    phantoms: list[int] = []
    for key, value in colours.items():
        if isinstance(key, bool) or not isinstance(key, numbers.Integral) or not 0 <= key < EXTENDED_SLOTS:
            raise ValueError(f"colours keys must be slot indices in 0..{EXTENDED_SLOTS - 1}; got {key!r}")
        s = int(key)
        i, j, k = block_of(s)
        if k > heights[i, j]:
            raise ValueError(
                f"colours key {s} is block ({i}, {j}, {k}), above the empty slot on top of its column "
                f"(height {int(heights[i, j])})"
            )
        if k == heights[i, j]:
            phantoms.append(s)
        out[s] = _check_colour(f"colours[{s}]", value)
    return out, phantoms


def _albedo(category: str, normals: np.ndarray, local: np.ndarray) -> np.ndarray:
    """(P, 3) albedo of block pixels with world normals (P, 3) and in-block coordinates (P, 3) in [0, 1]."""
    base, accent = (np.asarray(c, dtype=np.float32) for c in CATEGORY_COLOURS[category])
    albedo = np.broadcast_to(base, local.shape).copy()
    top = normals[:, 1] > 0.5
    x_face = np.abs(normals[:, 0]) > 0.5
    lx, ly, lz = local[:, 0], local[:, 1], local[:, 2]
    # horizontal coordinate on a side face (z on an x-facing side, x on a z-facing side)
    side_u = np.where(x_face, lz, lx)
    if category == "carton":  # tape along x over the top and partly down the x-facing sides
        tape = (np.abs(lz - 0.5) < TAPE_HALF_WIDTH) & (top | (x_face & (ly > 0.6)))
        albedo[tape] = accent
    elif category == "can":  # round lid on top (dark corners around it), dark band round the side
        r = np.hypot(lx - 0.5, lz - 0.5)
        albedo[top & (r < LID_RADIUS)] = accent
        albedo[top & (r >= LID_RADIUS)] = 0.35 * base
        band = ~top & (ly > CAN_BAND[0]) & (ly < CAN_BAND[1])
        albedo[band] = 0.55 * base
        albedo[~top & (np.abs(side_u - 0.5) > LID_RADIUS)] *= 0.7  # rounded edges
    elif category == "tin":  # label band round the side
        band = ~top & (ly > TIN_BAND[0]) & (ly < TIN_BAND[1])
        albedo[band] = accent
    return albedo


def _outlines(slots: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """(H, W) bool: block pixels on the far side of a slot boundary (module doc)."""
    h, w = slots.shape
    pad_s = np.full((h + 2, w + 2), -1, dtype=slots.dtype)
    pad_s[1:-1, 1:-1] = slots
    pad_d = np.full((h + 2, w + 2), -np.inf, dtype=np.float64)
    pad_d[1:-1, 1:-1] = np.where(slots >= 0, depth, -np.inf)
    out = np.zeros((h, w), dtype=bool)
    for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        s_n = pad_s[1 + di : h + 1 + di, 1 + dj : w + 1 + dj]
        d_n = pad_d[1 + di : h + 1 + di, 1 + dj : w + 1 + dj]
        differ = s_n != slots
        nearer = (s_n < 0) | (d_n < depth) | ((d_n == depth) & (s_n < slots))
        out |= differ & nearer
    return out & (slots >= 0)


_LAYERS = MAX_HEIGHT + 1  # the volume plus the phantom layer
#: World corner (minimal x, y, z) of the cube of each extended slot.
_CORNERS = np.array([(i - GRID / 2.0, k, j - GRID / 2.0) for i, j, k in map(block_of, range(EXTENDED_SLOTS))])


@lru_cache(maxsize=1)
def _full_volume() -> tuple[PackedScene, np.ndarray]:
    """Every cube of the 4 x 4 x 5 volume from :func:`neurips26.world.voxel_scene` (ids ``1 + (i * 4 + j) * 5
    + k``, packed once; a structure renders the present ones, in slot order) and the map id -> slot."""
    stack = voxel_scene(np.full((GRID, GRID), _LAYERS, dtype=np.int64), max_height=_LAYERS)
    lut = np.full(int(stack.ids.max()) + 1, -1, dtype=np.int64)  # the ground's id 0 -> -1
    for i, j, k in zip(*np.nonzero(stack.ids >= 0), strict=True):
        lut[stack.ids[i, j, k]] = slot_of(int(i), int(j), int(k))
    return stack.scene.pack(np.float32), lut


def render_view(
    scene: StackScene, view: View, size: int = IMAGE_SIZE, *, colours: Mapping[int, object] | None = None
) -> RenderedView:
    """Render ``scene`` from ``view`` at ``size`` x ``size`` px (module doc).

    ``colours`` ``{slot: (r, g, b)}`` repaints those blocks flat (keeping shading and outlines); a key on
    the empty slot on top of a column adds a phantom block there, painted in its colour.
    """
    if not isinstance(scene, StackScene):
        raise TypeError(f"scene must be a StackScene; got {type(scene).__name__}")
    if not isinstance(view, View):
        raise TypeError(f"view must be a View; got {type(view).__name__}")
    size = check_int("size", size, minimum=8)
    heights = scene.heights
    paint, phantoms = check_colours(colours, heights)
    drawn = heights.copy()
    for s in phantoms:
        i, j, _ = block_of(s)
        drawn[i, j] += 1
    full, lut = _full_volume()
    present = np.flatnonzero((np.arange(_LAYERS) < drawn[:, :, None]).reshape(-1))  # in slot order
    packed = replace(
        full,
        centers=full.centers[present],
        half_extents=full.half_extents[present],
        rotations=full.rotations[present],
        colors=full.colors[present],
        ids=full.ids[present],
    )
    r = render(packed, camera(view, size))
    inst = r.instance
    from_mask = np.where(inst >= 0, lut[np.maximum(inst, 0)], -1)
    if drawn.max(initial=0) <= MAX_HEIGHT:  # every drawn block has a slot: the slot table is the reference
        slots = slot_table(view, size).id_buffer(drawn)
        if not np.array_equal(slots, from_mask):
            raise RuntimeError("the renderer's instance mask disagrees with the slot table's ID buffer")
    else:
        slots = from_mask

    rgb = r.rgb.astype(np.float32, copy=True)
    on = slots >= 0
    if on.any():
        sl = slots[on]
        normals = r.normals[on]
        points = r.points()[on]
        local = np.clip(points - _CORNERS[sl], 0.0, 1.0)
        albedo = _albedo(scene.category, normals, local)
        if paint:
            keys = np.fromiter(paint.keys(), dtype=np.int64)
            table = np.full((EXTENDED_SLOTS, 3), np.nan, dtype=np.float32)
            table[keys] = np.array(list(paint.values()), dtype=np.float32)
            flat = table[sl]
            painted = ~np.isnan(flat[:, 0])
            albedo[painted] = flat[painted]
        light = np.asarray(LIGHT_DIRECTION, dtype=np.float64)
        light = light / np.linalg.norm(light)
        shade = AMBIENT + (1.0 - AMBIENT) * np.maximum(normals @ light, 0.0)
        rgb[on] = albedo * shade[:, None].astype(np.float32)
    rgb[_outlines(slots, r.depth)] *= OUTLINE_SHADE
    np.clip(rgb, 0.0, 1.0, out=rgb)
    return RenderedView(rgb=rgb, slots=slots)


def paint_flat(rendered: RenderedView, colours: Mapping[int, object]) -> np.ndarray:
    """The released compositing: a copy of ``rendered.rgb`` whose pixels of each slot in ``colours`` are set
    to that colour exactly (no shading, no outline); slots without pixels (phantoms too) paint nothing."""
    if not isinstance(rendered, RenderedView):
        raise TypeError(f"rendered must be a RenderedView; got {type(rendered).__name__}")
    if not isinstance(colours, Mapping):
        raise TypeError(f"colours must be a mapping slot -> RGB; got {type(colours).__name__}")
    table = np.full((EXTENDED_SLOTS + 1, 3), np.nan, dtype=np.float32)  # last row: -1 (no block)
    for key, value in colours.items():
        if isinstance(key, bool) or not isinstance(key, numbers.Integral) or not 0 <= key < EXTENDED_SLOTS:
            raise ValueError(f"colours keys must be slot indices in 0..{EXTENDED_SLOTS - 1}; got {key!r}")
        table[int(key)] = _check_colour(f"colours[{key}]", value)
    flat = table[rendered.slots]
    out = rendered.rgb.copy()
    painted = ~np.isnan(flat[..., 0])
    out[painted] = flat[painted]
    return out


def colour_groups(
    groups: np.ndarray, palette: tuple[tuple[float, float, float], ...] | None = None
) -> dict[int, tuple[float, float, float]]:
    """``{slot: palette[g - 1]}`` for every block with group label ``g >= 1`` in a (4, 4, 4) int array
    (0 = not painted); labels wrap round the palette (:data:`PALETTE` by default)."""
    g = np.asarray(groups)
    if g.shape != (GRID, GRID, MAX_HEIGHT) or g.dtype.kind not in "iub":
        raise ValueError(
            f"groups must be a {(GRID, GRID, MAX_HEIGHT)} int array; got shape {g.shape}, dtype {g.dtype}"
        )
    pal = (
        PALETTE
        if palette is None
        else tuple(_check_colour(f"palette[{n}]", c) for n, c in enumerate(palette))
    )
    if not pal:
        raise ValueError("palette must hold at least one colour")
    flat = g.astype(np.int64).reshape(-1)
    return {int(s): pal[(int(flat[s]) - 1) % len(pal)] for s in np.flatnonzero(flat > 0)}


__all__ = [
    "CATEGORY_COLOURS",
    "EXTENDED_SLOTS",
    "OUTLINE_SHADE",
    "PALETTE",
    "PHANTOM_BASE",
    "RenderedView",
    "block_of",
    "check_colours",
    "colour_groups",
    "paint_flat",
    "render_view",
    "slot_above",
    "slot_of",
]
