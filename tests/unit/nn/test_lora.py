"""LoRA: disabled or rank 0 equals the base model exactly; merge/unmerge round-trips; only adapters train."""

import copy

import pytest
import torch
from torch import nn

from neurips26.nn.lora import (
    LoRALinear,
    apply_lora,
    lora_modules,
    lora_parameters,
    merge_lora,
    set_lora_enabled,
    unmerge_lora,
)
from neurips26.nn.vit import ViT, ViTConfig

TINY_VIT = ViTConfig(image_size=8, patch_size=4, in_channels=3, width=16, depth=2, heads=2)


def base_and_adapted(rank=4, alpha=8.0, targets=("qkv", "fc1")):
    torch.manual_seed(0)
    base = ViT(TINY_VIT).eval()
    adapted = copy.deepcopy(base)
    apply_lora(adapted, targets, rank=rank, alpha=alpha, seed=1)
    return base, adapted


def perturb_adapters(model, seed=2):
    """Give every B a non-zero value (as training would), so the update is not trivially zero."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in lora_modules(model):
            m.lora_B.copy_(torch.randn(m.lora_B.shape, generator=g))


def images(seed=0):
    return torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(seed))


def test_apply_lora_wraps_the_named_linears_and_freezes_everything_else():
    base, adapted = base_and_adapted()
    wrapped = [n for n, m in adapted.named_modules() if isinstance(m, LoRALinear)]
    assert wrapped == ["blocks.0.attn.qkv", "blocks.0.fc1", "blocks.1.attn.qkv", "blocks.1.fc1"]
    trainable = {id(p) for p in adapted.parameters() if p.requires_grad}
    assert trainable == {id(p) for p in lora_parameters(adapted)}
    assert len(lora_parameters(adapted)) == 2 * len(wrapped)
    # rank 4 on qkv (16 → 48) and fc1 (16 → 64): r (in + out) each
    assert sum(p.numel() for p in lora_parameters(adapted)) == 2 * 4 * ((16 + 48) + (16 + 64))


def test_initial_adapter_equals_the_base_model_because_b_is_zero():
    base, adapted = base_and_adapted()
    m = lora_modules(adapted)[0]
    assert torch.count_nonzero(m.lora_B) == 0 and torch.count_nonzero(m.lora_A) > 0
    torch.testing.assert_close(adapted(images()).tokens, base(images()).tokens)


def test_disabled_adapter_equals_the_base_model_exactly():
    base, adapted = base_and_adapted()
    perturb_adapters(adapted)
    x = images()
    assert not torch.allclose(adapted(x).tokens, base(x).tokens)
    set_lora_enabled(adapted, False)
    assert torch.equal(adapted(x).tokens, base(x).tokens)
    set_lora_enabled(adapted, True)
    assert not torch.allclose(adapted(x).tokens, base(x).tokens)


def test_rank_zero_equals_the_base_model_exactly():
    base, adapted = base_and_adapted(rank=0)
    assert sum(p.numel() for p in lora_parameters(adapted)) == 0
    assert torch.equal(adapted(images()).tokens, base(images()).tokens)


def test_merge_then_unmerge_restores_the_weights_and_merged_forward_matches():
    base, adapted = base_and_adapted()
    perturb_adapters(adapted)
    x = images()
    before = {n: p.detach().clone() for n, p in adapted.named_parameters()}
    enabled_out = adapted(x).tokens
    merge_lora(adapted)
    m = lora_modules(adapted)[0]
    assert m.merged and not torch.allclose(m.base.weight, before["blocks.0.attn.qkv.base.weight"])
    torch.testing.assert_close(adapted(x).tokens, enabled_out, atol=1e-5, rtol=1e-5)
    unmerge_lora(adapted)
    for n, p in adapted.named_parameters():
        torch.testing.assert_close(p, before[n], atol=1e-6, rtol=0)
    torch.testing.assert_close(adapted(x).tokens, enabled_out, atol=1e-5, rtol=1e-5)


def test_training_moves_only_the_adapters():
    base, adapted = base_and_adapted()
    frozen = {n: p.detach().clone() for n, p in adapted.named_parameters() if not p.requires_grad}
    opt = torch.optim.SGD(lora_parameters(adapted), lr=0.1)
    for _ in range(2):  # B = 0 at first, so A moves from the second step on
        opt.zero_grad()
        adapted(images()).pooled.square().sum().backward()
        opt.step()
    for n, p in adapted.named_parameters():
        if n in frozen:
            assert p.grad is None and torch.equal(p, frozen[n])
    m = lora_modules(adapted)[0]
    assert m.lora_A.grad.abs().sum() > 0 and torch.count_nonzero(m.lora_B) > 0


def test_lora_linear_computes_the_scaled_low_rank_update():
    torch.manual_seed(0)
    layer = LoRALinear(nn.Linear(5, 3), rank=2, alpha=6.0, seed=0)
    with torch.no_grad():
        layer.lora_B.normal_()
    x = torch.randn(4, 5)
    expected = x @ (layer.base.weight + 3.0 * layer.lora_B @ layer.lora_A).T + layer.base.bias
    torch.testing.assert_close(layer(x), expected)
    again = LoRALinear(nn.Linear(5, 3), rank=2, alpha=6.0, seed=0)
    assert torch.equal(again.lora_A, layer.lora_A)  # the seed fixes A


def test_bad_arguments_and_misuse_raise_clear_errors():
    torch.manual_seed(0)
    model = ViT(TINY_VIT)
    with pytest.raises(ValueError, match="no nn.Linear"):
        apply_lora(model, ["q_proj"], rank=2, alpha=2.0)
    with pytest.raises(TypeError, match="not a torch.nn.Linear"):
        apply_lora(model, ["attn"], rank=2, alpha=2.0)
    with pytest.raises(ValueError, match="rank"):
        apply_lora(model, ["qkv"], rank=-1, alpha=2.0)
    with pytest.raises(TypeError, match="base"):
        LoRALinear(nn.Conv1d(2, 2, 1), rank=1, alpha=1.0)
    apply_lora(model, "qkv", rank=2, alpha=2.0)
    with pytest.raises(TypeError, match="already has a LoRA adapter"):
        apply_lora(model, ["qkv"], rank=2, alpha=2.0)
    layer = lora_modules(model)[0]
    layer.merge()
    with pytest.raises(RuntimeError, match="already merged"):
        layer.merge()
    with pytest.raises(RuntimeError, match="unmerge"):
        layer.disable()
    layer.unmerge()
    with pytest.raises(RuntimeError, match="not merged"):
        layer.unmerge()
