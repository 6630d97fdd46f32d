"""The time axis: sparse offsets read +1, +2, +5, ..., +20 s; chunk positions embed a sparse offset like the
dense index; windows, padding and start trimming on small hand-checked examples; the named errors."""

import numpy as np
import pytest

from neurips26.sparsevideonav import timeline as TL


def test_sparse_offsets_read_as_seconds_ahead():
    assert TL.CHUNK_FRAMES == 4 and TL.REFERENCE_CHUNKS == 2
    assert TL.SPARSE_OFFSETS == (0, 1, 4, 7, 10, 13, 16, 19)
    # offset o is the chunk covering second o + 1 after the decision
    assert tuple(o + 1 for o in TL.SPARSE_OFFSETS) == (1, 2, 5, 8, 11, 14, 17, 20)
    assert TL.horizon_seconds(TL.SPARSE_OFFSETS) == 20
    assert TL.horizon_seconds((0,)) == 1


def test_interval_offsets():
    assert TL.interval_offsets(3) == TL.SPARSE_OFFSETS
    assert TL.interval_offsets(1) == tuple(range(8)) == TL.continuous_offsets(8)
    assert TL.interval_offsets(5) == (0, 1, 6, 11, 16, 21, 26, 31)
    assert TL.interval_offsets(5, count=3) == (0, 1, 6)
    assert TL.interval_offsets(4, count=1) == (0,)
    assert TL.horizon_seconds(TL.interval_offsets(5)) == 32
    for k in (1, 2, 3, 7):
        offsets = TL.interval_offsets(k, count=6)
        assert TL.check_offsets(offsets) == offsets
        assert np.all(np.diff(offsets[1:]) == k)


def test_continuous_offsets():
    assert TL.continuous_offsets(2) == (0, 1)
    assert TL.continuous_offsets(10) == tuple(range(10))
    assert TL.continuous_offsets(20) == tuple(range(20))
    assert TL.horizon_seconds(TL.continuous_offsets(20)) == TL.horizon_seconds(TL.SPARSE_OFFSETS)


def test_positions_chunk_and_slot():
    chunk = TL.positions(TL.SPARSE_OFFSETS, "chunk")
    assert chunk.dtype == np.int64
    np.testing.assert_array_equal(chunk, [0, 1, 2, 3, 6, 9, 12, 15, 18, 21])
    slot = TL.positions(TL.SPARSE_OFFSETS, "slot")
    assert slot.dtype == np.int64
    np.testing.assert_array_equal(slot, np.arange(10))
    # offset k of the sparse model embeds exactly as dense index k of the dense 20 s model
    dense = TL.positions(TL.continuous_offsets(20), "chunk")
    for i, o in enumerate(TL.SPARSE_OFFSETS):
        assert chunk[2 + i] == dense[2 + o]
    # for consecutive offsets the two conventions agree
    np.testing.assert_array_equal(
        TL.positions(TL.continuous_offsets(20), "chunk"), TL.positions(TL.continuous_offsets(20), "slot")
    )
    with pytest.raises(ValueError, match="mode"):
        TL.positions(TL.SPARSE_OFFSETS, "frame")
    with pytest.raises(TypeError, match="mode"):
        TL.positions(TL.SPARSE_OFFSETS, 1)


def test_window_by_hand():
    w = TL.window(5, TL.SPARSE_OFFSETS, n_chunks=12)
    np.testing.assert_array_equal(w.history, [0, 1, 2])
    np.testing.assert_array_equal(w.reference, [3, 4])
    np.testing.assert_array_equal(w.future, [5, 6, 9, 12, 15, 18, 21, 24])
    assert w.history.dtype == w.reference.dtype == w.future.dtype == np.int64
    assert w.decision_chunk == 5 and w.needed_chunks == 25
    # the earliest decision: no history
    w = TL.window(2, (0, 1), n_chunks=2)
    assert w.history.shape == (0,) and w.history.dtype == np.int64
    np.testing.assert_array_equal(w.reference, [0, 1])
    np.testing.assert_array_equal(w.future, [2, 3])
    # the latest decision: the reference is the last two recorded chunks
    w = TL.window(7, TL.continuous_offsets(3), n_chunks=7)
    np.testing.assert_array_equal(w.reference, [5, 6])
    np.testing.assert_array_equal(w.future, [7, 8, 9])
    # future chunk index d + o, frames 4 (d + o) .. 4 (d + o) + 3: seconds o .. o + 1 after the decision
    w = TL.window(3, TL.SPARSE_OFFSETS, n_chunks=40)
    np.testing.assert_array_equal(w.future - w.decision_chunk, TL.SPARSE_OFFSETS)


