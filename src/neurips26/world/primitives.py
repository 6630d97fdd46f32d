"""Spheres and upright cylinders, hit analytically and composited into a box render by nearest depth.

The box ray caster (:mod:`~neurips26.world.render`) handles boxes and the ground; round objects are exact
and cheap as quadrics. For the pixel rays ``o + t d`` of a perspective camera (``d`` scaled so that its
camera-frame ``z`` is 1, so ``t`` is the z-depth, as :func:`~neurips26.world.render.render` uses them):

* sphere ``|p - c| = r``: ``a t² + b t + c' = 0`` with ``a = d·d``, ``b = 2 d·(o - c)``,
  ``c' = |o - c|² - r²``; the visible hit is the smaller root ``t = (-b - √(b² - 4ac')) / 2a`` when
  positive; the normal is ``(p - c) / r``.
* cylinder of radius ``r`` about the vertical axis through ``c``, for ``y0 <= Y <= y1``: the side solves
  the same quadratic in the ``XZ`` plane (its normal is horizontal), each cap is the plane ``Y = y_cap``
  inside the disc; a cap is tested only when the eye is on its outer side; the nearest hit wins.

:func:`composite` lets each primitive take the pixels where it is nearer than what the render holds (ties keep
the earlier surface), and shades them like the boxes: ``albedo (k_a + (1 - k_a) max(0, n · l))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from neurips26.validation import check_float, check_int
from neurips26.world.camera import Camera
from neurips26.world.render import AMBIENT, LIGHT_DIRECTION, Render, _unit, render
from neurips26.world.scene import PackedScene, Scene, _vec3


@dataclass(frozen=True)
class Sphere:
    """A sphere of ``radius`` around ``center``, drawn with ``color`` and ``instance_id``."""

    center: tuple[float, float, float]
    radius: float
    color: tuple[float, float, float] = (0.7, 0.7, 0.7)
    instance_id: int = 1
    semantic: str = "sphere"

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", _vec3("center", self.center))
        object.__setattr__(self, "radius", check_float("radius", self.radius, minimum=0.0, strict_min=True))
        object.__setattr__(self, "color", _colour(self.color))
        object.__setattr__(self, "instance_id", check_int("instance_id", self.instance_id, minimum=0))

    def hit(self, origin: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Ray parameters (P,) (inf = miss) and unit normals (P, 3) of ``origin + t directions``."""
        return hit_sphere(origin, directions, np.asarray(self.center), self.radius)


