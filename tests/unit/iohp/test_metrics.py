"""Layout metrics: exact collision and bounds counts, door-connected radius-aware access, functional and
semantic satisfaction (the objective's geometry), invariances."""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pytest
import torch
from scipy import ndimage

from neurips26.iohp.geometry import overlap_area
from neurips26.iohp.initial import propose_initial
from neurips26.iohp.layout import Door, Furniture, Layout, Relation, Room, Window
from neurips26.iohp.metrics import (
    AccessMap,
    LayoutMetrics,
    access_map,
    accessible_objects,
    accessible_proxies,
    collision_pairs,
    door_blocking,
    floor_grid,
    free_ratio,
    functional_satisfaction,
    layout_metrics,
    navigable,
    out_of_bounds,
    proxy_conflicts,
    reachability,
    relation_holds,
    semantic_satisfaction,
)
from neurips26.iohp.objective import Weights, build_problem, energy
from neurips26.iohp.proxy import FunctionalRelation, attach, default_proxies
from neurips26.iohp.rooms import sample_room, to_scene
from neurips26.world import occupancy_map

L_OUTLINE = ((0.0, 0.0), (6.0, 0.0), (6.0, 3.0), (4.0, 3.0), (4.0, 5.0), (0.0, 5.0))
L_NOTCH = (4.0, 3.0, 6.0, 5.0)
PI = math.pi


def _rect_room(w: float = 6.0, d: float = 5.0, *, door_wall: int = 0, door_at: float = 1.0) -> Room:
    """A ``[0, w] x [0, d]`` room with one 0.85 m door ``door_at`` metres along wall ``door_wall``."""
    outline = ((0.0, 0.0), (w, 0.0), (w, d), (0.0, d))
    s, e = outline[door_wall], outline[(door_wall + 1) % 4]
    return Room("living", outline, None, (Door.on_segment(door_wall, s, e, door_at, 0.85),))


def _l_room() -> Room:
    return Room("living", L_OUTLINE, L_NOTCH, (Door.on_segment(0, (0.0, 0.0), (6.0, 0.0), 2.0, 0.85),))


def _piece(
    w: float, d: float, x: float, y: float, theta: float = 0.0, category: str = "sideboard"
) -> Furniture:
    return Furniture(category, (w, d, 0.8), (x, y, theta))


def _front_proxies(layout: Layout, depth: float = 0.6) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One ``w x depth`` proxy flush with each piece's front face."""
    poses, sizes = layout.poses(), layout.sizes()
    u = np.stack([np.cos(poses[:, 2]), np.sin(poses[:, 2])], axis=1)
    center = poses[:, :2] + (sizes[:, 1:2] / 2 + depth / 2) * u
    return center, np.stack([sizes[:, 0], np.full(layout.n, depth)], axis=1), poses[:, 2].copy()


def _random_scene(seed: int, shape: str) -> tuple[Layout, tuple, np.ndarray, np.ndarray, np.ndarray]:
    """A sampled room, seeded poses (half snapped to 90 degrees), front proxies, owners, allowed, front."""
    room, furniture = sample_room("living", seed, density="dense", shape=shape)
    rng = np.random.default_rng(seed)
    x0, y0, x1, y1 = room.bounds
    n = len(furniture)
    theta = np.where(rng.random(n) < 0.5, rng.integers(4, size=n) * PI / 2, rng.uniform(-PI, PI, n))
    poses = np.stack([rng.uniform(x0 + 0.4, x1 - 0.4, n), rng.uniform(y0 + 0.4, y1 - 0.4, n), theta], axis=1)
    layout = Layout(room, furniture).with_poses(poses)
    allowed = rng.random((n, n)) < 0.2
    front = rng.random(n) < 0.8
    return layout, _front_proxies(layout), np.arange(n), allowed, front


# --- rigid motions of a whole scene ---------------------------------------------------------------


def _turn(p: np.ndarray, k: int) -> np.ndarray:
    """Points (..., 2) turned by k * 90 degrees about the origin, exactly (coordinate swaps and negations)."""
    for _ in range(k % 4):
        p = np.stack([-p[..., 1], p[..., 0]], axis=-1)
    return p


def _moved_room(room: Room, k: int, shift: np.ndarray) -> Room:
    def move(p):
        return tuple(float(v) for v in _turn(np.asarray(p, dtype=float), k) + shift)

    outline = tuple(move(p) for p in room.outline)
    notch = None
    if room.notch is not None:
        a0, b0, a1, b1 = room.notch
        pts = _turn(np.array([[a0, b0], [a1, b1]]), k) + shift
        notch = (*pts.min(axis=0).tolist(), *pts.max(axis=0).tolist())
    doors = tuple(
        Door(dr.wall, move(dr.center), dr.width, tuple(_turn(np.array(dr.inward), k))) for dr in room.doors
    )
    windows = tuple(
        Window(wi.wall, move(wi.center), wi.width, tuple(_turn(np.array(wi.inward), k)))
        for wi in room.windows
    )
    return Room(room.room_type, outline, notch, doors, windows)


def _moved(layout: Layout, proxies: tuple, k: int, shift) -> tuple[Layout, tuple]:
    shift = np.asarray(shift, dtype=float)
    poses = layout.poses()
    poses = np.concatenate([_turn(poses[:, :2], k) + shift, poses[:, 2:] + k * PI / 2], axis=1)
    moved = Layout(_moved_room(layout.room, k, shift), layout.furniture, layout.relations).with_poses(poses)
    center, size, theta = proxies
    return moved, (_turn(center, k) + shift, size, theta + k * PI / 2)


