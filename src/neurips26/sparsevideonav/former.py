"""The Former: any length of history → a fixed-size memory ``h_T`` (8 tokens × width).

Without it, every history chunk joins the generator's sequence and a decision costs more the longer
the agent has walked. The paper compresses the history in two stages (released code, read to
understand; sizes ours):

1. **Q-Former** (temporal). History latents (B, H, 2, 16) pass through two linear maps (a GELU between
   them, ours) to ``width``; each token gets the sinusoidal embedding of its chunk's index counted
   *backwards* (the most recent chunk is 0, so any length fits) through a linear map, and a learned
   embedding of its half of the view. ``Q = 2 P`` learned queries cross-attend to all ``2H`` tokens
   (padding masked); each layer is cross-attention → LayerNorm → FiLM → FFN. The queries reshape into
   ``P`` pseudo-chunks of 2 tokens.
2. **Video-Former** (spatial, then temporal). Per pseudo-chunk, 2 learned latents attend Perceiver-style
   over that chunk's tokens and themselves; then, for each half of the view, a self-attention runs across
   the ``P`` pseudo-chunks; LayerNorm, FiLM, FFN; a final LayerNorm. ``h_T`` is the latents, (B, 2P, width).

**FiLM** from the instruction: a two-layer ReLU MLP on the word features gives ``(γ, β)`` per word,
averaged over the real words, ``x ← x (1 + tanh γ) + β``. Its last layer starts at exactly zero (the
released code starts it near zero), so at initialisation FiLM is the identity.

An empty history (H = 0, or every chunk masked) leaves the learned queries to speak for it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neurips26.nn import MultiHeadAttention
from neurips26.nn.embeddings import sinusoidal_embedding
from neurips26.sparsevideonav.codec import LATENT_DIM
from neurips26.sparsevideonav.codec import TOKENS as TOKENS_PER_CHUNK  # the view's two halves
from neurips26.sparsevideonav.instructions import MAX_WORDS, VOCAB
from neurips26.sparsevideonav.layers import CrossAttention, FeedForward, WordEncoder, masked_mean
from neurips26.validation import check_int


@dataclass(frozen=True)
class FormerConfig:
    """width, heads; pseudo_chunks ``P`` (h_T has 2P tokens); q_layers, v_layers; vocab, max_words."""

    width: int = 48
    heads: int = 4
    pseudo_chunks: int = 4
    q_layers: int = 2
    v_layers: int = 2
    vocab: int = len(VOCAB)
    max_words: int = MAX_WORDS

    def __post_init__(self) -> None:
        check_int("width", self.width, minimum=2)
        check_int("heads", self.heads, minimum=1)
        check_int("pseudo_chunks", self.pseudo_chunks, minimum=1)
        check_int("q_layers", self.q_layers, minimum=1)
        check_int("v_layers", self.v_layers, minimum=1)
        check_int("vocab", self.vocab, minimum=2)
        check_int("max_words", self.max_words, minimum=1)
        if self.width % self.heads or self.width % 2:
            raise ValueError(
                f"width must be even and divisible by heads; got width={self.width}, heads={self.heads}"
            )

    @property
    def memory_tokens(self) -> int:
        """Tokens of ``h_T``."""
        return TOKENS_PER_CHUNK * self.pseudo_chunks


class FiLM(nn.Module):
    """Feature-wise modulation from the instruction, the identity at initialisation (module doc)."""

    def __init__(self, width: int):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, 2 * width)
        nn.init.zeros_(self.fc2.weight)
        nn.init.zeros_(self.fc2.bias)

    def forward(self, x: Tensor, words: Tensor, word_mask: Tensor) -> Tensor:
        """x (B, N, D); words (B, L, D); word_mask (B, L) → x (1 + tanh γ) + β, (γ, β) averaged over words."""
        gamma, beta = masked_mean(self.fc2(F.relu(self.fc1(words))), word_mask).chunk(2, dim=-1)
        return x * (1 + torch.tanh(gamma))[:, None, :] + beta[:, None, :]


class _QLayer(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.norm_q = nn.LayerNorm(width)
        self.attn = CrossAttention(width, heads)
        self.norm = nn.LayerNorm(width)
        self.film = FiLM(width)
        self.ffn = FeedForward(width, 4 * width)

    def forward(self, q: Tensor, tokens: Tensor, mask: Tensor, words: Tensor, word_mask: Tensor) -> Tensor:
        q = q + self.attn(self.norm_q(q), tokens, mask)
        return self.ffn(self.film(self.norm(q), words, word_mask))


class _VLayer(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.norm_l = nn.LayerNorm(width)
        self.norm_c = nn.LayerNorm(width)
        self.spatial = CrossAttention(width, heads)
        self.norm_t = nn.LayerNorm(width)
        self.temporal = MultiHeadAttention(width, heads)
        self.norm = nn.LayerNorm(width)
        self.film = FiLM(width)
        self.ffn = FeedForward(width, 4 * width)

    def forward(self, latents: Tensor, chunks: Tensor, words: Tensor, word_mask: Tensor) -> Tensor:
        """latents, chunks: (B, P, 2, D)."""
        b, p, k, d = latents.shape
        flat_l = latents.reshape(b * p, k, d)
        context = torch.cat([self.norm_c(chunks.reshape(b * p, k, d)), self.norm_l(flat_l)], dim=1)
        flat_l = flat_l + self.spatial(self.norm_l(flat_l), context)  # Perceiver: own chunk and themselves
        latents = flat_l.view(b, p, k, d)
        across = latents.transpose(1, 2).reshape(b * k, p, d)  # per half of the view, across pseudo-chunks
        attended, _ = self.temporal(self.norm_t(across))
        latents = (across + attended).view(b, k, p, d).transpose(1, 2)
        out = self.ffn(self.film(self.norm(latents.reshape(b, p * k, d)), words, word_mask))
        return out.view(b, p, k, d)


class Former(nn.Module):
    """History latents (B, H, 2, 16), their mask (B, H), the instruction (B, L) → ``h_T`` (B, 2P, width)."""

    def __init__(self, config: FormerConfig | None = None):
        super().__init__()
        config = FormerConfig() if config is None else config
        if not isinstance(config, FormerConfig):
            raise TypeError(f"config must be a FormerConfig; got {type(config).__name__}")
        self.config = config
        d = config.width
        self.proj1 = nn.Linear(LATENT_DIM, d)
        self.proj2 = nn.Linear(d, d)
        self.chunk_index = nn.Linear(d, d)
        self.side = nn.Parameter(0.02 * torch.randn(TOKENS_PER_CHUNK, d))
        self.queries = nn.Parameter(0.02 * torch.randn(config.memory_tokens, d))
        self.latents = nn.Parameter(0.02 * torch.randn(TOKENS_PER_CHUNK, d))
        self.words = WordEncoder(config.vocab, d, config.max_words, heads=config.heads)
        self.q_layers = nn.ModuleList(_QLayer(d, config.heads) for _ in range(config.q_layers))
        self.v_layers = nn.ModuleList(_VLayer(d, config.heads) for _ in range(config.v_layers))
        self.final = nn.LayerNorm(d)

    def forward(self, history: Tensor, history_mask: Tensor, words: Tensor) -> Tensor:
        cfg = self.config
        if (
            not isinstance(history, Tensor)
            or history.dim() != 4
            or tuple(history.shape[2:]) != (TOKENS_PER_CHUNK, LATENT_DIM)
        ):
            raise ValueError(
                f"history must have shape (B, H, {TOKENS_PER_CHUNK}, {LATENT_DIM}); "
                f"got {tuple(getattr(history, 'shape', ()))}"
            )
        b, h = history.shape[:2]
        if (
            not isinstance(history_mask, Tensor)
            or history_mask.dtype != torch.bool
            or tuple(history_mask.shape) != (b, h)
        ):
            raise ValueError(f"history_mask must be a bool tensor of shape ({b}, {h})")
        d, p = cfg.width, cfg.pseudo_chunks
        word_features, word_mask = self.words(words)
        # chunk j of H is H − 1 − j chunks before the present (reversed order: the latest is 0)
        back = torch.arange(h - 1, -1, -1, device=history.device).to(self.side.dtype)
        index = self.chunk_index(sinusoidal_embedding(back, d))  # (H, D)
        tokens = self.proj2(F.gelu(self.proj1(history))) + index[None, :, None, :] + self.side[None, None]
        tokens = tokens.reshape(b, h * TOKENS_PER_CHUNK, d)
        mask = history_mask.repeat_interleave(TOKENS_PER_CHUNK, dim=1)
        q = self.queries[None].expand(b, -1, -1)
        for layer in self.q_layers:
            q = layer(q, tokens, mask, word_features, word_mask)
        chunks = q.reshape(b, p, TOKENS_PER_CHUNK, d)
        latents = self.latents[None, None].expand(b, p, -1, -1)
        for layer in self.v_layers:
            latents = layer(latents, chunks, word_features, word_mask)
        return self.final(latents.reshape(b, p * TOKENS_PER_CHUNK, d))


__all__ = ["FiLM", "Former", "FormerConfig"]
