"""Tests of the video scores: PSNR, AbsRel, revisits, co-visibility, drift slope, reprojection error."""

import math

import numpy as np
import pytest
import torch

from neurips26.jag.geometry import intrinsics
from neurips26.jag.metrics import (
    abs_rel,
    covisible_mask,
    per_frame_scores,
    psnr,
    reprojection_error,
    revisit_psnr,
    slope,
)
from neurips26.world import heading_pose, pinhole, render, room


def _clip(yaws=(0.0, 4.0, 8.0), seed=0):
    scene = room(seed).scene
    poses, rgbs, depths = [], [], []
    for yaw in yaws:
        c2w = heading_pose((0.0, 1.2, 0.0), yaw)
        shot = render(scene, pinhole(16, 16, 70.0, c2w), dtype=np.float64)
        poses.append(c2w)
        rgbs.append(2.0 * shot.rgb.transpose(2, 0, 1) - 1.0)
        depths.append(shot.depth)
    as_t = lambda a: torch.tensor(np.stack(a), dtype=torch.float64)  # noqa: E731
    return as_t(rgbs), as_t(depths), as_t(poses), intrinsics(16, 16, 70.0).double()


def test_psnr_and_abs_rel_by_hand():
    truth = torch.zeros(2, 3, 4, 4, dtype=torch.float64)
    estimate = truth + 0.1
    assert psnr(estimate, truth) == pytest.approx([10 * math.log10(4 / 0.01)] * 2)
    assert torch.isinf(psnr(truth, truth)).all()
    mask = torch.zeros(2, 4, 4, dtype=torch.bool)
    mask[:, 0, 0] = True
    estimate[:, :, 1:, :] = 5.0  # off the mask: not counted
    assert psnr(estimate, truth, mask) == pytest.approx([10 * math.log10(4 / 0.01)] * 2)
    depth = torch.full((4, 4), 2.0, dtype=torch.float64)
    assert abs_rel(depth * 1.1, depth).item() == pytest.approx(0.1)
    with pytest.raises(ValueError, match="depth"):
        abs_rel(depth, -depth)
    with pytest.raises(ValueError, match="mask"):
        psnr(truth, truth, torch.ones(3, 3, dtype=torch.bool))


def test_revisits_covisibility_and_slope():
    rgb, depth, poses, K = _clip()
    frames = torch.cat([rgb, rgb[:1]])  # the camera comes back to frame 0's pose
    assert torch.isinf(revisit_psnr(frames, [(0, 3)])).all()
    assert revisit_psnr(frames, [(0, 1), (1, 2)]).shape == (2,)
    seen = covisible_mask(depth[0], poses[0], poses, K)
    finite = torch.isfinite(depth[0])  # a ray through the door gap has no surface: never co-visible
    assert seen.shape == (3, 16, 16) and torch.equal(seen[0], finite) and 0.5 < seen[2].float().mean() < 1.0
    p, a = per_frame_scores(rgb, depth, rgb, depth, seen)
    assert torch.isinf(p).all() and (a == 0).all()
    assert slope([3.0, 2.0, 1.0]) == pytest.approx(-1.0) and math.isnan(slope([1.0]))
    assert slope(np.array([1.0, np.inf, 3.0])) == pytest.approx(1.0)


def test_reprojection_error_is_small_for_true_depth_and_large_for_a_wrong_one():
    _, depth, poses, K = _clip()
    true = reprojection_error(depth, poses, K)
    wrong = reprojection_error(depth * torch.tensor([1.0, 1.5, 0.7])[:, None, None], poses, K)
    assert true.shape == (2,) and (true < 0.05).all()  # nearest-pixel lookup and occlusion edges only
    assert (wrong > 0.2).all()


def _reprojection_pair(depth: torch.Tensor, poses: torch.Tensor, K: torch.Tensor, k: int) -> float:  # noqa: N803
    """One pair ``(k, k + 1)`` the slow way: frame k's real points, one by one, into frame k + 1."""
    height, width = depth.shape[-2:]
    before, after = (pinhole(width, height, 70.0, poses[j].numpy()) for j in (k, k + 1))
    np.testing.assert_allclose(before.K, K.numpy())
    errors = []
    for r in range(height):
        for c in range(width):
            d = float(depth[k, r, c])
            if not (math.isfinite(d) and d > 0):
                continue
            world = before.back_project(np.array([[c + 0.5, r + 0.5]]), np.array([d]))
            uv, z = after.project(world)
            if not z[0] > 0:
                continue
            col, row = math.floor(uv[0, 0]), math.floor(uv[0, 1])
            if 0 <= col < width and 0 <= row < height:
                seen = float(depth[k + 1, row, col])
                if math.isfinite(seen) and seen > 0:
                    errors.append(abs(z[0] - seen) / seen)
    return float(np.mean(errors)) if errors else math.nan


def test_batched_reprojection_error_equals_the_point_by_point_definition():
    _, depth, poses, K = _clip()
    noisy = depth * (1.0 + 0.2 * torch.rand(depth.shape, generator=torch.Generator().manual_seed(0)))
    got = reprojection_error(noisy, poses, K)
    want = [_reprojection_pair(noisy, poses, K, k) for k in range(depth.shape[0] - 1)]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
