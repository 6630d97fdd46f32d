"""The chapter's baselines, trained for real, behind one protocol (:class:`~.base.Forecaster`):
``fit(windows)`` on stored windows ``(B, L + 1, d)`` and ``predict(x0, horizon, period=None)`` returning
``(N, H, d)`` float64 forecasts, so :func:`neurips26.skae.rollout.mse_through` scores every row alike.

- :mod:`.linear` — DMD, polynomial EDMD (degree 3), RBF EDMD (128 centres); ridge 1e-6 (the paper's rows).
- :mod:`.local_linear` — k-means, GMM and soft-gated GMM local-linear (4 components; the paper's rows) and
  state-space k-means as a label-free basin identifier (ours).
- :mod:`.kae` — the consistent KAE (Azencot et al. 2020) and the oracle mixture of KAEs (ours).

:func:`make_baseline` builds the closed-form rows by key (:data:`CLOSED_FORM`).
"""

from __future__ import annotations

from collections.abc import Callable

from neurips26.skae.baselines.base import RIDGE, Forecaster, forecast_table, ridge_lstsq
from neurips26.skae.baselines.kae import (
    ConsistentKAE,
    ConsistentWeights,
    OracleMixture,
    basin_labeler,
    consistency_penalty,
    consistent_loss,
)
from neurips26.skae.baselines.linear import (
    DMD,
    EDMD,
    PolynomialDictionary,
    RBFDictionary,
    poly_edmd,
    rbf_edmd,
)
from neurips26.skae.baselines.local_linear import GMMLocalLinear, KMeansLocalLinear, StateKMeans
from neurips26.validation import check_choice

#: The paper's closed-form standalone references, by key: ``state_dim, seed -> unfitted forecaster``.
CLOSED_FORM: dict[str, Callable[[int, int], Forecaster]] = {
    "dmd": lambda d, seed: DMD(d),
    "poly-edmd": lambda d, seed: poly_edmd(d),
    "rbf-edmd": lambda d, seed: rbf_edmd(d, seed=seed),
    "kmeans-local-linear": lambda d, seed: KMeansLocalLinear(d, seed=seed),
    "gmm-local-linear": lambda d, seed: GMMLocalLinear(d, seed=seed),
    "soft-gmm-local-linear": lambda d, seed: GMMLocalLinear(d, soft=True, seed=seed),
}


def make_baseline(key: str, state_dim: int, *, seed: int = 0) -> Forecaster:
    """An unfitted closed-form baseline (one of :data:`CLOSED_FORM`) with the paper's settings."""
    return CLOSED_FORM[check_choice("key", key, tuple(CLOSED_FORM))](state_dim, seed)


__all__ = [
    "CLOSED_FORM",
    "DMD",
    "EDMD",
    "RIDGE",
    "ConsistentKAE",
    "ConsistentWeights",
    "Forecaster",
    "GMMLocalLinear",
    "KMeansLocalLinear",
    "OracleMixture",
    "PolynomialDictionary",
    "RBFDictionary",
    "StateKMeans",
    "basin_labeler",
    "consistency_penalty",
    "consistent_loss",
    "forecast_table",
    "make_baseline",
    "poly_edmd",
    "rbf_edmd",
    "ridge_lstsq",
]
