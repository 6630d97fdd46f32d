"""Multi-head self-attention with masks, position ids, rotary positions and a key/value cache.

For one head with queries ``Q`` (T_q × D), keys ``K`` and values ``V`` (T_k × D) and a mask ``M``:

    Attention(Q, K, V) = softmax(Q Kᵀ / √D + M) V                                          (1)

where ``M`` is 0 where a query may look and −∞ where it may not. A mask is passed either as booleans
(True = may attend, as in ``torch.nn.functional.scaled_dot_product_attention``) or as the additive ``M``
itself, with any shape that broadcasts to ``(B, H, T_q, T_k)``. That one argument covers causal decoding
(:func:`causal_mask`), padding, and the tree masks of speculative verification (:func:`tree_mask`), where
several candidate continuations share one forward pass and each token sees only its own ancestors.

Position ids are explicit, so tree siblings can share a position. With rotary embeddings the queries
and keys are rotated by their positions before (1); keys are cached *after* rotation, so a cached key
never needs its position again.

:class:`KVCache` keeps every layer's keys and values for incremental decoding: feed the new tokens only,
``append`` their keys/values, ``truncate`` back to an accepted prefix after a rejected draft, ``gather``
the accepted tree path, ``copy`` to explore branches, ``select`` to drop finished sequences.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neurips26.nn.embeddings import RotaryEmbedding, apply_rope
from neurips26.nn.hooks import HookPoint
from neurips26.validation import check_float, check_int

# ----------------------------------------------------------------------------------------------- masks


def causal_mask(query_length: int, key_length: int | None = None, *, device=None) -> Tensor:
    """Boolean ``(T_q, T_k)`` mask: query ``i`` sees key ``j`` iff ``j ≤ (T_k − T_q) + i``.

    The last ``T_q`` keys belong to the queries themselves; the first ``T_k − T_q`` are cached past
    positions that every query may see (``T_k = T_q`` without a cache).
    """
    query_length = check_int("query_length", query_length, minimum=1)
    key_length = query_length if key_length is None else check_int("key_length", key_length, minimum=1)
    if key_length < query_length:
        raise ValueError(f"key_length must be >= query_length ({query_length}); got {key_length}")
    ones = torch.ones(query_length, key_length, dtype=torch.bool, device=device)
    return torch.tril(ones, diagonal=key_length - query_length)


def tree_mask(parents: Sequence[int] | Tensor, *, prefix_length: int = 0) -> tuple[Tensor, Tensor]:
    """Ancestor mask and position ids of a token tree that continues a prefix.

    ``parents[i]`` is the index of node ``i``'s parent in the tree, or ``-1`` for a node that directly
    follows the prefix; parents come before children (``parents[i] < i``). Returns

    - ``mask``: boolean ``(N, prefix_length + N)``; node ``i`` sees the whole prefix, itself and its
      ancestors, so each root-to-leaf path is computed exactly as if it were decoded alone;
    - ``positions``: ``(N,)`` with ``positions[i] = prefix_length + depth(i)`` (siblings share one).
    """
    prefix_length = check_int("prefix_length", prefix_length, minimum=0)
    parents = [int(p) for p in (parents.tolist() if isinstance(parents, Tensor) else parents)]
    n = len(parents)
    if n == 0:
        raise ValueError("parents must name at least one node")
    mask = torch.zeros(n, prefix_length + n, dtype=torch.bool)
    mask[:, :prefix_length] = True
    depth = torch.zeros(n, dtype=torch.long)
    for i, parent in enumerate(parents):
        if not -1 <= parent < i:
            raise ValueError(f"parents[{i}] must be -1 or the index of an earlier node (< {i}); got {parent}")
        if parent >= 0:
            mask[i] = mask[parent]  # a node sees everything its parent sees ...
            depth[i] = depth[parent] + 1
        mask[i, prefix_length + i] = True  # ... and itself
    return mask, prefix_length + depth


def check_mask(mask: object, shape: tuple[int, int, int, int]) -> Tensor:
    """A boolean or real tensor that broadcasts to ``shape = (B, H, T_q, T_k)``."""
    if not isinstance(mask, Tensor):
        raise TypeError(f"mask must be a torch.Tensor or None; got {type(mask).__name__}")
    if mask.dtype != torch.bool and not mask.dtype.is_floating_point:
        raise TypeError(f"mask must be boolean (True = attend) or additive floats; got dtype {mask.dtype}")
    try:
        fits = mask.dim() <= 4 and torch.broadcast_shapes(mask.shape, shape) == torch.Size(shape)
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to (B, H, T_q, T_k) = {tuple(shape)}"
        )
    return mask


# ------------------------------------------------------------------------------------------ the cache


class KVCache:
    """Keys and values of the positions seen so far, one ``(B, H, T, D)`` pair per layer.

    The cache never writes into a stored tensor (``append`` concatenates into a new one), so ``copy``
    can share tensors between branches safely.
    """

    def __init__(self, num_layers: int):
        self.num_layers = check_int("num_layers", num_layers, minimum=1)
        self.keys: list[Tensor | None] = [None] * self.num_layers
        self.values: list[Tensor | None] = [None] * self.num_layers

    @property
    def length(self) -> int:
        """Number of cached positions (of the first layer; all layers agree between forward passes)."""
        return 0 if self.keys[0] is None else self.keys[0].shape[2]

    def __len__(self) -> int:
        return self.length

    @property
    def batch_size(self) -> int | None:
        """Batch size of the cached sequences, ``None`` while empty."""
        return None if self.keys[0] is None else self.keys[0].shape[0]

    def __repr__(self) -> str:
        return f"KVCache(num_layers={self.num_layers}, length={self.length}, batch_size={self.batch_size})"

    def append(self, layer: int, keys: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
        """Add ``(B, H, T_new, D)`` keys/values to ``layer``; return that layer's full keys and values."""
        layer = check_int("layer", layer, minimum=0, maximum=self.num_layers - 1)
        if keys.dim() != 4 or keys.shape != values.shape:
            raise ValueError(
                f"keys and values must share one shape (B, H, T, D); got {tuple(keys.shape)} and "
                f"{tuple(values.shape)}"
            )
        past_keys, past_values = self.keys[layer], self.values[layer]
        if past_keys is not None:
            b, h, _, d = past_keys.shape
            if (keys.shape[0], keys.shape[1], keys.shape[3]) != (b, h, d):
                raise ValueError(
                    f"cache of layer {layer} holds (B, H, D) = {(b, h, d)}; new keys have shape "
                    f"{tuple(keys.shape)}"
                )
            keys = torch.cat([past_keys, keys], dim=2)
            values = torch.cat([past_values, values], dim=2)
        self.keys[layer], self.values[layer] = keys, values
        return keys, values

    def _filled(self) -> list[int]:
        return [i for i in range(self.num_layers) if self.keys[i] is not None]

    def truncate(self, length: int) -> None:
        """Keep the first ``length`` positions (an accepted prefix); drop the rest."""
        length = check_int("length", length, minimum=0, maximum=self.length)
        for i in self._filled():
            self.keys[i] = self.keys[i][:, :, :length]
            self.values[i] = self.values[i][:, :, :length]

    def gather(self, indices: Sequence[int] | Tensor) -> None:
        """Keep the positions ``indices`` (in this order), e.g. the prefix plus an accepted tree path.

        Rotary keys keep the rotation of the position they were computed at, so gather a tree path only
        when its nodes' positions were ``prefix + depth``, which is what they become after gathering.
        """
        index = torch.as_tensor(indices, dtype=torch.long)
        if index.dim() != 1:
            raise ValueError(f"indices must be 1-D; got shape {tuple(index.shape)}")
        if index.numel() and (index.min() < 0 or index.max() >= self.length):
            raise ValueError(f"indices must lie in [0, {self.length}) (the cache length)")
        for i in self._filled():
            self.keys[i] = self.keys[i].index_select(2, index.to(self.keys[i].device))
            self.values[i] = self.values[i].index_select(2, index.to(self.values[i].device))

    def select(self, batch_indices: Sequence[int] | Tensor) -> None:
        """Keep the sequences ``batch_indices`` of the batch (drop finished ones, or repeat one)."""
        index = torch.as_tensor(batch_indices, dtype=torch.long)
        batch = self.batch_size or 0
        if index.dim() != 1 or (index.numel() and (index.min() < 0 or index.max() >= batch)):
            raise ValueError(f"batch_indices must be a 1-D list of indices in [0, {batch})")
        for i in self._filled():
            self.keys[i] = self.keys[i].index_select(0, index.to(self.keys[i].device))
            self.values[i] = self.values[i].index_select(0, index.to(self.values[i].device))

    def copy(self) -> KVCache:
        """An independent cache with the same contents (for exploring a branch)."""
        twin = KVCache(self.num_layers)
        twin.keys, twin.values = list(self.keys), list(self.values)
        return twin


