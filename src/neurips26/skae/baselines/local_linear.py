"""Piecewise (local) linear references and the state-space partition they share: the paper's
"k-means local-linear", "GMM local-linear" and "soft-gated GMM local-linear" rows (4 components, ridge
``1e-6``), and state-space k-means as a label-free basin identifier [ours].

* :class:`StateKMeans` — k-means on raw states (scikit-learn, seeded); ``assign(x)`` is the nearest
  centroid. As a basin identifier it plays the role a support family plays for the sparse KAE (its
  clusters can be scored with the same H(B|F)); it is also the partition of :class:`KMeansLocalLinear`.
* :class:`KMeansLocalLinear` — per cluster ``c``, ``x_{t+1} = A_c x_t + b_c`` fitted by ridge least squares
  on the pairs whose *start* lies in ``c``; the rollout re-assigns the predicted state every step.
* :class:`GMMLocalLinear` — the same with a full-covariance Gaussian mixture: hard (``soft=False``) uses the
  most probable component per step; soft-gated (``soft=True``) predicts ``Σ_c r_c(x)(A_c x + b_c)`` with the
  posterior responsibilities ``r_c`` (which sum to 1), the maps fitted jointly by one ridge least-squares
  problem on the gated features ``[r_c(x)·(x, 1)]_c`` (a mixture of linear experts) [ours: the paper names
  the row, not its fit]. On well-separated wells the posteriors are nearly 0 or 1, so it forecasts almost
  exactly like the hard row (measured on the Square four-well: largest difference 0.008 over 1,000 steps).

With one component every variant is :class:`~neurips26.skae.baselines.linear.DMD` with the same ``affine``
setting. The local maps are affine by default [ours: the paper does not say; a map that is linear about
the origin cannot hold a well away from it].
"""

from __future__ import annotations

import numpy as np

from neurips26.skae.baselines.base import (
    RIDGE,
    as_array,
    check_period,
    check_windows,
    check_x0,
    pairs,
    ridge_lstsq,
    with_bias,
)
from neurips26.validation import check_float, check_int, check_seed

#: The paper's component count for the local-linear rows.
COMPONENTS = 4
#: k-means restarts (scikit-learn keeps the best inertia) [ours].
KMEANS_RESTARTS = 4


