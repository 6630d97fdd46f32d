"""Renderer throughput: frames per second on a random box scene seen along an orbit.

The renderer's targets (one core): at least 200 frames/s at 32x32 with 20 boxes and 30 frames/s at
64x64 with 50 boxes, so a notebook can render thousands of training frames inside its budget.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from neurips26.validation import check_int, check_seed
from neurips26.world.camera import orbit, pinhole
from neurips26.world.render import render
from neurips26.world.scene import GroundPlane, Scene, oriented_box


@dataclass(frozen=True)
class BenchmarkResult:
    """Frames rendered, best wall time over the repeats, and frames per second."""

    width: int
    height: int
    n_boxes: int
    n_frames: int
    seconds: float
    fps: float
    threads: int | None


def benchmark_scene(n_boxes: int, seed: int) -> Scene:
    """``n_boxes`` random yawed boxes (edges 0.3-1.2 m) on a 6 m square of checkered floor."""
    n_boxes = check_int("n_boxes", n_boxes, minimum=0)
    rng = np.random.default_rng(check_seed("seed", seed))
    boxes = []
    for k in range(n_boxes):
        size = rng.uniform(0.3, 1.2, 3)
        center = (rng.uniform(-3.0, 3.0), size[1] / 2, rng.uniform(-3.0, 3.0))
        boxes.append(
            oriented_box(
                center, size, rng.uniform(0.0, 360.0), color=rng.uniform(0.1, 0.95, 3), instance_id=k + 1
            )
        )
    return Scene(tuple(boxes), GroundPlane(checker=1.0))


def benchmark_fps(
    width: int = 32,
    height: int = 32,
    n_boxes: int = 20,
    *,
    n_frames: int = 100,
    repeats: int = 3,
    threads: int | None = 1,
    seed: int = 0,
    dtype: type = np.float32,
) -> BenchmarkResult:
    """Render ``n_frames`` views of :func:`benchmark_scene` along an orbit; best of ``repeats`` runs.

    The scene is packed once (as a data generator rendering many frames would); every frame has its
    own camera pose. ``threads`` limits the BLAS/OpenMP pools (``None``: leave them alone).
    """
    width = check_int("width", width, minimum=1)
    height = check_int("height", height, minimum=1)
    n_frames = check_int("n_frames", n_frames, minimum=1)
    repeats = check_int("repeats", repeats, minimum=1)
    if threads is not None:
        threads = check_int("threads", threads, minimum=1)
    packed = benchmark_scene(n_boxes, seed).pack(dtype)
    template = pinhole(width, height, 60.0)
    cameras = [template.with_pose(p) for p in orbit((0.0, 0.3, 0.0), 8.0, 30.0, n_frames)]
    limits = threadpool_limits(limits=threads) if threads is not None else None
    try:
        render(packed, cameras[0], dtype=dtype)  # warm-up
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            for cam in cameras:
                render(packed, cam, dtype=dtype)
            best = min(best, time.perf_counter() - start)
    finally:
        if limits is not None:
            limits.restore_original_limits()
    return BenchmarkResult(width, height, n_boxes, n_frames, best, n_frames / best, threads)
