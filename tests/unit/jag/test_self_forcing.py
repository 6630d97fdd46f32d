"""Tests of Self Forcing: exit-step truncation against a manual recomputation, DMD's fixed point, the critic
and the ODE initialisation."""

import pytest
import torch

from neurips26.flow import x0_from_velocity
from neurips26.jag.diffusion_forcing import Clips, with_memory
from neurips26.jag.model import JAGConfig, JAGModel
from neurips26.jag.self_forcing import (
    STUDENT_LEVELS,
    SelfForcingConfig,
    critic_loss,
    dmd_loss,
    make_critic,
    ode_loss,
    ode_pairs,
    rollout,
)


def _clips(batch=2, frames=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return Clips(
        torch.rand(batch, frames, 3, 16, 16, generator=g) * 2 - 1,
        torch.rand(batch, frames, 1, 16, 16, generator=g),
        torch.ones(batch, frames, 1, 16, 16, dtype=torch.bool),
        torch.randn(batch, frames, 16, 6, generator=g),
    )


def _trained(config, seed=0):
    """A model with nonzero output layers (adaLN-Zero starts at zero velocity)."""
    model = JAGModel(config, seed=seed)
    g = torch.Generator().manual_seed(seed + 7)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=g))
    return model


def test_levels_are_the_shifted_four_steps():
    assert STUDENT_LEVELS == pytest.approx((1.0, 15 / 16, 5 / 6, 5 / 8))
    with pytest.raises(ValueError, match="levels"):
        SelfForcingConfig(levels=(0.5, 0.7))
    with pytest.raises(ValueError, match="exit_step"):
        rollout(
            JAGModel(JAGConfig(memory=False)),
            (torch.zeros(1, 3, 16, 16), torch.zeros(1, 1, 16, 16)),
            torch.zeros(1, 3, 16, 6),
            torch.Generator(),
            exit_step=5,
        )


def test_exit_step_one_gradient_equals_a_manual_recomputation():
    clips = _clips()
    first = (clips.rgb[:, 0], clips.log_depth[:, 0])
    model = _trained(JAGConfig(memory=False))
    out = rollout(model, first, clips.plucker, torch.Generator().manual_seed(3), exit_step=1)
    (out.rgb[:, 1:].square().sum() + out.log_depth[:, 1:].sum()).backward()
    auto = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    g = torch.Generator().manual_seed(3)
    cache = model.make_cache()
    model.write(
        cache, with_memory(first[0], None, None), with_memory(first[1], None, None), clips.plucker[:, 0]
    )
    total = 0.0
    for k in range(1, 4):
        rgb = torch.randn(first[0].shape, generator=g)
        d = torch.randn(first[1].shape, generator=g)
        v_app, v_geo = model.step(
            with_memory(rgb, None, None),
            with_memory(d, None, None),
            torch.ones(2),
            clips.plucker[:, k],
            cache,
        )
        x_rgb, x_d = x0_from_velocity(rgb, v_app, 1.0), x0_from_velocity(d, v_geo, 1.0)
        total = total + x_rgb.square().sum() + x_d.sum()
        model.write(
            cache,
            with_memory(x_rgb.detach(), None, None),
            with_memory(x_d.detach(), None, None),
            clips.plucker[:, k],
        )
    total.backward()
    for a, p in zip(auto, model.parameters(), strict=True):
        torch.testing.assert_close(a, p.grad, atol=1e-6, rtol=1e-5)


def test_truncation_changes_no_values_and_keeps_one_graph_per_frame():
    clips = _clips()
    first = (clips.rgb[:, 0], clips.log_depth[:, 0])
    model = _trained(JAGConfig(memory=False))
    with_grad = rollout(model, first, clips.plucker, torch.Generator().manual_seed(1), exit_step=3)
    without = rollout(model, first, clips.plucker, torch.Generator().manual_seed(1), exit_step=3, grad=False)
    assert torch.equal(with_grad.rgb.detach(), without.rgb) and with_grad.exit_steps == [0, 3, 3, 3]
    assert with_grad.rgb.requires_grad and not without.rgb.requires_grad
    drawn = rollout(model, first, clips.plucker, torch.Generator().manual_seed(1), per_frame=True, grad=False)
    assert all(1 <= e <= 4 for e in drawn.exit_steps[1:])


