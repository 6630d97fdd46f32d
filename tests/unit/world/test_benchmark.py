"""Benchmark: runs on a tiny configuration and reports consistent numbers."""

import pytest

from neurips26.world import benchmark_fps
from neurips26.world.benchmark import benchmark_scene


def test_benchmark_reports_frames_over_time():
    res = benchmark_fps(16, 12, 5, n_frames=4, repeats=2)
    assert (res.width, res.height, res.n_boxes, res.n_frames, res.threads) == (16, 12, 5, 4, 1)
    assert res.seconds > 0 and res.fps == pytest.approx(4 / res.seconds)


def test_benchmark_scene_is_seeded_and_validated():
    assert benchmark_scene(6, 1).to_json() == benchmark_scene(6, 1).to_json()
    assert len(benchmark_scene(6, 1).boxes) == 6
    with pytest.raises(ValueError, match="n_frames"):
        benchmark_fps(n_frames=0)
    with pytest.raises(ValueError, match="n_boxes"):
        benchmark_scene(-1, 0)
