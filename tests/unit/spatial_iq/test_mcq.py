"""Multiple-choice items: the correct option shows the ground-truth partition, every distractor differs from
it and from the others, k options with one correct at a uniform position, determinism, the released
distractor types and reductions to 3 and 4 choices."""

import numpy as np
import pytest
from scipy import stats

from neurips26.spatial_iq import mcq
from neurips26.spatial_iq.mcq import (
    CHOICES,
    GROUP_TASKS,
    HIGHLIGHT_TASKS,
    REQUIRED_WRONG_TYPES,
    McqItem,
    mcq_images,
    mcq_item,
    option_partition,
    task_groups,
    total_options,
)
from neurips26.spatial_iq.render import slot_of
from neurips26.spatial_iq.scenes import sample_scene, scene_from_heights
from neurips26.spatial_iq.tasks import TASKS, clusters, view_labels

IMAGE_TASKS = tuple(t for t in TASKS if t != "T1")


@pytest.fixture(scope="module")
def labelled():
    out = []
    for seed in range(14):
        s = sample_scene(seed)
        out.append(view_labels(s, s.view(seed % 4)))
    return out


def _expected_partition(labels, task):
    """The ground-truth grouping of the visible slots, computed without the module under test."""
    vis = [int(s) for s in np.flatnonzero(labels.visible.reshape(-1))]
    if task in HIGHLIGHT_TASKS:
        chosen = frozenset(s for s in vis if labels.sets[task].reshape(-1)[s])
        return frozenset([chosen]) if chosen else frozenset()
    if task == "S3":
        key = {s: s // 4 for s in vis}
    elif task == "S4":
        key = {s: s % 4 for s in vis}
    elif task == "S5":
        key = {s: s for s in vis}
    else:
        lab = clusters(labels.needed).reshape(-1)
        key = {s: int(lab[s]) for s in vis}
    groups = {}
    for s, g in key.items():
        groups.setdefault(g, set()).add(s)
    return frozenset(frozenset(g) for g in groups.values())


def _key(option):
    return None if option is None else tuple(sorted(option.items()))


def test_correct_option_shows_the_ground_truth_partition(labelled):
    for labels in labelled:
        for task in IMAGE_TASKS:
            item = mcq_item(labels, task, 5, seed=3)
            correct = item.options[item.answer]
            assert item.types[item.answer] == "correct"
            assert option_partition(correct) == _expected_partition(labels, task), task
            assert set(correct) <= set(np.flatnonzero(labels.visible.reshape(-1)).tolist())


def test_every_distractor_differs_from_the_answer_and_the_others(labelled):
    for labels in labelled:
        for task in IMAGE_TASKS:
            for k in CHOICES:
                item = mcq_item(labels, task, k, seed=k)
                assert item.k == len(item.options) == len(item.types) == k
                assert item.types.count("correct") == 1
                right = item.options[item.answer]
                keys = [_key(o) for o in item.options if o is not None]
                assert len(set(keys)) == len(keys)
                for n, option in enumerate(item.options):
                    if n != item.answer and option is not None:
                        assert option_partition(option) != option_partition(right), (task, item.types[n])


def test_total_question_uses_numbers(labelled):
    for labels in labelled:
        item = mcq_item(labels, "T1", 5, seed=1)
        assert all(isinstance(v, int) and v > 0 for v in item.options)
        assert len(set(item.options)) == 5
        assert item.options[item.answer] == labels["T1"]
        for v, t in zip(item.options, item.types, strict=True):
            d = v - labels["T1"]
            assert t == ("correct" if d == 0 else f"high_by_{d}" if d > 0 else f"low_by_{-d}")
            assert abs(d) <= 8
    values, types = total_options(1, np.random.default_rng(0))
    assert len(set(values)) == 5 and min(values) >= 1 and types[0] == "correct"


def test_answer_position_is_uniform():
    s = sample_scene(5)
    labels = view_labels(s)
    for task, n in (("T1", 300), ("S6", 150)):
        for k in CHOICES:
            answers = [mcq_item(labels, task, k, seed).answer for seed in range(n)]
            counts = np.bincount(answers, minlength=k)
            assert stats.chisquare(counts).pvalue > 1e-3, (task, counts)


def test_black_image_when_no_unique_fallback_is_found(labelled, monkeypatch):
    monkeypatch.setattr(mcq, "MAX_FALLBACK_TRIES", 0)
    item = mcq_item(labelled[0], "S8", 5, 0)
    n = item.types.index("support_blocks_not_column_dummy_black")  # always repeats another distractor
    assert item.options[n] is None


def test_deterministic_in_seed(labelled):
    labels = labelled[2]
    for task in ("S3", "S5", "S7", "T2a"):
        a, b = mcq_item(labels, task, 5, 11), mcq_item(labels, task, 5, 11)
        assert [_key(o) for o in a.options] == [_key(o) for o in b.options]
        assert a.types == b.types and a.answer == b.answer and a.highlight == b.highlight
        others = [mcq_item(labels, task, 5, seed) for seed in range(5)]
        assert len({tuple(_key(o) for o in it.options) for it in others}) > 1


def test_reduced_items_keep_a_subset_and_the_required_types(labelled):
    for labels in labelled[:8]:
        for task in IMAGE_TASKS:
            full = mcq_item(labels, task, 5, seed=7)
            pool = {_key(o) for o in full.options}
            for k in (3, 4):
                small = mcq_item(labels, task, k, seed=7)
                assert {_key(o) for o in small.options} <= pool
                assert _key(small.options[small.answer]) == _key(full.options[full.answer])
                required = [t for t in REQUIRED_WRONG_TYPES.get(task, ()) if t in full.types]
                kept = [t.split("_fallback_unique_")[0] for t in small.types]
                if len(required) <= k - 1:
                    assert set(required) <= set(kept), (task, k, full.types, small.types)
                else:
                    assert sum(t in kept for t in required) == k - 1


def test_released_distractor_types(labelled):
    labels = labelled[0]
    base = {
        "S1": {"phantom_block_above_top", "omit_one_block", "omit_two_blocks", "drop_one_column_highlight"},
        "S3": {"same_column_two_colors", "merge_two_columns"},
        "S4": {"same_layer_two_colors", "merge_two_layers", "missing_one_layer", "far_layer_confusion"},
        "S5": {"merge_adjacent_same_color", "drop_half_visible_blocks"},
        "S7": {"miss_one_support", "wrong_support_subset", "empty_support", "non_support_highlight"},
        "T2a": {
            "random_wrong_highlight_blocks",
            "random_single_block",
            "both_views_blocks",
            "missing_nonmatch",
        },
    }
    for task, names in base.items():
        item = mcq_item(labels, task, 5, 0)
        got = {t.split("_fallback_unique_")[0].removesuffix("_dummy_black") for t in item.types} - {"correct"}
        assert got <= names, (task, item.types)


def test_phantom_sits_on_a_tallest_column_and_is_rendered():
    h = np.zeros((4, 4), dtype=np.int64)
    h[0, 0], h[1, 0], h[1, 1], h[2, 2] = 1, 2, 3, 1
    s = scene_from_heights(h, category="carton")
    labels = view_labels(s)
    item = mcq_item(labels, "S1", 5, 0)
    n = item.types.index("phantom_block_above_top")
    phantom = set(item.options[n]) - set(np.flatnonzero(labels.visible.reshape(-1)).tolist())
    assert phantom == {slot_of(1, 1, 3)}
    images = mcq_images(item, s, labels.view, 32)
    assert len(images) == 5 and all(im.shape == (32, 32, 3) for im in images)
    assert not np.array_equal(images[n], images[item.answer])


def test_hand_built_layers_and_columns():
    h = np.zeros((4, 4), dtype=np.int64)
    h[0, 0], h[0, 1], h[1, 1], h[3, 3] = 2, 2, 1, 1
    s = scene_from_heights(h)
    labels = view_labels(s)
    vis = set(np.flatnonzero(labels.visible.reshape(-1)).tolist())
    item = mcq_item(labels, "S4", 5, 0)
    missing = item.options[item.types.index("missing_one_layer")]
    assert {t % 4 for t in missing} == {1} and set(missing) == {t for t in vis if t % 4 == 1}
    merged = item.options[item.types.index("merge_two_layers")]
    assert len(option_partition(merged)) == 1 and set(merged) == vis
    g = task_groups(labels, "S3")
    assert g[0, 0, 0] == 1 and g[3, 3, 0] == 16 and g[2, 2, 0] == 0
    assert set(np.unique(task_groups(labels, "S5"))) == set(range(len(vis) + 1))


def test_mcq_images_renders_options_and_black_dummies(labelled):
    labels = labelled[1]
    item = mcq_item(labels, "S6", 5, 2)
    images = mcq_images(item, labels.scene, labels.view)
    assert len(images) == 5 and all(im.shape == (48, 48, 3) and im.dtype == np.float32 for im in images)
    dummy = McqItem(
        "S6", (item.options[0], None, item.options[1]), ("correct", "x_dummy_black", "y"), 0, item.highlight
    )
    assert np.all(mcq_images(dummy, labels.scene, labels.view, 16)[1] == 0)


def test_bad_input_names_the_argument(labelled):
    labels = labelled[0]
    for k in (2, 6):
        with pytest.raises(ValueError, match="k"):
            mcq_item(labels, "S3", k, 0)
    with pytest.raises(ValueError, match="task"):
        mcq_item(labels, "S10", 5, 0)
    with pytest.raises(TypeError, match="labels"):
        mcq_item(labels.scene, "S3", 5, 0)
    with pytest.raises(ValueError, match="seed"):
        mcq_item(labels, "S3", 5, -1)
    with pytest.raises(ValueError, match="item"):
        mcq_images(mcq_item(labels, "T1", 5, 0), labels.scene, labels.view)
    with pytest.raises(ValueError, match="task"):
        task_groups(labels, "T1")
    assert set(GROUP_TASKS) | set(HIGHLIGHT_TASKS) == set(IMAGE_TASKS)
