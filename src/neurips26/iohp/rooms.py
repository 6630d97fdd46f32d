"""Procedural rooms and furniture lists for chapter 18 (IOHP), and their 3-D scenes (§7.1).

**Rooms.** Four types (bedroom, living, dining, office). The bounding box has a long side and a short side
drawn per type inside a 3 x 3 to 6 x 5 m range (0.1 m steps, randomly turned by 90 degrees) and
sits at ``[0, W] x [0, D]``. An L-shape removes a rectangular notch of 30-50 % of each side from one corner,
keeping both arms at least 2 m wide; the notch is an obstacle (:meth:`~neurips26.iohp.layout.Room.obstacles`).
One door (0.8-0.9 m) sits on a wall at least 0.15 m from its corners and swings into the room (its
``w x w`` swing zone lies inside the room); 0-2 windows (0.8-1.5 m) sit on other walls.

**Furniture.** Each type has a template of groups (a desk with its chair, a bed, a chair of a dining set),
each repeated between ``low`` and ``high`` times; realistic size ranges per category are in
:data:`CATEGORIES` (``w`` along the piece's lateral axis, ``d`` along its front axis, ``h``). The first
``low`` copies of every group are always present; the other copies are shuffled and the shortest prefix of
them whose footprint coverage

    coverage = sum_i w_i d_i / area(room)

is nearest to the density target (sparse / medium / dense = 0.15 / 0.25 / 0.35, §7.1) is kept. All
candidates are drawn before the density is looked at, so for one seed a denser target only appends pieces:
coverage is monotone in the density by construction. When the mandatory pieces alone exceed the target
(a bed in a small bedroom) the coverage overshoots; :func:`coverage` reports the value reached.

Sampled furniture is unplaced (pose ``(0, 0, 0)``): placing it is the initial planner's job
(:mod:`neurips26.iohp.initial`). The room and the furniture come from separate seeded streams
(:func:`neurips26.seeding.sub_seed` of the seed, the room type and the part), so the density never changes
the room.

**Scenes.** :func:`to_scene` renders a :class:`~neurips26.iohp.layout.Layout` with
:mod:`neurips26.world`: floor (x, y) maps to world (X, Z), up is +Y. Walls are thin boxes outside the
outline (door gap up to 2.1 m, windows between 0.9 and 2.1 m); furniture piece ``i`` is
``oriented_box((x, h/2, y), (w, h, d), 90 - degrees(theta))`` with instance id ``i + 1``. ``oriented_box``
turns its local ``+Z`` (the depth ``d``) to ``(sin yaw, cos yaw)`` in world ``(X, Z)`` and its local
``+X`` (the width) to ``(cos yaw, -sin yaw)``; with ``yaw = 90 deg - theta`` these are ``u(theta)`` and
``-v(theta)``, so the rendered footprint is exactly the floor footprint. Proxies, when given, are 2 cm mats.
The chapter's categories and colours live here, never in :data:`neurips26.world.FURNITURE` (``room()``
samples from that dict; a new key would change every seeded room of other chapters).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from neurips26.iohp.layout import ROOM_TYPES, Door, Furniture, Layout, Room, Window
from neurips26.seeding import sub_seed
from neurips26.validation import check_array, check_choice, check_float, check_seed
from neurips26.world import PALETTE, Box, GroundPlane, Scene, oriented_box, wall

#: Room shapes.
SHAPES: tuple[str, ...] = ("rectangle", "L")
#: Named density levels: target fraction of the floor area covered by furniture footprints (§7.1).
DENSITIES: dict[str, float] = {"sparse": 0.15, "medium": 0.25, "dense": 0.35}
#: Probability that ``shape=None`` draws an L-shape.
L_PROBABILITY = 0.35
#: Allowed bounding-box sides (m) for an explicit ``size``: each in [3, 6], the shorter at most 5.
SIZE_RANGE = (3.0, 6.0)
SHORT_SIDE_MAX = 5.0
#: An L-shape's arms stay at least this wide (m).
MIN_ARM = 2.0
#: Door width range (m), distance kept from the wall's corners (m).
DOOR_WIDTH = (0.8, 0.9)
DOOR_MARGIN = 0.15
#: Window width range (m), distance kept from the wall's corners (m).
WINDOW_WIDTH = (0.8, 1.5)
WINDOW_MARGIN = 0.3
#: Rendering heights (m) and wall thickness.
WALL_HEIGHT = 2.5
WALL_THICKNESS = 0.1
DOOR_HEIGHT = 2.1
WINDOW_SILL = 0.9
WINDOW_TOP = 2.1
MAT_HEIGHT = 0.02


@dataclass(frozen=True)
class Category:
    """Size ranges (m) of a furniture category and its colour (a :data:`neurips26.world.PALETTE` name).

    ``width`` runs along the piece's lateral axis ``v``, ``depth`` along its front axis ``u``.
    """

    width: tuple[float, float]
    depth: tuple[float, float]
    height: tuple[float, float]
    color: str


#: The chapter's furniture categories (realistic sizes, §7.1).
CATEGORIES: dict[str, Category] = {
    "bed": Category((1.4, 1.8), (2.0, 2.1), (0.45, 0.6), "blue"),  # front = foot end
    "nightstand": Category((0.4, 0.5), (0.35, 0.45), (0.5, 0.6), "brown"),
    "wardrobe": Category((1.0, 1.8), (0.55, 0.62), (1.9, 2.1), "purple"),
    "desk": Category((1.1, 1.4), (0.6, 0.7), (0.72, 0.76), "orange"),
    "chair": Category((0.45, 0.55), (0.45, 0.55), (0.8, 0.95), "red"),
    "dresser": Category((0.8, 1.2), (0.45, 0.55), (0.8, 1.0), "pink"),
    "sofa": Category((1.8, 2.2), (0.85, 0.95), (0.75, 0.9), "green"),
    "coffee_table": Category((0.9, 1.2), (0.5, 0.65), (0.4, 0.45), "brown"),
    "tv_stand": Category((1.2, 1.8), (0.35, 0.45), (0.45, 0.6), "white"),
    "armchair": Category((0.75, 0.9), (0.75, 0.9), (0.8, 0.95), "yellow"),
    "bookshelf": Category((0.8, 1.2), (0.3, 0.4), (1.6, 2.0), "purple"),
    "dining_table": Category((1.4, 1.9), (0.85, 1.0), (0.72, 0.76), "orange"),
    "sideboard": Category((1.2, 1.8), (0.4, 0.5), (0.8, 0.9), "pink"),
    "filing_cabinet": Category((0.4, 0.5), (0.55, 0.65), (0.7, 1.3), "cyan"),
    "side_table": Category((0.4, 0.55), (0.4, 0.55), (0.5, 0.6), "brown"),
    "plant": Category((0.3, 0.45), (0.3, 0.45), (0.8, 1.5), "green"),
}


@dataclass(frozen=True)
class Group:
    """Pieces that come together (``items``), present between ``low`` and ``high`` times."""

    items: tuple[str, ...]
    low: int
    high: int


#: Furniture templates per room type: the first ``low`` copies of each group are always there.
TEMPLATES: dict[str, tuple[Group, ...]] = {
    "bedroom": (
        Group(("bed",), 1, 1),
        Group(("nightstand",), 1, 2),
        Group(("wardrobe",), 0, 2),
        Group(("desk", "chair"), 0, 1),
        Group(("dresser",), 0, 1),
        Group(("bookshelf",), 0, 1),
        Group(("armchair",), 0, 1),
        Group(("plant",), 0, 2),
    ),
    "living": (
        Group(("sofa",), 1, 2),
        Group(("coffee_table",), 1, 1),
        Group(("tv_stand",), 1, 1),
        Group(("armchair",), 0, 3),
        Group(("bookshelf",), 0, 2),
        Group(("side_table",), 0, 2),
        Group(("sideboard",), 0, 1),
        Group(("desk", "chair"), 0, 1),
        Group(("plant",), 0, 2),
    ),
    "dining": (
        Group(("dining_table",), 1, 1),
        Group(("chair",), 4, 6),
        Group(("sideboard",), 0, 2),
        Group(("bookshelf",), 0, 2),
        Group(("armchair",), 0, 2),
        Group(("side_table",), 0, 1),
        Group(("plant",), 0, 2),
    ),
    "office": (
        Group(("desk", "chair"), 1, 2),
        Group(("bookshelf",), 1, 3),
        Group(("filing_cabinet",), 0, 2),
        Group(("armchair",), 0, 1),
        Group(("sofa",), 0, 1),
        Group(("side_table",), 0, 1),
        Group(("plant",), 0, 2),
    ),
}

#: Bounding-box side ranges per room type: (long side (lo, hi), short side (lo, hi)) in metres.
ROOM_SIZES: dict[str, tuple[tuple[float, float], tuple[float, float]]] = {
    "bedroom": ((3.6, 5.0), (3.2, 4.5)),
    "living": ((4.0, 6.0), (3.5, 5.0)),
    "dining": ((3.4, 5.0), (3.0, 4.2)),
    "office": ((3.0, 5.0), (3.0, 4.0)),
}
#: Smallest sides of an L-shape's bounding box (long, short), so the arms stay usable.
L_MIN_SIDES = (4.0, 3.6)

#: Colours of the non-furniture parts of a rendered scene.
WALL_COLOR = (0.86, 0.84, 0.78)
WINDOW_COLOR = (0.62, 0.80, 0.92)
PROXY_COLOR = PALETTE["cyan"]
FLOOR = GroundPlane(color=(0.66, 0.60, 0.52), color2=(0.58, 0.53, 0.46), checker=0.5)


def _q(value: float, step: float = 0.1) -> float:
    """``value`` rounded to a multiple of ``step`` (0.1 m by default)."""
    return round(round(float(value) / step) * step, 6)


def _check_density(density: object) -> float:
    """A density name from :data:`DENSITIES` or a fraction in (0, 0.6]."""
    if isinstance(density, str):
        return DENSITIES[check_choice("density", density, tuple(DENSITIES))]
    return check_float("density", density, minimum=0.0, maximum=0.6, strict_min=True)


def _check_size(size: object) -> tuple[float, float]:
    if isinstance(size, str) or not hasattr(size, "__len__") or len(size) != 2:  # type: ignore[arg-type]
        raise ValueError(f"size must be (x extent, y extent) in metres or None; got {size!r}")
    lo, hi = SIZE_RANGE
    w, d = (check_float(f"size[{i}]", v, minimum=lo, maximum=hi) for i, v in enumerate(size))  # type: ignore[arg-type]
    if min(w, d) > SHORT_SIDE_MAX:
        raise ValueError(f"size must have its shorter side <= {SHORT_SIDE_MAX} m; got {(w, d)}")
    return w, d


def _l_outline(
    w: float, d: float, corner: int, nx: float, ny: float
) -> tuple[tuple[tuple[float, float], ...], tuple[float, float, float, float]]:
    """The CCW outline of ``[0, w] x [0, d]`` minus an ``nx x ny`` notch at bounding-box corner ``corner``.

    Corners are numbered counter-clockwise from ``(0, 0)``; the notch corner is replaced by the notch's
    three other vertices (the point on the incoming edge, the inner corner, the point on the outgoing edge).
    """
    box = [(0.0, 0.0), (w, 0.0), (w, d), (0.0, d)]
    cx, cy = box[corner]
    sx = -1.0 if cx > 0 else 1.0  # from the corner into the box
    sy = -1.0 if cy > 0 else 1.0
    inner = (cx + sx * nx, cy + sy * ny)
    prev = box[corner - 1]
    on_prev = (inner[0], cy) if prev[1] == cy else (cx, inner[1])  # incoming edge is horizontal or vertical
    on_next = (cx, inner[1]) if prev[1] == cy else (inner[0], cy)
    outline = box[:corner] + [on_prev, inner, on_next] + box[corner + 1 :]
    notch = (min(cx, inner[0]), min(cy, inner[1]), max(cx, inner[0]), max(cy, inner[1]))
    return tuple(outline), notch


def _rect_inside(room: Room, center: np.ndarray, size: np.ndarray) -> bool:
    """Whether the axis-aligned square (center, (w, w)) lies in the room (corners in, clear of the notch)."""
    half = size[0] / 2.0
    lo, hi = center - half, center + half
    corners = np.array([[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]]])
    if not np.all(room.contains(corners, tol=1e-9)):
        return False
    if room.notch is not None:
        x0, y0, x1, y1 = room.notch
        if lo[0] < x1 - 1e-9 and hi[0] > x0 + 1e-9 and lo[1] < y1 - 1e-9 and hi[1] > y0 + 1e-9:
            return False
    return True


def _sample_geometry(
    rng: np.random.Generator, room_type: str, shape: str | None, size: tuple[float, float] | None
) -> Room:
    """The outline, notch, door and windows of one room.

    The shape and size draws are made whatever ``shape`` and ``size`` say, so an explicit ``shape`` equal to
    the drawn one gives the same room.
    """
    drawn_shape = SHAPES[int(rng.random() < L_PROBABILITY)]
    shape = drawn_shape if shape is None else shape
    (long_lo, long_hi), (short_lo, short_hi) = ROOM_SIZES[room_type]
    if shape == "L":
        long_lo, short_lo = (
            min(max(long_lo, L_MIN_SIDES[0]), long_hi),
            min(max(short_lo, L_MIN_SIDES[1]), short_hi),
        )
    long_side = _q(rng.uniform(long_lo, long_hi))
    short_side = min(_q(rng.uniform(short_lo, short_hi)), long_side)
    turned = bool(rng.random() < 0.5)
    w, d = (short_side, long_side) if turned else (long_side, short_side)
    if size is not None:
        w, d = size
    corner = int(rng.integers(4))
    fx, fy = rng.uniform(0.3, 0.5, size=2)
    if shape == "L":
        nx = max(min(_q(fx * w), w - MIN_ARM), 0.5)
        ny = max(min(_q(fy * d), d - MIN_ARM), 0.5)
        outline, notch = _l_outline(w, d, corner, nx, ny)
    else:
        outline, notch = ((0.0, 0.0), (w, 0.0), (w, d), (0.0, d)), None
    bare = Room(room_type, outline, notch)
    start, end, _ = bare.walls()
    length = np.linalg.norm(end - start, axis=1)

    door = None
    for _ in range(100):
        width = float(rng.uniform(*DOOR_WIDTH))
        k = int(rng.integers(len(outline)))
        u = float(rng.random())
        room_for = length[k] - width - 2 * DOOR_MARGIN
        if room_for < 0.0:
            continue
        candidate = Door.on_segment(k, start[k], end[k], DOOR_MARGIN + width / 2.0 + u * room_for, width)
        zone_center, zone_size, _ = candidate.swing_zone()
        if _rect_inside(bare, zone_center, zone_size):
            door = candidate
            break
    if door is None:  # pragma: no cover - every generated room has a wall long enough
        raise RuntimeError("no wall could hold the door")

    n_windows = int(rng.integers(3))
    order = rng.permutation(len(outline))
    windows = []
    for k in order:
        width = float(rng.uniform(*WINDOW_WIDTH))
        u = float(rng.random())
        room_for = length[k] - width - 2 * WINDOW_MARGIN
        if len(windows) == n_windows or k == door.wall or room_for < 0.0:
            continue
        windows.append(
            Window.on_segment(int(k), start[k], end[k], WINDOW_MARGIN + width / 2.0 + u * room_for, width)
        )
    windows.sort(key=lambda win: win.wall)
    return Room(room_type, outline, notch, (door,), tuple(windows))


def _sample_piece(rng: np.random.Generator, category: str) -> tuple[str, tuple[float, float, float]]:
    spec = CATEGORIES[category]
    w, d, h = (float(rng.uniform(*r)) for r in (spec.width, spec.depth, spec.height))
    return category, (round(w, 3), round(d, 3), round(h, 3))


def _sample_furniture(
    rng: np.random.Generator, room_type: str, area: float, target: float
) -> tuple[Furniture, ...]:
    """Mandatory groups, then the prefix of shuffled optional groups whose coverage is nearest ``target``."""
    mandatory, optional = [], []
    for group in TEMPLATES[room_type]:
        for r in range(group.high):
            pieces = [_sample_piece(rng, c) for c in group.items]
            (mandatory if r < group.low else optional).append(pieces)
    optional = [optional[i] for i in rng.permutation(len(optional))]
    covered = sum(w * d for g in mandatory for _, (w, d, _h) in g) / area
    best_k, best_gap = 0, abs(covered - target)
    for k, g in enumerate(optional, start=1):
        covered += sum(w * d for _, (w, d, _h) in g) / area
        if abs(covered - target) < best_gap:
            best_k, best_gap = k, abs(covered - target)
    counts: dict[str, int] = {}
    furniture = []
    for category, size in (p for g in mandatory + optional[:best_k] for p in g):
        counts[category] = counts.get(category, 0) + 1
        furniture.append(Furniture(category, size, name=f"{category}_{counts[category]}"))
    return tuple(furniture)


def sample_room(
    room_type: str,
    seed: int,
    *,
    density: str | float = "medium",
    shape: str | None = None,
    size: tuple[float, float] | None = None,
) -> tuple[Room, tuple[Furniture, ...]]:
    """A seeded room of ``room_type`` and its unplaced furniture (every pose ``(0, 0, 0)``).

    ``density``: ``"sparse"``, ``"medium"``, ``"dense"`` (0.15 / 0.25 / 0.35) or a fraction in (0, 0.6],
    the target of :func:`coverage`. ``shape``: ``"rectangle"``, ``"L"`` or ``None`` (drawn, L with
    probability :data:`L_PROBABILITY`). ``size``: the bounding box ``(x extent, y extent)`` in metres (each
    in [3, 6], the shorter at most 5), or ``None`` to draw it per type (:data:`ROOM_SIZES`). The same
    arguments always give the same room and furniture; the density never changes the room.
    """
    check_choice("room_type", room_type, ROOM_TYPES)
    seed = check_seed("seed", seed)
    target = _check_density(density)
    if shape is not None:
        check_choice("shape", shape, SHAPES)
    size = None if size is None else _check_size(size)
    t = ROOM_TYPES.index(room_type)
    room = _sample_geometry(np.random.default_rng(sub_seed(seed, t, 0)), room_type, shape, size)
    furniture = _sample_furniture(np.random.default_rng(sub_seed(seed, t, 1)), room_type, room.area, target)
    return room, furniture


def coverage(room: Room, furniture: tuple[Furniture, ...]) -> float:
    """The floor fraction covered by footprints, ``sum_i w_i d_i / area(room)`` (overlaps count twice)."""
    if not isinstance(room, Room):
        raise TypeError(f"room must be a Room; got {type(room).__name__}")
    return float(sum(f.footprint_area for f in furniture) / room.area)


def category_color(category: str) -> tuple[float, float, float]:
    """The render colour of a category (grey for one not in :data:`CATEGORIES`)."""
    spec = CATEGORIES.get(category)
    return (0.6, 0.6, 0.6) if spec is None else PALETTE[spec.color]


def _wall_boxes(room: Room, first_id: int) -> list[Box]:
    """Thin wall boxes outside the outline, closed at convex corners, with gaps for doors and windows."""
    start, end, normal = room.walls()
    convex = room.convex_corners()
    t = WALL_THICKNESS
    boxes: list[Box] = []

    def add(line0, along, a, b, base, top, color=WALL_COLOR, semantic="wall", thickness=t):
        """The wall piece ``a <= s <= b`` of the line ``line0 + s along``, ``base <= Y <= top``."""
        if b - a <= 1e-9 or top - base <= 1e-9:
            return
        p0, p1 = line0 + along * a, line0 + along * b
        boxes.append(
            wall(
                (float(p0[0]), float(p0[1])),
                (float(p1[0]), float(p1[1])),
                height=top - base,
                thickness=thickness,
                base=base,
                color=color,
                instance_id=first_id + len(boxes),
                semantic=semantic,
            )
        )

    for k in range(len(start)):
        ext0 = t if convex[k] else 0.0
        ext1 = t if convex[(k + 1) % len(start)] else 0.0
        seg_len = float(np.linalg.norm(end[k] - start[k]))
        along = (end[k] - start[k]) / seg_len
        line0 = start[k] - along * ext0 - normal[k] * t / 2.0  # the wall's centre line starts here
        openings = []
        for kind, items in (("door", room.doors), ("window", room.windows)):
            for item in items:
                if item.wall == k:
                    mid = float((np.array(item.center) - start[k]) @ along) + ext0
                    openings.append((mid - item.width / 2.0, mid + item.width / 2.0, kind))
        openings.sort()
        cursor = 0.0
        for a, b, kind in openings:
            add(line0, along, cursor, a, 0.0, WALL_HEIGHT)
            if kind == "door":
                add(line0, along, a, b, DOOR_HEIGHT, WALL_HEIGHT)
            else:
                add(line0, along, a, b, 0.0, WINDOW_SILL)
                add(line0, along, a, b, WINDOW_SILL, WINDOW_TOP, WINDOW_COLOR, "window", t / 2.0)
                add(line0, along, a, b, WINDOW_TOP, WALL_HEIGHT)
            cursor = max(cursor, b)
        add(line0, along, cursor, ext0 + seg_len + ext1, 0.0, WALL_HEIGHT)
    return boxes


def _check_proxies(proxies: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not isinstance(proxies, tuple | list) or len(proxies) != 3:
        raise TypeError("proxies must be a tuple (center (m, 2), size (m, 2), theta (m,)) or None")
    center = check_array("proxies center", np.asarray(proxies[0], dtype=float), shape=(None, 2))
    m = center.shape[0]
    size = check_array("proxies size", np.asarray(proxies[1], dtype=float), shape=(m, 2))
    theta = check_array("proxies theta", np.asarray(proxies[2], dtype=float), shape=(m,))
    if np.any(size <= 0.0):
        raise ValueError("proxies size must be > 0")
    return center, size, theta


def to_scene(layout: Layout, *, proxies: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> Scene:
    """A :class:`neurips26.world.Scene` of ``layout``: floor, walls with openings, furniture, proxy mats.

    Floor ``(x, y)`` is world ``(X, Z)``. Furniture ``i`` is ``oriented_box((x, h/2, y), (w, h, d),
    90 - degrees(theta))`` with instance id ``i + 1`` and semantic = its category; walls and windows follow,
    then each proxy ``(center (m, 2), size (m, 2) = (w, d), theta (m,))`` as a 2 cm high mat (semantic
    ``"proxy"``). The ground plane has id 0.
    """
    if not isinstance(layout, Layout):
        raise TypeError(f"layout must be a Layout; got {type(layout).__name__}")
    boxes: list[Box] = []
    for i, f in enumerate(layout.furniture):
        x, y, theta = f.pose
        w, d, h = f.size
        boxes.append(
            oriented_box(
                (x, h / 2.0, y),
                (w, h, d),
                90.0 - math.degrees(theta),
                color=category_color(f.category),
                instance_id=i + 1,
                semantic=f.category,
            )
        )
    boxes += _wall_boxes(layout.room, len(boxes) + 1)
    if proxies is not None:
        center, size, theta = _check_proxies(proxies)
        for c, s, th in zip(center, size, theta, strict=True):
            boxes.append(
                oriented_box(
                    (float(c[0]), MAT_HEIGHT / 2.0, float(c[1])),
                    (float(s[0]), MAT_HEIGHT, float(s[1])),
                    90.0 - math.degrees(float(th)),
                    color=PROXY_COLOR,
                    instance_id=len(boxes) + 1,
                    semantic="proxy",
                )
            )
    return Scene(tuple(boxes), FLOOR)


__all__ = [
    "CATEGORIES",
    "DENSITIES",
    "DOOR_HEIGHT",
    "DOOR_MARGIN",
    "DOOR_WIDTH",
    "L_MIN_SIDES",
    "L_PROBABILITY",
    "MAT_HEIGHT",
    "MIN_ARM",
    "ROOM_SIZES",
    "SHAPES",
    "SHORT_SIDE_MAX",
    "SIZE_RANGE",
    "TEMPLATES",
    "WALL_HEIGHT",
    "WALL_THICKNESS",
    "WINDOW_MARGIN",
    "WINDOW_SILL",
    "WINDOW_TOP",
    "WINDOW_WIDTH",
    "Category",
    "Group",
    "category_color",
    "coverage",
    "sample_room",
    "to_scene",
]