def test_dmd_vanishes_when_the_critic_is_the_teacher_and_the_critic_trains():
    clips = _clips()
    first = (clips.rgb[:, 0], clips.log_depth[:, 0])
    student = _trained(JAGConfig(memory=False))
    teacher = _trained(JAGConfig(memory=False, causal=False), seed=1)
    config = SelfForcingConfig()
    sample = rollout(student, first, clips.plucker, torch.Generator().manual_seed(0), exit_step=2)
    same = make_critic(teacher)
    loss = dmd_loss(sample, teacher, same, clips.plucker, torch.Generator().manual_seed(0), config)
    assert loss.item() == pytest.approx(0.0, abs=1e-12)
    other = make_critic(_trained(JAGConfig(memory=False, causal=False), seed=2))
    loss = dmd_loss(sample, teacher, other, clips.plucker, torch.Generator().manual_seed(0), config)
    loss.backward()
    assert loss.item() > 0 and any(
        p.grad is not None and p.grad.abs().sum() > 0 for p in student.parameters()
    )
    c = critic_loss(other, sample, clips.plucker, torch.Generator().manual_seed(0), config)
    c.backward()
    assert torch.isfinite(c) and any(p.grad is not None for p in other.parameters())
    rgb_only = _trained(JAGConfig(memory=False, geometry=False))
    sample = rollout(rgb_only, first, clips.plucker, torch.Generator().manual_seed(0), exit_step=1)
    assert sample.log_depth is None
    assert torch.isfinite(
        dmd_loss(sample, teacher, other, clips.plucker, torch.Generator().manual_seed(0), config)
    )


def test_ode_initialisation_pairs_and_loss():
    clips = _clips()
    teacher = _trained(JAGConfig(memory=False, causal=False), seed=1)
    states, ends = ode_pairs(teacher, clips, torch.Generator().manual_seed(0))
    assert sorted(states, reverse=True) == list(STUDENT_LEVELS)
    assert torch.equal(ends[0][:, 0], clips.rgb[:, 0]) and torch.equal(states[1.0][0][:, 0], clips.rgb[:, 0])
    student = _trained(JAGConfig(memory=False))
    loss = ode_loss(student, states, ends, clips.plucker, torch.Generator().manual_seed(0))
    loss.backward()
    assert torch.isfinite(loss) and loss.item() > 0


def _empty_memory(clips):
    shape = clips.rgb.shape
    return (
        torch.zeros(shape),
        torch.zeros(*shape[:2], 1, *shape[3:]),
        torch.zeros(*shape[:2], 1, *shape[3:]),
    )


def _some_memory(clips, seed=4):
    g = torch.Generator().manual_seed(seed)
    rgb, d, v = _empty_memory(clips)
    v = (torch.rand(v.shape, generator=g) < 0.5).float()
    return torch.rand(rgb.shape, generator=g) * v, torch.rand(d.shape, generator=g) * v, v


def test_an_empty_memory_is_no_memory_and_a_memory_reaches_the_scores():
    clips = _clips()
    first = (clips.rgb[:, 0], clips.log_depth[:, 0])
    config = SelfForcingConfig()
    student = _trained(JAGConfig())
    teacher = _trained(JAGConfig(causal=False), seed=1)
    critic = make_critic(_trained(JAGConfig(causal=False), seed=2))
    sample = rollout(student, first, clips.plucker, torch.Generator().manual_seed(0), exit_step=2, grad=False)

    def dmd(memory):
        return dmd_loss(
            sample, teacher, critic, clips.plucker, torch.Generator().manual_seed(0), config, memory=memory
        )

    def crit(memory):
        return critic_loss(
            critic, sample, clips.plucker, torch.Generator().manual_seed(0), config, memory=memory
        )

    assert dmd(None).item() == pytest.approx(dmd(_empty_memory(clips)).item(), rel=1e-6)
    assert crit(None).item() == pytest.approx(crit(_empty_memory(clips)).item(), rel=1e-6)
    assert dmd(_some_memory(clips)).item() != pytest.approx(dmd(None).item(), rel=1e-3)
    states, ends = ode_pairs(teacher, clips, torch.Generator().manual_seed(0))
    with_mem = Clips(clips.rgb, clips.log_depth, clips.valid, clips.plucker, _some_memory(clips))
    states_m, ends_m = ode_pairs(teacher, with_mem, torch.Generator().manual_seed(0))
    assert not torch.allclose(ends[0][:, 1:], ends_m[0][:, 1:])  # the teacher reads the clips' memory
    plain = ode_loss(student, states, ends, clips.plucker, torch.Generator().manual_seed(0))
    empty = ode_loss(
        student, states, ends, clips.plucker, torch.Generator().manual_seed(0), memory=_empty_memory(clips)
    )
    assert plain.item() == pytest.approx(empty.item(), rel=1e-6)
