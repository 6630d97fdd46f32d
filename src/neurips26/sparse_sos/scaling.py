"""How the backward's cost grows with the chain's length: the declared cost, the operator's size, the peak
memory and the wall clock, for the three paths, in one run (claims t2-scaling and t5-no-dense).

Sparse paths run on every ``n`` of ``sparse_ns``; the dense formulation (the structured algorithm on one
clique) only on ``dense_ns`` (its cost grows like ``binom(n + 2, 2)³``). At every ``n`` the backward wall
clocks of the paths that run there are measured side by side in interleaved rounds
(:func:`neurips26.timing.time_interleaved`); the profiles' own ``backward_seconds`` run under
``tracemalloc`` (for the peak memory) and are slower, so the wall clock comes from the rounds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.progress import progress
from neurips26.scales import pick
from neurips26.sparse_sos.profiles import BackwardProfile, prepare_backward, profile_backward
from neurips26.sparse_sos.tasks.chain_quartic import chain_quartic_instance
from neurips26.stats import loglog_fit
from neurips26.timing import time_interleaved
from neurips26.validation import check_choice, check_int, check_int_tuple, check_seed

#: The three backward paths compared, as (formulation, path).
SCALING_PATHS: tuple[tuple[str, str], ...] = (
    ("sparse", "danskin"),
    ("sparse", "structured"),
    ("dense", "structured"),
)


#: What :meth:`ScalingResult.series` can read from a profile.
SERIES: tuple[str, ...] = ("flops", "nnz_m", "iterations", "peak_bytes", "backward_seconds")


@dataclass(frozen=True)
class ScalingConfig:
    """Chains of ``sparse_ns`` (sparse paths) and ``dense_ns`` (the dense path too), ``θ₀`` from ``seed``;
    ``rounds`` interleaved timing rounds per size where both run."""

    sparse_ns: tuple[int, ...]
    dense_ns: tuple[int, ...]
    seed: int = 0
    rounds: int = 5

    def __post_init__(self) -> None:
        check_int_tuple("sparse_ns", self.sparse_ns, minimum=3)
        check_int_tuple("dense_ns", self.dense_ns, minimum=3, maximum=10)
        if not set(self.dense_ns) <= set(self.sparse_ns):
            raise ValueError(
                f"dense_ns must be a subset of sparse_ns; got {self.dense_ns} and {self.sparse_ns}"
            )
        check_seed("seed", self.seed)
        check_int("rounds", self.rounds, minimum=1)

    @classmethod
    def for_scale(cls, scale: str) -> ScalingConfig:
        return cls(
            sparse_ns=pick(
                scale,
                smoke=(3, 4, 6),
                default=(4, 5, 6, 7, 8, 12, 16, 24, 32, 40),
                paper=(4, 6, 8, 12, 16, 24, 32, 40, 60),
            ),
            dense_ns=pick(scale, smoke=(3, 4), default=(4, 5, 6, 7, 8), paper=(4, 5, 6, 7, 8, 9, 10)),
            rounds=pick(scale, smoke=1, default=5, paper=9),
        )


@dataclass(frozen=True)
class ScalingResult:
    """Per (formulation, path): the sizes, and for each size its profile; per size the interleaved backward
    seconds of every path that runs there (``"sparse structured"``, ``"danskin"``, and ``"dense structured"``
    on ``dense_ns``)."""

    config: ScalingConfig
    profiles: dict[tuple[str, str], dict[int, BackwardProfile]]
    wall: dict[int, dict[str, tuple[float, ...]]]

    def series(self, formulation: str, path: str, what: str) -> tuple[np.ndarray, np.ndarray]:
        """``(n, value)`` of one path; ``what``: ``"flops"``, ``"nnz_m"``, ``"iterations"``,
        ``"peak_bytes"`` or ``"backward_seconds"`` (``ValueError`` naming ``what`` otherwise)."""
        check_choice("what", what, SERIES)
        by_n = self.profiles[formulation, path]
        ns = np.array(sorted(by_n))
        values = []
        for n in ns:
            p = by_n[int(n)]
            values.append(getattr(p.cost, what) if hasattr(p.cost, what) else getattr(p, what))
        return ns, np.array(values, dtype=float)

    def slope(self, formulation: str, path: str, what: str) -> float:
        """The log–log slope of ``what`` against ``n`` (:func:`neurips26.stats.loglog_fit`)."""
        ns, values = self.series(formulation, path, what)
        return loglog_fit(ns, values, skip_invalid=True)[0]

    def median_wall(self, n: int, name: str) -> float:
        """The median backward seconds of ``name`` at ``n`` over the interleaved rounds."""
        return float(np.median(self.wall[n][name]))

    def wall_series(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``(n, median backward seconds)`` of ``name`` at every size where it was timed."""
        ns = np.array(sorted(n for n in self.wall if name in self.wall[n]))
        return ns, np.array([self.median_wall(int(n), name) for n in ns])


def backward_scaling(config: ScalingConfig, *, verbose: bool = True) -> ScalingResult:
    """Profile every path at every size and time the backwards side by side (module docstring)."""
    if not isinstance(config, ScalingConfig):
        raise TypeError(f"config must be a ScalingConfig; got {type(config).__name__}")
    profiles: dict[tuple[str, str], dict[int, BackwardProfile]] = {key: {} for key in SCALING_PATHS}
    wall: dict[int, dict[str, tuple[float, ...]]] = {}
    for n in progress(config.sparse_ns, desc="chain sizes", show=verbose):
        sparse = chain_quartic_instance(n, config.seed, "sparse")
        for path in ("danskin", "structured"):
            profiles["sparse", path][n] = profile_backward(sparse, path)
        runs = {
            "sparse structured": prepare_backward(sparse, "structured").run,
            "danskin": prepare_backward(sparse, "danskin").run,
        }
        if n in config.dense_ns:
            dense = chain_quartic_instance(n, config.seed, "dense")
            profiles["dense", "structured"][n] = profile_backward(dense, "structured")
            runs["dense structured"] = prepare_backward(dense, "structured").run
        timing = time_interleaved(runs, rounds=config.rounds, warmup=1, threads=1)
        wall[n] = dict(timing.seconds)
    return ScalingResult(config, profiles, wall)
