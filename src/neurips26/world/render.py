"""Vectorised NumPy ray casting of box scenes: RGB, z-depth, instance mask and normals; occupancy maps.

Each pixel casts the ray ``o + t d`` with ``d`` scaled so that its camera-frame ``z`` is 1, so the hit
parameter ``t`` *is* the z-depth. A box ``{c + R p : |p_k| <= h_k}`` is tested in its own frame with
the slab method: with ``o' = R^T (o - c)`` and ``d' = R^T d``, the ray is inside slab ``k`` for
``t`` between ``(-h_k - o'_k) / d'_k`` and ``(h_k - o'_k) / d'_k``; writing ``a_k = -o'_k / d'_k`` and
``b_k = h_k / |d'_k|`` these are ``a_k - b_k`` and ``a_k + b_k``. The ray enters the box at
``t_in = max_k (a_k - b_k)`` and leaves at ``t_out = min_k (a_k + b_k)``; it hits when
``0 < t_in <= t_out`` and the visible surface is at ``t_in`` (camera inside a box: the box is not
drawn). The normal is ``-sign(d'_k) R e_k`` for the axis ``k`` attaining the maximum. The ground
plane ``Y = y_0`` is hit at ``t = (y_0 - o_y) / d_y`` when seen from above.

All boxes are tested at once for a chunk of rays ((P, N, 3) arrays, one matrix product for the
rotations), the nearest hit wins, and only the winners' normals and colours are gathered. Shading is
Lambertian with a fixed directional light plus ambient: ``rgb = albedo (k_a + (1 - k_a) max(0, n . l))``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.validation import check_array, check_float, check_int
from neurips26.world.camera import Camera
from neurips26.world.scene import BACKGROUND_ID, PackedScene, Scene

LIGHT_DIRECTION: tuple[float, float, float] = (0.45, 0.8, 0.35)  # towards the light; normalised on use
AMBIENT = 0.4
_CHUNK_ELEMENTS = 1 << 15  # rays x boxes per chunk: keeps the (P, N, 3) temporaries in cache


@dataclass(frozen=True, eq=False)
class Render:
    """One rendered frame.

    ``rgb``: (H, W, 3) in [0, 1]; ``depth``: (H, W) z-depth along the optical axis, ``inf`` where
    the ray hits nothing; ``instance``: (H, W) int32 instance id of the visible surface,
    ``-1`` (:data:`~neurips26.world.scene.BACKGROUND_ID`) for background, the ground's id where the
    ground shows; ``normals``: (H, W, 3) unit world normals, zero on background; ``camera``: the camera.
    """

    rgb: np.ndarray
    depth: np.ndarray
    instance: np.ndarray
    normals: np.ndarray
    camera: Camera

    def visible_ids(self) -> np.ndarray:
        """Sorted instance ids with at least one pixel (background excluded)."""
        ids = np.unique(self.instance)
        return ids[ids != BACKGROUND_ID]

    def points(self) -> np.ndarray:
        """World point of every pixel (H, W, 3), NaN on background."""
        return self.camera.point_map(self.depth)

    def distance(self) -> np.ndarray:
        """Distance along each pixel's ray (H, W) instead of z-depth."""
        return self.camera.distance_from_depth(self.depth)


def _as_packed(scene: Scene | PackedScene, dtype: np.dtype) -> PackedScene:
    if isinstance(scene, Scene):
        return scene.pack(dtype)
    if isinstance(scene, PackedScene):
        if scene.centers.dtype != dtype:
            raise ValueError(
                f"scene was packed as {scene.centers.dtype}; render with dtype={scene.centers.dtype}"
            )
        return scene
    raise TypeError(f"scene must be a Scene or PackedScene; got {type(scene).__name__}")


