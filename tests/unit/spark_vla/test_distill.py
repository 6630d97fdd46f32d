"""Spatial representation distillation: resampled maps stay row-stochastic, the row-wise KL is a divergence
and matches a direct loop, its gradient matches finite differences, head mixing starts as head averaging,
token pooling and the cosine loss behave at their exact points, and bad input names its argument."""

import pytest
import torch

from neurips26.spark_vla.distill import (
    HeadMixing,
    ResponseProjector,
    attention_distillation_loss,
    attention_kl,
    check_row_stochastic,
    cosine_alignment_loss,
    head_average,
    pool_tokens,
    resample_map,
)


def random_maps(*shape, seed=0, dtype=torch.float32):
    """Random positive row-stochastic maps."""
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(*shape, generator=g, dtype=dtype) + 0.01
    return x / x.sum(dim=-1, keepdim=True)


def softmax_maps(*shape, seed=0, dtype=torch.float64, scale=2.0):
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(scale * torch.randn(*shape, generator=g, dtype=dtype), dim=-1)


def grid_kernel(grid, sigma2=2.0):
    """A Gaussian attention kernel over the cells of a grid x grid patch grid: (1, grid², grid²)."""
    ys, xs = torch.meshgrid(torch.arange(grid), torch.arange(grid), indexing="ij")
    cells = torch.stack([ys, xs], dim=-1).reshape(-1, 2).double()
    d2 = ((cells[:, None] - cells[None]) ** 2).sum(-1)
    return torch.softmax(-d2 / sigma2, dim=-1)[None]


def test_head_average_is_the_mean_over_heads():
    maps = random_maps(2, 4, 9, 9)
    avg = head_average(maps)
    assert avg.shape == (2, 9, 9)
    torch.testing.assert_close(avg, (maps[:, 0] + maps[:, 1] + maps[:, 2] + maps[:, 3]) / 4)


@pytest.mark.parametrize(("source", "target"), [(8, 6), (6, 6), (6, 8), (4, 1)])
def test_resampled_maps_are_row_stochastic(source, target):
    maps = random_maps(3, source**2, source**2, seed=source)
    out = resample_map(maps, target)
    assert out.shape == (3, target**2, target**2)
    assert bool((out >= 0).all())
    torch.testing.assert_close(out.sum(-1), torch.ones(3, target**2), atol=1e-6, rtol=0)


def test_resampling_to_the_same_grid_is_the_identity():
    maps = random_maps(2, 36, 36, seed=3)
    torch.testing.assert_close(resample_map(maps, 6), maps, atol=1e-7, rtol=0)


def test_resampling_keeps_uniform_maps_uniform_and_local_kernels_local():
    uniform = torch.full((1, 64, 64), 1 / 64, dtype=torch.float64)
    torch.testing.assert_close(resample_map(uniform, 6), torch.full((1, 36, 36), 1 / 36, dtype=torch.float64))
    # A Gaussian kernel on the 8 x 8 grid, brought to 6 x 6: every query still attends most to itself.
    out = resample_map(grid_kernel(8), 6)
    assert torch.equal(out[0].argmax(-1), torch.arange(36))


def test_check_row_stochastic_rejects_negative_entries_and_bad_sums():
    maps = random_maps(2, 4, 4)
    assert check_row_stochastic("teacher", maps) is maps
    bad = maps.clone()
    bad[0, 1, 2] = -1e-3
    with pytest.raises(ValueError, match="teacher"):
        check_row_stochastic("teacher", bad)
    with pytest.raises(ValueError, match="teacher"):
        check_row_stochastic("teacher", maps * 1.01)
    check_row_stochastic("teacher", maps * (1 + 5e-5))  # within atol
    with pytest.raises(ValueError, match="teacher"):
        check_row_stochastic("teacher", maps * (1 + 5e-5), atol=1e-6)
    nan = maps.clone()
    nan[1, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="teacher"):
        check_row_stochastic("teacher", nan)


