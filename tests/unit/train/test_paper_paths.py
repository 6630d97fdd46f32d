"""Each chapter's ``paper`` path runs: ``prepare --scale paper --trial`` (one update per model on the
smallest data, at the paper scale's model sizes) writes checkpoints into a temporary directory that the
chapter's registry then loads fresh; one chapter also trains that way on two gloo ranks under torchrun."""

import importlib
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from neurips26.scales import TRIAL_ENV

READY = (
    "skae", "ssd", "picsb", "jag", "spatialflow_grpo", "sdm", "specblock", "expansion_utility",
    "sparse_control", "costgrad", "sparsevideonav", "spatial_iq", "spark_vla", "iohp",
)  # fmt: skip
"""Every chapter that trains networks: its ``paper`` scale is a plan of its own."""

DEVICE_CHECKED = {
    "skae": 109, "ssd": 12, "picsb": 6, "jag": 8, "spatialflow_grpo": 2, "sdm": 15, "specblock": 3,
    "expansion_utility": 7, "sparse_control": 1, "costgrad": 0, "sparsevideonav": 19, "spatial_iq": 4,
    "spark_vla": 21, "iohp": 1,
}  # fmt: skip
"""How many of a chapter's training steps (``fit``'s, and loops of its own that call
:func:`~neurips26.train.device_check.check_first_step`) the trial run's meta-device check confirms (see
:mod:`neurips26.train.device_check`): a misplaced tensor fails the run itself, and a step that stops being
checkable lowers the count. Not checked: costgrad's steps (they switch autocast off, which the meta device
does not support), picsb's DPS prior (it copies values out), and the reinforcement-learning loops, which
sample before they train (spatialflow_grpo's arms, spatial_iq's GRPO)."""


def test_every_chapter_that_trains_is_ready_and_records_its_checked_steps():
    import neurips26

    trains = {path.parent.name for path in Path(neurips26.__file__).parent.glob("*/prepare.py")}
    assert trains == set(READY)
    assert set(DEVICE_CHECKED) == set(READY)


def _env(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env.update(NEURIPS26_CACHE_DIR=str(tmp_path / "cache"), NEURIPS26_PROGRESS="0", CUDA_VISIBLE_DEVICES="")
    env.update(OMP_NUM_THREADS="1", NEURIPS26_DEVICE="cpu")
    return env


def _loads_fresh(package, out, monkeypatch, tmp_path):
    monkeypatch.setenv(TRIAL_ENV, "1")
    monkeypatch.setenv("NEURIPS26_CACHE_DIR", str(tmp_path / "cache"))
    registry = importlib.import_module(f"neurips26.{package}.prepare").REGISTRY
    for name in registry.names:
        model, meta = registry.load(name, "paper", directory=out)  # fresh: hash, layout and metrics agree
        assert meta.name == name and model is not None
    for path in (tmp_path / "cache").rglob("*.pkl"):  # what prepare cached, another process can read back
        assert b"__main__" not in path.read_bytes(), f"{path.name} pickles a class of the __main__ module"


@pytest.mark.slow
@pytest.mark.parametrize("package", READY)
def test_prepare_paper_trial_writes_loadable_checkpoints(package, tmp_path, monkeypatch):
    out = tmp_path / "out"
    command = [sys.executable, "-m", f"neurips26.{package}.prepare", "--scale", "paper", "--trial"]
    run = subprocess.run(
        [*command, "--out", str(out)], env=_env(tmp_path), capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-4000:]
    checked = [line for line in run.stderr.splitlines() if line.startswith("[device check]")]
    passed = sum(line.endswith(": passed") for line in checked)
    assert passed >= DEVICE_CHECKED[package], "\n".join(checked)
    _loads_fresh(package, out, monkeypatch, tmp_path)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_prepare_paper_trial_runs_data_parallel_under_torchrun(tmp_path, monkeypatch):
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc_per_node=2",
        "--master_addr=127.0.0.1", f"--master_port={_free_port()}", "--monitor_interval=0.5",
        "-m", "neurips26.sparse_control.prepare", "--scale", "paper", "--trial", "--out", str(out),
    ]  # fmt: skip
    run = subprocess.run(command, env=_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    assert sorted(p.name for p in out.iterdir()) == ["model.json", "model.pt"]
    _loads_fresh("sparse_control", out, monkeypatch, tmp_path)
