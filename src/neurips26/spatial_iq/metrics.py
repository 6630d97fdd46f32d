"""Hierarchy metrics of Spatial-IQ: do a responder's answers compose the way the task hierarchy says?

Headline accuracy on the total count (T1) does not say *why* a responder got it right. The paper scores,
per view, whether the sub-task answers that T1 depends on are right too, with the definitions of its
Section 5 / Appendix F as the released analysis script computes them.

**Data layout.** An *answer sheet* maps task names (:data:`~neurips26.spatial_iq.tasks.TASKS`, plus
``"hidden"``) to one value per view: int64 arrays for the numeric tasks, where ``-1`` means *no parsable
answer* (never correct), and a str/object array for ``"S1"`` (``None`` = no answer). Ground truth uses the
same layout. A task missing from a sheet was not asked, and every metric that needs it returns NaN. A
*correctness sheet* maps tasks to per-view flags ``c_X``: bool, or 0/1 floats where NaN marks a view not
scored on that task (pooled data where some responders were not asked); NaN views are dropped pairwise,
as the released code drops missing cells.

**Relation integrity** of an edge "prerequisite P -> dependent C", in one of two :data:`DIRECTIONS`:

- ``prerequisite_given_dependent`` (the paper's definition, Table 1 and Table 3): ``I = Pr(c_P=1 | c_C=1)``;
- ``dependent_given_prerequisite`` (what the released script uses for Table 2, MCQ, and for the trained
  rows of Table 4): ``Pr(c_C=1 | c_P=1)``.

Either is NaN when its conditioning event never happens. The four summary relations:

- Internal Referential Chain (IRC), edges S6 -> S7 -> S8. Paper direction: **pooled**,
  ``1 - sum_e #(c_C=1, c_P=0) / sum_e #(c_C=1)``, an edge with a task not asked is skipped, NaN when no
  view is testable. Other direction: the mean of the edges that are defined (NaN if none).
- Visible Support (S3 -> S5, S4 -> S5) and Hidden Support (S3 -> S9, S8 -> S9): the mean of the two edges.
  Paper direction: NaN if either edge is NaN (both condition on the same dependent). Other direction: an
  undefined edge is dropped and the other carries the relation.
- Summation Mechanism. Numeric answers: the share of views with
  ``(M - M*) - ((V - V*) + (H - H*)) = 0`` where ``M, V, H`` are the answers to T1, S5, S9 and starred
  values the truth. It is scored on errors because S9 counts visible blocks resting on a hidden one, so
  ``T1 = S5 + S9`` fails when hidden blocks stack, and a perfect responder must score 1. Views with an
  unparsed T1, S5 or S9 answer are left out (the released script drops them). MCQ and image formats:
  ``Pr(c_T1=1 | c_S5=1, c_S9=1)``.

For MCQ every column is chance-adjusted, ``adj = (acc - 1/k) / (1 - 1/k)`` with ``k`` choices; the
adjustment is affine, so adjusting edge scores before or after averaging is the same.

**Statistics:** Wilson intervals (:func:`neurips26.stats.wilson`), exact McNemar tests with Holm or
Benjamini-Hochberg corrections, the 2x2 summation table (T1 accuracy by S5 and S9 right or wrong), accuracy
by difficulty bins (the released bin edges), MCQ wrong-answer preferences (one-sided binomial test against
a uniform pick), and fixed-effect correlations: Pearson r after subtracting each group's mean from x and y.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy import stats

from neurips26.spatial_iq.cameras import GRID, MAX_HEIGHT
from neurips26.spatial_iq.tasks import NUMERIC, TASKS
from neurips26.stats import wilson
from neurips26.validation import check_choice, check_int

#: The two ways round a relation's conditional is taken (see the module docstring).
DIRECTIONS: tuple[str, ...] = ("prerequisite_given_dependent", "dependent_given_prerequisite")
#: The direction the released script uses for each summary table ("trained" = Table 4's trained rows; its
#: human row is carried over from Table 1 and so follows "text").
RELEASED_DIRECTION: dict[str, str] = {
    "text": DIRECTIONS[0],
    "image": DIRECTIONS[0],
    "mcq": DIRECTIONS[1],
    "trained": DIRECTIONS[1],
}
#: Every key an answer sheet may hold.
SHEET_KEYS: tuple[str, ...] = (*TASKS, "hidden")
#: Edges (prerequisite, dependent) of the four summary relations.
CHAIN_EDGES: tuple[tuple[str, str], ...] = (("S6", "S7"), ("S7", "S8"))
VISIBLE_SUPPORT_EDGES: tuple[tuple[str, str], ...] = (("S3", "S5"), ("S4", "S5"))
HIDDEN_SUPPORT_EDGES: tuple[tuple[str, str], ...] = (("S3", "S9"), ("S8", "S9"))
#: The sub-tasks whose answers :func:`collapse_share` compares with T1: every numeric sub-task (what the
#: released trained checkpoints answer; this set gives 88 % for SFT-plain 32B and 8 % for SFT-CoT 32B).
COLLAPSE_TASKS: tuple[str, ...] = ("S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9")
#: Keys of a :func:`profile` row, in table order.
PROFILE_COLUMNS: tuple[str, ...] = (
    "T1",
    "IRC",
    "S5",
    "VisSup",
    "S9",
    "HidSup",
    "SumMech",
    "rotation",
    "collapse",
)
#: Task bundles whose mean correctness is correlated with T1 correctness: the five of the released
#: Figure 14 (rotation 90, rotation 180, both rotations, referential chain, visible + hidden) and the
#: visible and hidden support bundles of the released Appendix F coupling table.
BUNDLES: dict[str, tuple[str, ...]] = {
    "rotation_90": ("T2a",),
    "rotation_180": ("T2b",),
    "rotation": ("T2a", "T2b"),
    "referential_chain": ("S6", "S7", "S8"),
    "visible_hidden": ("S5", "S9"),
    "visible_support": ("S3", "S4", "S5"),
    "hidden_support": ("S3", "S8", "S9"),
}
#: Key of the T2a-versus-T2b correlation in the outputs of the bundle correlations.
ROTATION_PAIR = "T2a~T2b"
#: Difficulty bins per factor of :func:`difficulty_factors`: right-closed intervals ``(e_i, e_i+1]`` and
#: their labels, the released edges. The first "total" bin also holds totals below 4; layers get one bin
#: per value 1..4 (released: one per value present); columns outside 3..14 fall in no bin, as released.
#: Fill-ratio bins run sparse to dense (the released figure shows them dense first).
DIFFICULTY_BINS: dict[str, tuple[tuple[float, ...], tuple[str, ...]]] = {
    "total": ((0, 8, 12, 18, 25, 100), ("4-8", "9-12", "13-18", "19-25", "26+")),
    "hidden": ((-1, 0, 1, 3, 100), ("0", "1", "2-3", "4+")),
    "layers": ((0.5, 1.5, 2.5, 3.5, 4.5), ("1", "2", "3", "4")),
    "columns": ((2.5, 5.5, 8.5, 11.5, 14.5), ("3-5", "6-8", "9-11", "12-14")),
    "fill_ratio": ((0.0, 0.55, 0.67, 1.01), ("Sparse", "Medium", "Dense")),
    "fill_ratio_heights": ((0.0, 0.55, 0.67, 1.01), ("Sparse", "Medium", "Dense")),
}

Correlation = tuple[float, float, int]
_NAN = float("nan")


# ---------------------------------------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------------------------------------


def _check_direction(direction: object) -> str:
    return check_choice("direction", direction, DIRECTIONS)


def _check_sheet(
    name: str, sheet: object, *, truth: bool = False
) -> tuple[dict[str, np.ndarray], int | None]:
    """An answer sheet as task -> 1-D array, all of one length (returned, None for an empty sheet)."""
    if not isinstance(sheet, Mapping):
        raise TypeError(f"{name} must be a dict task -> array; got {type(sheet).__name__}")
    out: dict[str, np.ndarray] = {}
    length: int | None = None
    for task, values in sheet.items():
        if task not in SHEET_KEYS:
            raise ValueError(f"{name} has unknown task {task!r}; tasks are {', '.join(SHEET_KEYS)}")
        arr = np.asarray(values)
        where = f"{name}[{task!r}]"
        if arr.ndim != 1:
            raise ValueError(f"{where} must be 1-D (one value per view); got shape {arr.shape}")
        if task == "S1":
            if arr.dtype.kind not in "OUS":
                raise TypeError(f"{where} must hold category strings; got dtype {arr.dtype}")
        else:
            if arr.dtype.kind not in "iu":
                raise TypeError(
                    f"{where} must hold integers (-1 = no parsable answer); got dtype {arr.dtype}"
                )
            lowest = 0 if truth else -1
            if arr.size and int(arr.min()) < lowest:
                raise ValueError(f"{where} must be >= {lowest}; got {int(arr.min())}")
            arr = arr.astype(np.int64)
        if length is None:
            length = arr.shape[0]
        elif arr.shape[0] != length:
            raise ValueError(f"{where} has {arr.shape[0]} views but other tasks of {name} have {length}")
        out[task] = arr
    return out, length


def _flags(name: str, values: object) -> np.ndarray:
    """Correctness flags as float 0/1 with NaN = not scored."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one flag per view); got shape {arr.shape}")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold bools or 0/1 numbers; got dtype {arr.dtype}")
    out = arr.astype(float)
    seen = out[~np.isnan(out)]
    if seen.size and not np.all((seen == 0) | (seen == 1)):
        raise ValueError(f"{name} must hold only 0/1 (or NaN for a view not scored)")
    return out


