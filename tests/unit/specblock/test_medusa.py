"""Medusa baseline: head alignment, loss weights, gradients, fixed sparse tree."""

from __future__ import annotations

import math

import pytest
import torch

from neurips26.specblock.baselines.medusa import (
    MedusaConfig,
    MedusaHeads,
    MedusaProposer,
    default_profile,
    medusa_head_losses,
    medusa_loss,
    sparse_tree_choices,
    train_medusa,
)
from neurips26.specblock.protocol import DecodeContext, DraftTree, Proposer, target_outputs
from tests.unit.specblock.tiny import VOCAB, context_for, tiny_data, tiny_target


def test_untrained_heads_repeat_the_target_and_shapes():
    target = tiny_target()
    heads = MedusaHeads(target, MedusaConfig(heads=3))
    tokens, logits, hidden, _ = tiny_data(target)
    out = heads(hidden[:, :, -1])
    assert out.shape == (3, 12, 3, VOCAB)
    for k in range(3):  # zero residual block + the target's head on the target's final norm
        torch.testing.assert_close(out[:, :, k], logits, rtol=1e-5, atol=1e-6)
    assert not any(p.requires_grad for p in heads.norm.parameters())


def test_head_losses_use_the_teacher_at_i_plus_1_plus_k():
    target = tiny_target(torch.float64)
    heads = MedusaHeads(target, MedusaConfig(heads=3))
    torch.nn.init.normal_(heads.blocks[1].weight, 0, 0.3, generator=torch.Generator().manual_seed(0))
    data = tiny_data(target)
    tokens, logits, hidden, loss_mask = data
    out = heads(hidden[:, :, -1])
    expected = []
    for k in range(3):  # head k at row i predicts x_{i+2+k}: teacher softmax at i+1+k, mask loss_mask[i+1+k]
        terms = [
            -(torch.softmax(logits[b, i + 1 + k], -1) * torch.log_softmax(out[b, i, k], -1)).sum()
            for b in range(3)
            for i in range(12 - 1 - k)
            if loss_mask[b, i + 1 + k]
        ]
        expected.append(torch.stack(terms).mean())
    torch.testing.assert_close(medusa_head_losses(heads, data), torch.stack(expected), rtol=0, atol=1e-12)
    total = sum(0.8**k * expected[k] for k in range(3))
    torch.testing.assert_close(medusa_loss(heads, data), total, rtol=0, atol=1e-12)


def test_alignment_hand_made_oracle():
    """Heads trained on one sequence: at context x_0 … x_{L-1} (root x_{L-1}) head k drafts x_{L+k}."""
    target = tiny_target()
    seq = torch.randint(0, VOCAB, (1, 16), generator=torch.Generator().manual_seed(3))
    _, hidden = target_outputs(target, seq)
    teacher = 10.0 * torch.nn.functional.one_hot(torch.roll(seq, -1, 1), VOCAB).float()  # j predicts x_{j+1}
    mask = torch.ones(1, 16, dtype=torch.bool)
    mask[:, -1] = False
    heads, _ = train_medusa(
        target,
        (seq, teacher, hidden, mask),
        MedusaConfig(heads=3),
        steps=150,
        batch=1,
        lr=3e-2,
        progress=False,
    )
    proposer = MedusaProposer(heads, choices=[(0,), (0, 0), (0, 0, 0)])
    for length in (5, 9):
        tree = proposer.propose(context_for(target, seq[0, :length])).tree
        assert list(tree.tokens) == seq[0, length : length + 3].tolist()
        assert tree.parents == (-1, 0, 1)


def test_medusa_tree_is_valid_with_one_forward():
    target = tiny_target()
    heads = MedusaHeads(target, MedusaConfig(heads=4))
    torch.nn.init.normal_(heads.blocks[2].weight, 0, 0.5, generator=torch.Generator().manual_seed(1))
    proposer = MedusaProposer(heads, topk=5, count=40)
    assert isinstance(proposer, Proposer)
    seq = torch.randint(0, VOCAB, (7,), generator=torch.Generator().manual_seed(2))
    logp = torch.log_softmax(heads(target_outputs(target, seq[None, :-1])[1][0, -1, -1]), -1)  # (K, V)
    for total in (1, 10, 40, 90):
        proposal = proposer.propose(context_for(target, seq, total=total))
        tree = proposal.tree
        assert isinstance(tree, DraftTree)
        assert proposal.forwards == 1
        assert tree.size == min(total, 40)
        depths = tree.depths()
        assert max(depths) <= 4
        for u, p in enumerate(tree.parents):  # score = parent's + head (depth-1)'s log-prob of the token
            parent_score = 0.0 if p < 0 else tree.scores[p]
            expected = parent_score + float(logp[depths[u] - 1, tree.tokens[u]].detach())
            assert tree.scores[u] == pytest.approx(expected, abs=1e-5)
        for p in set(tree.parents):
            kids = [tree.tokens[u] for u, q in enumerate(tree.parents) if q == p]
            assert len(set(kids)) == len(kids)


