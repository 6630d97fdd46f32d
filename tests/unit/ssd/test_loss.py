"""SSD loss: η = 0 is the full loss bit for bit, unbiasedness over masks, zero gradient off the mask."""

import itertools

import pytest
import torch

from neurips26.ssd.loss import full_loss, input_masked, per_example_loss, ssd_loss
from neurips26.ssd.masks import MASK_TYPES, sample_mask


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(0)
    pred = torch.randn(6, 3, 16, 16, generator=g)
    target = torch.randn(6, 3, 16, 16, generator=g)
    weight = torch.rand(6, generator=g) + 0.5
    return pred, target, weight


@pytest.mark.parametrize("mask_type", MASK_TYPES)
def test_eta_zero_is_the_plain_weighted_mse_bit_for_bit(batch, mask_type):
    pred, target, weight = batch
    plain = (weight * ((pred - target) ** 2).mean(dim=(1, 2, 3))).mean()
    mask = sample_mask((6, 16, 16), 0.0, mask_type=mask_type, seed=0)
    assert torch.equal(ssd_loss(pred, target, mask, weight=weight), plain)
    assert torch.equal(ssd_loss(pred, target, None, weight=weight), plain)
    assert torch.equal(full_loss(pred, target, weight=weight), plain)
    assert torch.equal(ssd_loss(pred, target, None), ((pred - target) ** 2).mean(dim=(1, 2, 3)).mean())


def test_expectation_over_fixed_masks_is_the_full_loss():
    """E_m[ℓ_SSD] = ℓ_full under the kept-count normaliser (10⁴ masks, rtol 1 %); "all" is off by k/HW."""
    g = torch.Generator().manual_seed(1)
    ramp = torch.linspace(0.2, 3.0, 16).reshape(1, 1, 1, 16)  # a residual that varies across pixels
    pred = torch.randn(1, 3, 16, 16, generator=g) * ramp
    target = torch.zeros(1, 3, 16, 16)
    n = 10_000
    mask = sample_mask((n, 16, 16), 0.9, seed=2)
    kept = per_example_loss(pred.expand(n, -1, -1, -1), target.expand(n, -1, -1, -1), mask)
    full = float(ssd_loss(pred, target, None))
    assert float(kept.mean()) == pytest.approx(full, rel=0.01)
    every = per_example_loss(pred.expand(n, -1, -1, -1), target.expand(n, -1, -1, -1), mask, normaliser="all")
    assert float(every.mean()) == pytest.approx(full * 26 / 256, rel=0.01)  # k = round(0.1 · 256) = 26


def test_expectation_over_all_fixed_masks_is_exact():
    """Average over every one of the C(6, 2) masks of a 2×3 image equals the full loss exactly."""
    g = torch.Generator().manual_seed(3)
    pred, target = torch.randn(1, 2, 2, 3, generator=g, dtype=torch.float64), torch.zeros(1, 2, 2, 3)
    target = target.double()
    masks = []
    for kept in itertools.combinations(range(6), 2):
        m = torch.zeros(6, dtype=torch.float64)
        m[list(kept)] = 1.0
        masks.append(m.reshape(1, 1, 2, 3))
    mask = torch.cat(masks)
    values = per_example_loss(pred.expand(15, -1, -1, -1), target.expand(15, -1, -1, -1), mask)
    assert torch.allclose(values.mean(), ssd_loss(pred, target, None), rtol=1e-14, atol=0)


def test_expectation_over_bernoulli_masks_with_all_normaliser():
    g = torch.Generator().manual_seed(4)
    pred, target = torch.randn(1, 1, 8, 8, generator=g), torch.zeros(1, 1, 8, 8)
    n = 10_000
    mask = sample_mask((n, 8, 8), 0.5, mask_type="bernoulli", seed=5)
    values = per_example_loss(
        pred.expand(n, -1, -1, -1), target.expand(n, -1, -1, -1), mask, normaliser="all"
    )
    assert float(values.mean()) == pytest.approx(0.5 * float(ssd_loss(pred, target, None)), rel=0.01)


