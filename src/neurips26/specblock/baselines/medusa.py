"""Medusa-style parallel heads, the baseline without path dependence.

**Heads.** ``K`` heads read the target's last residual row, normalised by the target's own final norm,
``z = FinalNorm(h⁽ᴸ⁾_t)`` (what the target's LM head reads). Head ``k`` is a residual block and an LM head:

    logits_k = W_lm,k (z + SiLU(W_k z + b_k))          (W_k, b_k start at 0, W_lm,k as the target's head)

so before training every head repeats the target's own prediction.

**Alignment.** The target's logits at position ``t`` predict ``x_{t+1}``. At inference ``t`` is the last
committed position before the root (the target's logits there produced the root ``x_{t+1}``); head ``k``
(0-based) predicts the token ``k+1`` places after the root, ``x_{t+2+k}``. In training, head ``k`` at row
``i`` is taught by the target's softmax at ``i+1+k`` on rows where ``loss_mask[i+1+k]``; loss
``Σ_k 0.8^k L_k`` on a frozen target. The heads never see the root token itself: each head predicts its
position independently of what the earlier heads chose (no path dependence, claim D3).

**Tree.** A fixed sparse tree over the Cartesian product of per-head top-``k`` lists: a *choice* is a
path ``(r_0, …, r_{d-1})`` meaning "rank ``r_0`` of head 0, then rank ``r_1`` of head 1, …". The choice
list is generated once (:func:`sparse_tree_choices`): the most probable paths under an acceptance profile
``p[k][r]`` (probability that rank ``r`` of head ``k`` is the right token), best first. One drafter forward
per iteration; node score = sum of the heads' log-probabilities along the path.
"""

from __future__ import annotations

import copy
import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neurips26 import distributed
from neurips26.nn.transformer import Decoder
from neurips26.specblock.baselines._common import (
    batch_indices,
    check_context,
    masked_soft_ce,
    shift_left,
    unpack_distill,
)
from neurips26.specblock.protocol import DecodeContext, DraftTree, Proposal
from neurips26.train.fit import History, fit
from neurips26.validation import check_float, check_int


@dataclass(frozen=True)
class MedusaConfig:
    """Medusa heads and their training. ``heads``: K; ``gamma``: weight ``γ^k`` of head ``k``."""

    heads: int = 4
    gamma: float = 0.8

    def __post_init__(self) -> None:
        check_int("heads", self.heads, minimum=1)
        check_float("gamma", self.gamma, minimum=0.0, maximum=1.0, strict_min=True)

    @property
    def loss_weights(self) -> tuple[float, ...]:
        """``(γ⁰, γ¹, …)``, one weight per head."""
        return tuple(self.gamma**k for k in range(self.heads))


class MedusaHeads(nn.Module):
    """``K`` Medusa heads on ``target``'s last hidden state (module docstring); the final norm is frozen."""

    def __init__(self, target: Decoder, config: MedusaConfig | None = None):
        super().__init__()
        if not isinstance(target, Decoder):
            raise TypeError(f"target must be a Decoder; got {type(target).__name__}")
        config = MedusaConfig() if config is None else config
        if not isinstance(config, MedusaConfig):
            raise TypeError(f"config must be a MedusaConfig; got {type(config).__name__}")
        self.config = config
        width, self.vocab_size = target.config.width, target.config.vocab_size
        self.width, self.target_depth = width, target.config.depth
        self.norm = copy.deepcopy(target.final_norm).requires_grad_(False)  # the target's, frozen
        self.blocks = nn.ModuleList(nn.Linear(width, width) for _ in range(config.heads))
        self.lm_heads = nn.ModuleList(
            nn.Linear(width, self.vocab_size, bias=False) for _ in range(config.heads)
        )
        with torch.no_grad():
            for block, head in zip(self.blocks, self.lm_heads, strict=True):
                block.weight.zero_()  # each residual block starts as the identity (as in Medusa)
                block.bias.zero_()
                head.weight.copy_(target.lm_head.weight)
        reference = next(target.parameters())
        self.to(device=reference.device, dtype=reference.dtype)

    def forward(self, hidden: Tensor) -> Tensor:
        """``hidden`` ``(..., H)``: last target residual row (pre-norm) → ``(..., K, V)``."""
        z = self.norm(hidden)
        return torch.stack(
            [head(z + F.silu(block(z))) for block, head in zip(self.blocks, self.lm_heads, strict=True)],
            dim=-2,
        )


