"""The knowledge router, its targets from action-loss gradients, and token-selection baselines (§3.3).

SPARK-VLA forwards only k of the 2N candidate tokens C = [V2D + e2D; V3D + e3D] to its language model. A small
MLP scores each candidate given the pooled instruction u,

    r_i = w2^T GELU(W1 [LN(c_i); u]),

and the top-k by r_i are kept. The router learns from the action loss itself: on a *dense* step every
projected token c~_i enters the LM multiplied by a gate m_i = 1, and the first-order estimate of the loss
increase when token i is removed (m_i: 1 -> 0) is the Taylor score

    s_i = -dL/dm_i = -g_i^T c~_i,   g_i = dL/dc~_i,

which the ordinary backward pass already provides. The default target is soft, p* = softmax(s / tau) with
tau the per-sample std of s, trained by KL(p* || softmax(r)); the option is hard, BCE against 1[i in
top-k(s)]. Dense steps happen with probability p_dense, annealed linearly from 0.5 to 0.2.

The baselines that isolate the router pick k tokens at random, by the attention a shallow LM layer pays to
them (FastV), or by a Gumbel top-k trained through the action loss with straight-through gates.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from neurips26.spark_vla.seeded_linear import seeded_linear
from neurips26.validation import check_float, check_int, check_seed


def _check_tensor(name: str, value: object, ndim: int, *, floating: bool = True) -> Tensor:
    """A tensor of rank ``ndim`` (floating point unless ``floating`` is False)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(value).__name__}")
    if floating and not value.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor; got dtype {value.dtype}")
    if value.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional; got shape {tuple(value.shape)}")
    return value


def _check_pair(scores: Tensor, logits: Tensor) -> None:
    """``scores`` and ``logits`` both (B, M) with M >= 1."""
    _check_tensor("scores", scores, 2)
    _check_tensor("logits", logits, 2)
    if logits.shape != scores.shape:
        raise ValueError(
            f"logits must have the shape of scores {tuple(scores.shape)}; got {tuple(logits.shape)}"
        )
    if scores.shape[1] == 0:
        raise ValueError("scores must hold at least one candidate per row")


def _check_generator(generator: object) -> torch.Generator:
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            "generator must be a torch.Generator (e.g. torch.Generator().manual_seed(0)); "
            f"got {type(generator).__name__}"
        )
    return generator


class Router(nn.Module):
    """Scores candidate tokens given the instruction: r_i = w2^T GELU(W1 [LN(c_i); u]) (+ biases).

    ``forward(candidates (B, M, width), instruction (B, instruction_width)) -> logits (B, M)``. The two
    linear maps use PyTorch's default initialisation drawn from a private generator seeded by ``seed``, so
    building a router never moves the global RNG.
    """

    def __init__(self, width: int = 64, instruction_width: int = 64, hidden: int = 64, *, seed: int = 0):
        super().__init__()
        self.width = check_int("width", width, minimum=1)
        self.instruction_width = check_int("instruction_width", instruction_width, minimum=1)
        self.hidden = check_int("hidden", hidden, minimum=1)
        generator = torch.Generator().manual_seed(check_seed("seed", seed))
        self.norm = nn.LayerNorm(self.width)
        self.fc1 = seeded_linear(self.width + self.instruction_width, self.hidden, generator)
        self.act = nn.GELU()
        self.fc2 = seeded_linear(self.hidden, 1, generator)

    def forward(self, candidates: Tensor, instruction: Tensor) -> Tensor:
        """Router logits (B, M) for candidates (B, M, width) and pooled instruction (B, instruction_width)."""
        _check_tensor("candidates", candidates, 3)
        _check_tensor("instruction", instruction, 2)
        b, m, d = candidates.shape
        if d != self.width:
            raise ValueError(f"candidates must have width {self.width}; got shape {tuple(candidates.shape)}")
        if instruction.shape != (b, self.instruction_width):
            raise ValueError(
                f"instruction must have shape ({b}, {self.instruction_width}); got {tuple(instruction.shape)}"
            )
        u = instruction[:, None, :].expand(b, m, self.instruction_width)
        features = torch.cat([self.norm(candidates), u], dim=-1)
        return self.fc2(self.act(self.fc1(features)))[..., 0]


def taylor_scores(token_grads: Tensor, tokens: Tensor) -> Tensor:
    """Taylor scores s_i = -g_i^T c~_i: (B, M, d) gradients and (B, M, d) tokens -> (B, M).

    For gates m multiplying the tokens (x_i = m_i c~_i) at m = 1, dL/dm_i = g_i^T c~_i, so s_i = -dL/dm_i is
    the first-order rise of the loss when token i is dropped.
    """
    _check_tensor("token_grads", token_grads, 3)
    _check_tensor("tokens", tokens, 3)
    if tokens.shape != token_grads.shape:
        raise ValueError(
            f"tokens must have the shape of token_grads {tuple(token_grads.shape)}; got {tuple(tokens.shape)}"
        )
    return -(token_grads * tokens).sum(dim=-1)


