"""EDM denoiser: preconditioning identities, the masked residual, parametrisation conversions, errors."""

import math
from dataclasses import replace

import pytest
import torch

from neurips26.ssd.denoiser import (
    DenoiserConfig,
    EDMDenoiser,
    edm_target,
    eps_prediction,
    loss_weight,
    preconditioning,
    sample_sigma,
    score,
    v_prediction,
    v_target,
)

TINY = DenoiserConfig(image_size=8, channels_in=2, channels=(8, 16))
SIGMAS = torch.tensor([0.003, 0.05, 0.4, 1.7, 20.0, 80.0], dtype=torch.float64)


def batch(config=TINY, b=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    shape = (b, config.channels_in, config.image_size, config.image_size)
    return torch.randn(shape, generator=g), torch.randn(shape, generator=g)


@pytest.mark.parametrize("sigma_data", [0.5, 1.3])
def test_preconditioning_gives_unit_variance_input_and_target(sigma_data):
    c = preconditioning(SIGMAS, sigma_data)
    # Var[c_in x] = c_in² (σ_d² + σ²) = 1 for x = x0 + σ n, x0 ~ (0, σ_d²).
    torch.testing.assert_close(c.c_in**2 * (sigma_data**2 + SIGMAS**2), torch.ones_like(SIGMAS))
    # Var[T] = ((1 - c_skip)² σ_d² + c_skip² σ²) / c_out² = 1 (EDM's choice of c_skip minimises c_out).
    var_t = ((1 - c.c_skip) ** 2 * sigma_data**2 + c.c_skip**2 * SIGMAS**2) / c.c_out**2
    torch.testing.assert_close(var_t, torch.ones_like(SIGMAS))
    torch.testing.assert_close(loss_weight(SIGMAS, sigma_data) * c.c_out**2, torch.ones_like(SIGMAS))
    torch.testing.assert_close(c.c_noise, torch.log(SIGMAS) / 4)
    # Float σ gives floats with the same values.
    f = preconditioning(0.4, sigma_data)
    assert all(isinstance(v, float) for v in f)
    assert math.isclose(f.c_skip, sigma_data**2 / (0.16 + sigma_data**2))


def test_target_variance_is_one_on_gaussian_data():
    g = torch.Generator().manual_seed(1)
    x0 = 0.5 * torch.randn(4000, 1, 4, 4, generator=g, dtype=torch.float64)
    n = torch.randn(x0.shape, generator=g, dtype=torch.float64)
    for sigma in (0.01, 0.5, 30.0):
        assert abs(edm_target(x0, n, sigma).var().item() - 1.0) < 0.05


def test_denoiser_is_c_skip_x_plus_c_out_raw_and_tends_to_identity_at_small_sigma():
    model = EDMDenoiser(TINY, seed=0)
    x, _ = batch()
    sigma = torch.tensor([0.01, 0.1, 0.5, 1.0, 5.0, 50.0])
    c = preconditioning(sigma.view(-1, 1, 1, 1), TINY.sigma_data)
    torch.testing.assert_close(model(x, sigma), c.c_skip * x + c.c_out * model.raw(x, sigma))
    # c_skip → 1, c_out → 0 as σ → 0: D(x; σ) → x whatever the network.
    gap = (model(x, 1e-6) - x).abs().max().item()
    assert gap < 1e-4
    assert (model(x, 0.5) - x).abs().max().item() > 100 * gap


def test_masked_residual_equals_lambda_weighted_x0_residual_entry_by_entry():
    model = EDMDenoiser(TINY, seed=0)
    x0, n = batch()
    sigma = torch.tensor([0.02, 0.1, 0.5, 1.0, 4.0, 40.0])
    x = x0 + sigma.view(-1, 1, 1, 1) * n
    f_residual = model.raw(x, sigma) - edm_target(x0, n, sigma)
    d_residual = model(x, sigma) - x0
    weighted = loss_weight(sigma, TINY.sigma_data).view(-1, 1, 1, 1) * d_residual**2
    torch.testing.assert_close(f_residual**2, weighted, rtol=1e-4, atol=1e-5)


def test_eps_and_v_conversions_recover_the_true_noise_and_velocity():
    x0, n = (t.double() for t in batch())
    sigma = torch.tensor([0.02, 0.1, 0.5, 1.0, 4.0, 40.0], dtype=torch.float64)
    x = x0 + sigma.view(-1, 1, 1, 1) * n
    torch.testing.assert_close(eps_prediction(x0, x, sigma), n)
    torch.testing.assert_close(v_prediction(x0, x, sigma), v_target(x0, n, sigma))
    # EDM's F target is minus the velocity.
    torch.testing.assert_close(v_target(x0, n, sigma), -edm_target(x0, n, sigma))


def test_eps_and_v_residuals_are_rescaled_x0_residuals():
    x0, n = batch()
    sigma = torch.tensor([0.02, 0.1, 0.5, 1.0, 4.0, 40.0], dtype=torch.float64)
    x0, n = x0.double(), n.double()
    x = x0 + sigma.view(-1, 1, 1, 1) * n
    denoised = x0 + 0.3 * torch.randn(x0.shape, generator=torch.Generator().manual_seed(2), dtype=x0.dtype)
    s = sigma.view(-1, 1, 1, 1)
    c_out = preconditioning(s).c_out
    torch.testing.assert_close(eps_prediction(denoised, x, sigma) - n, (x0 - denoised) / s)
    torch.testing.assert_close(
        v_prediction(denoised, x, sigma) - v_target(x0, n, sigma), (x0 - denoised) / c_out
    )


def test_score_of_the_exact_gaussian_denoiser_is_the_gaussian_score():
    var = 0.7  # x0 ~ N(0, var I): D(x; σ) = var / (var + σ²) x and ∇ log p_σ(x) = -x / (var + σ²)
    x = batch()[0].double()
    sigma = torch.tensor([0.02, 0.1, 0.5, 1.0, 4.0, 40.0], dtype=torch.float64)

    def wiener(y, s):
        return var / (var + s.view(-1, 1, 1, 1) ** 2) * y

    torch.testing.assert_close(score(wiener, x, sigma), -x / (var + sigma.view(-1, 1, 1, 1) ** 2))


def test_sample_sigma_is_log_normal_and_seeded():
    a = sample_sigma(20_000, torch.Generator().manual_seed(0))
    b = sample_sigma(20_000, torch.Generator().manual_seed(0))
    assert torch.equal(a, b) and a.shape == (20_000,) and bool((a > 0).all())
    log = torch.log(a)
    assert abs(log.mean().item() + 1.2) < 0.03 and abs(log.std().item() - 1.2) < 0.03
    other = sample_sigma(8, torch.Generator().manual_seed(0), p_mean=0.0, p_std=0.0)
    torch.testing.assert_close(other, torch.ones(8))


def test_seed_fixes_the_weights_and_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    a, b, c = EDMDenoiser(TINY, seed=3), EDMDenoiser(TINY, seed=3), EDMDenoiser(TINY, seed=4)
    assert torch.equal(torch.random.get_rng_state(), before)
    pa, pb, pc = (torch.cat([p.flatten() for p in m.parameters()]) for m in (a, b, c))
    assert torch.equal(pa, pb) and not torch.equal(pa, pc)


def test_dropout_is_active_in_training_only_and_keeps_the_state_dict():
    plain = EDMDenoiser(TINY, seed=0)
    drop = EDMDenoiser(replace(TINY, dropout=0.3), seed=0)
    assert drop.state_dict().keys() == plain.state_dict().keys()
    x, _ = batch()
    drop.train()
    assert not torch.allclose(drop(x, 1.0), drop(x, 1.0))
    drop.eval()
    torch.testing.assert_close(drop(x, 1.0), plain.eval()(x, 1.0))


def test_extra_input_channels_feed_the_network():
    config = replace(TINY, extra_input_channels=1)
    model = EDMDenoiser(config, seed=0)
    x, _ = batch()
    ones, zeros = torch.ones(6, 1, 8, 8), torch.zeros(6, 1, 8, 8)
    assert not torch.allclose(model(x, 1.0, ones), model(x, 1.0, zeros))
    with pytest.raises(ValueError, match="extra"):
        model(x, 1.0)
    with pytest.raises(ValueError, match="extra"):
        EDMDenoiser(TINY, seed=0)(x, 1.0, ones)


def test_circular_denoiser_commutes_with_shifts_by_the_downsampling_factor():
    model = EDMDenoiser(replace(TINY, circular=True), seed=0).eval()
    x, _ = batch()
    shifted = torch.roll(x, (2, 4), (2, 3))
    torch.testing.assert_close(model(shifted, 0.7), torch.roll(model(x, 0.7), (2, 4), (2, 3)))


def test_small_variant_halves_the_widths():
    config = DenoiserConfig(image_size=8, channels_in=1, small=True)
    assert config.unet_config.channels == (16, 32)
    small, full = EDMDenoiser(config, seed=0), EDMDenoiser(replace(config, small=False), seed=0)
    assert small.num_parameters() < full.num_parameters() / 3
    assert small(torch.zeros(2, 1, 8, 8), 1.0).shape == (2, 1, 8, 8)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), torch.tensor([0.5, 0.0, 1.0, 1.0, 1.0, 1.0])])
