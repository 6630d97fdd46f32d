"""Masks and attention weights in the conditioned blocks and the ViT block.

The central invariant (chapter 13): a mask that hides every key outside a subset S of the tokens gives, at
the positions in S, exactly the output of running on the gathered tokens ``x[:, S]`` alone. Defaults
(``mask=None``, no weights) must be bit-identical to the unmasked computation.
"""

from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F

from neurips26.nn.adaln import (
    AdaLNZeroBlock,
    ConcatConditionedBlock,
    ConditionedTransformer,
    ConditionedTransformerConfig,
    _with_condition_token,
)
from neurips26.nn.attention import causal_mask
from neurips26.nn.vit import ViTBlock

TINY = ConditionedTransformerConfig(width=16, heads=2, cond_dim=8, depth=2)
B, T, K = 3, 7, 4  # batch, tokens, size of the kept subset S
TOL = {torch.float32: 1e-6, torch.float64: 1e-12}


def randomise(module, seed=0):
    """Non-zero weights everywhere (AdaLN-Zero's gates included), so no path is trivially the identity."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * (0.3 if p.dim() > 1 else 0.1))
    return module.eval()


def make(kind, dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    if kind == "adaln":
        module = AdaLNZeroBlock(TINY)
    elif kind == "concat":
        module = ConcatConditionedBlock(TINY)
    elif kind == "vit":
        module = ViTBlock(TINY.width, TINY.heads, 32)
    else:
        module = ConditionedTransformer(replace(TINY, conditioning=kind.removeprefix("stack-")))
    return randomise(module.to(dtype), seed)


def run(module, x, c, **kwargs):
    """Call a conditioned block/stack or a ViT block with one signature; returns (x, weights or None)."""
    need = kwargs.pop("need_weights", False)
    if isinstance(module, ViTBlock):
        return module(x, need, **kwargs)
    if isinstance(module, ConditionedTransformer):
        out = module(x, c, return_attentions=need, **kwargs)
    else:
        out = module(x, c, need_weights=need, **kwargs)
    return out if need else (out, None)


def as_list(weights):
    """A stack's list of per-block weights, or one block's weights as a one-element list."""
    return weights if isinstance(weights, list) else [weights]


def toy_batch(dtype=torch.float32, seed=1, tokens=T):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, tokens, TINY.width, generator=g, dtype=dtype)
    c = torch.randn(B, TINY.cond_dim, generator=g, dtype=dtype)
    return x, c


def random_subsets(seed=2):
    """(B, K) sorted token indices, a different subset S per sample."""
    g = torch.Generator().manual_seed(seed)
    return torch.stack([torch.randperm(T, generator=g)[:K].sort().values for _ in range(B)])


def key_mask(subsets, additive=False, dtype=torch.float32):
    """(B, 1, 1, T): key j visible iff j ∈ S (boolean), or 0 / −∞ (additive)."""
    keep = torch.zeros(B, T, dtype=torch.bool).scatter(1, subsets, True)[:, None, None, :]
    if not additive:
        return keep
    return torch.zeros(keep.shape, dtype=dtype).masked_fill(~keep, float("-inf"))


def gather(x, subsets):
    return x.gather(1, subsets.unsqueeze(-1).expand(-1, -1, x.shape[-1]))


# ------------------------------------------------------------------ defaults: exactly the old computation


def old_adaln_forward(block, x, c):
    """The AdaLN-Zero block's forward before masks existed, copied verbatim."""
    shift1, scale1, gate1, shift2, scale2, gate2 = block.modulation(F.silu(c)).chunk(6, dim=-1)
    x = x + gate1.unsqueeze(1) * block.attn(x_mod(block.norm1(x), shift1, scale1))[0]
    x = x + gate2.unsqueeze(1) * block.mlp(x_mod(block.norm2(x), shift2, scale2))
    return x


def old_concat_forward(block, x, c):
    z = torch.cat([block.cond_token(c).unsqueeze(1), x], dim=1)
    z = z + block.attn(block.norm1(z))[0]
    z = z + block.mlp(block.norm2(z))
    return z[:, 1:]


def old_stack_forward(model, x, c):
    old = old_adaln_forward if model.config.conditioning == "adaln" else old_concat_forward
    for block in model.blocks:
        x = old(block, x, c)
    x = model.norm(x)
    if model.final_modulation is not None:
        shift, scale = model.final_modulation(F.silu(c)).chunk(2, dim=-1)
        x = x_mod(x, shift, scale)
    return x


def x_mod(x, shift, scale):
    return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_default_forward_is_bit_identical_to_the_unmasked_computation(dtype):
    x, c = toy_batch(dtype)
    for kind, old in [("adaln", old_adaln_forward), ("concat", old_concat_forward)]:
        block = make(kind, dtype)
        assert torch.equal(block(x, c), old(block, x, c))
        assert torch.equal(block(x, c, mask=None, need_weights=False), old(block, x, c))
    for kind in ["stack-adaln", "stack-concat"]:
        model = make(kind, dtype)
        assert torch.equal(model(x, c), old_stack_forward(model, x, c))
        assert torch.equal(model(x, c, mask=None, return_attentions=False), old_stack_forward(model, x, c))


