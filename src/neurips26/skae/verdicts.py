"""The criteria that decide the claims k1–k7 of chapter 04, built from the runners' results
(:mod:`neurips26.skae.experiments`), with the thresholds of the chapter's claims table fixed before any run.

Each function takes one result and returns its claim's criteria (:mod:`neurips26.criteria`); the claims
notebook passes them to :func:`~neurips26.criteria.decide` (k5: :func:`~neurips26.criteria.decide_over_seeds`
on the mapping seed → criteria that :func:`identity_criteria` returns).

* k1 :func:`forecast_criteria` — per cadence rule and sparse row: below Dense MLP (per-system IQM over seeds)
  on at least :data:`K1_SYSTEM_SHARE` of the systems (4 of 5) at each of the two longest horizons (H500,
  H1000), and Dense MLP's aggregate at the longest horizon ≥ :data:`K1_RATIO` (3) × the row's.
* k2 :func:`alignment_criteria` — per mode (transductive, held-out): LISTA's H(B|F) ≤ 0.5 nats, Dense MLP's
  at least 0.5 nats above it, Dense MLP ≤ 1.5 families seen.
* k3 :func:`sparsity_criteria` — Sparse MLP and LISTA within 3× of each other, Dense MLP ≥ 3× the larger.
* k4 :func:`routing_criteria` — per horizon: median local/global ratio < 1, local wins on > 50 % of the
  pairs, the random control's median ratio above the support router's.
* k5 :func:`identity_criteria` — per seed: dropping the top-1 coordinate raises the accumulated MSE ≥ 10×.
* k6 :func:`chaos_criteria` — sparse ≤ dense in at least half of the cells.
* k7 :func:`collapse_criteria` — asymptotic-basin accuracy: LISTA ≥ 0.7, Dense MLP ≤ 0.5.
"""

from __future__ import annotations

import math

import numpy as np

from neurips26.criteria import Criterion, above, at_least, at_most, below
from neurips26.skae.experiments.alignment import MODES, AlignmentResult, CollapseResult
from neurips26.skae.experiments.chaos import ChaosResult
from neurips26.skae.experiments.forecast import DENSE_ROW, RULES, SPARSE_ROWS, ForecastResult, SparsityResult
from neurips26.skae.experiments.identity import IdentityResult
from neurips26.skae.experiments.routing_runs import RoutingResult
from neurips26.skae.prepare import ROWS

#: k1: the share of systems a sparse row must beat Dense MLP on (4 of 5), and the aggregate ratio.
K1_SYSTEM_SHARE = 0.8
K1_RATIO = 3.0
#: k2: LISTA's H(B|F) ceiling, the gap below Dense MLP (nats), Dense MLP's families ceiling.
K2_ENTROPY = 0.5
K2_GAP = 0.5
K2_FAMILIES = 1.5
#: k3: the sparse rows' spread and their distance below Dense MLP.
K3_SPREAD = 3.0
K3_RATIO = 3.0
K3_ROWS = ("sparse-mlp", "lista")
#: k4: the median ratio ceiling and the win share floor.
K4_RATIO = 1.0
K4_WINS = 0.5
#: k5: the top-1 drop's ratio floor.
K5_RATIO = 10.0
#: k6: the share of cells the sparse row must not lose.
K6_SHARE = 0.5
#: k7: the accuracy floor of LISTA and ceiling of Dense MLP.
K7_LISTA = 0.7
K7_DENSE = 0.5

#: A cap that keeps an infinite ratio (a diverged denominator or numerator) a finite, failing value.
_CAP = 1e12


def _value(x: float) -> float:
    """``x`` as a criterion value: nan stays nan (a failed measurement), ±inf is capped at ±1e12."""
    x = float(x)
    return x if math.isnan(x) else float(np.clip(x, -_CAP, _CAP))


def _ratio(a: float, b: float) -> float:
    """``a / b`` with nan when either is nan or both are 0, ±1e12 when only ``b`` is 0 or infinite ``a``."""
    if math.isnan(a) or math.isnan(b):
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.float64(a) / np.float64(b)
    return _value(r)


def _check(result: object, cls: type) -> None:
    if not isinstance(result, cls):
        raise TypeError(f"result must be a {cls.__name__}; got {type(result).__name__}")


def forecast_criteria(result: ForecastResult, *, rules: tuple[str, ...] = RULES) -> list[Criterion]:
    """k1 (see the module): per rule and sparse row of the result, three criteria."""
    _check(result, ForecastResult)
    config = result.config
    if DENSE_ROW not in config.rows:
        raise ValueError(f"result must include the {DENSE_ROW!r} row, the reference of k1")
    sparse = [r for r in config.rows if r in SPARSE_ROWS]
    if not sparse:
        raise ValueError(f"result must include at least one sparse row of {SPARSE_ROWS}")
    n = len(config.systems)
    need = math.ceil(K1_SYSTEM_SHARE * n - 1e-9)
    longest = config.horizons[-2:]
    out = []
    for rule in rules:
        dense_sys = np.nan_to_num(result.per_system(DENSE_ROW, rule), nan=np.inf)
        dense_agg = result.aggregate(DENSE_ROW, rule)[-1]
        for row in sparse:
            label = ROWS[row].label
            mine = np.nan_to_num(result.per_system(row, rule), nan=np.inf)
            for h in longest:
                k = config.horizons.index(h)
                wins = int((mine[:, k] < dense_sys[:, k]).sum())
                out.append(
                    at_least(
                        f"{rule}: {label} below Dense MLP at H{h} on ≥ {need} of {n} systems", wins, need
                    )
                )
            ratio = _ratio(dense_agg, result.aggregate(row, rule)[-1])
            out.append(
                at_least(
                    f"{rule}: Dense MLP / {label} at H{config.horizons[-1]} ≥ {K1_RATIO:g}×", ratio, K1_RATIO
                )
            )
    return out


