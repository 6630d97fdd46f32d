"""Chapter 18's experiments: every method on one scene set, scored on the reference proxies.

**Scenes.** :func:`scene_set` builds, for each room type, seed and density of the :class:`ScenePlan`, the room
and its furniture (:func:`~neurips26.iohp.rooms.sample_room`), the initial layout a language model would
propose, mistakes included (:func:`~neurips26.iohp.initial.initial_layout`), and the reference proxies
(:func:`~neurips26.iohp.proxy.default_proxies`) that every method is scored on. At default: seeds 0-5, four
room types, medium and dense: 48 scenes, the same for every method (the evaluation seeds; the development
work used seeds 100 and up).

**Methods** (:data:`METHODS`), all starting from the same scenes:

* ``initial``: the initial layout as proposed; ``random``: uniform random floor poses;
* ``corpus``: the corpus generator on the same rooms (the clean rule-based layout plus ~30 % blocked zones,
  :func:`~neurips26.iohp.corpus.add_flaws`): what "designer data" looks like here;
* ``atiss``: the ATISS-style decoder (:mod:`neurips26.iohp.prepare`) placing the given pieces;
  ``layoutgpt``: the nearest corpus exemplar, rescaled; ``holodeck``: depth-first search under a node budget;
* ``layoutvlm``: the optimiser without any proxy term; ``clearance``: the optimiser with a uniform 0.6 m
  strip in front of every piece instead of the inferred proxies;
* ``iohp``: proxies inferred zero-shot (the offline oracle, or any :mod:`neurips26.llm` backend) as keep-out
  zones and anchors; ``conflict_only`` / ``functional_only``: the two ablations; ``noisy``: IOHP with the
  oracle's answers perturbed (:func:`~neurips26.iohp.proxy.proxy_oracle` at ``noise``);
  ``annealing``: IOHP's objective minimised by simulated annealing instead of Adam.

:func:`run_method` returns a :class:`MethodRun` (layouts, seconds, work per scene, per-scene metrics), cached
with :func:`neurips26.cache.cached`; :func:`benchmark_table` puts runs side by side; :func:`noise_curve`
sweeps the oracle's noise. No claim is about wall clock: the work per scene (objective evaluations, DFS
nodes, decoded tokens, exemplars compared) sits beside the seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from neurips26.cache import cached
from neurips26.iohp.baselines.atiss import OBJECT_TOKENS, atiss_layout
from neurips26.iohp.baselines.clearance import uniform_clearance_proxies
from neurips26.iohp.baselines.dfs import dfs_layout
from neurips26.iohp.baselines.layoutgpt import exemplar_index, layoutgpt_layout
from neurips26.iohp.baselines.random_poses import random_poses
from neurips26.iohp.corpus import add_flaws, build_corpus, split_corpus
from neurips26.iohp.initial import initial_layout, propose_initial
from neurips26.iohp.layout import ROOM_TYPES, Layout
from neurips26.iohp.metrics import LayoutMetrics, layout_metrics
from neurips26.iohp.objective import CONFLICT_ONLY, FUNCTIONAL_ONLY, IOHP, LAYOUTVLM, Weights, build_problem
from neurips26.iohp.optimize import OptimizeResult, anneal, optimize
from neurips26.iohp.prepare import SEED, VALIDATION, pretrained
from neurips26.iohp.proxy import Proxy, allowed_matrix, attach, default_proxies, infer_proxies, proxy_oracle
from neurips26.iohp.rooms import sample_room
from neurips26.llm import ChatModel
from neurips26.progress import progress
from neurips26.scales import pick
from neurips26.seeding import sub_seed
from neurips26.tables import markdown_table_text
from neurips26.validation import check_choice, check_float, check_seed

DENSITIES: tuple[str, ...] = ("medium", "dense")
NOISE = 0.3
"""The noisy oracle of claim C7: sizes off by up to 30 %, 15 % of the proxies dropped, 15 % spurious links."""
NOISE_LEVELS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)

METHODS: tuple[str, ...] = (
    "initial",
    "random",
    "corpus",
    "atiss",
    "layoutgpt",
    "holodeck",
    "layoutvlm",
    "clearance",
    "iohp",
    "conflict_only",
    "functional_only",
    "noisy",
    "annealing",
)
LABELS: dict[str, str] = {
    "initial": "initial layout",
    "random": "random poses",
    "corpus": "corpus generator",
    "atiss": "ATISS-style",
    "layoutgpt": "LayoutGPT-style",
    "holodeck": "Holodeck-style DFS",
    "layoutvlm": "LayoutVLM-style",
    "clearance": "uniform clearance",
    "iohp": "IOHP",
    "conflict_only": "IOHP without anchors",
    "functional_only": "IOHP without keep-out",
    "noisy": "IOHP, noisy oracle",
    "annealing": "IOHP, annealing",
}
WORK_UNITS: dict[str, str] = {
    "atiss": "tokens decoded",
    "layoutgpt": "exemplars compared",
    "holodeck": "DFS nodes",
    "layoutvlm": "E evaluations",
    "clearance": "E evaluations",
    "iohp": "E evaluations",
    "conflict_only": "E evaluations",
    "functional_only": "E evaluations",
    "noisy": "E evaluations",
    "annealing": "E evaluations",
}

METRIC_FIELDS: tuple[str, ...] = (
    "collision_rate",
    "out_of_bounds",
    "proxy_conflict",
    "accessibility",
    "reachability",
    "functional_satisfaction",
    "functional_within_reach",
    "functional_faces",
    "functional_view_range",
    "functional_tucked_under",
    "semantic_satisfaction",
    "free_ratio",
    "navigable",
    "door_blocked",
)
"""The per-scene metrics a :class:`MethodRun` keeps (NaN where a scene has no relation of a kind)."""


@dataclass(frozen=True)
class ScenePlan:
    """The scenes and the optimiser's budget at one scale."""

    seeds: tuple[int, ...] = (0, 1, 2, 3, 4, 5)
    densities: tuple[str, ...] = DENSITIES
    steps: int = 150
    repair_steps: int = 50
    restarts: int = 2
    corpus: int = 2000


