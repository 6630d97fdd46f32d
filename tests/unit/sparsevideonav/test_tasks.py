"""Tasks: the heading convention agrees with Pose.forward, sampled tasks meet their constraints (>= 6 m,
target out of view, a BFS route of neighbouring cells, a start yaw down an open corridor), sampling is
deterministic, the IFN grammar matches a hand-checked route, and bad arguments raise named errors."""

import math

import numpy as np
import pytest

from neurips26.sparsevideonav import tasks as T
from neurips26.sparsevideonav.instructions import MAX_WORDS, decode, encode
from neurips26.sparsevideonav.world import NavWorld, Pose


@pytest.fixture(scope="module")
def worlds():
    return [NavWorld(s) for s in range(4)]


@pytest.fixture(scope="module")
def sampled(worlds):
    return [T.make_task(w, kind, seed) for w in worlds for kind in T.KINDS for seed in range(4)]


def test_heading_between_matches_pose_forward(worlds):
    m = worlds[0].maze
    expected = {(1, 0): 0.0, (0, 1): 90.0, (-1, 0): 180.0, (0, -1): 270.0}
    for (dr, dc), yaw in expected.items():
        a, b = (2, 2), (2 + dr, 2 + dc)
        assert T.heading_between(a, b) == yaw
        # walking one cell (2 m) along forward(yaw) from a's centre lands on b's centre
        start = np.array(m.cell_center(*a)) + 2.0 * Pose(0.0, 0.0, yaw).forward()
        assert np.allclose(start, m.cell_center(*b), atol=1e-12)
    with pytest.raises(ValueError, match="a_cell and b_cell"):
        T.heading_between((0, 0), (1, 1))
    with pytest.raises(ValueError, match="a_cell and b_cell"):
        T.heading_between((0, 0), (0, 0))


def test_ifn_grammar_on_a_hand_checked_route():
    route = ((0, 0), (1, 0), (2, 0), (2, 1), (2, 2), (3, 2))
    # +Z twice, then +X (yaw 0 -> 90: a left turn), then +Z again (90 -> 0: a right turn)
    assert T.ifn_words(route, 0.0, "red") == (
        *("go", "straight", ","),
        *("turn", "left", ",", "go", "straight", ","),
        *("turn", "right", ",", "go", "straight", ","),
        *("stop", "at", "the", "red", "object"),
    )
    # facing -Z the first move needs a turn around; facing -X (270) the first +Z move is a left turn
    assert T.ifn_words(route[:3], 180.0, "blue")[:6] == ("turn", "around", ",", "go", "straight", ",")
    assert T.ifn_words(route[:3], 270.0, "blue")[:3] == ("turn", "left", ",")
    assert T.ifn_words(route[:3], -90.0, "blue") == T.ifn_words(route[:3], 270.0, "blue")
    # right at yaw 90 is -left() = +Z, i.e. heading 0: the grammar and Pose agree
    assert np.allclose(-Pose(0.0, 0.0, 90.0).left(), Pose(0.0, 0.0, 0.0).forward())
    with pytest.raises(ValueError, match="path"):
        T.ifn_words(route[:1], 0.0, "red")
    with pytest.raises(ValueError, match="colour"):
        T.ifn_words(route, 0.0, "purple")


def test_sampled_tasks_meet_their_constraints(worlds, sampled):
    by_seed = {w.seed: w for w in worlds}
    for task in sampled:
        world = by_seed[task.seed]
        m = world.maze
        instance, tx, tz = world.landmark(task.colour)
        assert task.instance == instance and task.target == (tx, tz)
        assert math.hypot(task.start.x - tx, task.start.z - tz) >= T.MIN_START_DISTANCE
        assert not world.visible(world.observe(task.start), instance)
        start_cell = T.cell_of(world, task.start.x, task.start.z)
        assert (task.start.x, task.start.z) == m.cell_center(*start_cell)
        target_cell = next((r, c) for r, c, _i, colour in m.landmarks if colour == task.colour)
        assert task.path[0] == start_cell and task.path[-1] == target_cell
        for a, b in zip(task.path[:-1], task.path[1:], strict=True):
            assert b in m.neighbors(*a)
        # the start yaw looks down an open corridor
        assert task.start.yaw in {T.heading_between(start_cell, n) for n in m.neighbors(*start_cell)}
        assert len(task.words) <= MAX_WORDS and decode(encode(task.words)) == task.words
        if task.kind == "bvn":
            assert task.words == ("find", "the", task.colour, "object")
        else:
            assert task.words == T.ifn_words(task.path, task.start.yaw, task.colour)


def test_instructions_fit_the_cap_over_many_tasks():
    longest = 0
    for ws in range(20):
        world = NavWorld(ws)
        for seed in range(5):
            task = T.make_task(world, "ifn", seed)
            encode(task.words)  # raises if over the cap
            longest = max(longest, len(task.words))
    assert 9 < longest <= MAX_WORDS


def test_make_task_is_deterministic(worlds, sampled):
    w = worlds[1]
    assert T.make_task(w, "ifn", 2) == T.make_task(NavWorld(1), "ifn", 2)
    bvn, ifn = T.make_task(w, "bvn", 3), T.make_task(w, "ifn", 3)
    assert bvn == T.make_task(w, "bvn", 3)
    # the draw depends on the seed alone: both kinds of one seed share the episode, not the words
    assert (bvn.start, bvn.colour, bvn.path) == (ifn.start, ifn.colour, ifn.path) and bvn.words != ifn.words
    starts = {(t.start, t.colour) for t in sampled if t.seed == 1 and t.kind == "bvn"}
    assert len(starts) > 1  # different seeds give different episodes


def test_bad_arguments_name_themselves(worlds):
    w = worlds[0]
    with pytest.raises(ValueError, match="kind"):
        T.make_task(w, "vln", 0)
    with pytest.raises(TypeError, match="kind"):
        T.make_task(w, 1, 0)
    with pytest.raises(ValueError, match="seed"):
        T.make_task(w, "bvn", -1)
    with pytest.raises(TypeError, match="seed"):
        T.make_task(w, "bvn", 1.5)
    with pytest.raises(TypeError, match="world"):
        T.make_task(3, "bvn", 0)
