"""A 3-D reconstruction of some frames, addressed by absolute frame index: what ``tools.Reconstruct``
returns.

The world frame follows the paper's tool (§3.1): gravity-aligned with ``+Y`` up and the ground at
``Y = 0``; the first reconstructed frame's camera stands at ``X = Z = 0`` and looks along ``-Z`` (its
heading), ``+X`` to its right; lengths are (believed to be) metres. Cameras are 4x4 camera-to-world
matrices with OpenCV axes: columns right, down, forward, position. Per frame there is a z-depth map, a
point map (the world point seen by each pixel; NaN where nothing was seen) and a confidence in
``[0, 1]``. :meth:`Reconstruction.render_bev` draws a top-down view with the camera path and the
objects of a :class:`~neurips26.spatialclaw.per_frame_mask.PerFrameMask`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from neurips26.spatialclaw.frame_indexed import PerFrame, PointMap, check_frame
from neurips26.spatialclaw.per_frame_mask import PerFrameMask
from neurips26.validation import check_float

#: Horizontal spread (m) of an object's per-frame centroids above which the BEV draws it as moving: above
#: the ~0.5 m a static object's visible-surface centroid drifts as the camera passes, below the 1–2 m a
#: mover travels.
MOVING_SPREAD_M = 0.75
_UP = np.array([0.0, 1.0, 0.0])


class Intrinsics(NamedTuple):
    """Pinhole intrinsics in pixels; unpacks as ``fx, fy, cx, cy`` and also reads as ``k["fx"]``."""

    fx: float
    fy: float
    cx: float
    cy: float

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            if key not in self._fields:
                raise KeyError(f"intrinsics have keys {self._fields}; got {key!r}")
            return getattr(self, key)
        return tuple.__getitem__(self, key)


def heading_axes(c2w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit horizontal ``(right, forward)`` of a camera: its forward axis with the vertical removed (its
    image-up axis if it looks straight down), and forward × up."""
    forward = np.array(c2w[:3, 2], dtype=float)
    forward[1] = 0.0
    if np.linalg.norm(forward) < 1e-9:
        forward = -np.array(c2w[:3, 1], dtype=float)
        forward[1] = 0.0
    forward /= np.linalg.norm(forward)
    return np.cross(forward, _UP), forward


