"""Kernel-side types: frames keep absolute indices, ReturnAnswer/show budgets, the variable diff."""

from __future__ import annotations

import json

import numpy as np
import pytest

from neurips26.spatialclaw import kernel_types as kt


def _frames(n: int = 4, start: int = 10, step: int = 3) -> kt.InputImages:
    return kt.InputImages(
        kt.FrameImage(np.full((6, 8, 3), k, np.uint8), frame_index=start + step * k) for k in range(n)
    )


# ---- FrameImage / InputImages / Metadata -----------------------------------------------------------
def test_frame_image_is_pil_like_and_read_only():
    frame = kt.FrameImage(np.zeros((6, 8, 3), np.uint8), frame_index=5)
    assert (frame.size, frame.width, frame.height, frame.mode) == ((8, 6), 8, 6, "RGB")
    assert repr(frame) == "FrameImage(frame 5, 8x6)"
    assert frame.to_pil().size == (8, 6)
    assert np.asarray(frame).shape == (6, 8, 3)
    with pytest.raises(ValueError):
        frame.array[0, 0, 0] = 1


@pytest.mark.parametrize(
    ("array", "index", "exc", "word"),
    [
        (np.zeros((6, 8)), 0, ValueError, "array"),
        (np.zeros((6, 8, 3), np.float32), 0, TypeError, "array"),
        (np.zeros((6, 8, 3), np.uint8), -1, ValueError, "frame_index"),
        (np.zeros((6, 8, 3), np.uint8), 1.0, TypeError, "frame_index"),
    ],
)
def test_frame_image_rejects_bad_input(array, index, exc, word):
    with pytest.raises(exc, match=word):
        kt.FrameImage(array, frame_index=index)


def test_slices_keep_absolute_indices_and_positions_index():
    images = _frames()
    assert images.frame_indices == [10, 13, 16, 19]
    sub = images[1:3]
    assert isinstance(sub, kt.InputImages) and sub.frame_indices == [13, 16]
    assert sub[0].frame_index == 13 and images[-1].frame_index == 19
    assert images[[0, 2]].frame_indices == [10, 16]
    assert images.by_frame(16) is images[2]
    assert repr(sub) == "InputImages(2 frames, frame indices [13, 16], 8x6)"


def test_out_of_range_position_names_valid_range_and_frames():
    with pytest.raises(IndexError) as info:
        _frames()[4]
    text = str(info.value)
    assert "position 4" in text and "0..3" in text and "[10, 13, 16, 19]" in text
    with pytest.raises(IndexError, match=r"absolute index 11.*\[10, 13, 16, 19\]"):
        _frames().by_frame(11)
    contiguous = _frames(3, start=0, step=1)
    with pytest.raises(IndexError, match=r"0\.\.2 \(or -3\.\.-1\), holding absolute frame indices 0\.\.2"):
        contiguous[-4]
    with pytest.raises(IndexError, match="InputImages is empty"):
        contiguous[3:][0]
    with pytest.raises(TypeError, match="InputImages indices"):
        contiguous["0"]


def test_input_images_validation():
    with pytest.raises(TypeError, match=r"frames\[0\]"):
        kt.InputImages([np.zeros((2, 2, 3), np.uint8)])
    frame = kt.FrameImage(np.zeros((2, 2, 3), np.uint8), frame_index=1)
    with pytest.raises(ValueError, match="distinct"):
        kt.InputImages([frame, frame])


def test_metadata_is_frozen_and_validated():
    meta = kt.Metadata(True, 2.0, 16, 16, 8.0, "scene 3", 1)
    assert meta.videos == ()
    with pytest.raises(AttributeError):
        meta.fps = 3.0  # type: ignore[misc]
    with pytest.raises(ValueError, match="total_frames"):
        kt.Metadata(True, 2.0, -1, 16, 8.0, "scene 3", 1)
    with pytest.raises(TypeError, match="is_video"):
        kt.Metadata(1, 2.0, 16, 16, 8.0, "scene 3", 1)  # type: ignore[arg-type]


# ---- ReturnAnswer ----------------------------------------------------------------------------------
def test_return_answer_accepts_str_int_float_and_converts_numpy_scalars():
    state = kt.SessionState()
    for value in ("left", 3, 2.5, np.float64(1.25), np.int32(7)):
        state.return_answer(value)
    assert state.answers == ["left", 3, 2.5, 1.25, 7]
    assert [type(a) for a in state.answers] == [str, int, float, float, int]


@pytest.mark.parametrize(
    ("value", "name"), [(True, "bool"), (np.ones(2), "ndarray"), ([1], "list"), (None, "NoneType")]
)
def test_return_answer_type_error_names_the_type(value, name):
    with pytest.raises(TypeError, match=f"str, int or float; got {name}"):
        kt.SessionState().return_answer(value)


