"""The Llama MLP of the chapter's drafters (SpecBlock, EAGLE-3): ``W_down (SiLU(W_gate u) ⊙ W_up u)``."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn


class SwiGLU(nn.Module):
    """``u ↦ W_down (SiLU(W_gate u) ⊙ W_up u)``, no biases; ``hidden`` is the gated width."""

    def __init__(self, width: int, hidden: int):
        super().__init__()
        self.gate = nn.Linear(width, hidden, bias=False)
        self.up = nn.Linear(width, hidden, bias=False)
        self.down = nn.Linear(hidden, width, bias=False)

    def forward(self, u: Tensor) -> Tensor:
        return self.down(F.silu(self.gate(u)) * self.up(u))
