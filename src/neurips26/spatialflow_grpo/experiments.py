"""Chapter 08's measurements: every arm on the three suites, side by side, from the committed checkpoints.

Each arm (:data:`ROWS`: the base editor, Flow-GRPO and SpatialFlow-GRPO over three RL seeds, and the
single-seed ablations) edits every case of the ``single``, ``mixed`` and ``multiedit`` suites with the same
deterministic sampler (``eval_steps`` Euler steps of the ODE from the same seeded noise), and each edit is
scored by the oracle (:mod:`~neurips26.spatialflow_grpo.reward`): success (every instructed region within
the colour tolerance and a background PSNR ≥ 28 dB, thresholds fixed before any RL run), the region
rewards, the worst instructed region's reward and the background PSNR. :func:`evaluation_table` caches the
whole table per scale, keyed by the checkpoints' weights hashes.

Also here: the RL curves recorded in the checkpoints' sidecars (:func:`curves`), the iteration at which a
probe curve first reaches a level (claim S5, :func:`iterations_to`) and the success by clause count pooled
over the suites (claim S2, :meth:`ArmScores.success_by_clauses`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from neurips26.cache import cached
from neurips26.scales import check_scale, pick
from neurips26.spatialflow_grpo import reward as R
from neurips26.spatialflow_grpo.editor import Editor
from neurips26.spatialflow_grpo.editworld import K_MAX, SUITES, EditBatch, make_suite
from neurips26.spatialflow_grpo.prepare import ARMS, REWARD_MODEL, PrepareConfig, SFGMeta, pretrained
from neurips26.spatialflow_grpo.reward_model import agreement, collect_labelled
from neurips26.spatialflow_grpo.rl_loop import edit
from neurips26.train import torch_threads
from neurips26.validation import check_int

#: The table's rows: a label and the arms (checkpoints) that make it, one per RL seed.
ROWS: dict[str, tuple[str, ...]] = {
    "base": ("base",),
    "flow": ("flow-s0", "flow-s1", "flow-s2"),
    "spatial": ("spatial-s0", "spatial-s1", "spatial-s2"),
    "flow-area": ("flow-area",),
    "spatial-shuffled": ("spatial-shuffled",),
    "spatial-b": ("spatial-b",),
    "spatial-area": ("spatial-area",),
    "flow-sfr": ("flow-sfr",),
    "spatial-sfr": ("spatial-sfr",),
}

#: Reader-facing names of the rows.
ROW_LABELS: dict[str, str] = {
    "base": "base editor",
    "flow": "Flow-GRPO",
    "spatial": "SpatialFlow-GRPO",
    "flow-area": "Flow-GRPO, area scalar",
    "spatial-shuffled": "SpatialFlow-GRPO, shuffled masks",
    "spatial-b": "SpatialFlow-GRPO, reading (b)",
    "spatial-area": "SpatialFlow-GRPO, area α",
    "flow-sfr": "Flow-GRPO on SFReward-tiny",
    "spatial-sfr": "SpatialFlow-GRPO on SFReward-tiny",
}

#: Every arm that is an editor (all but the reward model), in table order.
EDITORS: tuple[str, ...] = tuple(a.name for a in ARMS if a.kind != "reward-model")


@dataclass(frozen=True)
class EvalConfig:
    """``cases`` per suite (all 256 at default), ``eval_steps`` ODE steps, the noise ``seed``."""

    cases: int = 256
    eval_steps: int = 12
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("cases", self.cases, minimum=1)
        check_int("eval_steps", self.eval_steps, minimum=1)
        check_int("seed", self.seed, minimum=0)

    @classmethod
    def for_scale(cls, scale: str) -> EvalConfig:
        """smoke: 16 cases, 4 steps; default: 256 cases, 12 steps; paper: 256 cases, the paper RL's 40
        evaluation steps."""
        return pick(scale, smoke=cls(cases=16, eval_steps=4), default=cls(), paper=cls(eval_steps=40))


@dataclass(frozen=True)
class SuiteScores:
    """One arm's edits of one suite, per case: ``success``, ``colour_error`` ``(N, K_MAX)`` (NaN unused),
    ``rewards`` ``(N, K_MAX + 1)`` (oracle, 0 unused), ``valid`` ``(N, K_MAX + 1)``, ``psnr`` (background,
    dB) and ``clauses``."""

    success: np.ndarray
    colour_error: np.ndarray
    rewards: np.ndarray
    valid: np.ndarray
    psnr: np.ndarray
    clauses: np.ndarray

    def success_rate(self) -> float:
        return float(self.success.mean())

    def mean_region_reward(self) -> float:
        """The mean oracle reward over the instructed regions of every case."""
        edit = self.valid[:, 1:]
        return float(self.rewards[:, 1:][edit].mean())

    def worst_region_reward(self) -> float:
        """The mean over cases of the lowest instructed region's reward (the region that failed)."""
        masked = np.where(self.valid[:, 1:], self.rewards[:, 1:], np.inf)
        return float(masked.min(axis=1).mean())

    def mean_psnr(self) -> float:
        return float(self.psnr.mean())


