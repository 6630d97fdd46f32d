"""The padded timeline: 7 standing frames lead, actions move frame p to p + 1, a decision's action chunk
starts at its current frame, one stop label per finished episode, histories left-padded, and the training
stages deterministic; distillation with a straight-flow teacher has zero loss."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from neurips26.sparsevideonav.codec import fit_codec
from neurips26.sparsevideonav.dataset import (
    ACTION_CHUNK,
    LEAD,
    decision_index,
    episode,
    make_batch,
    padded_frames,
    sample_pairs,
)
from neurips26.sparsevideonav.distill import DistillConfig, pcm_loss, teacher_paths
from neurips26.sparsevideonav.expert import compose, demonstrations
from neurips26.sparsevideonav.former import FormerConfig
from neurips26.sparsevideonav.generator import GeneratorConfig
from neurips26.sparsevideonav.timeline import SPARSE_OFFSETS, interval_offsets
from neurips26.sparsevideonav.train import Recipe, train_history, train_i2v
from neurips26.sparsevideonav.world import Pose


@pytest.fixture(scope="module")
def data():
    trajectories = demonstrations(list(range(3)))
    codec = fit_codec([t.frames for t in trajectories])
    return trajectories, codec, [episode(t, codec) for t in trajectories]


def test_the_padded_timeline(data):
    trajectories, codec, episodes = data
    for traj, ep in zip(trajectories, episodes, strict=True):
        frames, actions, last = padded_frames(traj)
        assert last == LEAD + len(traj.frames) - 1 and len(frames) % 4 == 0
        assert (frames[:LEAD] == traj.frames[0]).all() and (frames[last:] == traj.frames[-1]).all()
        assert np.array_equal(frames[LEAD : last + 1], traj.frames)
        assert not actions[:LEAD].any() and not actions[last:].any()
        # action p moves padded frame p to p + 1: composing them from frame LEAD walks the expert's poses
        start = Pose(*traj.poses[0])
        assert np.allclose(compose(start, actions[LEAD:last]), traj.poses, atol=1e-4)  # float32 actions
        assert np.allclose(ep.latents, codec.encode(frames), atol=1e-6)
        d = int(ep.decisions[len(ep.decisions) // 2])
        assert np.array_equal(ep.action_chunk(d), actions[4 * d - 1 : 4 * d - 1 + ACTION_CHUNK])
        labels = [ep.stop_label(int(d)) for d in ep.decisions]
        if ep.stopped:
            assert labels[-1] and not any(labels[:-1])  # decisions end at the first stop
            assert ep.last <= 4 * ep.decisions[-1] - 1 + ACTION_CHUNK < ep.last + 4 + ACTION_CHUNK
        else:
            assert not any(labels)
        assert ep.decisions[0] == 2


def test_batches_left_pad_the_history_and_check_their_decisions(data):
    _, _, episodes = data
    index = decision_index(episodes)
    pairs = sample_pairs(index, 6, seed=0)
    assert np.array_equal(pairs, sample_pairs(index, 6, seed=0))
    b = make_batch(episodes, pairs, interval_offsets(5), action_length=80)
    assert b.clip.shape == (6, 10, 2, 16) and b.actions.shape == (6, 80, 3)
    for row, (i, d) in enumerate(pairs):
        ep = episodes[i]
        n = d - 2
        assert int(b.history_mask[row].sum()) == n and bool(
            b.history_mask[row, b.history.shape[1] - n :].all()
        )
        assert np.allclose(b.history[row, b.history.shape[1] - n :].numpy(), ep.latents[:n])
        assert np.allclose(b.clip[row, :2].numpy(), ep.latents[d - 2 : d])
        assert np.allclose(b.clip[row, 2:].numpy(), ep.latents[d + np.array(interval_offsets(5))])
    short = make_batch(episodes, pairs, SPARSE_OFFSETS, max_history=3)
    assert short.history.shape[1] == min(3, int((pairs[:, 1] - 2).max()))
    with pytest.raises(ValueError, match="decision"):
        make_batch(episodes, np.array([[0, 1]]), SPARSE_OFFSETS)
    with pytest.raises(ValueError, match="offsets"):
        make_batch(episodes, pairs, (3, 1))


def test_training_is_deterministic_and_stage_two_starts_from_stage_one(data):
    torch.set_num_threads(1)
    _, _, episodes = data
    config = GeneratorConfig(width=16, heads=2, depth=1)
    recipe = Recipe(steps=3, batch=4)
    a, losses_a = train_i2v(config, episodes, recipe)
    b, losses_b = train_i2v(config, episodes, recipe)
    assert losses_a == losses_b and all(
        torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters(), strict=True)
    )
    stage2, _ = train_history(a, FormerConfig(width=16, heads=2), episodes, Recipe(steps=1, batch=4))
    assert stage2.generator.config.history == "former"
    with pytest.raises(ValueError, match="former_config"):
        train_history(a, FormerConfig(width=16, heads=2, pseudo_chunks=2), episodes, recipe)


def test_a_teacher_with_a_straight_flow_distils_with_zero_loss(data):
    torch.manual_seed(0)
    _, _, episodes = data
    config = DistillConfig(trajectories=8)
    assert len(config.grid) == 53 and {0.75, 0.25} <= set(config.grid)
    stage1, _ = train_i2v(GeneratorConfig(width=16, heads=2, depth=1), episodes, Recipe(steps=1, batch=2))
    teacher, _ = train_history(stage1, FormerConfig(width=16, heads=2), episodes, Recipe(steps=1, batch=2))
    with torch.no_grad():  # a constant velocity: every teacher path is a straight line
        teacher.generator.out.weight.zero_()
        teacher.generator.out.bias.copy_(torch.linspace(-1, 1, 16))
    paths = teacher_paths(teacher, episodes, decision_index(episodes)[:8], config, seed=0)
    assert paths.states.shape == (8, 53, 10, 2, 16)
    assert torch.equal(paths.states[:, :, :2], paths.reference[:, None].expand(-1, 53, -1, -1, -1))
    student = copy.deepcopy(teacher.generator)
    rows, steps = torch.arange(8).repeat(6), torch.arange(48) % 52
    assert pcm_loss(student, student, paths, rows, steps, config).item() < 1e-10  # float32 rounding
    with torch.no_grad():
        student.out.bias.add_(0.1)
    assert pcm_loss(student, teacher.generator, paths, rows, steps, config).item() > 1e-4
