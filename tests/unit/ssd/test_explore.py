"""The explore notebook's library: pair keep probabilities against sampled masks, Eq. (3') against Eq. (3)
and Monte Carlo, mode factors against Eq. (5), loss ratios, the live field run, bad input."""

import numpy as np
import pytest
import torch

from neurips26.ssd.covariance import beta_spectrum, masked_covariance
from neurips26.ssd.explore import (
    FieldRunConfig,
    checkpoint_samples,
    train_field_run,
)
from neurips26.ssd.fields import GaussianField
from neurips26.ssd.general_masks import (
    correlation_factor,
    distance_profile,
    loss_ratios,
    masked_covariance_any,
    mode_factors,
    pair_keep_probability,
)
from neurips26.ssd.masks import sample_mask


@pytest.mark.parametrize(
    ("mask_type", "eta", "patch"),
    [("fixed", 0.9, 4), ("bernoulli", 0.7, 4), ("patch", 0.75, 2), ("patch", 0.5, 3)],
)
def test_pair_keep_probability_matches_sampled_masks(mask_type, eta, patch):
    size, draws = 8, 40_000
    exact = pair_keep_probability(size, eta, mask_type, patch=patch)
    m = (
        sample_mask((draws, size, size), eta, mask_type=mask_type, patch=patch, seed=3)
        .reshape(draws, -1)
        .double()
    )
    measured = (m.T @ m / draws).numpy()
    se = np.sqrt(exact * (1 - exact) / draws) + 1e-12
    assert np.abs(measured - exact).max() < 5.5 * se.max()
    assert np.allclose(exact, exact.T)


def test_patch_pairs_inside_a_block_are_kept_together():
    M = pair_keep_probability(8, 0.75, "patch", patch=4)  # 4 blocks, 1 kept
    assert M[0, 1] == M[0, 0] == 0.25  # pixels 0 and 1 share the top-left block
    assert M[0, 4] == 0.0  # another block: never kept together when only one block is kept


@pytest.mark.parametrize("mask_type", ["fixed", "bernoulli"])
def test_general_formula_equals_eq3_for_pixel_masks(mask_type):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 16)) @ rng.standard_normal((16, 16)) + rng.standard_normal(16)
    Sigma, mu = np.cov(X, rowvar=False, bias=True), X.mean(0)
    M = pair_keep_probability(4, 0.6, mask_type)
    general = masked_covariance_any(Sigma, M, mean=mu)
    assert np.allclose(general, masked_covariance(Sigma, 0.6, mean=mu, mask_type=mask_type), atol=1e-12)


def test_general_formula_matches_monte_carlo_for_patch_masks():
    size, n, eta = 4, 400, 0.5
    X = GaussianField(size).sample(n, 0).reshape(n, -1).double() + 0.5  # non-zero mean
    reps = 200
    m = (
        sample_mask((n * reps, size, size), eta, mask_type="patch", patch=2, seed=1)
        .reshape(n * reps, -1)
        .double()
    )
    Y = (X.repeat(reps, 1) * m).numpy()
    Sigma, mu = np.cov(X.numpy(), rowvar=False, bias=True), X.numpy().mean(0)
    exact = masked_covariance_any(Sigma, pair_keep_probability(size, eta, "patch", patch=2), mean=mu)
    centred = Y - Y.mean(0)
    estimate = centred.T @ centred / Y.shape[0]
    se = np.sqrt((centred**2).T @ (centred**2) / Y.shape[0] - estimate**2) / np.sqrt(Y.shape[0])
    assert np.max(np.abs(estimate - exact) / se) < 5.0


def test_correlation_factor_per_mask_type():
    d = 64
    assert np.allclose(correlation_factor(pair_keep_probability(8, 0.75, "bernoulli"))[0, 1], 0.25)
    k = round(0.1 * d)
    assert np.isclose(correlation_factor(pair_keep_probability(8, 0.9, "fixed"))[0, 1], (k - 1) / (d - 1))
    patch = correlation_factor(pair_keep_probability(8, 0.5, "patch", patch=2))
    assert np.isclose(patch[0, 1], 1.0) and np.isclose(patch[0, 2], (8 - 1) / (16 - 1))
    assert np.allclose(np.diag(patch), 1.0)