def score(editor: Editor, batch: EditBatch, config: EvalConfig) -> SuiteScores:
    """Edit ``batch`` deterministically and score every case with the oracle."""
    with torch_threads(1):
        images = edit(editor, batch, config.eval_steps, seed=config.seed).cpu()
    batch = batch.to("cpu")
    return SuiteScores(
        success=R.success(images, batch).numpy(),
        colour_error=R.colour_errors(images, batch).numpy(),
        rewards=R.region_rewards(images, batch).numpy(),
        valid=batch.region_valid.numpy(),
        psnr=R.background_psnr(images, batch).numpy(),
        clauses=batch.n_clauses.numpy(),
    )


@dataclass(frozen=True)
class ArmScores:
    """An arm's :class:`SuiteScores` per suite."""

    suites: dict[str, SuiteScores]

    def __getitem__(self, suite: str) -> SuiteScores:
        return self.suites[suite]

    def success_by_clauses(self, clauses: int) -> float:
        """Success over every case with ``clauses`` clauses, pooled over the suites."""
        hits = np.concatenate([s.success[s.clauses == clauses] for s in self.suites.values()])
        return float(hits.mean()) if hits.size else float("nan")


@dataclass(frozen=True)
class EvaluationTable:
    """:class:`ArmScores` of every arm (``arms[name]``), the config and the suites' sizes."""

    arms: dict[str, ArmScores]
    config: EvalConfig
    weights: dict[str, str] = field(default_factory=dict)

    def row(self, row: str, metric: str, suite: str = "multiedit") -> np.ndarray:
        """``metric`` (a :class:`SuiteScores` method name) of each arm of ``row`` on ``suite``."""
        return np.array([getattr(self.arms[a][suite], metric)() for a in ROWS[row]])

    def row_by_clauses(self, row: str, clauses: int) -> np.ndarray:
        """Success on ``clauses``-clause cases (pooled over suites) of each arm of ``row``."""
        return np.array([self.arms[a].success_by_clauses(clauses) for a in ROWS[row]])


def load_arm(name: str, scale: str = "default") -> tuple[Editor, SFGMeta]:
    """The editor of arm ``name`` (base, or base with the arm's adapters) and its sidecar."""
    if name not in EDITORS:
        raise ValueError(f"name must be one of {', '.join(EDITORS)}; got {name!r}")
    return pretrained(name, check_scale(scale), verbose=False)


def suites(scale: str = "default") -> dict[str, EditBatch]:
    """The evaluation suites at ``scale`` (fixed seeds; the first ``cases`` of each)."""
    config = EvalConfig.for_scale(scale)
    return {name: make_suite(name, config.cases) for name in SUITES}


