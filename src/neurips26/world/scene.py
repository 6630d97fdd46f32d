"""Scene description: boxes and a ground plane as plain, JSON-serialisable data.

Every solid is a :class:`Box` — a centre, three half-extents and a rotation that maps the box's local
axes to world axes — so axis-aligned boxes, yawed furniture, unit voxels and thin walls are all one
primitive with one exact ray test. A :class:`GroundPlane` is the horizontal plane ``Y = height``
(optionally a checkerboard, which gives parallax cues). A :class:`Scene` holds both, plus a
background colour, and converts to the packed arrays the renderer reads (:class:`PackedScene`).

Conventions: world ``+Y`` is up and the ground is ``Y = 0`` unless stated; colours are RGB in
``[0, 1]``; instance ids are non-negative and unique within a scene (``-1`` means background in
renders); the semantic class is a free string (``"cube"``, ``"wall"``, ``"chair"``...).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from neurips26.validation import check_float, check_int

JSON_VERSION = 1
BACKGROUND_ID = -1
_IDENTITY = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


def _vec3(name: str, value: object, *, positive: bool = False) -> tuple[float, float, float]:
    """Three finite floats (strictly positive if ``positive``) as a tuple."""
    if isinstance(value, str) or not hasattr(value, "__len__") or len(value) != 3:  # type: ignore[arg-type]
        raise ValueError(f"{name} must be a sequence of 3 numbers; got {value!r}")
    out = tuple(
        check_float(f"{name}[{i}]", v, minimum=0.0 if positive else None, strict_min=positive)
        for i, v in enumerate(value)  # type: ignore[arg-type]
    )
    return out  # type: ignore[return-value]


def _color(name: str, value: object) -> tuple[float, float, float]:
    """An RGB triple in ``[0, 1]``."""
    if isinstance(value, str) or not hasattr(value, "__len__") or len(value) != 3:  # type: ignore[arg-type]
        raise ValueError(f"{name} must be an RGB triple in [0, 1]; got {value!r}")
    return tuple(  # type: ignore[return-value]
        check_float(f"{name}[{i}]", v, minimum=0.0, maximum=1.0)
        for i, v in enumerate(value)  # type: ignore[arg-type]
    )


def _rotation(name: str, value: object) -> tuple[tuple[float, float, float], ...]:
    """A proper rotation (orthonormal, det +1, to 1e-6) as a tuple of three row tuples."""
    try:
        m = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a 3x3 rotation matrix; got {value!r}") from err
    if m.shape != (3, 3):
        raise ValueError(f"{name} must have shape (3, 3); got {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"{name} must contain only finite values")
    if not np.allclose(m @ m.T, np.eye(3), atol=1e-6) or np.linalg.det(m) < 0:
        raise ValueError(f"{name} must be a rotation matrix (orthonormal with determinant +1)")
    return tuple(tuple(float(x) for x in row) for row in m)  # type: ignore[return-value]


def yaw_rotation(yaw_deg: float) -> np.ndarray:
    """The rotation by ``yaw_deg`` degrees about world ``+Y`` (right-handed: ``+Z`` turns towards ``+X``).

    ``R = [[cos, 0, sin], [0, 1, 0], [-sin, 0, cos]]``; entries within 1e-15 of 0 or ±1 are snapped,
    so quarter turns are exact and keep boxes exactly axis-aligned.
    """
    yaw = math.radians(check_float("yaw_deg", yaw_deg))
    c, s = _snap(math.cos(yaw)), _snap(math.sin(yaw))
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]], dtype=float) + 0.0  # + 0.0: no -0.0


def _snap(x: float) -> float:
    """``x`` rounded to the nearest integer when within 1e-15 of it (exact quarter-turn rotations)."""
    r = float(round(x))
    return r if abs(x - r) < 1e-15 else x


@dataclass(frozen=True)
class Box:
    """A solid box: ``{c + R @ p : |p_k| <= h_k}`` with centre ``c``, half-extents ``h``, rotation ``R``.

    ``rotation`` maps box-local coordinates to world coordinates (its columns are the box's axes in
    the world). All fields are stored as tuples of Python floats, so equality is exact and the JSON
    form round-trips bit for bit.
    """

    center: tuple[float, float, float]
    half_extents: tuple[float, float, float]
    rotation: tuple[tuple[float, float, float], ...] = _IDENTITY
    color: tuple[float, float, float] = (0.7, 0.7, 0.7)
    instance_id: int = 1
    semantic: str = "box"

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", _vec3("center", self.center))
        object.__setattr__(self, "half_extents", _vec3("half_extents", self.half_extents, positive=True))
        object.__setattr__(self, "rotation", _rotation("rotation", self.rotation))
        object.__setattr__(self, "color", _color("color", self.color))
        object.__setattr__(self, "instance_id", check_int("instance_id", self.instance_id, minimum=0))
        if not isinstance(self.semantic, str) or not self.semantic:
            raise TypeError(f"semantic must be a non-empty str; got {self.semantic!r}")

    @property
    def rotation_matrix(self) -> np.ndarray:
        """``R`` as a (3, 3) float64 array (columns = box axes in world coordinates)."""
        return np.array(self.rotation, dtype=float)

    @property
    def size(self) -> tuple[float, float, float]:
        """Full edge lengths ``2 h``."""
        return tuple(2.0 * h for h in self.half_extents)  # type: ignore[return-value]

    def corners(self) -> np.ndarray:
        """The 8 corners in world coordinates, shape (8, 3)."""
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
        return np.asarray(self.center) + (signs * np.asarray(self.half_extents)) @ self.rotation_matrix.T

    def world_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Axis-aligned bounds ``(lo, hi)`` of the box in world coordinates: ``c ± |R| h``."""
        reach = np.abs(self.rotation_matrix) @ np.asarray(self.half_extents)
        c = np.asarray(self.center)
        return c - reach, c + reach

    def contains(self, points: np.ndarray, tol: float = 0.0) -> np.ndarray:
        """Whether each world point (..., 3) lies in the box grown by ``tol``."""
        local = (np.asarray(points, dtype=float) - np.asarray(self.center)) @ self.rotation_matrix
        return np.all(np.abs(local) <= np.asarray(self.half_extents) + tol, axis=-1)

    def to_dict(self) -> dict:
        return {
            "center": list(self.center),
            "half_extents": list(self.half_extents),
            "rotation": [list(r) for r in self.rotation],
            "color": list(self.color),
            "instance_id": self.instance_id,
            "semantic": self.semantic,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Box:
        return cls(**_fields(data, "box", cls.__dataclass_fields__))


def box_from_bounds(
    lo: Sequence[float],
    hi: Sequence[float],
    *,
    color: Sequence[float] = (0.7, 0.7, 0.7),
    instance_id: int = 1,
    semantic: str = "box",
) -> Box:
    """The axis-aligned box ``[lo, hi]`` (``lo < hi`` on every axis)."""
    lo, hi = _vec3("lo", lo), _vec3("hi", hi)
    for k in range(3):
        if not hi[k] > lo[k]:
            raise ValueError(f"hi must exceed lo on every axis; got lo={lo}, hi={hi}")
    center = tuple((a + b) / 2.0 for a, b in zip(lo, hi, strict=True))
    half = tuple((b - a) / 2.0 for a, b in zip(lo, hi, strict=True))
    return Box(center, half, color=color, instance_id=instance_id, semantic=semantic)  # type: ignore[arg-type]


def oriented_box(
    center: Sequence[float],
    size: Sequence[float],
    yaw_deg: float = 0.0,
    *,
    color: Sequence[float] = (0.7, 0.7, 0.7),
    instance_id: int = 1,
    semantic: str = "box",
) -> Box:
    """A box of full edge lengths ``size`` (x, y, z before turning) turned by ``yaw_deg`` degrees about +Y."""
    size = _vec3("size", size, positive=True)
    half = tuple(s / 2.0 for s in size)
    return Box(
        center,  # type: ignore[arg-type]
        half,  # type: ignore[arg-type]
        rotation=yaw_rotation(yaw_deg),  # type: ignore[arg-type]
        color=color,  # type: ignore[arg-type]
        instance_id=instance_id,
        semantic=semantic,
    )


def voxel(
    index: Sequence[int],
    *,
    size: float = 1.0,
    origin: Sequence[float] = (0.0, 0.0, 0.0),
    color: Sequence[float] = (0.7, 0.7, 0.7),
    instance_id: int = 1,
    semantic: str = "cube",
) -> Box:
    """The cube of edge ``size`` at integer ``index = (ix, iy, iz)``: ``origin + size * [i, i + 1]`` per axis.

    ``iy`` is the vertical layer (``iy = 0`` rests on a ground at ``origin[1]``).
    """
    if isinstance(index, str) or not hasattr(index, "__len__") or len(index) != 3:
        raise ValueError(f"index must be 3 integers (ix, iy, iz); got {index!r}")
    idx = [check_int(f"index[{k}]", v) for k, v in enumerate(index)]
    size = check_float("size", size, minimum=0.0, strict_min=True)
    origin = _vec3("origin", origin)
    lo = [o + size * i for o, i in zip(origin, idx, strict=True)]
    hi = [o + size * (i + 1) for o, i in zip(origin, idx, strict=True)]
    return box_from_bounds(lo, hi, color=color, instance_id=instance_id, semantic=semantic)


def wall(
    start: Sequence[float],
    end: Sequence[float],
    *,
    height: float = 2.5,
    thickness: float = 0.1,
    base: float = 0.0,
    color: Sequence[float] = (0.85, 0.85, 0.8),
    instance_id: int = 1,
    semantic: str = "wall",
) -> Box:
    """A thin vertical box along the floor segment ``start -> end`` (each ``(x, z)``), centred on it.

    Axis-parallel segments give exactly axis-aligned boxes; others are rotated about +Y.
    """
    if len(start) != 2 or len(end) != 2:
        raise ValueError(f"start and end must be (x, z) pairs; got {start!r}, {end!r}")
    x0, z0 = (check_float(f"start[{k}]", v) for k, v in enumerate(start))
    x1, z1 = (check_float(f"end[{k}]", v) for k, v in enumerate(end))
    height = check_float("height", height, minimum=0.0, strict_min=True)
    thickness = check_float("thickness", thickness, minimum=0.0, strict_min=True)
    base = check_float("base", base)
    dx, dz = x1 - x0, z1 - z0
    length = math.hypot(dx, dz)
    if length == 0.0:
        raise ValueError("start and end must differ (a wall needs a length)")
    center = ((x0 + x1) / 2.0, base + height / 2.0, (z0 + z1) / 2.0)
    if dz == 0.0:
        half, rot = (length / 2.0, height / 2.0, thickness / 2.0), _IDENTITY
    elif dx == 0.0:
        half, rot = (thickness / 2.0, height / 2.0, length / 2.0), _IDENTITY
    else:  # local x along the segment, local y up, local z = x cross y
        ux, uz = dx / length, dz / length
        rot = ((ux, 0.0, -uz), (0.0, 1.0, 0.0), (uz, 0.0, ux))
        half = (length / 2.0, height / 2.0, thickness / 2.0)
    return Box(center, half, rot, color=color, instance_id=instance_id, semantic=semantic)  # type: ignore[arg-type]


@dataclass(frozen=True)
class GroundPlane:
    """The infinite horizontal plane ``Y = height``, seen from above.

    With ``checker > 0`` the plane alternates ``color`` and ``color2`` on squares of side ``checker``
    (square ``(floor(x / checker) + floor(z / checker))`` even gets ``color``); ``checker = 0`` is plain.
    """

    height: float = 0.0
    color: tuple[float, float, float] = (0.55, 0.55, 0.5)
    color2: tuple[float, float, float] = (0.45, 0.45, 0.4)
    checker: float = 0.0
    instance_id: int = 0
    semantic: str = "ground"

    def __post_init__(self) -> None:
        object.__setattr__(self, "height", check_float("height", self.height))
        object.__setattr__(self, "color", _color("color", self.color))
        object.__setattr__(self, "color2", _color("color2", self.color2))
        object.__setattr__(self, "checker", check_float("checker", self.checker, minimum=0.0))
        object.__setattr__(self, "instance_id", check_int("instance_id", self.instance_id, minimum=0))
        if not isinstance(self.semantic, str) or not self.semantic:
            raise TypeError(f"semantic must be a non-empty str; got {self.semantic!r}")

    def to_dict(self) -> dict:
        return {
            "height": self.height,
            "color": list(self.color),
            "color2": list(self.color2),
            "checker": self.checker,
            "instance_id": self.instance_id,
            "semantic": self.semantic,
        }

    @classmethod
    def from_dict(cls, data: dict) -> GroundPlane:
        return cls(**_fields(data, "ground", cls.__dataclass_fields__))


def _fields(data: object, name: str, allowed: dict) -> dict:
    """The keyword arguments in a JSON object, converting lists back to tuples."""
    if not isinstance(data, dict):
        raise TypeError(f"{name} must be a JSON object; got {type(data).__name__}")
    unknown = set(data) - set(allowed)
    if unknown:
        raise ValueError(f"{name} has unknown fields {sorted(unknown)}")

    def tup(v):
        return tuple(tup(x) for x in v) if isinstance(v, list) else v

    return {k: tup(v) for k, v in data.items()}


@dataclass(frozen=True)
class PackedScene:
    """A scene as stacked arrays, the form the renderer reads.

    ``centers``, ``half_extents``, ``colors``: (N, 3); ``rotations``: (N, 3, 3) box-to-world;
    ``ids``: (N,) int. ``ground_*`` describe the plane (``has_ground`` False means none).
    """

    centers: np.ndarray
    half_extents: np.ndarray
    rotations: np.ndarray
    colors: np.ndarray
    ids: np.ndarray
    has_ground: bool
    ground_height: float
    ground_color: np.ndarray
    ground_color2: np.ndarray
    ground_checker: float
    ground_id: int
    background: np.ndarray

    @property
    def n_boxes(self) -> int:
        return int(self.ids.shape[0])


@dataclass(frozen=True)
class Scene:
    """Boxes, an optional ground plane and a background colour: plain data.

    ``to_json`` / ``from_json`` round-trip exactly (``Scene.from_json(s.to_json()) == s``); ``pack``
    gives the arrays the renderer uses. Instance ids must be unique across the boxes and the ground.
    """

    boxes: tuple[Box, ...] = ()
    ground: GroundPlane | None = field(default_factory=GroundPlane)
    background: tuple[float, float, float] = (0.82, 0.87, 0.93)

    def __post_init__(self) -> None:
        boxes = tuple(self.boxes) if not isinstance(self.boxes, Box) else None
        if boxes is None or not all(isinstance(b, Box) for b in boxes):
            raise TypeError("boxes must be a sequence of Box")
        if self.ground is not None and not isinstance(self.ground, GroundPlane):
            raise TypeError(f"ground must be a GroundPlane or None; got {type(self.ground).__name__}")
        object.__setattr__(self, "boxes", boxes)
        object.__setattr__(self, "background", _color("background", self.background))
        ids = [b.instance_id for b in boxes] + ([self.ground.instance_id] if self.ground else [])
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(f"instance ids must be unique within a scene; repeated: {dup}")

    # --- queries ------------------------------------------------------------------------------
    @property
    def ids(self) -> tuple[int, ...]:
        """Instance ids of the boxes, in order."""
        return tuple(b.instance_id for b in self.boxes)

    def box(self, instance_id: int) -> Box:
        """The box with this instance id."""
        for b in self.boxes:
            if b.instance_id == instance_id:
                return b
        raise KeyError(f"no box with instance_id {instance_id}")

    def semantics(self) -> dict[int, str]:
        """``{instance_id: semantic class}`` for every box and the ground."""
        out = {b.instance_id: b.semantic for b in self.boxes}
        if self.ground is not None:
            out[self.ground.instance_id] = self.ground.semantic
        return out

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Axis-aligned world bounds ``(lo, hi)`` of all boxes (zeros for an empty scene)."""
        if not self.boxes:
            return np.zeros(3), np.zeros(3)
        los, his = zip(*(b.world_bounds() for b in self.boxes), strict=True)
        return np.min(los, axis=0), np.max(his, axis=0)

    def with_boxes(self, boxes: Sequence[Box]) -> Scene:
        """A copy with ``boxes`` appended."""
        return Scene(self.boxes + tuple(boxes), self.ground, self.background)

    def next_id(self) -> int:
        """The smallest id larger than every id in use."""
        ids = list(self.ids) + ([self.ground.instance_id] if self.ground else [])
        return max(ids, default=0) + 1

    # --- serialisation ------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "version": JSON_VERSION,
            "background": list(self.background),
            "ground": None if self.ground is None else self.ground.to_dict(),
            "boxes": [b.to_dict() for b in self.boxes],
        }

    def to_json(self, indent: int | None = None) -> str:
        """JSON text; floats are written with ``repr`` precision, so :meth:`from_json` is exact."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: dict) -> Scene:
        if not isinstance(data, dict):
            raise TypeError(f"scene must be a JSON object; got {type(data).__name__}")
        if data.get("version") != JSON_VERSION:
            raise ValueError(f"scene version must be {JSON_VERSION}; got {data.get('version')!r}")
        boxes = data.get("boxes", [])
        if not isinstance(boxes, list):
            raise TypeError("boxes must be a JSON list")
        ground = data.get("ground")
        return cls(
            boxes=tuple(Box.from_dict(b) for b in boxes),
            ground=None if ground is None else GroundPlane.from_dict(ground),
            background=tuple(data.get("background", (0.82, 0.87, 0.93))),  # type: ignore[arg-type]
        )

    @classmethod
    def from_json(cls, text: str) -> Scene:
        """The scene written by :meth:`to_json`."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str; got {type(text).__name__}")
        return cls.from_dict(json.loads(text))

    def pack(self, dtype: type = np.float32) -> PackedScene:
        """The scene as stacked arrays of ``dtype`` (float32 or float64) for the renderer."""
        dtype = np.dtype(dtype)
        if dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64; got {dtype}")
        n = len(self.boxes)
        g = self.ground or GroundPlane()
        return PackedScene(
            centers=np.array([b.center for b in self.boxes], dtype=dtype).reshape(n, 3),
            half_extents=np.array([b.half_extents for b in self.boxes], dtype=dtype).reshape(n, 3),
            rotations=np.array([b.rotation for b in self.boxes], dtype=dtype).reshape(n, 3, 3),
            colors=np.array([b.color for b in self.boxes], dtype=dtype).reshape(n, 3),
            ids=np.array(self.ids, dtype=np.int32).reshape(n),
            has_ground=self.ground is not None,
            ground_height=g.height,
            ground_color=np.array(g.color, dtype=dtype),
            ground_color2=np.array(g.color2, dtype=dtype),
            ground_checker=g.checker,
            ground_id=g.instance_id,
            background=np.array(self.background, dtype=dtype),
        )
