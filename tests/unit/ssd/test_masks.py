"""Mask samplers: exact kept counts, freshness across batch and calls, uniformity, patches, bad input."""

import pytest
import torch

from neurips26.ssd.denoiser import sample_sigma
from neurips26.ssd.masks import MASK_TYPES, check_mask, draw_device, kept_count, sample_mask


@pytest.mark.parametrize(("shape", "eta"), [((6, 16, 16), 0.98), ((5, 8, 8), 0.9), ((4, 7, 9), 0.5)])
def test_fixed_mask_keeps_exactly_round_count_per_example(shape, eta):
    b, h, w = shape
    mask = sample_mask(shape, eta, seed=0)
    assert mask.shape == (b, 1, h, w) and mask.dtype == torch.float32
    assert set(mask.unique().tolist()) <= {0.0, 1.0}
    expected = round((1 - eta) * h * w)
    assert mask.sum(dim=(1, 2, 3)).tolist() == [float(expected)] * b


def test_masks_differ_across_the_batch_and_across_steps():
    g = torch.Generator().manual_seed(0)
    first = sample_mask((32, 16, 16), 0.9, generator=g)
    second = sample_mask((32, 16, 16), 0.9, generator=g)
    flat = first.reshape(32, -1)
    assert len({tuple(row.tolist()) for row in flat}) == 32  # all 32 examples get different masks
    assert not torch.equal(first, second)  # the next step draws fresh masks
    # and the draw is repeatable from the seed
    assert torch.equal(first, sample_mask((32, 16, 16), 0.9, seed=0))


def test_fixed_mask_keeps_every_pixel_equally_often():
    eta, hw, draws = 0.9, 64, 20_000
    mask = sample_mask((draws, 8, 8), eta, seed=1).reshape(draws, hw)
    p = kept_count(hw, eta) / hw
    freq = mask.mean(dim=0)
    se = (p * (1 - p) / draws) ** 0.5
    assert (freq - p).abs().max() < 5 * se


def test_bernoulli_mask_keeps_each_pixel_with_probability_one_minus_eta():
    mask = sample_mask((4000, 8, 8), 0.75, mask_type="bernoulli", seed=2)
    counts = mask.sum(dim=(1, 2, 3))
    assert abs(float(mask.mean()) - 0.25) < 5 * (0.25 * 0.75 / mask.numel()) ** 0.5
    assert counts.unique().numel() > 5  # counts vary, unlike the fixed-count sampler


def test_patch_mask_keeps_whole_blocks():
    mask = sample_mask((10, 16, 16), 0.75, mask_type="patch", patch=4, seed=3)[:, 0]
    blocks = mask.reshape(10, 4, 4, 4, 4)  # (B, block row, row in block, block col, col in block)
    assert torch.equal(blocks, blocks[:, :, :1, :, :1].expand_as(blocks))  # constant in each block
    assert blocks[:, :, 0, :, 0].sum(dim=(1, 2)).tolist() == [4.0] * 10  # round(0.25 * 16) blocks kept
    ragged = sample_mask((3, 10, 7), 0.5, mask_type="patch", patch=4, seed=0)
    assert ragged.shape == (3, 1, 10, 7)


@pytest.mark.parametrize("mask_type", MASK_TYPES)
def test_eta_zero_keeps_every_pixel(mask_type):
    assert torch.equal(sample_mask((3, 8, 8), 0.0, mask_type=mask_type, seed=0), torch.ones(3, 1, 8, 8))


def test_bool_dtype():
    mask = sample_mask((2, 8, 8), 0.5, seed=0, dtype=torch.bool)
    assert mask.dtype == torch.bool and int(mask.sum()) == 64


@pytest.mark.parametrize("eta", [1.0, -0.1, 1.5, 0.999])
def test_bad_eta_names_eta(eta):
    with pytest.raises(ValueError, match="eta"):
        sample_mask((2, 16, 16), eta)


def test_patch_mask_that_keeps_no_block_names_eta():
    with pytest.raises(ValueError, match="eta"):
        sample_mask((2, 8, 8), 0.9, mask_type="patch", patch=4)  # 4 blocks, round(0.4) = 0


def test_bad_mask_type_lists_options():
    with pytest.raises(ValueError, match="mask_type.*fixed.*bernoulli.*patch"):
        sample_mask((2, 8, 8), 0.5, mask_type="random")


def test_other_bad_arguments():
    with pytest.raises(ValueError, match="shape_bhw"):
        sample_mask((2, 8), 0.5)
    with pytest.raises(ValueError, match="patch"):
        sample_mask((2, 8, 8), 0.5, mask_type="patch", patch=0)
    with pytest.raises(ValueError, match="generator or seed"):
        sample_mask((2, 8, 8), 0.5, seed=0, generator=torch.Generator())


def test_check_mask_rejects_mismatch_and_non_binary():
    images = torch.zeros(4, 3, 8, 8)
    assert check_mask(torch.ones(4, 1, 8, 8), images).shape == (4, 1, 8, 8)
    for bad in (torch.ones(4, 1, 8, 7), torch.ones(3, 1, 8, 8), torch.ones(4, 2, 8, 8), torch.ones(4, 8, 8)):
        with pytest.raises(ValueError, match="mask"):
            check_mask(bad, images)
    with pytest.raises(ValueError, match="mask"):
        check_mask(torch.full((4, 1, 8, 8), 0.5), images)


def test_draws_happen_where_the_generator_can_drive_them():
    cpu = torch.Generator()
    assert draw_device(cpu, None) == torch.device("cpu")
    assert draw_device(None, None) == torch.device("cpu")
    assert draw_device(cpu, "meta") == torch.device("meta")  # meta ignores generators: draw in place
    assert draw_device(cpu, "cuda") == torch.device("cpu")  # a CPU stream stays on the CPU, then moves
    assert draw_device(None, "cuda") == torch.device("cuda")  # the global generator of that device
    with pytest.raises(TypeError, match="generator"):
        draw_device(0, None)
    with pytest.raises(TypeError, match="device"):
        draw_device(cpu, 3)


@pytest.mark.parametrize("mask_type", MASK_TYPES)
def test_masks_and_sigmas_are_made_on_the_requested_device(mask_type):
    """Asked for the meta device, the mask and σ are created there (no CPU draw moved afterwards), and
    on the CPU the same generator state gives the same values as without a device."""
    mask = sample_mask((3, 8, 8), 0.5, mask_type=mask_type, generator=torch.Generator(), device="meta")
    assert mask.device.type == "meta" and mask.shape == (3, 1, 8, 8)
    assert sample_sigma(3, torch.Generator(), device="meta").device.type == "meta"
    a = sample_mask((3, 8, 8), 0.5, mask_type=mask_type, generator=torch.Generator().manual_seed(2))
    b = sample_mask(
        (3, 8, 8), 0.5, mask_type=mask_type, generator=torch.Generator().manual_seed(2), device="cpu"
    )
    assert torch.equal(a, b)
    assert torch.equal(
        sample_sigma(4, torch.Generator().manual_seed(1)),
        sample_sigma(4, torch.Generator().manual_seed(1), device="cpu"),
    )
