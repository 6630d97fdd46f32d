"""Sparse Delta Memory: a gated delta rule whose key is an ``N``-slot, ``W``-sparse address.

Per head, the state is a table ``M ∈ R^{N × d}`` of ``N = n²`` slots. Token ``t`` writes ``W`` slots ``I_t``
with weights ``κ_t = softmax(s_{I_t})`` and reads ``R`` slots ``J_t`` with weights ``ρ_t = softmax(s_{J_t})``,
both picked by exact product-key top-k (:mod:`~neurips26.sdm.product_keys`). On the written slots only:

    M̃_i = α_t M_{t-1,i}                    (i ∈ I_t: forget only what is touched)
    r_t = Σ_{i∈I_t} κ_ti M̃_i                 (what the address retrieves)
    δ_t = β_t (v_t - r_t)                    (delta-rule error)
    M_t,i = M̃_i + κ_ti δ_t                   (i ∈ I_t; every other slot is left bit for bit)
    o_t = Σ_{j∈J_t} ρ_tj M_t,j               (read after the write)

In matrix form, with ``S = Mᵀ``, the dense ``N``-vector ``k_t`` (``κ_t`` on ``I_t``), ``q_t`` (``ρ_t`` on
``J_t``) and ``D_t = diag(α_t on I_t, 1 elsewhere)``: ``S_t = S_{t-1} D_t (I - β_t k_t k_tᵀ) + β_t v_t k_tᵀ``,
``o_t = S_t q_t`` — GDN with a huge, sparse, ℓ1-normalised key and a per-slot decay.

Three computations of the same recurrence, equal up to rounding:

- :func:`sdm_reference`: the gather/scatter loop above (per token ``O((W+R)·d)``; in place for decoding);
- :func:`sdm_dense`: the matrix form with the whole table (``O(N·d)`` per token; tests);
- :func:`sdm_parallel`: one triangular solve for the whole sequence. With ``L_t,i = Σ_{τ≤t, i∈I_τ} g_τ`` the
  cumulative log decay of slot ``i``, ``M_t,i = e^{L_t,i} M0_i + Σ_{u≤t, i∈I_u} κ_ui e^{L_t,i - L_u,i} δ_u``,
  so ``(I + diag β · A) Δ = diag β (V - R_0)`` with ``A_tu = Σ_{i∈I_t∩I_u} κ_ti κ_ui e^{L_t,i - L_u,i}``
  (``u < t``) and ``R_0,t = Σ_{i∈I_t} κ_ti e^{L_t,i} M0_i``; reads
  ``o_t = Σ_{j∈J_t} ρ_tj [e^{L_t,j} M0_j + Σ_{u≤t} κ_uj e^{L_t,j - L_u,j} δ_u]``. Exponents only as
  differences ``≤ 0``.

:class:`SparseDeltaMemory` is the layer: value, write-score and read-score projections (``H·2n`` scores
each, no convolution), optional BatchNorm of the scores, per-head ``α`` and ``β``, the initial table ``M₀``
(learned: truncated normal with std ``D^{-1/2}``, weight-decayed like every weight; or zero), LayerNorm of
the readings and a sigmoid output gate.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor, nn

from neurips26.sdm.gates import DecayGate
from neurips26.sdm.product_keys import product_key_topk
from neurips26.sdm.shapes import check_tensor, heads_of
from neurips26.validation import check_int

SOLVERS = ("loop", "parallel")


def _check(
    v: Tensor,
    write_idx: Tensor,
    kappa: Tensor,
    read_idx: Tensor,
    rho: Tensor,
    g: Tensor,
    beta: Tensor,
    M0: Tensor | None,
    slots: int | None,
) -> int:
    """Validate the recurrence inputs; returns the number of slots ``N``."""
    check_tensor("v", v, min_dim=2)
    lead, T, d = v.shape[:-2], v.shape[-2], v.shape[-1]
    check_tensor("write_idx", write_idx, min_dim=2, floating=False)
    check_tensor("read_idx", read_idx, min_dim=2, floating=False)
    if write_idx.shape[:-1] != (*lead, T):
        raise ValueError(
            f"write_idx must be (..., T, W) with (..., T) = {(*lead, T)}; got {tuple(write_idx.shape)}"
        )
    if read_idx.shape[:-1] != (*lead, T):
        raise ValueError(
            f"read_idx must be (..., T, R) with (..., T) = {(*lead, T)}; got {tuple(read_idx.shape)}"
        )
    check_tensor("kappa", kappa, shape=write_idx.shape)
    check_tensor("rho", rho, shape=read_idx.shape)
    check_tensor("g", g, shape=(*lead, T))
    check_tensor("beta", beta, shape=(*lead, T))
    if M0 is not None:
        check_tensor("M0", M0, min_dim=2)
        if M0.shape[:-2] != lead or M0.shape[-1] != d:
            raise ValueError(
                f"M0 must be (..., N, d) with (...) = {tuple(lead)}, d = {d}; got {tuple(M0.shape)}"
            )
        if slots is not None and M0.shape[-2] != slots:
            raise ValueError(f"slots must equal M0's N = {M0.shape[-2]}; got {slots}")
        slots = M0.shape[-2]
    if slots is None:
        raise ValueError("slots must be given when M0 is None")
    slots = check_int("slots", slots, minimum=1)
    for name, idx in (("write_idx", write_idx), ("read_idx", read_idx)):
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= slots):
            raise ValueError(f"{name} must lie in [0, {slots}); got [{int(idx.min())}, {int(idx.max())}]")
    return slots


def _flat(x: Tensor, keep: int) -> Tensor:
    """Merge the leading dimensions into one stream axis, keeping the last ``keep``."""
    return x.reshape(-1, *x.shape[x.ndim - keep :])


def _written_rows(
    M: Tensor, v: Tensor, wi: Tensor, kappa: Tensor, g: Tensor, beta: Tensor
) -> tuple[Tensor, Tensor]:
    """The gather index of the written slots and their new rows ``M̃_i + κ_ti δ_t`` (one token)."""
    wix = wi.unsqueeze(-1).expand(-1, -1, M.shape[-1])
    decayed = g.exp()[:, None, None] * M.gather(1, wix)  # M̃ on I_t
    delta = beta[:, None] * (v - (kappa.unsqueeze(-1) * decayed).sum(1))
    return wix, decayed + kappa.unsqueeze(-1) * delta.unsqueeze(1)


def _read(M: Tensor, ri: Tensor, rho: Tensor) -> Tensor:
    return (rho.unsqueeze(-1) * M.gather(1, ri.unsqueeze(-1).expand(-1, -1, M.shape[-1]))).sum(1)


def sdm_step(
    M: Tensor, v: Tensor, wi: Tensor, kappa: Tensor, ri: Tensor, rho: Tensor, g: Tensor, beta: Tensor
) -> tuple[Tensor, Tensor]:
    """One token, out of place: table ``M (S, N, d)``, value ``v (S, d)``, write slots/weights ``(S, W)``,
    read slots/weights ``(S, R)``, log decay and step ``(S,)``; returns ``(M_t, o_t)``."""
    wix, rows = _written_rows(M, v, wi, kappa, g, beta)
    M = M.scatter(1, wix, rows)
    return M, _read(M, ri, rho)


@torch.no_grad()
def sdm_step_(
    M: Tensor, v: Tensor, wi: Tensor, kappa: Tensor, ri: Tensor, rho: Tensor, g: Tensor, beta: Tensor
) -> Tensor:
    """:func:`sdm_step` in place on ``M`` (decoding: only ``W + R`` rows of the table are touched)."""
    wix, rows = _written_rows(M, v, wi, kappa, g, beta)
    M.scatter_(1, wix, rows)
    return _read(M, ri, rho)


class _Streams(NamedTuple):
    """The recurrence's inputs checked and flattened to one stream axis ``S``: ``v (S, T, d)``, ``wi, ka
    (S, T, W)``, ``ri, rh (S, T, R)``, ``g, beta (S, T)``, ``M0 (S, N, d)`` or None; ``N``, ``lead``."""

    v: Tensor
    wi: Tensor
    ka: Tensor
    ri: Tensor
    rh: Tensor
    g: Tensor
    beta: Tensor
    M0: Tensor | None
    N: int
    lead: tuple[int, ...]

    def unflat(self, out: Tensor, table: Tensor) -> tuple[Tensor, Tensor]:
        """Readings ``(S, T, d)`` and table ``(S, N, d)`` back to the caller's leading dimensions."""
        return out.reshape(*self.lead, *out.shape[1:]), table.reshape(*self.lead, *table.shape[1:])