def test_kl_is_non_negative_and_zero_for_equal_maps():
    for seed in range(10):
        t = softmax_maps(4, 36, 36, seed=seed, dtype=torch.float32)
        s = softmax_maps(4, 36, 36, seed=100 + seed, dtype=torch.float32)
        assert attention_kl(t, s).item() >= -1e-6
        assert attention_kl(t, s).item() > 0.1
        assert abs(attention_kl(t, t.clone()).item()) <= 1e-7


def test_kl_equals_a_direct_float64_loop():
    t = softmax_maps(2, 5, 5, seed=1)
    s = softmax_maps(2, 5, 5, seed=2)
    eps = 1e-8
    total, rows = 0.0, 0
    for b in range(2):
        for i in range(5):
            total += sum(
                float(t[b, i, j]) * torch.log((t[b, i, j] + eps) / (s[b, i, j] + eps)).item()
                for j in range(5)
            )
            rows += 1
    assert attention_kl(t, s).item() == pytest.approx(total / rows, rel=1e-12, abs=1e-15)


def test_kl_gradient_matches_finite_differences_and_ignores_the_teacher():
    t = softmax_maps(2, 4, 4, seed=5).requires_grad_(True)
    logits = torch.randn(2, 4, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(6))
    logits.requires_grad_(True)

    def loss(z):
        return attention_kl(t, torch.softmax(z, dim=-1))

    assert torch.autograd.gradcheck(loss, (logits,), eps=1e-6, atol=1e-8, rtol=1e-6)
    loss(logits).backward()
    assert t.grad is None  # the teacher is a constant


def test_head_mixing_is_row_stochastic_and_starts_as_head_averaging():
    maps = random_maps(2, 4, 9, 9, seed=7)
    one = HeadMixing(4, 1)
    torch.testing.assert_close(one(maps)[:, 0], head_average(maps))
    mix = HeadMixing(4, 3)
    with torch.no_grad():
        mix.logits.copy_(torch.randn(3, 4, generator=torch.Generator().manual_seed(8)))
    m = mix.mixing()
    torch.testing.assert_close(m.sum(-1), torch.ones(3))
    out = mix(maps)
    assert out.shape == (2, 3, 9, 9)
    for h in range(3):
        torch.testing.assert_close(out[:, h], sum(m[h, j] * maps[:, j] for j in range(4)))
    torch.testing.assert_close(out.sum(-1), torch.ones(2, 3, 9), atol=1e-6, rtol=0)
    out.pow(2).sum().backward()
    assert mix.logits.grad is not None and mix.logits.grad.abs().sum() > 0
    with pytest.raises(ValueError, match="student_maps"):
        mix(random_maps(2, 3, 9, 9))


def test_distillation_loss_is_the_mean_kl_over_block_pairs():
    students = [softmax_maps(2, 4, 9, 9, seed=s, dtype=torch.float32) for s in (1, 2)]
    teachers = [softmax_maps(2, 9, 9, seed=s, dtype=torch.float32) for s in (3, 4)]
    loss = attention_distillation_loss(students, teachers)
    expected = (
        attention_kl(teachers[0], head_average(students[0]))
        + attention_kl(teachers[1], head_average(students[1]))
    ) / 2
    torch.testing.assert_close(loss, expected)
    same = attention_distillation_loss(students, [head_average(s) for s in students])
    assert abs(same.item()) <= 1e-7
    # With one mixing per pair and multi-head teachers.
    mixing = [HeadMixing(4, 2), HeadMixing(4, 2)]
    teachers_h = [softmax_maps(2, 2, 9, 9, seed=s, dtype=torch.float32) for s in (5, 6)]
    loss_h = attention_distillation_loss(students, teachers_h, mixing=mixing)
    expected_h = (
        attention_kl(teachers_h[0], mixing[0](students[0]))
        + attention_kl(teachers_h[1], mixing[1](students[1]))
    ) / 2
    torch.testing.assert_close(loss_h, expected_h)
    loss_h.backward()
    assert all(m.logits.grad is not None for m in mixing)
    with pytest.raises(ValueError, match="teacher_maps"):
        attention_distillation_loss(students, teachers[:1])
    with pytest.raises(ValueError, match="mixing"):
        attention_distillation_loss(students, teachers_h, mixing=mixing[:1])
    with pytest.raises(ValueError, match="teacher_maps"):
        attention_distillation_loss(students, [t[:, :4, :4] for t in teachers])


