"""Multi-head attention: masks, the fused and explicit paths, the key/value cache and its operations."""

import pytest
import torch

from neurips26.nn.attention import KVCache, MultiHeadAttention, causal_mask, check_mask, tree_mask
from neurips26.nn.embeddings import RotaryEmbedding

WIDTH, HEADS, TOL = 32, 4, 1e-5


def make_attention(rotary=True, seed=0):
    torch.manual_seed(seed)
    attention = MultiHeadAttention(
        WIDTH, HEADS, rotary=RotaryEmbedding(WIDTH // HEADS, 64) if rotary else None
    )
    with torch.no_grad():  # sharper than PyTorch's default init, so masks matter visibly
        attention.qkv.weight.mul_(4.0)
    return attention.eval()


def inputs(batch, length, seed=0):
    return torch.randn(batch, length, WIDTH, generator=torch.Generator().manual_seed(seed))


def test_causal_mask_layout_with_and_without_cached_keys():
    expected = torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=torch.bool)
    assert torch.equal(causal_mask(3), expected)
    # two new queries after three cached keys: each sees the past and itself
    assert torch.equal(causal_mask(2, 5), torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], dtype=torch.bool))
    with pytest.raises(ValueError, match="key_length"):
        causal_mask(4, 3)


def test_tree_mask_sees_exactly_the_prefix_and_the_ancestors():
    #   prefix(2) ── 0 ── 1 ── 3
    #                 └── 2
    #             └── 4
    mask, positions = tree_mask([-1, 0, 0, 1, -1], prefix_length=2)
    expected = torch.tensor(
        [
            [1, 1, 1, 0, 0, 0, 0],
            [1, 1, 1, 1, 0, 0, 0],
            [1, 1, 1, 0, 1, 0, 0],
            [1, 1, 1, 1, 0, 1, 0],
            [1, 1, 0, 0, 0, 0, 1],
        ],
        dtype=torch.bool,
    )
    assert torch.equal(mask, expected)
    assert positions.tolist() == [2, 3, 3, 4, 2]  # prefix length + depth; siblings share
    # a chain is the causal mask
    chain, chain_positions = tree_mask(torch.tensor([-1, 0, 1, 2]))
    assert torch.equal(chain, causal_mask(4)) and chain_positions.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match=r"parents\[1\]"):
        tree_mask([-1, 1])
    with pytest.raises(ValueError, match="parents"):
        tree_mask([])


@pytest.mark.parametrize("rotary", [True, False])
def test_full_causal_mask_equals_token_by_token_with_the_cache(rotary):
    attention, x = make_attention(rotary), inputs(2, 12)
    full, _ = attention(x, mask=causal_mask(12))
    cache = KVCache(1)
    steps = [attention(x[:, t : t + 1], cache=cache)[0] for t in range(12)]  # one query: no mask needed
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=0, atol=TOL)
    assert cache.keys[0].shape == (2, HEADS, 12, WIDTH // HEADS)


def test_explicit_and_fused_paths_agree_and_weights_are_masked_distributions():
    attention, x = make_attention(), inputs(2, 7)
    mask = causal_mask(7)
    fused, none = attention(x, mask=mask)
    explicit, weights = attention(x, mask=mask, return_weights=True)
    assert none is None and weights.shape == (2, HEADS, 7, 7)
    torch.testing.assert_close(explicit, fused, rtol=0, atol=TOL)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, HEADS, 7))
    assert torch.all(weights[..., ~mask] == 0)
    # the weights are not uniform: the test model really attends
    assert weights[..., -1, :].amax() > 2.0 / 7


def test_boolean_and_additive_masks_are_the_same_mask():
    attention, x = make_attention(), inputs(1, 6)
    boolean = torch.rand(1, HEADS, 6, 6, generator=torch.Generator().manual_seed(0)) > 0.4
    boolean |= torch.eye(6, dtype=torch.bool)  # every query keeps at least itself
    additive = torch.zeros(boolean.shape).masked_fill(~boolean, float("-inf"))
    for return_weights in (False, True):
        a = attention(x, mask=boolean, return_weights=return_weights)[0]
        b = attention(x, mask=additive, return_weights=return_weights)[0]
        torch.testing.assert_close(a, b, rtol=0, atol=TOL)


