"""Training and applying a step router on pooled chains: the data of many cells padded to one width, a
minibatch fit, routing with mask and gate, and the gate threshold chosen on a validation split."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from neurips26.expansion_utility.allocation import gain_recovered, top_b
from neurips26.expansion_utility.router import (
    RouterConfig,
    RouterNet,
    depth_bins,
    depth_mask,
    gate_margin,
    listnet_loss,
    masked_scores,
    pointwise_loss,
    step_features,
    top_labels,
)
from neurips26.expansion_utility.simulator import BENCHMARKS, FAMILIES, Chains
from neurips26.expansion_utility.utility import Utilities
from neurips26.train import choose_device, fit
from neurips26.validation import check_int, check_seed

N_MAX = 20
"""Steps of the longest chain of any benchmark: every cell is padded to it."""


@dataclass(frozen=True)
class StepData:
    """Chains of several cells, padded to :data:`N_MAX` steps: ``features`` ``(C, N_MAX, F)``, ``bins``,
    ``sel``, ``ev`` (NaN padding), ``length``, ``n``, and each chain's ``bench`` and ``family`` index."""

    features: np.ndarray
    bins: np.ndarray
    sel: np.ndarray
    ev: np.ndarray
    length: np.ndarray
    n: np.ndarray
    bench: np.ndarray
    family: np.ndarray

    def __len__(self) -> int:
        return len(self.n)

    def subset(self, rows: np.ndarray) -> StepData:
        """The chains ``rows`` (an index or boolean array)."""
        return StepData(*(getattr(self, f)[rows] for f in self.__dataclass_fields__))

    @property
    def valid(self) -> np.ndarray:
        return self.bins >= 0


def _pad(x: np.ndarray, value: float) -> np.ndarray:
    width = N_MAX - x.shape[1]
    pad = [(0, 0), (0, width)] + [(0, 0)] * (x.ndim - 2)
    return np.pad(x, pad, constant_values=value)


def step_data(cells: Sequence[tuple[Chains, Utilities]]) -> StepData:
    """Pool ``(chains, utilities)`` of several cells into one :class:`StepData`."""
    parts = []
    for chains, u in cells:
        C = len(chains)
        parts.append(
            (
                _pad(step_features(chains), 0.0),
                _pad(depth_bins(chains.n, chains.problems.n_max), -1),
                _pad(u.sel, np.nan),
                _pad(u.ev, np.nan),
                _pad(chains.length, 0),
                chains.n,
                np.full(C, BENCHMARKS.index(chains.problems.benchmark)),
                np.full(C, FAMILIES.index(chains.family)),
            )
        )
    return StepData(*(np.concatenate(column) for column in zip(*parts, strict=True)))


def fit_router(
    data: StepData, config: RouterConfig, *, seed: int, steps: int = 300, batch: int = 256, lr: float = 3e-3
) -> tuple[RouterNet, np.ndarray | None, list[float]]:
    """Train a router on ``data`` (minibatches of ``batch`` chains, AdamW, cosine) on
    :func:`~neurips26.train.choose_device`'s device; returns the net (there), the depth mask fitted on the
    same chains (None without a mask) and the loss of every update. Under ``torchrun`` it trains
    data-parallel; both losses average over a data-dependent subset of each rank's rows (informative
    chains, valid steps), so the update follows the mean of the ranks' means, close to the global batch's."""
    seed = check_seed("seed", seed)
    steps = check_int("steps", steps, minimum=1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = RouterNet(data.features.shape[-1], prior=config.prior)
    net = net.to(choose_device())
    phi = torch.from_numpy(data.features)
    bins = torch.from_numpy(data.bins)
    valid = torch.from_numpy(data.valid)
    sel = torch.from_numpy(np.nan_to_num(data.sel)).float()
    labels = torch.from_numpy(top_labels(data.sel, data.n, seed=seed))
    rng = np.random.default_rng(seed)
    size = min(batch, len(data))

    def batches(step: int):
        rows = torch.from_numpy(rng.choice(len(data), size=size, replace=False))
        return phi[rows], bins[rows], valid[rows], sel[rows], labels[rows]

    def loss(model: RouterNet, b) -> torch.Tensor:
        f, bn, v, u, y = b
        z = model(f, bn)
        return listnet_loss(z, u, v) if config.loss == "listwise" else pointwise_loss(z, y, v)

    history = fit(net, loss, batches, steps=steps, seed=seed, lr=lr, weight_decay=0.0, progress=False)
    mask = depth_mask(data.sel, data.n, data.bench) if config.mask else None
    return net.eval(), mask, list(history.loss)


@torch.no_grad()
def router_scores(net: RouterNet, data: StepData) -> np.ndarray:
    """Raw scores ``(C, N_MAX)`` of ``data``'s steps (computed on the net's device)."""
    device = next(net.parameters()).device
    phi, bins = torch.from_numpy(data.features).to(device), torch.from_numpy(data.bins).to(device)
    return net(phi, bins).cpu().numpy().astype(float)


def route(
    z: np.ndarray, data: StepData, mask: np.ndarray | None, beta: float, theta: float | None
) -> tuple[np.ndarray, np.ndarray]:
    """The router's picks (top ``B(c)`` of the masked scores) and where it acts (gate margin ≥ ``theta``;
    everywhere when ``theta`` is None)."""
    scores = masked_scores(z, data.n, data.bench, mask, beta)
    picks = top_b(np.where(np.isfinite(scores), scores, -1e30), data.n, beta)
    act = np.ones(len(data), dtype=bool) if theta is None else gate_margin(scores) >= theta
    return picks, act


def choose_theta(z: np.ndarray, data: StepData, mask: np.ndarray | None, beta: float) -> float:
    """The gate threshold that maximises gated GR on ``data`` (a validation split), over the quantiles of
    its margins (and ``inf``: never act)."""
    scores = masked_scores(z, data.n, data.bench, mask, beta)
    margins = gate_margin(scores)
    best, best_gr = float("inf"), 0.0
    for theta in np.unique(np.quantile(margins, np.linspace(0, 0.95, 20))):
        picks, act = route(z, data, mask, beta, float(theta))
        gr = gain_recovered(picks, data.sel, data.ev, data.n, beta, act=act)
        if np.isfinite(gr) and gr > best_gr:
            best, best_gr = float(theta), gr
    return best
