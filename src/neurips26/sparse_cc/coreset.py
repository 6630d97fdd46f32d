"""Edge-sampling coresets: importance samples of ``Z = P x {+, -}`` that estimate every clustering's cost.

With ``w(uv, +) = w_plus_uv``, ``w(uv, -) = w_minus_uv`` and the disagreement indicator ``h_C`` of
:mod:`~neurips26.sparse_cc.vc`, the cost is a weighted sum over the domain (eq. C)

    cost(C) = sum_z w(z) h_C(z),        W = sum_z w(z).

A coreset is ``S`` samples ``z_i`` with importance weights ``omega_i``; ``sum_i omega_i h_C(z_i)`` is an
unbiased estimate of ``cost(C)`` for every ``C``. The ``"weighted"`` scheme draws ``z ~ w(z) / W`` and
sets ``omega = W / S``; because the class ``{h_C}`` has VC dimension ``n - 1``, the error is at most
``eps W`` uniformly over all clusterings once ``S = O~(n / eps^2)`` (an additive ``eps``-coreset). The
``"uniform"`` scheme (the equal-budget baseline) draws ``z`` uniformly over the ``2P`` points and sets
``omega = (2P / S) w(z)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.sparse_cc.cost import check_labels
from neurips26.sparse_cc.instances import CCInstance, pair_matrix
from neurips26.sparse_cc.lp import LPResult, metric_lp
from neurips26.sparse_cc.pivot import ROUNDING_RULES, PivotResult, lp_pivot
from neurips26.sparse_cc.witness import IMPUTE_RULES, Imputation, impute
from neurips26.validation import check_array, check_choice, check_int, check_seed

SCHEMES = ("weighted", "uniform")


@dataclass(frozen=True)
class Coreset:
    """``S`` sampled domain points ``(pair[i], "+" if sign[i] else "-")`` with importance ``weight[i]``.

    ``W`` is the instance's total weight ``sum_uv w_plus + w_minus`` and ``n`` its number of items.
    """

    pair: np.ndarray
    sign: np.ndarray
    weight: np.ndarray
    scheme: str
    W: float
    S: int
    n: int

    def __post_init__(self) -> None:
        check_choice("scheme", self.scheme, SCHEMES)
        n = check_int("n", self.n, minimum=2)
        S = check_int("S", self.S, minimum=1)
        P = n * (n - 1) // 2
        pair = check_array("pair", self.pair, ndim=1, shape=(S,))
        if pair.dtype.kind not in "iu" or pair.min() < 0 or pair.max() >= P:
            raise ValueError(f"pair must hold integer pair indices in [0, {P - 1}]")
        sign = check_array("sign", self.sign, ndim=1, shape=(S,))
        if sign.dtype != bool:
            raise TypeError(f"sign must be a boolean array (True = '+'); got dtype {sign.dtype}")
        weight = check_array("weight", self.weight, ndim=1, shape=(S,))
        if np.any(weight < 0):
            raise ValueError("weight must be non-negative")


def _domain_weights(instance: CCInstance) -> np.ndarray:
    """``w(z)`` over the ``2P`` domain points: the ``P`` "+" weights, then the ``P`` "-" weights."""
    return np.concatenate([instance.w_plus, instance.w_minus])


def _check_instance(instance: object) -> CCInstance:
    if not isinstance(instance, CCInstance):
        raise TypeError(f"instance must be a CCInstance; got {type(instance).__name__}")
    return instance


def sample_coreset(instance: CCInstance, S: int, seed: int, scheme: str = "weighted") -> Coreset:
    """Draw ``S`` i.i.d. domain points by ``scheme`` and attach their importance weights (eq. C)."""
    instance = _check_instance(instance)
    S = check_int("S", S, minimum=1)
    scheme = check_choice("scheme", scheme, SCHEMES)
    rng = np.random.default_rng(check_seed("seed", seed))
    w = _domain_weights(instance)
    W = float(w.sum())
    P = instance.n_pairs
    if scheme == "weighted":
        if W <= 0:
            raise ValueError("instance has total weight 0: nothing to sample in proportion to")
        # z ~ w(z) / W, each sample standing for W / S of the total weight
        z = rng.choice(2 * P, size=S, p=w / W)
        weight = np.full(S, W / S)
    else:
        # z uniform over the 2P points: E[(2P / S) w(z) h(z)] summed over S draws = sum_z w(z) h(z)
        z = rng.integers(0, 2 * P, size=S)
        weight = (2 * P / S) * w[z]
    z = z.astype(np.int64)
    return Coreset(pair=z % P, sign=z < P, weight=weight, scheme=scheme, W=W, S=S, n=instance.n)


def _check_labels_matrix(n: int, labels: object) -> np.ndarray:
    labels = check_array("labels", labels, ndim=2, shape=(None, n))
    if labels.dtype.kind not in "iu":
        raise TypeError(f"labels must hold integers; got dtype {labels.dtype}")
    return labels


def estimate_costs(coreset: Coreset, labels: np.ndarray) -> np.ndarray:
    """``sum_i weight_i h_C(z_i)`` for each clustering ``C`` (rows of the ``(k, n)`` ``labels``)."""
    if not isinstance(coreset, Coreset):
        raise TypeError(f"coreset must be a Coreset; got {type(coreset).__name__}")
    labels = _check_labels_matrix(coreset.n, labels)
    u, v = np.triu_indices(coreset.n, 1)
    x = labels[:, u[coreset.pair]] != labels[:, v[coreset.pair]]  # (k, S) separation of sampled pairs
    # h(uv, +) = x and h(uv, -) = 1 - x, i.e. h = 1 exactly when x equals the sign
    return (x == coreset.sign[None, :]).astype(float) @ coreset.weight


def estimate_cost(coreset: Coreset, labels: np.ndarray) -> float:
    """The coreset estimate ``sum_i weight_i h_C(z_i)`` of ``cost(C)`` for one clustering ``labels``."""
    if not isinstance(coreset, Coreset):
        raise TypeError(f"coreset must be a Coreset; got {type(coreset).__name__}")
    labels = check_labels(coreset.n, labels)
    return float(estimate_costs(coreset, labels[None, :])[0])


def exact_costs(instance: CCInstance, labels: np.ndarray) -> np.ndarray:
    """``cost(C)`` for each row of the ``(k, n)`` ``labels`` (vectorised :func:`~.cost.cost`)."""
    instance = _check_instance(instance)
    labels = _check_labels_matrix(instance.n, labels)
    u, v = np.triu_indices(instance.n, 1)
    x = (labels[:, u] != labels[:, v]).astype(float)
    return x @ instance.w_plus + (1.0 - x) @ instance.w_minus


def _canonical(labels: np.ndarray) -> np.ndarray:
    """Relabel each row so clusters are numbered 0, 1, ... in order of first appearance."""
    out = np.empty_like(labels)
    for r, row in enumerate(labels):
        _, first, inverse = np.unique(row, return_index=True, return_inverse=True)
        rank = np.argsort(np.argsort(first))
        out[r] = rank[inverse]
    return out


def _random_labels(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """``k`` random clusterings, each with a uniform number of clusters in ``1..n`` and uniform labels."""
    n_clusters = rng.integers(1, n + 1, size=(k, 1))
    return np.floor(rng.random((k, n)) * n_clusters).astype(np.int64)


def local_search(instance: CCInstance, labels: np.ndarray, max_moves: int = 10_000) -> np.ndarray:
    """Best-improvement single-vertex moves from ``labels`` until no move lowers the cost.

    Moving ``v`` into cluster ``c`` costs ``sum_{u != v} w_plus_uv + G[v, c]`` with
    ``G[v, c] = sum_{u in c} (w_minus_uv - w_plus_uv)``; an empty cluster has ``G = 0``. ``G`` is kept
    up to date in ``O(n)`` per move, so each move costs one ``O(n^2)`` argmin.
    """
    instance = _check_instance(instance)
    n = instance.n
    lab = check_labels(n, labels).astype(np.int64).copy()
    max_moves = check_int("max_moves", max_moves, minimum=0)
    D = pair_matrix(n, instance.w_minus - instance.w_plus)  # zero diagonal
    # n cluster slots: with at most n clusters there is always an empty slot unless all are singletons
    _, lab = np.unique(lab, return_inverse=True)
    member = np.zeros((n, n))
    member[np.arange(n), lab] = 1.0
    G = D @ member
    rows = np.arange(n)
    for _ in range(max_moves):
        best = G.argmin(axis=1)
        gain = G[rows, lab] - G[rows, best]
        v = int(gain.argmax())
        if gain[v] <= 1e-12:
            break
        a, b = lab[v], best[v]
        G[:, a] -= D[:, v]
        G[:, b] += D[:, v]
        lab[v] = b
    return _canonical(lab[None, :])[0]


def clustering_pool(
    instance: CCInstance,
    *,
    n_random: int,
    seed: int,
    planted: np.ndarray | None = None,
    n_local: int = 10,
) -> np.ndarray:
    """A ``(k, n)`` pool of clusterings to test a coreset on, in canonical labels.

    Rows: ``n_random`` random clusterings (uniform number of clusters, uniform labels), ``planted`` if
    given, all-singletons, all-in-one, and ``n_local`` local-search optima (:func:`local_search`) from
    random starts. Rows may repeat.
    """
    instance = _check_instance(instance)
    n = instance.n
    n_random = check_int("n_random", n_random, minimum=0)
    n_local = check_int("n_local", n_local, minimum=0)
    rng = np.random.default_rng(check_seed("seed", seed))
    parts = [_random_labels(rng, n, n_random)]
    if planted is not None:
        parts.append(check_labels(n, planted).astype(np.int64)[None, :])
    parts.append(np.arange(n, dtype=np.int64)[None, :])
    parts.append(np.zeros((1, n), dtype=np.int64))
    starts = _random_labels(rng, n, n_local)
    parts.append(np.array([local_search(instance, s) for s in starts]).reshape(n_local, n))
    return _canonical(np.concatenate(parts))


def sup_error(instance: CCInstance, coreset: Coreset, pool: np.ndarray) -> float:
    """``max_C |estimate(C) - cost(C)| / W`` over the clusterings ``C`` in ``pool`` (the additive error)."""
    instance = _check_instance(instance)
    if not isinstance(coreset, Coreset):
        raise TypeError(f"coreset must be a Coreset; got {type(coreset).__name__}")
    if coreset.n != instance.n or not np.isclose(coreset.W, float(_domain_weights(instance).sum())):
        raise ValueError("coreset was not drawn from this instance (n or total weight W differ)")
    if coreset.W <= 0:
        return 0.0
    err = np.abs(estimate_costs(coreset, pool) - exact_costs(instance, pool))
    return float(err.max() / coreset.W) if err.size else 0.0


def coreset_instance(instance: CCInstance, coreset: Coreset) -> tuple[CCInstance, np.ndarray]:
    """The importance-weighted sparse instance of a coreset and its sorted distinct pairs ``E``.

    ``w~+_uv`` sums the weights of the "+" samples of ``uv`` and ``w~-_uv`` those of its "-" samples
    (zero on unsampled pairs), so its cost at any ``x`` equals the coreset estimate at ``x``; the metric
    LP on ``(w~, E)`` is the coreset LP.
    """
    instance = _check_instance(instance)
    if not isinstance(coreset, Coreset):
        raise TypeError(f"coreset must be a Coreset; got {type(coreset).__name__}")
    if coreset.n != instance.n:
        raise ValueError(f"coreset has n = {coreset.n} but the instance has n = {instance.n}")
    P = instance.n_pairs
    w_plus = np.bincount(coreset.pair, weights=coreset.weight * coreset.sign, minlength=P)
    w_minus = np.bincount(coreset.pair, weights=coreset.weight * ~coreset.sign, minlength=P)
    return CCInstance(n=instance.n, w_plus=w_plus, w_minus=w_minus), np.unique(coreset.pair)


@dataclass(frozen=True)
class CoresetLPPivotResult:
    """A coreset LP run: the sample, its LP on ``E``, the imputation and the pivot runs.

    Same ``lp``/``imputation``/``pivot`` fields as :class:`~.pivot.SparseLPPivotResult`.
    """

    coreset: Coreset
    lp: LPResult
    imputation: Imputation
    pivot: PivotResult


def coreset_lp_pivot(
    instance: CCInstance,
    S: int,
    seed: int,
    *,
    scheme: str = "weighted",
    rule: str = "upper",
    rounding: str = "acn",
    runs: int = 1,
    cutting_plane: bool = True,
    pivot_seed: int | None = None,
) -> CoresetLPPivotResult:
    """Coreset LP baseline: sample ``S`` points, solve the reweighted LP on their pairs, impute, pivot.

    The marginals on ``E`` come from the importance-weighted instance (:func:`coreset_instance`); the
    unseen pairs are imputed by the triangle witnesses and LP-PIVOT's cost is measured on the ORIGINAL
    instance. ``pivot_seed`` defaults to ``seed`` (the same pivot randomness as
    :func:`~.pivot.sparse_lp_pivot` with that seed).
    """
    instance = _check_instance(instance)
    rule = check_choice("rule", rule, IMPUTE_RULES)
    rounding = check_choice("rounding", rounding, ROUNDING_RULES)
    runs = check_int("runs", runs, minimum=1)
    pivot_seed = seed if pivot_seed is None else check_seed("pivot_seed", pivot_seed)
    coreset = sample_coreset(instance, S, seed, scheme=scheme)
    tilde, E = coreset_instance(instance, coreset)
    lp = metric_lp(tilde, E, cutting_plane=cutting_plane)
    imputation = impute(instance.n, E, lp.x, rule=rule)
    pivot = lp_pivot(instance, imputation.x_hat, rounding=rounding, runs=runs, seed=pivot_seed)
    return CoresetLPPivotResult(coreset=coreset, lp=lp, imputation=imputation, pivot=pivot)
