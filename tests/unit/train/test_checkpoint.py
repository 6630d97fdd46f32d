from dataclasses import dataclass

import pytest
import torch
from torch import nn

from neurips26 import cache
from neurips26.train import History, fit, trained


@dataclass(frozen=True)
class Cfg:
    width: int = 8
    steps: int = 20


@pytest.fixture(autouse=True)
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_DIR_ENV, str(tmp_path))
    monkeypatch.delenv(cache.NO_CACHE_ENV, raising=False)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield tmp_path
    torch.set_num_threads(before)


def _recipe(cfg: Cfg):
    calls = {"build": 0, "train": 0}
    x = torch.linspace(-1, 1, 64).unsqueeze(1)

    def build():
        calls["build"] += 1
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(1, cfg.width), nn.Tanh(), nn.Linear(cfg.width, 1))

    def train(model):
        calls["train"] += 1
        return fit(
            model, lambda m, b: nn.functional.mse_loss(m(b), b**2), lambda s: x, steps=cfg.steps, seed=0,
            lr=1e-2, progress=False,
        )  # fmt: skip

    return calls, build, train


def test_second_call_loads_without_training_and_gives_identical_weights():
    cfg = Cfg()
    calls, build, train = _recipe(cfg)
    first = trained("toy", cfg, build, train, package="neurips26.train", verbose=False)
    second = trained("toy", cfg, build, train, package="neurips26.train", verbose=False)
    assert calls == {"build": 2, "train": 1}
    assert second.model is not first.model
    a, b = first.model.state_dict(), second.model.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert isinstance(second.history, History) and second.history.loss == first.history.loss
    untrained = build().state_dict()
    assert not all(torch.equal(a[k], untrained[k]) for k in a)  # the stored weights are the trained ones


def test_another_config_or_package_trains_again():
    calls, build, train = _recipe(Cfg())
    trained("toy", Cfg(), build, train, package="neurips26.train", verbose=False)
    trained("toy", Cfg(steps=21), build, train, package="neurips26.train", verbose=False)
    trained("toy", Cfg(), build, train, package=("neurips26.train", "neurips26.text"), verbose=False)
    trained("toy", Cfg(), build, train, package=("neurips26.train", "neurips26.text"), verbose=False)
    assert calls["train"] == 3


def test_disabled_cache_always_trains(monkeypatch):
    monkeypatch.setenv(cache.NO_CACHE_ENV, "1")
    calls, build, train = _recipe(Cfg())
    for _ in range(2):
        trained("toy", Cfg(), build, train, package="neurips26.train", verbose=False)
    assert calls["train"] == 2


def test_a_changed_architecture_fails_loudly():
    cfg = Cfg()
    _, build, train = _recipe(cfg)
    trained("toy", cfg, build, train, package="neurips26.train", verbose=False)
    _, wider, _ = _recipe(Cfg(width=9))  # same key, different model: the stored weights do not fit
    with pytest.raises(RuntimeError, match="size mismatch"):
        trained("toy", cfg, wider, train, package="neurips26.train", verbose=False)


def test_bad_arguments():
    calls, build, train = _recipe(Cfg())
    with pytest.raises(ValueError, match="package"):
        trained("toy", Cfg(), build, train, package="numpy")
    with pytest.raises(TypeError, match="History"):
        trained("toy", Cfg(), build, lambda m: 1.0, package="neurips26.train", verbose=False)
    with pytest.raises(TypeError, match="Module"):
        trained("toy", Cfg(), lambda: "model", train, package="neurips26.train", verbose=False)
