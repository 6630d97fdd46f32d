"""Linear probes on frozen patch tokens: what each pathway encodes (claim C2 of the chapter).

A pathway that keeps the 2D encoder's semantics should let a *linear* read-out recover each object patch's
colour and shape; a pathway that has absorbed the 3D expert should let one recover each patch's depth and
height. We fit the read-out on the patches of the training episodes and score it on *held-out* episodes
(another split), so a probe cannot memorise scenes.

* Class probes (colour, shape): multinomial logistic regression ``p(y | t) = softmax(W t' + b)`` on the
  standardised tokens ``t' = (t - mu) / sigma`` (mean and std of the training patches), fitted on the
  object patches only (class index >= 2: neither table nor pedestal, which would swamp the count); the score
  is the accuracy on the test episodes' object patches.
* Geometry probes (z-depth, height ``Y`` above the table): ridge regression ``y ~ w^T t' + b`` with penalty
  ``alpha ||w||^2`` (``alpha = 1``) on the patches whose target is finite; the score is the test
  ``R^2 = 1 - sum (y - y_hat)^2 / sum (y - mean y)^2`` (scikit-learn's ``r2_score``, the mean taken over
  the test patches), so 0 is "no better than a constant" and it may be negative.
* Position floor: the same probes with the patch's grid position alone as the feature (a one-hot of the 36
  positions). Most patches show the table, whose depth is fixed by the image row, so on all patches the
  depth floor is close to 1 (about 0.997 on 100/60 dev/eval episodes; about 0.85 on object and pedestal
  patches; the height floor is about 0.2 and 0.06): a pathway's ``R^2`` means something only above it.

The probes are deterministic (L-BFGS with a fixed iteration cap; ridge in closed form) and run on CPU
NumPy copies of the tokens, whatever device the tokens came from.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import r2_score
from sklearn.preprocessing import StandardScaler

from neurips26.spark_vla.data import EpisodeSet
from neurips26.spark_vla.sim import COLOUR_CLASSES, NUM_PATCHES, SHAPE_CLASSES
from neurips26.validation import check_int

#: Class indices below this are the table and the pedestals (``COLOUR_CLASSES`` and ``SHAPE_CLASSES`` both
#: start with them).
FIRST_OBJECT_CLASS = 2
RIDGE_ALPHA = 1.0
LOGISTIC_MAX_ITER = 500
FLOOR_NAME = "position (floor)"


def _tokens(name: str, value: Any) -> np.ndarray:
    """(E, N, d) real tokens from a NumPy array or a torch tensor, as float64 NumPy on the CPU."""
    if isinstance(value, torch.Tensor):
        value = value.detach().to("cpu", torch.float64).numpy()
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray or torch.Tensor; got {type(value).__name__}")
    if value.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers; got dtype {value.dtype}")
    if value.ndim != 3 or value.shape[0] < 1 or value.shape[1] < 1 or value.shape[2] < 1:
        raise ValueError(f"{name} must have shape (episodes, patches, width); got {value.shape}")
    if not np.all(np.isfinite(value)):
        raise ValueError(f"{name} must contain only finite values")
    return value.astype(np.float64)


def _per_patch(name: str, value: Any, tokens: np.ndarray, tokens_name: str) -> np.ndarray:
    """A per-patch array (E, N) whose shape matches the tokens' first two axes."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray or torch.Tensor; got {type(value).__name__}")
    if value.shape != tokens.shape[:2]:
        raise ValueError(
            f"{name} must have shape {tokens.shape[:2]} (that of {tokens_name}[:, :, 0]); got {value.shape}"
        )
    return value


def _labels(name: str, value: Any, tokens: np.ndarray, tokens_name: str, classes: int) -> np.ndarray:
    value = _per_patch(name, value, tokens, tokens_name)
    if value.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer class indices; got dtype {value.dtype}")
    if value.size and (value.min() < 0 or value.max() >= classes):
        raise ValueError(
            f"{name} must hold class indices in [0, {classes}); got [{value.min()}, {value.max()}]"
        )
    return value.astype(np.int64)


def _targets(name: str, value: Any, tokens: np.ndarray, tokens_name: str) -> np.ndarray:
    value = _per_patch(name, value, tokens, tokens_name)
    if value.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers; got dtype {value.dtype}")
    return value.astype(np.float64)