def plan_for(scale: str = "default") -> ScenePlan:
    """Default: 48 scenes, 150 + 50 Adam steps, 2 restarts; smoke: one medium scene a type, 30 + 10 steps."""
    return pick(
        scale,
        smoke=ScenePlan(seeds=(0,), densities=("medium",), steps=30, repair_steps=10, restarts=1, corpus=40),
        default=ScenePlan(),
    )


@dataclass(frozen=True, eq=False)
class Scene:
    """One evaluation scene: ``layout`` is the initial proposal (room, furniture, relations, poses) and
    ``proxies`` the reference proxies every method is scored on."""

    room_type: str
    density: str
    seed: int
    layout: Layout
    proxies: tuple[Proxy, ...]


def scene_set(scale: str = "default") -> tuple[Scene, ...]:
    """The scenes of :func:`plan_for` ``(scale)``, ordered by room type, seed, density."""
    plan = plan_for(scale)
    scenes = []
    for room_type in ROOM_TYPES:
        for seed in plan.seeds:
            for density in plan.densities:
                room, furniture = sample_room(room_type, seed, density=density)
                layout = initial_layout(room, furniture, seed)
                scenes.append(Scene(room_type, density, seed, layout, default_proxies(layout)))
    return tuple(scenes)


@dataclass(frozen=True, eq=False)
class MethodRun:
    """What one method did on the scene set: its ``layouts`` (one per scene), the wall-clock ``seconds`` of
    the whole set, the ``work`` per scene in ``work_unit``, the LLM ``fallbacks`` (objects that got default
    proxies after a malformed answer) and ``metrics``: ``{field: (S,) array}`` over :data:`METRIC_FIELDS`."""

    method: str
    layouts: tuple[Layout, ...]
    seconds: float
    work: np.ndarray
    work_unit: str
    fallbacks: int
    metrics: dict[str, np.ndarray]

    def mean(self, field: str, mask: np.ndarray | None = None) -> float:
        """The mean of ``field`` over the scenes (those where ``mask`` is True), NaN entries skipped."""
        values = self.metrics[check_choice("field", field, METRIC_FIELDS)]
        if mask is not None:
            values = values[np.asarray(mask, dtype=bool)]
        values = values[~np.isnan(values)]
        return float(values.mean()) if len(values) else float("nan")


# ----------------------------------------------------------------------------------------------------------
# Scoring
# ----------------------------------------------------------------------------------------------------------


