"""The claims summary and its criteria on hand-built results: recall, shares, rates and every decision."""

import numpy as np
import pytest

from neurips26.spark_vla import verdicts as V
from neurips26.spark_vla.experiments import (
    VARIANT_NAMES,
    ClaimsData,
    ModelResult,
    rates,
    share_3d,
    summarise,
    target_recall,
)

E = 4


def _result(success, selected=None, trainable=10, total=40) -> ModelResult:
    success = np.asarray(success, dtype=bool)
    return ModelResult(
        success, np.zeros(E), 18 if selected is not None else 72, selected, 0.1, trainable, total
    )


def _data(**overrides) -> ClaimsData:
    target = np.zeros((E, 36), dtype=bool)
    target[:, 0] = target[:, 1] = True  # two target patches per episode
    selected = np.tile(np.arange(18), (E, 1))  # 2D patches 0..17: every target patch covered, no 3D token
    results = {n: _result([1, 1, 0, 0]) for n in VARIANT_NAMES}
    for name in ("spark", "random-k", "attention-k", "gumbel"):
        results[name] = _result([1, 1, 0, 0], selected)
    results.update(overrides)
    return ClaimsData(
        is_depth=np.array([True, True, False, False]),
        target_mask=target,
        results=results,
        probes={
            "2d": {"colour": 0.9, "height": 0.2},
            "3d": {"colour": 0.9, "height": 0.4},
            "sf": {"colour": 0.8, "height": 0.3},
        },  # fmt: skip
        identical=True,
        budget={9: 0.1, 18: 0.2, 36: 0.3, 72: 0.3},
        cost={"lm_ratio": 0.32, "total_ratio": 0.7, "token_ratio": 0.36},
    )


def test_recall_share_and_rates_by_hand():
    d = _data()
    assert target_recall(d, "spark") == 1.0
    half = np.tile(np.r_[np.arange(1, 18), 36], (E, 1))  # patch 0 missing, one 3D token (patch 0 of 3D)
    d = _data(spark=_result([1, 0, 1, 0], half))
    assert target_recall(d, "spark") == 1.0  # the 3D token at candidate 36 covers patch 0
    assert share_3d(d, "spark", d.is_depth) == pytest.approx(1 / 18)
    no_first = np.tile(np.arange(1, 19), (E, 1))
    assert target_recall(_data(spark=_result([1, 0, 1, 0], no_first)), "spark") == 0.5
    assert rates(d, "spark") == {"all": 0.5, "depth": 0.5, "colour": 0.5}


def test_every_claim_is_decided_and_a_clear_gain_reproduces_c1():
    gain = {n: _result([1, 1, 0, 0]) for n in ("spark-dense", "spark-dense-s1", "spark-dense-s2")}
    loss = {n: _result([0, 0, 0, 0]) for n in ("2d", "2d-s1", "2d-s2")}
    summary = summarise(_data(**gain, **loss))
    assert set(summary.decisions) == set(V.CLAIM_IDS)
    assert summary.decisions["c1-distillation"].verdict == "reproduced"
    assert summary.decisions["c2-preservation"].verdict == "reproduced"
    assert summary.decisions["c6-compute"].verdict == "reproduced"
    # no 3D token on either kind of episode: only "share <= 0.9" holds
    c4 = summary.decisions["c4-pathways"]
    assert c4.verdict == "partly" and [c.passed for c in c4.per_seed[0]] == [False, False, True]
    same = summarise(_data())
    assert same.decisions["c1-distillation"].verdict == "not reproduced"


def test_criteria_thresholds_by_hand():
    from neurips26.criteria import decide

    # gains 0.15 and 0.01: the mean (0.08) misses 0.10, the smallest gain is still positive
    assert decide(V.distillation_criteria([0.5, 0.36], [0.35, 0.35])).verdict == "partly"
    assert decide(V.compute_criteria(0.41, 0.9)).verdict == "partly"
    assert decide(V.efficiency_criteria(30, 100, 0.30, 0.34)).verdict == "reproduced"
    assert decide(V.efficiency_criteria(50, 100, 0.20, 0.34)).verdict == "not reproduced"
    shares = V.pathway_share_criteria(0.95, 0.2)
    assert [c.passed for c in shares] == [True, True, False]
