"""IOHP's unified layout objective E (§3.3), batched over padded scenes as masked pair lists.

One differentiable function of the furniture poses ``Xi = {(x_i, y_i, theta_i)}`` scores physical validity,
usability through the human proxies, function through the proxies, the language model's semantic relations,
closeness to the model's initial layout and alignment with the room's axes:

    E = w_c sum_{i<j} phi(B_i, B_j) + w_c sum_{i,o} phi(B_i, O_o)                  collision, boundary
      + w_p sum_k sum_{j not in A(k)} phi(P_k, B_j) + w_p sum_{k,o} phi(P_k, W_o)     proxy conflict, wall
      + w_p sum_{k<l simultaneous, o(k) != o(l)} phi(P_k, P_l)                       proxy-proxy
      + w_f sum_{(k,j,rho)} F_rho(P_k, B_j) + w_s sum_{(i,j,sigma)} S_sigma(B_i, B_j)   functional, semantic
      + w_0 sum_i |c_i - c_i^0|^2 + w_r sum_i (1 - cos 4 (theta_i - theta_Omega))     prior, orientation

``phi`` is the SAT soft-min penetration of §3.4 (:func:`neurips26.iohp.geometry.pair_penetration`). The
obstacles ``O`` of furniture are the room's walls, the L-shape's notch and the door swing zones; proxies see
walls and notch only (``W``: a person may stand in a doorway's swing). ``A(k)`` is the proxy's owner plus its
``allowed`` set (categories or object indices). Proxies are rigidly attached to their owners
(:func:`neurips26.iohp.proxy.attach`), so they add no variable. Default weights (§3.3): ``w_c = w_p = 100``,
``w_f = 10``, ``w_s = 1``, ``w_0 = 0.1``, ``w_r = 0.5`` (:class:`Weights`).

**Clearance margin** (``margin``, [our option], default 0): :func:`energy` can grow every furniture
footprint by ``margin`` metres on each side in the collision and boundary terms only (proxies, obstacles and
all other terms unchanged), so two pieces pay from a gap of ``2 margin`` and a piece from ``margin`` off a
wall. It offsets the soft minimum's bias (up to ``tau log 4`` below the true depth, 7 mm at the final
``tau``) and the share of an unresolvable proxy conflict the quadratic terms pass to furniture. With
``margin = 0`` E is exactly §3.3's.

**Functional terms** (each 0 when satisfied; ``c_k`` the proxy centre, ``u_j`` the target's front):
``within_reach`` ``relu(dist(c_k, B_j) - r)^2``; ``faces`` ``1 - u_j . (c_k - c_j) / |c_k - c_j|``;
``view_range`` ``relu(a - |c_k - c_j|)^2 + relu(|c_k - c_j| - b)^2``; ``tucked_under`` (a declared
deviation): the chair's *front-face centre* ``p = c_o + (d_o / 2) u_o`` lies within ``eps = 5 cm`` of a
seating edge of the table and the chair faces it,

    relu(dist(p, edge_s) - eps)^2 + (1 + u_o . n_s),

minimised over the table's seating sides ``s`` (outward normal ``n_s``): the sides on which the table has a
proxy whose ``allowed`` set admits the chair (a dining table's front and back), the front alone when it has
none (a desk: exactly the front-edge formula of §3.3). The chair-table pair stays in the collision term:
the chair stands at the edge, it does not overlap the table (§3.3's ``dist(c_o, edge)`` puts the
chair's centre on the edge, which the collision term forbids).

**Semantic terms** (LayoutVLM style): ``against_wall`` the squared distance of the back-face centre
``c_i - (d_i / 2) u_i`` to the nearest wall segment; ``near`` a range penalty on the centre distance;
``faces`` ``1 - u_i . (c_j - c_i) / |c_j - c_i|``; ``side_of`` ``relu(h - t)^2 + relu(|l| - h_l)^2`` with
``(t, l)`` the coordinates of ``c_i`` along the side's outward axis of ``j`` and across it and
``(h, h_l)`` ``j``'s half-extents on them: ``i``'s centre lies beyond that face of ``j``, within its span.
Unit vectors use a safe norm (zero direction, zero gradient, at coincident centres), never an epsilon bias.

**Batching.** :func:`build_problem` turns ``B`` scenes into one padded :class:`Problem`: objects padded to
``n``, proxies to ``k``, obstacles to ``m``; every rectangle of a scene sits in one list (objects, then
proxies, then obstacles) and each term group keeps its own masked pair list (built once, never dense
all-pairs). The physical groups (collision, boundary) and the proxy groups are two blocks evaluated by
separate calls, so a block whose weight is 0 is skipped and the other terms are bit-for-bit those of a
problem without proxies: :data:`LAYOUTVLM` (``w_p = w_f = 0``) *is* the
LayoutVLM-style objective. :data:`CONFLICT_ONLY` (``w_f = 0``) and :data:`FUNCTIONAL_ONLY` (``w_p = 0``) are
the ablations. :func:`energy` returns the weighted value of every term per scene (:class:`Terms`); they
sum to the total.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from neurips26.iohp.geometry import (
    front,
    front_edge_distance,
    pair_penetration,
    point_rectangle_distance,
    side,
)
from neurips26.iohp.layout import RELATION_KINDS, RELATION_SIDES, Layout
from neurips26.iohp.proxy import FUNCTION_KINDS, SIDES, Proxy, ProxyArrays, allowed_matrix, attach
from neurips26.validation import check_choice, check_float, check_instances

#: Names of the terms of E, in the order they are summed (:class:`Terms`).
TERM_NAMES: tuple[str, ...] = (
    "collision",
    "boundary",
    "proxy_conflict",
    "proxy_wall",
    "proxy_proxy",
    "functional",
    "semantic",
    "prior",
    "orientation",
)
#: The pair groups of the penetration terms (each a masked pair list of :class:`Problem`).
PAIR_GROUPS: tuple[str, ...] = ("collision", "boundary", "proxy_conflict", "proxy_wall", "proxy_proxy")
#: The groups evaluated together (one penetration call each): the physical ones and the proxy ones.
PAIR_BLOCKS: dict[str, tuple[str, ...]] = {
    "physical": ("collision", "boundary"),
    "proxy": ("proxy_conflict", "proxy_wall", "proxy_proxy"),
}
#: ``tucked_under``: the chair's front may stand this far (m) from the table's edge.
TUCK_GAP = 0.05
#: The softening temperature (m) of the final objective (§3.4: annealed 0.05 -> 0.005).
TAU_END = 0.005
#: The largest clearance margin (m) :func:`energy` accepts.
MAX_MARGIN = 0.1

_SIDE_TURN = (0.0, math.pi, math.pi / 2, -math.pi / 2)  # front, back, left, right: the side's outward heading
_BIG = 1.0e6  # stands in for "no such side / wall" in a minimum


# ----------------------------------------------------------------------------------------------------------
# Weights
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Weights:
    """The weights of E (§3.3): ``collision`` (w_c, furniture overlaps and boundary), ``proxy`` (w_p, every
    proxy penetration term), ``functional`` (w_f), ``semantic`` (w_s), ``prior`` (w_0), ``orientation`` (w_r).

    All finite and >= 0; a weight of 0 switches its terms off (they are not evaluated and are exactly 0).
    """

    collision: float = 100.0
    proxy: float = 100.0
    functional: float = 10.0
    semantic: float = 1.0
    prior: float = 0.1
    orientation: float = 0.5

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = check_float(f"weights.{f.name}", getattr(self, f.name), minimum=0.0)
            object.__setattr__(self, f.name, value)

    def of(self, term: str) -> float:
        """The weight multiplying term ``term`` (one of :data:`TERM_NAMES`)."""
        check_choice("term", term, TERM_NAMES)
        if term in ("collision", "boundary"):
            return self.collision
        if term.startswith("proxy"):
            return self.proxy
        return getattr(self, term)


#: The full IOHP objective (§3.3 defaults).
IOHP = Weights()
#: LayoutVLM-style: no proxy term at all (w_p = w_f = 0).
LAYOUTVLM = Weights(proxy=0.0, functional=0.0)
#: Ablation "keep-out only": proxies as obstacles, no functional anchors (w_f = 0).
CONFLICT_ONLY = Weights(functional=0.0)
#: Ablation "anchors only": functional terms, no proxy conflict terms (w_p = 0).
FUNCTIONAL_ONLY = Weights(proxy=0.0)
#: The named presets.
PRESETS: dict[str, Weights] = {
    "iohp": IOHP,
    "layoutvlm": LAYOUTVLM,
    "conflict_only": CONFLICT_ONLY,
    "functional_only": FUNCTIONAL_ONLY,
}


def check_weights(weights: object) -> Weights:
    """A :class:`Weights`, or the preset of :data:`PRESETS` a name stands for (errors name ``weights``)."""
    if isinstance(weights, str):
        return PRESETS[check_choice("weights", weights, tuple(PRESETS))]
    if not isinstance(weights, Weights):
        raise TypeError(
            f"weights must be a Weights or a preset name {tuple(PRESETS)}; got {type(weights).__name__}"
        )
    return weights


# ----------------------------------------------------------------------------------------------------------
# The padded problem
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Problem:
    """``B`` scenes padded into tensors (one dtype and device), built once by :func:`build_problem`.

    ``layouts`` and ``proxy_records`` keep the scenes' records (the layouts' poses are ``xi0``, their
    ``relations`` the semantic relations). Objects (``n`` slots): ``object_mask`` (B, n), ``sizes``
    (B, n, 2) footprint ``(w, d)`` (1 in padding), ``xi0`` (B, n, 3) initial poses. Proxies (``k`` slots):
    ``proxies`` a :class:`~neurips26.iohp.proxy.ProxyArrays` holding (B, k) tensors (``attach`` takes them
    as they are), ``proxy_mask``, ``proxy_owner`` (B, k), ``simultaneous`` (B, k), ``allowed`` (B, k, n)
    (True for the owner and the ``allowed`` set). Obstacles (``m`` slots): ``obstacle_center`` (B, m, 2),
    ``obstacle_size``, ``obstacle_theta``, ``obstacle_mask``, ``obstacle_wall`` (B, m) (True for walls and
    notch, False for door swings). Walls as segments: ``wall_start``, ``wall_end`` (B, W, 2), ``wall_mask``
    (B, W). Pair lists (indices into the per-scene rectangle list ``[objects | proxies | obstacles]``):
    ``pairs[block]`` (B, P, 2) and ``pair_masks[block]`` (B, P) for each block of :data:`PAIR_BLOCKS`, the
    groups of a block side by side; ``segments[g] = (block, start, stop)`` locates group ``g`` (see
    :meth:`group_pairs`). Functional relations (``F`` slots): ``fn_proxy``, ``fn_target``, ``fn_kind``
    (index into ``FUNCTION_KINDS``) (B, F), ``fn_param`` (B, F, 2) (the reach in column 0, or the range
    ``(a, b)``), ``fn_sides`` (B, F, 4) the eligible table sides of ``tucked_under``, ``fn_mask``. Semantic
    relations (``S`` slots): ``sem_i``, ``sem_j``, ``sem_kind`` (index into ``RELATION_KINDS``),
    ``sem_side`` (index into ``RELATION_SIDES``), ``sem_param`` (B, S, 2), ``sem_mask``. ``theta_room``
    (B,) is the room's axis angle ``theta_Omega`` (0 for the package's axis-aligned rooms).
    """

    layouts: tuple[Layout, ...]
    proxy_records: tuple[tuple[Proxy, ...], ...]
    object_mask: torch.Tensor
    sizes: torch.Tensor
    xi0: torch.Tensor
    proxies: ProxyArrays
    proxy_mask: torch.Tensor
    proxy_owner: torch.Tensor
    simultaneous: torch.Tensor
    allowed: torch.Tensor
    obstacle_center: torch.Tensor
    obstacle_size: torch.Tensor
    obstacle_theta: torch.Tensor
    obstacle_mask: torch.Tensor
    obstacle_wall: torch.Tensor
    wall_start: torch.Tensor
    wall_end: torch.Tensor
    wall_mask: torch.Tensor
    pairs: dict[str, torch.Tensor]
    pair_masks: dict[str, torch.Tensor]
    segments: dict[str, tuple[str, int, int]]
    fn_proxy: torch.Tensor
    fn_target: torch.Tensor
    fn_kind: torch.Tensor
    fn_param: torch.Tensor
    fn_sides: torch.Tensor
    fn_mask: torch.Tensor
    sem_i: torch.Tensor
    sem_j: torch.Tensor
    sem_kind: torch.Tensor
    sem_side: torch.Tensor
    sem_param: torch.Tensor
    sem_mask: torch.Tensor
    theta_room: torch.Tensor

    @property
    def batch(self) -> int:
        """``B``, the number of scenes."""
        return int(self.sizes.shape[0])

    @property
    def n(self) -> int:
        """Object slots per scene (the padded maximum)."""
        return int(self.sizes.shape[1])

    @property
    def k(self) -> int:
        """Proxy slots per scene."""
        return int(self.proxy_mask.shape[1])

    @property
    def m(self) -> int:
        """Obstacle slots per scene."""
        return int(self.obstacle_mask.shape[1])

    @property
    def dtype(self) -> torch.dtype:
        """The floating dtype of every real tensor."""
        return self.sizes.dtype

    @property
    def device(self) -> torch.device:
        """Where the tensors live."""
        return self.sizes.device

    @property
    def n_objects(self) -> np.ndarray:
        """Objects per scene, (B,) int."""
        return self.object_mask.sum(dim=1).cpu().numpy()

    @property
    def relations(self) -> tuple[tuple, ...]:
        """The semantic relations of every scene (the layouts' records)."""
        return tuple(lay.relations for lay in self.layouts)

    def select(self, index: Sequence[int] | np.ndarray | torch.Tensor) -> Problem:
        """The problem of scenes ``index`` (repeats allowed: restarts, repair candidates), same padding."""
        idx = torch.as_tensor(np.asarray(index, dtype=np.int64).reshape(-1), device=self.device)
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= self.batch):
            raise ValueError(f"index must lie in [0, {self.batch}); got {np.asarray(index)}")
        picks = idx.cpu().tolist()
        changes: dict[str, object] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, torch.Tensor):
                changes[f.name] = value[idx]
            elif isinstance(value, dict):
                changes[f.name] = {g: t[idx] if isinstance(t, torch.Tensor) else t for g, t in value.items()}
            elif isinstance(value, ProxyArrays):
                changes[f.name] = ProxyArrays(*(getattr(value, a)[idx] for a in _PROXY_FIELDS))
            else:
                changes[f.name] = tuple(value[i] for i in picks)
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> Problem:
        """The same problem on ``device`` with real tensors in ``dtype`` (masks and indices keep theirs)."""

        def move(t: torch.Tensor) -> torch.Tensor:
            return t.to(device=device, dtype=dtype if t.dtype.is_floating_point and dtype else None)

        changes: dict[str, object] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, torch.Tensor):
                changes[f.name] = move(value)
            elif isinstance(value, dict):
                changes[f.name] = {g: move(t) if isinstance(t, torch.Tensor) else t for g, t in value.items()}
            elif isinstance(value, ProxyArrays):
                changes[f.name] = ProxyArrays(*(move(getattr(value, a)) for a in _PROXY_FIELDS))
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def group_pairs(self, group: str) -> tuple[torch.Tensor, torch.Tensor]:
        """The pair list of group ``group`` (:data:`PAIR_GROUPS`): pairs (B, P_g, 2), mask (B, P_g)."""
        block, start, stop = self.segments[check_choice("group", group, PAIR_GROUPS)]
        return self.pairs[block][:, start:stop], self.pair_masks[block][:, start:stop]

    def initial_poses(self) -> torch.Tensor:
        """``xi0`` (B, n, 3), a fresh copy."""
        return self.xi0.clone()

    def layouts_at(self, poses: torch.Tensor | np.ndarray) -> tuple[Layout, ...]:
        """The scenes' layouts with furniture at ``poses`` (B, n, 3) (padding ignored)."""
        arr = poses.detach().cpu().numpy() if isinstance(poses, torch.Tensor) else np.asarray(poses)
        if arr.shape != (self.batch, self.n, 3):
            raise ValueError(f"poses must have shape {(self.batch, self.n, 3)}; got {arr.shape}")
        return tuple(lay.with_poses(arr[b, : lay.n].astype(np.float64)) for b, lay in enumerate(self.layouts))