def _streams(
    v: Tensor,
    write_idx: Tensor,
    kappa: Tensor,
    read_idx: Tensor,
    rho: Tensor,
    g: Tensor,
    beta: Tensor,
    M0: Tensor | None,
    slots: int | None,
) -> _Streams:
    N = _check(v, write_idx, kappa, read_idx, rho, g, beta, M0, slots)
    return _Streams(
        _flat(v, 2),
        _flat(write_idx, 2),
        _flat(kappa, 2),
        _flat(read_idx, 2),
        _flat(rho, 2),
        _flat(g, 1),
        _flat(beta, 1),
        None if M0 is None else _flat(M0, 2),
        N,
        tuple(v.shape[:-2]),
    )


def sdm_reference(
    v: Tensor,
    write_idx: Tensor,
    kappa: Tensor,
    read_idx: Tensor,
    rho: Tensor,
    g: Tensor,
    beta: Tensor,
    M0: Tensor | None = None,
    *,
    slots: int | None = None,
) -> tuple[Tensor, Tensor]:
    """The SDM recurrence token by token (gather, decay, delta, scatter, read).

    v: ``(..., T, d)``; write_idx, kappa: ``(..., T, W)``; read_idx, rho: ``(..., T, R)``; g, beta:
    ``(..., T)``; M0: ``(..., N, d)`` or None (zeros; then ``slots = N`` is required). Returns the readings
    ``(..., T, d)`` and the final table ``(..., N, d)``. Out of place while gradients are recorded, in place
    otherwise.
    """
    x = _streams(v, write_idx, kappa, read_idx, rho, g, beta, M0, slots)
    M = x.M0 if x.M0 is not None else x.v.new_zeros(x.v.shape[0], x.N, x.v.shape[-1])
    tracked = torch.is_grad_enabled() and any(
        t is not None and t.requires_grad for t in (v, kappa, rho, g, beta, M0)
    )
    if not tracked:
        M = M.clone()
    outs = []
    for t in range(x.v.shape[1]):
        args = (x.v[:, t], x.wi[:, t], x.ka[:, t], x.ri[:, t], x.rh[:, t], x.g[:, t], x.beta[:, t])
        if tracked:
            M, o = sdm_step(M, *args)
        else:
            o = sdm_step_(M, *args)
        outs.append(o)
    return x.unflat(torch.stack(outs, 1), M)


