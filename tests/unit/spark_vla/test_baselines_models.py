"""Tests of the baseline models: the bridge-attention policy and the explicit depth tokens."""

from __future__ import annotations

import pytest
import torch

from neurips26.spark_vla.baselines import BridgeHead, BridgePolicy, DepthTokens
from neurips26.spark_vla.vla import Policy, PolicyConfig, PolicyOutput, action_loss

L, N, H = 8, 36, 4
D, DV = PolicyConfig().width, PolicyConfig().vision_width  # the LM's width, the ViT tokens' width


def _inputs(batch: int, m: int, seed: int = 0, dtype: torch.dtype = torch.float32):
    g = torch.Generator().manual_seed(seed)
    instruction = torch.randint(1, 30, (batch, L), generator=g)
    instruction[:, 6:] = 0
    visual = torch.randn(batch, m, DV, generator=g, dtype=dtype)
    proprio = 0.3 * torch.randn(batch, 3, generator=g, dtype=dtype)
    return instruction, visual, proprio


def _conditions(batch: int = 2, raw_len: int = 26, seed: int = 0, dtype: torch.dtype = torch.float32):
    g = torch.Generator().manual_seed(seed)
    raw = [torch.randn(batch, raw_len, D, generator=g, dtype=dtype) for _ in range(2)]
    queries = [torch.randn(batch, H, D, generator=g, dtype=dtype) for _ in range(2)]
    proprio = torch.randn(batch, D, generator=g, dtype=dtype)
    return raw, queries, proprio


def _open_gates(head: BridgeHead, value: float = 0.7) -> None:
    with torch.no_grad():
        for layer in head.layers:
            layer.gate.fill_(value)


# ------------------------------------------------------------------------------------------- bridge


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("m", [72, 18])
def test_bridge_policy_shapes(batch, m):
    policy = BridgePolicy(seed=0)
    out = policy(*_inputs(batch, m), return_attention=True, return_visual_states=True, return_hidden=True)
    assert isinstance(out, PolicyOutput)
    assert out.actions.shape == (batch, H, 4)
    assert out.visual_states.shape == (batch, m, D)
    assert out.attention.shape == (batch, 4, L + m + H + 1, L + m + H + 1)
    assert len(out.hidden_states) == 3


def test_bridge_policy_replaces_the_mlp_head():
    policy = BridgePolicy(seed=0)
    names = {name.split(".")[0] for name, _ in policy.named_parameters()}
    assert "bridge" in names and "head" not in names and "final_norm" not in names
    plain = Policy(seed=0)
    # same LM weights (same seed), different action pathway
    assert torch.equal(policy.blocks[0].attn.qkv.weight, plain.blocks[0].attn.qkv.weight)
    inputs = _inputs(2, 36)
    assert not torch.allclose(policy(*inputs).actions, plain(*inputs).actions)


def test_bridge_head_shapes():
    head = BridgeHead(D, 2, 4, H, 4, seed=0)
    raw, queries, proprio = _conditions()
    assert head(raw, queries, proprio).shape == (2, H, 4)
    assert head(raw, queries, proprio[:, None]).shape == (2, H, 4)
    assert head.gates.shape == (2,) and torch.all(head.gates == 0)


def test_closed_gate_blocks_the_raw_features():
    head = BridgeHead(D, 2, 4, H, 4, seed=1)
    raw, queries, proprio = _conditions()
    shaken = [r + 3.0 * torch.randn_like(r) for r in raw]
    assert torch.equal(head(raw, queries, proprio), head(shaken, queries, proprio))
    _open_gates(head)
    assert not torch.allclose(head(raw, queries, proprio), head(shaken, queries, proprio))


def test_masked_raw_positions_are_not_read():
    head = BridgeHead(D, 2, 4, H, 4, seed=2)
    _open_gates(head)
    raw, queries, proprio = _conditions()
    mask = torch.ones(2, 26, dtype=torch.bool)
    mask[:, 3:6] = False
    shaken = [r.clone() for r in raw]
    for r in shaken:
        r[:, 3:6] += 5.0
    torch.testing.assert_close(
        head(raw, queries, proprio, raw_mask=mask),
        head(shaken, queries, proprio, raw_mask=mask),
        rtol=0,
        atol=1e-6,
    )
    assert not torch.allclose(head(raw, queries, proprio), head(shaken, queries, proprio))


def test_gradient_reaches_the_gates_and_matches_differences():
    head = BridgeHead(D, 2, 4, H, 4, seed=3).double()
    raw, queries, proprio = _conditions(dtype=torch.float64)
    target = torch.randn(2, H, 4, generator=torch.Generator().manual_seed(4), dtype=torch.float64)

    def loss() -> torch.Tensor:
        return ((head(raw, queries, proprio) - target) ** 2).mean()

    loss().backward()
    grads = torch.stack([layer.gate.grad for layer in head.layers])
    assert torch.all(grads.abs() > 0)
    eps = 1e-6
    with torch.no_grad():
        for layer, grad in zip(head.layers, grads, strict=True):
            layer.gate.fill_(eps)
            up = loss()
            layer.gate.fill_(-eps)
            down = loss()
            layer.gate.fill_(0.0)
            torch.testing.assert_close(grad, (up - down) / (2 * eps), rtol=1e-6, atol=1e-12)


