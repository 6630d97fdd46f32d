"""Tests of the camera paths: small steps, free space, exact loops, revisit pairs, seeds and bad input."""

import numpy as np
import pytest

from neurips26.jag.paths import (
    CLEARANCE,
    KINDS,
    MAX_ROTATION_DEG,
    MAX_STEP,
    clearance,
    dolly,
    orbit_path,
    out_and_back,
    path_kind,
    random_path,
    revisit_pairs,
    step_sizes,
    yaw_sweep,
)
from neurips26.world import heading_pose, room

ROOMS = [room(s, n_furniture=3 + s % 4) for s in range(6)]


def _is_rigid(poses: np.ndarray) -> bool:
    r = poses[:, :3, :3]
    ortho = np.allclose(np.einsum("tji,tjk->tik", r, r), np.eye(3), atol=1e-9)
    last = np.allclose(poses[:, 3], (0.0, 0.0, 0.0, 1.0))
    return ortho and last and bool(np.all(np.linalg.det(r) > 0))


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_keeps_small_steps_and_stays_in_free_space(kind):
    for n, r in enumerate(ROOMS):
        for frames in (12, 32):
            poses = random_path(r, frames, seed=10 * n + frames, kind=kind)
            assert poses.shape == (frames, 4, 4) and poses.dtype == np.float64 and _is_rigid(poses)
            rot, travel = step_sizes(poses)
            assert rot.max() <= MAX_ROTATION_DEG + 1e-9 and travel.max() <= MAX_STEP + 1e-9
            xz = poses[:, :3, 3][:, [0, 2]]
            assert clearance(r, xz).min() >= CLEARANCE
            x0, x1, z0, z1 = r.interior
            assert np.all((xz[:, 0] > x0) & (xz[:, 0] < x1) & (xz[:, 1] > z0) & (xz[:, 1] < z1))
            rows, cols = r.occupancy.cell_of(xz[:, 0], xz[:, 1])
            assert not r.occupancy.occupied[rows, cols].any()  # never inside furniture
            assert np.all((poses[:, 1, 3] > 1.0) & (poses[:, 1, 3] < 1.6))  # eye height


def test_clearance_is_the_distance_to_walls_and_occupied_cells():
    r = ROOMS[0]
    x0, x1, z0, z1 = r.interior
    occ = r.occupancy
    rows, cols = np.nonzero(occ.occupied)
    cx, cz = occ.center_of(rows[0], cols[0])
    assert clearance(r, np.array([[cx, cz]]))[0] == 0.0  # inside furniture
    assert clearance(r, np.array([[x0 - 0.5, 0.0]]))[0] < 0.0  # outside the room
    # a brute-force check: the nearest of many points sampled on the walls and the occupied cells' borders
    rng = np.random.default_rng(0)
    pts = np.stack([rng.uniform(x0, x1, 50), rng.uniform(z0, z1, 50)], axis=1)
    u = np.linspace(-0.5, 0.5, 41) * occ.cell
    border = [
        np.stack(np.broadcast_arrays(u, -occ.cell / 2), 1),
        np.stack(np.broadcast_arrays(u, occ.cell / 2), 1),
    ]
    border += [b[:, ::-1] for b in border]
    square = np.concatenate(border)
    cells = np.stack(occ.center_of(rows, cols), axis=1)
    samples = (cells[:, None] + square[None]).reshape(-1, 2)
    dist = np.linalg.norm(pts[:, None] - samples[None], axis=-1).min(axis=1)
    inside = np.all(np.abs(pts[:, None] - cells[None]) < occ.cell / 2, axis=-1).any(axis=1)
    dist[inside] = 0.0
    walls = np.minimum.reduce([pts[:, 0] - x0, x1 - pts[:, 0], pts[:, 1] - z0, z1 - pts[:, 1]])
    np.testing.assert_allclose(clearance(r, pts), np.minimum(dist, walls), atol=occ.cell / 40)


