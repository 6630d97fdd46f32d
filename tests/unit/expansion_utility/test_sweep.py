"""The sweep: cells summarised, health decided, the winner's curse visible."""

import numpy as np
import pytest

from neurips26.expansion_utility.simulator import BENCHMARKS, FAMILIES
from neurips26.expansion_utility.sweep import SweepConfig, oracle_sweep, run_cell, summarise, winners_curse


def test_smoke_sweep_and_cell_fields():
    config = SweepConfig.for_scale("smoke")
    cells = oracle_sweep(config)
    assert len(cells) == len(config.families) * len(config.benchmarks)
    for c in cells:
        assert 0 <= c.accuracy <= 1 and 0 <= c.parse_fail <= 1 and c.chains == config.chains
        assert not c.healthy  # 20 chains are below the 50 a healthy cell needs
    again = oracle_sweep(config)
    assert [c.gap for c in again] == [c.gap for c in cells]  # seeded


def test_exact_gap_is_the_ceiling_and_reuse_inflates():
    config = SweepConfig(chains=60, r=4)
    chains, u = run_cell(FAMILIES[3], BENCHMARKS[1], config)
    cell = summarise(chains, u)
    assert cell.gap_exact >= 0 and cell.gap_reuse > cell.gap
    assert np.isfinite(cell.gini) and 0 <= cell.gini_exact <= 1


def test_a_modified_cell_reruns_on_the_draws_of_its_grid_cell():
    import dataclasses

    config = SweepConfig(chains=30, r=4)
    fam, bench = FAMILIES[2], BENCHMARKS[4]
    chains, u = run_cell(fam, bench, config)
    same, u_same = run_cell(fam, bench, config, like=(fam, bench))
    np.testing.assert_array_equal(u.sel, u_same.sel)
    wider = dataclasses.replace(bench, answers=bench.answers * 10)
    with pytest.raises(ValueError):
        run_cell(fam, wider, config)  # not a grid cell: it has no seeds of its own
    moved, _ = run_cell(fam, wider, config, like=(fam, bench))
    np.testing.assert_array_equal(moved.correct_before, chains.correct_before)  # the same draws


def test_winners_curse_is_largest_at_small_r():
    config = SweepConfig(families=(1, 3), benchmarks=(0, 2), chains=60, r=4)
    curse = winners_curse(config, rs=(2, 8), chains=20)
    if curse[2]["cells"]:
        bias = {r: v["reused"] - v["held_out"] for r, v in curse.items()}
        assert bias[2] > bias[8] > 0


def test_criteria_decide_as_declared():
    from neurips26.criteria import decide
    from neurips26.expansion_utility import verdicts as V

    assert decide(V.oracle_positive_criteria(np.full(41, 0.1))).verdict == "reproduced"
    assert (
        decide(V.oracle_positive_criteria(np.r_[np.full(30, 0.1), np.full(11, -0.1)])).verdict
        == "not reproduced"
    )
    assert decide(V.sparsity_criteria(np.full(10, 0.3), np.full(10, 0.9))).verdict == "partly"
    assert decide(V.gini_gap_criteria(-0.5, -0.2)).verdict == "reproduced"
    assert decide(V.gini_gap_criteria(0.4, 0.6)).verdict == "not reproduced"
    assert decide(V.router_criteria(0.1, {"-prior": 0.05, "-mask": 0.02})).verdict == "reproduced"
    assert decide(V.inversion_criteria(0.7, -0.1, 0.1)).verdict == "reproduced"
    curse = {2: {"reused": 0.35, "held_out": 0.01}, 8: {"reused": 0.26, "held_out": 0.07}}
    assert decide(V.winners_curse_criteria(curse)).verdict == "reproduced"
    assert decide(V.finite_sample_criteria(np.full(5, 0.5), np.full(5, 0.3))).verdict == "reproduced"
