"""EAGLE-3 baseline: TTT attention pattern, TTT = inference, loss weights, gradients, EAGLE-2 tree."""

from __future__ import annotations

import pytest
import torch

from neurips26.nn.attention import tree_mask
from neurips26.specblock.baselines.eagle3 import (
    Eagle3Config,
    Eagle3Drafter,
    Eagle3Proposer,
    eagle3_loss,
    eagle3_step_losses,
    prune_to_budget,
    train_eagle3,
    ttt_mask,
)
from neurips26.specblock.protocol import DecodeContext, DraftTree, Proposer, fused_features, target_outputs
from tests.unit.specblock.tiny import VOCAB, context_for, tiny_data, tiny_target

CONFIG = Eagle3Config(heads=2, ttt_steps=3)
# --------------------------------------------------------------------------------------------- drafter


def test_shapes_and_frozen_embedding_flag():
    target = tiny_target()
    drafter = Eagle3Drafter(target, CONFIG)
    tokens, _, hidden, _ = tiny_data(target)
    outs = drafter.ttt_forward(fused_features(hidden), tokens)
    assert len(outs) == CONFIG.ttt_steps
    assert all(o.shape == (3, 12, VOCAB) for o in outs)
    assert drafter.fc.weight.shape == (32, 96)  # W_fc: 3H → H, no bias
    assert drafter.fc.bias is None
    assert drafter.layer.q.weight.shape == (32, 64)  # Q/K/V read [RMSNorm(e); RMSNorm(h)] ∈ R^{2H}
    assert not drafter.embedding.weight.requires_grad
    assert torch.equal(drafter.embedding.weight, target.token_embedding.weight)


def test_ttt_mask_is_causal_step0_plus_same_row_diagonals():
    length, step = 5, 3
    mask = ttt_mask(length, step)
    assert mask.shape == (length, (step + 1) * length)
    for i in range(length):
        for s in range(step + 1):
            for i2 in range(length):
                expected = i2 <= i if s == 0 else i2 == i
                assert bool(mask[i, s * length + i2]) == expected, (i, s, i2)


