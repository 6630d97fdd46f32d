"""Argument checks shared by the chapter's recurrences and layers (a ``ValueError``/``TypeError`` naming the
argument)."""

from __future__ import annotations

from collections.abc import Sequence

from torch import Tensor

from neurips26.validation import check_int


def check_tensor(
    name: str,
    value: object,
    *,
    shape: Sequence[int] | None = None,
    min_dim: int = 0,
    floating: bool = True,
) -> Tensor:
    """``value`` as a tensor: ``TypeError`` if it is not one; ``ValueError`` for a wrong shape or dtype."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(value).__name__}")
    if floating and not value.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor; got {value.dtype}")
    if not floating and value.dtype.is_floating_point:
        raise ValueError(f"{name} must be an integer tensor; got {value.dtype}")
    if value.ndim < min_dim:
        raise ValueError(f"{name} must have at least {min_dim} dimensions; got shape {tuple(value.shape)}")
    if shape is not None and tuple(value.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}; got {tuple(value.shape)}")
    return value


def heads_of(width: int, heads: int) -> int:
    """``heads`` checked to be a positive divisor of ``width``."""
    width = check_int("width", width, minimum=1)
    heads = check_int("heads", heads, minimum=1)
    if width % heads:
        raise ValueError(f"heads must divide width; got width={width}, heads={heads}")
    return heads
