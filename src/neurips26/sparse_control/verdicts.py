"""The criteria that decide chapter 12's claims, with margins fixed before the claims were measured (the
paper's abstract has no numbers; every margin is ours).

* small-sets :func:`small_sets_criteria` — at some budget ``k ≤ 8`` Driver-OMP reaches at least
  :data:`REACH` (0.8) of the prompts on at least two of the three tasks, and on those tasks beats attribution
  top-k by :data:`OVER_ATTRIBUTION` (0.05) and random-k by :data:`OVER_RANDOM` (0.2) at the same ``k``.
* coverage-reuse :func:`coverage_reuse_criteria` — Coverage-Driver's held-out/held-in reach ratio exceeds
  Driver-OMP's by :data:`REUSE_GAIN` (0.05) on at least two tasks (at ``k = 4``).
* preservation :func:`preservation_criteria` — at matched target effect, the sparse control's neutral KL
  is at most :data:`KL_RATIO` (0.5) times the dense steering vector's, on at least two tasks.
* dose-response :func:`dose_criteria` — the mean Spearman and the ``R²`` on ``|α| ≤ 1`` of Driver-OMP's
  controls (``k = 4``) are at least :data:`DOSE` (0.9), averaged over the tasks.
* feedback :func:`feedback_criteria` — closed-loop set-point success exceeds open-loop by
  :data:`FEEDBACK_GAIN` (0.2), averaged over the tasks.
* refusal-boundary :func:`refusal_criteria` — some other task passes all six axes at a budget ``k ≤ 8``,
  and refusal passes only at a larger budget, or at no budget up to 16. (When no task passes, refusal is not
  set apart as a boundary: not reproduced.)
* linearisation (ours) :func:`linearisation_criteria` — the linear prediction ``y_0 + α G a`` explains at
  least :data:`LINEAR_R2` (0.9) of the variance of the measured readout for ``|α| ≤ 0.5``.
"""

from __future__ import annotations

from neurips26.criteria import Criterion, at_least, holds

REACH = 0.8
OVER_ATTRIBUTION = 0.05
OVER_RANDOM = 0.2
REUSE_GAIN = 0.05
KL_RATIO = 0.5
DOSE = 0.9
FEEDBACK_GAIN = 0.2
LINEAR_R2 = 0.9
TASKS_NEEDED = 2
NEVER = 10**6  # the budget of a task that passes at no budget

CLAIM_IDS = (
    "small-sets",
    "coverage-reuse",
    "preservation",
    "dose-response",
    "feedback",
    "refusal-boundary",
    "linearisation",
)


def small_sets_criteria(best: dict[str, dict[str, float]]) -> list[Criterion]:
    """``best[task]``: Driver-OMP's reach at its best ``k ≤ 8`` (``omp``) and attribution's and random's at
    that ``k`` (``attribution``, ``random``)."""
    passing = [t for t, v in best.items() if v["omp"] >= REACH]
    beats_attr = [t for t in passing if best[t]["omp"] - best[t]["attribution"] >= OVER_ATTRIBUTION]
    beats_rand = [t for t in passing if best[t]["omp"] - best[t]["random"] >= OVER_RANDOM]
    return [
        at_least(f"tasks where Driver-OMP reaches ≥ {REACH}", len(passing), TASKS_NEEDED, scale=1.0),
        at_least(f"of those, ≥ attribution + {OVER_ATTRIBUTION}", len(beats_attr), TASKS_NEEDED, scale=1.0),
        at_least(f"of those, ≥ random-k + {OVER_RANDOM}", len(beats_rand), TASKS_NEEDED, scale=1.0),
    ]


def coverage_reuse_criteria(ratio: dict[str, dict[str, float]]) -> list[Criterion]:
    """``ratio[task]``: held-out/held-in reach ratio of ``coverage`` and ``omp``."""
    better = [t for t, v in ratio.items() if v["coverage"] - v["omp"] >= REUSE_GAIN]
    return [
        at_least(
            f"tasks where Coverage-Driver's reuse ≥ Driver-OMP's + {REUSE_GAIN}",
            len(better),
            TASKS_NEEDED,
            scale=1.0,
        )
    ]


def preservation_criteria(kl: dict[str, dict[str, float]]) -> list[Criterion]:
    """``kl[task]``: neutral KL at matched effect of the ``sparse`` control and the ``dense`` vector."""
    kept = [t for t, v in kl.items() if v["sparse"] <= KL_RATIO * v["dense"]]
    return [at_least(f"tasks where sparse KL ≤ {KL_RATIO} × dense KL", len(kept), TASKS_NEEDED, scale=1.0)]


def dose_criteria(spearman: float, r2: float) -> list[Criterion]:
    return [
        at_least(f"mean Spearman ≥ {DOSE}", spearman, DOSE),
        at_least(f"mean R² (|α| ≤ 1) ≥ {DOSE}", r2, DOSE),
    ]


def feedback_criteria(closed: float, open_loop: float) -> list[Criterion]:
    return [at_least(f"closed − open loop success ≥ {FEEDBACK_GAIN}", closed - open_loop, FEEDBACK_GAIN)]


def refusal_criteria(refusal_k: int, easiest_other_k: int) -> list[Criterion]:
    """Smallest budget at which each passes all axes (:data:`NEVER` when none does)."""
    margin = 1.0 if refusal_k >= NEVER else float(refusal_k - easiest_other_k)
    return [
        holds("some other task passes every axis (k ≤ 8)", easiest_other_k <= 8),
        at_least(
            "refusal needs a larger budget than the easiest other task, or fails at 16",
            margin,
            1.0,
            scale=1.0,
        ),
    ]


def linearisation_criteria(r2: float) -> list[Criterion]:
    return [at_least(f"R² of the linear prediction at |α| ≤ 0.5 ≥ {LINEAR_R2}", r2, LINEAR_R2)]
