"""Sinusoidal features, time-step and absolute-position embeddings, and RoPE as a relative rotation."""

import math

import numpy as np
import pytest
import torch

from neurips26.nn.embeddings import (
    LearnedPositions,
    RotaryEmbedding,
    SinusoidalPositions,
    TimestepEmbedding,
    apply_rope,
    rope_tables,
    sinusoidal_embedding,
)


def test_sinusoidal_embedding_matches_the_formula():
    values = torch.tensor([0.0, 1.0, 7.5, 300.0])
    dim, period = 8, 10_000.0
    got = sinusoidal_embedding(values, dim, max_period=period).numpy()
    omega = period ** (-np.arange(dim // 2) / (dim // 2))  # ω_i = P^{-i/h}
    angles = values.numpy()[:, None] * omega
    np.testing.assert_allclose(got, np.concatenate([np.sin(angles), np.cos(angles)], axis=1), atol=1e-5)
    assert got.shape == (4, 8)
    # integer inputs (positions, discrete steps) are accepted and give the same numbers
    torch.testing.assert_close(sinusoidal_embedding(torch.tensor([0, 1]), dim), torch.tensor(got[:2]))
    # any batch shape
    assert sinusoidal_embedding(torch.zeros(2, 3), 6).shape == (2, 3, 6)


def test_sinusoidal_embedding_rejects_bad_arguments():
    with pytest.raises(ValueError, match="dim"):
        sinusoidal_embedding(torch.zeros(3), 7)
    with pytest.raises(TypeError, match="values"):
        sinusoidal_embedding([1.0, 2.0], 4)
    with pytest.raises(ValueError, match="max_period"):
        sinusoidal_embedding(torch.zeros(3), 4, max_period=1.0)


def test_timestep_embedding_shapes_and_separation():
    torch.manual_seed(0)
    embed = TimestepEmbedding(16, frequency_dim=32, scale=1000.0)
    t = torch.tensor([0.0, 0.001, 0.5, 1.0])
    out = embed(t)
    assert out.shape == (4, 16) and torch.isfinite(out).all()
    # distinct times give distinct vectors, even 1/1000 apart once scaled
    assert torch.cdist(out, out).fill_diagonal_(1.0).min() > 0
    with pytest.raises(ValueError, match="t must"):
        embed(torch.zeros(4, 1))
    with pytest.raises(ValueError, match="frequency_dim"):
        TimestepEmbedding(16, frequency_dim=33)


def test_absolute_position_embeddings():
    learned, fixed = LearnedPositions(10, 6), SinusoidalPositions(10, 6)
    ids = torch.tensor([[0, 3, 3, 9]])
    assert learned(ids).shape == fixed(ids).shape == (1, 4, 6)
    torch.testing.assert_close(fixed(ids)[0, 1], fixed(ids)[0, 2])  # same position, same vector
    torch.testing.assert_close(fixed(torch.arange(10)), sinusoidal_embedding(torch.arange(10), 6))
    assert "table" not in fixed.state_dict()  # rebuilt, not stored
    for module in (learned, fixed):
        with pytest.raises(ValueError, match="positions"):
            module(torch.tensor([10]))
        with pytest.raises(TypeError, match="positions"):
            module(torch.tensor([1.0]))


def random_heads(shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_rope_is_a_rotation_and_position_zero_is_the_identity():
    cos, sin = rope_tables(64, 16)
    assert cos.shape == sin.shape == (64, 8)
    cos, sin = cos.double(), sin.double()
    x = random_heads((2, 3, 64, 16))
    rotated = apply_rope(x, cos, sin)
    # norm of every pair (hence of every head vector) is preserved
    torch.testing.assert_close(rotated.norm(dim=-1), x.norm(dim=-1))
    pairs, rotated_pairs = x.unflatten(-1, (8, 2)), rotated.unflatten(-1, (8, 2))
    torch.testing.assert_close(rotated_pairs.norm(dim=-1), pairs.norm(dim=-1))
    torch.testing.assert_close(rotated[:, :, 0], x[:, :, 0])  # R_0 = I
    # pair i of position p is turned by the angle p θ_i, θ_i = 10000^{-2i/D}
    p, i = 5, 3
    angle = math.atan2(rotated_pairs[0, 0, p, i, 1], rotated_pairs[0, 0, p, i, 0]) - math.atan2(
        pairs[0, 0, p, i, 1], pairs[0, 0, p, i, 0]
    )
    expected = p * 10_000 ** (-2 * i / 16)
    assert math.remainder(angle - expected, 2 * math.pi) == pytest.approx(0.0, abs=1e-6)


def test_rope_scores_depend_only_on_the_position_difference():
    rope = RotaryEmbedding(16, 128)
    q, k = random_heads((1, 1, 1, 16), seed=1).float(), random_heads((1, 1, 1, 16), seed=2).float()

    def score(p, s):
        cos_p, sin_p = rope(torch.tensor([p]))
        cos_s, sin_s = rope(torch.tensor([s]))
        return (apply_rope(q, cos_p, sin_p) * apply_rope(k, cos_s, sin_s)).sum().item()

    for p, s in [(0, 3), (10, 2), (7, 7)]:
        for shift in (1, 17, 100):
            assert score(p + shift, s + shift) == pytest.approx(score(p, s), abs=1e-4)
    # ⟨R_p q, R_s k⟩ = ⟨q, R_{s-p} k⟩
    assert score(9, 14) == pytest.approx(score(0, 5), abs=1e-4)
    # and not a constant: different offsets give different scores
    assert abs(score(0, 1) - score(0, 30)) > 1e-3


def test_rope_per_sequence_positions_match_shared_positions():
    rope = RotaryEmbedding(8, 32)
    x = random_heads((2, 4, 5, 8)).float()
    ids = torch.tensor([3, 3, 4, 5, 5])  # tree siblings share positions
    shared = apply_rope(x, *rope(ids))
    per_sequence = apply_rope(x, *rope(ids.expand(2, 5)))
    torch.testing.assert_close(per_sequence, shared)


def test_rope_rejects_bad_arguments():
    with pytest.raises(ValueError, match="head_dim"):
        rope_tables(8, 7)
    with pytest.raises(ValueError, match="positions"):
        RotaryEmbedding(8, 16)(torch.tensor([16]))
    cos, sin = rope_tables(4, 8)
    with pytest.raises(ValueError, match="x must"):
        apply_rope(torch.zeros(4, 8), cos, sin)
    with pytest.raises(ValueError, match="cos and sin"):
        apply_rope(torch.zeros(1, 1, 4, 8), cos[:, :3], sin[:, :3])
