"""The optimiser: best so far, determinism, batch independence, repair, legalisation, annealing, timing."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import torch

from neurips26.iohp.layout import Layout
from neurips26.iohp.metrics import collision_pairs, door_blocking, out_of_bounds
from neurips26.iohp.objective import LAYOUTVLM, TERM_NAMES, build_problem, energy
from neurips26.iohp.optimize import (
    OptimizeResult,
    _legal_poses,
    anneal,
    optimize,
    restart_poses,
    tau_schedule,
)
from neurips26.iohp.proxy import default_proxies
from neurips26.iohp.rooms import sample_room
from tests.unit.iohp.test_objective import _hand_built, _scattered
from tests.unit.one_thread import one_thread  # noqa: F401  (autouse: one torch thread per test)

F64 = torch.float64


def _problem(layouts, dtype=F64):
    return build_problem(layouts, [default_proxies(lay) for lay in layouts], dtype=dtype)


def _rescored(result: OptimizeResult, problem, tau=0.005, weights="iohp", margin=0.0) -> np.ndarray:
    poses = torch.as_tensor(result.poses, dtype=problem.dtype)
    return energy(poses, problem, tau, weights, margin=margin).total.numpy()


def _violations(layout: Layout) -> tuple[int, np.ndarray]:
    """The metrics' physical violations: count, and per piece whether it takes part in one."""
    pairs = collision_pairs(layout)
    outside, door = out_of_bounds(layout), door_blocking(layout)
    involved = outside | door
    involved[pairs.ravel()] = True
    return len(pairs) + int(outside.sum()) + int(door.sum()), involved


def test_tau_schedule_is_geometric_from_start_to_end():
    taus = tau_schedule(150)
    assert taus[0] == pytest.approx(0.05) and taus[-1] == pytest.approx(0.005)
    np.testing.assert_allclose(taus[1:] / taus[:-1], (0.1) ** (1 / 149), rtol=1e-12)
    assert tau_schedule(1).tolist() == [0.005] and len(tau_schedule(0)) == 0
    assert tau_schedule(4, 0.02).tolist() == [0.02] * 4


def test_restart_zero_is_the_initial_layout_and_the_others_are_seeded():
    problem = _problem(_scattered(3))
    starts = restart_poses(problem, 3, seed=5).view(3, 3, problem.n, 3)
    for b in range(3):
        assert torch.equal(starts[b, 0], problem.xi0[b])
        nb = int(problem.object_mask[b].sum())
        shift = (starts[b, 1:, :nb, :2] - problem.xi0[b, :nb, :2]).abs()
        assert float(shift.mean()) > 0.1  # jittered by ~0.3 m
        turn = torch.remainder(starts[b, 1:, :nb, 2] - problem.xi0[b, :nb, 2], 2 * math.pi)
        assert bool(
            (
                torch.isclose(turn, torch.zeros_like(turn), atol=1e-9)
                | torch.isclose(turn, torch.full_like(turn, math.pi))
            ).all()
        )
        assert torch.equal(starts[b, :, nb:], problem.xi0[b, nb:].expand(3, -1, -1))  # padding untouched
    assert torch.equal(starts.flatten(0, 1), restart_poses(problem, 3, seed=5))
    assert not torch.equal(starts.flatten(0, 1), restart_poses(problem, 3, seed=6))


def test_final_energy_never_exceeds_the_initial_one_and_is_what_it_reports():
    # the guarantee without the legalisation (which may raise E to remove a violation; tested below)
    problem = _problem(_scattered(3))
    result = optimize(problem, steps=12, repair_steps=4, restarts=2, legalise=False)
    assert result.poses.shape == (3, problem.n, 3)
    assert bool(np.all(result.final["total"] <= result.initial["total"]))
    assert bool(np.all(result.final["total"] < 0.5 * result.initial["total"]))  # it did optimise
    np.testing.assert_allclose(_rescored(result, problem), result.final["total"], rtol=1e-9, atol=1e-12)
    for name in (*TERM_NAMES, "total"):
        assert result.final[name].shape == (3,)


def test_a_feasible_layout_is_kept():
    problem = _problem([_hand_built()])
    result = optimize(problem, steps=20, repair_steps=10, restarts=3)
    assert result.final["total"][0] == 0.0
    assert result.restart.tolist() == [-1]  # the initial layout wins the tie
    np.testing.assert_array_equal(result.poses, problem.xi0.numpy())
    assert not result.repair_tried[0]


