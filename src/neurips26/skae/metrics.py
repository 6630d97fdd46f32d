"""Evaluation metrics of the SKAE chapter (paper §experiments and its appendices on forecasting, alignment
and the high-dimensional confirmations).

* Forecast error: :func:`forecast_mse` is the paper's MSE through each horizon, computed by
  :func:`neurips26.skae.rollout.mse_through` (finite steps averaged within a start, then over starts; the
  diverged starts counted) — this module adds no second reducer.
* Aggregation: :func:`iqm` is ``scipy.stats.trim_mean(·, 0.25)`` over the seeds of one system (the paper's
  "IQM"); :func:`aggregate` takes it per system, then the arithmetic mean over systems.
* :func:`nrmse`: the root-mean-square error at each step over starts and coordinates, divided by the
  standard deviation of the true states (pooled over starts, steps and coordinates) [ours: the paper
  reports NRMSE for Lorenz-96 without stating the normaliser in the main text].
* Transductive alignment: :func:`high_margin_slice` keeps, within each label, the states whose centre
  margin ``d2 − d1`` is at or above that label's 75th percentile (ties included); :func:`conditional_entropy`
  is ``H(B | F) = Σ_f p(f) H(B | F = f)`` in nats; :func:`alignment` returns both on the slice plus the
  number of distinct families seen there.
* Partition agreement: :func:`partition_scores` gives ARI and NMI (scikit-learn's
  ``adjusted_rand_score``, ``normalized_mutual_info_score``) and purity ``Σ_f max_b n_{fb} / N``.
* :func:`asymptotic_basin_accuracy` [ours, not in the paper]: the fraction of starts whose forecast at a
  long horizon lies nearest the centre of the start's true basin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import trim_mean
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from neurips26.skae.rollout import HORIZONS, Forecast, mse_through
from neurips26.validation import check_float, check_int, check_int_tuple

#: Proportion cut from each end by the paper's IQM.
IQM_CUT = 0.25
#: The alignment slice keeps margins at or above this quantile within each label.
MARGIN_QUANTILE = 0.75


def forecast_mse(predicted: object, truth: object, horizons: Sequence[int] = HORIZONS) -> dict[int, Forecast]:
    """The paper's MSE through each horizon (:func:`~neurips26.skae.rollout.mse_through`), by horizon."""
    horizons = check_int_tuple("horizons", tuple(horizons), minimum=1)
    return {h: mse_through(predicted, truth, h) for h in horizons}


def _finite_vector(name: str, values: object) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if a.ndim != 1 or a.size < 1:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of numbers; got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf); got {a.tolist()}")
    return a


def iqm(values: object) -> float:
    """The paper's IQM: ``trim_mean(values, 0.25)`` (25% cut from each end; the mean of the rest)."""
    return float(trim_mean(_finite_vector("values", values), IQM_CUT))


def aggregate(per_system: Mapping[str, Sequence[float]]) -> float:
    """IQM over the seeds of each system, then the arithmetic mean over systems (paper §experiments)."""
    if not isinstance(per_system, Mapping) or not per_system:
        raise ValueError("per_system must be a non-empty mapping system -> per-seed values")
    return float(np.mean([iqm(_finite_vector(f"per_system[{k!r}]", v)) for k, v in per_system.items()]))


