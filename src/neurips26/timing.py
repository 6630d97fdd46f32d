"""Timings as ratios measured side by side: interleaved rounds, threads pinned, warm-up discarded, medians.

On a shared 2-core machine an absolute time says more about the load than about the code, and two
methods timed one after the other meet different loads. :func:`time_interleaved` therefore times several
callables in rounds: each round runs every callable once, in an order that rotates from round to round
(round ``r`` starts at callable ``r mod n``), so none of them always runs first or right after a given
neighbour. A ratio is then taken per round, between two callables of the same round, and summarised by
its median over rounds (:meth:`Timing.ratio`) and the spread of the per-round ratios
(:meth:`Timing.ratio_spread`): a burst of load slows both members of a pair and barely moves their ratio,
and a burst that hits one of them moves one round's ratio, not the median.

What the pairing cancels is load that drifts slower than a round (a test shows it exact on a virtual
clock, where timing all of one callable and then all of the other misses by more than 15 %). Load that
flickers within a call (the scheduler's slices, another process's bursts) is noise on every round's
ratio: more rounds or longer calls narrow it, no ordering removes it.

During the measurement torch's intra-op threads (when torch is loaded) and the BLAS threads
(threadpoolctl) are pinned to ``threads``, so every callable runs on the same thread count whatever the
machine's load. This module imports no chapter: chapters import it.
"""

from __future__ import annotations

import contextlib
import math
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from neurips26.tables import markdown_table_text
from neurips26.validation import check_int

#: The quantiles of the per-round ratios that :meth:`Timing.ratio_spread` reports (the interquartile range).
SPREAD_QUANTILES: tuple[float, float] = (0.25, 0.75)


@dataclass(frozen=True)
class Timing:
    """What :func:`time_interleaved` measured.

    ``names``: the callables, in the order given; ``seconds[name]``: the seconds of one call of ``name`` in
    each timed round (warm-up rounds excluded; the mean over ``inner`` calls); ``reference``: the default
    denominator of :meth:`table`; ``warmup``, ``threads``, ``inner``: the settings of the measurement.
    """

    names: tuple[str, ...]
    seconds: dict[str, tuple[float, ...]]
    reference: str | None = None
    warmup: int = 1
    threads: int | None = 1
    inner: int = 1

    @property
    def rounds(self) -> int:
        """Timed rounds (warm-up rounds excluded)."""
        return len(self.seconds[self.names[0]])

    def _name(self, argument: str, name: object) -> str:
        if not isinstance(name, str):
            raise TypeError(f"{argument} must be a str, one of {self.names}; got {type(name).__name__}")
        if name not in self.seconds:
            raise ValueError(f"{argument} must be one of the timed names {self.names}; got {name!r}")
        return name

    def median(self, name: str) -> float:
        """Median seconds of one call of ``name`` over the rounds."""
        return statistics.median(self.seconds[self._name("name", name)])

    def ratios(self, name: str, reference: str) -> tuple[float, ...]:
        """Per round, ``seconds[name][r] / seconds[reference][r]``: the two were timed in the same round."""
        num, den = self.seconds[self._name("name", name)], self.seconds[self._name("reference", reference)]
        return tuple(a / b if b > 0 else math.inf for a, b in zip(num, den, strict=True))

    def ratio(self, name: str, reference: str) -> float:
        """Median over rounds of the paired ratio ``name / reference`` (> 1: ``name`` is slower).

        Not the ratio of the medians: each round's pair shares that round's machine load.
        """
        return statistics.median(self.ratios(name, reference))

    def ratio_spread(self, name: str, reference: str) -> tuple[float, float]:
        """The 25 % and 75 % quantiles (linear interpolation) of the per-round ratios ``name / reference``.

        Half of the rounds' ratios lie in between; with one round both ends are that round's ratio.
        """
        low, high = np.quantile(np.asarray(self.ratios(name, reference)), SPREAD_QUANTILES)
        return float(low), float(high)

    def ratio_text(self, name: str, reference: str) -> str:
        """``'2.01× (1.97–2.05, 7 rounds)'``: the paired median ratio and its 25–75 % range."""
        low, high = self.ratio_spread(name, reference)
        rounds = f"{self.rounds} round" + ("s" if self.rounds != 1 else "")
        return f"{self.ratio(name, reference):.3g}× ({low:.3g}–{high:.3g}, {rounds})"

    def table(self, reference: str | None = None) -> str:
        """Markdown table: per name its median seconds and, against ``reference`` (default: the measurement's
        reference, else the first name), the paired median ratio and the 25–75 % range of the ratios."""
        reference = self._name("reference", reference or self.reference or self.names[0])
        rows = []
        for name in self.names:
            low, high = self.ratio_spread(name, reference)
            ratio = f"{self.ratio(name, reference):.3g}×"
            rows.append([name, f"{self.median(name):.4g}", ratio, f"{low:.3g}–{high:.3g}"])
        header = ["callable", "median s / call", f"ratio to {reference}", "25–75 % of the round ratios"]
        return markdown_table_text(header, rows)


