"""grpo and spatial: Flow-GRPO's step loss, region advantages and SpatialFlow-GRPO's two readings."""

from __future__ import annotations

import pytest
import torch

from neurips26.rl import group_advantages
from neurips26.spatialflow_grpo import regions as G
from neurips26.spatialflow_grpo.grpo import flow_grpo_loss
from neurips26.spatialflow_grpo.spatial import (
    region_advantages,
    region_alphas,
    spatial_loss,
    spatial_objective,
)

B, K1, T = 8, 4, 64  # two groups of four, up to three edit regions, 64 tokens


def weights(seed: int = 0) -> torch.Tensor:
    """Token weights of random rectangles on the 8x8 grid (soft at the borders), one layout per group."""
    g = torch.Generator().manual_seed(seed)
    masks = torch.zeros(2, K1, 16, 16, dtype=torch.float64)
    for i in range(2):
        masks[i, 0] = 1.0
        for k in range(1, K1 - i):  # group 1 has one region fewer
            r, c = (int(v) for v in torch.randint(0, 12, (2,), generator=g))
            region = torch.zeros(16, 16, dtype=torch.float64)
            region[r : r + 3, c : c + 3] = 1.0
            region = region * masks[i, 0]
            masks[i, k], masks[i, 0] = region, masks[i, 0] - region
    return G.token_weights(masks).repeat_interleave(4, dim=0)


def valid(w: torch.Tensor) -> torch.Tensor:
    return w.sum(-1) > 0


def log_probs(seed: int, scale: float = 0.01):
    g = torch.Generator().manual_seed(seed)
    old = torch.randn(B, T, generator=g, dtype=torch.float64)
    new = (old + scale * torch.randn(B, T, generator=g, dtype=torch.float64)).requires_grad_(True)
    return new, old


