"""Claim k5 of chapter 04: is the support used by the predictor? (paper appendix "Support-coordinate
intervention table").

On each LISTA seed of Local-linear gates: encode the test starts, edit the initial code ``z₀`` and roll the
edited code out (:func:`~neurips26.skae.interventions.intervened_rollout`), measuring the paper's ``H``-step
accumulated MSE (:func:`~neurips26.skae.interventions.accumulated_mse`, ``H = 21``). Edits: zero the top-k
coordinates (:data:`~neurips26.skae.interventions.KS`), move the active values to random inactive
coordinates (``draws`` draws, averaged), and shuffle the active values among themselves [ours]. The
rollout re-encodes with ``period`` (``None``: never, the paper's bare ``D(K^t z₀)`` over 21 steps).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from neurips26.scales import pick
from neurips26.seeding import sub_seed
from neurips26.skae.data import EvalConfig
from neurips26.skae.experiments.common import (
    check_names,
    check_scale,
    evaluation_set,
    load,
    model_name,
    run_cached,
)
from neurips26.skae.interventions import (
    DRAWS,
    KS,
    accumulated_mse,
    drop_top,
    intervened_rollout,
    permute_active,
    random_support,
)
from neurips26.skae.prepare import ROWS, SEEDS
from neurips26.skae.systems import CONTROLLED
from neurips26.validation import check_int

SYSTEM = "local-linear-gates"


@dataclass(frozen=True)
class IdentityConfig:
    """k5: ``row`` on ``system`` with ``seeds``; ``ks``: top-k coordinates dropped; ``draws``: random-support
    draws; ``horizon``: the accumulated-MSE horizon (paper: 21); ``period``: re-encoding (None: never)."""

    system: str = SYSTEM
    seeds: tuple[int, ...] = SEEDS
    row: str = "lista"
    ks: tuple[int, ...] = KS
    draws: int = DRAWS
    horizon: int = 21
    period: int | None = None
    evaluation: EvalConfig = field(default_factory=EvalConfig)
    checkpoints: str = "default"

    def __post_init__(self) -> None:
        check_names("system", (self.system,), CONTROLLED)
        if not isinstance(self.seeds, tuple) or not self.seeds:
            raise ValueError(f"seeds must be a non-empty tuple; got {self.seeds!r}")
        check_names("row", (self.row,), tuple(ROWS))
        if not isinstance(self.ks, tuple) or not self.ks:
            raise ValueError(f"ks must be a non-empty tuple of ints; got {self.ks!r}")
        for k in self.ks:
            check_int("ks", k, minimum=1)
        check_int("draws", self.draws, minimum=1)
        check_int("horizon", self.horizon, minimum=1, maximum=self.evaluation.horizon)
        if self.period is not None:
            check_int("period", self.period, minimum=1)
        check_scale("checkpoints", self.checkpoints)
        for seed in self.seeds:
            model_name(self.row, self.system, seed)

    @classmethod
    def for_scale(cls, scale: str) -> IdentityConfig:
        """smoke: seed 0, 8 starts, k ∈ {1, 2}, 2 draws."""
        return pick(
            scale,
            smoke=cls(
                seeds=(0,),
                ks=(1, 2),
                draws=2,
                evaluation=EvalConfig(test_starts=8, val_starts=4, horizon=21),
                checkpoints="smoke",
            ),
            default=cls(),
        )


@dataclass(frozen=True)
class IdentityResult:
    """Per seed: ``standard`` (the unedited rollout), ``dropped[s, k]`` (top ``ks[k]`` zeroed),
    ``random_support`` and ``permuted`` accumulated MSE at ``horizon``; ``active``: mean active count."""

    config: IdentityConfig
    standard: np.ndarray
    dropped: np.ndarray
    random_support: np.ndarray
    permuted: np.ndarray
    active: np.ndarray

    def ratio(self, k: int = 1) -> np.ndarray:
        """Per seed: accumulated MSE with the top ``k`` dropped over the standard one."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.dropped[:, self.config.ks.index(k)] / self.standard


def _compute_identity(config: IdentityConfig) -> IdentityResult:
    n = len(config.seeds)
    standard, random_, permuted, active = (np.zeros(n) for _ in range(4))
    dropped = np.zeros((n, len(config.ks)))
    h, m = config.horizon, config.period
    for s, seed in enumerate(config.seeds):
        test = evaluation_set(config.system, seed, config.checkpoints, config.evaluation, "test")
        model = load(config.row, config.system, seed, config.checkpoints)
        x0 = test.starts.to(model.transition.K.dtype)
        truth = test.truth[:, :h]
        with torch.no_grad():
            z0 = model.encode(x0)
        active[s] = float((z0.abs() > 1e-3).sum(dim=1).double().mean())

        def score(edit, model=model, x0=x0, truth=truth) -> float:
            return float(accumulated_mse(intervened_rollout(model, x0, h, edit, period=m), truth)[-1])

        standard[s] = score(lambda z: z)
        for k_index, k in enumerate(config.ks):
            dropped[s, k_index] = score(lambda z, k=k: drop_top(z, min(k, z.shape[1])))
        random_[s] = np.mean(
            [
                score(lambda z, d=d, seed=seed: random_support(z, sub_seed(seed, d)))
                for d in range(config.draws)
            ]
        )
        permuted[s] = np.mean(
            [
                score(lambda z, d=d, seed=seed: permute_active(z, sub_seed(seed, 1000 + d)))
                for d in range(config.draws)
            ]
        )
    return IdentityResult(config, standard, dropped, random_, permuted, active)


def run_identity(config: IdentityConfig, *, use_cache: bool = True, verbose: bool = False) -> IdentityResult:
    """k5: accumulated MSE after each support intervention, per LISTA seed (see the module)."""
    return run_cached(
        "skae-k5-identity", config, IdentityConfig, _compute_identity, use_cache=use_cache, verbose=verbose
    )
