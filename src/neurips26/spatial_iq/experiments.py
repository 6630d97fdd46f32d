"""Everything the claims are decided from, measured side by side on the same evaluation views.

- :func:`responder_sheets`: the CPU responders of Table 1 — the compositional solver exact and at the
  noise level whose total-count accuracy matches the shortcut's (tuned on the validation views, never the
  test views), the shortcut responder, and the backbone VLM asked every question;
- :func:`trained_sheets`: the four training conditions under both protocols;
- :func:`mcq_calibration`: the multiple-choice format at k = 3, 4, 5 for a uniformly random chooser and the
  exact solver (it picks the option whose grouping matches what it perceives);
- :func:`run_claims`: all of it, cached by the checkpoints' weights and the data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from neurips26.cache import cached
from neurips26.scales import pick
from neurips26.spatial_iq import metrics
from neurips26.spatial_iq.dataset import ViewSet, views
from neurips26.spatial_iq.evaluate import PROTOCOLS, answer_sheet
from neurips26.spatial_iq.mcq import CHOICES, mcq_item, option_partition, task_groups
from neurips26.spatial_iq.shortcut import fit_shortcut
from neurips26.spatial_iq.solver import Perception, solve
from neurips26.spatial_iq.tasks import TASKS
from neurips26.validation import check_int

#: The sub-tasks asked in the multiple-choice format (T1 is a choice of numbers).
MCQ_TASKS: tuple[str, ...] = tuple(t for t in TASKS if t != "S1")


@dataclass(frozen=True)
class ClaimsConfig:
    """Solver noise search (levels tried), MCQ items per k, seeds."""

    noise_grid: tuple[float, ...] = tuple(np.round(np.arange(0.0, 0.61, 0.02), 2))
    mcq_items: int = 1000
    seed: int = 0

    @classmethod
    def for_scale(cls, scale: str) -> ClaimsConfig:
        return pick(scale, smoke=cls(noise_grid=(0.0, 0.2, 0.4), mcq_items=60), default=cls())


def solver_sheet(data: ViewSet, p: float, seed: int) -> dict[str, np.ndarray]:
    return solve(data.labels, data.partner_labels(), Perception(p), seed=seed)


def tune_solver(data: ViewSet, target_t1: float, grid: tuple[float, ...], *, seed: int) -> float:
    """The noise level of ``grid`` whose solver T1 accuracy on ``data`` is closest to ``target_t1``."""
    accs = [float(np.mean(solver_sheet(data, p, seed)["T1"] == data.truth["T1"])) for p in grid]
    return float(grid[int(np.argmin(np.abs(np.array(accs) - target_t1)))])


def responder_sheets(
    train: ViewSet, calibration: ViewSet, test: ViewSet, backbone, config: ClaimsConfig
) -> tuple[dict[str, dict[str, np.ndarray]], float]:
    """Answer sheets of the Table-1 responders on ``test`` and the tuned solver noise (module doc): the
    shortcut is fitted on ``train``; the solver's noise is set so that its total-count accuracy on
    ``calibration`` (views of neither set) matches the shortcut's there."""
    shortcut = fit_shortcut(train)
    target = float(np.mean(shortcut.answer(calibration)["T1"] == calibration.truth["T1"]))
    p = tune_solver(calibration, target, config.noise_grid, seed=config.seed)
    sheets = {
        "solver (exact)": solver_sheet(test, 0.0, config.seed + 1),
        "solver (tuned)": solver_sheet(test, p, config.seed + 1),
        "shortcut": shortcut.answer(test),
        "backbone": answer_sheet(backbone, test, "plain", "separate"),
    }
    return sheets, p


def trained_sheets(models: Mapping[str, tuple[object, str]], test: ViewSet) -> dict[str, dict[str, dict]]:
    """``{protocol: {model: sheet}}`` for every (model, kind) in ``models``."""
    return {
        protocol: {name: answer_sheet(m, test, kind, protocol) for name, (m, kind) in models.items()}
        for protocol in PROTOCOLS
    }


def _perceived_groups(labels, task: str, p: float, rng: np.random.Generator) -> frozenset:
    """The block grouping the solver would draw for ``task``: the truth's, with a block dropped at rate p."""
    groups = task_groups(labels, task)
    keep = rng.random(groups.shape) >= p
    slots = np.flatnonzero((groups * keep).reshape(-1))
    by_group: dict[int, set[int]] = {}
    for s in slots:
        by_group.setdefault(int(groups.reshape(-1)[s]), set()).add(int(s))
    return frozenset(frozenset(v) for v in by_group.values())


def mcq_calibration(test: ViewSet, config: ClaimsConfig) -> dict[str, dict[int, float]]:
    """Raw accuracy at k = 3, 4, 5 of a uniformly random chooser and the exact solver over seeded items."""
    n = check_int("mcq_items", config.mcq_items, minimum=1)
    rng = np.random.default_rng(config.seed + 7)
    out: dict[str, dict[int, float]] = {"random": {}, "solver (exact)": {}}
    for k in CHOICES:
        hits_random = hits_solver = 0
        for i in range(n):
            row = int(rng.integers(len(test)))
            task = MCQ_TASKS[int(rng.integers(len(MCQ_TASKS)))]
            item = mcq_item(test.labels[row], task, k=k, seed=config.seed * 100_003 + i)
            hits_random += int(rng.integers(k)) == item.answer
            if task == "T1":
                guess = item.options.index(test.truth["T1"][row])
            else:
                seen = _perceived_groups(test.labels[row], task, 0.0, rng)
                matches = [
                    j for j, o in enumerate(item.options) if o is not None and option_partition(o) == seen
                ]
                guess = matches[0] if matches else int(rng.integers(k))
            hits_solver += guess == item.answer
        out["random"][k] = hits_random / n
        out["solver (exact)"][k] = hits_solver / n
    return out


