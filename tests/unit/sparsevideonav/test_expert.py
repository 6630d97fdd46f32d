"""Experts: relative_deltas and compose invert each other exactly, recorded actions are the realised
deltas within the speed limits, experts never pass through walls, the IFN expert succeeds, the explorer is
blind to the target before its sighting and sees pillars in the dead ends it visits, and demonstrations
are deterministic."""

import dataclasses

import numpy as np
import pytest

from neurips26.sparsevideonav import expert as E
from neurips26.sparsevideonav.tasks import cell_of, ifn_words, make_task
from neurips26.sparsevideonav.world import FPS, NavWorld, Pose


@pytest.fixture(scope="module")
def world():
    return NavWorld(0)


@pytest.fixture(scope="module")
def ifn_runs():
    runs = []
    for ws in range(4):
        w = NavWorld(ws)
        runs.append((w, E.ifn_expert(w, make_task(w, "ifn", ws))))
    return runs


@pytest.fixture(scope="module")
def explore_all(world):
    """The explorer hunting an instance that does not exist: it searches for the whole budget."""
    task = dataclasses.replace(make_task(world, "bvn", 0), instance=-7)
    return E.bvn_explorer(world, task, seed=5, max_frames=240)


def _check_physical(world, traj):
    T = len(traj.actions)
    assert traj.poses.shape == (T + 1, 3) and traj.poses.dtype == np.float64
    assert traj.frames.shape == (T + 1, 16, 32, 3) and traj.frames.dtype == np.float32
    assert traj.seconds == T / FPS
    assert np.abs(traj.actions[:, 2]).max() <= 22.5 + 1e-9
    assert np.hypot(traj.actions[:, 0], traj.actions[:, 1]).max() <= 0.25 + 1e-9
    np.testing.assert_allclose(E.compose(traj.task.start, traj.actions), traj.poses, atol=1e-9, rtol=0)
    np.testing.assert_array_equal(traj.actions, E.relative_deltas(traj.poses))
    cells = [cell_of(world, x, z) for x, z, _ in traj.poses]
    for a, b in zip(cells[:-1], cells[1:], strict=True):
        assert a == b or b in world.maze.neighbors(*a)  # through openings only
    assert all(world.free(x, z) for x, z, _ in traj.poses)


def test_compose_inverts_relative_deltas_on_random_data():
    rng = np.random.default_rng(0)
    poses = np.cumsum(rng.normal(size=(50, 3)) * [0.3, 0.3, 40.0], axis=0)
    start = Pose(*poses[0])
    np.testing.assert_allclose(E.compose(start, E.relative_deltas(poses)), poses, atol=1e-9, rtol=0)
    deltas = rng.normal(size=(30, 3))
    np.testing.assert_allclose(E.relative_deltas(E.compose(start, deltas)), deltas, atol=1e-9, rtol=0)
    # the move is taken along the NEW heading: turn 90 then step 1 forward from yaw 0 goes to +X
    np.testing.assert_allclose(
        E.compose(Pose(0.0, 0.0, 0.0), [[1.0, 0.0, 90.0]])[1], [1.0, 0.0, 90.0], atol=1e-12
    )
    assert E.relative_deltas(poses[:1]).shape == (0, 3)


def test_steering_turns_first_and_steps_only_when_facing():
    pose = Pose(1.0, 1.0, 0.0)
    assert E.steer(pose, (1.0, 3.0)) == pytest.approx((0.25, 0.0, 0.0))
    fwd, _, dyaw = E.steer(pose, (3.0, 1.0))  # 90 deg to the right: turn, no step yet
    assert dyaw == 22.5 and fwd == 0.0
    fwd, _, dyaw = E.steer(pose, (1.0, 1.1))  # close: the step shrinks to the distance
    assert fwd == pytest.approx(0.1) and dyaw == 0.0
    assert E.steer(Pose(1.0, 1.0, 350.0), (1.0, 3.0))[2] == pytest.approx(10.0)  # wraps the error


def test_ifn_expert_succeeds_without_crossing_walls(ifn_runs):
    for world, traj in ifn_runs:
        assert traj.stopped and traj.success
        assert cell_of(world, *traj.poses[-1, :2]) == traj.task.path[-1]
        visited = []
        for x, z, _ in traj.poses:
            c = cell_of(world, x, z)
            if not visited or visited[-1] != c:
                visited.append(c)
        assert tuple(visited) == traj.task.path  # it walks exactly the instructed route
        _check_physical(world, traj)


def test_frames_and_first_sighting_are_what_the_world_shows(ifn_runs):
    world, traj = ifn_runs[0]
    seen = [world.visible(world.observe(Pose(*p)), traj.task.instance) for p in traj.poses]
    assert traj.seen_at == seen.index(True)
    for k in (0, traj.seen_at, len(traj.poses) - 1):
        np.testing.assert_array_equal(traj.frames[k], world.observe(Pose(*traj.poses[k])).rgb)


