"""Cameras: look-at axes, projection inverts back-projection, rays and trajectories keep their promises."""

import numpy as np
import pytest

from neurips26.world import (
    Camera,
    heading_pose,
    isometric,
    look_at,
    orbit,
    orthographic,
    pinhole,
    random_smooth,
    spherical_pose,
    walk_through,
)


def test_look_at_is_a_proper_rotation_with_forward_to_target_and_image_up_along_world_up():
    rng = np.random.default_rng(0)
    for _ in range(50):
        eye, target = rng.normal(size=3) * 5, rng.normal(size=3)
        pose = look_at(eye, target)
        r = pose[:3, :3]
        np.testing.assert_allclose(r.T @ r, np.eye(3), atol=1e-12)
        assert np.linalg.det(r) == pytest.approx(1.0)
        np.testing.assert_allclose(pose[:3, 3], eye)
        np.testing.assert_allclose(r[:, 2], (target - eye) / np.linalg.norm(target - eye), atol=1e-12)
        assert r[:, 0] @ [0.0, 1.0, 0.0] == pytest.approx(0.0, abs=1e-12)  # right axis is horizontal
        assert r[:, 1] @ [0.0, 1.0, 0.0] <= 0.0  # image "down" never points up
    # looking along -Z from +Z: right is +X, down is -Y (OpenCV axes, world +Y up)
    np.testing.assert_allclose(look_at((0, 0, 5), (0, 0, 0))[:3, :3], np.diag([1.0, -1.0, -1.0]), atol=1e-15)


def test_look_at_rejects_degenerate_views():
    with pytest.raises(ValueError, match="target"):
        look_at((1, 2, 3), (1, 2, 3))
    with pytest.raises(ValueError, match="up"):
        look_at((0, 5, 0), (0, 0, 0))
    with pytest.raises(ValueError, match="eye"):
        look_at((0, 0), (0, 0, 0))


@pytest.mark.parametrize("make", [lambda p: pinhole(20, 14, 65.0, p), lambda p: orthographic(20, 14, 3.0, p)])
def test_project_inverts_back_project(make):
    rng = np.random.default_rng(1)
    cam = make(look_at((3.0, 2.0, -4.0), (0.2, 0.1, 0.3)))
    uv = rng.uniform(0, 20, size=(100, 2))
    depth = rng.uniform(0.5, 9.0, size=100)
    pts = cam.back_project(uv, depth)
    uv2, depth2 = cam.project(pts)
    np.testing.assert_allclose(uv2, uv, atol=1e-9)
    np.testing.assert_allclose(depth2, depth, atol=1e-9)
    # and the other way round, for world points in front of the camera
    pts = cam.position + cam.forward * 3.0 + rng.normal(size=(50, 3)) * 0.5
    uv, depth = cam.project(pts)
    np.testing.assert_allclose(cam.back_project(uv, depth), pts, atol=1e-9)


def test_project_matches_the_intrinsic_matrix_and_the_world_to_camera_transform():
    cam = Camera(32, 24, 30.0, 28.0, 15.5, 12.25, look_at((1, 1, -3), (0, 0.5, 0)))
    p = np.array([0.3, 0.7, 0.2])
    cam_p = (cam.w2c @ np.append(p, 1.0))[:3]
    hom = cam.K @ (cam_p / cam_p[2])
    uv, z = cam.project(p)
    np.testing.assert_allclose(uv, hom[:2], atol=1e-12)
    assert z == pytest.approx(cam_p[2])
    np.testing.assert_allclose(cam.w2c @ cam.c2w, np.eye(4), atol=1e-12)
    uv_behind, _ = cam.project(cam.position - cam.forward)
    assert np.all(np.isnan(uv_behind))


@pytest.mark.parametrize("make", [lambda p: pinhole(9, 7, 80.0, p), lambda p: orthographic(9, 7, 2.0, p)])
def test_rays_pass_through_pixel_centres_and_depth_is_z_along_the_axis(make):
    cam = make(look_at((2.0, 1.0, 2.0), (0.0, 0.0, 0.0)))
    origins, dirs = cam.rays(unit=False)
    _, unit_dirs = cam.rays()
    np.testing.assert_allclose(np.linalg.norm(unit_dirs, axis=-1), 1.0)
    np.testing.assert_allclose(dirs @ cam.forward, 1.0, atol=1e-12)  # camera-frame z of the direction is 1
    depth = np.full((7, 9), 2.5)
    pts = origins + depth[..., None] * dirs
    uv, z = cam.project(pts.reshape(-1, 3))
    u, v = cam.pixel_centers()
    np.testing.assert_allclose(uv, np.stack([u, v], -1).reshape(-1, 2), atol=1e-9)
    np.testing.assert_allclose(z, 2.5)
    np.testing.assert_allclose(cam.point_map(depth), pts, atol=1e-12)
    dist = cam.distance_from_depth(depth)
    np.testing.assert_allclose(dist, np.linalg.norm(pts - origins, axis=-1), atol=1e-12)
    assert u[0, 0] == 0.5 and v[-1, 0] == 6.5


