"""Tests of neurips26.spark_vla.probes: linear read-outs of colour, shape, depth and height from tokens."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26 import cache
from neurips26.spark_vla import data, sim
from neurips26.spark_vla.probes import (
    FLOOR_NAME,
    colour_probe,
    geometry_probe,
    position_features,
    position_floor,
    probe_table,
    shape_probe,
)

N = sim.NUM_PATCHES


def _labels(episodes: int, classes: int, seed: int) -> np.ndarray:
    """(E, 36) class indices: about half table/pedestal, the rest spread over the object classes."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(2, classes, (episodes, N))
    background = rng.random((episodes, N)) < 0.5
    labels[background] = rng.integers(0, 2, (episodes, N))[background]
    return labels


def _one_hot(labels: np.ndarray, classes: int) -> np.ndarray:
    return np.eye(classes)[labels]


def _noise(episodes: int, width: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((episodes, N, width))


# ------------------------------------------------------------------------------------------ class probes


@pytest.mark.parametrize(("probe", "classes"), [(colour_probe, 8), (shape_probe, 5)])
def test_class_probe_reads_labels_that_are_the_features(probe, classes) -> None:
    train, test = _labels(30, classes, 0), _labels(20, classes, 1)
    pad = lambda y, s: np.concatenate([_one_hot(y, classes), 0.1 * _noise(len(y), 4, s)], -1)  # noqa: E731
    assert probe(pad(train, 2), train, pad(test, 3), test) == 1.0


def test_class_probe_scores_object_patches_only() -> None:
    """Table and pedestal patches carry noise tokens: a probe that fitted or scored them would score < 1."""
    train, test = _labels(30, 8, 0), _labels(20, 8, 1)
    tokens = [
        np.where(y[..., None] >= 2, _one_hot(y, 8), _noise(len(y), 8, s)) for y, s in ((train, 2), (test, 3))
    ]
    assert colour_probe(tokens[0], train, tokens[1], test) == 1.0


def test_class_probe_on_noise_is_near_chance() -> None:
    train, test = _labels(40, 8, 0), _labels(40, 8, 1)
    accuracy = colour_probe(_noise(40, 32, 2), train, _noise(40, 32, 3), test)
    assert 0.0 <= accuracy < 0.5  # chance is 1/6 over six colours


def test_class_probe_is_deterministic_and_device_agnostic() -> None:
    train, test = _labels(30, 8, 0), _labels(20, 8, 1)
    noisy = _one_hot(train, 8) + _noise(30, 8, 2)
    a = colour_probe(noisy, train, _one_hot(test, 8) + _noise(20, 8, 3), test)
    b = colour_probe(noisy, train, _one_hot(test, 8) + _noise(20, 8, 3), test)
    c = colour_probe(
        torch.from_numpy(noisy),
        torch.from_numpy(train),
        torch.from_numpy(_one_hot(test, 8) + _noise(20, 8, 3)),
        torch.from_numpy(test),
    )
    assert a == b == c and 0.2 < a < 1.0


# --------------------------------------------------------------------------------------- geometry probes


def test_geometry_probe_recovers_a_linear_target_and_skips_nan() -> None:
    tokens, test_tokens = _noise(30, 16, 0), _noise(20, 16, 1)
    w = np.random.default_rng(2).standard_normal(16)
    target, test_target = tokens @ w + 3.0, test_tokens @ w + 3.0
    target[np.random.default_rng(3).random(target.shape) < 0.2] = np.nan  # background patches
    test_target[:, :5] = np.inf
    assert geometry_probe(tokens, target, test_tokens, test_target) > 0.999


def test_geometry_probe_on_noise_explains_nothing() -> None:
    r2 = geometry_probe(
        _noise(40, 16, 0), _noise(40, 1, 1)[..., 0], _noise(40, 16, 2), _noise(40, 1, 3)[..., 0]
    )
    assert r2 <= 0.05


def test_position_floor() -> None:
    per_position = np.random.default_rng(0).standard_normal(N)
    train = per_position + 0.01 * _noise(30, 1, 1)[..., 0]
    test = per_position + 0.01 * _noise(20, 1, 2)[..., 0]
    assert position_floor(train, test) > 0.99
    assert position_floor(_noise(30, 1, 3)[..., 0], _noise(20, 1, 4)[..., 0]) <= 0.05
    np.testing.assert_array_equal(position_features(2)[1], np.eye(N))
    # the floor is the geometry probe on one-hot positions
    assert position_floor(train, test) == geometry_probe(
        position_features(30), train, position_features(20), test
    )


def test_geometry_probe_is_deterministic() -> None:
    args = (_noise(30, 16, 0), _noise(30, 1, 1)[..., 0] + _noise(30, 16, 0)[..., 0], _noise(20, 16, 2))
    test_target = _noise(20, 1, 3)[..., 0] + _noise(20, 16, 2)[..., 0]
    assert geometry_probe(*args, test_target) == geometry_probe(*args, test_target)


# ----------------------------------------------------------------------------------------------- the table


def _episode_set(episodes: int, seed: int, split: str) -> data.EpisodeSet:
    """A synthetic EpisodeSet: random labels; depth = per-position profile + noise; X garbage; Y random."""
    rng = np.random.default_rng(seed)
    geometry = np.stack(
        [
            np.linspace(0.6, 1.0, N) + 0.01 * rng.standard_normal((episodes, N)),
            rng.standard_normal((episodes, N)),
            rng.uniform(0.0, 0.2, (episodes, N)),
            rng.standard_normal((episodes, N)),
        ],
        axis=-1,
    ).astype(np.float32)
    return data.EpisodeSet(
        split=split,
        seeds=np.arange(episodes),
        images=np.zeros((episodes, 3, 48, 48), np.float32),
        depth=np.zeros((episodes, 1, 48, 48), np.float32),
        instructions=np.zeros((episodes, 8), np.int64),
        tasks=np.arange(episodes) % 4,
        goals=np.zeros((episodes, 3)),
        grips=np.zeros(episodes, np.int64),
        colour_labels=_labels(episodes, 8, seed + 1),
        shape_labels=_labels(episodes, 5, seed + 2),
        geometry=geometry,
        target_mask=np.zeros((episodes, N), bool),
        offsets=np.full((episodes, N, 2), np.nan, np.float32),
    )


def _oracle(s: data.EpisodeSet) -> np.ndarray:
    """Tokens that hold the labels: colour and shape one-hots, depth and height."""
    return np.concatenate(
        [_one_hot(s.colour_labels, 8), _one_hot(s.shape_labels, 5), s.geometry[..., [0, 2]]], axis=-1
    )


def test_probe_table_rows() -> None:
    train, test = _episode_set(30, 0, "train"), _episode_set(20, 10, "dev")
    features = {
        "oracle": (_oracle(train), torch.from_numpy(_oracle(test))),
        "noise": (_noise(30, 16, 5), _noise(20, 16, 6)),
    }
    rows = probe_table(features, train, test)
    assert [r["pathway"] for r in rows] == ["oracle", "noise", FLOOR_NAME]
    assert all(set(r) == {"pathway", "colour_acc", "shape_acc", "depth_r2", "height_r2"} for r in rows)
    oracle, noise, floor = rows
    assert oracle["colour_acc"] == oracle["shape_acc"] == 1.0
    assert oracle["depth_r2"] > 0.999 and oracle["height_r2"] > 0.999  # columns 0 and 2, not the X column
    assert noise["colour_acc"] < 0.5 and noise["depth_r2"] <= 0.05 and noise["height_r2"] <= 0.05
    assert floor["depth_r2"] > 0.95 and floor["height_r2"] <= 0.05  # depth follows position here, height not
    assert probe_table(features, train, test) == rows


def test_probe_table_on_rendered_episodes(tmp_path, monkeypatch) -> None:
    """Mean patch colour as the token: the object's colour is nearly linear in it; the table recedes with the
    image row, so position alone explains almost all of the depth (and little of the colour)."""
    monkeypatch.setenv(cache.CACHE_DIR_ENV, str(tmp_path))
    monkeypatch.delenv(cache.NO_CACHE_ENV, raising=False)
    train, test = data.episodes("dev", count=40), data.episodes("eval", count=20)

    def mean_rgb(s: data.EpisodeSet) -> np.ndarray:
        x = s.images.reshape(len(s), 3, 6, 8, 6, 8).mean(axis=(3, 5))  # (E, 3, 6, 6)
        return x.reshape(len(s), 3, N).transpose(0, 2, 1)

    row, floor = probe_table({"rgb": (mean_rgb(train), mean_rgb(test))}, train, test)
    assert row["pathway"] == "rgb" and floor["pathway"] == FLOOR_NAME
    assert row["colour_acc"] > 0.8 and floor["colour_acc"] < 0.5
    assert floor["depth_r2"] > 0.9


# --------------------------------------------------------------------------------------------- bad input


def test_bad_input() -> None:
    y, t = _labels(4, 8, 0), _noise(4, 8, 1)
    with pytest.raises(ValueError, match="train_labels"):
        colour_probe(t, y[:, :30], t, y)
    with pytest.raises(ValueError, match="test_tokens"):
        colour_probe(t, y, _noise(4, 7, 2), y)
    with pytest.raises(ValueError, match="train_tokens"):
        colour_probe(t[..., 0], y, t, y)
    with pytest.raises(ValueError, match="train_labels"):
        shape_probe(t, y, t, y)  # class 7 is not a shape
    with pytest.raises(TypeError, match="test_labels"):
        colour_probe(t, y, t, y.astype(float))
    with pytest.raises(ValueError, match="test_labels"):
        colour_probe(t, y, t, np.zeros_like(y))  # no object patch to score
    with pytest.raises(ValueError, match="train_tokens"):
        colour_probe(np.full_like(t, np.nan), y, t, y)
    with pytest.raises(TypeError, match="train_tokens"):
        geometry_probe(t.tolist(), t[..., 0], t, t[..., 0])
    with pytest.raises(ValueError, match="test_target"):
        geometry_probe(t, t[..., 0], t, t[:, :5, 0])
    with pytest.raises(ValueError, match="test_target"):
        position_floor(t[..., 0], t[:, :5, 0])
    with pytest.raises(ValueError, match="episodes"):
        position_features(0)
    train = _episode_set(4, 0, "train")
    with pytest.raises(ValueError, match="features"):
        probe_table({"x": (t[:3], t)}, train, train)  # 3 token rows for 4 training episodes
    with pytest.raises(ValueError, match="features"):
        probe_table({}, train, train)
    with pytest.raises(TypeError, match="test"):
        probe_table({"x": (_oracle(train), _oracle(train))}, train, "dev")
