"""Where the agent's cells run: a real Jupyter kernel, or a plain in-process namespace (paper §3.1–3.2).

Both executors share one interface, :class:`Executor`: :meth:`~Executor.start` runs a *bootstrap* (the
hidden first cell that binds ``InputImages``, ``Metadata``, ``tools``, ``ReturnAnswer``, ``show`` ...; see
:mod:`.session`), :meth:`~Executor.run` executes one cell and returns a :class:`CellResult`,
:meth:`~Executor.reset` restores the freshly bootstrapped state (the next sample), :meth:`~Executor.close`
releases the kernel. Every cell is first parsed as plain Python and passed through the AST safety check of
:mod:`.safety`; a rejected cell never reaches the kernel, and a syntax error is reported like any error.

* :class:`JupyterKernelExecutor` (the default) drives an IPython kernel through ``jupyter_client``, started
  with this interpreter (so it sees the installed ``neurips26``), the Agg backend and no history database.
  Per cell it reads the IOPub ``stream``/``execute_result``/``display_data`` messages until the kernel is
  idle and fetches the kernel-side summary (:func:`.kernel_types.finish_kernel_cell`) as JSON through a
  ``user_expression``. A timeout sends an interrupt (the kernel and its state survive); a kernel that
  ignores the interrupt, or dies, is restarted and bootstrapped again (its state is then lost).
* :class:`InProcessExecutor` runs cells with ``exec`` on a dict in this process: much faster, used for
  sweeps. Its timeout raises an exception in the running thread when the deadline passes; like a kernel
  interrupt it lands between Python bytecodes, so a cell stuck inside one long C call (a huge matrix
  product, ``time.sleep``) is stopped only when that call returns. It shares matplotlib with the host
  (``plt.show()`` is rerouted only while a cell runs).

Transcripts are identical across the two (only ``seconds`` differs, and ``CellResult`` equality ignores
it): both build the result from the same kernel-side JSON, print a cell's last expression with ``repr``,
and condense an error from its type, message and the cell's own frames (:func:`condense_traceback`), not
from IPython's coloured traceback. Only standard output is kept (warnings on standard error are not part
of the transcript); images sent with IPython's ``display`` exist only in the Jupyter kernel.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import ctypes
import io
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
import tokenize
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from neurips26.spatialclaw import kernel_types
from neurips26.validation import check_float

#: At most this many of the cell's own frames appear in a condensed traceback (the innermost ones).
MAX_CELL_FRAMES = 3


# --------------------------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CellError:
    """A failed cell: the exception's ``ename`` and ``evalue``, the failing ``line`` of the cell (1-based;
    ``None`` when no frame of the cell was involved) and the condensed ``traceback_text``."""

    ename: str
    evalue: str
    line: int | None
    traceback_text: str


@dataclass(frozen=True)
class VariableSummary:
    """A new or changed variable after a cell: its ``name`` and ``type_name``, and where they apply its
    ``shape``, ``dtype``, ``length``, ``frame_indices`` and ``value`` (a short repr of a scalar/string)."""

    name: str
    type_name: str
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    length: int | None = None
    frame_indices: tuple[int, ...] | None = None
    value: str | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> VariableSummary:
        """From :func:`.kernel_types.summarize_value`'s JSON form."""

        def _tuple(key: str) -> tuple[int, ...] | None:
            return None if d.get(key) is None else tuple(int(v) for v in d[key])

        return cls(
            name=d["name"],
            type_name=d["type"],
            shape=_tuple("shape"),
            dtype=d.get("dtype"),
            length=d.get("len"),
            frame_indices=_tuple("frame_indices"),
            value=d.get("value"),
        )