def _check_correct(name: str, correct: object) -> tuple[dict[str, np.ndarray], int | None]:
    """A correctness sheet as task -> float flags, all of one length."""
    if not isinstance(correct, Mapping):
        raise TypeError(f"{name} must be a dict task -> flags; got {type(correct).__name__}")
    out: dict[str, np.ndarray] = {}
    length: int | None = None
    for task, values in correct.items():
        if task not in SHEET_KEYS:
            raise ValueError(f"{name} has unknown task {task!r}; tasks are {', '.join(SHEET_KEYS)}")
        arr = _flags(f"{name}[{task!r}]", values)
        if length is None:
            length = arr.shape[0]
        elif arr.shape[0] != length:
            raise ValueError(
                f"{name}[{task!r}] has {arr.shape[0]} views but other tasks of {name} have {length}"
            )
        out[task] = arr
    return out, length


def _same_length(name: str, arr: np.ndarray, other: str, length: int) -> None:
    if arr.shape[0] != length:
        raise ValueError(f"{name} must have the same length as {other} ({length}); got {arr.shape[0]}")


def _mean_defined(values: Sequence[float]) -> float:
    arr = np.asarray(values, dtype=float)
    arr = arr[np.isfinite(arr)]
    return float(arr.mean()) if arr.size else _NAN


