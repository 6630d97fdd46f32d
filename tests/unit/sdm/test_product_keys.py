"""Product-key top-k is the exact top-k of the n × n grid of sums, ties by index, and carries gradients."""

import pytest
import torch

from neurips26.sdm.product_keys import brute_force_topk, product_key_topk


@pytest.mark.parametrize(("n", "k"), [(1, 1), (4, 3), (4, 16), (5, 7), (16, 8), (16, 128), (32, 8)])
def test_equals_brute_force(n, k):
    gen = torch.Generator().manual_seed(n * 100 + k)
    z1, z2 = (
        torch.randn(20, n, generator=gen, dtype=torch.float64),
        torch.randn(20, n, generator=gen, dtype=torch.float64),
    )
    idx, scores = product_key_topk(z1, z2, k)
    ref_idx, ref_scores = brute_force_topk(z1, z2, k)
    assert torch.equal(idx, ref_idx)
    assert torch.equal(scores, ref_scores)
    assert idx.shape == (20, k) and all(len(set(row.tolist())) == k for row in idx)
    assert bool((scores[:, :-1] >= scores[:, 1:]).all())  # best first


@pytest.mark.parametrize(("n", "k"), [(4, 3), (4, 9), (6, 5), (8, 20)])
def test_ties_are_broken_by_index_as_brute_force(n, k):
    gen = torch.Generator().manual_seed(k)
    z1 = torch.randint(0, 3, (200, n), generator=gen).double()
    z2 = torch.randint(0, 3, (200, n), generator=gen).double()
    idx, _ = product_key_topk(z1, z2, k)
    assert torch.equal(idx, brute_force_topk(z1, z2, k)[0])
    # among equal scores the smaller index comes first
    grid = (z1[:, :, None] + z2[:, None, :]).flatten(1)
    for row, g in zip(idx, grid, strict=True):
        s = g[row]
        for a in range(k - 1):
            if s[a] == s[a + 1]:
                assert row[a] < row[a + 1]


def test_scores_carry_gradients_to_both_halves():
    z1 = torch.randn(3, 6, dtype=torch.float64, requires_grad=True)
    z2 = torch.randn(3, 6, dtype=torch.float64, requires_grad=True)
    idx, scores = product_key_topk(z1, z2, 4)
    scores.sum().backward()
    rows, cols = idx // 6, idx % 6
    expect1 = torch.zeros(3, 6, dtype=torch.float64).scatter_add(1, rows, torch.ones_like(scores))
    expect2 = torch.zeros(3, 6, dtype=torch.float64).scatter_add(1, cols, torch.ones_like(scores))
    assert torch.equal(z1.grad, expect1) and torch.equal(z2.grad, expect2)


def test_bad_inputs():
    z = torch.randn(2, 4)
    with pytest.raises(TypeError, match="z1"):
        product_key_topk([1.0], z, 2)
    with pytest.raises(ValueError, match="z2"):
        product_key_topk(z, torch.randn(2, 5), 2)
    with pytest.raises(ValueError, match="k"):
        product_key_topk(z, z, 17)
    with pytest.raises(ValueError, match="k"):
        product_key_topk(z, z, 0)
    with pytest.raises(ValueError, match="z1"):
        product_key_topk(torch.ones(2, 4, dtype=torch.long), z, 2)
