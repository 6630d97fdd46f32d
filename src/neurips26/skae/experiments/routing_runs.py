"""Claim k4 of chapter 04: staged support-family routing against the global LISTA (paper §method_routing).

For each LISTA model (system × seed): freeze it, fit the routing families (``τ_J = 0.4``) on the ``"route"``
trajectories (256 × 192 transitions from the training reset law), initialise ``T_f(z) = d_f + K_f(z − z̄_f)``
at ``K`` and train the maps (:func:`~neurips26.skae.routing.fit_local_maps`), then roll the test starts
with the map routed before every latent step. The same is done for the partition controls of the earlier
draft (:data:`CONTROLS`: oracle basin of the decoded state, random count-matched, latent k-means; each with
the same budget). Every model, global and staged, is scored under the frozen cadence rule: the period is
picked on the validation starts, disjoint from the test starts (so the paper's selector overlap is absent).

Per pair: the local/global ratio of MSE through H; over pairs: the median ratio and the share of pairs the
local model wins (the paper's descriptive statistics).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from neurips26.scales import pick
from neurips26.seeding import sub_seed
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
from neurips26.skae.prepare import SEEDS
from neurips26.skae.rollout import HORIZONS, PERIODS
from neurips26.skae.routing import FIT_METHODS, ROUTERS, fit_local_maps, make_router
from neurips26.skae.systems import CONTROLLED
from neurips26.validation import check_choice, check_float, check_int

#: The partition controls, in the order of the results.
CONTROLS = ("oracle", "random", "kmeans")
ROW = "lista"


@dataclass(frozen=True)
class RoutingConfig:
    """k4: LISTA on ``systems`` × ``seeds``; ``routers``: the paper's ``"support"`` and the controls;
    ``method``/``steps``/``lr``/``batch``: how the local maps are fitted; ``horizons``, ``periods``: the
    frozen cadence rule; ``roll_steps``: the oracle's proxy-label roll; ``checkpoints``: the scale."""

    systems: tuple[str, ...] = CONTROLLED
    seeds: tuple[int, ...] = SEEDS
    routers: tuple[str, ...] = ROUTERS
    method: str = "gradient"
    steps: int = 300
    lr: float = 1e-3
    batch: int = 64
    horizons: tuple[int, ...] = HORIZONS
    periods: tuple[int, ...] = PERIODS
    roll_steps: int = ROLL_STEPS
    evaluation: EvalConfig = field(default_factory=EvalConfig)
    checkpoints: str = "default"

    def __post_init__(self) -> None:
        check_names("systems", self.systems, CONTROLLED)
        if not isinstance(self.seeds, tuple) or not self.seeds:
            raise ValueError(f"seeds must be a non-empty tuple; got {self.seeds!r}")
        check_names("routers", self.routers, ROUTERS)
        if "support" not in self.routers:
            raise ValueError(f"routers must include 'support', the paper's router; got {self.routers}")
        check_choice("method", self.method, FIT_METHODS)
        check_int("steps", self.steps, minimum=0)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_int("batch", self.batch, minimum=1)
        check_grid("horizons", self.horizons)
        check_grid("periods", self.periods)
        if not isinstance(self.evaluation, EvalConfig):
            raise TypeError(f"evaluation must be an EvalConfig; got {type(self.evaluation).__name__}")
        if self.horizons[-1] > self.evaluation.horizon:
            raise ValueError(f"horizons must end at or before evaluation.horizon; got {self.horizons}")
        check_int("roll_steps", self.roll_steps, minimum=0)
        check_scale("checkpoints", self.checkpoints)
        for system in self.systems:
            for seed in self.seeds:
                model_name(ROW, system, seed)

    @classmethod
    def for_scale(cls, scale: str) -> RoutingConfig:
        """smoke: Square-4, seed 0, 16 routing trajectories of 24 steps, 10 map updates, H ≤ 50, every
        router; default: the paper's protocol with closed-form maps and the random and k-means controls."""
        return pick(
            scale,
            smoke=cls(
                systems=("square-4",),
                seeds=(0,),
                steps=10,
                horizons=(10, 50),
                periods=(10, 25),
                roll_steps=500,
                evaluation=EvalConfig(
                    test_starts=8,
                    val_starts=4,
                    horizon=50,
                    route_trajectories=16,
                    route_steps=24,
                    align_trajectories=16,
                    align_steps=32,
                ),
                checkpoints="smoke",
            ),
            # CPU budget: the maps in closed form (ridge least squares on the one-step latent pairs)
            # instead of gradient training (paper: 100k steps; 300 steps cost 9 s per map set and left
            # the maps far from converged in a pilot), and the oracle control left to the library
            default=cls(method="lstsq", routers=("support", "random", "kmeans")),
        )


