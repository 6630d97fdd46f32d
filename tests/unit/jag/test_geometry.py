"""Batched torch pinhole geometry: equal to ``neurips26.world.Camera``, unproject/project round trips,
Plücker invariants, rendered walls back-projected onto their planes, gradients and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from neurips26.jag.geometry import (
    check_intrinsics,
    check_pose,
    intrinsics,
    pixel_grid,
    plucker_patches,
    project,
    unproject,
)
from neurips26.world import heading_pose, look_at, pinhole, render, room

H, W, FOV = 16, 12, 70.0


def poses(n: int = 3, seed: int = 0) -> np.ndarray:
    """``n`` random camera-to-world poses looking at points near the origin."""
    rng = np.random.default_rng(seed)
    eyes = rng.uniform(-2.0, 2.0, (n, 3)) + np.array([0.0, 1.5, 0.0])
    targets = rng.uniform(-0.5, 0.5, (n, 3))
    return np.stack([look_at(e, t) for e, t in zip(eyes, targets, strict=True)])


def cameras(c2w: np.ndarray, width: int = W, height: int = H):
    return [pinhole(width, height, FOV, p) for p in c2w]


def t64(a: np.ndarray) -> torch.Tensor:
    return torch.tensor(np.asarray(a), dtype=torch.float64)


# ----------------------------------------------------------------------------------------------------------
# equality with Camera
# ----------------------------------------------------------------------------------------------------------


def test_intrinsics_equal_pinhole() -> None:
    cam = pinhole(W, H, FOV)
    torch.testing.assert_close(intrinsics(W, H, FOV), t64(cam.K), rtol=0, atol=1e-12)
    k32 = intrinsics(W, H, FOV, dtype=torch.float32)
    assert k32.dtype == torch.float32 and k32.shape == (3, 3)


def test_pixel_grid_matches_camera_pixel_centres() -> None:
    u, v = pinhole(W, H, FOV).pixel_centers()
    grid = pixel_grid(H, W)
    torch.testing.assert_close(grid, t64(np.stack([u, v], axis=-1)), rtol=0, atol=0)


def test_unproject_equals_camera_back_project() -> None:
    c2w = poses(3)
    cams = cameras(c2w)
    depth = np.random.default_rng(1).uniform(0.5, 6.0, (3, H, W))
    got = unproject(t64(depth), t64(c2w), intrinsics(W, H, FOV))
    want = np.stack([cam.point_map(d) for cam, d in zip(cams, depth, strict=True)])
    torch.testing.assert_close(got, t64(want), rtol=0, atol=1e-9)


def test_project_equals_camera_project_including_behind() -> None:
    c2w = poses(3, seed=2)
    cams = cameras(c2w)
    pts = np.random.default_rng(3).uniform(-4.0, 4.0, (3, 50, 3))
    uv, z = project(t64(pts), t64(c2w), intrinsics(W, H, FOV))
    for b, cam in enumerate(cams):
        uv_np, z_np = cam.project(pts[b])
        torch.testing.assert_close(z[b], t64(z_np), rtol=0, atol=1e-9)
        behind = z_np <= 0
        assert behind.any() and (~behind).any()
        assert torch.isnan(uv[b][t64(behind).bool()]).all()
        torch.testing.assert_close(uv[b][~t64(behind).bool()], t64(uv_np[~behind]), rtol=0, atol=1e-9)


def test_project_keeps_leading_shape_and_accepts_batched_k_and_3x4() -> None:
    c2w = t64(poses(2, seed=4))
    pts = torch.randn(2, 5, 7, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    k = intrinsics(W, H, FOV)
    uv, z = project(pts, c2w[:, :3], k.expand(2, 3, 3))
    uv2, z2 = project(pts, c2w, k)
    assert uv.shape == (2, 5, 7, 2) and z.shape == (2, 5, 7)
    torch.testing.assert_close(uv, uv2, rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(z, z2, rtol=0, atol=0)


def test_plucker_per_pixel_equals_camera_plucker() -> None:
    c2w = poses(2, seed=5)
    got = plucker_patches(t64(c2w), intrinsics(W, H, FOV), H, W, 1)
    want = np.stack([cam.plucker().reshape(-1, 6) for cam in cameras(c2w)])
    torch.testing.assert_close(got, t64(want), rtol=0, atol=1e-9)


def test_plucker_patch_centres_and_token_order() -> None:
    """Patch (r, c) is token r (W/p) + c and its ray passes through pixel (c p + p/2, r p + p/2)."""
    c2w = t64(poses(2, seed=6))
    k = intrinsics(W, H, FOV)
    p = 4
    rays = plucker_patches(c2w, k, H, W, p)
    assert rays.shape == (2, (H // p) * (W // p), 6)
    d, m = rays[..., :3], rays[..., 3:]
    # a point along each ray projects back onto the patch centre
    uv, z = project(c2w[:, None, :3, 3] + 2.5 * d, c2w, k)
    rows, cols = torch.meshgrid(torch.arange(H // p), torch.arange(W // p), indexing="ij")
    centre = torch.stack([cols * p + p / 2, rows * p + p / 2], dim=-1).reshape(1, -1, 2).double()
    torch.testing.assert_close(uv, centre.expand_as(uv), rtol=0, atol=1e-9)
    assert (z > 0).all()
    # ‖d‖ = 1, d·(o×d) = 0 and the moment is the same for every point on the ray
    torch.testing.assert_close(torch.linalg.vector_norm(d, dim=-1), torch.ones(2, d.shape[1]).double())
    torch.testing.assert_close((d * m).sum(-1), torch.zeros(2, d.shape[1]).double(), rtol=0, atol=1e-12)
    far = c2w[:, None, :3, 3] + 3.0 * d
    torch.testing.assert_close(torch.linalg.cross(far, d, dim=-1), m, rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------------------------------------
# round trips and the renderer
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_unproject_then_project_recovers_pixels_and_depth(dtype: torch.dtype) -> None:
    c2w = t64(poses(4, seed=7)).to(dtype)
    k = intrinsics(W, H, FOV, dtype=dtype)
    k[0, 1] = 0.3  # a skewed K round-trips as well
    depth = torch.rand(4, H, W, generator=torch.Generator().manual_seed(1), dtype=dtype) * 5 + 0.3
    pts = unproject(depth, c2w, k)
    uv, z = project(pts, c2w, k)
    tol = 1e-9 if dtype == torch.float64 else 1e-4
    torch.testing.assert_close(uv, pixel_grid(H, W, dtype=dtype).expand_as(uv), rtol=0, atol=tol)
    torch.testing.assert_close(z, depth, rtol=tol, atol=0)
    if dtype == torch.float64:
        torch.testing.assert_close(z, depth, rtol=0, atol=1e-6)


def test_rendered_wall_unprojects_onto_its_plane_and_depth_is_z() -> None:
    """A camera facing a wall square-on: the rendered z-depth is the distance to the wall at every wall
    pixel, and the unprojected points lie on the wall's inner face."""
    r = room(0, n_furniture=0)
    x0, x1, z0, z1 = r.interior
    cam = pinhole(W, H, FOV, heading_pose((0.0, 1.2, 0.0), 0.0))  # looking along +Z at the north wall
    frame = render(r.scene, cam, dtype=np.float64)
    north = np.isclose(frame.depth, z1, atol=1e-9)
    assert north.sum() > 0.3 * H * W
    pts = unproject(t64(frame.depth[None]).nan_to_num(posinf=1.0), t64(cam.c2w[None]), t64(cam.K))[0]
    torch.testing.assert_close(pts[..., 2][t64(north).bool()], torch.full((int(north.sum()),), z1).double())
    x, y = pts[..., 0][t64(north).bool()], pts[..., 1][t64(north).bool()]
    assert bool(((x >= x0 - 1e-9) & (x <= x1 + 1e-9) & (y >= 0) & (y <= 2.5)).all())