_PROXY_FIELDS = ("owner", "side", "offset", "shift", "size")


def _room_axis(layout: Layout) -> float:
    """``theta_Omega``: the heading of the outline's first edge modulo 90 degrees, in [0, pi/2)."""
    v = layout.room.vertices()
    e = v[1] - v[0]
    return float(math.atan2(e[1], e[0]) % (math.pi / 2))


def _pad(rows: list[np.ndarray], width: int, fill: float | int, dtype: type) -> tuple[np.ndarray, np.ndarray]:
    """Stack ragged arrays ``rows[b]`` (len_b, ...) into (B, width, ...) with ``fill``; mask (B, width)."""
    tail = rows[0].shape[1:] if rows else ()
    out = np.full((len(rows), width, *tail), fill, dtype=dtype)
    mask = np.zeros((len(rows), width), dtype=bool)
    for b, r in enumerate(rows):
        out[b, : len(r)] = r
        mask[b, : len(r)] = True
    return out, mask


def build_problem(
    layouts: Sequence[Layout],
    proxies: Sequence[Sequence[Proxy]] | None = None,
    *,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> Problem:
    """The padded :class:`Problem` of ``layouts`` (B scenes), their ``proxies`` and relations.

    ``layouts``: :class:`~neurips26.iohp.layout.Layout` records whose poses are the initial layout ``xi0``
    and whose ``relations`` are the semantic relations. ``proxies``: one sequence of
    :class:`~neurips26.iohp.proxy.Proxy` per scene (e.g. :func:`~neurips26.iohp.proxy.default_proxies`),
    or ``None`` for none at all (the LayoutVLM-style problem). ``dtype``: float32 (default) or float64;
    ``device``: where the tensors go (default CPU).
    """
    layouts = check_instances("layouts", layouts, Layout)
    if not layouts:
        raise TypeError("layouts must be a non-empty sequence of Layout")
    if dtype not in (torch.float32, torch.float64):
        raise TypeError(f"dtype must be torch.float32 or torch.float64; got {dtype}")
    device = torch.device("cpu") if device is None else torch.device(device)
    if proxies is None:
        records: tuple[tuple[Proxy, ...], ...] = tuple(() for _ in layouts)
    else:
        if isinstance(proxies, Proxy) or not isinstance(proxies, Sequence) or len(proxies) != len(layouts):
            raise ValueError(f"proxies must be None or one sequence of Proxy per layout ({len(layouts)})")
        records = []  # type: ignore[assignment]
        for b, (scene, lay) in enumerate(zip(proxies, layouts, strict=True)):
            if isinstance(scene, Proxy) or not isinstance(scene, Sequence):
                raise TypeError(f"proxies[{b}] must be a sequence of Proxy")
            for i, p in enumerate(scene):
                if not isinstance(p, Proxy):
                    raise TypeError(f"proxies[{b}][{i}] must be a Proxy; got {type(p).__name__}")
                refs = [p.owner, *(r.target for r in p.relations)]
                if max(refs) >= lay.n:
                    raise ValueError(
                        f"proxies[{b}][{i}] refers to object {max(refs)}; layouts[{b}] has {lay.n}"
                    )
            records.append(tuple(scene))  # type: ignore[attr-defined]
        records = tuple(records)

    n = max(1, max(lay.n for lay in layouts))
    k = max((len(r) for r in records), default=0)
    obstacles = [lay.room.obstacles() for lay in layouts]
    n_walls = [len(lay.room.obstacles(kinds=("wall", "notch"))[0]) for lay in layouts]
    m = max(len(o[0]) for o in obstacles)
    first_proxy, first_obstacle = n, n + k

    # objects
    sizes, object_mask = _pad([lay.sizes()[:, :2] for lay in layouts], n, 1.0, np.float64)
    xi0, _ = _pad([lay.poses() for lay in layouts], n, 0.0, np.float64)

    # proxies
    owner, proxy_mask = _pad(
        [np.array([p.owner for p in r], dtype=np.int64) for r in records], k, 0, np.int64
    )
    side_code, _ = _pad(
        [np.array([SIDES.index(p.side) for p in r], dtype=np.int64) for r in records], k, 0, np.int64
    )
    offset, _ = _pad([np.array([p.offset for p in r], dtype=np.float64) for r in records], k, 0.0, np.float64)
    shift, _ = _pad([np.array([p.shift for p in r], dtype=np.float64) for r in records], k, 0.0, np.float64)
    psize, _ = _pad(
        [np.array([p.size[:2] for p in r], dtype=np.float64).reshape(-1, 2) for r in records],
        k,
        1.0,
        np.float64,
    )
    simultaneous, _ = _pad(
        [np.array([p.simultaneous for p in r], dtype=bool) for r in records], k, False, bool
    )
    allowed = np.zeros((len(layouts), k, n), dtype=bool)
    for b, (r, lay) in enumerate(zip(records, layouts, strict=True)):
        for i, p in enumerate(r):
            allowed[b, i, : lay.n] = allowed_matrix((p,), lay.categories)[0]

    # obstacles (walls and notch first, then door swings, as Room.obstacles orders them)
    o_center, obstacle_mask = _pad([o[0] for o in obstacles], m, 0.0, np.float64)
    o_size, _ = _pad([o[1] for o in obstacles], m, 1.0, np.float64)
    o_theta, _ = _pad([o[2] for o in obstacles], m, 0.0, np.float64)
    obstacle_wall = np.zeros_like(obstacle_mask)
    for b, w in enumerate(n_walls):
        obstacle_wall[b, :w] = True
    segments = [lay.room.walls() for lay in layouts]
    n_seg = max(len(s[0]) for s in segments)
    wall_start, wall_mask = _pad([s[0] for s in segments], n_seg, 0.0, np.float64)
    wall_end, _ = _pad([s[1] for s in segments], n_seg, 0.0, np.float64)

    # pair lists, per group, in indices of [objects | proxies | obstacles]
    groups: dict[str, list[np.ndarray]] = {g: [] for g in PAIR_GROUPS}
    for b, (r, lay) in enumerate(zip(records, layouts, strict=True)):
        nb, kb, mb, wb = lay.n, len(r), len(obstacles[b][0]), n_walls[b]
        i, j = np.triu_indices(nb, k=1)
        groups["collision"].append(np.stack([i, j], 1))
        oi, oo = np.meshgrid(np.arange(nb), np.arange(mb), indexing="ij")
        groups["boundary"].append(np.stack([oi.ravel(), first_obstacle + oo.ravel()], 1))
        pk, pj = np.nonzero(~allowed[b, :kb, :nb])
        groups["proxy_conflict"].append(np.stack([first_proxy + pk, pj], 1))
        wk, wo = np.meshgrid(np.arange(kb), np.arange(wb), indexing="ij")
        groups["proxy_wall"].append(np.stack([first_proxy + wk.ravel(), first_obstacle + wo.ravel()], 1))
        qk, ql = np.triu_indices(kb, k=1)
        keep = simultaneous[b, qk] & simultaneous[b, ql] & (owner[b, qk] != owner[b, ql])
        groups["proxy_proxy"].append(np.stack([first_proxy + qk[keep], first_proxy + ql[keep]], 1))
    pairs, pair_masks, segments = {}, {}, {}
    for block, members in PAIR_BLOCKS.items():
        arrays, masks, start = [], [], 0
        for g in members:
            rows = [np.asarray(x, dtype=np.int64).reshape(-1, 2) for x in groups[g]]
            arr, mask = _pad(rows, max(len(x) for x in rows), 0, np.int64)
            arrays.append(arr)
            masks.append(mask)
            segments[g] = (block, start, start + arr.shape[1])
            start += arr.shape[1]
        pairs[block] = torch.as_tensor(np.concatenate(arrays, axis=1), device=device)
        pair_masks[block] = torch.as_tensor(np.concatenate(masks, axis=1), device=device)

    # functional relations through the proxies
    fn_rows: list[list[tuple]] = []
    for r, lay in zip(records, layouts, strict=True):
        rows = []
        for kk, p in enumerate(r):
            for rel in p.relations:
                param = (0.0, 0.0)
                if rel.kind == "within_reach":
                    param = (float(rel.reach), 0.0)  # type: ignore[arg-type]
                elif rel.kind == "view_range":
                    param = tuple(rel.distance)  # type: ignore[assignment,arg-type]
                sides = np.zeros(4, dtype=bool)
                if rel.kind == "tucked_under":
                    for q in r:
                        if q.owner == rel.target and allowed_matrix((q,), lay.categories)[0, p.owner]:
                            sides[SIDES.index(q.side)] = True
                    if not sides.any():
                        sides[0] = True
                rows.append((kk, rel.target, FUNCTION_KINDS.index(rel.kind), param, sides))
        fn_rows.append(rows)
    n_fn = max(len(x) for x in fn_rows)
    fn = _relation_arrays(fn_rows, n_fn, (4,), bool)

    # semantic relations of the layouts
    sem_rows = []
    for lay in layouts:
        rows = []
        for rel in lay.relations:
            i = rel.objects[0]
            j = rel.objects[1] if len(rel.objects) > 1 else i
            param = tuple(rel.distance) if rel.distance is not None else (0.0, 0.0)
            s = RELATION_SIDES.index(rel.side) if rel.side is not None else 0
            rows.append((i, j, RELATION_KINDS.index(rel.kind), param, s))
        sem_rows.append(rows)
    n_sem = max(len(x) for x in sem_rows)
    sem = _relation_arrays(sem_rows, n_sem, (), np.int64)

    def real(a: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(a, dtype=dtype, device=device)

    def index(a: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(a, device=device)

    arrays = ProxyArrays(index(owner), index(side_code), real(offset), real(shift), real(psize))
    return Problem(
        layouts=layouts,
        proxy_records=records,
        object_mask=index(object_mask),
        sizes=real(sizes),
        xi0=real(xi0),
        proxies=arrays,
        proxy_mask=index(proxy_mask),
        proxy_owner=index(owner),
        simultaneous=index(simultaneous),
        allowed=index(allowed),
        obstacle_center=real(o_center),
        obstacle_size=real(o_size),
        obstacle_theta=real(o_theta),
        obstacle_mask=index(obstacle_mask),
        obstacle_wall=index(obstacle_wall),
        wall_start=real(wall_start),
        wall_end=real(wall_end),
        wall_mask=index(wall_mask),
        pairs=pairs,
        pair_masks=pair_masks,
        segments=segments,
        fn_proxy=index(fn[0]),
        fn_target=index(fn[1]),
        fn_kind=index(fn[2]),
        fn_param=real(fn[3]),
        fn_sides=index(fn[4]),
        fn_mask=index(fn[5]),
        sem_i=index(sem[0]),
        sem_j=index(sem[1]),
        sem_kind=index(sem[2]),
        sem_side=index(sem[4]),
        sem_param=real(sem[3]),
        sem_mask=index(sem[5]),
        theta_room=real(np.array([_room_axis(lay) for lay in layouts])),
    )


def _relation_arrays(
    rows: list[list[tuple]], width: int, extra_shape: tuple[int, ...], extra_dtype: type
) -> tuple[np.ndarray, ...]:
    """Padded relation arrays (B, width): first index, second index, kind, params (.., 2), extra, mask."""
    batch = len(rows)
    a = np.zeros((batch, width), dtype=np.int64)
    b = np.zeros((batch, width), dtype=np.int64)
    kind = np.zeros((batch, width), dtype=np.int64)
    param = np.zeros((batch, width, 2))
    extra = np.zeros((batch, width, *extra_shape), dtype=extra_dtype)
    mask = np.zeros((batch, width), dtype=bool)
    for s, scene in enumerate(rows):
        for t, (i, j, kd, p, e) in enumerate(scene):
            a[s, t], b[s, t], kind[s, t], param[s, t], extra[s, t], mask[s, t] = i, j, kd, p, e, True
    return a, b, kind, param, extra, mask


# ----------------------------------------------------------------------------------------------------------
# Terms and the energy
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Terms:
    """The weighted terms of E per scene, each a (B,) tensor, and their sum ``total`` (§3.3).

    ``collision`` furniture-furniture, ``boundary`` furniture-obstacles (walls, notch, door swings),
    ``proxy_conflict`` proxy-furniture outside ``A(k)``, ``proxy_wall`` proxy-walls/notch, ``proxy_proxy``
    simultaneous proxies of different owners, ``functional``, ``semantic``, ``prior``, ``orientation``.
    ``total`` is their sum in the order of :data:`TERM_NAMES`.
    """

    collision: torch.Tensor
    boundary: torch.Tensor
    proxy_conflict: torch.Tensor
    proxy_wall: torch.Tensor
    proxy_proxy: torch.Tensor
    functional: torch.Tensor
    semantic: torch.Tensor
    prior: torch.Tensor
    orientation: torch.Tensor
    total: torch.Tensor

    def as_dict(self) -> dict[str, torch.Tensor]:
        """``{name: (B,) tensor}`` for every term of :data:`TERM_NAMES` and ``"total"``."""
        return {name: getattr(self, name) for name in (*TERM_NAMES, "total")}

    def numpy(self) -> dict[str, np.ndarray]:
        """The terms as float64 NumPy arrays (B,), detached."""
        return {k: v.detach().cpu().double().numpy() for k, v in self.as_dict().items()}

    def detach(self) -> Terms:
        """The same values without autograd history."""
        return Terms(**{k: v.detach() for k, v in self.as_dict().items()})


def _check_problem(problem: object) -> Problem:
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a Problem (see build_problem); got {type(problem).__name__}")
    return problem


def _check_tau(tau: object) -> float:
    return check_float("tau", tau, minimum=0.0, strict_min=True)


def _check_margin(margin: object) -> float:
    return check_float("margin", margin, minimum=0.0, maximum=MAX_MARGIN)


def _check_poses(poses: object, problem: Problem) -> torch.Tensor:
    """``poses`` as the problem needs it: a (B, n, 3) tensor of its dtype on its device."""
    if not isinstance(poses, torch.Tensor):
        raise TypeError(f"poses must be a torch.Tensor of shape (B, n, 3); got {type(poses).__name__}")
    want = (problem.batch, problem.n, 3)
    if tuple(poses.shape) != want:
        raise ValueError(f"poses must have shape {want}; got {tuple(poses.shape)}")
    if poses.dtype != problem.dtype:
        raise TypeError(f"poses must have the problem's dtype {problem.dtype}; got {poses.dtype}")
    if poses.device != problem.device:
        raise ValueError(f"poses must be on the problem's device {problem.device}; got {poses.device}")
    return poses


def _rows(problem: Problem) -> torch.Tensor:
    return torch.arange(problem.batch, device=problem.device)[:, None]


def _unit(d: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(d / |d|, |d|)`` over the last axis, ``(0, 0)`` with zero gradient where ``d = 0`` (no epsilon)."""
    sq = (d * d).sum(dim=-1)
    positive = sq > 0
    norm = torch.sqrt(torch.where(positive, sq, torch.ones_like(sq)))
    unit = torch.where(positive[..., None], d / norm[..., None], torch.zeros_like(d))
    return unit, torch.where(positive, norm, torch.zeros_like(sq))


def proxy_rectangles(
    poses: torch.Tensor, problem: Problem
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The proxies attached to the furniture at ``poses`` (B, n, 3): center (B, k, 2), size (B, k, 2),
    theta (B, k); padded slots hold finite stand-ins. Differentiable in ``poses``."""
    problem = _check_problem(problem)
    poses = _check_poses(poses, problem)
    return _attach(poses, problem)


def _attach(poses: torch.Tensor, problem: Problem) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if problem.k == 0:
        shape = (problem.batch, 0)
        return poses.new_zeros(*shape, 2), poses.new_ones(*shape, 2), poses.new_zeros(*shape)
    return attach(problem.proxies, poses, problem.sizes)


def _all_rectangles(
    poses: torch.Tensor, problem: Problem, proxies: tuple[torch.Tensor, ...] | None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``[objects | proxies | obstacles]`` of every scene; unit stand-ins for proxies when not needed."""
    if proxies is None:
        shape = (problem.batch, problem.k)
        proxies = (poses.new_zeros(*shape, 2), poses.new_ones(*shape, 2), poses.new_zeros(*shape))
    center = torch.cat((poses[..., :2], proxies[0], problem.obstacle_center), dim=1)
    size = torch.cat((problem.sizes, proxies[1], problem.obstacle_size), dim=1)
    theta = torch.cat((poses[..., 2], proxies[2], problem.obstacle_theta), dim=1)
    return center, size, theta


def pair_penetrations(
    poses: torch.Tensor,
    problem: Problem,
    tau: float = TAU_END,
    groups: Sequence[str] = PAIR_GROUPS,
    *,
    margin: float = 0.0,
) -> dict[str, torch.Tensor]:
    """Unweighted ``phi`` of every pair of each requested group of :data:`PAIR_GROUPS`: ``{g: (B, P_g)}``.

    Masked (padding) pairs are exactly 0. ``margin`` (m) grows the footprints of the collision and
    boundary groups as in :func:`energy`. The optimiser's repair reads these to find offending objects.
    """
    problem = _check_problem(problem)
    poses = _check_poses(poses, problem)
    tau = _check_tau(tau)
    margin = _check_margin(margin)
    groups = [check_choice("groups", g, PAIR_GROUPS) for g in groups]
    need_proxy = any(g.startswith("proxy") for g in groups)
    rects = _all_rectangles(poses, problem, _attach(poses, problem) if need_proxy else None)
    blocks = {problem.segments[g][0] for g in groups}
    phi = {block: _block_phi(rects, problem, block, tau, margin) for block in blocks}
    return {
        g: phi[problem.segments[g][0]][:, problem.segments[g][1] : problem.segments[g][2]] for g in groups
    }


def _block_phi(
    rects: tuple[torch.Tensor, ...], problem: Problem, block: str, tau: float, margin: float = 0.0
) -> torch.Tensor:
    """``phi`` of every pair of a block of :data:`PAIR_BLOCKS` in one call: (B, P).

    In the physical block every furniture footprint is grown by ``margin`` on each side (proxies and
    obstacles keep their size); the proxy block ignores ``margin``.
    """
    pairs = problem.pairs[block]
    if pairs.shape[1] == 0:
        return rects[0].new_zeros(problem.batch, 0)
    if block == "physical" and margin > 0.0:
        center, size, theta = rects
        grow = torch.zeros_like(size)
        grow[:, : problem.n] = 2.0 * margin
        rects = (center, size + grow, theta)
    return pair_penetration(*rects, pairs, problem.pair_masks[block], tau)


def _functional(poses: torch.Tensor, problem: Problem, proxies: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """Unweighted ``F_rho`` of every functional relation slot (B, F); 0 in padding."""
    rows = _rows(problem)
    k, j = problem.fn_proxy, problem.fn_target
    c, th, size = poses[..., :2], poses[..., 2], problem.sizes
    ck = proxies[0][rows, k]
    cj, tj, sj = c[rows, j], th[rows, j], size[rows, j]
    param = problem.fn_param
    unit, dist = _unit(ck - cj)
    uj = front(tj)

    reach = torch.relu(point_rectangle_distance(ck, cj, sj, tj) - param[..., 0]) ** 2
    faces = 1.0 - (uj * unit).sum(dim=-1)
    view = torch.relu(param[..., 0] - dist) ** 2 + torch.relu(dist - param[..., 1]) ** 2

    owner = problem.proxy_owner[rows, k]
    co, to, do = c[rows, owner], th[rows, owner], size[rows, owner][..., 1]
    uo = front(to)
    tip = co + (do / 2)[..., None] * uo  # the chair's front-face centre
    turn = poses.new_tensor(_SIDE_TURN)
    ts = tj[..., None] + turn  # (B, F, 4): the table's side s seen as a front face
    crosswise = torch.tensor([False, False, True, True], device=poses.device)
    ss = torch.where(crosswise[:, None], sj.flip(-1)[..., None, :], sj[..., None, :])
    gap = front_edge_distance(tip[..., None, :].expand_as(ss), cj[..., None, :].expand_as(ss), ss, ts)
    facing = 1.0 + (uo[..., None, :] * front(ts)).sum(dim=-1)
    per_side = torch.where(problem.fn_sides, torch.relu(gap - TUCK_GAP) ** 2 + facing, _BIG)
    tucked = per_side.min(dim=-1).values

    kinds = torch.stack((reach, faces, view, tucked), dim=-1)  # FUNCTION_KINDS order
    value = torch.gather(kinds, -1, problem.fn_kind[..., None])[..., 0]
    return torch.where(problem.fn_mask, value, torch.zeros_like(value))


def _semantic(poses: torch.Tensor, problem: Problem) -> torch.Tensor:
    """Unweighted ``S_sigma`` of every semantic relation slot (B, S); 0 in padding."""
    rows = _rows(problem)
    c, th, size = poses[..., :2], poses[..., 2], problem.sizes
    i, j = problem.sem_i, problem.sem_j
    ci, ti, si = c[rows, i], th[rows, i], size[rows, i]
    cj, tj, sj = c[rows, j], th[rows, j], size[rows, j]
    ui = front(ti)

    back = ci - (si[..., 1] / 2)[..., None] * ui
    start, edge = problem.wall_start, problem.wall_end - problem.wall_start  # (B, W, 2)
    length_sq = torch.where(problem.wall_mask, (edge * edge).sum(dim=-1), torch.ones_like(edge[..., 0]))
    rel = back[:, :, None, :] - start[:, None, :, :]  # (B, S, W, 2)
    t = ((rel * edge[:, None]).sum(dim=-1) / length_sq[:, None]).clamp(0.0, 1.0)
    miss = rel - t[..., None] * edge[:, None]
    dist_sq = torch.where(problem.wall_mask[:, None, :], (miss * miss).sum(dim=-1), _BIG)
    against_wall = dist_sq.min(dim=-1).values

    unit, dist = _unit(cj - ci)
    a, b = problem.sem_param[..., 0], problem.sem_param[..., 1]
    near = torch.relu(a - dist) ** 2 + torch.relu(dist - b) ** 2
    faces = 1.0 - (ui * unit).sum(dim=-1)

    d = ci - cj
    alpha, beta = (d * side(tj)).sum(dim=-1), (d * front(tj)).sum(dim=-1)
    code = problem.sem_side
    along_depth = code < 2  # front/back: outward axis u_j; left/right: v_j
    sign = torch.where((code == 0) | (code == 2), 1.0, -1.0).to(poses.dtype)
    out = sign * torch.where(along_depth, beta, alpha)
    across = torch.where(along_depth, alpha, beta)
    half_w, half_d = sj[..., 0] / 2, sj[..., 1] / 2
    reach_out = torch.where(along_depth, half_d, half_w)
    span = torch.where(along_depth, half_w, half_d)
    side_of = torch.relu(reach_out - out) ** 2 + torch.relu(across.abs() - span) ** 2

    kinds = torch.stack((against_wall, near, faces, side_of), dim=-1)  # RELATION_KINDS order
    value = torch.gather(kinds, -1, problem.sem_kind[..., None])[..., 0]
    return torch.where(problem.sem_mask, value, torch.zeros_like(value))


def energy(
    poses: torch.Tensor,
    problem: Problem,
    tau: float = TAU_END,
    weights: Weights | str = IOHP,
    *,
    margin: float = 0.0,
) -> Terms:
    """The objective E of §3.3 at ``poses`` (B, n, 3) for every scene of ``problem``: :class:`Terms`.

    ``tau`` (m, > 0) is the temperature of the penetration measure; ``weights`` a :class:`Weights` or a
    preset name of :data:`PRESETS`. ``margin`` (m, in [0, 0.1]): every furniture footprint is grown by
    this much on each side in the collision and boundary terms only (module docstring); 0 is §3.3's E.
    Terms with weight 0 are not evaluated (exactly 0). Differentiable in ``poses`` (which must have the
    problem's dtype and device); padded object slots get zero gradient.
    """
    problem = _check_problem(problem)
    weights = check_weights(weights)
    tau = _check_tau(tau)
    margin = _check_margin(margin)
    poses = _check_poses(poses, problem)
    zero = poses.new_zeros(problem.batch)
    use_proxy = problem.k > 0 and (weights.proxy > 0 or weights.functional > 0)
    proxies = _attach(poses, problem) if use_proxy else None
    rects = _all_rectangles(poses, problem, proxies)

    values: dict[str, torch.Tensor] = {}
    for block, members in PAIR_BLOCKS.items():
        w = weights.of(members[0])
        phi = None if w == 0.0 else _block_phi(rects, problem, block, tau, margin)
        for g in members:
            _, start, stop = problem.segments[g]
            values[g] = zero if phi is None or stop == start else w * phi[:, start:stop].sum(dim=-1)
    if weights.functional == 0.0 or problem.fn_mask.shape[1] == 0 or proxies is None:
        values["functional"] = zero
    else:
        values["functional"] = weights.functional * _functional(poses, problem, proxies).sum(dim=-1)
    if weights.semantic == 0.0 or problem.sem_mask.shape[1] == 0:
        values["semantic"] = zero
    else:
        values["semantic"] = weights.semantic * _semantic(poses, problem).sum(dim=-1)
    mask = problem.object_mask
    if weights.prior == 0.0:
        values["prior"] = zero
    else:
        moved = ((poses[..., :2] - problem.xi0[..., :2]) ** 2).sum(dim=-1)
        values["prior"] = weights.prior * torch.where(mask, moved, torch.zeros_like(moved)).sum(dim=-1)
    if weights.orientation == 0.0:
        values["orientation"] = zero
    else:
        snap = 1.0 - torch.cos(4.0 * (poses[..., 2] - problem.theta_room[:, None]))
        values["orientation"] = weights.orientation * torch.where(mask, snap, torch.zeros_like(snap)).sum(
            dim=-1
        )
    total = values[TERM_NAMES[0]]
    for name in TERM_NAMES[1:]:
        total = total + values[name]
    return Terms(**values, total=total)


__all__ = [
    "CONFLICT_ONLY",
    "FUNCTIONAL_ONLY",
    "IOHP",
    "LAYOUTVLM",
    "MAX_MARGIN",
    "PAIR_BLOCKS",
    "PAIR_GROUPS",
    "PRESETS",
    "TAU_END",
    "TERM_NAMES",
    "TUCK_GAP",
    "Problem",
    "Terms",
    "Weights",
    "build_problem",
    "check_weights",
    "energy",
    "pair_penetrations",
    "proxy_rectangles",
]