@dataclass(frozen=True)
class RoutingResult:
    """``global_mse``: ``(systems, seeds, horizons)`` of the global LISTA; ``local_mse[router]`` the same for
    each staged model; ``routes[router]``: ``(systems, seeds)`` routes with a map; ``coverage[router]``: the
    share of the routed latent steps of the evaluation rollouts (validation and test) that used a local
    map, not the fallback ``K``."""

    config: RoutingConfig
    global_mse: np.ndarray
    local_mse: dict[str, np.ndarray]
    routes: dict[str, np.ndarray]
    coverage: dict[str, np.ndarray]

    def ratio(self, router: str = "support") -> np.ndarray:
        """Local/global MSE ratio per pair, ``(systems · seeds, horizons)``; nan where one is not finite."""
        with np.errstate(divide="ignore", invalid="ignore"):
            r = self.local_mse[router] / self.global_mse
        r = r.reshape(-1, r.shape[-1])
        return np.where(np.isfinite(r), r, np.nan)

    def median_ratio(self, router: str = "support") -> np.ndarray:
        """The median ratio per horizon over pairs (a non-finite local MSE counts as a loss: ratio ∞)."""
        r = self.local_mse[router].reshape(-1, len(self.config.horizons))
        g = self.global_mse.reshape(r.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(np.isfinite(r), r, np.inf) / np.where(np.isfinite(g), g, np.inf)
        ratio = np.where(np.isnan(ratio), 1.0, ratio)  # both diverged: a tie
        return np.median(ratio, axis=0)

    def win_share(self, router: str = "support") -> np.ndarray:
        """The share of pairs whose local MSE is below the global one, per horizon (non-finite loses)."""
        r = np.where(np.isfinite(self.local_mse[router]), self.local_mse[router], np.inf)
        g = np.where(np.isfinite(self.global_mse), self.global_mse, np.inf)
        return (r < g).reshape(-1, len(self.config.horizons)).mean(axis=0)


def _compute_routing(config: RoutingConfig) -> RoutingResult:
    shape = (len(config.systems), len(config.seeds), len(config.horizons))
    global_mse = np.full(shape, np.nan)
    local = {r: np.full(shape, np.nan) for r in config.routers}
    routes = {r: np.zeros(shape[:2], dtype=np.int64) for r in config.routers}
    coverage = {r: np.full(shape[:2], np.nan) for r in config.routers}
    for i, system in enumerate(config.systems):
        for j, seed in enumerate(config.seeds):
            val = evaluation_set(system, seed, config.checkpoints, config.evaluation, "val")
            test = evaluation_set(system, seed, config.checkpoints, config.evaluation, "test")
            train = evaluation_set(system, seed, config.checkpoints, config.evaluation, "route").states
            model = load(ROW, system, seed, config.checkpoints)
            rules = cadence_rules(
                KAEForecaster(model), val, test, config.horizons, config.periods, best=False
            )
            global_mse[i, j] = [rules.frozen[h] for h in config.horizons]
            for r, kind in enumerate(config.routers):
                centers = None
                if kind == "oracle":
                    centers = basin_reference(
                        system, seed, config.checkpoints, config.evaluation, config.roll_steps
                    ).centers.numpy()
                router = make_router(kind, model, train, centers=centers, seed=sub_seed(seed, r))
                step = fit_local_maps(
                    model,
                    train,
                    router,
                    method=config.method,
                    steps=config.steps,
                    lr=config.lr,
                    batch=config.batch,
                    seed=sub_seed(seed, 100 + r),
                )
                staged = cadence_rules(
                    KAEForecaster(model, step), val, test, config.horizons, config.periods, best=False
                )
                local[kind][i, j] = [staged.frozen[h] for h in config.horizons]
                routes[kind][i, j] = int(step.maps.active.sum())
                coverage[kind][i, j] = step.coverage
    return RoutingResult(config, global_mse, local, routes, coverage)


def run_routing(config: RoutingConfig, *, use_cache: bool = True, verbose: bool = False) -> RoutingResult:
    """k4: staged local maps (support families and the controls) against the global LISTA (see module)."""
    return run_cached(
        "skae-k4-routing", config, RoutingConfig, _compute_routing, use_cache=use_cache, verbose=verbose
    )