def test_each_kind_moves_as_its_name_says():
    r = ROOMS[1]
    sweep = yaw_sweep(r, 20, 3)
    assert np.allclose(sweep[:, :3, 3], sweep[0, :3, 3])  # turns in place
    rot, _ = step_sizes(sweep)
    np.testing.assert_allclose(rot, rot[0], atol=1e-6)  # at a constant rate
    assert rot[0] >= 3.0 - 1e-9

    push = dolly(r, 40, 4)
    assert np.allclose(push[:, :3, :3], push[0, :3, :3])  # the orientation is fixed
    moved = push[:, :3, 3] - push[0, :3, 3]
    heading = push[0, :3, 2] * (1.0, 0.0, 1.0)  # the optical axis, levelled
    np.testing.assert_allclose(np.cross(moved, heading), 0.0, atol=1e-9)  # straight ahead or back
    assert np.abs(moved).max() > 0.3

    ring = orbit_path(r, 32, 5)
    # every optical axis passes through one point (the target): least squares on the lines c + s f
    eyes, fwd = ring[:, :3, 3], ring[:, :3, 2]
    proj = np.eye(3)[None] - fwd[:, :, None] * fwd[:, None, :]
    target = np.linalg.solve(proj.sum(0), np.einsum("tij,tj->i", proj, eyes))
    residual = np.einsum("tij,tj->ti", proj, eyes - target)
    assert np.abs(residual).max() < 1e-9
    radius = np.linalg.norm((eyes - target)[:, [0, 2]], axis=1)
    np.testing.assert_allclose(radius, radius[0], rtol=1e-9)  # on a circle
    assert 0.8 <= radius[0] <= 1.6


@pytest.mark.parametrize("frames", [2, 3, 11, 12, 32])
def test_out_and_back_returns_exactly_over_its_own_poses(frames):
    poses = out_and_back(ROOMS[2], frames, 9)
    for k in range(frames):
        assert np.array_equal(poses[frames - 1 - k], poses[k])
    assert np.array_equal(poses[-1], poses[0])
    if frames >= 11:
        assert np.linalg.norm(poses[frames // 2, :3, 3] - poses[0, :3, 3]) > 0.2  # it went somewhere


def test_revisit_pairs_on_a_loop_and_on_hand_made_poses():
    poses = out_and_back(ROOMS[3], 12, 1)
    pairs = revisit_pairs(poses, 4)
    assert pairs.dtype == np.int64 and pairs.shape[1] == 2
    assert pairs.tolist() == [[1, 10], [2, 9], [3, 8]]  # (k, 11 - k), k >= 1, 11 - 2k >= 4
    assert revisit_pairs(poses, 1).tolist() == [[k, 11 - k] for k in range(1, 6)]
    a, b, c = (heading_pose((0.0, 1.2, z), 0.0) for z in (0.0, 0.5, 1.0))
    seq = np.stack([a, b, c, b, a, b + 1e-10, c + 1e-6])
    # pose 1 = 3 = 5 (to 1e-9); 0 = 4 but k = 0 is the given frame; 2 and 6 differ by 1e-6
    assert revisit_pairs(seq, 2).tolist() == [[1, 3], [1, 5], [3, 5]]
    assert revisit_pairs(seq, 3).tolist() == [[1, 5]]  # k' - k >= window
    assert revisit_pairs(seq, 2, atol=1e-5).tolist() == [[1, 3], [1, 5], [2, 6], [3, 5]]
    assert revisit_pairs(yaw_sweep(ROOMS[0], 8, 0), 1).shape == (0, 2)


def test_paths_are_seeded_and_the_kind_is_drawn_from_the_seed():
    r = ROOMS[4]
    for kind in KINDS:
        assert np.array_equal(random_path(r, 16, 7, kind), random_path(r, 16, 7, kind))
        assert not np.array_equal(random_path(r, 16, 7, kind), random_path(r, 16, 8, kind))
    drawn = {path_kind(s) for s in range(40)}
    assert drawn == set(KINDS)
    assert path_kind(3) == path_kind(3) and path_kind(3, "dolly") == "dolly"
    assert np.array_equal(random_path(r, 6, 3), random_path(r, 6, 3, path_kind(3)))


def test_bad_input_names_the_argument():
    r = ROOMS[0]
    with pytest.raises(ValueError, match="frames"):
        random_path(r, 1, 0)
    with pytest.raises(ValueError, match="frames"):
        out_and_back(r, 0, 0)
    with pytest.raises(ValueError, match="seed"):
        yaw_sweep(r, 4, -1)
    with pytest.raises(ValueError, match="kind"):
        random_path(r, 4, 0, "spiral")
    with pytest.raises(TypeError, match="room"):
        dolly("a room", 4, 0)
    poses = out_and_back(r, 8, 0)
    with pytest.raises(ValueError, match="window"):
        revisit_pairs(poses, 0)
    with pytest.raises(ValueError, match="poses"):
        revisit_pairs(poses[:, :3], 2)
    with pytest.raises(TypeError, match="poses"):
        revisit_pairs(poses.tolist(), 2)
    with pytest.raises(ValueError, match="xz"):
        clearance(r, np.zeros((3, 3)))
