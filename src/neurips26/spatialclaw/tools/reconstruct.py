"""``tools.Reconstruct``: a seeded stand-in for a feed-forward reconstruction model (DA3 in the paper).

It reads the renderer's exact z-depth and camera poses and hands them back the way a reconstruction
model would (paper §3.1; the failure modes below are our choice of a real model's typical errors): in a
gravity-aligned world whose origin is the first requested frame's camera (see
:mod:`neurips26.spatialclaw.reconstruction`), with

* one hidden global scale ``s ~ U(depth_scale)`` per call multiplying every length (depth, camera
  positions, points), the monocular scale ambiguity; the reported ``metric_scale`` stays 1.0 because a
  model believes its own metric output (the released tool reports its model's conversion factor, not its
  error), so the agent cannot undo ``s`` by reading it;
* per-pixel multiplicative depth noise ``1 + N(0, depth_noise)``;
* camera rotation noise ``N(0, rot_deg)`` about a random axis and translation noise ``N(0, trans_m)`` on
  every camera but the first, which defines the world frame and is therefore exact;
* a confidence per pixel that falls with distance and is low on depth and object edges (where the noisy
  masks of ``tools.SAM3`` spill over), 0 where nothing was seen (those points are NaN).

With :meth:`PerceptionNoise.none` the points are the exact back-projection of the rendered depth.
Randomness is keyed on ``(seed, "Reconstruct", frame indices)`` (:func:`.noise.keyed_rng`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from neurips26.spatialclaw.reconstruction import Reconstruction, heading_axes
from neurips26.spatialclaw.scene_types import Frames, SpatialScene
from neurips26.spatialclaw.tools.frame_input import frame_indices
from neurips26.spatialclaw.tools.noise import PerceptionNoise, keyed_rng

if TYPE_CHECKING:
    from neurips26.spatialclaw.kernel_types import FrameImage

MAX_FRAMES = 64
#: Distance (m) at which the confidence has fallen to one half.
CONFIDENCE_HALF_DISTANCE = 6.0
#: Relative depth jump between neighbouring pixels that counts as a depth edge.
EDGE_JUMP = 0.1
#: Confidence factor on depth and object edges (below the usual 0.3 threshold).
EDGE_FACTOR = 0.25


def world_to_reconstruction(first_c2w: np.ndarray) -> np.ndarray:
    """4x4 rigid map from the scene's world to the reconstruction world of a call whose first frame has
    camera-to-world ``first_c2w`` (before the hidden scale): rows right, up, −forward of that camera's
    heading, origin under the camera (its height kept, so the ground stays at ``Y = 0``)."""
    right, forward = heading_axes(first_c2w)
    rotation = np.stack([right, np.array([0.0, 1.0, 0.0]), -forward])
    origin = np.array([first_c2w[0, 3], 0.0, first_c2w[2, 3]])
    out = np.eye(4)
    out[:3, :3] = rotation
    out[:3, 3] = -rotation @ origin
    return out


def pixel_rays(intrinsics: tuple[float, float, float, float], width: int, height: int) -> np.ndarray:
    """``(H, W, 3)`` camera-frame rays with unit z through the pixel centres ``(j + 0.5, i + 0.5)``."""
    fx, fy, cx, cy = intrinsics
    u = (np.arange(width) + 0.5 - cx) / fx
    v = (np.arange(height) + 0.5 - cy) / fy
    uu, vv = np.meshgrid(u, v)
    return np.stack([uu, vv, np.ones_like(uu)], axis=-1)


def confidence_map(depth: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``(H, W)`` confidence in [0, 1]: ``1 / (1 + (z / 6 m)^2)``, times :data:`EDGE_FACTOR` on pixels
    next to a depth jump of more than 10 % or another instance, 0 where the depth is not finite."""
    valid = np.isfinite(depth)
    z = np.where(valid, depth, np.nan)
    edge = np.zeros(depth.shape, dtype=bool)
    for axis in (0, 1):
        a = [slice(None)] * 2
        b = [slice(None)] * 2
        a[axis], b[axis] = slice(None, -1), slice(1, None)
        za, zb = z[tuple(a)], z[tuple(b)]
        with np.errstate(invalid="ignore"):
            jump = np.abs(za - zb) > EDGE_JUMP * np.fmin(za, zb)
        jump |= valid[tuple(a)] != valid[tuple(b)]
        jump |= ids[tuple(a)] != ids[tuple(b)]
        edge[tuple(a)] |= jump
        edge[tuple(b)] |= jump
    conf = np.where(valid, 1.0 / (1.0 + (np.where(valid, z, 0.0) / CONFIDENCE_HALF_DISTANCE) ** 2), 0.0)
    conf[edge & valid] *= EDGE_FACTOR
    return conf


