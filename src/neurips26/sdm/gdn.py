"""Gated DeltaNet (Yang et al., 2025): the dense-state baseline SDM is built from.

Per head, a state ``S ∈ R^{d_v × d_k}`` is an online least-squares memory of key→value pairs. Each token
decays it by ``α_t``, reads what the (ℓ2-normalised) key ``k_t`` retrieves, and corrects it towards
``v_t`` by a step ``β_t`` of the delta rule:

    S̃ = α_t S_{t-1},   r_t = S̃ k_t,   δ_t = β_t (v_t - r_t),   S_t = S̃ + δ_t k_tᵀ,   o_t = S_t q_t

i.e. ``S_t = α_t S_{t-1}(I - β_t k_t k_tᵀ) + β_t v_t k_tᵀ`` — one SGD step on ``½‖S k_t - v_t‖²``.

Two ways to compute it, equal up to rounding:

- :func:`gdn_recurrent`: the loop above (the definition; decoding).
- :func:`gdn_parallel`: the whole sequence at once. With ``G_t = Σ_{τ≤t} g_τ`` (``g = log α``),
  ``r_t = e^{G_t} S_0 k_t + Σ_{u<t} e^{G_t-G_u} (k_u·k_t) δ_u``, so the errors solve the unit lower-triangular
  system ``(I + diag β · A) Δ = diag β (V - R_0)`` with ``A_tu = e^{G_t-G_u} k_t·k_u`` (``u < t``), and
  ``o_t = e^{G_t} S_0 q_t + Σ_{u≤t} e^{G_t-G_u} (k_u·q_t) δ_u``. Exponents appear only as differences
  ``G_t - G_u ≤ 0``.

:class:`GatedDeltaNet` is the layer: projections, causal convolutions of width 4, SiLU, ℓ2-normalised
``q, k`` (``q`` scaled by ``d_k^{-1/2}``), the decay gate of :mod:`~neurips26.sdm.gates`, ``β = σ(w_bᵀx)``,
gated RMSNorm, output projection; optionally a learned initial state ``S_0``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neurips26.sdm.gates import DecayGate, GatedRMSNorm, ShortConv, l2_normalise
from neurips26.sdm.shapes import check_tensor, heads_of
from neurips26.validation import check_int


def _check_inputs(q: Tensor, k: Tensor, v: Tensor, g: Tensor, beta: Tensor, S0: Tensor | None) -> None:
    check_tensor("q", q, min_dim=2)
    lead, T, dk = q.shape[:-2], q.shape[-2], q.shape[-1]
    check_tensor("k", k, shape=(*lead, T, dk))
    check_tensor("v", v, min_dim=2)
    if v.shape[:-1] != (*lead, T):
        raise ValueError(f"v must be (..., T, d_v) with (..., T) = {(*lead, T)}; got {tuple(v.shape)}")
    check_tensor("g", g, shape=(*lead, T))
    check_tensor("beta", beta, shape=(*lead, T))
    if S0 is not None:
        check_tensor("S0", S0, shape=(*lead, v.shape[-1], dk))


def gdn_recurrent(
    q: Tensor, k: Tensor, v: Tensor, g: Tensor, beta: Tensor, S0: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """The gated delta rule token by token.

    q, k: ``(..., T, d_k)``; v: ``(..., T, d_v)``; g: ``(..., T)`` log decays (``α = e^g``); beta:
    ``(..., T)``; S0: ``(..., d_v, d_k)`` or None (zeros). Returns outputs ``(..., T, d_v)`` and the final
    state ``(..., d_v, d_k)``.
    """
    _check_inputs(q, k, v, g, beta, S0)
    S = S0 if S0 is not None else v.new_zeros((*v.shape[:-2], v.shape[-1], k.shape[-1]))
    outs = []
    for t in range(q.shape[-2]):
        S = g[..., t, None, None].exp() * S  # decay
        r = (S @ k[..., t, :, None])[..., 0]  # what the key retrieves
        delta = beta[..., t, None] * (v[..., t, :] - r)
        S = S + delta[..., :, None] * k[..., t, None, :]  # correct towards v
        outs.append((S @ q[..., t, :, None])[..., 0])
    return torch.stack(outs, dim=-2), S


def _decay_matrix(G: Tensor, *, strict: bool) -> Tensor:
    """``e^{G_t - G_u}`` for ``u < t`` (``u ≤ t`` unless ``strict``), 0 elsewhere; ``G``: ``(..., T)``."""
    T = G.shape[-1]
    diff = G[..., :, None] - G[..., None, :]
    keep = torch.ones(T, T, dtype=torch.bool, device=G.device).tril(-1 if strict else 0)
    return torch.where(keep, diff.clamp(max=0.0).exp(), diff.new_zeros(()))


def gdn_parallel(
    q: Tensor, k: Tensor, v: Tensor, g: Tensor, beta: Tensor, S0: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """The same outputs and final state as :func:`gdn_recurrent`, from one triangular solve (module doc)."""
    _check_inputs(q, k, v, g, beta, S0)
    G = g.cumsum(-1)  # (..., T)
    A = _decay_matrix(G, strict=True) * (k @ k.transpose(-1, -2))  # (..., T, T)
    rhs = v
    if S0 is not None:
        rhs = v - G.exp()[..., None] * (k @ S0.transpose(-1, -2))  # V - R_0
    system = torch.eye(A.shape[-1], dtype=A.dtype, device=A.device) + beta[..., :, None] * A
    delta = torch.linalg.solve_triangular(system, beta[..., None] * rhs, upper=False, unitriangular=True)
    reads = _decay_matrix(G, strict=False) * (q @ k.transpose(-1, -2))  # (..., T, T): t reads u's write
    out = reads @ delta
    last = (G[..., -1:] - G).exp()  # e^{G_T - G_u}
    S = (last[..., None] * delta).transpose(-1, -2) @ k  # Σ_u e^{G_T-G_u} δ_u k_uᵀ
    if S0 is not None:
        out = out + G.exp()[..., None] * (q @ S0.transpose(-1, -2))
        S = S + G[..., -1, None, None].exp() * S0
    return out, S


class GatedDeltaNet(nn.Module):
    """The GDN mixer ``x (B, T, D) ↦ y (B, T, D)`` with ``heads`` heads of key width ``key_dim`` and value
    width ``value_dim``; ``learned_state`` adds a learned initial state ``S_0`` (one per head, copied per
    sequence; the ablation of claim C5). ``solver``: ``"parallel"`` (training) or ``"recurrent"``."""

    def __init__(
        self,
        width: int,
        heads: int,
        key_dim: int,
        value_dim: int,
        *,
        learned_state: bool = False,
        solver: str = "parallel",
    ):
        super().__init__()
        self.width = check_int("width", width, minimum=1)
        self.heads = heads_of(width, heads)
        self.key_dim = check_int("key_dim", key_dim, minimum=1)
        self.value_dim = check_int("value_dim", value_dim, minimum=1)
        if solver not in ("parallel", "recurrent"):
            raise ValueError(f"solver must be 'parallel' or 'recurrent'; got {solver!r}")
        self.solver = solver
        hk, hv = heads * key_dim, heads * value_dim
        self.q_proj = nn.Linear(width, hk, bias=False)
        self.k_proj = nn.Linear(width, hk, bias=False)
        self.v_proj = nn.Linear(width, hv, bias=False)
        self.q_conv, self.k_conv, self.v_conv = ShortConv(hk), ShortConv(hk), ShortConv(hv)
        self.decay = DecayGate(width, heads)
        self.b_proj = nn.Linear(width, heads, bias=False)
        self.g_proj = nn.Linear(width, hv, bias=False)
        self.norm = GatedRMSNorm(value_dim)
        self.o_proj = nn.Linear(hv, width, bias=False)
        self.initial_state = (
            nn.Parameter(torch.randn(heads, value_dim, key_dim) / math.sqrt(width)) if learned_state else None
        )

    def features(self, x: Tensor) -> dict[str, Tensor]:
        """Per-head ``q, k`` ``(B, H, T, d_k)``, ``v`` ``(B, H, T, d_v)``, ``g``, ``beta`` ``(B, H, T)``."""
        B, T, _ = x.shape
        H = self.heads

        def split(z: Tensor) -> Tensor:
            return z.view(B, T, H, -1).transpose(1, 2)

        q = l2_normalise(split(F.silu(self.q_conv(self.q_proj(x))))) / math.sqrt(self.key_dim)
        k = l2_normalise(split(F.silu(self.k_conv(self.k_proj(x)))))
        v = split(F.silu(self.v_conv(self.v_proj(x))))
        g = self.decay(x).transpose(1, 2)
        beta = torch.sigmoid(self.b_proj(x)).transpose(1, 2)
        return {"q": q, "k": k, "v": v, "g": g, "beta": beta}

    def forward(self, x: Tensor, *, zero_state: bool = False) -> Tensor:
        check_tensor("x", x, min_dim=3)
        B, T, _ = x.shape
        f = self.features(x)
        S0 = None
        if self.initial_state is not None and not zero_state:
            S0 = self.initial_state.unsqueeze(0).expand(B, -1, -1, -1)
        run = gdn_parallel if self.solver == "parallel" else gdn_recurrent
        o, _ = run(f["q"], f["k"], f["v"], f["g"], f["beta"], S0)  # (B, H, T, d_v)
        z = self.g_proj(x).view(B, T, self.heads, -1)
        y = self.norm(o.transpose(1, 2), z).reshape(B, T, -1)
        return self.o_proj(y)

    def state_floats(self) -> int:
        """Floats of recurrent state per sequence: ``H · d_v · d_k``."""
        return self.heads * self.value_dim * self.key_dim

    def recurrence_macs(self) -> int:
        """Multiply-adds of the recurrence per token: decay, read, write, query, each ``d_k·d_v`` per head."""
        return 4 * self.heads * self.key_dim * self.value_dim