def score(layout: Layout, proxies: Sequence[Proxy]) -> LayoutMetrics:
    """All metrics of ``layout`` on the reference ``proxies`` attached to its own poses (conflicts with the
    pieces each proxy may overlap excluded, :func:`~neurips26.iohp.proxy.allowed_matrix`)."""
    proxies = tuple(proxies)
    if not proxies:
        return layout_metrics(layout, reference=proxies)
    rects = attach(proxies, layout.poses(), layout.sizes())
    owner = np.array([p.owner for p in proxies], dtype=np.int64)
    allowed = allowed_matrix(proxies, layout.categories)
    return layout_metrics(layout, rects, owner=owner, allowed=allowed, reference=proxies)


def score_all(layouts: Sequence[Layout], scenes: Sequence[Scene]) -> dict[str, np.ndarray]:
    """Per-scene :data:`METRIC_FIELDS` of ``layouts`` (one per scene), None as NaN, booleans as 0/1."""
    rows = [score(lay, s.proxies) for lay, s in zip(layouts, scenes, strict=True)]
    return {
        f: np.array([np.nan if getattr(m, f) is None else float(getattr(m, f)) for m in rows])
        for f in METRIC_FIELDS
    }


# ----------------------------------------------------------------------------------------------------------
# Methods
# ----------------------------------------------------------------------------------------------------------


def inferred_proxies(
    scenes: Sequence[Scene], backend: ChatModel | None = None, *, noise: float = 0.0, seed: int = 0
) -> tuple[tuple[tuple[Proxy, ...], ...], int]:
    """The proxies of every scene asked of ``backend`` (default: the offline oracle at ``noise``, seeded by
    ``seed``) and the number of objects that fell back to the defaults."""
    model = proxy_oracle(noise, seed) if backend is None else backend
    out, fallbacks = [], 0
    for scene in scenes:
        got = infer_proxies(scene.layout, model)
        out.append(got.proxies)
        fallbacks += got.fallbacks
    return tuple(out), fallbacks


def optimise_layouts(
    scenes: Sequence[Scene],
    proxies: Sequence[Sequence[Proxy]] | None,
    weights: Weights,
    scale: str = "default",
    *,
    seed: int = 0,
    annealing: bool = False,
) -> tuple[tuple[Layout, ...], OptimizeResult]:
    """Minimise E from every scene's initial layout with ``proxies`` (``None``: no proxy at all) under
    ``weights``, at the budget of :func:`plan_for` ``(scale)``; the layouts and the optimiser's result."""
    plan = plan_for(scale)
    problem = build_problem([s.layout for s in scenes], proxies)
    if annealing:
        result = anneal(
            problem, steps=plan.steps + plan.repair_steps, restarts=plan.restarts, weights=weights, seed=seed
        )
    else:
        result = optimize(
            problem,
            steps=plan.steps,
            repair_steps=plan.repair_steps,
            restarts=plan.restarts,
            weights=weights,
            seed=seed,
        )
    return tuple(result.layouts(problem)), result


def _per_scene(
    scenes: Sequence[Scene], place: Callable[[int, Scene], tuple[Layout, float]], desc: str
) -> tuple[list[Layout], np.ndarray]:
    layouts, work = [], []
    for i, scene in enumerate(progress(scenes, desc=desc)):
        layout, units = place(i, scene)
        layouts.append(layout)
        work.append(units)
    return layouts, np.array(work, dtype=float)