def _small_rotation(rng: np.random.Generator, sigma_deg: float) -> np.ndarray:
    """Rotation by ``N(0, sigma_deg)`` degrees about a uniformly random axis (Rodrigues)."""
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    angle = np.radians(sigma_deg * rng.normal())
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


class ReconstructTool:
    """3-D reconstruction of video frames into a gravity-aligned metric world (depth, cameras, points).

    A stand-in for Depth-Anything-3: lengths carry an unknown global scale error of about ±15 %, depth
    has per-pixel noise, cameras after the first are slightly off.
    """

    def __init__(self, scene: SpatialScene, frames: Frames, noise: PerceptionNoise, seed: int) -> None:
        self._scene = scene
        self._frames = frames
        self._noise = noise
        self._seed = seed
        self._rays = pixel_rays(scene.intrinsics, scene.width, scene.height)

    def Reconstruct(self, frames: Sequence[FrameImage]) -> Reconstruction:
        """Reconstruct up to 64 frames (kernel images, e.g. ``InputImages[::2]``) → ``Reconstruction``.

        World frame: +Y up, ground at Y = 0, the first given frame's camera at X = Z = 0 looking along
        −Z, +X its right; index every result by absolute frame index (``recon.points[f]``).
        """
        fis = frame_indices(frames, "frames", self._frames.num_frames, max_images=MAX_FRAMES, unique=True)
        rng = keyed_rng(self._seed, "Reconstruct", fis)
        noise = self._noise
        scale = float(rng.uniform(*noise.depth_scale))
        align = world_to_reconstruction(self._scene.poses[fis[0]])
        n, h, w = len(fis), self._scene.height, self._scene.width
        depth = np.empty((n, h, w), dtype=np.float32)
        points = np.empty((n, h, w, 3), dtype=np.float32)
        confidence = np.empty((n, h, w), dtype=np.float32)
        extrinsics = np.empty((n, 4, 4))
        for k, f in enumerate(fis):
            c2w = align @ self._scene.poses[f]
            c2w[:3, 3] *= scale
            rotation_noise = _small_rotation(rng, noise.rot_deg)
            translation_noise = noise.trans_m * rng.normal(size=3)
            if k > 0:
                c2w[:3, :3] = rotation_noise @ c2w[:3, :3]
                c2w[:3, 3] += translation_noise
            true_depth = self._frames.depth[f].astype(float)
            valid = np.isfinite(true_depth)
            factor = np.maximum(1.0 + noise.depth_noise * rng.normal(size=(h, w)), 0.1)
            z = np.where(valid, scale * np.where(valid, true_depth, 0.0) * factor, np.nan)
            world = (z[..., None] * self._rays) @ c2w[:3, :3].T + c2w[:3, 3]
            depth[k] = z
            points[k] = world
            confidence[k] = confidence_map(true_depth, self._frames.ids[f])
            extrinsics[k] = c2w
        fx, fy, cx, cy = self._scene.intrinsics
        intrinsics = np.tile(np.array([fx, fy, cx, cy], dtype=float), (n, 1))
        return Reconstruction(fis, depth, extrinsics, intrinsics, points, confidence, metric_scale=1.0)

    def __repr__(self) -> str:
        return f"tools.Reconstruct (Reconstruct(frames) -> Reconstruction; at most {MAX_FRAMES} frames)"
