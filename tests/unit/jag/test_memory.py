"""The fixed-size 3D memory: exact voxel means, reproduction of a rendered room at its build pose (up to
voxel quantisation), the z-buffered splat, constant size over 200 frames, no gradient, FIFO order, bad
input."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
import torch

from neurips26.jag.geometry import intrinsics
from neurips26.jag.memory import FIFOPoints, VoxelMemory, splat
from neurips26.world import heading_pose, pinhole, render, room

H = W = 16
FOV = 70.0
LO, HI = (-2.5, 0.0, -2.0), (2.5, 2.5, 2.0)  # the interior of room(): 5 m x 4 m, walls 2.5 m high
DIAG = float(np.linalg.norm((np.array(HI) - np.array(LO)) / 16))  # voxel diagonal, 0.43 m
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
K = intrinsics(W, H, FOV, dtype=torch.float32)


@cache
def scene(seed: int, n_furniture: int):
    return room(seed, n_furniture=n_furniture).scene.pack(np.float32)


def frames(seeds, poses, n_furniture: int = 4):
    """Rendered clips as the chapter holds them: RGB (B, 3, H, W) in [−1, 1], z-depth (B, H, W) with 1 on
    background, valid (B, H, W), poses (B, 4, 4) float32."""
    rgb, depth, c2w = [], [], []
    for seed, pose in zip(seeds, poses, strict=True):
        cam = pinhole(W, H, FOV, pose)
        f = render(scene(seed, n_furniture), cam)
        rgb.append(f.rgb.transpose(2, 0, 1) * 2.0 - 1.0)
        depth.append(f.depth)
        c2w.append(cam.c2w)
    depth = torch.tensor(np.array(depth))
    valid = torch.isfinite(depth)
    return (
        torch.tensor(np.array(rgb)),
        torch.where(valid, depth, 1.0),
        valid,
        torch.tensor(np.array(c2w), dtype=torch.float32),
    )


def random_poses(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        heading_pose(
            (rng.uniform(-1.5, 1.5), 1.2 + rng.uniform(-0.3, 0.3), rng.uniform(-1.0, 1.0)),
            rng.uniform(0.0, 360.0),
            rng.uniform(-20.0, 10.0),
        )
        for _ in range(n)
    ]


# ----------------------------------------------------------------------------------------------------------
# accumulation
# ----------------------------------------------------------------------------------------------------------


def test_voxels_hold_exact_means_of_their_pixels() -> None:
    """Colour and position per voxel equal a NumPy group-by over the pixels' world points; points outside
    the bounds are dropped."""
    rgb, depth, valid, c2w = frames([0], random_poses(1, seed=3))
    lo, hi = (-2.5, 0.0, -2.0), (2.5, 1.0, 2.0)  # cut at 1 m height: the upper pixels fall outside
    mem = VoxelMemory((lo, hi), 1, 8, dtype=torch.float64)
    stored = mem.insert(rgb.double(), depth.double(), c2w.double(), intrinsics(W, H, FOV), valid)
    cam = pinhole(W, H, FOV, c2w[0].double().numpy())
    pts = cam.point_map(np.where(valid[0].numpy(), depth[0].numpy(), np.inf)).reshape(-1, 3)
    colours = rgb[0].double().numpy().reshape(3, -1).T
    cell = (np.array(hi) - np.array(lo)) / 8
    rel = (pts - np.array(lo)) / cell
    inside = np.isfinite(pts).all(1) & (rel >= -1e-3).all(1) & (rel <= 8 + 1e-3).all(1)
    assert 0 < inside.sum() < valid.sum()
    abc = np.clip(np.floor(rel[inside]), 0, 7).astype(int)
    flat = (abc[:, 0] * 8 + abc[:, 1]) * 8 + abc[:, 2]
    assert int(stored[0]) == inside.sum()
    counts = np.bincount(flat, minlength=512)
    np.testing.assert_array_equal(mem.counts[0].numpy(), counts)
    occ = counts > 0
    for k in range(3):
        mean_c = np.bincount(flat, colours[inside, k], minlength=512)[occ] / counts[occ]
        mean_p = np.bincount(flat, pts[inside, k], minlength=512)[occ] / counts[occ]
        np.testing.assert_allclose(mem.colors[0, occ, k].numpy(), mean_c, rtol=0, atol=1e-12)
        np.testing.assert_allclose(mem.points[0, occ, k].numpy(), mean_p, rtol=0, atol=1e-12)
    # every mean position lies in its own voxel (a convex cell holds the mean of its points), up to the
    # slack that admits surfaces lying on the bounds
    cen = mem.centers[0, occ].numpy()
    assert (np.abs(mem.points[0, occ].numpy() - cen) <= cell * (0.5 + 1e-3)).all()


def test_inserting_a_frame_twice_keeps_means_and_doubles_counts() -> None:
    rgb, depth, valid, c2w = frames([1, 2], random_poses(2, seed=4))
    mem = VoxelMemory((LO, HI), 2)
    mem.insert(rgb, depth, c2w, K, valid)
    colors, points, counts = mem.colors.clone(), mem.points.clone(), mem.counts.clone()
    once = mem.render(c2w, K, H, W)
    mem.insert(rgb, depth, c2w, K, valid)
    torch.testing.assert_close(mem.counts, 2 * counts)
    torch.testing.assert_close(mem.colors, colors)
    torch.testing.assert_close(mem.points, points)
    twice = mem.render(c2w, K, H, W)
    assert torch.equal(once[2], twice[2])
    torch.testing.assert_close(once[0], twice[0])


def test_clips_are_independent_also_with_per_clip_bounds() -> None:
    rgb, depth, valid, c2w = frames([3, 4], random_poses(2, seed=5))
    lo = np.array([LO, (-2.6, -0.1, -2.1)])
    hi = np.array([HI, (2.6, 2.6, 2.1)])
    both = VoxelMemory((lo, hi), 2, 12)
    both.insert(rgb, depth, c2w, K, valid)
    out = both.render(c2w.flip(0), K, H, W)  # each clip seen from the other clip's pose
    for b in range(2):
        one = VoxelMemory((lo[b], hi[b]), 1, 12)
        one.insert(rgb[b : b + 1], depth[b : b + 1], c2w[b : b + 1], K, valid[b : b + 1])
        single = one.render(c2w.flip(0)[b : b + 1], K, H, W)
        for got, want in zip(out, single, strict=True):
            torch.testing.assert_close(got[b : b + 1], want, rtol=0, atol=1e-6)


# ----------------------------------------------------------------------------------------------------------
# rendering at the build pose
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_render_at_build_pose_reproduces_rgb_and_depth(device: str) -> None:
    """Six rooms, each seen once and rendered back at the same pose.

    Tolerances from the quantisation: a pixel's own voxel holds its colour exactly unless the voxel
    straddles two surfaces, checker cells or shading faces, so most pixels are exact and the mean error is
    small; the depth of a pixel drawn by its own voxel errs by at most the voxel diagonal (the mean
    position and the pixel's point share the voxel, and a z-depth difference is at most the 3D distance).
    Only silhouette pixels, where a nearer voxel's 2x2 splat wins the z-buffer, break that bound.
    """
    rgb, depth, valid, c2w = frames(range(6), random_poses(6, seed=0))
    mem = VoxelMemory((LO, HI), 6, device=device)
    mem.insert(rgb.to(device), depth.to(device), c2w.to(device), K.to(device), valid.to(device))
    m_rgb, m_d, v = (t.cpu() for t in mem.render(c2w.to(device), K.to(device), H, W))
    assert m_rgb.shape == (6, 3, H, W) and m_d.shape == (6, H, W) and v.dtype == torch.bool
    on = v & valid
    assert on.sum() >= 0.8 * valid.sum()  # measured 0.88 with 16 rooms
    err = (m_rgb - rgb).abs().amax(1)[on]
    assert (err < 1e-5).float().mean() >= 0.75  # exact colour where a voxel sees one surface
    assert err.mean() <= 0.06  # measured 0.03 on the [−1, 1] scale
    derr = (m_d - depth).abs()[on]
    assert (derr <= DIAG).float().mean() >= 0.95  # measured 0.98
    assert (m_rgb[~v[:, None].expand_as(m_rgb)] == 0).all() and (m_d[~v] == 0).all()


def test_flat_wall_is_reproduced_exactly() -> None:
    """A wall seen square-on from 1.7 m fills the view: one colour, one z. Mean anchors lie on the wall, so
    the memory gives back its colour and depth exactly on every pixel it covers. At 32³ voxels (about one
    anchor per pixel here) the 2x2 splat covers every pixel; at 16³ a voxel spans 2 pixels across at this
    range and the splat leaves gaps (the memory is sparse at close range)."""
    seeds, poses = [], []
    for seed in range(3):
        side = "south" if room(seed, n_furniture=0).door_side == "north" else "north"
        z, yaw = (0.3, 0.0) if side == "north" else (-0.3, 180.0)
        seeds.append(seed)
        poses.append(heading_pose((0.0, 1.25, z), yaw))
    rgb, depth, valid, c2w = frames(seeds, poses, n_furniture=0)
    assert valid.all() and torch.allclose(depth, torch.full_like(depth, 1.7))
    for resolution, coverage in ((32, 1.0), (16, 0.6)):
        mem = VoxelMemory((LO, HI), 3, resolution)
        mem.insert(rgb, depth, c2w, K, valid)
        m_rgb, m_d, v = mem.render(c2w, K, H, W)
        assert v.float().mean() >= coverage
        torch.testing.assert_close(m_d[v], depth[v], rtol=0, atol=1e-5)
        torch.testing.assert_close(
            m_rgb.permute(0, 2, 3, 1)[v], rgb.permute(0, 2, 3, 1)[v], rtol=0, atol=1e-6
        )


def test_center_anchor_is_coarser_and_smaller() -> None:
    rgb, depth, valid, c2w = frames(range(4), random_poses(4, seed=1))
    mean, center = VoxelMemory((LO, HI), 4), VoxelMemory((LO, HI), 4, anchor="center")
    assert center.nbytes == 4 * 16**3 * 4 * 4 and mean.nbytes == 4 * 16**3 * 7 * 4
    errs = []
    for mem in (mean, center):
        mem.insert(rgb, depth, c2w, K, valid)
        _, m_d, v = mem.render(c2w, K, H, W)
        on = v & valid
        errs.append(((m_d - depth).abs()[on] / depth[on]).mean())
        assert ((m_d - depth).abs()[on] <= DIAG).float().mean() >= 0.85
    assert errs[0] < errs[1]


def test_fifo_one_pixel_splat_is_exact_at_build_pose() -> None:
    """Each stored point projects back onto its own pixel centre, so the 1-pixel splat is lossless."""
    rgb, depth, valid, c2w = frames(range(3), random_poses(3, seed=2))
    mem = FIFOPoints(3, H * W, splat_size=1)
    mem.insert(rgb, depth, c2w, K, valid)
    m_rgb, m_d, v = mem.render(c2w, K, H, W)
    assert torch.equal(v, valid)
    torch.testing.assert_close(m_rgb * valid[:, None], rgb * valid[:, None], rtol=0, atol=1e-6)
    torch.testing.assert_close(m_d[valid], depth[valid], rtol=1e-5, atol=0)


# ----------------------------------------------------------------------------------------------------------
# the splat
# ----------------------------------------------------------------------------------------------------------


def _camera_points(cam_xyz: list[tuple[float, float, float]]) -> torch.Tensor:
    """Camera-frame points at the identity pose are world points."""
    return torch.tensor([cam_xyz], dtype=torch.float64)


def test_splat_footprint_z_buffer_and_tie_break() -> None:
    k = intrinsics(W, H, FOV)
    f = float(k[0, 0])
    eye = torch.eye(4, dtype=torch.float64)[None]
    # a point projecting to (u, v) = (5.3, 7.8) at z = 2, a nearer one at the same place, a tie further on
    u, v, z = 5.3, 7.8, 2.0
    x, y = (u - 8.0) / f * z, (v - 8.0) / f * z
    pts = _camera_points([(x, y, z), (x / 2, y / 2, z / 2), (x, y, z)])
    cols = torch.tensor([[[1.0], [2.0], [3.0]]], dtype=torch.float64)
    only_far = torch.tensor([[True, False, False]])
    rgb, depth, valid = splat(pts, cols, only_far, eye, k, H, W)
    want = torch.zeros(H, W, dtype=torch.bool)
    want[7:9, 4:6] = True  # the 2x2 pixels whose centres (4.5 | 5.5, 7.5 | 8.5) are nearest (5.3, 7.8)
    assert torch.equal(valid[0], want)
    torch.testing.assert_close(depth[0][want], torch.full((4,), z, dtype=torch.float64))
    _, _, valid1 = splat(pts, cols, only_far, eye, k, H, W, size=1)
    assert valid1[0].nonzero().tolist() == [[7, 5]]
    rgb, depth, _ = splat(pts, cols, torch.ones(1, 3, dtype=torch.bool), eye, k, H, W)
    assert (rgb[0, 0][want] == 2.0).all() and torch.allclose(depth[0][want], torch.tensor(z / 2).double())
    rgb, _, _ = splat(pts, cols, torch.tensor([[True, False, True]]), eye, k, H, W)
    assert (rgb[0, 0][want] == 1.0).all()  # equal z: the lower index wins, every time


def test_points_behind_the_camera_are_not_drawn() -> None:
    k = intrinsics(W, H, FOV)
    eye = torch.eye(4, dtype=torch.float64)[None]
    # (−0.1, −0.1, −1) would land at the image centre if the sign of z were ignored
    pts = _camera_points([(-0.1, -0.1, -1.0), (0.0, 0.0, 0.0)])
    _, _, valid = splat(
        pts, torch.ones(1, 2, 3, dtype=torch.float64), torch.ones(1, 2, dtype=torch.bool), eye, k, H, W
    )
    assert not valid.any()
    # a memory built at a pose and seen from the same place turned around holds only points with z < 0
    pose = random_poses(1, seed=6)[0]
    back = heading_pose(pose[:3, 3], 0.0)
    front = heading_pose(pose[:3, 3], 180.0)
    rgb, depth, valid, c2w = frames([0], [front])
    for mem in (VoxelMemory((LO, HI), 1), FIFOPoints(1, 512)):
        mem.insert(rgb, depth, c2w, K, valid)
        assert mem.render(c2w, K, H, W)[2].any()
        _, m_d, v = mem.render(torch.tensor(back[None], dtype=torch.float32), K, H, W)
        assert not v.any() and (m_d == 0).all()


# ----------------------------------------------------------------------------------------------------------
# size, gradients, reset, FIFO order
# ----------------------------------------------------------------------------------------------------------


def test_size_is_constant_over_200_frames_of_a_moving_camera() -> None:
    n = 200
    t = np.arange(n)
    path = [
        heading_pose((0.9 * np.cos(a), 1.2 + 0.2 * np.sin(3 * a), 0.7 * np.sin(a)), yaw)
        for a, yaw in zip(2 * np.pi * t / n, 5.0 * t, strict=True)
    ]
    vox, fifo = VoxelMemory((LO, HI), 2), FIFOPoints(2, 1024)
    sizes = (vox.nbytes, fifo.nbytes)
    ptrs = [b.data_ptr() for m in (vox, fifo) for b in m._buffers()]
    for k in range(n):
        rgb, depth, valid, c2w = frames([0, 1], [path[k], path[(k + 50) % n]])
        vox.insert(rgb, depth, c2w, K, valid)
        fifo.insert(rgb, depth, c2w, K, valid)
        if k == 0:
            first = vox.occupied.sum(1)
    assert (
        (vox.nbytes, fifo.nbytes) == sizes == (2 * 16**3 * 7 * 4, 2 * 1024 * (3 + 3) * 4 + 2 * 1024 + 2 * 8)
    )
    assert [b.data_ptr() for m in (vox, fifo) for b in m._buffers()] == ptrs
    assert (vox.occupied.sum(1) > 3 * first).all() and (vox.occupied.sum(1) <= 16**3).all()
    assert (fifo.size == 1024).all()
    assert torch.isfinite(vox.colors).all() and torch.isfinite(vox.points).all()


def test_insert_builds_no_graph_and_leaves_inputs_alone() -> None:
    rgb, depth, valid, c2w = frames([0], random_poses(1, seed=7))
    rgb_g, depth_g, c2w_g = (
        rgb.clone().requires_grad_(),
        depth.clone().requires_grad_(),
        c2w.clone().requires_grad_(),
    )
    for mem in (VoxelMemory((LO, HI), 1), FIFOPoints(1, 256)):
        mem.insert(rgb_g * 1.0, depth_g * 1.0, c2w_g, K, valid)
        assert not any(b.requires_grad for b in mem._buffers())
        outs = mem.render(c2w_g, K, H, W)
        assert not any(o.requires_grad for o in outs)
    assert rgb_g.grad is None and torch.equal(rgb_g.detach(), rgb) and torch.equal(depth_g.detach(), depth)


def test_reset_empties_the_chosen_clips() -> None:
    rgb, depth, valid, c2w = frames([0, 1], random_poses(2, seed=8))
    for mem in (VoxelMemory((LO, HI), 2), FIFOPoints(2, 512)):
        mem.insert(rgb, depth, c2w, K, valid)
        before = mem.render(c2w, K, H, W)
        mem.reset(torch.tensor([True, False]))
        after = mem.render(c2w, K, H, W)
        assert not after[2][0].any() and torch.equal(after[2][1], before[2][1])
        torch.testing.assert_close(after[0][1], before[0][1])
        mem.reset()
        assert not mem.render(c2w, K, H, W)[2].any()


def test_fifo_keeps_the_most_recent_points() -> None:
    """Capacity 10: a 16-pixel frame keeps its last 10 pixels; 3 more then replace the 3 oldest."""
    k = intrinsics(4, 4, FOV, dtype=torch.float32)
    rgb = torch.arange(16, dtype=torch.float32).reshape(1, 1, 4, 4).expand(1, 3, 4, 4)
    depth = torch.ones(1, 4, 4)
    pose = torch.eye(4)[None]
    mem = FIFOPoints(1, 10)
    assert mem.insert(rgb, depth, pose, k).tolist() == [16]
    assert sorted(mem._rgb[0, :, 0].tolist()) == list(range(6, 16))
    valid = torch.zeros(1, 4, 4, dtype=torch.bool)
    valid[0, 0, :3] = True
    mem.insert(rgb + 100, depth, pose, k, valid)
    assert sorted(mem._rgb[0, :, 0].tolist()) == list(range(9, 16)) + [100, 101, 102]
    assert mem.size.tolist() == [10]


# ----------------------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bounds",
    [
        ((0, 0, 0), (1, 1, 0)),  # empty along z
        ((0, 0, 0), (1, -1, 1)),
        ((0, 0, 0), (1, 1, float("nan"))),
        ((0, 0), (1, 1)),
        (np.zeros((3, 3)), np.ones((3, 3))),  # batch is 2
    ],
)
def test_bad_bounds_name_bounds(bounds) -> None:
    with pytest.raises(ValueError, match="bounds"):
        VoxelMemory(bounds, 2)


def test_bad_arguments() -> None:
    rgb, depth, valid, c2w = frames([0], random_poses(1, seed=9))
    mem = VoxelMemory((LO, HI), 1)
    with pytest.raises(TypeError, match="bounds"):
        VoxelMemory(np.zeros(6), 1)
    with pytest.raises(ValueError, match="resolution"):
        VoxelMemory((LO, HI), 1, 0)
    with pytest.raises(ValueError, match="anchor"):
        VoxelMemory((LO, HI), 1, anchor="corner")
    with pytest.raises(ValueError, match="splat_size"):
        VoxelMemory((LO, HI), 1, splat_size=3)
    with pytest.raises(ValueError, match="capacity"):
        FIFOPoints(1, 0)
    with pytest.raises(ValueError, match="rgb"):
        mem.insert(rgb[:, :2], depth, c2w, K, valid)
    with pytest.raises(ValueError, match="depth"):
        mem.insert(rgb, depth[:, :8], c2w, K, valid)
    bad = depth.clone()
    bad[0, 0, 0] = 0.0
    with pytest.raises(ValueError, match="depth"):
        mem.insert(rgb, bad, c2w, K)
    bad[0, 0, 0] = -2.0
    ok = valid.clone()
    ok[0, 0, 0] = False
    mem.insert(rgb, bad, c2w, K, ok)  # a non-positive depth on an invalid pixel is ignored
    with pytest.raises(ValueError, match="valid"):
        mem.insert(rgb, depth, c2w, K, valid.float())
    skew = c2w.clone()
    skew[0, 0, 1] += 0.1
    with pytest.raises(ValueError, match="pose"):
        mem.insert(rgb, depth, skew, K, valid)
    with pytest.raises(ValueError, match="pose"):
        mem.render(skew, K, H, W)
    with pytest.raises(ValueError, match="pose"):
        mem.render(c2w.expand(2, 4, 4), K, H, W)
    with pytest.raises(ValueError, match="clips"):
        mem.reset(torch.tensor([True, True]))
    with pytest.raises(ValueError, match="size"):
        splat(
            torch.zeros(1, 1, 3),
            torch.zeros(1, 1, 3),
            torch.ones(1, 1, dtype=torch.bool),
            c2w,
            K,
            H,
            W,
            size=3,
        )