def _same_width(train: np.ndarray, test: np.ndarray) -> None:
    if train.shape[1:] != test.shape[1:]:
        raise ValueError(
            f"test_tokens must match train_tokens in (patches, width) {train.shape[1:]}; got {test.shape[1:]}"
        )


def _class_probe(
    train_tokens: Any, train_labels: Any, test_tokens: Any, test_labels: Any, classes: int
) -> float:
    x_train, x_test = _tokens("train_tokens", train_tokens), _tokens("test_tokens", test_tokens)
    _same_width(x_train, x_test)
    y_train = _labels("train_labels", train_labels, x_train, "train_tokens", classes)
    y_test = _labels("test_labels", test_labels, x_test, "test_tokens", classes)
    fit, score = y_train >= FIRST_OBJECT_CLASS, y_test >= FIRST_OBJECT_CLASS
    if len(np.unique(y_train[fit])) < 2:
        raise ValueError("train_labels must contain object patches (class >= 2) of at least two classes")
    if not score.any():
        raise ValueError("test_labels must contain at least one object patch (class >= 2)")
    scaler = StandardScaler().fit(x_train[fit])
    model = LogisticRegression(C=1.0, solver="lbfgs", max_iter=LOGISTIC_MAX_ITER)
    with warnings.catch_warnings():  # an unconverged L-BFGS still gives a valid (deterministic) read-out
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(scaler.transform(x_train[fit]), y_train[fit])
    predicted = model.predict(scaler.transform(x_test[score]))
    return float(np.mean(predicted == y_test[score]))


def colour_probe(train_tokens: Any, train_labels: Any, test_tokens: Any, test_labels: Any) -> float:
    """Test accuracy of a linear colour read-out of object patches.

    ``*_tokens`` (E, N, d) (NumPy or torch, any device), ``*_labels`` (E, N) indices into
    :data:`~neurips26.spark_vla.sim.COLOUR_CLASSES`; fitted and scored on patches with label >= 2 only.
    """
    return _class_probe(train_tokens, train_labels, test_tokens, test_labels, len(COLOUR_CLASSES))


def shape_probe(train_tokens: Any, train_labels: Any, test_tokens: Any, test_labels: Any) -> float:
    """Test accuracy of a linear shape read-out of object patches (labels index
    :data:`~neurips26.spark_vla.sim.SHAPE_CLASSES`); otherwise as :func:`colour_probe`."""
    return _class_probe(train_tokens, train_labels, test_tokens, test_labels, len(SHAPE_CLASSES))


def geometry_probe(train_tokens: Any, train_target: Any, test_tokens: Any, test_target: Any) -> float:
    """Held-out ``R^2`` of a ridge read-out (alpha 1, tokens standardised on train) of a per-patch scalar.

    ``*_tokens`` (E, N, d); ``*_target`` (E, N) float, e.g. the z-depth or the height ``Y`` of
    :attr:`~neurips26.spark_vla.data.EpisodeSet.geometry`; patches with a non-finite target are left out
    (so setting the table patches' targets to NaN probes the objects only).
    """
    x_train, x_test = _tokens("train_tokens", train_tokens), _tokens("test_tokens", test_tokens)
    _same_width(x_train, x_test)
    y_train = _targets("train_target", train_target, x_train, "train_tokens")
    y_test = _targets("test_target", test_target, x_test, "test_tokens")
    fit, score = np.isfinite(y_train), np.isfinite(y_test)
    if fit.sum() < 2:
        raise ValueError("train_target must have at least two finite entries")
    if score.sum() < 2 or np.ptp(y_test[score]) == 0:
        raise ValueError("test_target must have at least two distinct finite entries (R^2 is undefined)")
    scaler = StandardScaler().fit(x_train[fit])
    model = Ridge(alpha=RIDGE_ALPHA, solver="cholesky").fit(scaler.transform(x_train[fit]), y_train[fit])
    return float(r2_score(y_test[score], model.predict(scaler.transform(x_test[score]))))


def position_features(episodes: int, patches: int = NUM_PATCHES) -> np.ndarray:
    """(episodes, patches, patches) float64: each patch's one-hot grid position, the same in every episode."""
    episodes = check_int("episodes", episodes, minimum=1)
    patches = check_int("patches", patches, minimum=1)
    return np.broadcast_to(np.eye(patches), (episodes, patches, patches)).copy()


