"""neurips26.rl: group-relative advantages and the clipped surrogate."""

from __future__ import annotations

import pytest
import torch

from neurips26.rl import approx_kl, clip_fraction, clipped_surrogate, group_advantages


def rewards(seed: int = 0, shape=(5, 8)) -> torch.Tensor:
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_group_advantages_have_zero_mean_and_unit_population_std_per_group():
    a = group_advantages(rewards(), eps=1e-12, clip=None)
    assert torch.allclose(a.mean(1), torch.zeros(5, dtype=torch.float64), atol=1e-12)
    assert torch.allclose(a.std(1, correction=0), torch.ones(5, dtype=torch.float64), atol=1e-9)


def test_equal_rewards_give_zero_advantages_and_the_clip_holds():
    a = group_advantages(torch.full((3, 6), 0.1, dtype=torch.float64))
    assert a.abs().max() < 1e-9
    r = torch.zeros(1, 40, dtype=torch.float64)
    r[0, 0] = 1.0  # one outlier: (1 - 1/40) / std = 6.2 before clipping
    assert group_advantages(r, clip=None)[0, 0] > 5.0
    assert group_advantages(r)[0, 0] == 5.0


def test_batch_std_uses_every_reward_and_the_group_mean():
    r = rewards(1)
    a = group_advantages(r, std="batch", clip=None)
    expected = (r - r.mean(1, keepdim=True)) / (r.std(correction=0) + 1e-4)
    assert torch.allclose(a, expected, atol=1e-12)


def test_leave_one_out_baseline_is_the_mean_of_the_others():
    r = rewards(2, (2, 4))
    a = group_advantages(r, leave_one_out=True, clip=None)
    others = torch.stack([torch.cat([r[:, :i], r[:, i + 1 :]], 1).mean(1) for i in range(4)], 1)
    assert torch.allclose(a, (r - others) / (r.std(1, keepdim=True, correction=0) + 1e-4), atol=1e-12)


def test_trailing_axes_are_normalised_separately():
    r = rewards(3, (4, 6, 3))
    a = group_advantages(r, clip=None)
    for k in range(3):
        assert torch.allclose(a[..., k], group_advantages(r[..., k], clip=None), atol=1e-12)
    b = group_advantages(r, std="batch", clip=None)
    for k in range(3):
        assert torch.allclose(b[..., k], group_advantages(r[..., k], std="batch", clip=None), atol=1e-12)


def test_at_the_old_policy_the_surrogate_is_the_advantage_and_its_gradient_the_policy_gradient():
    adv = torch.tensor([1.5, -0.5, 0.0, 2.0], dtype=torch.float64)
    log_ratio = torch.zeros(4, dtype=torch.float64, requires_grad=True)
    value = clipped_surrogate(log_ratio, adv, 0.2)
    assert torch.equal(value.detach(), adv)
    (grad,) = torch.autograd.grad(value.sum(), log_ratio)
    assert torch.allclose(grad, adv)  # d(ρA)/d log ρ = ρ A = A at ρ = 1


def test_the_clip_stops_the_pull_only_in_the_favoured_direction():
    eps = 0.1
    log_ratio = torch.log(torch.tensor([1.3, 1.3, 0.7, 0.7], dtype=torch.float64)).requires_grad_(True)
    adv = torch.tensor([1.0, -1.0, 1.0, -1.0], dtype=torch.float64)
    value = clipped_surrogate(log_ratio, adv, eps)
    assert torch.allclose(value.detach(), torch.tensor([1.1, -1.3, 0.7, -0.9], dtype=torch.float64))
    (grad,) = torch.autograd.grad(value.sum(), log_ratio)
    # above 1 + ε with A > 0 and below 1 − ε with A < 0: clipped, no gradient; otherwise ρ A
    assert torch.allclose(grad, torch.tensor([0.0, -1.3, 0.7, 0.0], dtype=torch.float64))


def test_asymmetric_clip_and_diagnostics():
    log_ratio = torch.log(torch.tensor([0.85, 1.0, 1.15, 1.25]))
    value = clipped_surrogate(log_ratio, torch.ones(4), 0.1, 0.2)
    assert torch.allclose(value, torch.tensor([0.85, 1.0, 1.15, 1.2]))
    assert clip_fraction(log_ratio, 0.1, 0.2).item() == pytest.approx(0.5)
    assert approx_kl(log_ratio).item() == pytest.approx(0.5 * (log_ratio**2).mean().item())


def test_bad_inputs_name_the_argument():
    with pytest.raises(TypeError, match="rewards"):
        group_advantages([[1.0, 2.0]])
    with pytest.raises(ValueError, match="rewards"):
        group_advantages(torch.ones(4))
    with pytest.raises(ValueError, match="group_size"):
        group_advantages(torch.ones(4, 1))
    with pytest.raises(ValueError, match="std"):
        group_advantages(torch.ones(2, 3), std="global")
    with pytest.raises(ValueError, match="eps"):
        group_advantages(torch.ones(2, 3), eps=0.0)
    with pytest.raises(ValueError, match="clip"):
        group_advantages(torch.ones(2, 3), clip=-1.0)
    with pytest.raises(TypeError, match="log_ratio"):
        clipped_surrogate(torch.zeros(2, dtype=torch.long), torch.ones(2), 0.1)
    with pytest.raises(ValueError, match="eps_low"):
        clipped_surrogate(torch.zeros(2), torch.ones(2), -0.1)
