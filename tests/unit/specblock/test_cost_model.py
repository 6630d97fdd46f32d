"""The declared GPU-like cost model: parameter accounting per forward and the iteration cost."""

from __future__ import annotations

import pytest

from neurips26.specblock.baselines.eagle3 import Eagle3Config, Eagle3Drafter, Eagle3Proposer
from neurips26.specblock.baselines.medusa import MedusaConfig, MedusaHeads, MedusaProposer
from neurips26.specblock.cost_model import (
    DrafterCost,
    cost_model_speedup,
    drafter_cost,
    iteration_cost,
    parameters_read,
    target_parameters,
)
from neurips26.specblock.dynamic_tree import SpecBlockProposer
from neurips26.specblock.metrics import modelled_speedup
from tests.unit.specblock.tiny import tiny_drafter, tiny_target


def _count(*modules) -> int:
    return sum(p.numel() for m in modules for p in m.parameters())


def test_target_parameters_exclude_only_the_embedding_lookup():
    target = tiny_target()
    assert target_parameters(target) == _count(target) - target.token_embedding.weight.numel()


def test_specblock_cost_counts_setup_once_and_the_rank_head_only_when_used():
    target = tiny_target()
    drafter = tiny_drafter(target)
    with_rank = drafter_cost(SpecBlockProposer(drafter, beam_width=5))
    without = drafter_cost(SpecBlockProposer(drafter, beam_width=5, use_rank_head=False))
    assert with_rank.setup == _count(drafter.cond_proj, drafter.cond_norm)
    assert with_rank.setup + with_rank.per_forward == _count(drafter)  # every parameter counted once
    assert with_rank.per_forward - without.per_forward == _count(drafter.rank_head)
    assert with_rank.rows == drafter.config.block_size * 5


def test_eagle3_and_medusa_costs():
    target = tiny_target()
    eagle = Eagle3Drafter(target, Eagle3Config(heads=2), seed=0)
    cost = drafter_cost(Eagle3Proposer(eagle, topk=3, depth=4))
    assert cost.setup == _count(eagle.fc)
    assert cost.per_forward == _count(eagle) - _count(eagle.fc, eagle.embedding)
    assert cost.rows == 3
    heads = MedusaHeads(target, MedusaConfig(heads=2))
    assert drafter_cost(MedusaProposer(heads, topk=3, count=8)) == DrafterCost(0, _count(heads), 1)


def test_units_and_speedup_by_hand():
    cost = DrafterCost(setup=100, per_forward=400, rows=11)
    # (100 + 2 · 400 · (1 + 0.01 · 10)) / 1000 = 0.98
    assert cost.units(2, 1000, epsilon=0.01) == pytest.approx(0.98)
    assert cost.units(0, 1000) == 0.0  # no forward, no setup read
    assert iteration_cost(50, 0.98, epsilon=0.01) == pytest.approx(2.48)
    assert cost_model_speedup(4.96, 50, 0.98, epsilon=0.01) == pytest.approx(2.0)
    assert cost_model_speedup(1.0, 0, 0.0) == 1.0  # vanilla is 1×
    # with t_D / t_T = per-forward units the model is the CPU latency model with those latencies
    r = 400 / 1000
    assert cost_model_speedup(3.0, 40, DrafterCost(0, 400, 1).units(2, 1000)) == pytest.approx(
        modelled_speedup(3.0, 1.0, r, 40, 2)
    )


def test_bad_input_is_rejected_naming_the_argument():
    cost = DrafterCost(setup=0, per_forward=10, rows=1)
    with pytest.raises(ValueError, match="forwards"):
        cost.units(-1, 10)
    with pytest.raises(ValueError, match="target_params"):
        cost.units(1, 0)
    with pytest.raises(ValueError, match="tau"):
        cost_model_speedup(0.5, 1, 1)
    with pytest.raises(ValueError, match="tree_nodes"):
        iteration_cost(-1, 0.0)
    with pytest.raises(TypeError, match="proposer"):
        drafter_cost(object())
    with pytest.raises(TypeError, match="module"):
        parameters_read("not a module")
