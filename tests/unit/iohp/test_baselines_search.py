"""Search baselines: the Holodeck-style DFS (hard non-collision, node budget, determinism), random floor
poses and the uniform 0.6 m clearance proxies."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from neurips26.iohp.baselines.clearance import CLEARANCE_DEPTH, uniform_clearance_proxies
from neurips26.iohp.baselines.dfs import HEADINGS, DFSResult, dfs_layout
from neurips26.iohp.baselines.random_poses import random_poses
from neurips26.iohp.geometry import overlap_area
from neurips26.iohp.initial import initial_layout
from neurips26.iohp.layout import ROOM_TYPES, Door, Furniture, Layout, Relation, Room
from neurips26.iohp.metrics import collision_pairs, door_blocking, out_of_bounds, semantic_satisfaction
from neurips26.iohp.objective import Weights, build_problem, energy
from neurips26.iohp.proxy import attach, default_proxies
from neurips26.iohp.rooms import sample_room
from tests.unit.one_thread import one_thread  # noqa: F401  (autouse: one torch thread per test)

PI = math.pi


def _scene(room_type: str, seed: int, density: str = "dense", shape: str | None = None) -> Layout:
    room, furniture = sample_room(room_type, seed, density=density, shape=shape)
    return initial_layout(room, furniture, seed)


def _corridor() -> Layout:
    """A 2.2 x 1 m room (no door) where greedy placement fails: piece 0 (1.2 x 1 m footprint) starts in the
    middle, leaving 0.5 m on each side for piece 1 (1 m wide); only putting 0 at an end leaves room."""
    room = Room("living", ((0.0, 0.0), (2.2, 0.0), (2.2, 1.0), (0.0, 1.0)))
    big = Furniture("sideboard", (1.2, 1.0, 0.8), (1.1, 0.5, PI / 2))
    small = Furniture("sideboard", (1.0, 0.9, 0.8), (1.1, 0.5, PI / 2))
    return Layout(room, (big, small))


def _assert_valid_placement(result: DFSResult) -> None:
    """No pair of placed pieces collides; placed pieces are inside the room and clear of the door swing."""
    placed = np.array(result.placed, dtype=int)
    pairs = collision_pairs(result.layout)
    both = np.isin(pairs, placed).all(axis=1) if len(pairs) else np.zeros(0, dtype=bool)
    assert not both.any(), pairs[both]
    assert not out_of_bounds(result.layout, tol=1e-6)[placed].any()
    assert not door_blocking(result.layout)[placed].any()
    # and exactly: every placed pair overlaps by at most 0.001 m^2
    poses, sizes = result.layout.poses(), result.layout.sizes()[:, :2]
    i, j = np.triu_indices(len(placed), k=1)
    a, b = placed[i], placed[j]
    area = overlap_area(poses[a, :2], sizes[a], poses[a, 2], poses[b, :2], sizes[b], poses[b, 2])
    assert np.all(area <= 0.001)


# ----------------------------------------------------------------------------------------------------------
# DFS
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("room_type", ROOM_TYPES)
def test_dfs_places_every_piece_of_a_dense_room_without_collision(room_type):
    lay = _scene(room_type, 1, shape="L" if room_type in ("living", "office") else None)
    assert collision_pairs(lay).size > 0 or out_of_bounds(lay).any() or lay.n < 6  # the start is flawed
    result = dfs_layout(lay)
    _assert_valid_placement(result)
    assert result.complete and result.unplaced == () and result.placed == tuple(range(lay.n))
    assert result.nodes == lay.n and not result.exhausted  # greedy succeeds here: one node per piece
    assert np.all(np.isin(np.round(result.layout.poses()[:, 2], 12), np.round(HEADINGS, 12)))
    assert result.satisfied == int(semantic_satisfaction(result.layout).satisfied.sum())


def test_dfs_is_deterministic():
    lay = _scene("office", 2)
    a, b = dfs_layout(lay), dfs_layout(lay)
    np.testing.assert_array_equal(a.layout.poses(), b.layout.poses())
    assert (a.placed, a.nodes, a.satisfied) == (b.placed, b.nodes, b.satisfied)


def test_dfs_backtracks_past_a_dead_end():
    lay = _corridor()
    greedy = dfs_layout(lay, branch=1)  # no alternative to the middle: piece 1 cannot go anywhere
    assert greedy.placed == (0,) and greedy.unplaced == (1,) and not greedy.complete
    assert greedy.nodes == 1 and not greedy.exhausted
    np.testing.assert_array_equal(greedy.layout.poses()[1], lay.poses()[1])  # unplaced: initial pose kept
    full = dfs_layout(lay, branch=8)
    assert full.complete and full.nodes > 2  # the middle and its neighbours failed before an end worked
    _assert_valid_placement(full)
    x = np.sort(full.layout.poses()[:, 0])
    assert x[0] < 0.6 and x[1] > 1.4  # one at each end


def test_dfs_respects_the_node_budget():
    lay = _corridor()
    needed = dfs_layout(lay, branch=8).nodes
    assert needed >= 3
    for budget in range(1, needed):
        result = dfs_layout(lay, node_budget=budget, branch=8)
        assert result.nodes == budget and result.exhausted and not result.complete
        assert result.placed == (0,)  # the best partial assignment: one piece down
        _assert_valid_placement(result)
    assert dfs_layout(lay, node_budget=needed, branch=8).complete
    scene = _scene("living", 0)
    for budget in (1, 3, scene.n - 1):
        result = dfs_layout(scene, node_budget=budget)
        assert result.nodes == budget and result.exhausted
        assert len(result.placed) == budget and len(result.unplaced) == scene.n - budget
        _assert_valid_placement(result)
        unplaced = list(result.unplaced)
        np.testing.assert_array_equal(result.layout.poses()[unplaced], scene.poses()[unplaced])
    assert dfs_layout(scene, node_budget=scene.n).complete


def test_dfs_prefers_relations_then_the_initial_pose():
    door = Door.on_segment(0, (0.0, 0.0), (4.0, 0.0), 3.3, 0.8)  # swing [2.9, 3.7] x [0, 0.8]
    room = Room("office", ((0.0, 0.0), (4.0, 0.0), (4.0, 3.0), (0.0, 3.0)), None, (door,))
    furniture = (
        Furniture("desk", (1.2, 0.6, 0.75), (1.5, 1.0, PI / 2)),  # floating, facing +y
        Furniture("chair", (0.5, 0.5, 0.9), (1.45, 2.05, 0.0)),  # beside it, facing +x (on the lattice)
    )
    relations = (
        Relation("against_wall", (0,)),
        Relation("faces", (1, 0)),
        Relation("side_of", (1, 0), side="front"),
    )
    lay = Layout(room, furniture, relations)
    result = dfs_layout(lay)
    assert result.complete and result.satisfied == 3
    assert semantic_satisfaction(result.layout).rate() == 1.0
    desk, chair = result.layout.poses()
    # the desk goes back to the nearest wall keeping its heading (bottom wall, 0.7 m away), at x = 1.5
    np.testing.assert_allclose(desk, [1.5, 0.3, PI / 2], atol=1e-9)
    assert chair[1] > 0.6 and abs(chair[0] - 1.5) <= 0.6  # in front of the desk, within its width
    _assert_valid_placement(result)
    # without relations only the distance counts: both stay where they started (they are clear)
    free = dfs_layout(Layout(room, furniture))
    np.testing.assert_allclose(free.layout.poses(), lay.poses(), atol=1e-9)


def test_dfs_bad_input_is_named():
    lay = _corridor()
    with pytest.raises(ValueError, match="node_budget"):
        dfs_layout(lay, node_budget=0)
    with pytest.raises(TypeError, match="node_budget"):
        dfs_layout(lay, node_budget=2.5)
    with pytest.raises(ValueError, match="grid"):
        dfs_layout(lay, grid=0.001)
    with pytest.raises(ValueError, match="branch"):
        dfs_layout(lay, branch=0)
    with pytest.raises(ValueError, match="threshold"):
        dfs_layout(lay, threshold=-1.0)
    with pytest.raises(TypeError, match="layout"):
        dfs_layout(lay.room)


# ----------------------------------------------------------------------------------------------------------
# random poses
# ----------------------------------------------------------------------------------------------------------


def test_random_poses_seeded_and_inside_the_room():
    lay = _scene("living", 3, shape="L")
    assert lay.room.notch is not None
    a, b, c = random_poses(lay, 7), random_poses(lay, 7), random_poses(lay, 8)
    np.testing.assert_array_equal(a.poses(), b.poses())
    assert not np.array_equal(a.poses(), c.poses())
    assert a.furniture[0].size == lay.furniture[0].size and a.relations == lay.relations
    x0, y0, x1, y1 = lay.room.bounds
    many = np.concatenate([random_poses(lay, s).poses() for s in range(40)])
    assert np.all((many[:, 0] >= x0) & (many[:, 0] <= x1) & (many[:, 1] >= y0) & (many[:, 1] <= y1))
    assert lay.room.contains(many[:, :2], tol=0.0).all()  # centres never in the notch
    np.testing.assert_array_equal(np.unique(np.round(many[:, 2], 12)), np.unique(np.round(HEADINGS, 12)))
    # roughly uniform: each quarter of the bounding box that is floor gets centres
    assert np.ptp(many[:, 0]) > 0.8 * (x1 - x0) and np.ptp(many[:, 1]) > 0.8 * (y1 - y0)


def test_random_poses_bad_input():
    lay = _corridor()
    with pytest.raises(ValueError, match="seed"):
        random_poses(lay, -1)
    with pytest.raises(TypeError, match="layout"):
        random_poses(lay.furniture, 0)


# ----------------------------------------------------------------------------------------------------------
# uniform clearance
# ----------------------------------------------------------------------------------------------------------


def test_clearance_proxies_geometry():
    rng = np.random.default_rng(0)
    lay = _scene("bedroom", 4)
    poses = lay.poses() + np.c_[rng.normal(0, 0.1, (lay.n, 2)), rng.uniform(-PI, PI, lay.n)]
    lay = lay.with_poses(poses)
    proxies = uniform_clearance_proxies(lay)
    assert len(proxies) == lay.n == len(uniform_clearance_proxies(lay.furniture))
    for i, p in enumerate(proxies):
        assert (p.owner, p.posture, p.side, p.offset, p.shift) == (i, "stand", "front", 0.0, 0.0)
        assert p.size[:2] == (lay.furniture[i].width, CLEARANCE_DEPTH)
        assert p.relations == () and p.allowed == () and not p.simultaneous
    center, size, theta = attach(proxies, poses, lay.sizes())
    u = np.stack([np.cos(poses[:, 2]), np.sin(poses[:, 2])], axis=1)
    expected = poses[:, :2] + (lay.sizes()[:, 1:2] / 2 + CLEARANCE_DEPTH / 2) * u
    np.testing.assert_allclose(center, expected, atol=1e-12)
    np.testing.assert_allclose(size, np.c_[lay.sizes()[:, 0], np.full(lay.n, CLEARANCE_DEPTH)])
    np.testing.assert_allclose(theta, poses[:, 2])
    deeper = uniform_clearance_proxies(lay, depth=0.9)
    assert all(p.size[1] == 0.9 for p in deeper)


def test_clearance_proxies_in_the_objective():
    # a wardrobe whose strip holds a chair: keep-out fires, no functional term exists
    room = Room("bedroom", ((0.0, 0.0), (4.0, 0.0), (4.0, 3.0), (0.0, 3.0)))
    furniture = (
        Furniture("wardrobe", (1.2, 0.6, 2.0), (2.0, 0.3, PI / 2)),
        Furniture("chair", (0.5, 0.5, 0.9), (2.0, 0.9, 0.0)),
    )
    lay = Layout(room, furniture)
    generic = uniform_clearance_proxies(lay)
    problem = build_problem([lay, lay], [generic, default_proxies(lay)], dtype=torch.float64)
    terms = energy(problem.initial_poses(), problem, weights=Weights(orientation=0.0)).numpy()
    assert terms["proxy_conflict"][0] > 0.0 and terms["functional"][0] == 0.0
    assert problem.fn_mask[0].sum() == 0 and problem.proxy_mask[0].sum() == 2


def test_clearance_bad_input():
    lay = _corridor()
    with pytest.raises(ValueError, match="depth"):
        uniform_clearance_proxies(lay, depth=0.0)
    with pytest.raises(ValueError, match="depth"):
        uniform_clearance_proxies(lay, depth=7.0)
    with pytest.raises(TypeError, match="furniture"):
        uniform_clearance_proxies(lay.furniture[0])
    with pytest.raises(TypeError, match="furniture"):
        uniform_clearance_proxies([lay.furniture[0], "chair"])