def _states(name: str, value: object, state_dim: int | None) -> np.ndarray:
    """States ``(n, d)`` from windows ``(B, L + 1, d)`` (all their states) or from states ``(n, d)``."""
    x = as_array(name, value)
    if x.ndim == 3:
        x = check_windows(x, state_dim).reshape(-1, x.shape[-1])
    if x.ndim != 2 or len(x) == 0 or (state_dim is not None and x.shape[1] != state_dim):
        raise ValueError(f"{name} must have shape (n, d) or (B, L + 1, d); got {as_array(name, value).shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return x


class StateKMeans:
    """k-means on states: ``fit(states or windows)``, ``assign(x)`` = index of the nearest centroid."""

    name = "state-space k-means"

    def __init__(self, count: int = COMPONENTS, *, seed: int = 0, restarts: int = KMEANS_RESTARTS) -> None:
        self.count = check_int("count", count, minimum=1)
        self.seed = check_seed("seed", seed)
        self.restarts = check_int("restarts", restarts, minimum=1)
        self.centers: np.ndarray | None = None

    def fit(self, states: object) -> StateKMeans:
        from sklearn.cluster import KMeans

        x = _states("states", states, None)
        if len(x) < self.count:
            raise ValueError(f"count must be <= the number of states {len(x)}; got {self.count}")
        km = KMeans(n_clusters=self.count, n_init=self.restarts, random_state=self.seed).fit(x)
        self.centers = km.cluster_centers_.astype(np.float64)
        return self

    def assign(self, x: object) -> np.ndarray:
        """Nearest-centroid labels of states ``(..., d)`` (int64); non-finite states get label 0."""
        if self.centers is None:
            raise RuntimeError("StateKMeans is not fitted; call fit(states) first")
        x = as_array("x", x)
        if x.shape[-1:] != self.centers.shape[1:]:
            raise ValueError(f"x must have shape (..., {self.centers.shape[1]}); got {x.shape}")
        with np.errstate(over="ignore", invalid="ignore"):
            sq = ((x[..., None, :] - self.centers) ** 2).sum(-1)
        return np.argmin(np.where(np.isnan(sq), np.inf, sq), axis=-1)


class _LocalLinear:
    """Shared fit/rollout of the hard-partition variants: one affine (or linear) map per component."""

    name = "local-linear"
    relifts = False  # re-assigned every step: a period changes nothing

    def __init__(self, state_dim: int, components: int, ridge: float, affine: bool, seed: int) -> None:
        self.state_dim = check_int("state_dim", state_dim, minimum=1)
        self.components = check_int("components", components, minimum=1)
        self.ridge = check_float("ridge", ridge, minimum=0.0)
        self.affine = bool(affine)
        self.seed = check_seed("seed", seed)
        self.maps: np.ndarray | None = None  # (C, d [+ 1], d): x_{t+1} = [x, 1] @ maps[c]

    def features(self, x: np.ndarray) -> np.ndarray:
        return with_bias(x) if self.affine else x

    def _fit_partition(self, x: np.ndarray) -> None:
        raise NotImplementedError

    def labels(self, x: np.ndarray) -> np.ndarray:
        """The component of each state ``(N, d)``."""
        raise NotImplementedError

    def fit(self, windows: object):
        x, y = pairs(check_windows(windows, self.state_dim))
        self._fit_partition(x)
        lab = self.labels(x)
        p = x.shape[1] + int(self.affine)
        self.maps = np.zeros((self.components, p, self.state_dim))
        for c in range(self.components):
            rows = lab == c
            if rows.any():  # an empty component keeps the zero map and is never visited on training data
                self.maps[c] = ridge_lstsq(self.features(x[rows]), y[rows], self.ridge)
        return self

    def step(self, x: np.ndarray) -> np.ndarray:
        """One step: each state moves by the map of its own component."""
        if self.maps is None:
            raise RuntimeError(f"{self.name} is not fitted; call fit(windows) first")
        with np.errstate(over="ignore", invalid="ignore"):
            return np.einsum("np,npq->nq", self.features(x), self.maps[self.labels(x)])

    def predict(self, x0: object, horizon: int, *, period: int | None = None) -> np.ndarray:
        """``x̂_1..x̂_H`` from ``x0`` ``(N, d)``, re-assigned every step; ``period`` has no effect."""
        x = check_x0(x0, self.state_dim)
        horizon = check_int("horizon", horizon, minimum=1)
        check_period(period)
        out = np.empty((len(x), horizon, self.state_dim))
        for t in range(horizon):
            x = self.step(x)
            out[:, t] = x
        return out


class KMeansLocalLinear(_LocalLinear):
    """k-means partition of the pairs' start states; one ridge least-squares map per cluster."""

    name = "k-means local-linear"

    def __init__(
        self,
        state_dim: int,
        *,
        components: int = COMPONENTS,
        ridge: float = RIDGE,
        affine: bool = True,
        seed: int = 0,
    ) -> None:
        super().__init__(state_dim, components, ridge, affine, seed)
        self.partition = StateKMeans(self.components, seed=self.seed)

    def _fit_partition(self, x: np.ndarray) -> None:
        self.partition.fit(x)

    def labels(self, x: np.ndarray) -> np.ndarray:
        return self.partition.assign(x)


class GMMLocalLinear(_LocalLinear):
    """Gaussian-mixture partition (full covariances); hard argmax routing or soft-gated experts."""

    def __init__(
        self,
        state_dim: int,
        *,
        components: int = COMPONENTS,
        soft: bool = False,
        ridge: float = RIDGE,
        affine: bool = True,
        seed: int = 0,
    ) -> None:
        super().__init__(state_dim, components, ridge, affine, seed)
        self.soft = bool(soft)
        self.name = "soft-gated GMM local-linear" if self.soft else "GMM local-linear"
        self.gmm = None

    def _fit_partition(self, x: np.ndarray) -> None:
        from sklearn.mixture import GaussianMixture

        if len(x) < self.components:
            raise ValueError(
                f"components must be <= the number of training pairs {len(x)}; got {self.components}"
            )
        self.gmm = GaussianMixture(self.components, covariance_type="full", random_state=self.seed).fit(x)

    def responsibilities(self, x: object) -> np.ndarray:
        """Posterior ``r_c(x)``, shape ``(N, C)``, rows summing to 1; NaN rows for non-finite states."""
        if self.gmm is None:
            raise RuntimeError(f"{self.name} is not fitted; call fit(windows) first")
        x = as_array("x", x)
        if x.ndim != 2 or x.shape[1] != self.state_dim:
            raise ValueError(f"x must have shape (N, state_dim={self.state_dim}); got {x.shape}")
        r = np.full((len(x), self.components), np.nan)
        finite = np.isfinite(x).all(axis=1)
        if finite.any():
            r[finite] = _posterior(self.gmm, x[finite])
        return r

    def labels(self, x: np.ndarray) -> np.ndarray:
        r = self.responsibilities(x)
        return np.argmax(np.where(np.isnan(r), -np.inf, r), axis=1)

    def gated(self, x: np.ndarray) -> np.ndarray:
        """The soft model's features ``[r_c(x)·φ(x)]_c``, shape ``(N, C·p)``."""
        r = self.responsibilities(x)
        phi = self.features(x)
        with np.errstate(over="ignore", invalid="ignore"):
            return (r[:, :, None] * phi[:, None, :]).reshape(len(x), -1)

    def fit(self, windows: object) -> GMMLocalLinear:
        if not self.soft:
            return super().fit(windows)
        x, y = pairs(check_windows(windows, self.state_dim))
        self._fit_partition(x)
        w = ridge_lstsq(self.gated(x), y, self.ridge)
        self.maps = w.reshape(self.components, -1, self.state_dim)
        return self

    def step(self, x: np.ndarray) -> np.ndarray:
        if not self.soft:
            return super().step(x)
        if self.maps is None:
            raise RuntimeError(f"{self.name} is not fitted; call fit(windows) first")
        with np.errstate(over="ignore", invalid="ignore"):
            return self.gated(x) @ self.maps.reshape(-1, self.state_dim)


def _posterior(gmm: object, x: np.ndarray) -> np.ndarray:
    """``gmm.predict_proba(x)`` for a checked float64 array ``x``, without sklearn's per-call input
    validation (half the cost of a rollout step of the soft model, which asks once per state and step);
    the same computation, so the same bits (``tests/unit/skae/test_baselines.py``). Falls back to
    ``predict_proba`` on a scikit-learn without the private method."""
    estimate = getattr(gmm, "_estimate_log_prob_resp", None)
    if estimate is None:
        return gmm.predict_proba(x)
    return np.exp(estimate(np.ascontiguousarray(x, dtype=np.float64))[1])
