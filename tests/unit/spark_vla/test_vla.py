"""Tests of the tiny VLA policy: shapes, masking, gates and their gradient, counting, the larger config."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from neurips26.spark_vla.vla import (
    Policy,
    PolicyConfig,
    action_loss,
    count_parameters,
    count_trainable,
    larger_config,
)

L, N, H = 8, 36, 4
D, DV = PolicyConfig().width, PolicyConfig().vision_width  # the LM's width, the ViT tokens' width


def _inputs(batch: int, m: int, seed: int = 0, dtype: torch.dtype = torch.float32):
    g = torch.Generator().manual_seed(seed)
    instruction = torch.randint(1, 30, (batch, L), generator=g)
    instruction[:, 5:] = 0  # trailing padding
    if batch > 1:
        instruction[1, 0] = 0  # a leading padding word: its row sees only itself
    visual = torch.randn(batch, m, DV, generator=g, dtype=dtype)
    proprio = 0.3 * torch.randn(batch, 3, generator=g, dtype=dtype)
    return instruction, visual, proprio


@pytest.fixture(scope="module")
def policy() -> Policy:
    return Policy(seed=0)


@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("m", [72, 36, 18])
def test_shapes(policy, batch, m):
    out = policy(*_inputs(batch, m), return_attention=True, return_visual_states=True, return_hidden=True)
    t = L + m + H + 1
    assert out.actions.shape == (batch, H, 4)
    assert out.projected.shape == (batch, m, D)
    assert out.attention.shape == (batch, 4, t, t)
    assert out.visual_states.shape == (batch, m, D)
    assert len(out.hidden_states) == 3 and all(h.shape == (batch, t, D) for h in out.hidden_states)
    assert torch.equal(out.visual_states, out.hidden_states[1][:, policy.layout(m)["visual"]])
    plain = policy(*_inputs(batch, m))
    assert plain.attention is None and plain.visual_states is None and plain.hidden_states is None


def test_layout_tiles_the_sequence(policy):
    lay = policy.layout(18)
    order = [lay[k] for k in ("instruction", "visual", "queries", "proprio")]
    assert order[0].start == 0 and order[-1].stop == L + 18 + H + 1
    assert all(a.stop == b.start for a, b in zip(order, order[1:], strict=False))
    assert [s.stop - s.start for s in order] == [L, 18, H, 1]


def test_attention_is_causal_row_stochastic_and_skips_padding(policy):
    instruction, visual, proprio = _inputs(3, 18)
    w = policy(instruction, visual, proprio, return_attention=True).attention
    t = w.shape[-1]
    torch.testing.assert_close(w.sum(-1), torch.ones_like(w.sum(-1)), rtol=0, atol=1e-6)
    future = ~torch.tril(torch.ones(t, t, dtype=torch.bool))
    assert torch.all(w[..., future] == 0)
    for b in range(3):
        pad = torch.nonzero(instruction[b] == 0).flatten()
        for j in pad.tolist():
            others = torch.arange(t) != j
            assert torch.all(w[b, :, others, j] == 0)  # nobody but the padding word itself reads it
    # the leading padding word of row 1 has only itself to look at
    assert torch.all(w[1, :, 0, 0] == 1)


def test_unit_gates_equal_the_ungated_pass(policy):
    instruction, visual, proprio = _inputs(3, 72)
    plain = policy(instruction, visual, proprio, return_visual_states=True)
    gated = policy(instruction, visual, proprio, gates=torch.ones(3, 72), return_visual_states=True)
    assert torch.equal(plain.actions, gated.actions)
    assert torch.equal(plain.visual_states, gated.visual_states)


def test_zero_gate_changes_output(policy):
    instruction, visual, proprio = _inputs(2, 36)
    gates = torch.ones(2, 36)
    gates[:, 5] = 0.0
    gated = policy(instruction, visual, proprio, gates=gates).actions
    assert not torch.equal(policy(instruction, visual, proprio).actions, gated)


def test_instruction_states_do_not_see_visual_tokens(policy):
    instruction, visual, proprio = _inputs(3, 36)
    a = policy(instruction, visual, proprio, return_hidden=True)
    b = policy(instruction, visual + torch.randn_like(visual), proprio * 2, return_hidden=True)
    for ha, hb in zip(a.hidden_states, b.hidden_states, strict=True):
        assert torch.equal(ha[:, :L], hb[:, :L])
        assert not torch.equal(ha[:, L:], hb[:, L:])


def test_padding_embedding_cannot_change_outputs():
    policy = Policy(seed=3)
    instruction, visual, proprio = _inputs(3, 18)
    instruction[2] = 0  # an all-padding instruction
    for explicit in (False, True):  # the fused kernel and the explicit softmax of return_attention
        before = policy(instruction, visual, proprio, return_visual_states=True, return_attention=explicit)
        with torch.no_grad():
            saved = policy.words.weight[0].clone()
            policy.words.weight[0].normal_(0.0, 5.0)
        after = policy(instruction, visual, proprio, return_visual_states=True, return_attention=explicit)
        with torch.no_grad():
            policy.words.weight[0].copy_(saved)
        assert torch.isfinite(before.actions).all()
        assert torch.equal(before.actions, after.actions)
        assert torch.equal(before.visual_states, after.visual_states)
    torch.testing.assert_close(policy.instruction_vector(instruction)[2], torch.zeros(D), rtol=0, atol=0)


def test_gate_gradient_is_the_taylor_score_exactly():
    policy = Policy(seed=1).double()
    instruction, visual, proprio = _inputs(2, 18, dtype=torch.float64)
    target = torch.randn(2, H, 4, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    gates = torch.ones(2, 18, dtype=torch.float64, requires_grad=True)
    action_loss(policy(instruction, visual, proprio, gates=gates).actions, target).backward()
    # dL/d(c~ m) from the ungated pass, where the LM input is c~ itself
    out = policy(instruction, visual, proprio)
    (grad_input,) = torch.autograd.grad(action_loss(out.actions, target), out.projected)
    expected = (grad_input * out.projected).sum(-1)
    torch.testing.assert_close(gates.grad, expected, rtol=1e-12, atol=1e-15)
    assert expected.abs().max() > 0


def test_gate_gradient_matches_central_differences():
    policy = Policy(seed=2).double()
    instruction, visual, proprio = _inputs(1, 18, dtype=torch.float64)
    target = torch.randn(1, H, 4, generator=torch.Generator().manual_seed(6), dtype=torch.float64)

    def loss(g: torch.Tensor) -> torch.Tensor:
        # a smooth loss (L1 has kinks); the identity under test does not depend on the loss
        return ((policy(instruction, visual, proprio, gates=g).actions - target) ** 2).mean()

    gates = torch.ones(1, 18, dtype=torch.float64, requires_grad=True)
    loss(gates).backward()
    eps = 1e-6
    numeric = torch.zeros(18, dtype=torch.float64)
    with torch.no_grad():
        for i in range(18):
            up, down = torch.ones(1, 18, dtype=torch.float64), torch.ones(1, 18, dtype=torch.float64)
            up[0, i] += eps
            down[0, i] -= eps
            numeric[i] = (loss(up) - loss(down)) / (2 * eps)
    rel = (gates.grad[0] - numeric).norm() / numeric.norm()
    assert rel < 1e-6


def test_determinism_and_global_rng_untouched():
    torch.manual_seed(123)
    state = torch.get_rng_state()
    a, b, c = Policy(seed=7), Policy(seed=7), Policy(seed=8)
    assert torch.equal(torch.get_rng_state(), state)
    for (na, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        assert torch.equal(pa, pb), na
    assert not torch.equal(a.queries, c.queries)
    inputs = _inputs(2, 36)
    assert torch.equal(a(*inputs).actions, b(*inputs).actions)
    assert torch.all(a.words.weight[0] == 0)


def test_candidates_and_their_bookkeeping(policy):
    g = torch.Generator().manual_seed(0)
    v2d, v3d = torch.randn(2, N, DV, generator=g), torch.randn(2, N, DV, generator=g)
    both = policy.candidates(v2d, v3d)
    assert both.shape == (2, 2 * N, DV)
    assert torch.equal(both[:, :N], v2d + policy.branch[0] + policy.patch_positions)
    assert torch.equal(both[:, N:], v3d + policy.branch[1] + policy.patch_positions)
    assert torch.equal(policy.candidates(v2d), both[:, :N])
    patch, branch = policy.candidate_patch(2 * N), policy.candidate_branch(2 * N)
    assert patch.tolist() == list(range(N)) * 2 and branch.tolist() == [0] * N + [1] * N
    assert policy.candidate_branch(N).sum() == 0
    with pytest.raises(ValueError, match="num_candidates"):
        policy.candidate_patch(18)
    with pytest.raises(ValueError, match="v3d"):
        policy.candidates(v2d, v3d[:, :10])
    with pytest.raises(ValueError, match="v2d"):
        policy.candidates(v2d[..., :32])


def test_gather_picks_rows_in_order(policy):
    g = torch.Generator().manual_seed(1)
    cands = torch.randn(3, 72, DV, generator=g)
    idx = torch.stack([torch.randperm(72, generator=g)[:18] for _ in range(3)])
    out = policy.gather(cands, idx)
    assert out.shape == (3, 18, DV)
    for b in range(3):
        assert torch.equal(out[b], cands[b, idx[b]])
    with pytest.raises(ValueError, match="indices"):
        policy.gather(cands, idx + 72)
    with pytest.raises(ValueError, match="indices"):
        policy.gather(cands, idx[:2])


def test_instruction_vector_is_the_mean_of_real_words(policy):
    instruction, _, _ = _inputs(3, 18)
    u = policy.instruction_vector(instruction)
    assert u.shape == (3, D)
    for b in range(3):
        ids = instruction[b][instruction[b] != 0]
        torch.testing.assert_close(u[b], policy.words.weight[ids].mean(0))


def test_action_loss_is_mean_l1():
    g = torch.Generator().manual_seed(2)
    pred, target = torch.randn(2, H, 4, generator=g), torch.randn(2, H, 4, generator=g)
    torch.testing.assert_close(action_loss(pred, target), (pred - target).abs().sum() / pred.numel())
    assert action_loss(pred, pred) == 0
    with pytest.raises(ValueError, match="target"):
        action_loss(pred, target[:, :2])
    with pytest.raises(ValueError, match="pred"):
        action_loss(pred[0], target[0])


def test_counting_counts_shared_parameters_once():
    a = nn.Linear(4, 3)  # 15
    b = nn.Sequential(a, nn.Linear(3, 2))  # 15 + 8, shares a
    frozen = nn.Linear(2, 2)  # 6
    frozen.requires_grad_(False)
    assert count_parameters(a, b, frozen) == 15 + 8 + 6
    assert count_trainable(a, b, frozen) == 15 + 8
    assert count_trainable(a, a, a) == 15
    with pytest.raises(TypeError, match="modules"):
        count_trainable(a, "b")


def test_larger_config_has_about_four_times_the_lm():
    base = PolicyConfig()
    big = larger_config(base)
    assert (
        big.width == 2 * base.width
        and big.head_dim == base.head_dim
        and big.vision_width == base.vision_width
    )
    small, large = Policy(base), Policy(big)
    ratio = count_parameters(large.blocks) / count_parameters(small.blocks)
    assert 3.5 <= ratio <= 4.5
    instruction, visual, proprio = _inputs(2, 36)  # same 64-wide candidates
    assert large(instruction, visual, proprio).actions.shape == (2, H, 4)


def test_return_attention_path_agrees_with_fused_path(policy):
    inputs = _inputs(2, 72)
    torch.testing.assert_close(
        policy(*inputs).actions, policy(*inputs, return_attention=True).actions, rtol=1e-5, atol=1e-6
    )


def test_bad_inputs_name_the_argument(policy):
    instruction, visual, proprio = _inputs(2, 36)
    bad = instruction.clone()
    bad[0, 0] = 30
    with pytest.raises(ValueError, match="instruction"):
        policy(bad, visual, proprio)
    with pytest.raises(ValueError, match="instruction"):
        policy(instruction[:, :6], visual, proprio)
    with pytest.raises(TypeError, match="instruction"):
        policy(instruction.float(), visual, proprio)
    with pytest.raises(ValueError, match="proprio"):
        policy(instruction, visual, proprio[:, :2])
    with pytest.raises(ValueError, match="proprio"):
        policy(instruction, visual, proprio[:1])
    with pytest.raises(ValueError, match="visual"):
        policy(instruction, visual[..., :32], proprio)
    with pytest.raises(ValueError, match="visual"):
        policy(instruction, visual[:1], proprio)
    with pytest.raises(ValueError, match="gates"):
        policy(instruction, visual, proprio, gates=torch.ones(2, 35))
    with pytest.raises(ValueError, match="heads"):
        PolicyConfig(width=64, heads=5)
    with pytest.raises(ValueError, match="lm_depth"):
        PolicyConfig(lm_depth=0)
    with pytest.raises(TypeError, match="config"):
        Policy({"width": 64})
    with pytest.raises(ValueError, match="seed"):
        Policy(seed=-1)


def test_grid_sincos_positions_are_distinct_and_start_the_patch_positions():
    from neurips26.spark_vla.vla import grid_sincos

    table = grid_sincos(36, 64)
    assert table.shape == (36, 64)
    distances = torch.cdist(table, table)
    assert float(distances[~torch.eye(36, dtype=torch.bool)].min()) > 0.1  # every patch has its own code
    # the column half depends on the column only, the row half on the row only
    grid = table.reshape(6, 6, 64)
    assert torch.equal(grid[0, :, :32], grid[5, :, :32]) and torch.equal(grid[:, 0, 32:], grid[:, 5, 32:])
    assert torch.equal(Policy(PolicyConfig(), seed=3).patch_positions.detach(), table)
    with pytest.raises(ValueError, match="square"):
        grid_sincos(35, 64)