# --- empty rooms ---------------------------------------------------------------------------------


@pytest.mark.parametrize("room", [_rect_room(), _l_room()], ids=["rectangle", "L"])
def test_empty_room_is_free_and_reachable(room):
    lay = Layout(room, ())
    m = layout_metrics(lay)
    grid = floor_grid(lay)
    n_floor = int(grid.floor.sum())
    assert n_floor * 0.05**2 == pytest.approx(room.area, abs=1e-9)  # the grid tiles the room exactly
    assert m.free_ratio == 1.0 and m.accessibility == 1.0 and m.navigable
    assert m.collision_pairs == 0 and m.out_of_bounds == 0.0 and not m.door_blocked
    # the disk sweeps every free cell except 8 cells in each convex corner (r = 4 cells)
    convex = int(room.convex_corners().sum())
    assert m.reachability == pytest.approx(1.0 - 8 * convex / n_floor, abs=1e-12)
    access = access_map(lay)
    assert access.reachable.sum() == access.navigable.sum() > 0  # one component, entered from the door
    assert access.door.any()


def test_sparse_room_everything_accessible():
    room = _rect_room()
    furniture = (
        _piece(1.6, 0.45, 3.0, 4.775, -PI / 2),  # sideboard against the top wall, facing down
        _piece(0.5, 0.5, 5.75, 2.5, PI, "chair"),  # against the right wall, facing left
        _piece(1.0, 0.35, 0.175, 3.0, 0.0, "bookshelf"),  # against the left wall, facing right
    )
    lay = Layout(room, furniture)
    proxies = _front_proxies(lay)
    m = layout_metrics(lay, proxies, owner=np.arange(3))
    assert m.accessibility == 1.0 and m.proxy_accessibility == 1.0 and m.navigable
    assert m.proxy_conflict == 0.0 and m.out_of_bounds == 0.0 and m.collision_pairs == 0
    assert accessible_objects(lay).all()  # front strips, without proxies
    assert m.reachability > 0.95


# --- accessibility -------------------------------------------------------------------------------


def _barrier_layout(gap: bool) -> Layout:
    """A 6 x 4 room, door in the left wall, bookshelves across x = 3 (one left out if ``gap``)."""
    room = _rect_room(6.0, 4.0, door_wall=3, door_at=2.0)  # wall 3 runs from (0, 4) down to (0, 0)
    shelves = [
        _piece(1.0, 0.4, 3.0, y, PI, "bookshelf") for y in (0.5, 1.5, 2.5, 3.5)
    ]  # fronts face the door
    if gap:
        del shelves[1]
    near = _piece(1.2, 0.45, 1.5, 0.225, PI / 2)  # door side, against the bottom wall
    far = _piece(1.2, 0.6, 5.7, 2.0, PI, "desk")  # behind the barrier, facing it
    return Layout(room, (*shelves, near, far))


def test_barrier_cuts_off_the_far_side():
    lay = _barrier_layout(gap=False)
    ok = accessible_objects(lay)
    np.testing.assert_array_equal(ok, [True, True, True, True, True, False])
    proxies = _front_proxies(lay)
    np.testing.assert_array_equal(accessible_proxies(lay, proxies), ok)
    m = layout_metrics(lay, proxies, owner=np.arange(lay.n))
    assert not m.navigable and m.accessibility == pytest.approx(5 / 6)
    access = access_map(lay)
    centers = access.grid.centers()
    assert not access.reachable[centers[..., 0] > 3.2].any()  # nothing beyond the shelves
    assert m.reachability < 0.55  # the far half of the floor is lost
    # a 1 m gap in the barrier lets the person through
    opened = _barrier_layout(gap=True)
    assert accessible_objects(opened).all() and navigable(opened)
    assert reachability(opened) > 0.9


@pytest.mark.parametrize(("gap", "passes"), [(0.35, False), (0.40, False), (0.45, True), (0.50, True)])
def test_narrowest_passable_gap_is_two_radii_plus_a_cell(gap, passes):
    # a cell-aligned gap of g metres leaves g / cell free cells; a centre needs more than r / cell = 4 free
    # cells on each side, so 9 cells (0.45 m) is the narrowest corridor a 0.2 m person passes at 5 cm
    room = _rect_room(6.0, 4.0, door_wall=3, door_at=2.0)
    low = _piece(1.5, 0.4, 3.0, 0.75, PI, "bookshelf")  # y in [0, 1.5]
    high = _piece(2.5 - gap, 0.4, 3.0, 1.5 + gap + (2.5 - gap) / 2, PI, "bookshelf")  # y in [1.5 + gap, 4]
    far = _piece(1.2, 0.6, 5.7, 2.0, PI, "desk")
    lay = Layout(room, (low, high, far))
    assert accessible_objects(lay)[2] == passes
    assert accessible_objects(lay, radius=0.15)[2]  # a slimmer person always passes these gaps


def test_accessibility_monotone_in_radius():
    radii = (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4)
    for seed, shape in ((0, "rectangle"), (1, "L"), (2, "rectangle")):
        lay, proxies, owner, _, front = _random_scene(seed, shape)
        prev_obj = prev_prox = prev_cells = None
        for r in radii:
            obj = accessible_objects(lay, proxies, owner=owner, front=front, radius=r)
            prox = accessible_proxies(lay, proxies, radius=r)
            cells = access_map(lay, radius=r).reachable
            if prev_obj is not None:
                assert not (obj & ~prev_obj).any() and not (prox & ~prev_prox).any()
                assert not (cells & ~prev_cells).any()
            prev_obj, prev_prox, prev_cells = obj, prox, cells
        assert prev_cells.sum() < access_map(lay, radius=0.0).reachable.sum()  # the radius matters


