"""A GPT-style causal decoder: token embedding, ``depth`` pre-norm blocks, a language-model head.

One block, with ``x`` the residual stream ``(B, T, width)``:

    x ← x + Attention(LayerNorm(x))        (causal, multi-head; attention.py, Eq. (1))
    x ← x + MLP(LayerNorm(x))              MLP(u) = W₂ GELU(W₁ u + b₁) + b₂, hidden width mlp_ratio·width

and ``logits = LayerNorm(x) Eᵀ`` after the last block (``E`` the token embedding when tied).

The model is written for the chapters that need more than logits:

- ``forward(..., cache=KVCache)`` decodes token by token or block by block (speculative drafts);
- ``positions`` and ``mask`` let a whole token tree be verified in one pass (``attention.tree_mask``);
- ``return_hidden=True`` returns the residual stream after every layer (EAGLE-style drafters);
- named :class:`~neurips26.nn.hooks.HookPoint` modules let a forward hook read or replace
  ``blocks.{i}.resid_pre`` / ``resid_mid`` / ``resid_post`` ``(B, T, width)``,
  ``blocks.{i}.attn.head_out`` ``(B, T, heads, head_dim)`` and ``blocks.{i}.mlp.neurons``
  ``(B, T, mlp_width)`` (interpretability and control).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from neurips26.nn.attention import KVCache, MultiHeadAttention, causal_mask, check_mask
from neurips26.nn.embeddings import LearnedPositions, RotaryEmbedding, SinusoidalPositions, check_ids
from neurips26.nn.hooks import HookPoint, hook_points
from neurips26.validation import check_choice, check_float, check_int, check_seed

POSITION_KINDS = ("rope", "learned", "sinusoidal")


@dataclass(frozen=True)
class DecoderConfig:
    """Sizes of a :class:`Decoder`. ``positions``: rotary (``"rope"``) or absolute (learned/sinusoidal)."""

    vocab_size: int
    width: int
    depth: int
    heads: int
    context: int
    mlp_ratio: float = 4
    dropout: float = 0.0
    positions: str = "rope"
    tie_embeddings: bool = True

    def __post_init__(self) -> None:
        check_int("vocab_size", self.vocab_size, minimum=1)
        check_int("width", self.width, minimum=1)
        check_int("depth", self.depth, minimum=1)
        check_int("heads", self.heads, minimum=1)
        check_int("context", self.context, minimum=1)
        check_float("mlp_ratio", self.mlp_ratio, minimum=0.0, strict_min=True)
        check_float("dropout", self.dropout, minimum=0.0, maximum=1.0)
        check_choice("positions", self.positions, POSITION_KINDS)
        if not isinstance(self.tie_embeddings, bool):
            raise TypeError(f"tie_embeddings must be a bool; got {type(self.tie_embeddings).__name__}")
        if self.width % self.heads:
            raise ValueError(f"heads must divide width; got width={self.width}, heads={self.heads}")
        if self.positions == "rope" and self.head_dim % 2:
            raise ValueError(f"positions='rope' needs an even head size width // heads; got {self.head_dim}")
        if self.positions == "sinusoidal" and self.width % 2:
            raise ValueError(f"positions='sinusoidal' needs an even width; got {self.width}")
        if self.mlp_width < 1:
            raise ValueError(f"mlp_ratio * width must be >= 1; got {self.mlp_ratio} * {self.width}")

    @property
    def head_dim(self) -> int:
        return self.width // self.heads

    @property
    def mlp_width(self) -> int:
        return round(self.mlp_ratio * self.width)


@dataclass
class DecoderOutput:
    """What :meth:`Decoder.forward` returns.

    ``logits``: ``(B, T, vocab_size)``. ``hidden_states`` (with ``return_hidden``): ``depth + 1`` tensors
    ``(B, T, width)``, the residual stream entering block 0 and leaving each block (before the final
    norm). ``attention`` (with ``return_attention``): ``depth`` tensors ``(B, heads, T, past + T)``.
    """

    logits: Tensor
    hidden_states: tuple[Tensor, ...] | None = None
    attention: tuple[Tensor, ...] | None = None


class MLP(nn.Module):
    """``u ↦ W₂ GELU(W₁ u + b₁) + b₂``; the hidden activations pass through the hook point ``neurons``."""

    def __init__(self, width: int, hidden: int, dropout: float):
        super().__init__()
        self.fc = nn.Linear(width, hidden)
        self.act = nn.GELU()
        self.neurons = HookPoint()
        self.proj = nn.Linear(hidden, width)
        self.dropout = nn.Dropout(dropout)

    def forward(self, u: Tensor) -> Tensor:
        return self.dropout(self.proj(self.neurons(self.act(self.fc(u)))))


class DecoderBlock(nn.Module):
    """One pre-norm transformer block, with hook points on the residual stream."""

    def __init__(self, config: DecoderConfig, rotary: RotaryEmbedding | None):
        super().__init__()
        self.resid_pre = HookPoint()
        self.attn_norm = nn.LayerNorm(config.width)
        self.attn = MultiHeadAttention(config.width, config.heads, dropout=config.dropout, rotary=rotary)
        self.resid_mid = HookPoint()
        self.mlp_norm = nn.LayerNorm(config.width)
        self.mlp = MLP(config.width, config.mlp_width, config.dropout)
        self.resid_post = HookPoint()

    def forward(
        self,
        x: Tensor,
        *,
        positions: Tensor,
        mask: Tensor | None,
        cache: KVCache | None,
        layer: int,
        return_weights: bool,
    ) -> tuple[Tensor, Tensor | None]:
        x = self.resid_pre(x)
        attended, weights = self.attn(
            self.attn_norm(x),
            positions=positions,
            mask=mask,
            cache=cache,
            layer=layer,
            return_weights=return_weights,
        )
        x = self.resid_mid(x + attended)
        x = self.resid_post(x + self.mlp(self.mlp_norm(x)))
        return x, weights


class Decoder(nn.Module):
    """GPT-style causal language model. Weights are initialised from ``seed`` (GPT-2 scheme).

    Init: every weight ``N(0, 0.02²)``, biases 0, and the two projections that write into the residual
    stream (``attn.out``, ``mlp.proj``) ``N(0, (0.02/√(2·depth))²)`` so the stream's variance does not grow
    with depth.
    """

    def __init__(self, config: DecoderConfig, *, seed: int = 0):
        super().__init__()
        if not isinstance(config, DecoderConfig):
            raise TypeError(f"config must be a DecoderConfig; got {type(config).__name__}")
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.width)
        self.rotary = None
        self.position_embedding = None
        if config.positions == "rope":
            self.rotary = RotaryEmbedding(config.head_dim, config.context)  # shared by every layer
        elif config.positions == "learned":
            self.position_embedding = LearnedPositions(config.context, config.width)
        else:
            self.position_embedding = SinusoidalPositions(config.context, config.width)
        self.dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(DecoderBlock(config, self.rotary) for _ in range(config.depth))
        self.final_norm = nn.LayerNorm(config.width)
        self.lm_head = nn.Linear(config.width, config.vocab_size, bias=False)
        if config.tie_embeddings:
            self.lm_head.weight = self.token_embedding.weight
        self._init_weights(check_seed("seed", seed))

    def _init_weights(self, seed: int) -> None:
        generator = torch.Generator().manual_seed(seed)
        residual_std = 0.02 / math.sqrt(2 * self.config.depth)
        for name, module in self.named_modules():
            if name == "lm_head" and self.config.tie_embeddings:
                continue  # shares the token embedding's weight
            if isinstance(module, nn.Linear | nn.Embedding):
                std = residual_std if name.endswith(("attn.out", "mlp.proj")) else 0.02
                nn.init.normal_(module.weight, 0.0, std, generator=generator)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)

    def make_cache(self) -> KVCache:
        """An empty key/value cache for this model."""
        return KVCache(self.config.depth)

    def hook_points(self) -> dict[str, HookPoint]:
        """Every hook point by name (``blocks.0.resid_pre``, ``blocks.0.attn.head_out``, ...)."""
        return hook_points(self)

    def num_parameters(self) -> int:
        """Number of trainable numbers (a tied embedding counted once)."""
        return sum(p.numel() for p in self.parameters())

    def forward(
        self,
        tokens: Tensor,
        *,
        positions: Tensor | None = None,
        mask: Tensor | None = None,
        cache: KVCache | None = None,
        return_hidden: bool = False,
        return_attention: bool = False,
    ) -> DecoderOutput:
        """Logits for ``tokens`` ``(B, T)``.

        ``positions``: ``(T,)`` or ``(B, T)`` ids, default ``past + 0 … T-1``. ``mask``: boolean or
        additive, broadcastable to ``(B, heads, T, past + T)``, default causal. ``cache``: keys/values of
        ``past`` earlier tokens; the new ones are appended. ``past + T`` must not exceed the context.
        """
        config = self.config
        if not isinstance(tokens, Tensor) or tokens.dim() != 2 or tokens.shape[1] == 0:
            got = getattr(tokens, "shape", type(tokens).__name__)
            raise ValueError(f"tokens must have shape (B, T) with T >= 1; got {got}")
        check_ids("tokens", tokens, config.vocab_size)
        batch, length = tokens.shape
        past = 0
        if cache is not None:
            if not isinstance(cache, KVCache) or cache.num_layers != config.depth:
                raise ValueError(f"cache must be a KVCache with {config.depth} layers (use make_cache())")
            past = cache.length
            if past and cache.batch_size != batch:
                raise ValueError(f"cache holds batch size {cache.batch_size}; tokens have {batch}")
        if past + length > config.context:
            raise ValueError(
                f"context overflow: {past} cached + {length} new tokens exceed context={config.context}"
            )
        if positions is None:
            positions = torch.arange(past, past + length, device=tokens.device)
        check_ids("positions", positions, config.context)  # the context bounds positions
        if positions.shape not in ((length,), (batch, length)):
            raise ValueError(
                f"positions must have shape (T,) = ({length},) or (B, T) = ({batch}, {length}); "
                f"got {tuple(positions.shape)}"
            )
        if mask is None:
            mask = None if length == 1 else causal_mask(length, past + length, device=tokens.device)
        else:
            check_mask(mask, (batch, config.heads, length, past + length))

        x = self.token_embedding(tokens)  # (B, T, width)
        if self.position_embedding is not None:
            x = x + self.position_embedding(positions)  # absolute positions; RoPE acts inside attention
        x = self.dropout(x)
        hidden, attention = [x], []
        for layer, block in enumerate(self.blocks):
            x, weights = block(
                x, positions=positions, mask=mask, cache=cache, layer=layer, return_weights=return_attention
            )
            hidden.append(x)
            attention.append(weights)
        logits = self.lm_head(self.final_norm(x))  # (B, T, vocab_size)
        return DecoderOutput(
            logits=logits,
            hidden_states=tuple(hidden) if return_hidden else None,
            attention=tuple(attention) if return_attention else None,
        )
