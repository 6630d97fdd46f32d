"""Cameras: pinhole and orthographic intrinsics, OpenCV camera-to-world poses, look-at and trajectories.

Conventions (used by every chapter that renders):

* World: right-handed, ``+Y`` up, ground at ``Y = 0``.
* Camera frame (OpenCV): ``x`` right, ``y`` down, ``z`` forward. A pose is the 4x4 camera-to-world
  matrix ``c2w = [[R, t], [0, 1]]`` whose rotation columns are the camera's right, down and forward
  axes in world coordinates and whose ``t`` is the camera centre.
* Pixels: ``u`` runs along columns (right), ``v`` along rows (down); the pixel in row ``i``, column
  ``j`` has its centre at ``(u, v) = (j + 0.5, i + 0.5)``, so the image spans ``[0, W] x [0, H]``.
* Perspective projection of a camera-frame point ``(x, y, z)``: ``u = fx x / z + cx``,
  ``v = fy y / z + cy``. Orthographic: ``u = fx x + cx``, ``v = fy y + cy`` (``fx`` in pixels per world
  unit).
* Depth is the **z-depth** along the optical axis, ``z`` in the camera frame (not the distance along
  the ray); :meth:`Camera.distance_from_depth` converts.
* Angles are in degrees. Yaw, azimuth and heading turn about ``+Y`` like
  :func:`neurips26.world.scene.yaw_rotation`: azimuth 0 is the ``+Z`` direction, 90 is ``+X``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neurips26.validation import check_array, check_choice, check_float, check_int, check_seed

PROJECTIONS: tuple[str, ...] = ("perspective", "orthographic")
WORLD_UP = (0.0, 1.0, 0.0)


def _point(name: str, value: object) -> np.ndarray:
    arr = np.asarray(value, dtype=float) if not isinstance(value, np.ndarray) else value.astype(float)
    return check_array(name, arr, shape=(3,))


def _check_pose(name: str, c2w: object) -> np.ndarray:
    """A 4x4 rigid transform with a proper rotation (to 1e-6), as a read-only float64 copy."""
    if not isinstance(c2w, np.ndarray):
        c2w = np.asarray(c2w, dtype=float)
    m = check_array(name, c2w.astype(float), shape=(4, 4))
    r = m[:3, :3]
    if not np.allclose(m[3], (0.0, 0.0, 0.0, 1.0)):
        raise ValueError(f"{name} must have last row (0, 0, 0, 1); got {m[3]}")
    if not np.allclose(r.T @ r, np.eye(3), atol=1e-6) or np.linalg.det(r) < 0:
        raise ValueError(f"{name} must hold a rotation (orthonormal, det +1) in its top-left 3x3 block")
    m = m.copy()
    m.flags.writeable = False
    return m


@dataclass(frozen=True, eq=False)
class Camera:
    """Intrinsics ``(fx, fy, cx, cy)``, image size and a camera-to-world pose (OpenCV axes).

    ``projection="perspective"`` is a pinhole; ``"orthographic"`` casts parallel rays along the
    forward axis from the image plane through the camera centre (``fx``, ``fy`` in pixels per world unit).
    """

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    c2w: np.ndarray
    projection: str = "perspective"

    def __post_init__(self) -> None:
        object.__setattr__(self, "width", check_int("width", self.width, minimum=1))
        object.__setattr__(self, "height", check_int("height", self.height, minimum=1))
        for name in ("fx", "fy"):
            object.__setattr__(
                self, name, check_float(name, getattr(self, name), minimum=0.0, strict_min=True)
            )
        for name in ("cx", "cy"):
            object.__setattr__(self, name, check_float(name, getattr(self, name)))
        object.__setattr__(self, "c2w", _check_pose("c2w", self.c2w))
        check_choice("projection", self.projection, PROJECTIONS)

    # --- pose ---------------------------------------------------------------------------------
    @property
    def rotation(self) -> np.ndarray:
        """Camera-to-world rotation (3, 3): columns are right, down, forward in world coordinates."""
        return self.c2w[:3, :3]

    @property
    def position(self) -> np.ndarray:
        """Camera centre in world coordinates (3,)."""
        return self.c2w[:3, 3]

    @property
    def forward(self) -> np.ndarray:
        """Optical axis (unit, world)."""
        return self.c2w[:3, 2]

    @property
    def w2c(self) -> np.ndarray:
        """World-to-camera 4x4: ``[[R^T, -R^T t], [0, 1]]``."""
        out = np.eye(4)
        out[:3, :3] = self.rotation.T
        out[:3, 3] = -self.rotation.T @ self.position
        return out

    @property
    def K(self) -> np.ndarray:  # noqa: N802 - the standard symbol
        """Intrinsic matrix ``[[fx, 0, cx], [0, fy, cy], [0, 0, 1]]`` (acts on ``(x/z, y/z, 1)``, or on
        ``(x, y, 1)`` for an orthographic camera)."""
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    def with_pose(self, c2w: np.ndarray) -> Camera:
        """The same intrinsics at another pose."""
        return Camera(self.width, self.height, self.fx, self.fy, self.cx, self.cy, c2w, self.projection)

    # --- pixels and rays ----------------------------------------------------------------------
    def pixel_centers(self, dtype: type = np.float64) -> tuple[np.ndarray, np.ndarray]:
        """``(u, v)``, each (H, W): ``u[i, j] = j + 0.5``, ``v[i, j] = i + 0.5``."""
        half = np.dtype(dtype).type(0.5)
        u = np.arange(self.width, dtype=dtype) + half
        v = np.arange(self.height, dtype=dtype) + half
        return np.broadcast_to(u, (self.height, self.width)), np.broadcast_to(
            v[:, None], (self.height, self.width)
        )

    def _camera_plane(self, u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``((u - cx) / fx, (v - cy) / fy)``: camera-frame x, y at z = 1 (or on z = 0 if orthographic)."""
        return (u - self.cx) / self.fx, (v - self.cy) / self.fy

    def rays(self, dtype: type = np.float64, *, unit: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Per-pixel ray origins and directions in world coordinates, each (H, W, 3).

        With ``unit=False`` the directions are scaled so their camera-frame ``z`` is 1: then
        ``origin + depth * direction`` is the point at z-depth ``depth`` (what the renderer uses).
        """
        dtype = np.dtype(dtype).type
        u, v = self.pixel_centers(np.float64)
        x, y = self._camera_plane(u, v)
        r, t = self.rotation, self.position
        if self.projection == "perspective":
            d_cam = np.stack([x, y, np.ones_like(x)], axis=-1)
            directions = d_cam @ r.T
            origins = np.broadcast_to(t, directions.shape)
        else:
            plane = np.stack([x, y, np.zeros_like(x)], axis=-1)
            origins = t + plane @ r.T
            directions = np.broadcast_to(r[:, 2], origins.shape)
        if unit:
            directions = directions / np.linalg.norm(directions, axis=-1, keepdims=True)
        return np.ascontiguousarray(origins, dtype=dtype), np.ascontiguousarray(directions, dtype=dtype)

    def plucker(self, dtype: type = np.float64) -> np.ndarray:
        """Plücker ray coordinates ``(d, o x d)`` per pixel with unit ``d``, shape (H, W, 6)."""
        o, d = self.rays(np.float64, unit=True)
        return np.concatenate([d, np.cross(o, d)], axis=-1).astype(dtype)

    # --- projection ---------------------------------------------------------------------------
    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World points (..., 3) to pixel coordinates (..., 2) and z-depth (...).

        Perspective points with ``depth <= 0`` (behind the camera) get ``uv = NaN``.
        """
        pts = check_array("points", np.asarray(points, dtype=float))
        if pts.shape[-1:] != (3,):
            raise ValueError(f"points must have shape (..., 3); got {pts.shape}")
        cam = (pts - self.position) @ self.rotation  # R^T (p - t), row-vector form
        x, y, z = cam[..., 0], cam[..., 1], cam[..., 2]
        if self.projection == "perspective":
            with np.errstate(divide="ignore", invalid="ignore"):
                safe = np.where(z > 0, z, np.nan)
                uv = np.stack([self.fx * x / safe + self.cx, self.fy * y / safe + self.cy], axis=-1)
        else:
            uv = np.stack([self.fx * x + self.cx, self.fy * y + self.cy], axis=-1)
        return uv, z

    def back_project(self, uv: np.ndarray, depth: np.ndarray) -> np.ndarray:
        """Pixel coordinates (..., 2) and z-depth (...) to world points (..., 3); inverts :meth:`project`."""
        uv = check_array("uv", np.asarray(uv, dtype=float))
        depth = np.asarray(depth, dtype=float)
        if uv.shape[-1:] != (2,) or uv.shape[:-1] != depth.shape:
            raise ValueError(f"uv must have shape depth.shape + (2,); got uv {uv.shape}, depth {depth.shape}")
        x, y = self._camera_plane(uv[..., 0], uv[..., 1])
        if self.projection == "perspective":
            cam = np.stack([x * depth, y * depth, depth], axis=-1)
        else:
            cam = np.stack([x, y, depth], axis=-1)
        return cam @ self.rotation.T + self.position

    def point_map(self, depth: np.ndarray) -> np.ndarray:
        """World point of every pixel from a z-depth map (H, W); NaN where the depth is not finite."""
        depth = np.asarray(depth, dtype=float)
        if depth.shape != (self.height, self.width):
            raise ValueError(f"depth must have shape ({self.height}, {self.width}); got {depth.shape}")
        u, v = self.pixel_centers()
        pts = self.back_project(np.stack([u, v], axis=-1), np.where(np.isfinite(depth), depth, 0.0))
        pts[~np.isfinite(depth)] = np.nan
        return pts

    def distance_from_depth(self, depth: np.ndarray) -> np.ndarray:
        """Distance along each pixel's ray from its origin, from a z-depth map (H, W).

        Perspective: ``depth * ||((u - cx) / fx, (v - cy) / fy, 1)||``; orthographic: the depth itself.
        """
        depth = np.asarray(depth)
        if depth.shape != (self.height, self.width):
            raise ValueError(f"depth must have shape ({self.height}, {self.width}); got {depth.shape}")
        if self.projection == "orthographic":
            return depth.copy()
        x, y = self._camera_plane(*self.pixel_centers())
        return (depth * np.sqrt(x * x + y * y + 1.0)).astype(depth.dtype)

    # --- serialisation ------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "width": self.width,
            "height": self.height,
            "fx": self.fx,
            "fy": self.fy,
            "cx": self.cx,
            "cy": self.cy,
            "c2w": self.c2w.tolist(),
            "projection": self.projection,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Camera:
        return cls(**{**data, "c2w": np.array(data["c2w"], dtype=float)})


# --- constructors ------------------------------------------------------------------------------
def pinhole(width: int, height: int, fov_deg: float = 60.0, c2w: np.ndarray | None = None) -> Camera:
    """A pinhole camera with horizontal field of view ``fov_deg``, square pixels, centred principal point.

    ``fx = fy = (W / 2) / tan(fov / 2)``, ``(cx, cy) = (W / 2, H / 2)``.
    """
    width = check_int("width", width, minimum=1)
    height = check_int("height", height, minimum=1)
    fov = check_float("fov_deg", fov_deg, minimum=0.0, strict_min=True)
    if fov >= 180.0:
        raise ValueError(f"fov_deg must be < 180; got {fov}")
    f = (width / 2.0) / math.tan(math.radians(fov) / 2.0)
    return Camera(width, height, f, f, width / 2.0, height / 2.0, np.eye(4) if c2w is None else c2w)


def orthographic(width: int, height: int, extent: float, c2w: np.ndarray | None = None) -> Camera:
    """An orthographic camera that sees ``extent`` world units across its width (square pixels)."""
    width = check_int("width", width, minimum=1)
    height = check_int("height", height, minimum=1)
    extent = check_float("extent", extent, minimum=0.0, strict_min=True)
    f = width / extent
    c2w = np.eye(4) if c2w is None else c2w
    return Camera(width, height, f, f, width / 2.0, height / 2.0, c2w, "orthographic")


def isometric(
    target: Sequence[float],
    extent: float,
    width: int = 64,
    height: int = 64,
    *,
    azimuth_deg: float = 45.0,
    elevation_deg: float = math.degrees(math.atan(1.0 / math.sqrt(2.0))),
    distance: float = 20.0,
) -> Camera:
    """An orthographic camera aimed at ``target`` from ``(azimuth, elevation)``; isometric by default."""
    return orthographic(width, height, extent, spherical_pose(target, distance, azimuth_deg, elevation_deg))


def look_at(eye: Sequence[float], target: Sequence[float], up: Sequence[float] = WORLD_UP) -> np.ndarray:
    """The camera-to-world pose at ``eye`` whose optical axis points at ``target`` (OpenCV axes).

    ``forward = normalize(target - eye)``, ``right = normalize(forward x up)``, ``down = forward x right``,
    so the image's up direction is as close to ``up`` as the view allows.
    """
    eye, target, up = _point("eye", eye), _point("target", target), _point("up", up)
    f = target - eye
    n = np.linalg.norm(f)
    if n == 0.0:
        raise ValueError("target must differ from eye")
    f = f / n
    r = np.cross(f, up)
    nr = np.linalg.norm(r)
    if nr < 1e-9 * max(np.linalg.norm(up), 1e-300):
        raise ValueError("up must not be parallel to the viewing direction target - eye")
    r = r / nr
    d = np.cross(f, r)
    out = np.eye(4)
    out[:3, 0], out[:3, 1], out[:3, 2], out[:3, 3] = r, d, f, eye
    return out


def _direction(azimuth_deg: float | np.ndarray, elevation_deg: float | np.ndarray) -> np.ndarray:
    """Unit vector at azimuth (from +Z towards +X) and elevation (above the horizon), shape (..., 3)."""
    az, el = np.radians(azimuth_deg), np.radians(elevation_deg)
    return np.stack([np.cos(el) * np.sin(az), np.sin(el), np.cos(el) * np.cos(az)], axis=-1)


def spherical_pose(
    target: Sequence[float], distance: float, azimuth_deg: float, elevation_deg: float
) -> np.ndarray:
    """The look-at pose from ``target + distance * dir(azimuth, elevation)`` towards ``target``."""
    target = _point("target", target)
    distance = check_float("distance", distance, minimum=0.0, strict_min=True)
    az = check_float("azimuth_deg", azimuth_deg)
    el = check_float("elevation_deg", elevation_deg, minimum=-89.9, maximum=89.9)
    return look_at(target + distance * _direction(az, el), target)


def heading_pose(position: Sequence[float], yaw_deg: float, pitch_deg: float = 0.0) -> np.ndarray:
    """An upright camera at ``position``, heading ``yaw_deg`` (0 = +Z, 90 = +X), tilted up by ``pitch_deg``.

    The pose of an agent ``(x, z, heading)`` walking on the ground.
    """
    position = _point("position", position)
    yaw = check_float("yaw_deg", yaw_deg)
    pitch = check_float("pitch_deg", pitch_deg, minimum=-89.9, maximum=89.9)
    return look_at(position, position + _direction(yaw, pitch))


# --- trajectories ------------------------------------------------------------------------------
def orbit(
    target: Sequence[float],
    distance: float,
    elevation_deg: float,
    n_frames: int,
    *,
    start_deg: float = 0.0,
    stop_deg: float = 360.0,
    endpoint: bool = False,
) -> np.ndarray:
    """Poses (n_frames, 4, 4) circling ``target`` at fixed distance and elevation, azimuth start -> stop."""
    n_frames = check_int("n_frames", n_frames, minimum=1)
    start = check_float("start_deg", start_deg)
    stop = check_float("stop_deg", stop_deg)
    return np.stack(
        [
            spherical_pose(target, distance, az, elevation_deg)
            for az in np.linspace(start, stop, n_frames, endpoint=endpoint)
        ]
    )


def walk_through(
    waypoints: np.ndarray, n_frames: int, *, look_ahead: float = 1.0, pitch_deg: float = 0.0
) -> np.ndarray:
    """Poses (n_frames, 4, 4) moving at constant speed along the polyline ``waypoints`` (K, 3).

    The camera looks at the path point ``look_ahead`` further along (extended straight past the
    end), levelled to the horizon and tilted by ``pitch_deg``, so turns at corners are spread over
    ``look_ahead`` of travel instead of happening in one frame.
    """
    pts = check_array("waypoints", np.asarray(waypoints, dtype=float), ndim=2)
    if pts.shape[1] != 3 or pts.shape[0] < 2:
        raise ValueError(f"waypoints must have shape (K >= 2, 3); got {pts.shape}")
    n_frames = check_int("n_frames", n_frames, minimum=1)
    look_ahead = check_float("look_ahead", look_ahead, minimum=0.0, strict_min=True)
    seg = np.diff(pts, axis=0)
    seg_len = np.linalg.norm(seg, axis=1)
    if np.any(seg_len == 0.0):
        raise ValueError("waypoints must not repeat a point consecutively")
    cum = np.concatenate([[0.0], np.cumsum(seg_len)])
    total = cum[-1]

    def at(s: np.ndarray) -> np.ndarray:
        k = np.clip(np.searchsorted(cum, s, side="right") - 1, 0, len(seg) - 1)
        return pts[k] + ((s - cum[k]) / seg_len[k])[:, None] * seg[k]

    s = np.linspace(0.0, total, n_frames)
    here = at(s)
    ahead_s = s + look_ahead
    ahead = at(np.minimum(ahead_s, total)) + np.maximum(ahead_s - total, 0.0)[:, None] * (
        seg[-1] / seg_len[-1]
    )
    poses = []
    for p, q in zip(here, ahead, strict=True):
        step = q - p
        yaw = math.degrees(math.atan2(step[0], step[2]))
        if math.hypot(step[0], step[2]) < 1e-12:
            raise ValueError("waypoints must move horizontally (a vertical segment has no heading)")
        poses.append(heading_pose(p, yaw, pitch_deg))
    return np.stack(poses)


def _smooth_noise(rng: np.random.Generator, t: np.ndarray, n_terms: int = 3) -> np.ndarray:
    """A smooth random signal on ``t`` in [0, 1] with values in [-1, 1]: a sum of slow random sinusoids."""
    freq = rng.uniform(0.25, 1.5, n_terms)
    amp = rng.uniform(0.5, 1.0, n_terms)
    phase = rng.uniform(0.0, 2.0 * np.pi, n_terms)
    return (amp * np.sin(2.0 * np.pi * freq * t[:, None] + phase)).sum(axis=1) / amp.sum()


def random_smooth(
    n_frames: int,
    seed: int,
    *,
    target: Sequence[float] = (0.0, 0.0, 0.0),
    distance: tuple[float, float] = (4.0, 6.0),
    elevation_deg: tuple[float, float] = (15.0, 45.0),
    sweep_deg: float = 180.0,
    target_jitter: float = 0.3,
) -> np.ndarray:
    """Seeded smooth random poses (n_frames, 4, 4) around ``target``.

    Azimuth advances by ``sweep_deg`` over the clip (from a random start) plus a slow wobble;
    distance and elevation wander smoothly inside their ranges and the look-at point within
    ``target_jitter`` of ``target``. Every signal is a sum of a few low-frequency sinusoids, so the
    path is infinitely differentiable and the same seed gives the same poses.
    """
    n_frames = check_int("n_frames", n_frames, minimum=1)
    seed = check_seed("seed", seed)
    target = _point("target", target)
    d_lo, d_hi = _range("distance", distance, minimum=0.0)
    e_lo, e_hi = _range("elevation_deg", elevation_deg, minimum=-89.9, maximum=89.9)
    sweep = check_float("sweep_deg", sweep_deg)
    jitter = check_float("target_jitter", target_jitter, minimum=0.0)
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, n_frames)
    az = rng.uniform(0.0, 360.0) + sweep * t + 20.0 * _smooth_noise(rng, t)
    dist = (d_lo + d_hi) / 2.0 + (d_hi - d_lo) / 2.0 * _smooth_noise(rng, t)
    elev = (e_lo + e_hi) / 2.0 + (e_hi - e_lo) / 2.0 * _smooth_noise(rng, t)
    look = target + jitter * np.stack([_smooth_noise(rng, t) for _ in range(3)], axis=1)
    eyes = look + dist[:, None] * _direction(az, elev)
    return np.stack([look_at(e, q) for e, q in zip(eyes, look, strict=True)])


def _range(name: str, value: object, *, minimum: float, maximum: float | None = None) -> tuple[float, float]:
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise TypeError(f"{name} must be a (low, high) pair; got {value!r}")
    lo = check_float(f"{name}[0]", value[0], minimum=minimum, strict_min=name == "distance", maximum=maximum)
    hi = check_float(f"{name}[1]", value[1], minimum=minimum, maximum=maximum)
    if hi < lo:
        raise ValueError(f"{name} must have low <= high; got {value}")
    return lo, hi
