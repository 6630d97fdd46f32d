"""Explicit depth input, the "sensor oracle" baseline: a depth image becomes N tokens in the 3D slot.

SPARK-VLA learns geometry implicitly; the reference it is measured against reads the true depth map from a
sensor at test time (the "explicit 3D input" baseline). Here the z-buffer depth of the rendered frame, already
standardised by the caller, is cut into the same 8 x 8 patches as the image and embedded like a ViT input::

    D (B, 1, 48, 48)  ->  z_i = LN(W_E vec(D_patch i) + E_i)      i = 1 .. N = 36,   z_i in R^d

and the policy takes these tokens in place of the 3D pathway: ``policy.candidates(v2d, DepthTokens(D))``,
so the candidates are ``[V2D + e2D + P; Z + e3D + P]`` and everything downstream is unchanged. The final
LayerNorm puts the depth tokens on the scale of the encoder's (LayerNorm'd) output tokens.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from neurips26.nn import PatchEmbedding
from neurips26.spark_vla.vla import INIT_STD
from neurips26.validation import check_int, check_seed


class DepthTokens(nn.Module):
    """Depth image (B, 1, G p, G p) -> (B, G², width): patch embedding + learned positions + LayerNorm.

    Defaults: 48 x 48 depth, 8 x 8 patches, a 6 x 6 grid, width 64. Weights are a function of ``seed`` only
    (built inside ``torch.random.fork_rng``; positions N(0, 0.02²) from a private generator).
    """

    def __init__(self, width: int = 64, patch_size: int = 8, grid: int = 6, *, seed: int = 0):
        super().__init__()
        self.width = check_int("width", width, minimum=1)
        self.patch_size = check_int("patch_size", patch_size, minimum=1)
        self.grid = check_int("grid", grid, minimum=1)
        seed = check_seed("seed", seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.embed = PatchEmbedding(1, width, patch_size)
            self.positions = nn.Parameter(torch.empty(grid * grid, width))
            self.norm = nn.LayerNorm(width)
        with torch.no_grad():
            self.positions.normal_(0.0, INIT_STD, generator=torch.Generator().manual_seed(seed))

    @property
    def image_size(self) -> int:
        """Side of the depth image, grid * patch_size."""
        return self.grid * self.patch_size

    @property
    def num_patches(self) -> int:
        """N = grid²."""
        return self.grid * self.grid

    def forward(self, depth: Tensor) -> Tensor:
        """Tokens (B, N, width) of a standardised ``depth`` image (B, 1, S, S), S = grid * patch_size."""
        side = self.image_size
        if not isinstance(depth, Tensor):
            raise TypeError(
                f"depth must be a torch.Tensor of shape (B, 1, {side}, {side}); got {type(depth).__name__}"
            )
        if not depth.is_floating_point():
            raise ValueError(f"depth must be a floating-point tensor; got dtype {depth.dtype}")
        if depth.dim() != 4 or depth.shape[0] < 1 or tuple(depth.shape[1:]) != (1, side, side):
            raise ValueError(f"depth must have shape (B, 1, {side}, {side}); got {tuple(depth.shape)}")
        return self.norm(self.embed(depth) + self.positions)


__all__ = ["DepthTokens"]