def test_erosion_equals_the_disk_reference():
    lay, *_ = _random_scene(3, "L")
    for radius in (0.1, 0.2, 0.3):
        access = access_map(lay, radius=radius)
        r = round(radius / 0.05)
        off = np.arange(-r, r + 1)
        disk = off[:, None] ** 2 + off[None, :] ** 2 <= r * r
        padded = np.pad(access.grid.free, r + 1, constant_values=False)
        reference = ndimage.binary_erosion(padded, structure=disk)[r + 1 : -r - 1, r + 1 : -r - 1]
        np.testing.assert_array_equal(access.navigable, reference)
        reach = access.reachable
        dilated = ndimage.binary_dilation(np.pad(reach, r + 1), structure=disk)[
            r + 1 : -r - 1, r + 1 : -r - 1
        ]
        np.testing.assert_array_equal(access.swept, dilated & access.grid.free)


# --- grid ----------------------------------------------------------------------------------------


def test_grid_agrees_with_world_occupancy_map():
    lay, *_ = _random_scene(4, "rectangle")
    x0, y0, x1, y1 = lay.room.bounds
    grid = floor_grid(lay)
    occ = occupancy_map(to_scene(lay), 0.05, bounds=(x0, x1, y0, y1), y_range=(0.0, 2.0))
    assert occ.shape == grid.shape
    assert occ.x0 == pytest.approx(grid.x0, abs=1e-12) and occ.z0 == pytest.approx(grid.y0, abs=1e-12)
    ours = grid.occupied
    assert not (ours & ~occ.occupied).any()  # a centre inside a box: the cell overlaps it
    near = ndimage.binary_dilation(ours, structure=np.ones((3, 3), dtype=bool))
    assert not (occ.occupied & ~near).any()  # the conservative grid adds at most one cell along edges


def test_free_ratio_within_the_quantisation_bound():
    room = _rect_room()
    furniture = (
        _piece(1.37, 0.61, 1.3, 1.2, 0.3),
        _piece(0.9, 0.9, 4.0, 3.5, PI / 4),
        _piece(2.0, 0.45, 3.0, 0.3, PI / 2),
    )
    lay = Layout(room, furniture)
    assert collision_pairs(lay).size == 0 and not out_of_bounds(lay).any()
    sizes = lay.sizes()
    exact = 1.0 - float(np.sum(sizes[:, 0] * sizes[:, 1])) / room.area
    cell = 0.05
    h = cell / math.sqrt(2)  # misclassified cells lie within half a diagonal of an edge
    bound = sum(2 * h * 2 * (w + d) + PI * h * h for w, d, _ in sizes) / room.area
    assert abs(free_ratio(lay) - exact) <= bound
    assert free_ratio(lay, cell=0.01) == pytest.approx(exact, abs=bound / 5)


# --- exact physical metrics ----------------------------------------------------------------------


def test_collision_counts_on_hand_built_overlaps():
    room = _rect_room()
    furniture = (
        _piece(1.0, 1.0, 1.0, 1.0),  # A
        _piece(1.0, 1.0, 1.5, 1.0),  # B: overlaps A by 0.5 m^2
        _piece(1.0, 1.0, 1.0, 1.9995),  # C: 0.0005 m^2 with A, 0.00025 m^2 with B
        _piece(1.0, 1.0, 2.6, 1.0, PI / 4),  # D: a diamond whose tip enters B
    )
    lay = Layout(room, furniture)
    tip = (math.sqrt(0.5) - 0.6) ** 2  # the area of the diamond's tip beyond x = 2
    assert tip > 0.001
    np.testing.assert_array_equal(collision_pairs(lay), [[0, 1], [1, 3]])
    np.testing.assert_array_equal(collision_pairs(lay, threshold=0.02), [[0, 1]])
    np.testing.assert_array_equal(collision_pairs(lay, threshold=tip + 1e-9), [[0, 1]])
    np.testing.assert_array_equal(collision_pairs(lay, threshold=tip - 1e-9), [[0, 1], [1, 3]])
    np.testing.assert_array_equal(collision_pairs(lay, threshold=0.0001), [[0, 1], [0, 2], [1, 2], [1, 3]])
    m = layout_metrics(lay)
    assert m.collision_pairs == 2 and m.collision_rate == pytest.approx(2 / 6)
    assert m.colliding_objects == pytest.approx(3 / 4)
    assert collision_pairs(Layout(room, furniture[:1])).shape == (0, 2)


def test_out_of_bounds_walls_and_notch():
    room = _rect_room()
    furniture = (
        _piece(1.0, 1.0, 0.5, 2.0),  # flush with the left wall
        _piece(1.0, 1.0, 0.45, 3.5),  # 5 cm through the left wall
        _piece(1.0, 1.0, 5.505, 2.0),  # 5 mm through the right wall: within the 1 cm tolerance
        _piece(1.0, 1.0, 3.0, 5.02 - math.sqrt(0.5), PI / 4),  # a diamond, its top corner 2 cm out
    )
    np.testing.assert_array_equal(out_of_bounds(Layout(room, furniture)), [False, True, False, True])
    np.testing.assert_array_equal(out_of_bounds(Layout(room, furniture), tol=0.1), [False] * 4)
    assert layout_metrics(Layout(room, furniture)).out_of_bounds == pytest.approx(0.5)

    l_room = _l_room()
    side = math.sqrt(0.5)
    straddle = _piece(side, side, 3.8, 2.8, PI / 4)  # all corners inside, across the reflex corner (4, 3)
    assert l_room.contains(straddle.corners(), tol=0.0).all()
    inside_notch = _piece(1.0, 1.0, 5.0, 4.0)
    against_notch = _piece(1.0, 1.0, 3.5, 4.0)  # touches the notch's edge x = 4
    np.testing.assert_array_equal(
        out_of_bounds(Layout(l_room, (straddle, inside_notch, against_notch))), [True, True, False]
    )


