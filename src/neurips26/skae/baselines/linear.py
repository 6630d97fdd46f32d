"""Global linear references: DMD and EDMD with a polynomial or radial-basis dictionary (the paper's
standalone rows "DMD", "poly EDMD" and "RBF EDMD"; ridge ``1e-6``).

* DMD (Schmid 2010; exact-DMD least squares): ``x_{t+1} = A x_t`` (``affine=True`` adds ``+ b`` [ours,
  optional]) fitted on every adjacent pair of the training windows.
* EDMD (Williams et al. 2015): lift ``ψ(x)``, fit ``ψ(x_{t+1}) ≈ ψ(x_t) K`` (row vectors, so ``K`` is the
  transpose of the column-convention matrix), roll ``ψ_{t+1} = ψ_t K`` and read ``x̂`` off the dictionary's
  identity coordinates (every dictionary here contains ``x`` itself, so the read-out is exact, not a
  regression). ``period=m`` re-lifts the read-out every ``m`` steps, the EDMD analogue of re-encoding.

Dictionaries: :class:`PolynomialDictionary` — ``1`` and every monomial of total degree ``1..degree`` (the
paper's degree 3: 10 features in 2-D); :class:`RBFDictionary` — ``1``, ``x`` and ``centers`` Gaussian bumps
``exp(−γ‖x − c_i‖²)`` (the paper's 128 centres, "data-derived gamma and the implementation default as
fallback", its experimental-details appendix). How the centres and γ are derived is not spelled out; ours:
the centres are k-means centroids of the training states (seeded) and γ is the median heuristic
(:func:`median_gamma`), ``1 / d`` (scikit-learn's default) when that is degenerate.
"""

from __future__ import annotations

from itertools import combinations_with_replacement

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

#: The paper's polynomial degree and RBF centre count.
POLY_DEGREE = 3
RBF_CENTERS = 128
#: States drawn (seeded) for the median-heuristic γ.
GAMMA_SAMPLE = 1000


class DMD:
    """``x_{t+1} = A x_t (+ b)``, least squares with ridge over all adjacent pairs of the windows."""

    name = "DMD"
    relifts = False  # no lift to refresh: a period changes nothing

    def __init__(self, state_dim: int, *, ridge: float = RIDGE, affine: bool = False) -> None:
        self.state_dim = check_int("state_dim", state_dim, minimum=1)
        self.ridge = check_float("ridge", ridge, minimum=0.0)
        self.affine = bool(affine)
        self.A: np.ndarray | None = None
        self.b: np.ndarray | None = None

    def fit(self, windows: object) -> DMD:
        x, y = pairs(check_windows(windows, self.state_dim))
        w = ridge_lstsq(with_bias(x) if self.affine else x, y, self.ridge)
        d = self.state_dim
        self.A = w[:d].T.copy()
        self.b = w[d].copy() if self.affine else np.zeros(d)
        return self

    def step(self, x: np.ndarray) -> np.ndarray:
        """One step of the fitted map on states ``(N, d)``."""
        if self.A is None:
            raise RuntimeError("DMD is not fitted; call fit(windows) first")
        with np.errstate(over="ignore", invalid="ignore"):
            return x @ self.A.T + self.b

    def predict(self, x0: object, horizon: int, *, period: int | None = None) -> np.ndarray:
        """``x̂_1..x̂_H`` from ``x0`` ``(N, d)``: ``(N, H, d)``; ``period`` has no effect (no lift)."""
        x = check_x0(x0, self.state_dim)
        horizon = check_int("horizon", horizon, minimum=1)
        check_period(period)
        out = np.empty((len(x), horizon, self.state_dim))
        for t in range(horizon):
            x = self.step(x)
            out[:, t] = x
        return out


class PolynomialDictionary:
    """``ψ(x) = [1, monomials of total degree 1..degree]``; coordinates ``1..d`` are ``x`` itself."""

    def __init__(self, degree: int = POLY_DEGREE) -> None:
        self.degree = check_int("degree", degree, minimum=1)
        self.terms: list[tuple[int, ...]] | None = None

    def fit(self, states: np.ndarray) -> PolynomialDictionary:
        d = states.shape[1]
        self.terms = [
            t for k in range(1, self.degree + 1) for t in combinations_with_replacement(range(d), k)
        ]
        return self

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if self.terms is None:
            raise RuntimeError("the dictionary is not fitted")
        with np.errstate(over="ignore", invalid="ignore"):
            columns = [np.ones(len(x))] + [np.prod(x[:, list(t)], axis=1) for t in self.terms]
        return np.stack(columns, axis=1)


