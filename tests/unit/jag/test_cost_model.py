"""Tests of the declared per-frame costs: constant under a window, linear over the whole history."""

import pytest

from neurips26.jag.cost_model import (
    BYTES,
    CostShape,
    call_flops,
    frame_cost,
    keys_per_query,
    kv_bytes,
    voxel_bytes,
)


def test_keys_are_constant_after_the_window_and_linear_without_it():
    shape = CostShape()
    assert [keys_per_query(k, 4, shape) for k in (1, 2, 4, 5, 200)] == [32, 64, 128, 128, 128]
    assert [keys_per_query(k, None, shape) for k in (1, 10, 200)] == [32, 320, 6400]
    assert keys_per_query(3, 4, CostShape(branches=1)) == 48  # the RGB-only baseline: one branch
    windowed = [frame_cost(k, 4, 4, memory_resolution=16) for k in range(1, 201)]
    assert len({c.flops for c in windowed[3:]}) == 1 and len({c.state_bytes for c in windowed[3:]}) == 1
    full = [frame_cost(k, None, 4).flops for k in (10, 20, 40)]
    assert full[2] - full[1] == pytest.approx(2 * (full[1] - full[0]))  # growth is linear in k


def test_a_hand_count_on_a_tiny_shape():
    shape = CostShape(
        tokens=2, branches=2, width=3, depth=1, mlp_ratio=2.0, patch=1, in_channels=1, out_channels=1
    )
    q, d, keys = 4, 3, 8  # frame 2, window 4: two frames of two tokens in two branches
    expected = (
        2 * q * d * 3 * d + 4 * q * keys * d + 2 * q * d * d + 4 * q * d * 2 * d + 2 * q * d + 2 * q * d
    )
    assert call_flops(2, 4, shape) == expected
    cost = frame_cost(2, 4, 4, shape)
    assert cost.forwards == 5 and cost.flops == 5 * expected and cost.memory_bytes == 0
    assert kv_bytes(2, 4, shape) == 2 * 1 * keys * d * BYTES
    assert voxel_bytes(16) == 16**3 * 7 * 4


def test_the_student_needs_far_fewer_calls_than_a_32_step_sampler():
    assert frame_cost(5, 4, 32).forwards / frame_cost(5, 4, 4).forwards == pytest.approx(33 / 5)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="window"):
        keys_per_query(1, 0)
    with pytest.raises(ValueError, match="frame"):
        keys_per_query(0, 4)
    with pytest.raises(ValueError, match="steps"):
        frame_cost(1, 4, 0)
    with pytest.raises(ValueError, match="branches"):
        CostShape(branches=3)
    with pytest.raises(ValueError, match="resolution"):
        voxel_bytes(0)
