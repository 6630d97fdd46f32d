"""Renderer: analytic depth and silhouettes, agreement with a brute-force ray caster, exact surfaces."""

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from neurips26.world import (
    BACKGROUND_ID,
    Box,
    GroundPlane,
    Scene,
    box_from_bounds,
    boxes_in_view,
    cast_rays,
    look_at,
    occupancy_map,
    orbit,
    oriented_box,
    orthographic,
    pinhole,
    random_smooth,
    render,
    voxel_scene,
)


def _random_scene(seed: int, n: int = 7, ground: bool = True) -> Scene:
    rng = np.random.default_rng(seed)
    boxes = tuple(
        Box(
            tuple(rng.uniform(-1.5, 1.5, 3) + (0.0, 1.6, 0.0)),
            tuple(rng.uniform(0.15, 0.7, 3)),
            Rotation.random(random_state=seed * 100 + k).as_matrix(),
            color=tuple(rng.uniform(0.0, 1.0, 3)),
            instance_id=k + 1,
        )
        for k in range(n)
    )
    return Scene(boxes, GroundPlane(checker=0.5) if ground else None)


def _reference(scene: Scene, origin: np.ndarray, direction: np.ndarray) -> tuple[float, int]:
    """Scalar Kay-Kajiya slab test over every primitive: nearest ``t > 0`` and its id (-1: none)."""
    best_t, best_id = math.inf, BACKGROUND_ID
    for b in scene.boxes:
        r = b.rotation_matrix
        o, d = r.T @ (origin - b.center), r.T @ direction
        t0, t1 = -math.inf, math.inf
        for k in range(3):
            h = b.half_extents[k]
            if d[k] == 0.0:
                if abs(o[k]) > h:
                    t0 = math.inf
                continue
            a, c = (-h - o[k]) / d[k], (h - o[k]) / d[k]
            t0, t1 = max(t0, min(a, c)), min(t1, max(a, c))
        if t0 <= t1 and 0 < t0 < best_t:
            best_t, best_id = t0, b.instance_id
    g = scene.ground
    if g is not None and direction[1] < 0 and origin[1] > g.height:
        t = (g.height - origin[1]) / direction[1]
        if t < best_t:
            best_t, best_id = t, g.instance_id
    return best_t, best_id


def test_box_seen_head_on_has_the_analytic_depth_and_silhouette():
    # a 1.0 x 0.6 (half 0.5 x 0.3) face at z = 4 - 0.25 in front of a pinhole at the origin looking +Z
    scene = Scene((Box((0.0, 0.0, 4.0), (0.5, 0.3, 0.25), instance_id=1),), None)
    cam = pinhole(40, 30, 60.0, look_at((0, 0, 0), (0, 0, 1), up=(0, -1, 0)))
    np.testing.assert_allclose(cam.rotation, np.eye(3), atol=1e-15)  # camera axes = world axes
    r = render(scene, cam, dtype=np.float64)
    u, v = cam.pixel_centers()
    x, y = (u - cam.cx) / cam.fx * 3.75, (v - cam.cy) / cam.fy * 3.75
    inside = (np.abs(x) <= 0.5) & (np.abs(y) <= 0.3)
    assert 0 < inside.sum() < inside.size
    np.testing.assert_array_equal(r.instance == 1, inside)
    np.testing.assert_array_equal(r.depth[inside], 3.75)
    assert np.all(np.isinf(r.depth[~inside]))
    np.testing.assert_array_equal(r.normals[inside], np.broadcast_to([0.0, 0.0, -1.0], (inside.sum(), 3)))
    np.testing.assert_allclose(r.distance()[inside], np.sqrt(x * x + y * y + 3.75**2)[inside])

    # the same box through an orthographic camera: the silhouette is the face itself, depth constant
    cam = orthographic(40, 30, 2.0, look_at((0, 0, -1.0), (0, 0, 1), up=(0, -1, 0)))
    r = render(scene, cam, dtype=np.float64)
    inside = (np.abs((u - 20) / 20.0) <= 0.5) & (np.abs((v - 15) / 20.0) <= 0.3)
    np.testing.assert_array_equal(r.instance == 1, inside)
    np.testing.assert_array_equal(r.depth[inside], 4.75)