@pytest.mark.parametrize("kind", ["adaln", "concat", "vit", "stack-adaln", "stack-concat"])
def test_an_all_visible_mask_changes_nothing(kind):
    module = make(kind, torch.float64)
    x, c = toy_batch(torch.float64)
    reference, _ = run(module, x, c)
    for mask in (torch.ones(T, T, dtype=torch.bool), torch.zeros(B, 1, T, T, dtype=torch.float64)):
        out, _ = run(module, x, c, mask=mask)
        torch.testing.assert_close(out, reference, atol=1e-12, rtol=0)
    out, weights = run(module, x, c, need_weights=True)  # explicit softmax instead of the fused kernel
    torch.testing.assert_close(out, reference, atol=1e-12, rtol=0)
    assert weights is not None


# -------------------------------------------------------- masked full forward = gather-based sparse forward


@pytest.mark.parametrize("kind", ["adaln", "concat", "vit", "stack-adaln", "stack-concat"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("additive", [False, True])
@pytest.mark.parametrize("need_weights", [False, True])
def test_key_subset_mask_equals_running_on_the_gathered_tokens(kind, dtype, additive, need_weights):
    module = make(kind, dtype)
    x, c = toy_batch(dtype)
    subsets = random_subsets()
    mask = key_mask(subsets, additive, dtype)
    full, _ = run(module, x, c, mask=mask, need_weights=need_weights)
    sparse, _ = run(module, gather(x, subsets), c, need_weights=need_weights)
    torch.testing.assert_close(gather(full, subsets), sparse, atol=TOL[dtype], rtol=0)
    # ... and the tokens in S really are affected by hiding the others
    unmasked, _ = run(module, x, c)
    assert not torch.allclose(gather(unmasked, subsets), sparse, atol=1e-3)


@pytest.mark.parametrize("kind", ["adaln", "concat", "vit", "stack-adaln", "stack-concat"])
def test_masked_weights_equal_the_gathered_weights(kind):
    module = make(kind, torch.float64)
    x, c = toy_batch(torch.float64)
    subsets = random_subsets()
    _, full = run(module, x, c, mask=key_mask(subsets), need_weights=True)
    _, sparse = run(module, gather(x, subsets), c, need_weights=True)
    for w_full, w_sparse in zip(as_list(full), as_list(sparse), strict=True):
        rows = w_full.gather(2, subsets[:, None, :, None].expand(-1, TINY.heads, -1, T))
        cols = rows.gather(3, subsets[:, None, None, :].expand(-1, TINY.heads, K, -1))
        torch.testing.assert_close(cols, w_sparse, atol=1e-12, rtol=0)


@pytest.mark.parametrize("kind", ["adaln", "concat", "vit", "stack-adaln", "stack-concat"])
def test_causal_mask_prefix_equals_running_on_the_prefix(kind):
    """A query-dependent (T, T) mask: under a causal mask the first k outputs depend only on x[:, :k]."""
    module = make(kind, torch.float64)
    x, c = toy_batch(torch.float64)
    full, _ = run(module, x, c, mask=causal_mask(T))
    prefix, _ = run(module, x[:, :K], c, mask=causal_mask(K))
    torch.testing.assert_close(full[:, :K], prefix, atol=1e-12, rtol=0)


# -------------------------------------------------------------------------------------------- weights


def head_mask(seed=3):
    """(B, H, T, T) boolean, different per sample and head, every query sees at least itself."""
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(B, TINY.heads, T, T, generator=g) < 0.5) | torch.eye(T, dtype=torch.bool)


@pytest.mark.parametrize("kind", ["adaln", "vit", "stack-adaln"])
def test_weights_are_distributions_and_masked_keys_get_zero(kind):
    module = make(kind)
    x, c = toy_batch()
    mask = head_mask()
    out, weights = run(module, x, c, mask=mask, need_weights=True)
    plain, _ = run(module, x, c, mask=mask)
    torch.testing.assert_close(out, plain, atol=1e-5, rtol=1e-5)
    for w in as_list(weights):
        assert w.shape == (B, TINY.heads, T, T)
        assert (w >= 0).all()
        torch.testing.assert_close(w.sum(-1), torch.ones(B, TINY.heads, T), atol=1e-6, rtol=0)
        assert (w[~mask] == 0).all()
        assert (w[mask] > 0).all()


@pytest.mark.parametrize("kind", ["concat", "stack-concat"])
def test_concat_weights_drop_the_condition_token_and_leave_its_share_missing(kind):
    module = make(kind)
    x, c = toy_batch()
    mask = head_mask()
    mask[:, :, 2] = False  # query 2 may see no sequence token at all: it attends to the condition only
    out, weights = run(module, x, c, mask=mask, need_weights=True)
    assert torch.isfinite(out).all()
    plain, _ = run(module, x, c, mask=mask)
    torch.testing.assert_close(out, plain, atol=1e-5, rtol=1e-5)
    for w in as_list(weights):
        assert w.shape == (B, TINY.heads, T, T)
        assert (w >= 0).all()
        assert (w[~mask] == 0).all()
        sums = w.sum(-1)
        assert (sums[:, :, 2] == 0).all()
        others = torch.cat([sums[:, :, :2], sums[:, :, 3:]], dim=-1)
        assert (others > 0).all() and (others < 1).all()  # the condition token took the rest


def test_concat_weights_plus_the_condition_column_sum_to_one():
    block = make("concat", torch.float64)
    x, c = toy_batch(torch.float64)
    mask = head_mask()
    _, weights = block(x, c, mask=mask, need_weights=True)
    z = torch.cat([block.cond_token(c).unsqueeze(1), x], dim=1)
    _, full = block.attn(block.norm1(z), mask=_with_condition_token(mask, T), return_weights=True)
    torch.testing.assert_close(weights, full[..., 1:, 1:], atol=0, rtol=0)
    assert (full[..., 1:, 0] > 0).all()  # every query gives the condition token some weight
    torch.testing.assert_close(
        full[..., 1:, 0] + weights.sum(-1), torch.ones(B, TINY.heads, T, dtype=torch.float64)
    )


def test_condition_token_extension_of_a_mask():
    keep = torch.tensor([[True, False, False], [False, True, False], [True, True, False]])
    extended = _with_condition_token(keep, 3)
    assert extended.shape == (1, 1, 4, 4)
    assert extended[0, 0, :, 0].all()  # every query sees the condition token
    assert torch.equal(extended[0, 0, 1:, 1:], keep)
    # the condition token sees itself and every key some query may see (key 2 is seen by nobody)
    assert extended[0, 0, 0].tolist() == [True, True, True, False]
    additive = torch.zeros(3, 3).masked_fill(~keep, float("-inf"))
    ext_add = _with_condition_token(additive.expand(2, 3, 3, 3), 3)  # (B, H, T, T) keeps B and H
    assert ext_add.shape == (2, 3, 4, 4)
    assert torch.equal(torch.isfinite(ext_add[0, 0]), extended[0, 0])
    # a key mask (B, 1, 1, T) broadcasts over queries first
    key = torch.tensor([True, False, True])[None, None, None, :].expand(2, 1, 1, 3)
    ext_key = _with_condition_token(key, 3)
    assert ext_key.shape == (2, 1, 4, 4)
    assert ext_key[:, :, 1:, 1:].all(dim=2).tolist() == [[[True, False, True]]] * 2


# ------------------------------------------------------------------------------- identity at initialisation


def test_adaln_zero_is_still_the_identity_at_init_with_a_mask():
    torch.manual_seed(0)
    block = AdaLNZeroBlock(TINY)
    x, c = toy_batch()
    for mask in (key_mask(random_subsets()), head_mask(), causal_mask(T), key_mask(random_subsets(), True)):
        assert torch.equal(block(x, c, mask=mask), x)
        out, weights = block(x, c, mask=mask, need_weights=True)
        assert torch.equal(out, x) and weights.shape == (B, TINY.heads, T, T)
    model = ConditionedTransformer(TINY)
    expected = F.layer_norm(x, (TINY.width,), eps=1e-6)
    assert torch.equal(model(x, c, mask=head_mask()), expected)
    out, attentions = model(x, c, mask=head_mask(), return_attentions=True)
    assert torch.equal(out, expected) and len(attentions) == TINY.depth


# ------------------------------------------------------------------------------------------------ errors


@pytest.mark.parametrize("kind", ["adaln", "concat", "vit", "stack-adaln", "stack-concat"])
def test_bad_masks_raise_clear_errors(kind):
    module = make(kind)
    x, c = toy_batch()
    for bad in (
        torch.ones(T + 1, T + 1, dtype=torch.bool),
        torch.ones(B + 1, 1, T, T, dtype=torch.bool),
        torch.ones(1, TINY.heads + 1, T, T),
        torch.ones(1, 1, 1, 1, T, dtype=torch.bool),
    ):
        with pytest.raises(ValueError, match="mask") as info:
            run(module, x, c, mask=bad)
        assert f"{T}, {T})" in str(info.value)  # shapes over the T sequence tokens, even for concat
    with pytest.raises(TypeError, match="mask"):
        run(module, x, c, mask=torch.ones(T, T, dtype=torch.long))
    with pytest.raises(TypeError, match="mask"):
        run(module, x, c, mask=[[True] * T] * T)


def test_non_bool_weight_flags_raise():
    x, c = toy_batch()
    with pytest.raises(TypeError, match="need_weights"):
        make("adaln")(x, c, need_weights=1)
    with pytest.raises(TypeError, match="need_weights"):
        make("concat")(x, c, need_weights="yes")
    with pytest.raises(TypeError, match="return_attentions"):
        make("stack-adaln")(x, c, return_attentions=1)
