"""Small neural building blocks shared by the chapters that train networks on the CPU.

- :mod:`~neurips26.nn.embeddings`: sinusoidal features, time-step embedding, absolute positions, RoPE;
- :mod:`~neurips26.nn.attention`: multi-head self-attention with masks (causal, padding, tree), position
  ids and a key/value cache;
- :mod:`~neurips26.nn.hooks`: named hook points to read or replace activations;
- :mod:`~neurips26.nn.transformer`: a GPT-style causal decoder;
- :mod:`~neurips26.nn.sampling`: greedy, temperature and top-k decoding;
- :mod:`~neurips26.nn.adaln`: AdaLN-Zero and concat-conditioned transformer blocks;
- :mod:`~neurips26.nn.vit`: patch embedding and a small ViT encoder;
- :mod:`~neurips26.nn.lora`: LoRA adapters on linear layers;
- :mod:`~neurips26.nn.conv`: small time-conditioned U-Nets (2-D images, 1-D fields).
"""

from neurips26.nn.adaln import (
    AdaLNZeroBlock,
    ConcatConditionedBlock,
    ConditionedTransformer,
    ConditionedTransformerConfig,
    concat_mlp_hidden,
)
from neurips26.nn.attention import KVCache, MultiHeadAttention, causal_mask, check_mask, tree_mask
from neurips26.nn.conv import UNet, UNet1D, UNet2D, UNetConfig
from neurips26.nn.embeddings import (
    LearnedPositions,
    RotaryEmbedding,
    SinusoidalPositions,
    TimestepEmbedding,
    apply_rope,
    check_ids,
    rope_tables,
    sinusoidal_embedding,
)
from neurips26.nn.hooks import HookPoint, hook_points, hooked
from neurips26.nn.lora import (
    LoRALinear,
    apply_lora,
    lora_modules,
    lora_parameters,
    merge_lora,
    set_lora_enabled,
    unmerge_lora,
)
from neurips26.nn.sampling import STRATEGIES, generate, next_token_distribution, sample_next_token
from neurips26.nn.transformer import (
    MLP,
    POSITION_KINDS,
    Decoder,
    DecoderBlock,
    DecoderConfig,
    DecoderOutput,
)
from neurips26.nn.vit import PatchEmbedding, ViT, ViTBlock, ViTConfig, ViTOutput

__all__ = [
    # embeddings
    "LearnedPositions",
    "RotaryEmbedding",
    "SinusoidalPositions",
    "TimestepEmbedding",
    "apply_rope",
    "check_ids",
    "rope_tables",
    "sinusoidal_embedding",
    # attention
    "KVCache",
    "MultiHeadAttention",
    "causal_mask",
    "check_mask",
    "tree_mask",
    # hooks
    "HookPoint",
    "hook_points",
    "hooked",
    # transformer
    "POSITION_KINDS",
    "MLP",
    "Decoder",
    "DecoderBlock",
    "DecoderConfig",
    "DecoderOutput",
    # sampling
    "STRATEGIES",
    "generate",
    "next_token_distribution",
    "sample_next_token",
    # adaln
    "AdaLNZeroBlock",
    "ConcatConditionedBlock",
    "ConditionedTransformer",
    "ConditionedTransformerConfig",
    "concat_mlp_hidden",
    # vit
    "PatchEmbedding",
    "ViT",
    "ViTBlock",
    "ViTConfig",
    "ViTOutput",
    # lora
    "LoRALinear",
    "apply_lora",
    "lora_modules",
    "lora_parameters",
    "merge_lora",
    "set_lora_enabled",
    "unmerge_lora",
    # conv
    "UNet",
    "UNet1D",
    "UNet2D",
    "UNetConfig",
]
