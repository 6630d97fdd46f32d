"""Interaction-oriented human proxies: box stand-ins for the person using each piece of furniture (§3.2).

IOHP asks, for every object, "how is this used, and where is the person's body while using it?" and turns
the answer into boxes on the floor. One object may have several (both sides of a bed). The layout objective
(§3.3) then uses each box twice: as a keep-out zone for other furniture and as the anchor of functional
relations (a nightstand within reach of the bed's access strip, a TV facing the sofa's seat). This module
holds the proxy itself; the objective and the metrics only read its output.

**Record and JSON.** A :class:`Proxy` has an ``owner`` (object index), a ``posture`` (:data:`POSTURES`), the
owner's ``side`` it sits on (:data:`SIDES`, in the owner's own frame: ``left`` is ``+v``, the left of a
person sitting on it and facing its front), an ``offset`` (gap to that face, m), a ``size`` ``(w_k, d_k,
h_k)`` with ``w_k`` along the face and ``d_k`` away from it, ``allowed`` overlaps (categories or object
indices), functional ``relations`` (:class:`FunctionalRelation`) and ``simultaneous`` (occupied at the same
time as other people's proxies). A language model gives one object's proxies as JSON following
:data:`PROXY_SCHEMA`; :func:`parse_proxies` validates such answers and names the offending field.

**Rigid attachment** (§3.2). With the owner at ``c_o``, heading ``theta_o``, footprint ``(w_o, d_o)``:

    c_k = c_o + alpha_k v(theta_o) + beta_k u(theta_o),   theta_k = theta_o,
    front: beta_k = +(d_o/2 + offset_k + d_k/2), alpha_k = shift_k   (back: beta_k negated)
    left:  alpha_k = +(w_o/2 + offset_k + d_k/2), beta_k = shift_k   (right: alpha_k negated)

so the proxy adds no free variable. On the left and right sides the proxy's depth runs along ``v``: its
rectangle in the package convention is ``(w, d) = (d_k, w_k)``. ``shift`` (our addition to the
fields; 0 by default) slides the box along the face; the bed's side strips need it (below).
:func:`attach` is one torch implementation, differentiable in the poses and sizes, batched over leading
axes; NumPy in gives NumPy out.

**Reference proxies** (:func:`default_proxies`, [our choice]). The table :data:`ANTHROPOMETRY` gives the
body dimensions; every category of :data:`neurips26.iohp.rooms.CATEGORIES` has proxies and the relations a
person needs. These reference proxies are what the metrics use for every method, never a method's own.

**The zero-shot oracle.** :func:`proxy_prompt` lists the room's objects (name, category, size) and asks for
the JSON; :class:`ProxyOracle`, wrapped as a :class:`neurips26.llm.Scripted` backend by
:func:`proxy_oracle`, reads that object list back from the prompt text, and only from it (all a model would
see), and answers with the reference proxies; with ``noise > 0`` it perturbs them (seeded; sizes, dropped
proxies, spurious relations; :data:`NOISE_DROP`, :data:`NOISE_SPURIOUS`). :func:`infer_proxies` asks any
backend (the clean oracle by default; ``get_backend(proxy_oracle())`` lets ``NEURIPS26_LLM`` choose a real
model), retries a malformed reply once with a prompt quoting the errors, then falls back to the reference
proxies of the objects still unanswered, and counts replies, retries and fallbacks.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from neurips26.iohp.geometry import front, side
from neurips26.iohp.layout import Furniture, Layout
from neurips26.iohp.rooms import CATEGORIES
from neurips26.llm import ChatModel, Message, Scripted
from neurips26.llm.protocol import excerpt
from neurips26.seeding import sub_seed
from neurips26.validation import check_choice, check_float, check_instances, check_int, check_seed

#: Where the person is: standing, seated, lying, reaching into storage, passing through.
POSTURES: tuple[str, ...] = ("stand", "sit", "lie", "reach_in", "walk_through")
#: The owner's face a proxy is attached to, in the owner's frame (left = +v, right = -v, front = +u).
SIDES: tuple[str, ...] = ("front", "back", "left", "right")
#: Functional relations through a proxy (§3.3).
FUNCTION_KINDS: tuple[str, ...] = ("within_reach", "faces", "view_range", "tucked_under")

#: Accepted ranges of a proxy's numbers (m): sizes in (0, MAX_SIZE], offset and shift within these bounds.
MAX_SIZE = 6.0
OFFSET_RANGE = (-1.0, 3.0)
MAX_SHIFT = 3.0
MAX_REACH = 3.0
MAX_VIEW = 20.0

# ----------------------------------------------------------------------------------------------------------
# Anthropometric defaults [our choice]
# ----------------------------------------------------------------------------------------------------------

#: Standing body (w, d, h), m: shoulder breadth ~0.45-0.5 m plus elbow room, chest depth plus a step.
BODY = (0.6, 0.6, 1.7)
#: Depth of a seated person's knee and leg zone in front of a sofa or armchair (range 0.45-0.6 m).
SEATED_LEG_DEPTH = 0.45
#: Clear depth behind a chair to pull it out and rise (range 0.6-0.75 m).
CHAIR_PULL_OUT = 0.6
#: Depth of the chair itself when sizing a table's or desk's seating zone.
CHAIR_DEPTH = 0.5
#: Widest wardrobe door leaf (m): a wardrobe of width w has ceil(w / 0.6) leaves.
MAX_DOOR_LEAF = 0.6
#: Bed access strips: depth, length of the side strips, and the slot kept free for a nightstand at the head.
BED_STRIP_DEPTH = 0.6
BED_SIDE_LENGTH = 0.9
NIGHTSTAND_SLOT = 0.45
#: Arm reach (m) of ``within_reach`` and the comfortable TV viewing distance (m).
REACH = 0.6
TV_VIEW_RANGE = (1.8, 3.5)
#: Height (m) of the body in each posture (rendering only).
POSTURE_HEIGHT: dict[str, float] = {
    "stand": 1.7,
    "sit": 1.3,
    "lie": 1.3,
    "reach_in": 1.7,
    "walk_through": 1.7,
}

#: The table above with its ranges and reasons, for the chapter's text (values in metres).
ANTHROPOMETRY: dict[str, tuple[float | tuple[float, ...], str]] = {
    "standing body (w, d, h)": (BODY, "shoulder breadth 0.45-0.5 m plus elbow room; 1.7 m tall"),
    "seated knee/leg zone depth": (
        SEATED_LEG_DEPTH,
        "range 0.45-0.6; the low end leaves a coffee table at its usual 0.45 m from the seat",
    ),
    "chair pull-out depth": (
        CHAIR_PULL_OUT,
        "range 0.6-0.75; the low end keeps a table seated on both long sides (0.9 + 2 x 1.1 m) inside "
        "the smallest dining rooms",
    ),
    "chair depth": (CHAIR_DEPTH, "typical seat depth; table and desk seating zone = chair + pull-out"),
    "wardrobe door leaf": (
        MAX_DOOR_LEAF,
        "leaves at most 0.6 m wide; the swing is a leaf-radius quarter disc",
    ),
    "bed strip depth": (BED_STRIP_DEPTH, "one standing body deep"),
    "bed side strip length": (
        BED_SIDE_LENGTH,
        "where one sits down on the edge and swings in, next to the "
        "pillow; starts after a 0.45 m nightstand slot",
    ),
    "arm reach": (REACH, "comfortable forward reach of a seated or standing adult"),
    "TV viewing distance": (TV_VIEW_RANGE, "the range of §3.2, about 1.5-3 screen diagonals"),
}
"""Anthropometric defaults [our choice], from standard design references (J. Panero and M. Zelnik, *Human
Dimension and Interior Space*, 1979; E. Neufert, *Architects' Data*) rounded to round numbers. Where the
references give a range we take the end that keeps the chapter's smallest rooms feasible, and say so. How
each category uses them:

* bed: three access strips :data:`BED_STRIP_DEPTH` deep, posture ``lie`` (a person lying is on the bed
  itself, its owner, so that body needs no box): one along the foot (the bed's width), and one on each long
  side, :data:`BED_SIDE_LENGTH` long, starting :data:`NIGHTSTAND_SLOT` from the head so a nightstand fits
  beside the pillow and lies within reach (0.6 m) of the strip's centre; the strip on the left has the
  first nightstand ``within_reach``, the right one the second;
* wardrobe: ``reach_in`` in front, the owner's width, depth = door leaf + half a body (the leaves sweep a
  quarter disc of leaf radius and the user stands at the open doors); 0.9 m for 0.6 m leaves;
* drawers (dresser, sideboard, filing cabinet): ``reach_in`` in front, depth = the carcass depth (a
  drawer pulls out about that far) + half a body; width at least a body's. A nightstand is used from the
  bed (its user is in the bed's side strip), so its box is only the drawer's pull-out: its own width and
  depth, in front;
* bookshelf, TV stand, side table: ``reach_in`` in front, one body deep; plant: ``stand`` (watering);
* sofa, armchair: ``sit``, the leg zone in front; the first sofa (else the first armchair) is where the
  TV is watched from: the first TV stand ``faces`` it at :data:`TV_VIEW_RANGE`; every sofa and the first
  armchair have the first coffee table ``within_reach``;
* coffee table: ``sit``, a leg-zone-deep strip on its front (the seats' side);
* desk, dining table: ``sit``, the seating zone (chair + pull-out) along the front (a dining table also
  the back), chairs ``allowed``;
* chair: ``sit``, the pull-out zone behind it, ``simultaneous``; chair ``j`` (in list order) is
  ``tucked_under`` desk ``j``, the chairs beyond the desks under the first dining table; a chair with no
  table gets the leg zone in front instead;
* any other category: a standing body in front (``reach_in``).

Seats (sofa, armchair, chair) and the bed strips are ``simultaneous``; storage, tables and the rest are not.
"""


# ----------------------------------------------------------------------------------------------------------
# Records
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FunctionalRelation:
    """A functional relation through a proxy to object ``target`` (an index; §3.3).

    * ``within_reach``: the target's footprint lies within ``reach`` m (default :data:`REACH`) of the
      proxy's centre;
    * ``faces``: the target's front direction points at the proxy's centre;
    * ``view_range``: the proxy's centre is ``distance = (a, b)`` m from the target's centre;
    * ``tucked_under``: the proxy's owner (a chair) is tucked under the target (a desk or table).
    """

    kind: str
    target: int
    reach: float | None = None
    distance: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, FUNCTION_KINDS)
        object.__setattr__(self, "target", check_int("target", self.target, minimum=0))
        if self.kind == "within_reach":
            reach = REACH if self.reach is None else self.reach
            reach = check_float("reach", reach, minimum=0.0, maximum=MAX_REACH, strict_min=True)
            object.__setattr__(self, "reach", reach)
        elif self.reach is not None:
            raise ValueError(f"reach is only used by within_reach; got {self.reach!r} for {self.kind}")
        if self.kind == "view_range":
            if self.distance is None:
                raise ValueError("distance (a, b) is required for view_range")
            if (
                isinstance(self.distance, str)
                or not hasattr(self.distance, "__len__")
                or len(self.distance) != 2
            ):
                raise ValueError(f"distance must be a pair (a, b) of metres; got {self.distance!r}")
            a, b = (check_float(f"distance[{i}]", v, minimum=0.0) for i, v in enumerate(self.distance))
            if not a <= b <= MAX_VIEW:
                raise ValueError(f"distance must satisfy 0 <= a <= b <= {MAX_VIEW}; got {(a, b)}")
            object.__setattr__(self, "distance", (a, b))
        elif self.distance is not None:
            raise ValueError(f"distance is only used by view_range; got {self.distance!r} for {self.kind}")


@dataclass(frozen=True)
class Proxy:
    """One human proxy of object ``owner`` (module docstring; §3.2).

    ``size = (w_k, d_k, h_k)``: width along the owner's face, depth away from it, body height (rendering
    only). ``offset``: gap between the face and the box (m, may be negative to reach under the owner).
    ``shift``: the box centre's position along the face from its midpoint (toward ``+v`` on the front and
    back faces, toward ``+u`` on the left and right faces). ``allowed``: categories (str) or object indices
    (int) the box may overlap besides its owner. ``relations``: :class:`FunctionalRelation` records.
    ``simultaneous``: occupied at the same time as other people's proxies.
    """

    owner: int
    posture: str
    side: str
    offset: float
    size: tuple[float, float, float]
    allowed: tuple[str | int, ...] = ()
    relations: tuple[FunctionalRelation, ...] = ()
    simultaneous: bool = False
    shift: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "owner", check_int("owner", self.owner, minimum=0))
        check_choice("posture", self.posture, POSTURES)
        check_choice("side", self.side, SIDES)
        lo, hi = OFFSET_RANGE
        object.__setattr__(self, "offset", check_float("offset", self.offset, minimum=lo, maximum=hi))
        object.__setattr__(self, "size", _size_triple(self.size))
        shift = check_float("shift", self.shift, minimum=-MAX_SHIFT, maximum=MAX_SHIFT)
        object.__setattr__(self, "shift", shift)
        object.__setattr__(self, "allowed", _allowed_tuple(self.allowed))
        if isinstance(self.relations, FunctionalRelation) or not isinstance(self.relations, Sequence):
            raise TypeError(f"relations must be a sequence of FunctionalRelation; got {self.relations!r}")
        relations = tuple(self.relations)
        for i, rel in enumerate(relations):
            if not isinstance(rel, FunctionalRelation):
                raise TypeError(f"relations[{i}] must be a FunctionalRelation; got {type(rel).__name__}")
            if rel.target == self.owner:
                raise ValueError(f"relations[{i}].target must be another object than the owner {self.owner}")
        object.__setattr__(self, "relations", relations)
        if not isinstance(self.simultaneous, bool):
            raise TypeError(f"simultaneous must be a bool; got {type(self.simultaneous).__name__}")

    @property
    def footprint(self) -> tuple[float, float]:
        """The box as a package rectangle ``(w, d)`` (w along the owner's v, d along its u)."""
        w, d, _ = self.size
        return (w, d) if self.side in ("front", "back") else (d, w)


def _size_triple(value: object) -> tuple[float, float, float]:
    if isinstance(value, str) or not hasattr(value, "__len__") or len(value) != 3:  # type: ignore[arg-type]
        raise ValueError(f"size must be (w, d, h) in metres; got {value!r}")
    return tuple(  # type: ignore[return-value]
        check_float(f"size[{i}]", v, minimum=0.0, maximum=MAX_SIZE, strict_min=True)
        for i, v in enumerate(value)
    )


def _allowed_tuple(value: object) -> tuple[str | int, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(
            f"allowed must be a sequence of categories (str) or object indices (int); got {value!r}"
        )
    out: list[str | int] = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            if not item:
                raise ValueError(f"allowed[{i}] must be a non-empty category")
            out.append(item)
        else:
            out.append(check_int(f"allowed[{i}]", item, minimum=0))
    return tuple(out)


# ----------------------------------------------------------------------------------------------------------
# Rigid attachment (torch, differentiable; NumPy convenience)
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProxyArrays:
    """Proxies as arrays for :func:`attach`: every field has batch shape ``(..., k)``.

    ``owner`` int64 object indices, ``side`` int64 indices into :data:`SIDES`, ``offset`` and ``shift`` (m),
    ``size`` ``(..., k, 2)`` = face-relative ``(w_k, d_k)``. :func:`stack_proxy_arrays` pads several scenes.
    """

    owner: np.ndarray
    side: np.ndarray
    offset: np.ndarray
    shift: np.ndarray
    size: np.ndarray

    @property
    def k(self) -> int:
        """The number of proxies (padded slots included)."""
        return int(self.owner.shape[-1])


def proxy_arrays(proxies: Sequence[Proxy]) -> ProxyArrays:
    """The arrays of ``proxies`` (a sequence of :class:`Proxy`), each of batch shape ``(k,)``."""
    proxies = check_instances("proxies", proxies, Proxy)
    return ProxyArrays(
        owner=np.array([p.owner for p in proxies], dtype=np.int64),
        side=np.array([SIDES.index(p.side) for p in proxies], dtype=np.int64),
        offset=np.array([p.offset for p in proxies], dtype=float),
        shift=np.array([p.shift for p in proxies], dtype=float),
        size=np.array([p.size[:2] for p in proxies], dtype=float).reshape(-1, 2),
    )


def stack_proxy_arrays(scenes: Sequence[Sequence[Proxy]]) -> tuple[ProxyArrays, np.ndarray]:
    """Proxies of ``B`` scenes padded to the longest: :class:`ProxyArrays` of shape ``(B, K)``, mask (B, K).

    Padding slots point at object 0 with a front unit box (finite, attachable) and are False in the mask.
    """
    if isinstance(scenes, Proxy) or not isinstance(scenes, Sequence):
        raise TypeError(f"scenes must be a sequence of proxy sequences; got {type(scenes).__name__}")
    parts = [proxy_arrays(s) for s in scenes]
    batch, k = len(parts), max((p.k for p in parts), default=0)
    mask = np.zeros((batch, k), dtype=bool)
    owner = np.zeros((batch, k), dtype=np.int64)
    side_code = np.zeros((batch, k), dtype=np.int64)
    offset, shift = np.zeros((batch, k)), np.zeros((batch, k))
    size = np.ones((batch, k, 2))
    for b, p in enumerate(parts):
        mask[b, : p.k] = True
        owner[b, : p.k], side_code[b, : p.k] = p.owner, p.side
        offset[b, : p.k], shift[b, : p.k], size[b, : p.k] = p.offset, p.shift, p.size
    return ProxyArrays(owner, side_code, offset, shift, size), mask


def attach(
    proxies: Sequence[Proxy] | ProxyArrays, poses: torch.Tensor | np.ndarray, sizes: torch.Tensor | np.ndarray
) -> tuple[Any, Any, Any]:
    """The proxy rectangles rigidly attached to their owners (§3.2): ``center``, ``size``, ``theta``.

    ``proxies``: :class:`Proxy` records (shared by every batch entry) or :class:`ProxyArrays` of batch shape
    ``(..., k)``. ``poses`` ``(..., n, 3)`` floor poses ``(x, y, theta)`` of the objects; ``sizes`` ``(..., n,
    2)`` or ``(..., n, 3)`` their ``(w, d[, h])``. Leading axes broadcast. Returns ``center (..., k, 2)``,
    ``size (..., k, 2)`` (package rectangle ``(w, d)``: face-relative ``(w_k, d_k)`` on the front and back,
    swapped on the left and right) and ``theta (..., k)`` (= the owner's). Torch in (either of ``poses``,
    ``sizes``): torch out in its dtype and device, differentiable in both; NumPy in: float64 NumPy out.
    """
    arrays = proxies if isinstance(proxies, ProxyArrays) else proxy_arrays(proxies)
    as_numpy = not isinstance(poses, torch.Tensor) and not isinstance(sizes, torch.Tensor)
    ref = next((t for t in (poses, sizes) if isinstance(t, torch.Tensor)), None)
    dtype = torch.float64 if ref is None or not ref.dtype.is_floating_point else ref.dtype
    device = torch.device("cpu") if ref is None else ref.device
    poses_t = _as_tensor("poses", poses, dtype, device)
    sizes_t = _as_tensor("sizes", sizes, dtype, device)
    if poses_t.ndim < 2 or poses_t.shape[-1] != 3:
        raise ValueError(f"poses must have shape (..., n, 3); got {tuple(poses_t.shape)}")
    n = poses_t.shape[-2]
    if sizes_t.ndim < 2 or sizes_t.shape[-1] not in (2, 3) or sizes_t.shape[-2] != n:
        raise ValueError(
            f"sizes must have shape (..., {n}, 2) or (..., {n}, 3) like poses; got {tuple(sizes_t.shape)}"
        )
    sizes_t = sizes_t[..., :2]
    if not bool((sizes_t > 0).all()):
        raise ValueError("sizes must be > 0")
    owner = torch.as_tensor(arrays.owner, device=device).long()
    if owner.numel() and (int(owner.min()) < 0 or int(owner.max()) >= n):
        raise ValueError(f"proxies must have owners in [0, {n}) (poses holds {n} objects); got {owner.max()}")
    side_code = torch.as_tensor(arrays.side, device=device).long()
    offset = torch.as_tensor(arrays.offset, dtype=dtype, device=device)
    shift = torch.as_tensor(arrays.shift, dtype=dtype, device=device)
    psize = torch.as_tensor(arrays.size, dtype=dtype, device=device)
    try:
        batch = torch.broadcast_shapes(poses_t.shape[:-2], sizes_t.shape[:-2], owner.shape[:-1])
    except RuntimeError as err:
        raise ValueError(
            f"poses {tuple(poses_t.shape)}, sizes {tuple(sizes_t.shape)} and proxies {tuple(owner.shape)} "
            "have batch shapes that do not broadcast"
        ) from err
    k = owner.shape[-1]
    idx = owner.expand(*batch, k)
    pose_o = torch.gather(poses_t.expand(*batch, n, 3), -2, idx[..., None].expand(*batch, k, 3))
    size_o = torch.gather(sizes_t.expand(*batch, n, 2), -2, idx[..., None].expand(*batch, k, 2))
    on_depth = side_code <= 1  # front (0) or back (1): the proxy stacks along u
    sign = torch.where((side_code == 0) | (side_code == 2), 1.0, -1.0).to(dtype)
    w_k, d_k = psize[..., 0], psize[..., 1]
    half_o = torch.where(on_depth, size_o[..., 1], size_o[..., 0]) / 2
    away = sign * (half_o + offset + d_k / 2)
    beta = torch.where(on_depth, away, shift)
    alpha = torch.where(on_depth, shift, away)
    theta = pose_o[..., 2]
    center = pose_o[..., :2] + alpha[..., None] * side(theta) + beta[..., None] * front(theta)
    rect = torch.stack((torch.where(on_depth, w_k, d_k), torch.where(on_depth, d_k, w_k)), dim=-1)
    rect = rect.expand(*batch, k, 2)
    if as_numpy:
        return center.numpy(), rect.numpy().copy(), theta.numpy()
    return center, rect, theta


def _as_tensor(name: str, value: object, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        out = value.to(dtype=dtype, device=device)
    else:
        try:
            out = torch.as_tensor(np.asarray(value, dtype=float), dtype=dtype, device=device)
        except (TypeError, ValueError) as err:
            raise TypeError(
                f"{name} must be an array or tensor of numbers; got {type(value).__name__}"
            ) from err
    if not bool(torch.isfinite(out).all()):
        raise ValueError(f"{name} must contain only finite values")
    return out


# ----------------------------------------------------------------------------------------------------------
# Reference proxies
# ----------------------------------------------------------------------------------------------------------


def _furniture_tuple(furniture: object, name: str = "furniture") -> tuple[Furniture, ...]:
    if isinstance(furniture, Layout):
        return furniture.furniture
    return check_instances(name, furniture, Furniture)


@dataclass(frozen=True)
class _Links:
    """Who relates to whom, by list order (see :data:`ANTHROPOMETRY`'s docstring)."""

    nightstands: dict[int, tuple[int | None, int | None]]  # bed -> (left strip's, right strip's)
    tv: int | None
    tv_seat: int | None
    coffee: int | None
    coffee_seats: frozenset[int]
    chair_table: dict[int, int | None]


def _links(categories: Sequence[str]) -> _Links:
    by_cat: dict[str, list[int]] = {}
    for i, c in enumerate(categories):
        by_cat.setdefault(c, []).append(i)
    beds, stands = by_cat.get("bed", []), by_cat.get("nightstand", [])

    def stand(r: int) -> int | None:
        return stands[r] if r < len(stands) else None

    nightstands = {b: (stand(2 * r), stand(2 * r + 1)) for r, b in enumerate(beds)}
    sofas, armchairs = by_cat.get("sofa", []), by_cat.get("armchair", [])
    tvs, coffees = by_cat.get("tv_stand", []), by_cat.get("coffee_table", [])
    seats = sofas or armchairs
    desks, tables = by_cat.get("desk", []), by_cat.get("dining_table", [])
    chair_table = {
        c: desks[j] if j < len(desks) else (tables[0] if tables else None)
        for j, c in enumerate(by_cat.get("chair", []))
    }
    return _Links(
        nightstands=nightstands,
        tv=tvs[0] if tvs else None,
        tv_seat=seats[0] if seats else None,
        coffee=coffees[0] if coffees else None,
        coffee_seats=frozenset(sofas + armchairs[:1]),
        chair_table=chair_table,
    )


def _reach(target: int | None) -> tuple[FunctionalRelation, ...]:
    return () if target is None else (FunctionalRelation("within_reach", target, REACH),)


def _front_body(i: int, f: Furniture, posture: str, depth: float, **kw: Any) -> Proxy:
    """A box in front of ``f``: at least a body wide, ``depth`` deep."""
    return Proxy(i, posture, "front", 0.0, (max(f.width, BODY[0]), depth, POSTURE_HEIGHT[posture]), **kw)


def _object_proxies(i: int, f: Furniture, links: _Links) -> list[Proxy]:
    """The reference proxies of object ``i`` (the rules of :data:`ANTHROPOMETRY`'s docstring)."""
    w, d, _ = f.size
    cat = f.category
    if cat == "bed":
        h = POSTURE_HEIGHT["lie"]
        length = min(BED_SIDE_LENGTH, d)
        start = min(NIGHTSTAND_SLOT, d - length)
        shift = -d / 2 + start + length / 2  # along +u, i.e. toward the foot
        left, right = links.nightstands.get(i, (None, None))
        strip = (length, BED_STRIP_DEPTH, h)
        return [
            Proxy(i, "lie", "left", 0.0, strip, relations=_reach(left), simultaneous=True, shift=shift),
            Proxy(i, "lie", "right", 0.0, strip, relations=_reach(right), simultaneous=True, shift=shift),
            Proxy(i, "lie", "front", 0.0, (w, BED_STRIP_DEPTH, h), simultaneous=True),
        ]
    if cat == "wardrobe":
        leaf = w / math.ceil(w / MAX_DOOR_LEAF - 1e-9)
        return [Proxy(i, "reach_in", "front", 0.0, (w, leaf + BODY[1] / 2, POSTURE_HEIGHT["reach_in"]))]
    if cat == "nightstand":  # used from the bed: only the drawer's pull-out in front
        return [Proxy(i, "reach_in", "front", 0.0, (w, d, POSTURE_HEIGHT["reach_in"]))]
    if cat in ("dresser", "sideboard", "filing_cabinet"):
        return [_front_body(i, f, "reach_in", d + BODY[1] / 2)]
    if cat in ("bookshelf", "tv_stand", "side_table"):
        return [_front_body(i, f, "reach_in", BODY[1])]
    if cat == "plant":
        return [_front_body(i, f, "stand", BODY[1])]
    if cat in ("sofa", "armchair"):
        relations: tuple[FunctionalRelation, ...] = ()
        if i == links.tv_seat and links.tv is not None:
            relations += (
                FunctionalRelation("faces", links.tv),
                FunctionalRelation("view_range", links.tv, distance=TV_VIEW_RANGE),
            )
        if i in links.coffee_seats:
            relations += _reach(links.coffee)
        size = (w, SEATED_LEG_DEPTH, POSTURE_HEIGHT["sit"])
        return [Proxy(i, "sit", "front", 0.0, size, relations=relations, simultaneous=True)]
    if cat == "coffee_table":
        return [Proxy(i, "sit", "front", 0.0, (w, SEATED_LEG_DEPTH, POSTURE_HEIGHT["sit"]))]
    if cat in ("desk", "dining_table"):
        zone = (w, CHAIR_DEPTH + CHAIR_PULL_OUT, POSTURE_HEIGHT["sit"])
        sides = ("front", "back") if cat == "dining_table" else ("front",)
        return [Proxy(i, "sit", s, 0.0, zone, allowed=("chair",)) for s in sides]
    if cat == "chair":
        table = links.chair_table.get(i)
        h = POSTURE_HEIGHT["sit"]
        if table is None:
            return [Proxy(i, "sit", "front", 0.0, (w, SEATED_LEG_DEPTH, h), simultaneous=True)]
        tucked = (FunctionalRelation("tucked_under", table),)
        size = (max(w, BODY[0]), CHAIR_PULL_OUT, h)
        return [Proxy(i, "sit", "back", 0.0, size, relations=tucked, simultaneous=True)]
    return [_front_body(i, f, "reach_in", BODY[1])]


def allowed_matrix(proxies: Sequence[Proxy], categories: Sequence[str]) -> np.ndarray:
    """(k, n) bool: the objects each proxy may overlap: its owner, the indices and the categories of its
    ``allowed`` set (indices beyond the ``n = len(categories)`` objects are ignored)."""
    cats = np.array(list(categories), dtype=object)
    out = np.zeros((len(proxies), len(cats)), dtype=bool)
    for k, p in enumerate(proxies):
        out[k, p.owner] = True
        for a in p.allowed:
            if isinstance(a, str):
                out[k] |= cats == a
            elif a < len(cats):
                out[k, a] = True
    return out


def default_proxies(furniture: Layout | Sequence[Furniture], index: int | None = None) -> tuple[Proxy, ...]:
    """The reference proxies (module docstring, [our choice]) of every object, or of object ``index`` only.

    ``furniture``: a :class:`~neurips26.iohp.layout.Layout` or its furniture. Relations are resolved over
    the whole list (which nightstand, TV, table); the result depends only on categories, sizes and order,
    never on poses. Ordered by owner.
    """
    items = _furniture_tuple(furniture)
    links = _links([f.category for f in items])
    if index is not None:
        index = check_int("index", index, minimum=0, maximum=len(items) - 1)
        return tuple(_object_proxies(index, items[index], links))
    return tuple(p for i, f in enumerate(items) for p in _object_proxies(i, f, links))


# ----------------------------------------------------------------------------------------------------------
# JSON: schema, names, serialisation, parsing
# ----------------------------------------------------------------------------------------------------------

_RELATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["kind", "target"],
    "additionalProperties": False,
    "properties": {
        "kind": {"enum": list(FUNCTION_KINDS)},
        "target": {"type": "string", "description": "another object's name, as listed"},
        "reach": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": MAX_REACH,
            "description": "within_reach only",
        },
        "distance": {
            "type": "array",
            "items": {"type": "number", "minimum": 0, "maximum": MAX_VIEW},
            "minItems": 2,
            "maxItems": 2,
            "description": "view_range only (required there): [a, b] metres, a <= b",
        },
    },
}

#: JSON Schema (draft 2020-12) of one object's answer. ``posture``, ``side`` and ``size`` are required; the
#: other fields default to offset 0, shift 0, nothing allowed, no relations, not simultaneous. ``size`` is
#: ``[w, d]`` or ``[w, d, h]`` (h from :data:`POSTURE_HEIGHT` when absent). Names in ``target`` and
#: ``allowed`` are the object names of the prompt; ``allowed`` also takes categories. Unknown fields are
#: rejected. :func:`parse_proxies` enforces it (plus what a schema cannot say: names exist, a <= b).
PROXY_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "IOHP human proxies of one object",
    "type": "object",
    "required": ["object", "proxies"],
    "additionalProperties": False,
    "properties": {
        "object": {"type": "string", "description": "the object's name, as listed"},
        "proxies": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["posture", "side", "size"],
                "additionalProperties": False,
                "properties": {
                    "posture": {"enum": list(POSTURES)},
                    "side": {"enum": list(SIDES)},
                    "offset": {"type": "number", "minimum": OFFSET_RANGE[0], "maximum": OFFSET_RANGE[1]},
                    "shift": {"type": "number", "minimum": -MAX_SHIFT, "maximum": MAX_SHIFT},
                    "size": {
                        "type": "array",
                        "items": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_SIZE},
                        "minItems": 2,
                        "maxItems": 3,
                    },
                    "allowed": {"type": "array", "items": {"type": "string", "minLength": 1}},
                    "relations": {"type": "array", "items": _RELATION_SCHEMA},
                    "simultaneous": {"type": "boolean"},
                },
            },
        },
    },
}

