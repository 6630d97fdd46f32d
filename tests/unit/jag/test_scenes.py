"""Tests of the chapter's clips: z-depth and occlusion by hand, the door gap, layout, seeds, loops, splits."""

import math

import numpy as np
import pytest
import torch

from neurips26.jag.paths import CLEARANCE, KINDS, clearance, revisit_pairs
from neurips26.jag.scenes import (
    FAR_DEPTH,
    SPLITS,
    WALL_HEIGHT,
    ClipBatch,
    DataConfig,
    load_split,
    make_clip,
    make_dataset,
    make_room,
    make_split,
    render_views,
    room_bounds,
    split_seed,
)
from neurips26.world import Scene, box_from_bounds, heading_pose, pinhole, render

CAMERA = pinhole(16, 16, 70.0)


def _hand_depth(pose: np.ndarray, plane_z: float) -> np.ndarray:
    """z-depth of each pixel's hit with the plane ``Z = plane_z``: the ray ``c + s R (x, y, 1)`` meets it at
    ``s = (plane_z - c_z) / (R (x, y, 1))_z``, and ``s`` is the camera-frame z of the hit."""
    u, v = np.meshgrid(np.arange(16) + 0.5, np.arange(16) + 0.5)
    ray = np.stack([(u - CAMERA.cx) / CAMERA.fx, (v - CAMERA.cy) / CAMERA.fy, np.ones_like(u)], axis=-1)
    return (plane_z - pose[2, 3]) / (ray @ pose[:3, :3].T)[..., 2]


def test_wall_z_depth_is_the_distance_along_the_optical_axis():
    d = 2.5
    scene = Scene((box_from_bounds((-20.0, -20.0, d), (20.0, 20.0, d + 0.1), instance_id=1),), ground=None)
    facing = heading_pose((0.3, 1.2, 0.0), 0.0)
    views = render_views(scene, CAMERA, facing[None])
    assert views.valid.all()
    torch.testing.assert_close(views.depth, torch.full((1, 1, 16, 16), d), rtol=1e-6, atol=0.0)  # not the ray
    turned = heading_pose((0.3, 1.2, 0.4), 25.0, -10.0)
    got = render_views(scene, CAMERA, turned[None]).depth[0, 0].double().numpy()
    np.testing.assert_allclose(got, _hand_depth(turned, d), rtol=2e-6)
    # in a generated room: the north wall (Z = z1) seen from a free point, looking north
    r = make_room(3, 4)
    x0, x1, z0, z1 = r.interior
    grid = np.stack(np.meshgrid(np.linspace(x0, x1, 21), np.linspace(z0, z1 - 1.0, 21)), -1).reshape(-1, 2)
    xz = grid[np.argmax(clearance(r, grid))]
    assert clearance(r, xz[None])[0] >= CLEARANCE
    pose = heading_pose((xz[0], 1.3, xz[1]), 0.0)
    views = render_views(r.scene, CAMERA, pose[None], room_bounds(r))
    north = [b.instance_id for b in r.scene.boxes if b.semantic == "wall" and b.center[2] > z1]
    on_wall = np.isin(views.instance[0, 0].numpy(), north)
    assert on_wall.sum() >= 20
    np.testing.assert_allclose(views.depth[0, 0].numpy()[on_wall], z1 - xz[1], rtol=2e-6)
    assert views.valid[0, 0].numpy()[on_wall].all()


def test_a_nearer_box_occludes_a_farther_one_in_either_order():
    far = box_from_bounds((-3.0, -3.0, 4.0), (3.0, 3.0, 4.5), color=(0.9, 0.1, 0.1), instance_id=1)
    near = box_from_bounds((-0.3, -0.3, 2.0), (0.3, 0.3, 2.2), color=(0.1, 0.1, 0.9), instance_id=2)
    pose = heading_pose((0.0, 0.0, 0.0), 0.0)[None]
    a = render_views(Scene((far, near), ground=None), CAMERA, pose)
    b = render_views(Scene((near, far), ground=None), CAMERA, pose)
    for name in ("rgb", "depth", "valid", "instance"):
        assert torch.equal(getattr(a, name), getattr(b, name))
    ids, depth = a.instance[0, 0], a.depth[0, 0]
    centre = (slice(7, 9), slice(7, 9))
    assert (ids[centre] == 2).all() and torch.allclose(depth[centre], torch.tensor(2.0))
    assert ids[0, 0] == 1 and depth[0, 0] == pytest.approx(4.0, rel=1e-6)
    assert set(ids.unique().tolist()) == {1, 2}
    # the near box's pixels: exactly the rays through its front face (|x|, |y| <= 0.3 at z = 2)
    u = (np.arange(16) + 0.5 - CAMERA.cx) / CAMERA.fx
    inside = np.abs(2.0 * u) <= 0.3
    np.testing.assert_array_equal(ids.numpy() == 2, inside[:, None] & inside[None, :])
    assert not torch.allclose(a.rgb[0, :, 0, 0], a.rgb[0, :, 8, 8])  # red behind, blue in front


