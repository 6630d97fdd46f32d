"""Rank head (§3.3): class buckets, the target's rank, the 15 logit features, detached inputs."""

from __future__ import annotations

import pytest
import torch

from neurips26.specblock.rank_head import NUM_FEATURES, RankHead, logit_features, rank_class, target_rank


def test_rank_buckets_on_ints_and_tensors():
    ranks = [1, 2, 4, 5, 10, 11, 57]
    expected = [0, 1, 1, 2, 2, 3, 3]
    assert [rank_class(r) for r in ranks] == expected
    assert rank_class(torch.tensor(ranks)).tolist() == expected
    with pytest.raises(ValueError, match="rank"):
        rank_class(0)
    with pytest.raises(TypeError, match="rank"):
        rank_class(torch.tensor([1.0]))


def test_rank_of_the_target_token_in_hand_built_logits():
    logits = torch.arange(30, 0, -1, dtype=torch.float64)  # token v has rank v + 1
    for token, rank, cls in [
        (0, 1, 0),
        (1, 2, 1),
        (3, 4, 1),
        (4, 5, 2),
        (9, 10, 2),
        (10, 11, 3),
        (29, 30, 3),
    ]:
        got = target_rank(logits, torch.tensor(token))
        assert int(got) == rank and rank_class(got).item() == cls


def test_logit_features_match_their_definition():
    logits = torch.randn(3, 20, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    phi = logit_features(logits)
    assert phi.shape == (3, NUM_FEATURES)
    z = logits.sort(-1, descending=True).values
    log_p = torch.log_softmax(logits, -1).sort(-1, descending=True).values  # V = 20: top-20 softmax is exact
    torch.testing.assert_close(phi[:, :10], log_p[:, :10])
    torch.testing.assert_close(
        phi[:, 10:13], torch.stack([z[:, 0] - z[:, 1], z[:, 0] - z[:, 2], z[:, 0] - z[:, 4]], -1)
    )
    torch.testing.assert_close(phi[:, 13], log_p[:, 0].exp())
    torch.testing.assert_close(phi[:, 14], -(log_p.exp() * log_p).sum(-1))
    with pytest.raises(ValueError, match="at least 20"):
        logit_features(torch.zeros(2, 10))


def test_rank_head_shapes_and_no_gradient_into_its_inputs():
    head = RankHead(8).double()
    hidden = torch.randn(2, 4, 8, dtype=torch.float64, requires_grad=True)
    logits = torch.randn(2, 4, 25, dtype=torch.float64, requires_grad=True)
    out = head(hidden, logits)
    assert out.shape == (2, 4, 4)
    out.sum().backward()
    assert hidden.grad is None and logits.grad is None
    assert head.net[0].weight.grad is not None
