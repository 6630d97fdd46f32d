"""Leave-one-family-out evaluation of step routers and baselines.

For each family ``f`` (a fold): the chains of the other eight families train the routers (80 %; the other
20 % choose the gate threshold θ), and every policy is scored on ``f``'s chains, cell by cell (``f`` × each
benchmark): gain recovered at budget ``β``, gated GR (the gate's fallback is random), coverage (the share of
chains where the gate acts), AUC@10 of the raw scores for the label "in the top ``⌈0.1 n⌉`` by ``U^sel``",
pooled over the held-out steps, and the tokens each pick regenerates.

Three nets are trained per fold: the listwise router (prior; mask and gate applied when routing), the
listwise router without the depth prior, and the pointwise (BCE) router; the ablations "−mask" and
"−gate" route with the full listwise net without that part.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sklearn.metrics import roc_auc_score

from neurips26.expansion_utility import baselines as BL
from neurips26.expansion_utility.allocation import gain_recovered, regenerated_tokens, top_b
from neurips26.expansion_utility.router import RouterConfig, RouterNet, top_labels
from neurips26.expansion_utility.router_fit import StepData, choose_theta, fit_router, route, router_scores
from neurips26.expansion_utility.simulator import BENCHMARKS, FAMILIES
from neurips26.validation import check_float

NETS = {
    "listwise": RouterConfig(),
    "listwise-no-prior": RouterConfig(prior=False),
    "pointwise": RouterConfig(loss="pointwise"),
}
"""The nets trained per fold."""
POLICIES = (
    "listwise",
    "listwise -prior",
    "listwise -mask",
    "listwise -gate",
    "pointwise",
    "first step",
    "best depth bin",
    "lowest confidence",
    "highest entropy",
)
VALIDATION_SHARE = 0.2


@dataclass
class Fold:
    """The routers of one fold: the nets, the depth mask fitted on the training chains, the gate thresholds
    (per net), the best depth bin of the training chains; the nets' training ``losses`` when trained here
    (empty when loaded from a checkpoint)."""

    nets: dict[str, RouterNet]
    mask: np.ndarray
    theta: dict[str, float]
    best_bin: int
    losses: dict[str, list[float]] = field(default_factory=dict)


def split_training(data: StepData, held_out: int, seed: int) -> tuple[StepData, StepData]:
    """The chains of every family but ``held_out``, split into training (80 %) and validation (20 %)."""
    rows = np.flatnonzero(data.family != held_out)
    rng = np.random.default_rng(seed + held_out)
    rng.shuffle(rows)
    cut = int(round(len(rows) * (1 - VALIDATION_SHARE)))
    return data.subset(np.sort(rows[:cut])), data.subset(np.sort(rows[cut:]))


def train_fold(data: StepData, held_out: int, *, beta: float, seed: int, steps: int = 300) -> Fold:
    """Train the nets of fold ``held_out`` and choose their gate thresholds on the validation split."""
    train, valid = split_training(data, held_out, seed)
    nets, theta, losses, mask = {}, {}, {}, None
    for name, config in NETS.items():
        net, fitted, losses[name] = fit_router(train, config, seed=seed, steps=steps)
        nets[name] = net
        if name == "listwise":
            mask = fitted
        theta[name] = choose_theta(router_scores(net, valid), valid, mask, beta)
    return Fold(nets, mask, theta, BL.best_depth_bin(train), losses)


def _policy(name: str, fold: Fold, test: StepData, beta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Picks, where the policy acts, and its raw scores on ``test``."""
    always = np.ones(len(test), dtype=bool)
    if name.startswith("listwise") or name == "pointwise":
        net_name = {"listwise -prior": "listwise-no-prior"}.get(
            name, "pointwise" if name == "pointwise" else "listwise"
        )
        z = router_scores(fold.nets[net_name], test)
        mask = None if name == "listwise -mask" else fold.mask
        theta = None if name == "listwise -gate" else fold.theta[net_name]
        picks, act = route(z, test, mask, beta, theta)
        return picks, act, z
    scores = {
        "first step": BL.first_step_scores(test),
        "best depth bin": BL.depth_bin_scores(test, fold.best_bin),
        "lowest confidence": BL.lowest_confidence_scores(test),
        "highest entropy": BL.highest_entropy_scores(test),
    }[name]
    return top_b(np.where(test.valid, scores, np.nan), test.n, beta), always, scores


@dataclass(frozen=True)
class PolicyCell:
    """One policy on one held-out cell."""

    policy: str
    family: str
    benchmark: str
    gr: float
    gated_gr: float
    coverage: float
    tokens: float


def evaluate_fold(fold: Fold, data: StepData, held_out: int, *, beta: float) -> tuple[list[PolicyCell], dict]:
    """Every policy on every cell of the held-out family, and the pooled AUC@10 of each scored policy."""
    beta = check_float("beta", beta, minimum=0.0, maximum=1.0, strict_min=True)
    test = data.subset(data.family == held_out)
    labels = top_labels(test.sel, test.n, seed=held_out)
    out, auc = [], {}
    for name in POLICIES:
        picks, act, scores = _policy(name, fold, test, beta)
        valid = test.valid
        s = np.where(np.isfinite(scores), scores, -1e30)[valid]
        auc[name] = float(roc_auc_score(labels[valid], s)) if labels[valid].any() else float("nan")
        for b in range(len(BENCHMARKS)):
            rows = test.bench == b
            if not rows.any():
                continue
            cell = test.subset(rows)
            out.append(
                PolicyCell(
                    policy=name,
                    family=FAMILIES[held_out].name,
                    benchmark=BENCHMARKS[b].name,
                    gr=gain_recovered(picks[rows], cell.sel, cell.ev, cell.n, beta),
                    gated_gr=gain_recovered(picks[rows], cell.sel, cell.ev, cell.n, beta, act=act[rows]),
                    coverage=float(act[rows].mean()),
                    tokens=float(regenerated_tokens(picks[rows], cell.length).mean()),
                )
            )
    return out, auc