def test_ifn_expert_out_of_frames_ends_unstopped(world):
    task = make_task(world, "ifn", 0)
    traj = E.ifn_expert(world, task, max_frames=10)
    assert len(traj.actions) == 10 and not traj.stopped and not traj.success


def test_explorer_is_blind_before_its_sighting(world):
    base = make_task(world, "bvn", 1)
    m = world.maze
    start_cell = cell_of(world, base.start.x, base.start.z)
    runs = []
    for r, c, _inst, colour in m.landmarks:
        inst, tx, tz = world.landmark(colour)
        if world.visible(world.observe(base.start), inst):
            continue
        path = tuple(m.shortest_path(start_cell, (r, c)))
        task = dataclasses.replace(
            base,
            colour=colour,
            instance=inst,
            target=(tx, tz),
            path=path,
            words=("find", "the", colour, "object"),
        )
        runs.append(E.bvn_explorer(world, task, seed=3, max_frames=160))
    assert len(runs) >= 2
    for a in runs:
        for b in runs:
            if a is b:
                continue
            k = min(x for x in (a.seen_at, b.seen_at, len(a.actions), len(b.actions)) if x is not None)
            np.testing.assert_array_equal(a.actions[:k], b.actions[:k])
    assert len({r.seen_at for r in runs}) > 1  # different targets, different sightings: the test has teeth
    for r in runs:
        _check_physical(world, r)
        if r.stopped:
            assert r.success and cell_of(world, *r.poses[-1, :2]) == r.task.path[-1]


def test_explorer_sees_pillars_in_the_dead_ends_it_visits(world, explore_all):
    traj = explore_all
    assert traj.seen_at is None and not traj.stopped and len(traj.actions) == 240
    _check_physical(world, traj)
    m = world.maze
    masks = [world.observe(Pose(*p)).instance for p in traj.poses]
    checked = 0
    for r, c, inst, _colour in m.landmarks:
        if len(m.neighbors(r, c)) != 1:
            continue
        centre = np.array(m.cell_center(r, c))
        near = np.flatnonzero(np.hypot(*(traj.poses[:, :2] - centre).T) <= E.WAYPOINT_TOL)
        if near.size == 0:
            continue
        checked += 1
        # seen between entering the cell and backing out of it again
        entered = int(np.flatnonzero([cell_of(world, x, z) == (r, c) for x, z, _ in traj.poses])[0])
        window = range(max(entered - 4, 0), min(near[-1] + 9, len(masks)))
        assert any((masks[k] == inst).sum() >= 4 for k in window)
    assert checked >= 2  # this walk enters the red and the green dead ends
    # it explores: many distinct cells within the budget
    assert len({cell_of(world, x, z) for x, z, _ in traj.poses}) >= 12


def test_demonstrations_are_deterministic():
    a = E.demonstrations((2, 3), max_frames=120)
    b = E.demonstrations((2, 3), max_frames=120)
    assert [(t.task.seed, t.task.kind) for t in a] == [(2, "bvn"), (2, "ifn"), (3, "bvn"), (3, "ifn")]
    for x, y in zip(a, b, strict=True):
        assert x.task == y.task and x.seen_at == y.seen_at and x.success == y.success
        np.testing.assert_array_equal(x.poses, y.poses)
        np.testing.assert_array_equal(x.frames, y.frames)
    ifn = [t for t in a if t.task.kind == "ifn"]
    assert all(t.success for t in ifn)
    assert all(t.task.words == ifn_words(t.task.path, t.task.start.yaw, t.task.colour) for t in ifn)
    assert E.demonstrations((2,), kinds=("ifn",), seed=1, max_frames=5)[0].task != ifn[0].task


def test_bad_inputs_name_the_argument(world):
    task = make_task(world, "ifn", 0)
    with pytest.raises(ValueError, match="poses"):
        E.relative_deltas(np.zeros((4, 2)))
    with pytest.raises(TypeError, match="poses"):
        E.relative_deltas("poses")
    with pytest.raises(ValueError, match="deltas"):
        E.compose(task.start, np.zeros((4, 2)))
    with pytest.raises(TypeError, match="start"):
        E.compose((0.0, 0.0, 0.0), np.zeros((1, 3)))
    with pytest.raises(ValueError, match="max_frames"):
        E.ifn_expert(world, task, max_frames=0)
    with pytest.raises(ValueError, match="task"):
        E.ifn_expert(NavWorld(1), task)
    with pytest.raises(TypeError, match="task"):
        E.ifn_expert(world, "task")
    with pytest.raises(ValueError, match="seed"):
        E.bvn_explorer(world, task, seed=-1)
    with pytest.raises(ValueError, match="kinds"):
        E.demonstrations((0,), kinds=("vln",))
    with pytest.raises(ValueError, match="world_seeds"):
        E.demonstrations((-1,))
