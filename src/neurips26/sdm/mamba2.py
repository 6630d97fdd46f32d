"""Mamba-2 (Dao & Gu, 2024): the scalar-decay linear RNN of the paper's comparisons, without the delta rule.

Per head, a state ``S ∈ R^{P × d_state}`` accumulates decayed outer products (no error correction):

    S_t = α_t S_{t-1} + (dt_t x_t) B_tᵀ,     y_t = S_t C_t + D ⊙ x_t

with ``α_t = e^{g_t}`` from the same decay gate as GDN (``g_t = -exp(A_log)·dt_t``), ``B_t, C_t`` of width
``d_state`` shared by the heads (one group), a causal convolution of width 4 and SiLU on ``x, B, C``, and the
gated RMSNorm ``RMSNorm(y) ⊙ SiLU(z)`` before the output projection. :func:`mamba2_recurrent` is the loop,
:func:`mamba2_parallel` its closed form ``y_t = e^{G_t} S_0 C_t + Σ_{u≤t} e^{G_t - G_u} (B_u·C_t) v_u``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neurips26.sdm.gates import DecayGate, GatedRMSNorm, ShortConv
from neurips26.sdm.gdn import _decay_matrix
from neurips26.sdm.shapes import check_tensor, heads_of
from neurips26.validation import check_int


def _check_inputs(q: Tensor, k: Tensor, v: Tensor, g: Tensor, S0: Tensor | None) -> None:
    check_tensor("q", q, min_dim=2)
    lead, T = q.shape[:-2], q.shape[-2]
    check_tensor("k", k, shape=q.shape)
    check_tensor("v", v, min_dim=2)
    if v.shape[:-1] != (*lead, T):
        raise ValueError(f"v must be (..., T, d_v) with (..., T) = {(*lead, T)}; got {tuple(v.shape)}")
    check_tensor("g", g, shape=(*lead, T))
    if S0 is not None:
        check_tensor("S0", S0, shape=(*lead, v.shape[-1], q.shape[-1]))


def mamba2_recurrent(
    q: Tensor, k: Tensor, v: Tensor, g: Tensor, S0: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """``S_t = e^{g_t} S_{t-1} + v_t k_tᵀ``, ``o_t = S_t q_t`` token by token.

    q, k: ``(..., T, d_state)``; v: ``(..., T, P)``; g: ``(..., T)``; S0: ``(..., P, d_state)`` or None.
    Returns ``(..., T, P)`` and the final state.
    """
    _check_inputs(q, k, v, g, S0)
    S = S0 if S0 is not None else v.new_zeros((*v.shape[:-2], v.shape[-1], k.shape[-1]))
    outs = []
    for t in range(q.shape[-2]):
        S = g[..., t, None, None].exp() * S + v[..., t, :, None] * k[..., t, None, :]
        outs.append((S @ q[..., t, :, None])[..., 0])
    return torch.stack(outs, dim=-2), S


def mamba2_parallel(
    q: Tensor, k: Tensor, v: Tensor, g: Tensor, S0: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """The same as :func:`mamba2_recurrent` in closed form (a decayed causal linear attention)."""
    _check_inputs(q, k, v, g, S0)
    G = g.cumsum(-1)
    out = (_decay_matrix(G, strict=False) * (q @ k.transpose(-1, -2))) @ v
    S = ((G[..., -1:] - G).exp()[..., None] * v).transpose(-1, -2) @ k
    if S0 is not None:
        out = out + G.exp()[..., None] * (q @ S0.transpose(-1, -2))
        S = S + G[..., -1, None, None].exp() * S0
    return out, S


class Mamba2(nn.Module):
    """The Mamba-2 mixer ``x (B, T, D) ↦ (B, T, D)``: ``heads`` heads of width ``D/heads``, state width
    ``state_dim`` (module doc). ``solver``: ``"parallel"`` (training) or ``"recurrent"``."""

    def __init__(self, width: int, heads: int, state_dim: int, *, solver: str = "parallel"):
        super().__init__()
        self.width = check_int("width", width, minimum=1)
        self.heads = heads_of(width, heads)
        self.state_dim = check_int("state_dim", state_dim, minimum=1)
        if solver not in ("parallel", "recurrent"):
            raise ValueError(f"solver must be 'parallel' or 'recurrent'; got {solver!r}")
        self.solver = solver
        self.head_dim = width // heads
        inner = width + 2 * state_dim  # x, B, C
        self.in_proj = nn.Linear(width, inner, bias=False)
        self.z_proj = nn.Linear(width, width, bias=False)
        self.conv = ShortConv(inner)
        self.decay = DecayGate(width, heads)
        self.D = nn.Parameter(torch.ones(heads))
        self.norm = GatedRMSNorm(self.head_dim)
        self.o_proj = nn.Linear(width, width, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        check_tensor("x", x, min_dim=3)
        B_, T, D = x.shape
        H = self.heads
        xbc = F.silu(self.conv(self.in_proj(x)))
        xs, Bt, Ct = xbc.split([D, self.state_dim, self.state_dim], dim=-1)
        xs = xs.view(B_, T, H, -1).transpose(1, 2)  # (B, H, T, P)
        dt = self.decay.step_size(x).transpose(1, 2)  # (B, H, T)
        g = -self.decay.A_log.exp()[:, None] * dt
        k = Bt.unsqueeze(1).expand(-1, H, -1, -1)
        q = Ct.unsqueeze(1).expand(-1, H, -1, -1)
        run = mamba2_parallel if self.solver == "parallel" else mamba2_recurrent
        y, _ = run(q, k, dt[..., None] * xs, g)
        y = y + self.D[:, None, None] * xs
        z = self.z_proj(x).view(B_, T, H, -1)
        return self.o_proj(self.norm(y.transpose(1, 2), z).reshape(B_, T, D))

    def state_floats(self) -> int:
        """``H · P · d_state``."""
        return self.heads * self.head_dim * self.state_dim

    def recurrence_macs(self) -> int:
        """Decay, outer product and read, ``P·d_state`` each per head."""
        return 3 * self.heads * self.head_dim * self.state_dim