def test_door_blocking():
    room = _rect_room(door_wall=0, door_at=1.0)  # swing zone [0.575, 1.425] x [0, 0.85]
    furniture = (_piece(0.5, 0.5, 1.0, 1.0), _piece(0.5, 0.5, 1.0, 1.3), _piece(0.5, 0.5, 3.0, 0.3))
    np.testing.assert_array_equal(door_blocking(Layout(room, furniture)), [True, False, False])
    assert layout_metrics(Layout(room, furniture)).door_blocked
    assert not layout_metrics(Layout(room, furniture[1:])).door_blocked


def test_proxy_conflicts():
    room = _l_room()
    furniture = (_piece(1.0, 0.5, 1.0, 2.0, PI / 2), _piece(1.0, 0.5, 2.0, 2.0))
    lay = Layout(room, furniture)
    proxies = (
        np.array(
            [
                [1.0, 2.3],  # over its owner (0): fine
                [1.8, 2.0],  # over piece 1, not allowed
                [1.8, 2.0],  # over piece 1, allowed
                [0.2995, 4.0],  # 0.5 mm x 1 m outside the left wall: 0.0005 m^2, below the threshold
                [0.298, 4.0],  # 2 mm x 1 m outside: 0.002 m^2
                [3.9, 4.0],  # 0.2 m into the notch
                [1.5, 0.3],  # in the door's swing zone: exempt
            ]
        ),
        np.array([[0.5, 0.6]] * 3 + [[1.0, 0.6]] * 2 + [[0.5, 0.6], [0.5, 0.5]]),
        np.zeros(7),  # theta 0: w along y, d along x
    )
    owner = np.array([0, 0, 0, 0, 0, 0, 0])
    allowed = np.zeros((7, 2), dtype=bool)
    allowed[2, 1] = True
    got = proxy_conflicts(lay, proxies, owner, allowed=allowed)
    np.testing.assert_array_equal(got, [False, True, False, False, True, True, False])
    m = layout_metrics(lay, proxies, owner=owner, allowed=allowed)
    assert m.proxy_conflict == pytest.approx(3 / 7) and m.n_proxies == 7
    assert proxy_conflicts(lay, proxies, owner, allowed=allowed, threshold=0.0001)[3]


# --- invariance and determinism ------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["rectangle", "L"])
def test_invariant_to_shifts_and_quarter_turns(shape):
    # The grid is laid on the room's bounding box, so it moves with the room: grid quantisation is the same
    # in every frame and the bound on the difference is zero cells (exact equality of every count).
    for seed in (1, 5):
        lay, proxies, owner, allowed, front = _random_scene(seed, shape)
        kw = {"owner": owner, "allowed": allowed, "front": front}
        base = layout_metrics(lay, proxies, **kw)
        base_access = access_map(lay)
        # scenes with something to measure: some pieces reachable, some not, some collisions
        assert 0 < base.accessibility < 1 and 0 < base.reachability < 1 and base.collision_pairs > 0
        for k, shift in ((0, (0.37, -1.23)), (1, (0.0, 0.0)), (2, (-2.013, 0.5)), (3, (10.3, 7.77))):
            moved, moved_proxies = _moved(lay, proxies, k, shift)
            assert layout_metrics(moved, moved_proxies, **kw) == base
            access = access_map(moved)
            # rows follow y and columns x: a +90 degree turn is numpy's rot90 with k = -1 on the arrays
            for name in ("navigable", "reachable", "swept", "door"):
                np.testing.assert_array_equal(getattr(access, name), np.rot90(getattr(base_access, name), -k))
            np.testing.assert_array_equal(
                accessible_objects(moved, moved_proxies, owner=owner, front=front),
                accessible_objects(lay, proxies, owner=owner, front=front),
            )


def test_deterministic():
    lay, proxies, owner, allowed, front = _random_scene(7, "L")
    a = layout_metrics(lay, proxies, owner=owner, allowed=allowed, front=front)
    b = layout_metrics(lay, proxies, owner=owner, allowed=allowed, front=front)
    assert isinstance(a, LayoutMetrics) and a == b
    x, y = access_map(lay), access_map(lay)
    assert isinstance(x, AccessMap)
    for name in ("navigable", "reachable", "swept"):
        np.testing.assert_array_equal(getattr(x, name), getattr(y, name))


def test_front_mask_and_required():
    lay = _barrier_layout(gap=False)
    proxies = _front_proxies(lay)
    owner = np.arange(lay.n)
    # a second proxy of the far desk, on the door side of the barrier, counts only when flagged front
    extra = (np.array([[2.0, 2.0]]), np.array([[0.6, 0.6]]), np.array([0.0]))
    both = tuple(np.concatenate([a, b]) for a, b in zip(proxies, extra, strict=True))
    owner2 = np.append(owner, 5)
    flagged = np.ones(lay.n + 1, dtype=bool)
    assert accessible_objects(lay, both, owner=owner2, front=flagged)[5]
    flagged[-1] = False
    assert not accessible_objects(lay, both, owner=owner2, front=flagged)[5]
    required = np.ones(lay.n, dtype=bool)
    assert not navigable(lay, proxies, owner=owner, required=required)
    required[5] = False
    assert navigable(lay, proxies, owner=owner, required=required)
    # by default only pieces owning a proxy are required
    partial = tuple(p[:5] for p in proxies)
    assert navigable(lay, partial, owner=owner[:5])
    assert not navigable(lay)


