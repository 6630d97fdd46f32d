"""The chapter's measurements, cached: every planner on the same episodes, the sweeps, the architecture
study, the drift, stability and probe diagnostics, and the declared cost of a planning step.

Every planner sees the same start/goal pairs (:func:`~neurips26.costgrad.episodes.make_episodes`), the same
CEM settings and the same CEM seed; methods differ only in which tokens they keep. The shipped predictors
come from :func:`~neurips26.costgrad.prepare.pretrained`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import torch

from neurips26.cache import cached
from neurips26.costgrad import diagnostics as DG
from neurips26.costgrad import envs
from neurips26.costgrad import select as SEL
from neurips26.costgrad.cem import CEMConfig
from neurips26.costgrad.cost_model import step_cost
from neurips26.costgrad.envs import EnvSpec, State
from neurips26.costgrad.episodes import Episodes, make_episodes, run
from neurips26.costgrad.planner import PlanLog, world_model_planner
from neurips26.costgrad.predictor import PredictorSpec, TokenPredictor
from neurips26.costgrad.prepare import encoder, env_for, pretrained
from neurips26.scales import pick
from neurips26.seeding import sub_seed
from neurips26.validation import check_choice

METHODS = ("full", "costgrad", "tome", "predattn", "predgrad", "random", "inverted")
STEPS = 10  # actions per episode
KEEP = 0.5  # the headline keep ratio K / P
SWEEP = (0.125, 0.25, 0.5, 0.75, 1.0)
PROBES = 10  # zero, the unit axes and Gaussian (σ = 0.5) probes
PROBE_SIGMA = 0.5
ANCHORS = 0.8
TIMING_TOKENS = 256  # the paper's grid: a 64 × 64 frame in 4 × 4 patches


@dataclass(frozen=True)
class ClaimsConfig:
    """Episode counts, the CEM search and the number of diagnostic observations."""

    episodes: int = 12
    small: int = 8  # episodes of the sweep and the architecture study
    observations: int = 20
    cem: CEMConfig = CEMConfig()
    seed: int = 0

    @classmethod
    def for_scale(cls, scale: str) -> ClaimsConfig:
        return pick(
            scale,
            smoke=cls(episodes=3, small=2, observations=4, cem=CEMConfig(samples=8, iterations=2, elites=2)),
            default=cls(),
        )


def selector(method: str, model: TokenPredictor, k: int, rng: np.random.Generator, alpha: float = ANCHORS):
    """The token selector of ``method`` at ``K = k`` (``"anchors"``: COSTGRAD with ``α`` random slots)."""
    check_choice("method", method, (*METHODS, "anchors"))
    p = model.spec.tokens

    def choose(z: torch.Tensor, z_goal: torch.Tensor, z_prev: torch.Tensor | None):
        e = z.shape[0]
        if method == "full" or k == p:
            return np.tile(np.arange(p), (e, 1))
        if method == "costgrad":
            return SEL.top_k(SEL.costgrad_scores(model, z, z_goal), k)
        if method == "inverted":
            return SEL.bottom_k(SEL.costgrad_scores(model, z, z_goal), k)
        if method == "anchors":
            return SEL.with_anchors(SEL.costgrad_scores(model, z, z_goal), k, alpha, rng)
        if method == "predattn":
            return SEL.top_k(SEL.predattn_scores(model, z), k)
        if method == "predgrad" and z_prev is not None:
            return SEL.top_k(SEL.predgrad_scores(model, z_prev, z), k)
        if method == "tome":
            return SEL.tome(z, max(k, p // 2))
        return SEL.random_k(e, p, k, rng)  # random, and PREDGRAD before it has a previous frame

    return choose


@dataclass(frozen=True)
class PlanOutcome:
    """Successes per episode, final distances, the kept indices of every step and the visited states
    (the start, then one per step)."""

    success: np.ndarray
    distance: np.ndarray
    kept: list[np.ndarray]
    states: list[State]

    @property
    def rate(self) -> float:
        return float(self.success.mean())


def plan_episodes(
    model: TokenPredictor,
    episodes: Episodes,
    method: str,
    *,
    keep: float,
    cem: CEMConfig,
    seed: int,
) -> PlanOutcome:
    """Run ``method`` at ``K = round(keep · P)`` on every episode (same CEM seed for every method)."""
    p = model.spec.tokens
    k = max(1, int(round(keep * p)))
    log = PlanLog()
    choose = selector(method, model, k, np.random.default_rng(sub_seed(seed, 3)))
    planner = world_model_planner(
        episodes.spec, encoder(), model, choose, cem, seed=sub_seed(seed, 5), log=log
    )
    rollout = run(episodes, planner, STEPS)
    return PlanOutcome(rollout.success, rollout.distance, log.kept, rollout.states)


def observations(spec: EnvSpec, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Encoded observation/goal pairs for the diagnostics ``(n, P, D)`` each."""
    eps = make_episodes(spec, n, seed=sub_seed(seed, 17))
    enc = encoder()
    return enc.encode(envs.render(spec, eps.starts)), enc.encode(envs.render(spec, eps.goals))


