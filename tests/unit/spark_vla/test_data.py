"""Tests of neurips26.spark_vla.data: the task schedule, the cached episode sets and the demonstrations.

Every test works in a fresh cache directory (``NEURIPS26_CACHE_DIR`` set to a temporary folder, caching on),
with 12 development episodes.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from neurips26 import cache
from neurips26.spark_vla import data, sim

COUNT = 12
FIELDS = ("images", "depth", "instructions", "tasks", "goals", "grips", "colour_labels", "shape_labels",
          "geometry", "target_mask", "seeds")  # fmt: skip


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("spark-data-cache")


@pytest.fixture()
def in_cache(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(cache.CACHE_DIR_ENV, str(folder))
    monkeypatch.delenv(cache.NO_CACHE_ENV, raising=False)
    return folder


@pytest.fixture(scope="module")
def dev(folder: Path) -> data.EpisodeSet:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(cache.CACHE_DIR_ENV, str(folder))
        patch.delenv(cache.NO_CACHE_ENV, raising=False)
        return data.episodes("dev", count=COUNT)


@pytest.fixture(scope="module")
def demos(dev: data.EpisodeSet, folder: Path) -> data.Demonstrations:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(cache.CACHE_DIR_ENV, str(folder))
        patch.delenv(cache.NO_CACHE_ENV, raising=False)
        return data.demonstrations(dev)


# ------------------------------------------------------------------------------------------ the schedule


def test_episode_task_schedule() -> None:
    assert [data.episode_task(i) for i in range(8)] == [
        "colour", "nearer", "colour", "tallest", "colour", "behind", "colour", "nearer",
    ]  # fmt: skip
    for sizes in data.SPLIT_SIZES.values():
        for n in sizes.values():
            tasks = [data.episode_task(i) for i in range(n)]
            assert tasks.count("colour") == n // 2 + n % 2
            assert sum(t in sim.DEPTH_TASKS for t in tasks) == n // 2
    with pytest.raises(ValueError, match="index"):
        data.episode_task(-1)


def test_split_seed_ranges_are_disjoint() -> None:
    for scale, sizes in data.SPLIT_SIZES.items():
        ranges = {s: range(data.SPLIT_SEEDS[s], data.SPLIT_SEEDS[s] + sizes[s]) for s in data.SPLIT_SEEDS}
        for a, b in combinations(ranges, 2):
            assert not set(ranges[a]) & set(ranges[b]), (scale, a, b)


# ------------------------------------------------------------------------------------------ the episodes


def test_episode_set_fields(dev: data.EpisodeSet) -> None:
    e = COUNT
    assert len(dev) == e and dev.split == "dev"
    expected = {
        "seeds": ((e,), np.int64),
        "images": ((e, 3, 48, 48), np.float32),
        "depth": ((e, 1, 48, 48), np.float32),
        "instructions": ((e, 8), np.int64),
        "tasks": ((e,), np.int64),
        "goals": ((e, 3), np.float64),
        "grips": ((e,), np.int64),
        "colour_labels": ((e, 36), np.int64),
        "shape_labels": ((e, 36), np.int64),
        "geometry": ((e, 36, 4), np.float32),
        "target_mask": ((e, 36), np.bool_),
    }
    for name, (shape, dtype) in expected.items():
        value = getattr(dev, name)
        assert value.shape == shape and value.dtype == dtype, name
    np.testing.assert_array_equal(dev.seeds, data.SPLIT_SEEDS["dev"] + np.arange(e))
    assert [sim.TASKS[t] for t in dev.tasks] == [data.episode_task(i) for i in range(e)]
    assert dev.is_depth.sum() == e // 2 and np.array_equal(dev.is_depth, np.arange(e) % 2 == 1)
    assert dev.images.min() >= 0.0 and dev.images.max() <= 1.0
    assert np.all(dev.colour_labels < len(sim.COLOUR_CLASSES)) and np.all(
        dev.shape_labels < len(sim.SHAPE_CLASSES)
    )
    assert np.all(dev.instructions < len(sim.VOCABULARY)) and dev.target_mask.any(axis=1).all()
    assert set(np.unique(dev.grips)) <= {0, 1}


def test_rows_are_their_episodes(dev: data.EpisodeSet) -> None:
    for k in range(len(dev)):
        ep = dev.episode(k)
        assert ep.seed == dev.seeds[k] and ep.task == sim.TASKS[dev.tasks[k]]
        np.testing.assert_array_equal(dev.goals[k], ep.goal)
        assert dev.grips[k] == ep.grip
        np.testing.assert_array_equal(dev.instructions[k], sim.instruction_ids(ep.words))
    view = sim.render_episode(dev.episode(5))
    np.testing.assert_array_equal(dev.images[5], sim.image_tensor_array(view))
    np.testing.assert_array_equal(dev.geometry[5], sim.patch_geometry(view).astype(np.float32))
    with pytest.raises(ValueError, match="k"):
        dev.episode(COUNT)


def test_cache_hit_and_bit_identical_rebuild(
    dev: data.EpisodeSet, in_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert list(in_cache.glob("spark-vla-episodes-*.pkl"))
    with monkeypatch.context() as patch:  # a second call must load, not build
        patch.setattr(data, "_build_episodes", lambda *a: pytest.fail("rebuilt despite the cache"))
        again = data.episodes("dev", count=COUNT)
    assert cache.clear("spark-vla-episodes") >= 1
    rebuilt = data.episodes("dev", count=COUNT)
    for name in FIELDS:
        assert getattr(again, name).tobytes() == getattr(dev, name).tobytes(), name
        assert getattr(rebuilt, name).tobytes() == getattr(dev, name).tobytes(), name
    fewer = data.episodes("dev", count=4)  # another count is another entry, its rows a prefix
    assert fewer.images.tobytes() == dev.images[:4].tobytes()


# ------------------------------------------------------------------------------------- the demonstrations


def test_demonstrations_are_expert_chunks(dev: data.EpisodeSet, demos: data.Demonstrations) -> None:
    per = 2 + 2 * len(data.GOAL_SPREADS)
    assert len(demos) == per * COUNT
    assert demos.proprio.dtype == demos.chunks.dtype == np.float32 and demos.episode.dtype == np.int64
    assert demos.proprio.shape == (per * COUNT, 3) and demos.chunks.shape == (per * COUNT, 4, 4)
    np.testing.assert_array_equal(np.bincount(demos.episode), np.full(COUNT, per))
    goal, grip = dev.goals[demos.episode], dev.grips[demos.episode]
    expected = sim.expert_chunk(goal, grip, demos.proprio.astype(np.float64))
    np.testing.assert_allclose(demos.chunks[..., :3], expected[..., :3], atol=1e-6)
    np.testing.assert_array_equal(demos.chunks[..., 3], expected[..., 3])
    assert np.abs(demos.chunks[..., :3]).max() <= sim.MAX_STEP + 1e-7
    assert set(np.unique(demos.chunks[..., 3])) <= {0.0, 1.0}
    # per episode: 2 states around home, then 8 around the goal at growing spreads; all above the table
    states = demos.proprio.reshape(COUNT, per, 3).astype(np.float64)
    assert np.abs(states[:, :2] - np.asarray(sim.HOME)).max() < 6 * data.HOME_JITTER
    spread = np.linalg.norm(states[:, 2:] - dev.goals[:, None], axis=-1)
    assert np.median(spread[:, :2]) < np.median(spread[:, -2:])
    assert states[..., 1].min() >= data.MIN_HEIGHT - 1e-7
    assert len(np.unique(states.reshape(-1, 3), axis=0)) == COUNT * per


def test_demonstrations_are_cached_and_deterministic(
    dev: data.EpisodeSet, demos: data.Demonstrations, in_cache: Path
) -> None:
    assert cache.clear("spark-vla-demos") >= 1
    again = data.demonstrations(dev)
    for name in ("episode", "proprio", "chunks"):
        assert getattr(again, name).tobytes() == getattr(demos, name).tobytes(), name


# --------------------------------------------------------------------------------------------- bad input


def test_bad_input(in_cache: Path) -> None:
    with pytest.raises(ValueError, match="split"):
        data.episodes("test", count=2)
    with pytest.raises(ValueError, match="scale"):
        data.episodes("dev", "huge", count=2)
    with pytest.raises(ValueError, match="count"):
        data.episodes("dev", count=0)
    with pytest.raises(TypeError, match="count"):
        data.episodes("dev", count=2.0)
    with pytest.raises(TypeError, match="data"):
        data.demonstrations("x")
