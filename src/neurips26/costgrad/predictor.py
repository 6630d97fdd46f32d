"""The token world model: a small transformer that predicts the next frame's tokens from the current
frame's tokens and one planner action, on any subset of the token grid.

Three ways to let the action in (the chapter's architecture study):

- ``"adaln"``: AdaLN-Zero blocks (:class:`~neurips26.nn.AdaLNZeroBlock`); the action's embedding modulates
  every token's LayerNorm and gates in every block (the paper's main predictor);
- ``"concat"``: the action ``π(a)`` is concatenated to every token's channels once, at the input,
  ``x_i = W [z_i; a] + p_i``, then plain pre-norm blocks (:class:`~neurips26.nn.ViTBlock`; DINO-WM's
  predictor);
- ``"incontext"``: one extra action token per block (:class:`~neurips26.nn.ConcatConditionedBlock`).

Each kept token keeps its position: its learned position vector is looked up by its index in the full grid
(:class:`~neurips26.nn.LearnedPositions`), so a forward on the tokens ``S`` with positions ``S`` is the
sparse forward the planner uses. One context frame; the head predicts each token's change (``residual``,
our choice: zero-initialised, so the untrained model predicts "nothing moves", and autoregressive rollouts
stay near the data) or, with ``residual=False``, the next tokens directly.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from neurips26.nn import (
    ConditionedTransformer,
    ConditionedTransformerConfig,
    LearnedPositions,
    ViTBlock,
)
from neurips26.validation import check_choice, check_float, check_int, check_seed

CONDITIONINGS = ("adaln", "concat", "incontext")


@dataclass(frozen=True)
class PredictorSpec:
    """Sizes of the predictor and its training recipe (one-step MSE, AdamW)."""

    cond: str = "adaln"
    tokens: int = 64
    token_dim: int = 32
    action_dim: int = 4
    width: int = 32
    depth: int = 2
    heads: int = 4
    mlp_ratio: float = 4.0
    steps: int = 600
    batch: int = 32
    lr: float = 5e-4
    seed: int = 0
    residual: bool = True

    def __post_init__(self) -> None:
        check_choice("cond", self.cond, CONDITIONINGS)
        for field in ("tokens", "token_dim", "action_dim", "width", "depth", "heads", "steps", "batch"):
            check_int(field, getattr(self, field), minimum=1)
        check_float("mlp_ratio", self.mlp_ratio, minimum=0.0, strict_min=True)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_seed("seed", self.seed)
        if self.width % self.heads:
            raise ValueError(f"heads ({self.heads}) must divide width ({self.width})")

    @property
    def mlp_hidden(self) -> int:
        return max(1, round(self.mlp_ratio * self.width))


class TokenPredictor(nn.Module):
    """``forward(z (B, K, D), action (B, A), positions (K,) or (B, K) | None) → (B, K, D)`` (module
    doc); ``positions=None`` means the full grid in order."""

    def __init__(self, spec: PredictorSpec) -> None:
        super().__init__()
        if not isinstance(spec, PredictorSpec):
            raise TypeError(f"spec must be a PredictorSpec; got {type(spec).__name__}")
        self.spec = spec
        self.positions = LearnedPositions(spec.tokens, spec.width)
        if spec.cond == "concat":
            self.embed = nn.Linear(spec.token_dim + spec.action_dim, spec.width)
            self.blocks = nn.ModuleList(
                ViTBlock(spec.width, spec.heads, spec.mlp_hidden) for _ in range(spec.depth)
            )
            self.norm = nn.LayerNorm(spec.width)
        else:
            self.embed = nn.Linear(spec.token_dim, spec.width)
            self.action = nn.Linear(spec.action_dim, spec.width)
            config = ConditionedTransformerConfig(
                width=spec.width,
                heads=spec.heads,
                cond_dim=spec.width,
                depth=spec.depth,
                mlp_ratio=spec.mlp_ratio,
                conditioning="adaln" if spec.cond == "adaln" else "concat",
            )
            self.body = ConditionedTransformer(config)
        self.head = nn.Linear(spec.width, spec.token_dim)
        self._init_weights(spec.seed)
        if spec.residual:  # start as "nothing moves": the head's output is the change of each token
            nn.init.zeros_(self.head.weight)
            nn.init.zeros_(self.head.bias)

    def _init_weights(self, seed: int) -> None:
        """Seeded: linear weights ``N(0, 1/fan_in)``, position vectors ``N(0, 0.02²)``, biases 0; the
        AdaLN-Zero modulations stay zero (every block starts as the identity)."""
        generator = torch.Generator().manual_seed(seed)
        for name, module in self.named_modules():
            if name.endswith("modulation"):
                continue
            if isinstance(module, nn.Linear):
                nn.init.normal_(module.weight, 0.0, module.in_features**-0.5, generator=generator)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, 0.0, 0.02, generator=generator)

    def _check(self, z: torch.Tensor, action: torch.Tensor, positions: torch.Tensor | None) -> torch.Tensor:
        s = self.spec
        if not isinstance(z, torch.Tensor) or not isinstance(action, torch.Tensor):
            raise TypeError("z and action must be torch.Tensor")
        if z.ndim != 3 or z.shape[-1] != s.token_dim:
            raise ValueError(f"z must have shape (batch, tokens, {s.token_dim}); got {tuple(z.shape)}")
        if action.shape != (z.shape[0], s.action_dim):
            raise ValueError(
                f"action must have shape ({z.shape[0]}, {s.action_dim}); got {tuple(action.shape)}"
            )
        if positions is None:
            if z.shape[1] != s.tokens:
                raise ValueError(f"positions are needed for a subset of {z.shape[1]} of {s.tokens} tokens")
            return torch.arange(s.tokens, device=z.device)
        if positions.shape[-1] != z.shape[1] or positions.ndim not in (1, 2):
            raise ValueError(f"positions must have shape ({z.shape[1]},) or (batch, {z.shape[1]})")
        return positions

    def forward(
        self,
        z: torch.Tensor,
        action: torch.Tensor,
        positions: torch.Tensor | None = None,
        *,
        mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The next tokens; ``mask`` (broadcasting to ``(B, heads, K, K)``, True = may attend) hides keys
        in every block (the full grid with keys outside ``S`` hidden equals the sparse forward on ``S``)."""
        return self.run(z, action, positions, mask=mask)[0]

    def run(
        self,
        z: torch.Tensor,
        action: torch.Tensor,
        positions: torch.Tensor | None = None,
        *,
        mask: torch.Tensor | None = None,
        attentions: bool = False,
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """The next tokens and, with ``attentions``, every block's attention weights ``(B, heads, K, K)``
        over the tokens (the in-context block's rows exclude its action token's share)."""
        positions = self._check(z, action, positions)
        dtype = self.head.weight.dtype
        z, action = z.to(dtype), action.to(dtype)
        pos = self.positions(positions)
        weights: list[torch.Tensor] = []
        if self.spec.cond == "concat":
            a = action[:, None, :].expand(-1, z.shape[1], -1)
            x = self.embed(torch.cat([z, a], dim=-1)) + pos
            for block in self.blocks:
                x, w = block(x, attentions, mask=mask)
                if attentions:
                    weights.append(w)
            x = self.norm(x)
        else:
            out = self.body(self.embed(z) + pos, self.action(action), mask=mask, return_attentions=attentions)
            x, weights = out if attentions else (out, [])
        return (z + self.head(x) if self.spec.residual else self.head(x)), weights