def test_ground_plane_depth_and_checker_are_analytic():
    cam = pinhole(16, 16, 70.0, look_at((0.3, 2.0, -0.2), (1.0, 0.0, 3.0)))
    r = render(Scene((), GroundPlane(height=0.0, checker=1.0, instance_id=0)), cam, dtype=np.float64)
    ground = r.instance == 0
    assert ground.sum() > 50
    pts = r.points()[ground]
    np.testing.assert_allclose(pts[:, 1], 0.0, atol=1e-12)
    np.testing.assert_allclose(r.normals[ground], np.broadcast_to([0.0, 1.0, 0.0], pts.shape))
    even = (np.floor(pts[:, 0]) + np.floor(pts[:, 2])) % 2 == 0
    albedo = np.where(even[:, None], GroundPlane().color, GroundPlane().color2)
    shade = r.rgb[ground] / albedo
    np.testing.assert_allclose(shade, shade[:1].repeat(len(shade), 0), atol=1e-12)  # one normal, one shade


@pytest.mark.parametrize("projection", ["perspective", "orthographic"])
def test_mask_and_depth_agree_with_a_brute_force_ray_caster(projection):
    scene = _random_scene(1)
    pose = look_at((4.0, 3.5, 3.0), (0.0, 1.2, 0.0))
    cam = pinhole(24, 20, 70.0, pose) if projection == "perspective" else orthographic(24, 20, 6.0, pose)
    r = render(scene, cam, dtype=np.float64)
    origins, dirs = cam.rays(unit=False)
    for i in range(cam.height):
        for j in range(cam.width):
            t, k = _reference(scene, origins[i, j], dirs[i, j])
            assert r.instance[i, j] == k
            assert (
                r.depth[i, j] == pytest.approx(t, rel=1e-12, abs=1e-12)
                if math.isfinite(t)
                else np.isinf(r.depth[i, j])
            )
    assert len(r.visible_ids()) >= 5


def test_back_projected_depth_lies_on_the_faces_of_the_box_in_the_mask():
    scene = _random_scene(2, n=9)
    for pose in random_smooth(6, seed=2, target=(0.0, 1.2, 0.0), distance=(4.5, 6.0)):
        r = render(scene, pinhole(32, 32, 65.0, pose), dtype=np.float64)
        pts = r.points()
        n_box_pixels = 0
        for b in scene.boxes:
            sel = r.instance == b.instance_id
            if not sel.any():
                continue
            n_box_pixels += sel.sum()
            local = (pts[sel] - b.center) @ b.rotation_matrix
            gap = np.abs(local) - np.asarray(b.half_extents)
            assert np.all(gap <= 1e-6)  # inside or on the box
            np.testing.assert_allclose(gap.max(axis=1), 0.0, atol=1e-6)  # on a face
            face = np.argmax(gap, axis=1)
            normal_local = r.normals[sel] @ b.rotation_matrix
            np.testing.assert_allclose(np.abs(normal_local[np.arange(face.size), face]), 1.0, atol=1e-12)
            rows = np.arange(face.size)
            assert np.all(np.sign(normal_local[rows, face]) == np.sign(local[rows, face]))
        assert n_box_pixels > 0
        ground = r.instance == 0
        np.testing.assert_allclose(pts[ground][:, 1], 0.0, atol=1e-6)


def test_masks_partition_the_image_and_normals_face_the_camera():
    scene = _random_scene(3)
    cam = pinhole(32, 24, 70.0, look_at((3.0, 3.0, -4.0), (0.0, 1.0, 0.0)))
    r = render(scene, cam, dtype=np.float64)
    ids = [BACKGROUND_ID, 0, *scene.ids]
    masks = np.stack([r.instance == k for k in ids])
    np.testing.assert_array_equal(masks.sum(axis=0), 1)  # every pixel in exactly one mask
    background = r.instance == BACKGROUND_ID
    np.testing.assert_array_equal(background, np.isinf(r.depth))
    np.testing.assert_array_equal(r.normals[background], 0.0)
    np.testing.assert_array_equal(
        r.rgb[background], np.broadcast_to(scene.background, r.rgb[background].shape)
    )
    _, dirs = cam.rays()
    hit = ~background
    np.testing.assert_allclose(np.linalg.norm(r.normals[hit], axis=1), 1.0, atol=1e-12)
    assert np.all(np.einsum("pi,pi->p", r.normals[hit], dirs[hit]) < 0)
    assert r.rgb.min() >= 0.0 and r.rgb.max() <= 1.0