@contextlib.contextmanager
def pinned_threads(threads: int | None) -> Iterator[None]:
    """Torch's intra-op threads (when torch is loaded) and the BLAS threads at ``threads`` (None: as they
    are), restored afterwards."""
    if threads is None:
        yield
        return
    threads = check_int("threads", threads, minimum=1)
    from threadpoolctl import threadpool_limits

    with contextlib.ExitStack() as stack:
        stack.enter_context(threadpool_limits(limits=threads, user_api="blas"))
        if "torch" in sys.modules:  # a callable that uses torch has loaded it; importing it costs seconds
            from neurips26.train.device import torch_threads

            stack.enter_context(torch_threads(threads))
        yield


def _check_callables(callables: object) -> dict[str, Callable[[], object]]:
    if not isinstance(callables, Mapping):
        raise TypeError(f"callables must be a mapping name → callable; got {type(callables).__name__}")
    if not callables:
        raise ValueError("callables must hold at least one callable")
    for name, fn in callables.items():
        if not isinstance(name, str):
            raise TypeError(f"callables' names must be str; got {name!r}")
        if not callable(fn):
            raise TypeError(f"callables[{name!r}] must be callable (no arguments); got {type(fn).__name__}")
    return dict(callables)


def time_interleaved(
    callables: Mapping[str, Callable[[], object]],
    *,
    rounds: int = 7,
    warmup: int = 1,
    threads: int | None = 1,
    inner: int = 1,
    reference: str | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Timing:
    """Time ``callables`` side by side in ``warmup + rounds`` interleaved rounds (module docstring).

    Round ``r`` (warm-up rounds included, counted from 0) runs every callable once, starting at the
    ``r mod n``-th name and wrapping around; each timing is ``inner`` back-to-back calls divided by
    ``inner`` (for calls too short for the clock). The ``warmup`` first rounds are run and discarded
    (imports, caches, allocators). ``threads``: torch and BLAS threads during the whole measurement (None:
    leave them). ``reference``: a name, the default denominator of :meth:`Timing.table`. ``clock``: the
    timer (seconds), replaceable in tests.
    """
    fns = _check_callables(callables)
    rounds = check_int("rounds", rounds, minimum=1)
    warmup = check_int("warmup", warmup, minimum=0)
    inner = check_int("inner", inner, minimum=1)
    if threads is not None:
        threads = check_int("threads", threads, minimum=1)
    if reference is not None and reference not in fns:
        raise ValueError(f"reference must be one of the callables' names {tuple(fns)}; got {reference!r}")
    if not callable(clock):
        raise TypeError(f"clock must be callable; got {type(clock).__name__}")
    names = tuple(fns)
    n = len(names)
    seconds: dict[str, list[float]] = {name: [] for name in names}
    with pinned_threads(threads):
        for r in range(warmup + rounds):
            for k in range(n):
                name = names[(r + k) % n]
                fn = fns[name]
                start = clock()
                for _ in range(inner):
                    fn()
                elapsed = (clock() - start) / inner
                if r >= warmup:
                    seconds[name].append(elapsed)
    return Timing(
        names=names,
        seconds={name: tuple(v) for name, v in seconds.items()},
        reference=reference,
        warmup=warmup,
        threads=threads,
        inner=inner,
    )


__all__ = ["SPREAD_QUANTILES", "Timing", "pinned_threads", "time_interleaved"]


class Stopwatch:
    """Wall-clock seconds of a notebook's named experiments, for its "what this run cost" table.

    ``stopwatch.run(name, compute)`` calls ``compute()`` once, adds its seconds to ``stopwatch.seconds[name]``
    and returns its result; an experiment served from the results cache shows as the time of its load.
    These are plain clock readings of one run (for the reader's idea of the cost), not ratios: compare
    methods with :func:`time_interleaved`.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def run(self, name: str, compute: Callable[[], object]) -> object:
        """``compute()``, timed under ``name`` (times of repeated names add up)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty str; got {name!r}")
        if not callable(compute):
            raise TypeError(f"compute must be callable; got {type(compute).__name__}")
        start = time.perf_counter()
        result = compute()
        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
        return result

    def total(self) -> float:
        """Seconds of every experiment timed so far."""
        return sum(self.seconds.values())
