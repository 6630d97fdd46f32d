"""Scene generation and rendering: exact depth against analytic ray casts, id/depth consistency, the world
frame of the first camera, layout invariants, determinism, caching and argument checks."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.spatialclaw import scenes
from neurips26.spatialclaw.scene_types import CATEGORIES, ORIENTED, SceneObject, SpatialScene
from neurips26.spatialclaw.scenes import (
    FLOOR_ID,
    WALL_IDS,
    camera,
    frames_for,
    make_scene,
    object_pixels,
    pixel_counts,
    render_frames,
    visible_frames,
)
from neurips26.world import AMBIENT, PALETTE


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NEURIPS26_CACHE_DIR", str(tmp_path))


def _first_pose(height: float = 1.5) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, 0], pose[:3, 1], pose[:3, 2], pose[:3, 3] = (1, 0, 0), (0, -1, 0), (0, 0, -1), (0, height, 0)
    return pose


def _hand_scene(*objects: SceneObject) -> SpatialScene:
    """One camera at (0, 1.5, 0) looking along -Z into a large room."""
    cam = scenes.pinhole(128, 96, scenes.FOV_DEG)
    return SpatialScene(
        seed=0,
        kind="multiview",
        objects=objects,
        poses=_first_pose()[None],
        intrinsics=(cam.fx, cam.fy, cam.cx, cam.cy),
        width=128,
        height=96,
        fps=1.0,
        room=(-6.0, 6.0, -12.0, 2.0),
    )


BOX = SceneObject(1, "box", "red", "box", (0.3, 0.25, -3.0), (0.5, 0.5, 0.5))
BALL = SceneObject(2, "ball", "blue", "sphere", (0.0, 0.2, -2.4), (0.4, 0.4, 0.4))
LAMP = SceneObject(3, "lamp", "white", "cylinder", (-0.8, 0.75, -3.5), (0.3, 1.5, 0.3))


def _unit_rays(cam) -> tuple[np.ndarray, np.ndarray]:
    origins, directions = cam.rays(np.float64, unit=True)
    return origins.reshape(-1, 3), directions.reshape(-1, 3)


def _slab_t(o: np.ndarray, d: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Distance along unit rays to an axis-aligned box (inf = miss), written independently of the renderer."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (lo - o) / d, (hi - o) / d
    near = np.nanmax(np.minimum(t1, t2), axis=1)
    far = np.nanmin(np.maximum(t1, t2), axis=1)
    return np.where((near <= far) & (near > 0), near, np.inf)


def _sphere_t(o: np.ndarray, d: np.ndarray, c: np.ndarray, r: float) -> np.ndarray:
    oc = o - c
    b = np.einsum("pi,pi->p", d, oc)
    disc = b * b - (np.einsum("pi,pi->p", oc, oc) - r * r)
    with np.errstate(invalid="ignore"):
        t = -b - np.sqrt(disc)
    return np.where((disc >= 0) & (t > 0), t, np.inf)


def _z_depth(cam, d: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Ray distance to z-depth: the component along the optical axis."""
    return t * (d @ cam.forward)


def test_box_and_sphere_depth_equal_analytic_ray_casts():
    scene = _hand_scene(BOX, BALL)
    frames = render_frames(scene)
    cam = camera(scene, 0)
    o, d = _unit_rays(cam)
    ids, depth = frames.ids[0].reshape(-1), frames.depth[0].reshape(-1).astype(float)
    lo, hi = np.asarray(BOX.center) - 0.25, np.asarray(BOX.center) + 0.25
    for obj, t in ((BOX, _slab_t(o, d, lo, hi)), (BALL, _sphere_t(o, d, np.asarray(BALL.center), 0.2))):
        mine = ids == obj.instance_id
        assert mine.sum() > 50
        np.testing.assert_allclose(depth[mine], _z_depth(cam, d[mine], t[mine]), rtol=1e-6)
    # the front face of the box is the plane z = -2.75: every pixel showing it has z-depth exactly 2.75
    front = (ids == BOX.instance_id) & np.isclose(o[:, 2] + _slab_t(o, d, lo, hi) * d[:, 2], -2.75)
    assert front.sum() > 20
    np.testing.assert_allclose(depth[front], 2.75, rtol=1e-6)


