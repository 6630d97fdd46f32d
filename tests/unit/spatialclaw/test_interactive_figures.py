"""The interactive figures and the transcript records they draw: records and traces match the steps and
frames; bad input names its argument."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.llm.messages import Message
from neurips26.spatialclaw.executor import CellError, CellResult
from neurips26.spatialclaw.interactive_figures import (
    bev_figure,
    footprint_outline,
    mask_figure,
    overlay_masks,
    png_data_uri,
    transcript_figure,
)
from neurips26.spatialclaw.loop import Episode, Step
from neurips26.spatialclaw.scenes import make_scene
from neurips26.spatialclaw.transcript import transcript_frames

PNG = b"\x89PNG\r\n\x1a\nfake"


def _result(stdout="", error=None, answers=(), images=()) -> CellResult:
    return CellResult(
        stdout=stdout,
        error=error,
        images=images,
        variables=(),
        answers=answers,
        timed_out=False,
        rejected=None,
        show_budget_left=250,
        answer_attempts_left=5,
    )


def _episode(forced: bool = False) -> Episode:
    """A hand-made code episode: a failing cell, a cell that shows an image, then an answer (or none)."""
    reply = "**Purpose**: p\n\n**Reasoning**: r\n\n**Next Goal**: g\n\n**Code**:\n```python\n{}\n```\n"
    error = CellError("NameError", "name 'x' is not defined", 1, "  cell line 1: x\nNameError: ...")
    steps = [
        Step(1, reply.format("x"), "x", _result(error=error), "Step 1/3: the cell failed.", True),
        Step(
            2,
            reply.format("show(img)"),
            "show(img)",
            _result(images=(("frame 0", PNG),)),
            "Step 2/3: ran.",
            False,
        ),
    ]
    if not forced:
        steps.append(
            Step(
                3,
                reply.format("ReturnAnswer(1.5)"),
                "ReturnAnswer(1.5)",
                _result(answers=(1.5,)),
                "ok",
                False,
            )
        )
    messages = [
        Message("system", "prompt"),
        Message("user", "How far?\n\nPlan:\nmeasure it", (PNG, PNG)),
        *(Message("assistant", s.response) for s in steps),
    ]
    if forced:
        messages += [Message("user", "How far?"), Message("assistant", "\\boxed{2}")]
    return Episode(
        "code", "How far?", 2.0 if forced else 1.5, forced, "measure it", tuple(steps), tuple(messages)
    )


def test_transcript_frames_follow_the_steps():
    records = transcript_frames(_episode())
    assert [r.kind for r in records] == ["question", "step", "step", "step"]
    assert [r.index for r in records] == [0, 1, 2, 3]
    question = records[0]
    assert question.words == "How far?" and question.feedback == "measure it"
    assert [label for label, _ in question.images] == ["key frame 0", "key frame 1"]
    assert records[1].failed and records[1].code == "x" and "```" not in records[1].words
    assert records[2].images == (("frame 0", PNG),)
    assert records[3].answer == 1.5 and "answer 1.5" in records[3].title


def test_forced_episode_ends_with_the_no_tool_reply():
    records = transcript_frames(_episode(forced=True))
    assert records[-1].kind == "forced" and records[-1].words == "\\boxed{2}" and records[-1].answer == 2.0
    assert len(records) == 4  # question, two steps, the forced answer


def test_transcript_figure_has_one_table_and_one_slider_step_per_record():
    fig = transcript_figure(_episode(), truth=1.4)
    assert len(fig.data) == 4 and all(t.type == "table" for t in fig.data)
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == ["Q", "1", "2", "3"]
    assert [t.visible for t in fig.data] == [True, False, False, False]
    assert steps[2].args[0]["visible"] == [False, False, True, False]
    assert "1.4" in fig.layout.title.text


def test_transcript_figure_menu_swaps_episodes_and_sliders():
    fig = transcript_figure({"a": _episode(), "b": _episode(forced=True)}, truth={"a": 1.4, "b": 1.4})
    assert len(fig.data) == 8
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["a", "b"]
    visible, layout = buttons[1].args
    assert visible["visible"] == [False] * 4 + [True] + [False] * 3
    assert [s["label"] for s in layout["sliders"][0]["steps"]] == ["Q", "1", "2", "forced"]


def test_transcript_bad_input_names_the_argument():
    with pytest.raises(TypeError, match="episode"):
        transcript_frames("not an episode")
    with pytest.raises(ValueError, match="max_lines"):
        transcript_figure(_episode(), max_lines=1)
    with pytest.raises(ValueError, match="truth"):
        transcript_figure({"a": _episode()}, truth={"b": 1.0})


def _frames(n=3, h=12, w=16):
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 255, size=(n, h, w, 3), dtype=np.uint8)
    masks = np.zeros((n, 2, h, w), dtype=bool)
    masks[:, 0, 2:6, 3:8] = True
    masks[1:, 1, 7:10, 9:14] = True
    return rgb, masks


def test_mask_figure_traces_and_sliders_match_frames_and_settings():
    rgb, masks = _frames()
    fig = mask_figure(rgb, {"exact": masks, "missed": masks[:, :1]}, frame_indices=[4, 5, 6])
    assert len(fig.data) == 2 * 2 * 3  # (image + caption) per setting and frame
    frame_slider, setting_slider = fig.layout.sliders
    assert [s.label for s in frame_slider.steps] == ["4", "5", "6"]
    assert [s.label for s in setting_slider.steps] == ["exact", "missed"]
    shown = frame_slider.steps[1].args[0]["visible"]
    assert sum(shown) == 4 and all(shown[2 * (s * 3 + 1)] for s in range(2))  # frame 5 of both settings
    opacity = setting_slider.steps[1].args[0]["opacity"]
    assert opacity == [0.0] * 6 + [1.0] * 6
    assert fig.data[1].text == ("1 of 2 object(s) in this frame",)
    one = mask_figure(rgb, masks)
    assert len(one.layout.sliders) == 1 and len(one.data) == 6


def test_overlay_tints_only_masked_pixels():
    rgb, masks = _frames()
    out = overlay_masks(rgb[0], masks[0])
    assert out.shape == rgb[0].shape and out.dtype == np.uint8
    assert np.array_equal(out[~masks[0].any(axis=0)], rgb[0][~masks[0].any(axis=0)])
    assert png_data_uri(out).startswith("data:image/png;base64,")


def test_mask_bad_input_names_the_argument():
    rgb, masks = _frames()
    with pytest.raises(ValueError, match="rgb"):
        mask_figure(rgb[..., 0], masks)
    with pytest.raises(ValueError, match=r"masks\['bad'\]"):
        mask_figure(rgb, {"bad": masks[:2]})
    with pytest.raises(ValueError, match="frame_indices"):
        mask_figure(rgb, masks, frame_indices=[0, 1])
    with pytest.raises(ValueError, match="alpha"):
        mask_figure(rgb, masks, alpha=2.0)


def test_bev_figure_slider_moves_the_camera_and_the_mover():
    scene = make_scene(3, "video", mover=True)
    n = scene.num_frames
    rgb = np.zeros((n, scene.height, scene.width, 3), dtype=np.uint8)
    fig = bev_figure(scene, frames=rgb, highlight=[scene.objects[0].name])
    steps = fig.layout.sliders[0].steps
    assert len(steps) == n
    images = [t for t in fig.data if t.type == "image"]
    assert len(images) == n
    for f in (0, n - 1):
        visible = steps[f].args[0]["visible"]
        on = [t for t, v in zip(fig.data, visible, strict=True) if v]
        assert sum(t.type == "image" for t in on) == 1
        assert sum(t.name == f"camera {f}" for t in on) == 1
        assert sum(t.name == f"camera {g}" for t in on for g in range(n)) == 1  # one camera wedge at a time
    assert len(bev_figure(scene).layout.sliders[0].steps) == n  # the map alone


def test_footprints_are_closed_and_on_the_floor():
    scene = make_scene(3, "video")
    for obj in scene.objects:
        outline = footprint_outline(obj)
        assert np.allclose(outline[0], outline[-1]) and np.allclose(outline[:, 1], 0.0)
        centre = obj.center_at(0)
        assert np.allclose(outline[:-1].mean(axis=0)[[0, 2]], centre[[0, 2]], atol=1e-9)


def test_bev_bad_input_names_the_argument():
    scene = make_scene(3, "video")
    with pytest.raises(TypeError, match="scene"):
        bev_figure("room")
    with pytest.raises(ValueError, match="frames"):
        bev_figure(scene, frames=np.zeros((2, 4, 4, 3), dtype=np.uint8))
    with pytest.raises(ValueError, match="highlight"):
        bev_figure(scene, highlight=["no such thing"])
    with pytest.raises(TypeError, match="highlight"):
        bev_figure(scene, highlight="red chair")
