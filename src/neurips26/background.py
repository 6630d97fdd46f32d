"""Run one independent, expensive computation in a second process while a notebook goes on.

A claims notebook runs its experiments one after another on one torch thread (small tensors gain nothing
from a second thread but synchronisation). On a two-core machine the second core then idles. An
experiment that shares nothing with the others (its own models, its own data) can run there instead:
:class:`BackgroundRun` starts ``fn(*args, **kwargs)`` in a fresh *spawned* Python process (no state of
the notebook is inherited, so the result is what a call in the notebook would give), and
:meth:`BackgroundRun.result` waits for it where the notebook needs it. ``fn`` and its arguments must be
picklable: a module-level function of the package and frozen configuration objects.

Chapter 04 runs its chaotic-flow experiment (k6) this way, beside k1–k5.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from neurips26.validation import check_int


def _timed_call(fn: Callable[..., Any], args: tuple, kwargs: dict, threads: int) -> tuple[Any, float]:
    """In the child: ``fn(*args, **kwargs)`` on ``threads`` torch threads, with its wall seconds."""
    import torch

    torch.set_num_threads(threads)
    start = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - start


class BackgroundRun:
    """``fn(*args, **kwargs)`` started now in a spawned process with ``threads`` torch threads.

    :meth:`result` returns its value (re-raising its exception); :attr:`seconds` is then the wall time the
    call took in the child (not counting the process start), for a notebook's cost table.
    """

    def __init__(self, fn: Callable[..., Any], *args: Any, threads: int = 1, **kwargs: Any) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable; got {type(fn).__name__}")
        threads = check_int("threads", threads, minimum=1)
        self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        self._future = self._pool.submit(_timed_call, fn, args, kwargs, threads)
        self.seconds: float | None = None

    def done(self) -> bool:
        """Whether the call has finished (successfully or not)."""
        return self._future.done()

    def result(self, timeout: float | None = None) -> Any:
        """The call's value, waiting up to ``timeout`` seconds (None: as long as it takes)."""
        try:
            value, self.seconds = self._future.result(timeout)
        finally:
            if self._future.done():
                self._pool.shutdown(wait=True)
        return value