@dataclass(frozen=True)
class Cylinder:
    """An upright cylinder: axis along ``+Y`` through ``center``, ``height`` tall (centred on ``center``)."""

    center: tuple[float, float, float]
    radius: float
    height: float
    color: tuple[float, float, float] = (0.7, 0.7, 0.7)
    instance_id: int = 1
    semantic: str = "cylinder"

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", _vec3("center", self.center))
        object.__setattr__(self, "radius", check_float("radius", self.radius, minimum=0.0, strict_min=True))
        object.__setattr__(self, "height", check_float("height", self.height, minimum=0.0, strict_min=True))
        object.__setattr__(self, "color", _colour(self.color))
        object.__setattr__(self, "instance_id", check_int("instance_id", self.instance_id, minimum=0))

    @property
    def y_range(self) -> tuple[float, float]:
        """(bottom, top) heights."""
        half = self.height / 2.0
        return self.center[1] - half, self.center[1] + half

    def hit(self, origin: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Ray parameters (P,) (inf = miss) and unit normals (P, 3) of ``origin + t directions``."""
        y0, y1 = self.y_range
        return hit_cylinder(origin, directions, np.asarray(self.center), self.radius, y0, y1)


Primitive = Sphere | Cylinder


def _colour(value: object) -> tuple[float, float, float]:
    rgb = _vec3("color", value)
    if not all(0.0 <= c <= 1.0 for c in rgb):
        raise ValueError(f"color must be RGB in [0, 1]; got {rgb}")
    return rgb


def hit_sphere(
    origin: np.ndarray, directions: np.ndarray, center: np.ndarray, radius: float
) -> tuple[np.ndarray, np.ndarray]:
    """Nearest positive ``t`` of ``origin + t d`` (``origin`` (3,), ``directions`` (P, 3)) on a sphere,
    ``inf`` on a miss, and the unit normals there (meaningless on a miss)."""
    oc = origin - center
    a = np.einsum("pi,pi->p", directions, directions)
    b = 2.0 * (directions @ oc)
    c = float(oc @ oc) - radius * radius
    disc = b * b - 4.0 * a * c
    with np.errstate(invalid="ignore"):
        t = (-b - np.sqrt(disc)) / (2.0 * a)
    t = np.where((disc >= 0) & (t > 0), t, np.inf)
    normals = (origin + np.where(np.isfinite(t), t, 0.0)[:, None] * directions - center) / radius
    return t, normals


def hit_cylinder(
    origin: np.ndarray, directions: np.ndarray, center: np.ndarray, radius: float, y0: float, y1: float
) -> tuple[np.ndarray, np.ndarray]:
    """Nearest positive ``t`` on an upright cylinder (axis through ``center`` along ``+Y``,
    ``y0 <= Y <= y1``): side and both caps. ``origin`` (3,), ``directions`` (P, 3); returns ``t`` (P,)
    (``inf`` = miss) and unit normals (P, 3) (zero on a miss)."""
    ox, oy, oz = origin - np.array([center[0], 0.0, center[2]])
    dx, dy, dz = directions[:, 0], directions[:, 1], directions[:, 2]
    a = dx * dx + dz * dz
    b = 2.0 * (dx * ox + dz * oz)
    c = ox * ox + oz * oz - radius * radius
    disc = b * b - 4.0 * a * c
    with np.errstate(invalid="ignore", divide="ignore"):
        t_side = (-b - np.sqrt(disc)) / (2.0 * a)
        y_side = oy + t_side * dy
        t_side = np.where(
            (disc >= 0) & (a > 0) & (t_side > 0) & (y_side >= y0) & (y_side <= y1), t_side, np.inf
        )
        t_best = t_side
        normals = np.zeros_like(directions)
        px, pz = ox + t_side * dx, oz + t_side * dz
        side = np.isfinite(t_side)
        normals[side] = np.stack([px[side], np.zeros(side.sum()), pz[side]], axis=1) / radius
        for y_cap, ny in ((y1, 1.0), (y0, -1.0)):
            if ny * (oy - y_cap) <= 0:  # the eye is not on the cap's outer side: the cap faces away
                continue
            t_cap = (y_cap - oy) / dy
            qx, qz = ox + t_cap * dx, oz + t_cap * dz
            hit = (t_cap > 0) & (qx * qx + qz * qz <= radius * radius) & (t_cap < t_best)
            t_best = np.where(hit, t_cap, t_best)
            normals[hit] = (0.0, ny, 0.0)
    return t_best, normals


def composite(
    base: Render,
    primitives: Sequence[Primitive],
    *,
    light_direction: tuple[float, float, float] = LIGHT_DIRECTION,
    ambient: float = AMBIENT,
) -> Render:
    """``base`` with every primitive drawn where it is nearer (RGB, depth, instance id and normal replaced).

    The primitives are tested in order along the camera's own pixel rays, so the result is what one ray caster
    holding boxes and primitives together would return. Perspective cameras only. ``base`` is not modified.
    """
    if not isinstance(base, Render):
        raise TypeError(f"base must be a Render; got {type(base).__name__}")
    primitives = tuple(primitives)
    for k, p in enumerate(primitives):
        if not isinstance(p, Sphere | Cylinder):
            raise TypeError(f"primitives[{k}] must be a Sphere or Cylinder; got {type(p).__name__}")
    if not primitives:
        return base
    cam = base.camera
    if cam.projection != "perspective":
        raise ValueError(f"composite needs a perspective camera; got {cam.projection!r}")
    light = _unit("light_direction", light_direction)
    ambient = check_float("ambient", ambient, minimum=0.0, maximum=1.0)
    h, w = cam.height, cam.width
    depth = base.depth.reshape(-1).copy()
    ids = base.instance.reshape(-1).copy()
    rgb = base.rgb.reshape(-1, 3).copy()
    normals = base.normals.reshape(-1, 3).copy()
    _, directions = cam.rays(np.float64, unit=False)
    directions = directions.reshape(-1, 3)
    origin = cam.position
    for p in primitives:
        t, n = p.hit(origin, directions)
        near = t < depth
        if not near.any():
            continue
        depth[near] = t[near]
        ids[near] = p.instance_id
        normals[near] = n[near]
        shade = ambient + (1.0 - ambient) * np.maximum(n[near] @ light, 0.0)
        rgb[near] = np.clip(np.asarray(p.color) * shade[:, None], 0.0, 1.0)
    return replace(
        base,
        rgb=rgb.reshape(h, w, 3),
        depth=depth.reshape(h, w),
        instance=ids.reshape(h, w),
        normals=normals.reshape(h, w, 3),
    )


def render_with_primitives(
    scene: Scene | PackedScene,
    camera: Camera,
    primitives: Sequence[Primitive] = (),
    *,
    dtype: type = np.float64,
    light_direction: tuple[float, float, float] = LIGHT_DIRECTION,
    ambient: float = AMBIENT,
) -> Render:
    """:func:`~neurips26.world.render.render` of the boxes of ``scene``, then :func:`composite` of
    ``primitives``."""
    base = render(scene, camera, dtype=dtype, light_direction=light_direction, ambient=ambient)
    return composite(base, primitives, light_direction=light_direction, ambient=ambient)


__all__ = [
    "Cylinder",
    "Primitive",
    "Sphere",
    "composite",
    "hit_cylinder",
    "hit_sphere",
    "render_with_primitives",
]