def soft_route_loss(
    scores: Tensor, logits: Tensor, *, mask: Tensor | None = None, eps: float = 1e-6
) -> Tensor:
    """The default router loss: KL(p* || softmax(logits)) with p* = softmax(s / tau), mean over the batch.

    ``scores`` s and ``logits`` (B, M); s is detached. tau is the per-sample standard deviation of s over the
    valid candidates (population form, divisor = count), clamped to >= ``eps``. ``mask`` (B, M) bool marks the
    candidates that exist (default: all); both distributions live on them only. Returns a scalar >= 0.
    """
    _check_pair(scores, logits)
    eps = check_float("eps", eps, minimum=0.0, strict_min=True)
    if mask is None:
        mask = torch.ones(scores.shape, dtype=torch.bool, device=scores.device)
    else:
        _check_tensor("mask", mask, 2, floating=False)
        if mask.dtype != torch.bool or mask.shape != scores.shape:
            raise ValueError(
                f"mask must be a bool tensor of shape {tuple(scores.shape)}; "
                f"got {mask.dtype} of shape {tuple(mask.shape)}"
            )
        if not bool(mask.any(dim=1).all()):
            raise ValueError("mask must mark at least one valid candidate in every row")
    s = scores.detach().masked_fill(~mask, 0.0)
    valid = mask.to(s.dtype)
    count = valid.sum(dim=1, keepdim=True)
    mean = (s * valid).sum(dim=1, keepdim=True) / count
    var = (((s - mean) * valid) ** 2).sum(dim=1, keepdim=True) / count
    tau = var.sqrt().clamp(min=eps)
    log_target = torch.log_softmax((s / tau).masked_fill(~mask, float("-inf")), dim=-1)
    log_model = torch.log_softmax(logits.masked_fill(~mask, float("-inf")), dim=-1)
    # Zero the absent candidates before multiplying, so no -inf - (-inf) is ever formed.
    log_target = log_target.masked_fill(~mask, 0.0)
    log_model = log_model.masked_fill(~mask, 0.0)
    kl = (log_target.exp() * (log_target - log_model)).sum(dim=-1)
    return kl.mean()


def hard_route_targets(scores: Tensor, k: int) -> Tensor:
    """Hard router targets y_i = 1[i in top-k(s)]: (B, M) -> (B, M) of 0.0/1.0 with k ones per row."""
    _check_tensor("scores", scores, 2)
    idx = topk_indices(scores.detach(), k)
    return torch.zeros_like(scores, dtype=scores.dtype).scatter(1, idx, 1.0).detach()


def hard_route_loss(scores: Tensor, logits: Tensor, k: int) -> Tensor:
    """The hard router loss: mean BCE-with-logits of ``logits`` against 1[i in top-k(scores)], s detached.

    Shapes (B, M) both; returns a scalar.
    """
    _check_pair(scores, logits)
    targets = hard_route_targets(scores, k).to(logits.dtype)
    return F.binary_cross_entropy_with_logits(logits, targets)


def topk_indices(logits: Tensor, k: int) -> Tensor:
    """(B, k) int64 indices of the k largest entries of each row of ``logits`` (B, M), sorted ascending.

    Ascending index order keeps the candidates in token order (2D pathway first, then 3D, each in raster
    order), which the LM's positions rely on.
    """
    _check_tensor("logits", logits, 2)
    k = check_int("k", k, minimum=1, maximum=logits.shape[1])
    return torch.topk(logits.detach(), k, dim=-1).indices.sort(dim=-1).values


def budget(rho: float, num_candidates: int) -> int:
    """The routed budget k = max(1, round(rho * num_candidates)) (Python's round: halves go to even).

    ``rho`` in (0, 1]; budget(0.25, 72) == 18.
    """
    rho = check_float("rho", rho, minimum=0.0, maximum=1.0, strict_min=True)
    num_candidates = check_int("num_candidates", num_candidates, minimum=1)
    return max(1, round(rho * num_candidates))


def random_indices(batch: int, num_candidates: int, k: int, generator: torch.Generator) -> Tensor:
    """The random-k baseline: (batch, k) int64 indices of uniform random k-subsets, sorted ascending.

    Drawn from ``generator`` on its device; the same seeded generator gives the same subsets.
    """
    batch = check_int("batch", batch, minimum=1)
    num_candidates = check_int("num_candidates", num_candidates, minimum=1)
    k = check_int("k", k, minimum=1, maximum=num_candidates)
    generator = _check_generator(generator)
    keys = torch.rand(batch, num_candidates, generator=generator, device=generator.device)
    return keys.argsort(dim=-1)[:, :k].sort(dim=-1).values


