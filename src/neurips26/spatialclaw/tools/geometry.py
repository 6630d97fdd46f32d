"""``tools.Geometry``: exact geometric helpers (paper §3.1 names), NumPy only.

Conventions are the reconstruction's: camera-to-world 4x4 matrices with OpenCV axes (x right, y down,
z forward), pixel ``(u, v)`` with the centre of pixel ``(row i, column j)`` at ``(j + 0.5, i + 0.5)``,
0–1000 normalised image coordinates as returned by ``vlm.locate``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from neurips26.validation import check_float, check_int, check_seed

#: Largest angle (degrees) between a ground plane's normal and the up axis
#: (:meth:`Geometry.fit_ground_plane_ransac`): a gravity-aligned reconstruction puts the floor within a few
#: degrees of horizontal (camera rotation noise σ = 1°), walls at 90.
GROUND_MAX_TILT_DEG = 20.0
#: Triples sampled per scored hypothesis, at most, before the ground fit gives up on finding more.
_GROUND_DRAW_FACTOR = 50


def _array(value: object, name: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"{name} must be numeric (a list or array of numbers); got {type(value).__name__}"
        ) from err
    return arr


def _vector(value: object, name: str, dim: int | None = 3) -> np.ndarray:
    arr = _array(value, name)
    if arr.ndim != 1 or (dim is not None and arr.shape[0] != dim):
        want = f"({dim},)" if dim is not None else "1-D"
        raise ValueError(
            f"{name} must be a vector of shape {want}; got shape {arr.shape} (index a batch first)"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; got {arr.tolist()}")
    return arr


def _unit(value: object, name: str) -> np.ndarray:
    v = _vector(value, name)
    norm = float(np.linalg.norm(v))
    if norm < 1e-12:
        raise ValueError(f"{name} must be non-zero; got {v.tolist()}")
    return v / norm


def _matrix4(value: object, name: str) -> np.ndarray:
    m = _array(value, name)
    if m.shape != (4, 4):
        raise ValueError(f"{name} must be a 4x4 matrix; got shape {m.shape}")
    return m


class Geometry:
    """Exact geometry on NumPy arrays: distances, angles, projection, rotations, transforms, planes."""

    @staticmethod
    def euclidean_distance(p1: ArrayLike, p2: ArrayLike) -> float:
        """Euclidean distance between two points of the same shape (e.g. (3,) centroids) → float."""
        a, b = _array(p1, "p1").ravel(), _array(p2, "p2").ravel()
        if a.shape != b.shape:
            raise ValueError(f"p1 and p2 must have the same shape; got {a.shape} and {b.shape}")
        return float(np.linalg.norm(a - b))

    @staticmethod
    def angle_between_vectors(v1: ArrayLike, v2: ArrayLike) -> float:
        """Angle between two non-zero 3-D vectors, in degrees in [0, 180]."""
        a, b = _unit(v1, "v1"), _unit(v2, "v2")
        return float(np.degrees(np.arccos(np.clip(a @ b, -1.0, 1.0))))

    @staticmethod
    def project_point_to_camera(
        point_3d: ArrayLike, extrinsic_c2w: ArrayLike, fx: float, fy: float, cx: float, cy: float
    ) -> tuple[float, float] | None:
        """Pixel (u, v) of world point ``point_3d`` (3,) in the camera ``extrinsic_c2w`` (4x4
        camera-to-world) with intrinsics fx, fy, cx, cy; None if the point is not in front of it."""
        p = _vector(point_3d, "point_3d")
        c2w = _matrix4(extrinsic_c2w, "extrinsic_c2w")
        f = [check_float(n, v) for n, v in (("fx", fx), ("fy", fy), ("cx", cx), ("cy", cy))]
        x, y, z = c2w[:3, :3].T @ (p - c2w[:3, 3])
        if z <= 1e-12:
            return None
        return (float(f[0] * x / z + f[2]), float(f[1] * y / z + f[3]))

    @staticmethod
    def rotation_matrix_from_vectors(v_from: ArrayLike, v_to: ArrayLike) -> np.ndarray:
        """(3, 3) rotation taking the direction of ``v_from`` onto that of ``v_to`` (the smallest such
        turn; any half-turn when they are opposite). Orthonormal, determinant 1."""
        a, b = _unit(v_from, "v_from"), _unit(v_to, "v_to")
        v = np.cross(a, b)
        c = float(a @ b)
        s2 = float(v @ v)
        if s2 < 1e-20:
            if c > 0:
                return np.eye(3)
            # Opposite: a half-turn about any axis perpendicular to a.
            helper = np.eye(3)[int(np.argmin(np.abs(a)))]
            u = np.cross(a, helper)
            u /= np.linalg.norm(u)
            return 2.0 * np.outer(u, u) - np.eye(3)
        k = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
        return np.eye(3) + k + (k @ k) * ((1.0 - c) / s2)

    @staticmethod
    def transform_points(points: ArrayLike, matrix: ArrayLike) -> np.ndarray:
        """Apply a 4x4 homogeneous ``matrix`` to ``points`` (..., 3) → array of the same shape."""
        p = _array(points, "points")
        if p.ndim == 0 or p.shape[-1] != 3:
            raise ValueError(f"points must have shape (..., 3); got {p.shape}")
        m = _matrix4(matrix, "matrix")
        out = p @ m[:3, :3].T + m[:3, 3]
        w = p @ m[3, :3] + m[3, 3]
        if np.any(w != 1.0):
            out = out / w[..., None]
        return out

    @staticmethod
    def fit_ground_plane_ransac(
        points: ArrayLike,
        confidence: ArrayLike | None = None,
        min_confidence: float = 0.3,
        n_iterations: int = 200,
        inlier_threshold: float = 0.05,
        seed: int = 0,
        max_tilt_deg: float = GROUND_MAX_TILT_DEG,
        up: ArrayLike = (0.0, 1.0, 0.0),
    ) -> tuple[np.ndarray, float]:
        """Ground plane of ``points`` ((N, 3) or (H, W, 3); NaNs and points with ``confidence`` below
        ``min_confidence`` ignored): the plane with the most inliers among those whose normal is within
        ``max_tilt_deg`` (default 20) of ``up`` (+Y), so walls never qualify → (unit normal, d) with
        normal · p + d = 0 on the plane, normal pointing along ``up``. Seeded RANSAC refined on its inliers.

        Walls often cover more pixels than the floor, so the dominant plane is not the ground; only
        near-horizontal hypotheses are scored (``n_iterations`` of them, out of at most
        ``50 * n_iterations`` sampled triples). A large table top can still win when the visible floor
        holds fewer points: pass floor points only (a mask) then. ``max_tilt_deg=90`` admits every
        plane (the dominant plane). ``ValueError`` if no near-horizontal plane is found.
        """
        p = _array(points, "points")
        if p.ndim < 2 or p.shape[-1] != 3:
            raise ValueError(f"points must have shape (N, 3) or (H, W, 3); got {p.shape}")
        keep = np.all(np.isfinite(p), axis=-1)
        if confidence is not None:
            conf = _array(confidence, "confidence")
            if conf.shape != p.shape[:-1]:
                raise ValueError(f"confidence must have shape {p.shape[:-1]}; got {conf.shape}")
            keep &= conf >= check_float("min_confidence", min_confidence)
        p = p[keep].reshape(-1, 3)
        if len(p) < 3:
            raise ValueError(f"points must hold at least 3 finite, confident points; got {len(p)}")
        n_iterations = check_int("n_iterations", n_iterations, minimum=1)
        threshold = check_float("inlier_threshold", inlier_threshold, minimum=0.0, strict_min=True)
        tilt = check_float("max_tilt_deg", max_tilt_deg, minimum=0.0, maximum=90.0, strict_min=True)
        up_axis = _unit(up, "up")
        min_cos = float(np.cos(np.radians(tilt))) - 1e-12
        rng = np.random.default_rng(check_seed("seed", seed))
        best = np.zeros(len(p), dtype=bool)
        scored = 0
        for _ in range(_GROUND_DRAW_FACTOR):
            if scored >= n_iterations:
                break
            a, b, c = (p[idx] for idx in rng.integers(0, len(p), size=(3, n_iterations)))
            normals = np.cross(b - a, c - a)
            norms = np.linalg.norm(normals, axis=1)
            ok = norms > 1e-12
            cos = np.abs(normals[ok] @ up_axis) / norms[ok]
            for k in np.flatnonzero(ok)[cos >= min_cos][: n_iterations - scored]:
                inliers = np.abs((p - a[k]) @ (normals[k] / norms[k])) < threshold
                if inliers.sum() > best.sum():
                    best = inliers
                scored += 1
        if best.sum() < 3:
            raise ValueError(
                f"no plane within max_tilt_deg={tilt:g} of up={up_axis.round(3).tolist()} found in "
                f"{len(p)} points (they may be collinear, or hold no ground); pass floor points or raise "
                "max_tilt_deg"
            )
        fit = p[best]
        centre = fit.mean(axis=0)
        # Normal of the least-squares plane; the thin SVD (a full one builds an N x N matrix: 12 GiB for
        # the 40 000 floor points of one 16-frame reconstruction).
        normal = np.linalg.svd(fit - centre, full_matrices=False)[2][-1]
        if normal @ up_axis < 0 or (normal @ up_axis == 0 and normal @ np.ones(3) < 0):
            normal = -normal
        return normal, float(-normal @ centre)

    @staticmethod
    def normalized_to_pixel(
        coords: ArrayLike, width: int, height: int
    ) -> tuple[float, ...] | list[tuple[float, ...]]:
        """0–1000 normalised (x, y) (or boxes (x0, y0, x1, y1), or a list of them) → pixel coordinates
        in an image ``width`` × ``height``: 0 maps to 0 and 1000 to width (x) or height (y)."""
        if isinstance(coords, str):
            raise ValueError(
                f"coords must be 0-1000 numbers; got the string {coords!r} (check for 'Not visible')"
            )
        w = check_int("width", width, minimum=1)
        h = check_int("height", height, minimum=1)
        arr = _array(coords, "coords")
        if arr.ndim not in (1, 2) or arr.shape[-1] not in (2, 4):
            raise ValueError(
                f"coords must be (x, y), (x0, y0, x1, y1) or a list of them; got shape {arr.shape}"
            )
        scale = np.tile([w / 1000.0, h / 1000.0], arr.shape[-1] // 2)
        out = arr * scale
        if arr.ndim == 1:
            return tuple(float(v) for v in out)
        return [tuple(float(v) for v in row) for row in out]

    def __repr__(self) -> str:
        return (
            "tools.Geometry (euclidean_distance, angle_between_vectors, project_point_to_camera, "
            "rotation_matrix_from_vectors, transform_points, fit_ground_plane_ransac, normalized_to_pixel)"
        )


__all__ = ["Geometry"]