def position_floor(train_target: Any, test_target: Any) -> float:
    """:func:`geometry_probe` with the patch's grid position (one-hot) as its only feature: the ``R^2``
    that "where in the image" alone explains. ``*_target`` (E, N)."""
    for name, value in (("train_target", train_target), ("test_target", test_target)):
        if not isinstance(value, np.ndarray | torch.Tensor):
            raise TypeError(f"{name} must be a numpy.ndarray or torch.Tensor; got {type(value).__name__}")
        if value.ndim != 2:
            raise ValueError(f"{name} must have shape (episodes, patches); got {tuple(value.shape)}")
    if train_target.shape[1] != test_target.shape[1]:
        raise ValueError(
            f"test_target must have {train_target.shape[1]} patches (train_target's); "
            f"got {test_target.shape[1]}"
        )
    e_train, n = train_target.shape
    return geometry_probe(
        position_features(e_train, n), train_target, position_features(test_target.shape[0], n), test_target
    )


def _probe_row(name: str, train_x: Any, test_x: Any, train: EpisodeSet, test: EpisodeSet) -> dict[str, Any]:
    return {
        "pathway": name,
        "colour_acc": colour_probe(train_x, train.colour_labels, test_x, test.colour_labels),
        "shape_acc": shape_probe(train_x, train.shape_labels, test_x, test.shape_labels),
        "depth_r2": geometry_probe(train_x, train.geometry[..., 0], test_x, test.geometry[..., 0]),
        "height_r2": geometry_probe(train_x, train.geometry[..., 2], test_x, test.geometry[..., 2]),
    }


def probe_table(
    features: Mapping[str, tuple[Any, Any]], train: EpisodeSet, test: EpisodeSet
) -> list[dict[str, Any]]:
    """One row per pathway, then the position floor: ``pathway``, ``colour_acc``, ``shape_acc`` (test
    accuracy on object patches), ``depth_r2`` (z-depth, ``geometry[..., 0]``) and ``height_r2`` (height
    ``Y``, ``geometry[..., 2]``), each ``R^2`` on the held-out episodes of ``test``.

    ``features`` maps a pathway's name to its (train tokens (E_train, 36, d), test tokens (E_test, 36, d)),
    rows in the order of ``train`` and ``test``.
    """
    if not isinstance(train, EpisodeSet):
        raise TypeError(f"train must be an EpisodeSet; got {type(train).__name__}")
    if not isinstance(test, EpisodeSet):
        raise TypeError(f"test must be an EpisodeSet; got {type(test).__name__}")
    if not isinstance(features, Mapping) or not features:
        raise ValueError(
            "features must be a non-empty mapping of pathway name -> (train tokens, test tokens)"
        )
    rows = []
    for name, pair in features.items():
        if not isinstance(name, str) or name == FLOOR_NAME:
            raise ValueError(f"features keys must be pathway names (str, not {FLOOR_NAME!r}); got {name!r}")
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise ValueError(f"features[{name!r}] must be a (train tokens, test tokens) pair")
        train_x, test_x = (
            _tokens(f"features[{name!r}][0]", pair[0]),
            _tokens(f"features[{name!r}][1]", pair[1]),
        )
        if train_x.shape[:2] != (len(train), NUM_PATCHES) or test_x.shape[:2] != (len(test), NUM_PATCHES):
            raise ValueError(
                f"features[{name!r}] must hold tokens ({len(train)}, {NUM_PATCHES}, d) and "
                f"({len(test)}, {NUM_PATCHES}, d); got {train_x.shape} and {test_x.shape}"
            )
        rows.append(_probe_row(name, train_x, test_x, train, test))
    floor_train, floor_test = position_features(len(train)), position_features(len(test))
    rows.append(_probe_row(FLOOR_NAME, floor_train, floor_test, train, test))
    return rows


__all__ = [
    "FIRST_OBJECT_CLASS",
    "FLOOR_NAME",
    "LOGISTIC_MAX_ITER",
    "RIDGE_ALPHA",
    "colour_probe",
    "geometry_probe",
    "position_features",
    "position_floor",
    "probe_table",
    "shape_probe",
]
