"""A within-chain step router: features of each step, a score, a learned depth prior, a benchmark-
conditional depth mask, a confidence gate, and the two ways to train it (listwise and pointwise).

Score of step ``k`` of chain ``c`` from benchmark ``b``::

    z_ck = f_θ(φ_ck) + log π_ψ(bin(k/n)) + μ_b(bin(k/n))

- ``φ_ck`` (:func:`step_features`): relative depth and its 10-bin one-hot, the chain's length ``n``, the
  step's length, its confidence statistics (mean, minimum, binary entropy) and their change from the
  previous step, the step type, the benchmark — nothing that names the model family, so a router can be
  tested on a family it never saw;
- ``f_θ``: an MLP with two hidden layers of 32 units;
- ``π_ψ``: a learned softmax over the 10 depth bins (the depth prior);
- ``μ_b ∈ {0, −∞}^10``: the depth mask, fitted on training chains: the bins whose mean selection-half
  utility is in the bottom 30 % of benchmark ``b``'s bins are masked (:func:`depth_mask`), unless fewer than
  ``B(c)`` steps of a chain would remain.

Listwise training (ListNet, :func:`listnet_loss`): the target of a chain is ``q = softmax(U^sel / 0.05)``
over its steps, the loss ``−Σ_k q_k log softmax(z)_k``; chains whose ``U^sel`` is constant carry no ranking
signal and are skipped. Pointwise training (:func:`pointwise_loss`): binary cross-entropy of
``σ(z_ck)`` against ``1[k ∈ top ⌈0.1 n⌉ of c by U^sel]`` (ties broken at random, seeded), pooled over all
steps. The gate (:func:`gate_margin`) acts on a chain when the top two of ``softmax(z)`` over its steps
differ by at least ``θ``; elsewhere the random policy is used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from neurips26.expansion_utility.allocation import budget, top_b
from neurips26.expansion_utility.simulator import BENCHMARKS, STEP_TYPES, Chains
from neurips26.validation import check_float, check_int

BINS = 10
TARGET_TEMPERATURE = 0.05
MASK_FRACTION = 0.3
HIDDEN = 32


def depth_bins(n: np.ndarray, n_max: int) -> np.ndarray:
    """The depth bin ``⌊10 k / n⌋`` of every step ``k < n`` ``(C, n_max)``; −1 beyond ``n``."""
    k = np.arange(n_max)[None, :]
    bins = np.minimum((BINS * k) // np.asarray(n)[:, None], BINS - 1)
    return np.where(k < np.asarray(n)[:, None], bins, -1)


def _entropy(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return -(p * np.log(p) + (1 - p) * np.log(1 - p))


def step_features(chains: Chains) -> np.ndarray:
    """Features ``φ`` of every step ``(C, n_max, F)`` (zeros beyond ``n``), in the order of
    :func:`feature_names`."""
    problems = chains.problems
    C, n_max = problems.types.shape
    n = problems.n
    k = np.arange(n_max)[None, :].repeat(C, 0)
    live = k < n[:, None]
    depth = k / np.maximum(n[:, None] - 1, 1)
    bins = np.eye(BINS)[np.maximum(depth_bins(n, n_max), 0)]
    conf, low = chains.confidence, chains.confidence_min
    entropy = _entropy(conf)
    prev = lambda x: np.concatenate([x[:, :1], x[:, :-1]], axis=1)  # noqa: E731 - the step before
    types = np.eye(len(STEP_TYPES))[np.maximum(problems.types, 0)]
    bench = np.zeros((C, n_max, len(BENCHMARKS)))
    bench[:, :, BENCHMARKS.index(problems.benchmark)] = 1.0
    columns = [
        depth[..., None],
        bins,
        (n[:, None] / 20.0).repeat(n_max, 1)[..., None],
        (chains.length / 10.0)[..., None],
        conf[..., None],
        low[..., None],
        entropy[..., None],
        (conf - prev(conf))[..., None],
        (low - prev(low))[..., None],
        types,
        bench,
    ]
    phi = np.concatenate(columns, axis=-1)
    return np.where(live[..., None], phi, 0.0).astype(np.float32)


def feature_names() -> list[str]:
    """Names of the columns of :func:`step_features`."""
    return [
        "depth",
        *[f"bin{i}" for i in range(BINS)],
        "n",
        "length",
        "confidence",
        "confidence_min",
        "entropy",
        "d_confidence",
        "d_confidence_min",
        *[f"type:{t}" for t in STEP_TYPES],
        *[f"bench:{b.name}" for b in BENCHMARKS],
    ]


def depth_mask(
    sel: np.ndarray, n: np.ndarray, bench: np.ndarray, *, fraction: float = MASK_FRACTION
) -> np.ndarray:
    """``(len(BENCHMARKS), BINS)`` booleans, True where a bin is masked: for each benchmark, the
    ``⌊fraction · 10⌋`` bins with the lowest mean selection-half utility over the given chains (bins without
    data are never masked)."""
    fraction = check_float("fraction", fraction, minimum=0.0, maximum=1.0)
    bins = depth_bins(n, sel.shape[1])
    mask = np.zeros((len(BENCHMARKS), BINS), dtype=bool)
    drop = int(np.floor(fraction * BINS))
    for b in range(len(BENCHMARKS)):
        rows = bench == b
        if not rows.any() or drop == 0:
            continue
        means = np.array(
            [
                np.nanmean(sel[rows][bins[rows] == i]) if (bins[rows] == i).any() else np.inf
                for i in range(BINS)
            ]
        )
        order = np.argsort(means, kind="stable")
        mask[b, order[:drop]] = np.isfinite(means[order[:drop]])
    return mask


@dataclass(frozen=True)
class RouterConfig:
    """Which parts a router has: ``loss`` ("listwise" or "pointwise"), the depth ``prior``, the depth
    ``mask``, the ``gate``."""

    loss: str = "listwise"
    prior: bool = True
    mask: bool = True
    gate: bool = True

    def __post_init__(self) -> None:
        if self.loss not in ("listwise", "pointwise"):
            raise ValueError(f"loss must be 'listwise' or 'pointwise'; got {self.loss!r}")


class RouterNet(nn.Module):
    """``z = MLP(φ) + log π_ψ(bin)``; the mask is added by :func:`masked_scores`."""

    def __init__(self, features: int, *, prior: bool = True):
        super().__init__()
        check_int("features", features, minimum=1)
        self.mlp = nn.Sequential(
            nn.Linear(features, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 1)
        )
        self.prior_logits = nn.Parameter(torch.zeros(BINS)) if prior else None

    def forward(self, phi: Tensor, bins: Tensor) -> Tensor:
        """Scores ``(C, n_max)`` from features ``(C, n_max, F)`` and depth bins ``(C, n_max)`` (−1: pad)."""
        z = self.mlp(phi).squeeze(-1)
        if self.prior_logits is not None:
            z = z + torch.log_softmax(self.prior_logits, 0)[bins.clamp(min=0)]
        return z


def masked_scores(
    z: np.ndarray, n: np.ndarray, bench: np.ndarray, mask: np.ndarray | None, beta: float
) -> np.ndarray:
    """Scores with the depth mask applied (``−inf`` on masked bins) and padding set to ``−inf``; a chain that
    would keep fewer than ``B(c)`` steps is left unmasked (the mask is lifted)."""
    z = np.asarray(z, dtype=float).copy()
    n_max = z.shape[1]
    bins = depth_bins(n, n_max)
    valid = bins >= 0
    if mask is not None:
        masked = mask[np.asarray(bench)[:, None], np.maximum(bins, 0)] & valid
        keep = (valid & ~masked).sum(1) >= budget(n, beta)
        z = np.where(masked & keep[:, None], -np.inf, z)
    return np.where(valid, z, -np.inf)


def listnet_loss(
    z: Tensor, utility: Tensor, valid: Tensor, *, temperature: float = TARGET_TEMPERATURE
) -> Tensor:
    """ListNet: mean over chains with a non-constant utility of ``−Σ_k softmax(U/τ)_k log softmax(z)_k``
    over the chain's valid steps. ``z``, ``utility``: ``(C, n_max)``; ``valid``: booleans."""
    neg = torch.finfo(z.dtype).min
    u = torch.where(valid, utility, torch.full_like(utility, neg))
    hi = torch.where(valid, utility, utility.new_tensor(-float("inf"))).amax(1)
    lo = torch.where(valid, utility, utility.new_tensor(float("inf"))).amin(1)
    informative = hi > lo
    if not bool(informative.any()):
        return z.sum() * 0.0
    target = torch.softmax(u / temperature, dim=1)
    log_p = torch.log_softmax(torch.where(valid, z, torch.full_like(z, neg)), dim=1)
    per_chain = -(target * torch.where(valid, log_p, torch.zeros_like(log_p))).sum(1)
    return per_chain[informative].mean()


