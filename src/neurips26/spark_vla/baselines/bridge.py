"""VLA-Adapter-style bridge-attention policy (Wang, Ding et al., arXiv 2509.09372), at the chapter's scale.

VLA-Adapter does not map the LM's last action-query states to actions with an MLP. A small policy network
with one layer per LM layer refines H action latents, and policy layer ``l`` reads two conditions taken
from LM layer ``l``: the "raw" states ``C_R^l`` (every instruction and visual position) and the
action-query states ``C_AQ^l`` (the H query positions), the latter joined by the proprioceptive
embedding ``sigma_0(q)``. One layer ("bridge attention") with action latents ``A^l`` (B, H, d)::

    a      = LN(A^l),   Q = a W_q                         (one query projection for all three)
    CA_1   = Attn(Q, sigma_1(C_R^l))                       raw features; padding words masked
    CA_2   = Attn(Q, sigma_2([C_AQ^l ; sigma_0(q)]))       action queries and proprio
    SA     = Attn(Q, a)                                    the latents among themselves
    A^l    <- A^l + W_o [tanh(g_l) CA_1 ; CA_2 ; SA]       (3d -> d), g_l learnable, initialised to 0
    A^{l+1} = A^l + FFN(LN(A^l))
    a^      = Linear(LN(A^{depth}))                        (B, H, d_a), trained with L1 (§3.4)

``tanh(g_l)`` is the learnable ratio of the paper: it starts at 0, so at initialisation the raw features
do not enter at all, and the policy learns how much of them to inject, layer by layer.

Choices at this scale (paper vs here):

- initial latents: the paper starts from a zero action vector pushed through LayerNorm and an MLP, which
  yields one constant vector shared by all H steps; here each chunk step has its own learned vector
  ``latents`` (H, d), N(0, 0.02²), which also tells the steps apart (the authors' "Pro" code uses RoPE).
  The LM's action-query states are conditions (CA_2), not the starting latents, as in the paper.
- the gate: the paper multiplies the output of CA_1 by tanh(g); the authors' released code instead scales
  the raw keys' attention logits inside one joint softmax (then g = 0 still lets the raw tokens in, with
  uniform weights). We follow the paper's equation: with g = 0 the raw branch contributes exactly nothing.
- sigma_1, sigma_2: the paper's small MLPs on the conditions are a LayerNorm each here; the key and value
  projections that follow provide the linear map. sigma_0(q) is the policy's own proprio embedding (the
  LM's proprio input token), shared by every layer.
- the three attentions have their own key/value projections (the "Pro" code's layout) and share W_q;
  4 heads of size 16, like the LM; the FFN is pre-norm with hidden width 4d and GELU (the code: ReLU).
- layers: policy layer ``l`` reads the output of LM block ``l`` (the embedding stream is skipped, as the
  code's ``h[:, l + 1]`` does); with the chapter's 2-block LM the policy has 2 layers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neurips26.seeding import sub_seed
from neurips26.spark_vla.vla import INIT_STD, Policy
from neurips26.validation import check_float, check_int, check_seed


def _init_(module: nn.Module, generator: torch.Generator) -> None:
    """Linear weights N(0, INIT_STD²), biases 0 (LayerNorms keep 1 and 0)."""
    for sub in module.modules():
        if isinstance(sub, nn.Linear):
            with torch.no_grad():
                sub.weight.normal_(0.0, INIT_STD, generator=generator)
            if sub.bias is not None:
                nn.init.zeros_(sub.bias)


class BridgeLayer(nn.Module):
    """One policy layer: bridge attention over [raw; action-query + proprio; latents], then an FFN."""

    def __init__(self, width: int, heads: int, mlp_ratio: float = 4.0):
        super().__init__()
        self.width, self.heads = width, heads
        self.head_dim = width // heads
        self.norm = nn.LayerNorm(width)
        self.raw_norm = nn.LayerNorm(width)  # sigma_1
        self.cond_norm = nn.LayerNorm(width)  # sigma_2
        self.q = nn.Linear(width, width)
        self.kv_raw = nn.Linear(width, 2 * width)
        self.kv_cond = nn.Linear(width, 2 * width)
        self.kv_self = nn.Linear(width, 2 * width)
        self.out = nn.Linear(3 * width, width)
        self.gate = nn.Parameter(torch.zeros(()))  # g_l; the raw branch is scaled by tanh(g_l)
        hidden = round(mlp_ratio * width)
        self.ffn_norm = nn.LayerNorm(width)
        self.ffn = nn.Sequential(nn.Linear(width, hidden), nn.GELU(), nn.Linear(hidden, width))

    def _split(self, x: Tensor) -> Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, self.heads, self.head_dim).transpose(1, 2)  # (B, heads, T, D)

    def _attend(self, q: Tensor, kv: Tensor, mask: Tensor | None) -> Tensor:
        k, v = kv.split(self.width, dim=-1)
        heads = F.scaled_dot_product_attention(q, self._split(k), self._split(v), attn_mask=mask)
        return heads.transpose(1, 2).reshape(q.shape[0], q.shape[2], self.width)  # (B, H, d)

    def forward(self, latents: Tensor, raw: Tensor, raw_mask: Tensor | None, cond: Tensor) -> Tensor:
        """New latents (B, H, d) from ``latents`` (B, H, d), ``raw`` (B, R, d), ``cond`` (B, K, d).

        ``raw_mask`` (B, R): True where a raw position may be read.
        """
        a = self.norm(latents)
        q = self._split(self.q(a))
        mask = None if raw_mask is None else raw_mask[:, None, None, :]  # (B, 1, 1, R)
        raw_out = self._attend(q, self.kv_raw(self.raw_norm(raw)), mask)
        cond_out = self._attend(q, self.kv_cond(self.cond_norm(cond)), None)
        self_out = self._attend(q, self.kv_self(a), None)
        mixed = torch.cat([torch.tanh(self.gate) * raw_out, cond_out, self_out], dim=-1)  # (B, H, 3d)
        latents = latents + self.out(mixed)
        return latents + self.ffn(self.ffn_norm(latents))


class BridgeHead(nn.Module):
    """The bridge-attention policy network: LM states of every layer -> actions (B, H, action_dim).

    ``depth`` layers (one per LM block) of :class:`BridgeLayer`; weights a function of ``seed`` only
    (N(0, 0.02²) weights, residual projections 0.02 / sqrt(2 depth), biases 0, gates 0).
    """

    def __init__(
        self,
        width: int = 64,
        depth: int = 2,
        heads: int = 4,
        chunk: int = 4,
        action_dim: int = 4,
        *,
        seed: int = 0,
        mlp_ratio: float = 4.0,
    ):
        super().__init__()
        self.width = check_int("width", width, minimum=1)
        self.depth = check_int("depth", depth, minimum=1)
        self.heads = check_int("heads", heads, minimum=1)
        self.chunk = check_int("chunk", chunk, minimum=1)
        self.action_dim = check_int("action_dim", action_dim, minimum=1)
        mlp_ratio = check_float("mlp_ratio", mlp_ratio, minimum=0.0, strict_min=True)
        seed = check_seed("seed", seed)
        if width % heads:
            raise ValueError(f"heads must divide width; got width={width}, heads={heads}")
        generator = torch.Generator().manual_seed(seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.latents = nn.Parameter(torch.empty(chunk, width))
            self.layers = nn.ModuleList(BridgeLayer(width, heads, mlp_ratio) for _ in range(depth))
            self.final_norm = nn.LayerNorm(width)
            self.action = nn.Linear(width, action_dim)
        with torch.no_grad():
            self.latents.normal_(0.0, INIT_STD, generator=generator)
        _init_(self, generator)
        residual_std = INIT_STD / math.sqrt(2 * depth)
        for layer in self.layers:
            with torch.no_grad():
                layer.out.weight.normal_(0.0, residual_std, generator=generator)
                layer.ffn[-1].weight.normal_(0.0, residual_std, generator=generator)

    @property
    def gates(self) -> Tensor:
        """(depth,) the raw-feature parameters g_l (the injected share is tanh(g_l))."""
        return torch.stack([layer.gate for layer in self.layers])

    def forward(
        self,
        raw: Sequence[Tensor],
        queries: Sequence[Tensor],
        proprio: Tensor,
        *,
        raw_mask: Tensor | None = None,
    ) -> Tensor:
        """Actions (B, H, action_dim).

        ``raw``: ``depth`` tensors (B, R, d), LM layer l's states at the instruction and visual positions;
        ``queries``: ``depth`` tensors (B, H, d), its states at the action-query positions; ``proprio``:
        (B, d) or (B, 1, d) the proprio embedding; ``raw_mask``: (B, R) bool, False = a padding word
        that the raw cross-attention must not read (None = every raw position is real).
        """
        raw, queries = list(raw), list(queries)
        if len(raw) != self.depth or len(queries) != self.depth:
            raise ValueError(
                f"raw and queries must hold depth = {self.depth} tensors each; "
                f"got {len(raw)} and {len(queries)}"
            )
        if not isinstance(proprio, Tensor) or proprio.dim() not in (2, 3) or proprio.shape[-1] != self.width:
            got = getattr(proprio, "shape", type(proprio).__name__)
            raise ValueError(f"proprio must have shape (B, {self.width}) or (B, 1, {self.width}); got {got}")
        proprio = proprio.reshape(proprio.shape[0], 1, self.width)
        batch = proprio.shape[0]
        for name, tensors in (("raw", raw), ("queries", queries)):
            for i, t in enumerate(tensors):
                if (
                    not isinstance(t, Tensor)
                    or t.dim() != 3
                    or t.shape[0] != batch
                    or t.shape[2] != self.width
                ):
                    got = getattr(t, "shape", type(t).__name__)
                    raise ValueError(f"{name}[{i}] must have shape ({batch}, T, {self.width}); got {got}")
        if any(q.shape[1] != self.chunk for q in queries):
            raise ValueError(f"queries must hold chunk = {self.chunk} positions per layer")
        if raw_mask is not None:
            if not isinstance(raw_mask, Tensor) or raw_mask.dtype != torch.bool:
                raise TypeError("raw_mask must be a boolean tensor (True = attend)")
            if raw_mask.shape != raw[0].shape[:2] or any(r.shape[1] != raw_mask.shape[1] for r in raw):
                raise ValueError(f"raw_mask must have shape (B, R) = {tuple(raw[0].shape[:2])}")
            if not bool(raw_mask.any(dim=1).all()):
                raise ValueError("raw_mask must leave at least one raw position per row")

        x = self.latents.expand(batch, -1, -1)
        for layer, r, q in zip(self.layers, raw, queries, strict=True):
            x = layer(x, r, raw_mask, torch.cat([q, proprio], dim=1))
        return self.action(self.final_norm(x))


class BridgePolicy(Policy):
    """A :class:`~neurips26.spark_vla.vla.Policy` whose actions come from a :class:`BridgeHead`.

    Same inputs, LM and :class:`~neurips26.spark_vla.vla.PolicyOutput`; the final norm and MLP head are
    replaced by the bridge, which reads every LM block's output: raw = instruction + visual positions
    (padding words masked), action queries, and the layer-0 proprio token as sigma_0(q).
    """

    def _build_action_head(self, generator: torch.Generator) -> None:
        config = self.config
        self.bridge = BridgeHead(
            config.width,
            config.lm_depth,
            config.heads,
            config.chunk,
            config.action_dim,
            seed=sub_seed(self.seed, 1),  # its own stream, not a copy of the LM's first draws
            mlp_ratio=config.mlp_ratio,
        )

    def _act(self, hidden: list[Tensor], instruction: Tensor, layout: dict[str, slice]) -> Tensor:
        raw_end = layout["visual"].stop
        batch, length = instruction.shape
        visual_real = torch.ones(batch, raw_end - length, dtype=torch.bool, device=instruction.device)
        raw_mask = torch.cat([instruction != 0, visual_real], dim=1)
        raw = [h[:, :raw_end] for h in hidden[1:]]
        queries = [h[:, layout["queries"]] for h in hidden[1:]]
        proprio = hidden[0][:, layout["proprio"]]  # the proprio embedding W_p q, before any block
        return self.bridge(raw, queries, proprio, raw_mask=raw_mask)


__all__ = ["BridgeHead", "BridgeLayer", "BridgePolicy"]
