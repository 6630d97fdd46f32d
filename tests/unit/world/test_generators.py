"""Generators: gravity, reachable doors, perfect mazes, distinct tabletop objects, seeds reproduce scenes."""

from collections import deque

import numpy as np
import pytest

from neurips26.world import (
    PALETTE,
    heading_pose,
    maze,
    occupancy_map,
    pinhole,
    render,
    room,
    tabletop,
    voxel_scene,
    voxel_stack,
    walk_through,
)


def _boxes_overlap(a, b) -> bool:
    """Positive-volume overlap of two axis-aligned world bounds."""
    (alo, ahi), (blo, bhi) = a.world_bounds(), b.world_bounds()
    return bool(np.all(np.minimum(ahi, bhi) - np.maximum(alo, blo) > 1e-9))


def _footprints_overlap(a, b) -> bool:
    """Whether two yawed boxes' floor rectangles overlap (2-D separating-axis test on their edge normals)."""

    def corners(box):
        return box.corners()[:, [0, 2]]

    ca, cb = corners(a), corners(b)
    for box in (a, b):
        r = box.rotation_matrix
        for axis in (r[[0, 2], 0], r[[0, 2], 2]):
            pa, pb = ca @ axis, cb @ axis
            if pa.max() <= pb.min() + 1e-12 or pb.max() <= pa.min() + 1e-12:
                return False
    return True


def test_every_cube_of_a_voxel_stack_is_supported():
    for seed in range(60):
        stack = voxel_stack(seed=seed)
        cubes = stack.scene.boxes
        centers = {tuple(np.round(b.center, 9)) for b in cubes}
        for b in cubes:
            x, y, z = b.center
            lo, _ = b.world_bounds()
            on_ground = abs(lo[1]) < 1e-12
            below = (round(x, 9), round(y - stack.cube_size, 9), round(z, 9))
            assert on_ground or below in centers, (seed, b.center)
        assert len(cubes) == stack.n_cubes == stack.heights.sum()
        assert stack.heights.max() <= 4 and stack.heights.shape == (4, 4)
        # ids follow the height map: layer k of column (i, j) exists iff k < heights[i, j]
        np.testing.assert_array_equal(stack.occupancy.sum(axis=2), stack.heights)
        for i, j, k in zip(*np.nonzero(stack.occupancy), strict=True):
            lo, hi = stack.scene.box(int(stack.ids[i, j, k])).world_bounds()
            assert (lo[0] + 2, lo[1], lo[2] + 2) == (pytest.approx(i), pytest.approx(k), pytest.approx(j))


def test_voxel_stack_honours_n_cubes_and_its_limits():
    for n in (0, 1, 7, 64):
        assert voxel_stack(4, 4, n, seed=n).n_cubes == n
    assert voxel_stack(2, 3, None, seed=1).n_cubes <= 12
    with pytest.raises(ValueError, match="n_cubes"):
        voxel_stack(4, 4, 65, seed=0)
    with pytest.raises(ValueError, match="grid"):
        voxel_stack(0, seed=0)
    with pytest.raises(ValueError, match="heights"):
        voxel_scene(np.array([[1, -1], [0, 0]]))
    with pytest.raises(ValueError, match="max_height"):
        voxel_scene(np.array([[5, 0], [0, 0]]), max_height=4)
    with pytest.raises(ValueError, match="colors"):
        voxel_scene(np.ones((2, 2), dtype=int), colors="rainbow")


def _bfs_reachable(free: np.ndarray, start: tuple[int, int]) -> np.ndarray:
    seen = np.zeros_like(free)
    seen[start] = True
    queue = deque([start])
    while queue:
        r, c = queue.popleft()
        for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= nr < free.shape[0] and 0 <= nc < free.shape[1] and free[nr, nc] and not seen[nr, nc]:
                seen[nr, nc] = True
                queue.append((nr, nc))
    return seen


