"""Scene data: primitives are exact, JSON round-trips bit for bit, bad input names the argument."""

import json

import numpy as np
import pytest

from neurips26.world import (
    Box,
    GroundPlane,
    Scene,
    box_from_bounds,
    maze,
    oriented_box,
    room,
    tabletop,
    voxel,
    voxel_stack,
    wall,
    yaw_rotation,
)


def _rotated_scene() -> Scene:
    rng = np.random.default_rng(5)
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    q *= np.sign(np.linalg.det(q))  # a proper rotation
    boxes = (
        Box(
            (0.1, 0.2, 0.3), (0.5, 0.25, 1.0 / 3.0), q, color=(0.1, 0.2, 0.3), instance_id=7, semantic="thing"
        ),
        oriented_box((1.0, 0.5, -2.0), (0.4, 1.0, 0.7), 33.3, color=(1.0, 0.0, 0.5), instance_id=3),
        box_from_bounds((-1, 0, -1), (0, 0.1, 0), instance_id=4, semantic="slab"),
    )
    return Scene(boxes, GroundPlane(height=-0.5, checker=0.25, instance_id=11), background=(0.0, 0.0, 0.1))


def test_json_round_trip_is_exact_for_hand_built_and_generated_scenes():
    scenes = [
        _rotated_scene(),
        Scene((), None),
        voxel_stack(seed=1).scene,
        tabletop(4, seed=2).scene,
        room(seed=3).scene,
        maze(3, 4, seed=4).scene,
    ]
    for scene in scenes:
        text = scene.to_json()
        back = Scene.from_json(text)
        assert back == scene
        assert back.to_json() == text
        packed, packed_back = scene.pack(np.float64), back.pack(np.float64)
        for name in ("centers", "half_extents", "rotations", "colors", "ids"):
            np.testing.assert_array_equal(getattr(packed, name), getattr(packed_back, name))


def test_from_json_rejects_bad_documents():
    good = json.loads(_rotated_scene().to_json())
    with pytest.raises(ValueError, match="version"):
        Scene.from_dict({**good, "version": 99})
    bad_box = dict(good["boxes"][0], colour=[1, 0, 0])
    with pytest.raises(ValueError, match="unknown fields"):
        Scene.from_dict({**good, "boxes": [bad_box]})
    with pytest.raises(ValueError, match="color"):
        Scene.from_dict({**good, "boxes": [dict(good["boxes"][0], color=[2.0, 0, 0])]})
    with pytest.raises(TypeError, match="text"):
        Scene.from_json(b"{}")


def test_yaw_rotation_is_exact_at_quarter_turns_and_turns_z_towards_x():
    for k in range(-4, 5):
        r = yaw_rotation(90.0 * k)
        assert set(np.unique(r)) <= {-1.0, 0.0, 1.0}
    np.testing.assert_array_equal(yaw_rotation(90.0) @ [0.0, 0.0, 1.0], [1.0, 0.0, 0.0])
    r = yaw_rotation(37.0)
    np.testing.assert_allclose(r @ r.T, np.eye(3), atol=1e-15)
    assert np.linalg.det(r) == pytest.approx(1.0)


def test_box_helpers_agree_with_their_definitions():
    b = oriented_box((1.0, 2.0, 3.0), (2.0, 4.0, 6.0), 90.0)
    lo, hi = b.world_bounds()
    np.testing.assert_allclose(lo, [-2.0, 0.0, 2.0])  # x and z extents swap after a quarter turn
    np.testing.assert_allclose(hi, [4.0, 4.0, 4.0])
    corners = b.corners()
    assert corners.shape == (8, 3)
    np.testing.assert_allclose(corners.min(axis=0), lo)
    assert b.contains(corners, tol=1e-12).all()
    assert not b.contains(np.array([[4.1, 2.0, 3.0]]))[0]


def test_voxel_and_wall_are_the_expected_axis_aligned_boxes():
    v = voxel((2, 1, -1), size=0.5, origin=(1.0, 0.0, 0.0))
    assert v.world_bounds()[0].tolist() == [2.0, 0.5, -0.5]
    assert v.world_bounds()[1].tolist() == [2.5, 1.0, 0.0]
    w = wall((0.0, 0.0), (0.0, 4.0), height=2.0, thickness=0.2)
    assert w.rotation == ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    np.testing.assert_allclose(w.world_bounds()[0], [-0.1, 0.0, 0.0])
    np.testing.assert_allclose(w.world_bounds()[1], [0.1, 2.0, 4.0])
    diag = wall((0.0, 0.0), (3.0, 4.0), thickness=0.2)
    mid = np.array([[1.5, 1.0, 2.0]])
    assert diag.contains(mid)[0] and diag.half_extents[0] == pytest.approx(2.5)
    # a point 0.15 m off the centre line, sideways, is outside a 0.2 m thick wall
    side = mid + 0.15 * np.array([[-0.8, 0.0, 0.6]])
    assert not diag.contains(side)[0]


def test_bad_primitives_name_the_argument():
    with pytest.raises(ValueError, match="half_extents"):
        Box((0, 0, 0), (1.0, 0.0, 1.0))
    with pytest.raises(ValueError, match="center"):
        Box((0, 0), (1, 1, 1))
    with pytest.raises(ValueError, match="rotation"):
        Box((0, 0, 0), (1, 1, 1), np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="color"):
        Box((0, 0, 0), (1, 1, 1), color=(0.5, 0.5, 1.5))
    with pytest.raises(ValueError, match="instance_id"):
        Box((0, 0, 0), (1, 1, 1), instance_id=-2)
    with pytest.raises(TypeError, match="semantic"):
        Box((0, 0, 0), (1, 1, 1), semantic="")
    with pytest.raises(ValueError, match="hi must exceed lo"):
        box_from_bounds((0, 0, 0), (1, 0, 1))
    with pytest.raises(ValueError, match="start and end"):
        wall((1.0, 1.0), (1.0, 1.0))
    with pytest.raises(ValueError, match="checker"):
        GroundPlane(checker=-1.0)
    with pytest.raises(ValueError, match="unique"):
        Scene((Box((0, 0, 0), (1, 1, 1), instance_id=0),), GroundPlane(instance_id=0))
    with pytest.raises(TypeError, match="boxes"):
        Scene(("not a box",))
    with pytest.raises(ValueError, match="dtype"):
        _rotated_scene().pack(np.int32)