def test_sparse_tree_choices_are_the_most_probable_prefix_closed_paths():
    profile = [[0.6, 0.3, 0.1], [0.5, 0.2], [0.4]]
    choices = sparse_tree_choices(profile, 8)
    assert len(choices) == 8
    weights = [math.prod(profile[k][r] for k, r in enumerate(c)) for c in choices]
    assert weights == sorted(weights, reverse=True)
    seen = set()
    for c in choices:
        assert len(c) == 1 or c[:-1] in seen  # the parent comes first
        seen.add(c)
    # brute force: no path outside the list beats the last one taken
    every = [(a,) for a in range(3)] + [(a, b) for a in range(3) for b in range(2)]
    every += [(a, b, 0) for a in range(3) for b in range(2)]
    left = [math.prod(profile[k][r] for k, r in enumerate(c)) for c in every if c not in seen]
    assert max(left) <= weights[-1] + 1e-12
    assert choices[:3] == [(0,), (0, 0), (1,)]
    assert sparse_tree_choices(profile, 100) == sparse_tree_choices(profile, 100)  # deterministic
    assert len(sparse_tree_choices(profile, 100)) == 3 + 6 + 6  # every path exists once
    assert default_profile(2, 3)[1][0] == pytest.approx(0.6 * 0.8)


def test_medusa_loss_gradient_matches_finite_differences():
    target = tiny_target(torch.float64)
    heads = MedusaHeads(target, MedusaConfig(heads=2))
    for block in heads.blocks:
        torch.nn.init.normal_(block.weight, 0, 0.3, generator=torch.Generator().manual_seed(5))
    data = tiny_data(target, batch=2, length=8)
    params = [p for p in heads.parameters() if p.requires_grad]
    grads = torch.autograd.grad(medusa_loss(heads, data), params)
    direction = [
        torch.randn(p.shape, generator=torch.Generator().manual_seed(6), dtype=p.dtype) for p in params
    ]
    analytic = sum((g * d).sum() for g, d in zip(grads, direction, strict=True))
    eps = 1e-6
    with torch.no_grad():
        for p, d in zip(params, direction, strict=True):
            p.add_(eps * d)
        up = medusa_loss(heads, data)
        for p, d in zip(params, direction, strict=True):
            p.sub_(2 * eps * d)
        down = medusa_loss(heads, data)
    assert float((up - down) / (2 * eps)) == pytest.approx(float(analytic), rel=1e-6, abs=1e-9)


def test_training_is_deterministic_and_keeps_the_norm_frozen():
    target = tiny_target()
    data = tiny_data(target, batch=6)
    a, ha = train_medusa(target, data, MedusaConfig(heads=2), steps=5, batch=3, seed=1, progress=False)
    b, hb = train_medusa(target, data, MedusaConfig(heads=2), steps=5, batch=3, seed=1, progress=False)
    assert ha.loss == hb.loss
    for pa, pb in zip(a.state_dict().values(), b.state_dict().values(), strict=True):
        assert torch.equal(pa, pb)
    assert torch.equal(a.norm.weight, target.final_norm.weight)
    assert a.blocks[0].weight.abs().sum() > 0


@pytest.mark.parametrize(("kwargs", "name"), [({"heads": 0}, "heads"), ({"gamma": 0.0}, "gamma")])
def test_bad_config_names_the_field(kwargs, name):
    with pytest.raises(ValueError, match=name):
        MedusaConfig(**kwargs)


def test_bad_inputs_name_the_argument():
    target = tiny_target()
    heads = MedusaHeads(target, MedusaConfig(heads=2))
    with pytest.raises(TypeError, match="target"):
        MedusaHeads(None)
    with pytest.raises(ValueError, match="topk"):
        MedusaProposer(heads, topk=0)
    with pytest.raises(ValueError, match="count"):
        MedusaProposer(heads, count=0)
    with pytest.raises(ValueError, match=r"choices\[1\]"):
        MedusaProposer(heads, choices=[(0,), (1, 0)])  # parent (1,) missing
    with pytest.raises(ValueError, match=r"choices\[0\]"):
        MedusaProposer(heads, choices=[(0, 0, 0)])  # deeper than the 2 heads
    with pytest.raises(ValueError, match=r"profile\[0\]\[1\]"):
        sparse_tree_choices([[0.5, 0.0]], 3)
    proposer = MedusaProposer(heads)
    seq = torch.tensor([1, 2, 3])
    good = context_for(target, seq)
    with pytest.raises(ValueError, match="context.hidden"):
        proposer.propose(DecodeContext(seq, good.hidden[:, :2], 0, 60))
    with pytest.raises(ValueError, match="context.total_tokens"):
        proposer.propose(DecodeContext(seq, good.hidden, 0, -1))
    with pytest.raises(ValueError, match="steps"):
        train_medusa(target, tiny_data(target), steps=0, progress=False)
    with pytest.raises(ValueError, match="data.hidden"):
        data = tiny_data(target)
        train_medusa(target, (data[0], data[1], data[2][..., :5], data[3]), steps=1, progress=False)
