"""experiments and verdicts: the table's summaries and the criteria's directions on made-up tables."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from neurips26.spatialflow_grpo import verdicts as V
from neurips26.spatialflow_grpo.dilution import dilution_toy
from neurips26.spatialflow_grpo.experiments import (
    EDITORS,
    ROWS,
    ArmScores,
    EvalConfig,
    EvaluationTable,
    SuiteScores,
    iterations_to,
)

N = 200


def suite(rate: float, clauses: int, psnr: float = 35.0, worst: float = 0.5, seed: int = 0) -> SuiteScores:
    rng = np.random.default_rng(seed)
    success = np.zeros(N, dtype=bool)
    success[: round(rate * N)] = True
    rng.shuffle(success)
    valid = np.zeros((N, 4), dtype=bool)
    valid[:, : clauses + 1] = True
    rewards = np.where(valid, 1.0, 0.0)
    rewards[:, 1] = worst
    return SuiteScores(
        success=success,
        colour_error=np.full((N, 3), 0.1),
        rewards=rewards,
        valid=valid,
        psnr=np.full(N, psnr),
        clauses=np.full(N, clauses),
    )


def table(rates: dict[str, float], single: dict[str, float] | None = None) -> EvaluationTable:
    """MultiEdit (3 clauses) success per row from ``rates``; Single (1 clause) from ``single`` (or 0.9)."""
    arms = {}
    for row, names in ROWS.items():
        for name in names:
            r = rates.get(row, rates["base"])
            s = (single or {}).get(row, 0.9)
            arms[name] = ArmScores(
                {"single": suite(s, 1), "mixed": suite(r + 0.1, 2), "multiedit": suite(r, 3, worst=0.2 + r)}
            )
    assert set(arms) == set(EDITORS)
    return EvaluationTable(arms, EvalConfig())


def passed(criteria) -> bool:
    return all(c.passed for c in criteria)


def test_summaries_of_a_suite():
    s = suite(0.25, 2, psnr=30.0, worst=0.4)
    assert s.success_rate() == 0.25 and s.mean_psnr() == 30.0
    assert s.worst_region_reward() == pytest.approx(0.4)
    assert s.mean_region_reward() == pytest.approx((0.4 + 1.0) / 2)


def test_the_criteria_point_the_right_way():
    good = table({"base": 0.10, "flow": 0.20, "spatial": 0.30, "spatial-shuffled": 0.19})
    assert passed(V.f1_criteria(good)) and passed(V.s1_criteria(good)) and passed(V.s3_criteria(good))
    assert passed(V.s6_criteria(good)) and passed(V.s4_criteria(good))
    bad = table({"base": 0.10, "flow": 0.13, "spatial": 0.12, "spatial-shuffled": 0.20})
    assert (
        not passed(V.f1_criteria(bad)) and not passed(V.s1_criteria(bad)) and not passed(V.s3_criteria(bad))
    )
    assert not passed(V.s6_criteria(bad))
    sfr = table({"base": 0.10, "flow-sfr": 0.15, "spatial-sfr": 0.2})
    assert passed(V.s7_criteria(sfr, 0.85)) and not passed(V.s7_criteria(sfr, 0.7))
    assert not passed(V.s7_criteria(table({"base": 0.1, "flow-sfr": 0.2, "spatial-sfr": 0.15}), 0.9))


def test_s2_wants_gains_that_grow_with_clauses_and_none_on_single():
    grows = table({"base": 0.1, "flow": 0.2, "spatial": 0.3}, single={"flow": 0.9, "spatial": 0.91})
    assert passed(V.s2_criteria(grows))
    single_gain = table({"base": 0.1, "flow": 0.2, "spatial": 0.3}, single={"flow": 0.8, "spatial": 0.9})
    assert not passed(V.s2_criteria(single_gain))


def test_s5_counts_iterations_to_the_level_and_censors_a_curve_that_never_gets_there():
    it = np.array([0, 5, 10, 15, 20])
    flow = np.array([0.10, 0.11, 0.12, 0.14, 0.16])
    spatial = np.array([0.10, 0.14, 0.18, 0.20, 0.22])
    assert iterations_to(it, flow, 0.13) == 15 and iterations_to(it, spatial, 0.13) == 5
    assert iterations_to(it, flow, 0.5) == float("inf")
    assert passed(V.s5_criteria(it, spatial, flow))
    assert not passed(V.s5_criteria(it, flow, spatial))
    flat = np.full(5, 0.1)
    assert not passed(V.s5_criteria(it, spatial, flat))  # no gain of Flow-GRPO: no level to reach


def test_t1_passes_on_the_simulation_and_fails_against_a_wrong_theory():
    results = {k: dilution_toy(k, groups=128, replicates=10, seed=k) for k in V.T1_REGIONS}
    assert passed(V.t1_criteria(results))
    wrong = {k: dataclasses.replace(r, correlation=r.theory + 0.05) for k, r in results.items()}
    assert not passed(V.t1_criteria(wrong))