def test_mode_factors_equal_eq5_for_bernoulli_masks():
    Sigma = GaussianField(6).covariance()
    for eta in (0.3, 0.9, 0.98):
        ours = mode_factors(Sigma, pair_keep_probability(6, eta, "bernoulli"))
        ref = beta_spectrum(Sigma, eta)
        assert np.allclose(ours.eigenvalues, ref.eigenvalues)
        assert np.allclose(ours.beta, ref.beta, rtol=1e-10)


def test_distance_profile_against_a_direct_mean():
    size = 4
    rng = np.random.default_rng(1)
    values = rng.standard_normal((16, 16))
    r, mean = distance_profile(values, size)
    assert r[0] == 1.0 and np.isclose(r[-1], np.hypot(3, 3))
    # distance 1 pairs: horizontal and vertical neighbours (ordered pairs, both directions)
    pairs = [(i, j) for i in range(16) for j in range(16) if abs(i // 4 - j // 4) + abs(i % 4 - j % 4) == 1]
    assert np.isclose(mean[0], np.mean([values[i, j] for i, j in pairs]))
    rp, _ = distance_profile(values, size, periodic=True)
    assert rp.max() <= np.hypot(2, 2) + 1e-8


def test_loss_ratios_are_unbiased_for_fixed_masks_and_scaled_for_all():
    r = torch.randn(16, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    kept = loss_ratios(r, 0.75, n_masks=4000, seed=0)
    assert kept.shape == (4000, 16)
    assert abs(kept.mean() - 1.0) < 5 * kept.std() / np.sqrt(kept.size)  # every entry has its own mask
    all_ = loss_ratios(r, 0.75, normaliser="all", n_masks=200, seed=0)
    assert np.allclose(all_, loss_ratios(r, 0.75, n_masks=200, seed=0) * 16 / 64)  # k/d exactly
    assert np.allclose(loss_ratios(r, 0.0, n_masks=3, seed=0), 1.0)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="eta"):
        pair_keep_probability(8, 1.0)
    with pytest.raises(ValueError, match="mask_type"):
        pair_keep_probability(8, 0.5, "stripes")
    with pytest.raises(ValueError, match="eta"):
        pair_keep_probability(8, 0.98, "patch", patch=4)  # 4 blocks keep none
    with pytest.raises(ValueError, match="pair_prob"):
        masked_covariance_any(np.eye(4), np.ones((3, 3)))
    with pytest.raises(ValueError, match="residual"):
        loss_ratios(torch.zeros(3, 8, 8), 0.5)
    with pytest.raises(ValueError, match="normaliser"):
        loss_ratios(torch.ones(1, 1, 4, 4), 0.5, normaliser="none")
    with pytest.raises(ValueError, match="eta"):
        FieldRunConfig(eta=0.9, mask_type="patch")  # 4×4 blocks of an 8×8 field: none kept
    with pytest.raises(ValueError, match="n_train"):
        FieldRunConfig(n_train=0)
    with pytest.raises(ValueError, match="names"):
        checkpoint_samples(["digits-eta0", "digits-eta0"], "smoke")
    with pytest.raises(ValueError, match=r"names\[1\]"):
        checkpoint_samples(["digits-eta0", "digits-eta7"], "smoke")


def test_field_run_is_deterministic_and_scores_against_the_exact_score():
    cfg = FieldRunConfig(eta=0.9, n_train=16, steps=4, batch=8, n_eval=16, n_samples=4, sampler_steps=3)
    a, b = train_field_run(cfg, seed=0), train_field_run(cfg, seed=0)
    assert np.array_equal(a.loss, b.loss) and np.array_equal(a.per_sigma, b.per_sigma)
    assert a.loss.shape == (4,) and a.per_sigma.shape == a.empirical_per_sigma.shape == (8,)
    assert a.samples.shape == (4, 1, 8, 8)
    assert np.isclose(a.mean_error, a.per_sigma.mean())
    masked = train_field_run(FieldRunConfig(**{**cfg.__dict__, "input_masking": True}), seed=0)
    assert masked.per_sigma.shape == (8,) and np.all(np.isfinite(masked.per_sigma))
    assert np.array_equal(masked.empirical_per_sigma, a.empirical_per_sigma)  # same data, same points