@dataclass(frozen=True, repr=False)
class CellResult:
    """What one cell produced: ``stdout``; ``error`` (``None`` if it ran through); ``images`` shown, as
    ``(label, PNG bytes)``; ``variables`` new or changed; ``answers`` submitted with ``ReturnAnswer``;
    ``timed_out``; ``rejected`` (the safety check's message when the cell was refused and never ran); the
    budgets left after it (``show_budget_left``, ``answer_attempts_left``); and the wall-clock ``seconds``,
    which equality ignores so that two executors' transcripts compare equal."""

    stdout: str
    error: CellError | None
    images: tuple[tuple[str, bytes], ...]
    variables: tuple[VariableSummary, ...]
    answers: tuple[str | int | float, ...]
    timed_out: bool
    rejected: str | None
    show_budget_left: int
    answer_attempts_left: int
    seconds: float = field(default=0.0, compare=False)

    @property
    def ok(self) -> bool:
        """The cell ran through without an error."""
        return self.error is None and self.rejected is None

    def __repr__(self) -> str:  # images as labels and sizes, not bytes
        images = ", ".join(f"{label!r}: {len(png)} B" for label, png in self.images)
        return (
            f"CellResult(stdout={self.stdout!r}, error={self.error!r}, images=[{images}], "
            f"variables={self.variables!r}, answers={self.answers!r}, timed_out={self.timed_out}, "
            f"rejected={self.rejected!r}, show_budget_left={self.show_budget_left}, "
            f"answer_attempts_left={self.answer_attempts_left}, seconds={self.seconds:.3f})"
        )


def condense_traceback(
    ename: str, evalue: str, frames: list[list[Any]] | list[tuple[int, str, bool]], code: str
) -> tuple[int | None, str]:
    """``(failing line, text)`` from an error summary's ``frames`` (``[line, function, in_cell]``, outermost
    first) and the cell's ``code``: the innermost :data:`MAX_CELL_FRAMES` cell lines with their source, the
    library function the cell called if the error arose inside it, and ``ename: evalue``."""
    lines = code.splitlines()
    cell = [(int(line), str(name)) for line, name, inside in frames if inside]
    out = []
    if len(cell) > MAX_CELL_FRAMES:
        out.append(f"  ... {len(cell) - MAX_CELL_FRAMES} earlier cell frame(s)")
    for line, name in cell[-MAX_CELL_FRAMES:]:
        source = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        where = f"cell line {line}" if name == "<module>" else f"cell line {line}, in {name}"
        out.append(f"  {where}: {source}")
    last_cell = max((k for k, f in enumerate(frames) if f[2]), default=-1)
    if last_cell + 1 < len(frames):  # the error arose in a function the cell called: name that function
        out.append(f"  in {frames[last_cell + 1][1]}() (library code)")
    out.append(f"{ename}: {evalue}" if evalue else ename)
    return (cell[-1][0] if cell else None), "\n".join(out)


def _timeout_message(timeout: float) -> str:
    return f"the cell ran longer than {timeout:g} s and was interrupted"


def _result_from_outputs(
    outputs: dict[str, Any],
    *,
    code: str,
    stdout: str,
    timed_out: bool,
    timeout: float,
    seconds: float,
    extra_images: tuple[tuple[str, bytes], ...] = (),
) -> CellResult:
    """Build a :class:`CellResult` from :func:`.kernel_types.collect_cell_outputs`' JSON (both executors)."""
    error = None
    summary = outputs.get("error")
    if summary is not None:
        ename, evalue = summary["ename"], summary["evalue"]
        if timed_out:
            ename, evalue = "TimeoutError", _timeout_message(timeout)
        line, text = condense_traceback(ename, evalue, summary["frames"], code)
        error = CellError(ename, evalue, line, text)
    images = tuple((im["label"], base64.b64decode(im["png"])) for im in outputs["images"]) + extra_images
    return CellResult(
        stdout=stdout,
        error=error,
        images=images,
        variables=tuple(VariableSummary.from_dict(v) for v in outputs["variables"]),
        answers=tuple(outputs["answers"]),
        timed_out=timed_out,
        rejected=None,
        show_budget_left=int(outputs["show_budget_left"]),
        answer_attempts_left=int(outputs["answer_attempts_left"]),
        seconds=seconds,
    )