def test_gradients_flow_through_unproject_and_project() -> None:
    c2w = t64(poses(1, seed=8))
    k = intrinsics(W, H, FOV)
    depth = (
        torch.rand(1, H, W, dtype=torch.float64, generator=torch.Generator().manual_seed(2)) + 1
    ).requires_grad_()
    pts = unproject(depth, c2w, k)
    uv, z = project(pts, c2w, k)
    z.sum().backward()
    torch.testing.assert_close(depth.grad, torch.ones_like(depth))  # z = D exactly, dz/dD = 1
    behind = torch.tensor([[[0.0, 0.0, -1.0]]], dtype=torch.float64, requires_grad=True)
    uv_b, _ = project(behind, torch.eye(4, dtype=torch.float64)[None], k)
    assert torch.isnan(uv_b).all()
    torch.where(torch.isnan(uv_b), 0.0, uv_b).sum().backward()
    assert torch.isfinite(behind.grad).all()


# ----------------------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------------------


def test_check_pose_accepts_rigid_and_completes_3x4() -> None:
    c2w = t64(poses(2, seed=9))
    torch.testing.assert_close(check_pose(c2w[:, :3]), c2w)
    assert check_pose(c2w.float()).dtype == torch.float32


@pytest.mark.parametrize(
    "bad",
    [
        torch.eye(4, dtype=torch.float64)[None] * 2.0,  # scaled rotation
        torch.diag(torch.tensor([1.0, 1.0, -1.0, 1.0], dtype=torch.float64))[None],  # reflection
        torch.full((1, 4, 4), math.nan, dtype=torch.float64),
        torch.tensor(
            [[[1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0.5, 0, 0, 1]]], dtype=torch.float64
        ),  # last row
        torch.eye(3, dtype=torch.float64)[None],
    ],
)
def test_bad_pose_names_pose(bad: torch.Tensor) -> None:
    with pytest.raises(ValueError, match="pose"):
        check_pose(bad)
    with pytest.raises(ValueError, match="pose"):
        unproject(torch.ones(1, H, W, dtype=torch.float64), bad, intrinsics(W, H, FOV))