# -------------------------------------------------------------------------------------- the attention


class MultiHeadAttention(nn.Module):
    """Multi-head self-attention, Eq. (1) per head, with an output projection.

    ``x``: ``(B, T, width)`` → ``(B, T, width)``, and the attention weights ``(B, H, T, T_k)`` when
    asked. Without a mask every query sees every key (an encoder); a decoder passes
    :func:`causal_mask`. The per-head outputs pass through the hook point ``head_out`` as
    ``(B, T, H, D)`` before they are mixed by the output projection.
    """

    def __init__(
        self, width: int, heads: int, *, dropout: float = 0.0, rotary: RotaryEmbedding | None = None
    ):
        super().__init__()
        self.width = check_int("width", width, minimum=1)
        self.heads = check_int("heads", heads, minimum=1)
        if self.width % self.heads:
            raise ValueError(f"heads must divide width; got width={self.width}, heads={self.heads}")
        self.head_dim = self.width // self.heads
        self.dropout = check_float("dropout", dropout, minimum=0.0, maximum=1.0)
        if rotary is not None and rotary.head_dim != self.head_dim:
            raise ValueError(f"rotary.head_dim must equal width // heads = {self.head_dim}")
        self.rotary = rotary
        self.qkv = nn.Linear(self.width, 3 * self.width)  # W_Q, W_K, W_V side by side
        self.out = nn.Linear(self.width, self.width)  # W_O
        self.head_out = HookPoint()
        self.out_dropout = nn.Dropout(self.dropout)

    def forward(
        self,
        x: Tensor,
        *,
        positions: Tensor | None = None,
        mask: Tensor | None = None,
        cache: KVCache | None = None,
        layer: int = 0,
        return_weights: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend; ``positions`` ``(T,)`` or ``(B, T)`` default to ``past + 0 … T-1`` (RoPE only).

        With a ``cache``, ``x`` holds only the new tokens; their keys/values are appended to ``layer``
        and the queries attend over past + new keys, so ``mask`` must broadcast to
        ``(B, H, T, past + T)``. Returns ``(output, weights)``; ``weights`` is ``None`` unless asked.
        """
        if not isinstance(x, Tensor) or x.dim() != 3 or x.shape[-1] != self.width:
            raise ValueError(f"x must have shape (B, T, {self.width}); got {getattr(x, 'shape', type(x))}")
        batch, length, _ = x.shape
        past = 0
        if cache is not None:
            if not isinstance(cache, KVCache):
                raise TypeError(f"cache must be a KVCache or None; got {type(cache).__name__}")
            layer = check_int("layer", layer, minimum=0, maximum=cache.num_layers - 1)
            if cache.keys[layer] is not None:
                past = cache.keys[layer].shape[2]
                if cache.keys[layer].shape[0] != batch:
                    raise ValueError(f"cache holds batch size {cache.keys[layer].shape[0]}; x has {batch}")
        if mask is not None:
            mask = check_mask(mask, (batch, self.heads, length, past + length))

        # (B, T, 3W) → three (B, H, T, D)
        q, k, v = self.qkv(x).split(self.width, dim=-1)
        q, k, v = (t.view(batch, length, self.heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        if self.rotary is not None:
            if positions is None:
                positions = torch.arange(past, past + length, device=x.device)
            if positions.shape not in ((length,), (batch, length)):
                raise ValueError(
                    f"positions must have shape (T,) = ({length},) or (B, T) = ({batch}, {length}); "
                    f"got {tuple(positions.shape)}"
                )
            cos, sin = self.rotary(positions)
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)  # q_p ← R_p q_p, k_p ← R_p k_p
        if cache is not None:
            k, v = cache.append(layer, k, v)  # (B, H, past + T, D)

        weights = None
        p_drop = self.dropout if self.training else 0.0
        if return_weights:
            # Eq. (1) spelled out, so the weights can be returned
            scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # (B, H, T, past + T)
            if mask is not None:
                if mask.dtype == torch.bool:
                    scores = scores.masked_fill(~mask, float("-inf"))  # M = −∞ where masked
                else:
                    scores = scores + mask  # M given additively
            weights = torch.softmax(scores, dim=-1)
            heads = F.dropout(weights, p_drop, self.training) @ v
        else:  # the same computation, fused
            if mask is not None and mask.dtype != torch.bool:
                mask = mask.to(q.dtype)
            heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p_drop)

        heads = self.head_out(heads.transpose(1, 2))  # (B, T, H, D): one output per head
        y = self.out(heads.reshape(batch, length, self.width))  # concat heads, then W_O
        return self.out_dropout(y), weights
