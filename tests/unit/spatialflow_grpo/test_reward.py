"""Tests of the oracle region rewards: ground truth scores 1, the source fails, one wrong square, weights."""

import math

import pytest
import torch

from neurips26.spatialflow_grpo.editworld import K_MAX, PALETTE, make_suite, sample_cases
from neurips26.spatialflow_grpo.reward import (
    COLOUR_SCALE,
    COLOUR_TOL,
    PRESERVE_SCALE,
    PSNR_CAP,
    PSNR_MIN,
    background_psnr,
    colour_errors,
    region_rewards,
    region_weights,
    scalar_reward,
    success,
)


@pytest.fixture(scope="module")
def batch():
    return sample_cases(64, 2)


def test_ground_truth_target_scores_one_and_succeeds(batch):
    r = region_rewards(batch.target, batch)
    assert r.shape == (len(batch), K_MAX + 1) and r.dtype == torch.float32
    assert torch.equal(r[batch.region_valid], torch.ones(int(batch.region_valid.sum())))
    assert (r[~batch.region_valid] == 0).all()
    assert success(batch.target, batch).all()
    assert torch.equal(background_psnr(batch.target, batch), torch.full((len(batch),), PSNR_CAP))
    errors = colour_errors(batch.target, batch)
    assert errors.shape == (len(batch), K_MAX)
    assert torch.equal(errors.isnan(), ~batch.region_valid[:, 1:])
    assert (errors[batch.region_valid[:, 1:]] == 0).all()
    for weighting in ("equal", "area"):
        assert torch.allclose(scalar_reward(r, batch, weighting), torch.ones(len(batch)))


def test_unedited_source_keeps_the_background_but_fails(batch):
    r = region_rewards(batch.source, batch)
    assert torch.equal(r[:, 0], torch.ones(len(batch)))
    edit = batch.region_valid.clone()
    edit[:, 0] = False
    # palette colours are ≥ 1 apart, so r_k ≤ exp(−1 / COLOUR_SCALE)
    assert (r[edit] <= math.exp(-1.0 / COLOUR_SCALE) + 1e-9).all()
    assert not success(batch.source, batch).any()
    assert (colour_errors(batch.source, batch)[edit[:, 1:]] >= 1.0 - 1e-6).all()


def test_one_wrong_square_fails_and_drops_only_its_region():
    cases = make_suite("multiedit", n=16, seed=4)
    edited = cases.target.clone()
    inside = cases.masks[:, 2].bool()  # clause 2's square, every case has ≥ 2 clauses
    edited.permute(0, 2, 3, 1)[inside] = torch.tensor(PALETTE["red"]) * 0.5 + 0.25
    r, ok = region_rewards(edited, cases), success(edited, cases)
    assert not ok.any()
    assert (r[:, 2] < 0.5).all()
    keep = cases.region_valid.clone()
    keep[:, 2] = False
    assert torch.equal(r[keep], torch.ones(int(keep.sum())))
    assert (r[:, 2] < scalar_reward(r, cases)).all()


def test_rewards_match_the_formulas_on_a_random_edit(batch):
    g = torch.Generator().manual_seed(0)
    edited = (batch.target + 0.1 * torch.randn(batch.target.shape, generator=g)).clamp(0, 1)
    r = region_rewards(edited, batch)
    psnr = background_psnr(edited, batch)
    errors = colour_errors(edited, batch)
    for i in range(8):
        omega0 = batch.masks[i, 0].bool()
        mse = (edited[i][:, omega0] - batch.source[i][:, omega0]).pow(2).mean()
        assert torch.isclose(r[i, 0], torch.exp(-mse / PRESERVE_SCALE), rtol=1e-5)
        assert torch.isclose(psnr[i], -10 * torch.log10(mse), rtol=1e-5)
        for k in range(1, int(batch.n_clauses[i]) + 1):
            mean = edited[i][:, batch.masks[i, k].bool()].mean(dim=1)
            err = (mean - batch.target_colours[i, k - 1]).norm()
            assert torch.isclose(errors[i, k - 1], err, rtol=1e-5, atol=1e-7)
            assert torch.isclose(r[i, k], torch.exp(-(err**2) / COLOUR_SCALE), rtol=1e-5)
    expected = ((errors <= COLOUR_TOL) | errors.isnan()).all(dim=1) & (psnr >= PSNR_MIN)
    assert torch.equal(success(edited, batch), expected)


def test_tinted_background_lowers_psnr_by_the_formula(batch):
    edited = batch.target.clone()
    edited[:, 1] = torch.where(batch.masks[:, 0].bool(), edited[:, 1] + 0.02, edited[:, 1])
    # MSE over Ω₀ and 3 channels = 0.02² / 3
    assert torch.allclose(
        background_psnr(edited, batch), torch.full((len(batch),), -10 * math.log10(4e-4 / 3))
    )
    assert success(edited, batch).all()


def test_weights_sum_to_one_over_valid_regions(batch):
    for weighting in ("equal", "area"):
        w = region_weights(batch, weighting)
        assert torch.allclose(w.sum(dim=1), torch.ones(len(batch)))
        assert (w[~batch.region_valid] == 0).all() and (w[batch.region_valid] > 0).all()
    area = region_weights(batch, "area")
    assert torch.equal(area, batch.masks.sum(dim=(2, 3)) / 256)
    r = torch.rand(len(batch), K_MAX + 1, generator=torch.Generator().manual_seed(1))
    r = torch.where(batch.region_valid, r, torch.zeros_like(r))
    equal = torch.stack([r[i, batch.region_valid[i]].mean() for i in range(len(batch))])
    assert torch.allclose(scalar_reward(r, batch, "equal"), equal)
    assert torch.allclose(scalar_reward(r, batch, "area"), (r * batch.masks.sum(dim=(2, 3))).sum(1) / 256)


@pytest.mark.parametrize(
    ("call", "error", "name"),
    [
        (lambda b: region_rewards(b.target[:, :2], b), ValueError, "edited"),
        (lambda b: region_rewards(b.target[:3], b), ValueError, "edited"),
        (lambda b: region_rewards(b.target.numpy(), b), TypeError, "edited"),
        (lambda b: region_rewards(b.target.long(), b), TypeError, "edited"),
        (lambda b: region_rewards(b.target, b.target), TypeError, "batch"),
        (lambda b: success(b.target[:, :, :8], b), ValueError, "edited"),
        (lambda b: background_psnr([1.0], b), TypeError, "edited"),
        (lambda b: colour_errors(b.target[1:], b), ValueError, "edited"),
        (lambda b: scalar_reward(torch.ones(len(b), 3), b), ValueError, "rewards"),
        (lambda b: scalar_reward([1.0], b), TypeError, "rewards"),
        (lambda b: scalar_reward(torch.ones(len(b), 4), b, "median"), ValueError, "weighting"),
        (lambda b: region_weights(b, 3), TypeError, "weighting"),
    ],
)
def test_bad_inputs_name_the_argument(batch, call, error, name):
    with pytest.raises(error, match=rf"\b{name}\b"):
        call(batch)
