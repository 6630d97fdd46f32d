"""The build prints what a reader needs, not a kernel warning per notebook.

ipykernel warns "Kernel is running over TCP without encryption" at every start unless its log level is
raised; the book's kernel spec (``book/jupyter/kernels/python3``, put first on ``JUPYTER_PATH`` by the
Makefile) starts it at ERROR. One test starts a kernel from that spec, the other reads the log of the
smoke build (``$NEURIPS26_BUILD_LOG``, written by ``make smoke-book``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
BOOK_KERNELS = REPO_ROOT / "book" / "jupyter"
NOISE = "without encryption"

_START_KERNEL = """
import jupyter_client
km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3")
try:
    kc.execute_interactive("print('kernel ok')", timeout=60)
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)
"""


def _start_kernel(jupyter_path: Path | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_PATH"}
    if jupyter_path is not None:
        env["JUPYTER_PATH"] = str(jupyter_path)
    done = subprocess.run(
        [sys.executable, "-c", _START_KERNEL], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def test_the_book_kernel_spec_is_the_installed_one_at_a_quieter_log_level() -> None:
    spec = json.loads((BOOK_KERNELS / "kernels" / "python3" / "kernel.json").read_text(encoding="utf-8"))
    assert spec["argv"][:5] == ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    assert "--IPKernelApp.log_level=ERROR" in spec["argv"]
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^export JUPYTER_PATH := \$\(CURDIR\)/book/jupyter$", makefile, re.M), (
        "the Makefile must put the book's kernel spec first on JUPYTER_PATH"
    )


def test_a_kernel_from_the_book_spec_starts_without_the_tcp_warning() -> None:
    output = _start_kernel(BOOK_KERNELS)
    assert "kernel ok" in output and NOISE not in output, output


def test_the_smoke_build_log_has_no_kernel_warning() -> None:
    log = os.environ.get("NEURIPS26_BUILD_LOG")
    if not log or not Path(log).is_file():
        pytest.skip("no build log (make pages sets NEURIPS26_BUILD_LOG after make smoke-book)")
    noisy = [line for line in Path(log).read_text(encoding="utf-8").splitlines() if NOISE in line]
    assert not noisy, f"{len(noisy)} kernel warnings in {log}, e.g. {noisy[0]!r}"