def cast_rays(
    packed: PackedScene,
    origins: np.ndarray,
    directions: np.ndarray,
    boxes: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nearest hit of each ray ``origins + t directions`` (t > 0) with the scene.

    ``origins``: (P, 3), or (1, 3) when all rays share one origin; ``directions``: (P, 3), any
    non-zero length (``t`` is in units of it). ``boxes`` restricts the test to these box indices (the
    others are known to be out of view). Returns ``t`` (P,) (``inf`` = miss), ``hit`` (P,) the index
    of the box hit (``N`` = the ground, ``-1`` = nothing) and unit outward normals (P, 3).
    """
    dtype = directions.dtype
    n_rays, n_all = directions.shape[0], packed.n_boxes
    t_best = np.full(n_rays, np.inf, dtype=dtype)
    hit = np.full(n_rays, -1, dtype=np.int64)
    normals = np.zeros((n_rays, 3), dtype=dtype)
    shared_origin = origins.shape[0] == 1
    boxes = np.arange(n_all) if boxes is None else np.asarray(boxes, dtype=np.int64)
    n_boxes = boxes.size

    if n_boxes:
        rot = packed.rotations[boxes]  # (N, 3, 3) box -> world
        half = packed.half_extents[boxes]  # (N, 3)
        axes_t = [np.ascontiguousarray(rot[:, :, k].T) for k in range(3)]  # (3, N): d @ axes_t[k] = d'_k
        c_local = np.einsum("bi,bik->bk", packed.centers[boxes], rot)  # R^T c, (N, 3)
        if shared_origin:  # slab planes relative to the common origin: -h - o', h - o' (per box)
            o_local = origins @ rot.transpose(1, 0, 2).reshape(3, -1)
            o_local = o_local.reshape(n_boxes, 3) - c_local
            lo_all, hi_all = -half - o_local, half - o_local
        step = max(1, _CHUNK_ELEMENTS // n_boxes)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for s in range(0, n_rays, step):
                e = min(s + step, n_rays)
                d = directions[s:e]
                t_in, t_far = [], None
                for k in range(3):
                    inv = np.reciprocal(d @ axes_t[k])  # 1 / d'_k, +-inf for rays parallel to the slab
                    if shared_origin:
                        lo, hi = lo_all[:, k], hi_all[:, k]
                    else:
                        o_k = origins[s:e] @ axes_t[k] - c_local[:, k]
                        lo, hi = -half[:, k] - o_k, half[:, k] - o_k
                    t1 = lo * inv
                    inv *= hi  # t2
                    t_in.append(np.minimum(t1, inv))
                    t_out_k = np.maximum(t1, inv, out=t1)
                    t_far = t_out_k if t_far is None else np.minimum(t_far, t_out_k, out=t_far)
                t_near = np.maximum(np.maximum(t_in[0], t_in[1]), t_in[2])
                ok = t_near <= t_far  # False for NaN (origin exactly on a slab plane, ray parallel to it)
                ok &= t_near > 0
                t_near = np.where(ok, t_near, dtype.type(np.inf))
                k_best = np.argmin(t_near, axis=1)
                rows = np.arange(e - s)
                t_k = t_near[rows, k_best]
                found = np.isfinite(t_k)
                t_best[s:e] = t_k
                hit[s:e] = np.where(found, boxes[k_best], -1)
                if found.any():
                    idx, box = rows[found], k_best[found]
                    entered = np.stack([t[idx, box] for t in t_in], axis=1)
                    axis = np.argmax(entered, axis=1)  # the slab entered last holds the face hit
                    n_world = rot[box, :, axis]  # that box axis in world coordinates, (F, 3)
                    # the face looks back at the ray: n = -sign(d'_k) R e_k, d'_k = (R e_k) . d
                    sign = -np.sign(np.einsum("pi,pi->p", d[idx], n_world))
                    normals[s + idx] = n_world * sign[:, None]

    if packed.has_ground:
        o_y = origins[:, 1]
        d_y = directions[:, 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            t_g = (packed.ground_height - o_y) / d_y
        ground = (d_y < 0) & (o_y > packed.ground_height) & (t_g < t_best)
        t_best[ground] = t_g[ground]
        hit[ground] = n_all
        normals[ground] = (0.0, 1.0, 0.0)
    return t_best, hit, normals


def boxes_in_view(packed: PackedScene, camera: Camera) -> np.ndarray:
    """Indices of the boxes whose bounding sphere may meet the camera's view volume (conservative cull).

    A box is dropped when its bounding sphere (radius ``|h|``) lies entirely behind the camera or
    outside one of the four planes through the image borders.
    """
    if packed.n_boxes == 0:
        return np.zeros(0, dtype=np.int64)
    centers = (packed.centers.astype(np.float64) - camera.position) @ camera.rotation  # camera frame
    radius = np.linalg.norm(packed.half_extents.astype(np.float64), axis=1) * (1 + 1e-6) + 1e-9
    x, y, z = centers.T
    # image borders in camera-plane coordinates ((u - cx) / fx at u = 0 and u = W, same for v)
    xl, xr = -camera.cx / camera.fx, (camera.width - camera.cx) / camera.fx
    yt, yb = -camera.cy / camera.fy, (camera.height - camera.cy) / camera.fy
    keep = z + radius > 0
    if camera.projection == "perspective":  # xl <= x / z <= xr: planes x - xl z >= 0 and xr z - x >= 0
        for nx, ny, nz in ((1.0, 0.0, -xl), (-1.0, 0.0, xr), (0.0, 1.0, -yt), (0.0, -1.0, yb)):
            keep &= (nx * x + ny * y + nz * z) / np.sqrt(nx * nx + ny * ny + nz * nz) > -radius
    else:
        keep &= (x + radius > xl) & (x - radius < xr) & (y + radius > yt) & (y - radius < yb)
    return np.flatnonzero(keep)


def _unit(name: str, value: object) -> np.ndarray:
    v = check_array(name, np.asarray(value, dtype=float), shape=(3,))
    n = np.linalg.norm(v)
    if n == 0.0:
        raise ValueError(f"{name} must be a non-zero vector")
    return v / n


def render(
    scene: Scene | PackedScene,
    camera: Camera,
    *,
    dtype: type = np.float32,
    light_direction: tuple[float, float, float] = LIGHT_DIRECTION,
    ambient: float = AMBIENT,
) -> Render:
    """Ray-cast ``scene`` from ``camera``: RGB, z-depth, instance mask and normals (see :class:`Render`).

    ``dtype`` float32 (fast, depth exact to ~1e-6 relative) or float64 (for exactness checks). Pass a
    :class:`PackedScene` (``scene.pack(dtype)``) to skip re-packing when rendering many frames.
    ``light_direction`` points towards the light; ``ambient`` is the shade of faces turned away from it.
    """
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64; got {dtype}")
    if not isinstance(camera, Camera):
        raise TypeError(f"camera must be a Camera; got {type(camera).__name__}")
    packed = _as_packed(scene, dtype)
    light = _unit("light_direction", light_direction).astype(dtype)
    ambient = check_float("ambient", ambient, minimum=0.0, maximum=1.0)
    h, w = camera.height, camera.width

    origins, directions = camera.rays(dtype, unit=False)
    directions = directions.reshape(-1, 3)
    origins = origins[:1, :1].reshape(1, 3) if camera.projection == "perspective" else origins.reshape(-1, 3)
    t, hit, normals = cast_rays(packed, origins, directions, boxes_in_view(packed, camera))

    n_boxes = packed.n_boxes
    albedo = np.empty((t.size, 3), dtype=dtype)
    albedo[:] = packed.background
    ids = np.full(t.size, BACKGROUND_ID, dtype=np.int32)
    on_box = (hit >= 0) & (hit < n_boxes)
    albedo[on_box] = packed.colors[hit[on_box]]
    ids[on_box] = packed.ids[hit[on_box]]
    on_ground = hit == n_boxes
    if on_ground.any():
        ids[on_ground] = packed.ground_id
        albedo[on_ground] = packed.ground_color
        if packed.ground_checker > 0:
            o = origins if origins.shape[0] == 1 else origins[on_ground]
            p = o + t[on_ground, None] * directions[on_ground]
            cells = np.floor(p[:, 0] / packed.ground_checker) + np.floor(p[:, 2] / packed.ground_checker)
            odd = (cells % 2) != 0
            albedo[np.flatnonzero(on_ground)[odd]] = packed.ground_color2
    lit = hit >= 0
    shade = np.ones(t.size, dtype=dtype)
    shade[lit] = ambient + (1.0 - ambient) * np.maximum(normals[lit] @ light, 0.0)
    rgb = np.clip(albedo * shade[:, None], 0.0, 1.0)
    return Render(
        rgb=rgb.reshape(h, w, 3),
        depth=t.reshape(h, w),
        instance=ids.reshape(h, w),
        normals=normals.reshape(h, w, 3),
        camera=camera,
    )


@dataclass(frozen=True, eq=False)
class OccupancyMap:
    """A top-down grid: ``occupied[row, col]`` for the cell ``x in [x0 + col c, x0 + (col + 1) c)``,
    ``z in [z0 + row c, z0 + (row + 1) c)`` with ``c = cell``. Rows follow ``+Z``, columns ``+X``."""

    occupied: np.ndarray
    x0: float
    z0: float
    cell: float

    @property
    def shape(self) -> tuple[int, int]:
        return self.occupied.shape  # type: ignore[return-value]

    def cell_of(self, x: float | np.ndarray, z: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(row, col)`` of the cell holding world point ``(x, z)`` (may fall outside the grid)."""
        col = np.floor((np.asarray(x) - self.x0) / self.cell).astype(int)
        row = np.floor((np.asarray(z) - self.z0) / self.cell).astype(int)
        return row, col

    def center_of(self, row: int | np.ndarray, col: int | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World ``(x, z)`` of a cell's centre."""
        return self.x0 + (np.asarray(col) + 0.5) * self.cell, self.z0 + (np.asarray(row) + 0.5) * self.cell


def occupancy_map(
    scene: Scene,
    cell: float,
    *,
    bounds: tuple[float, float, float, float] | None = None,
    y_range: tuple[float, float] = (0.0, 2.0),
) -> OccupancyMap:
    """Which cells of a top-down grid a box overlaps (with positive volume) within heights ``y_range``.

    ``bounds = (x_min, x_max, z_min, z_max)`` (default: the boxes' footprint); the grid has
    ``ceil((x_max - x_min) / cell)`` columns and ``ceil((z_max - z_min) / cell)`` rows. A cell counts as
    the column ``[cell] x [y_lo, y_hi] x [cell]``; it is occupied when it and a box overlap, tested
    exactly with the separating-axis theorem (the 3 world axes, the 3 box axes and their 9 cross
    products). Boxes that only touch a cell do not occupy it. The ground plane is ignored.
    """
    if not isinstance(scene, Scene):
        raise TypeError(f"scene must be a Scene; got {type(scene).__name__}")
    cell = check_float("cell", cell, minimum=0.0, strict_min=True)
    if not isinstance(y_range, tuple | list) or len(y_range) != 2:
        raise TypeError(f"y_range must be a (low, high) pair; got {y_range!r}")
    y_lo, y_hi = (check_float(f"y_range[{k}]", v) for k, v in enumerate(y_range))
    if not y_hi > y_lo:
        raise ValueError(f"y_range must have low < high; got {y_range}")
    if bounds is None:
        lo, hi = scene.bounds()
        bounds = (float(lo[0]), float(hi[0]), float(lo[2]), float(hi[2]))
    if not isinstance(bounds, tuple | list) or len(bounds) != 4:
        raise TypeError(f"bounds must be (x_min, x_max, z_min, z_max); got {bounds!r}")
    x_min, x_max, z_min, z_max = (check_float(f"bounds[{k}]", v) for k, v in enumerate(bounds))
    if not (x_max > x_min and z_max > z_min):
        raise ValueError(f"bounds must have x_max > x_min and z_max > z_min; got {bounds}")
    cols = check_int("columns", int(np.ceil((x_max - x_min) / cell - 1e-9)), minimum=1)
    rows = check_int("rows", int(np.ceil((z_max - z_min) / cell - 1e-9)), minimum=1)

    xc = x_min + (np.arange(cols) + 0.5) * cell
    zc = z_min + (np.arange(rows) + 0.5) * cell
    centers = np.stack(np.broadcast_arrays(xc[None, :], (y_lo + y_hi) / 2.0, zc[:, None]), axis=-1).reshape(
        -1, 3
    )
    cell_half = np.array([cell / 2.0, (y_hi - y_lo) / 2.0, cell / 2.0])
    occupied = np.zeros(rows * cols, dtype=bool)
    for box in scene.boxes:
        occupied |= _overlaps(box.center, box.half_extents, box.rotation_matrix, centers, cell_half)
    return OccupancyMap(occupied.reshape(rows, cols), x_min, z_min, cell)


def _overlaps(
    center: tuple[float, float, float],
    half: tuple[float, float, float],
    rot: np.ndarray,
    cell_centers: np.ndarray,
    cell_half: np.ndarray,
) -> np.ndarray:
    """Whether the oriented box overlaps each axis-aligned cell (M, 3) with positive volume (SAT)."""
    eye = np.eye(3)
    axes = [eye[i] for i in range(3)] + [rot[:, j] for j in range(3)]
    axes += [np.cross(eye[i], rot[:, j]) for i in range(3) for j in range(3)]
    delta = np.asarray(center) - cell_centers
    overlap = np.ones(cell_centers.shape[0], dtype=bool)
    tol = 1e-9 * (1.0 + float(np.max(np.abs(cell_centers))) + float(np.max(np.abs(center))))
    for axis in axes:
        norm = np.linalg.norm(axis)
        if norm < 1e-12:  # parallel edges: the cross product is no separating axis
            continue
        axis = axis / norm
        r_box = float(np.sum(np.abs(axis @ rot) * half))
        r_cell = float(np.sum(np.abs(axis) * cell_half))
        overlap &= np.abs(delta @ axis) < r_box + r_cell - tol
    return overlap
