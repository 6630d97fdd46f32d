"""Tests of neurips26.spark_vla.teacher: the tiny 3D expert, its attention maps and the analytic kernel."""

from __future__ import annotations

import pytest
import torch

from neurips26.spark_vla.distill import check_row_stochastic, head_average
from neurips26.spark_vla.encoder import ENCODER_CONFIG, GRID, NUM_PATCHES, make_encoder
from neurips26.spark_vla.teacher import (
    TEACHER_OUTPUTS,
    DepthTeacher,
    analytic_maps,
    make_teacher,
    pretrain_teacher,
    teacher_maps,
    teacher_tokens,
)


def _images(batch: int, seed: int = 0) -> torch.Tensor:
    return torch.rand(batch, 3, 48, 48, generator=torch.Generator().manual_seed(seed))


def _points(batch: int, n: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(batch, n, 3, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@pytest.fixture(scope="module")
def teacher() -> DepthTeacher:
    return make_teacher(0)


def _toy_geometry(frames: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Flat random-coloured patches; targets (brightness, mean R, G, B) per patch, standardised, with
    20 % of the entries NaN (background)."""
    g = torch.Generator().manual_seed(seed)
    colours = torch.rand(frames, 3, GRID, GRID, generator=g)
    images = colours.repeat_interleave(8, 2).repeat_interleave(8, 3)
    images = (images + 0.02 * torch.randn(images.shape, generator=g)).clamp(0, 1)
    means = images.reshape(frames, 3, GRID, 8, GRID, 8).mean((3, 5)).flatten(2).transpose(1, 2)  # (F, N, 3)
    targets = torch.cat([means.mean(-1, keepdim=True), means], dim=-1)
    targets = (targets - targets.mean((0, 1))) / targets.std((0, 1))
    targets[torch.rand(frames, NUM_PATCHES, generator=g) < 0.2] = float("nan")
    return images, targets


# ------------------------------------------------------------------------------------------- the model


def test_teacher_shapes_and_seeding(teacher: DepthTeacher) -> None:
    state = torch.random.get_rng_state()
    again, other = make_teacher(0), make_teacher(1)
    assert torch.equal(torch.random.get_rng_state(), state)
    s0, s1, s2 = teacher.state_dict(), again.state_dict(), other.state_dict()
    assert all(torch.equal(s0[k], s1[k]) for k in s0)
    assert not all(torch.equal(s0[k], s2[k]) for k in s0)
    # its own weights, not the 2D encoder's of the same seed
    assert not torch.equal(teacher.vit.pos_embed, make_encoder(0).pos_embed)
    assert teacher.vit.config == ENCODER_CONFIG
    assert teacher(_images(2)).shape == (2, NUM_PATCHES, len(TEACHER_OUTPUTS))


def test_teacher_maps_are_row_stochastic_head_averages(teacher: DepthTeacher) -> None:
    images = _images(3, seed=1)
    maps = teacher_maps(teacher, images)
    assert maps.shape == (3, 2, NUM_PATCHES, NUM_PATCHES)
    assert not maps.requires_grad
    check_row_stochastic("maps", maps, atol=1e-6)
    reference = teacher.vit(images, return_attentions=True).attentions
    for i, block in enumerate((2, 3)):
        assert torch.equal(maps[:, i], head_average(reference[block]))
    # any selection and order of blocks, and a bare ViT as the "teacher"
    picked = teacher_maps(teacher, images, blocks=(3, 0))
    assert torch.equal(picked[:, 0], maps[:, 1])
    assert torch.equal(picked[:, 1], head_average(reference[0]))
    assert torch.equal(teacher_maps(teacher.vit, images, blocks=(1,))[:, 0], head_average(reference[1]))


def test_teacher_tokens_are_the_block_hidden_state(teacher: DepthTeacher) -> None:
    images = _images(2, seed=2)
    hidden = teacher.vit(images, return_hidden_states=True).hidden_states
    for block in range(ENCODER_CONFIG.depth):
        tokens = teacher_tokens(teacher, images, block=block)
        assert tokens.shape == (2, NUM_PATCHES, ENCODER_CONFIG.width) and not tokens.requires_grad
        assert torch.equal(tokens, hidden[block + 1])
    assert torch.equal(teacher_tokens(teacher, images), hidden[4])


def test_teacher_helpers_reject_bad_input(teacher: DepthTeacher) -> None:
    images = _images(1)
    with pytest.raises(ValueError, match="images"):
        teacher_maps(teacher, images[:, :, :40])
    with pytest.raises(ValueError, match="images"):
        teacher_tokens(teacher, images[0])
    with pytest.raises(ValueError, match="blocks"):
        teacher_maps(teacher, images, blocks=(2, 4))
    with pytest.raises(ValueError, match="blocks"):
        teacher_maps(teacher, images, blocks=(2, 2))
    with pytest.raises(TypeError, match="blocks"):
        teacher_maps(teacher, images, blocks=[2, 3])
    with pytest.raises(ValueError, match="block"):
        teacher_tokens(teacher, images, block=4)
    with pytest.raises(TypeError, match="teacher"):
        teacher_maps(torch.nn.Linear(2, 2), images)


# ---------------------------------------------------------------------------------------- analytic maps


def test_analytic_maps_are_row_stochastic() -> None:
    maps = analytic_maps(_points(4, NUM_PATCHES).float(), sigma=0.7)
    assert maps.shape == (4, NUM_PATCHES, NUM_PATCHES) and maps.dtype == torch.float32
    check_row_stochastic("maps", maps, atol=1e-6)


def test_analytic_maps_follow_the_symmetric_gaussian_kernel() -> None:
    points, sigma = _points(2, 10, seed=3), 1.3
    maps = analytic_maps(points, sigma)
    # reference: the unnormalised kernel K and its row sums Z_i, by a direct loop
    kernel = torch.empty(2, 10, 10, dtype=torch.float64)
    for b in range(2):
        for i in range(10):
            for j in range(10):
                kernel[b, i, j] = torch.exp(-((points[b, i] - points[b, j]) ** 2).sum() / sigma**2)
    z = kernel.sum(-1)
    assert torch.allclose(maps, kernel / z[..., None], rtol=1e-12, atol=0)
    # A[i, j] Z_i = K[i, j] is symmetric, i.e. A[i, j] / A[j, i] = Z_j / Z_i
    unnormalised = maps * z[..., None]
    assert torch.allclose(unnormalised, unnormalised.transpose(1, 2), rtol=1e-12, atol=0)
    ratio = maps / maps.transpose(1, 2)
    assert torch.allclose(ratio, z[:, None, :] / z[:, :, None], rtol=1e-12, atol=0)


def test_nearer_points_get_larger_weight() -> None:
    points = _points(3, 20, seed=5)
    maps = analytic_maps(points, sigma=2.0)
    distance = torch.cdist(points, points)
    for b in range(3):
        for i in range(20):
            order = torch.argsort(distance[b, i])
            weights = maps[b, i, order]
            assert torch.all(weights[1:] < weights[:-1])  # strictly decreasing with distance
    # a smaller sigma concentrates each row on its nearest points (the diagonal)
    assert torch.all(analytic_maps(points, 0.5).diagonal(dim1=1, dim2=2) > maps.diagonal(dim1=1, dim2=2))


def test_analytic_maps_reject_bad_input() -> None:
    points = _points(1, 4)
    bad = points.clone()
    bad[0, 2, 1] = float("nan")
    with pytest.raises(ValueError, match="points"):
        analytic_maps(bad, 1.0)
    bad[0, 2, 1] = float("inf")
    with pytest.raises(ValueError, match="points"):
        analytic_maps(bad, 1.0)
    with pytest.raises(ValueError, match="points"):
        analytic_maps(points[..., :2], 1.0)
    with pytest.raises(ValueError, match="points"):
        analytic_maps(points.long(), 1.0)
    with pytest.raises(ValueError, match="sigma"):
        analytic_maps(points, 0.0)
    with pytest.raises(ValueError, match="sigma"):
        analytic_maps(points, -1.0)
    with pytest.raises(ValueError, match="sigma"):
        analytic_maps(points, float("nan"))


# ------------------------------------------------------------------------------------------ pre-training


def test_pretraining_lowers_the_loss_and_freezes_the_teacher() -> None:
    images, targets = _toy_geometry(96)
    state = torch.random.get_rng_state()
    result = pretrain_teacher(images, targets, steps=60, batch_size=16, progress=False)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert len(result.losses) == 60
    first, last = sum(result.losses[:5]) / 5, sum(result.losses[-5:]) / 5
    assert last < 0.3 * first
    assert len(result.r2) == len(TEACHER_OUTPUTS) and min(result.r2) > 0.5
    assert isinstance(result.model, DepthTeacher) and not result.model.training
    assert not any(p.requires_grad for p in result.model.parameters())
    check_row_stochastic("maps", teacher_maps(result.model, images[:4]), atol=1e-6)


def test_pretraining_is_deterministic() -> None:
    images, targets = _toy_geometry(40, seed=1)
    a = pretrain_teacher(images, targets, steps=4, batch_size=16, seed=2, progress=False)
    b = pretrain_teacher(images, targets, steps=4, batch_size=16, seed=2, progress=False)
    c = pretrain_teacher(images, targets, steps=4, batch_size=16, seed=3, progress=False)
    sa, sb, sc = (r.model.state_dict() for r in (a, b, c))
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert a.losses == b.losses and a.r2 == b.r2
    assert not all(torch.equal(sa[k], sc[k]) for k in sa)


def test_pretraining_rejects_bad_input() -> None:
    images, targets = _toy_geometry(8)
    with pytest.raises(ValueError, match="images"):
        pretrain_teacher(images[:, :, :40, :40], targets, steps=1)
    with pytest.raises(ValueError, match="targets"):
        pretrain_teacher(images, targets[:, :, :3], steps=1)
    with pytest.raises(ValueError, match="targets"):
        pretrain_teacher(images, targets[:4], steps=1)
    with pytest.raises(ValueError, match="targets"):
        pretrain_teacher(images, torch.full_like(targets, float("nan")), steps=1)
    infinite = targets.clone()
    infinite[0, 0, 0] = float("inf")
    with pytest.raises(ValueError, match="targets"):
        pretrain_teacher(images, infinite, steps=1)
    with pytest.raises(ValueError, match="targets"):
        pretrain_teacher(images, targets.long(), steps=1)
    with pytest.raises(ValueError, match="steps"):
        pretrain_teacher(images, targets, steps=0)
    with pytest.raises(ValueError, match="batch_size"):
        pretrain_teacher(images, targets, steps=1, batch_size=0)
