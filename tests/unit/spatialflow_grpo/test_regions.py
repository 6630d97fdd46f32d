"""regions: token weights from pixel masks, advantage maps and the shuffled-token control."""

from __future__ import annotations

import pytest
import torch

from neurips26.spatialflow_grpo import regions as G


def partition(seed: int = 0, b: int = 3) -> torch.Tensor:
    """Masks (b, 4, 16, 16): a background and three squares (the last slot unused in row 0)."""
    masks = torch.zeros(b, 4, 16, 16, dtype=torch.float64)
    g = torch.Generator().manual_seed(seed)
    for i in range(b):
        masks[i, 0] = 1.0
        for k, (r, c) in enumerate([(1, 1), (6, 9), (11, 4)], start=1):
            if i == 0 and k == 3:
                continue
            side = int(torch.randint(3, 6, (1,), generator=g))
            masks[i, k, r : r + side, c : c + side] = 1.0
            masks[i, 0, r : r + side, c : c + side] = 0.0
    return masks


def test_token_weights_sum_to_one_and_keep_the_area():
    masks = partition()
    w = G.token_weights(masks)
    assert w.shape == (3, 4, 64)
    assert torch.allclose(w.sum(1), torch.ones(3, 64, dtype=torch.float64))
    assert torch.allclose(G.region_areas(w), masks.sum(dim=(2, 3)) / 4)  # pixel area / token area
    assert torch.equal(w[0, 3], torch.zeros(64, dtype=torch.float64))
    # a 3x3 square at (1, 1) covers token (0, 0) by one pixel in four, token (1, 1) fully
    square = torch.zeros(1, 2, 16, 16, dtype=torch.float64)
    square[0, 0] = 1.0
    square[0, 1, 1:4, 1:4], square[0, 0, 1:4, 1:4] = 1.0, 0.0
    ws = G.token_weights(square)[0, 1].reshape(8, 8)
    assert ws[0, 0] == 0.25 and ws[1, 1] == 1.0 and ws[0, 1] == 0.5 and ws[2, 2] == 0.0


def test_advantage_map_mixes_region_advantages_by_coverage():
    w = G.token_weights(partition())
    adv = torch.tensor([[0.5, -1.0, 2.0, 0.0]] * 3, dtype=torch.float64)
    a = G.advantage_map(w, adv)
    assert torch.allclose(a, (w * adv[:, :, None]).sum(1))  # weights sum to 1 per token
    pure = w.max(dim=1).values == 1.0
    owner = w.argmax(dim=1)
    assert torch.equal(a[pure], adv.gather(1, owner)[pure])
    assert torch.allclose(
        G.advantage_map(w, torch.full_like(adv, 0.7)), torch.full((3, 64), 0.7, dtype=torch.float64)
    )


def test_shuffled_tokens_keep_each_regions_weights_and_share_a_permutation_per_group():
    w = G.token_weights(partition(1, 4))
    w = torch.cat([w[:2].repeat_interleave(2, 0)])  # two conditions, two members each
    s = G.shuffle_tokens(w, group_size=2, seed=5)
    assert torch.equal(torch.sort(s, dim=-1).values, torch.sort(w, dim=-1).values)  # same multiset
    assert torch.allclose(s.sum(1), torch.ones(4, 64, dtype=torch.float64))
    assert torch.equal(s[0], s[1]) and torch.equal(s[2], s[3])
    assert not torch.equal(s, w)
    assert torch.equal(G.shuffle_tokens(w, 2, 5), s)


def test_bad_inputs_name_the_argument():
    masks = partition()
    with pytest.raises(TypeError, match="masks"):
        G.token_weights(masks.bool())
    with pytest.raises(ValueError, match="masks"):
        G.token_weights(masks[:, :2])  # no longer a partition
    with pytest.raises(ValueError, match="masks"):
        G.token_weights(masks[0])
    with pytest.raises(ValueError, match="patch"):
        G.token_weights(masks, patch=3)
    w = G.token_weights(masks)
    with pytest.raises(ValueError, match="advantages"):
        G.advantage_map(w, torch.zeros(3, 3))
    with pytest.raises(ValueError, match="group_size"):
        G.shuffle_tokens(w, 2, 0)
    with pytest.raises(TypeError, match="weights"):
        G.shuffle_tokens(w.numpy(), 1, 0)
