"""Floor-plan records: exact corners, room geometry, obstacle coverage, relation and layout checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neurips26.iohp.geometry import corners, front, side
from neurips26.iohp.layout import (
    OBSTACLE_KINDS,
    Door,
    Furniture,
    Layout,
    Relation,
    Room,
    Window,
)

L_OUTLINE = ((0.0, 0.0), (6.0, 0.0), (6.0, 3.0), (4.0, 3.0), (4.0, 5.0), (0.0, 5.0))
L_NOTCH = (4.0, 3.0, 6.0, 5.0)


def _l_room(**kw) -> Room:
    return Room("living", L_OUTLINE, L_NOTCH, **kw)


def _in_rectangles(points: np.ndarray, center, size, theta, tol: float = 1e-12) -> np.ndarray:
    """(N, m) bool: point n inside rectangle m, by projection on the rectangle's own axes."""
    rel = points[:, None, :] - center[None]
    alpha = np.sum(rel * side(theta)[None], axis=-1)
    beta = np.sum(rel * front(theta)[None], axis=-1)
    return (np.abs(alpha) <= size[None, :, 0] / 2 + tol) & (np.abs(beta) <= size[None, :, 1] / 2 + tol)


def _boundary_distance(room: Room, points: np.ndarray) -> np.ndarray:
    start, end, _ = room.walls()
    seg = end - start
    rel = points[:, None, :] - start[None]
    s = np.clip(np.sum(rel * seg, -1) / np.sum(seg * seg, -1), 0, 1)
    return np.min(np.linalg.norm(rel - s[..., None] * seg, axis=-1), axis=1)


# --- rectangles and furniture ------------------------------------------------------------------


def test_corners_axis_aligned_exact_and_ccw():
    c = corners(np.array([1.0, 2.0]), np.array([0.6, 2.0]), 0.0)  # w along y, d along x
    np.testing.assert_array_equal(c, [[0.0, 1.7], [2.0, 1.7], [2.0, 2.3], [0.0, 2.3]])
    x, y = c[:, 0], c[:, 1]
    signed = 0.5 * np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y)
    assert signed == pytest.approx(0.6 * 2.0, abs=1e-12)  # counter-clockwise, area w d


def test_corners_rigid_and_front_face():
    rng = np.random.default_rng(0)
    center, size, theta = rng.normal(size=(5, 2)), rng.uniform(0.2, 2.0, (5, 2)), rng.uniform(-4, 4, 5)
    c = corners(center, size, theta)
    assert c.shape == (5, 4, 2)
    local = corners(np.zeros((5, 2)), size, np.zeros(5))
    rot = np.stack(
        [np.stack([np.cos(theta), -np.sin(theta)], -1), np.stack([np.sin(theta), np.cos(theta)], -1)], -2
    )
    np.testing.assert_allclose(c, np.einsum("nij,nkj->nki", rot, local) + center[:, None], atol=1e-12)
    # corners 1 and 2 make the front face, at +d/2 along u
    front_mid = (c[:, 1] + c[:, 2]) / 2
    np.testing.assert_allclose(front_mid, center + size[:, 1:2] / 2 * front(theta), atol=1e-12)


def test_furniture_fields_and_corners():
    f = Furniture("desk", (1.2, 0.6, 0.75), (1.0, 2.0, math.pi / 2), "desk_1")
    assert (f.width, f.depth, f.height) == (1.2, 0.6, 0.75)
    assert f.footprint_area == pytest.approx(0.72)
    np.testing.assert_allclose(f.front(), [0.0, 1.0], atol=1e-15)
    # turned by 90 degrees: the 1.2 m width lies along x, the 0.6 m depth along y
    lo, hi = f.corners().min(0), f.corners().max(0)
    np.testing.assert_allclose(hi - lo, [1.2, 0.6], atol=1e-12)
    g = f.with_pose((3.0, 4.0, 0.0))
    assert g.pose == (3.0, 4.0, 0.0) and g.size == f.size and g.name == "desk_1"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"size": (1.0, 0.0, 1.0)}, "size"),
        ({"size": (1.0, -0.5, 1.0)}, "size"),
        ({"size": (1.0, 0.5)}, "size"),
        ({"pose": (0.0, float("nan"), 0.0)}, "pose"),
        ({"category": ""}, "category"),
    ],
)
def test_furniture_bad_input(kwargs, match):
    args = {"category": "bed", "size": (1.6, 2.0, 0.5)} | kwargs
    with pytest.raises(ValueError, match=match):
        Furniture(**args)