@pytest.mark.parametrize("size", [(5.0, 4.0), (3.0, 3.0)])
def test_rooms_keep_the_door_reachable_from_every_free_cell(size, monkeypatch):
    import neurips26.world.generators as generators

    checks = []
    real_check = generators._door_reachable
    monkeypatch.setattr(generators, "_door_reachable", lambda *a: checks.append(real_check(*a)) or checks[-1])
    for seed in range(25):
        rm = room(seed, width=size[0], depth=size[1], n_furniture=5)
        # recompute the occupancy from the scene itself, independently of the generator's copy
        occ = occupancy_map(rm.scene, 0.1, bounds=rm.interior, y_range=(0.0, 2.1))
        np.testing.assert_array_equal(occ.occupied, rm.occupancy.occupied)
        free = ~occ.occupied
        assert free[rm.door_cell]
        reach = _bfs_reachable(free, rm.door_cell)
        np.testing.assert_array_equal(reach, free)
        # the door cell touches the door: its centre is half a cell from the door's centre
        x, z = occ.center_of(*rm.door_cell)
        assert np.hypot(x - rm.door_center[0], z - rm.door_center[1]) <= 0.1
        furniture = [rm.scene.box(i) for i in rm.furniture_ids]
        assert len(furniture) == 5
        x0, x1, z0, z1 = rm.interior
        for k, b in enumerate(furniture):
            lo, hi = b.world_bounds()
            assert lo[0] >= x0 - 1e-9 and hi[0] <= x1 + 1e-9 and lo[2] >= z0 - 1e-9 and hi[2] <= z1 + 1e-9
            assert abs(lo[1]) < 1e-12  # stands on the floor
            assert not any(_boxes_overlap(b, other) for other in furniture[k + 1 :])
        assert len(rm.wall_ids) in (5, 6)  # three whole walls, the door wall in two pieces (+ a lintel)
    if size == (3.0, 3.0):
        assert not all(
            checks
        )  # crowded rooms do produce layouts that cut the door off, and they are resampled


def test_a_room_door_is_a_real_gap_in_the_wall():
    for seed in range(8):
        rm = room(seed, n_furniture=0)
        assert rm.scene.ids == rm.wall_ids  # no furniture
        # walking from the door cell straight out through the wall, at knee height, hits no wall
        inside = np.array(rm.occupancy.center_of(*rm.door_cell), dtype=float)
        outward = {"north": (0, 1), "south": (0, -1), "east": (1, 0), "west": (-1, 0)}[rm.door_side]
        outward = np.array(outward, dtype=float)
        assert np.abs(inside - rm.door_center) @ np.abs(outward) == pytest.approx(0.05)  # half a cell inside
        walk = [inside + s * outward for s in np.linspace(0.0, 0.4, 60)]
        pts = np.array([[x, 0.5, z] for x, z in walk])
        assert not any(b.contains(pts).any() for b in rm.scene.boxes)
        # while the same walk shifted sideways by more than half the door width hits the wall
        side = np.array([-outward[1], outward[0]]) * (rm.door_width / 2 + 0.15)
        pts_side = np.array([[x + side[0], 0.5, z + side[1]] for x, z in walk])
        assert any(b.contains(pts_side).any() for b in rm.scene.boxes)


def test_maze_is_perfect_and_its_paths_are_valid():
    for seed in range(10):
        mz = maze(6, 7, seed)
        rows, cols = mz.rows, mz.cols
        assert (rows, cols) == (6, 7)
        passages = sum(len(mz.neighbors(r, c)) for r in range(rows) for c in range(cols)) // 2
        assert passages == rows * cols - 1  # a spanning tree: connected with no cycles
        reach = {(0, 0)}
        queue = deque([(0, 0)])
        while queue:
            for nxt in mz.neighbors(*queue.popleft()):
                if nxt not in reach:
                    reach.add(nxt)
                    queue.append(nxt)
        assert len(reach) == rows * cols
        assert mz.walls[0].all() and mz.walls[-1].all() and mz.walls[:, 0].all() and mz.walls[:, -1].all()
        path = mz.shortest_path((0, 0), (rows - 1, cols - 1))
        assert path[0] == (0, 0) and path[-1] == (rows - 1, cols - 1)
        assert all(b in mz.neighbors(*a) for a, b in zip(path, path[1:], strict=False))
        # landmarks: distinct cells and colours, each inside its cell
        cells = {(r, c) for r, c, _, _ in mz.landmarks}
        assert len(cells) == len(mz.landmarks) == 4
        assert [name for *_, name in mz.landmarks] == list(PALETTE)[:4]
        for r, c, lid, name in mz.landmarks:
            b = mz.scene.box(lid)
            assert b.color == PALETTE[name]
            cx, cz = mz.cell_center(r, c)
            assert abs(b.center[0] - cx) < mz.cell / 2 and abs(b.center[2] - cz) < mz.cell / 2