def test_timing_one_room():
    room, furniture = sample_room("living", 3, density="dense", shape="rectangle", size=(6.0, 5.0))
    rng = np.random.default_rng(0)
    n = len(furniture)
    poses = np.stack(
        [rng.uniform(0.5, 5.5, n), rng.uniform(0.5, 4.5, n), rng.integers(4, size=n) * PI / 2], 1
    )
    lay = Layout(room, furniture).with_poses(poses)
    proxies = _front_proxies(lay)
    layout_metrics(lay, proxies, owner=np.arange(n))  # warm-up
    start = time.perf_counter()
    layout_metrics(lay, proxies, owner=np.arange(n))
    elapsed = time.perf_counter() - start
    print(f"layout_metrics, 6 x 5 m, {n} pieces, {n} proxies: {elapsed * 1e3:.1f} ms")
    assert elapsed < 1.0


# --- bad input -----------------------------------------------------------------------------------


def test_bad_input_is_named():
    lay, proxies, owner, allowed, front = _random_scene(8, "rectangle")
    n, k = lay.n, len(owner)
    with pytest.raises(TypeError, match="layout"):
        layout_metrics(lay.room)
    with pytest.raises(TypeError, match="layout"):
        collision_pairs("room")
    with pytest.raises(ValueError, match="radius"):
        access_map(lay, radius=-0.1)
    with pytest.raises(ValueError, match="cell"):
        floor_grid(lay, cell=0.0)
    with pytest.raises(ValueError, match="cell"):
        floor_grid(lay, cell=1e-4)
    with pytest.raises(ValueError, match="threshold"):
        collision_pairs(lay, threshold=-1.0)
    with pytest.raises(ValueError, match="tol"):
        out_of_bounds(lay, tol=-0.01)
    with pytest.raises(ValueError, match="strip"):
        accessible_objects(lay, strip=0.0)
    with pytest.raises(ValueError, match="proxies"):
        layout_metrics(lay, (proxies[0][:, :1], proxies[1], proxies[2]), owner=owner)
    with pytest.raises(ValueError, match="proxies size"):
        layout_metrics(lay, (proxies[0], -proxies[1], proxies[2]), owner=owner)
    with pytest.raises(TypeError, match="proxies"):
        layout_metrics(lay, proxies[0], owner=owner)
    with pytest.raises(ValueError, match="owner"):
        layout_metrics(lay, proxies)
    with pytest.raises(ValueError, match="owner"):
        layout_metrics(lay, proxies, owner=np.full(k, n))
    with pytest.raises(TypeError, match="owner"):
        layout_metrics(lay, proxies, owner=owner.astype(float))
    with pytest.raises(ValueError, match="owner"):
        layout_metrics(lay, owner=owner)
    with pytest.raises(ValueError, match="allowed"):
        layout_metrics(lay, proxies, owner=owner, allowed=allowed[:, :-1])
    with pytest.raises(TypeError, match="allowed"):
        layout_metrics(lay, proxies, owner=owner, allowed=allowed.astype(int))
    with pytest.raises(ValueError, match="allowed"):
        layout_metrics(lay, allowed=allowed)
    with pytest.raises(ValueError, match="front"):
        layout_metrics(lay, proxies, owner=owner, front=front[:-1])
    with pytest.raises(ValueError, match="required"):
        layout_metrics(lay, required=np.ones(n + 1, dtype=bool))
    doorless = Layout(Room("living", lay.room.outline), lay.furniture)
    with pytest.raises(ValueError, match="layout"):
        access_map(doorless)


# --- functional and semantic satisfaction --------------------------------------------------------

FUNCTION_KINDS = ("within_reach", "faces", "view_range", "tucked_under")


def _living() -> Layout:
    """A 5 x 4 m living room where every reference functional and semantic relation holds, by hand.

    Sofa on the bottom wall facing up (leg-zone proxy centre (2.5, 1.125)); coffee table 0.225 m beyond
    the proxy (within reach); TV on the top wall facing the sofa, 2.675 m from the proxy centre (view range
    1.8-3.5 m); desk on the left wall, its chair's front face 2 cm from the desk's front edge, facing it.
    """
    door = Door.on_segment(0, (0.0, 0.0), (5.0, 0.0), 4.2, 0.8)  # swing [3.8, 4.6] x [0, 0.8]
    room = Room("living", ((0.0, 0.0), (5.0, 0.0), (5.0, 4.0), (0.0, 4.0)), None, (door,))
    furniture = (
        Furniture("sofa", (2.0, 0.9, 0.8), (2.5, 0.45, PI / 2)),
        Furniture("coffee_table", (1.0, 0.5, 0.4), (2.5, 1.6, -PI / 2)),
        Furniture("tv_stand", (1.5, 0.4, 0.5), (2.5, 3.8, -PI / 2)),
        Furniture("desk", (1.2, 0.6, 0.75), (0.3, 2.2, 0.0)),
        Furniture("chair", (0.5, 0.5, 0.9), (0.87, 2.2, PI)),
    )
    relations = (
        Relation("against_wall", (0,)),
        Relation("against_wall", (2,)),
        Relation("against_wall", (3,)),
        Relation("near", (1, 0), distance=(0.3, 1.5)),
        Relation("faces", (0, 2)),
        Relation("faces", (4, 3)),
        Relation("side_of", (1, 0), side="front"),
        Relation("side_of", (4, 3), side="front"),
    )
    return Layout(room, furniture, relations)


