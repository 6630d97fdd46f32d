"""The image-editing format: a responder recolours the view to show its answer; a silhouette score grades it.

**Score** (released ``evaluation/evaluation_image.py``; notes §3.3). The ground truth of a task is a pixel
partition: label 0 for background, ground and blocks outside the answer, one label per group of the answer
(:func:`gt_partition`; the groups are :func:`~neurips26.spatial_iq.mcq.task_groups`). With ``x_i`` the
colour of pixel ``i`` and ``c(i)`` its label,

    a(i) = mean_{j in c(i), j != i} ||x_i - x_j||,    b(i) = min_{C != c(i)} mean_{j in C} ||x_i - x_j||,
    s(i) = (b(i) - a(i)) / max(a(i), b(i))     (0 when both are 0; a(i) = 0 for a one-pixel group),

and the score is the mean of ``s(i)`` over the pixels with a label > 0; label 0 takes part as a cluster for
``b`` only. These are mean *pairwise* distances, not distances to group means; we compute them exactly, as
released, over the image's distinct colours: with ``n_{uC}`` the pixels of colour ``u`` in group ``C``, the
sum of distances from colour ``u`` to group ``C`` is ``sum_v ||u - v|| n_{vC}``, a (colours x colours) by
(colours x groups) product taken in row blocks. Images larger than :data:`SILHOUETTE_MAX_SIDE` are first
shrunk as released (bilinear image, nearest-neighbour labels). Fewer than two labels, or no scored pixel:
NaN.

**Verdict.** The released tables use correct/incorrect verdicts, but the rule that turns a silhouette into
a verdict is not in the released code: ours is ``score >= EDIT_THRESHOLD = 0.5`` (NaN is incorrect).

**Ideal editor.** :func:`edit_image` paints each group of a (possibly wrong) block partition flat in its
own colour over the rendered view, as the released ground-truth overlays are composited
(:func:`~neurips26.spatial_iq.render.paint_flat`): the output of a perfect editor scores 1, and a noisy
solver's partition becomes an image to score. The total (T1) is answered by writing a number in the
image (read back by OCR in the released code), so it has no partition here.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.spatial.distance import cdist

from neurips26.spatial_iq.cameras import GRID, IMAGE_SIZE, MAX_HEIGHT
from neurips26.spatial_iq.mcq import task_groups
from neurips26.spatial_iq.render import PALETTE, colour_groups, paint_flat, render_view
from neurips26.spatial_iq.tasks import ViewLabels, check_task
from neurips26.spatial_iq.visibility import slot_table
from neurips26.validation import check_array, check_int, check_seed

#: A silhouette at or above this is a correct edit (ours: the released code has no such rule).
EDIT_THRESHOLD = 0.5
#: Images with a longer side are shrunk to it before scoring (released).
SILHOUETTE_MAX_SIDE = 256
#: Rows of the colour-distance matrix per block (bounds the memory of the exact computation).
_CHUNK = 1 << 22


def _shrink(image: np.ndarray, partition: np.ndarray, max_side: int) -> tuple[np.ndarray, np.ndarray]:
    """Released ``_resize_for_silhouette``: longest side ``max_side``, bilinear colours, nearest labels."""
    from PIL import Image

    h, w = partition.shape
    scale = max_side / max(h, w)
    size = (max(1, int(round(w * scale))), max(1, int(round(h * scale))))
    channels = [
        np.asarray(Image.fromarray(image[..., c].astype(np.float32), mode="F").resize(size, Image.BILINEAR))
        for c in range(image.shape[2])
    ]
    labels = np.asarray(Image.fromarray(partition.astype(np.int32), mode="I").resize(size, Image.NEAREST))
    return np.stack(channels, axis=-1).astype(np.float64), labels.astype(np.int64)


def silhouette(image: np.ndarray, partition: np.ndarray) -> float:
    """Mean silhouette of the labelled pixels of ``image`` (H, W, 3) under ``partition`` (H, W) int, label 0
    = background (module doc); NaN with fewer than two labels or no label > 0."""
    image = check_array("image", image, ndim=3)
    if image.shape[2] != 3 or image.dtype.kind == "c":
        raise ValueError(
            f"image must be a real (H, W, 3) array; got shape {image.shape}, dtype {image.dtype}"
        )
    partition = check_array("partition", partition, shape=image.shape[:2])
    if partition.dtype.kind not in "iu":
        raise ValueError(f"partition must hold integer labels; got dtype {partition.dtype}")
    if partition.size and partition.min() < 0:
        raise ValueError("partition labels must be >= 0 (0 = background)")
    x = image.astype(np.float64)
    lab = partition.astype(np.int64)
    if max(lab.shape) > SILHOUETTE_MAX_SIDE:
        x, lab = _shrink(x, lab, SILHOUETTE_MAX_SIDE)
    x = x.reshape(-1, 3)
    lab = lab.reshape(-1)
    ids, group = np.unique(lab, return_inverse=True)
    scored = lab != 0
    if ids.size < 2 or not scored.any():
        return float("nan")
    colours, colour = np.unique(x, axis=0, return_inverse=True)
    colour = colour.reshape(-1)
    n_colours, n_groups = colours.shape[0], ids.size
    counts = np.zeros((n_colours, n_groups))
    np.add.at(counts, (colour, group), 1.0)
    sums = np.empty((n_colours, n_groups))  # sums[u, C] = sum over pixels j of C of ||colour u - x_j||
    rows = max(1, _CHUNK // n_colours)
    for lo in range(0, n_colours, rows):
        hi = min(lo + rows, n_colours)
        sums[lo:hi] = cdist(colours[lo:hi], colours) @ counts
    sizes = np.bincount(group, minlength=n_groups).astype(np.float64)
    u, g = colour[scored], group[scored]
    own = sizes[g]
    a = np.where(own > 1, sums[u, g] / np.maximum(own - 1, 1), 0.0)
    means = sums[u] / sizes[None, :]
    means[np.arange(u.size), g] = np.inf
    b = means.min(axis=1)
    denom = np.maximum(a, b)
    s = np.where(denom > 0, (b - a) / np.where(denom > 0, denom, 1.0), 0.0)
    return float(s.mean())


def verdict(score: float, threshold: float = EDIT_THRESHOLD) -> bool:
    """Whether a silhouette ``score`` counts as a correct edit: ``score >= threshold`` (NaN: incorrect)."""
    if isinstance(score, bool) or not isinstance(score, numbers.Real):
        raise TypeError(f"score must be a real number; got {type(score).__name__}")
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not np.isfinite(threshold):
        raise ValueError(f"threshold must be a finite real number; got {threshold!r}")
    return bool(np.isfinite(score) and score >= threshold)


def gt_partition(labels: ViewLabels, task: str, slots: np.ndarray) -> np.ndarray:
    """(H, W) int64 ground-truth labels of ``task`` on an ID buffer ``slots`` (H, W) (-1 = no block)."""
    groups = task_groups(labels, task).reshape(-1)
    slots = check_array("slots", slots, ndim=2)
    if slots.dtype.kind not in "iu" or (slots.size and (slots.min() < -1 or slots.max() >= groups.size)):
        raise ValueError(f"slots must hold slot indices in -1..{groups.size - 1}")
    table = np.append(groups, 0)  # index -1 -> 0
    return table[slots.astype(np.int64)]


def check_groups(groups: object) -> np.ndarray:
    """``groups`` as a (4, 4, 4) int64 array of labels >= 0; ``ValueError`` naming it otherwise."""
    g = np.asarray(groups)
    if g.shape != (GRID, GRID, MAX_HEIGHT) or g.dtype.kind not in "iub":
        raise ValueError(
            f"groups must be a {(GRID, GRID, MAX_HEIGHT)} int array; got shape {g.shape}, dtype {g.dtype}"
        )
    if g.min() < 0:
        raise ValueError("groups labels must be >= 0 (0 = leave the block as it is)")
    return g.astype(np.int64)


def edit_palette(seed: int) -> tuple[tuple[float, float, float], ...]:
    """The editor's colours: :data:`~neurips26.spatial_iq.render.PALETTE` from a seeded offset."""
    seed = check_seed("seed", seed)
    offset = int(np.random.default_rng(seed).integers(len(PALETTE)))
    return PALETTE[offset:] + PALETTE[:offset]