def test_rays_through_the_door_gap_are_clamped_far_and_invalid():
    tested = 0
    for seed in range(20):
        r = make_room(seed, 3)
        (dx, dz), side = r.door_center, r.door_side
        outward = {"north": (0.0, 1.0), "south": (0.0, -1.0), "east": (1.0, 0.0), "west": (-1.0, 0.0)}[side]
        eye = (dx - 1.6 * outward[0], 1.0, dz - 1.6 * outward[1])  # 1.6 m inside, facing the door
        if clearance(r, np.array([[eye[0], eye[2]]]))[0] < CLEARANCE or tested == 3:
            continue
        tested += 1
        pose = heading_pose(eye, math.degrees(math.atan2(*outward)))
        views = render_views(r.scene, CAMERA, pose[None], room_bounds(r))
        valid, depth = views.valid[0, 0], views.depth[0, 0]
        assert not valid[6:10, 6:10].any() and (depth[6:10, 6:10] == FAR_DEPTH).all()
        assert valid.sum() >= 30 and (depth[valid] < FAR_DEPTH).all()
        # invalid exactly where the renderer sees nothing, or a hit outside the room's box
        frame = render(r.scene, CAMERA.with_pose(pose), dtype=np.float64)
        lo, hi = room_bounds(r)
        pts = frame.points()
        inside = np.all((pts >= lo - 1e-3) & (pts <= hi + 1e-3), axis=-1)  # NaN (no hit) compares False
        np.testing.assert_array_equal(valid.numpy(), inside)
        np.testing.assert_allclose(depth.numpy()[inside], frame.depth[inside], rtol=1e-5)
    assert tested == 3


def test_a_clip_has_the_documented_layout_and_matches_a_direct_render():
    clip = make_clip(4, 6, "yaw_sweep", n_furniture=5)
    assert clip.kind == "yaw_sweep" and clip.seed == 4 and clip.frames == 6
    assert clip.rgb.shape == (6, 3, 16, 16) and clip.rgb.dtype == torch.float32
    assert clip.log_depth.shape == (6, 1, 16, 16) and clip.log_depth.dtype == torch.float32
    assert clip.valid.shape == (6, 1, 16, 16) and clip.valid.dtype == torch.bool
    assert clip.poses.shape == (6, 4, 4) and clip.poses.dtype == torch.float64
    assert clip.rgb.min() >= -1.0 and clip.rgb.max() <= 1.0
    lo, hi = (b.numpy() for b in clip.bounds)
    np.testing.assert_array_equal(lo, (-2.5, 0.0, -2.0))
    np.testing.assert_array_equal(hi, (2.5, WALL_HEIGHT, 2.0))
    np.testing.assert_array_equal(clip.K.numpy(), CAMERA.K)
    depth = clip.depth[clip.valid]
    assert depth.min() > 0.05 and depth.max() < np.linalg.norm(hi - lo)
    assert (clip.log_depth[~clip.valid] == np.float32(math.log(FAR_DEPTH))).all()
    assert clip.valid.float().mean() > 0.8  # the ceiling closes the room: only the door lets rays out
    r = make_room(4, 5)
    frame = render(r.scene, CAMERA.with_pose(clip.poses[2].numpy()))
    np.testing.assert_allclose(clip.rgb[2].permute(1, 2, 0).numpy(), 2 * frame.rgb - 1, atol=1e-6)
    ok = clip.valid[2, 0].numpy()
    np.testing.assert_allclose(clip.log_depth[2, 0].numpy()[ok], np.log(frame.depth[ok]), atol=1e-6)


def test_clips_are_deterministic_and_loops_revisit_their_frames():
    a, b = make_clip(11, 5, size=8), make_clip(11, 5, size=8)
    for name in ("rgb", "log_depth", "valid", "poses", "K"):
        assert torch.equal(getattr(a, name), getattr(b, name))
    assert a.kind == b.kind and a.kind in KINDS
    assert not torch.equal(make_clip(12, 5, size=8).rgb, a.rgb)
    loop = make_clip(2, 12, "out_and_back", size=8)
    assert torch.equal(loop.poses[-1], loop.poses[0]) and torch.equal(loop.rgb[-1], loop.rgb[0])
    pairs = revisit_pairs(loop.poses, 4)
    assert len(pairs) == 3
    for k, k2 in pairs:  # the same pose renders the same frame
        assert torch.equal(loop.rgb[k], loop.rgb[k2]) and torch.equal(loop.log_depth[k], loop.log_depth[k2])


