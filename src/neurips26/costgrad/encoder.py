"""The frozen frame encoder (a stand-in for DINOv2): non-overlapping ``patch × patch`` patches, one fixed
seeded random linear map per patch to ``width`` features, then ``tanh``.

A 32 × 32 frame with 4 × 4 patches gives an 8 × 8 grid of ``P = 64`` tokens of ``D = 32`` features (a 64 ×
64 frame, 256 tokens, serves the timing at the paper's grid size). The map is
:class:`~neurips26.nn.PatchEmbedding` with Gaussian weights of standard deviation ``gain / √(3·patch²)``
and no bias, drawn from ``seed`` and never trained: observation and goal go through the same features, as
with a frozen DINOv2.
"""

from __future__ import annotations

import numpy as np
import torch

from neurips26.nn import PatchEmbedding
from neurips26.validation import check_float, check_int, check_seed

PATCH = 4
WIDTH = 32
GAIN = 2.0


class FrozenEncoder(torch.nn.Module):
    """Frames ``(B, 3, S, S)`` in ``[0, 1]`` → tokens ``(B, (S/patch)², width)`` (module doc)."""

    def __init__(self, *, patch: int = PATCH, width: int = WIDTH, gain: float = GAIN, seed: int = 0):
        super().__init__()
        self.patch = check_int("patch", patch, minimum=1)
        self.width = check_int("width", width, minimum=1)
        gain = check_float("gain", gain, minimum=0.0, strict_min=True)
        self.embed = PatchEmbedding(3, self.width, self.patch)
        g = torch.Generator().manual_seed(check_seed("seed", seed))
        fan_in = 3 * self.patch**2
        with torch.no_grad():
            self.embed.conv.weight.copy_(torch.randn(self.embed.conv.weight.shape, generator=g))
            self.embed.conv.weight.mul_(gain / fan_in**0.5)
            self.embed.conv.bias.zero_()
        for p in self.parameters():
            p.requires_grad_(False)
        self.eval()

    @torch.no_grad()
    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.embed(frames.to(self.embed.conv.weight.dtype)))

    def encode(self, frames: np.ndarray) -> torch.Tensor:
        """NumPy frames → tokens (float32 tensor)."""
        return self(torch.from_numpy(np.ascontiguousarray(frames)))
