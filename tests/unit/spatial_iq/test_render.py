"""The renderer: shapes and determinism, the slot buffer equals the ray caster's instance mask, visible
blocks show, categories look different, identical neighbours are outlined, recolouring touches only its
blocks."""

import numpy as np
import pytest

from neurips26.spatial_iq.cameras import VIEWS, View, camera
from neurips26.spatial_iq.render import (
    CATEGORY_COLOURS,
    OUTLINE_SHADE,
    PALETTE,
    PHANTOM_BASE,
    RenderedView,
    block_of,
    colour_groups,
    paint_flat,
    render_view,
    slot_above,
    slot_of,
)
from neurips26.spatial_iq.scenes import CATEGORIES, sample_scene, scene_from_heights
from neurips26.spatial_iq.visibility import slot_table
from neurips26.world import render, voxel_scene


@pytest.fixture(scope="module")
def scenes():
    return [sample_scene(s) for s in range(8)]


def test_shape_dtype_range_and_determinism(scenes):
    for s in scenes[:3]:
        for size in (16, 48, 64):
            a = render_view(s, s.view(1), size)
            b = render_view(s, s.view(1), size)
            assert isinstance(a, RenderedView)
            assert a.rgb.shape == (size, size, 3) and a.rgb.dtype == np.float32
            assert a.slots.shape == (size, size) and a.slots.dtype.kind == "i"
            assert a.rgb.min() >= 0.0 and a.rgb.max() <= 1.0
            assert np.array_equal(a.rgb, b.rgb) and np.array_equal(a.slots, b.slots)


def test_slots_are_the_slot_table_buffer_and_the_instance_mask(scenes):
    for s in scenes:
        for view in VIEWS[::5]:
            rv = render_view(s, view)
            assert np.array_equal(rv.slots, slot_table(view).id_buffer(s.heights))
            # independent mapping: the ray caster's instance ids -> slots through voxel_scene's id array
            stack = voxel_scene(s.heights, max_height=4)
            inst = render(stack.scene, camera(view, 48)).instance
            expect = np.full(inst.shape, -1)
            for i, j, k in zip(*np.nonzero(stack.ids >= 0), strict=True):
                expect[inst == stack.ids[i, j, k]] = (i * 4 + j) * 4 + k
            assert np.array_equal(rv.slots, expect)


def test_every_visible_block_has_pixels(scenes):
    for s in scenes:
        for k in range(4):
            view = s.view(k)
            vis = slot_table(view).visible(s.heights)
            shown = set(np.unique(render_view(s, view).slots).tolist())
            assert set(np.flatnonzero(vis.reshape(-1)).tolist()) <= shown
            assert vis.any()


def test_categories_differ_in_mean_colour():
    h = np.array([[1, 2, 0, 3], [1, 4, 2, 0], [0, 1, 1, 2], [3, 0, 0, 1]])
    means = {}
    for cat in CATEGORIES:
        s = scene_from_heights(h, category=cat)
        rv = render_view(s, s.view(0))
        means[cat] = rv.rgb[rv.slots >= 0].mean(axis=0)
    for a in CATEGORIES:
        for b in CATEGORIES:
            if a < b:
                assert np.linalg.norm(means[a] - means[b]) > 0.08, (a, b)
    assert set(CATEGORY_COLOURS) == set(CATEGORIES)


def _boundary_pairs(slots, a, b):
    """4-adjacent pixel pairs with one pixel in slot a and the other in slot b."""
    pairs = []
    for di, dj in ((0, 1), (1, 0)):
        p = slots[: slots.shape[0] - di, : slots.shape[1] - dj]
        q = slots[di:, dj:]
        for i, j in zip(*np.nonzero(((p == a) & (q == b)) | ((p == b) & (q == a))), strict=True):
            pairs.append(((i, j), (i + di, j + dj)))
    return pairs


def test_identical_neighbours_are_separated_by_an_outline():
    h = np.zeros((4, 4), dtype=np.int64)
    h[1, 1] = h[1, 2] = h[2, 1] = 1
    s = scene_from_heights(h, category="cube")
    a, b, c = slot_of(1, 1, 0), slot_of(1, 2, 0), slot_of(2, 1, 0)
    for k in range(4):
        view = s.view(k)
        # paint white: unoutlined pixels are >= the ambient shade 0.4, outlined ones <= 0.4 * 0.9
        rv = render_view(s, view, 48, colours={a: (1, 1, 1), b: (1, 1, 1), c: (1, 1, 1)})
        dark = rv.rgb.max(axis=2) < 0.39
        n_pairs = 0
        for x, y in ((a, b), (a, c)):
            for p, q in _boundary_pairs(rv.slots, x, y):
                n_pairs += 1
                assert dark[p] or dark[q]
        assert n_pairs > 0
        on = np.isin(rv.slots, [a, b, c])
        assert 0 < (dark & on).sum() < on.sum() / 2  # lines, not the whole block
        assert np.all(rv.rgb[dark & on] <= OUTLINE_SHADE + 1e-6)


