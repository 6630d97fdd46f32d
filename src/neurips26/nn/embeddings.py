"""Embeddings of scalars and positions: sinusoidal features, time steps, absolute positions, RoPE.

Three ways to tell a network *where* or *when* it is:

- **Sinusoidal features** (Vaswani et al., 2017) map a scalar ``v`` (a position, a diffusion time step)
  to ``[sin(v ω_0), …, sin(v ω_{h-1}), cos(v ω_0), …, cos(v ω_{h-1})]`` with geometric frequencies
  ``ω_i = P^{-i/h}``, ``h = dim/2`` and ``P = max_period``. Nearby values get nearby features and every
  period from ``2π`` to ``2πP`` is represented.
- **Absolute positions** add a vector per position to the token embedding: learned
  (:class:`LearnedPositions`, GPT-2) or the fixed sinusoidal table (:class:`SinusoidalPositions`).
- **Rotary positions** (RoPE, Su et al., 2021) rotate queries and keys instead: the pair
  ``(x_{2i}, x_{2i+1})`` of a head vector at position ``p`` is rotated by the angle ``p θ_i`` with
  ``θ_i = b^{-2i/D}``. Rotations preserve norms and ``⟨R_p q, R_s k⟩ = ⟨q, R_{s-p} k⟩``, so attention
  scores depend on the *difference* of positions only (:func:`apply_rope`).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from neurips26.validation import check_float, check_int


def _check_integer_tensor(name: str, value: object) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(value).__name__}")
    if value.dtype.is_floating_point or value.dtype.is_complex or value.dtype == torch.bool:
        raise TypeError(f"{name} must hold integers; got dtype {value.dtype}")
    return value


def check_ids(name: str, ids: object, size: int) -> Tensor:
    """An integer tensor of ids (positions, tokens), each in ``[0, size)``."""
    ids = _check_integer_tensor(name, ids)
    if ids.numel() and (ids.min() < 0 or ids.max() >= size):
        raise ValueError(
            f"{name} must lie in [0, {size}); got values in [{int(ids.min())}, {int(ids.max())}]"
        )
    return ids


def sinusoidal_embedding(values: Tensor, dim: int, *, max_period: float = 10_000.0) -> Tensor:
    """Sinusoidal features of scalars: shape ``(*values.shape,)`` → ``(*values.shape, dim)``.

    ``e(v) = [sin(v ω_i)]_{i<h} ⧺ [cos(v ω_i)]_{i<h}`` with ``ω_i = max_period^{-i/h}``, ``h = dim/2``.
    ``values`` may be integer (positions, discrete time steps) or real (continuous time).
    """
    if not isinstance(values, Tensor):
        raise TypeError(f"values must be a torch.Tensor; got {type(values).__name__}")
    dim = check_int("dim", dim, minimum=2)
    if dim % 2:
        raise ValueError(f"dim must be even (sin and cos halves); got {dim}")
    max_period = check_float("max_period", max_period, minimum=1.0, strict_min=True)
    half = dim // 2
    dtype = values.dtype if values.dtype.is_floating_point else torch.get_default_dtype()
    # ω_i = P^{-i/h}, i = 0 … h-1
    frequencies = torch.exp(
        -math.log(max_period) * torch.arange(half, dtype=dtype, device=values.device) / half
    )
    angles = values.to(dtype).unsqueeze(-1) * frequencies  # (..., h)
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)


class TimestepEmbedding(nn.Module):
    """Time step ``t`` → conditioning vector: sinusoidal features, then a two-layer SiLU MLP (DiT).

    ``t`` of shape ``(B,)``; returns ``(B, width)``. Continuous times in ``[0, 1]`` should be multiplied
    by ``scale`` (e.g. 1000) so the features separate nearby times; integer steps use ``scale=1``.
    Parameters come from PyTorch's global generator (seed it with ``seed_everything``).
    """

    def __init__(
        self, width: int, *, frequency_dim: int = 256, max_period: float = 10_000.0, scale: float = 1.0
    ):
        super().__init__()
        self.width = check_int("width", width, minimum=1)
        self.frequency_dim = check_int("frequency_dim", frequency_dim, minimum=2)
        if self.frequency_dim % 2:
            raise ValueError(f"frequency_dim must be even; got {frequency_dim}")
        self.max_period = check_float("max_period", max_period, minimum=1.0, strict_min=True)
        self.scale = check_float("scale", scale, minimum=0.0, strict_min=True)
        self.mlp = nn.Sequential(
            nn.Linear(self.frequency_dim, self.width), nn.SiLU(), nn.Linear(self.width, self.width)
        )

    def forward(self, t: Tensor) -> Tensor:
        if not isinstance(t, Tensor) or t.dim() != 1:
            raise ValueError(f"t must be a 1-D tensor of shape (B,); got {getattr(t, 'shape', type(t))}")
        features = sinusoidal_embedding(t * self.scale, self.frequency_dim, max_period=self.max_period)
        return self.mlp(features.to(self.mlp[0].weight.dtype))


class LearnedPositions(nn.Module):
    """A learned vector per absolute position (GPT-2): ids ``(..., T)`` → ``(..., T, width)``."""

    def __init__(self, context: int, width: int):
        super().__init__()
        self.context = check_int("context", context, minimum=1)
        self.table = nn.Embedding(self.context, check_int("width", width, minimum=1))

    def forward(self, positions: Tensor) -> Tensor:
        return self.table(check_ids("positions", positions, self.context))


class SinusoidalPositions(nn.Module):
    """The fixed sinusoidal vector of each absolute position: ids ``(..., T)`` → ``(..., T, width)``.

    The table is a non-persistent buffer: it is rebuilt, not stored in checkpoints.
    """

    def __init__(self, context: int, width: int, *, max_period: float = 10_000.0):
        super().__init__()
        self.context = check_int("context", context, minimum=1)
        table = sinusoidal_embedding(torch.arange(self.context), width, max_period=max_period)
        self.register_buffer("table", table, persistent=False)

    def forward(self, positions: Tensor) -> Tensor:
        return self.table[check_ids("positions", positions, self.context)]


def rope_tables(context: int, head_dim: int, *, base: float = 10_000.0) -> tuple[Tensor, Tensor]:
    """``cos(p θ_i)`` and ``sin(p θ_i)`` for ``p < context``, ``θ_i = base^{-2i/D}``; each ``(context, D/2)``.

    Computed in float64, then cast, so that long contexts keep accurate angles.
    """
    context = check_int("context", context, minimum=1)
    head_dim = check_int("head_dim", head_dim, minimum=2)
    if head_dim % 2:
        raise ValueError(f"head_dim must be even for RoPE (it rotates pairs); got {head_dim}")
    base = check_float("base", base, minimum=1.0, strict_min=True)
    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)  # (D/2,)
    angles = torch.arange(context, dtype=torch.float64)[:, None] * theta  # p θ_i, (context, D/2)
    dtype = torch.get_default_dtype()
    return torch.cos(angles).to(dtype), torch.sin(angles).to(dtype)


def apply_rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate each pair ``(x_{2i}, x_{2i+1})`` of ``x`` by its angle ``p θ_i``.

    ``x``: ``(B, H, T, D)``; ``cos``, ``sin``: ``(T, D/2)`` (positions shared by the batch) or
    ``(B, T, D/2)`` (per-sequence positions). In complex form ``z_i = x_{2i} + i x_{2i+1}`` becomes
    ``z_i e^{i p θ_i}``:

        x'_{2i}   = x_{2i} cos(p θ_i) − x_{2i+1} sin(p θ_i)
        x'_{2i+1} = x_{2i} sin(p θ_i) + x_{2i+1} cos(p θ_i)
    """
    if x.dim() != 4 or x.shape[-1] % 2:
        raise ValueError(f"x must have shape (B, H, T, D) with D even; got {tuple(x.shape)}")
    if cos.shape != sin.shape or cos.dim() not in (2, 3) or cos.shape[-1] != x.shape[-1] // 2:
        raise ValueError(
            f"cos and sin must both have shape (T, D/2) or (B, T, D/2) with D/2 = {x.shape[-1] // 2}; "
            f"got {tuple(cos.shape)} and {tuple(sin.shape)}"
        )
    if cos.dim() == 3:  # (B, T, D/2) → (B, 1, T, D/2): the same rotation for every head
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    even, odd = x[..., 0::2], x[..., 1::2]
    rotated = torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1)
    return rotated.flatten(-2)  # interleave back: (…, D/2, 2) → (…, D)


class RotaryEmbedding(nn.Module):
    """RoPE tables for one head size, looked up by position id: ``(T,)`` or ``(B, T)`` → ``cos, sin``."""

    def __init__(self, head_dim: int, context: int, *, base: float = 10_000.0):
        super().__init__()
        self.head_dim = check_int("head_dim", head_dim, minimum=2)
        self.context = check_int("context", context, minimum=1)
        cos, sin = rope_tables(self.context, self.head_dim, base=base)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, positions: Tensor) -> tuple[Tensor, Tensor]:
        positions = check_ids("positions", positions, self.context)
        return self.cos[positions], self.sin[positions]