_ANSWER_KEYS = frozenset(PROXY_SCHEMA["properties"])
_PROXY_KEYS = frozenset(PROXY_SCHEMA["properties"]["proxies"]["items"]["properties"])
_RELATION_KEYS = frozenset(_RELATION_SCHEMA["properties"])
_NAME = re.compile(r"[A-Za-z0-9_.:#-]+")


def object_names(furniture: Layout | Sequence[Furniture]) -> tuple[str, ...]:
    """The names the prompt uses: each piece's ``name`` when it is one token and unique, else
    ``"<category>_<index>"`` (made unique with ``#<index>``); tokens are letters, digits and ``_ . : # -``."""
    items = _furniture_tuple(furniture)
    names: list[str] = []
    for i, f in enumerate(items):
        name = f.name if _NAME.fullmatch(f.name) else re.sub(r"[^A-Za-z0-9_.:-]+", "_", f.category) + f"_{i}"
        if name in names:
            name = f"{name}#{i}"
        names.append(name)
    return tuple(names)


def to_answers(
    proxies: Sequence[Proxy], furniture: Layout | Sequence[Furniture], objects: Sequence[int] | None = None
) -> list[dict[str, Any]]:
    """``proxies`` as JSON-able answers (:data:`PROXY_SCHEMA`), one per object of ``objects`` (default: all),
    in that order; an object without proxies gets an empty list. Indices become the prompt's names."""
    proxies = check_instances("proxies", proxies, Proxy)
    names = object_names(furniture)
    wanted = range(len(names)) if objects is None else _check_objects(objects, len(names))
    for p in proxies:
        refs = [p.owner, *(r.target for r in p.relations), *(a for a in p.allowed if isinstance(a, int))]
        if max(refs) >= len(names):
            raise ValueError(f"proxies refer to object {max(refs)}; furniture has {len(names)} objects")
    out = []
    for i in wanted:
        items = []
        for p in proxies:
            if p.owner != i:
                continue
            relations = []
            for r in p.relations:
                rel: dict[str, Any] = {"kind": r.kind, "target": names[r.target]}
                if r.reach is not None:
                    rel["reach"] = r.reach
                if r.distance is not None:
                    rel["distance"] = list(r.distance)
                relations.append(rel)
            items.append(
                {
                    "posture": p.posture,
                    "side": p.side,
                    "offset": p.offset,
                    "shift": p.shift,
                    "size": list(p.size),
                    "allowed": [names[a] if isinstance(a, int) else a for a in p.allowed],
                    "relations": relations,
                    "simultaneous": p.simultaneous,
                }
            )
        out.append({"object": names[i], "proxies": items})
    return out


