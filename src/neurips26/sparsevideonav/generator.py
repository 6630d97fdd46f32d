"""The sparse video generator: a small DiT that denoises future latent chunks given the present.

The paper adapts Wan2.1 (a text-to-video DiT) into an image-and-history-conditioned generator of a
sparse future. Ours keeps its parts at a CPU size:

- **Tokens.** A clip is ``S`` slots of latent chunks, each 2 tokens (the left and right halves of the view,
  :mod:`~neurips26.sparsevideonav.codec`) of 16 numbers: the 2 reference chunks (the present, clean), then
  the future chunks at ``offsets`` (:mod:`~neurips26.sparsevideonav.timeline`). Each token is projected to
  ``width`` and gets the sinusoidal embedding of its slot's temporal index (the true chunk index, or the
  slot number, ``positions``) plus a learned embedding of its half.
- **Blocks** (``depth`` of them). An :class:`~neurips26.nn.AdaLNZeroBlock` (self-attention and MLP,
  modulated by the noise level ``t`` through a :class:`~neurips26.nn.TimestepEmbedding`), then a
  cross-attention to the instruction's words (affine LayerNorm first, as in Wan), then — from Stage 2 on —
  a cross-attention to the compressed history ``h_T`` (its own Linear–GELU–Linear on ``h_T``, an affine
  LayerNorm on ``x``, the output projection zero-initialised so a Stage-2 model starts as its Stage-1
  model exactly).
- **Head.** LayerNorm, then a linear map back to 16 numbers per token, zero-initialised (Wan's head): the
  velocity ``u_θ(x_t, t, l, c_T, h_T)`` of the rectified flow ``x_t = (1 − t) x₀ + t ε``
  (:mod:`neurips26.flow`). One ``t`` for the whole clip, the clean reference included.

``history`` selects how the past enters: ``"none"`` (Stage 1), ``"former"`` (Stage 2: cross-attention to
``h_T`` from :class:`~neurips26.sparsevideonav.former.Former`) or ``"raw"`` (the uncompressed counterpart:
every history chunk joins the self-attention sequence as clean tokens at its own negative time index,
so the cost grows with the history's length).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neurips26.nn import AdaLNZeroBlock, ConditionedTransformerConfig, TimestepEmbedding
from neurips26.nn.embeddings import sinusoidal_embedding
from neurips26.sparsevideonav.codec import LATENT_DIM
from neurips26.sparsevideonav.codec import TOKENS as TOKENS_PER_CHUNK  # the view's two halves
from neurips26.sparsevideonav.instructions import MAX_WORDS, VOCAB
from neurips26.sparsevideonav.layers import CrossAttention, WordEncoder
from neurips26.sparsevideonav.timeline import REFERENCE_CHUNKS, SPARSE_OFFSETS, check_offsets, positions
from neurips26.validation import check_choice, check_float, check_int

HISTORY_MODES: tuple[str, ...] = ("none", "former", "raw")
POSITION_MODES: tuple[str, ...] = ("chunk", "slot")


@dataclass(frozen=True)
class GeneratorConfig:
    """Sizes and wiring of a :class:`SparseVideoGenerator` (module doc).

    width, heads, depth, mlp_ratio: the DiT; offsets: the future chunks it generates (after the
    reference); positions: ``"chunk"`` (true index) or ``"slot"``; history: ``"none"``, ``"former"`` or
    ``"raw"``; memory_tokens: the length of ``h_T`` (Former mode); vocab, max_words: the instruction.
    """

    width: int = 48
    heads: int = 4
    depth: int = 3
    mlp_ratio: float = 4.0
    offsets: tuple[int, ...] = SPARSE_OFFSETS
    positions: str = "chunk"
    history: str = "none"
    memory_tokens: int = 8
    vocab: int = field(default=len(VOCAB))
    max_words: int = MAX_WORDS

    def __post_init__(self) -> None:
        check_int("width", self.width, minimum=2)
        check_int("heads", self.heads, minimum=1)
        check_int("depth", self.depth, minimum=1)
        check_float("mlp_ratio", self.mlp_ratio, minimum=0.0, strict_min=True)
        object.__setattr__(self, "offsets", check_offsets(self.offsets))
        check_choice("positions", self.positions, POSITION_MODES)
        check_choice("history", self.history, HISTORY_MODES)
        check_int("memory_tokens", self.memory_tokens, minimum=1)
        check_int("vocab", self.vocab, minimum=2)
        check_int("max_words", self.max_words, minimum=1)
        if self.width % self.heads or self.width % 2:
            raise ValueError(
                f"width must be even and divisible by heads; got width={self.width}, heads={self.heads}"
            )

    @property
    def slots(self) -> int:
        """Generated slots: the reference chunks, then the future chunks."""
        return REFERENCE_CHUNKS + len(self.offsets)

    @property
    def tokens(self) -> int:
        """Tokens of the generated clip (2 per chunk)."""
        return TOKENS_PER_CHUNK * self.slots

    @property
    def mlp_hidden(self) -> int:
        return max(1, round(self.mlp_ratio * self.width))

    def with_history(self, history: str) -> GeneratorConfig:
        """The same generator with another history mode (Stage 1 → Stage 2)."""
        return GeneratorConfig(**{**self.__dict__, "history": history})


class GeneratorBlock(nn.Module):
    """AdaLN-Zero self-attention + MLP, word cross-attention, then (Former mode) history cross-attention."""

    def __init__(self, config: GeneratorConfig):
        super().__init__()
        d = config.width
        self.dit = AdaLNZeroBlock(
            ConditionedTransformerConfig(
                width=d, heads=config.heads, cond_dim=d, depth=1, mlp_ratio=config.mlp_ratio
            )
        )
        self.text_norm = nn.LayerNorm(d)
        self.text = CrossAttention(d, config.heads)
        self.memory = None
        if config.history == "former":
            self.memory_norm = nn.LayerNorm(d)
            self.memory_mlp = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))
            self.memory = CrossAttention(d, config.heads, zero_init=True)

    def forward(
        self,
        x: Tensor,
        c: Tensor,
        words: Tensor,
        word_mask: Tensor,
        memory: Tensor | None,
        self_mask: Tensor | None,
    ) -> Tensor:
        x = self.dit(x, c, mask=self_mask)
        x = x + self.text(self.text_norm(x), words, word_mask)
        if self.memory is not None:
            x = x + self.memory(self.memory_norm(x), self.memory_mlp(memory))
        return x


class SparseVideoGenerator(nn.Module):
    """``u_θ(x_t, t, words, history)``: the velocity of every generated token (module doc).

    forward(x (B, S, 2, 16) — the clip at level t, reference slots first; t (B,); words (B, L) ids;
    memory (B, M, width) = h_T in Former mode; history (B, H, 2, 16) and history_mask (B, H) bool in raw
    mode) → (B, S, 2, 16). The outputs on the reference slots exist but are not trained (loss on the
    future only).
    """

    def __init__(self, config: GeneratorConfig):
        super().__init__()
        if not isinstance(config, GeneratorConfig):
            raise TypeError(f"config must be a GeneratorConfig; got {type(config).__name__}")
        self.config = config
        d = config.width
        self.inp = nn.Linear(LATENT_DIM, d)
        self.side = nn.Parameter(torch.zeros(TOKENS_PER_CHUNK, d))
        nn.init.normal_(self.side, std=0.02)
        self.time = TimestepEmbedding(d, scale=1000.0)
        self.words = WordEncoder(config.vocab, d, config.max_words, heads=config.heads)
        self.blocks = nn.ModuleList(GeneratorBlock(config) for _ in range(config.depth))
        self.out_norm = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.out = nn.Linear(d, LATENT_DIM)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)
        self.register_buffer(
            "slot_positions", torch.as_tensor(positions(config.offsets, config.positions)), persistent=False
        )

    def _embed(self, latents: Tensor, times: Tensor) -> Tensor:
        """(B, S, 2, 16) latents at temporal indices ``times`` (S,) → (B, 2S, width) tokens."""
        b, s = latents.shape[:2]
        pos = sinusoidal_embedding(times.to(self.side.dtype), self.config.width)  # (S, D)
        h = self.inp(latents) + pos[None, :, None, :] + self.side[None, None]
        return h.reshape(b, s * TOKENS_PER_CHUNK, self.config.width)

    def forward(
        self,
        x: Tensor,
        t: Tensor,
        words: Tensor,
        *,
        memory: Tensor | None = None,
        history: Tensor | None = None,
        history_mask: Tensor | None = None,
    ) -> Tensor:
        cfg = self.config
        if not isinstance(x, Tensor) or tuple(x.shape[1:]) != (cfg.slots, TOKENS_PER_CHUNK, LATENT_DIM):
            raise ValueError(
                f"x must have shape (B, {cfg.slots}, {TOKENS_PER_CHUNK}, {LATENT_DIM}); "
                f"got {tuple(getattr(x, 'shape', ()))}"
            )
        b = x.shape[0]
        if not isinstance(t, Tensor) or tuple(t.shape) != (b,):
            raise ValueError(f"t must be a tensor of shape ({b},); got {tuple(getattr(t, 'shape', ()))}")
        if cfg.history == "former":
            if not isinstance(memory, Tensor) or tuple(memory.shape) != (b, cfg.memory_tokens, cfg.width):
                raise ValueError(
                    f"memory must be h_T of shape ({b}, {cfg.memory_tokens}, {cfg.width}); "
                    f"got {tuple(getattr(memory, 'shape', ()))}"
                )
        elif memory is not None:
            raise ValueError(
                f"memory is only taken in history mode 'former'; this generator's is {cfg.history!r}"
            )
        if cfg.history != "raw" and (history is not None or history_mask is not None):
            raise ValueError(
                f"history is only taken in history mode 'raw'; this generator's is {cfg.history!r}"
            )

        tokens = self._embed(x, self.slot_positions)
        self_mask = None
        n_history = 0
        if cfg.history == "raw":
            if history is None:
                history = x.new_zeros(b, 0, TOKENS_PER_CHUNK, LATENT_DIM)
            if (
                not isinstance(history, Tensor)
                or history.dim() != 4
                or history.shape[0] != b
                or tuple(history.shape[2:]) != (TOKENS_PER_CHUNK, LATENT_DIM)
            ):
                raise ValueError(
                    f"history must have shape ({b}, H, {TOKENS_PER_CHUNK}, {LATENT_DIM}); "
                    f"got {tuple(getattr(history, 'shape', ()))}"
                )
            n_history = history.shape[1]
            if history_mask is None:
                history_mask = torch.ones(b, n_history, dtype=torch.bool, device=x.device)
            if history_mask.dtype != torch.bool or tuple(history_mask.shape) != (b, n_history):
                raise ValueError(f"history_mask must be a bool tensor of shape ({b}, {n_history})")
            # history chunk j of H sits at time j − H (the reference starts at 0)
            times = torch.arange(-n_history, 0, device=x.device)
            tokens = torch.cat([self._embed(history, times), tokens], dim=1)
            clip_keys = torch.ones(b, cfg.tokens, dtype=torch.bool, device=x.device)
            keys = torch.cat([history_mask.repeat_interleave(TOKENS_PER_CHUNK, dim=1), clip_keys], dim=1)
            self_mask = keys[:, None, None, :]
        c = self.time(t.to(tokens.dtype))
        word_features, word_mask = self.words(words)
        for block in self.blocks:
            tokens = block(tokens, c, word_features, word_mask, memory, self_mask)
        tokens = tokens[:, TOKENS_PER_CHUNK * n_history :]
        v = self.out(self.out_norm(tokens))
        return v.view(b, cfg.slots, TOKENS_PER_CHUNK, LATENT_DIM)


def load_stage(model: SparseVideoGenerator, earlier: SparseVideoGenerator) -> list[str]:
    """Copy every parameter ``earlier`` has into ``model`` (Stage 1 → Stage 2: the history layers stay new).

    Returns the names of ``model``'s parameters that ``earlier`` did not have. Shapes must agree.
    """
    missing, unexpected = model.load_state_dict(earlier.state_dict(), strict=False)
    if unexpected:
        raise ValueError(f"earlier has parameters the model lacks: {unexpected}")
    return list(missing)


def flow_loss(
    model: SparseVideoGenerator,
    clip: Tensor,
    words: Tensor,
    *,
    generator: torch.Generator,
    memory: Tensor | None = None,
    history: Tensor | None = None,
    history_mask: Tensor | None = None,
    reference: bool = True,
) -> Tensor:
    """The rectified-flow loss of Stages 0–2: ``E_{t,ε} ‖u_θ(x_t, t, …) − (ε − x₀)‖²`` on the future slots.

    ``clip`` (B, S, 2, 16) holds the clean latents x₀ (reference first). One ``t ~ U(0, 1)`` per clip.
    With ``reference=True`` (image-to-video, Stages 1–2) the reference slots stay clean in ``x_t`` and out
    of the loss; with ``False`` (text-to-video, Stage 0) every slot is noised and trained.
    """
    b = clip.shape[0]
    t = torch.rand(b, generator=generator, dtype=clip.dtype).to(clip.device)
    eps = torch.randn(clip.shape, generator=generator, dtype=clip.dtype).to(clip.device)
    tt = t[:, None, None, None]
    x_t = (1 - tt) * clip + tt * eps
    first = REFERENCE_CHUNKS if reference else 0
    if reference:
        x_t = torch.cat([clip[:, :first], x_t[:, first:]], dim=1)
    u = model(x_t, t, words, memory=memory, history=history, history_mask=history_mask)
    return F.mse_loss(u[:, first:], (eps - clip)[:, first:])


__all__ = [
    "HISTORY_MODES",
    "POSITION_MODES",
    "TOKENS_PER_CHUNK",
    "GeneratorBlock",
    "GeneratorConfig",
    "SparseVideoGenerator",
    "flow_loss",
    "load_stage",
]