def test_deterministic_by_seed():
    problem = _problem(_scattered(2), dtype=torch.float32)
    a = optimize(problem, steps=6, repair_steps=3, seed=3, legalise_steps=4)
    b = optimize(problem, steps=6, repair_steps=3, seed=3, legalise_steps=4)
    np.testing.assert_array_equal(a.poses, b.poses)
    for k in a.trace:
        np.testing.assert_array_equal(a.trace[k], b.trace[k])
    np.testing.assert_array_equal(a.evaluations, b.evaluations)
    c = optimize(problem, steps=6, repair_steps=3, seed=4, legalise_steps=4)
    assert not np.array_equal(a.trace["total"], c.trace["total"]) or not np.array_equal(a.poses, c.poses)


def test_batched_optimisation_equals_per_scene():
    # restart r of scene b draws from sub_seed(seed, b, r): scene 0 keeps its streams when optimised alone
    layouts = _scattered(2, seed=7)
    problem = _problem(layouts)
    together = optimize(problem, steps=8, restarts=2, repair=False, seed=1, legalise_steps=4)
    alone = optimize(_problem(layouts[:1]), steps=8, restarts=2, repair=False, seed=1, legalise_steps=4)
    n0 = layouts[0].n
    np.testing.assert_allclose(alone.poses[0, :n0], together.poses[0, :n0], rtol=0, atol=1e-9)
    assert alone.restart[0] == together.restart[0]
    one = optimize(problem, steps=8, restarts=1, repair=False, legalise=False)
    for b, lay in enumerate(layouts):
        single = optimize(_problem([lay]), steps=8, restarts=1, repair=False, legalise=False)
        np.testing.assert_allclose(single.poses[0, : lay.n], one.poses[b, : lay.n], rtol=0, atol=1e-9)
        np.testing.assert_allclose(
            single.trace["total"][:, 0], one.trace["total"][:, b], rtol=1e-9, atol=1e-12
        )


def test_trace_and_evaluation_counts():
    # without the legalisation, whose evaluations (candidates, push, polish) vary by scene
    problem = _problem(_scattered(3))
    steps, repair_steps, restarts = 12, 6, 2
    result = optimize(problem, steps=steps, repair_steps=repair_steps, restarts=restarts, legalise=False)
    assert result.tau.shape == (steps + repair_steps,)
    for name in (*TERM_NAMES, "total"):
        assert result.trace[name].shape == (steps + repair_steps, 3)
    main = {k: v[:steps] for k, v in result.trace.items()}
    np.testing.assert_allclose(sum(main[k] for k in TERM_NAMES), main["total"], rtol=1e-12)
    # the first row of a restart-0 winner is E(xi0) at tau_0
    e0 = energy(problem.xi0, problem, float(result.tau[0])).total.numpy()
    for b in np.flatnonzero(result.restart == 0):
        assert result.trace["total"][0, b] == pytest.approx(e0[b], rel=1e-12)
    n_candidates = (result.evaluations - 1 - restarts * (steps + 1)) / (repair_steps + 1)
    assert np.all(n_candidates == np.round(n_candidates)) and np.all(n_candidates <= 4)
    np.testing.assert_array_equal(n_candidates > 0, result.repair_tried)
    repair_rows = result.trace["total"][steps:]
    assert np.all(np.isnan(repair_rows[:, ~result.repaired]))
    assert np.all(np.isfinite(repair_rows[:, result.repaired]))


def test_repair_never_increases_energy():
    # the repair's own guarantee (the legalisation after it may trade E for fewer violations)
    problem = _problem(_scattered(4, seed=11))
    plain = optimize(problem, steps=10, repair=False, seed=2, legalise=False)
    fixed = optimize(problem, steps=10, repair_steps=8, seed=2, legalise=False)
    assert fixed.repair_tried.any()
    assert bool(np.all(fixed.final["total"] <= plain.final["total"]))
    assert bool(np.all(fixed.final["total"][fixed.repaired] < plain.final["total"][fixed.repaired]))
    same = ~fixed.repaired
    np.testing.assert_array_equal(fixed.poses[same], plain.poses[same])
    assert bool(np.all(fixed.evaluations[fixed.repair_tried] > plain.evaluations[fixed.repair_tried]))