# --- rooms ---------------------------------------------------------------------------------------


def test_rectangle_room_geometry():
    r = Room("bedroom", ((0.0, 0.0), (4.0, 0.0), (4.0, 3.0), (0.0, 3.0)))
    assert r.shape == "rectangle" and r.area == pytest.approx(12.0) and r.bounds == (0.0, 0.0, 4.0, 3.0)
    assert r.convex_corners().all()
    start, end, normal = r.walls()
    np.testing.assert_allclose(normal, [[0, 1], [-1, 0], [0, -1], [1, 0]], atol=1e-15)
    mid = (start + end) / 2
    assert r.contains(mid + 1e-3 * normal).all() and not r.contains(mid - 1e-3 * normal).any()


def test_l_room_area_contains_and_corners():
    r = _l_room()
    assert r.shape == "L" and r.area == pytest.approx(6 * 5 - 2 * 2)
    np.testing.assert_array_equal(r.convex_corners(), [True, True, True, False, True, True])
    inside = np.array([[1.0, 1.0], [5.0, 1.0], [3.9, 4.9], [0.5, 4.5]])
    outside = np.array([[-0.1, 1.0], [6.1, 1.0], [2.0, 5.2], [3.0, -0.01]])
    notch = np.array([[5.0, 4.0], [4.1, 3.1], [5.9, 4.9]])
    assert r.contains(inside).all()
    assert not r.contains(outside).any()
    assert not r.contains(notch).any()
    # the boundary is closed (within tol), and the batch shape is kept
    assert r.contains(np.array([[4.0, 4.0], [6.0, 0.0]])).all()
    assert r.contains(np.zeros((3, 7, 2))).shape == (3, 7)


@pytest.mark.parametrize("shape", ["rectangle", "L"])
def test_obstacles_cover_outside_and_spare_inside(shape):
    if shape == "L":
        door = Door.on_segment(0, (0.0, 0.0), (6.0, 0.0), 2.0, 0.9)
        room = _l_room(doors=(door,))
    else:
        door = Door.on_segment(1, (5.0, 0.0), (5.0, 4.0), 1.0, 0.8)
        room = Room("office", ((0.0, 0.0), (5.0, 0.0), (5.0, 4.0), (0.0, 4.0)), doors=(door,))
    thickness = 1.5
    center, size, theta = room.obstacles(thickness=thickness)
    n_walls = len(room.outline)
    assert center.shape == (n_walls + (shape == "L") + 1, 2) and size.shape == center.shape
    assert theta.shape == (len(center),)

    rng = np.random.default_rng(1)
    x0, y0, x1, y1 = room.bounds
    pts = rng.uniform([x0 - thickness, y0 - thickness], [x1 + thickness, y1 + thickness], (20000, 2))
    dist = _boundary_distance(room, pts)
    inside = room.contains(pts, tol=0.0)
    hit = _in_rectangles(pts, center, size, theta)
    walls_hit = hit[:, :n_walls].any(1)

    far_out = ~inside & (dist <= 0.95 * thickness)
    assert far_out.sum() > 1000 and walls_hit[far_out].all()  # the outside near the room is walled off
    strictly_in = inside & (dist > 1e-6)
    assert not hit[strictly_in][:, : len(center) - 1].any()  # walls and notch never reach into the room
    sc, ss, st = door.swing_zone()
    in_swing = _in_rectangles(pts, sc[None], ss[None], np.array([st]))[:, 0]
    np.testing.assert_array_equal(
        hit[strictly_in, -1], in_swing[strictly_in]
    )  # the door obstacle = its swing

    # points just outside each wall, along its whole length, are covered
    start, end, normal = room.walls()
    s = np.linspace(0.0, 1.0, 41)
    along = start[:, None] + s[None, :, None] * (end - start)[:, None]
    probe = (along - 1e-4 * normal[:, None]).reshape(-1, 2)
    assert _in_rectangles(probe, center[:n_walls], size[:n_walls], theta[:n_walls]).any(1).all()


