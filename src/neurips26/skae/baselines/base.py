"""The common protocol of the chapter's baselines and the pieces every closed-form one shares.

Protocol (:class:`Forecaster`): ``fit(windows) -> self`` on a batch of stored windows ``x_{b,0..L}`` of
shape ``(B, L + 1, d)`` (what :mod:`neurips26.skae.systems` produces with ``trajectories``), and
``predict(x0, horizon, period=None)`` returning the forecasts ``x̂_1..x̂_H`` of shape ``(N, H, d)`` as
float64 NumPy, non-finite values kept, exactly like :func:`neurips26.skae.rollout.rollout`. So
:func:`~neurips26.skae.rollout.mse_through` and the chapter's other metrics apply to every row alike.
``period`` re-lifts (re-encodes) the model's own prediction every ``period`` steps where the model has a
lift distinct from the state (EDMD, the KAE rows); for a model that lives in state space it has no effect.

Least squares: :func:`ridge_lstsq` minimises ``‖ΦW − Y‖²_F / n + ridge ‖W‖²_F`` by an ordinary
least-squares solve of the stacked system ``[Φ; √(n·ridge) I] W = [Y; 0]`` (SciPy's ``lstsq``), never by
forming the normal equations, so ``ridge = 0`` is exact least squares. The paper's references use ridge
``1e-6`` (:data:`RIDGE`); the exactness tests use 0, because a ridge biases the fit by design.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import scipy.linalg
import torch

from neurips26.skae.rollout import Forecast, mse_through
from neurips26.validation import check_float, check_int, check_int_tuple

#: Ridge of the paper's standalone references (its experimental-details appendix).
RIDGE = 1e-6


@runtime_checkable
class Forecaster(Protocol):
    """What every baseline offers: fit on windows, forecast from states by its own rollout."""

    state_dim: int

    def fit(self, windows: object) -> Forecaster: ...

    def predict(self, x0: object, horizon: int, *, period: int | None = None) -> np.ndarray: ...


def as_array(name: str, value: object) -> np.ndarray:
    """``value`` (a tensor or array-like of numbers) as a float64 NumPy array; ``TypeError`` otherwise."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().double().numpy()
    try:
        out = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be an array of real numbers; got {type(value).__name__}") from err
    return out


def check_windows(windows: object, state_dim: int | None = None) -> np.ndarray:
    """Finite windows of shape ``(B, L + 1 >= 2, d)`` as float64; ``d`` must be ``state_dim`` if given."""
    w = as_array("windows", windows)
    if w.ndim != 3 or w.shape[0] < 1 or w.shape[1] < 2 or (state_dim is not None and w.shape[2] != state_dim):
        d = "d" if state_dim is None else f"state_dim={state_dim}"
        raise ValueError(f"windows must have shape (B >= 1, L + 1 >= 2, {d}); got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError("windows must contain only finite values (no NaN or inf)")
    return w


def check_x0(x0: object, state_dim: int) -> np.ndarray:
    """Finite start states of shape ``(N, state_dim)`` as float64."""
    x = as_array("x0", x0)
    if x.ndim != 2 or x.shape[1] != state_dim or x.shape[0] < 1:
        raise ValueError(f"x0 must have shape (N >= 1, state_dim={state_dim}); got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("x0 must contain only finite values (no NaN or inf)")
    return x


def check_period(period: object) -> int | None:
    """``None`` (never re-lift) or a period ``>= 1``."""
    return None if period is None else check_int("period", period, minimum=1)


def pairs(windows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every adjacent pair ``(x_ℓ, x_{ℓ+1})`` of the windows, as two ``(B·L, d)`` arrays."""
    d = windows.shape[2]
    return windows[:, :-1].reshape(-1, d), windows[:, 1:].reshape(-1, d)


def with_bias(x: np.ndarray) -> np.ndarray:
    """``[x, 1]`` along the last axis (the affine column)."""
    return np.concatenate([x, np.ones((*x.shape[:-1], 1))], axis=-1)


def ridge_lstsq(
    features: np.ndarray, targets: np.ndarray, ridge: float, *, weights: np.ndarray | None = None
):
    """``W`` minimising ``Σ_i w_i ‖φ_i W − y_i‖² / Σ_i w_i + ridge ‖W‖²_F`` (``w_i = 1`` by default).

    ``features`` ``(n, p)``, ``targets`` ``(n, q)``; returns ``(p, q)``. Solved as one stacked least-squares
    problem (see the module docstring), so ``ridge = 0`` is the plain least-squares solution.
    """
    ridge = check_float("ridge", ridge, minimum=0.0)
    phi = np.asarray(features, dtype=np.float64)
    y = np.asarray(targets, dtype=np.float64)
    if phi.ndim != 2 or y.ndim != 2 or len(phi) != len(y) or len(phi) == 0:
        raise ValueError(f"features (n, p) and targets (n, q) must share n >= 1; got {phi.shape}, {y.shape}")
    if weights is None:
        total = float(len(phi))
    else:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (len(phi),) or np.any(w < 0) or not np.all(np.isfinite(w)):
            raise ValueError(f"weights must be finite, >= 0 and of shape ({len(phi)},); got shape {w.shape}")
        total = float(w.sum())
        root = np.sqrt(w)[:, None]
        phi, y = phi * root, y * root
    if ridge > 0.0:
        p = phi.shape[1]
        phi = np.concatenate([phi, np.sqrt(total * ridge) * np.eye(p)], axis=0)
        y = np.concatenate([y, np.zeros((p, y.shape[1]))], axis=0)
    solution, *_ = scipy.linalg.lstsq(phi, y, lapack_driver="gelsd")
    return solution


def forecast_table(
    forecaster: Forecaster,
    x0: object,
    truth: object,
    *,
    horizons: Sequence[int],
    periods: Sequence[int | None] = (None,),
) -> dict[tuple[int | None, int], Forecast]:
    """:class:`~neurips26.skae.rollout.Forecast` of every ``(period, horizon)`` for any baseline; one
    rollout per period to the largest horizon (the baselines' counterpart of ``rollout.cadence_table``).

    A forecaster with ``predict_periods(x0, horizon, periods)`` rolls all periods in one batch; one whose
    ``relifts`` is False (no lift to refresh: DMD, the local-linear maps) is rolled once for all periods."""
    horizons = check_int_tuple("horizons", tuple(horizons), minimum=1)
    y = as_array("truth", truth)
    if y.ndim != 3 or y.shape[1] < max(horizons):
        raise ValueError(f"truth must have shape (N, H >= {max(horizons)}, state_dim); got {y.shape}")
    periods = tuple(periods)
    if hasattr(forecaster, "predict_periods"):  # every period in one batched rollout
        predicted = forecaster.predict_periods(x0, max(horizons), periods)
    elif not getattr(forecaster, "relifts", True):  # the period has no effect: one rollout serves all
        once = forecaster.predict(x0, max(horizons))
        predicted = dict.fromkeys(periods, once)
    else:
        predicted = {m: forecaster.predict(x0, max(horizons), period=m) for m in periods}
    out = {}
    for m in periods:
        for h in horizons:
            out[(m, h)] = mse_through(predicted[m], y[:, : max(horizons)], h)
    return out
