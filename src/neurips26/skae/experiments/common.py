"""What every claim runner of chapter 04 shares: the checkpointed models by table name, the evaluation sets
of a (system, seed), the evaluation basin labels, and the two cadence rules for any forecaster.

* :func:`load` — a model of :data:`~neurips26.skae.prepare.MODELS` at a checkpoint scale (the committed
  checkpoint when fresh, otherwise the registry's cached training:
  :func:`~neurips26.skae.prepare.pretrained`).
* :func:`evaluation_set` — the validation / test / alignment / routing trajectories of the model's data
  (:func:`~neurips26.skae.data.trajectories`, standardised on a flow).
* :func:`basin_reference` — the evaluation labels of a controlled system (paper §experiments: the
  endpoints of the alignment trajectories rolled ``roll_steps`` more steps, k-means at the known count;
  native labels on Local-linear gates), as centres plus a labelling function. Evaluation only.
* :class:`KAEForecaster` — a KAE (optionally with a custom latent step, e.g. a routed one) behind the
  baselines' ``predict`` protocol, so :func:`~neurips26.skae.baselines.forecast_table` scores every row alike.
* :func:`cadence_rules` — the paper's best-periodic MSE (the minimum over the period grid on the test starts
  themselves) and our frozen cadence (the period picked on the disjoint validation starts), from one table
  per start set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
from torch import Tensor

from neurips26.cache import cached
from neurips26.scales import SCALES
from neurips26.skae.baselines import basin_labeler, forecast_table
from neurips26.skae.baselines.base import check_period, check_x0
from neurips26.skae.data import DataConfig, EvalConfig, Trajectories, prefetch_flow_sets, trajectories
from neurips26.skae.model import KAE
from neurips26.skae.prepare import MODEL_NAMES, PrepareConfig, model_spec, pretrained
from neurips26.skae.rollout import Forecast, mse_through, rollout, rollout_periods
from neurips26.skae.systems import make_system, proxy_centers
from neurips26.validation import check_choice, check_int, check_int_tuple

#: Steps the alignment endpoints are rolled before the k-means of the proxy labels (paper: 5,000).
ROLL_STEPS = 5000


def check_scale(name: str, value: object) -> str:
    """A checkpoint scale (one of :data:`~neurips26.scales.SCALES`), ``ValueError`` naming ``name``."""
    return check_choice(name, value, SCALES)


def check_grid(name: str, values: object) -> tuple[int, ...]:
    """A non-empty, strictly increasing tuple of positive ints (horizons, periods)."""
    return check_int_tuple(name, values, minimum=1)


def check_names(name: str, values: object, options: Sequence[str]) -> tuple[str, ...]:
    """A non-empty tuple of distinct choices from ``options``."""
    if not isinstance(values, tuple) or not values:
        raise ValueError(f"{name} must be a non-empty tuple; got {values!r}")
    for v in values:
        check_choice(name, v, tuple(options))
    if len(set(values)) != len(values):
        raise ValueError(f"{name} must not repeat entries; got {values}")
    return values


def model_name(row: str, system: str, seed: int) -> str:
    """``ROW-SYSTEM-sSEED``; ``ValueError`` naming ``model`` when that model is not in the table."""
    name = f"{row}-{system}-s{seed}"
    if name not in MODEL_NAMES:
        raise ValueError(f"model {name!r} is not in the chapter's model table (skae.prepare.MODELS)")
    return name


def load(row: str, system: str, seed: int, scale: str, *, verbose: bool = False) -> KAE:
    """The model ``row`` on ``system`` with ``seed`` at checkpoint ``scale``, in eval mode."""
    model, _ = pretrained(model_name(row, system, seed), scale, verbose=verbose)
    return model.eval()


def evaluation_set(system: str, seed: int, scale: str, evaluation: EvalConfig, split: str) -> Trajectories:
    """The ``split`` set of the models' data on ``system`` / ``seed`` (their training data's streams and
    standardisation, at the prepare sizes of ``scale``)."""
    return trajectories(_data_config(system, seed, scale), evaluation, split)


def _data_config(system: str, seed: int, scale: str) -> DataConfig:
    """The training data of the models on ``system`` / ``seed`` at the prepare sizes of ``scale``."""
    row = "lista" if f"lista-{system}-s{seed}" in MODEL_NAMES else "dense-mlp"
    return PrepareConfig.for_scale(scale).data(model_spec(model_name(row, system, seed)))


def prefetch_evaluation_sets(
    systems: Sequence[str], seeds: Sequence[int], scale: str, evaluation: EvalConfig
) -> None:
    """Roll the ``"val"``/``"test"`` sets (and standardisations) of the flows among ``systems`` × ``seeds``
    in one batch per flow (:func:`~neurips26.skae.data.prefetch_flow_sets`: the same sets, sooner)."""
    prefetch_flow_sets([_data_config(s, seed, scale) for s in systems for seed in seeds], evaluation)


@dataclass(frozen=True)
class BasinReference:
    """Evaluation centres ``(k, d)`` and the labelling function (native on Local-linear gates)."""

    centers: Tensor
    labeler: Callable[[Tensor], Tensor]

    def labels(self, x: object) -> np.ndarray:
        """The label of each state ``(..., d)`` as an int array."""
        x = torch.as_tensor(np.asarray(x, dtype=np.float64))
        flat = x.reshape(-1, x.shape[-1])
        return np.asarray(self.labeler(flat)).reshape(x.shape[:-1]).astype(np.int64)


@lru_cache(maxsize=32)
def basin_reference(
    system: str, seed: int, scale: str, evaluation: EvalConfig, roll_steps: int = ROLL_STEPS
) -> BasinReference:
    """The paper's proxy centres of ``system``: the endpoints of the ``"align-eval"`` trajectories rolled
    ``roll_steps`` steps, k-means at the known count (kept in memory per argument set)."""
    sys_ = make_system(system)
    if sys_.count is None:
        raise ValueError(f"system {system!r} has no basin count (a flow): no basin labels")
    roll_steps = check_int("roll_steps", roll_steps, minimum=0)
    ends = evaluation_set(system, seed, scale, evaluation, "align-eval").truth[:, -1]
    centers = proxy_centers(sys_, ends, roll_steps=roll_steps, seed=seed)
    return BasinReference(centers, basin_labeler(sys_, centers))


class KAEForecaster:
    """A KAE behind the baselines' protocol: ``predict(x0, horizon, period)`` is
    :func:`~neurips26.skae.rollout.rollout` (with ``step``, e.g. a routed latent step)."""

    def __init__(self, model: KAE, step: Callable[[Tensor], Tensor] | None = None) -> None:
        if not isinstance(model, KAE):
            raise TypeError(f"model must be a KAE; got {type(model).__name__}")
        self.model, self.step, self.state_dim = model, step, model.state_dim

    def fit(self, windows: object) -> KAEForecaster:  # the protocol's; a KAE is trained by prepare
        return self

    def predict(self, x0: object, horizon: int, *, period: int | None = None) -> np.ndarray:
        x = torch.as_tensor(check_x0(x0, self.state_dim), dtype=self.model.transition.K.dtype)
        return rollout(
            self.model, x.to(self.model.device), horizon, period=check_period(period), step=self.step
        )

    def predict_periods(
        self, x0: object, horizon: int, periods: Sequence[int | None]
    ) -> dict[int | None, np.ndarray]:
        """:meth:`predict` for every period of ``periods`` in one batch (:func:`rollout_periods`)."""
        x = torch.as_tensor(check_x0(x0, self.state_dim), dtype=self.model.transition.K.dtype)
        return rollout_periods(self.model, x.to(self.model.device), horizon, periods, step=self.step)


@dataclass(frozen=True)
class Cadence:
    """Both cadence rules at each horizon: ``best`` (paper: minimum over the grid on the test starts) and
    ``frozen`` (the period picked on validation starts, reported on the test starts), the periods used,
    and the starts that were not finite throughout (``diverged``, out of ``starts``)."""

    best: dict[int, float]
    best_period: dict[int, int]
    frozen: dict[int, float]
    frozen_period: dict[int, int]
    diverged: dict[int, int]
    starts: int


def _argmin_period(table: dict[tuple[int, int], Forecast], periods: Sequence[int], h: int) -> int:
    values = [table[(m, h)].mse for m in periods]
    return periods[int(np.argmin([v if np.isfinite(v) else np.inf for v in values]))]


def _joint_tables(
    forecaster: object,
    val: Trajectories,
    test: Trajectories,
    horizons: tuple[int, ...],
    periods: tuple[int, ...],
) -> tuple[dict[tuple[int, int], Forecast], dict[tuple[int, int], Forecast]]:
    """The validation and test tables of :func:`forecast_table` from one rollout of both start sets."""
    last = horizons[-1]
    if val.truth.shape[1] < last or test.truth.shape[1] < last:
        raise ValueError(f"val and test futures must reach the horizon {last}")
    n = val.starts.shape[0]
    predicted = forecaster.predict_periods(torch.cat([val.starts, test.starts]), last, periods)
    truth = torch.cat([val.truth[:, :last], test.truth[:, :last]]).numpy()
    tables: tuple[dict[tuple[int, int], Forecast], dict[tuple[int, int], Forecast]] = ({}, {})
    for m in periods:
        for part, rows in enumerate((slice(0, n), slice(n, None))):
            for h in horizons:
                tables[part][(m, h)] = mse_through(predicted[m][rows], truth[rows], h)
    return tables


def cadence_rules(
    forecaster: object,
    val: Trajectories,
    test: Trajectories,
    horizons: Sequence[int],
    periods: Sequence[int],
    *,
    best: bool = True,
) -> Cadence:
    """Both cadence rules for any forecaster (one rollout per period and start set to the last horizon).

    With ``best=False`` only the validation-picked periods are rolled on the test starts (the frozen rule
    alone, cheaper); ``best`` then equals ``frozen``.
    """
    horizons, periods = tuple(horizons), tuple(periods)
    if best and hasattr(forecaster, "predict_periods"):  # both start sets in one batched rollout
        val_table, test_table = _joint_tables(forecaster, val, test, horizons, periods)
    else:
        val_table = forecast_table(forecaster, val.starts, val.truth, horizons=horizons, periods=periods)
    chosen = {h: _argmin_period(val_table, periods, h) for h in horizons}
    if best:
        if not hasattr(forecaster, "predict_periods"):
            test_table = forecast_table(
                forecaster, test.starts, test.truth, horizons=horizons, periods=periods
            )
        best_period = {h: _argmin_period(test_table, periods, h) for h in horizons}
    else:
        test_table = {}
        for m in sorted(set(chosen.values())):
            hs = tuple(h for h in horizons if chosen[h] == m)
            test_table.update(forecast_table(forecaster, test.starts, test.truth, horizons=hs, periods=(m,)))
        best_period = chosen
    return Cadence(
        best={h: test_table[(best_period[h], h)].mse for h in horizons},
        best_period=best_period,
        frozen={h: test_table[(chosen[h], h)].mse for h in horizons},
        frozen_period=chosen,
        diverged={h: test_table[(chosen[h], h)].diverged for h in horizons},
        starts=int(test.starts.shape[0]),
    )


def run_cached(
    name: str,
    config: object,
    kind: type,
    compute: Callable[[object], object],
    *,
    use_cache: bool = True,
    verbose: bool = False,
) -> object:
    """One runner's entry: ``config`` must be a ``kind``; ``compute(config)`` through the results cache
    under ``name`` (keyed by the config and ``neurips26.skae``'s source), or directly when ``use_cache``
    is False."""
    if not isinstance(config, kind):
        article = "an" if kind.__name__[0] in "AEIOU" else "a"
        raise TypeError(f"config must be {article} {kind.__name__}; got {type(config).__name__}")
    if not use_cache:
        return compute(config)
    return cached(name, config, lambda: compute(config), package="neurips26.skae", verbose=verbose)