def test_walking_a_maze_path_never_enters_a_wall_and_sees_the_wall_ahead_at_its_distance():
    mz = maze(4, 4, seed=3, n_landmarks=0)
    occ = mz.occupancy(0.1)
    path = mz.shortest_path((0, 0), (3, 3))
    poses = walk_through(mz.waypoints(path), 60)
    rows, cols = occ.cell_of(poses[:, 0, 3], poses[:, 2, 3])
    assert not occ.occupied[rows, cols].any()
    # at each cell centre of the path, facing the next cell: the centre pixel sees the first wall ahead
    for (r, c), (nr, nc) in zip(path, path[1:], strict=False):
        dr, dc = nr - r, nc - c
        open_cells = 0
        while not mz.walls[2 * (r + open_cells * dr) + 1 + dr, 2 * (c + open_cells * dc) + 1 + dc]:
            open_cells += 1
        expected = (open_cells + 0.5) * mz.cell - 0.15 / 2  # to the near face of a 0.15 m thick wall
        yaw = {(0, 1): 90.0, (0, -1): -90.0, (1, 0): 0.0, (-1, 0): 180.0}[(dr, dc)]
        x, z = mz.cell_center(r, c)
        cam = pinhole(15, 15, 60.0, heading_pose((x, 1.2, z), yaw))
        depth = render(mz.scene, cam, dtype=np.float64).depth
        assert depth[7, 7] == pytest.approx(expected, abs=1e-9)


def test_tabletop_objects_have_distinct_colours_and_sizes_and_rest_on_the_table():
    for seed in range(20):
        tt = tabletop(5, seed)
        assert tt.scene.box(tt.table_id).semantic == "table"
        assert len(set(tt.color_names)) == 5 and len(set(tt.sizes)) == 5
        assert min(np.diff(sorted(tt.sizes))) >= (0.18 - 0.06) / 7 - 1e-12
        objects = [tt.scene.box(i) for i in tt.object_ids]
        for k, b in enumerate(objects):
            lo, hi = b.world_bounds()
            assert lo[1] == pytest.approx(tt.table_height)
            assert abs(lo[0]) <= 0.5 and abs(hi[0]) <= 0.5 and abs(lo[2]) <= 0.35 and abs(hi[2]) <= 0.35
            assert b.color == PALETTE[tt.color_names[k]]
            assert b.size[0] == pytest.approx(tt.sizes[k])
            assert not any(_footprints_overlap(b, o) for o in objects[k + 1 :])
        r = render(tt.scene, tt.camera(32, 32))
        assert set(tt.object_ids) & set(r.visible_ids().tolist())
    with pytest.raises(ValueError, match="n_objects"):
        tabletop(9, 0)
    with pytest.raises(ValueError, match="size_range"):
        tabletop(2, 0, size_range=(0.2, 0.1))


@pytest.mark.parametrize(
    "make",
    [
        lambda s: voxel_stack(seed=s, colors="random"),
        lambda s: tabletop(4, s),
        lambda s: room(s),
        lambda s: maze(4, 5, s),
    ],
)
def test_same_seed_same_scene_and_different_seed_different_scene(make):
    a, b, c = make(11), make(11), make(12)
    assert a.scene.to_json() == b.scene.to_json()
    assert a.scene.to_json() != c.scene.to_json()


def test_bad_generator_arguments_name_the_argument():
    with pytest.raises(ValueError, match="seed"):
        room(-1)
    with pytest.raises(ValueError, match="width"):
        room(0, width=1.0)
    with pytest.raises(ValueError, match="door_width"):
        room(0, width=1.5, depth=1.5, door_width=1.4)
    with pytest.raises(RuntimeError, match="n_furniture"):
        room(0, width=1.5, depth=1.5, n_furniture=12, max_tries=3)
    with pytest.raises(ValueError, match="rows"):
        maze(0, 3, 0)
    with pytest.raises(ValueError, match="n_landmarks"):
        maze(2, 2, 0, n_landmarks=5)
    with pytest.raises(TypeError, match="seed"):
        maze(3, 3, 1.5)