def test_legalisation_removes_violations_and_never_trades_them_for_energy():
    problem = _problem([*_scattered(2, seed=3), _hand_built()], dtype=torch.float32)  # the last: feasible
    plain = optimize(problem, steps=12, repair_steps=5, legalise=False)
    legal = optimize(problem, steps=12, repair_steps=5, legalise_steps=8)
    before = np.array([_violations(lay)[0] for lay in plain.layouts(problem)])
    after = np.array([_violations(lay)[0] for lay in legal.layouts(problem)])
    np.testing.assert_array_equal(plain.violations, before)  # the counts it reports are the metrics'
    np.testing.assert_array_equal(legal.violations, after)
    assert before[0] > 0 and before[1] > 0 and before[2] == 0 and after.sum() < before.sum() / 3
    # the acceptance rule, scene by scene: fewer violations, or as many and no higher E
    fewer = after < before
    assert bool(np.all(fewer | ((after == before) & (legal.final["total"] <= plain.final["total"]))))
    np.testing.assert_array_equal(legal.legalised, fewer | (legal.final["total"] < plain.final["total"]))
    same = ~legal.legalised
    np.testing.assert_array_equal(legal.poses[same], plain.poses[same])
    assert bool(np.all(legal.evaluations[before > 0] > plain.evaluations[before > 0]))
    np.testing.assert_array_equal(legal.evaluations[before == 0], plain.evaluations[before == 0])
    np.testing.assert_allclose(_rescored(legal, problem), legal.final["total"], rtol=1e-5)
    assert legal.trace["total"].shape == plain.trace["total"].shape  # the legalisation is not traced


