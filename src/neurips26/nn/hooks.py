"""Named points where a forward hook can read or replace an internal activation.

A :class:`HookPoint` is an identity module placed on an activation (``x = self.resid_mid(x)``). Because it
is a module, it has a dotted name in ``model.named_modules()`` (``"blocks.2.resid_mid"``) and PyTorch's
``register_forward_hook`` works on it: a hook ``fn(module, inputs, output)`` sees the activation, and when
it returns a tensor, that tensor *replaces* the activation downstream. This is all that activation
patching, steering and ablation need (chapter 12).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from torch import Tensor, nn

Hook = Callable[[nn.Module, tuple, Tensor], Tensor | None]


class HookPoint(nn.Module):
    """The identity, ``x ↦ x``: a named place to attach forward hooks."""

    def forward(self, x: Tensor) -> Tensor:
        return x


def hook_points(model: nn.Module) -> dict[str, HookPoint]:
    """Every :class:`HookPoint` inside ``model``, by dotted name, in forward order."""
    return {name: module for name, module in model.named_modules() if isinstance(module, HookPoint)}


@contextmanager
def hooked(model: nn.Module, hooks: Mapping[str, Hook]) -> Iterator[None]:
    """Attach forward hooks to named hook points for the duration of a ``with`` block.

    ``hooks`` maps a hook-point name to ``fn(module, inputs, output)``; returning a tensor replaces the
    activation, returning ``None`` only reads it. The hooks are removed on exit, also after an error.
    """
    points = hook_points(model)
    unknown = sorted(set(hooks) - set(points))
    if unknown:
        raise ValueError(
            f"hooks names unknown hook points {unknown}; known ones look like {list(points)[:5]}"
        )
    handles = [points[name].register_forward_hook(fn) for name, fn in hooks.items()]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