def test_recolouring_changes_exactly_the_named_blocks(scenes):
    for s in scenes[:4]:
        view = s.view(2)
        base = render_view(s, view)
        shown = [int(t) for t in np.unique(base.slots) if t >= 0]
        named = shown[::3]
        painted = render_view(s, view, colours={t: (1.0, 0.0, 1.0) for t in named})
        assert np.array_equal(painted.slots, base.slots)
        changed = np.any(painted.rgb != base.rgb, axis=2)
        assert np.array_equal(changed, np.isin(base.slots, named))
        # the repainted blocks keep the shading: their pixels are shades of magenta
        px = painted.rgb[np.isin(base.slots, named)]
        assert np.allclose(px[:, 1], 0.0) and np.allclose(px[:, 0], px[:, 2])


def test_phantom_blocks_are_drawn_on_top_of_their_column():
    h = np.zeros((4, 4), dtype=np.int64)
    h[1, 1], h[2, 2], h[1, 2] = 4, 2, 1
    s = scene_from_heights(h, category="tin")
    s_top = slot_above(s.heights, 1, 1)
    s_mid = slot_above(s.heights, 2, 2)
    assert s_top == PHANTOM_BASE + 1 * 4 + 1 and block_of(s_top) == (1, 1, 4)
    assert s_mid == slot_of(2, 2, 2)
    rv = render_view(s, s.view(0), 48, colours={s_top: (1, 1, 0), s_mid: (1, 1, 0)})
    assert {s_top, s_mid} <= set(np.unique(rv.slots).tolist())
    px = rv.rgb[rv.slots == s_top]
    assert np.all(px[:, 2] <= 1e-6) and np.any(px[:, 0] > 0.5)  # yellow, shaded
    with pytest.raises(ValueError, match="colours"):
        render_view(s, s.view(0), colours={slot_of(2, 2, 3): (1, 1, 0)})  # floating above the empty slot


def test_paint_flat_and_colour_groups(scenes):
    s = scenes[0]
    rv = render_view(s, s.view(0))
    groups = np.zeros((4, 4, 4), dtype=np.int64)
    groups[s.heights > 0, 0] = 2
    cmap = colour_groups(groups)
    assert set(cmap) == {slot_of(i, j, 0) for i, j in zip(*np.nonzero(s.heights), strict=True)}
    assert all(c == PALETTE[1] for c in cmap.values())
    out = paint_flat(rv, cmap)
    on = np.isin(rv.slots, list(cmap))
    assert np.allclose(out[on], np.array(PALETTE[1], dtype=np.float32))
    assert np.array_equal(out[~on], rv.rgb[~on])
    assert len(set(PALETTE)) == len(PALETTE) == 64
    assert colour_groups(groups, ((0.1, 0.2, 0.3),))[cmap.popitem()[0]] == (0.1, 0.2, 0.3)


def test_slot_numbering_round_trips():
    for slot in range(80):
        assert slot_of(*block_of(slot)) == slot
    assert slot_of(3, 2, 1) == (3 * 4 + 2) * 4 + 1


def test_bad_input_names_the_argument(scenes):
    s = scenes[0]
    with pytest.raises(TypeError, match="view"):
        render_view(s, 0)
    with pytest.raises(ValueError, match="size"):
        render_view(s, View(0, 3.0), 7)
    with pytest.raises(TypeError, match="scene"):
        render_view(s.heights, View(0, 3.0))
    with pytest.raises(ValueError, match="colours"):
        render_view(s, View(0, 3.0), colours={99: (1, 0, 0)})
    with pytest.raises(ValueError, match="colours"):
        render_view(s, View(0, 3.0), colours={0: (2, 0, 0)})
    with pytest.raises(TypeError, match="colours"):
        render_view(s, View(0, 3.0), colours=[(1, 0, 0)])
    with pytest.raises(ValueError, match="groups"):
        colour_groups(np.zeros((4, 4)))
