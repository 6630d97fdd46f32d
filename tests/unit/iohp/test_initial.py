"""The rule-based initial layout: seeded, one pose per piece, wall pieces on walls, chairs at their tables,
and mistakes that add collisions, out-of-bounds pieces and violated relations where documented."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neurips26.iohp import initial
from neurips26.iohp.initial import (
    GROUP_GAP,
    MISTAKE_KINDS,
    MISTAKE_RATES,
    WALL_CATEGORIES,
    InitialProposal,
    initial_layout,
    propose_initial,
)
from neurips26.iohp.layout import ROOM_TYPES, Furniture, Layout, Relation
from neurips26.iohp.metrics import collision_pairs, out_of_bounds
from neurips26.iohp.rooms import sample_room

SHAPES = ("rectangle", "L")
DENSITIES = ("medium", "dense")


def _scenes(seeds=range(3), shapes=SHAPES, densities=DENSITIES):
    for room_type in ROOM_TYPES:
        for shape in shapes:
            for density in densities:
                for seed in seeds:
                    room, furniture = sample_room(room_type, seed, density=density, shape=shape)
                    yield room, furniture, seed


@pytest.fixture(scope="module")
def proposals() -> dict[tuple[str, str, str, int], InitialProposal]:
    """Default-level proposals (each with its clean layout): 4 types x 2 shapes x 2 densities x 3 seeds."""
    out = {}
    for density in DENSITIES:
        for room, furniture, seed in _scenes(densities=(density,)):
            out[room.room_type, room.shape, density, seed] = propose_initial(room, furniture, seed)
    return out


def _u(theta: float) -> np.ndarray:
    return np.array([math.cos(theta), math.sin(theta)])


def _v(theta: float) -> np.ndarray:
    return np.array([-math.sin(theta), math.cos(theta)])


def _outline_distance(room, p: np.ndarray) -> float:
    """Distance from point p to the room's outline (independent of the module's helper)."""
    pts = room.vertices()
    best = math.inf
    for a, b in zip(pts, np.roll(pts, -1, axis=0), strict=True):
        s = np.clip((p - a) @ (b - a) / ((b - a) @ (b - a)), 0.0, 1.0)
        best = min(best, float(np.linalg.norm(p - (a + s * (b - a)))))
    return best


def _back_points(f: Furniture) -> np.ndarray:
    """The back face's two corners and midpoint, (3, 2)."""
    x, y, th = f.pose
    mid = np.array([x, y]) - _u(th) * f.depth / 2.0
    half = _v(th) * f.width / 2.0
    return np.stack([mid - half, mid, mid + half])


def _local(f: Furniture, p: np.ndarray) -> tuple[float, float]:
    """Point p in f's frame: (alpha along v, beta along u)."""
    r = p - np.array(f.pose[:2])
    return float(r @ _v(f.theta)), float(r @ _u(f.theta))


def _chair_tables(categories) -> dict[int, int]:
    """The pairing of proxy.py: chair j -> desk j, the rest -> the first dining table."""
    desks = [i for i, c in enumerate(categories) if c == "desk"]
    tables = [i for i, c in enumerate(categories) if c == "dining_table"]
    chairs = [i for i, c in enumerate(categories) if c == "chair"]
    out = {}
    for j, c in enumerate(chairs):
        if j < len(desks):
            out[c] = desks[j]
        elif tables:
            out[c] = tables[0]
    return out


def _relation_holds(layout: Layout, rel: Relation) -> bool:
    f = layout.furniture
    if rel.kind == "against_wall":
        return max(_outline_distance(layout.room, p) for p in _back_points(f[rel.objects[0]])) < 0.02 + 1e-9
    i, j = rel.objects
    diff = np.array(f[j].pose[:2]) - np.array(f[i].pose[:2])
    if rel.kind == "near":
        return rel.distance[0] <= np.linalg.norm(diff) <= rel.distance[1]
    if rel.kind == "faces":
        return _u(f[i].theta) @ diff / np.linalg.norm(diff) >= math.cos(math.radians(20.0)) - 1e-12
    alpha, beta = _local(f[j], np.array(f[i].pose[:2]))
    w, d = f[j].width / 2.0 - 1e-6, f[j].depth / 2.0 - 1e-6
    return {"front": beta >= d, "back": beta <= -d, "left": alpha >= w, "right": alpha <= -w}[rel.side]


