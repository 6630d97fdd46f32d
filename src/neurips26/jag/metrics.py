"""Scores of generated camera-controlled videos against the rendered truth and against themselves (J2–J6).

Every score takes generated frames with their commanded poses; the truth is the procedural room rendered at
those poses, used for scoring only.

- :func:`psnr` — peak signal-to-noise ratio of RGB in ``[−1, 1]`` (peak-to-peak 2), optionally on a mask.
- :func:`abs_rel` — mean ``|D̂ − D| / D`` of depth on a mask (the standard AbsRel of depth estimation).
- :func:`revisit_psnr` (J2) — for revisit pairs ``(k, k′)`` (the camera is back at frame ``k``'s pose at
  ``k′``, outside the attention window), the PSNR between the two *generated* frames: a model that remembers
  the place draws it again the same way. Needs no truth.
- :func:`covisible_mask` and :func:`per_frame_scores` (J3) — PSNR and AbsRel of every frame against the
  truth on the pixels that frame 0 also sees (frame 0 is given, so those pixels are determined), and
  :func:`slope`, the least-squares slope of a per-frame curve: the drift rate.
- :func:`reprojection_error` (J4) — geometric self-consistency of consecutive generated frames: unproject
  frame ``k``'s generated depth with its pose, project into frame ``k + 1`` and compare the projected
  z-depth with frame ``k + 1``'s generated depth where the point lands (relative error, mean over points
  that land inside the image and in front of the camera). Zero for a perfect static-scene video, up to
  occlusions and the nearest-pixel lookup.

Shapes: RGB ``(..., 3, H, W)``, depth ``(..., H, W)`` (metric z-depth, > 0), masks ``(..., H, W)`` bool,
poses ``(T, 4, 4)`` camera-to-world, ``K`` ``(3, 3)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from neurips26.jag.geometry import project, unproject

#: Peak-to-peak range of RGB in ``[−1, 1]``.
PEAK = 2.0


def _mask_like(mask: Tensor | None, like: Tensor) -> Tensor:
    if mask is None:
        return torch.ones(like.shape, dtype=torch.bool, device=like.device)
    if mask.dtype != torch.bool or mask.shape != like.shape:
        raise ValueError(f"mask must be a bool tensor of shape {tuple(like.shape)}; got {tuple(mask.shape)}")
    return mask


def psnr(estimate: Tensor, truth: Tensor, mask: Tensor | None = None) -> Tensor:
    """``10 log10(PEAK² / MSE)`` per image over ``(3, H, W)`` (on ``mask`` ``(..., H, W)`` when given);
    shape ``estimate.shape[:-3]``; ``inf`` for identical images, ``nan`` for an empty mask."""
    if estimate.shape != truth.shape or estimate.ndim < 3 or estimate.shape[-3] != 3:
        raise ValueError(
            f"estimate and truth must be RGB images (..., 3, H, W) of one shape; got {tuple(estimate.shape)} "
            f"and {tuple(truth.shape)}"
        )
    m = _mask_like(mask, estimate[..., 0, :, :]).unsqueeze(-3).expand_as(estimate)
    err = torch.where(m, (estimate - truth).square(), torch.zeros_like(estimate)).sum(dim=(-3, -2, -1))
    count = m.sum(dim=(-3, -2, -1)).to(estimate.dtype)
    mse = err / count
    return 10.0 * torch.log10(PEAK**2 / mse)


def abs_rel(estimate: Tensor, truth: Tensor, mask: Tensor | None = None) -> Tensor:
    """Mean ``|D̂ − D| / D`` per depth map over ``(H, W)`` on ``mask``; shape ``estimate.shape[:-2]``."""
    if estimate.shape != truth.shape or estimate.ndim < 2:
        raise ValueError(
            "estimate and truth must be depth maps (..., H, W) of one shape; got "
            f"{tuple(estimate.shape)} and {tuple(truth.shape)}"
        )
    if bool((truth <= 0).any()):
        raise ValueError("depth must be > 0 (the truth's z-depth)")
    m = _mask_like(mask, estimate)
    rel = torch.where(m, (estimate - truth).abs() / truth, torch.zeros_like(truth)).sum(dim=(-2, -1))
    return rel / m.sum(dim=(-2, -1)).to(estimate.dtype)


def revisit_psnr(frames: Tensor, pairs: Sequence[tuple[int, int]]) -> Tensor:
    """J2: PSNR between generated frames ``k`` and ``k′`` of each revisit pair, ``frames`` ``(T, 3, H, W)``
    (or ``(B, T, 3, H, W)``, the same pairs for every clip); shape ``(len(pairs),)`` or ``(B, pairs)``."""
    if not pairs:
        raise ValueError("pairs must hold at least one (k, k') revisit pair")
    first = torch.tensor([k for k, _ in pairs])
    second = torch.tensor([k2 for _, k2 in pairs])
    return psnr(frames[..., first, :, :, :], frames[..., second, :, :, :])


def _points(depth: Tensor, c2w: Tensor, K: Tensor) -> tuple[Tensor, Tensor]:  # noqa: N803
    """World points ``(N, 3)`` of a depth map ``(H, W)`` and which of them are real (finite, > 0 depth:
    a ray through the door gap has none)."""
    ok = torch.isfinite(depth) & (depth > 0)
    safe = torch.where(ok, depth, torch.ones_like(depth))
    return unproject(safe[None], c2w[None], K).reshape(-1, 3), ok.reshape(-1)


def _landing(points: Tensor, real: Tensor, c2w: Tensor, K: Tensor, height: int, width: int):  # noqa: N803
    """Pixel ``(row, col)`` and z-depth of each real point projected into the camera ``c2w``, with the
    mask of those that land inside the image in front of the camera."""
    uv, z = project(points[None], c2w[None], K)
    col, row = uv[0, :, 0].floor(), uv[0, :, 1].floor()
    inside = real & (z[0] > 0) & (col >= 0) & (col < width) & (row >= 0) & (row < height)
    col = torch.where(inside, col, torch.zeros_like(col)).long()
    row = torch.where(inside, row, torch.zeros_like(row)).long()
    return row, col, z[0], inside


def covisible_mask(depth0: Tensor, pose0: Tensor, poses: Tensor, K: Tensor) -> Tensor:
    """``(T, H, W)``: the pixels of each frame whose surface point frame 0 also sees.

    Frame 0's depth is unprojected with its pose and projected into every frame; a pixel of frame ``t`` is
    co-visible when some point of frame 0 lands in it (nearest pixel), in front of the camera. Coarse (no
    occlusion test against frame ``t``'s own depth), which suffices for the rooms' convex walls and boxes.
    """
    height, width = depth0.shape[-2:]
    points, real = _points(depth0, pose0, K)
    out = torch.zeros(poses.shape[0], height, width, dtype=torch.bool, device=depth0.device)
    for t in range(poses.shape[0]):
        row, col, _, inside = _landing(points, real, poses[t], K, height, width)
        out[t, row[inside], col[inside]] = True
    return out


def per_frame_scores(
    rgb: Tensor, depth: Tensor, truth_rgb: Tensor, truth_depth: Tensor, mask: Tensor
) -> tuple[Tensor, Tensor]:
    """J3: per-frame PSNR and AbsRel ``(T,)`` of a generated clip ``rgb`` ``(T, 3, H, W)``, ``depth``
    ``(T, H, W)`` against the truth on ``mask`` ``(T, H, W)`` (e.g. :func:`covisible_mask`)."""
    return psnr(rgb, truth_rgb, mask), abs_rel(depth, truth_depth, mask)


def slope(values: Sequence[float] | np.ndarray | Tensor) -> float:
    """Least-squares slope of ``values`` against their index (per frame): the drift rate; finite values
    only (``nan`` with fewer than two)."""
    y = np.asarray(values.detach().cpu() if isinstance(values, Tensor) else values, dtype=float)
    x = np.arange(y.size, dtype=float)
    keep = np.isfinite(y)
    if keep.sum() < 2:
        return math.nan
    return float(np.polyfit(x[keep], y[keep], 1)[0])


def reprojection_error(depth: Tensor, poses: Tensor, K: Tensor) -> Tensor:  # noqa: N803
    """J4: per consecutive pair ``(k, k + 1)`` of a generated clip (``depth`` ``(T, H, W)``, ``poses``
    ``(T, 4, 4)``), the mean relative difference between frame ``k``'s points projected into frame ``k + 1``
    and frame ``k + 1``'s own depth at the landing pixel; shape ``(T − 1,)``. Points landing outside the
    image or behind the camera are left out; ``nan`` when none lands. All pairs at once (batched)."""
    height, width = depth.shape[-2:]
    frames = depth.shape[0]
    ok = torch.isfinite(depth) & (depth > 0)
    safe = torch.where(ok, depth, torch.ones_like(depth))
    points = unproject(safe[:-1], poses[:-1], K).reshape(frames - 1, -1, 3)
    uv, z = project(points, poses[1:], K)
    col, row = uv[..., 0].floor(), uv[..., 1].floor()
    inside = ok[:-1].reshape(frames - 1, -1) & (z > 0) & (col >= 0) & (col < width) & (row >= 0)
    inside = inside & (row < height)
    col = torch.where(inside, col, torch.zeros_like(col)).long()
    row = torch.where(inside, row, torch.zeros_like(row)).long()
    seen = depth[1:].reshape(frames - 1, -1).gather(1, row * width + col)
    inside = inside & torch.isfinite(seen) & (seen > 0)
    safe_seen = torch.where(inside, seen, torch.ones_like(seen))
    rel = torch.where(inside, (z.to(depth.dtype) - safe_seen).abs() / safe_seen, torch.zeros_like(seen))
    count = inside.sum(dim=1)
    out = rel.sum(dim=1) / count.clamp(min=1).to(depth.dtype)
    return torch.where(count > 0, out, torch.full_like(out, math.nan))


__all__ = [
    "PEAK",
    "abs_rel",
    "covisible_mask",
    "per_frame_scores",
    "psnr",
    "reprojection_error",
    "revisit_psnr",
    "slope",
]
