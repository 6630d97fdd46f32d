"""The correlation-clustering objective.

``cost(C) = sum_uv w_plus_uv * x_uv + w_minus_uv * (1 - x_uv)`` with ``x_uv = 1`` when ``C`` separates
``u`` and ``v``; the same formula evaluated at fractional ``x in [0, 1]^P`` is the metric LP objective.
"""

from __future__ import annotations

import numpy as np

from neurips26.sparse_cc.instances import CCInstance
from neurips26.validation import check_array


def check_labels(n: int, labels: object) -> np.ndarray:
    """Cluster labels: a 1-D integer array of length ``n``."""
    labels = check_array("labels", labels, ndim=1, shape=(n,))
    if labels.dtype.kind not in "iu":
        raise TypeError(f"labels must hold integers; got dtype {labels.dtype}")
    return labels


def separation(instance: CCInstance, labels: np.ndarray) -> np.ndarray:
    """``x_uv = 1`` if ``labels[u] != labels[v]`` else 0, over the pairs in row-major order."""
    labels = check_labels(instance.n, labels)
    u, v = np.triu_indices(instance.n, 1)
    return (labels[u] != labels[v]).astype(float)


def fractional_cost(instance: CCInstance, x: np.ndarray) -> float:
    """``sum w_plus * x + w_minus * (1 - x)`` for separation values ``x`` (one per pair)."""
    x = check_array("x", x, ndim=1, shape=(instance.n_pairs,))
    return float(instance.w_plus @ x + instance.w_minus @ (1.0 - x))


def cost(instance: CCInstance, labels: np.ndarray) -> float:
    """Cost of the clustering ``labels``: separated pairs pay ``w_plus``, joined pairs ``w_minus``."""
    return fractional_cost(instance, separation(instance, labels))


def disagreements(instance: CCInstance, labels: np.ndarray) -> np.ndarray:
    """Per-pair boolean: the clustering pays a positive cost on this pair.

    True for a separated pair with ``w_plus > 0`` or a joined pair with ``w_minus > 0``.
    """
    x = separation(instance, labels).astype(bool)
    return np.where(x, instance.w_plus > 0, instance.w_minus > 0)
