"""The criteria that decide chapter 03's claims, with thresholds fixed before the first run.

* t1-backward-speed :func:`speed_criteria` — declared cost of the dense backward over the structured one
  ≥ :data:`STRUCTURED_COST_RATIO` on the clique-decomposed tasks
  (:data:`~neurips26.sparse_sos.speed.CLIQUE_TASKS`), over Danskin's ≥ :data:`DANSKIN_COST_RATIO` on
  every task; the generic layer (dense + cvxpylayers) slower than ours in all but one timing round.
* t3-exact :func:`exactness_criteria` — relative gradient errors ≤ :data:`FD_TOL` against finite
  differences and ≤ :data:`GENERIC_TOL` against cvxpylayers.
* t4-bound :func:`bound_criteria` — ``value_sparse − value_dense ≤`` :data:`BOUND_TOL` where the sparse
  program restricts the certificate, ``|value_sparse − value_dense| ≤`` :data:`EQUAL_TOL` on chains and
  the chordal Shor relaxations.
* t2-scaling :func:`scaling_criteria` — log–log slope of the declared backward cost against the chain
  length: dense ≥ :data:`DENSE_SLOPE_MIN`, structured ≤ :data:`STRUCTURED_SLOPE_MAX`.
* t5-no-dense :func:`no_dense_criteria` — slopes of ``nnz(M)`` and of the backward's peak memory against
  ``n``: the sparse paths linear (≤ :data:`LINEAR_SLOPE_MAX`), the dense one at least quadratic
  (≥ :data:`QUADRATIC_SLOPE_MIN`).
* t6-learning :func:`learning_criteria` — sparse and dense layers reach the same objective
  (≤ :data:`OBJECTIVE_TOL`); the declared cost per step dense / sparse ≥ :data:`LEARNING_COST_RATIO`; the
  wall clock of the whole run dense / sparse ≥ :data:`LEARNING_WALL_RATIO`.

The thresholds are the ones the chapter states in its claims table; a slope fitted over sizes 4–40 moves
by a few hundredths between machines (the LSQR iteration counts are deterministic; the fit is over the
declared cost, not the wall clock), so a margin of 0.1 on a slope is a robust call.
"""

from __future__ import annotations

import numpy as np

from neurips26.criteria import Criterion, at_least, at_most
from neurips26.sparse_sos.bounds import EQUAL_TASKS, RESTRICTION_TASKS, BoundRow
from neurips26.sparse_sos.exactness import TaskExactness
from neurips26.sparse_sos.learning import LearningCurve
from neurips26.sparse_sos.scaling import ScalingResult
from neurips26.sparse_sos.speed import DANSKIN, STRUCTURED, TaskSpeed

STRUCTURED_COST_RATIO = 10.0
DANSKIN_COST_RATIO = 100.0
FD_TOL = 1e-4
GENERIC_TOL = 1e-3
BOUND_TOL = 1e-6
EQUAL_TOL = 1e-5
DENSE_SLOPE_MIN = 3.0
STRUCTURED_SLOPE_MAX = 1.5
LINEAR_SLOPE_MAX = 1.25
QUADRATIC_SLOPE_MIN = 2.0
OBJECTIVE_TOL = 1e-3
LEARNING_COST_RATIO = 5.0
LEARNING_WALL_RATIO = 2.0


def _check(result: object, kind: type, name: str):
    if not isinstance(result, kind):
        raise TypeError(f"{name} must be a {kind.__name__}; got {type(result).__name__}")
    return result


def scaling_criteria(result: ScalingResult) -> list[Criterion]:
    """t2: the declared backward cost grows like the blocks (structured) and like ``s³`` (dense)."""
    _check(result, ScalingResult, "result")
    return [
        at_least(
            "slope of the dense backward's cost in n",
            result.slope("dense", "structured", "flops"),
            DENSE_SLOPE_MIN,
        ),
        at_most(
            "slope of the structured backward's cost in n",
            result.slope("sparse", "structured", "flops"),
            STRUCTURED_SLOPE_MAX,
        ),
    ]


