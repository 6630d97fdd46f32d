"""The shortcut responder: answer each question on its own from global image statistics.

It subtracts the empty scene (background and ground) to find the structure's silhouette, measures a few
global statistics (silhouette area, height, width, row and column profiles, edge densities, brightness),
and fits one L2-regularised classifier per question on the training views (multinomial logistic
regression over the integer answers seen in training; its answer is the most probable one). Nothing
ties its answers together, so its errors on the total need not be the sum of its errors on the parts: it
can match a compositional solver's headline accuracy with a different mechanism (the paper's "same
headline score, different mechanism"). The object category is the nearest mean colour.

``model="ridge"`` fits one ridge regression per question instead (rounded). It is *not* independent in
the sense that matters: least squares is linear in the targets, and ``T1 = S5 + hidden`` holds for every
view, so the three fitted predictions obey it too (up to rounding) — a linear shortcut composes by
algebra, not by counting. The chapter shows both.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from sklearn.linear_model import LogisticRegression

from neurips26.spatial_iq.cameras import View, camera
from neurips26.spatial_iq.dataset import ViewSet
from neurips26.spatial_iq.scenes import CATEGORIES
from neurips26.spatial_iq.tasks import NUMERIC
from neurips26.validation import check_choice, check_float
from neurips26.world import render, voxel_scene

#: A pixel belongs to the silhouette when it differs from the empty scene by more than this (RGB, max-norm).
FOREGROUND = 0.03
PROFILE_BINS = 8
MODELS = ("logistic", "ridge")


@lru_cache(maxsize=64)
def empty_view(view: View, size: int) -> np.ndarray:
    """The scene without blocks (background and ground) as ``view`` sees it."""
    return render(voxel_scene(np.zeros((4, 4), dtype=np.int64), max_height=4).scene, camera(view, size)).rgb


def features(images: np.ndarray, views: list[View]) -> np.ndarray:
    """(N, F) global statistics of each image (module doc)."""
    out = []
    for img, view in zip(images, views, strict=True):
        size = img.shape[0]
        fg = np.abs(img - empty_view(view, size)).max(axis=-1) > FOREGROUND
        rows, cols = fg.sum(axis=1), fg.sum(axis=0)
        ys, xs = np.nonzero(fg)
        height = (ys.max() - ys.min() + 1) / size if ys.size else 0.0
        width = (xs.max() - xs.min() + 1) / size if xs.size else 0.0
        grey = img.mean(axis=-1)
        dy = np.abs(np.diff(grey, axis=0))[fg[1:] & fg[:-1]]
        dx = np.abs(np.diff(grey, axis=1))[fg[:, 1:] & fg[:, :-1]]
        prof_r = rows.reshape(PROFILE_BINS, -1).sum(axis=1) / size**2
        prof_c = cols.reshape(PROFILE_BINS, -1).sum(axis=1) / size**2
        out.append(
            np.concatenate(
                [
                    [fg.mean(), height, width, height * width, float((dy > 0.08).mean()) if dy.size else 0.0],
                    [
                        float((dx > 0.08).mean()) if dx.size else 0.0,
                        float(grey[fg].mean()) if fg.any() else 0.0,
                    ],
                    [float((grey[fg] < 0.3).mean()) if fg.any() else 0.0],
                    prof_r,
                    prof_c,
                ]
            )
        )
    return np.array(out)


def _colour(images: np.ndarray, views: list[View]) -> np.ndarray:
    out = []
    for img, view in zip(images, views, strict=True):
        fg = np.abs(img - empty_view(view, img.shape[0])).max(axis=-1) > FOREGROUND
        out.append(img[fg].mean(axis=0) if fg.any() else np.zeros(3))
    return np.array(out)


def _views_of(data: ViewSet) -> list[View]:
    return [lab.view for lab in data.labels]


@dataclass(frozen=True, eq=False)
class ShortcutResponder:
    """Feature standardisation, one fitted model per question, and the categories' mean colours."""

    mean: np.ndarray
    scale: np.ndarray
    models: dict[str, object]
    colours: np.ndarray

    def answer(self, data: ViewSet) -> dict[str, np.ndarray]:
        """The answer sheet over ``data`` (every question answered separately)."""
        views = _views_of(data)
        x = (features(data.images, views) - self.mean) / self.scale
        sheet = {}
        for task, model in self.models.items():
            xt = x if not task.startswith("T2") else _pair(x, data, task)
            if isinstance(model, np.ndarray):  # ridge weights, intercept last
                pred = np.hstack([xt, np.ones((len(xt), 1))]) @ model
                sheet[task] = np.maximum(np.rint(pred), 0).astype(np.int64)
            else:
                sheet[task] = model.predict(xt).astype(np.int64)
        dist = ((_colour(data.images, views)[:, None] - self.colours[None]) ** 2).sum(-1)
        sheet["S1"] = np.array([CATEGORIES[i] for i in dist.argmin(axis=1)], dtype=object)
        return sheet


def _pair(x: np.ndarray, data: ViewSet, task: str) -> np.ndarray:
    """Features of the view beside those of its rotation partner (the two images of T2)."""
    return np.hstack([x, x[data.partner[task]]])


def fit_shortcut(data: ViewSet, *, model: str = "logistic", strength: float = 1.0) -> ShortcutResponder:
    """Fit the per-question models on ``data``'s views and truths (``strength``: the L2 penalty, as the
    ridge ``λ`` or the logistic regression's ``1 / C``)."""
    if not isinstance(data, ViewSet):
        raise TypeError(f"data must be a ViewSet; got {type(data).__name__}")
    model = check_choice("model", model, MODELS)
    strength = check_float("strength", strength, minimum=0.0, strict_min=True)
    views = _views_of(data)
    f = features(data.images, views)
    mean, scale = f.mean(axis=0), f.std(axis=0) + 1e-9
    x = (f - mean) / scale
    fitted: dict[str, object] = {}
    for task in NUMERIC:
        xt = x if not task.startswith("T2") else _pair(x, data, task)
        y = data.truth[task]
        if model == "ridge":
            xa = np.hstack([xt, np.ones((len(xt), 1))])
            reg = strength * np.eye(xa.shape[1])
            reg[-1, -1] = 0.0  # the intercept is not shrunk
            fitted[task] = np.linalg.solve(xa.T @ xa + reg, xa.T @ y.astype(float))
        elif np.unique(y).size == 1:
            fitted[task] = _Constant(int(y[0]))
        else:
            fitted[task] = LogisticRegression(C=1.0 / strength, max_iter=1000).fit(xt, y)
    col = _colour(data.images, views)
    cats = data.truth["S1"]
    colours = np.array(
        [col[cats == c].mean(axis=0) if (cats == c).any() else np.zeros(3) for c in CATEGORIES]
    )
    return ShortcutResponder(mean, scale, fitted, colours)


@dataclass(frozen=True)
class _Constant:
    value: int

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.full(len(x), self.value)


__all__ = ["FOREGROUND", "MODELS", "ShortcutResponder", "empty_view", "features", "fit_shortcut"]