def test_region_advantages_are_normalised_per_group_and_region():
    w = weights()
    v = valid(w)
    rewards = torch.rand(B, K1, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    adv = region_advantages(rewards, v, 4)
    expected = group_advantages(rewards.reshape(2, 4, K1)).reshape(B, K1)
    assert torch.allclose(adv[v], expected[v]) and torch.equal(adv[~v], torch.zeros_like(adv[~v]))
    glob = torch.linspace(-1, 1, B, dtype=torch.float64)
    mixed = region_advantages(rewards, v, 4, global_advantages=glob, global_weight=0.5)
    assert torch.allclose(mixed[v], (adv + 0.5 * glob[:, None])[v])


def test_alphas_sum_to_one_over_the_valid_regions():
    w = weights()
    for alpha in ("equal", "area"):
        a = region_alphas(w, valid(w), alpha)
        assert torch.allclose(a.sum(1), torch.ones(B, dtype=torch.float64))
        assert torch.equal(a[~valid(w)], torch.zeros_like(a[~valid(w)]))
    assert torch.allclose(region_alphas(w, valid(w), "area"), w.sum(-1) / 64)


def test_one_full_image_region_under_reading_a_is_flow_grpo():
    new, old = log_probs(2)
    w = torch.ones(B, 1, T, dtype=torch.float64)
    rewards = torch.rand(B, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    adv = group_advantages(rewards.reshape(2, 4)).reshape(B)
    kl = torch.rand(B, dtype=torch.float64)
    flow = flow_grpo_loss(new, old, adv, kl, eps=1e-3, beta=0.01)
    region_adv = region_advantages(rewards[:, None], torch.ones(B, 1, dtype=torch.bool), 4)
    spatial = spatial_loss(
        new, old, region_adv, w, torch.ones(B, 1, dtype=torch.bool), kl, eps=1e-3, beta=0.01
    )
    assert torch.allclose(spatial.loss, flow.loss, atol=1e-7)
    (g_flow,) = torch.autograd.grad(flow.loss, new)
    (g_spatial,) = torch.autograd.grad(spatial.loss, new)
    assert torch.allclose(g_spatial, g_flow, atol=1e-7)


@pytest.mark.parametrize("reading", ["a", "b"])
def test_equal_region_advantages_with_area_weights_match_flow_grpo_at_the_old_policy(reading):
    w = weights(4)
    v = valid(w)
    old = torch.randn(B, T, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    new = old.clone().requires_grad_(True)  # θ = θ_old: every ratio is 1
    adv = torch.linspace(-2, 2, B, dtype=torch.float64)
    region_adv = torch.where(v, adv[:, None].expand(B, K1), torch.zeros(B, K1, dtype=torch.float64))
    kl = torch.zeros(B, dtype=torch.float64)
    flow = flow_grpo_loss(new, old, adv, kl, eps=1e-3, beta=0.0)
    spatial = spatial_loss(new, old, region_adv, w, v, kl, eps=1e-3, beta=0.0, reading=reading, alpha="area")
    assert torch.allclose(spatial.loss, flow.loss, atol=1e-12)
    (g_flow,) = torch.autograd.grad(flow.loss, new)
    (g_spatial,) = torch.autograd.grad(spatial.loss, new)
    assert torch.allclose(g_spatial, g_flow, atol=1e-12)
    # and Flow-GRPO's gradient at θ_old is the plain policy gradient −A/(B·T) per token
    assert torch.allclose(g_flow, -adv[:, None].expand(B, T) / (B * T))


def test_a_region_with_constant_rewards_gets_no_gradient_at_its_tokens():
    w = weights(6)
    v = valid(w)
    rewards = torch.rand(B, K1, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    rewards[:, 1] = 0.3  # region 1 scores the same in every rollout
    adv = region_advantages(rewards, v, 4)
    assert adv[:, 1].abs().max() < 1e-9
    new, old = log_probs(8, scale=0.0)
    for reading in ("a", "b"):
        objective = spatial_objective(new - old, adv, w, v, eps=1e-3, reading=reading)
        (grad,) = torch.autograd.grad(objective.sum(), new)
        only_region_1 = w[:, 1] > 0.999
        assert grad[only_region_1].abs().max() < 1e-9, reading
        others = w[:, 0] > 0.999
        assert grad[others].abs().max() > 1e-4, reading


def test_region_credit_can_have_opposite_signs_within_one_image():
    # the point of the method: one rollout's good region is pushed up while its bad region is pushed down
    w = weights(9)
    v = valid(w)
    adv = torch.zeros(B, K1, dtype=torch.float64)
    adv[0, 1], adv[0, 2] = 1.5, -1.5
    new, old = log_probs(10, scale=0.0)
    objective = spatial_objective(new - old, adv, w, v, eps=1e-3, reading="a")
    (grad,) = torch.autograd.grad(objective.sum(), new)
    assert grad[0][w[0, 1] > 0.999].min() > 0 and grad[0][w[0, 2] > 0.999].max() < 0
    scalar = flow_grpo_loss(
        new, old, adv[:, 1:].mean(1), torch.zeros(B, dtype=torch.float64), eps=1e-3, beta=0
    )
    (g_scalar,) = torch.autograd.grad(scalar.loss, new)
    assert torch.allclose(g_scalar[0], torch.zeros(T, dtype=torch.float64))  # the scalar cancels out


def test_bad_inputs_name_the_argument():
    w = weights()
    v = valid(w)
    new, old = log_probs(0)
    kl = torch.zeros(B, dtype=torch.float64)
    with pytest.raises(ValueError, match="group_size"):
        region_advantages(torch.rand(B, K1, dtype=torch.float64), v, 1)
    with pytest.raises(ValueError, match="valid"):
        region_advantages(torch.rand(B, K1, dtype=torch.float64), v[:, :2], 4)
    with pytest.raises(ValueError, match="valid"):
        bad = v.clone()
        bad[1, 3] = not bad[0, 3]
        region_advantages(torch.rand(B, K1, dtype=torch.float64), bad, 4)
    with pytest.raises(ValueError, match="reading"):
        spatial_loss(
            new, old, torch.zeros(B, K1, dtype=torch.float64), w, v, kl, eps=0.1, beta=0, reading="c"
        )
    with pytest.raises(ValueError, match="alpha"):
        spatial_loss(
            new, old, torch.zeros(B, K1, dtype=torch.float64), w, v, kl, eps=0.1, beta=0, alpha="size"
        )
    with pytest.raises(ValueError, match="advantages"):
        spatial_loss(new, old, torch.zeros(B, 2, dtype=torch.float64), w, v, kl, eps=0.1, beta=0)
    with pytest.raises(ValueError, match="token_log_prob_old"):
        flow_grpo_loss(new, old[:, :10], torch.zeros(B, dtype=torch.float64), kl, eps=0.1, beta=0)
    with pytest.raises(TypeError, match="token_log_prob"):
        flow_grpo_loss(new.detach().numpy(), old, torch.zeros(B, dtype=torch.float64), kl, eps=0.1, beta=0)
    with pytest.raises(ValueError, match="kl"):
        flow_grpo_loss(new, old, torch.zeros(B, dtype=torch.float64), kl[:3], eps=0.1, beta=0)
    with pytest.raises(ValueError, match="beta"):
        flow_grpo_loss(new, old, torch.zeros(B, dtype=torch.float64), kl, eps=0.1, beta=-1.0)
