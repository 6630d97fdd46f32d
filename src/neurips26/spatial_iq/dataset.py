"""The benchmark's views: scenes drawn from disjoint seed ranges, four views each, rendered and labelled.

A scene contributes its four base azimuths (one offset and lens per scene), so every view has the
partner 90° and 180° further round that the rotation tasks show beside it. Train and evaluation scenes
come from disjoint seed ranges. The set is cached by its configuration and by the source of the modules
that draw, cull, label and render it. A scene takes about 0.1 s on one core, so the ``paper`` scale's
17,000 training scenes are rendered in processes (``workers``; the views are the same either way).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from neurips26.cache import cached
from neurips26.checkpoint_files import source_fingerprint
from neurips26.process_pool import map_in_processes
from neurips26.scales import pick, trial_run
from neurips26.spatial_iq.render import render_view
from neurips26.spatial_iq.scenes import StackScene, sample_scene
from neurips26.spatial_iq.tasks import NUMERIC, ViewLabels, view_labels
from neurips26.validation import check_choice, check_int

PKG = "neurips26.spatial_iq"
DATA_FILES = tuple(
    (PKG, f) for f in ("cameras.py", "visibility.py", "scenes.py", "tasks.py", "render.py", "dataset.py")
)
SPLITS = ("train", "eval")
#: First scene seed of each split (disjoint ranges). The evaluation scenes start at 3,000,000: the
#: recipes were developed on scenes 1,000,000+ and validated on 2,000,000+, so no choice saw a test view.
SPLIT_SEED = {"train": 0, "eval": 3_000_000}
#: Views per scene (the four base azimuths).
VIEWS_PER_SCENE = 4
#: Scenes per split at the ``paper`` scale: 68,000 training and 3,000 evaluation views, the sizes of the
#: paper's training and evaluation sets.
PAPER_SCENES = {"train": 17_000, "eval": 750}
#: Scenes per split in a trial run (:func:`neurips26.scales.trial_run`), at every scale.
TRIAL_SCENES = {"train": 8, "eval": 4}


@dataclass(frozen=True, eq=False)
class ViewSet:
    """``N`` views: images (N, S, S, 3) float32, their labels, scene index and azimuth index ``k`` per view,
    and each view's rotation partners (``partner["T2a"][n]`` = the index of view ``n`` turned 90°)."""

    scenes: list[StackScene]
    labels: list[ViewLabels]
    images: np.ndarray
    scene_index: np.ndarray
    k: np.ndarray
    partner: dict[str, np.ndarray]
    truth: dict[str, np.ndarray] = field(repr=False)

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def heights(self) -> np.ndarray:
        """(N, 4, 4) the structure behind each view."""
        return np.stack([self.scenes[i].heights for i in self.scene_index])

    def subset(self, rows: np.ndarray) -> ViewSet:
        """The views ``rows`` (their partners must be among them; scenes are kept whole)."""
        rows = np.asarray(rows, dtype=np.int64)
        where = {int(r): n for n, r in enumerate(rows)}
        try:
            partner = {t: np.array([where[int(p)] for p in v[rows]]) for t, v in self.partner.items()}
        except KeyError:
            raise ValueError("rows must keep every view's rotation partners (whole scenes)") from None
        return ViewSet(
            scenes=self.scenes,
            labels=[self.labels[r] for r in rows],
            images=self.images[rows],
            scene_index=self.scene_index[rows],
            k=self.k[rows],
            partner=partner,
            truth={t: v[rows] for t, v in self.truth.items()},
        )

    def partner_labels(self) -> dict[str, list[ViewLabels]]:
        return {t: [self.labels[int(p)] for p in v] for t, v in self.partner.items()}


def truth_sheet(labels: list[ViewLabels]) -> dict[str, np.ndarray]:
    """The ground-truth answer sheet (task → one value per view; ``"hidden"`` included)."""
    sheet = {t: np.array([lab[t] for lab in labels], dtype=np.int64) for t in (*NUMERIC, "hidden")}
    sheet["S1"] = np.array([lab["S1"] for lab in labels], dtype=object)
    return sheet


def _scene_views(seed: int, size: int) -> tuple[StackScene, list[ViewLabels], list[np.ndarray]]:
    """One scene of ``seed``: the scene, and its four views' labels and images."""
    scene = sample_scene(int(seed))
    labels, images = [], []
    for k in range(VIEWS_PER_SCENE):
        view = scene.view(k)
        labels.append(view_labels(scene, view))
        images.append(render_view(scene, view, size).rgb)
    return scene, labels, images


def build(seeds: range | list[int], size: int = 48, *, workers: int = 1) -> ViewSet:
    """Draw, label and render the scenes of ``seeds`` (four views each); ``workers > 1`` renders them in that
    many processes (0: one per CPU core), with the same result."""
    workers = check_int("workers", workers, minimum=0)
    seeds = [int(s) for s in seeds]
    drawn = map_in_processes(functools.partial(_scene_views, size=size), seeds, workers=workers)
    scenes = [scene for scene, _, _ in drawn]
    labels = [lab for _, scene_labels, _ in drawn for lab in scene_labels]
    images = [rgb for _, _, scene_images in drawn for rgb in scene_images]
    scene_index_a = np.repeat(np.arange(len(scenes)), VIEWS_PER_SCENE)
    k_a = np.tile(np.arange(VIEWS_PER_SCENE), len(scenes))
    base = scene_index_a * VIEWS_PER_SCENE
    partner = {
        "T2a": base + (k_a + 1) % VIEWS_PER_SCENE,
        "T2b": base + (k_a + 2) % VIEWS_PER_SCENE,
    }
    return ViewSet(
        scenes=scenes,
        labels=labels,
        images=np.stack(images).astype(np.float32),
        scene_index=scene_index_a,
        k=k_a,
        partner=partner,
        truth=truth_sheet(labels),
    )


def scene_count(split: str, scale: str) -> int:
    """Scenes per split: 1,500 train / 250 eval by default (6,000 / 1,000 views); 60 / 20 at smoke;
    :data:`PAPER_SCENES` at paper; :data:`TRIAL_SCENES` in a trial run."""
    split = check_choice("split", split, SPLITS)
    if trial_run():
        return TRIAL_SCENES[split]
    return pick(
        scale,
        smoke={"train": 60, "eval": 20}[split],
        default={"train": 1500, "eval": 250}[split],
        paper=PAPER_SCENES[split],
    )


def views(
    split: str,
    scale: str = "default",
    *,
    scenes: int | None = None,
    verbose: bool = True,
    workers: int | None = None,
) -> ViewSet:
    """The cached views of ``split`` at ``scale`` (or of the first ``scenes`` scenes of the split), rendered
    in ``workers`` processes (None: one per CPU core at the paper scale outside a trial run, else this
    process; the views, hence the cache key, do not depend on it)."""
    split = check_choice("split", split, SPLITS)
    n = scene_count(split, scale) if scenes is None else check_int("scenes", scenes, minimum=1)
    if workers is None:
        workers = 0 if scale == "paper" and not trial_run() else 1
    seeds = range(SPLIT_SEED[split], SPLIT_SEED[split] + n)
    key = {"split": split, "scenes": n, "source": source_fingerprint(DATA_FILES)}
    return cached("siq-views", key, lambda: build(seeds, workers=workers), verbose=verbose)


__all__ = [
    "DATA_FILES",
    "PAPER_SCENES",
    "SPLITS",
    "SPLIT_SEED",
    "TRIAL_SCENES",
    "VIEWS_PER_SCENE",
    "ViewSet",
    "build",
    "scene_count",
    "truth_sheet",
    "views",
]
