"""AdaLN-Zero is the identity at initialisation and learns away from it; the concat variant is matched."""

from dataclasses import replace

import pytest
import torch

from neurips26.nn.adaln import (
    AdaLNZeroBlock,
    ConcatConditionedBlock,
    ConditionedTransformer,
    ConditionedTransformerConfig,
    concat_mlp_hidden,
)

TINY = ConditionedTransformerConfig(width=16, heads=2, cond_dim=8, depth=2)


def n_params(module):
    return sum(p.numel() for p in module.parameters())


def toy_batch(config, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(3, 5, config.width, generator=g)
    c = torch.randn(3, config.cond_dim, generator=g)
    return x, c


def test_adaln_zero_block_is_exactly_the_identity_at_init():
    torch.manual_seed(0)
    block = AdaLNZeroBlock(TINY)
    x, c = toy_batch(TINY)
    assert torch.equal(block(x, c), x)


def test_adaln_zero_block_leaves_the_identity_after_one_step():
    torch.manual_seed(0)
    block = AdaLNZeroBlock(TINY)
    x, c = toy_batch(TINY)
    target = torch.randn_like(x)
    opt = torch.optim.SGD(block.parameters(), lr=0.1)
    loss = ((block(x, c) - target) ** 2).mean()
    loss.backward()
    # Only the modulation receives gradient at init: the zero gates block every other path.
    assert block.modulation.weight.grad.abs().sum() > 0
    assert block.attn.qkv.weight.grad.abs().sum() == 0
    opt.step()
    with torch.no_grad():
        out = block(x, c)
        assert not torch.allclose(out, x)
        assert ((out - target) ** 2).mean() < loss


def test_adaln_stack_is_layernorm_at_init_and_depends_on_the_condition_after_training():
    torch.manual_seed(0)
    model = ConditionedTransformer(TINY)
    x, c = toy_batch(TINY)
    expected = torch.nn.functional.layer_norm(x, (TINY.width,), eps=1e-6)
    assert torch.equal(model(x, c), expected)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(3):
        opt.zero_grad()
        ((model(x, c) - c.sum(-1, keepdim=True).unsqueeze(-1)) ** 2).mean().backward()
        opt.step()
    with torch.no_grad():
        assert not torch.allclose(model(x, c), model(x, torch.zeros_like(c)))


@pytest.mark.parametrize("width,cond_dim", [(16, 8), (64, 32), (128, 64), (96, 200)])
def test_concat_block_matches_the_adaln_parameter_budget(width, cond_dim):
    config = ConditionedTransformerConfig(width=width, heads=4, cond_dim=cond_dim)
    adaln = n_params(AdaLNZeroBlock(config))
    concat = n_params(ConcatConditionedBlock(config))
    # One MLP hidden unit costs 2D + 1 parameters: the best achievable match.
    assert abs(adaln - concat) <= (2 * width + 1) // 2 + 1
    assert concat_mlp_hidden(config) > config.mlp_hidden
    print(f"block params D={width} C={cond_dim}: adaln {adaln}, concat {concat}")


def test_concat_variant_shapes_and_stack_parameter_counts():
    torch.manual_seed(0)
    x, c = toy_batch(TINY)
    concat = ConditionedTransformer(replace(TINY, conditioning="concat"))
    adaln = ConditionedTransformer(TINY)
    assert concat(x, c).shape == x.shape == adaln(x, c).shape
    # The condition reaches the tokens only through attention to the extra token.
    assert not torch.allclose(concat(x, c), concat(x, c + 1.0))
    a, b = n_params(adaln), n_params(concat)
    # The stacks differ by the AdaLN final modulation (2CD + 2D) minus the concat final LayerNorm (2D).
    assert abs(a - b) <= TINY.depth * (TINY.width + 1) + 2 * TINY.cond_dim * TINY.width
    print(f"stack params: adaln {a}, concat {b}")


@pytest.mark.parametrize("conditioning", ["adaln", "concat"])
def test_gradients_reach_every_parameter_after_a_step(conditioning):
    torch.manual_seed(0)
    config = replace(TINY, conditioning=conditioning)
    model = ConditionedTransformer(config)
    x, c = toy_batch(config)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):  # AdaLN's gates are zero at first: the second step reaches everything
        opt.zero_grad()
        (model(x, c) ** 3).mean().backward()
        opt.step()
    missing = [n for n, p in model.named_parameters() if p.grad is None or p.grad.abs().sum() == 0]
    assert missing == []


def test_bad_configs_and_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="heads"):
        ConditionedTransformerConfig(width=10, heads=4)
    with pytest.raises(ValueError, match="conditioning"):
        ConditionedTransformerConfig(conditioning="film")
    with pytest.raises(TypeError, match="depth"):
        ConditionedTransformerConfig(depth=2.0)
    block = AdaLNZeroBlock(TINY)
    x, c = toy_batch(TINY)
    with pytest.raises(ValueError, match="x must have shape"):
        block(x[0], c)
    with pytest.raises(ValueError, match="c must have shape"):
        block(x, c[:, :3])
    with pytest.raises(ValueError, match="c must have shape"):
        block(x, c[:2])
