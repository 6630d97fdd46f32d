"""The sweep: cells summarised, health decided, the winner's curse visible."""

import numpy as np

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


def test_winners_curse_is_largest_at_small_r():
    config = SweepConfig(families=(1, 3), benchmarks=(0, 2), chains=60, r=4)
    curse = winners_curse(config, rs=(2, 8), chains=20)
    if curse[2]["cells"]:
        bias = {r: v["reused"] - v["held_out"] for r, v in curse.items()}
        assert bias[2] > bias[8] > 0