def _dense(idx: Tensor, weights: Tensor, slots: int) -> Tensor:
    """The dense ``N``-vectors of sparse addresses: ``(S, T, K)`` indices/weights ↦ ``(S, T, N)``."""
    return weights.new_zeros(*idx.shape[:-1], slots).scatter(-1, idx, weights)


def sdm_dense(
    v: Tensor,
    write_idx: Tensor,
    kappa: Tensor,
    read_idx: Tensor,
    rho: Tensor,
    g: Tensor,
    beta: Tensor,
    M0: Tensor | None = None,
    *,
    slots: int | None = None,
) -> tuple[Tensor, Tensor]:
    """The matrix form ``S_t = S_{t-1} D_t (I - β_t k_t k_tᵀ) + β_t v_t k_tᵀ``, ``o_t = S_t q_t`` with the
    whole table (arguments and results as :func:`sdm_reference`)."""
    x = _streams(v, write_idx, kappa, read_idx, rho, g, beta, M0, slots)
    K = _dense(x.wi, x.ka, x.N)  # (S, T, N)
    Q = _dense(x.ri, x.rh, x.N)
    touched = _dense(x.wi, torch.ones_like(x.ka), x.N)
    S = x.M0.transpose(1, 2) if x.M0 is not None else x.v.new_zeros(x.v.shape[0], x.v.shape[-1], x.N)
    outs = []
    for t in range(x.v.shape[1]):
        decay = 1 + touched[:, t] * (x.g[:, t, None].exp() - 1)  # α on I_t, 1 elsewhere
        S = S * decay[:, None, :]
        k = K[:, t]
        S = (
            S
            + x.beta[:, t, None, None] * (x.v[:, t] - (S @ k[:, :, None])[..., 0])[:, :, None] * k[:, None, :]
        )
        outs.append((S @ Q[:, t, :, None])[..., 0])
    return x.unflat(torch.stack(outs, 1), S.transpose(1, 2))


