"""The objective E: zero on a feasible hand-built room, each term fires, batching, presets, gradient."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from neurips26.iohp.layout import ROOM_TYPES, Door, Furniture, Layout, Relation, Room
from neurips26.iohp.objective import (
    CONFLICT_ONLY,
    FUNCTIONAL_ONLY,
    IOHP,
    LAYOUTVLM,
    PAIR_GROUPS,
    PRESETS,
    TERM_NAMES,
    Weights,
    build_problem,
    energy,
    pair_penetrations,
    proxy_rectangles,
)
from neurips26.iohp.proxy import FunctionalRelation, Proxy, default_proxies
from neurips26.iohp.rooms import sample_room
from tests.unit.one_thread import one_thread  # noqa: F401  (autouse: one torch thread per test)

PI = math.pi
F64 = torch.float64
PROXY_TERMS = ("proxy_conflict", "proxy_wall", "proxy_proxy", "functional")


def _room() -> Room:
    """A 5 x 4 m living room with a 0.8 m door in the bottom wall (swing [3.8, 4.6] x [0, 0.8])."""
    door = Door.on_segment(0, (0.0, 0.0), (5.0, 0.0), 4.2, 0.8)
    return Room("living", ((0.0, 0.0), (5.0, 0.0), (5.0, 4.0), (0.0, 4.0)), None, (door,))


def _hand_built() -> Layout:
    """A feasible living room satisfying every relation, by hand (all rectangles apart or touching).

    Sofa on the bottom wall facing up; its leg zone y in [0.9, 1.35]; the coffee table right above it
    (within reach); the TV on the top wall facing the sofa 2.675 m from the seat zone; a desk on the left
    wall, its chair with the front face 2 cm from the desk's front edge, facing it.
    """
    furniture = (
        Furniture("sofa", (2.0, 0.9, 0.8), (2.5, 0.45, PI / 2), "sofa_1"),
        Furniture("coffee_table", (1.0, 0.5, 0.4), (2.5, 1.6, -PI / 2), "coffee_table_1"),
        Furniture("tv_stand", (1.5, 0.4, 0.5), (2.5, 3.8, -PI / 2), "tv_stand_1"),
        Furniture("desk", (1.2, 0.6, 0.75), (0.3, 2.2, 0.0), "desk_1"),
        Furniture("chair", (0.5, 0.5, 0.9), (0.87, 2.2, PI), "chair_1"),
    )
    relations = (
        Relation("against_wall", (0,)),
        Relation("against_wall", (2,)),
        Relation("against_wall", (3,)),
        Relation("near", (1, 0), distance=(0.3, 1.5)),
        Relation("faces", (0, 2)),
        Relation("side_of", (1, 0), side="front"),
    )
    return Layout(_room(), furniture, relations)


def _scattered(count: int, density: str = "dense", seed: int = 0) -> list[Layout]:
    """Sampled rooms of every type with their furniture scattered at random (overlaps, bad headings)."""
    out = []
    for s in range(count):
        room, furniture = sample_room(ROOM_TYPES[s % 4], seed + s, density=density)
        rng = np.random.default_rng(1000 + seed + s)
        x0, y0, x1, y1 = room.bounds
        n = len(furniture)
        poses = np.c_[
            rng.uniform(x0 + 0.4, x1 - 0.4, n), rng.uniform(y0 + 0.4, y1 - 0.4, n), rng.uniform(-PI, PI, n)
        ]
        relations = (Relation("against_wall", (0,)), Relation("near", (1, 0), distance=(0.5, 1.5)))
        relations += (
            Relation("faces", (n - 1, 0)),
            Relation("side_of", (1, 0), side=("left", "back")[s % 2]),
        )
        out.append(Layout(room, furniture, relations).with_poses(poses))
    return out


def _problem(layouts, *, proxies=True, dtype=F64):
    return build_problem(layouts, [default_proxies(lay) for lay in layouts] if proxies else None, dtype=dtype)


def _values(terms) -> dict[str, float]:
    return {k: float(v[0]) for k, v in terms.as_dict().items()}


# ----------------------------------------------------------------------------------------------------------
# E = 0 on a feasible layout, and every term fires on its violation
# ----------------------------------------------------------------------------------------------------------


def test_hand_built_layout_uses_every_relation_kind():
    lay = _hand_built()
    problem = _problem([lay])
    kinds = {r.kind for p in problem.proxy_records[0] for r in p.relations}
    assert kinds == {"within_reach", "faces", "view_range", "tucked_under"}
    assert {r.kind for r in lay.relations} == {"against_wall", "near", "faces", "side_of"}


@pytest.mark.parametrize("tau", [0.05, 0.005])
def test_energy_is_zero_on_a_feasible_layout_with_satisfied_relations(tau):
    problem = _problem([_hand_built()])
    values = _values(energy(problem.initial_poses(), problem, tau))
    assert all(abs(v) <= 1e-12 for v in values.values()), values


def _moved(index: int, pose: tuple[float, float, float]) -> Layout:
    lay = _hand_built()
    poses = lay.poses()
    poses[index] = pose
    return lay.with_poses(poses)


@pytest.mark.parametrize(
    ("index", "pose", "term"),
    [
        (1, (2.5, 0.9, -PI / 2), "collision"),  # coffee table into the sofa
        (3, (-0.1, 2.2, 0.0), "boundary"),  # desk through the left wall
        (0, (4.0, 0.45, PI / 2), "boundary"),  # sofa in the door's swing zone
        (1, (2.5, 3.0, -PI / 2), "proxy_conflict"),  # coffee table in the TV's reach-in zone
        (3, (0.3, 2.2, PI), "proxy_wall"),  # desk facing the wall: its seating zone goes through it
        (4, (1.2, 1.5, PI), "proxy_proxy"),  # chair pull-out zone on the sofa's leg zone
        (4, (1.2, 2.2, PI), "functional"),  # chair pulled away from the desk
        (2, (2.5, 3.8, 0.0), "functional"),  # TV turned away from the sofa
        (1, (2.5, 3.4, -PI / 2), "functional"),  # coffee table out of reach (and too far for `near`)
        (0, (2.5, 0.65, PI / 2), "semantic"),  # sofa off its wall
        (0, (2.5, 0.45, PI / 2 + 0.1), "orientation"),
        (4, (0.9, 2.2, PI), "prior"),
    ],
)
def test_each_term_fires_on_its_violation(index, pose, term):
    problem = _problem([_moved(index, pose)])
    values = _values(energy(problem.initial_poses(), problem, 0.005))
    if term == "prior":  # the prior compares with xi0: optimise away from it
        x = problem.initial_poses()
        x[0, index, 0] += 0.2
        values = _values(energy(x, problem, 0.005))
    assert values[term] > 1e-6, values


def test_proxies_may_stand_in_the_door_swing_furniture_may_not():
    # a bookshelf on the right wall facing -x: its 0.6 m reach-in zone covers part of the door swing
    shelf = Furniture("bookshelf", (1.0, 0.35, 1.8), (4.825, 0.6, PI), "bookshelf_1")
    lay = Layout(_room(), (shelf,))
    problem = _problem([lay])
    center, size, _ = proxy_rectangles(problem.initial_poses(), problem)
    assert center[0, 0, 0] - size[0, 0, 1] / 2 < 4.6  # the proxy reaches into the swing [3.8, 4.6]
    assert all(abs(v) <= 1e-12 for v in _values(energy(problem.initial_poses(), problem)).values())
    x = problem.initial_poses()
    x[0, 0, 0] = 4.4  # the shelf itself in the swing
    assert float(energy(x, problem).boundary[0]) > 1e-4


def test_l_shaped_notch_is_an_obstacle_for_furniture_and_proxies():
    room, furniture = sample_room("living", 3, shape="L")
    x0, y0, x1, y1 = room.notch
    notch_center = ((x0 + x1) / 2, (y0 + y1) / 2, 0.0)
    plant = Furniture("plant", (0.4, 0.4, 1.0), notch_center, "plant_1")
    problem = _problem([Layout(room, (plant,))])
    terms = energy(problem.initial_poses(), problem)
    assert float(terms.boundary[0]) > 0.01 and float(terms.proxy_wall[0]) > 0.01


def test_tucked_under_is_the_chair_front_at_the_edge_facing_it_without_overlap():
    problem = _problem([_hand_built()])
    w_f = IOHP.functional

    def functional(chair_pose):
        x = problem.initial_poses()
        x[0, 4] = torch.tensor(chair_pose, dtype=F64)
        return energy(x, problem), x

    # front face 12 cm from the edge: (0.12 - 0.05)^2
    terms, _ = functional((0.97, 2.2, PI))
    assert float(terms.functional[0]) == pytest.approx(w_f * 0.07**2, abs=1e-12)
    # turned away: tip 0.52 m from the edge and facing term 1 + 1
    terms, _ = functional((0.87, 2.2, 0.0))
    assert float(terms.functional[0]) == pytest.approx(w_f * (0.47**2 + 2.0), abs=1e-12)
    # pushed 3 cm under the desk: tucked is satisfied, the collision term is not exempt
    terms, _ = functional((0.82, 2.2, PI))
    assert float(terms.functional[0]) == pytest.approx(0.0, abs=1e-12)
    assert float(terms.collision[0]) > 0.0


@pytest.mark.parametrize(("table", "satisfied"), [("dining_table", True), ("desk", False)])
def test_tucked_under_uses_the_tables_seating_sides(table, satisfied):
    # a chair at the table's BACK edge, facing it: fine for a dining table (seats at the back), not a desk
    top = Furniture(
        table, (1.6, 0.9, 0.75), (2.5, 2.0, PI / 2), f"{table}_1"
    )  # front = +y, back edge y = 1.55
    chair = Furniture("chair", (0.5, 0.5, 0.9), (2.5, 1.28, PI / 2), "chair_1")  # front face at y = 1.53
    tucked = Proxy(1, "sit", "back", 0.0, (0.6, 0.6, 1.3), relations=(FunctionalRelation("tucked_under", 0),))
    problem = build_problem([Layout(_room(), (top, chair))], [(*default_proxies([top]), tucked)], dtype=F64)
    value = float(energy(problem.initial_poses(), problem).functional[0])
    assert (value <= 1e-12) == satisfied
    assert problem.fn_sides[0, 0].tolist() == (
        [True, True, False, False] if satisfied else [True] + [False] * 3
    )


def test_functional_formulas_on_single_relations():
    # a seat proxy facing a TV; the view range [3.5, 4] and the reach 0.6 are violated by known amounts
    tv = Furniture("tv_stand", (1.5, 0.4, 0.5), (2.5, 3.8, -PI / 2), "tv_stand_1")
    seat = Furniture("armchair", (0.8, 0.8, 0.9), (2.5, 0.5, PI / 2), "armchair_1")
    rel = (
        FunctionalRelation("view_range", 0, distance=(3.5, 4.0)),
        FunctionalRelation("within_reach", 0, reach=0.6),
        FunctionalRelation("faces", 0),
    )
    proxy = Proxy(1, "sit", "front", 0.0, (0.8, 0.4, 1.3), relations=rel)
    problem = build_problem([Layout(_room(), (tv, seat))], [(proxy,)], dtype=F64)
    # proxy centre (2.5, 1.1): 2.7 m from the TV's centre, 2.5 m from its footprint (front face y = 3.6)
    expected = (3.5 - 2.7) ** 2 + (2.5 - 0.6) ** 2 + 0.0
    value = float(energy(problem.initial_poses(), problem).functional[0])
    assert value == pytest.approx(IOHP.functional * expected, abs=1e-9)


# ----------------------------------------------------------------------------------------------------------
# Structure: pair lists, non-negativity, sums, batching, presets
# ----------------------------------------------------------------------------------------------------------


def test_pair_lists_follow_the_exemptions():
    lay = _hand_built()
    problem = _problem([lay])
    n, k = problem.n, problem.k
    records = problem.proxy_records[0]

    def pairs(group):
        pairs_g, mask_g = problem.group_pairs(group)
        p = pairs_g[0][mask_g[0]].tolist()
        return {tuple(x) for x in p}

    conflict = pairs("proxy_conflict")
    for kk, p in enumerate(records):
        assert (n + kk, p.owner) not in conflict
    desk_zone = next(kk for kk, p in enumerate(records) if p.owner == 3)
    assert (n + desk_zone, 4) not in conflict  # the chair is allowed in the desk's seating zone
    assert (n + desk_zone, 0) in conflict
    walls = pairs("proxy_wall")
    door = n + k + problem.m - 1  # the door swing is the last obstacle
    assert not problem.obstacle_wall[0, -1] and all(o != door for _, o in walls)
    assert len(walls) == k * 4
    assert pairs("proxy_proxy") == {(n + 0, n + 4)}  # sofa seat and chair pull-out: both simultaneous
    assert len(pairs("collision")) == n * (n - 1) // 2 and len(pairs("boundary")) == n * problem.m
    dense = (n + k + problem.m) * (n + k + problem.m - 1) // 2
    assert sum(len(pairs(g)) for g in PAIR_GROUPS) < dense


def test_every_term_is_non_negative_and_terms_sum_to_the_total():
    problem = _problem(_scattered(8))
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = problem.initial_poses() + torch.as_tensor(rng.normal(0, 0.3, (problem.batch, problem.n, 3)))
        for tau in (0.05, 0.005):
            terms = energy(x, problem, tau)
            for name in TERM_NAMES:
                assert bool((getattr(terms, name) >= 0).all()), name
            total = sum(getattr(terms, name) for name in TERM_NAMES)
            torch.testing.assert_close(terms.total, total, rtol=1e-14, atol=1e-12)
            assert bool((terms.collision > 0).all())  # scattered dense rooms do collide


def test_batched_equals_per_scene():
    layouts = _scattered(5)
    problem = _problem(layouts)
    rng = np.random.default_rng(2)
    x = problem.initial_poses() + torch.as_tensor(rng.normal(0, 0.2, (problem.batch, problem.n, 3)))
    batched = energy(x, problem, 0.02)
    for b, lay in enumerate(layouts):
        single = _problem([lay])
        alone = energy(x[b : b + 1, : lay.n].clone(), single, 0.02)
        for name, value in alone.as_dict().items():
            assert float(value[0]) == pytest.approx(float(getattr(batched, name)[b]), rel=1e-6, abs=1e-9), (
                name
            )
    picked = problem.select([3, 3, 0])
    again = energy(x[[3, 3, 0]], picked, 0.02)
    torch.testing.assert_close(again.total, batched.total[[3, 3, 0]], rtol=1e-12, atol=1e-12)


def test_zero_proxy_weights_are_exactly_the_layoutvlm_objective():
    assert Weights(proxy=0.0, functional=0.0) == LAYOUTVLM == PRESETS["layoutvlm"]
    layouts = _scattered(4)
    with_proxies, without = _problem(layouts), _problem(layouts, proxies=False)
    assert without.k == 0 and with_proxies.k > 0
    x = with_proxies.initial_poses() + 0.1
    x.requires_grad_(True)
    y = x.detach().clone().requires_grad_(True)
    vlm = energy(x, with_proxies, 0.01, LAYOUTVLM)
    plain = energy(y, without, 0.01, IOHP)  # IOHP weights, but nothing for the proxy terms to act on
    full = energy(x.detach(), with_proxies, 0.01, IOHP)
    for name in PROXY_TERMS:
        assert torch.equal(getattr(vlm, name), torch.zeros(4, dtype=F64))
        assert torch.equal(getattr(plain, name), torch.zeros(4, dtype=F64))
        assert bool((getattr(full, name)[[0, 1, 2, 3]] >= 0).all())
    for name in (*TERM_NAMES, "total"):
        assert torch.equal(getattr(vlm, name), getattr(plain, name)), name
    for name in ("collision", "boundary", "semantic", "prior", "orientation"):
        assert torch.equal(getattr(vlm, name), getattr(full, name)), name
    assert bool((full.total > vlm.total).all())  # the proxy terms of scattered rooms are not zero
    (gx,) = torch.autograd.grad(vlm.total.sum(), x)
    (gy,) = torch.autograd.grad(plain.total.sum(), y)
    assert torch.equal(gx, gy)


def test_ablation_presets_drop_exactly_their_terms():
    problem = _problem(_scattered(3))
    x = problem.initial_poses()
    full = energy(x, problem, 0.01, IOHP)
    conflict = energy(x, problem, 0.01, "conflict_only")
    functional = energy(x, problem, 0.01, FUNCTIONAL_ONLY)
    assert PRESETS["conflict_only"] is CONFLICT_ONLY
    assert bool((full.functional > 0).all()) and bool((full.proxy_conflict > 0).all())
    assert torch.equal(conflict.functional, torch.zeros(3, dtype=F64))
    assert torch.equal(
        functional.proxy_conflict + functional.proxy_wall + functional.proxy_proxy, torch.zeros(3, dtype=F64)
    )
    for name in ("proxy_conflict", "proxy_wall", "proxy_proxy", "collision"):
        assert torch.equal(getattr(conflict, name), getattr(full, name))
    assert torch.equal(functional.functional, full.functional)


def test_weights_scale_their_terms_linearly():
    problem = _problem(_scattered(2))
    x = problem.initial_poses()
    base = energy(x, problem, 0.01)
    doubled = energy(
        x, problem, 0.01, Weights(**{f.name: 2 * getattr(IOHP, f.name) for f in dataclasses.fields(IOHP)})
    )
    torch.testing.assert_close(doubled.total, 2 * base.total, rtol=1e-12, atol=0.0)


def test_gradient_matches_central_finite_differences():
    problem = _problem([_scattered(1, seed=4)[0], _moved(4, (1.0, 2.0, PI - 0.2))])
    rng = np.random.default_rng(3)
    x = problem.initial_poses() + torch.as_tensor(rng.normal(0, 0.05, (problem.batch, problem.n, 3)))
    x.requires_grad_(True)
    tau = 0.03
    (grad,) = torch.autograd.grad(energy(x, problem, tau).total.sum(), x)
    h = 1e-6
    fd = torch.zeros_like(x)
    base = x.detach()
    with torch.no_grad():
        for b in range(problem.batch):
            for i in range(int(problem.object_mask[b].sum())):
                for c in range(3):
                    plus, minus = base.clone(), base.clone()
                    plus[b, i, c] += h
                    minus[b, i, c] -= h
                    fd[b, i, c] = (
                        energy(plus, problem, tau).total[b] - energy(minus, problem, tau).total[b]
                    ) / (2 * h)
    assert float(grad.abs().max()) > 1.0  # a real signal
    torch.testing.assert_close(grad, fd, rtol=1e-5, atol=1e-5)
    assert float(grad[1, int(problem.object_mask[1].sum()) :].abs().sum()) == 0.0  # padding


def test_float32_default_is_close_to_float64():
    layouts = _scattered(3)
    p32, p64 = _problem(layouts, dtype=torch.float32), _problem(layouts)
    assert build_problem(layouts).dtype == torch.float32 and p32.device.type == "cpu"
    e32 = energy(p32.initial_poses(), p32, 0.01)
    e64 = energy(p64.initial_poses(), p64, 0.01)
    assert e32.total.dtype == torch.float32
    torch.testing.assert_close(e32.total.double(), e64.total, rtol=1e-4, atol=1e-4)
    moved = p32.to(dtype=torch.float64)
    torch.testing.assert_close(
        energy(moved.initial_poses(), moved, 0.01).total, e64.total, rtol=1e-6, atol=1e-6
    )


def test_pair_penetrations_are_the_unweighted_pair_terms():
    problem = _problem(_scattered(2))
    x = problem.initial_poses()
    phis = pair_penetrations(x, problem, 0.01)
    terms = energy(x, problem, 0.01)
    for g in PAIR_GROUPS:
        torch.testing.assert_close(IOHP.of(g) * phis[g].sum(dim=1), getattr(terms, g), rtol=1e-12, atol=1e-12)


def _grown(layout: Layout, margin: float) -> Layout:
    """The layout with every footprint grown by ``margin`` on each side (heights kept)."""
    furniture = tuple(
        Furniture(f.category, (f.size[0] + 2 * margin, f.size[1] + 2 * margin, f.size[2]), f.pose, f.name)
        for f in layout.furniture
    )
    return Layout(layout.room, furniture, layout.relations)


@pytest.mark.parametrize("margin", [0.004, 0.01, 0.03])
def test_margin_grows_furniture_in_the_physical_terms_only(margin):
    layouts = [_hand_built(), *_scattered(3)]
    problem = _problem(layouts)
    x = problem.initial_poses()
    plain = energy(x, problem, 0.005)
    padded = energy(x, problem, 0.005, margin=margin)
    grown = _problem([_grown(lay, margin) for lay in layouts])
    reference = energy(x, grown, 0.005)  # the same poses with larger footprints, no margin
    for name in ("collision", "boundary"):
        torch.testing.assert_close(getattr(padded, name), getattr(reference, name), rtol=1e-12, atol=1e-12)
    for name in TERM_NAMES[2:]:  # proxies, relations, prior, orientation: untouched
        torch.testing.assert_close(getattr(padded, name), getattr(plain, name), rtol=0, atol=0)
    # the hand-built room is feasible with touching pieces (the sofa and the TV stand back onto walls) and
    # the chair's front 2 cm from the desk: a margin makes the walls bite, the desk only beyond 1 cm
    assert float(plain.total[0]) == 0.0
    assert float(padded.boundary[0]) > 0.0
    assert (float(padded.collision[0]) > 0.0) == (2 * margin > 0.02)
    phis = pair_penetrations(x, problem, 0.005, ("collision", "boundary"), margin=margin)
    for g in ("collision", "boundary"):
        torch.testing.assert_close(IOHP.of(g) * phis[g].sum(dim=1), getattr(padded, g), rtol=1e-12, atol=0)


def test_zero_margin_is_the_default_objective():
    problem = _problem(_scattered(3))
    x = problem.initial_poses() + 0.05
    a, b = energy(x, problem, 0.01), energy(x, problem, 0.01, margin=0.0)
    for name, value in a.as_dict().items():
        assert torch.equal(value, getattr(b, name)), name


def test_layouts_at_round_trips_poses():
    layouts = _scattered(2)
    problem = _problem(layouts)
    back = problem.layouts_at(problem.initial_poses())
    for a, b in zip(layouts, back, strict=True):
        np.testing.assert_array_equal(a.poses(), b.poses())


# ----------------------------------------------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------------------------------------------


def test_bad_input_is_named():
    lay = _hand_built()
    problem = _problem([lay])
    x = problem.initial_poses()
    with pytest.raises(ValueError, match="weights"):
        Weights(collision=-1.0)
    with pytest.raises(TypeError, match="weights"):
        Weights(prior="high")
    with pytest.raises(ValueError, match="weights"):
        energy(x, problem, weights="uniform")
    with pytest.raises(TypeError, match="weights"):
        energy(x, problem, weights={"collision": 1.0})
    with pytest.raises(ValueError, match="tau"):
        energy(x, problem, tau=0.0)
    with pytest.raises(ValueError, match="poses"):
        energy(x[:, :3], problem)
    with pytest.raises(TypeError, match="poses"):
        energy(x.float(), problem)
    with pytest.raises(TypeError, match="poses"):
        energy(x.numpy(), problem)
    with pytest.raises(TypeError, match="problem"):
        energy(x, "problem")
    with pytest.raises(TypeError, match="layouts"):
        build_problem([])
    with pytest.raises(TypeError, match="layouts"):
        build_problem([lay.room])
    with pytest.raises(ValueError, match="proxies"):
        build_problem([lay], [default_proxies(lay), ()])
    stray = Proxy(9, "stand", "front", 0.0, (0.6, 0.6, 1.7))
    with pytest.raises(ValueError, match="proxies"):
        build_problem([lay], [(stray,)])
    with pytest.raises(TypeError, match="dtype"):
        build_problem([lay], dtype=torch.int64)
    with pytest.raises(ValueError, match="index"):
        problem.select([1])
    with pytest.raises(ValueError, match="groups"):
        pair_penetrations(x, problem, groups=("walls",))
    with pytest.raises(ValueError, match="margin"):
        energy(x, problem, margin=-0.01)
    with pytest.raises(ValueError, match="margin"):
        energy(x, problem, margin=0.5)
    with pytest.raises(TypeError, match="margin"):
        pair_penetrations(x, problem, margin="1 cm")
