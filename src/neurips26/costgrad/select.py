"""Which tokens to plan on: COSTGRAD and the selectors it is compared with.

Every selector returns ``K`` token indices per episode ``(E, K)`` (sorted), chosen once per planning step
from the current observation's tokens ``z`` ``(E, P, D)`` and the goal's ``z_goal``; the planner then uses
the same indices for the observation, the goal and every rollout step.

- **COSTGRAD** (:func:`costgrad_scores`): one forward of the predictor on the full grid with a zero probe
  action, the planning loss ``L = Σ_i ‖f_i(z, a₀) − z_goal,i‖²`` (a sum; a mean only rescales), one
  backward, and the score ``s_j = ‖∂L/∂z_j‖``; keep the top ``K``. Inverted: the bottom ``K``. Anchors: the
  top ``(1 − α) K`` and ``α K`` drawn at random from the rest.
- **Random**: ``K`` indices uniformly without replacement, drawn per planning step.
- **PREDATTN**: the attention each token receives in the last block (zero probe, full grid).
- **PREDGRAD**: the gradient norm of the *prediction* loss of the latest frame from the previous one.
- **ToMe**: token merging by bipartite matching on a checkerboard; merged tokens are averages placed at
  their destination's position, and the goal is compared there unmerged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neurips26.costgrad.predictor import TokenPredictor
from neurips26.validation import check_float, check_int


def check_keep(k: object, tokens: int) -> int:
    """``K`` as an int in ``[1, P]`` (``ValueError`` naming ``k`` otherwise)."""
    return check_int("k", k, minimum=1, maximum=tokens)


def costgrad_scores(
    model: TokenPredictor, z: torch.Tensor, z_goal: torch.Tensor, probe: torch.Tensor | None = None
) -> torch.Tensor:
    """``s_j = ‖∇_{z_j} Σ_i ‖f_i(z, a₀) − z_goal,i‖²‖`` for every token ``(E, P)`` (the probe ``a₀``
    defaults to zero, one per episode ``(E, A)``)."""
    if z.shape != z_goal.shape:
        raise ValueError(
            f"z and z_goal must have the same shape; got {tuple(z.shape)}, {tuple(z_goal.shape)}"
        )
    dtype = model.head.weight.dtype
    z = z.detach().to(dtype).requires_grad_(True)
    if probe is None:
        probe = torch.zeros(z.shape[0], model.spec.action_dim, dtype=dtype)
    with torch.enable_grad():
        loss = ((model(z, probe.to(dtype)) - z_goal.to(dtype)) ** 2).sum()
        (grad,) = torch.autograd.grad(loss, z)
    return grad.norm(dim=-1).detach()


def top_k(scores: torch.Tensor, k: int) -> np.ndarray:
    """The indices of the ``k`` largest scores per row, sorted ascending ``(E, k)`` (ties: lower index)."""
    k = check_keep(k, scores.shape[-1])
    s = scores.detach().cpu().double().numpy()
    order = np.argsort(-s, axis=-1, kind="stable")[:, :k]
    return np.sort(order, axis=-1)


def bottom_k(scores: torch.Tensor, k: int) -> np.ndarray:
    """The ``k`` smallest scores per row (the inverted selector)."""
    return top_k(-scores, k)


def random_k(episodes: int, tokens: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` distinct indices per episode, uniformly at random."""
    k = check_keep(k, tokens)
    return np.sort(np.stack([rng.choice(tokens, size=k, replace=False) for _ in range(episodes)]), axis=-1)


def with_anchors(scores: torch.Tensor, k: int, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """The top ``K − round(α K)`` by score and ``round(α K)`` random others per row."""
    k = check_keep(k, scores.shape[-1])
    alpha = check_float("alpha", alpha, minimum=0.0, maximum=1.0)
    n_random = int(round(alpha * k))
    top = top_k(scores, k - n_random) if k - n_random else np.zeros((scores.shape[0], 0), dtype=int)
    rows = []
    for e in range(scores.shape[0]):
        rest = np.setdiff1d(np.arange(scores.shape[-1]), top[e])
        rows.append(np.sort(np.concatenate([top[e], rng.choice(rest, size=n_random, replace=False)])))
    return np.stack(rows)


def predattn_scores(model: TokenPredictor, z: torch.Tensor) -> torch.Tensor:
    """PREDATTN: the attention each token receives in the predictor's last block under a zero probe,
    summed over queries and averaged over heads ``(E, P)``."""
    dtype = model.head.weight.dtype
    probe = torch.zeros(z.shape[0], model.spec.action_dim, dtype=dtype)
    with torch.no_grad():
        _, weights = model.run(z.to(dtype), probe, attentions=True)
    return weights[-1].sum(dim=2).mean(dim=1)


def predgrad_scores(model: TokenPredictor, z_prev: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """PREDGRAD: ``‖∇_{z_prev, j} ‖f(z_prev, 0) − sg(z)‖²‖`` — the prediction loss of the latest frame
    from the one before, under a zero probe ``(E, P)``."""
    return costgrad_scores(model, z_prev, z)


@dataclass(frozen=True)
class Merge:
    """ToMe's result: the surviving positions ``(E, K)`` (sorted) and their tokens ``(E, K, D)`` (a merged
    group's equal-weight mean sits at its destination's position)."""

    index: np.ndarray
    tokens: torch.Tensor


def checkerboard(tokens: int) -> tuple[np.ndarray, np.ndarray]:
    """Source and destination positions of a square grid of ``tokens`` cells (sources where row + column
    is even)."""
    side = int(round(tokens**0.5))
    if side * side != tokens:
        raise ValueError(f"tokens must be a square number; got {tokens}")
    r, c = np.divmod(np.arange(tokens), side)
    even = (r + c) % 2 == 0
    return np.flatnonzero(even), np.flatnonzero(~even)


def tome(z: torch.Tensor, k: int) -> Merge:
    """Token merging by bipartite matching: every source token is matched to its most cosine-similar
    destination, the ``P − K`` most similar pairs are merged (equal-weight means at the destinations),
    and the rest survive. Needs ``K ≥ P/2``."""
    e, p, _ = z.shape
    k = check_keep(k, p)
    src, dst = checkerboard(p)
    if k < len(dst):
        raise ValueError(f"k must be at least {len(dst)} (half the tokens) for token merging; got {k}")
    zn = torch.nn.functional.normalize(z.double(), dim=-1)
    sim = zn[:, src] @ zn[:, dst].transpose(1, 2)  # (E, |src|, |dst|)
    best_sim, best_dst = sim.max(dim=2)
    merged_count = p - k
    indices, tokens = [], []
    for i in range(e):
        order = np.argsort(-best_sim[i].numpy(), kind="stable")
        merged = order[:merged_count]
        sums = z[i, dst].double().clone()
        counts = torch.ones(len(dst), dtype=torch.float64)
        for m in merged:
            d = int(best_dst[i, m])
            sums[d] += z[i, src[m]].double()
            counts[d] += 1
        keep_src = np.sort(order[merged_count:])
        index = np.concatenate([dst, src[keep_src]])
        values = torch.cat([sums / counts[:, None], z[i, src[keep_src]].double()])
        sort = np.argsort(index)
        indices.append(index[sort])
        tokens.append(values[sort].to(z.dtype))
    return Merge(np.stack(indices), torch.stack(tokens))