def test_obstacle_kinds_and_notch():
    room = _l_room(doors=(Door.on_segment(0, (0.0, 0.0), (6.0, 0.0), 2.0, 0.9),))
    c, s, t = room.obstacles(kinds=("notch",))
    np.testing.assert_allclose(c, [[5.0, 4.0]])
    np.testing.assert_allclose(s, [[2.0, 2.0]])
    assert t.tolist() == [0.0]
    assert len(room.obstacles(kinds=("wall", "door"))[0]) == 7
    assert len(room.obstacles(kinds=())[0]) == 0
    assert set(OBSTACLE_KINDS) == {"wall", "notch", "door"}
    with pytest.raises(ValueError, match="kinds"):
        room.obstacles(kinds=("walls",))
    with pytest.raises(ValueError, match="thickness"):
        room.obstacles(thickness=0.0)


def test_door_on_wall_and_swing_zone():
    d = Door.on_segment(2, (6.0, 3.0), (4.0, 3.0), 1.0, 0.8)  # the notch's lower edge of the L, facing -y
    np.testing.assert_allclose(d.center, (5.0, 3.0))
    np.testing.assert_allclose(d.inward, (0.0, -1.0))
    np.testing.assert_allclose(d.opening(), [[5.4, 3.0], [4.6, 3.0]])
    c, s, t = d.swing_zone()
    np.testing.assert_allclose(c, [5.0, 2.6])
    np.testing.assert_allclose(s, [0.8, 0.8])
    pts = corners(c, s, t)
    np.testing.assert_allclose(np.sort(pts[:, 1]), [2.2, 2.2, 3.0, 3.0], atol=1e-12)
    room = _l_room(doors=(d,), windows=(Window.on_segment(5, (0.0, 5.0), (0.0, 0.0), 2.0, 1.2),))
    assert room.contains(pts).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"room_type": "kitchen"}, "room_type"),
        ({"outline": ((0.0, 0.0), (0.0, 3.0), (4.0, 3.0), (4.0, 0.0))}, "outline.*counter-clockwise"),
        ({"outline": ((0.0, 0.0), (4.0, 0.5), (4.0, 3.0), (0.0, 3.0))}, "outline.*axis-aligned"),
        ({"outline": ((0.0, 0.0), (4.0, 0.0), (4.0, 3.0))}, "outline"),
        ({"outline": ((0.0, 0.0), (2.0, 0.0), (4.0, 0.0), (4.0, 3.0), (0.0, 3.0))}, "outline.*collinear"),
        ({"notch": (1.0, 1.0, 2.0, 2.0)}, "notch"),
        ({"notch": (3.0, 2.0, 5.0, 4.0)}, "notch"),
        ({"doors": (Door(0, (2.0, 0.5), 0.8, (0.0, 1.0)),)}, r"doors\[0\]"),
        ({"doors": (Door(0, (0.2, 0.0), 0.8, (0.0, 1.0)),)}, r"doors\[0\]"),
        ({"doors": (Door(0, (2.0, 0.0), 0.8, (0.0, -1.0)),)}, r"doors\[0\]\.inward"),
        ({"doors": (Door(9, (2.0, 0.0), 0.8, (0.0, 1.0)),)}, r"doors\[0\]\.wall"),
        ({"windows": (Window(3, (0.0, 1.5), 4.0, (1.0, 0.0)),)}, r"windows\[0\]"),
    ],
)
def test_room_bad_input(kwargs, match):
    args = {"room_type": "office", "outline": ((0.0, 0.0), (4.0, 0.0), (4.0, 3.0), (0.0, 3.0))} | kwargs
    with pytest.raises(ValueError, match=match):
        Room(**args)