# --------------------------------------------------------------------------------------------------------
# the interface
# --------------------------------------------------------------------------------------------------------
class Executor(ABC):
    """A persistent namespace for one sample at a time (module docstring). Use as a context manager or call
    :meth:`close`. :meth:`start` on a started executor switches it to the new bootstrap (a reset)."""

    def __init__(self) -> None:
        self._bootstrap: str | None = None
        self._show_left = kernel_types.SHOW_BUDGET
        self._answers_left = kernel_types.MAX_ANSWER_ATTEMPTS

    def start(self, bootstrap: str) -> None:
        """Run ``bootstrap`` (its output is discarded) in a fresh namespace; ``RuntimeError`` if it fails."""
        if not isinstance(bootstrap, str):
            raise TypeError(f"bootstrap must be a str of Python code; got {type(bootstrap).__name__}")
        self._bootstrap = bootstrap
        self.reset()

    def reset(self) -> None:
        """Drop every variable and run the bootstrap again: the next sample starts from a clean state."""
        if self._bootstrap is None:
            raise RuntimeError("reset() needs a bootstrap: call start(bootstrap) first")
        self._fresh_namespace(self._bootstrap)
        self._show_left = kernel_types.SHOW_BUDGET
        self._answers_left = kernel_types.MAX_ANSWER_ATTEMPTS

    def run(self, code: str, *, timeout: float = 600.0) -> CellResult:
        """Check and execute one cell; ``timeout`` seconds (paper: 600) before it is interrupted."""
        if not isinstance(code, str):
            raise TypeError(f"code must be a str; got {type(code).__name__}")
        timeout = check_float("timeout", timeout, minimum=0.0, strict_min=True)
        if self._bootstrap is None:
            raise RuntimeError("run() needs a started executor: call start(bootstrap) first")
        t0 = time.perf_counter()
        result = self._precheck(code, t0)
        if result is None:
            result = self._execute(code, timeout, t0)
        self._show_left, self._answers_left = result.show_budget_left, result.answer_attempts_left
        return result

    def _precheck(self, code: str, t0: float) -> CellResult | None:
        """The safety check (imported lazily): a result for a rejected or unparsable cell, else ``None``."""
        from neurips26.spatialclaw.safety import check_code

        rejected, error = None, None
        try:
            check_code(code)
        except SyntaxError as err:
            msg = err.msg or type(err).__name__
            frames = [[err.lineno, "<module>", True]] if err.lineno else []
            line, text = condense_traceback(type(err).__name__, msg, frames, code)
            error = CellError(type(err).__name__, msg, line, text)
        except ValueError as err:
            rejected = str(err)
        if rejected is None and error is None:
            return None
        return CellResult(
            stdout="",
            error=error,
            images=(),
            variables=(),
            answers=(),
            timed_out=False,
            rejected=rejected,
            show_budget_left=self._show_left,
            answer_attempts_left=self._answers_left,
            seconds=time.perf_counter() - t0,
        )

    @abstractmethod
    def _fresh_namespace(self, bootstrap: str) -> None: ...

    @abstractmethod
    def _execute(self, code: str, timeout: float, t0: float) -> CellResult: ...

    @abstractmethod
    def close(self) -> None:
        """Release resources (idempotent)."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


# --------------------------------------------------------------------------------------------------------
# in-process
# --------------------------------------------------------------------------------------------------------
class _CellTimeout(BaseException):
    """Raised inside a running in-process cell at its deadline (a BaseException: ``except Exception`` in the
    agent's code does not swallow it, as it would not swallow a kernel's ``KeyboardInterrupt``)."""


class _Deadline:
    """Raise :class:`_CellTimeout` in the entering thread once ``seconds`` have passed (until exit).

    ``PyThreadState_SetAsyncExc`` delivers the exception at the thread's next bytecode boundary. A lock and
    an ``armed`` flag make sure it is never set after the block ended; one set just before the end is
    cleared, or lands in the caller's ``except _CellTimeout`` around the block."""

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self._lock = threading.Lock()
        self._armed = False
        self._fired = False
        self._thread_id = 0
        self._timer: threading.Timer | None = None

    def _fire(self) -> None:
        with self._lock:
            if self._armed:
                self._fired = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(self._thread_id), ctypes.py_object(_CellTimeout)
                )

    def __enter__(self) -> _Deadline:
        self._thread_id = threading.get_ident()
        self._armed = True
        self._timer = threading.Timer(self._seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._timer is not None
        self._timer.cancel()
        with self._lock:
            self._armed = False
            if self._fired:  # clear an exception still pending (a no-op if it was delivered)
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._thread_id), None)