def sdm_parallel(
    v: Tensor,
    write_idx: Tensor,
    kappa: Tensor,
    read_idx: Tensor,
    rho: Tensor,
    g: Tensor,
    beta: Tensor,
    M0: Tensor | None = None,
    *,
    slots: int | None = None,
) -> tuple[Tensor, Tensor]:
    """The whole sequence from one unit lower-triangular solve (module doc; arguments as
    :func:`sdm_reference`). Memory ``O(T·N + T²·(W+R))`` per stream."""
    x = _streams(v, write_idx, kappa, read_idx, rho, g, beta, M0, slots)
    vs, wi, ka, ri, rh, gs, bs, M, N = x[:9]
    S, T, d = vs.shape
    K = _dense(wi, ka, N)  # (S, T, N): κ_u on I_u
    L = _dense(wi, gs[:, :, None].expand_as(ka), N).cumsum(1)  # (S, T, N): per-slot cumulative log decay

    L_cols, K_cols = L.transpose(1, 2), K.transpose(1, 2)  # (S, N, T): a slot's history

    def pairs(idx: Tensor) -> tuple[Tensor, Tensor]:
        """For each t and each of its slots j = idx[t, w], over every u: ``L_t,j - L_u,j`` and ``κ_u,j``,
        both ``(S, T, K, T)`` indexed ``[s, t, w, u]``."""
        width = idx.shape[-1]
        rows = idx.reshape(S, T * width, 1).expand(-1, -1, T)
        L_u = L_cols.gather(1, rows).reshape(S, T, width, T)
        K_u = K_cols.gather(1, rows).reshape(S, T, width, T)
        return L.gather(2, idx).unsqueeze(-1) - L_u, K_u

    diff_w, K_w = pairs(wi)
    strict = torch.ones(T, T, dtype=torch.bool, device=v.device).tril(-1)
    A = (ka.unsqueeze(-1) * K_w * diff_w.clamp(max=0.0).exp()).sum(2)  # (S, T, T)
    A = torch.where(strict, A, A.new_zeros(()))
    rhs = vs
    L_w = L.gather(2, wi)  # (S, T, W)
    L_r = L.gather(2, ri)
    if M is not None:
        gathered = M.gather(1, wi.reshape(S, -1, 1).expand(-1, -1, d)).reshape(S, T, -1, d)
        rhs = vs - ((ka * L_w.exp()).unsqueeze(-1) * gathered).sum(2)  # V - R_0
    system = torch.eye(T, dtype=v.dtype, device=v.device) + bs[:, :, None] * A
    delta = torch.linalg.solve_triangular(system, bs[:, :, None] * rhs, upper=False, unitriangular=True)

    diff_r, K_r = pairs(ri)
    causal = torch.ones(T, T, dtype=torch.bool, device=v.device).tril()
    Bm = (rh.unsqueeze(-1) * K_r * diff_r.clamp(max=0.0).exp()).sum(2)  # (S, T, T): t reads u's write
    out = torch.where(causal, Bm, Bm.new_zeros(())) @ delta
    last = (L[:, -1:, :] - L).clamp(max=0.0).exp() * K  # (S, T, N): κ_u,i e^{L_T,i - L_u,i}
    table = last.transpose(1, 2) @ delta  # (S, N, d)
    if M is not None:
        read0 = M.gather(1, ri.reshape(S, -1, 1).expand(-1, -1, d)).reshape(S, T, -1, d)
        out = out + ((rh * L_r.exp()).unsqueeze(-1) * read0).sum(2)
        table = table + L[:, -1, :, None].exp() * M
    return x.unflat(out, table)


def square_side(slots: int) -> int:
    """``n`` with ``n² = slots``; ``ValueError`` naming ``slots`` when it is not a perfect square."""
    slots = check_int("slots", slots, minimum=1)
    n = math.isqrt(slots)
    if n * n != slots:
        raise ValueError(f"slots must be a perfect square n²; got {slots}")
    return n


