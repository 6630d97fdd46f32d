"""Seeded scene generators: voxel stacks, tabletops, furnished rooms and mazes.

Each generator returns a small dataclass holding the :class:`~neurips26.world.scene.Scene` and the
ground truth a chapter needs besides the pixels (the voxel height map, the table's objects and their
colour names, the room's door cell and occupancy grid, the maze's wall grid and landmarks), plus a
``camera`` method that frames the scene. The same seed gives the same scene, bit for bit
(``a.scene.to_json() == b.scene.to_json()``).

Lengths are in metres except for voxels (unit cubes by default). Colours come from :data:`PALETTE`,
a set of saturated, mutually distinct named colours, so a task can say "the red block".
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from neurips26.validation import check_choice, check_float, check_int, check_seed
from neurips26.world.camera import Camera, look_at, pinhole, spherical_pose
from neurips26.world.render import OccupancyMap, occupancy_map
from neurips26.world.scene import Box, GroundPlane, Scene, box_from_bounds, oriented_box, voxel, wall

PALETTE: dict[str, tuple[float, float, float]] = {
    "red": (0.86, 0.15, 0.15),
    "green": (0.16, 0.66, 0.22),
    "blue": (0.16, 0.32, 0.86),
    "yellow": (0.95, 0.85, 0.15),
    "orange": (0.96, 0.55, 0.10),
    "purple": (0.56, 0.26, 0.76),
    "cyan": (0.15, 0.76, 0.80),
    "pink": (0.96, 0.52, 0.72),
    "brown": (0.55, 0.35, 0.20),
    "white": (0.93, 0.93, 0.93),
}
CUBE_COLOR = (0.86, 0.58, 0.30)
FLOOR = GroundPlane(color=(0.62, 0.60, 0.56), color2=(0.50, 0.48, 0.45), checker=0.5)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(check_seed("seed", seed))


# ----------------------------------------------------------------------------------------------
# voxel stacks (chapter 15)


@dataclass(frozen=True, eq=False)
class VoxelStack:
    """Cubes stacked in the columns of a ``grid x grid`` board.

    ``heights[i, j]`` is the number of cubes in column ``(i, j)`` (``i`` along ``+X``, ``j`` along ``+Z``);
    ``ids[i, j, k]`` the instance id of the cube at layer ``k`` (``-1`` if empty). Column ``(i, j)``
    covers ``x in origin_x + size [i, i + 1]``, ``z in origin_z + size [j, j + 1]``, layer ``k`` covers
    ``y in size [k, k + 1]``; the board is centred on the world origin.
    """

    scene: Scene
    heights: np.ndarray
    ids: np.ndarray
    cube_size: float

    @property
    def n_cubes(self) -> int:
        return int(self.heights.sum())

    @property
    def occupancy(self) -> np.ndarray:
        """(grid, grid, max_height) bool: ``occupancy[i, j, k] = k < heights[i, j]``."""
        return self.ids >= 0

    def camera(
        self, width: int = 64, height: int = 64, *, azimuth_deg: float = 30.0, elevation_deg: float = 30.0
    ) -> Camera:
        """A pinhole camera (50 degree FOV) aimed at the middle of the stack from the given direction."""
        grid, max_h = self.ids.shape[0], self.ids.shape[2]
        target = (0.0, max_h * self.cube_size / 3.0, 0.0)
        dist = 2.4 * self.cube_size * max(grid, max_h)
        return pinhole(width, height, 50.0, spherical_pose(target, dist, azimuth_deg, elevation_deg))


def voxel_scene(
    heights: np.ndarray,
    *,
    max_height: int | None = None,
    cube_size: float = 1.0,
    colors: str = "uniform",
    seed: int = 0,
) -> VoxelStack:
    """The stack with column heights ``heights`` (square int array): gravity holds by construction.

    ``colors="uniform"`` paints every cube :data:`CUBE_COLOR` (identical objects, as in Spatial-IQ);
    ``"random"`` gives each cube a seeded random colour. Cube ids are ``1, 2, ...`` in ``(i, j, k)``
    order; the ground has id 0.
    """
    h = np.asarray(heights)
    if h.ndim != 2 or h.shape[0] != h.shape[1] or h.dtype.kind not in "iu":
        raise ValueError(f"heights must be a square 2-D int array; got shape {h.shape}, dtype {h.dtype}")
    if np.any(h < 0):
        raise ValueError("heights must be non-negative")
    top = int(h.max(initial=0)) if max_height is None else check_int("max_height", max_height, minimum=1)
    if np.any(h > top):
        raise ValueError(f"heights must be <= max_height={top}; got max {int(h.max())}")
    cube_size = check_float("cube_size", cube_size, minimum=0.0, strict_min=True)
    check_choice("colors", colors, ("uniform", "random"))
    rng = _rng(seed)
    grid = h.shape[0]
    origin = (-grid * cube_size / 2.0, 0.0, -grid * cube_size / 2.0)
    ids = np.full((grid, grid, max(top, 1)), -1, dtype=np.int64)
    boxes = []
    for i in range(grid):
        for j in range(grid):
            for k in range(int(h[i, j])):
                color = (
                    CUBE_COLOR if colors == "uniform" else tuple(float(c) for c in rng.uniform(0.1, 0.95, 3))
                )
                ids[i, j, k] = len(boxes) + 1
                boxes.append(
                    voxel((i, k, j), size=cube_size, origin=origin, color=color, instance_id=len(boxes) + 1)
                )
    scene = Scene(
        tuple(boxes), GroundPlane(color=(0.55, 0.57, 0.55), color2=(0.47, 0.49, 0.47), checker=cube_size)
    )
    return VoxelStack(scene, h.astype(np.int64).copy(), ids, cube_size)


def voxel_stack(
    grid: int = 4,
    max_height: int = 4,
    n_cubes: int | None = None,
    seed: int = 0,
    *,
    cube_size: float = 1.0,
    colors: str = "uniform",
) -> VoxelStack:
    """A random stack of ``n_cubes`` cubes on a ``grid x grid`` board, at most ``max_height`` high.

    As in Spatial-IQ's generator, ``n_cubes`` distinct slots of the ``grid x grid x max_height``
    volume are drawn uniformly and each column's height is the number of slots drawn in it, so every
    cube rests on the ground or on the cube directly below. ``n_cubes=None`` draws it uniformly from
    ``1 .. grid * grid * max_height``.
    """
    grid = check_int("grid", grid, minimum=1)
    max_height = check_int("max_height", max_height, minimum=1)
    capacity = grid * grid * max_height
    rng = _rng(seed)
    n = int(rng.integers(1, capacity + 1)) if n_cubes is None else check_int("n_cubes", n_cubes, minimum=0)
    if n > capacity:
        raise ValueError(f"n_cubes must be <= grid * grid * max_height = {capacity}; got {n}")
    slots = rng.choice(capacity, size=n, replace=False)
    heights = np.bincount(slots // max_height, minlength=grid * grid).reshape(grid, grid)
    return voxel_scene(
        heights,
        max_height=max_height,
        cube_size=cube_size,
        colors=colors,
        seed=int(rng.integers(2**31)),
    )


# ----------------------------------------------------------------------------------------------
# tabletop (chapter 17)


@dataclass(frozen=True, eq=False)
class Tabletop:
    """Objects on a table. ``object_ids[n]`` has colour ``color_names[n]`` and edge ``sizes[n]``."""

    scene: Scene
    table_id: int
    object_ids: tuple[int, ...]
    color_names: tuple[str, ...]
    sizes: tuple[float, ...]
    table_height: float
    table_extent: tuple[float, float]

    def camera(
        self, width: int = 64, height: int = 64, *, elevation_deg: float = 35.0, azimuth_deg: float = 0.0
    ) -> Camera:
        """A pinhole camera (55 degree FOV) looking down at the table centre at ``elevation_deg``."""
        dist = 1.25 * max(self.table_extent)
        pose = spherical_pose((0.0, self.table_height, 0.0), dist, azimuth_deg, elevation_deg)
        return pinhole(width, height, 55.0, pose)


def tabletop(
    n_objects: int = 3,
    seed: int = 0,
    *,
    table_extent: tuple[float, float] = (1.0, 0.7),
    table_height: float = 0.75,
    size_range: tuple[float, float] = (0.06, 0.18),
    legs: bool = True,
    max_tries: int = 1000,
) -> Tabletop:
    """``n_objects`` boxes of distinct colours and distinct sizes on a table (``Y = table_height``).

    Footprint edges are drawn without replacement from 8 evenly spaced values in ``size_range``
    (so any two differ by at least a seventh of the range); heights are the edge times a random
    aspect in [0.8, 2]; yaws are random; footprints never overlap (rejection sampling on the
    objects' circumscribed circles, at least 2 cm apart and 3 cm from the table edge).
    """
    n = check_int("n_objects", n_objects, minimum=1, maximum=min(8, len(PALETTE)))
    rng = _rng(seed)
    tw, td = (
        check_float(f"table_extent[{k}]", v, minimum=0.0, strict_min=True) for k, v in enumerate(table_extent)
    )
    th = check_float("table_height", table_height, minimum=0.0, strict_min=True)
    lo, hi = (
        check_float(f"size_range[{k}]", v, minimum=0.0, strict_min=True) for k, v in enumerate(size_range)
    )
    if not hi > lo:
        raise ValueError(f"size_range must have low < high; got {size_range}")
    max_tries = check_int("max_tries", max_tries, minimum=1)

    top_thick = 0.04
    boxes: list[Box] = [
        box_from_bounds(
            (-tw / 2, th - top_thick, -td / 2),
            (tw / 2, th, td / 2),
            color=(0.62, 0.45, 0.30),
            instance_id=1,
            semantic="table",
        )
    ]
    if legs and th > top_thick:
        leg = 0.05
        for n_leg, (sx, sz) in enumerate(((-1, -1), (-1, 1), (1, -1), (1, 1))):
            x, z = sx * (tw / 2 - leg), sz * (td / 2 - leg)
            boxes.append(
                box_from_bounds(
                    (x - leg / 2, 0.0, z - leg / 2),
                    (x + leg / 2, th - top_thick, z + leg / 2),
                    color=(0.50, 0.36, 0.24),
                    instance_id=2 + n_leg,
                    semantic="table_leg",
                )
            )
    names = [str(c) for c in rng.choice(list(PALETTE)[:8], size=n, replace=False)]
    sizes = [float(s) for s in rng.choice(np.linspace(lo, hi, 8), size=n, replace=False)]
    placed: list[tuple[float, float, float]] = []  # (x, z, radius)
    first_id = len(boxes) + 1
    for k in range(n):
        edge = sizes[k]
        radius = edge / math.sqrt(2.0)
        for _ in range(max_tries):
            x = rng.uniform(-tw / 2 + radius + 0.03, tw / 2 - radius - 0.03)
            z = rng.uniform(-td / 2 + radius + 0.03, td / 2 - radius - 0.03)
            if all(math.hypot(x - px, z - pz) >= radius + pr + 0.02 for px, pz, pr in placed):
                break
        else:
            raise RuntimeError(f"could not place {n} objects without overlap; lower n_objects or size_range")
        placed.append((x, z, radius))
        height = edge * float(rng.uniform(0.8, 2.0))
        boxes.append(
            oriented_box(
                (x, th + height / 2, z),
                (edge, height, edge),
                float(rng.uniform(0.0, 90.0)),
                color=PALETTE[names[k]],
                instance_id=first_id + k,
                semantic="block",
            )
        )
    scene = Scene(tuple(boxes), FLOOR)
    return Tabletop(
        scene,
        table_id=1,
        object_ids=tuple(range(first_id, first_id + n)),
        color_names=tuple(names),
        sizes=tuple(sizes),
        table_height=th,
        table_extent=(tw, td),
    )


# ----------------------------------------------------------------------------------------------
# rooms (chapters 07, 16, 18)

FURNITURE: dict[str, tuple[tuple[float, float], tuple[float, float], tuple[float, float]]] = {
    # category: (width range, height range, depth range) in metres, before the yaw
    "bed": ((1.4, 1.8), (0.45, 0.6), (1.9, 2.1)),
    "sofa": ((1.6, 2.0), (0.75, 0.9), (0.8, 0.95)),
    "table": ((0.8, 1.4), (0.72, 0.78), (0.7, 0.9)),
    "chair": ((0.42, 0.5), (0.85, 0.95), (0.42, 0.5)),
    "wardrobe": ((0.9, 1.2), (1.8, 2.0), (0.55, 0.62)),
    "shelf": ((0.8, 1.0), (1.5, 1.8), (0.3, 0.36)),
    "desk": ((1.0, 1.4), (0.72, 0.78), (0.6, 0.7)),
    "cabinet": ((0.5, 0.8), (0.8, 1.0), (0.4, 0.5)),
    "plant": ((0.3, 0.4), (0.8, 1.2), (0.3, 0.4)),
}
WALL_COLORS = ((0.80, 0.74, 0.62), (0.62, 0.72, 0.80), (0.78, 0.66, 0.70), (0.68, 0.78, 0.64))
SIDES: tuple[str, ...] = ("north", "south", "east", "west")  # +Z, -Z, +X, -X


@dataclass(frozen=True, eq=False)
class Room:
    """A rectangular room with one door and furniture.

    ``interior = (x_min, x_max, z_min, z_max)`` is the floor inside the walls; the door is a gap of
    ``door_width`` in the wall on ``door_side``, centred at ``door_center = (x, z)`` on the wall's
    inner face. ``occupancy`` is the top-down grid of the interior (furniture below the door
    height), ``door_cell`` the grid cell just inside the door; every free cell connects to it.
    """

    scene: Scene
    interior: tuple[float, float, float, float]
    door_side: str
    door_center: tuple[float, float]
    door_width: float
    door_cell: tuple[int, int]
    occupancy: OccupancyMap
    furniture_ids: tuple[int, ...]
    wall_ids: tuple[int, ...]

    def camera(
        self, width: int = 64, height: int = 64, *, fov_deg: float = 75.0, eye_height: float = 1.6
    ) -> Camera:
        """A pinhole camera in a free corner (the farthest from the door), looking at the room centre."""
        x0, x1, z0, z1 = self.interior
        corners = [(x, z) for x in (x0 + 0.3, x1 - 0.3) for z in (z0 + 0.3, z1 - 0.3)]
        free = [c for c in corners if not self.occupancy.occupied[self.occupancy.cell_of(*c)]]
        dx, dz = self.door_center
        ex, ez = max(free or corners, key=lambda c: (c[0] - dx) ** 2 + (c[1] - dz) ** 2)
        centre = ((x0 + x1) / 2, 0.8, (z0 + z1) / 2)
        return pinhole(width, height, fov_deg, look_at((ex, eye_height, ez), centre))


def _door_reachable(occ: np.ndarray, door_cell: tuple[int, int]) -> bool:
    """True when the door cell is free and every free cell is 4-connected to it (breadth-first flood)."""
    free = ~occ
    if not free[door_cell]:
        return False
    seen = np.zeros_like(free)
    seen[door_cell] = True
    queue = deque([door_cell])
    rows, cols = free.shape
    while queue:
        r, c = queue.popleft()
        for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= nr < rows and 0 <= nc < cols and free[nr, nc] and not seen[nr, nc]:
                seen[nr, nc] = True
                queue.append((nr, nc))
    return bool(np.array_equal(seen, free))


def room(
    seed: int = 0,
    *,
    width: float = 5.0,
    depth: float = 4.0,
    n_furniture: int = 4,
    wall_height: float = 2.5,
    wall_thickness: float = 0.1,
    door_width: float = 0.9,
    door_height: float = 2.1,
    cell: float = 0.1,
    max_tries: int = 500,
) -> Room:
    """A ``width x depth`` room (centred on the origin) with a door and ``n_furniture`` boxes.

    Walls are thin boxes of four distinct colours outside the interior; the door is a gap on a random
    side (with a lintel above ``door_height``). Furniture categories come from :data:`FURNITURE`,
    turned by a multiple of 90 degrees, inside the walls, never overlapping each other. A layout is
    kept only if, on the occupancy grid of side ``cell``, the cell inside the door is free and every
    free cell of the interior is 4-connected to it (the door is reachable from anywhere in the room);
    otherwise the furniture is resampled (up to ``max_tries`` layouts).
    """
    rng = _rng(seed)
    width = check_float("width", width, minimum=1.5)
    depth = check_float("depth", depth, minimum=1.5)
    n_furniture = check_int("n_furniture", n_furniture, minimum=0, maximum=12)
    wall_height = check_float("wall_height", wall_height, minimum=0.0, strict_min=True)
    wall_thickness = check_float("wall_thickness", wall_thickness, minimum=0.0, strict_min=True)
    door_width = check_float("door_width", door_width, minimum=0.0, strict_min=True)
    door_height = check_float("door_height", door_height, minimum=0.0, strict_min=True, maximum=wall_height)
    cell = check_float("cell", cell, minimum=0.0, strict_min=True)
    max_tries = check_int("max_tries", max_tries, minimum=1)
    x0, x1, z0, z1 = -width / 2, width / 2, -depth / 2, depth / 2
    t = wall_thickness

    side = SIDES[int(rng.integers(4))]
    along = width if side in ("north", "south") else depth
    margin = 0.2
    if door_width + 2 * margin > along:
        raise ValueError(f"door_width must leave {margin} m of wall each side; got {door_width} on {along} m")
    offset = float(rng.uniform(-along / 2 + margin + door_width / 2, along / 2 - margin - door_width / 2))

    # walls: north/south span the full outer width (closing the corners), east/west the interior depth
    segments = {
        "north": ((x0 - t, z1 + t / 2), (x1 + t, z1 + t / 2)),
        "south": ((x0 - t, z0 - t / 2), (x1 + t, z0 - t / 2)),
        "east": ((x1 + t / 2, z0), (x1 + t / 2, z1)),
        "west": ((x0 - t / 2, z0), (x0 - t / 2, z1)),
    }
    boxes: list[Box] = []
    wall_ids = []

    def add_wall(start, end, color, base=0.0, height=wall_height):
        wall_ids.append(len(boxes) + 1)
        boxes.append(
            wall(start, end, height=height, thickness=t, base=base, color=color, instance_id=len(boxes) + 1)
        )

    for n_side, name in enumerate(SIDES):
        (sx, sz), (ex, ez) = segments[name]
        color = WALL_COLORS[n_side]
        if name != side:
            add_wall((sx, sz), (ex, ez), color)
            continue
        horizontal = name in ("north", "south")
        a0, a1 = (sx, ex) if horizontal else (sz, ez)
        gap0, gap1 = offset - door_width / 2, offset + door_width / 2

        def point(a, sx=sx, sz=sz, horizontal=horizontal):
            return (a, sz) if horizontal else (sx, a)

        add_wall(point(a0), point(gap0), color)
        add_wall(point(gap1), point(a1), color)
        if door_height < wall_height:
            add_wall(point(gap0), point(gap1), color, base=door_height, height=wall_height - door_height)
    door_center = {
        "north": (offset, z1),
        "south": (offset, z0),
        "east": (x1, offset),
        "west": (x0, offset),
    }[side]

    # keep-out in front of the door (a door leaf's swing), so no layout starts with a blocked door
    inward = {"north": (0.0, -1.0), "south": (0.0, 1.0), "east": (-1.0, 0.0), "west": (1.0, 0.0)}[side]
    dcx, dcz = door_center[0] + inward[0] * door_width / 2, door_center[1] + inward[1] * door_width / 2
    keep_out = (dcx - door_width / 2, dcx + door_width / 2, dcz - door_width / 2, dcz + door_width / 2)

    walls_only = Scene(tuple(boxes), FLOOR)
    categories = list(FURNITURE)
    colors = list(PALETTE.values())
    bounds = (x0, x1, z0, z1)
    for _ in range(max_tries):
        furniture = _furniture_layout(rng, n_furniture, categories, colors, bounds, keep_out, len(boxes) + 1)
        if furniture is None:
            continue
        scene = walls_only.with_boxes(furniture)
        occ = occupancy_map(scene, cell, bounds=bounds, y_range=(0.0, door_height))
        # the cell just inside the door centre
        row, col = occ.cell_of(door_center[0] + inward[0] * cell / 2, door_center[1] + inward[1] * cell / 2)
        door_cell = (int(np.clip(row, 0, occ.shape[0] - 1)), int(np.clip(col, 0, occ.shape[1] - 1)))
        if _door_reachable(occ.occupied, door_cell):
            return Room(
                scene,
                interior=bounds,
                door_side=side,
                door_center=door_center,
                door_width=door_width,
                door_cell=door_cell,
                occupancy=occ,
                furniture_ids=tuple(b.instance_id for b in furniture),
                wall_ids=tuple(wall_ids),
            )
    raise RuntimeError(
        f"no layout of n_furniture={n_furniture} kept the door reachable in {max_tries} tries; "
        "use fewer pieces or a larger room"
    )


def _furniture_layout(
    rng: np.random.Generator,
    n: int,
    categories: list[str],
    colors: list[tuple[float, float, float]],
    bounds: tuple[float, float, float, float],
    keep_out: tuple[float, float, float, float],
    first_id: int,
) -> list[Box] | None:
    """One random non-overlapping layout, or None when a piece finds no place in 50 attempts."""
    x0, x1, z0, z1 = bounds
    rects = [keep_out]
    out = []
    for k in range(n):
        name = categories[int(rng.integers(len(categories)))]
        (w_lo, w_hi), (h_lo, h_hi), (d_lo, d_hi) = FURNITURE[name]
        w, h, d = rng.uniform(w_lo, w_hi), rng.uniform(h_lo, h_hi), rng.uniform(d_lo, d_hi)
        yaw = 90.0 * int(rng.integers(4))
        fx, fz = (w, d) if yaw in (0.0, 180.0) else (d, w)  # footprint along x, z after the quarter turn
        if fx >= x1 - x0 or fz >= z1 - z0:
            return None
        for _ in range(50):
            cx = rng.uniform(x0 + fx / 2, x1 - fx / 2)
            cz = rng.uniform(z0 + fz / 2, z1 - fz / 2)
            r = (cx - fx / 2, cx + fx / 2, cz - fz / 2, cz + fz / 2)
            if all(r[1] <= q[0] or q[1] <= r[0] or r[3] <= q[2] or q[3] <= r[2] for q in rects):
                break
        else:
            return None
        rects.append(r)
        color = colors[int(rng.integers(len(colors)))]
        out.append(
            oriented_box(
                (cx, h / 2, cz), (w, h, d), yaw, color=color, instance_id=first_id + k, semantic=name
            )
        )
    return out


# ----------------------------------------------------------------------------------------------
# mazes (chapter 14)


@dataclass(frozen=True, eq=False)
class Maze:
    """A perfect maze (exactly one path between any two cells) of ``rows x cols`` square cells.

    ``walls`` is the (2 rows + 1, 2 cols + 1) bool grid: cell ``(r, c)`` is ``walls[2r + 1, 2c + 1]``
    (always False), the wall between it and its right / lower neighbour is ``walls[2r + 1, 2c + 2]`` /
    ``walls[2r + 2, 2c + 1]``. Cell ``(r, c)`` covers ``x in cell [c, c + 1]``, ``z in cell [r, r + 1]``.
    ``landmarks`` are ``(row, col, instance_id, colour name)``.
    """

    scene: Scene
    walls: np.ndarray
    cell: float
    landmarks: tuple[tuple[int, int, int, str], ...]
    wall_ids: tuple[int, ...]

    @property
    def rows(self) -> int:
        return (self.walls.shape[0] - 1) // 2

    @property
    def cols(self) -> int:
        return (self.walls.shape[1] - 1) // 2

    def cell_center(self, row: int, col: int) -> tuple[float, float]:
        """World ``(x, z)`` of a cell's centre."""
        return ((col + 0.5) * self.cell, (row + 0.5) * self.cell)

    def neighbors(self, row: int, col: int) -> list[tuple[int, int]]:
        """The cells reachable from ``(row, col)`` in one step (no wall between)."""
        out = []
        for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            r, c = row + dr, col + dc
            if (
                0 <= r < self.rows
                and 0 <= c < self.cols
                and not self.walls[2 * row + 1 + dr, 2 * col + 1 + dc]
            ):
                out.append((r, c))
        return out

    def shortest_path(self, start: tuple[int, int], goal: tuple[int, int]) -> list[tuple[int, int]]:
        """The cells from ``start`` to ``goal`` inclusive (breadth-first search; unique in a perfect maze)."""
        for name, (r, c) in (("start", start), ("goal", goal)):
            check_int(f"{name}[0]", r, minimum=0, maximum=self.rows - 1)
            check_int(f"{name}[1]", c, minimum=0, maximum=self.cols - 1)
        parent = {tuple(start): None}
        queue = deque([tuple(start)])
        while queue:
            here = queue.popleft()
            if here == tuple(goal):
                break
            for nxt in self.neighbors(*here):
                if nxt not in parent:
                    parent[nxt] = here
                    queue.append(nxt)
        path = [tuple(goal)]
        while parent[path[-1]] is not None:
            path.append(parent[path[-1]])
        return path[::-1]

    def waypoints(self, path: list[tuple[int, int]], eye_height: float = 1.2) -> np.ndarray:
        """Cell centres of ``path`` at ``eye_height``, shape (K, 3): waypoints for ``walk_through``."""
        eye_height = check_float("eye_height", eye_height, minimum=0.0, strict_min=True)
        return np.array([((c + 0.5) * self.cell, eye_height, (r + 0.5) * self.cell) for r, c in path])

    def occupancy(self, cell: float | None = None) -> OccupancyMap:
        """Top-down occupancy of the maze's footprint (default grid: a tenth of a maze cell)."""
        cell = self.cell / 10 if cell is None else cell
        return occupancy_map(
            self.scene, cell, bounds=(0.0, self.cols * self.cell, 0.0, self.rows * self.cell)
        )


def _carve(rows: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    """Wall grid of a perfect maze by randomised depth-first search (the recursive backtracker)."""
    walls = np.ones((2 * rows + 1, 2 * cols + 1), dtype=bool)
    start = (int(rng.integers(rows)), int(rng.integers(cols)))
    seen = np.zeros((rows, cols), dtype=bool)
    seen[start] = True
    walls[2 * start[0] + 1, 2 * start[1] + 1] = False
    stack = [start]
    while stack:
        r, c = stack[-1]
        options = [
            (r + dr, c + dc)
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
            if 0 <= r + dr < rows and 0 <= c + dc < cols and not seen[r + dr, c + dc]
        ]
        if not options:
            stack.pop()
            continue
        nr, nc = options[int(rng.integers(len(options)))]
        walls[r + nr + 1, c + nc + 1] = False  # the wall between (r, c) and (nr, nc)
        walls[2 * nr + 1, 2 * nc + 1] = False
        seen[nr, nc] = True
        stack.append((nr, nc))
    return walls


def maze(
    rows: int = 5,
    cols: int = 5,
    seed: int = 0,
    *,
    cell: float = 2.0,
    wall_height: float = 2.5,
    wall_thickness: float = 0.15,
    n_landmarks: int = 4,
    landmark_size: float = 0.5,
) -> Maze:
    """A perfect ``rows x cols`` maze of corridors ``cell`` wide with ``n_landmarks`` coloured pillars.

    Carved by a seeded randomised depth-first search; collinear wall pieces are merged into one box
    each (fewer boxes, faster renders). Landmarks (``landmark_size`` square, 1 m tall, colours in
    :data:`PALETTE` order: red, green, blue, yellow, ...) stand against a wall of distinct cells,
    dead ends first.
    """
    rows = check_int("rows", rows, minimum=1, maximum=64)
    cols = check_int("cols", cols, minimum=1, maximum=64)
    rng = _rng(seed)
    cell = check_float("cell", cell, minimum=0.0, strict_min=True)
    wall_height = check_float("wall_height", wall_height, minimum=0.0, strict_min=True)
    t = check_float("wall_thickness", wall_thickness, minimum=0.0, strict_min=True, maximum=cell / 2)
    n_landmarks = check_int("n_landmarks", n_landmarks, minimum=0, maximum=min(rows * cols, len(PALETTE)))
    size = check_float("landmark_size", landmark_size, minimum=0.0, strict_min=True, maximum=cell / 2 - t)
    walls = _carve(rows, cols, rng)

    boxes: list[Box] = []
    wall_color = (0.78, 0.76, 0.72)

    def add(start, end):
        boxes.append(
            wall(start, end, height=wall_height, thickness=t, color=wall_color, instance_id=len(boxes) + 1)
        )

    for r in range(rows + 1):  # walls along x at z = r * cell: runs of walls[2r, 2c + 1]
        c = 0
        while c < cols:
            if walls[2 * r, 2 * c + 1]:
                c_end = c
                while c_end + 1 < cols and walls[2 * r, 2 * (c_end + 1) + 1]:
                    c_end += 1
                add((c * cell - t / 2, r * cell), ((c_end + 1) * cell + t / 2, r * cell))
                c = c_end + 1
            else:
                c += 1
    for c in range(cols + 1):  # walls along z at x = c * cell: runs of walls[2r + 1, 2c]
        r = 0
        while r < rows:
            if walls[2 * r + 1, 2 * c]:
                r_end = r
                while r_end + 1 < rows and walls[2 * (r_end + 1) + 1, 2 * c]:
                    r_end += 1
                add((c * cell, r * cell - t / 2), (c * cell, (r_end + 1) * cell + t / 2))
                r = r_end + 1
            else:
                r += 1
    wall_ids = tuple(b.instance_id for b in boxes)

    cells = [(r, c) for r in range(rows) for c in range(cols)]
    order = rng.permutation(len(cells))
    closed = {
        rc: [
            d for d in ((-1, 0), (1, 0), (0, -1), (0, 1)) if walls[2 * rc[0] + 1 + d[0], 2 * rc[1] + 1 + d[1]]
        ]
        for rc in cells
    }
    ranked = sorted((cells[i] for i in order), key=lambda rc: -len(closed[rc]))  # dead ends (3 walls) first
    landmarks = []
    names = list(PALETTE)
    for k, (r, c) in enumerate(ranked[:n_landmarks]):
        dr, dc = closed[(r, c)][int(rng.integers(len(closed[(r, c)])))]
        cx, cz = (c + 0.5) * cell, (r + 0.5) * cell
        gap = cell / 2 - t / 2 - size / 2  # centre distance from the cell centre to stand against that wall
        lx, lz = cx + dc * gap, cz + dr * gap
        lid = len(boxes) + 1
        boxes.append(
            box_from_bounds(
                (lx - size / 2, 0.0, lz - size / 2),
                (lx + size / 2, 1.0, lz + size / 2),
                color=PALETTE[names[k]],
                instance_id=lid,
                semantic="landmark",
            )
        )
        landmarks.append((r, c, lid, names[k]))
    return Maze(Scene(tuple(boxes), FLOOR), walls, cell, tuple(landmarks), wall_ids)