def median_gamma(states: np.ndarray, *, seed: int = 0, sample: int = GAMMA_SAMPLE) -> float:
    """The median heuristic ``γ = 1 / median_{i<j} ‖x_i − x_j‖²`` over a seeded subsample of ``sample``
    states; ``1 / d`` (scikit-learn's default RBF γ) if that median is 0."""
    rng = np.random.default_rng(check_seed("seed", seed))
    x = states if len(states) <= sample else states[rng.choice(len(states), sample, replace=False)]
    sq = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)[np.triu_indices(len(x), k=1)]
    median = float(np.median(sq)) if sq.size else 0.0
    return 1.0 / median if median > 0.0 else 1.0 / states.shape[1]


class RBFDictionary:
    """``ψ(x) = [1, x, exp(−γ‖x − c_i‖²)_{i=1..centers}]`` with k-means centres and median-heuristic γ."""

    def __init__(self, centers: int = RBF_CENTERS, *, seed: int = 0) -> None:
        self.count = check_int("centers", centers, minimum=1)
        self.seed = check_seed("seed", seed)
        self.centers: np.ndarray | None = None
        self.gamma: float | None = None

    def fit(self, states: np.ndarray) -> RBFDictionary:
        from sklearn.cluster import KMeans

        if len(states) < self.count:
            raise ValueError(f"centers must be <= the {len(states)} training states; got {self.count}")
        km = KMeans(n_clusters=self.count, n_init=1, random_state=self.seed).fit(states)
        self.centers = km.cluster_centers_.astype(np.float64)
        self.gamma = median_gamma(states, seed=self.seed)
        return self

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if self.centers is None:
            raise RuntimeError("the dictionary is not fitted")
        with np.errstate(over="ignore", invalid="ignore"):
            sq = ((x[:, None, :] - self.centers[None]) ** 2).sum(-1)
            return np.concatenate([np.ones((len(x), 1)), x, np.exp(-self.gamma * sq)], axis=1)


class EDMD:
    """EDMD on a dictionary containing ``x`` (module docstring); ``K`` is ``(p, p)``, row convention."""

    def __init__(
        self,
        state_dim: int,
        dictionary: PolynomialDictionary | RBFDictionary,
        *,
        ridge: float = RIDGE,
        name: str = "EDMD",
    ) -> None:
        self.state_dim = check_int("state_dim", state_dim, minimum=1)
        if not isinstance(dictionary, PolynomialDictionary | RBFDictionary):
            raise TypeError(
                f"dictionary must be a PolynomialDictionary or RBFDictionary; got {type(dictionary).__name__}"
            )
        self.dictionary = dictionary
        self.ridge = check_float("ridge", ridge, minimum=0.0)
        self.name = name
        self.K: np.ndarray | None = None

    def lift(self, x: object) -> np.ndarray:
        """``ψ(x)`` for states ``(N, d)``: ``(N, p)``."""
        return self.dictionary(as_array("x", x))

    def readout(self, psi: np.ndarray) -> np.ndarray:
        """``x`` from lifted states: the identity coordinates ``1..d`` of the dictionary."""
        return psi[:, 1 : 1 + self.state_dim]

    def fit(self, windows: object) -> EDMD:
        x, y = pairs(check_windows(windows, self.state_dim))
        self.dictionary.fit(x)
        self.K = ridge_lstsq(self.dictionary(x), self.dictionary(y), self.ridge)
        return self

    def predict(self, x0: object, horizon: int, *, period: int | None = None) -> np.ndarray:
        """``x̂_1..x̂_H`` from ``x0``; re-lift the read-out every ``period`` steps if given."""
        if self.K is None:
            raise RuntimeError(f"{self.name} is not fitted; call fit(windows) first")
        x = check_x0(x0, self.state_dim)
        horizon = check_int("horizon", horizon, minimum=1)
        period = check_period(period)
        psi = self.dictionary(x)
        out = np.empty((len(x), horizon, self.state_dim))
        with np.errstate(over="ignore", invalid="ignore"):
            for t in range(1, horizon + 1):
                psi = psi @ self.K
                out[:, t - 1] = self.readout(psi)
                if period is not None and t % period == 0 and t < horizon:
                    psi = self.dictionary(out[:, t - 1])
        return out


def poly_edmd(state_dim: int, *, degree: int = POLY_DEGREE, ridge: float = RIDGE) -> EDMD:
    """The paper's polynomial EDMD row (degree 3)."""
    return EDMD(state_dim, PolynomialDictionary(degree), ridge=ridge, name="poly EDMD")


def rbf_edmd(state_dim: int, *, centers: int = RBF_CENTERS, ridge: float = RIDGE, seed: int = 0) -> EDMD:
    """The paper's RBF-dictionary EDMD row (128 centres)."""
    return EDMD(state_dim, RBFDictionary(centers, seed=seed), ridge=ridge, name="RBF EDMD")
