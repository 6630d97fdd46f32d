"""The explore notebook's library: slot-limited trees, losslessness, iteration chunks, configs, bad input."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from neurips26.specblock.decode import speculative_generate, vanilla_generate
from neurips26.specblock.dynamic_tree import SpecBlockProposer
from neurips26.specblock.experiments import ShiftConfig
from neurips26.specblock.explore import (
    BUDGET_PRESETS,
    CHAIN,
    GridConfig,
    iteration_chunks,
    trees_without_pruning,
)
from neurips26.specblock.slot_limited import SlotLimitedProposer
from tests.unit.specblock.tiny import context_for, tiny_drafter, tiny_target


@pytest.fixture(scope="module")
def target():
    return tiny_target(torch.float64)


@pytest.fixture(scope="module")
def drafter(target):
    return tiny_drafter(target)


SEQ = torch.tensor([1, 2, 3, 4, 5, 6, 7, 8])


def _depths(tree):
    depth = []
    for p in tree.parents:
        depth.append(1 if p < 0 else depth[p] + 1)
    return depth


def test_all_slots_is_specblock_unchanged(target, drafter):
    ctx = context_for(target, SEQ)
    full = SpecBlockProposer(drafter, max_blocks=2, beam_width=3).propose(ctx)
    same = SlotLimitedProposer(drafter, slots=4, max_blocks=2, beam_width=3).propose(ctx)
    assert same.tree == full.tree and same.forwards == full.forwards and same.info == full.info


@pytest.mark.parametrize("slots", [1, 2, 3])
@pytest.mark.parametrize("blocks", [1, 2, 3])
def test_slot_limit_bounds_slots_and_depth(target, drafter, slots, blocks):
    proposal = SlotLimitedProposer(drafter, slots=slots, max_blocks=blocks, beam_width=3).propose(
        context_for(target, SEQ)
    )
    assert max(proposal.info["slot"]) < slots
    assert max(_depths(proposal.tree)) <= slots * blocks
    assert proposal.forwards <= blocks


@pytest.mark.parametrize("slots", [1, 3])
def test_slot_limited_decoding_is_lossless(target, drafter, slots):
    prompt = [1, 2, 3, 4]
    proposer = SlotLimitedProposer(drafter, slots=slots, max_blocks=2, beam_width=2)
    spec = speculative_generate(target, proposer, prompt, 14, total_tokens=10)
    assert spec.tokens == vanilla_generate(target, prompt, 14).tokens


def test_iteration_chunks_add_up(target, drafter):
    proposer = SlotLimitedProposer(drafter, slots=4, max_blocks=2, beam_width=3)
    result = speculative_generate(target, proposer, [1, 2, 3], 15, total_tokens=12)
    chunks = iteration_chunks(result)
    assert len(chunks) == result.iterations
    assert tuple(t for tokens, _ in chunks for t in tokens) == result.tokens
    assert all(len(tokens) == accepted + 1 for tokens, accepted in chunks)
    with pytest.raises(TypeError, match="result"):
        iteration_chunks([1, 2])


def test_trees_without_pruning_see_more_nodes(target, drafter):
    proposer = SlotLimitedProposer(drafter, slots=4, max_blocks=2, beam_width=4, budgets=(2, 4, 10, 10))
    nodes, tau = trees_without_pruning(proposer, target, [[1, 2, 3]], 10, eos_id=None)
    pruned = speculative_generate(target, proposer, [1, 2, 3], 10, total_tokens=5)
    assert nodes > 5 >= max(pruned.tree_sizes)
    assert tau >= 1.0


def test_presets_are_valid_budgets():
    assert BUDGET_PRESETS["released"] == (2, 4, 10, 0)
    assert set(BUDGET_PRESETS) == {"released", "tuned", "greedy-only"}


def test_grid_settings_cover_the_grid_and_the_slots():
    cfg = GridConfig.for_scale("smoke")
    settings = cfg.settings()
    main = [s for s in settings if s[4] == 0 and s[2] != CHAIN]
    assert len(main) == 2 * 2 * 2 * 2
    assert {s[4] for s in settings} == {0, *cfg.slots}
    assert len(cfg.prompt_texts()) == cfg.prompts
    # the strict-linear chain once per max_blocks (beam 1, the largest budget), and only when asked for
    chain = [s for s in settings if s[2] == CHAIN]
    assert chain == [(b, 1, CHAIN, max(cfg.total_tokens), 0) for b in cfg.max_blocks]
    assert all(s[2] != CHAIN for s in dataclasses.replace(cfg, chain=False).settings())


def test_bad_input(drafter):
    with pytest.raises(ValueError, match="slots"):
        SlotLimitedProposer(drafter, slots=5)
    with pytest.raises(ValueError, match="slots"):
        SlotLimitedProposer(drafter, slots=0)
    with pytest.raises(ValueError, match="max_blocks"):
        GridConfig(max_blocks=(0, 1))
    with pytest.raises(ValueError, match="presets"):
        GridConfig(presets=("nope",))
    with pytest.raises(ValueError, match="seed"):
        GridConfig(seed=1)
    with pytest.raises(TypeError, match="beam_widths"):
        GridConfig(beam_widths=[2, 5])
    with pytest.raises(TypeError, match="chain"):
        GridConfig(chain=1)
    with pytest.raises(ValueError, match="policies"):
        ShiftConfig(policies=("static", "sometimes"))
    with pytest.raises(ValueError, match="before"):
        ShiftConfig(before=0, after=0)
