"""Layout metrics for chapter 18 (IOHP): physical validity, proxy conflicts, free floor and accessibility.

The chapter judges a furnished room twice (§7.3): is it physically valid (no interpenetration, inside
the walls, the door free), and can a person use it (reach every piece's interaction zone from the door)?
Every metric here is a function of one :class:`~neurips26.iohp.layout.Layout` and, optionally, the reference
proxy rectangles; they are computed in NumPy float64 and never differentiated.

**Exact part** (oriented rectangles, :func:`neurips26.iohp.geometry.overlap_area`):

* collision: pairs ``i < j`` whose footprints overlap by more than ``threshold = 0.001 m^2``; reported as
  the count, the fraction of the ``n (n - 1) / 2`` pairs, and the fraction of pieces in at least one such
  pair;
* out of bounds: a piece whose corner lies more than ``tol = 1 cm`` outside the outline, or whose footprint
  penetrates the L-shape's notch deeper than ``tol`` (exact separating-axis depth); fraction of pieces;
* door blocked: some piece overlaps a door's ``w x w`` swing zone by more than ``threshold``;
* proxy conflict: a proxy ``k`` overlaps (``> threshold``) a piece that is neither its owner nor in its
  ``allowed`` row, or has more than ``threshold`` of its area outside the room (walls and notch; door
  swings are exempt for proxies, §3.3). The outside area is exact: the room is its bounding box ``R``
  minus the notch ``N`` (``N`` inside ``R``), so ``|P \\ room| = |P| - |P ∩ R| + |P ∩ N|``.

**Grid part** (:class:`FloorGrid`, :class:`AccessMap`). A grid of ``cell = 5 cm`` squares is laid over the
room's bounding box, centred on it (so translating or turning the room by 90 degrees moves the grid with
it and every grid quantity is exactly invariant). A cell is *floor* when its centre lies in the room,
*occupied* when its centre lies in a footprint (closed rectangles), *free* when floor and not occupied.

* free ratio = ``#free / #floor``;
* a person is a disk of radius ``r = 0.2 m``. Its centre may stand on a free cell whose nearest non-free
  cell centre (outside the room included) is farther than ``r``: the free set eroded by the closed disk,
  computed with one Euclidean distance transform. The *reachable* cells are the 4-connected components of
  the eroded set that contain a cell of a door's swing zone (the person enters through the door). A
  distance of exactly ``r`` counts as touching, so the narrowest passable corridor is ``2 r + cell``
  (0.45 m at the defaults), slightly conservative against the continuous ``2 r``;
* reachability = ``#(free cells the disk covers from some reachable centre) / #free``: the reachable set
  dilated by the same disk, i.e. the floor a person can actually step on. In an empty rectangle only the
  four corner pockets the disk cannot sweep are lost (exactly 8 cells each at ``r = 4`` cells);
* accessibility: a proxy is accessible when a reachable cell lies in it; a piece is accessible when one of
  its access zones holds a reachable cell. Its access zones are its proxies flagged in ``front`` (default:
  all its proxies) or, for a piece with none, the ``w x strip`` strip in front of its front face
  (``strip = 0.6 m``, the standing-body depth of §3.2). Reported as fractions of pieces and of proxies;
* navigability: every access-required piece is accessible (default: the pieces owning a proxy, or every
  piece without proxies); one bool per scene.

Over an empty set a rate takes the value of a perfect layout (0 collisions, everything accessible).

**Why not** :func:`neurips26.world.occupancy_map`. It is exact for 3-D boxes but (i) takes about 37 ms for
a 6 x 5 m room at 5 cm (a 15-axis SAT of every box against every cell), against about 2 ms for the 2-D
centre test here (each footprint tested only on the cells of its bounding box; all metrics of a dense
room take about 15 ms); (ii) it knows boxes, not the room polygon, so the notch and everything outside
the thin wall boxes would read free unless masked with the outline anyway; (iii) it marks every cell a
box overlaps with positive volume, which biases the occupied area up by about half a cell along every
footprint edge, while the centre test is an unbiased area estimate (an empty room has free ratio exactly
1). The unit tests check that its grid and this one agree up to one cell along footprint edges.

**Deviations from §7.3**: the reconstruction's "reachability" (objects with an
accessible proxy) is this module's object accessibility; its "navigability" (largest free component share)
is replaced by :func:`reachability` (door-connected, radius-aware floor share) and a per-scene bool
:func:`navigable`. Out of bounds here is the outline only; the door swing is the separate ``door_blocked``.

**Functional satisfaction** (§7.3, :func:`functional_satisfaction`). Every functional relation of the
reference proxies (:func:`neurips26.iohp.proxy.default_proxies`, rigidly attached at the layout's poses by
:func:`~neurips26.iohp.proxy.attach`; never a method's own) is checked with the geometry of the objective's
terms (:mod:`neurips26.iohp.objective`, §3.3), so *satisfied* means the term is 0 or, for the two angles,
below ``1 - cos 20°``. With ``c_k`` the proxy centre and ``B_j`` the target:

* ``within_reach``: ``dist(c_k, B_j) <= r`` (point-to-rectangle, ``r = 0.6 m`` by default);
* ``faces``: the angle between ``u_j`` and ``c_k - c_j`` is at most 20 degrees;
* ``view_range``: ``a <= |c_k - c_j| <= b``;
* ``tucked_under``: on one eligible seating side ``s`` of the table (the objective's sides: those where
  the table has a proxy admitting the chair, else its front), the chair's front-face centre lies within
  5 cm of the side's edge and the chair faces the side within 20 degrees; and chair and table overlap by
  at most ``threshold``.

A relation also fails when its proxy is not usable: the proxy is in conflict (:func:`proxy_conflicts`:
more than ``threshold`` m^2 of a piece that is neither its owner nor allowed, or of the outside of the
room; for a room that is not a rectangle or an L-shape, a corner more than 1 cm outside). Reported
overall and per kind.

**Semantic satisfaction** (§7.3, :func:`semantic_satisfaction`): the share of the layout's own
:class:`~neurips26.iohp.layout.Relation` records that hold, with the tolerances the initial planner's
self-consistency filter uses (:mod:`neurips26.iohp.initial`): ``against_wall`` both back corners within
2 cm of the outline; ``near`` the centre distance in ``[a, b]``; ``faces`` ``u_i`` within 20 degrees of
``c_j - c_i``; ``side_of`` as the objective's term is 0 (``i``'s centre beyond that face of ``j``, within
its span; 1e-6 m slack). :func:`relation_holds` evaluates one relation for a batch of pose sets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy import ndimage

from neurips26.iohp.geometry import (
    corners,
    front_edge_distance,
    overlap_area,
    penetration_depth_exact,
    point_rectangle_distance,
)
from neurips26.iohp.geometry import front as front_axis
from neurips26.iohp.geometry import side as side_axis
from neurips26.iohp.initial import FACING_TOL_DEG, WALL_TOL
from neurips26.iohp.layout import RELATION_KINDS, Layout, Relation, Room
from neurips26.iohp.objective import TUCK_GAP
from neurips26.iohp.proxy import FUNCTION_KINDS, SIDES, Proxy, allowed_matrix, attach, default_proxies
from neurips26.validation import check_array, check_float

#: Grid cell side (m).
CELL = 0.05
#: A person's radius (m): the disk that must fit between obstacles.
PERSON_RADIUS = 0.2
#: Overlap area (m^2) above which two rectangles collide.
OVERLAP_THRESHOLD = 0.001
#: How far (m) a footprint may stick out of the room before it is out of bounds.
BOUNDS_TOL = 0.01
#: Depth (m) of the access strip in front of a piece without proxies.
STRIP_DEPTH = 0.6
#: Most cells a grid may have (guards against a tiny ``cell``).
MAX_CELLS = 4_000_000

#: Oriented rectangles ``(center (m, 2), size (m, 2) = (w, d), theta (m,))``, the package's convention.
Rects = tuple[np.ndarray, np.ndarray, np.ndarray]

_EDGE_EPS = 1e-9  # rectangles are closed with this slack, so centres on an edge count inside in any frame
_DIST_EPS = 1e-9  # a distance of exactly r cells counts as touching
_LENGTH_EPS = 1e-9  # slack (m) of the distance tests of relations (rounding only)
_SIDE_EPS = 1e-6  # slack (m) of side_of, as in the initial planner's filter
_COS_FACING = math.cos(math.radians(FACING_TOL_DEG))  # cosine of the largest facing angle
_SIDE_TURN = (0.0, math.pi, math.pi / 2, -math.pi / 2)  # front, back, left, right: the side's outward heading


# ----------------------------------------------------------------------------------------------
# records


@dataclass(frozen=True, eq=False)
class FloorGrid:
    """A ``rows x cols`` grid of ``cell``-metre squares over a room: which cells are floor, which occupied.

    Cell ``(row, col)`` has its centre at ``(x0 + (col + 0.5) cell, y0 + (row + 0.5) cell)``: rows follow
    the floor's ``y``, columns its ``x`` (the orientation of :class:`neurips26.world.OccupancyMap`).
    ``floor`` (rows, cols): the centre is in the room; ``furniture`` (n, rows, cols): the centre is in piece
    ``i``'s footprint.
    """

    x0: float
    y0: float
    cell: float
    floor: np.ndarray
    furniture: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        """``(rows, cols)``."""
        return self.floor.shape  # type: ignore[return-value]

    @property
    def occupied(self) -> np.ndarray:
        """Cells under some footprint, (rows, cols) bool (outside the room included)."""
        return self.furniture.any(axis=0) if len(self.furniture) else np.zeros(self.shape, dtype=bool)

    @property
    def free(self) -> np.ndarray:
        """Floor cells under no footprint, (rows, cols) bool."""
        return self.floor & ~self.occupied

    def centers(self) -> np.ndarray:
        """Cell centres, shape (rows, cols, 2) as ``(x, y)``."""
        rows, cols = self.shape
        x = self.x0 + (np.arange(cols) + 0.5) * self.cell
        y = self.y0 + (np.arange(rows) + 0.5) * self.cell
        return np.stack(np.broadcast_arrays(x[None, :], y[:, None]), axis=-1)

    def cells_in(self, center: np.ndarray, size: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Cells whose centre lies in each closed rectangle ``(center (m, 2), size (m, 2), theta (m,))``.

        Shape (m, rows, cols). A rectangle too small to hold a cell centre gets the cell holding its own
        centre (when that is on the grid), so no rectangle on the grid is empty.
        """
        center = np.asarray(center, dtype=np.float64).reshape(-1, 2)
        size = np.asarray(size, dtype=np.float64).reshape(-1, 2)
        theta = np.asarray(theta, dtype=np.float64).reshape(-1)
        rows, cols = self.shape
        out = np.zeros((len(center), rows, cols), dtype=bool)
        if len(center) == 0:
            return out
        box = corners(center, size, theta)  # (m, 4, 2)
        lo = np.floor((box.min(axis=1) - [self.x0, self.y0]) / self.cell - 0.5).astype(int) - 1
        hi = np.ceil((box.max(axis=1) - [self.x0, self.y0]) / self.cell - 0.5).astype(int) + 1
        for k in range(len(center)):
            c0, r0 = max(lo[k, 0], 0), max(lo[k, 1], 0)
            c1, r1 = min(hi[k, 0], cols - 1), min(hi[k, 1], rows - 1)
            if c0 <= c1 and r0 <= r1:
                x = self.x0 + (np.arange(c0, c1 + 1) + 0.5) * self.cell
                y = self.y0 + (np.arange(r0, r1 + 1) + 0.5) * self.cell
                pts = np.stack(np.broadcast_arrays(x[None, :], y[:, None]), axis=-1).reshape(-1, 2)
                inside = _in_rectangles(pts, center[k : k + 1], size[k : k + 1], theta[k : k + 1])
                out[k, r0 : r1 + 1, c0 : c1 + 1] = inside.reshape(r1 - r0 + 1, c1 - c0 + 1)
            if not out[k].any():
                col = math.floor((center[k, 0] - self.x0) / self.cell)
                row = math.floor((center[k, 1] - self.y0) / self.cell)
                if 0 <= row < rows and 0 <= col < cols:
                    out[k, row, col] = True
        return out