def edit_image(
    labels: ViewLabels, task: str, groups: np.ndarray | None = None, *, size: int = IMAGE_SIZE, seed: int = 0
) -> np.ndarray:
    """The view of ``labels`` with each group of ``groups`` ((4, 4, 4) int, 0 = untouched; default: the
    task's ground truth, :func:`~neurips26.spatial_iq.mcq.task_groups`) painted flat in its own colour:
    (size, size, 3) float32, what an editor holding that partition outputs."""
    if not isinstance(labels, ViewLabels):
        raise TypeError(f"labels must be a ViewLabels; got {type(labels).__name__}")
    task = check_task(task)
    if task == "T1":
        raise ValueError("task T1 is answered by a number written into the image, not by a recolouring")
    size = check_int("size", size, minimum=8)
    g = task_groups(labels, task) if groups is None else check_groups(groups)
    view = render_view(labels.scene, labels.view, size)
    return paint_flat(view, colour_groups(g, edit_palette(seed)))


def edit_score(labels: ViewLabels, task: str, image: np.ndarray) -> float:
    """The silhouette of an edited ``image`` (S, S, 3) of the view of ``labels`` against ``task``'s ground
    truth at that size."""
    if not isinstance(labels, ViewLabels):
        raise TypeError(f"labels must be a ViewLabels; got {type(labels).__name__}")
    image = check_array("image", image, ndim=3)
    if image.shape[0] != image.shape[1] or image.shape[2] != 3:
        raise ValueError(f"image must be a square (S, S, 3) array; got shape {image.shape}")
    size = check_int("image size", image.shape[0], minimum=8)
    slots = slot_table(labels.view, size).id_buffer(labels.scene.heights)
    return silhouette(image, gt_partition(labels, task, slots))


__all__ = [
    "EDIT_THRESHOLD",
    "SILHOUETTE_MAX_SIDE",
    "check_groups",
    "edit_image",
    "edit_palette",
    "edit_score",
    "gt_partition",
    "silhouette",
    "verdict",
]
