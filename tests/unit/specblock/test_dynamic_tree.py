"""SpecBlock's dynamic tree (§3.5): rank-driven walk, proposer trees, forwards, cache reuse, losslessness."""

from __future__ import annotations

import pytest
import torch

from neurips26.nn.transformer import Decoder, DecoderConfig
from neurips26.specblock.decode import speculative_generate, vanilla_generate
from neurips26.specblock.drafter import SpecBlockConfig, SpecBlockDrafter
from neurips26.specblock.dynamic_tree import SpecBlockProposer, plan_block, plan_chain
from neurips26.specblock.protocol import DecodeContext, DraftTree, Proposer, target_outputs

K, V = 4, 20


def _log_probs() -> torch.Tensor:
    """Slot k ranks tokens in the order (k, k+1, …) mod V."""
    lp = torch.full((K, V), -50.0, dtype=torch.float64)
    for k in range(K):
        for r in range(V):
            lp[k, (k + r) % V] = -float(r)
    return lp


def test_hand_made_classes_give_the_expected_siblings_stop_and_leaves():
    plan = plan_block(_log_probs(), [3, 1, 0, 3], beam_width=3, budgets=(2, 4, 10, 0))
    assert plan.spine == (0, 1, 2, 3)
    assert [plan.candidates(k) for k in range(3)] == [3, 4, 2]  # slot 0: beam_width whatever its class
    assert plan.siblings == ((1, 2), (2, 3, 4), (3,), ())
    assert plan.stop == 3
    assert plan.leaves == ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (1, 3), (1, 4), (2, 2), (2, 3))


def test_a_give_up_slot_stops_the_walk_early():
    plan = plan_block(_log_probs(), [0, 3, 0, 0], beam_width=2, budgets=(2, 4, 10, 0))
    assert plan.stop == 1
    assert plan.siblings == ((1,), (), (), ())
    assert plan.leaves == ((0, 0), (0, 1))
    tuned = plan_block(_log_probs(), [0, 3, 2, 1], beam_width=2, budgets=(2, 4, 6, 4))  # no give-up
    assert tuned.stop is None and [tuned.candidates(k) for k in range(K)] == [2, 4, 6, 4]


def test_fixed_top_k_without_a_rank_head():
    plan = plan_block(_log_probs(), None, beam_width=5, top_k=2)
    assert [plan.candidates(k) for k in range(K)] == [5, 2, 2, 2] and plan.stop is None
    assert len(plan.leaves) == 11


def test_the_strict_linear_plan_is_the_spine_with_its_last_slot_as_the_only_leaf():
    plan = plan_chain(_log_probs())
    assert plan.spine == (0, 1, 2, 3)
    assert plan.siblings == ((),) * K and plan.stop is None
    assert plan.leaves == ((K - 1, 3),)


@pytest.fixture(scope="module")
def setup():
    target = Decoder(DecoderConfig(vocab_size=V, width=32, depth=4, heads=2, context=64), seed=0)
    drafter = SpecBlockDrafter.from_target(target, SpecBlockConfig.for_target(target), seed=1)
    return target, drafter


def _context(target, tokens, new_from=0, total_tokens=40):
    _, hidden = target_outputs(target, tokens[None])
    return DecodeContext(tokens=tokens, hidden=hidden[0, :-1], new_from=new_from, total_tokens=total_tokens)


@pytest.mark.parametrize("max_blocks", [1, 2, 3])
def test_proposer_trees_are_valid_and_use_max_blocks_forwards(setup, max_blocks):
    target, drafter = setup
    proposer = SpecBlockProposer(drafter, max_blocks=max_blocks, beam_width=4)
    assert isinstance(proposer, Proposer)
    tokens = torch.randint(0, V, (9,), generator=torch.Generator().manual_seed(0))
    proposal = proposer.propose(_context(target, tokens))
    tree = proposal.tree
    assert isinstance(tree, DraftTree) and tree.size > 0
    assert proposal.forwards == max_blocks
    assert max(tree.depths()) <= max_blocks * K
    assert max(proposal.info["block"]) == max_blocks - 1
    for u, p in enumerate(tree.parents):  # scores fall along every path (pruning stays ancestor-closed)
        assert tree.scores[u] <= (0.0 if p < 0 else tree.scores[p]) + 1e-12
    children = [(p, t) for p, t in zip(tree.parents, tree.tokens, strict=True)]
    assert len(set(children)) == len(children)  # no duplicate siblings


def test_incremental_cache_gives_the_same_tree_as_a_fresh_start(setup):
    target, drafter = setup
    tokens = torch.randint(0, V, (14,), generator=torch.Generator().manual_seed(1))
    warm = SpecBlockProposer(drafter)
    warm.propose(_context(target, tokens[:8]))
    again = warm.propose(_context(target, tokens, new_from=7))  # rows 7 … 12 are new
    cold = SpecBlockProposer(drafter).propose(_context(target, tokens))
    assert again.tree.tokens == cold.tree.tokens
    assert again.tree.parents == cold.tree.parents
    assert max(abs(a - b) for a, b in zip(again.tree.scores, cold.tree.scores, strict=True)) < 1e-4


