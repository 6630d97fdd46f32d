"""The declared compute of a SPARK-VLA forward, routed against dense, and interleaved wall-clock timings.

The paper says routing saves compute. The chapter checks it as claim C6 with a *declared cost model*: FLOPs
fixed by the layer shapes alone, so the ratio of a routed forward (router + top-k visual tokens) to a dense
one (all 2N candidates) does not depend on the machine's load or on which kernels a library vectorises well.
Wall clock on a shared CPU is a different, noisier quantity, reported beside it (:func:`time_forwards`).

Convention [our choice]: a multiply-add is 2 FLOPs; only the matrix products are counted (linear layers,
the patch convolution, the LoRA factors, Q K^T and A V); biases, LayerNorms, GELUs, softmaxes, the scaling
of the adapters, gathers and additions are left out (each O(T d), a few per cent). One pre-norm transformer
block of width d, MLP width h, over T tokens (``neurips26.nn.DecoderBlock``: qkv d -> 3d, out d -> d, mlp
d -> h -> d; ``ViTBlock`` has the same shapes) costs::

    F_block(T) = 2 T (3d^2 + d^2 + 2 d h)  +  2 * 2 T^2 d          (= 24 T d^2 + 4 T^2 d for h = 4d)
                 linear maps                  Q K^T and A V over all heads

Causal attention is counted in full, T^2 and not T(T + 1)/2: the policy hands the attention an explicit
(B, 1, T, T) boolean mask (causal and padding together), which the explicit path and the fused kernels
apply to a full score matrix; no kernel skips the masked half. One policy forward (§3.0, §3.6) with M
visual tokens runs on T = L + M + H + 1 positions (8 words, M tokens, 4 action queries, 1 proprio)::

    lm        = lm_depth * F_block(T)                                    T = 8 + M + 4 + 1
    projector = 2 M (d_v d + d d)                                        Linear d_v -> d, Linear d -> d
    head      = 2 * 3 d + 2 H (2d 2d + 2d d_a)                           proprio map, action MLP
    router    = 2 * 2N ((d_v + d) h_r + h_r)                             scores all 2N candidates (§3.3)
    encoder   = 2 N (3 p^2) d + passes * F_block(N) + lora               N = 36, d = 64, p = 8
    lora      = (depth - l0) * 2 N r (d + 3d + d + d)                    A then B on qkv and out, l0 = 2

SPARK runs 6 encoder block passes per image (blocks 0-1 once, blocks 2-3 with adapters off and on,
``encoder.SPLIT_BLOCK``), the 2D-only VLA 4. The LM part of the routed-to-dense ratio at k = 18 of 72 is
``F(31) / F(85)`` = 0.312 with the 48-wide LM, a little under the token-count approximation 31 / 85 = 0.365
of the design because the attention term is quadratic in T. The whole-forward ratio (0.79) is much closer
to 1, since the two encoder pathways, which routing does not touch, cost more than the dense LM.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

import torch
from torch import Tensor

from neurips26.nn import ViTConfig
from neurips26.spark_vla.encoder import ENCODER_CONFIG, LORA_RANK, SPLIT_BLOCK, TwoPathwayEncoder
from neurips26.spark_vla.router import Router, topk_indices
from neurips26.spark_vla.vla import PROPRIO_DIM, Policy, PolicyConfig
from neurips26.timing import Timing, time_interleaved
from neurips26.validation import check_choice, check_int, check_seed

#: FLOPs of one multiply-add.
FLOPS_PER_MAC = 2
#: Encoder block passes per image for SPARK: every block once with adapters off, the adapted blocks
#: (SPLIT_BLOCK .. depth-1) a second time with adapters on; the shared prefix runs once (6 = 4 + 2).
SPARK_BLOCK_PASSES = ENCODER_CONFIG.depth + (ENCODER_CONFIG.depth - SPLIT_BLOCK)
#: Encoder block passes per image for the 2D-only VLA: one pathway, every block once.
TWO_D_BLOCK_PASSES = ENCODER_CONFIG.depth
#: What :func:`routed_to_dense_ratio` can compare: the LM blocks alone or the whole forward.
SCOPES = ("lm", "total")
# The router's hidden width, read from Router's own default so that it lives in one place.
_ROUTER_HIDDEN: int = inspect.signature(Router).parameters["hidden"].default


# ------------------------------------------------------------------------------------------ layer counts


def linear_flops(tokens: int, fan_in: int, fan_out: int) -> int:
    """FLOPs of a linear map fan_in -> fan_out applied to ``tokens`` vectors: 2 T fan_in fan_out (no bias)."""
    tokens = check_int("tokens", tokens, minimum=0)
    fan_in = check_int("fan_in", fan_in, minimum=1)
    fan_out = check_int("fan_out", fan_out, minimum=1)
    return FLOPS_PER_MAC * tokens * fan_in * fan_out


def attention_flops(tokens: int, width: int) -> int:
    """FLOPs of Q K^T and A V over all heads for T = ``tokens`` queries and keys: 2 * 2 T^2 d.

    The full T x T square is counted, masked entries included (module docstring); the head count cancels.
    """
    tokens = check_int("tokens", tokens, minimum=0)
    width = check_int("width", width, minimum=1)
    return 2 * FLOPS_PER_MAC * tokens * tokens * width


def block_flops(tokens: int, width: int, mlp_width: int) -> int:
    """FLOPs of one pre-norm transformer block over ``tokens`` positions (DecoderBlock or ViTBlock shapes).

    2 T (3d^2 + d^2 + 2 d h) for qkv, out and the two MLP maps, plus :func:`attention_flops` (T, d).
    """
    width = check_int("width", width, minimum=1)
    mlp_width = check_int("mlp_width", mlp_width, minimum=1)
    linear = (
        linear_flops(tokens, width, 3 * width)  # qkv
        + linear_flops(tokens, width, width)  # out
        + linear_flops(tokens, width, mlp_width)  # MLP in
        + linear_flops(tokens, mlp_width, width)  # MLP out
    )
    return linear + attention_flops(tokens, width)


def lora_flops(tokens: int, rank: int, fan_in: int, fan_out: int) -> int:
    """Extra FLOPs of a rank-``rank`` adapter on a fan_in -> fan_out layer: (x A^T) B^T = 2 T r (in + out)."""
    rank = check_int("rank", rank, minimum=1)
    return linear_flops(tokens, fan_in, rank) + linear_flops(tokens, rank, fan_out)


def sequence_length(config: PolicyConfig, visual_tokens: int) -> int:
    """T = L + M + H + 1: instruction words, M = ``visual_tokens``, action queries and the proprio token."""
    config = _check_config(config)
    visual_tokens = check_int("visual_tokens", visual_tokens, minimum=1)
    return config.instruction_length + visual_tokens + config.chunk + 1


def _check_config(config: object) -> PolicyConfig:
    if not isinstance(config, PolicyConfig):
        raise TypeError(f"config must be a PolicyConfig; got {type(config).__name__}")
    return config


# ------------------------------------------------------------------------------------- one forward's cost


@dataclass(frozen=True)
class CostBreakdown:
    """Declared FLOPs of one policy forward for one sample (a batch of B costs B times as much).

    visual_tokens: M, the tokens the LM reads; sequence_length: T = L + M + H + 1. encoder: patch embedding,
    block passes and LoRA factors; router: the scoring MLP on the 2N candidates (0 without a router);
    projector: on the M forwarded tokens; lm: the decoder blocks on T positions; head: the proprio map and
    the action MLP. lm_attention, encoder_attention: the Q K^T and A V parts of lm and encoder.
    """

    visual_tokens: int
    sequence_length: int
    encoder: int
    router: int
    projector: int
    lm: int
    head: int
    lm_attention: int
    encoder_attention: int

    @property
    def total(self) -> int:
        """encoder + router + projector + lm + head."""
        return self.encoder + self.router + self.projector + self.lm + self.head

    @property
    def linear(self) -> int:
        """The total without the attention products: the linear, convolution and LoRA layers alone.

        This is what ``torch.utils.flop_counter.FlopCounterMode`` sees on a CPU forward whose attention
        runs in the fused kernel, which the counter does not register.
        """
        return self.total - self.lm_attention - self.encoder_attention

    def as_row(self) -> dict[str, int]:
        """The fields and the total as one table row (a dict of ints)."""
        return {**asdict(self), "total": self.total}


def _encoder_flops(encoder_config: ViTConfig, passes: int, lora_rank: int | None) -> tuple[int, int]:
    """(encoder FLOPs, their attention part) for ``passes`` block passes on N tokens, per image."""
    if passes == 0:
        return 0, 0
    n, d = encoder_config.num_patches, encoder_config.width
    mlp_width = max(1, round(encoder_config.mlp_ratio * d))
    patch_inputs = encoder_config.in_channels * encoder_config.patch_size**2
    total = linear_flops(n, patch_inputs, d) + passes * block_flops(n, d, mlp_width)
    if lora_rank is not None:  # the adapted blocks run once with adapters on (LORA_TARGETS: qkv, out)
        adapted = encoder_config.depth - SPLIT_BLOCK
        total += adapted * (lora_flops(n, lora_rank, d, 3 * d) + lora_flops(n, lora_rank, d, d))
    return total, passes * attention_flops(n, d)


def declared_cost(
    config: PolicyConfig,
    visual_tokens: int,
    *,
    encoder_block_passes: int,
    lora_rank: int | None,
    router: bool,
    encoder_config: ViTConfig = ENCODER_CONFIG,
) -> CostBreakdown:
    """Declared FLOPs (module docstring) of one sample's forward with M = ``visual_tokens`` tokens in the LM.

    ``encoder_block_passes``: ViT block passes per image (SPARK 6, 2D-only 4, 0 = no encoder counted; the
    patch embedding is counted once when > 0). ``lora_rank``: rank of the adapters on qkv and out of the
    blocks >= SPLIT_BLOCK, counted once per adapted block (the LoRA-on pass), or None for no adapters.
    ``router``: count the router scoring all ``config.num_candidates`` candidates. ``encoder_config``: the
    ViT's sizes (default: the chapter's).
    """
    config = _check_config(config)
    t = sequence_length(config, visual_tokens)
    passes = check_int("encoder_block_passes", encoder_block_passes, minimum=0)
    if lora_rank is not None:
        lora_rank = check_int("lora_rank", lora_rank, minimum=1)
        adapted = encoder_config.depth - SPLIT_BLOCK
        if passes < adapted:
            raise ValueError(
                f"encoder_block_passes must be >= {adapted} (the adapted blocks) when lora_rank is set; "
                f"got {passes}"
            )
    if not isinstance(router, bool):
        raise TypeError(f"router must be a bool; got {type(router).__name__}")
    if not isinstance(encoder_config, ViTConfig):
        raise TypeError(f"encoder_config must be a ViTConfig; got {type(encoder_config).__name__}")

    d, dv, m = config.width, config.vision_width, visual_tokens
    encoder, encoder_attention = _encoder_flops(encoder_config, passes, lora_rank)
    router_flops = 0
    if router:
        candidates = config.num_candidates
        router_flops = linear_flops(candidates, dv + d, _ROUTER_HIDDEN) + linear_flops(
            candidates, _ROUTER_HIDDEN, 1
        )
    projector = linear_flops(m, dv, d) + linear_flops(m, d, d)
    lm = config.lm_depth * block_flops(t, d, config.decoder().mlp_width)
    head = (
        linear_flops(1, PROPRIO_DIM, d)
        + linear_flops(config.chunk, 2 * d, 2 * d)
        + linear_flops(config.chunk, 2 * d, config.action_dim)
    )
    return CostBreakdown(
        visual_tokens=m,
        sequence_length=t,
        encoder=encoder,
        router=router_flops,
        projector=projector,
        lm=lm,
        head=head,
        lm_attention=config.lm_depth * attention_flops(t, d),
        encoder_attention=encoder_attention,
    )


def _check_budget(k: int, num_candidates: int, config: PolicyConfig | None) -> tuple[int, PolicyConfig]:
    config = PolicyConfig() if config is None else _check_config(config)
    num_candidates = check_int("num_candidates", num_candidates, minimum=1)
    if num_candidates != config.num_candidates:
        raise ValueError(
            f"num_candidates must equal the config's 2N = {config.num_candidates}; got {num_candidates}"
        )
    return check_int("k", k, minimum=1, maximum=num_candidates), config


def spark_costs(
    k: int, *, config: PolicyConfig | None = None, lora_rank: int = LORA_RANK
) -> tuple[CostBreakdown, CostBreakdown]:
    """(routed, dense) declared costs of SPARK: both pathways (6 block passes, LoRA rank ``lora_rank``);
    routed = router + top-``k`` tokens to the LM, dense = all 2N candidates and no router."""
    config = PolicyConfig() if config is None else _check_config(config)
    k = check_int("k", k, minimum=1, maximum=config.num_candidates)
    common = {"encoder_block_passes": SPARK_BLOCK_PASSES, "lora_rank": lora_rank}
    routed = declared_cost(config, k, router=True, **common)
    dense = declared_cost(config, config.num_candidates, router=False, **common)
    return routed, dense


def routed_to_dense_ratio(
    k: int,
    num_candidates: int = 72,
    *,
    config: PolicyConfig | None = None,
    scope: str = "lm",
    lora_rank: int = LORA_RANK,
) -> float:
    """Declared FLOPs of a routed forward (top-``k``) over those of the dense one (all ``num_candidates``).

    ``scope="lm"``: the LM blocks alone (exactly 1 at k = 2N); ``"total"``: the whole SPARK forward,
    encoder, router, projector, LM and head (above 1 at k = 2N, by the router's cost). ``num_candidates``
    must be the config's 2N (default config: 72).
    """
    k, config = _check_budget(k, num_candidates, config)
    scope = check_choice("scope", scope, SCOPES)
    routed, dense = spark_costs(k, config=config, lora_rank=lora_rank)
    if scope == "lm":
        return routed.lm / dense.lm
    return routed.total / dense.total


def token_ratio(k: int, num_candidates: int = 72, *, config: PolicyConfig | None = None) -> float:
    """The design's token-count approximation of the LM ratio: (k + L + H + 1) / (2N + L + H + 1)."""
    k, config = _check_budget(k, num_candidates, config)
    return sequence_length(config, k) / sequence_length(config, config.num_candidates)


# ------------------------------------------------------------------------------------------- wall clock


def time_forwards(
    callables: Mapping[str, Callable[[], object]],
    *,
    rounds: int,
    warmup: int,
    threads: int | None = 1,
    inner: int = 1,
) -> Timing:
    """Interleaved wall-clock timing of zero-argument forwards (:func:`neurips26.timing.time_interleaved`).

    ``rounds`` timed rounds after ``warmup`` discarded ones, torch and BLAS pinned to ``threads``, each
    timing the mean of ``inner`` calls. The reference of the returned :class:`~neurips26.timing.Timing`
    is ``"dense"`` when that name is present, so ``timing.ratio("routed", "dense")`` is the paired median.
    """
    reference = "dense" if isinstance(callables, Mapping) and "dense" in callables else None
    return time_interleaved(
        callables, rounds=rounds, warmup=warmup, threads=threads, inner=inner, reference=reference
    )


def build_forward_callables(
    encoder: TwoPathwayEncoder,
    policy: Policy,
    router: Router,
    batch: int,
    k: int,
    *,
    seed: int = 0,
) -> dict[str, Callable[[], Tensor]]:
    """Two zero-argument forwards on one seeded random batch, each returning the actions (B, H, d_a).

    ``"dense"``: both encoder pathways, all 2N candidates into the policy. ``"routed"``: both pathways, the
    router scores the candidates given the pooled instruction, the top-``k`` (in token order) go into the
    policy. Both run under ``torch.no_grad``; on a CUDA device each call ends with a synchronisation so
    that a wall clock measures the work. The inputs (``batch`` images in [0, 1], instruction ids in
    [1, vocab), proprio in [-0.2, 0.2] m) are drawn on the CPU from a generator seeded ``seed`` and moved
    to the policy's device, so they do not depend on the device.
    """
    if not isinstance(encoder, TwoPathwayEncoder):
        raise TypeError(f"encoder must be a TwoPathwayEncoder; got {type(encoder).__name__}")
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must be a Policy; got {type(policy).__name__}")
    if not isinstance(router, Router):
        raise TypeError(f"router must be a Router; got {type(router).__name__}")
    batch = check_int("batch", batch, minimum=1)
    config = policy.config
    k = check_int("k", k, minimum=1, maximum=config.num_candidates)
    generator = torch.Generator().manual_seed(check_seed("seed", seed))
    device = policy.device
    size = ENCODER_CONFIG.image_size
    images = torch.rand(batch, ENCODER_CONFIG.in_channels, *size, generator=generator).to(device)
    instruction = torch.randint(
        1, config.vocab_size, (batch, config.instruction_length), generator=generator
    ).to(device)
    proprio = (0.4 * torch.rand(batch, PROPRIO_DIM, generator=generator) - 0.2).to(device)

    def finish(actions: Tensor) -> Tensor:
        if actions.device.type == "cuda":
            torch.cuda.synchronize(actions.device)
        return actions

    @torch.no_grad()
    def dense() -> Tensor:
        v2d, v3d = encoder(images)
        return finish(policy(instruction, policy.candidates(v2d, v3d), proprio).actions)

    @torch.no_grad()
    def routed() -> Tensor:
        v2d, v3d = encoder(images)
        candidates = policy.candidates(v2d, v3d)
        logits = router(candidates, policy.instruction_vector(instruction))
        chosen = Policy.gather(candidates, topk_indices(logits, k))
        return finish(policy(instruction, chosen, proprio).actions)

    return {"dense": dense, "routed": routed}


__all__ = [
    "FLOPS_PER_MAC",
    "SCOPES",
    "SPARK_BLOCK_PASSES",
    "TWO_D_BLOCK_PASSES",
    "CostBreakdown",
    "attention_flops",
    "block_flops",
    "build_forward_callables",
    "declared_cost",
    "linear_flops",
    "lora_flops",
    "routed_to_dense_ratio",
    "sequence_length",
    "spark_costs",
    "time_forwards",
    "token_ratio",
]