def test_plucker_coordinates_are_a_unit_direction_and_its_moment():
    cam = pinhole(6, 5, 60.0, look_at((1.0, 2.0, 3.0), (0.0, 0.0, 0.0)))
    pl = cam.plucker()
    d, m = pl[..., :3], pl[..., 3:]
    np.testing.assert_allclose(np.linalg.norm(d, axis=-1), 1.0)
    np.testing.assert_allclose(np.einsum("...i,...i", d, m), 0.0, atol=1e-12)
    np.testing.assert_allclose(m, np.cross(np.broadcast_to(cam.position, d.shape), d), atol=1e-12)


def test_orbit_keeps_distance_and_elevation_and_looks_at_the_target():
    target = np.array([0.5, 0.2, -0.3])
    poses = orbit(target, 4.0, 30.0, 12)
    assert poses.shape == (12, 4, 4)
    for p in poses:
        offset = p[:3, 3] - target
        assert np.linalg.norm(offset) == pytest.approx(4.0)
        assert offset[1] == pytest.approx(4.0 * np.sin(np.radians(30.0)))
        np.testing.assert_allclose(p[:3, 2], -offset / 4.0, atol=1e-12)
    # azimuth 90 sits on +X
    np.testing.assert_allclose(spherical_pose((0, 0, 0), 2.0, 90.0, 0.0)[:3, 3], [2.0, 0.0, 0.0], atol=1e-12)


def test_walk_through_moves_at_constant_speed_along_the_polyline_and_faces_ahead():
    pts = np.array([[0.0, 1.2, 0.0], [4.0, 1.2, 0.0], [4.0, 1.2, 3.0]])
    poses = walk_through(pts, 15, look_ahead=0.5)
    pos = poses[:, :3, 3]
    np.testing.assert_allclose(pos[0], pts[0])
    np.testing.assert_allclose(pos[-1], pts[-1])
    steps = np.linalg.norm(np.diff(pos, axis=0), axis=1)
    corner = np.abs(steps - 0.5) > 1e-9  # 7 m in 14 steps: 0.5 m each, except the step cutting the corner
    assert corner.sum() <= 1
    on_path = (np.abs(pos[:, 2]) < 1e-12) | (np.abs(pos[:, 0] - 4.0) < 1e-12)
    assert on_path.all()
    np.testing.assert_allclose(poses[0][:3, 2], [1.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(poses[-1][:3, 2], [0.0, 0.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(heading_pose((0, 1, 0), 90.0)[:3, 2], [1.0, 0.0, 0.0], atol=1e-12)
    with pytest.raises(ValueError, match="waypoints"):
        walk_through(pts[:1], 5)


def test_random_smooth_is_seeded_smooth_and_in_range():
    a = random_smooth(40, seed=3, distance=(4.0, 6.0), elevation_deg=(10.0, 40.0), target_jitter=0.0)
    b = random_smooth(40, seed=3, distance=(4.0, 6.0), elevation_deg=(10.0, 40.0), target_jitter=0.0)
    c = random_smooth(40, seed=4, distance=(4.0, 6.0), elevation_deg=(10.0, 40.0), target_jitter=0.0)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    eyes = a[:, :3, 3]
    dist = np.linalg.norm(eyes, axis=1)
    assert np.all((dist >= 4.0 - 1e-9) & (dist <= 6.0 + 1e-9))
    elev = np.degrees(np.arcsin(eyes[:, 1] / dist))
    assert np.all((elev >= 10.0 - 1e-9) & (elev <= 40.0 + 1e-9))
    # smooth: consecutive frames move little compared with the orbit radius
    assert np.max(np.linalg.norm(np.diff(eyes, axis=0), axis=1)) < 0.6


def test_isometric_camera_is_orthographic_and_centred_on_the_target():
    cam = isometric((1.0, 0.5, -1.0), 6.0, 32, 32)
    assert cam.projection == "orthographic"
    uv, _ = cam.project(np.array([1.0, 0.5, -1.0]))
    np.testing.assert_allclose(uv, [16.0, 16.0], atol=1e-9)
    assert cam.fx == pytest.approx(32 / 6.0)


def test_camera_round_trips_through_a_dict_and_validates():
    cam = orthographic(8, 6, 2.0, look_at((1, 1, 1), (0, 0, 0)))
    back = Camera.from_dict(cam.to_dict())
    np.testing.assert_array_equal(back.c2w, cam.c2w)
    assert (back.width, back.fx, back.projection) == (8, cam.fx, "orthographic")
    with pytest.raises(ValueError, match="fov_deg"):
        pinhole(8, 8, 180.0)
    with pytest.raises(TypeError, match="width"):
        pinhole(8.0, 8)
    with pytest.raises(ValueError, match="c2w"):
        pinhole(8, 8, 60.0, np.diag([1.0, 1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="projection"):
        Camera(8, 8, 1.0, 1.0, 4.0, 4.0, np.eye(4), "fisheye")
    with pytest.raises(ValueError, match="depth"):
        cam.point_map(np.ones((3, 3)))
    with pytest.raises(ValueError, match="distance"):
        random_smooth(5, seed=0, distance=(5.0, 4.0))
    with pytest.raises(ValueError, match="seed"):
        random_smooth(5, seed=-1)