def test_a_dataset_stacks_its_clips_with_the_asked_share_of_loops():
    data = make_dataset(6, 4, seed=100, size=8)
    assert len(data) == 6 and data.frames == 4
    assert data.rgb.shape == (6, 4, 3, 8, 8) and data.valid.shape == (6, 4, 1, 8, 8)
    assert data.poses.shape == (6, 4, 4, 4) and data.poses.dtype == torch.float64
    assert int(data.loops.sum()) == 3 and data.seeds == tuple(range(100, 106))
    one = data.clip(4)
    again = make_clip(104, 4, data.kinds[4], size=8)
    assert torch.equal(one.rgb, again.rgb) and torch.equal(one.poses, again.poses) and one.kind == again.kind
    assert data.head(2).rgb.shape[0] == 2 and data.to("cpu").kinds == data.kinds
    picked = data.select(torch.tensor([4, 1]))
    assert (
        torch.equal(picked.rgb[0], one.rgb)
        and picked.seeds == (104, 101)
        and picked.kinds[1] == data.kinds[1]
    )
    with pytest.raises(ValueError, match="index"):
        data.select([6])
    assert make_dataset(4, 3, 0, loop_share=1.0, size=8).loops.all()
    assert not make_dataset(4, 3, 0, loop_share=0.0, size=8).loops.any()
    with pytest.raises(ValueError, match="shape"):
        ClipBatch.stack([make_clip(0, 3, size=8), make_clip(1, 4, size=8)])


def test_data_config_scales_disjoint_splits_and_the_cache(monkeypatch, tmp_path, capsys):
    smoke, default = DataConfig.for_scale("smoke"), DataConfig.for_scale("default")
    assert (smoke.train_clips, smoke.train_frames, smoke.eval_clips, smoke.eval_frames) == (8, 12, 8, 12)
    assert (default.train_clips, default.train_frames, default.eval_clips, default.eval_frames) == (
        1024,
        12,
        32,
        32,
    )
    seeds = {name: split_seed(name, default) for name in SPLITS}
    train = set(range(seeds["train"], seeds["train"] + default.train_clips))
    held_out = set(range(seeds["evaluation"], seeds["evaluation"] + default.eval_clips))
    assert not train & held_out
    tiny = DataConfig(train_clips=2, train_frames=3, eval_clips=2, eval_frames=5, size=8, seed=1)
    evaluation = make_split("evaluation", tiny)
    assert evaluation.loops.all() and evaluation.frames == 5 and evaluation.seeds[0] == 3_000_000
    monkeypatch.setenv("NEURIPS26_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("NEURIPS26_NO_CACHE", raising=False)
    first = load_split("train", tiny)
    assert "computing" in capsys.readouterr().out
    second = load_split("train", tiny)
    assert "loaded" in capsys.readouterr().out
    assert (
        torch.equal(first.rgb, second.rgb)
        and first.kinds == second.kinds
        and first.seeds == (2_000_000, 2_000_001)
    )


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="frames"):
        make_clip(0, 1)
    with pytest.raises(ValueError, match="n_furniture"):
        make_clip(0, 3, n_furniture=7)
    with pytest.raises(ValueError, match="kind"):
        make_clip(0, 3, "zoom")
    with pytest.raises(ValueError, match="size"):
        make_clip(0, 3, size=0)
    with pytest.raises(ValueError, match="seed"):
        make_clip(-1, 3)
    with pytest.raises(ValueError, match="loop_share"):
        make_dataset(2, 3, 0, loop_share=1.5)
    with pytest.raises(ValueError, match="bounds"):
        render_views(Scene(), CAMERA, np.eye(4)[None], (np.zeros(3), np.array([1.0, 0.0, 1.0])))
    with pytest.raises(ValueError, match="poses"):
        render_views(Scene(), CAMERA, np.eye(4))
    with pytest.raises(ValueError, match="train_clips"):
        DataConfig(train_clips=0)
    with pytest.raises(ValueError, match="name"):
        make_split("test", DataConfig(train_clips=1, eval_clips=1))


def test_clip_room_is_the_room_a_drawn_clip_renders():
    from neurips26.jag import scenes

    clip = scenes.make_clip(123, 3)
    r = scenes.clip_room(123)
    views = scenes.render_views(r.scene, pinhole(16, 16, 70.0), clip.poses.numpy(), scenes.room_bounds(r))
    assert torch.equal(views.rgb, clip.rgb)