def nrmse(predicted: object, truth: object, *, scale: float | None = None) -> np.ndarray:
    """``sqrt(mean_{i,j} (x̂_{i,t,j} − x_{i,t,j})²) / σ`` for each step ``t``, shape ``(H,)``.

    ``predicted`` and ``truth`` have shape ``(N, H, d)``; ``σ`` is ``scale`` or the standard deviation of
    ``truth`` over all its entries. Non-finite forecasts give ``nan`` at that step (not hidden).
    """
    p = np.asarray(predicted, dtype=float)
    y = np.asarray(truth, dtype=float)
    if p.ndim != 3:
        raise ValueError(f"predicted must have shape (N, H, state_dim); got {p.shape}")
    if y.shape != p.shape:
        raise ValueError(f"truth must have the shape of predicted {p.shape}; got {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("truth must contain only finite values (no NaN or inf)")
    sigma = float(y.std()) if scale is None else check_float("scale", scale, minimum=0.0, strict_min=True)
    if sigma <= 0.0:
        raise ValueError("truth must not be constant (its standard deviation is the NRMSE scale)")
    with np.errstate(over="ignore", invalid="ignore"):
        return np.sqrt(((p - y) ** 2).mean(axis=(0, 2))) / sigma


def _labels(name: str, values: object, length: int | None = None) -> np.ndarray:
    a = np.asarray(values)
    if a.dtype.kind not in "iub":
        raise TypeError(f"{name} must hold integer labels; got dtype {a.dtype}")
    if a.ndim != 1 or a.size < 1:
        raise ValueError(f"{name} must be a non-empty 1-D array of labels; got shape {a.shape}")
    if length is not None and a.size != length:
        raise ValueError(f"{name} must have {length} entries (one per state); got {a.size}")
    return a.astype(np.int64)


def high_margin_slice(margin: object, labels: object, quantile: float = MARGIN_QUANTILE) -> np.ndarray:
    """Boolean mask: within each label, ``margin ≥`` that label's ``quantile`` (ties included).

    The quantile is NumPy's default (linear interpolation) over the label's own margins.
    """
    m = _finite_vector("margin", margin)
    b = _labels("labels", labels, m.size)
    quantile = check_float("quantile", quantile, minimum=0.0, maximum=1.0)
    keep = np.zeros(m.size, dtype=bool)
    for label in np.unique(b):
        where = b == label
        keep[where] = m[where] >= np.quantile(m[where], quantile)
    return keep


def conditional_entropy(basins: object, families: object) -> float:
    """``H(B | F)`` in nats: ``−Σ_{f,b} p(f, b) log p(b | f)`` from the empirical joint counts.

    0 when each family holds one basin; ``log(#basins)`` when one family holds equally many of each.
    """
    b = _labels("basins", basins)
    f = _labels("families", families, b.size)
    _, fi = np.unique(f, return_inverse=True)
    _, bi = np.unique(b, return_inverse=True)
    joint = np.zeros((fi.max() + 1, bi.max() + 1))
    np.add.at(joint, (fi, bi), 1.0)
    per_family = joint.sum(axis=1, keepdims=True)
    nz = joint > 0
    return float(
        -(joint[nz] * np.log(joint[nz] / np.broadcast_to(per_family, joint.shape)[nz])).sum() / b.size
    )


@dataclass(frozen=True)
class Alignment:
    """``H(B | F)`` (nats) on the high-margin slice, the families seen there, and the slice size."""

    entropy: float
    families: int
    states: int


def alignment(
    basins: object, families: object, margin: object, quantile: float = MARGIN_QUANTILE
) -> Alignment:
    """The paper's transductive alignment numbers on the high centre-margin slice (see module)."""
    b = _labels("basins", basins)
    f = _labels("families", families, b.size)
    keep = high_margin_slice(margin, b, quantile)
    return Alignment(
        entropy=conditional_entropy(b[keep], f[keep]),
        families=int(np.unique(f[keep]).size),
        states=int(keep.sum()),
    )


def purity(basins: object, families: object) -> float:
    """``Σ_f max_b n_{fb} / N``: the share of states in their family's majority basin."""
    b = _labels("basins", basins)
    f = _labels("families", families, b.size)
    _, fi = np.unique(f, return_inverse=True)
    _, bi = np.unique(b, return_inverse=True)
    joint = np.zeros((fi.max() + 1, bi.max() + 1))
    np.add.at(joint, (fi, bi), 1.0)
    return float(joint.max(axis=1).sum() / b.size)


@dataclass(frozen=True)
class PartitionScores:
    """Agreement of a partition (families) with reference labels (basins)."""

    ari: float
    nmi: float
    purity: float


def partition_scores(basins: object, families: object) -> PartitionScores:
    """ARI and NMI (scikit-learn) and purity of ``families`` against ``basins``."""
    b = _labels("basins", basins)
    f = _labels("families", families, b.size)
    return PartitionScores(
        ari=float(adjusted_rand_score(b, f)),
        nmi=float(normalized_mutual_info_score(b, f)),
        purity=purity(b, f),
    )


def asymptotic_basin_accuracy(final_states: object, basins: object, centers: object) -> float:
    """Share of starts whose long-horizon forecast lies nearest its true basin's centre [ours].

    ``final_states`` ``(N, d)`` are the forecasts at the last step, ``basins`` ``(N,)`` the true basin of
    each start (indices into ``centers`` ``(k, d)``). A non-finite forecast counts as wrong.
    """
    x = np.asarray(final_states, dtype=float)
    c = np.asarray(centers, dtype=float)
    if c.ndim != 2 or c.shape[0] < 1 or not np.all(np.isfinite(c)):
        raise ValueError(f"centers must be a finite array of shape (k, d); got shape {c.shape}")
    if x.ndim != 2 or x.shape[1] != c.shape[1]:
        raise ValueError(f"final_states must have shape (N, {c.shape[1]}); got {x.shape}")
    b = _labels("basins", basins, x.shape[0])
    check_int("basins.max()", int(b.max()), maximum=c.shape[0] - 1)
    check_int("basins.min()", int(b.min()), minimum=0)
    finite = np.all(np.isfinite(x), axis=1)
    nearest = np.full(x.shape[0], -1)
    if finite.any():
        d = np.linalg.norm(x[finite, None, :] - c[None], axis=-1)
        nearest[finite] = d.argmin(axis=1)
    return float((nearest == b).mean())
