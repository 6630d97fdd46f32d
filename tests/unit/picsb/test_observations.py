"""Tests of the sensors: irregular probe columns, mask densities, observations and bad input."""

import math

import pytest
import torch

from neurips26.picsb import observations as O
from neurips26.picsb.burgers import initial_conditions, solve


def test_probe_columns_are_seeded_distinct_in_range_and_never_equally_spaced():
    assert O.probe_columns(4, 64, seed=0) == O.probe_columns(4, 64, seed=0)
    layouts = {O.probe_columns(4, 64, seed=s) for s in range(300)}
    assert len(layouts) > 250
    for cols in layouts:
        assert len(set(cols)) == 4 and all(0 <= c < 64 for c in cols) and list(cols) == sorted(cols)
        gaps = {b - a for a, b in zip(cols, cols[1:] + (cols[0] + 64,), strict=True)}
        assert len(gaps) > 1


def test_equal_spacing_aliases_mode_three_onto_mode_one_irregular_does_not():
    x = 2 * math.pi * torch.arange(64, dtype=torch.float64) / 64
    regular = [0, 16, 32, 48]
    assert torch.allclose(torch.sin(3 * x[regular]), -torch.sin(x[regular]), atol=1e-12)
    irregular = list(O.probe_columns(4, 64, seed=0))
    assert not torch.allclose(torch.sin(3 * x[irregular]), -torch.sin(x[irregular]), atol=1e-3)


def test_probe_mask_reads_whole_columns_at_six_and_a_quarter_percent():
    mask = O.probe_mask((3, 10, 41, 60), 32, 64)
    assert mask.dtype == torch.bool and mask.shape == (32, 64)
    assert mask.float().mean().item() == 0.0625
    assert mask[:, [3, 10, 41, 60]].all() and mask.sum().item() == 4 * 32


def test_random_masks_have_the_exact_count_and_are_seeded_and_independent():
    masks = O.random_mask(6, 32, 64, 0.03, seed=1)
    assert masks.shape == (6, 32, 64) and masks.dtype == torch.bool
    assert (masks.sum((-2, -1)) == round(0.03 * 2048)).all()
    assert torch.equal(masks, O.random_mask(6, 32, 64, 0.03, seed=1))
    assert not torch.equal(masks[0], masks[1])


def test_make_masks_for_both_layouts():
    probes = O.make_masks(5, 32, 64, O.ObservationConfig(), seed=2)
    assert probes.shape == (5, 32, 64) and all(torch.equal(probes[0], m) for m in probes)
    assert torch.equal(probes[0], O.probe_mask(O.probe_columns(4, 64, 2), 32, 64))
    random = O.make_masks(5, 32, 64, O.ObservationConfig(kind="random"), seed=2)
    assert torch.equal(random, O.random_mask(5, 32, 64, 0.03, 2))


def test_observations_are_exact_on_the_sensors_and_zero_elsewhere():
    u = solve(initial_conditions(4, seed=0))
    mask = O.make_masks(4, 32, 64, O.ObservationConfig(), seed=0)
    y = O.observe(u, mask)
    assert torch.equal(y[mask], u[mask]) and (y[~mask] == 0).all()


def test_noisy_observations_are_seeded_with_the_right_spread():
    u = solve(initial_conditions(16, seed=1))
    mask = O.make_masks(16, 32, 64, O.ObservationConfig(kind="random", fraction=0.5), seed=1)
    y = O.observe(u, mask, sigma_o=0.01, seed=3)
    assert torch.equal(y, O.observe(u, mask, sigma_o=0.01, seed=3))
    noise = (y - u)[mask]
    assert abs(noise.std().item() - 0.01) < 0.0005 and abs(noise.mean().item()) < 0.0005
    assert (y[~mask] == 0).all()
    assert O.observe(u.float(), mask, 0.01, 3).dtype == torch.float32


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="sensor_columns"):
        O.probe_mask((3, 64), 32, 64)
    with pytest.raises(ValueError, match="sensor_columns"):
        O.probe_mask((-1, 5), 32, 64)
    with pytest.raises(ValueError, match="sensor_columns"):
        O.probe_mask((5, 5), 32, 64)
    u = torch.zeros(2, 32, 64, dtype=torch.float64)
    with pytest.raises(ValueError, match="mask"):
        O.observe(u, torch.ones(32, 64, dtype=torch.bool))
    with pytest.raises(TypeError, match="mask"):
        O.observe(u, torch.ones(2, 32, 64))
    with pytest.raises(ValueError, match="sigma_o"):
        O.observe(u, torch.ones(2, 32, 64, dtype=torch.bool), sigma_o=-0.1)
    with pytest.raises(ValueError, match="kind"):
        O.ObservationConfig(kind="grid")
    with pytest.raises(ValueError, match="fraction"):
        O.ObservationConfig(fraction=0.0)
    with pytest.raises(ValueError, match="grid"):
        O.probe_columns(4, 3, seed=0)
