"""Tests of the criteria of claims P1–P8 on hand-made tables (what passes, what fails, at the margins)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26.criteria import decide
from neurips26.picsb import verdicts as V
from neurips26.picsb.cost_model import Cost
from neurips26.picsb.data import Split
from neurips26.picsb.experiments import ABLATION_KEYS, MethodRow, ReconstructionTable, k_star
from neurips26.timing import Timing


def _row(key, rel, res=1.0, energy=1.0, flops=1.0, mismatch=0.0):
    one = np.full(4, 1.0)
    return MethodRow(
        key=key,
        rel_l2=rel * one,
        residual=res * one,
        mismatch=mismatch * one,
        energy=energy * one,
        cost=Cost(1, flops),
        seconds=0.0,
        examples=torch.zeros(1, 32, 64),
    )


def _table(**changes):
    rows = {
        "lf": _row("lf", 0.16, res=0.2),
        "lf-paste": _row("lf-paste", 0.15, res=0.5),
        "tto-1000": _row("tto-1000", 0.09, flops=4.5e8),
        "dps": _row("dps", 0.3, flops=1e10),
        "oracle": _row("oracle", 0.03),
        "picsb": _row("picsb", 0.09, res=0.05, energy=0.5, flops=2e8),
        "no-refresh": _row("no-refresh", 0.12, energy=0.9),
        "no-pde": _row("no-pde", 0.1),
        "soft-obs": _row("soft-obs", 0.09, res=0.1),
        "lf-only": _row("lf-only", 0.12),
    }
    rows.update(changes)
    empty = torch.zeros(0, 32, 64)
    data = Split(empty, empty, empty, empty.bool())
    return ReconstructionTable(rows=rows, curve={}, data=data, models={}, scale="default")


def test_each_claim_passes_on_a_good_table_and_fails_on_a_bad_one():
    good = _table()
    assert decide(V.p1_criteria(good)).verdict == "reproduced"  # 0.09 vs 0.15: 40 % lower
    assert decide(V.p2_criteria(good)).verdict == "reproduced"  # 0.2 / 0.05 = 4
    assert decide(V.p3_criteria(good, "tto-1000")).verdict == "reproduced"
    assert decide(V.p5_criteria(good)).verdict == "reproduced"
    p6 = V.p6_criteria(good)
    assert [c.passed for c in p6] == [True, True, True, True]  # soft-obs passes on ‖R‖ alone (2×)
    assert decide(V.p7_criteria(good)).verdict == "reproduced"  # (0.15 − 0.09)/(0.15 − 0.03) = 0.5
    assert decide(V.p8_criteria(good)).verdict == "reproduced"
    bad = _table(picsb=_row("picsb", 0.14, res=0.3, energy=1.0, mismatch=1e-7))
    for criteria in (V.p1_criteria(bad), V.p2_criteria(bad), V.p7_criteria(bad), V.p8_criteria(bad)):
        assert decide(criteria).verdict == "not reproduced"
    assert V.p3_criteria(_table(picsb=_row("picsb", 0.118)), "tto-1000")[0].passed is False  # 1.31×


def test_p4_reads_flops_and_paired_wall_clock():
    timing = Timing(
        names=("PICSB", "DPS", "TTO K=1000"),
        seconds={"PICSB": (1.0, 1.0, 1.0), "DPS": (9.0, 10.0, 11.0), "TTO K=1000": (0.5, 0.5, 0.5)},
    )
    criteria = V.p4_criteria(_table(), timing, "tto-1000", "TTO K=1000")
    assert [c.passed for c in criteria] == [True, True, True, False]  # TTO is faster on the clock
    assert decide(criteria).verdict == "partly"


def test_k_star_is_the_first_budget_that_matches():
    curve = {k: _row(f"tto-{k}", e) for k, e in ((10, 0.15), (100, 0.11), (1000, 0.09))}
    assert k_star(curve, 0.11) == 100 and k_star(curve, 0.05) is None and k_star(curve, 0.2) == 10


def test_p6_has_one_criterion_per_ablation():
    names = [c.name for c in V.p6_criteria(_table())]
    assert len(names) == len(ABLATION_KEYS) and all("max(" in n for n in names)
    with pytest.raises(KeyError):
        V.p6_criteria(ReconstructionTable({}, {}, _table().data, {}, "default"))  # no rows: no verdict


def test_a_tto_budget_off_the_table_is_read_from_the_curve():
    table = _table()
    row = _row("tto-700", 0.08)
    table.curve[700] = row
    assert table["tto-700"] is row and "tto-700" not in table.rows
    with pytest.raises(KeyError):
        table["tto-5"]