def no_dense_criteria(result: ScalingResult) -> list[Criterion]:
    """t5: the operator and the memory stay linear in ``n`` without a dense certificate; dense grows ≥ n²."""
    _check(result, ScalingResult, "result")
    return [
        at_most(
            "slope of nnz(M), structured", result.slope("sparse", "structured", "nnz_m"), LINEAR_SLOPE_MAX
        ),
        at_least("slope of nnz(M), dense", result.slope("dense", "structured", "nnz_m"), QUADRATIC_SLOPE_MIN),
        at_most(
            "slope of the peak memory, Danskin",
            result.slope("sparse", "danskin", "peak_bytes"),
            LINEAR_SLOPE_MAX,
        ),
        at_most(
            "slope of the peak memory, structured",
            result.slope("sparse", "structured", "peak_bytes"),
            LINEAR_SLOPE_MAX,
        ),
        at_least(
            "slope of the peak memory, dense",
            result.slope("dense", "structured", "peak_bytes"),
            QUADRATIC_SLOPE_MIN,
        ),
    ]


def learning_criteria(
    sparse: LearningCurve, dense: LearningCurve, *, sparse_flops: float, dense_flops: float
) -> list[Criterion]:
    """t6: the same objective after the same steps; the dense layer's declared cost per step (``dense_flops``)
    over the sparse one's (``sparse_flops``); the whole run's wall clock dense / sparse."""
    _check(sparse, LearningCurve, "sparse")
    _check(dense, LearningCurve, "dense")
    gap = float(np.abs(sparse.objective[-1] - dense.objective[-1]))
    return [
        at_most("|final objective, sparse − dense|", gap, OBJECTIVE_TOL),
        at_least("declared cost per step, dense / sparse", dense_flops / sparse_flops, LEARNING_COST_RATIO),
        at_least(
            "wall clock of the run, dense / sparse",
            float(dense.seconds.sum() / sparse.seconds.sum()),
            LEARNING_WALL_RATIO,
        ),
    ]


def speed_criteria(speeds: dict[str, TaskSpeed]) -> list[Criterion]:
    """t1, per task: the declared cost ratios, and the rounds in which our backwards beat the generic layer
    (all rounds but one: a single round lost to a load burst does not decide)."""
    criteria = []
    for task, speed in speeds.items():
        _check(speed, TaskSpeed, f"speeds[{task!r}]")
        rounds = len(speed.seconds[DANSKIN])
        need = max(rounds - 1, 1)
        criteria.append(
            at_least(f"{task}: cost dense / Danskin", speed.cost_ratio("danskin"), DANSKIN_COST_RATIO)
        )
        criteria.append(
            at_least(f"{task}: rounds Danskin beat the generic layer", speed.rounds_faster(DANSKIN), need)
        )
        if speed.clique_decomposed:
            criteria.append(
                at_least(
                    f"{task}: cost dense / structured", speed.cost_ratio("structured"), STRUCTURED_COST_RATIO
                )
            )
            criteria.append(
                at_least(
                    f"{task}: rounds structured beat the generic layer", speed.rounds_faster(STRUCTURED), need
                )
            )
    return criteria


def exactness_criteria(checks: dict[str, TaskExactness]) -> list[Criterion]:
    """t3, per task: the four relative gradient errors of :class:`TaskExactness`."""
    criteria = []
    for task, check in checks.items():
        _check(check, TaskExactness, f"checks[{task!r}]")
        criteria += [
            at_most(f"{task}: Danskin vs finite differences", check.danskin_fd, FD_TOL),
            at_most(f"{task}: structured vs finite differences", check.structured_fd, FD_TOL),
            at_most(f"{task}: Danskin vs cvxpylayers", check.danskin_generic, GENERIC_TOL),
            at_most(f"{task}: structured vs cvxpylayers", check.structured_generic, GENERIC_TOL),
        ]
    return criteria


def bound_criteria(rows: list[BoundRow]) -> list[Criterion]:
    """t4: per restriction task the largest ``sparse − dense``; per equality task the largest ``|gap|``."""
    criteria = []
    for task in dict.fromkeys(r.task for r in rows):
        gaps = np.array([r.gap for r in rows if r.task == task])
        if task in RESTRICTION_TASKS:
            criteria.append(at_most(f"{task}: max(sparse − dense)", float(gaps.max()), BOUND_TOL))
        if task in EQUAL_TASKS:
            criteria.append(at_most(f"{task}: max |sparse − dense|", float(np.abs(gaps).max()), EQUAL_TOL))
    return criteria
