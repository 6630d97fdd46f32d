"""ViT: patch embedding, per-layer tokens and attention maps, clear errors on bad images."""

from dataclasses import replace

import pytest
import torch

from neurips26.nn.vit import PatchEmbedding, ViT, ViTConfig

TINY = ViTConfig(image_size=(8, 12), patch_size=4, in_channels=3, width=16, depth=3, heads=2)


def images(config, batch=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, config.in_channels, *config.image_size, generator=g)


def test_patch_embedding_is_a_linear_map_of_each_patch():
    torch.manual_seed(0)
    embed = PatchEmbedding(in_channels=2, width=5, patch_size=3)
    x = torch.randn(1, 2, 6, 9)
    out = embed(x)
    assert out.shape == (1, 2 * 3, 5)
    # Token (row 1, col 2) is W · vec(patch) + b for the patch at rows 3:6, cols 6:9.
    patch = x[0, :, 3:6, 6:9].reshape(-1)
    w = embed.conv.weight.reshape(5, -1)
    torch.testing.assert_close(out[0, 1 * 3 + 2], w @ patch + embed.conv.bias)


def test_patch_embedding_rejects_non_divisible_images():
    embed = PatchEmbedding(in_channels=3, width=8, patch_size=4)
    with pytest.raises(ValueError, match="not divisible by patch_size 4"):
        embed(torch.randn(1, 3, 10, 8))
    with pytest.raises(ValueError, match="shape"):
        embed(torch.randn(3, 8, 8))
    with pytest.raises(ValueError, match="shape"):
        embed(torch.randn(1, 1, 8, 8))


@pytest.mark.parametrize("class_token", [True, False])
def test_vit_returns_per_layer_tokens_and_normalised_attention_maps(class_token):
    torch.manual_seed(0)
    config = replace(TINY, class_token=class_token)
    model = ViT(config).eval()
    x = images(config)
    out = model(x, return_hidden_states=True, return_attentions=True)
    t = config.num_patches + int(class_token)
    assert config.num_patches == 6 and config.num_tokens == t
    assert out.tokens.shape == (2, t, 16) and out.pooled.shape == (2, 16)
    assert len(out.hidden_states) == config.depth + 1  # the embedding, then one per block
    assert all(h.shape == (2, t, 16) for h in out.hidden_states)
    assert len(out.attentions) == config.depth
    for a in out.attentions:
        assert a.shape == (2, config.heads, t, t)
        assert (a >= 0).all()
        torch.testing.assert_close(a.sum(-1), torch.ones(2, config.heads, t))
    # The final tokens are the last hidden state after LayerNorm.
    torch.testing.assert_close(out.tokens, model.norm(out.hidden_states[-1]))
    # Asking for the maps uses an explicit softmax; without them, fused attention: same numbers.
    plain = model(x)
    assert plain.hidden_states is None and plain.attentions is None
    torch.testing.assert_close(plain.tokens, out.tokens, atol=1e-5, rtol=1e-5)


def test_attention_map_reproduces_the_block_output():
    torch.manual_seed(0)
    model = ViT(TINY).eval()
    out = model(images(TINY), return_hidden_states=True, return_attentions=True)
    block, z = model.blocks[0], out.hidden_states[0]
    # Recompute block 0's attention output from its returned map: proj(A V).
    b, t, d = z.shape
    v = block.attn.qkv(block.norm1(z))[..., 2 * d :].view(b, t, TINY.heads, -1).transpose(1, 2)
    attn_out = block.attn.out((out.attentions[0] @ v).transpose(1, 2).reshape(b, t, d))
    mid = z + attn_out
    expected = mid + block.fc2(torch.nn.functional.gelu(block.fc1(block.norm2(mid))))
    torch.testing.assert_close(out.hidden_states[1], expected)


def test_vit_gradients_reach_every_parameter():
    torch.manual_seed(0)
    model = ViT(TINY)
    model(images(TINY)).pooled.square().sum().backward()
    missing = [n for n, p in model.named_parameters() if p.grad is None or p.grad.abs().sum() == 0]
    assert missing == []


def test_bad_configs_and_images_raise_clear_errors():
    with pytest.raises(ValueError, match="divisible by patch_size"):
        ViTConfig(image_size=30, patch_size=4)
    with pytest.raises(ValueError, match="heads"):
        ViTConfig(width=30, heads=4)
    with pytest.raises(TypeError, match="class_token"):
        ViTConfig(class_token=1)
    assert ViTConfig(image_size=16).image_size == (16, 16)
    model = ViT(TINY)
    with pytest.raises(ValueError, match="not divisible by patch_size"):
        model(torch.randn(1, 3, 9, 12))
    with pytest.raises(ValueError, match="position embedding"):
        model(torch.randn(1, 3, 12, 12))