# ---------------------------------------------------------------------------------------------------------
# Correctness and relation integrity
# ---------------------------------------------------------------------------------------------------------


def correctness(pred: Mapping[str, np.ndarray], truth: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per-view correctness ``pred == truth`` (bool, shape (n_views,)) for each task in both sheets.

    A numeric answer of ``-1`` (unparsable) is never correct; an S1 answer is compared as a string and
    ``None`` is never correct.
    """
    p, n_pred = _check_sheet("pred", pred)
    t, n_truth = _check_sheet("truth", truth, truth=True)
    if n_pred is not None and n_truth is not None and n_pred != n_truth:
        raise ValueError(f"pred and truth must cover the same views; got {n_pred} and {n_truth}")
    out: dict[str, np.ndarray] = {}
    for task in SHEET_KEYS:
        if task not in p or task not in t:
            continue
        if task == "S1":
            out[task] = np.array(
                [a is not None and str(a) == str(b) for a, b in zip(p[task], t[task], strict=True)],
                dtype=bool,
            )
        else:
            out[task] = (p[task] >= 0) & (p[task] == t[task])
    return out


def accuracies(correct: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Accuracy of each task in ``correct``: the mean over scored views (NaN if none)."""
    c, _ = _check_correct("correct", correct)
    return {task: _mean_defined(flags) for task, flags in c.items()}


def relation_integrity(c_prereq: np.ndarray, c_dep: np.ndarray, direction: str = DIRECTIONS[0]) -> float:
    """Integrity of one edge from per-view flags (n_views,): ``Pr(c_P=1 | c_C=1)`` in the paper's direction,
    ``Pr(c_C=1 | c_P=1)`` in the other; NaN when the conditioning event never happens."""
    prereq = _flags("c_prereq", c_prereq)
    dep = _flags("c_dep", c_dep)
    _same_length("c_dep", dep, "c_prereq", prereq.shape[0])
    direction = _check_direction(direction)
    scored_rows = np.isfinite(prereq) & np.isfinite(dep)
    if direction == DIRECTIONS[0]:
        given, scored = dep, prereq
    else:
        given, scored = prereq, dep
    rows = scored_rows & (given == 1)
    return float(scored[rows].mean()) if rows.any() else _NAN


def _edge(c: dict[str, np.ndarray], parent: str, child: str, direction: str) -> float:
    if parent not in c or child not in c:
        return _NAN
    return relation_integrity(c[parent], c[child], direction)


def chain_integrity(correct: Mapping[str, np.ndarray], direction: str = DIRECTIONS[0]) -> float:
    """Internal Referential Chain over S6 -> S7 -> S8: pooled over the two edges in the paper's direction,
    the mean of the defined edges in the other (the released rules; see the module docstring)."""
    c, _ = _check_correct("correct", correct)
    direction = _check_direction(direction)
    if direction == DIRECTIONS[1]:
        return _mean_defined([_edge(c, p, ch, direction) for p, ch in CHAIN_EDGES])
    testable = violations = 0
    for parent, child in CHAIN_EDGES:
        if parent not in c or child not in c:
            continue
        rows = np.isfinite(c[parent]) & (c[child] == 1)
        testable += int(rows.sum())
        violations += int((c[parent][rows] == 0).sum())
    return 1.0 - violations / testable if testable else _NAN


def _support(correct: Mapping[str, np.ndarray], edges: tuple[tuple[str, str], ...], direction: str) -> float:
    c, _ = _check_correct("correct", correct)
    direction = _check_direction(direction)
    scores = [_edge(c, p, ch, direction) for p, ch in edges]
    if direction == DIRECTIONS[1]:
        return _mean_defined(scores)
    if any(np.isnan(s) for s in scores):
        return _NAN
    return float(np.mean(scores))


def visible_support(correct: Mapping[str, np.ndarray], direction: str = DIRECTIONS[0]) -> float:
    """Visible Support: the mean integrity of S3 -> S5 and S4 -> S5 (NaN in the paper's direction if either
    edge is undefined; the other direction drops an undefined edge)."""
    return _support(correct, VISIBLE_SUPPORT_EDGES, direction)


def hidden_support(correct: Mapping[str, np.ndarray], direction: str = DIRECTIONS[0]) -> float:
    """Hidden Support: the mean integrity of S3 -> S9 and S8 -> S9 (undefined edges as in
    :func:`visible_support`)."""
    return _support(correct, HIDDEN_SUPPORT_EDGES, direction)


# ---------------------------------------------------------------------------------------------------------
# Summation mechanism, collapse, chance
# ---------------------------------------------------------------------------------------------------------


def summation_residual(pred: Mapping[str, np.ndarray], truth: Mapping[str, np.ndarray]) -> np.ndarray:
    """Per-view composition residual ``(M - M*) - ((V - V*) + (H - H*))`` (float, (n_views,)), with
    ``M, V, H`` the answers to T1, S5, S9; NaN where one of the three answers is unparsed (-1). Raises a
    ``ValueError`` naming the sheet that lacks one of the three tasks."""
    p, n_pred = _check_sheet("pred", pred)
    t, n_truth = _check_sheet("truth", truth, truth=True)
    for name, sheet in (("pred", p), ("truth", t)):
        missing = [task for task in ("T1", "S5", "S9") if task not in sheet]
        if missing:
            raise ValueError(f"{name} lacks {', '.join(missing)}, which the summation residual needs")
    if n_pred != n_truth:
        raise ValueError(f"pred and truth must cover the same views; got {n_pred} and {n_truth}")
    residual = (p["T1"] - t["T1"]) - ((p["S5"] - t["S5"]) + (p["S9"] - t["S9"]))
    parsed = (p["T1"] >= 0) & (p["S5"] >= 0) & (p["S9"] >= 0)
    return np.where(parsed, residual.astype(float), _NAN)


def summation_mechanism(
    pred: Mapping[str, np.ndarray], truth: Mapping[str, np.ndarray], *, unparsed: str = "exclude"
) -> float:
    """Summation Mechanism of numeric answers: the share of views whose total-count error equals the sum of
    the visible- and hidden-count errors. ``unparsed="exclude"`` (released) leaves out views with an
    unparsed T1, S5 or S9 answer; ``"fail"`` counts them as not composing. NaN if a task is missing or no
    view is left."""
    unparsed = check_choice("unparsed", unparsed, ("exclude", "fail"))
    p, _ = _check_sheet("pred", pred)
    t, _ = _check_sheet("truth", truth, truth=True)
    if any(task not in p or task not in t for task in ("T1", "S5", "S9")):
        return _NAN
    residual = summation_residual(p, t)
    if unparsed == "exclude":
        residual = residual[np.isfinite(residual)]
    return float(np.mean(residual == 0)) if residual.size else _NAN


def summation_conditional(correct: Mapping[str, np.ndarray]) -> float:
    """Summation Mechanism of the MCQ and image formats: ``Pr(c_T1=1 | c_S5=1, c_S9=1)`` (NaN if a task is
    missing or no view has both S5 and S9 right)."""
    c, _ = _check_correct("correct", correct)
    if any(task not in c for task in ("T1", "S5", "S9")):
        return _NAN
    rows = np.isfinite(c["T1"]) & (c["S5"] == 1) & (c["S9"] == 1)
    return float(c["T1"][rows].mean()) if rows.any() else _NAN


def chance_adjusted(accuracy: float | np.ndarray, k: int | np.ndarray) -> float | np.ndarray:
    """``(acc - 1/k) / (1 - 1/k)``: 0 at chance, 1 at perfect; elementwise over broadcast ``accuracy`` and
    ``k`` (a float for scalar inputs; NaN passes through)."""
    k_arr = np.asarray(k)
    if k_arr.dtype.kind not in "iu":
        raise TypeError(f"k must be an integer number of choices; got dtype {k_arr.dtype}")
    if k_arr.size and int(k_arr.min()) < 2:
        raise ValueError(f"k must be >= 2 choices; got {int(k_arr.min())}")
    acc = np.asarray(accuracy)
    if acc.dtype.kind not in "biuf":
        raise TypeError(f"accuracy must be a real number or array; got dtype {acc.dtype}")
    chance = 1.0 / k_arr
    out = (acc.astype(float) - chance) / (1.0 - chance)
    return float(out) if out.ndim == 0 else out


def collapse_share(pred: Mapping[str, np.ndarray], tasks: Sequence[str] = COLLAPSE_TASKS) -> float:
    """Share of sub-task answers equal to the same view's T1 answer, over the ``tasks`` in ``pred``
    (default S2..S9, every numeric sub-task) and the views where both answers parsed; NaN without T1 or
    without any such pair. A responder that answers every question with its total scores 1."""
    p, _ = _check_sheet("pred", pred)
    allowed = (*[task for task in NUMERIC if task != "T1"], "hidden")
    if isinstance(tasks, str) or not tasks or any(task not in allowed for task in tasks):
        raise ValueError(f"tasks must be a non-empty sequence of {', '.join(allowed)}; got {tasks!r}")
    if "T1" not in p:
        return _NAN
    total = p["T1"]
    equal = pairs = 0
    for task in tasks:
        if task not in p:
            continue
        rows = (p[task] >= 0) & (total >= 0)
        pairs += int(rows.sum())
        equal += int((p[task][rows] == total[rows]).sum())
    return equal / pairs if pairs else _NAN


# ---------------------------------------------------------------------------------------------------------
# Summary rows
# ---------------------------------------------------------------------------------------------------------


def _row(c: dict[str, np.ndarray], direction: str, k: int | None, summech: float, collapse: float) -> dict:
    acc = {task: _mean_defined(flags) for task, flags in c.items()}
    row = {
        "T1": acc.get("T1", _NAN),
        "IRC": chain_integrity(c, direction),
        "S5": acc.get("S5", _NAN),
        "VisSup": visible_support(c, direction),
        "S9": acc.get("S9", _NAN),
        "HidSup": hidden_support(c, direction),
        "SumMech": summech,
        "rotation": _mean_defined([acc.get("T2a", _NAN), acc.get("T2b", _NAN)]),
    }
    if k is not None:
        row = {key: chance_adjusted(value, k) for key, value in row.items()}
    row["collapse"] = collapse
    return row


def profile(
    pred: Mapping[str, np.ndarray],
    truth: Mapping[str, np.ndarray],
    direction: str = DIRECTIONS[0],
    *,
    unparsed: str = "exclude",
) -> dict[str, float]:
    """One summary-table row of a numeric (free-response) answer sheet, keys :data:`PROFILE_COLUMNS`:
    T1, S5, S9 accuracies and the mean T2a/T2b accuracy ("rotation") as fractions, IRC, VisSup, HidSup in
    ``direction``, the error-based SumMech (``unparsed`` as in :func:`summation_mechanism`) and
    :func:`collapse_share`."""
    direction = _check_direction(direction)
    c = {task: flags.astype(float) for task, flags in correctness(pred, truth).items()}
    summech = summation_mechanism(pred, truth, unparsed=unparsed)
    return _row(c, direction, None, summech, collapse_share(pred))


def profile_from_correct(
    correct: Mapping[str, np.ndarray], direction: str = DIRECTIONS[0], *, k: int | None = None
) -> dict[str, float]:
    """One summary-table row from correctness flags alone (MCQ and image formats): as :func:`profile`
    with SumMech = :func:`summation_conditional` and collapse NaN. With ``k`` choices every column but
    collapse is chance-adjusted (the released MCQ table, which takes the dependent-given-prerequisite
    direction)."""
    c, _ = _check_correct("correct", correct)
    direction = _check_direction(direction)
    if k is not None:
        k = check_int("k", k, minimum=2)
    return _row(c, direction, k, summation_conditional(c), _NAN)


# ---------------------------------------------------------------------------------------------------------
# Paired tests and multiple comparisons
# ---------------------------------------------------------------------------------------------------------


def mcnemar(c_a: np.ndarray, c_b: np.ndarray) -> float:
    """Exact two-sided McNemar p-value of two responders' per-view correctness (n_views,): a binomial test
    of the discordant pairs against 1/2; 1 without discordant pairs. A NaN flag counts as wrong (the
    released test fills missing answers with 0)."""
    a = np.nan_to_num(_flags("c_a", c_a), nan=0.0) == 1
    b = np.nan_to_num(_flags("c_b", c_b), nan=0.0) == 1
    _same_length("c_b", b, "c_a", a.shape[0])
    only_b = int((~a & b).sum())
    only_a = int((a & ~b).sum())
    if only_a + only_b == 0:
        return 1.0
    return float(min(1.0, stats.binomtest(only_b, only_a + only_b, 0.5, alternative="two-sided").pvalue))


def _check_pvalues(pvalues: object) -> np.ndarray:
    p = np.asarray(pvalues)
    if p.ndim != 1 or p.dtype.kind not in "biuf":
        raise ValueError(f"pvalues must be a 1-D array of numbers; got shape {p.shape}, dtype {p.dtype}")
    p = p.astype(float)
    seen = p[np.isfinite(p)]
    if np.any(np.isinf(p)) or (seen.size and (seen.min() < 0 or seen.max() > 1)):
        raise ValueError("pvalues must lie in [0, 1] (NaN for a test not run)")
    return p


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (same shape): the i-th smallest of m becomes
    ``max_{j <= i} min(1, (m - j + 1) p_(j))``. NaN entries stay NaN and do not count in m."""
    p = _check_pvalues(pvalues)
    out = np.full(p.shape, _NAN)
    ok = np.isfinite(p)
    q = p[ok]
    if not q.size:
        return out
    order = np.argsort(q, kind="stable")
    scaled = (q.size - np.arange(q.size)) * q[order]
    adjusted = np.empty(q.size)
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    out[ok] = adjusted
    return out


def benjamini_hochberg(pvalues: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (the released correction of its McNemar table): the i-th
    smallest of m becomes ``min_{j >= i} min(1, p_(j) m / j)``. NaN entries stay NaN and do not count."""
    p = _check_pvalues(pvalues)
    out = np.full(p.shape, _NAN)
    ok = np.isfinite(p)
    q = p[ok]
    if not q.size:
        return out
    order = np.argsort(q, kind="stable")
    scaled = q[order] * q.size / np.arange(1, q.size + 1)
    adjusted = np.empty(q.size)
    adjusted[order] = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    out[ok] = adjusted
    return out


# ---------------------------------------------------------------------------------------------------------
# Tables: summation 2x2, difficulty bins, wrong-answer preferences
# ---------------------------------------------------------------------------------------------------------


def summation_table(correct: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """T1 accuracy by (S5 right?, S9 right?): ``acc`` (2, 2) float and ``counts`` (2, 2) int, row index =
    S5 wrong/right, column index = S9 wrong/right, over views scored on all three; NaN for an empty cell
    (and everywhere when a task is missing)."""
    c, _ = _check_correct("correct", correct)
    acc = np.full((2, 2), _NAN)
    counts = np.zeros((2, 2), dtype=np.int64)
    if any(task not in c for task in ("T1", "S5", "S9")):
        return acc, counts
    rows = np.isfinite(c["T1"]) & np.isfinite(c["S5"]) & np.isfinite(c["S9"])
    for s5 in (0, 1):
        for s9 in (0, 1):
            cell = rows & (c["S5"] == s5) & (c["S9"] == s9)
            counts[s5, s9] = int(cell.sum())
            if counts[s5, s9]:
                acc[s5, s9] = float(c["T1"][cell].mean())
    return acc, counts


def difficulty_factors(truth: Mapping[str, np.ndarray], heights: np.ndarray) -> dict[str, np.ndarray]:
    """The released difficulty factors per view from the truth sheet and the (n_views, 4, 4) height maps:
    "total" (T1), "hidden" (the needed hidden blocks), "layers" (max H), "columns" (#H > 0),
    "fill_ratio" = T1 / (columns * layers) (released: its "total_blocks" is the per-view T1) and
    "fill_ratio_heights" = sum H / (columns * layers); a fill ratio is NaN for an empty structure."""
    t, n = _check_sheet("truth", truth, truth=True)
    missing = [task for task in ("T1", "hidden") if task not in t]
    if missing:
        raise ValueError(f"truth lacks {', '.join(missing)}, which the difficulty factors need")
    h = np.asarray(heights)
    if h.ndim != 3 or h.shape[1:] != (GRID, GRID) or h.dtype.kind not in "iu":
        raise ValueError(f"heights must be an (n_views, {GRID}, {GRID}) int array; got {h.shape}, {h.dtype}")
    if h.shape[0] != n:
        raise ValueError(f"heights must have one map per view of truth ({n}); got {h.shape[0]}")
    if h.size and (h.min() < 0 or h.max() > MAX_HEIGHT):
        raise ValueError(f"heights entries must be in 0..{MAX_HEIGHT}")
    h = h.astype(np.int64)
    columns = (h > 0).sum(axis=(1, 2))
    layers = h.max(axis=(1, 2), initial=0)
    for task, value in (("S3", columns), ("S4", layers)):
        if task in t and not np.array_equal(t[task], value):
            raise ValueError(f"heights disagree with truth[{task!r}] (columns = #H > 0, layers = max H)")
    cells = (columns * layers).astype(float)
    cells[cells == 0] = _NAN
    return {
        "total": t["T1"],
        "hidden": t["hidden"],
        "layers": layers,
        "columns": columns,
        "fill_ratio": t["T1"] / cells,
        "fill_ratio_heights": h.sum(axis=(1, 2)) / cells,
    }


def difficulty_bins(
    values: np.ndarray, correct: np.ndarray, edges: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy (float, NaN when empty) and view count (int) per bin ``(edges[i], edges[i + 1]]``, both
    shape (len(edges) - 1,). Views outside every bin, with a NaN value or an unscored flag are dropped."""
    v = np.asarray(values)
    if v.ndim != 1 or v.dtype.kind not in "biuf":
        raise ValueError(f"values must be a 1-D array of numbers; got shape {v.shape}, dtype {v.dtype}")
    v = v.astype(float)
    c = _flags("correct", correct)
    _same_length("correct", c, "values", v.shape[0])
    e = np.asarray(edges, dtype=float)
    if e.ndim != 1 or e.size < 2 or not np.all(np.isfinite(e)) or np.any(np.diff(e) <= 0):
        raise ValueError(f"edges must be at least two strictly increasing finite numbers; got {edges!r}")
    n_bins = e.size - 1
    index = np.searchsorted(e, v, side="left") - 1
    keep = np.isfinite(v) & np.isfinite(c) & (index >= 0) & (index < n_bins)
    counts = np.bincount(index[keep], minlength=n_bins).astype(np.int64)
    right = np.bincount(index[keep], weights=c[keep], minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(counts > 0, right / np.maximum(counts, 1), _NAN)
    return acc, counts


def wrong_answer_preference(
    chosen_types: np.ndarray, k: int, *, correct_label: str = "correct", among: str = "all"
) -> dict[str, tuple[int, float, float]]:
    """How often each wrong option type was picked, for one MCQ task: type -> (count, share, p-value).

    ``chosen_types`` (n_items,) holds the type of the picked option (``correct_label`` for the right one,
    ``None`` for no answer, dropped). ``among="all"`` (released): share = count / answered items, tested
    one-sided (``greater``, exact binomial) against 1/k, the chance that a uniform pick lands on one given
    option. ``among="wrong"``: share among the wrong picks, tested against 1/(k - 1). Types are ordered by
    count, most picked first.
    """
    arr = np.asarray(chosen_types, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"chosen_types must be 1-D (one pick per item); got shape {arr.shape}")
    k = check_int("k", k, minimum=2)
    among = check_choice("among", among, ("all", "wrong"))
    picks = [x for x in arr.tolist() if x is not None and not (isinstance(x, float) and np.isnan(x))]
    if any(not isinstance(x, str) for x in picks):
        raise TypeError("chosen_types must hold option-type strings (None for no answer)")
    wrong = [x for x in picks if x != correct_label]
    n, chance = (len(picks), 1.0 / k) if among == "all" else (len(wrong), 1.0 / (k - 1))
    labels, counts = np.unique(np.asarray(wrong, dtype=object), return_counts=True) if wrong else ([], [])
    out: dict[str, tuple[int, float, float]] = {}
    for i in sorted(range(len(labels)), key=lambda j: (-counts[j], labels[j])):
        count = int(counts[i])
        p_value = float(stats.binomtest(count, n, chance, alternative="greater").pvalue)
        out[str(labels[i])] = (count, count / n, p_value)
    return out


# ---------------------------------------------------------------------------------------------------------
# Correlations
# ---------------------------------------------------------------------------------------------------------


def _pearson(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Pearson r and p over finite pairs; NaN for fewer than 3 pairs or a constant side (released guard)."""
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size < 3:
        return _NAN, _NAN
    for arr in (x, y):
        if np.ptp(arr) <= 1e-12 * max(1.0, float(np.abs(arr).max())):
            return _NAN, _NAN
    result = stats.pearsonr(x, y)
    return float(result.statistic), float(result.pvalue)


def _group_codes(name: str, groups: object, other: str, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of group labels (any hashable: view ids, scene seeds) and the mask of rows that
    have a label (not None or NaN); code -1 where none."""
    g = np.asarray(groups, dtype=object)
    if g.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one label per row); got shape {g.shape}")
    _same_length(name, g, other, length)
    codes = np.full(length, -1, dtype=np.int64)
    lookup: dict[object, int] = {}
    for i, label in enumerate(g.tolist()):
        if label is None or (isinstance(label, float) and np.isnan(label)):
            continue
        try:
            codes[i] = lookup.setdefault(label, len(lookup))
        except TypeError:
            raise TypeError(f"{name} must hold hashable labels; got {type(label).__name__}") from None
    return codes, codes >= 0


def fixed_effect_correlation(x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> Correlation:
    """Within-group (fixed-effect) Pearson correlation ``(r, p, n)``: x and y, each (n_rows,), minus their
    group means, then Pearson r with scipy's p-value (n - 2 degrees of freedom, as released). Rows with a
    NaN x or y or no group label are dropped first; n is the number of rows kept; r and p are NaN for
    fewer than 3 rows or a constant demeaned side. Adding a per-group constant to x or y leaves r as is."""
    xa = np.asarray(x)
    ya = np.asarray(y)
    for name, arr in (("x", xa), ("y", ya)):
        if arr.ndim != 1 or arr.dtype.kind not in "biuf":
            raise ValueError(
                f"{name} must be a 1-D array of numbers; got shape {arr.shape}, dtype {arr.dtype}"
            )
    _same_length("y", ya, "x", xa.shape[0])
    xa, ya = xa.astype(float), ya.astype(float)
    codes, labelled = _group_codes("groups", groups, "x", xa.shape[0])
    keep = labelled & np.isfinite(xa) & np.isfinite(ya)
    n = int(keep.sum())
    if n < 3:
        return _NAN, _NAN, n
    codes, xk, yk = codes[keep], xa[keep], ya[keep]
    sizes = np.bincount(codes).astype(float)
    sizes[sizes == 0] = 1.0
    x_dm = xk - (np.bincount(codes, weights=xk) / sizes)[codes]
    y_dm = yk - (np.bincount(codes, weights=yk) / sizes)[codes]
    r, p = _pearson(x_dm, y_dm)
    return r, p, n


def _check_bundles(bundles: Mapping[str, Sequence[str]] | None) -> dict[str, tuple[str, ...]]:
    if bundles is None:
        return dict(BUNDLES)
    if not isinstance(bundles, Mapping) or not bundles:
        raise ValueError("bundles must be a non-empty dict name -> tasks")
    out = {}
    for name, tasks in bundles.items():
        if isinstance(tasks, str) or not tasks or any(task not in SHEET_KEYS for task in tasks):
            raise ValueError(f"bundles[{name!r}] must be a non-empty sequence of task names; got {tasks!r}")
        out[str(name)] = tuple(tasks)
    return out


def bundle_score(correct: Mapping[str, np.ndarray], tasks: Sequence[str]) -> np.ndarray:
    """Per-row bundle score (n_rows,): the mean correctness over the ``tasks`` present in ``correct``,
    ignoring unscored (NaN) flags; NaN where none is scored or no task is present."""
    c, n = _check_correct("correct", correct)
    present = [c[task] for task in tasks if task in c]
    if not present:
        return np.full(n or 0, _NAN)
    stack = np.vstack(present)
    scored = np.isfinite(stack).sum(axis=0)
    total = np.nansum(stack, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(scored > 0, total / np.maximum(scored, 1), _NAN)


def bundle_correlations(
    correct: Mapping[str, np.ndarray],
    groups: np.ndarray,
    *,
    bundles: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Correlation]:
    """Fixed-effect correlation ``(r, p, n)`` of each bundle's score with T1 correctness, within ``groups``
    (n_rows,), over pooled rows (responders x views, grouped by view, is the released aggregate), keyed by
    bundle name (default :data:`BUNDLES`), plus :data:`ROTATION_PAIR`: T2a against T2b, same
    estimator. An entry whose tasks are missing is ``(nan, nan, 0)``."""
    c, n = _check_correct("correct", correct)
    chosen = _check_bundles(bundles)
    _group_codes("groups", groups, "correct", n or 0)
    out: dict[str, Correlation] = {}
    for name, tasks in chosen.items():
        if "T1" not in c or not any(task in c for task in tasks):
            out[name] = (_NAN, _NAN, 0)
            continue
        out[name] = fixed_effect_correlation(bundle_score(c, tasks), c["T1"], groups)
    if "T2a" in c and "T2b" in c:
        out[ROTATION_PAIR] = fixed_effect_correlation(c["T2a"], c["T2b"], groups)
    else:
        out[ROTATION_PAIR] = (_NAN, _NAN, 0)
    return out


def _varying(values: np.ndarray, codes: np.ndarray, labelled: np.ndarray) -> np.ndarray:
    """Bool per group code: does the finite part of ``values`` differ within the group?"""
    n_groups = int(codes.max()) + 1 if labelled.any() else 0
    hi = np.full(n_groups, -np.inf)
    lo = np.full(n_groups, np.inf)
    keep = labelled & np.isfinite(values)
    np.maximum.at(hi, codes[keep], values[keep])
    np.minimum.at(lo, codes[keep], values[keep])
    return hi - lo > 0


def responder_bundle_correlations(
    correct: Mapping[str, np.ndarray],
    groups: np.ndarray,
    responders: np.ndarray,
    *,
    bundles: Mapping[str, Sequence[str]] | None = None,
) -> dict[object, dict[str, Correlation]]:
    """Per-responder correlations over pooled rows, as the released per-model rows: for each bundle, plain
    Pearson ``(r, p, n)`` of bundle score and T1 correctness over the responder's rows in the groups where
    the bundle score varies across the pooled rows (all rows if it varies nowhere); for
    :data:`ROTATION_PAIR`, T2a against T2b over the groups where T2a or T2b varies (none: NaN). Returns
    responder -> name -> correlation, responders in order of first appearance."""
    c, n = _check_correct("correct", correct)
    chosen = _check_bundles(bundles)
    n = n or 0
    codes, labelled = _group_codes("groups", groups, "correct", n)
    who = np.asarray(responders, dtype=object)
    if who.ndim != 1:
        raise ValueError(f"responders must be 1-D (one label per row); got shape {who.shape}")
    _same_length("responders", who, "correct", n)
    names = list(dict.fromkeys(who.tolist()))
    out: dict[object, dict[str, Correlation]] = {name: {} for name in names}

    def corr(x: np.ndarray, y: np.ndarray, rows: np.ndarray) -> Correlation:
        r, p = _pearson(x[rows], y[rows])
        return r, p, int((rows & np.isfinite(x) & np.isfinite(y)).sum())

    for bundle, tasks in chosen.items():
        present = "T1" in c and any(task in c for task in tasks)
        score = bundle_score(c, tasks) if present else None
        varies = _varying(score, codes, labelled) if present else None
        for name in names:
            if not present:
                out[name][bundle] = (_NAN, _NAN, 0)
                continue
            rows = who == name
            if varies.any():
                rows = rows & labelled & varies[np.maximum(codes, 0)]
            out[name][bundle] = corr(score, c["T1"], rows)
    for name in names:
        if "T2a" not in c or "T2b" not in c:
            out[name][ROTATION_PAIR] = (_NAN, _NAN, 0)
            continue
        varies = _varying(c["T2a"], codes, labelled) | _varying(c["T2b"], codes, labelled)
        rows = (who == name) & labelled & varies[np.maximum(codes, 0)] if varies.size else np.zeros(n, bool)
        out[name][ROTATION_PAIR] = corr(c["T2a"], c["T2b"], rows)
    return out


__all__ = [
    "BUNDLES",
    "CHAIN_EDGES",
    "COLLAPSE_TASKS",
    "DIFFICULTY_BINS",
    "DIRECTIONS",
    "HIDDEN_SUPPORT_EDGES",
    "PROFILE_COLUMNS",
    "RELEASED_DIRECTION",
    "ROTATION_PAIR",
    "SHEET_KEYS",
    "VISIBLE_SUPPORT_EDGES",
    "Correlation",
    "accuracies",
    "benjamini_hochberg",
    "bundle_correlations",
    "bundle_score",
    "chain_integrity",
    "chance_adjusted",
    "collapse_share",
    "correctness",
    "difficulty_bins",
    "difficulty_factors",
    "fixed_effect_correlation",
    "hidden_support",
    "holm",
    "mcnemar",
    "profile",
    "profile_from_correct",
    "relation_integrity",
    "responder_bundle_correlations",
    "summation_conditional",
    "summation_mechanism",
    "summation_residual",
    "summation_table",
    "visible_support",
    "wilson",
    "wrong_answer_preference",
]
