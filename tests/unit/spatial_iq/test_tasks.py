"""Per-view ground truth: the released identities (T1 = sum H in the reference view only, S9 <= hidden,
S7 <= S6, S8 >= S7), clusters equal a brute-force 6-connected search, and hand-checked structures."""

import numpy as np
import pytest

from neurips26.spatial_iq.cameras import REFERENCE
from neurips26.spatial_iq.scenes import sample_scene, scene_from_heights
from neurips26.spatial_iq.tasks import TASKS, check_task, clusters, over_hidden, top_support_sets, view_labels
from neurips26.spatial_iq.visibility import occupancy


def _bfs_components(blocks):
    left = {tuple(int(x) for x in p) for p in np.argwhere(blocks)}
    count = 0
    while left:
        count += 1
        stack = [left.pop()]
        while stack:
            i, j, k = stack.pop()
            for d in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)):
                n = (i + d[0], j + d[1], k + d[2])
                if n in left:
                    left.remove(n)
                    stack.append(n)
    return count


@pytest.fixture(scope="module")
def scenes():
    return [sample_scene(s) for s in range(60)]


def test_released_identities_hold_in_every_view(scenes):
    for s in scenes:
        ref = view_labels(s, REFERENCE)
        assert ref["T1"] == s.total == ref["S5"] + ref["hidden"]
        for k in range(4):
            a = view_labels(s, s.view(k))
            assert a["T1"] <= s.total
            assert a["T1"] == a["S5"] + a["hidden"]
            assert 0 <= a["S9"] <= a["hidden"]
            assert a["S7"] <= a["S6"] and a["S8"] >= a["S7"]
            assert a["S3"] == int((s.heights > 0).sum()) and a["S4"] == int(s.heights.max())
            assert a["S2"] == _bfs_components(a.needed)
            assert a["T2a"] <= a["S5"] and a["T2b"] <= a["S5"]
            assert set(a.answers) == {*TASKS, "hidden"}


def test_some_views_need_fewer_blocks_than_the_reference(scenes):
    assert any(view_labels(s, s.view(k))["T1"] < s.total for s in scenes for k in range(1, 4))
    assert any(
        view_labels(s, s.view(k))["S9"] < view_labels(s, s.view(k))["hidden"]
        for s in scenes
        for k in range(4)
    )


def test_a_hand_built_structure():
    h = np.zeros((4, 4), dtype=np.int64)
    h[0, 0] = 3
    h[0, 1] = 1
    h[3, 3] = 2
    vis = occupancy(h).copy()
    vis[0, 0, 1] = False  # the middle of the 3-stack is hidden
    top, direct, below = top_support_sets(h, vis)
    assert top.sum() == 1 and top[0, 0, 2]
    assert direct.sum() == 0  # its direct supporter is the hidden block
    assert below.sum() == 1 and below[0, 0, 0]
    s9 = over_hidden(vis)
    assert s9.sum() == 1 and s9[0, 0, 2]
    assert clusters(occupancy(h)).max() == 2


def test_labels_are_deterministic_and_sets_match_counts(scenes):
    s = scenes[5]
    a, b = view_labels(s, s.view(2)), view_labels(s, s.view(2))
    assert a.answers == b.answers
    for task, blocks in a.sets.items():
        if task not in ("S1",):
            assert blocks.sum() == a[task], task


def test_bad_input():
    with pytest.raises(ValueError, match="task"):
        check_task("S10")
    with pytest.raises(TypeError, match="scene"):
        view_labels(np.zeros((4, 4)))
    s = scene_from_heights(np.ones((4, 4), dtype=np.int64))
    assert view_labels(s)["T1"] == 16
