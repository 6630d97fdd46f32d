"""The SpecBlock drafter: one forward emits a *block* of K mutually dependent draft tokens.

Alignment (the chapter's convention): the target's logits at position ``j`` predict token ``j+1``. The
drafter run at position ``i`` with condition ``f_i`` (fused target features) and input token ``x_{i+1}``
(teacher forcing) predicts ``x_{i+2+k}`` in slot ``k``; its teacher is the target's softmax at position
``i+1+k``. At inference, position ``i`` is the last committed position before the root, so slot 0 predicts
the token after the root.

Per (position ``i``, slot ``k``) the input is fused from three RMS-normalised parts (no bias)::

    c_i  = RMSNorm(W_c f_i)        first block;  a previous slot's pre-norm hidden g later (no projection)
    e_i  = RMSNorm(E[x_{i+1}])     E copied from the target's token embedding, frozen
    p_k  = RMSNorm(Q_k)            a learned query per slot
    u_ik = W_f [c_i; e_i; p_k]

The ``S × K`` grid is flattened to ``S·K`` tokens and passes ``layers`` Llama-style layers (pre-RMSNorm,
attention with RoPE at position ``i+1+k``, SwiGLU MLP). Before every layer after the first, the
*layer-wise shift* hands each slot its left neighbour's state, ``h ← W_s [h; sh(h)]`` with
``sh(h)_{i,0} = h_{i,0}`` and ``sh(h)_{i,k} = h_{i,k-1}`` (:func:`shift_slots`); with the block mask
(:func:`block_mask`: query ``(i,k)`` sees every slot of positions ``j < i`` and slots ``k' ≤ k`` of its own
position) slot ``k`` depends on what slots ``< k`` computed, while all ``K`` slots come from one forward.
Outputs: the pre-norm hidden ``g`` (kept to chain blocks) and logits ``W_lm RMSNorm(g)``.

Three ways to run it:

- :meth:`SpecBlockDrafter.forward_sequence`: first block over a whole sequence (training);
- :meth:`SpecBlockDrafter.forward_ttt`: the multi-block training-time unroll (the paper's training);
- :meth:`SpecBlockDrafter.extend` and :meth:`SpecBlockDrafter.expand`: inference with a drafter KV cache
  over the committed prefix (block 1 of an iteration, which also absorbs the newly committed positions,
  is one forward) and one batched forward that launches a new block from each pending leaf.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neurips26.nn.embeddings import RotaryEmbedding, apply_rope
from neurips26.nn.transformer import Decoder
from neurips26.specblock.protocol import FEATURE_LAYERS
from neurips26.specblock.rank_head import RankHead
from neurips26.specblock.swiglu import SwiGLU
from neurips26.validation import check_float, check_int, check_seed


@dataclass(frozen=True)
class SpecBlockConfig:
    """Sizes of a :class:`SpecBlockDrafter`.

    ``width``: drafter width ``H`` (= the target's width, so the frozen token embedding fits);
    ``feature_dim``: size of ``f_i`` (``3·H_T``); ``vocab_size``: the target's vocabulary; ``block_size``:
    ``K`` slots per forward; ``layers``: ``L_D``; ``heads``: attention heads; ``mlp_ratio``: SwiGLU width
    ``/ H``; ``shift``: the layer-wise shift (off = ablation); ``rank_head``: co-train a rank head;
    ``context``: largest RoPE position + 1.
    """

    width: int
    feature_dim: int
    vocab_size: int
    block_size: int = 4
    layers: int = 2
    heads: int = 4
    mlp_ratio: float = 2.0
    shift: bool = True
    rank_head: bool = True
    context: int = 2048
    norm_eps: float = 1e-6

    def __post_init__(self) -> None:
        check_int("width", self.width, minimum=1)
        check_int("feature_dim", self.feature_dim, minimum=1)
        check_int("vocab_size", self.vocab_size, minimum=2)
        check_int("block_size", self.block_size, minimum=1)
        check_int("layers", self.layers, minimum=1)
        check_int("heads", self.heads, minimum=1)
        check_float("mlp_ratio", self.mlp_ratio, minimum=0.0, strict_min=True)
        check_int("context", self.context, minimum=2)
        check_float("norm_eps", self.norm_eps, minimum=0.0, strict_min=True)
        for name in ("shift", "rank_head"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool; got {type(getattr(self, name)).__name__}")
        if self.width % self.heads or (self.width // self.heads) % 2:
            raise ValueError(
                f"heads must divide width into an even head size; got width={self.width}, heads={self.heads}"
            )
        if self.rank_head and self.vocab_size < 20:
            raise ValueError(
                f"vocab_size must be >= 20 for the rank head's top-20 features; got {self.vocab_size}"
            )
        if round(self.mlp_ratio * self.width) < 1:
            raise ValueError(f"mlp_ratio * width must be >= 1; got {self.mlp_ratio} * {self.width}")

    @property
    def head_dim(self) -> int:
        return self.width // self.heads

    @property
    def mlp_width(self) -> int:
        return round(self.mlp_ratio * self.width)

    @classmethod
    def for_target(cls, target: Decoder, **overrides) -> SpecBlockConfig:
        """The config that fits ``target``: ``width = H_T``, ``feature_dim = 3·H_T``, same vocabulary."""
        if not isinstance(target, Decoder):
            raise TypeError(f"target must be a neurips26.nn.transformer.Decoder; got {type(target).__name__}")
        tc = target.config
        values = dict(width=tc.width, feature_dim=len(FEATURE_LAYERS) * tc.width, vocab_size=tc.vocab_size)
        values.update(overrides)
        return cls(**values)


# ------------------------------------------------------------------------------ masks and the shift


def block_mask(rows: int, block_size: int, *, device=None) -> Tensor:
    """Boolean ``(S·K, S·K)`` block attention mask of one block over ``S = rows`` positions.

    Query ``(i, k)`` (flattened as ``i·K + k``) may attend to key ``(j, k')`` iff ``j < i`` or
    (``j = i`` and ``k' ≤ k``).
    """
    rows = check_int("rows", rows, minimum=1)
    block_size = check_int("block_size", block_size, minimum=1)
    i = torch.arange(rows, device=device).repeat_interleave(block_size)
    k = torch.arange(block_size, device=device).repeat(rows)
    earlier = i[None, :] < i[:, None]
    same_left = (i[None, :] == i[:, None]) & (k[None, :] <= k[:, None])
    return earlier | same_left


def shift_slots(h: Tensor) -> Tensor:
    """The slot shift ``sh(h)``: ``(…, K, H) → (…, K, H)`` with ``sh_0 = h_0`` and ``sh_k = h_{k-1}``."""
    if h.dim() < 2:
        raise ValueError(f"h must have a slot axis and a width axis; got shape {tuple(h.shape)}")
    return torch.cat([h[..., :1, :], h[..., :-1, :]], dim=-2)


def ttt_context_mask(rows: int, block_size: int, steps: Sequence[int], *, device=None) -> Tensor:
    """Boolean ``(S·K, (b-1)·S·K)`` mask from block ``b = len(steps)+1`` onto the keys of blocks ``1 … b-1``.

    Multi-block TTT (the paper's training): query ``(i, k)`` of block ``b`` sees block 1's slots of every
    earlier position ``j < i``, block 1's slots ``k' < M_1`` at its own position, and block ``c``'s slots
    ``k' < M_c`` at its own position (``2 ≤ c < b``), where ``M_c = steps[c-1]`` launched block ``c+1``
    from slot ``M_c − 1`` of block ``c``. Its own block uses :func:`block_mask`.
    """
    n = rows * block_size
    i = torch.arange(rows, device=device).repeat_interleave(block_size)
    k = torch.arange(block_size, device=device).repeat(rows)
    same = i[None, :] == i[:, None]
    parts = []
    for c, m in enumerate(steps):
        visible = same & (k[None, :] < m)
        if c == 0:
            visible = visible | (i[None, :] < i[:, None])
        parts.append(visible)
    if not parts:
        return torch.zeros(n, 0, dtype=torch.bool, device=device)
    return torch.cat(parts, dim=1)


# ------------------------------------------------------------------------------------------ layers


class _Attention(nn.Module):
    """Multi-head attention with RoPE over explicit context keys plus the new tokens' own keys."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads, self.head_dim = heads, width // heads
        self.q = nn.Linear(width, width, bias=False)
        self.k = nn.Linear(width, width, bias=False)
        self.v = nn.Linear(width, width, bias=False)
        self.o = nn.Linear(width, width, bias=False)

    def forward(
        self, x: Tensor, cos: Tensor, sin: Tensor, context: tuple[Tensor, Tensor] | None, mask: Tensor
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        b, n, w = x.shape
        q, k, v = (
            t(x).view(b, n, self.heads, self.head_dim).transpose(1, 2) for t in (self.q, self.k, self.v)
        )
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)  # keys are stored rotated
        keys, values = k, v
        if context is not None and context[0].shape[2]:
            keys = torch.cat([context[0], k], dim=2)
            values = torch.cat([context[1], v], dim=2)
        y = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask[:, None])  # mask (B, 1, N, C+N)
        return self.o(y.transpose(1, 2).reshape(b, n, w)), (k, v)


class _Layer(nn.Module):
    """One pre-RMSNorm Llama layer: ``x ← x + Attn(RMSNorm x)``, ``x ← x + SwiGLU(RMSNorm x)``."""

    def __init__(self, config: SpecBlockConfig):
        super().__init__()
        self.attn_norm = nn.RMSNorm(config.width, eps=config.norm_eps)
        self.attn = _Attention(config.width, config.heads)
        self.mlp_norm = nn.RMSNorm(config.width, eps=config.norm_eps)
        self.mlp = SwiGLU(config.width, config.mlp_width)

    def forward(self, x, cos, sin, context, mask):
        attended, kv = self.attn(self.attn_norm(x), cos, sin, context, mask)
        x = x + attended
        return x + self.mlp(self.mlp_norm(x)), kv


# ------------------------------------------------------------------------------------------ outputs


@dataclass
class BlockOutput:
    """One block forward over ``S`` rows: ``hidden`` ``g`` (B, S, K, H) pre-norm; ``normed`` RMSNorm(g);
    ``logits`` (B, S, K, V); ``rank_logits`` (B, S, K, 4) or None; ``keys``/``values``: per drafter layer
    the block's rotated keys and values ``(B, heads, S·K, D)`` (the KV a later block may attend to)."""

    hidden: Tensor
    normed: Tensor
    logits: Tensor
    rank_logits: Tensor | None
    keys: list[Tensor]
    values: list[Tensor]


@dataclass
class DrafterCache:
    """The drafter's KV over the committed prefix: block 1 at every row ``0 … rows-1``, all ``K`` slots."""

    rows: int = 0
    keys: list[Tensor] = field(default_factory=list)
    values: list[Tensor] = field(default_factory=list)

    def truncate(self, rows: int, block_size: int) -> None:
        """Keep the first ``rows`` positions."""
        rows = check_int("rows", rows, minimum=0, maximum=self.rows)
        self.keys = [k[:, :, : rows * block_size] for k in self.keys]
        self.values = [v[:, :, : rows * block_size] for v in self.values]
        self.rows = rows


# ------------------------------------------------------------------------------------------ the drafter


class SpecBlockDrafter(nn.Module):
    """The paper's block drafter (and its rank head, when ``config.rank_head``).

    ``embedding``: the target's token embedding ``(V, H)``, copied and frozen (a buffer, not a parameter).
    Weights are drawn from ``seed``: every matrix ``N(0, 0.02²)``, except the shift matrices, which start
    at ``[I, 0]`` (the identity on ``h``, our choice) so the untrained shift does not scramble the stream.
    """

    def __init__(self, config: SpecBlockConfig, embedding: Tensor, *, seed: int = 0):
        super().__init__()
        if not isinstance(config, SpecBlockConfig):
            raise TypeError(f"config must be a SpecBlockConfig; got {type(config).__name__}")
        if not isinstance(embedding, Tensor) or tuple(embedding.shape) != (config.vocab_size, config.width):
            got = getattr(embedding, "shape", type(embedding).__name__)
            raise ValueError(
                f"embedding must have shape (vocab_size, width) = {(config.vocab_size, config.width)}; "
                f"got {got}"
            )
        seed = check_seed("seed", seed)
        self.config = config
        h = config.width
        self.register_buffer("embedding", embedding.detach().clone())  # E, frozen
        self.cond_proj = nn.Linear(config.feature_dim, h, bias=False)  # W_c
        self.cond_norm = nn.RMSNorm(h, eps=config.norm_eps)
        self.token_norm = nn.RMSNorm(h, eps=config.norm_eps)
        self.slot_query = nn.Parameter(torch.zeros(config.block_size, h))  # Q_k
        self.slot_norm = nn.RMSNorm(h, eps=config.norm_eps)
        self.fuse = nn.Linear(3 * h, h, bias=False)  # W_f
        self.layers = nn.ModuleList(_Layer(config) for _ in range(config.layers))
        self.shifts = nn.ModuleList(
            nn.Linear(2 * h, h, bias=False) for _ in range(config.layers - 1 if config.shift else 0)
        )  # W_s^(l), l ≥ 1
        self.final_norm = nn.RMSNorm(h, eps=config.norm_eps)
        self.lm_head = nn.Linear(h, config.vocab_size, bias=False)  # W_lm
        self.rotary = RotaryEmbedding(config.head_dim, config.context)
        self.rank_head = RankHead(h) if config.rank_head else None
        self._init_weights(seed)

    @classmethod
    def from_target(
        cls, target: Decoder, config: SpecBlockConfig | None = None, *, seed: int = 0
    ) -> SpecBlockDrafter:
        """A drafter for ``target``, with ``target``'s token embedding copied in, on ``target``'s device (the
        weights are drawn on the CPU from ``seed`` and moved: the same drafter on every device)."""
        config = SpecBlockConfig.for_target(target) if config is None else config
        weight = target.token_embedding.weight
        return cls(config, weight.detach().cpu(), seed=seed).to(weight.device)

    def _init_weights(self, seed: int) -> None:
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.dim() >= 2:
                    nn.init.normal_(p, 0.0, 0.02, generator=generator)
                elif name.endswith("bias"):
                    p.zero_()
            for shift in self.shifts:
                shift.weight.zero_()
                shift.weight[:, : self.config.width] = torch.eye(self.config.width)

    # ------------------------------------------------------------------------------------ core forward

    def condition(self, features: Tensor) -> Tensor:
        """``c = RMSNorm(W_c f)`` for the first block: ``(…, 3H_T) → (…, H)``."""
        return self.cond_norm(self.cond_proj(features))

    def block(
        self,
        condition: Tensor,
        tokens: Tensor,
        base: Tensor,
        *,
        context: list[tuple[Tensor, Tensor]] | None = None,
        context_mask: Tensor | None = None,
        own_mask: Tensor | None = None,
    ) -> BlockOutput:
        """One block forward over ``S`` rows.

        ``condition`` ``(B, S, H)`` (already ``c``: use :meth:`condition` for block 1, ``g`` later);
        ``tokens`` ``(B, S)`` the input token of each row; ``base`` ``(B, S)`` or ``(S,)``: the row's
        position, so slot ``k`` gets RoPE position ``base + 1 + k``; ``context``: per layer the keys/values
        ``(B, heads, C, D)`` this block may attend to, with ``context_mask`` ``(B, S·K, C)`` or
        ``(S·K, C)`` boolean; ``own_mask`` ``(S·K, S·K)`` defaults to :func:`block_mask`.
        """
        cfg = self.config
        b, s = tokens.shape
        kk, h = cfg.block_size, cfg.width
        n = s * kk
        if condition.shape != (b, s, h):
            raise ValueError(f"condition must have shape {(b, s, h)}; got {tuple(condition.shape)}")
        e = self.token_norm(self.embedding[tokens])  # e_i = RMSNorm(E[x_{i+1}])
        p = self.slot_norm(self.slot_query)  # p_k = RMSNorm(Q_k)
        grid = torch.cat(
            [
                condition[:, :, None, :].expand(b, s, kk, h),
                e[:, :, None, :].expand(b, s, kk, h),
                p[None, None].expand(b, s, kk, h),
            ],
            dim=-1,
        )
        x = self.fuse(grid).reshape(b, n, h)  # u_ik = W_f [c_i; e_i; p_k], flattened S·K
        base = base.expand(b, s) if base.dim() == 1 else base
        positions = (base[:, :, None] + 1 + torch.arange(kk, device=base.device)).reshape(b, n)  # i+1+k
        cos, sin = self.rotary(positions)
        own = block_mask(s, kk, device=x.device) if own_mask is None else own_mask
        c_len = 0 if context is None else context[0][0].shape[2]
        if c_len:
            cm = context_mask.expand(b, n, c_len) if context_mask.dim() == 2 else context_mask
            mask = torch.cat([cm, own.expand(b, n, n)], dim=-1)
        else:
            mask = own.expand(b, n, n)
        keys, values = [], []
        for layer_index, layer in enumerate(self.layers):
            if layer_index >= 1 and self.shifts:
                grid_h = x.view(b, s, kk, h)
                x = self.shifts[layer_index - 1](torch.cat([grid_h, shift_slots(grid_h)], dim=-1)).view(
                    b, n, h
                )
            x, (k, v) = layer(x, cos, sin, None if context is None else context[layer_index], mask)
            keys.append(k)
            values.append(v)
        g = x.view(b, s, kk, h)
        normed = self.final_norm(g)
        logits = self.lm_head(normed)
        rank_logits = None if self.rank_head is None else self.rank_head(normed, logits)
        return BlockOutput(g, normed, logits, rank_logits, keys, values)

    # ------------------------------------------------------------------------------------ training

    def forward_sequence(self, features: Tensor, tokens: Tensor) -> BlockOutput:
        """First block over a whole sequence (training): ``features`` ``(B, S, 3H_T)`` = ``f_0 … f_{S-1}``
        and ``tokens`` ``(B, S)`` = ``x_1 … x_S`` (row ``i`` gets ``x_{i+1}``); block mask over all rows."""
        b, s = tokens.shape
        base = torch.arange(s, device=tokens.device)
        return self.block(self.condition(features), tokens, base)

    def forward(self, features: Tensor, tokens: Tensor) -> BlockOutput:
        """Same as :meth:`forward_sequence`."""
        return self.forward_sequence(features, tokens)

    def forward_ttt(
        self, features: Tensor, tokens: Tensor, steps: Sequence[int], *, own_rows: bool = True
    ) -> list[BlockOutput]:
        """Multi-block training-time unroll: ``len(steps) + 1`` blocks.

        ``features`` ``(B, S, 3H_T)``; ``tokens`` ``(B, S + pad)`` with ``tokens[:, t]`` = ``x_t`` (row ``i``
        of block 1 reads ``x_{i+1}``), ``pad ≥ 1 + Σ steps`` (out-of-range rows should carry any id and be
        masked by the caller). Block ``b+1`` at row ``i`` starts from slot ``M_b − 1`` of block ``b``
        (``M_b = steps[b-1]`` in ``1 … K``): condition ``g^{(b)}_{i, M_b−1}`` (with gradient), input token
        ``x_{i+1+O_{b+1}}`` with the cumulative offset ``O_{b+1} = M_1 + … + M_b``, RoPE position
        ``i + O + 1 + k``; attention as in :func:`ttt_context_mask`. Slot ``k`` of block ``b`` predicts
        ``x_{i+2+O_b+k}``, teacher = target softmax at ``i+1+O_b+k``.

        Within its own block, a block ``≥ 2`` uses the block-1 pattern (``own_rows=True``, as the released
        code does), so row ``i`` also sees the same block's rows ``j < i``, which have no counterpart at
        inference (a leaf's block is alone in its row). ``own_rows=False`` restricts it to its own row
        (slots ``k' ≤ k``): then the unroll equals :meth:`expand` exactly (tested).
        """
        cfg = self.config
        b, s = features.shape[:2]
        steps = [check_int(f"steps[{n}]", m, minimum=1, maximum=cfg.block_size) for n, m in enumerate(steps)]
        if tokens.shape[1] < s + 1 + sum(steps) - 1:
            raise ValueError(
                f"tokens must hold at least S + Σ steps = {s + sum(steps)} columns; got {tokens.shape[1]}"
            )
        rows = torch.arange(s, device=features.device)
        row_of = rows.repeat_interleave(cfg.block_size)
        same_row = row_of[:, None] == row_of[None, :]
        outputs = [self.block(self.condition(features), tokens[:, :s], rows)]
        offset = 0
        for depth, m in enumerate(steps):
            offset += m
            prev = outputs[-1]
            context = [
                (
                    torch.cat([o.keys[layer] for o in outputs], dim=2),
                    torch.cat([o.values[layer] for o in outputs], dim=2),
                )
                for layer in range(cfg.layers)
            ]
            cmask = ttt_context_mask(s, cfg.block_size, steps[: depth + 1], device=features.device)
            own = (
                None
                if own_rows
                else block_mask(1, cfg.block_size, device=features.device).repeat(s, s) & same_row
            )
            outputs.append(
                self.block(
                    prev.hidden[:, :, m - 1, :],
                    tokens[:, offset : offset + s],
                    rows + offset,
                    context=context,
                    context_mask=cmask,
                    own_mask=own,
                )
            )
        return outputs

    # ------------------------------------------------------------------------------------ inference

    @torch.no_grad()
    def extend(self, cache: DrafterCache, features: Tensor, tokens: Tensor) -> BlockOutput:
        """Block 1 of an iteration: one forward over the newly committed rows, appended to ``cache``.

        ``features`` ``(R, 3H_T)`` are ``f`` at rows ``cache.rows … cache.rows+R-1``; ``tokens`` ``(R,)``
        the input token of each (the last is the root). Every new row sees all cached rows' slots and
        the block mask among themselves, exactly as :meth:`forward_sequence` over the whole prefix.
        Returns the block output of the new rows (the last row is block 1 at the root).
        """
        cfg = self.config
        r = tokens.shape[0]
        base = torch.arange(cache.rows, cache.rows + r, device=tokens.device)
        context = list(zip(cache.keys, cache.values, strict=True)) if cache.rows else None
        cmask = torch.ones(
            r * cfg.block_size, cache.rows * cfg.block_size, dtype=torch.bool, device=tokens.device
        )
        out = self.block(
            self.condition(features[None]), tokens[None], base, context=context, context_mask=cmask
        )
        if cache.rows:
            cache.keys = [torch.cat([a, k], dim=2) for a, k in zip(cache.keys, out.keys, strict=True)]
            cache.values = [torch.cat([a, v], dim=2) for a, v in zip(cache.values, out.values, strict=True)]
        else:
            cache.keys, cache.values = list(out.keys), list(out.values)
        cache.rows += r
        return out

    @torch.no_grad()
    def expand(
        self,
        cache: DrafterCache,
        condition: Tensor,
        tokens: Tensor,
        base: Tensor,
        root_visible: Tensor,
        ancestors: list[tuple[Tensor, Tensor]] | None = None,
        ancestor_mask: Tensor | None = None,
    ) -> BlockOutput:
        """One batched forward launching a new block from each of ``B`` pending leaves.

        ``condition`` ``(B, H)``: ``g`` of each leaf's source slot; ``tokens`` ``(B,)``: the leaf tokens;
        ``base`` ``(B,)``: the cache's last row + the leaf's depth below the root (RoPE ``base+1+k``);
        ``root_visible`` ``(B,)``: how many block-1 slots of the last cached row (the current position)
        each leaf's block may see (``M_1``); ``ancestors``: per layer keys/values ``(B, heads, A, D)`` of
        the leaf's blocks ≥ 2, visible where ``ancestor_mask`` ``(B, A)`` is True. Rows before the last
        are visible in full (the training attention of blocks ≥ 2).
        """
        cfg = self.config
        kk = cfg.block_size
        nb = tokens.shape[0]
        n_prefix = cache.rows * kk
        prefix_mask = torch.ones(nb, n_prefix, dtype=torch.bool, device=tokens.device)
        slot = torch.arange(kk, device=tokens.device)
        prefix_mask[:, n_prefix - kk :] = slot[None, :] < root_visible[:, None]
        context = []
        for layer in range(cfg.layers):
            k = cache.keys[layer].expand(nb, -1, -1, -1)
            v = cache.values[layer].expand(nb, -1, -1, -1)
            if ancestors:
                k = torch.cat([k, ancestors[layer][0]], dim=2)
                v = torch.cat([v, ancestors[layer][1]], dim=2)
            context.append((k, v))
        cmask = prefix_mask if not ancestors else torch.cat([prefix_mask, ancestor_mask], dim=1)
        cmask = cmask[:, None, :].expand(nb, kk, cmask.shape[1])
        return self.block(
            condition[:, None], tokens[:, None], base[:, None], context=context, context_mask=cmask
        )

    def num_parameters(self) -> int:
        """Trainable numbers (the frozen embedding not counted)."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)
