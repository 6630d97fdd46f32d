"""Claims k2 (transductive alignment) and k7 (collapse) of chapter 04.

k2 (:func:`run_alignment`; paper §experiments, "Transductive alignment"): encode the ``"align-eval"`` states
(128 trajectories of 129 states), take each state's exact support ``S_abs`` (``|z_i| > 1e-3``) and merge the
masks into greedy Jaccard families at ``τ_J = 0.5``. *Transductive* (the paper's): the families are fitted
on those same states. *Held-out* [ours]: they are fitted on the disjoint ``"align-fit"`` draw and the
evaluation masks are matched to its codebook (an unmatched mask is its own family, ``-1``). On the
high-margin slice (centre margin at or above its label's 75th percentile), ``H(B | F)`` in nats and the
number of families seen (:func:`~neurips26.skae.metrics.alignment`); labels from
:func:`~neurips26.skae.experiments.common.basin_reference` (evaluation only).

k7 (:func:`run_collapse`) [ours]: asymptotic-basin accuracy, the share of test starts whose forecast at
``horizon`` lies nearest the centre of the basin the true state is in at that step
(:func:`~neurips26.skae.metrics.asymptotic_basin_accuracy`), rolled with the period that is best at
``horizon`` on the validation starts (the frozen cadence rule).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from neurips26.scales import pick
from neurips26.skae.data import EvalConfig
from neurips26.skae.experiments.common import (
    ROLL_STEPS,
    KAEForecaster,
    basin_reference,
    cadence_rules,
    check_grid,
    check_names,
    check_scale,
    evaluation_set,
    load,
    model_name,
    run_cached,
)
from neurips26.skae.metrics import aggregate, alignment, asymptotic_basin_accuracy, high_margin_slice
from neurips26.skae.prepare import ROWS, SEEDS
from neurips26.skae.rollout import PERIODS
from neurips26.skae.routing import encode_trajectories
from neurips26.skae.supports import TAU_ALIGN, alignment_codebook, check_tau_j, fit_families, support_abs
from neurips26.skae.systems import CONTROLLED, center_margin
from neurips26.validation import check_int

#: The two ways of fitting the families: on the evaluated states (paper) or on a disjoint draw (ours).
MODES = ("transductive", "held-out")


def _check_common(config: object) -> None:
    check_names("systems", config.systems, CONTROLLED)
    if not isinstance(config.seeds, tuple) or not config.seeds:
        raise ValueError(f"seeds must be a non-empty tuple; got {config.seeds!r}")
    check_names("rows", config.rows, tuple(ROWS))
    if not isinstance(config.evaluation, EvalConfig):
        raise TypeError(f"evaluation must be an EvalConfig; got {type(config.evaluation).__name__}")
    check_scale("checkpoints", config.checkpoints)
    check_int("roll_steps", config.roll_steps, minimum=0)
    for system in config.systems:
        for seed in config.seeds:
            for row in config.rows:
                model_name(row, system, seed)


@dataclass(frozen=True)
class AlignmentConfig:
    """k2: ``rows`` on ``systems`` × ``seeds``; ``tau_j``: the alignment threshold; ``roll_steps``: the
    proxy-label roll; ``evaluation``: the alignment set sizes; ``checkpoints``: the checkpoint scale."""

    systems: tuple[str, ...] = CONTROLLED
    seeds: tuple[int, ...] = SEEDS
    rows: tuple[str, ...] = ("lista", "dense-mlp")
    tau_j: float = TAU_ALIGN
    roll_steps: int = ROLL_STEPS
    evaluation: EvalConfig = field(default_factory=EvalConfig)
    checkpoints: str = "default"

    def __post_init__(self) -> None:
        _check_common(self)
        check_tau_j(self.tau_j)

    @classmethod
    def for_scale(cls, scale: str) -> AlignmentConfig:
        """smoke: Square-4, seed 0, 16 trajectories of 32 steps, a 500-step roll."""
        return pick(
            scale,
            smoke=cls(
                systems=("square-4",),
                seeds=(0,),
                roll_steps=500,
                evaluation=EvalConfig(align_trajectories=16, align_steps=32),
                checkpoints="smoke",
            ),
            default=cls(),
        )


@dataclass(frozen=True)
class AlignmentResult:
    """``entropy[mode][row]``, ``families[mode][row]``: ``(systems, seeds)`` H(B|F) (nats) and families
    seen on the slice; ``labels[i, j]``: the distinct labels on system ``i``'s slice; ``slice_states``:
    states on the slice; ``active[row]``: mean share of active coordinates on the evaluated states."""

    config: AlignmentConfig
    entropy: dict[str, dict[str, np.ndarray]]
    families: dict[str, dict[str, np.ndarray]]
    labels: np.ndarray
    slice_states: np.ndarray
    active: dict[str, np.ndarray]

    def aggregate(self, quantity: str, mode: str, row: str) -> float:
        """IQM over seeds, mean over systems, of ``"entropy"`` or ``"families"``."""
        table = {"entropy": self.entropy, "families": self.families}[quantity][mode][row]
        return aggregate({s: table[i] for i, s in enumerate(self.config.systems)})


def _compute_alignment(config: AlignmentConfig) -> AlignmentResult:
    shape = (len(config.systems), len(config.seeds))
    entropy = {m: {r: np.full(shape, np.nan) for r in config.rows} for m in MODES}
    families = {m: {r: np.zeros(shape) for r in config.rows} for m in MODES}
    active = {r: np.zeros(shape) for r in config.rows}
    labels, states = np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=np.int64)
    for i, system in enumerate(config.systems):
        for j, seed in enumerate(config.seeds):
            ref = basin_reference(system, seed, config.checkpoints, config.evaluation, config.roll_steps)
            evaluated = evaluation_set(system, seed, config.checkpoints, config.evaluation, "align-eval")
            held = evaluation_set(system, seed, config.checkpoints, config.evaluation, "align-fit")
            x = evaluated.states.reshape(-1, evaluated.states.shape[-1])
            basins = ref.labels(x)
            margin = center_margin(x, ref.centers).numpy()
            for row in config.rows:
                model = load(row, system, seed, config.checkpoints)
                masks = support_abs(encode_trajectories(model, evaluated.states).reshape(x.shape[0], -1))
                fit_masks = support_abs(encode_trajectories(model, held.states).reshape(-1, model.latent))
                active[row][i, j] = float(masks.mean())
                found = {
                    "transductive": fit_families(masks, config.tau_j).labels,
                    "held-out": alignment_codebook(fit_families(fit_masks, config.tau_j)).match(masks),
                }
                for mode, fam in found.items():
                    score = alignment(basins, fam, margin)
                    entropy[mode][row][i, j] = score.entropy
                    families[mode][row][i, j] = score.families
                    states[i, j] = score.states
            labels[i, j] = np.unique(basins[high_margin_slice(margin, basins)]).size
    return AlignmentResult(config, entropy, families, labels, states, active)


def run_alignment(
    config: AlignmentConfig, *, use_cache: bool = True, verbose: bool = False
) -> AlignmentResult:
    """k2: H(B|F) and families seen on the high-margin slice, transductive and held-out (see module)."""
    return run_cached(
        "skae-k2-alignment", config, AlignmentConfig, _compute_alignment, use_cache=use_cache, verbose=verbose
    )


# --------------------------------------------------------------------------------------------
# k7: collapse


@dataclass(frozen=True)
class CollapseConfig:
    """k7: ``rows`` on ``systems`` × ``seeds``, accuracy at ``horizon``, the period picked over
    ``periods`` on the validation starts; ``roll_steps``: the proxy-label roll."""

    systems: tuple[str, ...] = CONTROLLED
    seeds: tuple[int, ...] = SEEDS
    rows: tuple[str, ...] = ("lista", "dense-mlp")
    horizon: int = 1000
    periods: tuple[int, ...] = PERIODS
    roll_steps: int = ROLL_STEPS
    evaluation: EvalConfig = field(default_factory=EvalConfig)
    checkpoints: str = "default"

    def __post_init__(self) -> None:
        _check_common(self)
        check_grid("periods", self.periods)
        check_int("horizon", self.horizon, minimum=1, maximum=self.evaluation.horizon)

    @classmethod
    def for_scale(cls, scale: str) -> CollapseConfig:
        return pick(
            scale,
            smoke=cls(
                systems=("square-4",),
                seeds=(0,),
                horizon=100,
                periods=(10, 25),
                roll_steps=500,
                evaluation=EvalConfig(
                    test_starts=8, val_starts=4, horizon=100, align_trajectories=16, align_steps=32
                ),
                checkpoints="smoke",
            ),
            default=cls(),
        )


@dataclass(frozen=True)
class CollapseResult:
    """``accuracy[row]``: ``(systems, seeds)`` asymptotic-basin accuracy; ``period[row]``: the period used;
    ``chance``: ``(systems, seeds)`` the share of the most common true basin (a constant forecast's best)."""

    config: CollapseConfig
    accuracy: dict[str, np.ndarray]
    period: dict[str, np.ndarray]
    chance: np.ndarray

    def aggregate(self, row: str) -> float:
        """IQM over seeds, mean over systems."""
        return aggregate({s: self.accuracy[row][i] for i, s in enumerate(self.config.systems)})


def _compute_collapse(config: CollapseConfig) -> CollapseResult:
    shape = (len(config.systems), len(config.seeds))
    accuracy = {r: np.full(shape, np.nan) for r in config.rows}
    period = {r: np.zeros(shape, dtype=np.int64) for r in config.rows}
    chance = np.zeros(shape)
    h = config.horizon
    for i, system in enumerate(config.systems):
        for j, seed in enumerate(config.seeds):
            ref = basin_reference(system, seed, config.checkpoints, config.evaluation, config.roll_steps)
            centers = ref.centers.numpy()
            val = evaluation_set(system, seed, config.checkpoints, config.evaluation, "val")
            test = evaluation_set(system, seed, config.checkpoints, config.evaluation, "test")
            final = test.truth[:, h - 1]
            basins = np.argmin(np.linalg.norm(final.numpy()[:, None] - centers[None], axis=-1), axis=1)
            chance[i, j] = np.bincount(basins).max() / basins.size
            for row in config.rows:
                forecaster = KAEForecaster(load(row, system, seed, config.checkpoints))
                m = cadence_rules(forecaster, val, test, (h,), config.periods, best=False).frozen_period[h]
                predicted = forecaster.predict(test.starts, h, period=m)
                accuracy[row][i, j] = asymptotic_basin_accuracy(predicted[:, -1], basins, centers)
                period[row][i, j] = m
    return CollapseResult(config, accuracy, period, chance)


def run_collapse(config: CollapseConfig, *, use_cache: bool = True, verbose: bool = False) -> CollapseResult:
    """k7: asymptotic-basin accuracy of each row (see the module)."""
    return run_cached(
        "skae-k7-collapse", config, CollapseConfig, _compute_collapse, use_cache=use_cache, verbose=verbose
    )
