"""Cameras, slot tables, culling and the scene sampler: the ID buffer is the ray caster's, visibility agrees
with a finer equal-area test, culling keeps exactly what the reference view needs, the count weight is the
released one."""

import math

import numpy as np
import pytest

from neurips26.spatial_iq.cameras import REFERENCE, VIEWS, View, camera
from neurips26.spatial_iq.scenes import (
    CATEGORIES,
    count_probabilities,
    count_weight,
    sample_scene,
    scatter,
    scene_from_heights,
)
from neurips26.spatial_iq.visibility import (
    MIN_PIXELS,
    check_heights,
    cull,
    heights_of,
    needed,
    occupancy,
    slot_table,
)
from neurips26.world import render, voxel_scene

FULL = np.full((4, 4), 4, dtype=np.int64)


def _random_heights(rng):
    return scatter(int(rng.integers(1, 65)), rng)


def test_count_weight_is_the_released_piecewise_curve():
    assert count_weight(2) == 0.0
    assert count_weight(3) == pytest.approx(0.017)
    assert count_weight(11) == pytest.approx(1.6)
    assert count_weight(7) == pytest.approx(0.017 + (1.6 - 0.017) * 4 / 8)
    assert count_weight(12) == pytest.approx(0.8)
    assert count_weight(30) == pytest.approx(0.2)
    assert count_weight(31) == pytest.approx(0.225)
    assert count_weight(40) == pytest.approx(0.225 * math.exp(-1.8))
    p = count_probabilities()
    assert p.sum() == pytest.approx(1.0)
    assert 9 <= int(p.argmax()) <= 13


def test_all_views_frame_the_whole_volume():
    for view in (REFERENCE, *VIEWS):
        ids = slot_table(view).id_buffer(FULL)
        border = np.concatenate([ids[0], ids[-1], ids[:, 0], ids[:, -1]])
        assert (border < 0).all(), view
    assert len(set(VIEWS)) == 16 and REFERENCE not in VIEWS


@pytest.mark.parametrize("view", [REFERENCE, VIEWS[3], VIEWS[12]])
def test_slot_id_buffer_equals_the_ray_casters_instance_mask(view):
    rng = np.random.default_rng(1)
    table = slot_table(view)
    for _ in range(25):
        h = _random_heights(rng)
        stack = voxel_scene(h, max_height=4)
        r = render(stack.scene, camera(view))
        ids = table.id_buffer(h)
        mapped = np.where(ids >= 0, stack.ids.reshape(-1)[np.maximum(ids, 0)], -1)
        expected = np.where(r.instance > 0, r.instance, -1)  # the ground (id 0) is not a block
        np.testing.assert_array_equal(mapped, expected)


def test_visibility_agrees_with_an_equal_area_test_at_4x():
    rng = np.random.default_rng(2)
    agree = total = 0
    for _ in range(30):
        h = _random_heights(rng)
        coarse = slot_table(VIEWS[1]).visible(h)
        fine = slot_table(VIEWS[1], 192).pixel_counts(h) >= 16 * MIN_PIXELS
        occ = occupancy(h)
        agree += int((coarse == fine)[occ].sum())
        total += int(occ.sum())
    assert agree / total > 0.97


def test_enclosed_blocks_are_never_visible():
    for view in (REFERENCE, *VIEWS):
        vis = slot_table(view).visible(FULL)
        assert not vis[1:3, 1:3, :3].any()  # interior columns below the top layer
        assert vis.sum() <= 3 * 16 - 3 * 4 + 1 + 4  # three faces of the cube (plus a sliver at an offset)


def test_needed_is_the_downward_closure():
    h = np.array([[3, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]])
    vis = np.zeros((4, 4, 4), bool)
    vis[0, 0, 2] = True  # the top of a 3-stack: both blocks beneath are needed
    vis[3, 3, 0] = True
    n = needed(h, vis)
    assert n[0, 0, :3].all() and not n[1, 1].any() and n[3, 3, 0]
    assert n.sum() == 4
    with pytest.raises(ValueError, match="visible"):
        needed(h, np.ones((4, 4, 4), bool))


def test_culling_keeps_visible_blocks_and_their_supports_only():
    rng = np.random.default_rng(3)
    for _ in range(40):
        h = _random_heights(rng)
        kept, n_vis = cull(h)
        assert (kept <= h).all()
        vis = slot_table(REFERENCE).visible(kept)
        assert vis.sum() == n_vis  # culling hides nothing that was visible
        occ = occupancy(kept)
        hidden = occ & ~vis
        above = np.zeros_like(occ)
        above[:, :, :-1] = occ[:, :, 1:]
        assert (above[hidden]).all()  # every hidden block holds up a kept block
        assert kept.sum() == n_vis + hidden.sum()
        np.testing.assert_array_equal(cull(kept)[0], kept)  # idempotent


def test_scene_sampler_is_deterministic_and_hits_its_target():
    a, b = sample_scene(11), sample_scene(11)
    np.testing.assert_array_equal(a.heights, b.heights)
    assert (a.category, a.offset, a.lens) == (b.category, b.offset, b.lens)
    scenes = [sample_scene(s) for s in range(40)]
    assert np.mean([s.total == s.target for s in scenes]) > 0.9
    assert {s.category for s in scenes} == set(CATEGORIES)
    for s in scenes:
        assert 1 <= s.tries <= 150 and s.total >= s.reference_visible
        np.testing.assert_array_equal(cull(s.heights)[0], s.heights)


def test_heights_round_trip_and_bad_input():
    rng = np.random.default_rng(4)
    h = _random_heights(rng)
    np.testing.assert_array_equal(heights_of(occupancy(h)), h)
    with pytest.raises(ValueError, match="height_map"):
        check_heights(np.zeros((3, 4), int))
    with pytest.raises(ValueError, match="height_map"):
        check_heights(np.full((4, 4), 5))
    with pytest.raises(ValueError, match="height_map"):
        check_heights(np.zeros((4, 4)))
    with pytest.raises(ValueError, match="offset"):
        View(0, 7.0)
    with pytest.raises(ValueError, match="lens"):
        View(0, 3.0, "fisheye")
    with pytest.raises(ValueError, match="k"):
        View(4, 3.0)
    with pytest.raises(TypeError, match="view"):
        camera("front")
    with pytest.raises(ValueError, match="category"):
        scene_from_heights(h, category="sphere")
