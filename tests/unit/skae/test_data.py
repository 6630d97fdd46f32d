"""Tests of the SKAE data: validated configs, seeded fresh training windows, disjoint evaluation streams."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from neurips26.skae import data as D
from neurips26.skae.systems import HardPoolConfig, make_system

SMALL_POOL = HardPoolConfig(candidates=64, pool=16, horizon=8, motion_from=4)
FLOW = D.DataConfig("lorenz-63", seed=3, window=D.FLOW_WINDOW, batch=16, flow_trajectories=4, flow_length=60)


def config(**changes) -> D.DataConfig:
    base = D.DataConfig("square-4", seed=1, batch=32, pool=SMALL_POOL)
    return dataclasses.replace(base, **changes)


# ------------------------------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"system": "nowhere"}, "system"),
        ({"seed": -1}, "seed"),
        ({"window": 0}, "window"),
        ({"batch": 0}, "batch"),
        ({"resets": "random"}, "resets"),
        ({"resets": "attractor"}, "resets"),  # a box system has no attractor law here
        ({"flow_trajectories": 0}, "flow_trajectories"),
        ({"flow_length": 4}, "flow_length"),  # shorter than a window
    ],
)
def test_data_config_names_the_bad_field(changes, field):
    with pytest.raises(ValueError, match=field):
        config(**changes)


def test_a_flow_rejects_box_resets_and_bad_types_are_type_errors():
    with pytest.raises(ValueError, match="resets"):
        D.DataConfig("lorenz-63", resets="hard-pool")
    with pytest.raises(TypeError, match="pool"):
        config(pool={"candidates": 8})
    with pytest.raises(TypeError, match="window"):
        config(window=2.5)
    with pytest.raises(TypeError, match="config"):
        D.WindowSampler("square-4")


@pytest.mark.parametrize(
    "field", ["test_starts", "val_starts", "horizon", "align_trajectories", "route_steps"]
)
def test_eval_config_names_the_bad_field(field):
    with pytest.raises(ValueError, match=field):
        D.EvalConfig(**{field: 0})


def test_reset_law_resolves_auto():
    assert config().reset_law == "hard-pool"
    assert config(resets="uniform").reset_law == "uniform"
    assert FLOW.reset_law == "attractor"


# ------------------------------------------------------------------------------------------ windows


@pytest.mark.parametrize("resets", ["hard-pool", "uniform"])
def test_windows_have_the_right_shape_and_follow_the_dynamics(resets):
    cfg = config(resets=resets)
    w = D.WindowSampler(cfg)(0)
    assert w.shape == (32, D.WINDOW + 1, 2) and w.dtype == torch.float32
    system = make_system("square-4")
    low, high = system.box_tensors()
    assert bool(((w[:, 0] >= low.float()) & (w[:, 0] <= high.float())).all())  # resets lie in the box
    # each window is a reset followed by stored steps of the system
    step = system.step(w[:, :-1].double())
    assert torch.allclose(step.float(), w[:, 1:], atol=1e-5)


def test_windows_are_seeded_per_step():
    a, b = D.WindowSampler(config()), D.WindowSampler(config())
    assert torch.equal(a(5), b(5))  # same seed and step: same windows
    assert torch.equal(a(5), a(5))  # a batch does not depend on the steps drawn before it
    assert not torch.equal(a(5), a(6))  # a fresh batch every step
    assert not torch.equal(a(5), D.WindowSampler(config(seed=2))(5))  # another seed, other windows
    with pytest.raises(ValueError, match="step"):
        a(-1)


def test_flow_windows_are_standardised_cuts_of_the_cached_trajectories():
    w = D.WindowSampler(FLOW)(0)
    assert w.shape == (16, D.FLOW_WINDOW + 1, 3)
    standard = D.standardizer(FLOW)
    cache = D.flow_cache(FLOW)
    assert cache.shape == (4, 61, 3)
    z = standard.apply(cache.reshape(-1, 3))
    assert torch.allclose(z.mean(0), torch.zeros(3, dtype=z.dtype), atol=1e-9)
    assert torch.allclose(z.std(0), torch.ones(3, dtype=z.dtype), atol=1e-9)
    native = standard.invert(w.double())
    step = make_system("lorenz-63").step(native[:, :-1])
    assert torch.allclose(step, native[:, 1:], atol=1e-3)
    assert torch.equal(w, D.WindowSampler(FLOW)(0))


def test_validation_windows_differ_from_training_windows():
    cfg = config()
    val = D.validation_windows(cfg, 32)
    assert val.shape == (32, D.WINDOW + 1, 2)
    assert torch.equal(val, D.validation_windows(cfg, 32))
    assert not torch.equal(val, D.WindowSampler(cfg)(0))


# ------------------------------------------------------------------------------------------ evaluation sets


def test_evaluation_sets_have_their_sizes_and_disjoint_streams():
    cfg, ev = config(), D.EvalConfig(horizon=20)
    test = D.trajectories(cfg, ev, "test")
    val = D.trajectories(cfg, ev, "val")
    assert test.starts.shape == (100, 2) and test.truth.shape == (100, 20, 2)  # 100 test starts per seed
    assert val.starts.shape == (16, 2) and val.truth.shape == (16, 20, 2)
    assert test.states.shape == (100, 21, 2)
    # disjoint streams: no validation start is a test start
    assert torch.cdist(val.starts, test.starts).min() > 0
    fit, held = D.trajectories(cfg, ev, "align-fit"), D.trajectories(cfg, ev, "align-eval")
    assert not torch.equal(fit.starts, held.starts)
    # seeded: the same call gives the same set; another seed another
    assert torch.equal(D.trajectories(config(), ev, "test").starts, test.starts)
    assert not torch.equal(D.trajectories(config(seed=9), ev, "test").starts, test.starts)
    test.starts.add_(1.0)  # a caller's edit does not reach the next caller
    assert torch.equal(D.trajectories(cfg, ev, "test").starts, test.starts - 1.0)
    test = D.trajectories(cfg, ev, "test")
    # the futures are the system's
    system = make_system("square-4")
    assert torch.allclose(system.step(test.starts), test.truth[:, 0])
    assert torch.allclose(system.step(test.truth[:, 3]), test.truth[:, 4])


def test_alignment_set_is_128_trajectories_of_129_states_and_route_set_uses_the_training_law():
    cfg = config()
    align = D.trajectories(cfg, D.EvalConfig(), "align-eval")
    assert align.states.shape == (128, 129, 2)
    route = D.trajectories(cfg, D.EvalConfig(route_trajectories=8, route_steps=5), "route")
    assert route.states.shape == (8, 6, 2)
    with pytest.raises(ValueError, match="split"):
        D.trajectories(cfg, D.EvalConfig(), "train")
    with pytest.raises(TypeError, match="evaluation"):
        D.trajectories(cfg, None, "test")


def test_flow_evaluation_sets_are_standardised_like_the_windows():
    ev = D.EvalConfig(test_starts=4, val_starts=2, horizon=5)
    test = D.trajectories(FLOW, ev, "test")
    standard = D.standardizer(FLOW)
    native = standard.invert(test.states)
    assert torch.allclose(make_system("lorenz-63").step(native[:, 0]), native[:, 1], atol=1e-9)


def test_bounded_trajectories_replace_an_orbit_that_leaves_the_flow_later():
    # Sakarya test start 31 of seed 2 is warmed up and bounded, then escapes after 2,000 more steps.
    from neurips26.seeding import sub_seed
    from neurips26.skae.data import STREAMS, bounded_trajectories
    from neurips26.skae.systems import ESCAPE_BOUND, make_system

    system, seed = make_system("sakarya"), sub_seed(2, STREAMS["test"])
    x0 = system.initial_states(100, seed)
    raw = system.trajectories(x0[30:33], 3000)
    assert not torch.isfinite(raw[1]).all() and torch.isfinite(raw[[0, 2]]).all()
    kept = bounded_trajectories(system, x0[30:33], 3000, seed)
    assert torch.isfinite(kept).all() and kept.abs().max() <= ESCAPE_BOUND
    assert torch.equal(kept[[0, 2]], raw[[0, 2]]) and not torch.equal(kept[1, 0], x0[31])
    assert torch.equal(kept, bounded_trajectories(system, x0[30:33], 3000, seed))  # seeded
    box = make_system("square-4")  # a system with a reset box is rolled as it is
    starts = box.initial_states(4, 0)
    assert torch.equal(bounded_trajectories(box, starts, 20, 0), box.trajectories(starts, 20))


@pytest.mark.parametrize("name", ["shimizu-morioka", "sakarya", "lorenz-63", "lorenz-96"])
def test_rolling_flow_requests_in_one_batch_equals_rolling_each_alone(name):
    # The batched roll-out must give the same bits as attractor_trajectories one request at a time:
    # different sizes, seeds and horizons (rows leave the batch as their horizons end).
    system = dataclasses.replace(make_system(name), warmup=40)
    requests = [
        D.FlowRequest(system, 5, 11, 30),
        D.FlowRequest(system, 3, 12, 55),
        D.FlowRequest(system, 4, 13, 10),
        D.FlowRequest(system, 2, 14, 55),
    ]
    batched = D.roll_flow_requests(requests)
    for request, rolled in zip(requests, batched, strict=True):
        alone = D.attractor_trajectories(request)
        assert rolled.shape == (request.n, request.steps + 1, system.dim)
        assert torch.equal(rolled, alone)


def test_rolling_flow_requests_replaces_escapes_like_bounded_trajectories():
    # Sakarya seed 2's test start 31 escapes after 2,000 steps: the batched path replaces it the same way.
    from neurips26.seeding import sub_seed

    system = make_system("sakarya")
    request = D.FlowRequest(system, 40, sub_seed(2, D.STREAMS["test"]), 2600)
    other = D.FlowRequest(system, 3, 5, 100)
    batched, _ = D.roll_flow_requests([request, other])
    assert torch.isfinite(batched).all()
    assert not torch.equal(batched[31, 0], system.initial_states(40, request.seed)[31])  # replaced
    assert torch.equal(batched, D.attractor_trajectories(request))


def test_roll_flow_requests_rejects_mixed_systems_and_box_systems():
    flow = D.FlowRequest(make_system("lorenz-63"), 2, 0, 3)
    with pytest.raises(ValueError, match="requests"):
        D.roll_flow_requests([flow, D.FlowRequest(make_system("sakarya"), 2, 0, 3)])
    with pytest.raises(TypeError, match="requests"):
        D.roll_flow_requests([D.FlowRequest(make_system("square-4"), 2, 0, 3)])
    assert D.roll_flow_requests([]) == []


def test_prefetched_flow_sets_equal_the_sets_built_one_by_one():
    ev = D.EvalConfig(test_starts=3, val_starts=2, horizon=20)
    other = dataclasses.replace(FLOW, seed=FLOW.seed + 1)
    D._trajectories.cache_clear()
    D.standardizer.cache_clear()
    D.flow_cache.cache_clear()
    D.prefetch_flow_sets([FLOW, other], ev)
    got = {(c, s): D.trajectories(c, ev, s) for c in (FLOW, other) for s in ("val", "test")}
    assert not D._ROLLED_AHEAD  # nothing is kept twice
    D._trajectories.cache_clear()
    D.standardizer.cache_clear()
    D.flow_cache.cache_clear()
    for (c, s), t in got.items():
        alone = D.trajectories(c, ev, s)
        assert torch.equal(t.starts, alone.starts) and torch.equal(t.truth, alone.truth)
