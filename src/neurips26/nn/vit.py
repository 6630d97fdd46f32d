"""A small Vision Transformer encoder (Dosovitskiy et al., *An Image is Worth 16x16 Words*, ICLR 2021).

An image (B, C, H, W) is cut into non-overlapping p × p patches, each linearly embedded (a convolution with
kernel = stride = p), a learned position embedding is added, an optional learned class token is prepended,
and ``depth`` pre-norm blocks process the tokens::

    z_0 = [cls ; patches(x) W_E] + E_pos                 (B, T, D),  T = N (+ 1),  N = (H/p)(W/p)
    z_l = z_{l-1} + Attn(LN(z_{l-1}));  z_l = z_l + MLP(LN(z_l))          l = 1 … depth
    tokens = LN(z_depth)

On request the encoder returns every ``z_l`` (``depth + 1`` tensors, ``z_0`` the embedding first) and every
layer's attention weights softmax(Q Kᵀ / √d_head), shape (B, heads, T, T), rows summing to one. Linear layers
are named ``qkv``, ``out`` (attention) and ``fc1``, ``fc2`` (MLP) so that
:func:`neurips26.nn.lora.apply_lora` can target them.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from neurips26.nn.attention import MultiHeadAttention
from neurips26.validation import check_float, check_int


def _pair(name: str, value: object) -> tuple[int, int]:
    """An int or a pair of ints, as (height, width), each >= 1."""
    if isinstance(value, tuple | list):
        if len(value) != 2:
            raise ValueError(f"{name} must be an int or a (height, width) pair; got {value!r}")
        return check_int(f"{name}[0]", value[0], minimum=1), check_int(f"{name}[1]", value[1], minimum=1)
    size = check_int(name, value, minimum=1)
    return size, size


@dataclass(frozen=True)
class ViTConfig:
    """Sizes of a ViT encoder.

    image_size: int or (height, width), each divisible by patch_size; in_channels: image channels;
    width: token width D; depth: blocks; heads: attention heads (must divide D); mlp_ratio: MLP hidden / D;
    class_token: prepend a learned class token (``ViTOutput.pooled`` is then that token, else the mean).
    """

    image_size: int | tuple[int, int] = 32
    patch_size: int = 4
    in_channels: int = 3
    width: int = 64
    depth: int = 4
    heads: int = 4
    mlp_ratio: float = 4.0
    class_token: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "image_size", _pair("image_size", self.image_size))
        check_int("patch_size", self.patch_size, minimum=1)
        check_int("in_channels", self.in_channels, minimum=1)
        check_int("width", self.width, minimum=1)
        check_int("depth", self.depth, minimum=1)
        check_int("heads", self.heads, minimum=1)
        check_float("mlp_ratio", self.mlp_ratio, minimum=0.0, strict_min=True)
        if not isinstance(self.class_token, bool):
            raise TypeError(f"class_token must be a bool; got {type(self.class_token).__name__}")
        if self.width % self.heads:
            raise ValueError(f"heads ({self.heads}) must divide width ({self.width})")
        if any(s % self.patch_size for s in self.image_size):
            raise ValueError(
                f"image_size {self.image_size} must be divisible by patch_size {self.patch_size}"
            )

    @property
    def num_patches(self) -> int:
        """N = (H / p) · (W / p)."""
        h, w = self.image_size
        return (h // self.patch_size) * (w // self.patch_size)

    @property
    def num_tokens(self) -> int:
        """T = N, plus one with the class token."""
        return self.num_patches + int(self.class_token)


class PatchEmbedding(nn.Module):
    """(B, C, H, W) → (B, N, D): a p × p convolution with stride p = one shared linear map per patch."""

    def __init__(self, in_channels: int, width: int, patch_size: int) -> None:
        super().__init__()
        self.in_channels = check_int("in_channels", in_channels, minimum=1)
        self.patch_size = check_int("patch_size", patch_size, minimum=1)
        self.conv = nn.Conv2d(
            in_channels, check_int("width", width, minimum=1), patch_size, stride=patch_size
        )

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        if not isinstance(images, torch.Tensor):
            raise TypeError(f"images must be a torch.Tensor; got {type(images).__name__}")
        if images.ndim != 4 or images.shape[1] != self.in_channels:
            raise ValueError(
                f"images must have shape (batch, {self.in_channels}, height, width); "
                f"got {tuple(images.shape)}"
            )
        h, w = images.shape[-2:]
        if h % self.patch_size or w % self.patch_size:
            raise ValueError(
                f"image size ({h}, {w}) is not divisible by patch_size {self.patch_size}; "
                "crop or pad the images to a multiple of the patch size"
            )
        return self.conv(images).flatten(2).transpose(1, 2)  # (B, D, H/p, W/p) → (B, N, D)


class ViTBlock(nn.Module):
    """Pre-norm block: z ← z + Attn(LN(z)); z ← z + MLP(LN(z)).

    ``forward(z, need_weights=False, *, mask=None)`` → ``(z, weights)``, weights (B, heads, T, T) or None.
    ``mask`` goes to the attention unchanged (boolean, True = may attend, or additive; broadcasts to
    (B, heads, T, T)); the default ``None`` lets every token see every token, as :class:`ViT` uses it.
    """

    def __init__(self, width: int, heads: int, mlp_hidden: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attn = MultiHeadAttention(width, heads)  # ViT passes no mask: every patch sees every patch
        self.norm2 = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, mlp_hidden)
        self.fc2 = nn.Linear(mlp_hidden, width)

    def forward(
        self, z: torch.Tensor, need_weights: bool = False, *, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        a, weights = self.attn(self.norm1(z), mask=mask, return_weights=need_weights)
        z = z + a
        z = z + self.fc2(F.gelu(self.fc1(self.norm2(z))))
        return z, weights


@dataclass
class ViTOutput:
    """What :class:`ViT` returns.

    tokens: (B, T, D) final LayerNorm'd tokens (class token first when present); pooled: (B, D) the class
    token, or the mean of the patch tokens without one; hidden_states: ``depth + 1`` tensors (B, T, D),
    the embedding z_0 then each block's output z_l (before the final LayerNorm), or None;
    attentions: ``depth`` tensors (B, heads, T, T), or None.
    """

    tokens: torch.Tensor
    pooled: torch.Tensor
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


class ViT(nn.Module):
    """ViT encoder: images (B, C, H, W) → :class:`ViTOutput`. See the module docstring for the equations."""

    def __init__(self, config: ViTConfig) -> None:
        super().__init__()
        if not isinstance(config, ViTConfig):
            raise TypeError(f"config must be a ViTConfig; got {type(config).__name__}")
        self.config = config
        d = config.width
        self.patch_embed = PatchEmbedding(config.in_channels, d, config.patch_size)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d)) if config.class_token else None
        self.pos_embed = nn.Parameter(torch.zeros(1, config.num_tokens, d))
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        if self.cls_token is not None:
            nn.init.trunc_normal_(self.cls_token, std=0.02)
        hidden = max(1, round(config.mlp_ratio * d))
        self.blocks = nn.ModuleList(ViTBlock(d, config.heads, hidden) for _ in range(config.depth))
        self.norm = nn.LayerNorm(d)

    def forward(
        self, images: torch.Tensor, *, return_hidden_states: bool = False, return_attentions: bool = False
    ) -> ViTOutput:
        expected = self.config.image_size
        z = self.patch_embed(images)  # checks rank, channels and divisibility first
        if tuple(images.shape[-2:]) != expected:
            raise ValueError(
                f"images must be {expected} (the learned position embedding's size); "
                f"got {tuple(images.shape[-2:])}"
            )
        if self.cls_token is not None:
            z = torch.cat([self.cls_token.expand(z.shape[0], -1, -1), z], dim=1)
        z = z + self.pos_embed
        hidden, attentions = [z], []
        for block in self.blocks:
            z, weights = block(z, need_weights=return_attentions)
            hidden.append(z)
            attentions.append(weights)
        tokens = self.norm(z)
        pooled = tokens[:, 0] if self.cls_token is not None else tokens.mean(dim=1)
        return ViTOutput(
            tokens=tokens,
            pooled=pooled,
            hidden_states=tuple(hidden) if return_hidden_states else None,
            attentions=tuple(attentions) if return_attentions else None,
        )
