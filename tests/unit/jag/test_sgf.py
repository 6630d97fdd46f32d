"""Tests of Self Geometry Forcing: the reward on ground truth, the memory switch, a finite SGF update that
never reads the ground truth beyond the first frame."""

import pytest
import torch

from neurips26.jag.geometry import plucker_patches
from neurips26.jag.model import JAGConfig, JAGModel
from neurips26.jag.scenes import make_clip
from neurips26.jag.self_forcing import SelfForcingConfig
from neurips26.jag.sgf import DistillConfig, SelfMemory, distill, geometric_reward, rgb_render_loss


def _batch(seeds=(0, 1), frames=4, kind="yaw_sweep"):
    clips = [make_clip(s, frames, kind) for s in seeds]
    rgb = torch.stack([c.rgb for c in clips])
    log_depth = torch.stack([c.log_depth for c in clips])
    valid = torch.stack([c.valid for c in clips])
    poses = torch.stack([c.poses for c in clips])
    K = clips[0].K  # noqa: N806
    plucker = plucker_patches(poses.reshape(-1, 4, 4), K, 16, 16, 4).reshape(len(seeds), frames, 16, 6)
    return (rgb, log_depth, valid, poses, plucker.float()), K, clips[0].bounds


def test_reward_is_near_zero_for_ground_truth_and_lower_for_another_scene():
    (rgb, log_depth, valid, poses, _), K, bounds = _batch(frames=3)  # noqa: N806
    memory = SelfMemory(poses, K, bounds, (rgb, log_depth, valid), source="truth")
    memory(2, rgb, log_depth)  # frames 0 and 1 in the memory, rendered at frame 2's pose
    rendered = memory.rendered[2]
    assert rendered[2].float().mean() > 0.3  # the frames overlap
    on_truth = geometric_reward(rgb[:, 2], log_depth[:, 2], rendered)
    other, _, _ = _batch(seeds=(5, 6), frames=3)
    on_other = geometric_reward(other[0][:, 2], other[1][:, 2], rendered)
    # voxel quantisation (0.31 m voxels, checkered floor) keeps the truth's reward slightly below 0
    assert (on_truth > -0.25).all() and (on_other < 2 * on_truth).all()
    assert (rgb_render_loss(rgb[:, 2], rendered) < rgb_render_loss(other[0][:, 2], rendered)).all()


def test_the_switch_builds_the_memory_from_the_truth_or_from_the_frames():
    (rgb, log_depth, valid, poses, _), K, bounds = _batch(frames=3)  # noqa: N806
    made = rgb.flip(-1)  # "generated" frames that differ from the truth
    truth = SelfMemory(poses, K, bounds, (rgb, log_depth, valid), source="truth")
    own = SelfMemory(poses, K, bounds, (rgb, log_depth, valid), source="self")
    a, b = truth(2, made, log_depth), own(2, made, log_depth)
    assert not torch.equal(a[0], b[0])  # frame 1 came from the flipped frames in one, the truth in the other
    fresh = SelfMemory(poses, K, bounds, (rgb, log_depth, valid), source="truth")
    assert torch.equal(fresh(2, rgb, log_depth)[0], a[0])  # the truth switch ignores the frames passed
    with pytest.raises(ValueError, match="source"):
        SelfMemory(poses, K, bounds, (rgb, log_depth, valid), source="oracle")


def test_an_sgf_update_is_finite_and_reads_no_ground_truth_after_the_first_frame():
    (rgb, log_depth, valid, poses, plucker), K, bounds = _batch(frames=4)  # noqa: N806
    rgb[:, 1:] = float("nan")  # the rollout must never look at these
    log_depth[:, 1:] = float("nan")
    student = JAGModel(JAGConfig(memory=True), seed=0)
    teacher = JAGModel(JAGConfig(memory=False, causal=False), seed=1)
    config = DistillConfig(steps=1, batch=2, self_forcing=SelfForcingConfig(critic_updates=1))
    before = [p.detach().clone() for p in student.parameters()]
    logs = distill(student, teacher, lambda s: (rgb, log_depth, valid, poses, plucker), K, bounds, config)
    assert all(torch.isfinite(torch.tensor(v)).all() for v in logs.values())
    assert all(torch.isfinite(p).all() for p in student.parameters())
    assert any(not torch.equal(a, p) for a, p in zip(before, student.parameters(), strict=True))
    with pytest.raises(ValueError, match="reward"):
        DistillConfig(memory=None, reward="geo")


def test_the_stacked_memory_is_what_each_frame_saw():
    (rgb, log_depth, valid, poses, _), K, bounds = _batch(frames=3)  # noqa: N806
    memory = SelfMemory(poses, K, bounds, (rgb, log_depth, valid), source="truth")
    seen = [memory(k, rgb, log_depth) for k in range(3)]
    m_rgb, m_d, v = memory.stacked()
    assert m_rgb.shape == rgb.shape and m_d.shape == log_depth.shape and v.shape == log_depth.shape
    assert (v[:, 0] == 0).all() and v[:, 2].mean() > 0.3  # frame 0 meets an empty memory
    for k in range(3):
        assert torch.equal(m_rgb[:, k], seen[k][0]) and torch.equal(v[:, k], seen[k][2])
    with pytest.raises(ValueError, match="memory"):
        SelfMemory(poses, K, bounds, (rgb, log_depth, valid)).stacked()