def _check_objects(objects: object, n: int) -> tuple[int, ...]:
    if isinstance(objects, str) or not isinstance(objects, Sequence):
        raise TypeError(f"objects must be a sequence of object indices; got {type(objects).__name__}")
    out = tuple(check_int(f"objects[{i}]", o, minimum=0, maximum=n - 1) for i, o in enumerate(objects))
    if len(set(out)) != len(out):
        raise ValueError(f"objects must not repeat an index; got {out}")
    return out


def _extract_json(text: str) -> Any:
    """The JSON value of a reply: the whole text, else a fenced block, else from the first ``[`` or ``{``."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    fenced = re.search(r"```(?:json)?\s*(.*?)```", stripped, re.S)
    candidates = [fenced.group(1)] if fenced else []
    starts = [i for i in (stripped.find("["), stripped.find("{")) if i >= 0]
    if starts:
        candidates.append(stripped[min(starts) :])
    for candidate in candidates:
        try:
            value, _ = json.JSONDecoder().raw_decode(candidate.strip())
            return value
        except json.JSONDecodeError:
            continue
    raise ValueError(f"reply is not valid JSON (expected an array of answers): {excerpt(text, 120)!r}")


class _Context:
    """Object names, categories and the index of each name, for resolving an answer."""

    def __init__(self, furniture: tuple[Furniture, ...]) -> None:
        self.names = object_names(furniture)
        self.index = {name: i for i, name in enumerate(self.names)}
        self.categories = frozenset(CATEGORIES) | {f.category for f in furniture}


def _parse_answer(item: object, where: str, ctx: _Context) -> tuple[int, tuple[Proxy, ...]]:
    """One answer (a dict of :data:`PROXY_SCHEMA`) as ``(owner, proxies)``; ValueError naming the field."""
    if not isinstance(item, dict):
        raise ValueError(
            f"{where} must be an object with fields object and proxies; got {type(item).__name__}"
        )
    _no_unknown(item, _ANSWER_KEYS, where)
    name = item.get("object")
    if not isinstance(name, str) or name not in ctx.index:
        raise ValueError(f"{where}.object must be one of the listed names {list(ctx.names)}; got {name!r}")
    owner = ctx.index[name]
    raw = item.get("proxies")
    if not isinstance(raw, list):
        raise ValueError(f"{name}: proxies must be a list of proxies; got {type(raw).__name__}")
    return owner, tuple(_parse_proxy(p, f"{name}: proxies[{j}]", owner, ctx) for j, p in enumerate(raw))


def _parse_proxy(raw: object, where: str, owner: int, ctx: _Context) -> Proxy:
    if not isinstance(raw, dict):
        raise ValueError(f"{where} must be an object with posture, side and size; got {type(raw).__name__}")
    _no_unknown(raw, _PROXY_KEYS, where)
    for key in ("posture", "side", "size"):
        if key not in raw:
            raise ValueError(f"{where}.{key} is missing (posture, side and size are required)")
    size = raw["size"]
    if not isinstance(size, list) or len(size) not in (2, 3):
        raise ValueError(f"{where}.size must be [w, d] or [w, d, h] in metres; got {size!r}")
    posture = raw["posture"]
    if len(size) == 2 and isinstance(posture, str) and posture in POSTURE_HEIGHT:
        size = [*size, POSTURE_HEIGHT[posture]]
    allowed_raw = raw.get("allowed", [])
    if not isinstance(allowed_raw, list):
        raise ValueError(f"{where}.allowed must be a list of names or categories; got {allowed_raw!r}")
    allowed: list[str | int] = []
    for i, a in enumerate(allowed_raw):
        if isinstance(a, str) and a in ctx.index:
            allowed.append(ctx.index[a])
        elif isinstance(a, str) and a in ctx.categories:
            allowed.append(a)
        else:
            raise ValueError(f"{where}.allowed[{i}] must be a listed name or a category; got {a!r}")
    relations_raw = raw.get("relations", [])
    if not isinstance(relations_raw, list):
        raise ValueError(f"{where}.relations must be a list of relations; got {relations_raw!r}")
    relations = tuple(
        _parse_relation(r, f"{where}.relations[{i}]", owner, ctx) for i, r in enumerate(relations_raw)
    )
    fields = {
        "posture": posture,
        "side": raw["side"],
        "offset": raw.get("offset", 0.0),
        "size": size,
        "simultaneous": raw.get("simultaneous", False),
        "shift": raw.get("shift", 0.0),
    }
    try:
        return Proxy(owner, allowed=tuple(allowed), relations=relations, **fields)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where}.{err}") from err


def _parse_relation(raw: object, where: str, owner: int, ctx: _Context) -> FunctionalRelation:
    if not isinstance(raw, dict):
        raise ValueError(f"{where} must be an object with kind and target; got {type(raw).__name__}")
    _no_unknown(raw, _RELATION_KEYS, where)
    target = raw.get("target")
    if not isinstance(target, str) or target not in ctx.index:
        raise ValueError(f"{where}.target must be a listed object name; got {target!r}")
    if ctx.index[target] == owner:
        raise ValueError(f"{where}.target must be another object than the proxy's owner {target!r}")
    distance = raw.get("distance")
    if distance is not None and not isinstance(distance, list):
        raise ValueError(f"{where}.distance must be [a, b] in metres; got {distance!r}")
    try:
        return FunctionalRelation(raw.get("kind"), ctx.index[target], raw.get("reach"), distance)  # type: ignore[arg-type]
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where}.{err}") from err


def _no_unknown(raw: dict[str, Any], known: frozenset[str], where: str) -> None:
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(f"{where} has unknown field(s) {unknown}; allowed fields: {sorted(known)}")


def _answer_items(data: object) -> list[Any]:
    if isinstance(data, dict):
        return [data]
    if isinstance(data, list):
        return data
    raise ValueError(
        f"reply must be a JSON array of answers (or one answer object); got {type(data).__name__}"
    )


def _parse_reply(
    text: str, ctx: _Context, wanted: Sequence[int]
) -> tuple[dict[int, tuple[Proxy, ...]], list[str]]:
    """Accepted answers (owner -> proxies) for the ``wanted`` objects, and the errors met (one per object)."""
    try:
        items = _answer_items(_extract_json(text))
    except ValueError as err:
        return {}, [str(err)]
    accepted: dict[int, tuple[Proxy, ...]] = {}
    errors: list[str] = []
    seen: set[int] = set()
    for k, item in enumerate(items):
        try:
            owner, proxies = _parse_answer(item, f"answers[{k}]", ctx)
        except ValueError as err:
            errors.append(str(err))
            name = item.get("object") if isinstance(item, dict) else None
            if isinstance(name, str) and name in ctx.index:
                seen.add(ctx.index[name])
            continue
        if owner in seen:
            errors.append(f"answers[{k}].object {ctx.names[owner]!r} is answered twice")
            accepted.pop(owner, None)
            continue
        seen.add(owner)
        if owner in wanted:
            accepted[owner] = proxies
    missing = [ctx.names[i] for i in wanted if i not in seen]
    if missing:
        errors.append(f"no answer for object(s) {missing}")
    return accepted, errors


def parse_proxies(
    text_or_dict: str | dict[str, Any] | list[Any], layout: Layout | Sequence[Furniture]
) -> tuple[Proxy, ...]:
    """Validate a model's answer(s) against :data:`PROXY_SCHEMA` and return the :class:`Proxy` records.

    ``text_or_dict``: the reply text (JSON, possibly inside a code fence or after some prose), one answer
    (a dict) or a list of answers. Names resolve against ``layout`` (:func:`object_names`; in ``allowed`` a
    string is an object name if one matches, else a category). Any schema error
    raises ``ValueError`` naming the field (``"bed_1: proxies[0].posture must be one of ..."``); an object
    answered twice is an error too. Proxies are returned in the order given.
    """
    ctx = _Context(_furniture_tuple(layout, "layout"))
    if isinstance(text_or_dict, str):
        data = _extract_json(text_or_dict)
    elif isinstance(text_or_dict, dict | list):
        data = text_or_dict
    else:
        raise TypeError(f"text_or_dict must be a str, a dict or a list; got {type(text_or_dict).__name__}")
    out: list[Proxy] = []
    seen: set[int] = set()
    for k, item in enumerate(_answer_items(data)):
        owner, proxies = _parse_answer(item, f"answers[{k}]", ctx)
        if owner in seen:
            raise ValueError(f"answers[{k}].object {ctx.names[owner]!r} is answered twice")
        seen.add(owner)
        out.extend(proxies)
    return tuple(out)


# ----------------------------------------------------------------------------------------------------------
# Prompt
# ----------------------------------------------------------------------------------------------------------

SYSTEM_PROMPT = (
    "You are an interior designer who thinks about the people using a room. "
    "You answer with JSON only, exactly in the requested schema."
)

_HOW = """For each object named under "Answer for", say how a person uses it and where their body is while \
doing so: one or more boxes ("human proxies") attached to one face of the object. Other furniture must stay \
out of these boxes, and the relations you give tie related furniture to them.
- posture: one of stand, sit, lie, reach_in, walk_through.
- side: front, back, left or right, in the object's own frame (left and right as for a person sitting on \
it and facing its front).
- offset: gap in metres between that face and the box (usually 0).
- shift: where the box's centre lies along that face, in metres from the face's midpoint (toward the \
object's left on its front and back faces, toward its front on its left and right faces; usually 0).
- size: [width along the face, depth away from the face, height] in metres.
- allowed: names or categories of other objects the box may overlap (chairs in a table's seating zone).
- relations: what the person in the box needs: {"kind": "within_reach", "target": NAME, "reach": 0.6} \
(the target is within reach, metres); {"kind": "faces", "target": NAME} (the target faces the box); \
{"kind": "view_range", "target": NAME, "distance": [A, B]} (the box is A to B metres from the target); \
{"kind": "tucked_under", "target": NAME} (this object is tucked under the target).
- simultaneous: true if the box is occupied while other people use their boxes (dining chairs)."""

_OBJECTS_HEAD = (
    "Objects (name | category | width x depth x height in metres; width runs along the object's front "
    "face, depth from its back to its front; the front is the side a person uses: a bed's foot end, a "
    "sofa's seat edge, a wardrobe's doors, a desk's knee side):"
)
_ANSWER_FOR = "Answer for: "
_OBJECT_LINE = re.compile(
    r"^- (?P<name>[^\s|]+) \| (?P<category>[^|\n]+?) \| (?P<w>\S+) x (?P<d>\S+) x (?P<h>\S+)$", re.M
)
_ANSWER_LINE = re.compile(r"^Answer for: (?P<names>.*)$", re.M)


def _number(x: float) -> str:
    """``repr`` of a float: the shortest text that reads back to the same float (exact round trip)."""
    return repr(float(x))


def proxy_prompt(layout: Layout, objects: Sequence[int] | None = None) -> str:
    """The user prompt asking for the proxies of ``objects`` (default: every object) of ``layout``.

    It states the room type and extent, lists every object (``- name | category | w x d x h``, sizes
    written so they read back exactly), explains the fields, quotes :data:`PROXY_SCHEMA` and names the
    objects to answer for; the reply is to be a JSON array of one answer per named object. Poses are not
    shown: proxies depend on what an object is, not where it stands.
    """
    if not isinstance(layout, Layout):
        raise TypeError(f"layout must be a Layout; got {type(layout).__name__}")
    if layout.n == 0:
        raise ValueError("layout must hold at least one object")
    wanted = range(layout.n) if objects is None else _check_objects(objects, layout.n)
    if not wanted:
        raise ValueError("objects must name at least one object")
    names = object_names(layout)
    x0, y0, x1, y1 = layout.room.bounds
    lines = [
        f"Room type: {layout.room.room_type}; bounding box {x1 - x0:.2f} x {y1 - y0:.2f} m "
        f"({'L-shaped' if layout.room.shape == 'L' else layout.room.shape}).",
        "",
        _OBJECTS_HEAD,
    ]
    for name, f in zip(names, layout.furniture, strict=True):
        category = " ".join(f.category.replace("|", " ").split())
        lines.append(f"- {name} | {category} | " + " x ".join(_number(v) for v in f.size))
    lines += [
        "",
        _HOW,
        "",
        "Each answer follows this JSON schema:",
        json.dumps(PROXY_SCHEMA),
        "",
        _ANSWER_FOR + ", ".join(names[i] for i in wanted),
        "Reply with a JSON array holding one answer per object named above, and nothing else.",
    ]
    return "\n".join(lines)


def retry_prompt(layout: Layout, objects: Sequence[int], errors: Sequence[str]) -> str:
    """The follow-up after a malformed reply: ``errors`` quoted, then :func:`proxy_prompt` for ``objects``."""
    quoted = "\n".join(f"- {excerpt(str(e), 300)}" for e in errors) or "- (no details)"
    return (
        "Your previous reply could not be used:\n"
        f"{quoted}\n"
        "Answer again, following the schema exactly, for the objects named below.\n\n"
        + proxy_prompt(layout, objects)
    )


# ----------------------------------------------------------------------------------------------------------
# The offline oracle
# ----------------------------------------------------------------------------------------------------------

#: Noise of :class:`ProxyOracle` at level ``s`` in [0, 1] [our choice]: every proxy's ``w`` and ``d`` are
#: multiplied by ``1 + s e`` with ``e ~ U(-1, 1)`` (so ``s = 0.3`` is the +-30 % oracle; sizes are kept
#: >= :data:`NOISE_MIN_SIZE`), a proxy is dropped with probability ``NOISE_DROP * s`` and gains one
#: spurious relation (random kind, random other object) with probability ``NOISE_SPURIOUS * s``.
NOISE_DROP = 0.5
NOISE_SPURIOUS = 0.5
NOISE_MIN_SIZE = 0.05


@dataclass(frozen=True)
class ProxyOracle:
    """The zero-shot stand-in: a ``messages -> str`` policy for :class:`neurips26.llm.Scripted`.

    It reads the last user message only: the object list (name, category, size) and the "Answer for" line
    of :func:`proxy_prompt`, rebuilds the furniture from that text and answers with
    :func:`default_proxies` as JSON (:func:`to_answers`). It never sees a layout object. With ``noise > 0``
    it perturbs the answer (:data:`NOISE_DROP`); the random stream of an object depends only on ``seed``,
    the object list's text and the object's position in it, so the same prompt always gets the same reply,
    a retry asking for fewer objects gets the same answers for them, and the draws are shared across noise
    levels (a proxy dropped at one level is dropped at every higher level). A prompt without an object list
    gets "I cannot answer that."
    """

    noise: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise", check_float("noise", self.noise, minimum=0.0, maximum=1.0))
        object.__setattr__(self, "seed", check_seed("seed", self.seed))

    def __call__(self, messages: Sequence[Message]) -> str:
        users = [m for m in messages if m.role == "user"]
        if not users:
            return "I cannot answer that."
        text = users[-1].content
        rows = list(_OBJECT_LINE.finditer(text))
        ask = _ANSWER_LINE.search(text)
        if not rows or ask is None:
            return "I cannot answer that."
        furniture = []
        for r in rows:
            try:
                size = tuple(float(r[k]) for k in ("w", "d", "h"))
                furniture.append(Furniture(r["category"].strip(), size, name=r["name"]))  # type: ignore[arg-type]
            except ValueError:
                return "I cannot answer that."
        names = object_names(furniture)
        index = {n: i for i, n in enumerate(names)}
        wanted = [index[n.strip()] for n in ask["names"].split(",") if n.strip() in index]
        proxies = default_proxies(furniture)
        if self.noise > 0.0:
            listing = "\n".join(r.group(0) for r in rows)
            proxies = self._perturb(proxies, len(furniture), zlib.crc32(listing.encode("utf-8")))
        return json.dumps(to_answers(proxies, furniture, wanted))

    def _perturb(self, proxies: tuple[Proxy, ...], n: int, stamp: int) -> tuple[Proxy, ...]:
        """The noisy answer; draws made per proxy in a fixed pattern, whatever the level."""
        s = self.noise
        out: list[Proxy] = []
        for owner in range(n):
            rng = np.random.default_rng(sub_seed(self.seed, stamp, owner))
            for p in (q for q in proxies if q.owner == owner):
                u_drop, u_spur, u_target = rng.random(3)
                eps = rng.uniform(-1.0, 1.0, size=2)
                kind = FUNCTION_KINDS[int(rng.integers(len(FUNCTION_KINDS)))]
                if u_drop < NOISE_DROP * s:
                    continue
                w, d, h = p.size
                size = (
                    min(max(w * (1.0 + s * eps[0]), NOISE_MIN_SIZE), MAX_SIZE),
                    min(max(d * (1.0 + s * eps[1]), NOISE_MIN_SIZE), MAX_SIZE),
                    h,
                )
                relations = p.relations
                if n > 1 and u_spur < NOISE_SPURIOUS * s:
                    others = [j for j in range(n) if j != owner]
                    target = others[min(int(u_target * len(others)), len(others) - 1)]
                    distance = TV_VIEW_RANGE if kind == "view_range" else None
                    relations += (FunctionalRelation(kind, target, distance=distance),)
                out.append(
                    Proxy(
                        p.owner,
                        p.posture,
                        p.side,
                        p.offset,
                        size,
                        p.allowed,
                        relations,
                        p.simultaneous,
                        p.shift,
                    )
                )
        return tuple(out)


def proxy_oracle(noise: float = 0.0, seed: int = 0) -> Scripted:
    """The chapter's offline proxy model: ``Scripted(ProxyOracle(noise, seed))`` (see :class:`ProxyOracle`).

    Pass ``neurips26.llm.get_backend(proxy_oracle())`` to :func:`infer_proxies` to let ``NEURIPS26_LLM``
    select a real model instead.
    """
    oracle = ProxyOracle(noise, seed)
    return Scripted(oracle, model=f"proxy-oracle-noise{oracle.noise:g}-seed{oracle.seed}")


# ----------------------------------------------------------------------------------------------------------
# Inference with retry and fallback
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProxyInference:
    """What :func:`infer_proxies` got: the ``proxies`` (ordered by owner) and how.

    ``replies``: completions received; ``retries``: follow-up calls after a malformed reply; ``fallbacks``:
    objects that got :func:`default_proxies` because no valid answer came (``fallback_objects`` lists
    them); ``errors``: every parse error met, in order.
    """

    proxies: tuple[Proxy, ...]
    replies: int
    retries: int
    fallbacks: int
    fallback_objects: tuple[int, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def counts(self) -> dict[str, int]:
        """``{"replies": ..., "retries": ..., "fallbacks": ...}``."""
        return {"replies": self.replies, "retries": self.retries, "fallbacks": self.fallbacks}


def infer_proxies(
    layout: Layout, backend: ChatModel | None = None, *, retries: int = 1, max_tokens: int = 4096
) -> ProxyInference:
    """Ask ``backend`` for the proxies of every object of ``layout`` (zero-shot, §3.2).

    ``backend``: any :class:`neurips26.llm.ChatModel`; ``None`` uses the clean offline oracle
    (:func:`proxy_oracle`). One call lists the whole room (:func:`proxy_prompt`, greedy decoding). Answers
    that validate are kept per object; if some object has none, up to ``retries`` follow-up calls (default
    one) continue the conversation with :func:`retry_prompt`, which quotes the errors and asks only for the
    missing objects. Objects still without a valid answer get :func:`default_proxies` (counted as
    fallbacks).
    """
    if not isinstance(layout, Layout):
        raise TypeError(f"layout must be a Layout; got {type(layout).__name__}")
    if backend is None:
        backend = proxy_oracle()
    elif not isinstance(backend, ChatModel):
        raise TypeError(
            f"backend must be a ChatModel (an object with complete) or None; got {type(backend).__name__}"
        )
    retries = check_int("retries", retries, minimum=0)
    max_tokens = check_int("max_tokens", max_tokens, minimum=1)
    if layout.n == 0:
        return ProxyInference((), 0, 0, 0)
    ctx = _Context(layout.furniture)
    messages = [Message.system(SYSTEM_PROMPT), Message.user(proxy_prompt(layout))]
    wanted = list(range(layout.n))
    answers: dict[int, tuple[Proxy, ...]] = {}
    errors: list[str] = []
    replies = retried = 0
    while True:
        reply = backend.complete(messages, temperature=0.0, max_tokens=max_tokens)
        replies += 1
        accepted, met = _parse_reply(reply.text, ctx, wanted)
        answers.update(accepted)
        errors += met
        wanted = [i for i in wanted if i not in answers]
        if not wanted or retried >= retries:
            break
        retried += 1
        messages += [Message.assistant(reply.text), Message.user(retry_prompt(layout, wanted, met))]
    fallback = tuple(wanted)
    for i in fallback:
        answers[i] = default_proxies(layout, i)
    proxies = tuple(p for i in range(layout.n) for p in answers.get(i, ()))
    return ProxyInference(proxies, replies, retried, len(fallback), fallback, tuple(errors))


__all__ = [
    "allowed_matrix",
    "ANTHROPOMETRY",
    "BED_SIDE_LENGTH",
    "BED_STRIP_DEPTH",
    "BODY",
    "CHAIR_DEPTH",
    "CHAIR_PULL_OUT",
    "FUNCTION_KINDS",
    "MAX_DOOR_LEAF",
    "MAX_SIZE",
    "NIGHTSTAND_SLOT",
    "NOISE_DROP",
    "NOISE_MIN_SIZE",
    "NOISE_SPURIOUS",
    "OFFSET_RANGE",
    "POSTURES",
    "POSTURE_HEIGHT",
    "PROXY_SCHEMA",
    "REACH",
    "SEATED_LEG_DEPTH",
    "SIDES",
    "SYSTEM_PROMPT",
    "TV_VIEW_RANGE",
    "FunctionalRelation",
    "Proxy",
    "ProxyArrays",
    "ProxyInference",
    "ProxyOracle",
    "attach",
    "default_proxies",
    "infer_proxies",
    "object_names",
    "parse_proxies",
    "proxy_arrays",
    "proxy_oracle",
    "proxy_prompt",
    "retry_prompt",
    "stack_proxy_arrays",
    "to_answers",
]
