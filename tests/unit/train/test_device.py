import os

import pytest
import torch

from neurips26.train import DEVICE_ENV, available_cores, choose_device, set_threads
from neurips26.train import device as device_module


@pytest.fixture(autouse=True)
def no_env(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV, raising=False)


def test_argument_wins_over_environment_which_wins_over_auto(monkeypatch):
    monkeypatch.setattr(device_module, "_available", lambda kind: True)  # pretend cuda and mps exist
    assert choose_device() == torch.device("cuda")
    monkeypatch.setenv(DEVICE_ENV, "mps")
    assert choose_device() == torch.device("mps")
    assert choose_device("cpu") == torch.device("cpu")
    monkeypatch.setenv(DEVICE_ENV, "not-a-device")
    assert choose_device("cpu") == torch.device("cpu")  # the argument is honoured, env never read


def test_auto_order_is_cuda_then_mps_then_cpu(monkeypatch):
    for present, expected in (({"cuda", "mps"}, "cuda"), ({"mps"}, "mps"), (set(), "cpu")):
        monkeypatch.setattr(device_module, "_available", lambda kind, p=present: kind in p or kind == "cpu")
        assert choose_device("auto") == torch.device(expected)


def test_cpu_is_always_available():
    assert choose_device("cpu") == torch.device("cpu")
    assert choose_device(" CPU ") == torch.device("cpu")


@pytest.mark.parametrize("name", ["tpu", "gpu", "cuda:x", "auto:0", "", "cpu0"])
def test_unknown_names_raise_value_error(name):
    with pytest.raises(ValueError, match="prefer"):
        choose_device(name)


def test_unknown_environment_value_names_the_variable(monkeypatch):
    monkeypatch.setenv(DEVICE_ENV, "tpu")
    with pytest.raises(ValueError, match=DEVICE_ENV):
        choose_device()


def test_missing_accelerator_is_an_error_not_a_silent_fallback(monkeypatch):
    monkeypatch.setattr(device_module, "_available", lambda kind: kind == "cpu")
    with pytest.raises(RuntimeError, match="no cuda"):
        choose_device("cuda")
    with pytest.raises(RuntimeError, match="no mps"):
        choose_device("mps")
    with pytest.raises(TypeError, match="prefer"):
        choose_device(0)


def test_set_threads_defaults_to_the_cores_this_process_may_use():
    before = torch.get_num_threads()
    try:
        assert set_threads(1) == 1 and torch.get_num_threads() == 1
        n = set_threads()
        expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        assert n == available_cores() == expected and torch.get_num_threads() == n
        with pytest.raises(ValueError, match="n"):
            set_threads(0)
    finally:
        torch.set_num_threads(before)


def test_a_torchrun_rank_gets_its_own_gpu(monkeypatch):
    monkeypatch.setattr(device_module, "_available", lambda kind: kind in ("cuda", "cpu"))
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.delenv("NEURIPS26_DEVICE", raising=False)
    assert choose_device() == torch.device("cuda", 1)
    assert choose_device("cuda") == torch.device("cuda", 1)
    assert choose_device("cuda:3") == torch.device("cuda", 3)  # an explicit index wins
    assert choose_device("cpu") == torch.device("cpu")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("LOCAL_RANK", "0")
    assert choose_device() == torch.device("cuda")


def test_shipped_scales_train_on_one_thread_and_paper_on_what_is_set():
    from neurips26.train import shipped_threads

    assert (shipped_threads("smoke"), shipped_threads("default"), shipped_threads("paper")) == (1, 1, None)
    with pytest.raises(ValueError, match="scale"):
        shipped_threads("huge")
