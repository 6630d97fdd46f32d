"""Floor-plan records for chapter 18 (IOHP): furniture, doors, windows, rooms, relations and layouts.

Every later module of :mod:`neurips26.iohp` (proxies, objective, optimiser, metrics, baselines) reads these
frozen records, so the conventions are fixed here once (§3.1).

**Units and frames.** Lengths are metres on the floor plane ``(x, y)`` (``y`` is the floor's second axis;
rendering maps it to world ``Z``); angles are radians, counter-clockwise from ``+x``. A floor pose is
``(x, y, theta)``. The owner's front direction is ``u(theta) = (cos theta, sin theta)`` and its lateral
direction ``v(theta) = (-sin theta, cos theta)``; a footprint of width ``w`` (along ``v``) and depth ``d``
(along ``u``) is

    B = {c + alpha v + beta u : |alpha| <= w / 2, |beta| <= d / 2},

with the front face at ``beta = +d / 2`` (a bed's foot end, a sofa's seat edge, a wardrobe's doors). Every
rectangle of the package (footprint, obstacle, door swing, proxy) is ``(center (2,), size (w, d), theta)``
in this convention; :func:`neurips26.iohp.geometry.corners` turns any batch of them into corners.

**Room.** The outline is a counter-clockwise, axis-aligned polygon: a rectangle or an L-shape (a rectangle
with a rectangular notch removed at one corner). Edge ``k`` runs from vertex ``k`` to vertex ``k + 1``; its
inward normal is the left normal ``n = (-t_y, t_x)`` of its unit direction ``t`` (the interior lies on the
left of a counter-clockwise boundary). Doors always swing into the room; a door of width ``w`` keeps the
``w x w`` square in front of it clear. The objective treats everything outside the room and every door's
swing zone as fixed obstacle rectangles (§3.1, [our choice]): one thick wall rectangle outside each edge,
extended by its thickness ``T`` past each convex corner and not at all past a reflex one (where it would
cut into the room), so every outside point within distance ``T`` of the room is covered; the L-shape's
notch; and the door swings. See :meth:`Room.obstacles`.

**Relations.** The language model's semantic relations (§3.1, §3.3: ``against_wall``, ``near``, ``faces``,
``side_of``) are small records over object indices; :class:`Layout` checks the indices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Self

import numpy as np

from neurips26.iohp.geometry import corners, front
from neurips26.validation import check_array, check_choice, check_float, check_instances, check_int

#: The room types of the chapter.
ROOM_TYPES: tuple[str, ...] = ("bedroom", "living", "dining", "office")
#: Semantic relation kinds (§3.3, LayoutVLM / Holodeck style).
RELATION_KINDS: tuple[str, ...] = ("against_wall", "near", "faces", "side_of")
#: Sides for ``side_of``, in the reference object's local frame (left = +v, right = -v, front = +u).
RELATION_SIDES: tuple[str, ...] = ("front", "back", "left", "right")
#: Kinds of fixed obstacle rectangles, in the order :meth:`Room.obstacles` returns them.
OBSTACLE_KINDS: tuple[str, ...] = ("wall", "notch", "door")
#: Default thickness (m) of the wall obstacles: what lies farther outside than this is not covered.
OBSTACLE_THICKNESS = 2.0

_AXIS_TOL = 1e-9  # an edge is axis-aligned when one coordinate changes by at most this much
_ON_WALL_TOL = 1e-6  # a door or window centre may sit this far from its wall line


def _pair(name: str, value: object) -> tuple[float, float]:
    """Two finite floats as a tuple."""
    if isinstance(value, str) or not hasattr(value, "__len__") or len(value) != 2:  # type: ignore[arg-type]
        raise ValueError(f"{name} must be a pair of numbers; got {value!r}")
    return tuple(check_float(f"{name}[{i}]", v) for i, v in enumerate(value))  # type: ignore[arg-type,return-value]


def _triple(name: str, value: object, *, positive: bool = False) -> tuple[float, float, float]:
    """Three finite floats (strictly positive if ``positive``) as a tuple."""
    if isinstance(value, str) or not hasattr(value, "__len__") or len(value) != 3:  # type: ignore[arg-type]
        raise ValueError(f"{name} must be a sequence of 3 numbers; got {value!r}")
    return tuple(  # type: ignore[return-value]
        check_float(f"{name}[{i}]", v, minimum=0.0 if positive else None, strict_min=positive)
        for i, v in enumerate(value)  # type: ignore[arg-type]
    )


# ----------------------------------------------------------------------------------------------
# furniture


@dataclass(frozen=True)
class Furniture:
    """One piece of furniture: ``category``, ``size = (w, d, h)`` in metres, floor ``pose = (x, y, theta)``.

    ``w`` runs along the lateral axis ``v(theta)``, ``d`` along the front axis ``u(theta)``, ``h`` is the
    height (rendering only). ``name`` identifies the piece in plots and prompts (``"chair_1"``); inside a
    :class:`Layout` a piece is referred to by its index. Unplaced furniture (from
    :func:`neurips26.iohp.rooms.sample_room`) has pose ``(0, 0, 0)``.
    """

    category: str
    size: tuple[float, float, float]
    pose: tuple[float, float, float] = (0.0, 0.0, 0.0)
    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.category, str):
            raise TypeError(f"category must be a str; got {type(self.category).__name__}")
        if not self.category:
            raise ValueError("category must be a non-empty str")
        object.__setattr__(self, "size", _triple("size", self.size, positive=True))
        object.__setattr__(self, "pose", _triple("pose", self.pose))
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str; got {type(self.name).__name__}")

    @property
    def width(self) -> float:
        """``w``: the extent along the lateral axis ``v`` (m)."""
        return self.size[0]

    @property
    def depth(self) -> float:
        """``d``: the extent along the front axis ``u`` (m)."""
        return self.size[1]

    @property
    def height(self) -> float:
        """``h`` (m), used only for rendering."""
        return self.size[2]

    @property
    def center(self) -> np.ndarray:
        """The footprint centre ``(x, y)``, shape (2,)."""
        return np.array(self.pose[:2], dtype=float)

    @property
    def theta(self) -> float:
        """The heading (rad)."""
        return self.pose[2]

    @property
    def footprint_area(self) -> float:
        """``w * d`` (m^2)."""
        return self.size[0] * self.size[1]

    def front(self) -> np.ndarray:
        """``u(theta)``, shape (2,)."""
        return front(self.theta)

    def corners(self) -> np.ndarray:
        """Footprint corners, (4, 2), counter-clockwise (see :func:`neurips26.iohp.geometry.corners`)."""
        return corners(self.center, np.array(self.size[:2]), self.theta)

    def with_pose(self, pose: Sequence[float]) -> Furniture:
        """A copy at floor pose ``pose = (x, y, theta)``."""
        return Furniture(self.category, self.size, tuple(pose), self.name)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------
# doors and windows


@dataclass(frozen=True)
class _WallOpening:
    """A gap of ``width`` metres in wall ``wall`` (an edge index of the outline), centred at ``center``.

    ``inward`` is the wall's inward unit normal (into the room); :class:`Room` checks that the opening
    lies on its wall and that ``inward`` is that wall's normal.
    """

    wall: int
    center: tuple[float, float]
    width: float
    inward: tuple[float, float]

    def __post_init__(self) -> None:
        object.__setattr__(self, "wall", check_int("wall", self.wall, minimum=0))
        object.__setattr__(self, "center", _pair("center", self.center))
        object.__setattr__(self, "width", check_float("width", self.width, minimum=0.0, strict_min=True))
        n = _pair("inward", self.inward)
        if abs(math.hypot(*n) - 1.0) > 1e-9:
            raise ValueError(f"inward must be a unit vector; got {n}")
        object.__setattr__(self, "inward", n)

    @classmethod
    def on_segment(
        cls, wall: int, start: Sequence[float], end: Sequence[float], offset: float, width: float
    ) -> Self:
        """The opening on the counter-clockwise wall ``start -> end``, centred ``offset`` m from ``start``.

        The whole gap must fit on the segment: ``width / 2 <= offset <= length - width / 2``.
        """
        s = np.array(_pair("start", start))
        e = np.array(_pair("end", end))
        length = float(np.linalg.norm(e - s))
        if length == 0.0:
            raise ValueError("start and end must differ (a wall needs a length)")
        width = check_float("width", width, minimum=0.0, strict_min=True)
        offset = check_float("offset", offset, minimum=width / 2.0, maximum=length - width / 2.0)
        t = (e - s) / length
        c = s + offset * t
        return cls(wall, (float(c[0]), float(c[1])), width, (float(-t[1]) + 0.0, float(t[0]) + 0.0))

    def along(self) -> np.ndarray:
        """The wall direction at the opening (the inward normal turned by -90 degrees), shape (2,)."""
        return np.array([self.inward[1], -self.inward[0]])

    def opening(self) -> np.ndarray:
        """The gap's end points on the wall line, shape (2, 2) (in the wall's direction)."""
        c, t = np.array(self.center), self.along()
        return np.stack([c - t * self.width / 2.0, c + t * self.width / 2.0])


@dataclass(frozen=True)
class Door(_WallOpening):
    """A door in wall ``wall``; it swings into the room, so its ``width x width`` swing zone is kept clear."""

    def swing_zone(self) -> tuple[np.ndarray, np.ndarray, float]:
        """The swing zone as a rectangle ``(center (2,), size (2,) = (w, w), theta)``, facing into the room.

        Its back face is the door opening; ``theta`` is the direction of the inward normal.
        """
        n = np.array(self.inward)
        center = np.array(self.center) + n * self.width / 2.0
        return center, np.array([self.width, self.width]), math.atan2(n[1], n[0])


@dataclass(frozen=True)
class Window(_WallOpening):
    """A window in wall ``wall`` (rendered between sill and lintel; no keep-out zone of its own)."""


# ----------------------------------------------------------------------------------------------
# rooms


@dataclass(frozen=True)
class Room:
    """A room: ``room_type``, a counter-clockwise axis-aligned ``outline``, the L-shape's ``notch``, openings.

    ``outline`` is a tuple of ``(x, y)`` vertices (m); edge ``k`` runs from vertex ``k`` to ``k + 1``
    (cyclically) and is wall ``k``. ``notch = (x_min, y_min, x_max, y_max)`` is the axis-aligned rectangle
    cut from the bounding box of an L-shape (``None`` for a rectangle); it is outside the room and one of
    its fixed obstacles. ``doors`` and ``windows`` must lie on the wall they name.
    """

    room_type: str
    outline: tuple[tuple[float, float], ...]
    notch: tuple[float, float, float, float] | None = None
    doors: tuple[Door, ...] = ()
    windows: tuple[Window, ...] = ()

    def __post_init__(self) -> None:
        check_choice("room_type", self.room_type, ROOM_TYPES)
        if isinstance(self.outline, str) or not hasattr(self.outline, "__len__"):
            raise TypeError(f"outline must be a sequence of (x, y) vertices; got {self.outline!r}")
        outline = tuple(_pair(f"outline[{i}]", p) for i, p in enumerate(self.outline))
        object.__setattr__(self, "outline", outline)
        self._check_outline()
        if self.notch is not None:
            object.__setattr__(self, "notch", self._checked_notch(self.notch))
        for name, kind in (("doors", Door), ("windows", Window)):
            items = check_instances(name, getattr(self, name), kind)
            for i, item in enumerate(items):
                self._check_opening(f"{name}[{i}]", item)
            object.__setattr__(self, name, items)

    # --- validation ---------------------------------------------------------------------------
    def _check_outline(self) -> None:
        pts = np.array(self.outline, dtype=float)
        if len(pts) < 4:
            raise ValueError(f"outline must have at least 4 vertices; got {len(pts)}")
        edge = np.roll(pts, -1, axis=0) - pts
        length = np.linalg.norm(edge, axis=1)
        if np.any(length <= _AXIS_TOL):
            raise ValueError("outline must not repeat a vertex (every wall needs a length)")
        if np.any(np.minimum(np.abs(edge[:, 0]), np.abs(edge[:, 1])) > _AXIS_TOL):
            raise ValueError("outline must be axis-aligned (a rectangle or an L-shape)")
        cross = np.roll(edge, 1, axis=0)[:, 0] * edge[:, 1] - np.roll(edge, 1, axis=0)[:, 1] * edge[:, 0]
        if np.any(np.abs(cross) <= _AXIS_TOL * length.max()):
            raise ValueError("outline must not have collinear consecutive edges")
        if self._signed_area(pts) <= 0.0:
            raise ValueError("outline must be counter-clockwise (positive signed area)")

    def _checked_notch(self, notch: object) -> tuple[float, float, float, float]:
        if isinstance(notch, str) or not hasattr(notch, "__len__") or len(notch) != 4:  # type: ignore[arg-type]
            raise ValueError(f"notch must be (x_min, y_min, x_max, y_max) or None; got {notch!r}")
        x0, y0, x1, y1 = (check_float(f"notch[{i}]", v) for i, v in enumerate(notch))  # type: ignore[arg-type]
        if not (x1 > x0 and y1 > y0):
            raise ValueError(f"notch must have x_min < x_max and y_min < y_max; got {notch!r}")
        bx0, by0, bx1, by1 = self.bounds
        tol = 1e-9
        if x0 < bx0 - tol or y0 < by0 - tol or x1 > bx1 + tol or y1 > by1 + tol:
            raise ValueError(f"notch must lie inside the outline's bounding box {self.bounds}; got {notch!r}")
        if self.contains(np.array([(x0 + x1) / 2.0, (y0 + y1) / 2.0]), tol=0.0):
            raise ValueError("notch must lie outside the room (its centre is inside the outline)")
        return (x0, y0, x1, y1)

    def _check_opening(self, name: str, item: _WallOpening) -> None:
        k = len(self.outline)
        if item.wall >= k:
            raise ValueError(f"{name}.wall must be < {k} (the number of walls); got {item.wall}")
        s = np.array(self.outline[item.wall])
        e = np.array(self.outline[(item.wall + 1) % k])
        length = float(np.linalg.norm(e - s))
        t = (e - s) / length
        n = np.array([-t[1], t[0]])
        rel = np.array(item.center) - s
        if abs(float(rel @ n)) > _ON_WALL_TOL:
            raise ValueError(f"{name} must lie on wall {item.wall}; its centre is off the wall line")
        along = float(rel @ t)
        if along < item.width / 2.0 - _ON_WALL_TOL or along > length - item.width / 2.0 + _ON_WALL_TOL:
            raise ValueError(f"{name} must fit on wall {item.wall} (length {length:.3f} m)")
        if np.max(np.abs(np.array(item.inward) - n)) > 1e-9:
            raise ValueError(f"{name}.inward must be wall {item.wall}'s inward normal {tuple(n)}")

    @staticmethod
    def _signed_area(pts: np.ndarray) -> float:
        x, y = pts[:, 0], pts[:, 1]
        return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))

    # --- geometry -----------------------------------------------------------------------------
    def vertices(self) -> np.ndarray:
        """The outline as an array, shape (k, 2)."""
        return np.array(self.outline, dtype=float)

    @property
    def shape(self) -> str:
        """``"rectangle"`` (4 vertices), ``"L"`` (6 vertices) or ``"polygon"``."""
        return {4: "rectangle", 6: "L"}.get(len(self.outline), "polygon")

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """The bounding box ``(x_min, y_min, x_max, y_max)`` (m)."""
        pts = self.vertices()
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        return (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))

    @property
    def notch_corner(self) -> int | None:
        """The bounding-box corner the L-shape's notch cuts, 0..3 counter-clockwise from ``(x_min, y_min)``;
        ``None`` for a rectangle."""
        if self.notch is None:
            return None
        x0, y0, x1, y1 = self.bounds
        a0, b0, a1, b1 = self.notch
        at_x1 = abs(a1 - x1) < abs(a0 - x0)
        at_y1 = abs(b1 - y1) < abs(b0 - y0)
        return {(False, False): 0, (True, False): 1, (True, True): 2, (False, True): 3}[(at_x1, at_y1)]

    @property
    def area(self) -> float:
        """Floor area (m^2), by the shoelace formula."""
        return self._signed_area(self.vertices())

    def walls(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The walls as segments: ``start`` (k, 2), ``end`` (k, 2), unit inward normal (k, 2)."""
        start = self.vertices()
        end = np.roll(start, -1, axis=0)
        t = (end - start) / np.linalg.norm(end - start, axis=1, keepdims=True)
        return start, end, np.stack([-t[:, 1], t[:, 0]], axis=1)

    def convex_corners(self) -> np.ndarray:
        """Whether each vertex is a convex corner (interior angle 90 degrees, not 270), shape (k,) bool."""
        pts = self.vertices()
        e_in = pts - np.roll(pts, 1, axis=0)
        e_out = np.roll(pts, -1, axis=0) - pts
        return e_in[:, 0] * e_out[:, 1] - e_in[:, 1] * e_out[:, 0] > 0.0

    def contains(self, points: np.ndarray, *, tol: float = 1e-9) -> np.ndarray:
        """Whether each point ``(..., 2)`` lies in the closed room (within ``tol`` of it): (...,) bool.

        Even-odd ray casting along ``+x``, then points within ``tol`` of an edge are counted inside, so
        furniture flush against a wall is inside.
        """
        p = np.asarray(points, dtype=float)
        if p.ndim == 0 or p.shape[-1] != 2:
            raise ValueError(f"points must have shape (..., 2); got {p.shape}")
        tol = check_float("tol", tol, minimum=0.0)
        flat = p.reshape(-1, 2)
        start, end, _ = self.walls()
        px, py = flat[:, 0:1], flat[:, 1:2]  # (N, 1) against (1, k) edges
        x0, y0, x1, y1 = start[:, 0], start[:, 1], end[:, 0], end[:, 1]
        straddle = (y0 > py) != (y1 > py)
        dy = np.where(y1 == y0, 1.0, y1 - y0)
        x_cross = x0 + (py - y0) * (x1 - x0) / dy
        inside = (np.count_nonzero(straddle & (px < x_cross), axis=1) % 2) == 1
        if tol > 0.0:
            inside |= self._distance_to_boundary(flat) <= tol
        return inside.reshape(p.shape[:-1])

    def _distance_to_boundary(self, flat: np.ndarray) -> np.ndarray:
        """Euclidean distance of each point (N, 2) to the outline, shape (N,)."""
        start, end, _ = self.walls()
        seg = end - start  # (k, 2)
        rel = flat[:, None, :] - start[None, :, :]  # (N, k, 2)
        s = np.clip(np.sum(rel * seg, axis=-1) / np.sum(seg * seg, axis=-1), 0.0, 1.0)
        return np.min(np.linalg.norm(rel - s[..., None] * seg, axis=-1), axis=1)

    def obstacles(
        self, *, thickness: float = OBSTACLE_THICKNESS, kinds: Sequence[str] = OBSTACLE_KINDS
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The fixed keep-out rectangles ``center (m, 2)``, ``size (m, 2) = (w, d)``, ``theta (m,)``.

        In order, for the requested ``kinds``:

        * ``"wall"``: one per edge, of depth ``thickness`` outside it, facing into the room (``theta`` is the
          inward normal's direction, ``w`` runs along the wall) and extended by ``thickness`` past each
          convex corner; together they cover every outside point within ``thickness`` of the room;
        * ``"notch"``: the L-shape's notch (``theta = 0``, so ``w`` is its ``y`` extent and ``d`` its ``x``
          extent); nothing for a rectangle;
        * ``"door"``: each door's ``w x w`` swing zone (:meth:`Door.swing_zone`).
        """
        thickness = check_float("thickness", thickness, minimum=0.0, strict_min=True)
        if isinstance(kinds, str):
            raise TypeError("kinds must be a sequence of str, e.g. ('wall', 'door')")
        wanted = {check_choice(f"kinds[{i}]", k, OBSTACLE_KINDS) for i, k in enumerate(kinds)}
        centers, sizes, thetas = [], [], []
        if "wall" in wanted:
            start, end, normal = self.walls()
            convex = self.convex_corners()
            ext0 = np.where(convex, thickness, 0.0)  # extension past the start vertex of edge k
            ext1 = np.roll(ext0, -1)  # ... and past its end vertex
            length = np.linalg.norm(end - start, axis=1)
            t = (end - start) / length[:, None]
            mid = (start + end) / 2.0 + t * ((ext1 - ext0) / 2.0)[:, None] - normal * thickness / 2.0
            centers.append(mid)
            sizes.append(np.stack([length + ext0 + ext1, np.full_like(length, thickness)], axis=1))
            thetas.append(np.arctan2(normal[:, 1], normal[:, 0]))
        if "notch" in wanted and self.notch is not None:
            x0, y0, x1, y1 = self.notch
            centers.append(np.array([[(x0 + x1) / 2.0, (y0 + y1) / 2.0]]))
            sizes.append(np.array([[y1 - y0, x1 - x0]]))
            thetas.append(np.zeros(1))
        if "door" in wanted:
            for door in self.doors:
                c, s, th = door.swing_zone()
                centers.append(c[None])
                sizes.append(s[None])
                thetas.append(np.array([th]))
        if not centers:
            return np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0)
        return np.concatenate(centers), np.concatenate(sizes), np.concatenate(thetas)


# ----------------------------------------------------------------------------------------------
# relations and layouts


@dataclass(frozen=True)
class Relation:
    """A semantic relation from the language model (§3.3), over object indices of a :class:`Layout`.

    * ``against_wall``, ``objects = (i,)``: ``i``'s back face touches its nearest wall;
    * ``near``, ``objects = (i, j)``, ``distance = (a, b)`` (m): the centre distance lies in ``[a, b]``;
    * ``faces``, ``objects = (i, j)``: ``i``'s front direction points at ``j``'s centre;
    * ``side_of``, ``objects = (i, j)``, ``side`` in :data:`RELATION_SIDES`: ``i`` is on that side of ``j``
      in ``j``'s local frame.
    """

    kind: str
    objects: tuple[int, ...]
    distance: tuple[float, float] | None = None
    side: str | None = None

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, RELATION_KINDS)
        if isinstance(self.objects, str) or not hasattr(self.objects, "__len__"):
            raise TypeError(f"objects must be a tuple of object indices; got {self.objects!r}")
        objects = tuple(check_int(f"objects[{i}]", o, minimum=0) for i, o in enumerate(self.objects))
        want = 1 if self.kind == "against_wall" else 2
        if len(objects) != want:
            raise ValueError(f"objects must hold {want} index(es) for {self.kind}; got {objects}")
        if len(set(objects)) != len(objects):
            raise ValueError(f"objects must be distinct; got {objects}")
        object.__setattr__(self, "objects", objects)
        if self.kind == "near":
            if self.distance is None:
                raise ValueError("distance (a, b) is required for near")
            a, b = _pair("distance", self.distance)
            if not 0.0 <= a <= b:
                raise ValueError(f"distance must satisfy 0 <= a <= b; got {(a, b)}")
            object.__setattr__(self, "distance", (a, b))
        elif self.distance is not None:
            raise ValueError(f"distance is only used by near; got {self.distance!r} for {self.kind}")
        if self.kind == "side_of":
            if self.side is None:
                raise ValueError(f"side is required for side_of, one of {RELATION_SIDES}")
            check_choice("side", self.side, RELATION_SIDES)
        elif self.side is not None:
            raise ValueError(f"side is only used by side_of; got {self.side!r} for {self.kind}")


@dataclass(frozen=True)
class Layout:
    """A :class:`Room`, its furniture (index = position in the tuple) and semantic relations over them."""

    room: Room
    furniture: tuple[Furniture, ...]
    relations: tuple[Relation, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.room, Room):
            raise TypeError(f"room must be a Room; got {type(self.room).__name__}")
        for name, kind in (("furniture", Furniture), ("relations", Relation)):
            object.__setattr__(self, name, check_instances(name, getattr(self, name), kind))
        n = len(self.furniture)
        for i, rel in enumerate(self.relations):
            if max(rel.objects) >= n:
                raise ValueError(f"relations[{i}] refers to object {max(rel.objects)}; the layout has {n}")

    @property
    def n(self) -> int:
        """The number of furniture pieces."""
        return len(self.furniture)

    @property
    def categories(self) -> tuple[str, ...]:
        """Each piece's category, in order."""
        return tuple(f.category for f in self.furniture)

    def poses(self) -> np.ndarray:
        """Floor poses ``(x, y, theta)``, shape (n, 3)."""
        return np.array([f.pose for f in self.furniture], dtype=float).reshape(-1, 3)

    def sizes(self) -> np.ndarray:
        """Sizes ``(w, d, h)`` (m), shape (n, 3)."""
        return np.array([f.size for f in self.furniture], dtype=float).reshape(-1, 3)

    def corners(self) -> np.ndarray:
        """Footprint corners, shape (n, 4, 2) (see :func:`neurips26.iohp.geometry.corners`)."""
        p = self.poses()
        return corners(p[:, :2], self.sizes()[:, :2], p[:, 2])

    def with_poses(self, poses: np.ndarray) -> Layout:
        """The same layout with floor poses ``poses`` (n, 3)."""
        poses = check_array("poses", np.asarray(poses, dtype=float), shape=(self.n, 3))
        furniture = tuple(
            f.with_pose(tuple(float(v) for v in p)) for f, p in zip(self.furniture, poses, strict=True)
        )
        return Layout(self.room, furniture, self.relations)


__all__ = [
    "OBSTACLE_KINDS",
    "OBSTACLE_THICKNESS",
    "RELATION_KINDS",
    "RELATION_SIDES",
    "ROOM_TYPES",
    "Door",
    "Furniture",
    "Layout",
    "Relation",
    "Room",
    "Window",
]