def _posed(layout: Layout, index: int, pose) -> Layout:
    poses = layout.poses()
    poses[index] = pose
    return layout.with_poses(poses)


def _by_kind(sat) -> dict[str, bool]:
    return dict(zip(sat.kinds, sat.satisfied.tolist(), strict=True))


def test_satisfaction_on_a_hand_built_room():
    lay = _living()
    fn = functional_satisfaction(lay)
    assert fn.kinds == ("faces", "view_range", "within_reach", "tucked_under")  # the reference relations
    assert fn.satisfied.all() and not fn.blocked.any() and fn.rate() == 1.0
    sem = semantic_satisfaction(lay)
    assert sem.count() == 8 and sem.satisfied.all()
    m = layout_metrics(lay)
    assert m.functional_satisfaction == m.semantic_satisfaction == 1.0
    assert (m.n_functional, m.n_semantic) == (4, 8)
    assert m.functional_within_reach == m.functional_faces == m.functional_view_range == 1.0
    assert m.functional_tucked_under == 1.0
    # the objective agrees: its functional and semantic terms are exactly 0 here
    problem = build_problem([lay], [default_proxies(lay)], dtype=torch.float64)
    terms = energy(problem.initial_poses(), problem).numpy()
    assert terms["functional"][0] == 0.0 and terms["semantic"][0] == pytest.approx(0.0, abs=1e-24)


@pytest.mark.parametrize(
    ("index", "good", "bad", "kind"),
    [
        (1, (2.5, 1.7, -PI / 2), (2.5, 2.0, -PI / 2), "within_reach"),  # 0.475 vs 0.625 m from the proxy
        (2, (2.5, 3.8, -PI / 2 + math.radians(19)), (2.5, 3.8, -PI / 2 + math.radians(21)), "faces"),
        (2, (2.5, 3.0, -PI / 2), (2.5, 2.9, -PI / 2), "view_range"),  # 1.875 vs 1.775 m (range from 1.8)
        (4, (0.89, 2.2, PI), (0.91, 2.2, PI), "tucked_under"),  # front face 4 vs 6 cm from the edge
        (4, (0.87, 2.2, PI), (0.82, 2.2, PI), "tucked_under"),  # pushed 3 cm into the desk: a collision
    ],
)
def test_functional_satisfied_and_violated_per_kind(index, good, bad, kind):
    ok, broken = (functional_satisfaction(_posed(_living(), index, pose)) for pose in (good, bad))
    assert ok.satisfied.all()
    assert not _by_kind(broken)[kind]
    assert all(v for k, v in _by_kind(broken).items() if k != kind)  # only that relation breaks
    assert not broken.blocked.any()
    rate = getattr(layout_metrics(_posed(_living(), index, bad)), f"functional_{kind}")
    assert rate == 0.0


@pytest.mark.parametrize(("degrees", "holds"), [(10.0, True), (19.0, True), (21.0, False), (30.0, False)])
def test_tucked_needs_the_chair_to_face_the_edge(degrees, holds):
    # the chair's front-face centre stays 3 cm from the desk edge; a turned square chair cuts the desk's
    # corner, so the overlap rule is lifted (threshold 1 m^2) to isolate the angle
    u = np.array([math.cos(PI + math.radians(degrees)), math.sin(PI + math.radians(degrees))])
    center = np.array([0.63, 2.2]) - 0.25 * u
    lay = _posed(_living(), 4, (*center, PI + math.radians(degrees)))
    assert _by_kind(functional_satisfaction(lay, threshold=1.0))["tucked_under"] == holds


def test_a_blocked_proxy_fails_its_relations():
    lay = _living()
    plant = Furniture("plant", (0.4, 0.4, 1.0), (2.5, 1.1, 0.0))  # in the sofa's leg zone
    blocked = Layout(lay.room, (*lay.furniture, plant), lay.relations)
    fn = functional_satisfaction(blocked)
    assert fn.kinds[:3] == ("faces", "view_range", "within_reach")  # the sofa's proxy
    np.testing.assert_array_equal(fn.blocked, [True, True, True, False])
    np.testing.assert_array_equal(fn.satisfied, [False, False, False, True])
    assert layout_metrics(blocked).functional_satisfaction == 0.25
    assert functional_satisfaction(blocked, threshold=1.0).satisfied.all()  # the geometry itself holds
    # a proxy through a wall is not usable either: desk and chair near the right wall, the chair's 0.6 m
    # pull-out zone behind it crosses x = 5 (0.42 x 0.6 m outside)
    jammed = _posed(_posed(_living(), 3, (4.0, 2.2, 0.0)), 4, (4.57, 2.2, PI))
    fn = functional_satisfaction(jammed)
    assert fn.blocked.tolist() == [False, False, False, True] and not fn.satisfied[3]
    assert functional_satisfaction(jammed, threshold=0.3).satisfied.all()


def test_functional_with_given_proxies():
    lay = _living()
    records = default_proxies(lay)
    sofa = records[0]
    assert sofa.owner == 0
    far = dataclasses.replace(sofa, relations=(FunctionalRelation("view_range", 2, distance=(0.5, 1.0)),))
    fn = functional_satisfaction(lay, (far,))
    assert fn.kinds == ("view_range",) and not fn.satisfied[0]
    assert layout_metrics(lay, reference=(far,)).functional_satisfaction == 0.0
    assert functional_satisfaction(lay, ()).rate() is None
    assert layout_metrics(lay, reference=()).functional_satisfaction == 1.0  # perfect over nothing
    assert layout_metrics(lay, reference=()).functional_faces is None


