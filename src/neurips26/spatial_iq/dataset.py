"""The benchmark's views: scenes drawn from disjoint seed ranges, four views each, rendered and labelled.

A scene contributes its four base azimuths (one offset and lens per scene), so every view has the
partner 90° and 180° further round that the rotation tasks show beside it. Train and evaluation scenes
come from disjoint seed ranges. The set is cached by its configuration and by the source of the modules
that draw, cull, label and render it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from neurips26.cache import cached
from neurips26.checkpoint_files import source_fingerprint
from neurips26.scales import pick
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


def build(seeds: range | list[int], size: int = 48) -> ViewSet:
    """Draw, label and render the scenes of ``seeds`` (four views each)."""
    scenes = [sample_scene(int(s)) for s in seeds]
    labels, images, scene_index, ks = [], [], [], []
    for i, scene in enumerate(scenes):
        for k in range(VIEWS_PER_SCENE):
            view = scene.view(k)
            labels.append(view_labels(scene, view))
            images.append(render_view(scene, view, size).rgb)
            scene_index.append(i)
            ks.append(k)
    scene_index_a, k_a = np.array(scene_index), np.array(ks)
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
    """Scenes per split: 1,500 train / 250 eval by default (6,000 / 1,000 views); 60 / 20 at smoke."""
    split = check_choice("split", split, SPLITS)
    return pick(scale, smoke={"train": 60, "eval": 20}[split], default={"train": 1500, "eval": 250}[split])


def views(split: str, scale: str = "default", *, scenes: int | None = None, verbose: bool = True) -> ViewSet:
    """The cached views of ``split`` at ``scale`` (or of the first ``scenes`` scenes of the split)."""
    split = check_choice("split", split, SPLITS)
    n = scene_count(split, scale) if scenes is None else check_int("scenes", scenes, minimum=1)
    seeds = range(SPLIT_SEED[split], SPLIT_SEED[split] + n)
    key = {"split": split, "scenes": n, "source": source_fingerprint(DATA_FILES)}
    return cached("siq-views", key, lambda: build(seeds), verbose=verbose)


__all__ = [
    "DATA_FILES",
    "SPLITS",
    "SPLIT_SEED",
    "VIEWS_PER_SCENE",
    "ViewSet",
    "build",
    "scene_count",
    "truth_sheet",
    "views",
]