@dataclass(frozen=True, eq=False)
class AccessMap:
    """Where a disk-shaped person of ``radius`` metres can go on a :class:`FloorGrid` ((rows, cols) bool).

    ``navigable``: free cells whose nearest non-free cell centre is farther than ``radius`` (the free set
    eroded by the disk); ``door``: navigable cells in a door's swing zone (the entry); ``reachable``: the
    4-connected components of ``navigable`` that contain a ``door`` cell; ``swept``: free cells within
    ``radius`` of a reachable cell (the floor the person's body can cover).
    """

    grid: FloorGrid
    radius: float
    navigable: np.ndarray
    door: np.ndarray
    reachable: np.ndarray
    swept: np.ndarray

    @property
    def reachability(self) -> float:
        """``#swept / #free`` (0 when the room has no free cell)."""
        n_free = int(self.grid.free.sum())
        return float(self.swept.sum() / n_free) if n_free else 0.0


@dataclass(frozen=True)
class LayoutMetrics:
    """All metrics of one layout (see the module docstring for the definitions).

    Proxy fields are ``None`` when no proxies were given. The functional fields score the reference
    proxies' relations (:func:`functional_satisfaction`), the semantic ones the layout's own relations
    (:func:`semantic_satisfaction`); :func:`layout_metrics` always fills them. An overall share over no
    relation is 1 (a perfect layout); a per-kind share is ``None`` when the layout has no relation of that
    kind, so means over scenes can skip it. The ``n_*`` counts allow pooled shares.
    """

    n_objects: int
    n_proxies: int
    collision_pairs: int  # pairs overlapping by more than the threshold
    collision_rate: float  # collision_pairs / (n (n - 1) / 2)
    colliding_objects: float  # fraction of pieces in at least one colliding pair
    out_of_bounds: float  # fraction of pieces not inside the room
    door_blocked: bool  # some piece overlaps a door's swing zone
    proxy_conflict: float | None  # fraction of proxies in conflict
    free_ratio: float  # free floor cells / floor cells
    accessibility: float  # fraction of pieces with a reachable access zone
    proxy_accessibility: float | None  # fraction of proxies holding a reachable cell
    reachability: float  # free floor share the person's body can cover from the door
    navigable: bool  # every access-required piece is accessible
    functional_satisfaction: float | None = None  # share of reference functional relations satisfied
    functional_within_reach: float | None = None  # the same per kind (None: no relation of that kind)
    functional_faces: float | None = None
    functional_view_range: float | None = None
    functional_tucked_under: float | None = None
    n_functional: int = 0  # reference functional relations
    semantic_satisfaction: float | None = None  # share of the layout's semantic relations that hold
    n_semantic: int = 0  # the layout's semantic relations