def test_legal_poses_break_no_rule_and_start_with_the_current_pose():
    lay = _scattered(1, density="medium", seed=0)[0]  # a bedroom, six pieces at random poses
    poses = lay.poses()
    for i in range(lay.n):
        cand = _legal_poses(lay, poses, i, 0.6, 0.05)
        assert len(cand) > 0
        cost = np.linalg.norm(cand[:, :2] - poses[i, :2], axis=1)
        for c in np.r_[np.arange(min(10, len(cand))), np.linspace(0, len(cand) - 1, 10).astype(int)]:
            trial = poses.copy()
            trial[i] = cand[c]
            assert not _violations(lay.with_poses(trial))[1][i]  # piece i takes part in no violation
        quarter = np.remainder(cand[:, 2], math.pi / 2)
        assert bool(np.all(np.minimum(quarter, math.pi / 2 - quarter) < 1e-12))  # axis headings
        assert bool(np.all(np.abs(cand[:, :2] - poses[i, :2]) <= 0.6 + 1e-9))
        assert cost[0] <= cost.min() + 0.25 + 1e-12
    walled = _legal_poses(lay, poses, 0, 10.0, 0.1, against_wall=True)
    sizes = lay.sizes()[0]
    for pose in walled[:: max(1, len(walled) // 20)]:
        u = np.array([math.cos(pose[2]), math.sin(pose[2])])
        back = pose[:2] - u * sizes[1] / 2
        start, end, normal = lay.room.walls()
        t = np.clip(((back - start) * (end - start)).sum(1) / ((end - start) ** 2).sum(1), 0, 1)
        gap = np.linalg.norm(back - (start + t[:, None] * (end - start)), axis=1)
        assert bool(np.any((gap < 1e-6) & (normal @ u > 0.99)))
    # a legal piece on an axis heading: its own pose is the first (zero-cost) candidate
    hand = _hand_built()
    first = _legal_poses(hand, hand.poses(), 3, 0.6, 0.05)[0]
    np.testing.assert_allclose(first, hand.poses()[3], atol=1e-9)


def test_margin_is_part_of_the_reported_objective():
    problem = _problem(_scattered(1))
    result = optimize(problem, steps=6, repair_steps=3, margin=0.01, legalise_steps=4)
    np.testing.assert_allclose(_rescored(result, problem, margin=0.01), result.final["total"], rtol=1e-9)
    assert not np.allclose(_rescored(result, problem), result.final["total"], rtol=1e-9)


def test_layoutvlm_preset_optimises_without_proxy_terms():
    problem = _problem(_scattered(2))
    result = optimize(problem, steps=10, repair_steps=5, weights=LAYOUTVLM, legalise_steps=4)
    for name in ("proxy_conflict", "proxy_wall", "proxy_proxy", "functional"):
        assert np.all(np.nan_to_num(result.trace[name]) == 0.0)
        assert np.all(result.final[name] == 0.0)
    np.testing.assert_allclose(
        _rescored(result, problem, weights=LAYOUTVLM), result.final["total"], rtol=1e-9
    )


def test_annealing_is_deterministic_and_keeps_the_best():
    problem = _problem(_scattered(2))
    a = anneal(problem, steps=25, restarts=2, seed=1)
    b = anneal(problem, steps=25, restarts=2, seed=1)
    np.testing.assert_array_equal(a.poses, b.poses)
    np.testing.assert_array_equal(a.trace["total"], b.trace["total"])
    assert bool(np.all(a.final["total"] <= a.initial["total"]))
    assert bool(np.all(a.final["total"] < a.initial["total"]))  # accepted improvements exist
    np.testing.assert_allclose(_rescored(a, problem), a.final["total"], rtol=1e-9)
    chosen = a.restart >= 0
    assert bool(np.all(a.final["total"][chosen] <= a.trace["total"][:, chosen].min(axis=0) + 1e-12))
    np.testing.assert_array_equal(a.evaluations, 1 + 2 * (25 + 1))
    c = anneal(problem, steps=25, restarts=2, seed=2)
    assert not np.array_equal(a.trace["total"], c.trace["total"])


def test_dense_room_ends_with_fewer_collisions():
    room, furniture = sample_room("living", 5, density="dense")
    rng = np.random.default_rng(0)
    x0, y0, x1, y1 = room.bounds
    n = len(furniture)
    poses = np.c_[
        rng.uniform(x0 + 0.5, x1 - 0.5, n), rng.uniform(y0 + 0.5, y1 - 0.5, n), rng.uniform(-3, 3, n)
    ]
    layout = Layout(room, furniture).with_poses(poses)
    problem = _problem([layout], dtype=torch.float32)
    result = optimize(problem, steps=50, repair_steps=10, legalise_steps=5)
    before = len(collision_pairs(layout))
    after = len(collision_pairs(result.layouts(problem)[0]))
    print(f"dense living room, {n} pieces: {before} -> {after} colliding pairs")
    assert before >= 3 and after < before


def test_timing_150_steps_8_scenes_2_restarts():
    problem = _problem(_scattered(8), dtype=torch.float32)
    start = time.perf_counter()
    result = optimize(problem, steps=150, restarts=2, repair=False, legalise=False)
    elapsed = time.perf_counter() - start
    per_step = elapsed / 150 * 1e3
    print(
        f"150 Adam steps, 8 scenes x 2 restarts (float32, 1 thread): {elapsed:.2f} s, {per_step:.1f} ms/step"
    )
    assert bool(np.all(result.final["total"] <= result.initial["total"]))
    assert elapsed < 8.0


def test_bad_input_is_named():
    problem = _problem([_hand_built()])
    with pytest.raises(ValueError, match="steps"):
        optimize(problem, steps=-1)
    with pytest.raises(TypeError, match="steps"):
        optimize(problem, steps=1.5)
    with pytest.raises(ValueError, match="repair_steps"):
        optimize(problem, repair_steps=-2)
    with pytest.raises(ValueError, match="restarts"):
        optimize(problem, restarts=0)
    with pytest.raises(ValueError, match="tau"):
        optimize(problem, tau=(0.005, 0.05))
    with pytest.raises(ValueError, match="tau"):
        optimize(problem, tau=-0.1)
    with pytest.raises(ValueError, match="tau"):
        optimize(problem, tau=(0.05, 0.01, 0.005))
    with pytest.raises(ValueError, match="weights"):
        optimize(problem, weights="best")
    with pytest.raises(ValueError, match="lr"):
        optimize(problem, lr=0.0)
    with pytest.raises(ValueError, match="seed"):
        optimize(problem, seed=-1)
    with pytest.raises(TypeError, match="legalise"):
        optimize(problem, legalise="yes")
    with pytest.raises(ValueError, match="legalise_steps"):
        optimize(problem, legalise_steps=-1)
    with pytest.raises(ValueError, match="legal_boost"):
        optimize(problem, legal_boost=0.5)
    with pytest.raises(TypeError, match="legal_moves"):
        optimize(problem, legal_moves=1)
    with pytest.raises(ValueError, match="margin"):
        optimize(problem, margin=-0.01)
    with pytest.raises(TypeError, match="problem"):
        optimize([_hand_built()])
    with pytest.raises(ValueError, match="steps"):
        anneal(problem, steps=-1)
    with pytest.raises(ValueError, match="restarts"):
        anneal(problem, restarts=0)
    with pytest.raises(ValueError, match="tau"):
        anneal(problem, tau=0.0)
    with pytest.raises(ValueError, match="temperature"):
        anneal(problem, temperature=(1.0,))
    with pytest.raises(ValueError, match="restarts"):
        restart_poses(problem, 0)