class SparseDeltaMemory(nn.Module):
    """The SDM mixer ``x (B, T, D) ↦ y (B, T, D)``: ``heads`` tables of ``slots`` slots of width ``D/heads``,
    ``writes`` written and ``reads`` read slots per token.

    ``memory``: ``"learned"`` (``M₀`` a parameter, truncated normal with std ``D^{-1/2}``) or ``"zero"``;
    ``batchnorm``: BatchNorm of the write and read scores (against slot collapse); ``solver``: ``"loop"``
    (:func:`sdm_reference`) or ``"parallel"`` (:func:`sdm_parallel`) for training.
    """

    def __init__(
        self,
        width: int,
        heads: int,
        slots: int,
        writes: int,
        reads: int,
        *,
        memory: str = "learned",
        batchnorm: bool = False,
        solver: str = "loop",
    ):
        super().__init__()
        self.width = check_int("width", width, minimum=1)
        self.heads = heads_of(width, heads)
        self.n = square_side(slots)
        self.slots = slots
        self.writes = check_int("writes", writes, minimum=1, maximum=slots)
        self.reads = check_int("reads", reads, minimum=1, maximum=slots)
        if memory not in ("learned", "zero"):
            raise ValueError(f"memory must be 'learned' or 'zero'; got {memory!r}")
        if solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}; got {solver!r}")
        if not isinstance(batchnorm, bool):
            raise TypeError(f"batchnorm must be a bool; got {type(batchnorm).__name__}")
        self.solver = solver
        self.head_dim = width // heads
        scores = heads * 2 * self.n
        self.v_proj = nn.Linear(width, width)
        self.w_proj = nn.Linear(width, scores)
        self.r_proj = nn.Linear(width, scores)
        self.w_norm = nn.BatchNorm1d(scores) if batchnorm else None
        self.r_norm = nn.BatchNorm1d(scores) if batchnorm else None
        self.decay = DecayGate(width, heads, bias=True)
        self.b_proj = nn.Linear(width, heads)
        self.read_norm = nn.LayerNorm(self.head_dim)
        self.og_proj = nn.Linear(width, width)
        self.o_proj = nn.Linear(width, width)
        self.memory = None
        if memory == "learned":
            self.memory = nn.Parameter(torch.empty(heads, slots, self.head_dim))
            nn.init.trunc_normal_(self.memory, std=width**-0.5, a=-2 * width**-0.5, b=2 * width**-0.5)

    def _scores(self, proj: nn.Linear, norm: nn.BatchNorm1d | None, x: Tensor) -> tuple[Tensor, Tensor]:
        z = proj(x)  # (B, T, H·2n)
        if norm is not None:
            B, T, C = z.shape
            z = norm(z.reshape(B * T, C)).reshape(B, T, C)
        z = z.view(*z.shape[:2], self.heads, 2, self.n).transpose(1, 2)  # (B, H, T, 2, n)
        return z[..., 0, :], z[..., 1, :]

    def addresses(self, x: Tensor) -> dict[str, Tensor]:
        """Write and read slots and weights ``(B, H, T, W|R)`` of the tokens of ``x``."""
        wi, ws = product_key_topk(*self._scores(self.w_proj, self.w_norm, x), self.writes)
        ri, rs = product_key_topk(*self._scores(self.r_proj, self.r_norm, x), self.reads)
        return {"write_idx": wi, "kappa": ws.softmax(-1), "read_idx": ri, "rho": rs.softmax(-1)}

    def features(self, x: Tensor) -> dict[str, Tensor]:
        """Everything the recurrence takes, per head: addresses, ``v (B, H, T, d)``, ``g``, ``beta``."""
        B, T, _ = x.shape
        f = self.addresses(x)
        f["v"] = self.v_proj(x).view(B, T, self.heads, -1).transpose(1, 2)
        f["g"] = self.decay(x).transpose(1, 2)
        f["beta"] = torch.sigmoid(self.b_proj(x)).transpose(1, 2)
        return f

    def initial_table(self, batch: int, *, zero: bool = False) -> Tensor | None:
        """``M₀`` copied per sequence ``(B, H, N, d)``, or None for a zero table."""
        if self.memory is None or zero:
            return None
        return self.memory.unsqueeze(0).expand(batch, -1, -1, -1)

    def readout(self, x: Tensor, o: Tensor) -> Tensor:
        """Readings ``(B, H, T, d)`` ↦ ``W_o [σ(W_og x) ⊙ LayerNorm(o)]``."""
        B, T, _ = x.shape
        o = self.read_norm(o).transpose(1, 2).reshape(B, T, -1)
        return self.o_proj(torch.sigmoid(self.og_proj(x)) * o)

    def forward(self, x: Tensor, *, zero_memory: bool = False) -> Tensor:
        check_tensor("x", x, min_dim=3)
        f = self.features(x)
        run = sdm_reference if self.solver == "loop" else sdm_parallel
        o, _ = run(
            f["v"],
            f["write_idx"],
            f["kappa"],
            f["read_idx"],
            f["rho"],
            f["g"],
            f["beta"],
            self.initial_table(x.shape[0], zero=zero_memory),
            slots=self.slots,
        )
        return self.readout(x, o)

    def state_floats(self) -> int:
        """Floats of recurrent state per sequence: ``H · N · d``."""
        return self.heads * self.slots * self.head_dim

    def recurrence_macs(self) -> int:
        """Recurrence multiply-adds per token: decay, recall and write on ``W`` slots, read on ``R``."""
        return self.heads * (3 * self.writes + self.reads) * self.head_dim

    def addressing_ops(self) -> int:
        """Product-key addressing operations per token: ``O(n + W²)`` per head, write and read."""
        return self.heads * sum(2 * self.n + min(k, self.n) ** 2 for k in (self.writes, self.reads))
