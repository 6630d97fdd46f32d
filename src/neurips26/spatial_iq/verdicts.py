"""The criteria that decide chapter 15's claims, fixed before the claims were measured (accuracies and
integrities as fractions; the trained rows in the released Table-4 direction, Pr(dependent | prerequisite)).

* C1 :func:`plain_criteria` — SFT-plain gains ≥ :data:`T1_GAIN` (10 points) on the total over the backbone,
  while its chain, hidden-support and summation scores are ≤ :data:`BROKEN` (0.2) and ≥ :data:`COLLAPSE`
  (half) of its sub-answers equal its own total.
* C2 :func:`cot_criteria` — SFT-CoT's chain integrity ≥ :data:`INTACT` (0.8) and its summation mechanism
  ≥ SFT-plain's + :data:`SUM_GAIN` (0.4).
* C3 :func:`rl_criteria` — the RL model's total ≥ the warm-up's + :data:`RL_GAIN` (5 points), above
  SFT-CoT's, with its chain integrity within :data:`IRC_BAND` (5 points) of SFT-CoT's.
* C4 :func:`dissociation_criteria` — the shortcut and the tuned solver within :data:`SAME_T1` (3 points) on
  the total, the solver's summation mechanism > :data:`SUM_RATIO` (2) times the shortcut's.
* C5 :func:`signature_criteria` — the tuned solver's total is most accurate when the visible and hidden
  counts are both right, and lower in each cell with one of them wrong.
* C6 :func:`difficulty_criteria` — the tuned solver's total accuracy does not rise over the bins of total,
  hidden objects and layers (by more than :data:`BIN_SLACK`), and does not fall with fill ratio.
* C7 :func:`mcq_criteria` — a uniform chooser's chance-adjusted accuracy within :data:`CHANCE_BAND`
  (3 points) of 0 at k = 3, 4, 5, and the exact solver's raw accuracy ≥ :data:`SOLVER_MCQ` (0.8).
* C8 :func:`rotation_criteria` — for the backbone and the tuned solver, the fixed-effect correlation of
  total-count correctness with the hierarchy bundle exceeds its correlation with the rotation bundle.
"""

from __future__ import annotations

from neurips26.criteria import Criterion, at_least, at_most, higher, holds

T1_GAIN = 0.10
BROKEN = 0.2
COLLAPSE = 0.5
INTACT = 0.8
SUM_GAIN = 0.4
RL_GAIN = 0.05
IRC_BAND = 0.05
SAME_T1 = 0.03
SUM_RATIO = 2.0
BIN_SLACK = 0.02
CHANCE_BAND = 0.03
SOLVER_MCQ = 0.8

CLAIM_IDS = (
    "c1-plain",
    "c2-cot",
    "c3-rl",
    "c4-dissociation",
    "c5-signature",
    "c6-difficulty",
    "c7-mcq",
    "c8-rotation",
)


def plain_criteria(plain: dict[str, float], backbone_t1: float) -> list[Criterion]:
    """``plain``: SFT-plain's profile row."""
    return [
        at_least(f"T1 gain over the backbone ≥ {T1_GAIN:.0%}", plain["T1"] - backbone_t1, T1_GAIN),
        at_most(f"chain integrity ≤ {BROKEN}", plain["IRC"], BROKEN),
        at_most(f"hidden support ≤ {BROKEN}", plain["HidSup"], BROKEN),
        at_most(f"summation mechanism ≤ {BROKEN}", plain["SumMech"], BROKEN),
        at_least(f"sub-answers equal to its own total ≥ {COLLAPSE:.0%}", plain["collapse"], COLLAPSE),
    ]


def cot_criteria(cot: dict[str, float], plain: dict[str, float]) -> list[Criterion]:
    return [
        at_least(f"chain integrity ≥ {INTACT}", cot["IRC"], INTACT),
        at_least(
            f"summation mechanism ≥ SFT-plain's + {SUM_GAIN}", cot["SumMech"] - plain["SumMech"], SUM_GAIN
        ),
    ]


def rl_criteria(rl: dict[str, float], warmup: dict[str, float], cot: dict[str, float]) -> list[Criterion]:
    return [
        at_least(f"T1 ≥ warm-up's + {RL_GAIN:.0%}", rl["T1"] - warmup["T1"], RL_GAIN),
        higher("T1 above SFT-CoT's", rl["T1"], cot["T1"], unit=0.01),
        at_most(f"|chain integrity − SFT-CoT's| ≤ {IRC_BAND}", abs(rl["IRC"] - cot["IRC"]), IRC_BAND),
    ]


def dissociation_criteria(shortcut: dict[str, float], solver: dict[str, float]) -> list[Criterion]:
    ratio = solver["SumMech"] / max(shortcut["SumMech"], 1e-9)
    return [
        at_most(f"|T1 shortcut − T1 solver| ≤ {SAME_T1:.0%}", abs(shortcut["T1"] - solver["T1"]), SAME_T1),
        at_least(f"summation mechanism solver / shortcut > {SUM_RATIO}", ratio, SUM_RATIO),
    ]


def signature_criteria(cells) -> list[Criterion]:
    """``cells``: the 2x2 T1 accuracies, rows S5 wrong/right, columns S9 wrong/right."""
    both = float(cells[1][1])
    return [
        higher("both right > S9 missed", both, float(cells[1][0]), unit=0.01),
        higher("both right > S5 missed", both, float(cells[0][1]), unit=0.01),
        higher("both right > both missed", both, float(cells[0][0]), unit=0.01),
    ]


def difficulty_criteria(rises: dict[str, float]) -> list[Criterion]:
    """``rises``: per factor, the largest rise of T1 accuracy between consecutive bins (for fill ratio:
    the largest fall), over bins with at least 20 views."""
    out = []
    for factor, rise in rises.items():
        word = "fall" if factor == "fill_ratio" else "rise"
        out.append(at_most(f"{factor}: largest {word} between bins ≤ {BIN_SLACK:.0%}", rise, BIN_SLACK))
    return out


def mcq_criteria(random_adjusted: dict[int, float], solver_raw: dict[int, float]) -> list[Criterion]:
    out = [
        at_most(f"|adjusted random accuracy| at k = {k} ≤ {CHANCE_BAND:.0%}", abs(v), CHANCE_BAND)
        for k, v in random_adjusted.items()
    ]
    out += [at_least(f"exact solver at k = {k} ≥ {SOLVER_MCQ}", v, SOLVER_MCQ) for k, v in solver_raw.items()]
    return out


def rotation_criteria(correlations: dict[str, tuple[float, float]]) -> list[Criterion]:
    """``correlations``: responder → (r with the hierarchy bundle, r with the rotation bundle)."""
    return [
        holds(f"{name}: hierarchy r {h:.2f} > rotation r {r:.2f}", bool(h > r))
        for name, (h, r) in correlations.items()
    ]


__all__ = [
    "CLAIM_IDS",
    "cot_criteria",
    "difficulty_criteria",
    "dissociation_criteria",
    "mcq_criteria",
    "plain_criteria",
    "rl_criteria",
    "rotation_criteria",
    "signature_criteria",
]
