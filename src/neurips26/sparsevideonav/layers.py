"""Cross-attention with a key-padding mask, and the word encoder every model of the chapter reads.

**Cross-attention.** Queries come from the tokens ``x`` (B, T, D), keys and values from a context
``c`` (B, S, D_c); per head ``softmax(q kᵀ/√d_h) v``, then an output projection. ``key_mask`` (B, S),
True = a real key, hides padding (a short instruction, a short history). A row whose keys are all
padding attends to nothing and returns exactly zero (softmax over an empty set is undefined; zero is
what a missing context should add to a residual stream). ``zero_init=True`` zeroes the output
projection's weight and bias: the layer then adds exactly nothing at initialisation, which is how the
paper inserts its history cross-attention into a pretrained generator without disturbing it.

**Words.** The paper encodes instructions with umT5-XXL; here a learned embedding of the template
vocabulary (:mod:`~neurips26.sparsevideonav.instructions`) plus fixed sinusoidal word positions, through
one pre-norm self-attention block over the real words (padding masked). The instruction's order matters
(turn left, then right), hence the positions and the block.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neurips26.nn import SinusoidalPositions, ViTBlock
from neurips26.validation import check_int


def _check_mask(name: str, mask: object, batch: int, length: int) -> Tensor:
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool or tuple(mask.shape) != (batch, length):
        raise ValueError(
            f"{name} must be a bool tensor of shape ({batch}, {length}) (True = a real key); "
            f"got {getattr(mask, 'dtype', type(mask).__name__)} {tuple(getattr(mask, 'shape', ()))}"
        )
    return mask


class CrossAttention(nn.Module):
    """Multi-head cross-attention ``x`` → ``context`` with a key-padding mask (module doc).

    forward(x (B, T, width), context (B, S, context_dim), key_mask (B, S) bool or None) → (B, T, width).
    """

    def __init__(self, width: int, heads: int, *, context_dim: int | None = None, zero_init: bool = False):
        super().__init__()
        self.width = check_int("width", width, minimum=1)
        self.heads = check_int("heads", heads, minimum=1)
        if self.width % self.heads:
            raise ValueError(f"heads must divide width; got width={self.width}, heads={self.heads}")
        self.context_dim = (
            self.width if context_dim is None else check_int("context_dim", context_dim, minimum=1)
        )
        self.head_dim = self.width // self.heads
        self.q = nn.Linear(self.width, self.width)
        self.kv = nn.Linear(self.context_dim, 2 * self.width)
        self.out = nn.Linear(self.width, self.width)
        if zero_init:
            nn.init.zeros_(self.out.weight)
            nn.init.zeros_(self.out.bias)

    def forward(self, x: Tensor, context: Tensor, key_mask: Tensor | None = None) -> Tensor:
        if not isinstance(x, Tensor) or x.dim() != 3 or x.shape[-1] != self.width:
            raise ValueError(f"x must have shape (B, T, {self.width}); got {tuple(getattr(x, 'shape', ()))}")
        if (
            not isinstance(context, Tensor)
            or context.dim() != 3
            or context.shape[0] != x.shape[0]
            or context.shape[-1] != self.context_dim
        ):
            raise ValueError(
                f"context must have shape ({x.shape[0]}, S, {self.context_dim}); "
                f"got {tuple(getattr(context, 'shape', ()))}"
            )
        batch, length, _ = x.shape
        keys = context.shape[1]
        if key_mask is not None:
            key_mask = _check_mask("key_mask", key_mask, batch, keys)
        if keys == 0:  # nothing to attend to: the update is zero (module doc)
            return x.new_zeros(batch, length, self.width)
        q = self.q(x).view(batch, length, self.heads, self.head_dim).transpose(1, 2)  # (B, H, T, d)
        k, v = self.kv(context).split(self.width, dim=-1)
        k = k.view(batch, keys, self.heads, self.head_dim).transpose(1, 2)  # (B, H, S, d)
        v = v.view(batch, keys, self.heads, self.head_dim).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # (B, H, T, S)
        if key_mask is not None:
            scores = scores.masked_fill(~key_mask[:, None, None, :], float("-inf"))
            weights = torch.softmax(scores, dim=-1)
            # a row of padding only: softmax gave NaN; it attends to nothing and adds nothing
            some = key_mask.any(dim=1)
            weights = torch.where(some[:, None, None, None], weights, 0.0)
            heads = (weights @ v).transpose(1, 2).reshape(batch, length, self.width)
            return torch.where(some[:, None, None], self.out(heads), 0.0)
        weights = torch.softmax(scores, dim=-1)
        heads = (weights @ v).transpose(1, 2).reshape(batch, length, self.width)
        return self.out(heads)


class WordEncoder(nn.Module):
    """Instruction word ids (B, L) (0 = padding) → word features (B, L', width) and their mask (B, L').

    Embedding + sinusoidal positions, then one pre-norm self-attention block over the real words and a
    final LayerNorm (module doc). ``L'`` ≤ L drops the trailing columns that are padding in every row;
    padding positions come out as zeros.
    """

    def __init__(self, vocab: int, width: int, max_words: int, heads: int = 4):
        super().__init__()
        self.vocab = check_int("vocab", vocab, minimum=2)
        self.width = check_int("width", width, minimum=1)
        self.max_words = check_int("max_words", max_words, minimum=1)
        self.embed = nn.Embedding(self.vocab, self.width, padding_idx=0)
        self.positions = SinusoidalPositions(self.max_words, self.width)
        self.block = ViTBlock(self.width, heads, 2 * self.width)
        self.norm = nn.LayerNorm(self.width)

    def forward(self, ids: Tensor) -> tuple[Tensor, Tensor]:
        if not isinstance(ids, Tensor) or ids.dim() != 2 or ids.dtype not in (torch.int64, torch.int32):
            raise ValueError(
                f"instruction must be an integer tensor (B, L); got {getattr(ids, 'shape', ids)}"
            )
        if ids.shape[1] > self.max_words or (
            ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.vocab)
        ):
            raise ValueError(f"instruction ids must lie in [0, {self.vocab}) with L <= {self.max_words}")
        mask = ids != 0
        # trailing columns that are padding in every row carry nothing: drop them (cost ∝ real words)
        used = mask.any(dim=0).nonzero()
        length = int(used.max()) + 1 if used.numel() else 1
        ids, mask = ids[:, :length], mask[:, :length]
        positions = torch.arange(length, device=ids.device)
        h = self.embed(ids) + self.positions(positions)
        attend = mask[:, None, None, :] | ~mask.any(dim=1)[:, None, None, None]  # an empty row sees all
        h, _ = self.block(h, mask=attend)
        return self.norm(h) * mask[..., None], mask


def masked_mean(features: Tensor, mask: Tensor) -> Tensor:
    """Mean of ``features`` (B, L, D) over the True entries of ``mask`` (B, L); zero for an empty row."""
    weights = mask.to(features.dtype)
    return (features * weights[..., None]).sum(1) / weights.sum(1, keepdim=True).clamp_min(1.0)


class FeedForward(nn.Module):
    """Pre-norm two-layer GELU MLP with a residual: x + W₂ gelu(W₁ LN(x))."""

    def __init__(self, width: int, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(check_int("width", width, minimum=1))
        self.fc1 = nn.Linear(width, check_int("hidden", hidden, minimum=1))
        self.fc2 = nn.Linear(hidden, width)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


__all__ = ["CrossAttention", "FeedForward", "WordEncoder", "masked_mean"]