def medusa_head_losses(heads: MedusaHeads | nn.Module, data: object) -> Tensor:
    """``(K,)`` losses ``L_k``: head ``k`` at row ``i`` against the target's softmax at ``i+1+k``, averaged
    over rows with ``loss_mask[i+1+k]``. ``data``: ``DistillData``-like or ``(tokens, logits, hidden, mask)``.
    ``heads`` may be the data-parallel wrapper of :class:`MedusaHeads` (under torchrun): it is called, and
    its attributes are read off the module inside.
    """
    module = distributed.unwrap(heads)
    if not isinstance(module, MedusaHeads):
        raise TypeError(f"heads must be MedusaHeads; got {type(module).__name__}")
    _, logits, hidden, loss_mask = unpack_distill(data)
    out = heads(hidden[:, :, -1, :].to(module.norm.weight.dtype))  # (B, T, K, V)
    return torch.stack(
        [
            masked_soft_ce(out[:, :, k], shift_left(logits, 1 + k), shift_left(loss_mask, 1 + k, False))
            for k in range(module.config.heads)
        ]
    )


def medusa_loss(heads: MedusaHeads | nn.Module, data: object) -> Tensor:
    """``Σ_k γ^k L_k`` (γ = ``config.gamma`` = 0.8); ``heads`` as in :func:`medusa_head_losses`."""
    losses = medusa_head_losses(heads, data)
    config = distributed.unwrap(heads).config
    weights = torch.tensor(config.loss_weights, dtype=losses.dtype, device=losses.device)
    return (weights * losses).sum()


