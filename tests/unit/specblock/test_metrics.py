"""Metrics on hand-made counts: τ, per-depth acceptance, speedups, the latency helper, pooling."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.specblock.decode import GenerationResult
from neurips26.specblock.metrics import (
    acceptance_length,
    measure_latency,
    measured_speedup,
    modelled_speedup,
    per_depth_acceptance,
    summarize,
)


def result(accepted, depth, sizes, forwards, dsec, tsec, seconds=1.0):
    n = sum(accepted) + len(accepted)
    return GenerationResult(
        tokens=tuple(range(n)),
        accepted=tuple(accepted),
        accepted_depth=tuple(depth),
        tree_sizes=tuple(sizes),
        drafter_forwards=tuple(forwards),
        drafter_seconds=tuple(dsec),
        target_seconds=tuple(tsec),
        seconds=seconds,
    )


def test_acceptance_length_by_hand():
    assert acceptance_length([0, 0, 0]) == 1.0
    assert acceptance_length([3, 1, 0, 4]) == pytest.approx((8 + 4) / 4)


def test_per_depth_acceptance_by_hand():
    rates = per_depth_acceptance([0, 1, 3, 3, 2])
    np.testing.assert_allclose(rates, [4 / 5, 3 / 5, 2 / 5])
    np.testing.assert_allclose(per_depth_acceptance([2, 0], max_depth=4), [0.5, 0.5, 0.0, 0.0])
    assert per_depth_acceptance([0, 0]).size == 0


def test_speedups_by_hand():
    assert measured_speedup(3.0, 1.5) == 2.0
    # τ = 3, t_T = 10 ms, t_D = 1 ms, N = 50 nodes, 2 drafter forwards, ε = 0.002:
    # t_iter = 10 (1 + 0.1) + 2 = 13 ms; speedup = 3 · 10 / 13
    assert modelled_speedup(3.0, 0.01, 0.001, 50, 2) == pytest.approx(30 / 13)
    assert modelled_speedup(1.0, 0.01, 0.0, 0, 0) == pytest.approx(1.0)  # vanilla is 1×
    assert modelled_speedup(2.0, 1.0, 0.0, 10, 0, epsilon=0.1) == pytest.approx(1.0)


def test_measure_latency_is_the_median():
    durations = iter([0.0, 0.03, 0.001, 0.002])  # warm-up call first, then three timed calls
    import time

    median = measure_latency(lambda: time.sleep(next(durations)), repeats=3)
    assert 0.002 <= median < 0.03  # the 30 ms outlier does not count


def test_summarize_pools_iterations():
    a = result([2, 0], [3, 0], [10, 10], [2, 2], [0.1, 0.3], [0.2, 0.2], seconds=2.0)
    b = result([1], [1], [4], [1], [0.2], [0.5], seconds=1.0)
    stats = summarize([a, b])
    assert stats.iterations == 3 and stats.tokens == 6
    assert stats.tau == pytest.approx(6 / 3)
    np.testing.assert_allclose(stats.per_depth, [2 / 3, 1 / 3, 1 / 3])
    assert stats.drafter_forwards == pytest.approx(5 / 3)
    assert stats.drafter_seconds == pytest.approx(0.6 / 3)
    assert stats.target_seconds == pytest.approx(0.9 / 3)
    assert stats.tree_nodes == pytest.approx(8.0)
    assert stats.seconds == 3.0
    assert a.tau == pytest.approx(2.0) and a.iterations == 2


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="accepted"):
        acceptance_length([])
    with pytest.raises(ValueError, match="accepted"):
        acceptance_length([1, -1])
    with pytest.raises(TypeError, match="accepted_depth"):
        per_depth_acceptance("12")
    with pytest.raises(ValueError, match="speculative_seconds"):
        measured_speedup(1.0, 0.0)
    with pytest.raises(ValueError, match="tau"):
        modelled_speedup(0.5, 1.0, 1.0, 1, 1)
    with pytest.raises(ValueError, match="target_latency"):
        modelled_speedup(2.0, 0.0, 1.0, 1, 1)
    with pytest.raises(ValueError, match="repeats"):
        measure_latency(lambda: None, repeats=0)
    with pytest.raises(TypeError, match="fn"):
        measure_latency(3)
    with pytest.raises(TypeError, match="results"):
        summarize([1, 2])
    with pytest.raises(ValueError, match="results"):
        summarize([])
