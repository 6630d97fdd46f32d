"""The shared training step: SSD masks only the loss, η = 0 is full supervision, runs are reproducible."""

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves

import neurips26.ssd.denoiser as denoiser_module
import neurips26.ssd.loss as loss_module
import neurips26.ssd.train as train_module
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
from neurips26.ssd.train import noise_generator
from neurips26.train import choose_device


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


# --------------------------------------------------------------------------------------------
# devices: every tensor of a training step lives on the model's device


class _RecordDevices(TorchFunctionMode):
    """Records the device of every tensor that a torch function or tensor method returns."""

    def __init__(self) -> None:
        super().__init__()
        self.created: list[tuple[str, torch.device]] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for leaf in tree_leaves(out):
            if isinstance(leaf, torch.Tensor):
                self.created.append((getattr(func, "__name__", repr(func)), leaf.device))
        return out


STEP_CONFIGS = [
    pytest.param(TrainConfig(eta=0.0), 0, id="full"),
    pytest.param(TrainConfig(eta=0.98), 0, id="ssd-fixed"),
    pytest.param(TrainConfig(eta=0.5, mask_type="bernoulli", parametrisation="eps"), 0, id="bernoulli-eps"),
    pytest.param(TrainConfig(eta=0.5, mask_type="patch", parametrisation="v"), 0, id="patch-v"),
    pytest.param(TrainConfig(eta=0.9, input_masking=True), 1, id="input-masking"),
]


@pytest.mark.parametrize(("config", "extra"), STEP_CONFIGS)
def test_a_training_step_creates_every_tensor_on_the_model_device(monkeypatch, config, extra):
    """A model on the meta device (no GPU needed): σ, noise, masks, loss and gradients must all be meta.

    Meta tensors carry shapes and devices but no values, so the step's two value checks (σ > 0 and a 0/1
    mask) are stubbed; everything else runs as in training, with a CPU generator (the meta device ignores
    generators). A σ, noise or mask drawn on the CPU would meet the meta batch and raise.
    """
    monkeypatch.setattr(denoiser_module, "_check_sigma", lambda sigma: sigma)
    monkeypatch.setattr(loss_module, "check_mask", lambda mask, images: mask.to(images.dtype))
    model = _model(extra).to("meta")
    x0 = torch.empty(6, 1, 8, 8, device="meta")
    with _RecordDevices() as record:
        loss = training_loss(model, x0, config, torch.Generator().manual_seed(0))
        loss.backward()
    assert record.created, "the recording mode saw no tensor"
    elsewhere = [(name, str(device)) for name, device in record.created if device.type != "meta"]
    assert not elsewhere, f"tensors created off the model's device: {elsewhere[:5]}"
    assert all(p.grad is not None and p.grad.device.type == "meta" for p in model.parameters())


def test_one_training_step_runs_on_the_chosen_device(monkeypatch):
    """``NEURIPS26_DEVICE`` (via ``choose_device``) picks the device; one full update runs there and every
    tensor created inside its loss is on it. On a CPU-only machine this is the CPU; on a GPU the GPU."""
    device = choose_device()
    model = _model().to(device)
    before = [p.detach().clone() for p in model.parameters()]
    records: list[_RecordDevices] = []

    def recorded_loss(*args, **kwargs):
        with _RecordDevices() as record:
            loss = training_loss(*args, **kwargs)
        records.append(record)
        return loss

    monkeypatch.setattr(train_module, "training_loss", recorded_loss)
    history = train_denoiser(model, _data(), TrainConfig(eta=0.98, steps=1, batch=4), progress=False)
    assert len(history.loss) == 1 and len(records) == 1
    elsewhere = [(name, str(d)) for name, d in records[0].created if d.type != device.type]
    assert not elsewhere, f"tensors created off {device}: {elsewhere[:5]}"
    assert all(p.device.type == device.type for p in model.parameters())
    after = [p.detach() for p in model.parameters()]
    assert any(not torch.equal(a.cpu(), b.cpu()) for a, b in zip(after, before, strict=True))


def test_training_on_the_cpu_draws_the_plain_seeded_stream():
    """The generator of σ, noise and masks on the CPU is ``torch.Generator().manual_seed(seed + 1)``: the
    first update's loss equals :func:`training_loss` on the first batch with that generator."""
    config = TrainConfig(eta=0.9, steps=1, batch=4, seed=3)
    data = _data()
    first = data[torch.randint(data.shape[0], (4,), generator=torch.Generator().manual_seed(3))]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(3)  # fit seeds the global stream (dropout); this model has none
        want = training_loss(_model(), first, config, torch.Generator().manual_seed(4)).item()
    history = train_denoiser(_model(), data, config, progress=False)
    assert history.loss[0] == want
    a, b = noise_generator(torch.device("cpu"), 7), torch.Generator().manual_seed(7)
    assert torch.equal(torch.randn(5, generator=a), torch.randn(5, generator=b))
    assert noise_generator(torch.device("meta"), 7).device.type == "cpu"


def test_a_batch_off_the_model_device_is_refused():
    with pytest.raises(ValueError, match="x0"):
        training_loss(_model().to("meta"), _data(4), TrainConfig(eta=0.5), torch.Generator())