def _evaluate(
    scale: str, config: EvalConfig, editors: dict[str, Editor], weights: dict[str, str]
) -> EvaluationTable:
    batches = suites(scale)
    arms = {
        name: ArmScores({s: score(e, b, config) for s, b in batches.items()}) for name, e in editors.items()
    }
    return EvaluationTable(arms, config, weights)


def evaluation_table(scale: str = "default", *, verbose: bool = True) -> EvaluationTable:
    """Every arm on every suite at ``scale`` (cached; keyed by the checkpoints' weights hashes)."""
    config = EvalConfig.for_scale(check_scale(scale))
    loaded = {name: load_arm(name, scale) for name in EDITORS}  # each checked fresh once
    weights = {name: meta.weights_hash for name, (_, meta) in loaded.items()}
    editors = {name: editor for name, (editor, _) in loaded.items()}
    return cached(
        f"spatialflow_grpo-evaluation-{scale}",
        {"weights": weights, "config": config, "k_max": K_MAX},
        lambda: _evaluate(scale, config, editors, weights),
        package="neurips26.spatialflow_grpo",
        verbose=verbose,
    )


def curves(name: str, scale: str = "default") -> dict[str, np.ndarray]:
    """The RL curves recorded in arm ``name``'s sidecar (reward, KL, clip fraction, region rewards, and the
    probe: ``probe_iteration`` and ``probe_success``)."""
    return {k: np.asarray(v, dtype=float) for k, v in load_arm(name, scale)[1].curves.items()}


def iterations_to(iterations: np.ndarray, values: np.ndarray, level: float) -> float:
    """The first probed iteration at which ``values`` reach ``level`` (``inf`` if never)."""
    hit = np.flatnonzero(np.asarray(values) >= level)
    return float(np.asarray(iterations)[hit[0]]) if hit.size else float("inf")


def probe_mean(row: str, scale: str = "default") -> tuple[np.ndarray, np.ndarray]:
    """The probe's iterations and the mean MultiEdit success over the arms of ``row``."""
    runs = [curves(a, scale) for a in ROWS[row]]
    return runs[0]["probe_iteration"], np.mean([r["probe_success"] for r in runs], axis=0)


#: Held-out cases for SFReward-tiny's agreement with the oracle (claim S7), per scale, and their seed.
REWARD_CASES = {"smoke": 16, "default": 200, "paper": 200}
REWARD_SEED = 4242


def _reward_agreement(scale: str) -> dict[str, dict[str, float]]:
    base, _ = load_arm("base", scale)
    net, _ = pretrained(REWARD_MODEL, scale, verbose=False)
    n = REWARD_CASES[scale]
    config = PrepareConfig.for_scale(scale).reward_model  # sampled as the reward model's data were
    sampler = {"sde_steps": config.sde_steps, "window": config.sde_window}
    rollouts = collect_labelled(base, n, REWARD_SEED, 2, ode_samples=0, extremes=False, **sampler)
    mixed = collect_labelled(base, n, REWARD_SEED, 2, **sampler)
    return {"rollouts": agreement(net, rollouts), "mixed": agreement(net, mixed)}


def reward_agreement(scale: str = "default") -> dict[str, dict[str, float]]:
    """SFReward-tiny's agreement with the oracle (:func:`~neurips26.spatialflow_grpo.reward_model.agreement`)
    on held-out base samples: ``"rollouts"``, two SDE samples per case as the RL rollouts draw them (what the
    reward judges during RL; claim S7 is decided on it), and ``"mixed"``, the training mix (SDE and ODE
    samples, the target and the source). Cached, keyed by both checkpoints' weights hashes."""
    check_scale(scale)
    weights = [
        load_arm("base", scale)[1].weights_hash,
        pretrained(REWARD_MODEL, scale, verbose=False)[1].weights_hash,
    ]
    return cached(
        f"spatialflow_grpo-reward-agreement-{scale}",
        {"weights": weights, "cases": REWARD_CASES[scale], "seed": REWARD_SEED},
        lambda: _reward_agreement(scale),
        package="neurips26.spatialflow_grpo",
        verbose=False,
    )