def test_opening_bad_input():
    with pytest.raises(ValueError, match="offset"):
        Door.on_segment(0, (0.0, 0.0), (2.0, 0.0), 0.2, 0.8)
    with pytest.raises(ValueError, match="width"):
        Door.on_segment(0, (0.0, 0.0), (2.0, 0.0), 1.0, 0.0)
    with pytest.raises(ValueError, match="inward"):
        Door(0, (1.0, 0.0), 0.8, (0.0, 2.0))


# --- relations and layouts ------------------------------------------------------------------------


def test_relations_valid_and_bad():
    assert Relation("near", (0, 1), distance=(0.5, 1.0)).distance == (0.5, 1.0)
    assert Relation("side_of", (2, 1), side="left").objects == (2, 1)
    assert Relation("against_wall", (3,)).objects == (3,)
    with pytest.raises(ValueError, match="kind"):
        Relation("above", (0, 1))
    with pytest.raises(ValueError, match="distance"):
        Relation("near", (0, 1))
    with pytest.raises(ValueError, match="distance"):
        Relation("near", (0, 1), distance=(2.0, 1.0))
    with pytest.raises(ValueError, match="distance"):
        Relation("faces", (0, 1), distance=(1.0, 2.0))
    with pytest.raises(ValueError, match="side"):
        Relation("side_of", (0, 1), side="above")
    with pytest.raises(ValueError, match="objects"):
        Relation("against_wall", (0, 1))
    with pytest.raises(ValueError, match="objects"):
        Relation("faces", (1, 1))
    with pytest.raises(ValueError, match="objects"):
        Relation("faces", (0, -1))


def _layout() -> Layout:
    room = Room("office", ((0.0, 0.0), (4.0, 0.0), (4.0, 3.0), (0.0, 3.0)))
    furniture = (
        Furniture("desk", (1.2, 0.6, 0.75), (2.0, 0.3, math.pi / 2), "desk_1"),
        Furniture("chair", (0.5, 0.5, 0.9), (2.0, 1.0, -math.pi / 2), "chair_1"),
    )
    return Layout(room, furniture, (Relation("faces", (1, 0)), Relation("against_wall", (0,))))


def test_layout_arrays_and_with_poses():
    lay = _layout()
    assert lay.n == 2 and lay.categories == ("desk", "chair")
    assert lay.poses().shape == (2, 3) and lay.sizes().shape == (2, 3)
    np.testing.assert_array_equal(lay.sizes()[:, 0], [1.2, 0.5])
    np.testing.assert_allclose(lay.corners()[1], lay.furniture[1].corners())
    new = np.array([[1.0, 1.0, 0.0], [3.0, 2.0, 1.0]])
    moved = lay.with_poses(new)
    np.testing.assert_array_equal(moved.poses(), new)
    assert moved.sizes().tolist() == lay.sizes().tolist() and moved.relations == lay.relations
    assert moved.with_poses(lay.poses()) == lay  # exact round trip
    assert Layout(lay.room, ()).poses().shape == (0, 3)


def test_layout_bad_input():
    lay = _layout()
    with pytest.raises(ValueError, match="poses"):
        lay.with_poses(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="poses"):
        lay.with_poses(np.full((2, 3), np.inf))
    with pytest.raises(ValueError, match="relations"):
        Layout(lay.room, lay.furniture, (Relation("near", (0, 2), distance=(0.0, 1.0)),))
    with pytest.raises(TypeError, match="furniture"):
        Layout(lay.room, ("desk",))
