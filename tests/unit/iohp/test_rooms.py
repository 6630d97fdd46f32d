"""Procedural rooms: seeded, valid (CCW outline, door and swing inside), density-ordered, exact scenes."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.iohp.geometry import corners
from neurips26.iohp.layout import ROOM_TYPES, Furniture, Layout
from neurips26.iohp.rooms import (
    CATEGORIES,
    DENSITIES,
    MAT_HEIGHT,
    ROOM_SIZES,
    TEMPLATES,
    WALL_HEIGHT,
    coverage,
    sample_room,
    to_scene,
)
from neurips26.world import FURNITURE, PALETTE

SEEDS = range(12)


def _signed_area(pts: np.ndarray) -> float:
    x, y = pts[:, 0], pts[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def _floor_corners(box) -> np.ndarray:
    """The (X, Z) corners of a box's bottom face, shape (4, 2)."""
    c = box.corners()
    return c[np.isclose(c[:, 1], c[:, 1].min(), atol=1e-12)][:, [0, 2]]


def _same_points(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    d = np.linalg.norm(a[:, None] - b[None], axis=-1)
    return len(a) == len(b) and d.min(1).max() <= atol and d.min(0).max() <= atol


def test_same_seed_same_room_and_density_never_changes_room():
    for room_type in ROOM_TYPES:
        a = sample_room(room_type, 7, density="dense")
        assert a == sample_room(room_type, 7, density="dense")
        assert sample_room(room_type, 7, density="sparse")[0] == a[0]
        assert sample_room(room_type, 8, density="dense") != a
    assert sample_room("office", 7)[0] != sample_room("bedroom", 7)[0]


@pytest.mark.parametrize("room_type", ROOM_TYPES)
@pytest.mark.parametrize("shape", ["rectangle", "L"])
def test_every_type_and_shape_samples_a_valid_room(room_type, shape):
    (long_lo, long_hi), (short_lo, short_hi) = ROOM_SIZES[room_type]
    mandatory = {c for g in TEMPLATES[room_type] if g.low > 0 for c in g.items}
    for seed in range(6):
        room, furniture = sample_room(room_type, seed, shape=shape)
        assert room.room_type == room_type and room.shape == shape
        pts = room.vertices()
        assert _signed_area(pts) > 0  # counter-clockwise
        x0, y0, x1, y1 = room.bounds
        w, d = x1 - x0, y1 - y0
        assert 3.0 <= min(w, d) and max(w, d) <= 6.0 and min(w, d) <= 5.0
        assert (
            long_lo - 1e-9 <= max(w, d) <= long_hi + 1e-9 and short_lo - 1e-9 <= min(w, d) <= short_hi + 1e-9
        )
        if shape == "L":
            nx0, ny0, nx1, ny1 = room.notch
            assert room.area == pytest.approx(w * d - (nx1 - nx0) * (ny1 - ny0), abs=1e-9)
            assert min(w - (nx1 - nx0), d - (ny1 - ny0)) >= 2.0 - 1e-9  # both arms usable
            assert not room.contains(np.array([(nx0 + nx1) / 2, (ny0 + ny1) / 2]))
        else:
            assert room.notch is None and room.area == pytest.approx(w * d, abs=1e-9)
        assert len(room.doors) == 1 and len(room.windows) <= 2
        assert mandatory <= {f.category for f in furniture}
        assert all(f.pose == (0.0, 0.0, 0.0) and f.category in CATEGORIES for f in furniture)
        assert len({f.name for f in furniture}) == len(furniture)


def test_drawn_shape_matches_the_explicit_one():
    for seed in range(10):
        room, furniture = sample_room("bedroom", seed)
        assert sample_room("bedroom", seed, shape=room.shape) == (room, furniture)


def test_door_on_a_wall_with_its_swing_inside_the_room():
    for room_type in ROOM_TYPES:
        for seed in SEEDS:
            room, _ = sample_room(room_type, seed)
            (door,) = room.doors
            start, end, normal = room.walls()
            s, e = start[door.wall], end[door.wall]
            ends = door.opening()
            for p in ends:  # both ends of the gap on the wall segment, away from its corners
                assert abs((e - s)[0] * (p - s)[1] - (e - s)[1] * (p - s)[0]) < 1e-9
                assert (
                    0.15 - 1e-9
                    <= np.dot(p - s, e - s) / np.linalg.norm(e - s)
                    <= np.linalg.norm(e - s) - 0.15 + 1e-9
                )
            np.testing.assert_allclose(door.inward, normal[door.wall])
            center, size, theta = door.swing_zone()
            pts = corners(center, size, theta)
            assert room.contains(pts).all()
            if room.notch is not None:  # and it does not reach into the notch
                nx0, ny0, nx1, ny1 = room.notch
                lo, hi = pts.min(0), pts.max(0)
                assert (
                    lo[0] >= nx1 - 1e-9 or hi[0] <= nx0 + 1e-9 or lo[1] >= ny1 - 1e-9 or hi[1] <= ny0 + 1e-9
                )
            assert all(w.wall != door.wall for w in room.windows)


def test_densities_ordered_and_near_target():
    gaps = {name: [] for name in DENSITIES}
    for room_type in ROOM_TYPES:
        for seed in SEEDS:
            covs, lists = [], []
            for name in ("sparse", "medium", "dense"):
                room, furniture = sample_room(room_type, seed, density=name)
                covs.append(coverage(room, furniture))
                lists.append(furniture)
                gaps[name].append(covs[-1] - DENSITIES[name])
            assert covs[0] <= covs[1] <= covs[2]
            assert lists[2][: len(lists[1])] == lists[1]  # a denser room only adds pieces
    assert np.mean(gaps["dense"]) + 0.35 > np.mean(gaps["medium"]) + 0.25 + 0.07
    assert abs(np.median(gaps["medium"])) < 0.03 and abs(np.median(gaps["dense"])) < 0.03
    room, furniture = sample_room("living", 0, density=0.3)
    assert coverage(room, furniture) == pytest.approx(
        sum(f.size[0] * f.size[1] for f in furniture) / room.area
    )


def test_scene_boxes_match_furniture_corners_exactly():
    room, furniture = sample_room("dining", 3, shape="L")
    rng = np.random.default_rng(0)
    x0, y0, x1, y1 = room.bounds
    poses = np.column_stack(
        [
            rng.uniform(x0, x1, len(furniture)),
            rng.uniform(y0, y1, len(furniture)),
            rng.uniform(-7, 7, len(furniture)),
        ]
    )
    poses[:4, 2] = [0.0, np.pi / 2, np.pi, -np.pi / 2]
    layout = Layout(room, furniture).with_poses(poses)
    proxies = (rng.uniform(0, 4, (3, 2)), rng.uniform(0.3, 1.0, (3, 2)), rng.uniform(-3, 3, 3))
    scene = to_scene(layout, proxies=proxies)
    for i, f in enumerate(layout.furniture):
        box = scene.box(i + 1)
        assert box.semantic == f.category
        assert _same_points(_floor_corners(box), f.corners(), 1e-9)
        lo, hi = box.world_bounds()
        assert lo[1] == pytest.approx(0.0, abs=1e-12) and hi[1] == pytest.approx(f.height, abs=1e-12)
    mats = [b for b in scene.boxes if b.semantic == "proxy"]
    assert len(mats) == 3
    for k, mat in enumerate(mats):
        want = corners(proxies[0][k], proxies[1][k], proxies[2][k])
        assert _same_points(_floor_corners(mat), want, 1e-9)
        assert mat.size[1] == pytest.approx(MAT_HEIGHT)


@pytest.mark.parametrize("shape", ["rectangle", "L"])
def test_scene_walls_enclose_the_room_with_a_door_gap(shape):
    room, furniture = sample_room("bedroom", 5, shape=shape)
    scene = to_scene(Layout(room, furniture))
    walls = [b for b in scene.boxes if b.semantic in ("wall", "window")]
    assert scene.ground is not None and len(walls) >= len(room.outline)

    def blocked(points_xy: np.ndarray, height: float) -> np.ndarray:
        pts = np.column_stack([points_xy[:, 0], np.full(len(points_xy), height), points_xy[:, 1]])
        return np.any([b.contains(pts) for b in walls], axis=0)

    start, end, normal = room.walls()
    (door,) = room.doors
    gap = door.opening()
    for k in range(len(start)):
        s = np.linspace(0.0, 1.0, 201)[:, None]
        line = start[k] + s * (end[k] - start[k]) - 0.05 * normal[k]  # the wall's centre line, just outside
        in_gap = np.zeros(len(line), bool)
        if k == door.wall:
            t = (line - gap[0]) @ (gap[1] - gap[0]) / np.sum((gap[1] - gap[0]) ** 2)
            in_gap = (t > 1e-6) & (t < 1 - 1e-6)
            assert in_gap.sum() > 10
            assert blocked(line[in_gap], 2.3).all()  # the lintel above the door
        low = blocked(line, 0.5)
        np.testing.assert_array_equal(low, ~in_gap)  # closed at knee height except at the door
        assert blocked(line[~in_gap], WALL_HEIGHT - 0.01).all()
    # convex corners are closed: the square diagonally outside each of them is wall
    convex = room.convex_corners()
    outside_corner = start - 0.05 * normal - 0.05 * np.roll(normal, 1, axis=0)
    assert blocked(outside_corner[convex], 1.0).all()
    # no wall box reaches into the room: points inset 1 % into each footprint are all outside
    st = np.linspace(0.01, 0.99, 9)
    a, b = np.meshgrid(st, st)
    for box in walls:
        c = _floor_corners(box)
        lo, hi = c.min(0), c.max(0)  # walls of a rectilinear room are axis-aligned boxes
        grid = np.column_stack([lo[0] + a.ravel() * (hi - lo)[0], lo[1] + b.ravel() * (hi - lo)[1]])
        assert not room.contains(grid, tol=0.0).any()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"room_type": "kitchen"}, "room_type"),
        ({"density": "crowded"}, "density"),
        ({"density": 0.0}, "density"),
        ({"density": 0.9}, "density"),
        ({"size": (2.0, 4.0)}, "size"),
        ({"size": (6.0, 5.5)}, "size"),
        ({"size": (4.0,)}, "size"),
        ({"shape": "U"}, "shape"),
        ({"seed": -1}, "seed"),
    ],
)
def test_sample_room_bad_input(kwargs, match):
    args = {"room_type": "bedroom", "seed": 0} | kwargs
    with pytest.raises(ValueError, match=match):
        sample_room(**args)


def test_explicit_size_and_bad_scene_input():
    room, _ = sample_room("office", 2, size=(5.5, 3.2), shape="rectangle")
    assert room.bounds == (0.0, 0.0, 5.5, 3.2)
    layout = Layout(room, (Furniture("desk", (1.2, 0.6, 0.75), (1.0, 1.0, 0.0)),))
    with pytest.raises(ValueError, match="proxies"):
        to_scene(layout, proxies=(np.zeros((2, 2)), np.ones((3, 2)), np.zeros(2)))
    with pytest.raises(ValueError, match="proxies"):
        to_scene(layout, proxies=(np.zeros((2, 2)), np.zeros((2, 2)), np.zeros(2)))
    with pytest.raises(TypeError, match="layout"):
        to_scene(room)


def test_chapter_categories_stay_out_of_world_furniture():
    assert set(FURNITURE) == {
        "bed",
        "sofa",
        "table",
        "chair",
        "wardrobe",
        "shelf",
        "desk",
        "cabinet",
        "plant",
    }
    assert all(spec.color in PALETTE for spec in CATEGORIES.values())
    for spec in CATEGORIES.values():
        assert all(0.0 < lo <= hi <= 2.2 for lo, hi in (spec.width, spec.depth, spec.height))