def test_gradient_reaches_the_gates_through_the_policy():
    policy = BridgePolicy(seed=4)
    instruction, visual, proprio = _inputs(2, 18)
    action_loss(policy(instruction, visual, proprio).actions, torch.zeros(2, H, 4)).backward()
    for layer in policy.bridge.layers:
        assert layer.gate.grad is not None and layer.gate.grad.abs() > 0
    assert policy.projector[1].weight.grad.abs().sum() > 0


def test_bridge_padding_embedding_cannot_change_actions():
    policy = BridgePolicy(seed=5)
    _open_gates(policy.bridge)
    inputs = _inputs(2, 18)
    before = policy(*inputs).actions
    with torch.no_grad():
        policy.words.weight[0].normal_(0.0, 5.0)
    torch.testing.assert_close(policy(*inputs).actions, before, rtol=0, atol=1e-6)


def test_bridge_determinism_and_global_rng_untouched():
    torch.manual_seed(11)
    state = torch.get_rng_state()
    a, b, c = BridgePolicy(seed=6), BridgePolicy(seed=6), BridgePolicy(seed=7)
    assert torch.equal(torch.get_rng_state(), state)
    for (name, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        assert torch.equal(pa, pb), name
    assert not torch.equal(a.bridge.latents, c.bridge.latents)
    inputs = _inputs(2, 36)
    assert torch.equal(a(*inputs).actions, b(*inputs).actions)


def test_bridge_bad_inputs_name_the_argument():
    head = BridgeHead(D, 2, 4, H, 4, seed=0)
    raw, queries, proprio = _conditions()
    with pytest.raises(ValueError, match="raw"):
        head(raw[:1], queries, proprio)
    with pytest.raises(ValueError, match="raw"):
        head([raw[0], raw[1][..., :32]], queries, proprio)
    with pytest.raises(ValueError, match="queries"):
        head(raw, [q[:, :3] for q in queries], proprio)
    with pytest.raises(ValueError, match="proprio"):
        head(raw, queries, proprio[:, :32])
    with pytest.raises(ValueError, match="raw_mask"):
        head(raw, queries, proprio, raw_mask=torch.ones(2, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="raw_mask"):
        head(raw, queries, proprio, raw_mask=torch.zeros(2, 26, dtype=torch.bool))
    with pytest.raises(ValueError, match="heads"):
        BridgeHead(D, 2, 5, H, 4, seed=0)
    with pytest.raises(ValueError, match="depth"):
        BridgeHead(D, 0, 4, H, 4, seed=0)


# -------------------------------------------------------------------------------------- depth tokens


@pytest.mark.parametrize("batch", [1, 3])
def test_depth_tokens_shapes_and_normalisation(batch):
    tokens = DepthTokens(seed=0)(torch.randn(batch, 1, 48, 48, generator=torch.Generator().manual_seed(0)))
    assert tokens.shape == (batch, N, DV)
    torch.testing.assert_close(tokens.mean(-1), torch.zeros(batch, N), rtol=0, atol=1e-5)


def test_depth_tokens_fill_the_3d_slot_of_the_policy():
    g = torch.Generator().manual_seed(1)
    policy, depth = Policy(seed=0), DepthTokens(seed=0)
    v2d, d = torch.randn(2, N, DV, generator=g), torch.randn(2, 1, 48, 48, generator=g)
    cands = policy.candidates(v2d, depth(d))
    assert cands.shape == (2, 2 * N, DV)
    torch.testing.assert_close(cands[:, N:], depth(d) + policy.branch[1] + policy.patch_positions)
    instruction, _, proprio = _inputs(2, 72)
    assert policy(instruction, cands, proprio).actions.shape == (2, H, 4)


def test_depth_tokens_carry_patch_positions():
    depth = DepthTokens(seed=0)
    tokens = depth(torch.ones(1, 1, 48, 48))  # same content in every patch: only positions differ
    assert not torch.allclose(tokens[0, 0], tokens[0, 1])


def test_depth_tokens_determinism():
    torch.manual_seed(5)
    state = torch.get_rng_state()
    a, b, c = DepthTokens(seed=3), DepthTokens(seed=3), DepthTokens(seed=4)
    assert torch.equal(torch.get_rng_state(), state)
    x = torch.randn(2, 1, 48, 48, generator=torch.Generator().manual_seed(2))
    assert torch.equal(a(x), b(x))
    assert not torch.equal(a(x), c(x))


def test_depth_tokens_bad_input_names_depth():
    depth = DepthTokens(seed=0)
    with pytest.raises(ValueError, match="depth"):
        depth(torch.zeros(2, 3, 48, 48))
    with pytest.raises(ValueError, match="depth"):
        depth(torch.zeros(2, 1, 40, 40))
    with pytest.raises(ValueError, match="depth"):
        depth(torch.zeros(1, 48, 48))
    with pytest.raises(ValueError, match="depth"):
        depth(torch.zeros(2, 1, 48, 48, dtype=torch.int64))
    with pytest.raises(TypeError, match="depth"):
        depth([[0.0]])
    with pytest.raises(ValueError, match="grid"):
        DepthTokens(grid=0)