@pytest.mark.parametrize(
    ("relation", "index", "pose", "holds"),
    [
        (Relation("against_wall", (0,)), 0, (2.5, 0.46, PI / 2), True),  # 1 cm off the wall
        (Relation("against_wall", (0,)), 0, (2.5, 0.48, PI / 2), False),  # 3 cm
        (Relation("against_wall", (0,)), 0, (2.5, 0.5, PI / 2 + math.radians(5)), False),  # a corner off
        (Relation("near", (1, 0), distance=(0.3, 1.15)), 1, (2.5, 1.6, -PI / 2), True),
        (Relation("near", (1, 0), distance=(0.3, 1.1)), 1, (2.5, 1.6, -PI / 2), False),
        (Relation("faces", (4, 3)), 4, (0.87, 2.2, PI + math.radians(19)), True),
        (Relation("faces", (4, 3)), 4, (0.87, 2.2, PI - math.radians(21)), False),
        (Relation("side_of", (4, 3), side="front"), 4, (0.87, 2.75, PI), True),  # within the desk's span
        (Relation("side_of", (4, 3), side="front"), 4, (0.87, 2.85, PI), False),  # beyond it
        (Relation("side_of", (4, 3), side="back"), 4, (0.87, 2.2, PI), False),
        (Relation("side_of", (4, 3), side="left"), 4, (0.3, 3.1, PI), True),  # the desk's +v side
        (Relation("side_of", (4, 3), side="right"), 4, (0.3, 3.1, PI), False),
    ],
)
def test_semantic_relations_satisfied_and_violated(relation, index, pose, holds):
    lay = _posed(_living(), index, pose)
    assert bool(relation_holds(relation, lay.room, lay.poses(), lay.sizes())) == holds
    sem = semantic_satisfaction(Layout(lay.room, lay.furniture, (relation,)))
    assert sem.satisfied.tolist() == [holds] and sem.rate(relation.kind) == float(holds)


def test_relation_holds_batches_pose_sets():
    lay = _living()
    stack = np.stack([lay.poses(), _posed(lay, 4, (0.87, 2.2, 0.0)).poses(), lay.poses()])
    got = relation_holds(Relation("faces", (4, 3)), lay.room, stack.reshape(3, 1, 5, 3), lay.sizes())
    np.testing.assert_array_equal(got, [[True], [False], [True]])


def test_clean_initial_layouts_satisfy_their_relations():
    # the planner keeps only the relations its clean poses satisfy, with the same tolerances
    broken = 0
    for room_type, seed in (("bedroom", 0), ("living", 1), ("dining", 2), ("office", 3)):
        room, furniture = sample_room(room_type, seed, density="dense")
        proposal = propose_initial(room, furniture, seed)
        assert semantic_satisfaction(proposal.clean).rate() == 1.0
        broken += semantic_satisfaction(proposal.layout).rate() < 1.0
    assert broken >= 3  # the mistakes break some