def test_padding_mask_hides_padded_keys():
    attention, x = make_attention(rotary=False), inputs(2, 6)
    keep = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], dtype=torch.bool)
    mask = keep[:, None, None, :]  # (B, 1, 1, T_k)
    noisy = x.clone()
    noisy[0, 4:] = 100.0 * torch.randn(2, WIDTH)  # garbage in the padded slots
    clean_out, _ = attention(x, mask=mask)
    noisy_out, _ = attention(noisy, mask=mask)
    torch.testing.assert_close(noisy_out[0, :4], clean_out[0, :4], rtol=0, atol=TOL)
    torch.testing.assert_close(noisy_out[1], clean_out[1], rtol=0, atol=0)


def test_without_mask_or_positions_attention_is_permutation_equivariant():
    attention, x = make_attention(rotary=False), inputs(1, 8)
    perm = torch.randperm(8, generator=torch.Generator().manual_seed(1))
    out, _ = attention(x)
    permuted_out, _ = attention(x[:, perm])
    torch.testing.assert_close(permuted_out, out[:, perm], rtol=0, atol=TOL)


def test_cache_truncate_gather_select_and_copy():
    cache = KVCache(2)
    assert (cache.length, cache.batch_size, len(cache)) == (0, None, 0)
    keys = torch.arange(3 * 2 * 5 * 4, dtype=torch.float32).reshape(3, 2, 5, 4)
    for layer in range(2):
        full_keys, full_values = cache.append(layer, keys[:, :, :3], -keys[:, :, :3])
        assert full_keys.shape == (3, 2, 3, 4)
        full_keys, _ = cache.append(layer, keys[:, :, 3:], -keys[:, :, 3:])
        assert torch.equal(full_keys, keys)
    assert (cache.length, cache.batch_size) == (5, 3)

    branch = cache.copy()
    branch.truncate(2)
    assert branch.length == 2 and cache.length == 5  # the original is untouched
    assert torch.equal(branch.keys[1], keys[:, :, :2]) and torch.equal(branch.values[1], -keys[:, :, :2])

    gathered = cache.copy()
    gathered.gather([0, 1, 4])
    assert torch.equal(gathered.keys[0], keys[:, :, [0, 1, 4]])

    cache.select([2, 0])
    assert torch.equal(cache.keys[1], keys[[2, 0]]) and cache.batch_size == 2
    assert "length=5" in repr(cache)


def test_cache_rejects_bad_arguments():
    cache = KVCache(1)
    cache.append(0, torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4))
    with pytest.raises(ValueError, match="length"):
        cache.truncate(4)
    with pytest.raises(ValueError, match="layer"):
        cache.append(1, torch.zeros(1, 2, 1, 4), torch.zeros(1, 2, 1, 4))
    with pytest.raises(ValueError, match="keys and values"):
        cache.append(0, torch.zeros(1, 2, 1, 4), torch.zeros(1, 2, 2, 4))
    with pytest.raises(ValueError, match="layer 0"):
        cache.append(0, torch.zeros(1, 3, 1, 4), torch.zeros(1, 3, 1, 4))
    with pytest.raises(ValueError, match="indices"):
        cache.gather([0, 3])
    with pytest.raises(ValueError, match="batch_indices"):
        cache.select([1])
    with pytest.raises(ValueError, match="num_layers"):
        KVCache(0)


def test_attention_rejects_bad_input():
    with pytest.raises(ValueError, match="heads must divide width"):
        MultiHeadAttention(30, 4)
    with pytest.raises(ValueError, match="rotary"):
        MultiHeadAttention(32, 4, rotary=RotaryEmbedding(4, 8))
    attention, x = make_attention(), inputs(2, 5)
    with pytest.raises(ValueError, match="x must"):
        attention(x[..., :7])
    with pytest.raises(ValueError, match="mask"):
        attention(x, mask=torch.ones(5, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="mask"):
        attention(x, mask=torch.ones(1, 1, 1, 5, 5, dtype=torch.bool))
    with pytest.raises(TypeError, match="mask"):
        attention(x, mask=torch.ones(5, 5, dtype=torch.int64))
    with pytest.raises(TypeError, match="mask"):
        check_mask([[True]], (1, 1, 1, 1))
    with pytest.raises(ValueError, match="positions"):
        attention(x, positions=torch.arange(4))
    with pytest.raises(ValueError, match="positions"):
        attention(x, positions=torch.arange(5) + 64)
    cache = KVCache(1)
    attention(x, cache=cache)
    with pytest.raises(ValueError, match="batch size"):
        attention(x[:1], cache=cache)
    with pytest.raises(ValueError, match="mask"):  # with 5 cached keys the mask must span 5 + 5
        attention(x, cache=cache, mask=causal_mask(5))
