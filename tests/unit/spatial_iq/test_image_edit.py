"""The image-editing score: the released per-pixel silhouette (checked against a hand-computed case and a
direct port of the released loop), a perfect edit scores 1, noise about 0, merged blocks lose exactly their
pixels, the verdict threshold, and bad input."""

import math

import numpy as np
import pytest

from neurips26.spatial_iq.image_edit import (
    EDIT_THRESHOLD,
    edit_image,
    edit_score,
    gt_partition,
    silhouette,
    verdict,
)
from neurips26.spatial_iq.mcq import task_groups
from neurips26.spatial_iq.scenes import sample_scene
from neurips26.spatial_iq.tasks import view_labels
from neurips26.spatial_iq.visibility import slot_table

IMAGE_TASKS = ("S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9", "T2a", "T2b")


def _released_loop(pred, mask):
    """The released per-pixel loop, written out (reference for the vectorised version)."""
    colours, labels = pred.reshape(-1, 3), mask.ravel()
    ids = np.unique(labels)
    if ids.size < 2:
        return math.nan
    blocks = {k: np.flatnonzero(labels == k) for k in ids}
    scores = []
    for i in np.flatnonzero(labels != 0):
        same = blocks[labels[i]]
        d = np.linalg.norm(colours[same] - colours[i], axis=1)
        a = 0.0 if same.size == 1 else float(np.mean(np.delete(d, np.flatnonzero(same == i)[0])))
        b = min(
            float(np.mean(np.linalg.norm(colours[o] - colours[i], axis=1)))
            for k, o in blocks.items()
            if k != labels[i]
        )
        den = max(a, b)
        scores.append(0.0 if den <= 0 else (b - a) / den)
    return float(np.mean(scores))


@pytest.fixture(scope="module")
def labelled():
    return [view_labels(sample_scene(seed), sample_scene(seed).view(seed % 4)) for seed in (1, 4, 9)]


def test_hand_computed_case():
    # red channel 0, 2, 3, 10 with labels 1, 1, 2, 0: s = 1/3, -1/2, 1 on the three labelled pixels
    image = np.zeros((1, 4, 3))
    image[0, :, 0] = (0.0, 2.0, 3.0, 10.0)
    partition = np.array([[1, 1, 2, 0]])
    assert silhouette(image, partition) == pytest.approx((1 / 3 - 1 / 2 + 1) / 3)


def test_matches_the_released_loop():
    rng = np.random.default_rng(0)
    for seed in range(4):
        image = rng.random((9, 11, 3))
        image[rng.random((9, 11)) < 0.3] = (0.2, 0.4, 0.6)  # repeated colours
        partition = rng.integers(0, 4 + seed, (9, 11))
        assert silhouette(image, partition) == pytest.approx(_released_loop(image, partition), abs=1e-12)


def test_invariances():
    rng = np.random.default_rng(1)
    image, partition = rng.random((10, 10, 3)), rng.integers(0, 4, (10, 10))
    s = silhouette(image, partition)
    assert silhouette(3.0 * image, partition) == pytest.approx(s)
    relabelled = np.where(partition == 1, 7, np.where(partition == 2, 1, partition))
    assert silhouette(image, relabelled) == pytest.approx(s)


def test_nan_cases():
    image = np.random.default_rng(2).random((5, 5, 3))
    assert math.isnan(silhouette(image, np.ones((5, 5), dtype=int)))
    assert math.isnan(silhouette(image, np.zeros((5, 5), dtype=int)))
    assert not verdict(math.nan)


def test_a_perfect_edit_scores_one(labelled):
    for labels in labelled:
        for task in IMAGE_TASKS:
            if not task_groups(labels, task).any():
                continue
            score = edit_score(labels, task, edit_image(labels, task, seed=3))
            assert score >= 0.95 and verdict(score), (task, score)


def test_noise_scores_about_zero(labelled):
    labels = labelled[0]
    slots = slot_table(labels.view).id_buffer(labels.scene.heights)
    for seed in range(3):
        noise = np.random.default_rng(seed).random((48, 48, 3))
        for task in ("S1", "S2", "S4"):
            assert abs(silhouette(noise, gt_partition(labels, task, slots))) < 0.1


def test_merging_two_blocks_costs_exactly_their_pixels(labelled):
    labels = labelled[1]
    slots = slot_table(labels.view).id_buffer(labels.scene.heights)
    groups = task_groups(labels, "S5")
    exact = edit_score(labels, "S5", edit_image(labels, "S5", groups))
    flat = groups.reshape(-1)
    a, b = np.flatnonzero(flat)[:2]
    merged = flat.copy()
    merged[b] = merged[a]
    score = edit_score(labels, "S5", edit_image(labels, "S5", merged.reshape(4, 4, 4)))
    scored = gt_partition(labels, "S5", slots) > 0
    lost = np.isin(slots, [a, b]).sum() / scored.sum()
    assert exact == pytest.approx(1.0)
    assert score == pytest.approx(1.0 - lost) and score < exact


def test_gt_partition_reads_groups_through_slots(labelled):
    labels = labelled[2]
    slots = slot_table(labels.view).id_buffer(labels.scene.heights)
    part = gt_partition(labels, "S3", slots)
    vis = labels.visible.reshape(-1)
    for s in np.unique(slots):
        expect = 0 if s < 0 or not vis[s] else s // 4 + 1
        assert np.all(part[slots == s] == expect)


def test_large_images_are_shrunk_as_released():
    image = np.zeros((300, 300, 3))
    partition = np.zeros((300, 300), dtype=np.int64)
    image[:150, :150], partition[:150, :150] = (1.0, 0.0, 0.0), 1
    image[150:, 150:], partition[150:, 150:] = (0.0, 0.0, 1.0), 2
    assert 0.9 < silhouette(image, partition) <= 1.0


def test_verdict_threshold():
    assert EDIT_THRESHOLD == 0.5
    assert verdict(0.5) and verdict(1.0) and not verdict(0.4999)
    assert verdict(0.3, threshold=0.2)
    with pytest.raises(TypeError, match="score"):
        verdict("0.7")


def test_bad_input_names_the_argument(labelled):
    labels = labelled[0]
    good = np.zeros((4, 4, 3))
    with pytest.raises(ValueError, match="image"):
        silhouette(np.zeros((4, 4)), np.zeros((4, 4), dtype=int))
    with pytest.raises(TypeError, match="image"):
        silhouette([[0.0]], np.zeros((1, 1), dtype=int))
    with pytest.raises(ValueError, match="image"):
        silhouette(np.full((2, 2, 3), np.nan), np.zeros((2, 2), dtype=int))
    with pytest.raises(ValueError, match="partition"):
        silhouette(good, np.zeros((4, 5), dtype=int))
    with pytest.raises(ValueError, match="partition"):
        silhouette(good, -np.ones((4, 4), dtype=int))
    with pytest.raises(ValueError, match="partition"):
        silhouette(good, np.zeros((4, 4)))
    with pytest.raises(ValueError, match="task"):
        edit_image(labels, "T1")
    with pytest.raises(ValueError, match="groups"):
        edit_image(labels, "S3", np.zeros((4, 4), dtype=int))
    with pytest.raises(TypeError, match="labels"):
        edit_image(labels.scene, "S3")
    with pytest.raises(ValueError, match="image"):
        edit_score(labels, "S3", np.zeros((48, 40, 3)))