def test_gradient_is_exactly_zero_at_masked_pixels(batch):
    pred, target, weight = batch
    pred = pred.clone().requires_grad_(True)
    mask = sample_mask((6, 16, 16), 0.98, seed=6)
    ssd_loss(pred, target, mask, weight=weight).backward()
    grad = pred.grad
    masked = (mask == 0).expand_as(grad)
    assert torch.all(grad[masked] == 0)
    assert torch.all(grad[~masked] != 0)  # and the kept pixels do get a gradient
    # perturbing a masked output pixel leaves the loss unchanged
    with torch.no_grad():
        b, _, i, j = (mask == 0).nonzero()[0].tolist()
        moved = pred.detach().clone()
        moved[b, :, i, j] += 10.0
        assert torch.equal(
            ssd_loss(moved, target, mask, weight=weight), ssd_loss(pred, target, mask, weight=weight)
        )


def test_normalisers_and_weights_relate_as_defined(batch):
    pred, target, weight = batch
    mask = sample_mask((6, 16, 16), 0.9, seed=7)
    kept = per_example_loss(pred, target, mask)
    every = per_example_loss(pred, target, mask, normaliser="all")
    assert torch.allclose(every, kept * 26 / 256, rtol=1e-6)
    by_hand = ((mask * (pred - target) ** 2).sum(dim=(1, 2, 3)) / (3 * 26) * weight).mean()
    assert torch.allclose(ssd_loss(pred, target, mask, weight=weight), by_hand, rtol=1e-6)


def test_per_channel_mask_counts_kept_entries():
    pred, target = torch.ones(1, 2, 2, 2), torch.zeros(1, 2, 2, 2)
    pred[0, 0, 0, 0] = 3.0
    mask = torch.zeros(1, 2, 2, 2)
    mask[0, 0, 0, 0] = mask[0, 1, 1, 1] = 1.0
    assert float(per_example_loss(pred, target, mask)) == pytest.approx((9 + 1) / 2)


def test_empty_bernoulli_mask_contributes_zero_not_nan():
    pred, target = torch.ones(2, 1, 4, 4), torch.zeros(2, 1, 4, 4)
    mask = torch.zeros(2, 1, 4, 4)
    mask[1, 0, 0, 0] = 1.0
    assert per_example_loss(pred, target, mask).tolist() == [0.0, 1.0]


def test_input_masked_zeroes_masked_pixels_and_appends_the_mask(batch):
    x_t = batch[0]
    mask = sample_mask((6, 16, 16), 0.5, seed=8)
    out = input_masked(x_t, mask)
    assert out.shape == (6, 4, 16, 16)
    assert torch.equal(out[:, 3:], mask)
    assert torch.all(out[:, :3][(mask == 0).expand(-1, 3, -1, -1)] == 0)
    assert torch.equal(out[:, :3][(mask == 1).expand(-1, 3, -1, -1)], x_t[(mask == 1).expand(-1, 3, -1, -1)])


def test_bad_inputs_name_the_argument(batch):
    pred, target, weight = batch
    with pytest.raises(ValueError, match="mask"):
        ssd_loss(pred, target, torch.ones(6, 1, 8, 8))
    with pytest.raises(ValueError, match="mask"):
        ssd_loss(pred, target, torch.full((6, 1, 16, 16), 0.3))
    with pytest.raises(ValueError, match="normaliser.*kept.*all"):
        ssd_loss(pred, target, None, normaliser="mean")
    with pytest.raises(ValueError, match="pred"):
        ssd_loss(pred[0], target, None)
    with pytest.raises(ValueError, match="pred"):
        ssd_loss(pred[:, :2], target, None)
    with pytest.raises(ValueError, match="weight"):
        ssd_loss(pred, target, None, weight=weight[:3])
    with pytest.raises(ValueError, match="x_t"):
        input_masked(pred[0], torch.ones(6, 1, 16, 16))
    with pytest.raises(ValueError, match="mask"):
        input_masked(pred, torch.ones(6, 3, 16, 16))