def test_response_projector_shape_and_seeded_init():
    state = torch.get_rng_state()
    a = ResponseProjector(64, 32, seed=3)
    assert torch.equal(torch.get_rng_state(), state)  # the global RNG is untouched
    b = ResponseProjector(64, 32, seed=3)
    c = ResponseProjector(64, 32, seed=4)
    assert [m.shape for m in a.parameters()] == [(64,), (64,), (64, 64), (64,), (32, 64), (32,)]
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(pa, pb)
    assert not torch.equal(a.fc1.weight, c.fc1.weight)
    x = torch.randn(2, 36, 64, generator=torch.Generator().manual_seed(0))
    assert a(x).shape == (2, 36, 32)
    with pytest.raises(ValueError, match="tokens"):
        a(torch.zeros(2, 36, 48))


def test_pool_tokens_identity_constant_and_shape():
    g = torch.Generator().manual_seed(0)
    tokens = torch.randn(2, 36, 5, generator=g)
    torch.testing.assert_close(pool_tokens(tokens, 6), tokens, atol=1e-7, rtol=0)
    # Token i of the grid is tokens[:, i]: raster order is kept.
    image = torch.arange(16.0).reshape(1, 16, 1)
    assert torch.equal(pool_tokens(image, 4), image)
    constant = torch.ones(3, 64, 4) * torch.tensor([1.0, -2.0, 3.0, 0.5])
    out = pool_tokens(constant, 6)
    assert out.shape == (3, 36, 4)
    torch.testing.assert_close(out, torch.ones(3, 36, 4) * torch.tensor([1.0, -2.0, 3.0, 0.5]))


def test_cosine_loss_exact_points_and_detached_target():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 9, 16, generator=g, dtype=torch.float64)
    assert cosine_alignment_loss(x, 3.0 * x).item() == pytest.approx(0.0, abs=1e-12)
    assert cosine_alignment_loss(x, -0.5 * x).item() == pytest.approx(2.0, abs=1e-12)
    y = torch.randn(2, 9, 16, generator=g, dtype=torch.float64)
    orth = y - (y * x).sum(-1, keepdim=True) / (x * x).sum(-1, keepdim=True) * x
    assert cosine_alignment_loss(x, orth).item() == pytest.approx(1.0, abs=1e-12)
    p = x.clone().requires_grad_(True)
    t = y.clone().requires_grad_(True)
    cosine_alignment_loss(p, t).backward()
    assert t.grad is None and p.grad.abs().sum() > 0


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="maps"):
        resample_map(random_maps(1, 10, 10), 3)  # 10 tokens is not a square grid
    with pytest.raises(ValueError, match="maps"):
        resample_map(random_maps(1, 9, 9) * 2, 3)  # rows do not sum to 1
    with pytest.raises(ValueError, match="maps"):
        resample_map(random_maps(1, 9, 16), 3)
    with pytest.raises(ValueError, match="maps"):
        head_average(random_maps(9, 9))
    with pytest.raises(ValueError, match="target_grid"):
        resample_map(random_maps(1, 9, 9), 0)
    with pytest.raises(TypeError, match="target_grid"):
        resample_map(random_maps(1, 9, 9), 2.5)
    with pytest.raises(ValueError, match="student"):
        attention_kl(random_maps(2, 9, 9), random_maps(2, 4, 4))
    with pytest.raises(ValueError, match="tokens"):
        pool_tokens(torch.zeros(1, 10, 4), 3)
    with pytest.raises(ValueError, match="target_grid"):
        pool_tokens(torch.zeros(1, 9, 4), 0)
    with pytest.raises(ValueError, match="target"):
        cosine_alignment_loss(torch.zeros(2, 9, 4), torch.zeros(2, 9, 5))
    with pytest.raises(ValueError, match="teacher_heads"):
        HeadMixing(4, 0)