# ----------------------------------------------------------------------------------------------
# input checks


def _check_layout(layout: object) -> Layout:
    if not isinstance(layout, Layout):
        raise TypeError(f"layout must be a Layout; got {type(layout).__name__}")
    return layout


def _check_cell(cell: object) -> float:
    return check_float("cell", cell, minimum=0.0, strict_min=True)


def _check_radius(radius: object) -> float:
    return check_float("radius", radius, minimum=0.0)


def _check_threshold(threshold: object) -> float:
    return check_float("threshold", threshold, minimum=0.0)


def _bool_array(name: str, value: object, shape: tuple[int, ...]) -> np.ndarray:
    """A bool array of ``shape`` (TypeError for other dtypes, ValueError naming ``name`` for the shape)."""
    arr = np.asarray(value)
    if arr.dtype != bool:
        raise TypeError(f"{name} must be a bool array; got dtype {arr.dtype}")
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}; got {arr.shape}")
    return arr


def _check_proxies(proxies: object) -> Rects:
    """``proxies = (center (k, 2), size (k, 2), theta (k,))`` as float64 arrays."""
    if not isinstance(proxies, tuple | list) or len(proxies) != 3:
        raise TypeError("proxies must be a tuple (center (k, 2), size (k, 2), theta (k,))")
    try:
        center, size, theta = (np.asarray(p, dtype=np.float64) for p in proxies)
    except (TypeError, ValueError) as err:
        raise TypeError("proxies must hold arrays of real numbers") from err
    center = check_array("proxies center", center, shape=(None, 2))
    k = center.shape[0]
    size = check_array("proxies size", size, shape=(k, 2))
    theta = check_array("proxies theta", theta, shape=(k,))
    if np.any(size <= 0.0):
        raise ValueError("proxies size must be > 0")
    return center, size, theta


def _check_owner(owner: object, k: int, n: int) -> np.ndarray:
    if owner is None:
        raise ValueError("owner is required with proxies: the owning piece of each proxy, shape (k,)")
    arr = np.asarray(owner)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"owner must hold integer piece indices; got dtype {arr.dtype}")
    if arr.shape != (k,):
        raise ValueError(f"owner must have shape ({k},); got {arr.shape}")
    if k and (arr.min() < 0 or arr.max() >= n):
        raise ValueError(f"owner must index pieces in [0, {n}); got values in [{arr.min()}, {arr.max()}]")
    return arr.astype(np.int64)


def _proxy_inputs(
    layout: Layout, proxies: object, owner: object, front: object
) -> tuple[Rects, np.ndarray, np.ndarray] | None:
    """Checked proxies, owners and the ``front`` mask (default all True), or ``None`` without proxies."""
    if proxies is None:
        for name, value in (("owner", owner), ("front", front)):
            if value is not None:
                raise ValueError(f"{name} needs proxies; got proxies=None")
        return None
    rects = _check_proxies(proxies)
    k = len(rects[0])
    own = _check_owner(owner, k, layout.n)
    mask = np.ones(k, dtype=bool) if front is None else _bool_array("front", front, (k,))
    return rects, own, mask


# ----------------------------------------------------------------------------------------------
# geometry helpers