def test_fast_ttt_attention_equals_dense_mask():
    target = tiny_target(torch.float64)
    drafter = Eagle3Drafter(target, CONFIG, seed=1)
    tokens, _, hidden, _ = tiny_data(target)
    fast = drafter.ttt_forward(fused_features(hidden), tokens)
    dense = drafter.ttt_forward(fused_features(hidden), tokens, dense=True)
    for a, b in zip(fast, dense, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


def test_ttt_step_equals_inference_along_the_true_chain():
    """TTT step j at row i = a depth-j tree node decoded with a cache of rows ≤ i (training = test time)."""
    target = tiny_target(torch.float64)
    drafter = Eagle3Drafter(target, CONFIG, seed=2)
    tokens, _, hidden, _ = tiny_data(target, batch=1)
    features = fused_features(hidden)
    outs = drafter.ttt_forward(features, tokens)
    for i in (0, 4, 7):
        cache = drafter.make_cache()
        g, logits = drafter.step(
            drafter.fc(features[:, : i + 1]), tokens[:, 1 : i + 2], torch.arange(i + 1), None, cache
        )
        g = g[:, -1:]
        torch.testing.assert_close(logits[:, -1], outs[0][:, i], rtol=0, atol=1e-10)
        for j in range(1, CONFIG.ttt_steps):
            g, logits = drafter.step(g, tokens[:, i + 1 + j : i + 2 + j], torch.tensor([i + j]), None, cache)
            torch.testing.assert_close(logits[:, 0], outs[j][:, i], rtol=0, atol=1e-10)


def test_loss_is_weighted_sum_of_per_step_soft_ce():
    assert CONFIG.loss_weights == pytest.approx((1.0, 0.8, 0.64))
    target = tiny_target(torch.float64)
    drafter = Eagle3Drafter(target, CONFIG, seed=3)
    data = tiny_data(target)
    tokens, logits, hidden, loss_mask = data
    outs = drafter.ttt_forward(fused_features(hidden), tokens)
    expected = []
    for j, out in enumerate(outs):  # row i, step j: teacher at i+1+j, masked by loss_mask[i+1+j]
        terms = [
            -(torch.softmax(logits[b, i + 1 + j], -1) * torch.log_softmax(out[b, i], -1)).sum()
            for b in range(tokens.shape[0])
            for i in range(tokens.shape[1] - 1 - j)
            if loss_mask[b, i + 1 + j]
        ]
        expected.append(torch.stack(terms).mean())
    losses = eagle3_step_losses(drafter, data)
    torch.testing.assert_close(losses, torch.stack(expected), rtol=0, atol=1e-12)
    total = sum(0.8**j * expected[j] for j in range(3))
    torch.testing.assert_close(eagle3_loss(drafter, data), total, rtol=0, atol=1e-12)


def test_ttt_loss_gradient_matches_finite_differences():
    target = tiny_target(torch.float64)
    drafter = Eagle3Drafter(target, Eagle3Config(heads=2, ttt_steps=3, mlp_ratio=1.0), seed=4)
    data = tiny_data(target, batch=2, length=8)
    params = [p for p in drafter.parameters() if p.requires_grad]
    loss = eagle3_loss(drafter, data)
    grads = torch.autograd.grad(loss, params)
    generator = torch.Generator().manual_seed(0)
    for _ in range(3):
        direction = [torch.randn(p.shape, generator=generator, dtype=p.dtype) for p in params]
        analytic = sum((g * d).sum() for g, d in zip(grads, direction, strict=True))
        eps = 1e-6
        with torch.no_grad():
            for p, d in zip(params, direction, strict=True):
                p.add_(eps * d)
            up = eagle3_loss(drafter, data)
            for p, d in zip(params, direction, strict=True):
                p.sub_(2 * eps * d)
            down = eagle3_loss(drafter, data)
            for p, d in zip(params, direction, strict=True):
                p.add_(eps * d)
        assert float((up - down) / (2 * eps)) == pytest.approx(float(analytic), rel=1e-6, abs=1e-9)


def test_training_keeps_embedding_frozen_and_is_deterministic():
    target = tiny_target()
    data = tiny_data(target, batch=6)
    a, history_a = train_eagle3(target, data, CONFIG, steps=4, batch=3, lr=1e-2, seed=5, progress=False)
    b, history_b = train_eagle3(target, data, CONFIG, steps=4, batch=3, lr=1e-2, seed=5, progress=False)
    assert history_a.loss == history_b.loss
    for (name, pa), pb in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        assert torch.equal(pa, pb), name
    assert torch.equal(a.embedding.weight, target.token_embedding.weight)  # frozen: not trained
    assert not torch.equal(a.fc.weight, Eagle3Drafter(target, CONFIG, seed=5).fc.weight)  # the rest is


# -------------------------------------------------------------------------------------------- proposer


def test_proposer_tree_is_valid_with_one_forward_per_depth():
    target = tiny_target()
    proposer = Eagle3Proposer(Eagle3Drafter(target, CONFIG), topk=4, depth=5)
    assert isinstance(proposer, Proposer)
    seq = torch.randint(0, VOCAB, (9,), generator=torch.Generator().manual_seed(1))
    proposer.start()
    proposal = proposer.propose(context_for(target, seq, total=30))
    tree = proposal.tree
    assert isinstance(tree, DraftTree)
    assert proposal.forwards == 5
    assert 0 < tree.size <= 30
    assert max(tree.depths()) <= 5
    for u, p in enumerate(tree.parents):
        if p >= 0:
            assert tree.scores[u] <= tree.scores[p] + 1e-9  # cumulative log-probabilities
    siblings = {}
    for u, p in enumerate(tree.parents):
        siblings.setdefault(p, []).append(tree.tokens[u])
    assert all(len(set(s)) == len(s) for s in siblings.values())
    assert sorted(siblings[-1]) == sorted(tree.tokens[u] for u in range(tree.size) if tree.parents[u] < 0)
    # depth 1: with a budget ≥ all candidates, the root has exactly topk children
    full = proposer.propose(context_for(target, seq, total=10_000)).tree
    assert sum(p < 0 for p in full.parents) == 4
    assert full.size == 4 + 4 * 4 * 4  # topk + (depth-1)·topk² candidates


def test_cache_extension_equals_fresh_start():
    """Extending the drafter cache with new_from gives the same tree as recomputing every row."""
    target = tiny_target()
    drafter = Eagle3Drafter(target, CONFIG, seed=6)
    seq = torch.randint(0, VOCAB, (14,), generator=torch.Generator().manual_seed(2))
    incremental = Eagle3Proposer(drafter, topk=3, depth=3)
    incremental.start()
    incremental.propose(context_for(target, seq[:6]))
    incremental.propose(context_for(target, seq[:9], new_from=5))
    again = incremental.propose(context_for(target, seq[:14], new_from=8)).tree
    fresh = Eagle3Proposer(drafter, topk=3, depth=3)
    fresh.start()
    reference = fresh.propose(context_for(target, seq[:14])).tree
    assert again.tokens == reference.tokens and again.parents == reference.parents
    assert again.scores == pytest.approx(reference.scores, abs=1e-5)


def test_oracle_drafter_top_path_is_the_sequence():
    """A drafter trained on one sequence (teacher = that sequence) drafts it: the best path matches."""
    target = tiny_target()
    seq = torch.randint(0, VOCAB, (1, 16), generator=torch.Generator().manual_seed(3))
    _, hidden = target_outputs(target, seq)
    teacher = 8.0 * torch.nn.functional.one_hot(torch.roll(seq, -1, 1), VOCAB).float()  # j predicts x_{j+1}
    mask = torch.ones(1, 16, dtype=torch.bool)
    mask[:, -1] = False
    drafter, _ = train_eagle3(
        target, (seq, teacher, hidden, mask), CONFIG, steps=150, batch=1, lr=1e-2, seed=0, progress=False
    )
    proposer = Eagle3Proposer(drafter, topk=3, depth=4)
    proposer.start()
    length = 8
    tree = proposer.propose(context_for(target, seq[0, :length])).tree
    path, node = [], -1
    while True:  # follow the best-scoring child from the root
        children = [u for u, p in enumerate(tree.parents) if p == node]
        if not children:
            break
        node = max(children, key=lambda u: tree.scores[u])
        path.append(tree.tokens[node])
    assert path == seq[0, length : length + 4].tolist()


def test_greedy_tree_verification_is_lossless():
    """A minimal greedy verify loop over EAGLE trees reproduces vanilla greedy decoding."""
    target = tiny_target(torch.float64)
    proposer = Eagle3Proposer(Eagle3Drafter(target, CONFIG, seed=7), topk=3, depth=3)
    prompt = torch.randint(0, VOCAB, (5,), generator=torch.Generator().manual_seed(4))
    n_new = 12
    vanilla = prompt.clone()
    for _ in range(n_new):
        vanilla = torch.cat([vanilla, target(vanilla[None]).logits[0, -1].argmax()[None]])
    seq = torch.cat([prompt, target(prompt[None]).logits[0, -1].argmax()[None]])  # root = first new token
    proposer.start()
    new_from = 0
    while seq.numel() < vanilla.numel():
        tree = proposer.propose(context_for(target, seq, new_from=new_from, total=12)).tree
        committed = seq.numel()
        if tree.size:
            mask, positions = tree_mask(list(tree.parents), prefix_length=committed)
            prefix = torch.tril(torch.ones(committed, committed + tree.size, dtype=torch.bool))
            mask = torch.cat([prefix, mask])  # prefix rows causal, tree rows see prefix + ancestors
            tokens = torch.cat([seq, torch.tensor(tree.tokens)])
            pos = torch.cat([torch.arange(committed), positions])
            argmax = target(tokens[None], positions=pos, mask=mask).logits[0].argmax(-1)
        else:
            argmax = target(seq[None]).logits[0].argmax(-1)
        node, accepted = -1, []
        while True:
            want = int(argmax[committed - 1 if node < 0 else committed + node])
            child = [u for u, p in enumerate(tree.parents) if p == node and tree.tokens[u] == want]
            if not child:
                accepted.append(want)  # the target's own next token (new root)
                break
            node = child[0]
            accepted.append(want)
        new_from = committed - 1
        seq = torch.cat([seq, torch.tensor(accepted)])
    assert seq[: vanilla.numel()].tolist() == vanilla.tolist()


def test_prune_keeps_best_ancestor_closed_nodes():
    tree = prune_to_budget([1, 2, 3, 4], [-1, 0, -1, 1], [-0.1, -0.5, -0.2, -0.5], 3)
    assert tree.tokens == (1, 2, 3)  # node 3 ties node 1 but is deeper: its parent ranks first
    assert tree.parents == (-1, 0, -1)


# ------------------------------------------------------------------------------------------ bad inputs


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"heads": 0}, "heads"),
        ({"ttt_steps": 0}, "ttt_steps"),
        ({"gamma": 1.5}, "gamma"),
        ({"mlp_ratio": 0}, "mlp_ratio"),
    ],
)
def test_bad_config_names_the_field(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Eagle3Config(**kwargs)


def test_bad_inputs_name_the_argument():
    target = tiny_target()
    drafter = Eagle3Drafter(target, CONFIG)
    with pytest.raises(ValueError, match="heads"):
        Eagle3Drafter(target, Eagle3Config(heads=3))
    with pytest.raises(TypeError, match="target"):
        Eagle3Drafter("target", CONFIG)
    with pytest.raises(ValueError, match="topk"):
        Eagle3Proposer(drafter, topk=0)
    with pytest.raises(ValueError, match="depth"):
        Eagle3Proposer(drafter, depth=0)
    proposer = Eagle3Proposer(drafter)
    seq = torch.tensor([1, 2, 3])
    good = context_for(target, seq)
    with pytest.raises(TypeError, match="context"):
        proposer.propose("context")
    with pytest.raises(ValueError, match="context.hidden"):
        proposer.propose(DecodeContext(seq, good.hidden[:1], 0, 60))
    with pytest.raises(ValueError, match="context.tokens"):
        proposer.propose(DecodeContext(torch.tensor([1, 2, VOCAB]), good.hidden, 0, 60))
    with pytest.raises(ValueError, match="context.new_from"):
        proposer.propose(DecodeContext(seq, good.hidden, 5, 60))
    data = tiny_data(target)
    with pytest.raises(ValueError, match="steps"):
        train_eagle3(target, data, CONFIG, steps=0, progress=False)
    with pytest.raises(ValueError, match="data.logits"):
        train_eagle3(target, (data[0], data[1][:, :3], data[2], data[3]), CONFIG, steps=1, progress=False)
    with pytest.raises(TypeError, match="data"):
        train_eagle3(target, {"tokens": data[0]}, CONFIG, steps=1, progress=False)
    empty = proposer.propose(context_for(target, torch.tensor([4])))  # only the root: nothing to draft from
    assert empty.tree.size == 0 and empty.forwards == 0