def test_cylinder_pixels_lie_on_its_surface():
    scene = _hand_scene(LAMP)
    frames = render_frames(scene)
    pts = camera(scene, 0).point_map(frames.depth[0].astype(float))[frames.ids[0] == LAMP.instance_id]
    assert len(pts) > 50
    radial = np.hypot(pts[:, 0] - LAMP.center[0], pts[:, 2] - LAMP.center[2])
    on_side = np.isclose(radial, 0.15, atol=1e-4) & (pts[:, 1] >= -1e-4) & (pts[:, 1] <= 1.5 + 1e-4)
    on_top = np.isclose(pts[:, 1], 1.5, atol=1e-4) & (radial <= 0.15 + 1e-4)
    assert np.all(on_side | on_top)


def test_ids_follow_the_nearest_surface():
    ball = SceneObject(2, "ball", "blue", "sphere", (0.2, 0.2, -2.4), (0.4, 0.4, 0.4))  # in front of the box
    scene = _hand_scene(BOX, ball)
    frames = render_frames(scene)
    cam = camera(scene, 0)
    o, d = _unit_rays(cam)
    lo, hi = np.asarray(BOX.center) - 0.25, np.asarray(BOX.center) + 0.25
    t_box, t_ball = _slab_t(o, d, lo, hi), _sphere_t(o, d, np.asarray(ball.center), 0.2)
    both = np.isfinite(t_box) & np.isfinite(t_ball)
    assert both.sum() > 20  # the ball really occludes part of the box
    hit = np.isfinite(t_box) | np.isfinite(t_ball)
    want = np.where(t_ball < t_box, ball.instance_id, BOX.instance_id)
    np.testing.assert_array_equal(frames.ids[0].reshape(-1)[hit], want[hit])
    assert not np.isin(frames.ids[0].reshape(-1)[~hit], [BOX.instance_id, ball.instance_id]).any()


@pytest.mark.parametrize(("seed", "kind"), [(0, "video"), (3, "video"), (1, "multiview"), (5, "multiview")])
def test_first_camera_defines_the_world_frame(seed, kind):
    scene = make_scene(seed, kind)
    pose = scene.poses[0]
    np.testing.assert_array_equal(pose[:3, 0], (1.0, 0.0, 0.0))  # right = +X
    np.testing.assert_array_equal(pose[:3, 1], (0.0, -1.0, 0.0))  # down = -Y
    np.testing.assert_array_equal(pose[:3, 2], (0.0, 0.0, -1.0))  # forward = -Z
    assert pose[0, 3] == 0.0 and pose[2, 3] == 0.0 and 1.4 <= pose[1, 3] <= 1.6
    for f in range(scene.num_frames):
        assert 1.3 <= scene.poses[f, 1, 3] <= 1.7  # eye height above the floor
        assert abs(scene.poses[f, 1, 0]) < 1e-12  # no roll: the right axis stays horizontal


def test_floor_is_at_y_zero_and_objects_stand_on_it():
    scene = make_scene(2)
    frames = render_frames(scene)
    for f in (0, scene.num_frames - 1):
        floor = frames.ids[f] == FLOOR_ID
        assert floor.sum() > 500
        pts = camera(scene, f).point_map(frames.depth[f].astype(float))[floor]
        np.testing.assert_allclose(pts[:, 1], 0.0, atol=1e-4)
    for o in scene.objects:
        assert o.center[1] == pytest.approx(o.size[1] / 2)
    assert set(np.unique(frames.ids)) <= {-1, FLOOR_ID, *WALL_IDS, *(o.instance_id for o in scene.objects)}
    assert frames.structure_ids == (FLOOR_ID, *WALL_IDS)


