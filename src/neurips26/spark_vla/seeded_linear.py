"""A linear layer initialised from a private generator: the router and the projectors are built reproducibly
from a seed without touching the global random state."""

from __future__ import annotations

import math

import torch
from torch import nn


def seeded_linear(fan_in: int, fan_out: int, generator: torch.Generator) -> nn.Linear:
    """An ``nn.Linear`` with PyTorch's default initialisation (Kaiming-uniform weight, a = √5; uniform bias
    in ±1/√fan_in) drawn from ``generator``, not the global RNG."""
    layer = torch.nn.utils.skip_init(nn.Linear, fan_in, fan_out)
    nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
    bound = 1.0 / math.sqrt(fan_in)
    nn.init.uniform_(layer.bias, -bound, bound, generator=generator)
    return layer


__all__ = ["seeded_linear"]
