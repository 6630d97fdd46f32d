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
    iteration_units,
    parameters_read,
    target_parameters,
    update_step_units,
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
    chain = drafter_cost(SpecBlockProposer(drafter, beam_width=5, linear=True))  # one leaf, no rank head
    assert chain.rows == drafter.config.block_size and chain.per_forward == without.per_forward


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


def test_update_step_units_by_hand_and_charges_the_trained_parameters_twice():
    target = tiny_target()
    drafter = tiny_drafter(target)
    spec = drafter_cost(SpecBlockProposer(drafter, beam_width=1))
    p_t, k = target_parameters(target), drafter.config.block_size
    rank = [n for n, _ in drafter.named_parameters() if n.startswith("rank_head.")]
    # setup over batch·window = 6 positions; 2 blocks over 6·K rows of the forward + 2× the trained ones
    expected = (
        spec.setup * (1 + 0.01 * 5)
        + 2 * (spec.per_forward + 2 * _count(drafter.rank_head)) * (1 + 0.01 * (6 * k - 1))
    ) / p_t
    got = update_step_units(drafter, rank, batch=2, window=3, blocks=2, target_params=p_t, epsilon=0.01)
    assert got == pytest.approx(expected)
    everything = [n for n, _ in drafter.named_parameters()]
    assert (
        update_step_units(drafter, everything, batch=2, window=3, blocks=2, target_params=p_t, epsilon=0.01)
        > got
    )
    assert update_step_units(drafter, [], batch=2, window=3, blocks=2, target_params=p_t) > 0  # forward only
    with pytest.raises(ValueError, match="trainable"):
        update_step_units(drafter, ["nope"], batch=2, window=3, blocks=2, target_params=p_t)
    with pytest.raises(ValueError, match="batch"):
        update_step_units(drafter, rank, batch=0, window=3, blocks=2, target_params=p_t)
    with pytest.raises(TypeError, match="drafter"):
        update_step_units(target, rank, batch=2, window=3, blocks=2, target_params=p_t)


def test_iteration_units_is_the_iteration_cost_of_the_proposers_drafting():
    target = tiny_target()
    proposer = SpecBlockProposer(tiny_drafter(target), beam_width=2)
    p_t = target_parameters(target)
    drafting = drafter_cost(proposer).units(2, p_t, epsilon=0.01)
    assert iteration_units(proposer, 12, 2, p_t, epsilon=0.01) == pytest.approx(1 + 0.01 * 12 + drafting)