def test_chairs_show_their_facing():
    """The backrest sits on the back side, so the facing can be read from the pixels (its upper points lie
    behind its centre)."""
    for seed in range(40):
        scene = make_scene(seed)
        chairs = [o for o in scene.objects if o.category in ("chair", "sofa")]
        if chairs:
            break
    frames = render_frames(scene)
    checked = 0
    for o in chairs:
        for f in visible_frames(frames, o.instance_id, min_pixels=60):
            pts = camera(scene, f).point_map(frames.depth[f].astype(float))[frames.ids[f] == o.instance_id]
            upper = pts[pts[:, 1] > 0.6 * o.size[1]]
            if len(upper) >= 10:
                assert float((upper.mean(axis=0) - np.asarray(o.center)) @ o.front) < 0
                checked += 1
    assert checked > 0


def _footprint_rect(o: SceneObject, frame: int) -> tuple[float, float, float, float]:
    fx, fz = (o.size[2], o.size[0]) if int(o.yaw_deg) % 180 == 90 else (o.size[0], o.size[2])
    c = o.center_at(frame)
    return (c[0] - fx / 2, c[0] + fx / 2, c[2] - fz / 2, c[2] + fz / 2)


@pytest.mark.parametrize("seed", range(6))
def test_layout_invariants(seed):
    for scene in (make_scene(seed), make_scene(seed, "multiview"), make_scene(seed, mover=True)):
        objs = scene.objects
        assert 4 <= len(objs) <= 8
        assert len({o.name for o in objs}) == len(objs)
        assert sorted(o.instance_id for o in objs) == list(range(1, len(objs) + 1))
        x0, x1, z0, z1 = scene.room
        for o in objs:
            assert o.shape == CATEGORIES[o.category] and o.colour in PALETTE
            assert o.yaw_deg % 90 == 0 and (o.category in ORIENTED or o.yaw_deg == 0)
            for f in range(scene.num_frames):
                r = _footprint_rect(o, f)
                assert x0 <= r[0] and r[1] <= x1 and z0 <= r[2] and r[3] <= z1
        for f in range(scene.num_frames):
            for a in objs:
                for b in objs:
                    if a.instance_id < b.instance_id:
                        ra, rb = _footprint_rect(a, f), _footprint_rect(b, f)
                        assert ra[1] <= rb[0] or rb[1] <= ra[0] or ra[3] <= rb[2] or rb[3] <= ra[2]
        for pose in scene.poses:  # no camera stands inside an object
            for o in objs:
                r = _footprint_rect(o, 0)
                assert not (r[0] <= pose[0, 3] <= r[1] and r[2] <= pose[2, 3] <= r[3])


def test_sizes_follow_their_category():
    for seed in range(10):
        for o in make_scene(seed).objects:
            w, h, d = o.size
            if o.category == "ball":
                assert w == h == d and 0.3 <= w <= 0.5
            elif o.category == "box":
                assert w == h == d and 0.4 <= w <= 0.6
            elif o.category == "lamp":
                assert w == d and 1.4 <= h <= 1.6
            elif o.category == "chair":
                assert 0.85 <= h <= 0.95


def test_kinds_frames_and_mover():
    video = make_scene(4)
    assert video.num_frames == 16 and video.fps == 8.0 and video.kind == "video"
    assert make_scene(4, num_frames=9).num_frames == 9
    mv = make_scene(4, "multiview")
    assert 2 <= mv.num_frames <= 4 and mv.fps == 1.0
    assert make_scene(4, "multiview", num_frames=3).num_frames == 3
    assert not any(o.moving for o in video.objects)
    moving = [o for o in make_scene(4, mover=True).objects if o.moving]
    assert len(moving) == 1 and moving[0].category in ("ball", "box")
    track = np.asarray(moving[0].track)
    assert track.shape == (16, 3)
    steps = np.diff(track, axis=0)
    np.testing.assert_allclose(steps, np.broadcast_to(steps[0], steps.shape), atol=1e-12)  # straight, steady
    assert (
        np.all(track[:, 1] == track[0, 1])
        and 1.0 - 1e-9 <= np.linalg.norm(track[-1] - track[0]) <= 2.0 + 1e-9
    )
    np.testing.assert_array_equal(track[0], moving[0].center)


