"""The ``paper`` scale of chapter 05: its plan, the trial caps, and a training loss that calls the module."""

import pytest
import torch

from neurips26.scales import TRIAL_ENV
from neurips26.ssd import (
    DenoiserConfig,
    EDMDenoiser,
    TrainConfig,
    edm_target,
    sample_mask,
    sample_sigma,
    ssd_loss,
    training_loss,
)
from neurips26.ssd.prepare import MODEL_NAMES, PAPER, REGISTRY, PrepareConfig, trial_caps

# The committed (default) configuration hashes: the paper plan and the trial caps must leave them alone.
DEFAULT_HASHES = {
    "digits-eta0": "9b97a143d3fdd3f0",
    "digits-maskdm-eta0.9": "12f06ff8cd1d98f5",
    "digits64-early": "3f2198013c82307a",
    "twins-eta0.98": "0dbdcf99385f02a7",
}


@pytest.fixture
def no_trial(monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)


def test_paper_plan_grows_the_network_data_and_budget_but_keeps_the_digits(no_trial):
    default, paper = PrepareConfig.for_scale("default"), PrepareConfig.for_scale("paper")
    assert paper == PAPER
    assert (default.channels, paper.channels) == ((16, 32), (64, 128))
    assert (default.steps, paper.steps) == (2000, 10_000)
    assert (default.batch, paper.batch) == (64, 128)
    assert paper.n_twins == 8 * default.n_twins and paper.curve_samples == 4 * default.curve_samples
    # the data the claims are about: the same 16×16 digits, hold-out and validation images, one seed
    for name in ("image_size", "n_holdout", "val_images", "classifier", "seed", "lr", "sigma_data"):
        assert getattr(paper, name) == getattr(default, name), name
    assert default == PrepareConfig()  # the committed checkpoints' plan


def test_default_hashes_are_the_committed_ones_and_paper_differs(no_trial):
    for name, committed in DEFAULT_HASHES.items():
        assert REGISTRY.expected_hash(name, "default") == committed
    for name in MODEL_NAMES:
        assert REGISTRY.expected_hash(name, "paper") != REGISTRY.expected_hash(name, "default")


@pytest.mark.parametrize("scale", ["smoke", "default", "paper"])
def test_trial_caps_apply_at_every_scale_and_change_the_hash(scale, monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)
    plain = PrepareConfig.for_scale(scale)
    plain_hash = REGISTRY.expected_hash("digits-eta0", scale)
    monkeypatch.setenv(TRIAL_ENV, "1")
    trial = PrepareConfig.for_scale(scale)
    assert trial == trial_caps(plain)
    assert (trial.steps, trial.batch, trial.eval_every) == (1, 4, 1)
    assert (trial.curve_samples, trial.sampler_steps, trial.n_twins, trial.val_images) == (2, 2, 16, 1)
    assert (trial.classifier.steps, trial.classifier.batch_size) == (1, 4)
    assert (trial.channels, trial.image_size, trial.small) == (plain.channels, plain.image_size, plain.small)
    assert REGISTRY.expected_hash("digits-eta0", scale) != plain_hash  # never taken for a real checkpoint


def test_forward_raw_is_the_preconditioned_network_output():
    model = EDMDenoiser(DenoiserConfig(8, 1, channels=(16, 32), extra_input_channels=1), seed=0)
    g = torch.Generator().manual_seed(0)
    x, extra = torch.randn(3, 1, 8, 8, generator=g), torch.rand(3, 1, 8, 8, generator=g)
    sigma = torch.tensor([0.1, 1.0, 7.0])
    assert torch.equal(model(x, sigma, extra, raw=True), model.raw(x, sigma, extra))
    assert not torch.equal(model(x, sigma, extra), model.raw(x, sigma, extra))


def _reference_loss(model, x0, config, generator):
    """The training loss as written before it went through the module's forward (model.raw)."""
    b, _, h, w = x0.shape
    sd = model.config.sigma_data
    sigma = sample_sigma(b, generator, config.p_mean, config.p_std).to(x0.dtype)
    noise = torch.randn(x0.shape, generator=generator, dtype=x0.dtype)
    x = x0 + sigma.view(-1, 1, 1, 1) * noise
    mask = None
    if config.eta > 0 or config.input_masking:
        mask = sample_mask((b, h, w), config.eta, mask_type=config.mask_type, generator=generator)
    if config.input_masking:
        pred = model.raw(x * mask, sigma, extra=mask)
    else:
        pred = model.raw(x, sigma)
    return ssd_loss(pred, edm_target(x0, noise, sigma, sd), mask, normaliser=config.normaliser)


@pytest.mark.parametrize(
    "config", [TrainConfig(), TrainConfig(eta=0.9), TrainConfig(eta=0.9, input_masking=True)], ids=str
)
def test_training_loss_calls_the_module_and_equals_the_raw_computation(config, monkeypatch):
    extra = 1 if config.input_masking else 0
    model = EDMDenoiser(DenoiserConfig(8, 1, channels=(16, 32), extra_input_channels=extra), seed=0)
    x0 = torch.rand(6, 1, 8, 8, generator=torch.Generator().manual_seed(1)) * 2 - 1
    want = _reference_loss(model, x0, config, torch.Generator().manual_seed(5))
    calls = []
    model.register_forward_hook(lambda module, args, out: calls.append(1))
    monkeypatch.setattr(EDMDenoiser, "raw", lambda *a, **k: pytest.fail("the loss bypassed forward"))
    got = training_loss(model, x0, config, torch.Generator().manual_seed(5))
    assert calls == [1]  # one call of the module: what a DistributedDataParallel wrapper needs
    assert torch.equal(got, want)


def test_paper_checkpoints_are_not_capped(no_trial, monkeypatch):
    """The paper network (~2.9 MB in float16) is over the 1 MB cap of a shipped checkpoint; the prepare
    of a non-shipped scale must pass ``capped=False``."""
    import neurips26.ssd.prepare as prepare_module

    seen = []
    monkeypatch.setattr(prepare_module, "train_models", lambda specs, config, progress: {})
    monkeypatch.setattr(prepare_module, "check_directory_budget", lambda d, n, capped: seen.append(capped))
    prepare_module.prepare("paper", only=["digits-eta0"], out="unused")
    prepare_module.prepare("default", only=["digits-eta0"], out="unused")
    assert seen == [False, True]
    spec = prepare_module.model_spec("digits-eta0")
    model = EDMDenoiser(prepare_module.denoiser_config(spec, PAPER), seed=0)
    assert 2 * model.num_parameters() > 1_000_000  # float16 bytes, over the 1 MB cap
