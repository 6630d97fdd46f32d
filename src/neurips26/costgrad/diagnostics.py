"""Diagnostics of a token selection: the cost decomposition, action-pathway drift, "easy but critical"
tokens, selection overlap and the probe's influence.

- **Decomposition.** With the full-grid terminal prediction ``Φ_P(A)`` and the sparse one ``Φ_S(A)``:
  ``J = Σ_{i∈P} ‖Φ_P,i − g_i‖²``, ``J_S^oracle = Σ_{i∈S} ‖Φ_P,i − g_i‖²``, ``J_S = Σ_{i∈S} ‖Φ_S,i − g_i‖²``;
  ``D_S = J − J_S^oracle`` (the cost of the discarded tokens) and ``E_S = J_S − J_S^oracle`` (what running
  on fewer tokens changes in the kept ones), so that ``J_S − J = E_S − D_S``.
- **Drift.** For one action ``a``, the action's effect at kept position ``i`` when the predictor sees
  the token set ``U``: ``δ_i^U = f_i(U, a) − f_i(U, 0)``; ``p_i ∝ ‖δ_i^S‖²`` and ``q_i ∝ ‖δ_i^P‖²`` over
  ``i ∈ S``, and drift ``= KL(p ‖ q)`` (``10⁻¹⁰`` added to both). It measures how much dropping tokens
  redistributes where the action acts; a selection is compared with a random one of the same size.
- **Easy but critical**: tokens in the bottom quarter of one-step prediction error and the top quarter of
  COSTGRAD's score, against ``P / 16`` if the two were independent.
- **IoU** of two selections, and the **Spearman** correlation of COSTGRAD's scores under other probes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import spearmanr

from neurips26.costgrad.predictor import TokenPredictor
from neurips26.validation import check_int

KL_EPS = 1e-10


@dataclass(frozen=True)
class Decomposition:
    """Per candidate ``(N,)``: ``J``, ``J_S^oracle``, ``J_S``, ``D_S`` and ``E_S`` (module doc)."""

    full: np.ndarray
    oracle: np.ndarray
    sparse: np.ndarray

    @property
    def discarded(self) -> np.ndarray:
        return self.full - self.oracle

    @property
    def sparse_change(self) -> np.ndarray:
        return self.sparse - self.oracle


def _rollout(model: TokenPredictor, z: torch.Tensor, actions: torch.Tensor, positions: torch.Tensor | None):
    for t in range(actions.shape[1]):
        z = model(z, actions[:, t], positions)
    return z


@torch.no_grad()
def decomposition(
    model: TokenPredictor, z: torch.Tensor, goal: torch.Tensor, index: np.ndarray, actions: np.ndarray
) -> Decomposition:
    """For one observation ``z`` ``(P, D)``, goal ``(P, D)``, kept ``index`` ``(K,)`` and candidates
    ``(N, H, A)`` (module doc; sums, not means)."""
    dtype = model.head.weight.dtype
    a = torch.from_numpy(np.asarray(actions)).to(dtype)
    n = a.shape[0]
    idx = torch.from_numpy(np.asarray(index, dtype=np.int64))
    full = _rollout(model, z.to(dtype)[None].expand(n, -1, -1), a, None)
    sparse = _rollout(model, z.to(dtype)[idx][None].expand(n, -1, -1), a, idx)
    g = goal.to(dtype)
    j = ((full - g) ** 2).sum((1, 2))
    j_oracle = ((full[:, idx] - g[idx]) ** 2).sum((1, 2))
    j_sparse = ((sparse - g[idx]) ** 2).sum((1, 2))
    return Decomposition(j.double().numpy(), j_oracle.double().numpy(), j_sparse.double().numpy())


@torch.no_grad()
def drift(model: TokenPredictor, z: torch.Tensor, index: np.ndarray, action: torch.Tensor) -> float:
    """``KL(p ‖ q)`` of the action's effect at the kept positions, sparse run against full run, for one
    observation ``z`` ``(P, D)`` and one action ``(A,)`` (module doc)."""
    dtype = model.head.weight.dtype
    idx = torch.from_numpy(np.asarray(index, dtype=np.int64))
    a = action.to(dtype)[None]
    zero = torch.zeros_like(a)
    zf = z.to(dtype)[None]
    full = (model(zf, a) - model(zf, zero))[0, idx]
    zs = zf[:, idx]
    sparse = (model(zs, a, idx) - model(zs, zero, idx))[0]
    p = (sparse**2).sum(-1).double()
    q = (full**2).sum(-1).double()
    p = p / p.sum() + KL_EPS
    q = q / q.sum() + KL_EPS
    return float((p * (p / q).log()).sum())


def easy_but_critical(prediction_error: np.ndarray, scores: np.ndarray) -> int:
    """Tokens in the bottom quarter of prediction error and the top quarter of the score ``(P,)``."""
    prediction_error, scores = np.asarray(prediction_error), np.asarray(scores)
    p = check_int("tokens", len(scores), minimum=4)
    q = p // 4
    easy = set(np.argsort(prediction_error, kind="stable")[:q])
    critical = set(np.argsort(-scores, kind="stable")[:q])
    return len(easy & critical)


def iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two index sets."""
    a, b = set(np.asarray(a).tolist()), set(np.asarray(b).tolist())
    return len(a & b) / len(a | b) if a | b else 1.0


def probe_spearman(reference: np.ndarray, others: list[np.ndarray]) -> float:
    """Mean Spearman correlation of the reference probe's scores with each other probe's ``(P,)``."""
    return float(np.mean([spearmanr(reference, o)[0] for o in others]))