def _single_relation_terms(layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """The objective's functional term of each reference relation alone (one scene per relation), and the
    chair-table overlap of each relation (for tucked_under)."""
    records = default_proxies(layout)
    rows = [(q, r) for q, p in enumerate(records) for r in range(len(p.relations))]
    scenes = []
    for q, r in rows:
        stripped = [dataclasses.replace(p, relations=()) for p in records]
        stripped[q] = records[q]
        stripped[q] = dataclasses.replace(records[q], relations=(records[q].relations[r],))
        scenes.append(stripped)
    problem = build_problem([layout] * len(rows), scenes, dtype=torch.float64)
    weights = Weights(collision=0.0, proxy=0.0, functional=1.0, semantic=0.0, prior=0.0, orientation=0.0)
    term = energy(problem.initial_poses(), problem, weights=weights).functional.numpy()
    poses, sizes = layout.poses(), layout.sizes()[:, :2]
    owner = np.array([records[q].owner for q, _ in rows])
    target = np.array([records[q].relations[r].target for q, r in rows])
    area = overlap_area(
        poses[owner, :2], sizes[owner], poses[owner, 2], poses[target, :2], sizes[target], poses[target, 2]
    )
    return term, area


def test_satisfied_means_the_objective_term_vanishes():
    angle = 1.0 - math.cos(math.radians(20.0))
    seen: dict[tuple[str, bool], int] = {}
    for room_type, seed in (("living", 1), ("living", 3), ("living", 4), ("office", 3)):
        room, furniture = sample_room(room_type, seed, density="dense", shape="L")
        proposal = propose_initial(room, furniture, seed)
        for lay in (proposal.clean, proposal.layout):
            fn = functional_satisfaction(lay)
            term, area = _single_relation_terms(lay)
            for kind, ok, blocked, value, a in zip(
                fn.kinds, fn.satisfied, fn.blocked, term, area, strict=True
            ):
                if blocked:
                    assert not ok
                    continue
                seen[kind, bool(ok)] = seen.get((kind, bool(ok)), 0) + 1
                if kind in ("within_reach", "view_range"):
                    assert ok == (value <= 1e-12), (kind, value)
                elif kind == "faces":
                    assert ok == (value <= angle + 1e-12), (kind, value)
                else:  # tucked: satisfied -> small term; zero term and no collision -> satisfied
                    assert not ok or value <= angle + 1e-12
                    assert ok or value > 1e-12 or a > 0.001
    assert all(seen.get((k, v), 0) > 0 for k in FUNCTION_KINDS for v in (True, False)), seen


def test_satisfaction_invariant_to_shifts_and_quarter_turns():
    room, furniture = sample_room("living", 1, density="dense", shape="L")
    lay = propose_initial(room, furniture, 1).layout
    proxies = _front_proxies(lay)
    fn, sem = functional_satisfaction(lay), semantic_satisfaction(lay)
    assert 0 < fn.satisfied.sum() < fn.count() and 0 < sem.satisfied.sum() < sem.count()
    for k, shift in ((1, (0.3, -2.0)), (2, (5.5, 1.25)), (3, (-0.7, 0.0))):
        moved, _ = _moved(lay, proxies, k, shift)
        np.testing.assert_array_equal(functional_satisfaction(moved).satisfied, fn.satisfied)
        np.testing.assert_array_equal(functional_satisfaction(moved).blocked, fn.blocked)
        np.testing.assert_array_equal(semantic_satisfaction(moved).satisfied, sem.satisfied)


def test_layout_metrics_record_keeps_its_old_fields():
    names = [f.name for f in dataclasses.fields(LayoutMetrics)]
    assert names[:13] == [
        "n_objects",
        "n_proxies",
        "collision_pairs",
        "collision_rate",
        "colliding_objects",
        "out_of_bounds",
        "door_blocked",
        "proxy_conflict",
        "free_ratio",
        "accessibility",
        "proxy_accessibility",
        "reachability",
        "navigable",
    ]
    old = LayoutMetrics(3, 0, 0, 0.0, 0.0, 0.0, False, None, 1.0, 1.0, None, 1.0, True)
    assert old.functional_satisfaction is None and old.n_functional == 0 and old.semantic_satisfaction is None


def test_satisfaction_bad_input_is_named():
    lay = _living()
    records = default_proxies(lay)
    with pytest.raises(TypeError, match="proxies"):
        functional_satisfaction(lay, records[0])
    with pytest.raises(TypeError, match="proxies"):
        functional_satisfaction(lay, [records[0], "sofa"])
    stray = dataclasses.replace(records[0], relations=(FunctionalRelation("faces", 9),))
    with pytest.raises(ValueError, match="proxies"):
        functional_satisfaction(lay, [stray])
    with pytest.raises(ValueError, match="reference"):
        layout_metrics(lay, reference=[stray])
    with pytest.raises(ValueError, match="threshold"):
        functional_satisfaction(lay, threshold=-1.0)
    with pytest.raises(TypeError, match="layout"):
        semantic_satisfaction(lay.room)
    with pytest.raises(ValueError, match="kind"):
        functional_satisfaction(lay).rate("sits_on")
    rel = Relation("near", (1, 0), distance=(0.3, 1.5))
    with pytest.raises(ValueError, match="poses"):
        relation_holds(rel, lay.room, lay.poses()[:, :2], lay.sizes())
    with pytest.raises(ValueError, match="sizes"):
        relation_holds(rel, lay.room, lay.poses(), lay.sizes()[:3])
    with pytest.raises(ValueError, match="relation"):
        relation_holds(Relation("near", (7, 0), distance=(0.3, 1.5)), lay.room, lay.poses(), lay.sizes())
    with pytest.raises(TypeError, match="room"):
        relation_holds(rel, lay, lay.poses(), lay.sizes())


def test_blocked_is_the_proxy_conflict_of_the_relation_proxy():
    room, furniture = sample_room("living", 1, density="dense", shape="L")
    lay = propose_initial(room, furniture, 1).layout
    records = default_proxies(lay)
    rects = attach(records, lay.poses(), lay.sizes())
    owner = np.array([p.owner for p in records])
    allowed = np.zeros((len(records), lay.n), dtype=bool)
    for q, p in enumerate(records):
        allowed[q] = [c in p.allowed for c in lay.categories]
    conflict = proxy_conflicts(lay, rects, owner, allowed=allowed)
    per_relation = np.array([conflict[q] for q, p in enumerate(records) for _ in p.relations])
    fn = functional_satisfaction(lay)
    np.testing.assert_array_equal(fn.blocked, per_relation)
    assert 0 < fn.blocked.sum() < fn.count()


def test_satisfaction_in_a_u_shaped_room():
    # Room allows any axis-aligned polygon; a proxy is then outside when a corner leaves the outline
    outline = ((0.0, 0.0), (6.0, 0.0), (6.0, 4.0), (4.5, 4.0), (4.5, 2.0), (2.0, 2.0), (2.0, 4.0), (0.0, 4.0))
    room = Room("office", outline, None, (Door.on_segment(0, (0.0, 0.0), (6.0, 0.0), 3.0, 0.8),))
    desk = Furniture("desk", (1.2, 0.6, 0.75), (0.3, 1.0, 0.0))
    chair = Furniture("chair", (0.5, 0.5, 0.9), (0.87, 1.0, PI))
    lay = Layout(room, (desk, chair), (Relation("against_wall", (0,)),))
    m = layout_metrics(lay)
    assert m.functional_tucked_under == 1.0 and m.semantic_satisfaction == 1.0
    # the same pair in the 1.5 m right arm, the chair's pull-out zone crossing its inner wall x = 4.5
    moved = lay.with_poses(np.array([[5.7, 3.0, PI], [5.13, 3.0, 0.0]]))
    fn = functional_satisfaction(moved)
    assert fn.blocked.tolist() == [True] and layout_metrics(moved).functional_tucked_under == 0.0
