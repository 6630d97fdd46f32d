"""The axes on a linear system: exact reversal, a perfectly linear dose response, one-step feedback at
κ = 1; and all six axes run on a (random) model with every value in its range."""

import numpy as np
import pytest
import torch

from neurips26.sparse_control.driver_omp import Control
from neurips26.sparse_control.evaluation import (
    DOSES,
    dose_response,
    reach,
    reversal,
    six_axes,
    sparsely_controllable,
    track,
)
from neurips26.sparse_control.tasks import make_prompts, neutral_windows


def test_a_linear_system_reverses_exactly_and_responds_linearly():
    rng = np.random.default_rng(0)
    y0, effect = rng.normal(size=20), np.abs(rng.normal(size=20)) + 0.1  # the target rises with the dose
    assert reversal(y0, y0 + effect, y0 - effect) == 1.0
    assert reversal(y0, y0 + effect, y0 + 0.1 * effect) == 0.0
    ys = y0[None, :] + DOSES[:, None] * effect[None, :]
    dose = dose_response(DOSES, ys)
    assert dose["spearman"] == pytest.approx(1.0) and dose["r2"] == pytest.approx(1.0)
    assert dose["violations"] == 0
    assert reach(np.array([1.0, -1.0, 0.5, 0.0])) == 0.5


def test_feedback_on_a_linear_map_converges_in_one_step():
    rng = np.random.default_rng(1)
    G = rng.normal(size=(12, 3))
    y0 = rng.normal(size=12)
    goal = rng.choice([-3.0, -1.0, 0.0, 1.0, 3.0], size=12)
    out = track(lambda A: y0 + (G * A).sum(1), lambda A: G, goal, 3, energy=1e6)
    assert out["closed"] == 1.0 and out["open"] == 1.0 and out["iterations"] <= 1.0
    capped = track(lambda A: y0 + (G * A).sum(1), lambda A: G, goal + 100.0, 3, energy=0.5)
    assert capped["closed"] == 0.0


def test_six_axes_run_on_a_model(model64, nodes, ioi):
    control = Control(np.array([3, 200, 700]), np.array([0.5, -0.3, 0.2]), 0.0, "test")
    held = make_prompts("ioi", 8, split="held_out", seed=9)
    axes = six_axes(
        model64,
        nodes,
        control,
        ioi,
        held,
        neutral_windows(8, 12, seed=0),
        [make_prompts("sentiment", 8, split="selection", seed=2)],
        feedback_prompts=3,
    )
    d = axes.as_dict()
    for key in ("reach", "reversal", "feedback", "open_loop", "held_reach", "held_reversal"):
        assert 0.0 <= d[key] <= 1.0
    assert -1.0 <= axes.spearman <= 1.0 and axes.kl >= 0.0
    verdict = sparsely_controllable(axes)
    assert verdict["all"] == all(v for k, v in verdict.items() if k != "all")
    zero = Control(control.nodes, np.zeros(3), 0.0, "zero")
    none = six_axes(model64, nodes, zero, ioi, held, neutral_windows(8, 12, seed=0), feedback_prompts=2)
    assert none.kl == 0.0 and none.reversal == 0.0


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="k"):
        track(lambda A: A[:, 0], lambda A: np.ones_like(A), np.zeros(3), 0)
    _ = torch  # the module's tensors come from the fixtures


def test_linearisation_is_exact_for_small_doses_and_matched_kl_bisects(model64, nodes, ioi):
    from neurips26.sparse_control.evaluation import linearisation_r2, matched_kl, readout_at
    from neurips26.sparse_control.jacobian import linearise

    lin = linearise(model64, nodes, ioi, neutral_windows(4, 12, seed=0))
    control = Control(np.array([5, 300]), np.array([0.01, -0.02]), 0.0, "small")
    assert linearisation_r2(model64, nodes, control, ioi, lin.G_T) > 0.999
    strong = Control(np.array([5, 300]), np.array([0.2, -0.2]), 0.0, "strong")
    if (
        readout_at(model64, nodes, strong, ioi, 1.0).mean()
        < readout_at(model64, nodes, strong, ioi, 0.0).mean()
    ):
        strong = strong.scaled(-1.0)  # the direction in which the mean readout rises
    top = float(np.linalg.norm(strong.amplitudes))  # energy that allows alpha up to 1
    goal = float(readout_at(model64, nodes, strong, ioi, 0.5).mean())
    out = matched_kl(model64, nodes, strong, ioi, neutral_windows(4, 12, seed=0), goal=goal, energy=top)
    assert out["reached"] == 1.0 and out["kl"] >= 0.0
    assert readout_at(model64, nodes, strong, ioi, out["alpha"]).mean() == pytest.approx(goal, abs=1e-6)
    never = matched_kl(model64, nodes, strong, ioi, neutral_windows(4, 12, seed=0), goal=1e6, energy=top)
    assert never["reached"] == 0.0 and never["alpha"] == pytest.approx(1.0)