def test_bad_input_types_and_shapes() -> None:
    k = intrinsics(W, H, FOV)
    c2w = torch.eye(4, dtype=torch.float64)[None]
    with pytest.raises(TypeError, match="pose"):
        check_pose(np.eye(4))
    with pytest.raises(TypeError, match="pose"):
        check_pose(torch.eye(4, dtype=torch.int64)[None])
    with pytest.raises(ValueError, match="pose"):
        unproject(torch.ones(1, H, W, dtype=torch.float64), torch.eye(4, dtype=torch.float64), k)
    with pytest.raises(ValueError, match="K"):
        check_intrinsics(torch.eye(3, dtype=torch.float64) * 0.0, 1)
    with pytest.raises(ValueError, match="K"):
        unproject(torch.ones(1, H, W, dtype=torch.float64), c2w, k.expand(2, 3, 3))
    with pytest.raises(ValueError, match="depth"):
        unproject(torch.ones(2, H, W, dtype=torch.float64), c2w, k)
    with pytest.raises(ValueError, match="points"):
        project(torch.ones(1, 5, 2, dtype=torch.float64), c2w, k)
    with pytest.raises(ValueError, match="fov_deg"):
        intrinsics(W, H, 180.0)


@pytest.mark.parametrize("value", [0.0, -1.0, math.inf, math.nan])
def test_non_positive_depth_names_depth(value: float) -> None:
    depth = torch.ones(1, H, W, dtype=torch.float64)
    depth[0, 3, 4] = value
    with pytest.raises(ValueError, match="depth"):
        unproject(depth, torch.eye(4, dtype=torch.float64)[None], intrinsics(W, H, FOV))


@pytest.mark.parametrize("patch", [3, 5, 32])
def test_patch_not_dividing_names_patch_size(patch: int) -> None:
    with pytest.raises(ValueError, match="patch_size"):
        plucker_patches(torch.eye(4, dtype=torch.float64)[None], intrinsics(W, H, FOV), H, W, patch)
    with pytest.raises(ValueError, match="patch_size"):
        plucker_patches(torch.eye(4, dtype=torch.float64)[None], intrinsics(W, H, FOV), H, W, 0)
