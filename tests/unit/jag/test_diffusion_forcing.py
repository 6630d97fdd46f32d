"""Tests of Diffusion Forcing: the level draws per mode, the loss's masks, and the two samplers."""

import pytest
import torch

from neurips26.jag.diffusion_forcing import (
    Clips,
    df_loss,
    draw_levels,
    sample_causal,
    sample_teacher,
    truth_memory,
    with_memory,
)
from neurips26.jag.model import JAGConfig, JAGModel
from neurips26.jag.scenes import make_clip
from neurips26.jag.sgf import SelfMemory


def _clips(batch=2, frames=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    rgb = torch.rand(batch, frames, 3, 16, 16, generator=g) * 2 - 1
    depth = torch.rand(batch, frames, 1, 16, 16, generator=g)
    valid = torch.rand(batch, frames, 1, 16, 16, generator=g) > 0.1
    plucker = torch.randn(batch, frames, 16, 6, generator=g)
    return Clips(rgb, depth, valid, plucker)


def test_levels_per_mode():
    g = torch.Generator().manual_seed(0)
    df = draw_levels("df", 64, 6, g)
    assert df.shape == (64, 6) and (df >= 0).all() and (df <= 1).all() and df.std(dim=1).min() > 0
    teacher = draw_levels("teacher", 64, 6, g)
    assert (teacher[:, 0] == 0).all() and (teacher[:, 1:] == teacher[:, 1:2]).all()
    tf = draw_levels("tf", 64, 6, g)
    assert ((tf > 0).sum(dim=1) <= 1).all() and (tf[:, 0] == 0).all()
    with pytest.raises(ValueError, match="mode"):
        draw_levels("cm", 2, 3, g)


def test_loss_is_finite_seeded_and_trains_every_mode():
    clips = _clips()
    for mode, causal in (("df", True), ("tf", True), ("teacher", False)):
        model = JAGModel(JAGConfig(causal=causal, memory=False), seed=0)
        a = df_loss(model, clips, mode, torch.Generator().manual_seed(1))
        b = df_loss(model, clips, mode, torch.Generator().manual_seed(1))
        assert torch.isfinite(a) and a.item() == b.item()
        a.backward()
        assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())
    rgb_only = JAGModel(JAGConfig(geometry=False, memory=False), seed=0)
    assert torch.isfinite(df_loss(rgb_only, clips, "df", torch.Generator().manual_seed(1)))


def test_invalid_pixels_do_not_enter_the_geometry_loss():
    clips = _clips()
    model = JAGModel(JAGConfig(memory=False), seed=0)
    base = df_loss(model, clips, "df", torch.Generator().manual_seed(3))
    moved = Clips(
        clips.rgb,
        torch.where(clips.valid, clips.log_depth, clips.log_depth + 100.0),
        clips.valid,
        clips.plucker,
    )
    assert df_loss(model, moved, "df", torch.Generator().manual_seed(3)).item() == pytest.approx(base.item())