def _place(
    method: str, scenes: tuple[Scene, ...], scale: str, noise: float, seed: int, backend: ChatModel | None
) -> tuple[list[Layout], np.ndarray, int]:
    """The layouts of ``method``, its work per scene and its LLM fallbacks."""
    n = len(scenes)
    if method == "initial":
        return [s.layout for s in scenes], np.zeros(n), 0
    if method == "random":
        return [random_poses(s.layout, sub_seed(seed, i)) for i, s in enumerate(scenes)], np.zeros(n), 0
    if method == "corpus":

        def designer(i: int, s: Scene) -> tuple[Layout, float]:
            clean = propose_initial(s.layout.room, s.layout.furniture, s.seed, mistakes=0.0).clean
            return add_flaws(clean, s.seed)[0], 0.0

        layouts, work = _per_scene(scenes, designer, "corpus generator")
        return layouts, work, 0
    if method == "atiss":
        model, _ = pretrained(scale, verbose=False)
        layouts, work = _per_scene(
            scenes,
            lambda i, s: (atiss_layout(model, s.layout, sub_seed(seed, i)), OBJECT_TOKENS * s.layout.n + 1.0),
            "ATISS-style",
        )
        return layouts, work, 0
    if method == "layoutgpt":
        corpus = build_corpus(plan_for(scale).corpus)
        train, _ = split_corpus(corpus, validation=VALIDATION, seed=SEED)
        index = exemplar_index([corpus[i] for i in train])
        layouts, work = _per_scene(
            scenes,
            lambda i, s: (layoutgpt_layout(index, s.layout).layout, float(len(train))),
            "LayoutGPT-style",
        )
        return layouts, work, 0
    if method == "holodeck":

        def search(i: int, s: Scene) -> tuple[Layout, float]:
            result = dfs_layout(s.layout)
            return result.layout, float(result.nodes)

        layouts, work = _per_scene(scenes, search, "Holodeck-style DFS")
        return layouts, work, 0

    fallbacks = 0
    if method == "layoutvlm":
        proxies, weights = None, LAYOUTVLM
    elif method == "clearance":
        proxies, weights = tuple(uniform_clearance_proxies(s.layout) for s in scenes), IOHP
    else:
        proxies, fallbacks = inferred_proxies(
            scenes, backend, noise=noise if method == "noisy" else 0.0, seed=seed
        )
        weights = {"conflict_only": CONFLICT_ONLY, "functional_only": FUNCTIONAL_ONLY}.get(method, IOHP)
    layouts, result = optimise_layouts(
        scenes, proxies, weights, scale, seed=seed, annealing=method == "annealing"
    )
    return list(layouts), result.evaluations.astype(float), fallbacks


def run_method(
    method: str,
    scale: str = "default",
    *,
    noise: float = NOISE,
    seed: int = 0,
    backend: ChatModel | None = None,
    verbose: bool = False,
) -> MethodRun:
    """Run ``method`` (one of :data:`METHODS`) on :func:`scene_set` ``(scale)`` and score it.

    ``noise``: the oracle's noise for ``"noisy"`` (ignored otherwise); ``seed``: restarts, random poses,
    ATISS samples and the noisy oracle's draws; ``backend``: a :class:`neurips26.llm.ChatModel` asked for the
    proxies instead of the offline oracle (IOHP, its ablations and annealing; then nothing is cached, since a
    live model need not answer the same twice). Cached on the method, scale, noise, seed and plan.
    """
    method = check_choice("method", method, METHODS)
    noise = check_float("noise", noise, minimum=0.0, maximum=1.0)
    seed = check_seed("seed", seed)
    if backend is not None and not isinstance(backend, ChatModel):
        raise TypeError(f"backend must be a ChatModel or None; got {type(backend).__name__}")

    def compute() -> MethodRun:
        scenes = scene_set(scale)
        start = time.perf_counter()
        layouts, work, fallbacks = _place(method, scenes, scale, noise, seed, backend)
        seconds = time.perf_counter() - start
        return MethodRun(
            method=method,
            layouts=tuple(layouts),
            seconds=seconds,
            work=work,
            work_unit=WORK_UNITS.get(method, "none"),
            fallbacks=fallbacks,
            metrics=score_all(layouts, scenes),
        )

    if backend is not None:
        return compute()
    config = {
        "method": method,
        "scale": scale,
        "noise": noise if method == "noisy" else None,
        "seed": seed,
        "plan": plan_for(scale),
    }
    return cached("iohp-run", config, compute, package="neurips26.iohp", verbose=verbose)


def run_all(
    methods: Sequence[str] = METHODS, scale: str = "default", *, seed: int = 0, verbose: bool = False
) -> dict[str, MethodRun]:
    """:func:`run_method` for each of ``methods`` (same scenes, same seed), in order."""
    return {m: run_method(m, scale, seed=seed, verbose=verbose) for m in progress(methods, desc="methods")}


# ----------------------------------------------------------------------------------------------------------
# Tables and sweeps
# ----------------------------------------------------------------------------------------------------------

TABLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("collision_rate", "colliding pairs"),
    ("out_of_bounds", "out of bounds"),
    ("proxy_conflict", "proxy conflict"),
    ("accessibility", "accessibility"),
    ("reachability", "reachability"),
    ("functional_satisfaction", "functional"),
    ("semantic_satisfaction", "semantic"),
)


def scene_mask(
    scenes: Sequence[Scene], *, room_type: str | None = None, density: str | None = None
) -> np.ndarray:
    """Boolean (S,): the scenes of ``room_type`` and ``density`` (None: any)."""
    return np.array(
        [(room_type in (None, s.room_type)) and (density in (None, s.density)) for s in scenes], dtype=bool
    )


def benchmark_rows(
    runs: dict[str, MethodRun],
    scenes: Sequence[Scene],
    *,
    room_type: str | None = None,
    density: str | None = None,
) -> list[list[object]]:
    """One row per run: label, the means of :data:`TABLE_COLUMNS` (percent), seconds per scene, work per
    scene and its unit, over the scenes selected by ``room_type`` and ``density``."""
    mask = scene_mask(scenes, room_type=room_type, density=density)
    rows = []
    for name, run in runs.items():
        row: list[object] = [LABELS[name]]
        row += [f"{100 * run.mean(f, mask):.1f}" for f, _ in TABLE_COLUMNS]
        row.append(f"{run.seconds / len(scenes):.2f}")
        row.append("–" if run.work_unit == "none" else f"{run.work[mask].mean():,.0f} {run.work_unit}")
        rows.append(row)
    return rows


def benchmark_table(
    runs: dict[str, MethodRun],
    scenes: Sequence[Scene],
    *,
    room_type: str | None = None,
    density: str | None = None,
) -> str:
    """The Markdown table of :func:`benchmark_rows` (percentages; lower is better for the first three)."""
    header = ["method", *(label + " %" for _, label in TABLE_COLUMNS), "s / scene", "work / scene"]
    return markdown_table_text(header, benchmark_rows(runs, scenes, room_type=room_type, density=density))


@dataclass(frozen=True)
class NoiseCurve:
    """IOHP's means over the scenes at each oracle ``levels`` entry: ``accessibility``, ``functional``
    (satisfaction) and ``conflict`` (proxy conflict), each (L,); ``layoutvlm``: the LayoutVLM-style means of
    the same three, the line a noisy IOHP must stay above."""

    levels: tuple[float, ...]
    accessibility: np.ndarray
    functional: np.ndarray
    conflict: np.ndarray
    layoutvlm: dict[str, float]


def noise_curve(
    levels: Sequence[float] = NOISE_LEVELS, scale: str = "default", *, seed: int = 0, verbose: bool = False
) -> NoiseCurve:
    """IOHP with the oracle's answers perturbed at each of ``levels`` (0 = the clean oracle, the ``iohp``
    run), on the same scenes; cached per level through :func:`run_method`."""
    levels = tuple(check_float(f"levels[{i}]", v, minimum=0.0, maximum=1.0) for i, v in enumerate(levels))
    if not levels:
        raise ValueError("levels must not be empty")
    runs = [
        run_method("iohp" if v == 0 else "noisy", scale, noise=v, seed=seed, verbose=verbose)
        for v in progress(levels, desc="noise levels")
    ]
    base = run_method("layoutvlm", scale, seed=seed, verbose=verbose)
    return NoiseCurve(
        levels=levels,
        accessibility=np.array([r.mean("accessibility") for r in runs]),
        functional=np.array([r.mean("functional_satisfaction") for r in runs]),
        conflict=np.array([r.mean("proxy_conflict") for r in runs]),
        layoutvlm={
            "accessibility": base.mean("accessibility"),
            "functional": base.mean("functional_satisfaction"),
            "conflict": base.mean("proxy_conflict"),
        },
    )


__all__ = [
    "DENSITIES",
    "LABELS",
    "METHODS",
    "METRIC_FIELDS",
    "NOISE",
    "NOISE_LEVELS",
    "TABLE_COLUMNS",
    "WORK_UNITS",
    "MethodRun",
    "NoiseCurve",
    "Scene",
    "ScenePlan",
    "benchmark_rows",
    "benchmark_table",
    "inferred_proxies",
    "noise_curve",
    "optimise_layouts",
    "plan_for",
    "run_all",
    "run_method",
    "scene_mask",
    "scene_set",
    "score",
    "score_all",
]