# ----------------------------------------------------------------------------------------------------------


def test_same_seed_same_layout_other_seed_other_slots_and_input_poses_ignored():
    room, furniture = sample_room("living", 4, density="dense")
    a = propose_initial(room, furniture, 11)
    assert a == propose_initial(room, furniture, 11)
    assert initial_layout(room, furniture, 11) == a.layout
    moved = tuple(f.with_pose((1.0, 2.0, 0.3)) for f in furniture)
    assert propose_initial(room, moved, 11) == a
    differ = [propose_initial(room, furniture, s).clean != a.clean for s in range(12, 18)]
    assert any(differ)  # the slots are drawn from the seed
    assert propose_initial(room, furniture, 12).layout != a.layout


@pytest.mark.parametrize("room_type", ROOM_TYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_every_type_and_shape_gives_one_pose_per_piece(proposals, room_type, shape):
    keys = [k for k in proposals if k[:2] == (room_type, shape)]
    assert len(keys) == 6
    for key in keys:
        p = proposals[key]
        room, furniture = sample_room(room_type, key[3], density=key[2], shape=shape)
        assert isinstance(p, InitialProposal) and p.mistakes
        for layout in (p.layout, p.clean):
            assert isinstance(layout, Layout) and layout.room == room
            assert layout.n == len(furniture)
            for f, g in zip(furniture, layout.furniture, strict=True):
                assert (g.category, g.size, g.name) == (f.category, f.size, f.name)
            poses = layout.poses()
            assert poses.shape == (len(furniture), 3) and np.isfinite(poses).all()
            assert np.all((poses[:, 2] > -math.pi) & (poses[:, 2] <= math.pi))
        # the clean proposal is axis-aligned, inside the room, and the same at every level
        q = p.clean.poses()[:, 2] / (math.pi / 2.0)
        assert np.allclose(q, np.round(q), atol=1e-12)
        assert not out_of_bounds(p.clean).any()
    room, furniture = sample_room(room_type, 0, density="dense", shape=shape)
    half = propose_initial(room, furniture, 0, mistakes=0.5)
    assert half.clean == proposals[room_type, shape, "dense", 0].clean
    assert half.layout.n == len(furniture)


def test_zero_mistakes_is_the_clean_proposal():
    for room, furniture, seed in _scenes(seeds=range(2), densities=("dense",)):
        p = propose_initial(room, furniture, seed, mistakes=0.0)
        assert p.layout == p.clean and p.mistakes == ()


def test_wall_pieces_have_their_back_on_a_wall_and_face_into_the_room(proposals):
    checked = 0
    for key, p in proposals.items():
        room = p.clean.room
        for f in p.clean.furniture:
            if f.category not in WALL_CATEGORIES:
                continue
            back = max(_outline_distance(room, q) for q in _back_points(f))
            assert back < 0.02, (key, f.name, back)
            ahead = np.array(f.pose[:2]) + _u(f.theta) * (f.depth / 2.0 + 0.05)
            assert room.contains(ahead, tol=0.0), (key, f.name)
            checked += 1
    assert checked > 100


def test_chairs_face_their_table_with_the_front_at_its_edge(proposals):
    checked = 0
    for key, p in proposals.items():
        layout = p.clean
        for c, t in _chair_tables(layout.categories).items():
            chair, table = layout.furniture[c], layout.furniture[t]
            x, y, th = chair.pose
            # the chair's front ray meets the table's footprint just past the chair's front face
            front = np.array([x, y]) + _u(th) * chair.depth / 2.0
            alpha, beta = _local(table, front + _u(th) * (GROUP_GAP + 0.01))
            assert abs(alpha) <= table.width / 2.0 and abs(beta) <= table.depth / 2.0, (key, chair.name)
            alpha, beta = _local(table, front)
            assert not (abs(alpha) < table.width / 2.0 and abs(beta) < table.depth / 2.0)  # no overlap
            # square to the table: facing one of its four faces head-on
            assert abs(math.sin(2.0 * (th - table.theta))) < 1e-9
            checked += 1
    assert checked > 50


def test_relations_reference_valid_pieces_and_hold_when_clean(proposals):
    kinds = set()
    for key, p in proposals.items():
        for layout in (p.clean, p.layout):
            for rel in layout.relations:
                assert all(0 <= i < layout.n for i in rel.objects)
                assert len(set(rel.objects)) == len(rel.objects)
        for rel in p.clean.relations:
            assert _relation_holds(p.clean, rel), (key, rel)
            kinds.add(rel.kind)
        # wrong relations replace good ones one for one, and the clean poses violate each of them
        assert len(p.layout.relations) == len(p.clean.relations)
        changed = [r for r, s in zip(p.layout.relations, p.clean.relations, strict=True) if r != s]
        assert len(changed) == sum(m.kind == "wrong_relation" for m in p.mistakes)
        for rel in changed:
            assert not _relation_holds(p.clean, rel), (key, rel)
        against = {r.objects[0] for r in p.clean.relations if r.kind == "against_wall"}
        assert {i for i, c in enumerate(p.clean.categories) if c in WALL_CATEGORIES} <= against
    assert kinds == {"against_wall", "near", "faces", "side_of"}


def test_mistakes_add_collisions_and_out_of_bounds_and_zero_is_mostly_clean(proposals):
    errors = {"clean": 0, "default": 0}
    medium_with_collision = 0
    for key, p in proposals.items():
        for name, layout in (("clean", p.clean), ("default", p.layout)):
            errors[name] += len(collision_pairs(layout)) + int(out_of_bounds(layout).sum())
        medium_with_collision += key[2] == "medium" and len(collision_pairs(p.clean)) > 0
    assert errors["default"] > errors["clean"] + 50
    assert medium_with_collision <= 0.1 * len(proposals) / 2


def test_lower_levels_make_a_subset_of_the_mistakes():
    for room, furniture, seed in _scenes(seeds=range(2), shapes=("rectangle",), densities=("dense",)):
        events = {}
        for level in (0.3, 0.7, 1.0):
            p = propose_initial(room, furniture, seed, mistakes=level)
            events[level] = {(m.kind, m.objects) for m in p.mistakes if m.kind != "jammed_chair"}
        assert events[0.3] <= events[0.7] <= events[1.0]
        assert len(events[1.0]) > len(events[0.3])


def _only(monkeypatch, kind: str) -> None:
    for k in MISTAKE_KINDS:
        monkeypatch.setitem(MISTAKE_RATES, k, 1.0 if k == kind else 0.0)


def test_turn_rotates_in_place_by_a_quarter_or_half_turn(monkeypatch):
    _only(monkeypatch, "turn")
    room, furniture = sample_room("office", 2, density="dense")
    p = propose_initial(room, furniture, 2)
    assert {m.kind for m in p.mistakes} == {"turn"} and len(p.mistakes) == len(furniture)
    a, b = p.clean.poses(), p.layout.poses()
    assert np.allclose(a[:, :2], b[:, :2])
    for m in p.mistakes:
        (i,) = m.objects
        turn = math.degrees(math.remainder(b[i, 2] - a[i, 2], 2 * math.pi))
        assert abs(abs(turn) - abs(int(m.detail))) < 1e-9 and int(m.detail) in (90, -90, 180)


def test_outside_pushes_every_piece_partly_out(monkeypatch):
    _only(monkeypatch, "outside")
    for room_type in ROOM_TYPES:
        room, furniture = sample_room(room_type, 1, density="medium", shape="L")
        p = propose_initial(room, furniture, 1)
        assert out_of_bounds(p.layout).all()
        assert np.allclose(p.clean.poses()[:, 2], p.layout.poses()[:, 2])


def test_jammed_chairs_have_their_back_on_the_wall_behind(monkeypatch):
    _only(monkeypatch, "jammed_chair")
    room, furniture = sample_room("dining", 3, density="medium")
    p = propose_initial(room, furniture, 3)
    jammed = [m.objects[0] for m in p.mistakes]
    assert len(jammed) == sum(c == "chair" for c in p.clean.categories) > 0
    for c in jammed:
        before, after = p.clean.furniture[c], p.layout.furniture[c]
        assert after.theta == before.theta
        assert _outline_distance(room, _back_points(after)[1]) < 1e-6
        step = np.array(after.pose[:2]) - np.array(before.pose[:2])
        assert step @ _u(before.theta) < -0.01  # pushed backwards, away from the table


def test_shared_slot_puts_two_pieces_in_one_place(monkeypatch):
    _only(monkeypatch, "shared_slot")
    room, furniture = sample_room("bedroom", 0, density="dense")
    p = propose_initial(room, furniture, 0)
    assert p.mistakes and {m.kind for m in p.mistakes} == {"shared_slot"}
    pairs = {tuple(sorted(pair)) for pair in collision_pairs(p.layout).tolist()}
    last = p.mistakes[-1].objects  # later moves cannot displace it
    assert tuple(sorted(last)) in pairs
    moved = p.layout.furniture[last[0]]
    assert max(_outline_distance(room, q) for q in _back_points(moved)) < 1e-6


def test_noise_moves_positions_only(monkeypatch):
    _only(monkeypatch, "noise")
    room, furniture = sample_room("living", 5, density="dense")
    p = propose_initial(room, furniture, 5)
    step = p.layout.poses() - p.clean.poses()
    assert np.allclose(step[:, 2], 0.0)
    assert 0.05 < np.sqrt(np.mean(step[:, :2] ** 2)) < 0.4  # ~0.15 m per axis


def test_module_rates_are_documented_and_in_range():
    assert set(MISTAKE_KINDS) == set(MISTAKE_RATES)
    assert all(0.0 <= r <= 1.0 for r in MISTAKE_RATES.values())
    assert initial.DEFAULT_MISTAKES == 1.0 and initial.NOISE_STD == 0.15


def test_empty_furniture_gives_an_empty_layout():
    room, _ = sample_room("office", 0)
    layout = initial_layout(room, (), 0)
    assert layout.n == 0 and layout.relations == ()


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"mistakes": -0.1}, ValueError, "mistakes"),
        ({"mistakes": 1.5}, ValueError, "mistakes"),
        ({"mistakes": float("nan")}, ValueError, "mistakes"),
        ({"mistakes": "high"}, TypeError, "mistakes"),
        ({"mistakes": True}, TypeError, "mistakes"),
        ({"seed": -1}, ValueError, "seed"),
        ({"seed": 1.5}, TypeError, "seed"),
        ({"seed": "3"}, TypeError, "seed"),
        ({"room": "bedroom"}, TypeError, "room"),
        ({"furniture": "bed"}, TypeError, "furniture"),
        ({"furniture": [1, 2]}, TypeError, "furniture"),
        ({"furniture": Furniture("bed", (1.4, 2.0, 0.5))}, TypeError, "furniture"),
    ],
)
def test_bad_input_names_the_argument(kwargs, error, name):
    room, furniture = sample_room("bedroom", 0)
    args = {"room": room, "furniture": furniture, "seed": 0} | kwargs
    mistakes = args.pop("mistakes", 1.0)
    with pytest.raises(error, match=name):
        initial_layout(args["room"], args["furniture"], args["seed"], mistakes=mistakes)
    with pytest.raises(error, match=name):
        propose_initial(args["room"], args["furniture"], args["seed"], mistakes=mistakes)
