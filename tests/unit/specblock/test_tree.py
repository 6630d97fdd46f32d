"""Tree verification: pruning, the tree-attention layout, exact node logits, acceptance and the cache."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26.nn.transformer import Decoder, DecoderConfig
from neurips26.specblock.protocol import DraftTree, target_outputs
from neurips26.specblock.tree import accepted_path, prune, tree_attention, verify

VOCAB = 20


def tiny_target(seed: int = 0) -> Decoder:
    config = DecoderConfig(vocab_size=VOCAB, width=32, depth=4, heads=2, context=64)
    return Decoder(config, seed=seed).double().eval()


def random_tree(n: int, seed: int, *, monotone: bool = True) -> DraftTree:
    rng = np.random.default_rng(seed)
    parents, scores, tokens = [], [], []
    for u in range(n):
        p = int(rng.integers(-1, u)) if u else -1
        step = float(rng.uniform(-3.0, -0.01)) if monotone else float(rng.normal())
        scores.append((scores[p] if p >= 0 else 0.0) + step)
        parents.append(p)
        tokens.append(int(rng.integers(VOCAB)))
    return DraftTree(tuple(tokens), tuple(parents), tuple(scores))


def kept_nodes(tree: DraftTree, pruned: DraftTree) -> list[int]:
    # scores are distinct, so they identify the kept nodes
    index = {s: u for u, s in enumerate(tree.scores)}
    return [index[s] for s in pruned.scores]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("budget", [0, 1, 4, 13, 40])
def test_prune_keeps_exactly_budget_ancestor_closed_top_nodes(seed, budget):
    tree = random_tree(30, seed)
    pruned = prune(tree, budget)
    assert pruned.size == min(budget, tree.size)
    kept = kept_nodes(tree, pruned)
    assert kept == sorted(kept)  # topological order kept
    for new_u, u in enumerate(kept):
        p = tree.parents[u]
        assert p == -1 or p in kept  # ancestor closed
        assert pruned.parents[new_u] == (-1 if p == -1 else kept.index(p))  # re-indexed
        assert pruned.tokens[new_u] == tree.tokens[u]
    # cumulative log-probs: the kept set is the top-`budget` by score
    top = sorted(range(tree.size), key=lambda u: -tree.scores[u])[: pruned.size]
    assert set(kept) == set(top)


@pytest.mark.parametrize("seed", range(5))
def test_prune_is_ancestor_closed_for_any_scores(seed):
    tree = random_tree(25, seed, monotone=False)
    pruned = prune(tree, 10)
    kept = kept_nodes(tree, pruned)
    assert pruned.size == 10 and all(tree.parents[u] in kept or tree.parents[u] == -1 for u in kept)


def test_tree_attention_layout_by_hand():
    tree = DraftTree((5, 6, 7, 8), (-1, -1, 0, 2), (-1.0, -2.0, -3.0, -4.0))
    positions, mask = tree_attention(3, tree)
    assert positions.tolist() == [3, 4, 4, 5, 6]
    expected = [
        # prefix 0 1 2 | root n0 n1 n2 n3
        [1, 1, 1, 1, 0, 0, 0, 0],  # root
        [1, 1, 1, 1, 1, 0, 0, 0],  # n0 (child of root)
        [1, 1, 1, 1, 0, 1, 0, 0],  # n1 (child of root)
        [1, 1, 1, 1, 1, 0, 1, 0],  # n2 (child of n0)
        [1, 1, 1, 1, 1, 0, 1, 1],  # n3 (child of n2)
    ]
    assert mask.tolist() == [[bool(v) for v in row] for row in expected]
    positions, mask = tree_attention(0, DraftTree((), (), ()))
    assert positions.tolist() == [0] and mask.tolist() == [[True]]


@pytest.mark.parametrize("seed", range(3))
def test_tree_node_logits_equal_a_plain_causal_forward(seed):
    target = tiny_target(seed)
    context = torch.randint(0, VOCAB, (9,), generator=torch.Generator().manual_seed(seed))
    tree = random_tree(15, seed + 10)
    cache = target.make_cache()
    target(context[None, :-1], cache=cache)
    result = verify(target, cache, context, tree)
    root_logits = target_outputs(target, context[None])[0][0, -1]
    torch.testing.assert_close(result.logits[0], root_logits, atol=1e-5, rtol=0)
    for u in range(tree.size):
        path = torch.tensor([tree.tokens[v] for v in tree.path(u)])
        plain = target_outputs(target, torch.cat([context, path])[None])[0][0, -1]
        torch.testing.assert_close(result.logits[1 + u], plain, atol=1e-5, rtol=0)


def greedy(target: Decoder, tokens: list[int], n: int) -> list[int]:
    out = list(tokens)
    for _ in range(n):
        out.append(int(target_outputs(target, torch.tensor([out]))[0][0, -1].argmax()))
    return out[len(tokens) :]


def test_verify_accepts_the_greedy_path_and_updates_the_cache():
    target = tiny_target(3)
    context = torch.tensor([1, 4, 9, 2, 7])
    g = greedy(target, context.tolist(), 5)  # g[0..3] drafted, g[4] is the bonus
    wrong = (g[0] + 1) % VOCAB
    # node 0: wrong first token; nodes 1-2: g0, g1; node 3: wrong under g1; nodes 4-5: g2, g3; node 6 off
    tree = DraftTree(
        (wrong, g[0], g[1], (g[2] + 1) % VOCAB, g[2], g[3], g[0]),
        (-1, -1, 1, 2, 2, 4, 0),
        (-1.0, -1.0, -2.0, -3.0, -3.0, -4.0, -2.0),
    )
    cache = target.make_cache()
    target(context[None, :-1], cache=cache)
    result = verify(target, cache, context, tree)
    assert result.accepted == (1, 2, 4, 5) and list(result.tokens) == g[:4] and result.bonus == g[4]
    committed = torch.cat([context, torch.tensor(g[:4])])
    assert cache.length == committed.numel()  # prefix + root + accepted; the bonus is the new root
    _, hidden = target_outputs(target, committed[None])
    torch.testing.assert_close(result.hidden, hidden[0, context.numel() - 1 :], atol=1e-10, rtol=0)
    # the gathered cache continues decoding exactly like a fresh one
    after = target(torch.tensor([[g[4]]]), cache=cache).logits[0, -1]
    fresh = target_outputs(target, torch.cat([committed, torch.tensor([g[4]])])[None])[0][0, -1]
    torch.testing.assert_close(after, fresh, atol=1e-10, rtol=0)


def test_verify_empty_tree_gives_the_next_greedy_token():
    target = tiny_target(4)
    context = torch.tensor([3])
    cache = target.make_cache()
    result = verify(target, cache, context, DraftTree((), (), ()))
    assert result.accepted == () and result.bonus == greedy(target, [3], 1)[0]
    assert cache.length == 1 and result.hidden.shape == (1, 5, 32)


def test_accepted_path_takes_the_longest_among_duplicate_siblings():
    tree = DraftTree((4, 4, 5), (-1, -1, 1), (0.0, 0.0, 0.0))
    argmax = [4, 9, 5, 0]  # after root: 4; after node 0: 9; after node 1: 5
    assert accepted_path(tree, argmax) == [1, 2]


def test_bad_inputs():
    target = tiny_target()
    tree = DraftTree((1,), (-1,), (0.0,))
    with pytest.raises(ValueError, match="total_tokens"):
        prune(tree, -1)
    with pytest.raises(TypeError, match="tree"):
        prune([1], 3)
    with pytest.raises(ValueError, match="prefix_length"):
        tree_attention(-1, tree)
    with pytest.raises(ValueError, match="cache"):
        verify(target, target.make_cache(), torch.tensor([1, 2]), tree)
    with pytest.raises(ValueError, match="context_tokens"):
        verify(target, target.make_cache(), torch.tensor([], dtype=torch.long), tree)
    with pytest.raises(ValueError, match="tokens"):
        verify(target, target.make_cache(), torch.tensor([1]), DraftTree((VOCAB,), (-1,), (0.0,)))
