"""Map a function over items in spawned processes, in order: procedural data built on every core.

A corpus of layouts, a set of rendered scenes, a maze's expert demonstrations: each item depends only on
its own seed, so building them in ``workers`` processes gives the same list as building them one by one,
in a fraction of the time on a many-core machine. The processes are *spawned*: they share no thread pool
or CUDA context with the caller, so this is safe after ``torch`` has run. ``fn`` and the items must be
picklable (a module-level function, or a :func:`functools.partial` of one).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

from neurips26.validation import check_int

T = TypeVar("T")
R = TypeVar("R")


def map_in_processes(
    fn: Callable[[T], R], items: Iterable[T], *, workers: int, chunksize: int | None = None
) -> list[R]:
    """``[fn(item) for item in items]``, computed by ``workers`` spawned processes (0: one per CPU core).

    One worker, or fewer than two items, computes in this process. ``chunksize`` items go to a process at
    a time (default: enough for about eight chunks per worker).
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")
    workers = check_int("workers", workers, minimum=0) or os.cpu_count() or 1
    items = list(items)
    if workers == 1 or len(items) < 2:
        return [fn(item) for item in items]
    if chunksize is None:
        chunksize = max(1, len(items) // (8 * workers))
    chunksize = check_int("chunksize", chunksize, minimum=1)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(workers, len(items)), mp_context=context) as pool:
        return list(pool.map(fn, items, chunksize=chunksize))


__all__ = ["map_in_processes"]
