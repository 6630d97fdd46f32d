"""The parts GDN, SDM and Mamba-2 share: the decay gate, the short causal convolution, the gated RMSNorm.

Decay gate (one scalar per head, the FLA/Mamba-2 parametrisation):

    g_t = -exp(A_log) · softplus(w_aᵀ x_t + b_dt),    α_t = exp(g_t) ∈ (0, 1)

initialised with ``A ~ U(0, 16)`` stored as ``A_log = log A`` and ``dt ~ log-uniform[1e-3, 1e-1]`` (clamped
at 1e-4) stored through the inverse softplus ``b_dt = dt + log(-expm1(-dt))``, so that the initial decays
are moderate. Neither ``A_log`` nor ``b_dt`` is weight-decayed (:data:`NO_DECAY_NAMES`).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

#: Parameter names (last component) the released optimiser exempts from weight decay.
NO_DECAY_NAMES = ("A_log", "dt_bias")


class DecayGate(nn.Module):
    """``x (B, T, D) ↦ g (B, T, H)``, the log forget gate ``g_t = -exp(A_log)·softplus(w_aᵀx_t + b_dt)``."""

    def __init__(self, width: int, heads: int, *, bias: bool = False):
        super().__init__()
        self.proj = nn.Linear(width, heads, bias=bias)
        self.A_log = nn.Parameter(torch.empty(heads))
        self.dt_bias = nn.Parameter(torch.empty(heads))
        self.reset_gate()

    def reset_gate(self) -> None:
        """The FLA initialisation of ``A_log`` and ``dt_bias`` (drawn from torch's global generator)."""
        heads = self.A_log.numel()
        with torch.no_grad():
            self.A_log.copy_(torch.empty(heads).uniform_(0, 16).log())
            dt = torch.exp(torch.rand(heads) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
            dt = dt.clamp(min=1e-4)
            self.dt_bias.copy_(dt + torch.log(-torch.expm1(-dt)))

    def step_size(self, x: Tensor) -> Tensor:
        """``dt_t = softplus(w_aᵀ x_t + b_dt)`` ``(B, T, H)`` (Mamba-2 also scales its input by it)."""
        return F.softplus(self.proj(x) + self.dt_bias)

    def forward(self, x: Tensor) -> Tensor:
        return -self.A_log.exp() * self.step_size(x)


class ShortConv(nn.Module):
    """Causal depthwise convolution of width ``kernel`` over time: ``y_t = Σ_{j<kernel} w_j ⊙ x_{t-j}``."""

    def __init__(self, channels: int, kernel: int = 4):
        super().__init__()
        self.kernel = kernel
        self.conv = nn.Conv1d(channels, channels, kernel, groups=channels, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        """``x (B, T, C) ↦ (B, T, C)``; position ``t`` sees ``t - kernel + 1 … t`` only."""
        h = F.pad(x.transpose(1, 2), (self.kernel - 1, 0))
        return self.conv(h).transpose(1, 2)


class GatedRMSNorm(nn.Module):
    """``RMSNorm(o) ⊙ SiLU(z)`` per head: ``o / sqrt(mean(o²) + ε) · w ⊙ SiLU(z)`` (GDN, Mamba-2)."""

    def __init__(self, head_dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(head_dim))
        self.eps = eps

    def forward(self, o: Tensor, z: Tensor) -> Tensor:
        """o, z: ``(..., head_dim)``."""
        normed = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight
        return normed * F.silu(z)


def l2_normalise(x: Tensor, eps: float = 1e-6) -> Tensor:
    """``x / max(‖x‖₂, ε)`` along the last axis (GDN's query and key normalisation)."""
    return x / x.norm(dim=-1, keepdim=True).clamp(min=eps)
