"""Figure helpers: the figures build (Agg backend), axes counts, footprint geometry, bad input names the
argument."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from neurips26.spatialclaw.figures import plot_bev, plot_frames, plot_masks, right_of  # noqa: E402
from neurips26.spatialclaw.per_frame_mask import PerFrameMask  # noqa: E402
from neurips26.spatialclaw.scene_types import SceneObject  # noqa: E402
from neurips26.spatialclaw.scenes import make_scene  # noqa: E402

H, W = 12, 16


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def scene():
    return make_scene(4, "video", width=32, height=24)  # layout only: nothing is rendered


def _rgb(frames: int = 3) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 256, size=(frames, H, W, 3), dtype=np.uint8)


def test_plot_frames_one_axes_per_index():
    axes = plot_frames(_rgb(), [0, 2])
    assert len(axes) == 2 and len(axes[0].figure.axes) == 2
    assert axes[1].get_title() == "frame 2"
    fig, given = plt.subplots(1, 3)
    out = plot_frames(_rgb(), [0, 1, 2], axes=given, titles=["a", "b", "c"])
    assert [a.get_title() for a in out] == ["a", "b", "c"] and len(fig.axes) == 3


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"frames": np.zeros((H, W, 3), np.uint8), "indices": [0]}, ValueError, "frames"),
        ({"frames": "rgb", "indices": [0]}, TypeError, "frames"),
        ({"frames": _rgb(), "indices": [3]}, IndexError, "indices"),
        ({"frames": _rgb(), "indices": []}, TypeError, "indices"),
        ({"frames": _rgb(), "indices": [0], "titles": ["a", "b"]}, ValueError, "titles"),
    ],
)
def test_plot_frames_rejects_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        plot_frames(**kwargs)


def test_plot_frames_rejects_wrong_number_of_axes():
    _, given = plt.subplots(1, 2)
    with pytest.raises(ValueError, match="axes"):
        plot_frames(_rgb(), [0, 1, 2], axes=given)


def test_footprint_and_right_of():
    obj = SceneObject(1, "sofa", "red", "box", (1.0, 0.4, -2.0), (2.0, 0.8, 1.0), yaw_deg=90.0)
    corners = obj.footprint()
    assert np.allclose(corners.min(axis=0), [0.5, -3.0]) and np.allclose(corners.max(axis=0), [1.5, -1.0])
    assert np.allclose(right_of(np.array([0.0, -1.0])), [1.0, 0.0])  # facing -Z, the right is +X


def test_plot_bev_builds_with_every_layer(scene):
    first, second = scene.objects[0].name, scene.objects[1].name
    ax = plot_bev(
        scene,
        object_frame=first,
        highlight=[first, scene.objects[1].instance_id],
        arrows=[(first, second)],
        camera_frame=scene.num_frames - 1,
    )
    assert len(ax.figure.axes) == 1
    labels = {t.get_text() for t in ax.texts}
    assert {o.name for o in scene.objects} <= labels and {"+X", "−Z", "front", "right"} <= labels
    assert ax.yaxis_inverted()  # -Z up the page
    fig, (a, b) = plt.subplots(1, 2)
    assert plot_bev(scene, ax=b, labels=False, trajectory=False, frusta=(), world_axes=False) is b
    assert not b.texts and len(fig.axes) == 2


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"frame": 99}, IndexError, "frame"),
        ({"camera_frame": -1}, IndexError, "camera_frame"),
        ({"frusta": [0, 99]}, IndexError, "frusta"),
        ({"object_frame": "golden throne"}, KeyError, "object_frame"),
        ({"object_frame": 2.5}, TypeError, "object_frame"),
        ({"highlight": "red box"}, TypeError, "highlight"),
        ({"arrows": [("a",)]}, ValueError, "arrows"),
        ({"ax": "axes"}, TypeError, "ax"),
    ],
)
def test_plot_bev_rejects_bad_input(scene, kwargs, error, match):
    with pytest.raises(error, match=match):
        plot_bev(scene, **kwargs)


def test_plot_bev_needs_a_scene():
    with pytest.raises(TypeError, match="scene"):
        plot_bev("scene")


def _mask(objects: int) -> PerFrameMask:
    masks = np.zeros((2, objects, H, W), dtype=bool)
    if objects:
        masks[:, 0, 2:5, 3:7] = True
    return PerFrameMask(masks, [f"thing {k}" for k in range(objects)], frame_indices=[4, 7])


def test_plot_masks_overlays_objects_and_says_when_empty():
    image = _rgb(1)[0]
    ax = plot_masks(image, _mask(2), 7)
    assert ax.get_title() == "frame 7: 2 object(s)"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["0: thing 0 (12 px)", "1: thing 1 (0 px)"]
    empty = plot_masks(image, _mask(0), 4, title="nothing")
    assert empty.get_title() == "nothing" and empty.get_legend() is None
    assert plot_masks(image, _mask(0), 4).get_title() == "frame 4: no objects found"


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        (("image", _mask(1), 4), {}, TypeError, "image"),
        ((np.zeros((H, W, 3), np.uint8), "mask", 4), {}, TypeError, "mask"),
        ((np.zeros((H + 1, W, 3), np.uint8), _mask(1), 4), {}, ValueError, "mask"),
        ((np.zeros((H, W, 3), np.uint8), _mask(1), 5), {}, IndexError, "frame 5"),
        ((np.zeros((H, W, 3), np.uint8), _mask(1), 4), {"alpha": 2.0}, ValueError, "alpha"),
    ],
)
def test_plot_masks_rejects_bad_input(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        plot_masks(*args, **kwargs)