def test_an_occluded_voxel_never_appears_in_the_mask():
    stack = voxel_scene(np.full((3, 3), 3), colors="random", seed=0)
    # the centre of a full 3x3x3 block, and the bottom centre cube (only its underside is uncovered)
    hidden = {int(stack.ids[1, 1, 1]), int(stack.ids[1, 1, 0])}
    behind = voxel_scene(np.array([[1, 0], [1, 0]]), seed=0)  # two cubes in a row along +Z
    front_id, back_id = int(behind.ids[0, 0, 0]), int(behind.ids[0, 1, 0])
    seen = set()
    for pose in np.concatenate(
        [orbit((0, 1.5, 0), 7.0, 25.0, 8), random_smooth(8, seed=1, target=(0, 1.5, 0))]
    ):
        for cam in (pinhole(32, 32, 60.0, pose), orthographic(32, 32, 6.0, pose)):
            ids = render(stack.scene, cam).visible_ids()
            assert hidden.isdisjoint(ids.tolist())
            seen.update(ids.tolist())
    assert len(seen) == 27 - 2 + 1  # every other cube and the ground were seen
    # looking straight down the row, the back cube is exactly behind the front one
    for cam in (
        orthographic(32, 32, 3.0, look_at((-0.5, 0.5, -4.0), (-0.5, 0.5, 0.0))),
        pinhole(32, 32, 40.0, look_at((-0.5, 0.5, -4.0), (-0.5, 0.5, 0.0))),
    ):
        ids = render(behind.scene, cam).visible_ids()
        assert front_id in ids and back_id not in ids