def probes(action_dim: int, seed: int) -> list[torch.Tensor]:
    """The probe actions: zero, the unit axes, then Gaussian ones (σ = 0.5), :data:`PROBES` in all."""
    rng = np.random.default_rng(sub_seed(seed, 19))
    out = [torch.zeros(action_dim)] + [torch.eye(action_dim)[i] for i in range(action_dim)]
    while len(out) < PROBES:
        out.append(torch.from_numpy(np.clip(PROBE_SIGMA * rng.standard_normal(action_dim), -1, 1)).float())
    return out


@dataclass(frozen=True)
class ClaimsData:
    """Everything the claims are decided from (see :func:`run_claims`)."""

    headline: dict[str, PlanOutcome]
    half_iterations: dict[str, PlanOutcome]
    sweep: dict[str, dict[float, PlanOutcome]]
    architecture: dict[str, dict[int, dict[str, PlanOutcome]]]
    drift: dict[str, dict[str, list[float]]]
    stability: dict[str, list[float]]
    probe_spearman: list[float]
    easy_critical: list[int]
    cost: dict[str, dict[str, float]]
    episodes: int


def _cost_table(spec: PredictorSpec, cem: CEMConfig) -> dict[str, dict[str, float]]:
    """The declared multiply-adds of one planning step at the paper's grid (``P = 256``)."""
    p = TIMING_TOKENS
    rows = {
        "full": step_cost(spec, tokens=p, kept=p, samples=cem.samples, horizon=cem.horizon,
                          iterations=cem.iterations, probe=False),
        "costgrad": step_cost(spec, tokens=p, kept=p // 2, samples=cem.samples, horizon=cem.horizon,
                              iterations=cem.iterations, probe=True),
        "costgrad, half the iterations": step_cost(
            spec, tokens=p, kept=p // 2, samples=cem.samples, horizon=cem.horizon,
            iterations=max(1, cem.iterations // 2), probe=True),
    }  # fmt: skip
    return {k: {"probe": v.probe, "search": v.search, "total": v.total} for k, v in rows.items()}


def _drift_ratios(
    model: TokenPredictor, z: torch.Tensor, goal: torch.Tensor, seed: int
) -> dict[str, list[float]]:
    """Per observation: mean drift over the probes of the COSTGRAD selection, of the anchored one, and of a
    random one of the same size (K = P/2)."""
    p = model.spec.tokens
    k = p // 2
    rng = np.random.default_rng(sub_seed(seed, 23))
    actions = probes(model.spec.action_dim, seed)[1:6]  # five non-zero probes
    scores = SEL.costgrad_scores(model, z, goal)
    chosen, anchored = SEL.top_k(scores, k), SEL.with_anchors(scores, k, ANCHORS, rng)
    out: dict[str, list[float]] = {"costgrad": [], "anchors": [], "random": []}
    for i in range(z.shape[0]):
        rand = np.sort(rng.choice(p, k, replace=False))
        for name, idx in (("costgrad", chosen[i]), ("anchors", anchored[i]), ("random", rand)):
            out[name].append(float(np.mean([DG.drift(model, z[i], idx, a) for a in actions])))
    return out


def _easy_but_critical(model: TokenPredictor, config: ClaimsConfig, push: EnvSpec) -> list[int]:
    """Per Push observation (of ``push``, with the frames ``model`` reads): tokens in the bottom quarter of
    one-step prediction error (on a real transition under a random action) and the top quarter of
    COSTGRAD's score."""
    eps = make_episodes(push, config.observations, seed=sub_seed(config.seed, 17))
    rng = np.random.default_rng(sub_seed(config.seed, 29))
    actions = rng.uniform(-1, 1, (len(eps), push.action_dim))
    enc = encoder()
    z = enc.encode(envs.render(push, eps.starts))
    z_next = enc.encode(envs.render(push, envs.step(push, eps.starts, actions)))
    goal = enc.encode(envs.render(push, eps.goals))
    scores = SEL.costgrad_scores(model, z, goal).numpy()
    with torch.no_grad():
        error = (model(z, torch.from_numpy(actions).float()) - z_next).pow(2).sum(-1).numpy()
    return [DG.easy_but_critical(error[i], scores[i]) for i in range(len(eps))]


def run_claims(scale: str = "default") -> ClaimsData:
    """Every measurement of the claims (cached by the predictors' weights)."""
    config = ClaimsConfig.for_scale(scale)
    names = {c: [f"wall-{c}-{s}" for s in range(3)] for c in ("adaln", "concat")}
    metas = {n: pretrained(n, scale, verbose=False)[1].weights_hash for ns in names.values() for n in ns}
    metas["push-adaln-0"] = pretrained("push-adaln-0", scale, verbose=False)[1].weights_hash

    def compute() -> ClaimsData:
        torch.manual_seed(config.seed)
        wall = env_for("wall", scale)  # the frames of the scale's predictors (64 × 64 at paper)
        model = pretrained(names["adaln"][0], scale, verbose=False)[0]
        eps = make_episodes(wall, config.episodes, seed=config.seed)
        small = make_episodes(wall, config.small, seed=sub_seed(config.seed, 1))
        plan: Callable[..., PlanOutcome] = lambda m, e, method, keep, cem=config.cem: plan_episodes(  # noqa: E731
            m, e, method, keep=keep, cem=cem, seed=config.seed
        )
        headline = {m: plan(model, eps, m, KEEP if m != "full" else 1.0) for m in METHODS}
        half = replace(config.cem, iterations=max(1, config.cem.iterations // 2))
        half_iterations = {
            m: plan(model, eps, m, KEEP if m != "full" else 1.0, half) for m in ("full", "costgrad")
        }
        sweep = {m: {f: plan(model, small, m, f) for f in SWEEP} for m in ("costgrad", "random")}
        architecture: dict[str, dict[int, dict[str, PlanOutcome]]] = {}
        drift: dict[str, dict[str, list[float]]] = {}
        z, goal = observations(wall, config.observations, config.seed)
        for cond, ns in names.items():
            architecture[cond] = {}
            for s, n in enumerate(ns):
                m = pretrained(n, scale, verbose=False)[0]
                architecture[cond][s] = {meth: plan(m, small, meth, KEEP) for meth in ("costgrad", "random")}
            drift[cond] = _drift_ratios(pretrained(ns[0], scale, verbose=False)[0], z, goal, config.seed)
        k = model.spec.tokens // 2
        stability: dict[str, list[float]] = {"costgrad": [], "predattn": []}
        seeds = [pretrained(n, scale, verbose=False)[0] for n in names["adaln"]]
        cg = [SEL.top_k(SEL.costgrad_scores(m, z, goal), k) for m in seeds]
        pa = [SEL.top_k(SEL.predattn_scores(m, z), k) for m in seeds]
        for i in range(z.shape[0]):
            for a, b in ((0, 1), (0, 2), (1, 2)):
                stability["costgrad"].append(DG.iou(cg[a][i], cg[b][i]))
                stability["predattn"].append(DG.iou(pa[a][i], pa[b][i]))
        probe_list = probes(model.spec.action_dim, config.seed)
        per_probe = [
            SEL.costgrad_scores(model, z, goal, p.expand(z.shape[0], -1)).numpy() for p in probe_list
        ]
        spearman = [
            DG.probe_spearman(per_probe[0][i], [q[i] for q in per_probe[1:]]) for i in range(z.shape[0])
        ]
        easy = _easy_but_critical(
            pretrained("push-adaln-0", scale, verbose=False)[0], config, env_for("push", scale)
        )
        return ClaimsData(
            headline,
            half_iterations,
            sweep,
            architecture,
            drift,
            stability,
            spearman,
            easy,
            _cost_table(model.spec, config.cem),
            config.episodes,
        )

    return cached("cg-claims", {"config": config, "weights": metas}, compute, package="neurips26.costgrad")
