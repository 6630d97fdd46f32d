"""The meta-device check of a training step: misplaced tensors raise, placed ones pass, checks that read
values are searched past, steps that need real values are reported, and nothing of the caller's changes."""

import pytest
import torch
from torch import nn

from neurips26.scales import TRIAL_ENV
from neurips26.train import fit
from neurips26.train.device_check import DevicePlacementError, check_first_step, meta_step, mismatched_devices


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))


def _batch():
    return torch.randn(6, 4, generator=torch.Generator().manual_seed(1)), torch.zeros(6, 2)


def _placed(model, batch):
    x, y = batch
    noise = torch.randn(x.shape, device=x.device)  # on the model's device: fine anywhere
    return ((model(x + 0.1 * noise) - y) ** 2).mean()


def _host_noise(model, batch):
    x, y = batch
    return ((model(x) + torch.randn(y.shape) - y) ** 2).mean()  # made on the CPU: fails on a GPU


def _host_target(model, batch):
    x, _ = batch
    return nn.functional.mse_loss(model(x), torch.zeros(x.shape[0], 2))


def _host_generator(model, batch):
    x, _ = batch
    probs = model(x).softmax(-1)
    picks = torch.multinomial(probs, 1, generator=torch.Generator().manual_seed(0))  # a CPU generator
    return probs.gather(1, picks).log().mean()


def _checked(model, batch):
    x, y = batch
    mask = x[:, 0] > -100
    if not mask.any():  # an input check that reads a value: False on the first try, True on the next
        raise ValueError("mask must have a true entry")
    if (x.abs() > 1e6).any():
        raise ValueError("inputs must be finite")
    return ((model(x) - y) ** 2).mean()


def _masked(model, batch):
    x, y = batch
    keep = x[:, 0] > 0
    return ((model(x[keep]) - y[keep]) ** 2).mean()  # boolean indexing: runs on meta, keeping every row


def _needs_values(model, batch):
    x, y = batch
    weights = torch.as_tensor(x[:, 0].abs().detach().numpy(), device=x.device)  # NumPy needs the values
    return (weights[:, None] * (model(x) - y) ** 2).mean()


DATA = torch.randn(10, 4, generator=torch.Generator().manual_seed(2))  # prepared before the step


def _prepared(model, batch):
    x, y = batch
    rows = torch.arange(x.shape[0], device=x.device) % DATA.shape[0]
    return ((model(DATA[rows] + x) - y) ** 2).mean()  # on a GPU the trainer would have put DATA there


def _made_grid(model, batch):
    x, y = batch
    grid = torch.linspace(0, 1, 6)  # made in the step, on the CPU
    return ((model(x) * grid[:, None] - y) ** 2).mean()


@pytest.mark.parametrize("loss", [_placed, _checked, _prepared, _masked])
def test_a_step_that_keeps_to_the_models_device_passes(loss):
    assert meta_step(_model(), loss, _batch()) is None


@pytest.mark.parametrize("loss", [_host_noise, _host_target, _host_generator, _made_grid])
def test_a_tensor_made_off_the_models_device_raises(loss):
    with pytest.raises(DevicePlacementError, match="mixes devices"):
        meta_step(_model(), loss, _batch())


def test_the_same_losses_run_on_the_cpu_so_only_the_check_tells_them_apart():
    for loss in (_host_noise, _host_target, _host_generator, _made_grid, _placed, _prepared, _masked):
        assert torch.isfinite(loss(_model(), _batch()))


def test_a_step_that_needs_real_values_is_reported_not_failed():
    reason = meta_step(_model(), _needs_values, _batch())
    assert reason is not None and "mixes devices" not in reason


def test_neither_the_model_nor_the_random_state_changes():
    model = _model()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    state = torch.get_rng_state()
    meta_step(model, _placed, _batch())
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert all(p.device.type == "cpu" and p.grad is None for p in model.parameters())
    assert torch.equal(torch.get_rng_state(), state)


def test_bad_arguments_name_themselves():
    with pytest.raises(TypeError, match="model"):
        meta_step("net", _placed, _batch())
    with pytest.raises(TypeError, match="loss_fn"):
        meta_step(_model(), 3, _batch())


def test_mismatch_is_told_from_other_errors():
    assert mismatched_devices(RuntimeError("Tensor on device cpu is not on the expected device meta!"))
    assert not mismatched_devices(RuntimeError("Tensor.item() cannot be called on meta tensors"))
    assert not mismatched_devices(ValueError("is not on the expected device"))


def test_fit_checks_its_first_step_in_a_trial_run_only(monkeypatch, capsys):
    batch = _batch()
    monkeypatch.setenv(TRIAL_ENV, "0")
    fit(_model(), _host_noise, lambda s: batch, steps=2, seed=0, progress=False)  # fine on a CPU
    assert "[device check]" not in capsys.readouterr().err
    monkeypatch.setenv(TRIAL_ENV, "1")
    with pytest.raises(DevicePlacementError):
        fit(_model(), _host_noise, lambda s: batch, steps=2, seed=0, progress=False, desc="noisy")
    fit(_model(), _placed, lambda s: batch, steps=2, seed=0, progress=False, desc="placed")
    assert "[device check] placed: passed" in capsys.readouterr().err


def test_the_check_leaves_a_trial_runs_training_as_it_was(monkeypatch):
    batch = _batch()
    runs = []
    for trial in ("0", "1"):
        monkeypatch.setenv(TRIAL_ENV, trial)
        model = _model()
        history = fit(model, _placed, lambda s: batch, steps=3, seed=0, progress=False)
        runs.append((history.loss, [p.detach().clone() for p in model.parameters()]))
    assert runs[0][0] == runs[1][0]
    assert all(torch.equal(a, b) for a, b in zip(runs[0][1], runs[1][1], strict=True))


def test_a_loop_of_its_own_checks_its_first_step_in_a_trial_run_on_the_cpu_only(monkeypatch, capsys):
    monkeypatch.setenv(TRIAL_ENV, "0")
    check_first_step(_model(), _host_noise, _batch(), desc="own loop")  # not a trial: nothing
    monkeypatch.setenv(TRIAL_ENV, "1")
    check_first_step(_model().to("meta"), _host_noise, _batch(), desc="own loop")  # not on the CPU: nothing
    assert "[device check]" not in capsys.readouterr().err
    with pytest.raises(DevicePlacementError):
        check_first_step(_model(), _host_noise, _batch(), desc="own loop")
    check_first_step(_model(), _placed, _batch(), desc="own loop")
    assert "[device check] own loop: passed" in capsys.readouterr().err