def test_window_bad_input():
    for d in (0, 1, 13):
        with pytest.raises(ValueError, match="decision_chunk"):
            TL.window(d, TL.SPARSE_OFFSETS, n_chunks=12)
    with pytest.raises(TypeError, match="decision_chunk"):
        TL.window(4.0, TL.SPARSE_OFFSETS, n_chunks=12)
    with pytest.raises(ValueError, match="n_chunks"):
        TL.window(2, TL.SPARSE_OFFSETS, n_chunks=1)
    with pytest.raises(ValueError, match="offsets"):
        TL.window(4, (1, 1), n_chunks=12)


def test_pad_frames_repeats_the_last_frame():
    frames = np.arange(5 * 2 * 3, dtype=np.float32).reshape(5, 2, 3)
    out = TL.pad_frames(frames, 9)
    assert out.shape == (9, 2, 3) and out.dtype == np.float32
    np.testing.assert_array_equal(out[:5], frames)
    for t in range(5, 9):
        np.testing.assert_array_equal(out[t], frames[4])
    same = TL.pad_frames(frames, 5)
    np.testing.assert_array_equal(same, frames)
    same[0] = -1.0  # a copy
    assert frames[0, 0, 0] == 0.0
    # enough frames for a window whose future runs past the recording
    w = TL.window(3, TL.SPARSE_OFFSETS, n_chunks=3)
    video = np.zeros((12, 16, 32, 3), dtype=np.float32)
    padded = TL.pad_frames(video, TL.CHUNK_FRAMES * w.needed_chunks)
    assert padded.shape[0] // TL.CHUNK_FRAMES == w.future[-1] + 1
    with pytest.raises(ValueError, match="n_frames"):
        TL.pad_frames(frames, 4)
    with pytest.raises(ValueError, match="frames"):
        TL.pad_frames(frames[:0], 4)
    with pytest.raises(TypeError, match="n_frames"):
        TL.pad_frames(frames, 8.0)
    with pytest.raises(TypeError, match="frames"):
        TL.pad_frames(frames.tolist(), 8)


def test_trim_to_chunks_drops_the_oldest_frames():
    for t in range(0, 13):
        frames = np.arange(t)
        out = TL.trim_to_chunks(frames)
        assert out.shape[0] == 4 * (t // 4)
        np.testing.assert_array_equal(out, np.arange(t % 4, t))  # the latest frame is kept
    video = np.random.default_rng(0).random((10, 16, 32, 3))
    np.testing.assert_array_equal(TL.trim_to_chunks(video), video[2:])
    assert TL.check_history(TL.trim_to_chunks(video)) is not None
    with pytest.raises(TypeError, match="frames"):
        TL.trim_to_chunks([1, 2, 3])
    with pytest.raises(ValueError, match="frames"):
        TL.trim_to_chunks(np.zeros(()))


def test_check_history():
    for t in (0, 4, 8, 40):
        clip = np.zeros((t, 16, 32, 3))
        assert TL.check_history(clip) is clip
    for t in (1, 3, 5, 9):
        with pytest.raises(ValueError, match="history"):
            TL.check_history(np.zeros((t, 16, 32, 3)))
    with pytest.raises(TypeError, match="history"):
        TL.check_history([])


def test_check_offsets():
    assert TL.check_offsets([0, 2, 5]) == (0, 2, 5)
    assert TL.check_offsets(np.array([1, 3])) == (1, 3)
    assert all(type(o) is int for o in TL.check_offsets(np.array([1, 3])))
    for bad in [(), (1, 1), (2, 1), (-1, 0), np.zeros((2, 2), dtype=int)]:
        with pytest.raises(ValueError, match="offsets"):
            TL.check_offsets(bad)
    for bad in [(0, 1.5), (0, True), 3, "01", None]:
        with pytest.raises(TypeError, match="offsets"):
            TL.check_offsets(bad)
    with pytest.raises(ValueError, match="offsets"):
        TL.horizon_seconds(())
    with pytest.raises(ValueError, match="offsets"):
        TL.positions((3, 2), "chunk")


def test_bad_interval_and_seconds():
    with pytest.raises(ValueError, match="interval"):
        TL.interval_offsets(0)
    with pytest.raises(ValueError, match="count"):
        TL.interval_offsets(3, count=0)
    with pytest.raises(TypeError, match="interval"):
        TL.interval_offsets(2.5)
    with pytest.raises(ValueError, match="seconds"):
        TL.continuous_offsets(0)
