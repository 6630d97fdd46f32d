"""The chapter's measurements, cached: one task's control problem (prompts, candidate nodes, the
linearisation, the desired displacement), every selector's control at a node budget, and its six axes.

A task's control problem uses the frozen model's float64 copy. The selection prompts are those whose
target is not yet the model's choice (``y_T < 0``: there is something to control); the desired displacement
brings every one of them to ``y_T = +1`` (:data:`TARGET`). The held-out prompts come from the held-out
templates. Selectors choose their nodes on the selection prompts' linearisation; every selector's nodes then
get the same amplitude fit on the model (:func:`~neurips26.sparse_control.refit.gauss_newton_refit`, inside
the energy ball), and every axis is measured on the model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neurips26.cache import cached
from neurips26.scales import pick
from neurips26.seeding import sub_seed
from neurips26.sparse_control import baselines as BL
from neurips26.sparse_control.coverage_driver import coverage_driver
from neurips26.sparse_control.driver_omp import Control, driver_omp
from neurips26.sparse_control.evaluation import (
    ENERGY,
    Axes,
    linearisation_r2,
    matched_kl,
    six_axes,
    sparsely_controllable,
)
from neurips26.sparse_control.jacobian import Linearisation, linearise
from neurips26.sparse_control.model import as_float64
from neurips26.sparse_control.model_baselines import dense_steering, patch_effects, patching_top_k
from neurips26.sparse_control.nodes import NodeSet, build_nodes
from neurips26.sparse_control.prepare import pretrained
from neurips26.sparse_control.readouts import target_readout
from neurips26.sparse_control.refit import gauss_newton_refit
from neurips26.sparse_control.tasks import TASKS, PromptSet, contrast, make_prompts, neutral_windows
from neurips26.validation import check_choice, check_int

TARGET = 1.0
LAM_P = 1.0


def balanced_preservation(lin: Linearisation) -> np.ndarray:
    """``G_P`` scaled by ``√(n_T / n_P)``: with ``λ_P = 1`` the mean squared preservation change weighs as
    much as the mean squared target error, however many readouts each has."""
    return lin.G_P * np.sqrt(len(lin.G_T) / max(len(lin.G_P), 1))


SELECTORS = ("driver-omp", "coverage-driver", "attribution", "patching", "random", "single best")


@dataclass(frozen=True)
class ProblemConfig:
    """Prompt counts (selection before filtering, held out, neutral windows, other tasks' prompts), the
    node budgets and the seed."""

    selection: int = 96
    held_out: int = 64
    neutral: int = 64
    others: int = 32
    budgets: tuple[int, ...] = (1, 2, 4, 8)
    seed: int = 0

    @classmethod
    def for_scale(cls, scale: str) -> ProblemConfig:
        return pick(
            scale, smoke=cls(selection=32, held_out=16, neutral=16, others=8, budgets=(2, 4)), default=cls()
        )


@dataclass(frozen=True)
class Problem:
    """One task's control problem: the prompts, the candidate nodes and the linearisation at 0, the desired
    displacement, the neutral windows and the other tasks' prompts."""

    task: str
    prompts: PromptSet
    held_out: PromptSet
    nodes: NodeSet
    lin: Linearisation
    delta: np.ndarray
    neutral: np.ndarray
    others: tuple[PromptSet, ...]
    patch: np.ndarray


def _controllable(model, prompts: PromptSet) -> PromptSet:
    with torch.no_grad():
        y = target_readout(model(torch.from_numpy(prompts.ids)).logits[:, -1], prompts).cpu().numpy()
    return prompts.subset(y < 0)


def build_problem(model, task: str, config: ProblemConfig) -> Problem:
    """The control problem of ``task`` on ``model`` (float64 copy of the frozen model)."""
    check_choice("task", task, TASKS)
    seed = config.seed
    prompts = _controllable(
        model,
        make_prompts(task, config.selection, split="selection", seed=sub_seed(seed, 1, TASKS.index(task))),
    )
    held = _controllable(
        model,
        make_prompts(task, config.held_out, split="held_out", seed=sub_seed(seed, 2, TASKS.index(task))),
    )
    others = tuple(
        make_prompts(t, config.others, split="selection", seed=sub_seed(seed, 3, i))
        for i, t in enumerate(TASKS)
        if t != task
    )
    c = contrast(prompts)
    nodes = build_nodes(
        model, torch.from_numpy(prompts.ids), torch.from_numpy(c.ids), prompts.answer, prompts.target
    )
    neutral = neutral_windows(config.neutral, 16, seed=sub_seed(seed, 4))
    lin = linearise(model, nodes, prompts, neutral, others)
    patch = patch_effects(model, nodes, prompts, c)
    return Problem(task, prompts, held, nodes, lin, TARGET - lin.y_T, neutral, others, patch)


def select(model, problem: Problem, method: str, k: int, *, seed: int = 0) -> Control:
    """The control of ``method`` at budget ``k`` on ``problem`` (energy bound :data:`ENERGY`): the
    selector's nodes with amplitudes refitted on ``model`` (module doc)."""
    check_choice("method", method, SELECTORS)
    k = check_int("k", k, minimum=1)
    control = choose(problem, method, k, seed=seed)
    return gauss_newton_refit(model, problem.nodes, control, problem.prompts, TARGET, energy=ENERGY)


def choose(problem: Problem, method: str, k: int, *, seed: int = 0) -> Control:
    """The nodes and linear amplitudes of ``method`` at budget ``k``, from the linearisation alone."""
    check_choice("method", method, SELECTORS)
    k = check_int("k", k, minimum=1)
    G_T, delta = problem.lin.G_T, problem.delta
    G_P = balanced_preservation(problem.lin)
    if method == "driver-omp":
        return driver_omp(G_T, delta, G_P, k=k, lam_p=LAM_P, energy=ENERGY)
    if method == "coverage-driver":
        return coverage_driver(G_T, delta, problem.lin.G_P, k=k, cap=ENERGY, energy=ENERGY, seed=seed)[0]
    if method == "attribution":
        return BL.attribution_top_k(G_T, delta, k=k, energy=ENERGY)
    if method == "random":
        return BL.random_k(G_T, delta, k=k, seed=seed, energy=ENERGY)
    if method == "single best":
        return BL.single_best(G_T, delta, energy=ENERGY)
    return patching_top_k(G_T, delta, problem.patch, k=k, energy=ENERGY)


def axes_of(model, problem: Problem, control: Control, nodes: NodeSet | None = None) -> Axes:
    """The six axes of ``control`` on ``problem`` (its own node set unless ``nodes`` is given)."""
    return six_axes(
        model,
        problem.nodes if nodes is None else nodes,
        control,
        problem.prompts,
        problem.held_out,
        problem.neutral,
        problem.others,
    )


def model64(scale: str = "default"):
    """The frozen model's float64 copy."""
    model, _ = pretrained(scale, verbose=False)
    return as_float64(model)


def dense(model, problem: Problem) -> tuple[NodeSet, Control]:
    """The dense steering vector of ``problem``
    (:func:`~neurips26.sparse_control.model_baselines.dense_steering`)."""
    return dense_steering(model, problem.nodes, problem.prompts, energy=None)


REFUSAL_BUDGETS = (1, 2, 4, 8, 16)
MAIN_K = 4
CONTROL_TASKS = ("ioi", "mcqa", "sentiment")


def _budgets_of(method: str, budgets: tuple[int, ...]) -> tuple[int, ...]:
    return budgets[:1] if method == "single best" else budgets


@dataclass(frozen=True)
class ClaimsData:
    """Everything the claims are decided from: ``axes[task][method][k]`` (refusal: Driver-OMP only, up to
    k = 16; the single best node at the first budget only), the smallest budget at which Driver-OMP
    passes every axis per task (``passing_k``; None: none), the matched-effect KL of Driver-OMP at k = 4
    and of the dense vector (``matched[task]["sparse" | "dense"]``), and the linearisation's R² of
    Driver-OMP at k = 4 (``linear_r2[task]``)."""

    axes: dict[str, dict[str, dict[int, Axes]]]
    passing_k: dict[str, int | None]
    matched: dict[str, dict[str, dict[str, float]]]
    linear_r2: dict[str, float]
    prompts: dict[str, int]


def run_claims(scale: str = "default") -> ClaimsData:
    """Every measurement of the claims (cached by the model's weights)."""
    config = ProblemConfig.for_scale(scale)
    tasks = pick(scale, smoke=("ioi",), default=CONTROL_TASKS)
    refusal_budgets = pick(scale, smoke=(2, 4), default=REFUSAL_BUDGETS)
    _, meta = pretrained(scale, verbose=False)

    def compute() -> ClaimsData:
        model = model64(scale)
        axes, passing, matched, r2, counts = {}, {}, {}, {}, {}
        for task in (*tasks, "refusal"):
            problem = build_problem(model, task, config)
            counts[task] = len(problem.prompts)
            methods = SELECTORS if task != "refusal" else ("driver-omp",)
            budgets = config.budgets if task != "refusal" else refusal_budgets
            axes[task] = {
                # the single best node is one node whatever the budget: measured once, at the first
                m: {k: axes_of(model, problem, select(model, problem, m, k)) for k in _budgets_of(m, budgets)}
                for m in methods
            }
            ok = [k for k in budgets if sparsely_controllable(axes[task]["driver-omp"][k])["all"]]
            passing[task] = ok[0] if ok else None
            main = select(model, problem, "driver-omp", min(MAIN_K, max(budgets)))
            dense_nodes_, dense_control = dense(model, problem)
            matched[task] = {
                "sparse": matched_kl(model, problem.nodes, main, problem.prompts, problem.neutral),
                "dense": matched_kl(model, dense_nodes_, dense_control, problem.prompts, problem.neutral),
            }
            r2[task] = linearisation_r2(model, problem.nodes, main, problem.prompts, problem.lin.G_T)
        return ClaimsData(axes, passing, matched, r2, counts)

    return cached(
        "sc-claims",
        {"config": config, "tasks": tasks, "refusal": refusal_budgets, "weights": meta.weights_hash},
        compute,
        package="neurips26.sparse_control",
    )
