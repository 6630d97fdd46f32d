"""The shared training step: SSD masks only the loss, η = 0 is full supervision, runs are reproducible."""

import pytest
import torch

from neurips26.ssd import (
    DenoiserConfig,
    EDMDenoiser,
    TrainConfig,
    edm_target,
    loss_weight,
    sample_mask,
    sample_sigma,
    ssd_loss,
    train_denoiser,
    training_loss,
)


def _model(extra: int = 0) -> EDMDenoiser:
    return EDMDenoiser(DenoiserConfig(8, 1, channels=(16, 32), extra_input_channels=extra), seed=0)


def _data(n: int = 16) -> torch.Tensor:
    return torch.rand(n, 1, 8, 8, generator=torch.Generator().manual_seed(1)) * 2 - 1


def test_training_loss_masks_the_loss_and_never_the_input():
    model, x0 = _model(), _data(6)
    cfg = TrainConfig(eta=0.9)
    got = training_loss(model, x0, cfg, torch.Generator().manual_seed(5))
    g = torch.Generator().manual_seed(5)
    sigma = sample_sigma(6, g, cfg.p_mean, cfg.p_std)
    noise = torch.randn(x0.shape, generator=g)
    mask = sample_mask((6, 8, 8), 0.9, generator=g)
    pred = model.raw(x0 + sigma.view(-1, 1, 1, 1) * noise, sigma)  # full noisy image as input
    want = ssd_loss(pred, edm_target(x0, noise, sigma), mask)
    assert torch.equal(got, want)


def test_eta_zero_is_the_lambda_weighted_x0_loss():
    model, x0 = _model(), _data(6)
    with torch.no_grad():
        got = training_loss(model, x0, TrainConfig(eta=0.0), torch.Generator().manual_seed(3))
        g = torch.Generator().manual_seed(3)
        sigma = sample_sigma(6, g)
        x = x0 + sigma.view(-1, 1, 1, 1) * torch.randn(x0.shape, generator=g)
        weighted = loss_weight(sigma).view(-1, 1, 1, 1) * (model(x, sigma) - x0) ** 2
    torch.testing.assert_close(got, weighted.mean(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("parametrisation", ["eps", "v"])
def test_other_parametrisations_give_finite_losses(parametrisation):
    loss = training_loss(
        _model(),
        _data(4),
        TrainConfig(eta=0.5, parametrisation=parametrisation),
        torch.Generator().manual_seed(0),
    )
    assert torch.isfinite(loss)


def test_training_is_reproducible_and_reduces_the_loss():
    histories = []
    for _ in range(2):
        model = _model()
        histories.append(
            train_denoiser(model, _data(), TrainConfig(eta=0.5, steps=30, batch=8), progress=False)
        )
    assert histories[0].loss == histories[1].loss
    assert sum(histories[0].loss[-5:]) < sum(histories[0].loss[:5])


def test_input_masking_baseline_needs_the_mask_channel():
    cfg = TrainConfig(eta=0.9, input_masking=True, steps=2, batch=4)
    with pytest.raises(ValueError, match="model"):
        train_denoiser(_model(), _data(), cfg, progress=False)
    history = train_denoiser(_model(extra=1), _data(), cfg, progress=False)
    assert len(history.loss) == 2


def test_config_validation_names_the_field():
    with pytest.raises(ValueError, match="eta"):
        TrainConfig(eta=1.0)
    with pytest.raises(ValueError, match="parametrisation"):
        TrainConfig(parametrisation="score")
    with pytest.raises(ValueError, match="parametrisation"):
        TrainConfig(input_masking=True, parametrisation="eps")
    with pytest.raises(TypeError, match="steps"):
        TrainConfig(steps=2.5)
    with pytest.raises(TypeError, match="model"):
        train_denoiser(torch.nn.Linear(2, 2), _data(), TrainConfig(steps=1))
