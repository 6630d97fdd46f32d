"""A rule-based stand-in for the language model's initial layout and relations, with mistakes (§3.1, §3.6).

In IOHP's pipeline (§3.6) a language model first writes the object list, an initial pose
``xi_i^0 = (x_i, y_i, theta_i)`` for every piece and semantic relations (``against_wall``, ``near``,
``faces``, ``side_of``, §3.1); the layout objective (§3.3) starts from those poses and keeps them through its
prior term ``w_0 sum_i |c_i - c_i^0|^2``. The chapter never calls a model here: :func:`initial_layout`
places the pieces by simple per-category rules, the way such a model writes numbers (§7.1), and then
injects, seeded, the kinds of mistakes numeric placement by a language model makes.

**Rules** (every clean pose axis-aligned, ``theta`` a multiple of 90 degrees). A piece *against a wall*
(bed, wardrobe, dresser, bookshelf, TV stand, sideboard, desk, filing cabinet, nightstand) has its back
face on the wall line and faces into the room: for wall ``k`` with start ``s_k``, unit direction ``t_k``
and inward normal ``n_k``, at distance ``a`` along it,

    c = s_k + a t_k + (d / 2) n_k,      u(theta) = n_k   (so v(theta) = -t_k).

The bed is centred on a wall (not the door's when another fits) with its nightstands beside its head (the
first on its left ``+v``, the second on its right, the pairing of the reference proxies);
a desk comes with its chair in front, facing it; the dining table sits at the centre of the room's larger
arm with its chairs around it (long sides first, then the ends), each chair facing the table, its front
2 cm from the edge; the TV stand is centred on a wall and the main seat (the first sofa, else armchair)
faces it across the room (back to the opposite wall when the centre distance stays within 4 m, else at
2.8 m); the coffee table stands 0.45 m (a seated leg zone, §3.2) in front of that seat, its front toward
it; armchairs (and a second sofa) sit at the coffee table's ends facing it, or beside a sofa; side tables
beside a seat; plants in corners. A *wall slot* is one end of a free run of a wall (or, for the bed and the
TV, the free point nearest the wall's middle); which slot a piece gets is drawn from ``seed``. Every
candidate is scored by its exact overlap area with the pieces already placed, the door swing zones, the
L-shape's notch and the outside of the bounding box, and only the least-overlapping candidates are kept, so
the clean layout is collision-free unless the room is too full; even then a wall piece stays on a wall. The
clean layout is *not* made usable: nothing keeps a chair's pull-out zone or a wardrobe's door swing free
(the chapter's point is that a collision-free layout can still be unusable).

**Relations.** Each rule states the relations it implies (against_wall for wall pieces; side_of, near and
faces inside groups; faces and near between the seat and the TV); ``near`` gets the clean centre distance
``+-0.3 m`` rounded outward to 0.1 m (the TV pair: the viewing range 1.8-3.5 m). Like LayoutVLM's
self-consistent decoding (§4) only the relations the clean poses satisfy are kept: ``against_wall`` when
both back corners lie within 2 cm of the outline, ``faces`` within 20 degrees, ``side_of`` when the centre
lies beyond that face of the reference piece.

**Mistakes** ([our choice], :data:`MISTAKE_RATES`). At level ``mistakes = m`` in [0, 1] each mistake
happens to each eligible item independently with probability ``m x rate``; the random numbers are drawn
whatever ``m`` is, so the mistakes at a lower level are a subset of those at a higher one and ``m = 0``
is the clean proposal. Applied in this order to the clean poses:

* ``shared_slot`` (each wall group after the first): its anchor takes the wall slot of an earlier wall
  group (same wall, same centre along it, back to the wall), its followers (a bed's nightstands, a desk's
  chair) moved rigidly with it: two objects in one slot, an overlap;
* ``jammed_chair`` (chairs at a table): pushed back along ``-u`` until its back is flush with the wall
  behind it, still facing the table: no room to pull it out or to sit;
* ``turn`` (every piece): rotated about its centre by 180 degrees (half the cases: facing the wall) or by
  +-90 degrees;
* ``outside`` (every piece): pushed through its nearest wall until it sticks out by 0.1-0.3 m;
* ``noise`` (every piece): ``N(0, 0.15^2)`` m added to ``x`` and ``y`` (:data:`NOISE_STD`);
* ``wrong_relation`` (every kept relation): replaced by a variant the clean poses violate (another target,
  the opposite side, or a ``near`` range shifted by 1 m).

Everything is NumPy and takes a few milliseconds per room; the same ``(room, furniture, seed, mistakes)``
always gives the same layout (:func:`neurips26.seeding.sub_seed` streams: 0 for the rules, one per mistake
kind).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neurips26.iohp.geometry import wrap_angle
from neurips26.iohp.layout import Furniture, Layout, Relation, Room
from neurips26.iohp.proxy import SEATED_LEG_DEPTH, TV_VIEW_RANGE
from neurips26.seeding import sub_seed
from neurips26.validation import check_float, check_seed

#: Mistake level of a typical language model (the documented rates below apply as they are).
DEFAULT_MISTAKES = 1.0
#: Per-item probabilities of each mistake at ``mistakes = 1`` [our choice] (module docstring for the items).
MISTAKE_RATES: dict[str, float] = {
    "shared_slot": 0.15,
    "jammed_chair": 0.3,
    "turn": 0.1,
    "outside": 0.1,
    "noise": 0.5,
    "wrong_relation": 0.15,
}
#: The order in which the mistakes are applied (also their sub-seed index, from 1).
MISTAKE_KINDS: tuple[str, ...] = tuple(MISTAKE_RATES)
#: Standard deviation (m) of the position noise, per axis.
NOISE_STD = 0.15
#: How far (m) an ``outside`` mistake pushes a piece past its wall: uniform in this range.
OVERHANG_RANGE = (0.1, 0.3)
#: Categories the rules put against a wall, back to it and facing into the room.
WALL_CATEGORIES: tuple[str, ...] = (
    "bed",
    "wardrobe",
    "dresser",
    "bookshelf",
    "tv_stand",
    "sideboard",
    "desk",
    "filing_cabinet",
    "nightstand",
)
#: Gap (m) between pieces of one group: bed and nightstand, chair front and table edge.
GROUP_GAP = 0.02
#: Gap (m) between a piece and the seat or table it stands beside (side table, armchair next to a sofa).
SIDE_GAP = 0.05
#: Distance (m) from a seat's front to the coffee table: one seated leg zone (§3.2).
SEAT_GAP = SEATED_LEG_DEPTH
#: Largest seat-to-TV centre distance (m) with the seat's back on the opposite wall; else it floats at
#: :data:`SOFA_DISTANCE`.
MAX_WALL_VIEW = 4.0
SOFA_DISTANCE = 2.8
#: Tolerances of the self-consistency filter: back face to wall (m), facing angle (degrees), near margin (m).
WALL_TOL = 0.02
FACING_TOL_DEG = 20.0
NEAR_MARGIN = 0.3

_WALL_STEP = 0.025  # candidate spacing along a wall (m)
_FREE_STEP = 0.05  # candidate grid for free-standing groups (m)
_ZERO = 1e-9  # overlap area (m^2) that counts as none
_SIDE_EPS = 1e-6


# ----------------------------------------------------------------------------------------------------------
# Records
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mistake:
    """One injected mistake: ``kind`` (a key of :data:`MISTAKE_RATES`), the ``objects`` it concerns, a note.

    ``shared_slot``: ``(moved, owner of the slot)``; ``wrong_relation``: the objects of the new relation and
    ``detail`` = ``"old -> new"``; the others: ``(piece,)`` (``turn``: ``detail`` = the angle in degrees).
    """

    kind: str
    objects: tuple[int, ...]
    detail: str = ""


@dataclass(frozen=True)
class InitialProposal:
    """What the stand-in proposes: the ``layout`` with mistakes, the ``clean`` one, the ``mistakes`` made.

    ``clean`` is the proposal at ``mistakes = 0`` (same rules, same slots); both carry their relations.
    """

    layout: Layout
    clean: Layout
    mistakes: tuple[Mistake, ...]


# ----------------------------------------------------------------------------------------------------------
# Small geometry (axis-aligned boxes, room boundary)
# ----------------------------------------------------------------------------------------------------------


def _unit(theta: np.ndarray | float) -> np.ndarray:
    t = np.asarray(theta, dtype=float)
    return np.stack([np.cos(t), np.sin(t)], axis=-1)


def _half_extents(w: np.ndarray, d: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Half extents along x and y of axis-aligned rectangles (``theta`` a multiple of 90 degrees)."""
    c = np.abs(np.rint(np.cos(theta)))
    s = np.abs(np.rint(np.sin(theta)))
    return c * d / 2.0 + s * w / 2.0, s * d / 2.0 + c * w / 2.0