def _in_rectangles(points: np.ndarray, center: np.ndarray, size: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Whether each point (N, 2) lies in each closed rectangle (m of them): (m, N) bool."""
    rel = points[None, :, :] - center[:, None, :]  # (m, N, 2)
    alpha = np.einsum("mnk,mk->mn", rel, side_axis(theta))
    beta = np.einsum("mnk,mk->mn", rel, front_axis(theta))
    return (np.abs(alpha) <= size[:, None, 0] / 2.0 + _EDGE_EPS) & (
        np.abs(beta) <= size[:, None, 1] / 2.0 + _EDGE_EPS
    )


def _footprints(layout: Layout) -> Rects:
    """Footprint rectangles ``center (n, 2), size (n, 2), theta (n,)``."""
    poses = layout.poses()
    return poses[:, :2], layout.sizes()[:, :2], poses[:, 2]


def _is_box_minus_notch(room: Room) -> bool:
    """Whether the room is its bounding box minus its notch (every rectangle and sampled L-shape)."""
    x0, y0, x1, y1 = room.bounds
    notch_area = 0.0
    if room.notch is not None:
        a0, b0, a1, b1 = room.notch
        notch_area = (a1 - a0) * (b1 - b0)
    n_vertices = len(room.outline)
    expected = 4 if room.notch is None else 6
    return n_vertices == expected and abs((x1 - x0) * (y1 - y0) - notch_area - room.area) <= 1e-6 * max(
        room.area, 1.0
    )


def _room_rectangles(room: Room) -> tuple[Rects, Rects | None]:
    """The room's bounding box and notch as rectangles (``theta = 0``: ``w`` is the y extent, ``d`` the x)."""
    x0, y0, x1, y1 = room.bounds
    box = (np.array([(x0 + x1) / 2.0, (y0 + y1) / 2.0]), np.array([y1 - y0, x1 - x0]), np.array(0.0))
    if not _is_box_minus_notch(room):
        raise ValueError("layout room must be a rectangle or its bounding box minus the notch (an L-shape)")
    notch = None
    if room.notch is not None:
        a0, b0, a1, b1 = room.notch
        notch = (np.array([(a0 + a1) / 2.0, (b0 + b1) / 2.0]), np.array([b1 - b0, a1 - a0]), np.array(0.0))
    return box, notch


def _outside_area(room: Room, center: np.ndarray, size: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Exact area (m^2) of each rectangle outside the room: ``|P| - |P ∩ box| + |P ∩ notch|``, shape (m,)."""
    if len(center) == 0:
        return np.zeros(0)
    box, notch = _room_rectangles(room)
    inside_box = overlap_area(center, size, theta, box[0][None], box[1][None], box[2][None])
    outside = size[:, 0] * size[:, 1] - inside_box
    if notch is not None:
        outside = outside + overlap_area(center, size, theta, notch[0][None], notch[1][None], notch[2][None])
    return np.maximum(outside, 0.0)


def _pair_areas(a: Rects, b: Rects) -> np.ndarray:
    """Exact overlap areas of every rectangle of ``a`` (m) with every one of ``b`` (p): (m, p)."""
    m, p = len(a[0]), len(b[0])
    if m == 0 or p == 0:
        return np.zeros((m, p))
    return overlap_area(a[0][:, None], a[1][:, None], a[2][:, None], b[0][None], b[1][None], b[2][None])


# ----------------------------------------------------------------------------------------------
# physical validity (exact)


def collision_pairs(layout: Layout, *, threshold: float = OVERLAP_THRESHOLD) -> np.ndarray:
    """Index pairs ``(i, j)``, ``i < j``, whose footprints overlap by more than ``threshold`` m^2: (P, 2) int.

    Rows in lexicographic order; the exact areas come from :func:`~neurips26.iohp.geometry.overlap_area`.
    """
    layout = _check_layout(layout)
    threshold = _check_threshold(threshold)
    n = layout.n
    if n < 2:
        return np.zeros((0, 2), dtype=np.int64)
    c, s, t = _footprints(layout)
    i, j = np.triu_indices(n, k=1)
    area = overlap_area(c[i], s[i], t[i], c[j], s[j], t[j])
    hit = area > threshold
    return np.stack([i[hit], j[hit]], axis=1).astype(np.int64)


def out_of_bounds(layout: Layout, *, tol: float = BOUNDS_TOL) -> np.ndarray:
    """Whether each piece's footprint leaves the room by more than ``tol`` metres: (n,) bool.

    Out means a corner farther than ``tol`` outside the outline, or an exact separating-axis penetration
    deeper than ``tol`` into the L-shape's notch (a footprint can straddle the reflex corner with all four
    corners inside).
    """
    layout = _check_layout(layout)
    tol = check_float("tol", tol, minimum=0.0)
    n = layout.n
    if n == 0:
        return np.zeros(0, dtype=bool)
    room = layout.room
    out = ~room.contains(layout.corners(), tol=tol).all(axis=1)
    if room.notch is not None:
        c, s, t = _footprints(layout)
        _, notch = _room_rectangles(room)
        f64 = {"dtype": torch.float64}
        depth_sq = penetration_depth_exact(
            torch.as_tensor(c, **f64),
            torch.as_tensor(s, **f64),
            torch.as_tensor(t, **f64),
            torch.as_tensor(notch[0], **f64),
            torch.as_tensor(notch[1], **f64),
            torch.as_tensor(notch[2], **f64),
        ).numpy()
        out |= np.sqrt(depth_sq) > tol
    return out


def door_blocking(layout: Layout, *, threshold: float = OVERLAP_THRESHOLD) -> np.ndarray:
    """Whether each piece overlaps some door's swing zone by more than ``threshold`` m^2: (n,) bool."""
    layout = _check_layout(layout)
    threshold = _check_threshold(threshold)
    zones = layout.room.obstacles(kinds=("door",))
    return (_pair_areas(_footprints(layout), zones) > threshold).any(axis=1)


def proxy_conflicts(
    layout: Layout,
    proxies: Rects,
    owner: np.ndarray,
    *,
    allowed: np.ndarray | None = None,
    threshold: float = OVERLAP_THRESHOLD,
) -> np.ndarray:
    """Whether each proxy is in conflict: (k,) bool.

    ``proxies = (center (k, 2), size (k, 2), theta (k,))``, ``owner`` (k,) piece indices, ``allowed``
    (k, n) bool (default: none allowed). Proxy ``k`` conflicts when it overlaps by more than ``threshold``
    m^2 a piece other than ``owner[k]`` with ``allowed[k, j]`` False, or has more than ``threshold`` m^2
    outside the room. Door swing zones are not conflicts (a person may stand in a doorway).
    """
    layout = _check_layout(layout)
    threshold = _check_threshold(threshold)
    rects = _check_proxies(proxies)
    k, n = len(rects[0]), layout.n
    own = _check_owner(owner, k, n)
    ok = np.zeros((k, n), dtype=bool) if allowed is None else _bool_array("allowed", allowed, (k, n)).copy()
    ok[np.arange(k), own] = True
    hits = (_pair_areas(rects, _footprints(layout)) > threshold) & ~ok
    return hits.any(axis=1) | (_outside_area(layout.room, *rects) > threshold)


# ----------------------------------------------------------------------------------------------
# grid metrics


def floor_grid(layout: Layout, *, cell: float = CELL) -> FloorGrid:
    """The :class:`FloorGrid` of ``layout``: ``cell``-metre squares centred on the room's bounding box."""
    layout = _check_layout(layout)
    cell = _check_cell(cell)
    x0, y0, x1, y1 = layout.room.bounds
    cols = max(1, math.ceil((x1 - x0) / cell - 1e-9))
    rows = max(1, math.ceil((y1 - y0) / cell - 1e-9))
    if rows * cols > MAX_CELLS:
        raise ValueError(f"cell is too small: the grid would have {rows * cols} > {MAX_CELLS} cells")
    gx0 = (x0 + x1) / 2.0 - cols * cell / 2.0
    gy0 = (y0 + y1) / 2.0 - rows * cell / 2.0
    x = gx0 + (np.arange(cols) + 0.5) * cell
    y = gy0 + (np.arange(rows) + 0.5) * cell
    room = layout.room
    if _is_box_minus_notch(room):
        # the closed bounding box minus the open notch, by 1-D comparisons
        floor = _closed(y, y0, y1)[:, None] & _closed(x, x0, x1)[None, :]
        if room.notch is not None:
            a0, b0, a1, b1 = room.notch
            floor &= ~(_open(y, b0, b1)[:, None] & _open(x, a0, a1)[None, :])
    else:
        points = np.stack(np.broadcast_arrays(x[None, :], y[:, None]), axis=-1).reshape(-1, 2)
        floor = room.contains(points, tol=_EDGE_EPS).reshape(rows, cols)
    empty = np.zeros((0, rows, cols), dtype=bool)
    furniture = FloorGrid(gx0, gy0, cell, floor, empty).cells_in(*_footprints(layout))
    return FloorGrid(gx0, gy0, cell, floor, furniture)


def _closed(t: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """``lo <= t <= hi`` with :data:`_EDGE_EPS` slack."""
    return (t >= lo - _EDGE_EPS) & (t <= hi + _EDGE_EPS)


def _open(t: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """``lo < t < hi`` by more than :data:`_EDGE_EPS`."""
    return (t > lo + _EDGE_EPS) & (t < hi - _EDGE_EPS)


def free_ratio(layout: Layout, *, cell: float = CELL) -> float:
    """Free floor cells over floor cells (1 for an empty room)."""
    grid = floor_grid(layout, cell=cell)
    n_floor = int(grid.floor.sum())
    return float(grid.free.sum() / n_floor) if n_floor else 0.0


def _access_from_grid(layout: Layout, grid: FloorGrid, radius: float) -> AccessMap:
    if not layout.room.doors:
        raise ValueError("layout room must have a door: accessibility is measured from the door")
    free = grid.free
    r_cells = radius / grid.cell + _DIST_EPS
    # distance (in cells) from each cell to the nearest non-free cell centre; the pad is outside the room
    clearance = ndimage.distance_transform_edt(np.pad(free, 1, constant_values=False))[1:-1, 1:-1]
    navigable = free & (clearance > r_cells)
    zones = layout.room.obstacles(kinds=("door",))
    door = grid.cells_in(*zones).any(axis=0) & navigable
    labels, _ = ndimage.label(navigable)  # 4-connectivity
    entry = np.unique(labels[door])
    reachable = np.isin(labels, entry[entry > 0])
    if reachable.any():
        swept = free & (ndimage.distance_transform_edt(~reachable) <= r_cells)
    else:
        swept = np.zeros_like(free)
    return AccessMap(grid, radius, navigable, door, reachable, swept)


def access_map(layout: Layout, *, radius: float = PERSON_RADIUS, cell: float = CELL) -> AccessMap:
    """Where a person of ``radius`` metres can stand and go from the door (:class:`AccessMap`).

    Raises ValueError when the room has no door.
    """
    layout = _check_layout(layout)
    radius = _check_radius(radius)
    return _access_from_grid(layout, floor_grid(layout, cell=cell), radius)


def reachability(layout: Layout, *, radius: float = PERSON_RADIUS, cell: float = CELL) -> float:
    """The share of free floor cells a person's disk covers from centres reachable from the door."""
    return access_map(layout, radius=radius, cell=cell).reachability


def _proxy_access(access: AccessMap, rects: Rects) -> np.ndarray:
    if len(rects[0]) == 0:
        return np.zeros(0, dtype=bool)
    cells = access.grid.cells_in(*rects)
    return (cells & access.reachable[None]).reshape(len(cells), -1).any(axis=1)


def _object_access(
    layout: Layout,
    access: AccessMap,
    proxy: tuple[Rects, np.ndarray, np.ndarray] | None,
    strip: float,
    proxy_ok: np.ndarray | None = None,
) -> np.ndarray:
    """Per piece: a reachable cell in one of its ``front`` proxies, else in its front strip. ``proxy_ok``:
    :func:`_proxy_access` of the proxies when already computed."""
    n = layout.n
    result = np.zeros(n, dtype=bool)
    has_zone = np.zeros(n, dtype=bool)
    if proxy is not None:
        rects, own, front = proxy
        if proxy_ok is None:
            proxy_ok = _proxy_access(access, rects)
        has_zone[own[front]] = True
        np.logical_or.at(result, own, proxy_ok & front)
    bare = np.flatnonzero(~has_zone)
    if len(bare):
        c, s, t = (a[bare] for a in _footprints(layout))
        strip_center = c + (s[:, 1:2] / 2.0 + strip / 2.0) * front_axis(t)
        strip_size = np.stack([s[:, 0], np.full(len(bare), strip)], axis=1)
        result[bare] = _proxy_access(access, (strip_center, strip_size, t))
    return result


def accessible_proxies(
    layout: Layout,
    proxies: Rects,
    *,
    radius: float = PERSON_RADIUS,
    cell: float = CELL,
) -> np.ndarray:
    """Whether each proxy ``(center (k, 2), size (k, 2), theta (k,))`` holds a reachable cell: (k,) bool."""
    access = access_map(layout, radius=radius, cell=cell)
    return _proxy_access(access, _check_proxies(proxies))


def accessible_objects(
    layout: Layout,
    proxies: Rects | None = None,
    *,
    owner: np.ndarray | None = None,
    front: np.ndarray | None = None,
    radius: float = PERSON_RADIUS,
    cell: float = CELL,
    strip: float = STRIP_DEPTH,
) -> np.ndarray:
    """Whether each piece has a reachable access zone: (n,) bool.

    A piece's access zones are its proxies with ``front[k]`` True (``front`` (k,) bool, default all True;
    ``owner`` (k,) piece indices, required with ``proxies``); a piece with no such proxy uses the
    ``w x strip`` strip in front of its front face.
    """
    layout = _check_layout(layout)
    strip = check_float("strip", strip, minimum=0.0, strict_min=True)
    proxy = _proxy_inputs(layout, proxies, owner, front)
    access = access_map(layout, radius=radius, cell=cell)
    return _object_access(layout, access, proxy, strip)


def _required(layout: Layout, proxy: tuple | None, required: object) -> np.ndarray:
    if required is not None:
        return _bool_array("required", required, (layout.n,))
    if proxy is None:
        return np.ones(layout.n, dtype=bool)
    mask = np.zeros(layout.n, dtype=bool)
    mask[proxy[1]] = True
    return mask


def navigable(
    layout: Layout,
    proxies: Rects | None = None,
    *,
    owner: np.ndarray | None = None,
    front: np.ndarray | None = None,
    required: np.ndarray | None = None,
    radius: float = PERSON_RADIUS,
    cell: float = CELL,
    strip: float = STRIP_DEPTH,
) -> bool:
    """Whether every access-required piece is accessible (:func:`accessible_objects`).

    ``required`` (n,) bool; default: the pieces owning a proxy, or every piece when ``proxies`` is None.
    """
    layout = _check_layout(layout)
    proxy = _proxy_inputs(layout, proxies, owner, front)
    need = _required(layout, proxy, required)
    ok = accessible_objects(layout, proxies, owner=owner, front=front, radius=radius, cell=cell, strip=strip)
    return bool(ok[need].all())


# ----------------------------------------------------------------------------------------------
# functional and semantic satisfaction (§7.3)


@dataclass(frozen=True, eq=False)
class Satisfaction:
    """Which relations of one layout hold: ``kinds`` (R,) str and ``satisfied`` (R,) bool.

    ``blocked`` (R,) bool: the relation's proxy is not usable (functional relations; always False for
    semantic ones), so the relation fails whatever its geometry.
    """

    kinds: tuple[str, ...]
    satisfied: np.ndarray
    blocked: np.ndarray

    def _of(self, kind: str | None) -> np.ndarray:
        if kind is None:
            return np.ones(len(self.kinds), dtype=bool)
        known = tuple(dict.fromkeys((*FUNCTION_KINDS, *RELATION_KINDS)))
        if not isinstance(kind, str) or kind not in known:
            raise ValueError(f"kind must be None or one of {known}; got {kind!r}")
        return np.array([k == kind for k in self.kinds], dtype=bool)

    def count(self, kind: str | None = None) -> int:
        """The number of relations (of ``kind``; all when ``None``)."""
        return int(self._of(kind).sum())

    def rate(self, kind: str | None = None) -> float | None:
        """The satisfied share of the relations (of ``kind``); ``None`` when there is none."""
        mask = self._of(kind)
        return float(self.satisfied[mask].mean()) if mask.any() else None


def _check_records(name: str, value: object, n: int) -> tuple[Proxy, ...]:
    """A sequence of :class:`Proxy` whose owners and relation targets index the layout's ``n`` pieces."""
    if isinstance(value, Proxy) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a sequence of Proxy records; got {type(value).__name__}")
    records = tuple(value)
    for q, p in enumerate(records):
        if not isinstance(p, Proxy):
            raise TypeError(f"{name}[{q}] must be a Proxy; got {type(p).__name__}")
        refs = [p.owner, *(r.target for r in p.relations)]
        if max(refs) >= n:
            raise ValueError(f"{name}[{q}] refers to piece {max(refs)}; the layout has {n}")
    return records


def _unusable(layout: Layout, rects: Rects, allowed: np.ndarray, threshold: float) -> np.ndarray:
    """Proxies in conflict (:func:`proxy_conflicts`, ``allowed`` (k, n) holding the owners): (k,) bool.

    For a room that is not its bounding box minus a notch (no sampled room; :class:`Room` allows any
    axis-aligned polygon) the exact outside area is not available, so a proxy counts as outside when a
    corner lies more than :data:`BOUNDS_TOL` outside the outline.
    """
    hits = (_pair_areas(rects, _footprints(layout)) > threshold) & ~allowed
    if _is_box_minus_notch(layout.room):
        outside = _outside_area(layout.room, *rects) > threshold
    else:
        outside = ~layout.room.contains(corners(*rects), tol=BOUNDS_TOL).all(axis=1)
    return hits.any(axis=1) | outside


def _f64(a: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(np.ascontiguousarray(a), dtype=torch.float64)


def functional_satisfaction(
    layout: Layout, proxies: Sequence[Proxy] | None = None, *, threshold: float = OVERLAP_THRESHOLD
) -> Satisfaction:
    """Which functional relations of ``proxies`` hold in ``layout`` (module docstring): :class:`Satisfaction`.

    ``proxies``: :class:`~neurips26.iohp.proxy.Proxy` records, attached at the layout's poses; default the
    reference :func:`~neurips26.iohp.proxy.default_proxies` of the layout (what the chapter scores every
    method with). Relations come in proxy order, then in each proxy's order. ``threshold`` (m^2): the
    overlap that makes a proxy unusable and a tucked chair collide with its table.
    """
    layout = _check_layout(layout)
    threshold = _check_threshold(threshold)
    records = default_proxies(layout) if proxies is None else _check_records("proxies", proxies, layout.n)
    rows = [(q, rel) for q, p in enumerate(records) for rel in p.relations]
    kinds = tuple(rel.kind for _, rel in rows)
    if not rows:
        return Satisfaction(kinds, np.zeros(0, dtype=bool), np.zeros(0, dtype=bool))
    poses, sizes = layout.poses(), layout.sizes()[:, :2]
    rects = attach(records, poses, sizes)
    allowed = allowed_matrix(records, layout.categories)
    usable = ~_unusable(layout, rects, allowed, threshold)

    q = np.array([r[0] for r in rows], dtype=np.int64)
    j = np.array([rel.target for _, rel in rows], dtype=np.int64)
    reach = np.array([rel.reach if rel.reach is not None else 0.0 for _, rel in rows])
    lo = np.array([rel.distance[0] if rel.distance is not None else 0.0 for _, rel in rows])
    hi = np.array([rel.distance[1] if rel.distance is not None else 0.0 for _, rel in rows])
    ck, cj, tj, sj = rects[0][q], poses[j, :2], poses[j, 2], sizes[j]
    diff = ck - cj
    dist = np.linalg.norm(diff, axis=1)
    cosine = np.sum(front_axis(tj) * diff, axis=1) / np.where(dist > 0.0, dist, 1.0)

    to_rect = point_rectangle_distance(_f64(ck), _f64(cj), _f64(sj), _f64(tj)).numpy()
    ok = {
        "within_reach": to_rect <= reach + _LENGTH_EPS,
        "faces": (dist > 0.0) & (cosine >= _COS_FACING - 1e-12),
        "view_range": (dist >= lo - _LENGTH_EPS) & (dist <= hi + _LENGTH_EPS),
        "tucked_under": _tucked(records, rows, allowed, poses, sizes, threshold),
    }
    holds = np.array([ok[kind][r] for r, kind in enumerate(kinds)], dtype=bool)
    return Satisfaction(kinds, holds & usable[q], ~usable[q])


def _tucked(
    records: tuple[Proxy, ...],
    rows: list[tuple[int, object]],
    allowed: np.ndarray,
    poses: np.ndarray,
    sizes: np.ndarray,
    threshold: float,
) -> np.ndarray:
    """``tucked_under`` for every relation row (only meaningful on those rows): (R,) bool.

    The owner's front-face centre within :data:`~neurips26.iohp.objective.TUCK_GAP` of an eligible seating
    edge of the target, facing that side within 20 degrees, and at most ``threshold`` m^2 of overlap.
    """
    n_rows = len(rows)
    sides = np.zeros((n_rows, 4), dtype=bool)
    for r, (q, rel) in enumerate(rows):
        chair = records[q].owner
        for t, p in enumerate(records):
            if p.owner == rel.target and allowed[t, chair]:  # type: ignore[attr-defined]
                sides[r, SIDES.index(p.side)] = True
        if not sides[r].any():
            sides[r, 0] = True
    o = np.array([records[q].owner for q, _ in rows], dtype=np.int64)
    j = np.array([rel.target for _, rel in rows], dtype=np.int64)  # type: ignore[attr-defined]
    co, to, so = poses[o, :2], poses[o, 2], sizes[o]
    cj, tj, sj = poses[j, :2], poses[j, 2], sizes[j]
    uo = front_axis(to)
    tip = co + (so[:, 1:2] / 2.0) * uo  # the owner's front-face centre
    ts = tj[:, None] + np.array(_SIDE_TURN)  # (R, 4): each side seen as a front face
    crosswise = np.array([False, False, True, True])
    ss = np.where(crosswise[None, :, None], sj[:, None, ::-1], sj[:, None, :])  # (R, 4, 2)
    tip4 = np.broadcast_to(tip[:, None, :], ss.shape)
    cj4 = np.broadcast_to(cj[:, None, :], ss.shape)
    gap = front_edge_distance(_f64(tip4), _f64(cj4), _f64(ss), _f64(ts)).numpy()
    facing = -np.sum(uo[:, None, :] * front_axis(ts), axis=-1)
    near_side = sides & (gap <= TUCK_GAP + _LENGTH_EPS) & (facing >= _COS_FACING - 1e-12)
    apart = overlap_area(co, so, to, cj, sj, tj) <= threshold
    return near_side.any(axis=1) & apart


def relation_holds(relation: Relation, room: Room, poses: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Whether the semantic ``relation`` holds for each set of poses (module docstring): shape (...) bool.

    ``poses`` (..., n, 3) floor poses (a batch of candidate layouts), ``sizes`` (n, 2) or (n, 3) the
    pieces' ``(w, d[, h])``; ``room`` gives the walls of ``against_wall``.
    """
    if not isinstance(relation, Relation):
        raise TypeError(f"relation must be a Relation; got {type(relation).__name__}")
    if not isinstance(room, Room):
        raise TypeError(f"room must be a Room; got {type(room).__name__}")
    poses = np.asarray(poses, dtype=np.float64)
    if poses.ndim < 2 or poses.shape[-1] != 3:
        raise ValueError(f"poses must have shape (..., n, 3); got {poses.shape}")
    n = poses.shape[-2]
    sizes = np.asarray(sizes, dtype=np.float64)
    if sizes.ndim != 2 or sizes.shape[0] != n or sizes.shape[1] not in (2, 3):
        raise ValueError(f"sizes must have shape ({n}, 2) or ({n}, 3) like poses; got {sizes.shape}")
    if max(relation.objects) >= n:
        raise ValueError(f"relation refers to piece {max(relation.objects)}; poses holds {n}")
    i = relation.objects[0]
    pi = poses[..., i, :]
    if relation.kind == "against_wall":
        u, v = front_axis(pi[..., 2]), side_axis(pi[..., 2])
        back = pi[..., :2] - u * sizes[i, 1] / 2.0
        half = v * sizes[i, 0] / 2.0
        pts = np.stack([back + half, back - half], axis=-2)  # (..., 2, 2): the back corners
        start, end, _ = room.walls()
        seg = end - start
        rel = pts[..., None, :] - start  # (..., 2, k, 2)
        s = np.clip(np.sum(rel * seg, axis=-1) / np.sum(seg * seg, axis=-1), 0.0, 1.0)
        dist = np.linalg.norm(rel - s[..., None] * seg, axis=-1)
        return dist.min(axis=-1).max(axis=-1) <= WALL_TOL + _LENGTH_EPS
    j = relation.objects[1]
    pj = poses[..., j, :]
    diff = pj[..., :2] - pi[..., :2]
    dist = np.linalg.norm(diff, axis=-1)
    if relation.kind == "near":
        a, b = relation.distance  # type: ignore[misc]
        return (dist >= a - _LENGTH_EPS) & (dist <= b + _LENGTH_EPS)
    if relation.kind == "faces":
        cosine = np.sum(front_axis(pi[..., 2]) * diff, axis=-1) / np.where(dist > 0.0, dist, 1.0)
        return (dist > 0.0) & (cosine >= _COS_FACING - 1e-12)
    # side_of: i's centre beyond the named face of j, within that face's span (the objective's term is 0)
    alpha = np.sum(-diff * side_axis(pj[..., 2]), axis=-1)
    beta = np.sum(-diff * front_axis(pj[..., 2]), axis=-1)
    half_w, half_d = sizes[j, 0] / 2.0, sizes[j, 1] / 2.0
    out, across, reach, span = {
        "front": (beta, alpha, half_d, half_w),
        "back": (-beta, alpha, half_d, half_w),
        "left": (alpha, beta, half_w, half_d),
        "right": (-alpha, beta, half_w, half_d),
    }[relation.side]  # type: ignore[index]
    return (out >= reach - _SIDE_EPS) & (np.abs(across) <= span + _SIDE_EPS)


def semantic_satisfaction(layout: Layout) -> Satisfaction:
    """Which of the layout's own semantic relations hold (module docstring): :class:`Satisfaction`."""
    layout = _check_layout(layout)
    poses, sizes = layout.poses(), layout.sizes()
    holds = np.array(
        [bool(relation_holds(rel, layout.room, poses, sizes)) for rel in layout.relations], dtype=bool
    )
    kinds = tuple(rel.kind for rel in layout.relations)
    return Satisfaction(kinds, holds, np.zeros(len(kinds), dtype=bool))


# ----------------------------------------------------------------------------------------------
# all together


def _rate(count: float, total: int, empty: float) -> float:
    return float(count / total) if total else empty


def layout_metrics(
    layout: Layout,
    proxies: Rects | None = None,
    *,
    owner: np.ndarray | None = None,
    allowed: np.ndarray | None = None,
    front: np.ndarray | None = None,
    required: np.ndarray | None = None,
    radius: float = PERSON_RADIUS,
    cell: float = CELL,
    strip: float = STRIP_DEPTH,
    threshold: float = OVERLAP_THRESHOLD,
    tol: float = BOUNDS_TOL,
    reference: Sequence[Proxy] | None = None,
) -> LayoutMetrics:
    """Every metric of ``layout`` in one :class:`LayoutMetrics`, building the grid and access map once.

    ``proxies = (center (k, 2), size (k, 2), theta (k,))`` are the reference proxies (never a method's
    own), with ``owner`` (k,) int, ``allowed`` (k, n) bool and ``front`` (k,) bool as in
    :func:`proxy_conflicts` and :func:`accessible_objects`; ``required`` as in :func:`navigable`.
    ``reference``: the :class:`~neurips26.iohp.proxy.Proxy` records whose functional relations are
    scored (:func:`functional_satisfaction`; default the layout's
    :func:`~neurips26.iohp.proxy.default_proxies`). The semantic relations are the layout's own.
    """
    layout = _check_layout(layout)
    records = None if reference is None else _check_records("reference", reference, layout.n)
    if allowed is not None and proxies is None:
        raise ValueError("allowed needs proxies; got proxies=None")
    radius = _check_radius(radius)
    strip = check_float("strip", strip, minimum=0.0, strict_min=True)
    proxy = _proxy_inputs(layout, proxies, owner, front)
    need = _required(layout, proxy, required)
    n = layout.n
    n_pairs = n * (n - 1) // 2

    pairs = collision_pairs(layout, threshold=threshold)
    in_collision = np.zeros(n, dtype=bool)
    in_collision[pairs.ravel()] = True
    oob = out_of_bounds(layout, tol=tol)
    blocked = door_blocking(layout, threshold=threshold)

    grid = floor_grid(layout, cell=cell)
    access = _access_from_grid(layout, grid, radius)
    n_floor = int(grid.floor.sum())

    k = 0
    conflict = proxy_rate = None
    proxy_ok = None
    if proxy is not None:
        rects, own, _ = proxy
        k = len(own)
        conflicts = proxy_conflicts(layout, rects, own, allowed=allowed, threshold=threshold)
        conflict = _rate(conflicts.sum(), k, 0.0)
        proxy_ok = _proxy_access(access, rects)
        proxy_rate = _rate(proxy_ok.sum(), k, 1.0)
    objects_ok = _object_access(layout, access, proxy, strip, proxy_ok)
    functional = functional_satisfaction(layout, records, threshold=threshold)
    semantic = semantic_satisfaction(layout)
    by_kind = {kind: functional.rate(kind) for kind in FUNCTION_KINDS}

    return LayoutMetrics(
        n_objects=n,
        n_proxies=k,
        collision_pairs=len(pairs),
        collision_rate=_rate(len(pairs), n_pairs, 0.0),
        colliding_objects=_rate(in_collision.sum(), n, 0.0),
        out_of_bounds=_rate(oob.sum(), n, 0.0),
        door_blocked=bool(blocked.any()),
        proxy_conflict=conflict,
        free_ratio=_rate(grid.free.sum(), n_floor, 0.0),
        accessibility=_rate(objects_ok.sum(), n, 1.0),
        proxy_accessibility=proxy_rate,
        reachability=access.reachability,
        navigable=bool(objects_ok[need].all()),
        functional_satisfaction=_rate(functional.satisfied.sum(), functional.count(), 1.0),
        functional_within_reach=by_kind["within_reach"],
        functional_faces=by_kind["faces"],
        functional_view_range=by_kind["view_range"],
        functional_tucked_under=by_kind["tucked_under"],
        n_functional=functional.count(),
        semantic_satisfaction=_rate(semantic.satisfied.sum(), semantic.count(), 1.0),
        n_semantic=semantic.count(),
    )


__all__ = [
    "BOUNDS_TOL",
    "CELL",
    "MAX_CELLS",
    "OVERLAP_THRESHOLD",
    "PERSON_RADIUS",
    "STRIP_DEPTH",
    "Rects",
    "AccessMap",
    "FloorGrid",
    "LayoutMetrics",
    "Satisfaction",
    "access_map",
    "accessible_objects",
    "accessible_proxies",
    "collision_pairs",
    "door_blocking",
    "floor_grid",
    "free_ratio",
    "functional_satisfaction",
    "layout_metrics",
    "navigable",
    "out_of_bounds",
    "proxy_conflicts",
    "reachability",
    "relation_holds",
    "semantic_satisfaction",
]
