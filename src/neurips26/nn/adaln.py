"""Conditioned transformer blocks: AdaLN-Zero (DiT) and the matched concat-token variant.

A sequence of tokens ``x`` (B, T, D) is processed under a conditioning vector ``c`` (B, C) — a diffusion
time step, an action, a camera pose. Two ways to let ``c`` in, with the same ``(x, c)`` interface so that
chapter 13 can swap one for the other:

* **AdaLN-Zero** (Peebles & Xie, *Scalable Diffusion Models with Transformers*, 2023, §3.2). LayerNorm has
  no learned affine; instead a linear map of ``c`` gives, per sub-layer, a shift ``β``, a scale ``γ`` and a
  gate ``α``::

      (β1, γ1, α1, β2, γ2, α2) = W · SiLU(c) + b                       (6 vectors of width D)
      x ← x + α1 ⊙ Attn(LN(x) ⊙ (1 + γ1) + β1)
      x ← x + α2 ⊙ MLP (LN(x) ⊙ (1 + γ2) + β2)

  ``W`` and ``b`` start at zero, so every gate is zero and the block is exactly the identity at
  initialisation: a deep stack starts as the identity map and learns to depart from it.

* **Concat (in-context) conditioning** (the "in-context conditioning" of the same paper). Each block
  projects ``c`` to **one extra token**, prepends it to the sequence, runs an ordinary pre-norm block (affine
  LayerNorm, attention, MLP) over the T + 1 tokens and drops the extra token again. The condition reaches the
  sequence only through attention. The token is re-injected in every block (not once at the input) so the
  block is a drop-in replacement for the AdaLN-Zero block.

**Matched budget.** AdaLN-Zero spends ``6·C·D + 6·D`` parameters a block on its modulation; the concat block
spends ``C·D + D`` on its token projection and ``4·D`` on its LayerNorm affines. The concat block's MLP is
widened by :func:`concat_mlp_hidden` to absorb the difference, so the two blocks differ by fewer than
``2·D + 1`` parameters (one hidden unit of the MLP) at any width.

**Masks and attention maps.** Attention is :class:`neurips26.nn.attention.MultiHeadAttention` (fused
``torch.nn.functional.scaled_dot_product_attention``; no cache here). Every ``forward`` takes an optional
``mask`` over the T sequence tokens, in that module's convention: boolean (True = the query may attend to
the key) or additive (0 = attend, −∞ = hidden), any shape that broadcasts to ``(B, heads, T, T)``; every
query must keep at least one visible key (with AdaLN-Zero; in the concat block the condition token is always
visible). A mask that hides the keys outside a subset S makes the outputs at S exactly those of running on
``x[:, S]`` alone, which is how chapter 13 checks a gather-based sparse forward. With ``need_weights=True``
(``return_attentions=True`` for the stack) the attention weights come back too, ``(B, heads, T, T)`` over the
sequence tokens; they are computed by the explicit softmax of the attention module instead of the fused
kernel, so the outputs then agree with the default path to rounding, not bit for bit. ``mask=None`` and
``need_weights=False`` is exactly the unmasked computation.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from neurips26.nn.attention import MultiHeadAttention, check_mask
from neurips26.validation import check_choice, check_float, check_int

CONDITIONINGS: tuple[str, ...] = ("adaln", "concat")


@dataclass(frozen=True)
class ConditionedTransformerConfig:
    """Sizes of a conditioned transformer.

    width: token width D; heads: attention heads (must divide D); cond_dim: width C of the conditioning
    vector; depth: number of blocks; mlp_ratio: MLP hidden width / D for the AdaLN-Zero block (the concat
    block's is widened to match, see :func:`concat_mlp_hidden`); conditioning: ``"adaln"`` or ``"concat"``.
    """

    width: int = 128
    heads: int = 4
    cond_dim: int = 64
    depth: int = 4
    mlp_ratio: float = 4.0
    conditioning: str = "adaln"

    def __post_init__(self) -> None:
        check_int("width", self.width, minimum=1)
        check_int("heads", self.heads, minimum=1)
        check_int("cond_dim", self.cond_dim, minimum=1)
        check_int("depth", self.depth, minimum=1)
        check_float("mlp_ratio", self.mlp_ratio, minimum=0.0, strict_min=True)
        check_choice("conditioning", self.conditioning, CONDITIONINGS)
        if self.width % self.heads:
            raise ValueError(f"heads ({self.heads}) must divide width ({self.width})")

    @property
    def mlp_hidden(self) -> int:
        """Hidden width of the AdaLN-Zero block's MLP: round(mlp_ratio · D), at least 1."""
        return max(1, round(self.mlp_ratio * self.width))


def concat_mlp_hidden(config: ConditionedTransformerConfig) -> int:
    """MLP hidden width that gives the concat block the AdaLN-Zero block's parameter count.

    Per block, AdaLN-Zero has ``6CD + 6D`` modulation parameters, the concat block ``CD + D`` (token
    projection) + ``4D`` (two LayerNorm affines); each MLP hidden unit costs ``2D + 1`` (weights in and out,
    one bias). The extra hidden units are ``round((5CD + D) / (2D + 1))``.
    """
    d, c = config.width, config.cond_dim
    extra = (6 * c * d + 6 * d) - (c * d + d + 4 * d)
    return config.mlp_hidden + round(extra / (2 * d + 1))


class _MLP(nn.Module):
    """Position-wise MLP, D → hidden → D with a GELU."""

    def __init__(self, width: int, hidden: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(width, hidden)
        self.fc2 = nn.Linear(hidden, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


def _modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """x ⊙ (1 + γ) + β, with (B, D) shift/scale broadcast over the T tokens of x (B, T, D)."""
    return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


def _check_inputs(x: torch.Tensor, c: torch.Tensor, width: int, cond_dim: int) -> None:
    if not isinstance(x, torch.Tensor) or not isinstance(c, torch.Tensor):
        raise TypeError("x and c must be torch.Tensor")
    if x.ndim != 3 or x.shape[-1] != width:
        raise ValueError(f"x must have shape (batch, tokens, {width}); got {tuple(x.shape)}")
    if c.ndim != 2 or c.shape != (x.shape[0], cond_dim):
        raise ValueError(f"c must have shape ({x.shape[0]}, {cond_dim}); got {tuple(c.shape)}")


def _check_block_args(
    x: torch.Tensor, mask: torch.Tensor | None, need_weights: bool, heads: int, name: str = "need_weights"
) -> None:
    """The flag must be a bool; ``mask`` None or broadcastable to (B, heads, T, T) (else a ValueError)."""
    if not isinstance(need_weights, bool):
        raise TypeError(f"{name} must be a bool; got {type(need_weights).__name__}")
    if mask is not None:
        check_mask(mask, (x.shape[0], heads, x.shape[1], x.shape[1]))


def _with_condition_token(mask: torch.Tensor, length: int) -> torch.Tensor:
    """Extend a mask over T sequence tokens to the T + 1 tokens ``[condition ; sequence]``.

    ``mask`` (already checked to broadcast to (B, H, T, T)) becomes (B', H', T + 1, T + 1), B' and H' its own
    batch and head sizes (1 or full). Column 0: every query may attend to the condition token. Row 0 (the
    condition token as query): itself, plus every key that some sequence query may attend to (``any`` over
    the rows of a boolean mask, the row-wise maximum of an additive one). The condition token's own output is
    discarded at the end of the block, so row 0 never changes the block's result; it only keeps that row's
    softmax finite.
    """
    m = mask.reshape((1,) * (4 - mask.dim()) + tuple(mask.shape))
    m = m.expand(m.shape[0], m.shape[1], length, length)
    is_bool = m.dtype == torch.bool
    out = m.new_full((m.shape[0], m.shape[1], length + 1, length + 1), True if is_bool else 0.0)
    out[..., 1:, 1:] = m
    out[..., 0, 1:] = m.any(dim=-2) if is_bool else m.amax(dim=-2)
    return out


class AdaLNZeroBlock(nn.Module):
    """DiT block with adaptive LayerNorm and zero-initialised gates; the identity at initialisation.

    forward(x (B, T, D), c (B, C), *, mask=None, need_weights=False) → (B, T, D), or ``(x, weights)`` with
    ``need_weights=True``, weights (B, heads, T, T) with rows summing to one (a masked key gets weight 0).
    Implements the two residual updates of the module docstring; ``mask`` (boolean, True = may attend, or
    additive; broadcasts to (B, heads, T, T)) goes to the attention. The gates are zero at initialisation, so
    the block is the identity then with or without a mask.
    """

    def __init__(self, config: ConditionedTransformerConfig) -> None:
        super().__init__()
        d = config.width
        self.config = config
        self.norm1 = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.attn = MultiHeadAttention(d, config.heads)
        self.norm2 = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.mlp = _MLP(d, config.mlp_hidden)
        # c → (β1, γ1, α1, β2, γ2, α2); zero weight and bias make α1 = α2 = 0 at init ("-Zero").
        self.modulation = nn.Linear(config.cond_dim, 6 * d)
        nn.init.zeros_(self.modulation.weight)
        nn.init.zeros_(self.modulation.bias)

    def forward(
        self,
        x: torch.Tensor,
        c: torch.Tensor,
        *,
        mask: torch.Tensor | None = None,
        need_weights: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        _check_inputs(x, c, self.config.width, self.config.cond_dim)
        _check_block_args(x, mask, need_weights, self.config.heads)
        shift1, scale1, gate1, shift2, scale2, gate2 = self.modulation(F.silu(c)).chunk(6, dim=-1)
        attended, weights = self.attn(
            _modulate(self.norm1(x), shift1, scale1), mask=mask, return_weights=need_weights
        )
        x = x + gate1.unsqueeze(1) * attended
        x = x + gate2.unsqueeze(1) * self.mlp(_modulate(self.norm2(x), shift2, scale2))
        return (x, weights) if need_weights else x


class ConcatConditionedBlock(nn.Module):
    """Pre-norm block that sees the condition as one extra token, prepended and removed again.

    forward(x (B, T, D), c (B, C), *, mask=None, need_weights=False) → (B, T, D)::

        z = [W_c c + b_c ; x]                    (B, T + 1, D)
        z ← z + Attn(LN1(z));  z ← z + MLP(LN2(z))
        return z[:, 1:]

    The MLP hidden width is :func:`concat_mlp_hidden`, matching the AdaLN-Zero block's parameter count.

    ``mask`` is over the T sequence tokens only (boolean, True = may attend, or additive; broadcasts to
    (B, heads, T, T)). It is extended to the T + 1 tokens so that **every query may always attend to the
    condition token** (the condition stays visible whatever the mask hides, and a query whose sequence keys
    are all hidden still has one key); the condition token's own row attends to itself and to every key that
    some sequence query may attend to (see :func:`_with_condition_token`; that row's output is dropped, so it
    does not change the result). A mask that hides the keys outside a subset S therefore gives, at S, the
    output of the block run on ``x[:, S]`` alone, condition token included.

    With ``need_weights=True`` it returns ``(x, weights)``, weights (B, heads, T, T) between the sequence
    tokens only: the condition token's row and column are dropped. Those rows do **not** sum to one; the
    mass missing from a row is the weight that query gave to the condition token. Masked keys get weight 0.
    """

    def __init__(self, config: ConditionedTransformerConfig) -> None:
        super().__init__()
        d = config.width
        self.config = config
        self.cond_token = nn.Linear(config.cond_dim, d)
        self.norm1 = nn.LayerNorm(d)
        self.attn = MultiHeadAttention(d, config.heads)
        self.norm2 = nn.LayerNorm(d)
        self.mlp = _MLP(d, concat_mlp_hidden(config))

    def forward(
        self,
        x: torch.Tensor,
        c: torch.Tensor,
        *,
        mask: torch.Tensor | None = None,
        need_weights: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        _check_inputs(x, c, self.config.width, self.config.cond_dim)
        _check_block_args(x, mask, need_weights, self.config.heads)
        if mask is not None:
            mask = _with_condition_token(mask, x.shape[1])  # (B', H', T + 1, T + 1)
        z = torch.cat([self.cond_token(c).unsqueeze(1), x], dim=1)  # (B, T + 1, D)
        attended, weights = self.attn(self.norm1(z), mask=mask, return_weights=need_weights)
        z = z + attended
        z = z + self.mlp(self.norm2(z))
        if need_weights:
            return z[:, 1:], weights[..., 1:, 1:]  # drop the condition token's row and column
        return z[:, 1:]


class ConditionedTransformer(nn.Module):
    """A stack of ``depth`` conditioned blocks and a final LayerNorm: (B, T, D), (B, C) → (B, T, D).

    With ``conditioning="adaln"`` the final LayerNorm is modulated too (shift and scale from a
    zero-initialised linear map of SiLU(c), the DiT final layer without its output projection), so the whole
    stack is exactly LayerNorm(x) at initialisation. With ``"concat"`` it is an ordinary affine LayerNorm.
    Token embedding and output head belong to the caller.

    ``forward(x, c, *, mask=None, return_attentions=False)``: ``mask`` (over the T tokens, see the blocks)
    goes to every block; with ``return_attentions=True`` it returns ``(x, [weights of each block])``, each
    (B, heads, T, T) as the block's ``need_weights=True`` gives it.
    """

    def __init__(self, config: ConditionedTransformerConfig) -> None:
        super().__init__()
        if not isinstance(config, ConditionedTransformerConfig):
            raise TypeError(f"config must be a ConditionedTransformerConfig; got {type(config).__name__}")
        self.config = config
        block = AdaLNZeroBlock if config.conditioning == "adaln" else ConcatConditionedBlock
        self.blocks = nn.ModuleList(block(config) for _ in range(config.depth))
        adaln = config.conditioning == "adaln"
        self.norm = nn.LayerNorm(config.width, elementwise_affine=not adaln, eps=1e-6)
        self.final_modulation = nn.Linear(config.cond_dim, 2 * config.width) if adaln else None
        if self.final_modulation is not None:
            nn.init.zeros_(self.final_modulation.weight)
            nn.init.zeros_(self.final_modulation.bias)

    def forward(
        self,
        x: torch.Tensor,
        c: torch.Tensor,
        *,
        mask: torch.Tensor | None = None,
        return_attentions: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor]]:
        _check_inputs(x, c, self.config.width, self.config.cond_dim)
        _check_block_args(x, mask, return_attentions, self.config.heads, "return_attentions")
        attentions = []
        for block in self.blocks:
            if return_attentions:
                x, weights = block(x, c, mask=mask, need_weights=True)
                attentions.append(weights)
            else:
                x = block(x, c, mask=mask)
        x = self.norm(x)
        if self.final_modulation is not None:
            shift, scale = self.final_modulation(F.silu(c)).chunk(2, dim=-1)
            x = _modulate(x, shift, scale)
        return (x, attentions) if return_attentions else x
