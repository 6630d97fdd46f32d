"""The navigation world: walls are never crossed, moves are clipped to the speed limits, success is within
1.5 m inclusive, night frames are seeded, and a pillar in front of the agent is visible."""

import math

import numpy as np
import pytest

from neurips26.sparsevideonav import world as W


@pytest.fixture(scope="module")
def nav():
    return W.NavWorld(seed=3)


def _cell(nav, pose):
    return int(pose.z // W.CELL), int(pose.x // W.CELL)


def test_random_walks_never_cross_a_wall(nav):
    rng = np.random.default_rng(0)
    start = nav.maze.cell_center(0, 0)
    pose = W.Pose(start[0], start[1], 0.0)
    for _ in range(400):
        action = rng.uniform([-0.1, -0.2, -30.0], [0.4, 0.2, 30.0])
        new = nav.step(pose, action)
        assert nav.free(new.x, new.z)
        assert math.hypot(new.x - pose.x, new.z - pose.z) <= W.SPEED / W.FPS + 1e-9
        assert abs(new.yaw - pose.yaw) <= W.TURN / W.FPS + 1e-9
        a, b = _cell(nav, pose), _cell(nav, new)
        assert a == b or b in nav.maze.neighbors(*a)  # only through an opening
        pose = new


def test_a_wall_stops_the_agent(nav):
    r, c = 0, 0
    x, z = nav.maze.cell_center(r, c)
    pose = W.Pose(x, z, 180.0)  # facing -Z: the maze's outer wall
    for _ in range(20):
        pose = nav.step(pose, (0.25, 0.0, 0.0))
    assert pose.z >= W.BODY - 1e-9 and nav.free(pose.x, pose.z)
    with pytest.raises(ValueError, match="action"):
        nav.step(pose, (0.1, 0.2))


def test_success_is_within_one_and_a_half_metres_inclusive():
    target = (3.0, 4.0)
    assert W.reached(W.Pose(3.0 + 1.5, 4.0, 0.0), target)
    assert not W.reached(W.Pose(3.0 + 1.51, 4.0, 0.0), target)


def test_frames_night_and_visibility(nav):
    colour = nav.maze.landmarks[0][3]
    instance, lx, lz = nav.landmark(colour)
    # stand 1.2 m from the pillar, facing it, in its own cell (the pillar stands against a wall)
    here = (int(lz // W.CELL), int(lx // W.CELL))
    for yaw in range(0, 360, 90):
        back = W.Pose(lx, lz, float(yaw))
        px, pz = np.array([lx, lz]) - 1.2 * back.forward()
        if nav.free(px, pz) and (int(pz // W.CELL), int(px // W.CELL)) == here:
            pose = W.Pose(float(px), float(pz), float(yaw))
            break
    day = nav.observe(pose)
    assert day.rgb.shape == (W.HEIGHT, W.WIDTH, 3) and day.instance.shape == (W.HEIGHT, W.WIDTH)
    assert nav.visible(day, instance)
    n1 = nav.observe(pose, night=True, rng=np.random.default_rng(1))
    n2 = nav.observe(pose, night=True, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(n1.rgb, n2.rgb)
    assert n1.rgb.mean() < day.rgb.mean()
    with pytest.raises(ValueError, match="rng"):
        nav.observe(pose, night=True)
    with pytest.raises(ValueError, match="colour"):
        nav.landmark("ultraviolet")


def test_a_positive_yaw_turns_left_as_the_camera_sees_it(nav):
    """+Δyaw is a left turn: a pillar ahead slides to the right of the image; so does a step to the left."""
    iid, x, z = nav.landmark("red")
    seen = None
    for d in (1.0, 1.2, 1.5, 0.8):
        for yaw in range(0, 360, 15):
            r = math.radians(yaw)
            px, pz = x - d * math.sin(r), z - d * math.cos(r)
            if nav.free(px, pz) and (nav.observe(W.Pose(px, pz, yaw)).instance == iid).sum() > 4:
                seen = (px, pz, float(yaw))
                break
        if seen:
            break
    px, pz, yaw = seen

    def centre(pose):
        return float(np.nonzero(nav.observe(pose).instance == iid)[1].mean())

    ahead = centre(W.Pose(px, pz, yaw))
    assert centre(W.Pose(px, pz, yaw + 20)) > ahead + 3 > centre(W.Pose(px, pz, yaw - 20)) + 3
    # stepping to the agent's left (Pose.left) moves the pillar to the right of the image too
    side = W.Pose(px + 0.2 * W.Pose(px, pz, yaw).left()[0], pz + 0.2 * W.Pose(px, pz, yaw).left()[1], yaw)
    assert centre(side) > ahead