def test_rendering_is_deterministic_and_float32_matches_float64():
    scene = _random_scene(4)
    cam = pinhole(48, 40, 60.0, look_at((4.0, 3.0, 4.0), (0.0, 1.0, 0.0)))
    a, b = render(scene, cam), render(scene, cam)
    for name in ("rgb", "depth", "instance", "normals"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.rgb.dtype == np.float32 and a.instance.dtype == np.int32
    c = render(scene, cam, dtype=np.float64)
    agree = a.instance == c.instance
    assert agree.mean() > 0.99  # float32 may flip a pixel on an exact edge
    finite = agree & np.isfinite(c.depth)
    np.testing.assert_allclose(a.depth[finite], c.depth[finite], rtol=1e-5)


def test_view_culling_never_changes_the_image():
    scene = _random_scene(5, n=12)
    packed = scene.pack(np.float64)
    for pose in orbit((0.0, 1.0, 0.0), 2.5, 10.0, 6):  # close-up: many boxes out of view
        for cam in (pinhole(20, 16, 50.0, pose), orthographic(20, 16, 1.5, pose)):
            o, d = cam.rays(unit=False)
            o, d = o.reshape(-1, 3), d.reshape(-1, 3)
            kept = boxes_in_view(packed, cam)
            t_all, hit_all, n_all = cast_rays(packed, o, d)
            t_cull, hit_cull, n_cull = cast_rays(packed, o, d, kept)
            np.testing.assert_array_equal(hit_all, hit_cull)
            np.testing.assert_array_equal(t_all, t_cull)
            np.testing.assert_array_equal(n_all, n_cull)
    far = pinhole(8, 8, 30.0, look_at((0.0, 1.0, 30.0), (0.0, 1.0, 40.0)))  # looking away from every box
    assert boxes_in_view(packed, far).size == 0


def test_boxes_behind_the_camera_or_around_it_are_not_drawn():
    front = box_from_bounds((-0.5, -0.5, 2.5), (0.5, 0.5, 3.5), instance_id=1)
    behind = box_from_bounds(
        (-1.0, -1.0, -6.0), (1.0, 1.0, -4.0), instance_id=2
    )  # on the rays' lines, at t < 0
    around = box_from_bounds((-0.2, -0.2, -0.2), (0.2, 0.2, 0.2), instance_id=3)  # contains the camera
    packed = Scene((front, behind, around), None).pack(np.float64)
    cam = pinhole(9, 9, 40.0, look_at((0, 0, 0), (0, 0, 1), up=(0, -1, 0)))
    o, d = cam.rays(unit=False)
    t, hit, _ = cast_rays(packed, o[:1, 0], d.reshape(-1, 3))  # every box tested, no culling
    assert set(hit.tolist()) == {0, -1}  # only the front box (index 0) or nothing
    np.testing.assert_array_equal(t[hit == 0], 2.5)
    assert hit.reshape(9, 9)[4, 4] == 0
    assert boxes_in_view(packed, cam).tolist() == [0, 2]  # the box around the camera cannot be culled


def test_lambertian_shading_of_a_single_face():
    box = box_from_bounds((-1, -1, -1), (1, 1, 1), color=(0.5, 1.0, 0.25))
    cam = pinhole(8, 8, 30.0, look_at((0.0, 3.0, 0.0), (0.0, 0.0, 0.0), up=(0.0, 0.0, 1.0)))
    light = np.array([0.3, 0.9, -0.2])
    r = render(Scene((box,), None), cam, dtype=np.float64, light_direction=tuple(light), ambient=0.25)
    assert np.all(r.instance == 1)  # the top face fills the view
    expected = np.array([0.5, 1.0, 0.25]) * (0.25 + 0.75 * light[1] / np.linalg.norm(light))
    np.testing.assert_allclose(r.rgb.reshape(-1, 3), np.broadcast_to(expected, (64, 3)), atol=1e-12)


def test_occupancy_map_matches_point_sampling():
    scene = Scene(
        (
            # corners at least 8 cm from the grid lines, so sampling below cannot miss a sliver
            oriented_box((1.12, 0.5, 0.99), (0.8, 1.0, 0.5), 20.0, instance_id=1),
            box_from_bounds((-1.0, 0.0, -1.0), (-0.5, 0.4, 1.0), instance_id=2),
            box_from_bounds((0.0, 2.5, -1.0), (1.0, 3.0, 0.0), instance_id=3),  # above y_range: ignored
            box_from_bounds((0.0, 0.0, -1.0), (0.5, 1.0, -0.5), instance_id=4),  # exactly on cell borders
        ),
        None,
    )
    occ = occupancy_map(scene, 0.25, bounds=(-1.5, 2.0, -1.5, 1.75), y_range=(0.0, 2.0))
    assert occ.shape == (13, 14)
    # reference: a cell is occupied when a dense sample of its interior points hits a box
    s = (np.arange(40) + 0.5) / 40
    for row in range(occ.shape[0]):
        for col in range(occ.shape[1]):
            x0, z0 = -1.5 + col * 0.25, -1.5 + row * 0.25
            xs, zs = np.meshgrid(x0 + 0.25 * s, z0 + 0.25 * s)
            hit = False
            for b in scene.boxes[:2] + scene.boxes[3:]:
                lo, hi = b.world_bounds()
                ys = np.full(xs.size, (lo[1] + hi[1]) / 2)
                hit |= bool(b.contains(np.stack([xs.ravel(), ys, zs.ravel()], 1)).any())
            assert occ.occupied[row, col] == hit, (row, col)
    x, z = occ.center_of(*occ.cell_of(0.3, -0.8))
    assert (x, z) == (pytest.approx(0.375), pytest.approx(-0.875))
    assert occ.occupied[occ.cell_of(0.3, -0.8)]


def test_bad_render_arguments_name_the_argument():
    scene = _random_scene(0, n=2)
    cam = pinhole(8, 8)
    with pytest.raises(ValueError, match="dtype"):
        render(scene, cam, dtype=np.float16)
    with pytest.raises(TypeError, match="camera"):
        render(scene, np.eye(4))
    with pytest.raises(TypeError, match="scene"):
        render("scene", cam)
    with pytest.raises(ValueError, match="light_direction"):
        render(scene, cam, light_direction=(0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="ambient"):
        render(scene, cam, ambient=1.5)
    with pytest.raises(ValueError, match="dtype"):
        render(scene.pack(np.float64), cam)
    with pytest.raises(ValueError, match="cell"):
        occupancy_map(scene, 0.0)
    with pytest.raises(ValueError, match="y_range"):
        occupancy_map(scene, 0.1, y_range=(1.0, 1.0))
    with pytest.raises(ValueError, match="bounds"):
        occupancy_map(scene, 0.1, bounds=(0.0, -1.0, 0.0, 1.0))