def _ends_with_semicolon(code: str) -> bool:
    """IPython's rule: a trailing ``;`` on the last expression suppresses its display."""
    tokens = []
    with contextlib.suppress(tokenize.TokenError, SyntaxError):
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    skip = {
        tokenize.NEWLINE,
        tokenize.NL,
        tokenize.COMMENT,
        tokenize.ENDMARKER,
        tokenize.DEDENT,
        tokenize.INDENT,
    }
    meaningful = [t for t in tokens if t.type not in skip]
    return bool(meaningful) and meaningful[-1].string == ";"


def _run_cell(code: str, filename: str, namespace: dict[str, object]) -> None:
    """``exec`` the cell; like IPython, print the ``repr`` of a final expression that is not ``None``."""
    tree = ast.parse(code, filename=filename, mode="exec")
    last = tree.body[-1] if tree.body else None
    if not isinstance(last, ast.Expr):
        exec(compile(tree, filename, "exec"), namespace)  # noqa: S102 - the agent's checked cell
        return
    body = ast.Module(body=tree.body[:-1], type_ignores=[])
    exec(compile(body, filename, "exec"), namespace)  # noqa: S102 - the agent's checked cell
    value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)  # noqa: S307
    if value is not None and not _ends_with_semicolon(code):
        print(repr(value))


class InProcessExecutor(Executor):
    """Cells run with ``exec`` on a dict in this process (module docstring: timeout limits)."""

    def __init__(self) -> None:
        super().__init__()
        self._namespace: dict[str, object] | None = None
        self._cells = 0

    def _fresh_namespace(self, bootstrap: str) -> None:
        namespace: dict[str, object] = {"__name__": "__main__"}
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(bootstrap, "<bootstrap>", "exec"), namespace)  # noqa: S102 - harness code
            kernel_types.session_state(namespace).begin_cell(namespace)
        except Exception as err:
            raise RuntimeError(f"the bootstrap failed: {type(err).__name__}: {err}") from err
        self._namespace, self._cells = namespace, 0

    @property
    def namespace(self) -> dict[str, object]:
        """The live namespace (for inspection in notebooks and tests)."""
        if self._namespace is None:
            raise RuntimeError("the executor has not been started")
        return self._namespace

    def _execute(self, code: str, timeout: float, t0: float) -> CellResult:
        namespace = self.namespace
        state = kernel_types.session_state(namespace)
        self._cells += 1
        state.begin_cell(namespace)
        buffer = io.StringIO()
        error: BaseException | None = None
        timed_out = False
        try:
            with contextlib.redirect_stdout(buffer), state.capturing_pyplot(), _Deadline(timeout):
                try:
                    _run_cell(code, f"<cell-{self._cells}>", namespace)
                except _CellTimeout as exc:
                    error, timed_out = exc, True
                except (Exception, SystemExit) as exc:  # noqa: BLE001 - the agent's error is the result
                    error = exc
        except _CellTimeout:  # the deadline passed just as the cell ended: it did complete
            pass
        outputs = json.loads(json.dumps(state.end_cell(namespace, error)))  # the kernel's exact path
        return _result_from_outputs(
            outputs,
            code=code,
            stdout=buffer.getvalue(),
            timed_out=timed_out,
            timeout=timeout,
            seconds=time.perf_counter() - t0,
        )

    def close(self) -> None:
        self._namespace = None


# --------------------------------------------------------------------------------------------------------
# Jupyter kernel
# --------------------------------------------------------------------------------------------------------
#: Run once in a new kernel: Agg backend, ``plt.show()`` capture, plain ``repr`` display.
_KERNEL_PREAMBLE = (
    "from neurips26.spatialclaw import kernel_types as _kt\n_kt.install_kernel_hooks()\ndel _kt\n"
)
_KERNEL_TYPES = "__import__('neurips26.spatialclaw.kernel_types', fromlist=['_'])"
_RESET = "get_ipython().run_line_magic('reset', '-f')\n__import__('matplotlib.pyplot').pyplot.close('all')\n"
_BEGIN = f"\n{_KERNEL_TYPES}.begin_kernel_cell(globals())\n"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _finish_expression(error: bool) -> str:
    return f"{_KERNEL_TYPES}.finish_kernel_cell(globals(), error={error})"