def test_return_answer_budget_counts_every_attempt():
    state = kt.SessionState()
    with pytest.raises(ValueError, match="finite"):
        state.return_answer(float("nan"))
    for _ in range(kt.MAX_ANSWER_ATTEMPTS - 1):
        state.return_answer(1)
    with pytest.raises(RuntimeError, match="budget of 5 answer attempts is spent"):
        state.return_answer(2)
    assert state.answers == [1, 1, 1, 1]


# ---- show ------------------------------------------------------------------------------------------
def test_show_encodes_every_kind_with_labels():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    state = kt.SessionState()
    images = _frames(2)
    fig = plt.figure(figsize=(1, 1))
    state.show(images)
    state.show(np.zeros((4, 5), bool))
    state.show(np.random.default_rng(0).random((4, 5, 3)), label="noise")
    state.show(images[0].to_pil())
    state.show(fig)
    plt.close(fig)
    _, shown = state.take_pending()
    assert [label for label, _ in shown] == [
        "frame 10",
        "frame 13",
        "array 5x4",
        "noise",
        "image 8x6",
        "figure",
    ]
    assert all(png.startswith(b"\x89PNG") for _, png in shown)
    assert state.show_budget_left == kt.SHOW_BUDGET - 6
    with pytest.raises(TypeError, match="show: x must be"):
        state.show("not an image")
    with pytest.raises(ValueError, match=r"shape \(H, W\)"):
        state.show(np.zeros((2, 2, 2)))


def test_show_budget_warns_and_registers_nothing_past_it(capsys):
    state = kt.SessionState(show_budget=3)
    state.show(_frames(4))
    assert "budget of 3 images is spent; 1 image(s) not shown" in capsys.readouterr().out
    state.show(_frames(1))
    assert "1 image(s) not shown" in capsys.readouterr().out
    assert len(state.take_pending()[1]) == 3 and state.show_budget_left == 0


def test_pyplot_show_is_captured_in_order():
    import matplotlib.pyplot as plt

    state = kt.SessionState()
    ns: dict[str, object] = {}
    kt.bind_session(ns, state)
    state.begin_cell(ns)
    with state.capturing_pyplot():
        plt.figure()
        plt.show()
        state.show(_frames(1))
        plt.figure()  # left open: captured at the end of the cell
    out = state.end_cell(ns)
    assert [im["label"] for im in out["images"]] == ["figure", "frame 10", "figure"]
    assert plt.get_fignums() == []


# ---- variable diff and errors ----------------------------------------------------------------------
def test_collect_reports_new_and_changed_names_only():
    ns: dict[str, object] = {"np": np}
    state = kt.bind_session(ns)
    ns.update(a=np.zeros(3), keep=5, images=_frames(2), InputImages=_frames(1))
    before = kt.snapshot_namespace(ns)
    ns["a"][1] = 4.0  # in place: the content hash notices
    ns.update(n=np.float64(2.5), s="hello", f=lambda x: x, _hidden=1, tools=object(), lst=[1, 2])
    state.return_answer("yes")
    out = kt.collect_cell_outputs(ns, before)
    json.dumps(out)
    assert [v["name"] for v in out["variables"]] == ["a", "n", "s", "lst"]
    a, n, s, lst = out["variables"]
    assert a == {"name": "a", "type": "ndarray", "shape": [3], "dtype": "float64"}
    assert n == {"name": "n", "type": "float64", "value": "np.float64(2.5)"}
    assert s["value"] == "'hello'" and lst == {"name": "lst", "type": "list", "len": 2}
    assert out["answers"] == ["yes"] and out["answer_attempts_left"] == 4
    assert kt.collect_cell_outputs(ns, kt.snapshot_namespace(ns))["answers"] == []


def test_summary_reports_frame_indices():
    summary = kt.summarize_value("sub", _frames()[1:3])
    assert summary == {"name": "sub", "type": "InputImages", "len": 2, "frame_indices": [13, 16]}


def test_error_summary_starts_at_the_cell():
    ns: dict[str, object] = {}
    code = "def f(v):\n    return v[3]\nx = 1\nf([1])\n"
    try:
        exec(compile(code, "<cell-1>", "exec"), ns)
    except IndexError as err:
        summary = kt.error_summary(err)
    assert summary["ename"] == "IndexError"
    assert summary["frames"] == [[4, "<module>", True], [2, "f", True]]
    try:
        exec(compile("import numpy as np\nnp.linalg.inv(np.zeros((2, 2)))", "<cell-2>", "exec"), {})
    except Exception as err:  # noqa: BLE001
        frames = kt.error_summary(err)["frames"]
    assert frames[0] == [2, "<module>", True] and frames[-1][2] is False