def test_non_positive_sigma_is_rejected_naming_sigma(bad):
    model = EDMDenoiser(TINY, seed=0)
    x0, n = batch()
    with pytest.raises(ValueError, match="sigma"):
        model(x0, bad)
    with pytest.raises(ValueError, match="sigma"):
        edm_target(x0, n, bad)
    with pytest.raises(ValueError, match="sigma"):
        preconditioning(bad)
    with pytest.raises(ValueError, match="sigma"):
        loss_weight(bad)


def test_bad_shapes_are_rejected_naming_the_argument():
    x0, n = batch()
    with pytest.raises(ValueError, match="x0"):
        edm_target(x0[0], n[0], 1.0)
    with pytest.raises(ValueError, match="noise"):
        edm_target(x0, n[:, :1], 1.0)
    with pytest.raises(ValueError, match="sigma"):
        edm_target(x0, n, torch.ones(3))
    model = EDMDenoiser(TINY, seed=0)
    with pytest.raises(ValueError, match="x"):
        model(x0[:, :1], 1.0)
    with pytest.raises(ValueError, match="x"):
        model(torch.zeros(2, 2, 16, 16), 1.0)


@pytest.mark.parametrize(
    "changes,name",
    [
        ({"image_size": 7}, "image_size"),
        ({"channels_in": 0}, "channels_in"),
        ({"channels": (12, 16)}, "channels"),
        ({"small": True, "channels": (8, 16)}, "channels"),
        ({"sigma_data": 0.0}, "sigma_data"),
        ({"dropout": 1.0}, "dropout"),
        ({"extra_input_channels": -1}, "extra_input_channels"),
    ],
)
def test_config_validation_names_the_field(changes, name):
    with pytest.raises(ValueError, match=name):
        replace(TINY, **changes)
