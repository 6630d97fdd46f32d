"""EAGLE-3, the paper's autoregressive baseline: a one-layer drafter on fused target features.

**Drafter.** At row ``i`` of a sequence the drafter reads the fused target feature
``f_i = [h⁽¹⁾_i; h⁽²⁾_i; h⁽³⁾_i]`` (:func:`~neurips26.specblock.protocol.fused_features`) and the embedding
``e`` of the next token ``x_{i+1}``:

    h   = W_fc f_i                                   (3H → H, no bias)
    u   = [RMSNorm(e); RMSNorm(h)] ∈ R^{2H}          (queries, keys, values are computed from u)
    h'  = h + W_o Attention(W_q u, W_k u, W_v u)     (RoPE; residual on h, not on u)
    g   = h' + SwiGLU(RMSNorm(h'))                   (the step's output hidden, kept for the next step)
    ℓ   = W_lm RMSNorm(g)                            (logits)

The token embedding is copied from the target and frozen; ``W_lm`` starts as a copy of the target's head.

**Alignment.** The target's logits at position ``j`` predict ``x_{j+1}``. Row ``i`` at step ``0`` (input
token ``x_{i+1}``, RoPE position ``i``) predicts ``x_{i+2}`` and is taught by the target's softmax at
``i+1``. **Training-time test (TTT)**: at step ``j ≥ 1`` row ``i`` reads the drafter's *own* output ``g`` of
step ``j−1`` as its hidden input and the ground-truth token ``x_{i+1+j}`` (RoPE position ``i+j``); it
predicts ``x_{i+2+j}`` against the target's softmax at ``i+1+j``; its queries see the step-0 keys of rows
``≤ i`` and the keys of steps ``1..j`` at row ``i`` only (:func:`ttt_mask`). This is exactly what a tree
node at depth ``j`` sees at inference (the committed rows, its ancestors, itself), so training matches use.
Loss: ``Σ_j 0.8^j · L_j`` with ``L_j`` the soft cross-entropy averaged over ``loss_mask`` shifted by ``1+j``.

**Inference** (:class:`Eagle3Proposer`): EAGLE-2's dynamic tree, one drafter forward per depth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neurips26 import distributed
from neurips26.nn.attention import KVCache, causal_mask
from neurips26.nn.embeddings import RotaryEmbedding, apply_rope
from neurips26.nn.transformer import Decoder
from neurips26.specblock.baselines._common import (
    batch_indices,
    check_context,
    masked_soft_ce,
    shift_left,
    unpack_distill,
)
from neurips26.specblock.protocol import (
    FEATURE_LAYERS,
    DecodeContext,
    DraftTree,
    Proposal,
    fused_features,
)
from neurips26.specblock.swiglu import SwiGLU
from neurips26.train.fit import History, fit
from neurips26.validation import check_float, check_int, check_seed


@dataclass(frozen=True)
class Eagle3Config:
    """EAGLE-3 drafter and training-time test. Width, vocabulary and context follow the target.

    ``heads``: attention heads (must split the target width into even head sizes); ``mlp_ratio``: SwiGLU
    hidden width / width; ``ttt_steps``: unrolled TTT steps (paper 7, ours 4); ``gamma``: step weight
    ``γ^j``; ``init_lm_head``: start the drafter's head as a copy of the target's.
    """

    heads: int = 4
    mlp_ratio: float = 2.0
    ttt_steps: int = 4
    gamma: float = 0.8
    init_lm_head: bool = True
    rms_eps: float = 1e-6

    def __post_init__(self) -> None:
        check_int("heads", self.heads, minimum=1)
        check_float("mlp_ratio", self.mlp_ratio, minimum=0.0, strict_min=True)
        check_int("ttt_steps", self.ttt_steps, minimum=1)
        check_float("gamma", self.gamma, minimum=0.0, maximum=1.0, strict_min=True)
        if not isinstance(self.init_lm_head, bool):
            raise TypeError(f"init_lm_head must be a bool; got {type(self.init_lm_head).__name__}")
        check_float("rms_eps", self.rms_eps, minimum=0.0, strict_min=True)

    @property
    def loss_weights(self) -> tuple[float, ...]:
        """``(γ⁰, γ¹, …)``, one weight per TTT step."""
        return tuple(self.gamma**j for j in range(self.ttt_steps))


def ttt_mask(length: int, step: int) -> Tensor:
    """Boolean ``(T, (step+1)·T)`` mask of TTT step ``step``; keys laid out step 0, step 1, …, step ``step``.

    Row ``i`` sees the step-0 keys of rows ``≤ i`` (causal) and, for each later step ``1..step``, the key of
    its own row ``i`` only (the diagonal extra keys).
    """
    length = check_int("length", length, minimum=1)
    step = check_int("step", step, minimum=0)
    eye = torch.eye(length, dtype=torch.bool)
    return torch.cat([causal_mask(length)] + [eye] * step, dim=1)


class Eagle3Layer(nn.Module):
    """The drafter's one decoder layer: attention over ``[RMSNorm(e); RMSNorm(h)]``, residual on ``h``."""

    def __init__(self, width: int, heads: int, mlp_width: int, rotary: RotaryEmbedding, eps: float):
        super().__init__()
        self.width, self.heads, self.head_dim = width, heads, width // heads
        self.embed_norm = nn.RMSNorm(width, eps)
        self.hidden_norm = nn.RMSNorm(width, eps)
        self.q = nn.Linear(2 * width, width, bias=False)
        self.k = nn.Linear(2 * width, width, bias=False)
        self.v = nn.Linear(2 * width, width, bias=False)
        self.o = nn.Linear(width, width, bias=False)
        self.mlp_norm = nn.RMSNorm(width, eps)
        self.mlp = SwiGLU(width, mlp_width)
        self.rotary = rotary

    def project(self, embedded: Tensor, hidden: Tensor, positions: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Rotated queries, keys and values ``(B, heads, T, D)`` from ``u = [RMSNorm(e); RMSNorm(h)]``."""
        b, t, _ = hidden.shape
        u = torch.cat([self.embed_norm(embedded), self.hidden_norm(hidden)], dim=-1)  # (B, T, 2H)
        q, k, v = (
            proj(u).view(b, t, self.heads, self.head_dim).transpose(1, 2) for proj in (self.q, self.k, self.v)
        )
        cos, sin = self.rotary(positions)
        return apply_rope(q, cos, sin), apply_rope(k, cos, sin), v

    def finish(self, hidden: Tensor, attended: Tensor) -> Tensor:
        """``h' = h + W_o·attended`` (residual on h), then ``g = h' + SwiGLU(RMSNorm(h'))``."""
        b, _, t, _ = attended.shape
        h = hidden + self.o(attended.transpose(1, 2).reshape(b, t, self.width))
        return h + self.mlp(self.mlp_norm(h))

    def forward(
        self, embedded: Tensor, hidden: Tensor, positions: Tensor, mask: Tensor | None, cache: KVCache
    ) -> Tensor:
        """``embedded``, ``hidden`` ``(B, T, H)``; keys/values are appended to ``cache``; ``mask`` boolean,
        broadcastable to ``(B, heads, T, past + T)`` (``None``: every key visible). Returns ``g``."""
        q, k, v = self.project(embedded, hidden, positions)
        k, v = cache.append(0, k, v)  # (B, heads, past + T, D)
        return self.finish(hidden, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))


def ttt_attention(q: Tensor, keys: list[Tensor], values: list[Tensor]) -> Tensor:
    """TTT step ``j = len(keys) − 1``'s attention with the pattern of :func:`ttt_mask`, without a dense mask.

    ``q`` and each ``keys[d]``, ``values[d]`` ``(B, heads, T, D)``. Scores: ``q_i·k⁰_{i'}`` for ``i' ≤ i``
    (causal over step 0) and ``q_i·kᵈ_i`` for ``d = 1..j`` (one diagonal key per later step); one softmax
    over all of them. Costs one ``T × T`` attention instead of ``T × (j+1)T``.
    """
    scale = 1.0 / math.sqrt(q.shape[-1])
    length = q.shape[2]
    causal = (q @ keys[0].transpose(-2, -1)) * scale  # (B, heads, T, T)
    causal = causal.masked_fill(~causal_mask(length, device=q.device), float("-inf"))
    diagonal = [((q * k).sum(-1) * scale)[..., None] for k in keys[1:]]  # each (B, heads, T, 1)
    weights = torch.softmax(torch.cat([causal, *diagonal], dim=-1), dim=-1)
    out = weights[..., :length] @ values[0]
    for d, v in enumerate(values[1:]):
        out = out + weights[..., length + d, None] * v
    return out


class Eagle3Drafter(nn.Module):
    """EAGLE-3's drafter for ``target`` (module docstring). Weights from ``seed`` (``N(0, 0.02²)``)."""

    def __init__(self, target: Decoder, config: Eagle3Config | None = None, *, seed: int = 0):
        super().__init__()
        if not isinstance(target, Decoder):
            raise TypeError(f"target must be a Decoder; got {type(target).__name__}")
        config = Eagle3Config() if config is None else config
        if not isinstance(config, Eagle3Config):
            raise TypeError(f"config must be an Eagle3Config; got {type(config).__name__}")
        seed = check_seed("seed", seed)
        tc = target.config
        if tc.depth < max(FEATURE_LAYERS):
            raise ValueError(f"target must have at least {max(FEATURE_LAYERS)} layers; got depth={tc.depth}")
        if tc.width % config.heads or (tc.width // config.heads) % 2:
            raise ValueError(
                f"config.heads must split the width {tc.width} into even head sizes; got {config.heads}"
            )
        self.config = config
        self.width, self.vocab_size, self.target_depth = tc.width, tc.vocab_size, tc.depth
        width = tc.width
        # RoPE table: committed rows use positions < context, tree nodes a few more (prefix + depth).
        self.rotary = RotaryEmbedding(width // config.heads, 2 * tc.context)
        self.fc = nn.Linear(len(FEATURE_LAYERS) * width, width, bias=False)  # W_fc: 3H → H
        self.embedding = nn.Embedding(tc.vocab_size, width)
        self.layer = Eagle3Layer(
            width, config.heads, max(1, round(config.mlp_ratio * width)), self.rotary, config.rms_eps
        )
        self.final_norm = nn.RMSNorm(width, config.rms_eps)
        self.lm_head = nn.Linear(width, tc.vocab_size, bias=False)
        generator = torch.Generator().manual_seed(seed)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, 0.0, 0.02, generator=generator)
        with torch.no_grad():
            self.embedding.weight.copy_(target.token_embedding.weight)
            if config.init_lm_head:
                self.lm_head.weight.copy_(target.lm_head.weight)
        self.embedding.weight.requires_grad_(False)  # frozen, as in EAGLE-3
        reference = next(target.parameters())
        self.to(device=reference.device, dtype=reference.dtype)

    def make_cache(self) -> KVCache:
        """An empty key/value cache (one layer)."""
        return KVCache(1)

    def step(
        self, hidden: Tensor, tokens: Tensor, positions: Tensor, mask: Tensor | None, cache: KVCache
    ) -> tuple[Tensor, Tensor]:
        """One drafter pass: ``hidden`` ``(B, T, H)`` (``W_fc f`` or a previous output ``g``), ``tokens``
        ``(B, T)``, RoPE ``positions`` ``(T,)``; ``mask`` over ``(past + T)`` keys (``None``: all visible).
        Appends the new keys to ``cache``; returns ``(g, logits)``, ``(B, T, H)`` and ``(B, T, V)``."""
        g = self.layer(self.embedding(tokens), hidden, positions, mask, cache)
        return g, self.lm_head(self.final_norm(g))

    def forward(
        self, features: Tensor, tokens: Tensor, steps: int | None = None, *, dense: bool = False
    ) -> list[Tensor]:
        """The training-time test's logits, :meth:`ttt_forward` (what the training loss calls, so that a
        data-parallel wrapper's forward runs and averages the gradients)."""
        return self.ttt_forward(features, tokens, steps, dense=dense)

    def ttt_forward(
        self, features: Tensor, tokens: Tensor, steps: int | None = None, *, dense: bool = False
    ) -> list[Tensor]:
        """Logits ``(B, T, V)`` of every TTT step ``j < steps`` (default ``config.ttt_steps``).

        ``features`` ``(B, T, 3H)`` = f_i; ``tokens`` ``(B, T)`` = x_i. Step ``j``, row ``i``: token
        ``x_{i+1+j}`` (0 past the end), hidden = ``W_fc f_i`` at ``j = 0`` else the step ``j−1`` output,
        RoPE position ``i+j``; attention pattern :func:`ttt_mask` ``(T, j)``; it predicts ``x_{i+2+j}``.
        ``dense=True`` applies that mask to all ``(j+1)·T`` keys (the reference); the default computes the
        same numbers with :func:`ttt_attention`.
        """
        steps = self.config.ttt_steps if steps is None else check_int("steps", steps, minimum=1)
        length = tokens.shape[1]
        hidden = self.fc(features)
        positions = torch.arange(length, device=tokens.device)
        keys: list[Tensor] = []
        values: list[Tensor] = []
        out = []
        for j in range(steps):
            embedded = self.embedding(shift_left(tokens, 1 + j))
            q, k, v = self.layer.project(embedded, hidden, positions + j)
            keys.append(k)
            values.append(v)
            if dense:
                mask = ttt_mask(length, j).to(tokens.device)
                attended = F.scaled_dot_product_attention(
                    q, torch.cat(keys, dim=2), torch.cat(values, dim=2), attn_mask=mask
                )
            else:
                attended = ttt_attention(q, keys, values)
            hidden = self.layer.finish(hidden, attended)
            out.append(self.lm_head(self.final_norm(hidden)))
        return out


def eagle3_step_losses(drafter: Eagle3Drafter | nn.Module, data: object) -> Tensor:
    """``(ttt_steps,)`` losses ``L_j``: soft CE of step ``j`` against the target's softmax at ``i+1+j``,
    averaged over rows ``i`` with ``loss_mask[i+1+j]`` (EAGLE-3's training-time test).

    ``drafter`` may be the data-parallel wrapper of an :class:`Eagle3Drafter` (under torchrun): it is
    called (its forward is the TTT unroll) and its attributes are read off the module inside."""
    module = distributed.unwrap(drafter)
    if not isinstance(module, Eagle3Drafter):
        raise TypeError(f"drafter must be an Eagle3Drafter; got {type(module).__name__}")
    tokens, logits, hidden, loss_mask = unpack_distill(data)
    features = fused_features(hidden).to(module.fc.weight.dtype)
    outs = drafter(features, tokens)
    return torch.stack(
        [
            masked_soft_ce(out, shift_left(logits, 1 + j), shift_left(loss_mask, 1 + j, False))
            for j, out in enumerate(outs)
        ]
    )


def eagle3_loss(drafter: Eagle3Drafter | nn.Module, data: object) -> Tensor:
    """The TTT loss ``Σ_j γ^j L_j`` (γ = ``config.gamma`` = 0.8); ``drafter`` as in
    :func:`eagle3_step_losses`."""
    losses = eagle3_step_losses(drafter, data)
    config = distributed.unwrap(drafter).config
    weights = torch.tensor(config.loss_weights, dtype=losses.dtype, device=losses.device)
    return (weights * losses).sum()


def train_eagle3(
    target: Decoder,
    data: object,
    config: Eagle3Config | None = None,
    *,
    steps: int = 75,
    batch: int = 8,
    lr: float = 1e-2,
    seed: int = 0,
    progress: bool = True,
) -> tuple[Eagle3Drafter, History]:
    """Train an EAGLE-3 drafter on distillation ``data`` (``DistillData`` or a 4-tuple) with the TTT loss.

    Adam (no weight decay) with a short warm-up and cosine decay, gradient clipping at 1
    (:func:`neurips26.train.fit.fit`); batches of ``batch`` random rows, a pure function of
    ``(seed, step)``; weights initialised from ``seed``. Returns the drafter (eval mode) and its history.
    Defaults ≈ one pass over 600 distilled sequences: ≈ 13 s on one busy CPU thread at width 128, T ≈ 137.
    The drafter trains on ``target``'s device; under torchrun, data-parallel (each rank takes its share of
    the ``batch`` rows).
    """
    drafter = Eagle3Drafter(target, config, seed=seed)
    tokens, logits, hidden, loss_mask = unpack_distill(data, target)
    steps = check_int("steps", steps, minimum=1)
    pick = batch_indices(tokens.shape[0], batch, seed)
    check_float("lr", lr, minimum=0.0, strict_min=True)

    def batches(step: int) -> tuple[Tensor, ...]:
        idx = pick(step)
        return tokens[idx], logits[idx], hidden[idx], loss_mask[idx]

    history = fit(
        drafter,
        eagle3_loss,
        batches,
        steps=steps,
        seed=seed,
        lr=lr,
        warmup=min(20, steps // 10),
        betas=(0.9, 0.95),
        progress=progress,
        desc="EAGLE-3",
    )
    return drafter.eval(), history


# ------------------------------------------------------------------------------------------- inference


def prune_to_budget(tokens: list[int], parents: list[int], scores: list[float], budget: int) -> DraftTree:
    """The ``budget`` best-scoring nodes, ancestor-closed, in their original (topological) order.

    Ties are broken by depth, then by index, so a parent (score ≥ child's, smaller depth) always ranks
    before its children and every prefix of the ranking is ancestor-closed.
    """
    depths: list[int] = []
    for p in parents:
        depths.append(1 if p < 0 else depths[p] + 1)
    ranked = sorted(range(len(tokens)), key=lambda u: (-scores[u], depths[u], u))
    keep = sorted(ranked[:budget])
    index = {u: n for n, u in enumerate(keep)}
    return DraftTree(
        tokens=tuple(tokens[u] for u in keep),
        parents=tuple(-1 if parents[u] < 0 else index[parents[u]] for u in keep),
        scores=tuple(scores[u] for u in keep),
    )


class Eagle3Proposer:
    """EAGLE-2 dynamic tree drafted by an :class:`Eagle3Drafter` (``protocol.Proposer``).

    One iteration, with ``L`` committed tokens (the last, ``x_{L-1}``, the root):

    1. **first forward** (counts as one): extend the drafter's cache of committed rows with the rows
       committed since the last call (``context.new_from``), row ``i`` reading ``W_fc f_i`` and
       ``x_{i+1}``; the last row ``L-2`` (token = root) gives the root's distribution; its ``topk``
       children form depth 1 and the first frontier;
    2. **each further depth** ``d = 2 … depth`` (one forward each): the frontier nodes (batched, tree
       attention over the committed cache plus their ancestors' keys, RoPE position ``L-2+d-1``, hidden =
       their parent's output) each propose their ``topk`` children, scored by cumulative log-probability;
       all ``topk²`` children become candidates and the best ``topk`` of them form the next frontier;
    3. the tree keeps the ``context.total_tokens`` candidates with the best cumulative score
       (ancestor-closed), so it has at most ``depth`` levels and forwards per iteration = ``depth``.
    """

    def __init__(self, drafter: Eagle3Drafter, *, topk: int = 10, depth: int = 7, name: str = "eagle3"):
        if not isinstance(drafter, Eagle3Drafter):
            raise TypeError(f"drafter must be an Eagle3Drafter; got {type(drafter).__name__}")
        self.drafter = drafter
        self.topk = check_int("topk", topk, minimum=1)
        self.depth = check_int("depth", depth, minimum=1)
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty str; got {name!r}")
        self.name = name
        self._cache: KVCache | None = None

    def start(self) -> None:
        """Forget the cache of the previous generation."""
        self._cache = None

    @torch.no_grad()
    def propose(self, context: DecodeContext) -> Proposal:
        drafter = self.drafter
        check_context(context, drafter.vocab_size, drafter.target_depth, drafter.width)
        drafter.eval()
        tokens = context.tokens.to(drafter.fc.weight.device)
        rows = tokens.numel() - 1  # committed rows 0 … L-2 with features
        if rows == 0 or context.total_tokens == 0:
            return Proposal(DraftTree((), (), ()), forwards=0)
        dtype = drafter.fc.weight.dtype
        if self._cache is None:
            self._cache = drafter.make_cache()
        # 1. first forward: the new committed rows (at least the last one, which reads the root)
        start = min(context.new_from, self._cache.length, rows - 1)
        self._cache.truncate(start)
        features = fused_features(context.hidden[start:rows]).to(device=tokens.device, dtype=dtype)
        n = rows - start
        mask = causal_mask(n, start + n, device=tokens.device)
        g, logits = drafter.step(
            drafter.fc(features)[None],
            tokens[None, start + 1 :],
            torch.arange(start, rows, device=tokens.device),
            mask,
            self._cache,
        )
        k = min(self.topk, drafter.vocab_size)
        top = F.log_softmax(logits[0, -1], dim=-1).topk(k)
        node_tokens: list[int] = top.indices.tolist()
        node_parents = [-1] * k
        node_scores: list[float] = top.values.tolist()
        frontier = list(range(k))
        parent_hidden = {u: g[0, -1] for u in frontier}  # hidden input of a node = its parent's output
        ancestors: dict[int, tuple[int, ...]] = {u: () for u in frontier}
        committed = self._cache.length
        cache = self._cache.copy()
        slots: dict[int, int] = {}  # node → its key's index in `cache` after the committed rows
        forwards = 1
        # 2. one forward per further depth
        for d in range(2, self.depth + 1):
            f = len(frontier)
            mask = torch.zeros(f, committed + len(slots) + f, dtype=torch.bool, device=tokens.device)
            mask[:, :committed] = True
            for row, u in enumerate(frontier):
                for a in ancestors[u]:
                    mask[row, committed + slots[a]] = True
                mask[row, committed + len(slots) + row] = True
            position = torch.full((f,), rows - 1 + d - 1, device=tokens.device)
            g, logits = drafter.step(
                torch.stack([parent_hidden[u] for u in frontier])[None],
                torch.tensor([[node_tokens[u] for u in frontier]], device=tokens.device),
                position,
                mask,
                cache,
            )
            forwards += 1
            for u in frontier:
                slots[u] = len(slots)
            top = F.log_softmax(logits[0], dim=-1).topk(k)  # (f, k)
            base = torch.tensor(
                [node_scores[u] for u in frontier], dtype=top.values.dtype, device=top.values.device
            )
            cumulative = (base[:, None] + top.values).flatten()  # (f·k,)
            first_child = len(node_tokens)
            node_tokens.extend(top.indices.flatten().tolist())
            node_parents.extend(u for u in frontier for _ in range(k))
            node_scores.extend(cumulative.tolist())
            best = cumulative.topk(min(k, cumulative.numel())).indices.tolist()
            new_frontier = []
            for flat in sorted(best):
                child, row = first_child + flat, flat // k
                parent = frontier[row]
                parent_hidden[child] = g[0, row]
                ancestors[child] = (*ancestors[parent], parent)
                new_frontier.append(child)
            frontier = new_frontier
        # 3. the best total_tokens candidates
        tree = prune_to_budget(node_tokens, node_parents, node_scores, context.total_tokens)
        return Proposal(tree, forwards=forwards, info={"candidates": len(node_tokens)})
