"""The claim runners of chapter 04 at the smoke scale: configs name the bad field; the cadence rules agree
with the rollout module's; each runner returns well-formed results with the invariants of its quantities
(shapes, finiteness, H(B|F) ≥ 0, ratios > 0, accuracies in [0, 1])."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from neurips26.skae.data import EvalConfig
from neurips26.skae.experiments import (
    AlignmentConfig,
    ChaosConfig,
    CollapseConfig,
    ForecastConfig,
    IdentityConfig,
    RoutingConfig,
    SparsityConfig,
    run_alignment,
    run_chaos,
    run_collapse,
    run_forecast,
    run_identity,
    run_routing,
    run_sparsity,
)
from neurips26.skae.experiments.common import (
    KAEForecaster,
    basin_reference,
    cadence_rules,
    evaluation_set,
    load,
    model_name,
)
from neurips26.skae.rollout import best_periodic, frozen_cadence

SMALL = EvalConfig(test_starts=8, val_starts=4, horizon=60, align_trajectories=16, align_steps=32)

# ------------------------------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    ("cls", "change", "field"),
    [
        (ForecastConfig, {"systems": ("lorenz-63",)}, "systems"),
        (ForecastConfig, {"horizons": (100, 50)}, "horizons"),
        (ForecastConfig, {"horizons": (10, 2000)}, "horizons"),
        (ForecastConfig, {"baselines": ("nope",)}, "baselines"),
        (ForecastConfig, {"trained": ("dmd",)}, "trained"),
        (ForecastConfig, {"checkpoints": "huge"}, "checkpoints"),
        (ForecastConfig, {"seeds": (7,)}, "model"),
        (ForecastConfig, {"baseline_batches": 0}, "baseline_batches"),
        (SparsityConfig, {"rows": ("lista",)}, "rows"),
        (SparsityConfig, {"horizon": 0}, "horizon"),
        (AlignmentConfig, {"tau_j": 0.0}, "tau_j"),
        (AlignmentConfig, {"rows": ("lista", "lista")}, "rows"),
        (AlignmentConfig, {"roll_steps": -1}, "roll_steps"),
        (CollapseConfig, {"horizon": 5000}, "horizon"),
        (RoutingConfig, {"routers": ("random",)}, "routers"),
        (RoutingConfig, {"method": "adam"}, "method"),
        (RoutingConfig, {"steps": -1}, "steps"),
        (IdentityConfig, {"ks": (0,)}, "ks"),
        (IdentityConfig, {"draws": 0}, "draws"),
        (IdentityConfig, {"period": 0}, "period"),
        (ChaosConfig, {"rows": ("lista",)}, "rows"),
        (ChaosConfig, {"flows": ("square-4",)}, "flows"),
        (ChaosConfig, {"l96_times": (-1.0,)}, "l96_times"),
        (ChaosConfig, {"evaluation": EvalConfig(horizon=100)}, "evaluation.horizon"),
    ],
)
def test_configs_name_the_bad_field(cls, change, field):
    base = cls.for_scale("default")
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(base, **change)


def test_configs_reject_wrong_types_and_scales():
    with pytest.raises(TypeError, match="evaluation"):
        ForecastConfig(evaluation={"horizon": 10})
    with pytest.raises(TypeError, match="lorenz96"):
        ChaosConfig(lorenz96=1)
    with pytest.raises(ValueError, match="scale"):
        ForecastConfig.for_scale("tiny")
    with pytest.raises(TypeError, match="config"):
        run_forecast(SparsityConfig.for_scale("smoke"))
    with pytest.raises(ValueError, match="model"):
        model_name("lista-bd", "lorenz-63", 0)


# ------------------------------------------------------------------------------------------ shared pieces


class _PredictOnly:
    """A forecaster without ``predict_periods``: ``cadence_rules`` rolls each period and start set alone."""

    def __init__(self, inner: KAEForecaster) -> None:
        self.inner, self.state_dim = inner, inner.state_dim

    def predict(self, x0, horizon, *, period=None):
        return self.inner.predict(x0, horizon, period=period)


def test_cadence_rules_equal_the_rollout_module_rules():
    model = load("lista", "square-4", 0, "smoke")
    val = evaluation_set("square-4", 0, "smoke", SMALL, "val")
    test = evaluation_set("square-4", 0, "smoke", SMALL, "test")
    horizons, periods = (10, 60), (10, 25)
    rules = cadence_rules(KAEForecaster(model), val, test, horizons, periods)
    best = best_periodic(model, test.starts, test.truth, horizons=horizons, periods=periods)
    frozen = frozen_cadence(
        model, val.starts, val.truth, test.starts, test.truth, horizons=horizons, periods=periods
    )
    for h in horizons:
        assert rules.best[h] == pytest.approx(best.mse[h], rel=1e-6)  # float32 rollouts, same starts
        assert rules.frozen[h] == pytest.approx(frozen.mse[h], rel=1e-6)
        assert rules.frozen_period[h] == frozen.period[h] and rules.best[h] <= rules.frozen[h]
    plain = KAEForecaster(model)  # the reference path: one rollout per period and start set
    reference = cadence_rules(_PredictOnly(plain), val, test, horizons, periods)
    for h in horizons:
        assert rules.best[h] == pytest.approx(reference.best[h], rel=1e-6)
        assert rules.frozen[h] == pytest.approx(reference.frozen[h], rel=1e-6)
    cheap = cadence_rules(KAEForecaster(model), val, test, horizons, periods, best=False)
    assert cheap.frozen_period == rules.frozen_period  # only the picked periods rolled: same values
    assert all(cheap.frozen[h] == pytest.approx(rules.frozen[h], rel=1e-6) for h in horizons)


def test_basin_reference_labels_every_state_with_a_known_basin():
    ref = basin_reference("square-4", 0, "smoke", SMALL, 500)
    assert tuple(ref.centers.shape) == (4, 2) and torch.isfinite(ref.centers).all()
    states = evaluation_set("square-4", 0, "smoke", SMALL, "align-eval").states
    labels = ref.labels(states)
    assert labels.shape == states.shape[:2] and set(np.unique(labels)) <= {0, 1, 2, 3}
    with pytest.raises(ValueError, match="flow"):
        basin_reference("lorenz-63", 0, "smoke", SMALL, 10)


# ------------------------------------------------------------------------------------------ the runners


def test_forecast_runner_is_well_formed():
    config = dataclasses.replace(
        ForecastConfig.for_scale("smoke"), baselines=("dmd", "rbf-edmd"), horizons=(10, 50)
    )
    result = run_forecast(config, use_cache=False)
    for rule in ("best", "frozen"):
        for entry in config.entries:
            a = result.mse[rule][entry]
            assert a.shape == (1, 1, 2) and np.all(np.isfinite(a)) and np.all(a > 0)
            assert set(np.unique(result.period[rule][entry])) <= set(config.periods)
        assert result.aggregate("lista", rule).shape == (2,)
    for entry in config.entries:  # the minimum over the grid is never above the frozen pick
        assert np.all(result.mse["best"][entry] <= result.mse["frozen"][entry])
        assert np.all((result.diverged[entry] >= 0) & (result.diverged[entry] <= result.starts))
    # a state-space DMD has no lift to refresh: every period forecasts alike
    assert result.mse["best"]["dmd"][0, 0, 1] == result.mse["frozen"]["dmd"][0, 0, 1]


def test_sparsity_runner_is_well_formed():
    result = run_sparsity(SparsityConfig.for_scale("smoke"), use_cache=False)
    assert set(result.mse) == set(result.config.rows)
    assert all(v.shape == (1,) and np.all(np.isfinite(v)) and np.all(v > 0) for v in result.mse.values())


def test_alignment_runner_is_well_formed():
    result = run_alignment(AlignmentConfig.for_scale("smoke"), use_cache=False)
    labels = int(result.labels[0, 0])
    assert 1 <= labels <= 4 and result.slice_states[0, 0] >= 16 * 33 // 4
    for mode in ("transductive", "held-out"):
        for row in ("lista", "dense-mlp"):
            h = result.entropy[mode][row][0, 0]
            assert 0.0 <= h <= math.log(labels) + 1e-12
            assert result.families[mode][row][0, 0] >= 1
    assert 0 < result.active["lista"][0, 0] < result.active["dense-mlp"][0, 0] <= 1


def test_collapse_runner_is_well_formed():
    result = run_collapse(CollapseConfig.for_scale("smoke"), use_cache=False)
    for row in result.config.rows:
        assert 0.0 <= result.accuracy[row][0, 0] <= 1.0
        assert result.period[row][0, 0] in result.config.periods
    assert 0.25 <= result.chance[0, 0] <= 1.0  # four basins: the largest holds at least a quarter


def test_routing_runner_is_well_formed():
    result = run_routing(RoutingConfig.for_scale("smoke"), use_cache=False)
    assert result.global_mse.shape == (1, 1, 2) and np.all(result.global_mse > 0)
    for router in result.config.routers:
        assert np.all(np.isfinite(result.local_mse[router])) and np.all(result.local_mse[router] > 0)
        assert result.routes[router][0, 0] >= 1 and 0.0 <= result.coverage[router][0, 0] <= 1.0
        assert np.all(result.ratio(router) > 0) and np.all(result.median_ratio(router) > 0)
        assert np.all((result.win_share(router) >= 0) & (result.win_share(router) <= 1))


def test_identity_runner_is_well_formed():
    result = run_identity(IdentityConfig.for_scale("smoke"), use_cache=False)
    assert result.dropped.shape == (1, 2)
    values = [result.standard, result.dropped.ravel(), result.random_support, result.permuted]
    assert all(np.all(np.isfinite(v)) and np.all(v > 0) for v in values)
    assert np.all(result.ratio(1) > 0) and 1 <= result.active[0] <= 16


def test_chaos_runner_is_well_formed():
    config = dataclasses.replace(ChaosConfig.for_scale("smoke"), lorenz96=True)  # the notebook's skips it
    result = run_chaos(config, use_cache=False)
    n = len(result.config.cells)
    assert n == 5 and result.config.l96_steps == (10, 20)
    for row in result.config.rows:
        v = result.values[row]
        assert v.shape == (n, 1) and np.all(np.isfinite(v)) and np.all(v > 0)
    assert result.sparse_wins().shape == (n,)