def test_samplers_keep_the_first_frame_and_are_seeded():
    clips = _clips(frames=4)
    first = (clips.rgb[:, 0], clips.log_depth[:, 0])
    causal = JAGModel(JAGConfig(memory=False), seed=0)
    rgb, depth = sample_causal(causal, first, clips.plucker, 3, torch.Generator().manual_seed(0))
    again, _ = sample_causal(causal, first, clips.plucker, 3, torch.Generator().manual_seed(0))
    assert rgb.shape == clips.rgb.shape and depth.shape == clips.log_depth.shape
    assert torch.equal(rgb[:, 0], clips.rgb[:, 0]) and torch.equal(rgb, again)
    teacher = JAGModel(JAGConfig(causal=False, memory=False), seed=0)
    rgb_t, _ = sample_teacher(teacher, first, clips.plucker, 3, torch.Generator().manual_seed(0))
    assert torch.equal(rgb_t[:, 0], clips.rgb[:, 0]) and torch.isfinite(rgb_t).all()
    # an untrained adaLN-Zero model predicts zero velocity: Euler leaves the noise where it started
    noise = torch.randn(clips.rgb[:, 1].shape, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(rgb[:, 1], noise)


def test_branch_inputs_and_bad_clips():
    state = torch.zeros(2, 3, 16, 16)
    assert with_memory(state, None, None).shape == (2, 7, 16, 16)
    with pytest.raises(ValueError, match="log_depth"):
        Clips(
            torch.zeros(1, 2, 3, 4, 4),
            torch.zeros(1, 2, 2, 4, 4),
            torch.zeros(1, 2, 1, 4, 4, dtype=torch.bool),
            torch.zeros(1, 2, 1, 6),
        )


def test_truth_memory_is_the_teacher_forced_memory_of_every_frame():
    clip = make_clip(3, 4, "yaw_sweep")
    rgb, log_depth, valid, poses = (x[None] for x in (clip.rgb, clip.log_depth, clip.valid, clip.poses))
    m_rgb, m_d, v = truth_memory(rgb, log_depth, valid, poses, clip.K, clip.bounds)
    assert m_rgb.shape == (1, 4, 3, 16, 16) and m_d.shape == v.shape == (1, 4, 1, 16, 16)
    assert v[:, 0].sum() == 0 and v[:, 1:].mean() > 0.5  # frame 0: empty memory; later frames overlap
    same = SelfMemory(poses, clip.K, clip.bounds, (rgb, log_depth, valid), source="truth")
    for k in range(4):
        torch.testing.assert_close(same(k, rgb, log_depth)[0], m_rgb[:, k])
    clips = Clips(rgb, log_depth, valid, torch.zeros(1, 4, 16, 6), (m_rgb, m_d, v))
    model = JAGModel(JAGConfig(memory=True), seed=0)
    assert torch.isfinite(df_loss(model, clips, "df", torch.Generator().manual_seed(0)))


def test_teacher_forcing_at_test_time_writes_the_true_frames():
    model = JAGModel(JAGConfig(memory=False), seed=0).eval()
    generator = torch.Generator().manual_seed(5)
    with torch.no_grad():  # the output layers start at zero: give every weight a value
        for p in model.parameters():
            p.copy_(0.2 * torch.randn(p.shape, generator=generator))
    clips = _clips(batch=2, frames=5)
    first = (clips.rgb[:, 0], clips.log_depth[:, 0])
    truth = (clips.rgb, clips.log_depth)
    free = sample_causal(model, first, clips.plucker, 3, torch.Generator().manual_seed(1))
    forced = sample_causal(model, first, clips.plucker, 3, torch.Generator().manual_seed(1), context=truth)
    # frame 1 sees only frame 0 in both; later frames see different pasts
    assert torch.equal(free[0][:, :2], forced[0][:, :2])
    assert not torch.allclose(free[0][:, 2:], forced[0][:, 2:])
    # the forced run equals a free run whose past frames were the truth: frame k of a run from the
    # first k true frames
    changed = (clips.rgb.clone(), clips.log_depth)
    changed[0][:, 2] = -changed[0][:, 2]  # another true frame 2: frames 0-2 unchanged, frame 3 not
    other = sample_causal(model, first, clips.plucker, 3, torch.Generator().manual_seed(1), context=changed)
    assert torch.equal(other[0][:, :3], forced[0][:, :3]) and not torch.allclose(
        other[0][:, 3], forced[0][:, 3]
    )
    with pytest.raises(ValueError, match="context"):
        sample_causal(
            model, first, clips.plucker, 3, torch.Generator(), context=(clips.rgb[:, :2], clips.log_depth)
        )


def test_the_teacher_empties_its_memory_in_the_dropout_share(monkeypatch):
    from neurips26.jag import diffusion_forcing

    teacher = JAGModel(JAGConfig(causal=False), seed=0)
    generator = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for p in teacher.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=generator))
    clips = _clips(batch=3, frames=4)
    g = torch.Generator().manual_seed(9)
    v = (torch.rand(*clips.rgb.shape[:2], 1, 16, 16, generator=g) < 0.5).float()
    memory = (torch.rand(clips.rgb.shape, generator=g) * v, torch.rand(v.shape, generator=g) * v, v)
    with_mem = Clips(clips.rgb, clips.log_depth, clips.valid, clips.plucker, memory)
    bare = Clips(clips.rgb, clips.log_depth, clips.valid, clips.plucker)
    none = df_loss(teacher, bare, "teacher", torch.Generator().manual_seed(1))
    monkeypatch.setattr(diffusion_forcing, "TEACHER_MEMORY_DROPOUT", 1.0)  # every clip's memory emptied
    assert df_loss(teacher, with_mem, "teacher", torch.Generator().manual_seed(1)).item() == pytest.approx(
        none.item(), rel=1e-6
    )
    monkeypatch.setattr(diffusion_forcing, "TEACHER_MEMORY_DROPOUT", 0.0)  # every clip keeps it
    kept = df_loss(teacher, with_mem, "teacher", torch.Generator().manual_seed(1))
    assert kept.item() != pytest.approx(none.item(), rel=1e-4)