def alignment_criteria(result: AlignmentResult, *, modes: tuple[str, ...] = MODES) -> list[Criterion]:
    """k2 (see the module): per mode, three criteria on the aggregates over systems."""
    _check(result, AlignmentResult)
    for row in ("lista", DENSE_ROW):
        if row not in result.config.rows:
            raise ValueError(f"result must include the {row!r} row")
    out = []
    for mode in modes:
        lista = result.aggregate("entropy", mode, "lista")
        dense = result.aggregate("entropy", mode, DENSE_ROW)
        out += [
            at_most(f"{mode}: LISTA H(B|F) ≤ {K2_ENTROPY:g} nats", lista, K2_ENTROPY),
            at_least(f"{mode}: Dense MLP − LISTA H(B|F) ≥ {K2_GAP:g} nats", dense - lista, K2_GAP),
            at_most(
                f"{mode}: Dense MLP families seen ≤ {K2_FAMILIES:g}",
                result.aggregate("families", mode, DENSE_ROW),
                K2_FAMILIES,
            ),
        ]
    return out


def sparsity_criteria(result: SparsityResult) -> list[Criterion]:
    """k3 (see the module): the spread of Sparse MLP and LISTA, and Dense MLP over the larger of them."""
    _check(result, SparsityResult)
    missing = [r for r in (*K3_ROWS, DENSE_ROW) if r not in result.config.rows]
    if missing:
        raise ValueError(f"result must include the rows {missing}")
    mean = result.mean
    pair = [mean[r] for r in K3_ROWS]
    h = result.config.horizon
    return [
        at_most(
            f"H{h}: Sparse MLP and LISTA within {K3_SPREAD:g}× (larger / smaller)",
            _ratio(max(pair), min(pair)),
            K3_SPREAD,
        ),
        at_least(
            f"H{h}: Dense MLP / the larger sparse row ≥ {K3_RATIO:g}×",
            _ratio(mean[DENSE_ROW], max(pair)),
            K3_RATIO,
        ),
    ]


def routing_criteria(result: RoutingResult) -> list[Criterion]:
    """k4 (see the module): per horizon, the median ratio, the win share and (with the random control)
    the random control's median ratio over the support router's."""
    _check(result, RoutingResult)
    median, wins = result.median_ratio("support"), result.win_share("support")
    random = result.median_ratio("random") if "random" in result.config.routers else None
    out = []
    for k, h in enumerate(result.config.horizons):
        out += [
            below(f"H{h}: median local/global MSE ratio < {K4_RATIO:g}", _value(median[k]), K4_RATIO),
            above(f"H{h}: local wins on > {K4_WINS:.0%} of the pairs", float(wins[k]), K4_WINS),
        ]
        if random is not None:
            out.append(
                above(
                    f"H{h}: random control's median ratio / support's > 1", _ratio(random[k], median[k]), 1.0
                )
            )
    return out


def identity_criteria(result: IdentityResult) -> dict[int, list[Criterion]]:
    """k5 (see the module): seed → [top-1 drop ratio ≥ 10×], for ``decide_over_seeds``."""
    _check(result, IdentityResult)
    if 1 not in result.config.ks:
        raise ValueError(f"result must include k = 1 in its ks; got {result.config.ks}")
    ratio = result.ratio(1)
    return {
        seed: [
            at_least(
                f"accumulated MSE at H{result.config.horizon}: top-1 dropped / standard ≥ {K5_RATIO:g}×",
                _value(ratio[s]),
                K5_RATIO,
            )
        ]
        for s, seed in enumerate(result.config.seeds)
    }


def chaos_criteria(result: ChaosResult) -> list[Criterion]:
    """k6 (see the module): the share of cells where the sparse row's IQM is at most the dense one's."""
    _check(result, ChaosResult)
    wins = result.sparse_wins()
    return [
        at_least(f"sparse ≤ dense in ≥ {K6_SHARE:.0%} of the {wins.size} cells", float(wins.mean()), K6_SHARE)
    ]


def collapse_criteria(result: CollapseResult) -> list[Criterion]:
    """k7 (see the module): LISTA's and Dense MLP's asymptotic-basin accuracy (IQM over seeds, mean over
    systems)."""
    _check(result, CollapseResult)
    for row in ("lista", DENSE_ROW):
        if row not in result.config.rows:
            raise ValueError(f"result must include the {row!r} row")
    return [
        at_least(f"LISTA asymptotic-basin accuracy ≥ {K7_LISTA:g}", result.aggregate("lista"), K7_LISTA),
        at_most(f"Dense MLP asymptotic-basin accuracy ≤ {K7_DENSE:g}", result.aggregate(DENSE_ROW), K7_DENSE),
    ]