class _KernelLost(Exception):
    """The kernel ignored an interrupt past the grace period, or died."""


@dataclass
class _Reply:
    content: dict[str, Any]
    stdout: str
    images: list[tuple[str, bytes]]
    interrupted: bool


def _shutdown(manager: Any, client: Any) -> None:
    """Stop the channels and kill the kernel (a finalizer: runs on close, garbage collection or exit)."""
    with contextlib.suppress(Exception):
        client.stop_channels()
    with contextlib.suppress(Exception):
        manager.shutdown_kernel(now=True)


class JupyterKernelExecutor(Executor):
    """Cells run in a real IPython kernel (module docstring). The kernel process is launched at once and
    awaited on first use; one executor keeps one kernel across samples (``start``/``reset`` clear it with
    ``%reset -f`` and bootstrap again). ``startup_seconds`` records launch-to-ready time."""

    def __init__(self, *, startup_timeout: float = 60.0, interrupt_grace: float = 10.0) -> None:
        super().__init__()
        self._startup_timeout = check_float("startup_timeout", startup_timeout, minimum=0.0, strict_min=True)
        self._grace = check_float("interrupt_grace", interrupt_grace, minimum=0.0, strict_min=True)
        self._closed = False
        self._ready = False
        self.startup_seconds: float | None = None
        self._t_launch = time.perf_counter()
        self._manager, self._client = self._launch()
        self._finalizer = weakref.finalize(self, _shutdown, self._manager, self._client)

    # ---- kernel lifecycle ---------------------------------------------------------------------------
    @staticmethod
    def _launch() -> tuple[Any, Any]:
        from jupyter_client import KernelManager
        from jupyter_client.kernelspec import KernelSpec, KernelSpecManager

        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        argv += ["--HistoryManager.enabled=False"]  # no sqlite history: faster, no locks between kernels

        class _ThisPython(KernelSpecManager):  # the kernel must run this interpreter, whatever is installed
            def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
                return KernelSpec(argv=argv, display_name="spatialclaw", language="python")

        env = dict(
            os.environ, MPLBACKEND="Agg", PYDEVD_DISABLE_FILE_VALIDATION="1", JUPYTER_PLATFORM_DIRS="1"
        )
        manager = KernelManager(kernel_name="spatialclaw", kernel_spec_manager=_ThisPython())
        # the kernel's own log (not the cells' output, which travels over IOPub) is not wanted here
        manager.start_kernel(env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = manager.client()
        client.start_channels()
        return manager, client

    def _ensure_ready(self) -> None:
        if self._closed:
            raise RuntimeError("the executor is closed")
        if self._ready:
            return
        self._client.wait_for_ready(timeout=self._startup_timeout)
        self._check(self._request(_KERNEL_PREAMBLE, silent=True, timeout=self._startup_timeout), "preamble")
        self._ready = True
        if self.startup_seconds is None:
            self.startup_seconds = time.perf_counter() - self._t_launch

    def _restart(self) -> None:
        """Replace a lost kernel by a fresh one and bootstrap it again."""
        self._manager.restart_kernel(now=True)
        self._ready = False
        self._ensure_ready()
        if self._bootstrap is not None:
            self._fresh_namespace(self._bootstrap)

    def close(self) -> None:
        """Shut the kernel down (idempotent)."""
        if not self._closed:
            self._closed = True
            self._finalizer()

    @property
    def alive(self) -> bool:
        return not self._closed and bool(self._manager.is_alive())

    # ---- messages -----------------------------------------------------------------------------------
    def _request(
        self,
        code: str,
        *,
        silent: bool,
        timeout: float,
        user_expressions: dict[str, str] | None = None,
        interruptible: bool = False,
    ) -> _Reply:
        """Execute ``code``; read IOPub until idle. Past ``timeout``: interrupt (``interruptible``) and wait
        ``interrupt_grace`` more, else raise :class:`_KernelLost`."""
        client, manager = self._client, self._manager
        msg_id = client.execute(
            code,
            silent=silent,
            store_history=not silent,
            user_expressions=user_expressions or {},
            allow_stdin=False,
            stop_on_error=False,
        )
        deadline = time.perf_counter() + timeout
        interrupted = False
        parts: list[str] = []
        images: list[tuple[str, bytes]] = []
        while True:
            now = time.perf_counter()
            if now > deadline:
                if not interruptible or interrupted:
                    raise _KernelLost(f"the kernel did not finish within {timeout:g} s")
                manager.interrupt_kernel()
                interrupted, deadline = True, now + self._grace
            try:
                msg = client.get_iopub_msg(timeout=min(1.0, max(deadline - now, 0.01)))
            except queue.Empty:
                if not manager.is_alive():
                    raise _KernelLost("the kernel died") from None
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream" and content.get("name") == "stdout":
                parts.append(content["text"])
            elif kind == "execute_result" and "text/plain" in content["data"]:
                parts.append(content["data"]["text/plain"] + "\n")
            elif kind == "display_data" and "image/png" in content["data"]:
                images.append(("display", base64.b64decode(content["data"]["image/png"])))
            elif kind == "status" and content["execution_state"] == "idle":
                break
        while True:  # the matching shell reply follows the idle status
            reply = client.get_shell_msg(timeout=self._startup_timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                return _Reply(reply["content"], "".join(parts), images, interrupted)

    @staticmethod
    def _check(reply: _Reply, what: str) -> None:
        content = reply.content
        if content.get("status") != "ok":
            trace = _ANSI.sub("", "\n".join(content.get("traceback", [])))
            raise RuntimeError(
                f"the {what} failed in the kernel: {content.get('ename')}: {content.get('evalue')}\n{trace}"
            )

    def _fresh_namespace(self, bootstrap: str) -> None:
        self._ensure_ready()
        self._check(self._request(_RESET, silent=True, timeout=self._startup_timeout), "reset")
        self._check(
            self._request(bootstrap + _BEGIN, silent=True, timeout=self._startup_timeout), "bootstrap"
        )

    # ---- cells --------------------------------------------------------------------------------------
    def _execute(self, code: str, timeout: float, t0: float) -> CellResult:
        self._ensure_ready()
        try:
            reply = self._request(
                code,
                silent=False,
                timeout=timeout,
                user_expressions={"out": _finish_expression(False)},
                interruptible=True,
            )
        except _KernelLost as lost:
            return self._lost(code, str(lost), timeout, t0)
        failed = reply.content.get("status") != "ok"
        out = reply.content.get("user_expressions", {}).get("out")
        if (
            failed or out is None or out.get("status") != "ok"
        ):  # IPython skips user_expressions after an error
            collect = self._request(
                "",
                silent=True,
                timeout=self._startup_timeout,
                user_expressions={"out": _finish_expression(failed)},
            )
            out = collect.content.get("user_expressions", {}).get("out")
            if out is None or out.get("status") != "ok":
                detail = "no reply" if out is None else f"{out.get('ename')}: {out.get('evalue')}"
                raise RuntimeError(f"could not read the cell's outputs from the kernel ({detail})")
        outputs = json.loads(out["data"]["text/plain"])
        return _result_from_outputs(
            outputs,
            code=code,
            stdout=reply.stdout,
            timed_out=reply.interrupted and failed,
            timeout=timeout,
            seconds=time.perf_counter() - t0,
            extra_images=tuple(reply.images),
        )

    def _lost(self, code: str, why: str, timeout: float, t0: float) -> CellResult:
        """The kernel was lost during a cell: restart and bootstrap it, and report the cell as failed."""
        self._restart()
        timed_out = "did not finish" in why
        ename = "TimeoutError" if timed_out else "KernelDied"
        evalue = (
            _timeout_message(timeout) if timed_out else why
        ) + "; the kernel was restarted and its state lost"
        return CellResult(
            stdout="",
            error=CellError(ename, evalue, None, f"{ename}: {evalue}"),
            images=(),
            variables=(),
            answers=(),
            timed_out=timed_out,
            rejected=None,
            show_budget_left=kernel_types.SHOW_BUDGET,
            answer_attempts_left=kernel_types.MAX_ANSWER_ATTEMPTS,
            seconds=time.perf_counter() - t0,
        )
