"""Speculative-decoding metrics (the paper's acceptance length and speedup; the chapter's cost accounting).

- acceptance length τ = (accepted draft tokens + iterations) / iterations: tokens per target forward;
- per-depth acceptance: the share of iterations whose accepted path reached depth ≥ d, d = 1 … D;
- drafting cost: drafter forwards and drafter seconds per iteration;
- measured speedup = vanilla seconds / speculative seconds (same target, same prompts, batch 1); the suite
  times both side by side and takes the median of the per-round ratios (:mod:`neurips26.timing`);
- modelled speedup with a GPU-like latency model, where verifying N tree nodes costs barely more than one
  token and each drafter forward costs t_D::

      t_iter = t_T (1 + ε N) + n_fwd t_D,        speedup = τ t_T / t_iter                     (ε = 0.002)

  with t_T and t_D measured single-forward latencies (:func:`measure_latency`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from neurips26.specblock.decode import GenerationResult
from neurips26.validation import check_float, check_int

EPSILON: float = 0.002


def _counts(name: str, values: object) -> list[int]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a sequence of ints; got {type(values).__name__}")
    return [check_int(f"{name}[{i}]", v, minimum=0) for i, v in enumerate(values)]


def acceptance_length(accepted: Sequence[int]) -> float:
    """τ = (Σ accepted + iterations) / iterations for per-iteration accepted draft-token counts."""
    counts = _counts("accepted", accepted)
    if not counts:
        raise ValueError("accepted must hold at least one iteration")
    return (sum(counts) + len(counts)) / len(counts)


def per_depth_acceptance(accepted_depth: Sequence[int], max_depth: int | None = None) -> np.ndarray:
    """``rate[d-1]`` = share of iterations that accepted at least ``d`` draft tokens, ``d = 1 … max_depth``.

    ``max_depth`` defaults to the deepest accepted path; the rates are non-increasing in ``d``.
    """
    counts = _counts("accepted_depth", accepted_depth)
    if not counts:
        raise ValueError("accepted_depth must hold at least one iteration")
    depth = max(counts) if max_depth is None else check_int("max_depth", max_depth, minimum=0)
    arr = np.asarray(counts)
    return np.array([(arr >= d).mean() for d in range(1, depth + 1)], dtype=float)


def measured_speedup(vanilla_seconds: float, speculative_seconds: float) -> float:
    """Wall-clock speedup: vanilla seconds / speculative seconds for the same tokens."""
    v = check_float("vanilla_seconds", vanilla_seconds, minimum=0.0, strict_min=True)
    s = check_float("speculative_seconds", speculative_seconds, minimum=0.0, strict_min=True)
    return v / s


def modelled_speedup(
    tau: float,
    target_latency: float,
    drafter_latency: float,
    tree_nodes: float,
    drafter_forwards: float,
    *,
    epsilon: float = EPSILON,
) -> float:
    """τ t_T / (t_T (1 + ε N) + n_fwd t_D): the chapter's latency model (GPU-like verification)."""
    tau = check_float("tau", tau, minimum=1.0)
    t_t = check_float("target_latency", target_latency, minimum=0.0, strict_min=True)
    t_d = check_float("drafter_latency", drafter_latency, minimum=0.0)
    n = check_float("tree_nodes", tree_nodes, minimum=0.0)
    n_fwd = check_float("drafter_forwards", drafter_forwards, minimum=0.0)
    eps = check_float("epsilon", epsilon, minimum=0.0)
    return tau * t_t / (t_t * (1.0 + eps * n) + n_fwd * t_d)


def measure_latency(fn: Callable[[], object], repeats: int = 5, *, warmup: int = 1) -> float:
    """Median wall-clock seconds of ``fn()`` over ``repeats`` calls, after ``warmup`` untimed calls."""
    if not callable(fn):
        raise TypeError(f"fn must be callable; got {type(fn).__name__}")
    repeats = check_int("repeats", repeats, minimum=1)
    warmup = check_int("warmup", warmup, minimum=0)
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


@dataclass(frozen=True)
class DecodeStats:
    """Pooled statistics of several generations (every iteration of every prompt counts once)."""

    tokens: int
    iterations: int
    tau: float
    per_depth: np.ndarray
    drafter_forwards: float
    drafter_seconds: float
    target_seconds: float
    tree_nodes: float
    seconds: float


def summarize(results: Sequence[GenerationResult], max_depth: int | None = None) -> DecodeStats:
    """Pool ``results``: τ, per-depth acceptance, and per-iteration means of forwards, seconds and nodes."""
    if isinstance(results, GenerationResult):
        results = [results]
    if not isinstance(results, Sequence) or not all(isinstance(r, GenerationResult) for r in results):
        raise TypeError("results must be a sequence of GenerationResult")
    if not results or not any(r.iterations for r in results):
        raise ValueError("results must hold at least one iteration")
    accepted = [a for r in results for a in r.accepted]
    n = len(accepted)
    return DecodeStats(
        tokens=sum(len(r.tokens) for r in results),
        iterations=n,
        tau=acceptance_length(accepted),
        per_depth=per_depth_acceptance([d for r in results for d in r.accepted_depth], max_depth),
        drafter_forwards=sum(sum(r.drafter_forwards) for r in results) / n,
        drafter_seconds=sum(sum(r.drafter_seconds) for r in results) / n,
        target_seconds=sum(sum(r.target_seconds) for r in results) / n,
        tree_nodes=sum(sum(r.tree_sizes) for r in results) / n,
        seconds=sum(r.seconds for r in results),
    )
