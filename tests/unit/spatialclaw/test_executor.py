"""Both executors: persistent state, errors, timeouts, safety, isolation, identical transcripts.

The Jupyter tests share one kernel per module (startup is the expensive part); the in-process tests are
instantaneous.
"""

from __future__ import annotations

import pytest

from neurips26.spatialclaw.executor import (
    CellResult,
    InProcessExecutor,
    JupyterKernelExecutor,
    condense_traceback,
)

#: A small bootstrap that needs no scene: frames with absolute indices 0, 2, 4, 6 and the session names.
BOOTSTRAP = """import numpy as np
from neurips26.spatialclaw import kernel_types as _kt
_kt.bind_session(globals())
InputImages = _kt.InputImages(
    [_kt.FrameImage(np.full((6, 8, 3), 10 * i, np.uint8), frame_index=2 * i) for i in range(4)]
)
del _kt
"""
#: The transcript compared across executors: print, arrays, a final expression, an error inside a
#: function, shown images and figures, answers and a bad answer type.
SCRIPT = (
    "a = np.arange(12).reshape(3, 4)\nprint(a.sum())",
    "b = a.mean(axis=0)\nb",
    "sub = InputImages[1:3]\nprint(sub.frame_indices)\nInputImages[9]",
    "def pick(v):\n    return v[10]\nc = 1\npick([1, 2])",
    "import matplotlib.pyplot as plt\nshow(InputImages[0])\nfig = plt.figure(figsize=(1, 1))\nplt.show()",
    "ReturnAnswer(np.float64(2.5))\nn = c + 2\nReturnAnswer([n])",
)


@pytest.fixture(scope="module")
def kernel():
    pytest.importorskip("jupyter_client")
    executor = JupyterKernelExecutor()
    executor.start(BOOTSTRAP)
    yield executor
    executor.close()


@pytest.fixture
def local():
    with InProcessExecutor() as executor:
        executor.start(BOOTSTRAP)
        yield executor


def _check_state_and_errors(ex) -> None:
    first = ex.run("x = 41\ny = [1, 2, 3]")
    assert first.ok and [v.name for v in first.variables] == ["x", "y"]
    failed = ex.run("z = x + 1\nprint(z)\nw = y[7]\nprint('never')")
    assert failed.stdout == "42\n"
    assert failed.error is not None and failed.error.ename == "IndexError" and failed.error.line == 3
    assert failed.error.traceback_text == "  cell line 3: w = y[7]\nIndexError: list index out of range"
    assert ex.run("print(x, z)").stdout == "41 42\n"  # state before and up to the error survives


def _check_timeout(ex, code: str) -> None:
    ex.run("kept = 7")
    result = ex.run(code, timeout=0.5)
    assert result.timed_out and result.error is not None and result.error.ename == "TimeoutError"
    assert ex.run("print(kept)").stdout == "7\n"


def _check_rejected_never_runs(ex) -> None:
    result = ex.run("hit = 1\nimport os")
    assert result.rejected is not None and "forbidden module 'os'" in result.rejected
    assert result.error is None and result.stdout == ""
    assert ex.run("hit").error.ename == "NameError"  # the first line never ran either
    syntax = ex.run("x = (1,\nhit = 2")
    assert syntax.error is not None and syntax.error.ename == "SyntaxError" and syntax.rejected is None


def _check_isolation(ex) -> None:
    ex.run("secret = 123\nReturnAnswer('a')")
    ex.reset()
    result = ex.run("print(secret)")
    assert result.error is not None and result.error.ename == "NameError"
    assert result.answer_attempts_left == 5  # a new session: budgets are back
    ex.start(BOOTSTRAP + "extra = 5\n")  # start() on a started executor switches sample
    assert ex.run("print(extra)").stdout == "5\n"
    ex.start(BOOTSTRAP)


# ---- in-process ------------------------------------------------------------------------------------
def test_in_process_state_and_errors(local):
    _check_state_and_errors(local)


def test_in_process_timeout_keeps_state(local):
    _check_timeout(local, "while True:\n    pass")


def test_in_process_rejected_never_runs(local):
    _check_rejected_never_runs(local)


def test_in_process_isolation(local):
    _check_isolation(local)


def test_last_expression_is_printed_unless_semicolon(local):
    assert local.run("v = 3\nv * 2").stdout == "6\n"
    assert local.run("v * 2;").stdout == ""
    assert local.run("None").stdout == ""


def test_bad_arguments(local):
    with pytest.raises(ValueError, match="timeout"):
        local.run("1", timeout=0)
    with pytest.raises(TypeError, match="code"):
        local.run(b"1")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="start"):
        InProcessExecutor().run("1")
    with pytest.raises(TypeError, match="bootstrap"):
        InProcessExecutor().start(None)  # type: ignore[arg-type]


def test_condense_traceback_keeps_innermost_cell_frames():
    code = "def f(n):\n    return f(n - 1) if n else 1 / 0\nf(5)"
    frames = [[3, "<module>", True]] + [[2, "f", True]] * 6
    line, text = condense_traceback("ZeroDivisionError", "division by zero", frames, code)
    assert line == 2
    assert text.splitlines()[0] == "  ... 4 earlier cell frame(s)"
    assert text.splitlines()[-1] == "ZeroDivisionError: division by zero"
    _, lib = condense_traceback(
        "LinAlgError",
        "Singular matrix",
        [[1, "<module>", True], [9, "inv", False], [89, "_raise", False]],
        "x",
    )
    assert lib == "  cell line 1: x\n  in inv() (library code)\nLinAlgError: Singular matrix"


# ---- Jupyter kernel --------------------------------------------------------------------------------
def test_kernel_state_and_errors(kernel):
    assert kernel.startup_seconds is not None
    _check_state_and_errors(kernel)


def test_kernel_timeout_interrupts_and_kernel_stays_usable(kernel):
    _check_timeout(kernel, "import time\ntime.sleep(30)")


def test_kernel_rejected_never_reaches_kernel(kernel):
    _check_rejected_never_runs(kernel)


def test_kernel_samples_are_isolated(kernel):
    _check_isolation(kernel)


def test_kernel_and_in_process_transcripts_are_equal(kernel):
    kernel.reset()
    with InProcessExecutor() as local:
        local.start(BOOTSTRAP)
        for code in SCRIPT:
            remote, here = kernel.run(code), local.run(code)
            assert isinstance(remote, CellResult)
            assert remote == here, code
    # the script exercised what it claims to
    assert here.answers == (2.5,) and here.error.ename == "TypeError"
    assert here.answer_attempts_left == 3
