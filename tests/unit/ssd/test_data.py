"""Digits (range, bilinear upsampling, disjoint splits) and twin blobs (exact mirror symmetry, parameters)."""

import numpy as np
import pytest
import torch

from neurips26.ssd.data import digits_8, load_digits_16, twin_blobs


def bilinear_upsample_2x(img):
    """Half-pixel-centred bilinear ×2 (source coordinate (i + 0.5)/2 − 0.5, clamped at the border)."""
    n = img.shape[0]
    src = np.clip((np.arange(2 * n) + 0.5) / 2 - 0.5, 0, n - 1)
    lo = np.floor(src).astype(int)
    hi = np.minimum(lo + 1, n - 1)
    t = src - lo
    rows = img[lo] * (1 - t)[:, None] + img[hi] * t[:, None]
    return rows[:, lo] * (1 - t)[None, :] + rows[:, hi] * t[None, :]


def test_digits_8_are_the_originals_in_minus_one_one():
    pytest.importorskip("sklearn")
    from sklearn.datasets import load_digits

    x, y = digits_8()
    raw = load_digits()
    assert x.shape == (1797, 1, 8, 8) and x.dtype == torch.float32 and y.shape == (1797,)
    assert float(x.min()) == -1.0 and float(x.max()) == 1.0
    assert np.array_equal((x[:, 0].numpy() + 1) * 8, raw.images)  # g ↦ g/8 − 1 is exact and invertible
    assert set(y.tolist()) == set(range(10))


def test_digits_16_are_the_bilinear_upsampling():
    pytest.importorskip("sklearn")
    x8, _ = digits_8()
    x16, labels = load_digits_16("all")
    assert x16.shape == (1797, 1, 16, 16) and x16.dtype == torch.float32 and labels.shape == (1797,)
    assert float(x16.min()) >= -1.0 and float(x16.max()) <= 1.0
    for i in (0, 500, 1796):
        assert np.allclose(
            x16[i, 0].numpy(), bilinear_upsample_2x(x8[i, 0].numpy().astype(np.float64)), atol=1e-6
        )


def test_digit_splits_are_disjoint_complete_and_seeded():
    pytest.importorskip("sklearn")
    full, labels = load_digits_16("all")
    train, train_labels = load_digits_16("train", n_holdout=1000, seed=0)
    hold, hold_labels = load_digits_16("holdout", n_holdout=1000, seed=0)
    assert train.shape[0] == 797 and hold.shape[0] == 1000
    rows = {tuple(r.tolist()): i for i, r in enumerate(full.reshape(1797, -1))}
    train_idx = {rows[tuple(r.tolist())] for r in train.reshape(797, -1)}
    hold_idx = {rows[tuple(r.tolist())] for r in hold.reshape(1000, -1)}
    assert len(train_idx | hold_idx) >= 1790 and not (train_idx & hold_idx)  # a few digits are duplicates
    assert torch.equal(hold, load_digits_16("holdout", n_holdout=1000, seed=0)[0])
    assert not torch.equal(hold, load_digits_16("holdout", n_holdout=1000, seed=1)[0])
    assert torch.equal(torch.cat([train_labels, hold_labels]).sort().values, labels.sort().values)


def test_twin_blobs_are_mirror_symmetric_with_one_colour():
    x, params = twin_blobs(64, seed=0)
    assert x.shape == (64, 3, 16, 16) and x.dtype == torch.float32
    assert float(x.min()) >= -1.0 and float(x.max()) <= 1.0
    assert torch.equal(x, x.flip(-1))  # exactly symmetric, so any asymmetry in a sample is the model's
    assert params.colour.shape == (64, 3) and np.all(params.col < 15 - params.col - 4)  # twins apart
    # independent reconstruction from the parameters: blobs at (r, c) and (r, W − 1 − c)
    grid = np.arange(16.0)
    for i in (0, 17, 63):
        r, c, w = params.row[i], params.col[i], params.width[i]
        left = np.exp(-((grid[:, None] - r) ** 2 + (grid[None, :] - c) ** 2) / (2 * w**2))
        right = np.exp(-((grid[:, None] - r) ** 2 + (grid[None, :] - (15 - c)) ** 2) / (2 * w**2))
        expected = -1 + 2 * np.maximum(left, right)[None] * params.colour[i][:, None, None]
        assert np.allclose(x[i].numpy(), expected, atol=1e-6)


def test_twin_blobs_are_seeded_and_bright():
    a, pa = twin_blobs(8, seed=3)
    assert torch.equal(a, twin_blobs(8, seed=3)[0])
    assert not torch.equal(a, twin_blobs(8, seed=4)[0])
    assert np.allclose(pa.colour.max(axis=1), 1.0)  # saturated colours at full value: visible on black
    assert twin_blobs(2, seed=0, size=24)[0].shape == (2, 3, 24, 24)


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="split.*all.*train.*holdout"):
        load_digits_16("test")
    pytest.importorskip("sklearn")
    with pytest.raises(ValueError, match="n_holdout"):
        load_digits_16("train", n_holdout=5000)
    with pytest.raises(ValueError, match="size"):
        twin_blobs(4, seed=0, size=4)
    with pytest.raises(ValueError, match="n"):
        twin_blobs(0, seed=0)