def test_video_camera_moves_and_turns():
    for seed in range(5):
        poses = make_scene(seed).poses
        assert np.linalg.norm(poses[-1, :3, 3] - poses[0, :3, 3]) > 0.3
        headings = np.degrees(np.arctan2(poses[:, 0, 2], poses[:, 2, 2]))
        assert np.ptp(np.unwrap(headings, period=360)) >= 10.0
        assert np.all(np.linalg.norm(np.diff(poses[:, :3, 3], axis=0), axis=1) < 0.5)  # smooth


def test_determinism_and_count_override():
    a = make_scene(7, mover=True)
    scenes._make_scene.cache_clear()
    b = make_scene(7, mover=True)
    assert a is not b and a.objects == b.objects and a.room == b.room
    np.testing.assert_array_equal(a.poses, b.poses)
    fa, fb = render_frames(a), render_frames(b)
    for name in ("rgb", "depth", "ids"):
        np.testing.assert_array_equal(getattr(fa, name), getattr(fb, name))
    same = make_scene(7, mover=True, n_objects=len(a.objects))
    assert same.objects == a.objects
    assert len(make_scene(7, n_objects=4).objects) == 4 and len(make_scene(7, n_objects=8).objects) == 8
    assert make_scene(8).objects != a.objects


def test_frames_shapes_cache_and_visibility_helpers(tmp_path):
    scene = make_scene(9)
    frames = frames_for(scene)
    assert frames.rgb.shape == (16, 96, 128, 3) and frames.rgb.dtype == np.uint8
    assert frames.depth.dtype == np.float32 and frames.ids.dtype == np.int32
    assert frames_for(scene) is frames  # in-memory memo
    assert not frames.rgb.flags.writeable
    assert list(tmp_path.glob("spatialclaw-frames-*.pkl"))  # and on disk
    scenes._MEMO.clear()
    again = frames_for(scene)
    np.testing.assert_array_equal(again.ids, frames.ids)
    counts = pixel_counts(scene, frames)
    assert counts.shape == (16, len(scene.objects))
    o = scene.objects[0]
    assert object_pixels(frames, 3, o.instance_id) == counts[3, 0]
    assert visible_frames(frames, o.instance_id) == tuple(int(f) for f in np.flatnonzero(counts[:, 0] >= 20))
    with pytest.raises(IndexError, match="frame"):
        object_pixels(frames, 16, 1)


def test_render_shading_uses_the_palette():
    frames = render_frames(_hand_scene(BOX))
    pixels = frames.rgb[0][frames.ids[0] == BOX.instance_id].astype(float) / 255
    red = np.asarray(PALETTE["red"])
    ratios = pixels / red
    assert np.all(ratios <= 1.0 + 1e-2) and np.all(ratios >= AMBIENT - 1e-2)


@pytest.mark.parametrize(
    ("kwargs", "exc", "name"),
    [
        ({"seed": -1}, ValueError, "seed"),
        ({"seed": 1.5}, TypeError, "seed"),
        ({"seed": 0, "kind": "panorama"}, ValueError, "kind"),
        ({"seed": 0, "n_objects": 3}, ValueError, "n_objects"),
        ({"seed": 0, "n_objects": 9}, ValueError, "n_objects"),
        ({"seed": 0, "mover": 1}, TypeError, "mover"),
        ({"seed": 0, "kind": "multiview", "mover": True}, ValueError, "mover"),
        ({"seed": 0, "kind": "multiview", "num_frames": 5}, ValueError, "num_frames"),
        ({"seed": 0, "num_frames": 1}, ValueError, "num_frames"),
        ({"seed": 0, "width": 0}, ValueError, "width"),
    ],
)
def test_bad_arguments_name_themselves(kwargs, exc, name):
    with pytest.raises(exc, match=name):
        make_scene(**kwargs)


def test_render_and_cache_reject_non_scenes():
    with pytest.raises(TypeError, match="scene"):
        render_frames("scene")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="scene"):
        frames_for(None)  # type: ignore[arg-type]
    with pytest.raises(IndexError, match="frame"):
        camera(make_scene(0), 16)
