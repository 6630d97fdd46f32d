"""The declared cost model: multiply-adds of the matrix products of one decision's video generation.

The paper's speed claims (sparse 1.7×, distillation 9.6×, 27× in all, a flat latency with the Former)
are GPU wall-clock ratios. On a shared 2-core CPU, wall clock mostly measures the machine's load, so the
chapter decides those claims with this count, fixed before any run, and shows interleaved wall-clock
medians beside it (:mod:`neurips26.timing`).

What is counted: every multiply-add of a matrix product the code performs (a linear layer over ``n`` rows
costs ``n · in · out``; attention with ``T`` queries and ``S`` keys of width ``D`` costs ``2 T S D`` for
the scores and the weighted sum). Not counted: element-wise work (norms, activations, softmax, adds),
which is small at these widths and memory-bound on real hardware. A unit test checks the count against
PyTorch's FLOP counter on the real modules (FLOPs = 2 × multiply-adds).

One decision's video generation = (the Former once, in Former mode) + ``steps`` generator forwards; the
clip has ``2 (2 + F)`` tokens for ``F`` future chunks, raw history adds ``2 H`` tokens to every forward.
Symbols: ``D`` width, ``F_h`` MLP hidden width, ``L`` instruction words, ``M`` memory tokens, ``P``
pseudo-chunks.
"""

from __future__ import annotations

from dataclasses import dataclass

from neurips26.sparsevideonav.codec import LATENT_DIM
from neurips26.sparsevideonav.former import FormerConfig
from neurips26.sparsevideonav.generator import TOKENS_PER_CHUNK, GeneratorConfig
from neurips26.validation import check_int

FREQUENCY_DIM = 256  # TimestepEmbedding's sinusoidal features


def word_encoder_macs(width: int, words: int) -> int:
    """One pre-norm block over ``L`` words: QKV and output (4LD²), attention (2L²D), MLP 2D wide (4LD²)."""
    d, n = width, words
    return 8 * n * d * d + 2 * n * n * d


def generator_macs(config: GeneratorConfig, *, words: int, history_chunks: int = 0) -> int:
    """Multiply-adds of one generator forward (one denoising step) for one clip.

    ``history_chunks`` counts only in raw mode (those tokens join the sequence).
    """
    if not isinstance(config, GeneratorConfig):
        raise TypeError(f"config must be a GeneratorConfig; got {type(config).__name__}")
    words = check_int("words", words, minimum=1)
    h = check_int("history_chunks", history_chunks, minimum=0) if config.history == "raw" else 0
    d, f, m = config.width, config.mlp_hidden, config.memory_tokens
    clip = config.tokens
    t = clip + TOKENS_PER_CHUNK * h  # tokens in the self-attention sequence
    total = t * LATENT_DIM * d  # input projection (history and clip)
    total += FREQUENCY_DIM * d + d * d  # timestep embedding
    total += word_encoder_macs(d, words)
    per_block = d * 6 * d  # AdaLN modulation
    per_block += 4 * t * d * d + 2 * t * t * d  # self-attention
    per_block += 2 * t * d * f  # MLP
    per_block += 2 * t * d * d + 2 * words * d * d + 2 * t * words * d  # word cross-attention
    if config.history == "former":
        per_block += 2 * m * d * d  # the h_T MLP
        per_block += 2 * t * d * d + 2 * m * d * d + 2 * t * m * d  # history cross-attention
    total += config.depth * per_block
    total += clip * d * LATENT_DIM  # output head (clip tokens only)
    return total


def former_macs(config: FormerConfig, *, words: int, history_chunks: int) -> int:
    """Multiply-adds of one Former pass over ``H`` history chunks (module :mod:`~.former`)."""
    if not isinstance(config, FormerConfig):
        raise TypeError(f"config must be a FormerConfig; got {type(config).__name__}")
    words = check_int("words", words, minimum=1)
    h = check_int("history_chunks", history_chunks, minimum=0)
    d, p = config.width, config.pseudo_chunks
    q = config.memory_tokens
    n = TOKENS_PER_CHUNK * h
    total = word_encoder_macs(d, words)
    total += n * LATENT_DIM * d + n * d * d + h * d * d  # two linear maps, chunk-index map
    film = 3 * words * d * d  # (γ, β) MLP on the words: D → D → 2D
    per_q = film + 2 * q * d * 4 * d  # FiLM, FFN
    if h:  # an empty history skips the cross-attention
        per_q += 2 * q * d * d + n * 2 * d * d + 2 * q * n * d
    total += config.q_layers * per_q
    k = TOKENS_PER_CHUNK
    # per pseudo-chunk: k queries (q, out: 2kD²) over 2k keys (K and V: 4kD²; scores, sum: 4k²D)
    spatial = p * (6 * k * d * d + 4 * k * k * d)
    temporal = 4 * k * p * d * d + 2 * k * p * p * d  # per half: QKV + out, scores + weighted sum
    per_v = spatial + temporal + film + 2 * k * p * d * 4 * d
    total += config.v_layers * per_v
    return total


@dataclass(frozen=True)
class DecisionCost:
    """Multiply-adds of one decision's video generation: ``former`` once, ``steps × per_step``."""

    former: int
    per_step: int
    steps: int

    @property
    def total(self) -> int:
        return self.former + self.steps * self.per_step


def decision_cost(
    config: GeneratorConfig,
    *,
    steps: int,
    words: int,
    history_chunks: int,
    former: FormerConfig | None = None,
) -> DecisionCost:
    """The cost of one decision: Former (in Former mode; ``former`` then required) + ``steps`` forwards."""
    steps = check_int("steps", steps, minimum=1)
    history_chunks = check_int("history_chunks", history_chunks, minimum=0)
    former_part = 0
    if config.history == "former":
        if former is None:
            raise ValueError("former must be given for a generator in history mode 'former'")
        former_part = former_macs(former, words=words, history_chunks=history_chunks)
    per_step = generator_macs(config, words=words, history_chunks=history_chunks)
    return DecisionCost(former=former_part, per_step=per_step, steps=steps)


__all__ = [
    "FREQUENCY_DIM",
    "DecisionCost",
    "decision_cost",
    "former_macs",
    "generator_macs",
    "word_encoder_macs",
]