class Reconstruction:
    """A gravity-aligned 3-D reconstruction of ``frame_indices`` (module docstring for the world frame).

    Per absolute frame ``f``: ``depth[f]`` (H, W) z-depth, ``extrinsics[f]`` 4x4 camera-to-world
    (OpenCV: columns right, down, forward, position), ``intrinsics[f]`` ``(fx, fy, cx, cy)``,
    ``points[f]`` (H, W, 3) world points in metres, ``points.confidence[f]`` (H, W) in [0, 1] (low at
    depth edges and far away; 0 where nothing was seen). ``metric_scale`` is the factor the model
    applied to reach metres (its belief; its true scale error is unknown to it).
    """

    def __init__(
        self,
        frame_indices: Sequence[int],
        depth: np.ndarray,
        extrinsics: np.ndarray,
        intrinsics: np.ndarray,
        points: np.ndarray,
        confidence: np.ndarray,
        metric_scale: float = 1.0,
    ) -> None:
        self._frame_indices = [int(f) for f in frame_indices]
        n = len(self._frame_indices)
        if n == 0 or len(set(self._frame_indices)) != n:
            raise ValueError(f"frame_indices must be non-empty and unique; got {self._frame_indices}")
        for name, arr, tail in (
            ("depth", depth, depth.shape[1:3]),
            ("extrinsics", extrinsics, (4, 4)),
            ("intrinsics", intrinsics, (4,)),
            ("points", points, (*depth.shape[1:3], 3)),
            ("confidence", confidence, depth.shape[1:3]),
        ):
            if arr.shape != (n, *tail):
                raise ValueError(f"{name} must have shape {(n, *tail)}; got {arr.shape}")
        self.metric_scale = check_float("metric_scale", metric_scale, minimum=0.0, strict_min=True)
        self.gravity_direction = _UP.copy()
        self.depth = PerFrame(depth, self._frame_indices, "recon.depth")
        self.extrinsics = PerFrame(extrinsics, self._frame_indices, "recon.extrinsics")
        self.intrinsics = PerFrame(
            intrinsics,
            self._frame_indices,
            "recon.intrinsics",
            wrap=lambda k: Intrinsics(*(float(v) for v in k)),
        )
        self.points = PointMap(points, confidence, self._frame_indices)
        self._shape = (int(depth.shape[1]), int(depth.shape[2]))

    @property
    def frame_indices(self) -> list[int]:
        """Absolute frame indices, in the order they were given (the first defines the world frame)."""
        return list(self._frame_indices)

    @property
    def num_frames(self) -> int:
        return len(self._frame_indices)

    def camera_position(self, frame: int) -> np.ndarray:
        """``(3,)`` camera centre at absolute ``frame`` (``extrinsics[frame][:3, 3]``)."""
        return self.extrinsics[frame][:3, 3].copy()

    def __repr__(self) -> str:
        fi = self._frame_indices
        shown = fi if len(fi) <= 8 else [*fi[:3], "...", *fi[-2:]]
        h, w = self._shape
        return (
            f"Reconstruction({self.num_frames} frames {shown}, {h}x{w} px, "
            f"metric_scale={self.metric_scale:g}; "
            f"world: +Y up, ground Y=0, frame {fi[0]}'s camera at X=Z=0 looking along -Z)\n"
            f"  recon.points[f] (H, W, 3) m | recon.points.confidence[f] (H, W) | recon.depth[f] (H, W) | "
            f"recon.extrinsics[f] 4x4 camera-to-world | recon.intrinsics[f] (fx, fy, cx, cy)"
        )

    # --- bird's-eye view -----------------------------------------------------------------------------

    def _object_tracks(
        self, masks: object, labels: Sequence[str] | None, min_confidence: float
    ) -> list[tuple[str, list[np.ndarray], np.ndarray]]:
        """Per object: label, per-frame median centroids, pooled confident points (world)."""
        if isinstance(masks, PerFrameMask):
            frames = [f for f in masks.frame_indices if f in self._frame_indices]
            if not frames:
                raise ValueError(
                    f"masks share no frame with this reconstruction: mask frames {masks.frame_indices}, "
                    f"reconstruction frames {self._frame_indices}"
                )
            names = masks.labels if labels is None else list(labels)
            count = masks.num_objects
            get = masks.get_mask
        elif isinstance(masks, np.ndarray):
            if masks.ndim != 4 or masks.shape[0] != self.num_frames or masks.shape[2:] != self._shape:
                raise ValueError(
                    f"masks as an array must have shape ({self.num_frames}, K, {self._shape[0]}, "
                    f"{self._shape[1]}) (one row per reconstructed frame); got {masks.shape}"
                )
            if labels is None:
                raise ValueError("labels are required when masks is a raw array")
            frames, names, count = self._frame_indices, list(labels), masks.shape[1]
            raw = masks.astype(bool)

            def get(frame: int, k: int) -> np.ndarray:
                return raw[self._frame_indices.index(frame), k]

        else:
            raise TypeError(
                f"masks must be a PerFrameMask or an (N, K, H, W) bool array; got {type(masks).__name__}"
            )
        if len(names) != count:
            raise ValueError(f"labels must name the {count} objects; got {len(names)}")
        out = []
        for k in range(count):
            centroids, pooled = [], []
            for f in frames:
                mask = get(f, k)
                if mask.shape != self._shape:
                    raise ValueError(f"masks are {mask.shape} pixels but the reconstruction is {self._shape}")
                pts = self.points[f][mask]
                conf = self.points.confidence[f][mask]
                pts = pts[np.all(np.isfinite(pts), axis=1) & (conf >= min_confidence)]
                if len(pts):
                    centroids.append(np.median(pts, axis=0))
                    pooled.append(pts)
            out.append((str(names[k]), centroids, np.concatenate(pooled) if pooled else np.empty((0, 3))))
        return out

    def render_bev(
        self,
        masks: PerFrameMask | np.ndarray | None = None,
        labels: Sequence[str] | None = None,
        ref_frame: int | None = None,
        ego_trajectory: bool = True,
        min_confidence: float = 0.3,
    ) -> np.ndarray:
        """Top-down view as an ``(H, W, 3)`` uint8 RGB image: up in the plot is the heading of the camera
        at absolute ``ref_frame`` (default: the first), right its right, origin its position; metres.
        ``masks`` (a PerFrameMask, or an (N, K, H, W) array with ``labels``) adds each object: a
        footprint box if it stays put, a red→blue track with an arrow if its centroid moves. With
        ``ego_trajectory`` the camera path is drawn (dashed, an arrow per camera for its heading)."""
        from matplotlib import colormaps
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.patches import Rectangle

        min_confidence = check_float("min_confidence", min_confidence, minimum=0.0, maximum=1.0)
        if not isinstance(ego_trajectory, bool):
            raise TypeError(f"ego_trajectory must be a bool; got {type(ego_trajectory).__name__}")
        ref = (
            self._frame_indices[0]
            if ref_frame is None
            else int(check_frame(ref_frame, self._frame_indices, "reconstruction"))
        )
        ref_pose = self.extrinsics[ref]
        right, forward = heading_axes(ref_pose)
        origin = ref_pose[:3, 3]

        def bev(p: np.ndarray) -> np.ndarray:
            d = np.atleast_2d(p) - origin
            return np.stack([d @ right, d @ forward], axis=-1)

        tracks = [] if masks is None else self._object_tracks(masks, labels, min_confidence)
        fig = Figure(figsize=(4.2, 4.2), dpi=80)
        canvas = FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        extent = [np.zeros((1, 2))]
        if ego_trajectory:
            cams = bev(np.array([self.extrinsics[f][:3, 3] for f in self._frame_indices]))
            ax.plot(cams[:, 0], cams[:, 1], "--", color="tab:green", lw=1.2, label="camera path")
            for f, c in zip(self._frame_indices, cams, strict=True):
                _, fwd = heading_axes(self.extrinsics[f])
                h = np.array([fwd @ right, fwd @ forward]) * 0.35
                ax.arrow(c[0], c[1], h[0], h[1], width=0.01, head_width=0.08, color="tab:olive", lw=0)
            extent.append(cams)
        ax.plot([0.0], [0.0], marker="^", color="black", ms=9, label=f"camera {ref}")
        palette = colormaps["tab10"]
        for k, (label, centroids, pooled) in enumerate(tracks):
            if not centroids:
                continue
            cs = bev(np.array(centroids))
            spread = float(np.max(np.linalg.norm(cs[:, None] - cs[None], axis=-1))) if len(cs) > 1 else 0.0
            if spread > MOVING_SPREAD_M:
                t = np.linspace(0.0, 1.0, len(cs))
                ax.plot(cs[:, 0], cs[:, 1], color="grey", lw=1)
                ax.scatter(cs[:, 0], cs[:, 1], c=np.stack([1 - t, 0 * t, t], axis=1), s=14, zorder=3)
                ax.plot(cs[0, 0], cs[0, 1], "o", color="red", ms=6)
                d = cs[-1] - cs[-2]
                ax.arrow(
                    cs[-2][0],
                    cs[-2][1],
                    d[0],
                    d[1],
                    width=0.02,
                    head_width=0.15,
                    color="blue",
                    length_includes_head=True,
                )
                mid = cs[len(cs) // 2]
                ax.annotate(f"{k}: {label} (moving)", mid, fontsize=7)
                extent.append(cs)
            else:
                xy = bev(pooled)
                lo, hi = np.percentile(xy, 5, axis=0), np.percentile(xy, 95, axis=0)
                ax.add_patch(Rectangle(tuple(lo), *(hi - lo), fill=False, lw=1.5, color=palette(k % 10)))
                ax.annotate(f"{k}: {label}", (lo + hi) / 2, fontsize=7, ha="center", va="center")
                extent.extend([lo[None], hi[None]])
        pts = np.concatenate(extent)
        lo, hi = pts.min(axis=0) - 0.7, pts.max(axis=0) + 0.7
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
        ax.set_aspect("equal")
        ax.grid(alpha=0.3)
        ax.set_xlabel(f"right of camera {ref} (m)", fontsize=8)
        ax.set_ylabel(f"forward of camera {ref} (m)", fontsize=8)
        ax.set_title(f"BEV, reference frame {ref}", fontsize=9)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6, loc="best")
        fig.tight_layout()
        canvas.draw()
        return np.asarray(canvas.buffer_rgba())[..., :3].copy()