@dataclass(frozen=True)
class ClaimsData:
    """Sheets, the tuned noise, MCQ accuracies, the truth and heights of the test views."""

    responders: dict[str, dict[str, np.ndarray]]
    trained: dict[str, dict[str, dict[str, np.ndarray]]]
    solver_p: float
    mcq: dict[str, dict[int, float]]
    truth: dict[str, np.ndarray]
    heights: np.ndarray
    scene_index: np.ndarray


def run_claims(scale: str = "default") -> ClaimsData:
    """Every measurement of the claims on the evaluation views (cached by the checkpoints' weights). The
    models answer on :func:`~neurips26.train.shipped_threads` threads (one below ``paper``), at the paper
    scale on :func:`~neurips26.train.choose_device`."""
    from neurips26.spatial_iq.prepare import MODELS, NAMES, pretrained, validation_views

    config = ClaimsConfig.for_scale(scale)
    hashes = {n: pretrained(n, scale, verbose=False)[1].weights_hash for n in NAMES}

    def compute() -> ClaimsData:
        import torch

        from neurips26.train import choose_device, shipped_threads, torch_threads

        device = choose_device() if scale == "paper" else torch.device("cpu")
        with torch_threads(shipped_threads(scale)):
            train, test = views("train", scale, verbose=False), views("eval", scale, verbose=False)
            models = {
                r.name: (pretrained(r.name, scale, verbose=False)[0].to(device), r.kind) for r in MODELS
            }
            calibration = validation_views(scale)
            responders, p = responder_sheets(train, calibration, test, models["backbone"][0], config)
            return ClaimsData(
                responders=responders,
                trained=trained_sheets(models, test),
                solver_p=p,
                mcq=mcq_calibration(test, config),
                truth=test.truth,
                heights=test.heights,
                scene_index=test.scene_index,
            )

    return cached(
        "siq-claims",
        {"scale": scale, "config": config, "models": hashes},
        compute,
        package="neurips26.spatial_iq",
    )


def table(
    sheets: Mapping[str, Mapping[str, np.ndarray]], truth: Mapping[str, np.ndarray], direction: str
) -> dict:
    """``{name: profile row}`` (:func:`~neurips26.spatial_iq.metrics.profile`) in ``direction``."""
    return {name: metrics.profile(s, truth, direction) for name, s in sheets.items()}


MIN_BIN = 20
#: The responders whose difficulty curves and rotation correlations decide C6 and C8.
ROTATION_RESPONDERS = ("backbone", "solver (tuned)")


def largest_step(acc: np.ndarray, counts: np.ndarray, *, falling: bool = False) -> float:
    """The largest rise (``falling``: fall) of accuracy between consecutive bins holding ≥ 20 views."""
    a = np.asarray(acc)[np.asarray(counts) >= MIN_BIN]
    if a.size < 2:
        return float("nan")
    steps = np.diff(a)
    return float((-steps if falling else steps).max())


@dataclass(frozen=True)
class Summary:
    """What the verdicts read: Table-1 rows (responders, Section-5 direction), Table-4 rows per protocol
    (trained models, released direction), the tuned solver's 2x2 table, difficulty steps per factor,
    adjusted random MCQ accuracy and raw solver MCQ accuracy per k, rotation correlations per responder."""

    table1: dict[str, dict[str, float]]
    table4: dict[str, dict[str, dict[str, float]]]
    cells: np.ndarray
    counts: np.ndarray
    rises: dict[str, float]
    mcq_random: dict[int, float]
    mcq_solver: dict[int, float]
    rotation: dict[str, tuple[float, float]]


def summarise(data: ClaimsData) -> Summary:
    """The numbers the claims are decided from (see :class:`Summary`)."""
    d1, d2 = metrics.DIRECTIONS
    table1 = table(data.responders, data.truth, d1)
    table4 = {p: table(sheets, data.truth, d2) for p, sheets in data.trained.items()}
    solver = metrics.correctness(data.responders["solver (tuned)"], data.truth)
    cells, counts = metrics.summation_table(solver)
    factors = metrics.difficulty_factors(data.truth, data.heights)
    rises = {}
    for factor in ("total", "hidden", "layers", "fill_ratio"):
        edges, _ = metrics.DIFFICULTY_BINS[factor]
        acc, n = metrics.difficulty_bins(factors[factor], solver["T1"], edges)
        rises[factor] = largest_step(acc, n, falling=factor == "fill_ratio")
    rotation = {}
    for name in ROTATION_RESPONDERS:
        c = metrics.correctness(data.responders[name], data.truth)
        corr = metrics.bundle_correlations(c, data.scene_index)
        rotation[name] = (corr["visible_hidden"][0], corr["rotation"][0])
    return Summary(
        table1=table1,
        table4=table4,
        cells=cells,
        counts=counts,
        rises=rises,
        mcq_random={k: float(metrics.chance_adjusted(v, k)) for k, v in data.mcq["random"].items()},
        mcq_solver=dict(data.mcq["solver (exact)"]),
        rotation=rotation,
    )


__all__ = [
    "MCQ_TASKS",
    "MIN_BIN",
    "ROTATION_RESPONDERS",
    "ClaimsConfig",
    "ClaimsData",
    "Summary",
    "largest_step",
    "summarise",
    "mcq_calibration",
    "responder_sheets",
    "run_claims",
    "solver_sheet",
    "table",
    "trained_sheets",
    "tune_solver",
]