def train_medusa(
    target: Decoder,
    data: object,
    config: MedusaConfig | None = None,
    *,
    steps: int = 150,
    batch: int = 16,
    lr: float = 1e-2,
    seed: int = 0,
    progress: bool = True,
) -> tuple[MedusaHeads, History]:
    """Train Medusa heads on distillation ``data`` (the target stays frozen: only its hidden rows are read).

    Adam (no weight decay), warm-up and cosine decay, clipping at 1 (:func:`neurips26.train.fit.fit`);
    batches of ``batch`` random rows, a pure function of ``(seed, step)``. Returns heads (eval) and history.
    The heads train on ``target``'s device; under torchrun, data-parallel (each rank takes its share of
    the ``batch`` rows).
    """
    heads = MedusaHeads(target, config)
    tokens, logits, hidden, loss_mask = unpack_distill(data, target)
    steps = check_int("steps", steps, minimum=1)
    check_float("lr", lr, minimum=0.0, strict_min=True)
    pick = batch_indices(tokens.shape[0], batch, seed)
    last = hidden[:, :, -1:, :]  # only the last layer is read; keeps batches small

    def batches(step: int) -> tuple[Tensor, ...]:
        idx = pick(step)
        return tokens[idx], logits[idx], last[idx], loss_mask[idx]

    history = fit(
        heads,
        medusa_loss,
        batches,
        steps=steps,
        seed=seed,
        lr=lr,
        warmup=min(20, steps // 10),
        progress=progress,
        desc="Medusa",
    )
    return heads.eval(), history


# ------------------------------------------------------------------------------------- the sparse tree


def default_profile(
    heads: int, topk: int, *, top1: float = 0.6, head_decay: float = 0.8
) -> list[list[float]]:
    """Prior acceptance profile ``p[k][r] = top1·head_decay^k·2^{-r}``: rank ``r`` of head ``k`` is right.

    Later heads are less accurate, lower ranks much less likely; only the order of the products matters.
    """
    heads = check_int("heads", heads, minimum=1)
    topk = check_int("topk", topk, minimum=1)
    top1 = check_float("top1", top1, minimum=0.0, maximum=1.0, strict_min=True)
    head_decay = check_float("head_decay", head_decay, minimum=0.0, maximum=1.0, strict_min=True)
    return [[top1 * head_decay**k * 0.5**r for r in range(topk)] for k in range(heads)]


def sparse_tree_choices(profile: Sequence[Sequence[float]], count: int) -> list[tuple[int, ...]]:
    """The ``count`` most probable paths ``(r_0, …, r_{d-1})`` under ``profile``, best first.

    A path's weight is ``Π_k profile[k][r_k]`` (independent heads). Best-first search from the root's
    children: a path is expanded only once it is chosen, so the list is prefix-closed and every path comes
    after its parent (ties broken by the path itself, lexicographically). ``profile[k]`` lists head
    ``k``'s per-rank probabilities (its length = that head's top-k).
    """
    if not isinstance(profile, Sequence) or not profile:
        raise ValueError("profile must be a non-empty sequence of per-head rank probabilities")
    for k, row in enumerate(profile):
        if not isinstance(row, Sequence) or not row:
            raise ValueError(f"profile[{k}] must be a non-empty sequence of probabilities")
        for r, p in enumerate(row):
            check_float(f"profile[{k}][{r}]", p, minimum=0.0, maximum=1.0, strict_min=True)
    count = check_int("count", count, minimum=0)
    heap: list[tuple[float, tuple[int, ...]]] = [(-math.log(p), (r,)) for r, p in enumerate(profile[0])]
    heapq.heapify(heap)
    out: list[tuple[int, ...]] = []
    while heap and len(out) < count:
        cost, path = heapq.heappop(heap)
        out.append(path)
        if len(path) < len(profile):
            for r, p in enumerate(profile[len(path)]):
                heapq.heappush(heap, (cost - math.log(p), (*path, r)))
    return out


class MedusaProposer:
    """Medusa drafting (``protocol.Proposer``): one forward of the heads, a fixed sparse tree, as in Medusa.

    ``choices``: the tree's node paths (default :func:`sparse_tree_choices` of :func:`default_profile` with
    ``topk`` candidates per head, ``count`` paths), prefix-closed and parents first. Each iteration runs
    the heads once on the target's last hidden row (position ``L-2``, whose logits produced the root),
    takes every head's top-``topk`` tokens, and emits the first ``min(total_tokens, len(choices))`` choices:
    node ``(r_0 … r_{d-1})`` has token ``topk_{d-1}[r_{d-1}]`` and score ``Σ_k log p_k(topk_k[r_k])``.
    """

    def __init__(
        self,
        heads: MedusaHeads,
        *,
        choices: Sequence[Sequence[int]] | None = None,
        topk: int = 10,
        count: int = 128,
        name: str = "medusa",
    ):
        if not isinstance(heads, MedusaHeads):
            raise TypeError(f"heads must be MedusaHeads; got {type(heads).__name__}")
        self.heads = heads
        if choices is None:
            topk = check_int("topk", topk, minimum=1, maximum=heads.vocab_size)
            count = check_int("count", count, minimum=1)
            choices = sparse_tree_choices(default_profile(heads.config.heads, topk), count)
        self.choices = self._check_choices(choices, heads.config.heads, heads.vocab_size)
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty str; got {name!r}")
        self.name = name
        self._parent = [self._index[c[:-1]] if len(c) > 1 else -1 for c in self.choices]
        self._topk = 1 + max((r for c in self.choices for r in c), default=0)

    def _check_choices(self, choices: object, heads: int, vocab: int) -> tuple[tuple[int, ...], ...]:
        if not isinstance(choices, Sequence) or not choices:
            raise ValueError("choices must be a non-empty sequence of node paths")
        out: list[tuple[int, ...]] = []
        self._index: dict[tuple[int, ...], int] = {}
        for n, choice in enumerate(choices):
            if not isinstance(choice, Sequence) or not 1 <= len(choice) <= heads:
                raise ValueError(f"choices[{n}] must be a path of 1 to {heads} ranks; got {choice!r}")
            path = tuple(
                check_int(f"choices[{n}][{d}]", r, minimum=0, maximum=vocab - 1) for d, r in enumerate(choice)
            )
            if path in self._index:
                raise ValueError(f"choices[{n}] repeats the path {path}")
            if len(path) > 1 and path[:-1] not in self._index:
                raise ValueError(f"choices[{n}] = {path} comes before its parent {path[:-1]}")
            self._index[path] = n
            out.append(path)
        return tuple(out)

    def start(self) -> None:
        """Nothing to reset: the heads keep no state between iterations."""

    @torch.no_grad()
    def propose(self, context: DecodeContext) -> Proposal:
        heads = self.heads
        check_context(context, heads.vocab_size, heads.target_depth, heads.width)
        heads.eval()
        if context.hidden.shape[0] == 0 or context.total_tokens == 0:
            return Proposal(DraftTree((), (), ()), forwards=0)
        row = context.hidden[-1, -1].to(device=heads.norm.weight.device, dtype=heads.norm.weight.dtype)
        logp = F.log_softmax(heads(row), dim=-1)  # (K, V)
        top = logp.topk(self._topk, dim=-1)  # per head: tokens and log-probs by rank
        n = min(context.total_tokens, len(self.choices))
        tokens, scores = [], []
        for path in self.choices[:n]:
            depth = len(path) - 1
            tokens.append(int(top.indices[depth, path[-1]]))
            scores.append(sum(float(top.values[k, r]) for k, r in enumerate(path)))
        tree = DraftTree(tuple(tokens), tuple(self._parent[:n]), tuple(scores))
        return Proposal(tree, forwards=1)