def gumbel_topk_gates(
    logits: Tensor, k: int, generator: torch.Generator, tau: float = 1.0
) -> tuple[Tensor, Tensor]:
    """The Gumbel top-k baseline, trained through the action loss with straight-through gates.

    perturbed = logits + Gumbel noise (from ``generator``); hard = 0/1 mask of top-k(perturbed); soft =
    min(1, k softmax(perturbed / tau)). Returns (gates (B, M), indices (B, k) sorted): gates equal ``hard``
    exactly in the forward pass and carry the gradient of ``soft`` in the backward pass.
    """
    _check_tensor("logits", logits, 2)
    k = check_int("k", k, minimum=1, maximum=logits.shape[1])
    generator = _check_generator(generator)
    tau = check_float("tau", tau, minimum=0.0, strict_min=True)
    u = torch.rand(logits.shape, generator=generator, device=generator.device, dtype=logits.dtype)
    u = u.to(logits.device).clamp(min=torch.finfo(logits.dtype).tiny)
    perturbed = logits - torch.log(-torch.log(u))
    indices = topk_indices(perturbed, k)
    hard = torch.zeros_like(perturbed).scatter(1, indices, 1.0).detach()
    soft = (k * torch.softmax(perturbed / tau, dim=-1)).clamp(max=1.0)
    # hard + (soft - soft) keeps the forward value exactly 0 or 1 (hard + soft - soft might round).
    gates = hard + (soft - soft.detach())
    return gates, indices


def _row_index(name: str, rows: slice | Sequence[int] | Tensor, length: int, device: torch.device) -> Tensor:
    """Non-negative int64 positions in [0, length) from a slice, a sequence or a 1-D integer tensor."""
    if isinstance(rows, slice):
        index = torch.arange(length, device=device)[rows]
    elif isinstance(rows, Tensor):
        if rows.dim() != 1 or rows.is_floating_point() or rows.dtype == torch.bool:
            raise ValueError(f"{name} must be a 1-D integer tensor; got {rows.dtype} {tuple(rows.shape)}")
        index = rows.to(device=device, dtype=torch.int64)
    elif isinstance(rows, Sequence) and not isinstance(rows, str):
        index = torch.tensor([check_int(f"{name}[{i}]", r) for i, r in enumerate(rows)], dtype=torch.int64)
        index = index.to(device)
    else:
        raise TypeError(
            f"{name} must be a slice, a sequence of ints or an index tensor; got {type(rows).__name__}"
        )
    if index.numel() == 0:
        raise ValueError(f"{name} must select at least one position")
    if bool(((index < -length) | (index >= length)).any()):
        raise ValueError(f"{name} must index positions in [-{length}, {length}); got {index.tolist()}")
    return index % length


def attention_topk(
    weights: Tensor,
    visual_slice: slice | Sequence[int] | Tensor,
    query_rows: slice | Sequence[int] | Tensor,
    k: int,
) -> Tensor:
    """The FastV-style baseline: the k visual tokens most attended by the later positions of one LM layer.

    ``weights`` (B, heads, T, T): softmax attention of a shallow LM layer (query rows, key columns).
    The weights are averaged over heads and over ``query_rows`` (the positions after the visual block in
    causal order: action queries, proprio), and read at the key columns ``visual_slice``. Returns (B, k)
    int64 indices relative to the visual block, sorted ascending.
    """
    _check_tensor("weights", weights, 4)
    t = weights.shape[-1]
    if weights.shape[-2] != t:
        raise ValueError(f"weights must have shape (B, heads, T, T); got {tuple(weights.shape)}")
    columns = _row_index("visual_slice", visual_slice, t, weights.device)
    rows = _row_index("query_rows", query_rows, t, weights.device)
    if bool((rows <= columns.max()).any()):
        raise ValueError(
            "query_rows must come after every visual token in causal order (a causal query cannot see later "
            f"keys); got rows {rows.tolist()} for visual columns up to {int(columns.max())}"
        )
    paid = weights.detach().mean(dim=1).index_select(1, rows).mean(dim=1)  # (B, T) attention per key
    return topk_indices(paid.index_select(1, columns), k)


def dense_probability(step: int, total_steps: int, start: float = 0.5, end: float = 0.2) -> float:
    """p_dense at ``step``: linear from ``start`` (step 0) to ``end`` (step total_steps - 1).

    ``step`` in [0, total_steps); with total_steps == 1 the value is ``start``.
    """
    total_steps = check_int("total_steps", total_steps, minimum=1)
    step = check_int("step", step, minimum=0, maximum=total_steps - 1)
    start = check_float("start", start, minimum=0.0, maximum=1.0)
    end = check_float("end", end, minimum=0.0, maximum=1.0)
    if total_steps == 1:
        return start
    return start + (end - start) * step / (total_steps - 1)


__all__ = [
    "Router",
    "attention_topk",
    "budget",
    "dense_probability",
    "gumbel_topk_gates",
    "hard_route_loss",
    "hard_route_targets",
    "random_indices",
    "soft_route_loss",
    "taylor_scores",
    "topk_indices",
]
