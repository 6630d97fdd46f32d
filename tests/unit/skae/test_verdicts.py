"""The criteria of claims k1–k7 on hand-made results: each gives the verdict its thresholds imply, with a
passing and a failing case, and the thresholds are the claims table's."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from neurips26.criteria import decide, decide_over_seeds
from neurips26.skae import verdicts as V
from neurips26.skae.experiments import (
    AlignmentConfig,
    AlignmentResult,
    ChaosConfig,
    ChaosResult,
    CollapseConfig,
    CollapseResult,
    ForecastConfig,
    ForecastResult,
    IdentityConfig,
    IdentityResult,
    RoutingConfig,
    RoutingResult,
    SparsityConfig,
    SparsityResult,
)
from neurips26.skae.experiments.alignment import MODES
from neurips26.skae.experiments.forecast import RULES


def test_thresholds_are_the_claims_table():
    assert (V.K1_SYSTEM_SHARE, V.K1_RATIO) == (0.8, 3.0)
    assert (V.K2_ENTROPY, V.K2_GAP, V.K2_FAMILIES) == (0.5, 0.5, 1.5)
    assert (V.K3_SPREAD, V.K3_RATIO, V.K4_RATIO, V.K4_WINS) == (3.0, 3.0, 1.0, 0.5)
    assert (V.K5_RATIO, V.K6_SHARE, V.K7_LISTA, V.K7_DENSE) == (10.0, 0.5, 0.7, 0.5)


# ------------------------------------------------------------------------------------------ k1


def forecast(dense: np.ndarray | float, sparse: float = 0.1) -> ForecastResult:
    config = dataclasses.replace(ForecastConfig.for_scale("default"), baselines=())
    shape = (5, 3, 3)
    mse = {r: {e: np.full(shape, sparse) for e in config.entries} for r in RULES}
    for r in RULES:
        mse[r]["dense-mlp"] = np.broadcast_to(np.asarray(dense, dtype=float), shape).copy()
    period = {r: {e: np.full(shape, 10) for e in config.entries} for r in RULES}
    return ForecastResult(config, mse, period, {e: np.zeros(shape, int) for e in config.entries}, 100)


def test_k1_reproduced_when_every_sparse_row_wins_by_3x():
    criteria = V.forecast_criteria(forecast(1.0))
    assert len(criteria) == 2 * 4 * 3 and decide(criteria).verdict == "reproduced"


def test_k1_ratio_below_3x_fails_while_the_system_counts_hold():
    criteria = V.forecast_criteria(forecast(0.25))
    failed = [c.name for c in criteria if not c.passed]
    assert failed and all("Dense MLP / " in n for n in failed) and decide(criteria).verdict == "partly"


def test_k1_three_of_five_systems_fail_the_count():
    dense = np.ones((5, 3, 3))
    dense[:2] = 0.05  # Dense MLP best on two systems
    criteria = V.forecast_criteria(forecast(dense))
    counts = [c for c in criteria if "systems" in c.name]
    assert all(not c.passed and c.value == 3 and c.threshold == 4 for c in counts)


def test_k1_diverged_sparse_row_loses():
    result = forecast(1.0, sparse=np.nan)
    assert decide(V.forecast_criteria(result)).verdict == "not reproduced"


# ------------------------------------------------------------------------------------------ k2, k7


def alignment(lista: float, dense: float, dense_families: float) -> AlignmentResult:
    config = AlignmentConfig.for_scale("default")
    shape = (5, 3)
    entropy = {m: {"lista": np.full(shape, lista), "dense-mlp": np.full(shape, dense)} for m in MODES}
    families = {m: {"lista": np.full(shape, 4.0), "dense-mlp": np.full(shape, dense_families)} for m in MODES}
    z = np.zeros(shape)
    return AlignmentResult(config, entropy, families, z + 4, z + 100, {"lista": z, "dense-mlp": z})


def test_k2_verdicts():
    assert decide(V.alignment_criteria(alignment(0.14, 1.37, 1.0))).verdict == "reproduced"
    partly = V.alignment_criteria(alignment(0.6, 1.37, 1.0))  # LISTA above 0.5 nats
    assert decide(partly).verdict == "partly" and sum(not c.passed for c in partly) == 2
    assert decide(V.alignment_criteria(alignment(1.2, 1.3, 3.0))).verdict == "not reproduced"


def test_k7_verdicts():
    config = CollapseConfig.for_scale("default")
    shape = (5, 3)

    def result(lista, dense):
        acc = {"lista": np.full(shape, lista), "dense-mlp": np.full(shape, dense)}
        return CollapseResult(config, acc, {r: np.full(shape, 10) for r in acc}, np.full(shape, 0.3))

    assert decide(V.collapse_criteria(result(0.9, 0.3))).verdict == "reproduced"
    assert decide(V.collapse_criteria(result(0.69, 0.3))).verdict == "partly"
    assert decide(V.collapse_criteria(result(0.5, 0.6))).verdict == "not reproduced"


# ------------------------------------------------------------------------------------------ k3


def test_k3_verdicts():
    config = SparsityConfig.for_scale("default")

    def result(**means):
        base = {"sparse-mlp": 0.1, "lista": 0.15, "topk": 0.2, "lista-nosp": 0.2, "dense-mlp": 2.9}
        base.update(means)
        return SparsityResult(config, {r: np.full(5, v) for r, v in base.items()})

    assert decide(V.sparsity_criteria(result())).verdict == "reproduced"
    spread = V.sparsity_criteria(result(lista=0.35))  # 3.5x apart, still 8x below Dense
    assert [c.passed for c in spread] == [False, True]
    assert decide(V.sparsity_criteria(result(lista=0.5, **{"dense-mlp": 1.0}))).verdict == "not reproduced"


# ------------------------------------------------------------------------------------------ k4


def routing(local: float, random: float) -> RoutingResult:
    config = RoutingConfig.for_scale("default")
    shape = (5, 3, 3)
    mse = {r: np.full(shape, local) for r in config.routers}
    mse["random"] = np.full(shape, random)
    z = np.zeros(shape[:2])
    return RoutingResult(config, np.ones(shape), mse, {r: z for r in mse}, {r: z for r in mse})


def test_k4_verdicts():
    assert decide(V.routing_criteria(routing(0.33, 1.5))).verdict == "reproduced"
    assert decide(V.routing_criteria(routing(0.33, 0.2))).verdict == "partly"  # random better
    assert decide(V.routing_criteria(routing(1.2, 1.2))).verdict == "not reproduced"


def test_k4_diverged_local_rollouts_lose():
    result = routing(np.inf, 1.5)
    criteria = V.routing_criteria(result)
    assert all(not c.passed for c in criteria if "median local" in c.name or "wins" in c.name)


# ------------------------------------------------------------------------------------------ k5, k6


def test_k5_decided_over_seeds():
    config = IdentityConfig.for_scale("default")

    def result(dropped_top1):
        d = np.tile(np.array([[1.0, 2.0, 3.0, 4.0, 5.0]]), (3, 1))
        d[:, 0] = dropped_top1
        s = np.full(3, 0.0158)
        return IdentityResult(config, s, d, s * 100, s * 10, np.full(3, 8.0))

    assert decide_over_seeds(V.identity_criteria(result(0.508))).verdict == "reproduced"
    mixed = decide_over_seeds(V.identity_criteria(result(np.array([0.508, 0.1, 0.508]))))
    assert mixed.verdict == "partly"
    assert decide_over_seeds(V.identity_criteria(result(0.05))).verdict == "not reproduced"


def test_k6_verdicts():
    config = ChaosConfig.for_scale("default")
    n = len(config.cells)
    assert n == 11

    def result(sparse_wins: int):
        sparse = np.full((n, 3), 2.0)
        sparse[:sparse_wins] = 0.5
        return ChaosResult(config, {"lista": sparse, "dense-mlp": np.ones((n, 3))})

    assert decide(V.chaos_criteria(result(6))).verdict == "reproduced"
    assert decide(V.chaos_criteria(result(5))).verdict == "not reproduced"


def test_criteria_reject_other_results():
    with pytest.raises(TypeError, match="result"):
        V.forecast_criteria(object())
    with pytest.raises(TypeError, match="result"):
        V.chaos_criteria(routing(0.3, 1.0))