def _greedy(target, prompt, n):
    tokens = prompt.clone()
    for _ in range(n):
        logits, _ = target_outputs(target, tokens[None])
        tokens = torch.cat([tokens, logits[0, -1].argmax()[None]])
    return tokens


def test_greedy_verification_of_the_proposed_trees_is_lossless(setup):
    """A minimal brute-force verifier: follow the tree while each node equals the target's argmax."""
    target, drafter = setup
    proposer = SpecBlockProposer(drafter, max_blocks=2, beam_width=4)
    prompt = torch.randint(0, V, (5,), generator=torch.Generator().manual_seed(2))
    n = 12
    reference = _greedy(target, prompt, n)
    # the prompt's first greedy token is the root of the first iteration
    tokens = reference[: len(prompt) + 1].clone()
    proposer.start()
    new_from = 0
    while len(tokens) < len(reference):
        proposal = proposer.propose(_context(target, tokens, new_from))
        tree, node, accepted = proposal.tree, -1, []
        while True:
            logits, _ = target_outputs(
                target, torch.cat([tokens, torch.tensor(accepted, dtype=torch.long)])[None]
            )
            want = int(logits[0, -1].argmax())
            nxt = [u for u, p in enumerate(tree.parents) if p == node and tree.tokens[u] == want]
            accepted.append(want)  # accepted node, or the target's own token (bonus) when no child matches
            if not nxt:
                break
            node = nxt[0]
        new_from = len(tokens) - 1
        tokens = torch.cat([tokens, torch.tensor(accepted, dtype=torch.long)])
    assert torch.equal(tokens[: len(reference)], reference)


def test_bad_arguments_name_the_argument(setup):
    target, drafter = setup
    for kwargs, name in [
        (dict(max_blocks=0), "max_blocks"),
        (dict(beam_width=0), "beam_width"),
        (dict(budgets=(2, 4, 10)), "budgets"),
        (dict(budgets=(2, 4, 10, -1)), "budgets"),
        (dict(budgets=(2, 4, 1.5, 0)), "budgets"),
        (dict(top_k=0), "top_k"),
    ]:
        with pytest.raises(ValueError, match=name):
            SpecBlockProposer(drafter, **kwargs)
    with pytest.raises(ValueError, match="block_size"):
        SpecBlockConfig.for_target(target, block_size=0)
    tokens = torch.randint(0, V, (6,), generator=torch.Generator().manual_seed(3))
    with pytest.raises(ValueError, match="total_tokens"):
        SpecBlockProposer(drafter).propose(_context(target, tokens, total_tokens=0))
    with pytest.raises(TypeError, match="drafter"):
        SpecBlockProposer("drafter")


@pytest.mark.parametrize("max_blocks", [1, 2, 3])
def test_the_strict_linear_ablation_drafts_one_chain_that_extends_block_by_block(setup, max_blocks):
    target, drafter = setup
    tokens = torch.randint(0, V, (9,), generator=torch.Generator().manual_seed(0))
    chain = SpecBlockProposer(drafter, max_blocks=max_blocks, beam_width=4, linear=True)
    proposal = chain.propose(_context(target, tokens))
    tree = proposal.tree
    # no branching: node u's parent is u - 1, K nodes per block, one forward per block
    assert tree.parents == tuple(range(-1, tree.size - 1))
    assert tree.size == K * max_blocks and proposal.forwards == max_blocks
    assert proposal.info["block"] == tuple(b for b in range(max_blocks) for _ in range(K))
    assert set(proposal.info["rank_class"]) == {-1}  # the rank head is not consulted
    # block 1 is the dynamic tree's greedy spine (the same forward)
    full = SpecBlockProposer(drafter, max_blocks=max_blocks, beam_width=4).propose(_context(target, tokens))
    assert tree.tokens[:K] == full.tree.tokens[:K]


def test_the_strict_linear_chain_decodes_losslessly(setup):
    target, drafter = setup
    chain = SpecBlockProposer(drafter, max_blocks=2, linear=True)
    for seed in range(3):
        prompt = torch.randint(0, V, (6,), generator=torch.Generator().manual_seed(10 + seed)).tolist()
        got = speculative_generate(target, chain, prompt, 14, total_tokens=40)
        assert got.tokens == vanilla_generate(target, prompt, 14).tokens
        assert all(size <= 2 * K for size in got.tree_sizes)
    with pytest.raises(TypeError, match="linear"):
        SpecBlockProposer(drafter, linear=1)