def top_labels(sel: np.ndarray, n: np.ndarray, *, fraction: float = 0.1, seed: int = 0) -> np.ndarray:
    """Pointwise labels ``1[k ∈ top ⌈fraction · n⌉ of c by U^sel]`` ``(C, n_max)``, ties broken at random."""
    return top_b(np.where(np.isnan(sel), np.nan, sel), n, fraction, seed=seed)


def pointwise_loss(z: Tensor, labels: Tensor, valid: Tensor) -> Tensor:
    """Binary cross-entropy of ``σ(z)`` against ``labels`` over every valid step (pooled)."""
    return nn.functional.binary_cross_entropy_with_logits(z[valid], labels[valid].float())


def gate_margin(z: np.ndarray) -> np.ndarray:
    """Per chain, the top-1 minus top-2 of ``softmax(z)`` over its steps (``−inf`` entries excluded); 1 for
    a chain with one eligible step."""
    z = np.asarray(z, dtype=float)
    shifted = z - np.max(z, axis=1, keepdims=True)
    p = np.exp(shifted)
    p = p / p.sum(1, keepdims=True)
    top = np.sort(p, axis=1)[:, ::-1]
    second = top[:, 1] if top.shape[1] > 1 else np.zeros(len(top))
    return top[:, 0] - second