def _overlap(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Overlap areas of boxes ``(..., 4)`` (x0, y0, x1, y1) with each of ``others`` (m, 4): ``(..., m)``."""
    b = boxes[..., None, :]
    ox = np.minimum(b[..., 2], others[:, 2]) - np.maximum(b[..., 0], others[:, 0])
    oy = np.minimum(b[..., 3], others[:, 3]) - np.maximum(b[..., 1], others[:, 1])
    return np.clip(ox, 0.0, None) * np.clip(oy, 0.0, None)


def _segment_distance(points: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Distance of each point (p, 2) to each segment (k, 2)-(k, 2): (p, k)."""
    seg = end - start
    rel = points[:, None, :] - start[None]
    s = np.clip(np.sum(rel * seg, axis=-1) / np.sum(seg * seg, axis=-1), 0.0, 1.0)
    return np.linalg.norm(rel - s[..., None] * seg, axis=-1)


def _ray_length(room: Room, origin: np.ndarray, direction: np.ndarray) -> tuple[float, int]:
    """Distance along ``direction`` from ``origin`` (inside) to the outline, and the wall it meets."""
    start, end, _ = room.walls()
    seg = end - start
    best, wall = math.inf, -1
    for k in range(len(start)):
        den = direction[0] * seg[k, 1] - direction[1] * seg[k, 0]
        if abs(den) < 1e-12:
            continue
        rel = start[k] - origin
        t = (rel[0] * seg[k, 1] - rel[1] * seg[k, 0]) / den
        tau = (rel[0] * direction[1] - rel[1] * direction[0]) / den
        if t > 1e-9 and -1e-9 <= tau <= 1.0 + 1e-9 and t < best:
            best, wall = t, k
    return best, wall


# ----------------------------------------------------------------------------------------------------------
# The rule-based planner
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Part:
    """A piece of a group in the group's frame: centre ``c + off_u u + off_v v``, heading ``theta + rel``."""

    index: int
    off_u: float
    off_v: float
    rel: float = 0.0


#: A candidate position of a group: parts, frame centre (2,), heading, relations it implies when taken.
_Option = tuple[list[_Part], np.ndarray, float, list]


@dataclass(frozen=True)
class _WallGroup:
    """A group against wall ``wall``: its ``anchor`` (back to the wall) and the pieces that follow it."""

    anchor: int
    followers: tuple[int, ...]
    wall: int


class _Planner:
    """Places the pieces one group at a time (module docstring); fills ``poses`` and candidate relations."""

    def __init__(self, room: Room, furniture: tuple[Furniture, ...], rng: np.random.Generator) -> None:
        self.room = room
        self.cat = [f.category for f in furniture]
        self.w = np.array([f.width for f in furniture], dtype=float).reshape(-1)
        self.d = np.array([f.depth for f in furniture], dtype=float).reshape(-1)
        self.n = len(furniture)
        self.rng = rng
        self.poses = np.zeros((self.n, 3))
        self.placed = np.zeros(self.n, dtype=bool)
        self.boxes = np.zeros((self.n, 4))
        self.relations: list[tuple[str, tuple[int, int] | tuple[int], object]] = []
        self.wall_groups: list[_WallGroup] = []
        self.table_of: dict[int, int] = {}  # chair -> its desk or dining table
        self.start, self.end, self.normal = room.walls()
        self.length = np.linalg.norm(self.end - self.start, axis=1)
        self.along = (self.end - self.start) / self.length[:, None]
        self.inward = np.arctan2(self.normal[:, 1], self.normal[:, 0])
        x0, y0, x1, y1 = room.bounds
        self.bbox = np.array([x0, y0, x1, y1])
        fixed = [self._door_box(door) for door in room.doors]
        if room.notch is not None:
            fixed.append(np.array(room.notch, dtype=float))
        self.fixed = np.array(fixed, dtype=float).reshape(-1, 4)
        self.by_cat: dict[str, list[int]] = {}
        for i, c in enumerate(self.cat):
            self.by_cat.setdefault(c, []).append(i)

    @staticmethod
    def _door_box(door) -> np.ndarray:
        c, s, th = door.swing_zone()
        hx, hy = _half_extents(np.array(s[0]), np.array(s[1]), np.array(th))
        return np.array([c[0] - hx, c[1] - hy, c[0] + hx, c[1] + hy], dtype=float)

    # --- scoring ----------------------------------------------------------------------------------------
    def _part_boxes(self, parts: Sequence[_Part], center: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Boxes (x0, y0, x1, y1) of the parts for group centres (G, 2) and headings (G,): (G, P, 4)."""
        u, v = _unit(theta), _unit(theta + math.pi / 2.0)
        ou = np.array([p.off_u for p in parts])
        ov = np.array([p.off_v for p in parts])
        c = center[:, None, :] + ou[None, :, None] * u[:, None, :] + ov[None, :, None] * v[:, None, :]
        th = theta[:, None] + np.array([p.rel for p in parts])[None]
        idx = [p.index for p in parts]
        hx, hy = _half_extents(self.w[idx][None], self.d[idx][None], th)
        return np.stack([c[..., 0] - hx, c[..., 1] - hy, c[..., 0] + hx, c[..., 1] + hy], axis=-1)

    def _score(self, boxes: np.ndarray) -> np.ndarray:
        """Overlap area (m^2) of candidate part boxes (G, P, 4) with everything in the way: (G,)."""
        others = np.concatenate([self.boxes[self.placed], self.fixed])
        area = (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])
        inside = _overlap(boxes, self.bbox[None])[..., 0]
        total = area - inside
        if len(others):
            total = total + _overlap(boxes, others).sum(axis=-1)
        return total.sum(axis=-1)

    def _commit(self, parts: Sequence[_Part], center: np.ndarray, theta: float) -> None:
        u, v = _unit(theta), _unit(theta + math.pi / 2.0)
        for p in parts:
            c = center + p.off_u * u + p.off_v * v
            th = wrap_angle(theta + p.rel)
            self.poses[p.index] = (c[0], c[1], th)
            hx, hy = _half_extents(self.w[p.index], self.d[p.index], np.array(th))
            self.boxes[p.index] = (c[0] - hx, c[1] - hy, c[0] + hx, c[1] + hy)
            self.placed[p.index] = True

    # --- against a wall ---------------------------------------------------------------------------------
    def _wall_candidates(self, parts: Sequence[_Part], walls: Sequence[int]) -> list[tuple[int, np.ndarray]]:
        """Per wall: the positions ``a`` along it (exact ends included) for the group's frame origin."""
        out = []
        for k in walls:
            th = np.full(1, self.inward[k])
            # the group's extent along the wall direction t = -v, from the frame origin at a
            lo_hi = self._part_boxes(parts, np.zeros((1, 2)), th)[0]
            proj = np.concatenate([lo_hi[:, [0, 1]], lo_hi[:, [2, 3]]]) @ self.along[k]
            lo, hi = -proj.min(), self.length[k] - proj.max()
            if hi < lo - 1e-12:
                continue
            a = np.append(np.arange(lo, hi, _WALL_STEP), hi)
            out.append((k, a))
        return out

    def place_on_wall(
        self,
        parts: Sequence[_Part],
        *,
        rule: str = "ends",
        prefer: Sequence[int] | None = None,
        walls: Sequence[int] | None = None,
        target: float | None = None,
    ) -> bool:
        """Place a group against a wall; ``rule``: ``"ends"`` of free runs, ``"middle"``, or ``"target"``.

        ``prefer``: walls tried first when they hold a free slot; ``walls``: the only walls allowed;
        ``target``: the position along the single allowed wall to get nearest to. Returns False (nothing
        placed) only when ``walls`` is given and no free slot exists there; otherwise the least-overlapping
        slot is taken when none is free.
        """
        allowed = list(range(len(self.start))) if walls is None else list(walls)
        cands = self._wall_candidates(parts, allowed)
        free: list[tuple[int, float, float]] = []  # (wall, a, distance to the rule's target)
        best: tuple[float, int, float] | None = None
        for k, a in cands:
            center = self.start[k] + a[:, None] * self.along[k]
            score = self._score(self._part_boxes(parts, center, np.full(len(a), self.inward[k])))
            j = int(np.argmin(score))
            if best is None or score[j] < best[0] - _ZERO:
                best = (float(score[j]), k, float(a[j]))
            ok = score <= _ZERO
            if not ok.any():
                continue
            if rule == "ends":
                edges = np.flatnonzero(np.diff(np.concatenate([[0], ok.astype(int), [0]])))
                for s, e in zip(edges[::2], edges[1::2] - 1, strict=True):
                    free += [(k, float(a[s]), 0.0)] + ([(k, float(a[e]), 0.0)] if e != s else [])
            else:
                goal = (a[0] + a[-1]) / 2.0 if rule == "middle" else float(target)  # type: ignore[arg-type]
                okj = np.flatnonzero(ok)
                j = okj[np.argmin(np.abs(a[okj] - goal))]
                free.append((k, float(a[j]), float(abs(a[j] - goal))))
        if free:
            if prefer is not None and any(k in prefer for k, _, _ in free):
                free = [f for f in free if f[0] in prefer]
            if rule == "target":
                k, a_pos, _ = min(free, key=lambda f: f[2])
            else:
                k, a_pos, _ = free[int(self.rng.integers(len(free)))]
        elif walls is not None or best is None:
            return False
        else:
            _, k, a_pos = best
        self._commit(parts, self.start[k] + a_pos * self.along[k], float(self.inward[k]))
        self.wall_groups.append(_WallGroup(parts[0].index, tuple(p.index for p in parts[1:]), k))
        for p in parts:
            if p.rel == 0.0 and abs(p.off_u - self.d[p.index] / 2.0) < 1e-12:
                self.relations.append(("against_wall", (p.index,), None))
        return True

    # --- free standing ----------------------------------------------------------------------------------
    def place_free(
        self,
        parts: Sequence[_Part],
        desired: np.ndarray,
        thetas: Sequence[float],
        *,
        exact_only: bool = False,
    ) -> bool:
        """Place a group at the least-overlapping position nearest ``desired``, trying headings in order.

        With ``exact_only`` only ``desired`` itself is tried and nothing is placed unless it is free.
        """
        best: tuple[float, int, float, np.ndarray, float] | None = None
        for order, theta in enumerate(thetas):
            th1 = np.full(1, float(theta))
            rel = self._part_boxes(parts, np.zeros((1, 2)), th1)[0]
            if exact_only:
                centers = desired[None].astype(float)
            else:
                lo, hi = rel[:, :2].min(axis=0), rel[:, 2:].max(axis=0)
                axes = []
                for ax in range(2):
                    a0, a1 = self.bbox[ax] - lo[ax], self.bbox[ax + 2] - hi[ax]
                    if a1 < a0:
                        axes.append(np.array([(a0 + a1) / 2.0]))
                    else:
                        axes.append(np.append(np.arange(a0, a1, _FREE_STEP), a1))
                gx, gy = np.meshgrid(*axes, indexing="ij")
                centers = np.concatenate([desired[None], np.stack([gx.ravel(), gy.ravel()], axis=1)])
            score = self._score(self._part_boxes(parts, centers, np.full(len(centers), float(theta))))
            dist = np.linalg.norm(centers - desired, axis=1)
            j = int(np.lexsort((dist, np.round(score / 1e-7)))[0])
            key = (float(score[j]), order, float(dist[j]))
            if (
                best is None
                or (key[0] < best[0] - _ZERO)
                or (abs(key[0] - best[0]) <= _ZERO and key < best[:3])
            ):
                best = (*key, centers[j], float(theta))
        if best is None:
            raise ValueError("thetas must hold at least one heading")
        if exact_only and best[0] > _ZERO:
            return False
        self._commit(parts, best[3], best[4])
        return True

    def _slots_free(self, options: Sequence[_Option]) -> bool:
        """Place the first free option (exact position only) and record its relations; False if none is."""
        for parts, center, theta, relations in options:
            if self.place_free(parts, center, [theta], exact_only=True):
                self.relations += relations
                return True
        return False

    # --- the rules --------------------------------------------------------------------------------------
    def run(self) -> None:
        self._beds()
        self._desks()
        self._dining()
        self._living()
        self._wall_pieces()
        self._seats_and_small()

    def _todo(self, category: str) -> list[int]:
        return [i for i in self.by_cat.get(category, []) if not self.placed[i]]

    def _near(self, i: int, j: int) -> None:
        self.relations.append(("near", (i, j), None))

    def _beds(self) -> None:
        stands = self._todo("nightstand")
        door_walls = {door.wall for door in self.room.doors}
        non_door = [k for k in range(len(self.start)) if k not in door_walls]
        for r, bed in enumerate(self._todo("bed")):
            mine = stands[2 * r : 2 * r + 2]
            parts = [_Part(bed, self.d[bed] / 2.0, 0.0)]
            for side, s in zip((1.0, -1.0), mine, strict=False):
                off = side * (self.w[bed] / 2.0 + GROUP_GAP + self.w[s] / 2.0)
                parts.append(_Part(s, self.d[s] / 2.0, off))
            self.place_on_wall(parts, rule="middle", prefer=non_door)
            for side, s in zip(("left", "right"), mine, strict=False):
                self.relations.append(("side_of", (s, bed), side))
                self._near(s, bed)

    def _chair_tables(self) -> dict[int, int]:
        """Chair ``j`` (list order) goes to desk ``j``, the rest to the first dining table (as proxy.py)."""
        desks, tables = self.by_cat.get("desk", []), self.by_cat.get("dining_table", [])
        out = {}
        for j, c in enumerate(self.by_cat.get("chair", [])):
            if j < len(desks):
                out[c] = desks[j]
            elif tables:
                out[c] = tables[0]
        return out

    def _desks(self) -> None:
        self.table_of = self._chair_tables()
        for desk in self._todo("desk"):
            chairs = [c for c, t in self.table_of.items() if t == desk]
            parts = [_Part(desk, self.d[desk] / 2.0, 0.0)]
            parts += [_Part(c, self.d[desk] + GROUP_GAP + self.d[c] / 2.0, 0.0, math.pi) for c in chairs]
            self.place_on_wall(parts, rule="ends")
            for c in chairs:
                self.relations += [("faces", (c, desk), None), ("side_of", (c, desk), "front")]
                self._near(c, desk)

    def _main_rectangle(self) -> np.ndarray:
        """The larger of the L-shape's two maximal rectangles (the room's bounding box for a rectangle)."""
        x0, y0, x1, y1 = self.bbox
        if self.room.notch is None:
            return self.bbox.copy()
        nx0, ny0, nx1, ny1 = self.room.notch
        tall = np.array([nx1, y0, x1, y1]) if nx0 <= x0 + 1e-9 else np.array([x0, y0, nx0, y1])
        wide = np.array([x0, ny1, x1, y1]) if ny0 <= y0 + 1e-9 else np.array([x0, y0, x1, ny0])

        def area(r: np.ndarray) -> float:
            return float((r[2] - r[0]) * (r[3] - r[1]))

        return tall if area(tall) >= area(wide) else wide

    def _dining(self) -> None:
        for t, table in enumerate(self._todo("dining_table")):
            chairs = [c for c, tt in self.table_of.items() if tt == table and not self.placed[c]]
            w, d = self.w[table], self.d[table]
            cap = max(1, int(w // (max((self.w[c] for c in chairs), default=0.5) + 0.08)))
            long_sides: list[list[int]] = [[], []]
            ends: list[int] = []
            for j, c in enumerate(chairs):
                if len(long_sides[0]) + len(long_sides[1]) < 2 * cap:
                    long_sides[j % 2].append(c)
                elif len(ends) < 2:
                    ends.append(c)
            parts = [_Part(table, 0.0, 0.0)]
            sides: list[tuple[int, str]] = []
            for sign, row, name in ((1.0, long_sides[0], "front"), (-1.0, long_sides[1], "back")):
                pitch = w / max(len(row), 1)
                for q, c in enumerate(row):
                    off_v = (q - (len(row) - 1) / 2.0) * pitch
                    off_u = sign * (d / 2.0 + GROUP_GAP + self.d[c] / 2.0)
                    parts.append(_Part(c, off_u, off_v, math.pi if sign > 0 else 0.0))
                    sides.append((c, name))
            for sign, c, name in zip((1.0, -1.0), ends, ("left", "right"), strict=False):
                off_v = sign * (w / 2.0 + GROUP_GAP + self.d[c] / 2.0)
                parts.append(_Part(c, 0.0, off_v, -sign * math.pi / 2.0))
                sides.append((c, name))
            rect = self._main_rectangle()
            center = (rect[:2] + rect[2:]) / 2.0
            along_x = rect[2] - rect[0] >= rect[3] - rect[1]
            thetas = [math.pi / 2.0, 0.0] if along_x else [0.0, math.pi / 2.0]
            if t > 0:  # a second table: anywhere free
                center = center + self.rng.uniform(-0.5, 0.5, size=2)
            self.place_free(parts, center, thetas)
            for c, name in sides:
                self.relations += [("faces", (c, table), None), ("side_of", (c, table), name)]
                self._near(c, table)

    def _living(self) -> None:
        tvs, sofas = self._todo("tv_stand"), self._todo("sofa")
        armchairs = self._todo("armchair")
        seat = sofas[0] if sofas else (armchairs[0] if armchairs else None)
        if tvs:
            self._tv_and_seat(tvs[0], seat)
        elif seat is not None:
            self.place_on_wall([_Part(seat, self.d[seat] / 2.0, 0.0)], rule="ends")
        if seat is None:
            return
        coffees = self._todo("coffee_table")
        if coffees:
            c = coffees[0]
            s = self.poses[seat]
            u = _unit(s[2])
            center = s[:2] + u * (self.d[seat] / 2.0 + SEAT_GAP + self.d[c] / 2.0)
            self.place_free([_Part(c, 0.0, 0.0)], center, [wrap_angle(s[2] + math.pi)])
            self.relations.append(("side_of", (c, seat), "front"))
            self._near(c, seat)

    def _tv_and_seat(self, tv: int, seat: int | None) -> None:
        n_walls = len(self.start)
        good = []
        if seat is not None:  # walls whose opposite side is at a comfortable viewing distance
            for k in range(n_walls):
                mid = self.start[k] + self.along[k] * self.length[k] / 2.0
                reach, _ = _ray_length(self.room, mid + 1e-6 * self.normal[k], self.normal[k])
                view = reach - self.d[tv] / 2.0 - self.d[seat] / 2.0
                if TV_VIEW_RANGE[0] + 0.6 <= view <= MAX_WALL_VIEW:
                    good.append(k)
        self.place_on_wall([_Part(tv, self.d[tv] / 2.0, 0.0)], rule="middle", prefer=good)
        if seat is None:
            return
        x, y, th = self.poses[tv]
        u = _unit(th)
        back = np.array([x, y]) - u * self.d[tv] / 2.0
        reach, wall = _ray_length(self.room, back + 1e-6 * u, u)
        placed = False
        if reach - self.d[tv] / 2.0 - self.d[seat] / 2.0 <= MAX_WALL_VIEW and wall >= 0:
            hit = back + reach * u
            target = float((hit - self.start[wall]) @ self.along[wall])
            part = [_Part(seat, self.d[seat] / 2.0, 0.0)]
            placed = self.place_on_wall(part, rule="target", walls=[wall], target=target)
        if not placed:
            center = np.array([x, y]) + u * SOFA_DISTANCE
            self.place_free([_Part(seat, 0.0, 0.0)], center, [wrap_angle(th + math.pi)])
        self.relations += [("faces", (seat, tv), None), ("faces", (tv, seat), None)]
        self.relations.append(("near", (seat, tv), TV_VIEW_RANGE))

    def _wall_pieces(self) -> None:
        rest = [i for i in range(self.n) if not self.placed[i] and self.cat[i] in WALL_CATEGORIES]
        rest.sort(key=lambda i: (-self.w[i] * self.d[i], i))
        for i in rest:
            self.place_on_wall([_Part(i, self.d[i] / 2.0, 0.0)], rule="ends")

    def _beside(self, i: int, anchor: int) -> list[_Option]:
        """``i`` beside ``anchor`` on its left then right, same heading, back faces aligned."""
        x, y, th = self.poses[anchor]
        u, v = _unit(th), _unit(th + math.pi / 2.0)
        out = []
        for sign, name in ((1.0, "left"), (-1.0, "right")):
            c = np.array([x, y]) + sign * v * (self.w[anchor] / 2.0 + SIDE_GAP + self.w[i] / 2.0)
            c = c + u * (self.d[i] / 2.0 - self.d[anchor] / 2.0)
            rels = [("side_of", (i, anchor), name), ("near", (i, anchor), None)]
            out.append(([_Part(i, 0.0, 0.0)], c, th, rels))
        return out

    def _at_ends(self, i: int, table: int, gap: float) -> list[_Option]:
        """``i`` at ``table``'s left then right end, ``gap`` m from it, facing it."""
        x, y, th = self.poses[table]
        v = _unit(th + math.pi / 2.0)
        out = []
        for sign, name in ((1.0, "left"), (-1.0, "right")):
            c = np.array([x, y]) + sign * v * (self.w[table] / 2.0 + gap + self.d[i] / 2.0)
            rels = [("faces", (i, table), None), ("side_of", (i, table), name), ("near", (i, table), None)]
            out.append(([_Part(i, 0.0, 0.0)], c, wrap_angle(th - sign * math.pi / 2.0), rels))
        return out

    def _corner(self, i: int) -> None:
        """``i`` in a free convex corner (order drawn from the seed), back to one of its two walls."""
        pts = self.room.vertices()
        convex = np.flatnonzero(self.room.convex_corners())
        order = convex[self.rng.permutation(len(convex))]
        options: list[_Option] = []
        for k in order:
            th = float(self.inward[k - 1] if self.rng.random() < 0.5 else self.inward[k])
            hx, hy = _half_extents(self.w[i], self.d[i], np.array(th))
            q = self.normal[k - 1] + self.normal[k]  # into the room along both walls
            options.append(([_Part(i, 0.0, 0.0)], pts[k] + q * np.array([hx, hy]), th, []))
        if not self._slots_free(options):
            parts, center, th, _ = options[0]
            self.place_free(parts, center, [th])

    def _seats_and_small(self) -> None:
        """Armchairs and extra sofas, side tables, chairs left over, plants and anything else."""
        sofas = [i for i in self.by_cat.get("sofa", []) if self.placed[i]]
        coffee = next((i for i in self.by_cat.get("coffee_table", []) if self.placed[i]), None)
        for i in range(self.n):
            if self.placed[i] or self.cat[i] not in ("sofa", "armchair"):
                continue
            options = self._at_ends(i, coffee, SEAT_GAP) if coffee is not None else []
            for s in sofas:
                options += self._beside(i, s)
            if not self._slots_free(options):
                self._corner(i)
            if self.cat[i] == "sofa":
                sofas.append(i)
        seats = [j for j in range(self.n) if self.placed[j] and self.cat[j] in ("sofa", "armchair")]
        for i in range(self.n):
            if self.placed[i]:
                continue
            if self.cat[i] == "side_table" and self._slots_free(
                [o for a in seats for o in self._beside(i, a)]
            ):
                continue
            table = self.table_of.get(i)
            if table is not None and self.placed[table]:
                if self._slots_free(self._at_ends(i, table, GROUP_GAP)):
                    continue
            self._corner(i)


# ----------------------------------------------------------------------------------------------------------
# Relations: resolution and the self-consistency filter
# ----------------------------------------------------------------------------------------------------------


def _back_corners(pose: np.ndarray, w: float, d: float) -> np.ndarray:
    """The two back corners of a footprint, shape (2, 2)."""
    c, u, v = pose[:2], _unit(pose[2]), _unit(pose[2] + math.pi / 2.0)
    return np.stack([c - u * d / 2.0 + v * w / 2.0, c - u * d / 2.0 - v * w / 2.0])


def _holds(rel: Relation, room: Room, poses: np.ndarray, sizes: np.ndarray) -> bool:
    """Whether ``rel`` holds for ``poses`` (n, 3) and ``sizes`` (n, >= 2), with the module's tolerances."""
    if rel.kind == "against_wall":
        (i,) = rel.objects
        start, end, _ = room.walls()
        back = _back_corners(poses[i], sizes[i, 0], sizes[i, 1])
        return bool(_segment_distance(back, start, end).min(axis=1).max() <= WALL_TOL)
    i, j = rel.objects
    diff = poses[j, :2] - poses[i, :2]
    dist = float(np.linalg.norm(diff))
    if rel.kind == "near":
        a, b = rel.distance  # type: ignore[misc]
        return a <= dist <= b
    if rel.kind == "faces":
        if dist == 0.0:
            return False
        return float(_unit(poses[i, 2]) @ diff) / dist >= math.cos(math.radians(FACING_TOL_DEG))
    # side_of: i's centre lies beyond the named face of j, in j's frame
    rel_c = -diff
    beta = float(rel_c @ _unit(poses[j, 2]))
    alpha = float(rel_c @ _unit(poses[j, 2] + math.pi / 2.0))
    half_w, half_d = sizes[j, 0] / 2.0, sizes[j, 1] / 2.0
    return {
        "front": beta >= half_d - _SIDE_EPS,
        "back": beta <= -half_d + _SIDE_EPS,
        "left": alpha >= half_w - _SIDE_EPS,
        "right": alpha <= -half_w + _SIDE_EPS,
    }[rel.side]  # type: ignore[index]


def _near_range(dist: float) -> tuple[float, float]:
    """The clean distance +- :data:`NEAR_MARGIN`, rounded outward to 0.1 m."""
    lo = max(0.0, math.floor(round((dist - NEAR_MARGIN) * 10.0, 9)) / 10.0)
    return lo, math.ceil(round((dist + NEAR_MARGIN) * 10.0, 9)) / 10.0


def _resolve(planner: _Planner, sizes: np.ndarray) -> tuple[Relation, ...]:
    """The candidate relations as records (``near`` ranges from the clean poses): those that hold, once."""
    out: list[Relation] = []
    for kind, objects, extra in planner.relations:
        if kind == "near":
            if extra is None:
                i, j = objects
                extra = _near_range(float(np.linalg.norm(planner.poses[i, :2] - planner.poses[j, :2])))
            rel = Relation(kind, objects, distance=extra)
        elif kind == "side_of":
            rel = Relation(kind, objects, side=extra)
        else:
            rel = Relation(kind, objects)
        if rel not in out and _holds(rel, planner.room, planner.poses, sizes):
            out.append(rel)
    return tuple(out)


_OPPOSITE = {"front": "back", "back": "front", "left": "right", "right": "left"}


def _wrong_variants(
    rel: Relation, n: int, room: Room, poses: np.ndarray, sizes: np.ndarray
) -> list[Relation]:
    """Variants of ``rel`` the clean ``poses`` violate: another target, the opposite side, a shifted range."""
    if rel.kind == "side_of":
        return [Relation("side_of", rel.objects, side=_OPPOSITE[rel.side])]  # type: ignore[index]
    if rel.kind == "against_wall":
        cands = [Relation("against_wall", (k,)) for k in range(n) if k != rel.objects[0]]
    else:
        i, j = rel.objects
        cands = [Relation(rel.kind, (i, k), rel.distance) for k in range(n) if k not in (i, j)]
    out = [c for c in cands if not _holds(c, room, poses, sizes)]
    if not out and rel.kind == "near":
        a, b = rel.distance  # type: ignore[misc]
        out = [Relation("near", rel.objects, distance=(a + 1.0, b + 1.0))]
    return out


# ----------------------------------------------------------------------------------------------------------
# Mistakes
# ----------------------------------------------------------------------------------------------------------


def _rigid(poses: np.ndarray, indices: Sequence[int], old: np.ndarray, new: np.ndarray) -> None:
    """Move ``poses[indices]`` (in place) by the rigid motion taking pose ``old`` to pose ``new``."""
    dth = new[2] - old[2]
    c, s = math.cos(dth), math.sin(dth)
    for i in indices:
        r = poses[i, :2] - old[:2]
        poses[i, :2] = new[:2] + np.array([c * r[0] - s * r[1], s * r[0] + c * r[1]])
        poses[i, 2] = wrap_angle(poses[i, 2] + dth)


def _apply_mistakes(
    planner: _Planner, relations: tuple[Relation, ...], sizes: np.ndarray, level: float, seed: int
) -> tuple[np.ndarray, tuple[Relation, ...], list[Mistake]]:
    """The mistakes of the module docstring, on a copy of the clean poses; returns poses, relations, log."""
    room, n = planner.room, planner.n
    clean = planner.poses
    poses = clean.copy()
    log: list[Mistake] = []
    rngs = {k: np.random.default_rng(sub_seed(seed, q + 1)) for q, k in enumerate(MISTAKE_KINDS)}

    def hit(kind: str, u: float) -> bool:
        return bool(u < level * MISTAKE_RATES[kind])

    start, end, normal = room.walls()
    along = (end - start) / np.linalg.norm(end - start, axis=1, keepdims=True)

    groups = planner.wall_groups
    wall_of = [g.wall for g in groups]  # where each group is now
    draws = rngs["shared_slot"].random((len(groups), 2))
    for m in range(1, len(groups)):
        if not hit("shared_slot", draws[m, 0]):
            continue
        j = int(draws[m, 1] * m)
        g, owner, k = groups[m], groups[j], wall_of[j]
        wall_of[m] = k
        a = float((poses[owner.anchor, :2] - start[k]) @ along[k])
        new_c = start[k] + a * along[k] + normal[k] * sizes[g.anchor, 1] / 2.0
        new = np.array([new_c[0], new_c[1], planner.inward[k]])
        old = poses[g.anchor].copy()
        _rigid(poses, (g.anchor, *g.followers), old, new)
        log.append(Mistake("shared_slot", (g.anchor, owner.anchor)))

    chairs = sorted(planner.table_of)
    draws = rngs["jammed_chair"].random(len(chairs))
    for c, u in zip(chairs, draws, strict=True):
        if not hit("jammed_chair", u):
            continue
        f = _unit(poses[c, 2])
        back = poses[c, :2] - f * sizes[c, 1] / 2.0
        if not room.contains(back, tol=0.0):
            continue
        reach, _ = _ray_length(room, back, -f)
        if math.isfinite(reach) and reach > 0.01:
            poses[c, :2] -= f * reach
            log.append(Mistake("jammed_chair", (c,)))

    draws = rngs["turn"].random((n, 2))
    for i in range(n):
        if hit("turn", draws[i, 0]):
            angle = 180 if draws[i, 1] < 0.5 else (90 if draws[i, 1] < 0.75 else -90)
            poses[i, 2] = wrap_angle(poses[i, 2] + math.radians(angle))
            log.append(Mistake("turn", (i,), str(angle)))

    draws = rngs["outside"].random((n, 2))
    for i in range(n):
        if not hit("outside", draws[i, 0]):
            continue
        corners = _box_corners(poses[i], sizes[i])
        k, beyond = _nearest_wall(corners, start, along, normal)
        overhang = OVERHANG_RANGE[0] + (OVERHANG_RANGE[1] - OVERHANG_RANGE[0]) * draws[i, 1]
        poses[i, :2] -= normal[k] * (overhang - beyond)
        log.append(Mistake("outside", (i,)))

    rng = rngs["noise"]
    draws, normal_draws = rng.random(n), rng.standard_normal((n, 2))
    for i in range(n):
        if hit("noise", draws[i]):
            poses[i, :2] += NOISE_STD * normal_draws[i]
            log.append(Mistake("noise", (i,)))

    out = list(relations)
    draws = rngs["wrong_relation"].random((len(relations), 2))
    for r, rel in enumerate(relations):
        if not hit("wrong_relation", draws[r, 0]):
            continue
        variants = _wrong_variants(rel, n, room, clean, sizes)
        if variants:
            new_rel = variants[int(draws[r, 1] * len(variants))]
            out[r] = new_rel
            log.append(
                Mistake("wrong_relation", new_rel.objects, f"{_describe(rel)} -> {_describe(new_rel)}")
            )
    return poses, tuple(out), log


def _nearest_wall(
    corners: np.ndarray, start: np.ndarray, along: np.ndarray, normal: np.ndarray
) -> tuple[int, float]:
    """The wall nearest a footprint among those it faces (its shadow on the wall overlaps the segment).

    ``corners`` (4, 2); returns the wall and how far the footprint already reaches past its line (m,
    negative while inside), i.e. the wall with the largest such reach.
    """
    length = np.sum((np.roll(start, -1, axis=0) - start) * along, axis=1)
    proj = np.einsum("kcj,kj->kc", corners[None] - start[:, None], along)  # (k, 4) along each wall
    faces = (proj.max(axis=1) > 1e-6) & (proj.min(axis=1) < length - 1e-6)
    reach = np.einsum("kcj,kj->kc", start[:, None] - corners[None], normal).max(axis=1)
    reach = np.where(faces, reach, -np.inf)
    k = int(np.argmax(reach))
    return k, float(reach[k])


def _box_corners(pose: np.ndarray, size: np.ndarray) -> np.ndarray:
    c, u, v = pose[:2], _unit(pose[2]), _unit(pose[2] + math.pi / 2.0)
    signs = np.array([[-1.0, -1.0], [-1.0, 1.0], [1.0, 1.0], [1.0, -1.0]])
    return c + signs[:, :1] * v * size[0] / 2.0 + signs[:, 1:] * u * size[1] / 2.0


def _describe(rel: Relation) -> str:
    extra = (
        f", {rel.side}"
        if rel.side
        else (f", {rel.distance[0]:g}-{rel.distance[1]:g} m" if rel.distance else "")
    )
    return f"{rel.kind}{rel.objects}{extra}"


# ----------------------------------------------------------------------------------------------------------
# Public API
# ----------------------------------------------------------------------------------------------------------


def _check_inputs(room: object, furniture: object, seed: object, mistakes: object) -> tuple:
    if not isinstance(room, Room):
        raise TypeError(f"room must be a Room; got {type(room).__name__}")
    if isinstance(furniture, Furniture | str) or not isinstance(furniture, Sequence):
        raise TypeError(f"furniture must be a sequence of Furniture; got {type(furniture).__name__}")
    items = tuple(furniture)
    for i, f in enumerate(items):
        if not isinstance(f, Furniture):
            raise TypeError(f"furniture[{i}] must be a Furniture; got {type(f).__name__}")
    seed = check_seed("seed", seed)
    level = check_float("mistakes", mistakes, minimum=0.0, maximum=1.0)
    return room, items, seed, level


def propose_initial(
    room: Room, furniture: Sequence[Furniture], seed: int, *, mistakes: float = DEFAULT_MISTAKES
) -> InitialProposal:
    """The stand-in model's proposal for ``furniture`` in ``room``: layout with mistakes, clean layout, log.

    ``furniture``: the pieces (their poses are ignored; order, names and sizes are kept), e.g. from
    :func:`neurips26.iohp.rooms.sample_room`. ``seed``: the rules' slot choices and every mistake draw.
    ``mistakes``: the level in [0, 1] scaling :data:`MISTAKE_RATES` (0: the clean proposal).
    """
    room, items, seed, level = _check_inputs(room, furniture, seed, mistakes)
    planner = _Planner(room, items, np.random.default_rng(sub_seed(seed, 0)))
    planner.run()
    sizes = np.array([f.size for f in items], dtype=float).reshape(-1, 3)
    relations = _resolve(planner, sizes)
    placed = tuple(f.with_pose(tuple(map(float, p))) for f, p in zip(items, planner.poses, strict=True))
    clean = Layout(room, placed, relations)
    if level == 0.0:
        return InitialProposal(clean, clean, ())
    poses, wrong, log = _apply_mistakes(planner, relations, sizes, level, seed)
    layout = Layout(room, clean.with_poses(poses).furniture, wrong)
    return InitialProposal(layout, clean, tuple(log))


def initial_layout(
    room: Room, furniture: Sequence[Furniture], seed: int, *, mistakes: float = DEFAULT_MISTAKES
) -> Layout:
    """The initial poses and semantic relations a language model would propose, with its mistakes (§3.6).

    One pose per piece of ``furniture``, in order; relations over their indices. Same arguments, same
    layout. See :func:`propose_initial` for the arguments and the clean version.
    """
    return propose_initial(room, furniture, seed, mistakes=mistakes).layout


__all__ = [
    "DEFAULT_MISTAKES",
    "FACING_TOL_DEG",
    "GROUP_GAP",
    "MAX_WALL_VIEW",
    "MISTAKE_KINDS",
    "MISTAKE_RATES",
    "NEAR_MARGIN",
    "NOISE_STD",
    "OVERHANG_RANGE",
    "SEAT_GAP",
    "SIDE_GAP",
    "SOFA_DISTANCE",
    "WALL_CATEGORIES",
    "WALL_TOL",
    "InitialProposal",
    "Mistake",
    "initial_layout",
    "propose_initial",
]
