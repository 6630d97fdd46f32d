"""The ``paper`` scale's plan: the paper's grid and ``r`` with ten times the chains and router updates, the
tiny model as shipped, a trial run's caps, the default plans (and the committed checkpoints' hashes)
untouched, and routers that score on their own device."""

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from neurips26.expansion_utility import prepare as P
from neurips26.expansion_utility.lofo import NETS
from neurips26.expansion_utility.router import RouterNet, feature_names
from neurips26.expansion_utility.router_fit import fit_router, router_scores
from neurips26.expansion_utility.simulator import BENCHMARKS, FAMILIES
from neurips26.expansion_utility.sweep import PAPER_CHAINS, SweepConfig
from neurips26.expansion_utility.tiny_lm import EVAL_PROBLEMS, TinyLMSpec, evaluate_tiny_lm
from neurips26.nn import Decoder
from neurips26.scales import TRIAL_ENV


@pytest.fixture
def no_trial(monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)


def test_the_paper_plan_keeps_the_grid_and_samples_ten_times_the_chains(no_trial):
    paper, default = SweepConfig.for_scale("paper"), SweepConfig.for_scale("default")
    assert paper == replace(default, chains=PAPER_CHAINS) and PAPER_CHAINS == 10 * default.chains
    assert len(paper.families) == len(FAMILIES) == 9 and len(paper.benchmarks) == len(BENCHMARKS) == 7
    assert paper.r == 8 and P.sweep_config("paper") == paper
    assert P.RouterTraining.for_scale("paper").steps == 10 * P.RouterTraining.for_scale("default").steps
    assert P.lm_spec("paper") == P.lm_spec("default") == TinyLMSpec()  # the stand-in keeps its errors
    assert P.lm_evaluation("paper") == EVAL_PROBLEMS
    assert P.expected_hash(P.LM_NAME, "paper") == P.expected_hash(P.LM_NAME, "default")


def test_the_paper_routers_differ_from_the_default_ones(no_trial, monkeypatch):
    # the routers' hash runs the sweep; a two-cell grid stands in for the 63 cells of either scale
    small = {"families": (1, 3), "benchmarks": (0,)}
    original = SweepConfig.for_scale
    monkeypatch.setattr(SweepConfig, "for_scale", classmethod(lambda cls, s: replace(original(s), **small)))
    assert P.expected_hash(P.NAME, "paper") != P.expected_hash(P.NAME, "default")


def test_the_default_and_smoke_plans_are_unchanged(no_trial):
    assert SweepConfig.for_scale("default") == SweepConfig() and SweepConfig().chains == 100
    assert P.sweep_config("smoke") == SweepConfig(families=(1, 3), benchmarks=(0, 2), chains=20, r=4)
    assert P.RouterTraining.for_scale("default").steps == 300
    assert P.RouterTraining.for_scale("smoke").steps == 5
    assert P.lm_spec("smoke") == TinyLMSpec(steps=20, batch=16) and P.lm_evaluation("default") == 100
    sidecar = json.loads((P.PACKAGE_DIR / f"{P.LM_NAME}.json").read_text())
    assert P.expected_hash(P.LM_NAME, "default") == sidecar["config_hash"]


@pytest.mark.committed
def test_the_committed_routers_keep_their_hash(no_trial):
    sidecar = json.loads((P.PACKAGE_DIR / f"{P.NAME}.json").read_text())
    assert P.expected_hash(P.NAME, "default") == sidecar["config_hash"]


@pytest.mark.parametrize("scale", ["smoke", "default", "paper"])
def test_a_trial_run_caps_updates_data_and_the_check(scale, monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)
    spec, sweep = P.lm_spec(scale), P.sweep_config(scale)
    lm_hash = P.expected_hash(P.LM_NAME, scale)
    monkeypatch.setenv(TRIAL_ENV, "1")
    assert P.RouterTraining.for_scale(scale).steps == 1
    assert P.sweep_config(scale) == replace(sweep, **P.TRIAL_SWEEP) and P.folds_of(scale) == (1, 3)
    assert P.lm_spec(scale) == replace(spec, steps=1, batch=2)
    assert P.lm_evaluation(scale) == P.TRIAL_EVAL_PROBLEMS < EVAL_PROBLEMS
    assert P.expected_hash(P.LM_NAME, scale) != lm_hash


def test_the_check_of_the_tiny_model_takes_a_number_of_problems():
    model = Decoder(TinyLMSpec(width=16, depth=1, heads=2).config(), seed=0).eval()
    few = evaluate_tiny_lm(model, problems=2)
    assert set(few) == {"loss", "greedy_accuracy"} and np.isfinite(few["loss"])
    with pytest.raises(ValueError, match="problems"):
        evaluate_tiny_lm(model, problems=0)


def test_router_scores_run_on_the_nets_device(no_trial, monkeypatch):
    monkeypatch.setenv("NEURIPS26_DEVICE", "cpu")
    data, _ = P.sweep_data("smoke")
    net, _, losses = fit_router(data, NETS["listwise"], seed=0, steps=2, batch=32)
    assert len(losses) == 2 and next(net.parameters()).device.type == "cpu"
    z = router_scores(net, data)
    assert z.shape == data.bins.shape and z.dtype == np.float64
    expected = net(torch.from_numpy(data.features), torch.from_numpy(data.bins)).detach().numpy()
    np.testing.assert_array_equal(z, expected.astype(float))
    assert isinstance(net, RouterNet) and data.features.shape[-1] == len(feature_names())
