"""LoRA: low-rank adapters on frozen linear layers (Hu et al., *LoRA*, ICLR 2022).

A frozen linear layer ``y = W x + b`` (W: out × in) gets a trainable low-rank update::

    y = W x + b + (α / r) · B A x          A: r × in (Kaiming-uniform), B: out × r (zeros)

B = 0 at initialisation, so the adapted model starts as the base model. Only A and B train; W and b keep
``requires_grad = False``. Merging folds the update into the weight, ``W ← W + (α/r) B A`` (no extra cost at
inference); unmerging subtracts it again (exact up to float rounding, ~1e-7 relative in float32).
Disabling the adapter (or rank 0) skips the update branch, so the output is *exactly* the base layer's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch
from torch import nn

from neurips26.validation import check_float, check_int, check_seed


class LoRALinear(nn.Module):
    """A frozen ``nn.Linear`` plus a rank-``rank`` update scaled by ``alpha / rank``: (…, in) → (…, out).

    ``seed`` fixes the Kaiming-uniform draw of A through a private generator (global RNG untouched).
    """

    def __init__(self, base: nn.Linear, rank: int, alpha: float, *, seed: int = 0) -> None:
        super().__init__()
        if not isinstance(base, nn.Linear):
            raise TypeError(f"base must be a torch.nn.Linear; got {type(base).__name__}")
        self.rank = check_int("rank", rank, minimum=0)
        self.alpha = check_float("alpha", alpha)
        check_seed("seed", seed)
        self.base = base
        for p in base.parameters():
            p.requires_grad_(False)
        # α/r; with rank 0 there is no update and no scale.
        self.scale = self.alpha / self.rank if self.rank else 0.0
        w = base.weight
        self.lora_A = nn.Parameter(torch.empty(self.rank, base.in_features, dtype=w.dtype, device=w.device))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, self.rank, dtype=w.dtype, device=w.device))
        if self.rank:
            generator = torch.Generator(device=w.device).manual_seed(seed)
            # The initialisation nn.Linear uses for its own weight (Kaiming-uniform, a = √5).
            nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5), generator=generator)
        self.enabled = True
        self.merged = False

    @property
    def in_features(self) -> int:
        return self.base.in_features

    @property
    def out_features(self) -> int:
        return self.base.out_features

    def delta_weight(self) -> torch.Tensor:
        """The update (α/r) B A, shape (out, in)."""
        return self.scale * (self.lora_B @ self.lora_A)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.base(x)  # W x + b (with the update inside W when merged)
        if self.enabled and not self.merged and self.rank:
            y = y + self.scale * ((x @ self.lora_A.T) @ self.lora_B.T)  # + (α/r) B (A x)
        return y

    def enable(self) -> None:
        """Use the update in forward."""
        self.enabled = True

    def disable(self) -> None:
        """Skip the update: forward equals the base layer exactly. Unmerge first if merged."""
        if self.merged:
            raise RuntimeError("cannot disable a merged LoRA adapter; call unmerge() first")
        self.enabled = False

    @torch.no_grad()
    def merge(self) -> None:
        """W ← W + (α/r) B A; forward then runs the base layer alone."""
        if self.merged:
            raise RuntimeError("LoRA adapter is already merged")
        if not self.enabled:
            raise RuntimeError("cannot merge a disabled LoRA adapter; call enable() first")
        self.base.weight += self.delta_weight()
        self.merged = True

    @torch.no_grad()
    def unmerge(self) -> None:
        """W ← W − (α/r) B A, undoing :meth:`merge`."""
        if not self.merged:
            raise RuntimeError("LoRA adapter is not merged")
        self.base.weight -= self.delta_weight()
        self.merged = False

    def extra_repr(self) -> str:
        return f"rank={self.rank}, alpha={self.alpha}, enabled={self.enabled}, merged={self.merged}"


def _matches(name: str, targets: tuple[str, ...]) -> bool:
    """A qualified module name matches a target equal to it or to a dotted suffix of it."""
    return any(name == t or name.endswith("." + t) for t in targets)


def apply_lora(
    model: nn.Module,
    target_names: Iterable[str],
    rank: int,
    alpha: float,
    *,
    seed: int = 0,
    freeze_base: bool = True,
) -> list[str]:
    """Replace, in place, every ``nn.Linear`` of ``model`` whose name matches by a :class:`LoRALinear`.

    A module named ``"blocks.0.attn.qkv"`` matches the targets ``"qkv"``, ``"attn.qkv"`` or the full name.
    With ``freeze_base`` (the default) every other parameter of ``model`` is frozen too, so that
    :func:`lora_parameters` are the only trainable ones. Adapter k (in module order) is seeded ``seed + k``.
    Returns the qualified names that were wrapped. Raises ValueError when no linear layer matches and
    TypeError when a target names a module that is not an ``nn.Linear`` (or is already wrapped).
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module; got {type(model).__name__}")
    if isinstance(target_names, str):
        target_names = [target_names]
    targets = tuple(target_names)
    if not targets or not all(isinstance(t, str) and t for t in targets):
        raise ValueError(f"target_names must be a non-empty list of module names; got {targets!r}")
    check_int("rank", rank, minimum=0)
    check_float("alpha", alpha)
    check_seed("seed", seed)

    chosen = []
    for name, module in model.named_modules():
        if not name or not _matches(name, targets):
            continue
        if isinstance(module, LoRALinear):
            raise TypeError(f"module {name!r} already has a LoRA adapter")
        if not isinstance(module, nn.Linear):
            raise TypeError(f"target {name!r} is a {type(module).__name__}, not a torch.nn.Linear")
        chosen.append(name)
    if not chosen:
        raise ValueError(f"no nn.Linear in the model matches target_names {targets!r}")

    if freeze_base:  # freeze everything except adapters applied earlier
        earlier = {id(p) for p in lora_parameters(model)}
        for p in model.parameters():
            if id(p) not in earlier:
                p.requires_grad_(False)
    for k, name in enumerate(chosen):
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name)
        setattr(parent, child, LoRALinear(getattr(parent, child), rank, alpha, seed=seed + k))
    return chosen


def lora_modules(model: nn.Module) -> list[LoRALinear]:
    """Every :class:`LoRALinear` inside ``model``, in module order."""
    return [m for m in model.modules() if isinstance(m, LoRALinear)]


def lora_parameters(model: nn.Module) -> list[nn.Parameter]:
    """The trainable LoRA factors (A, B of every adapter) — what to hand to the optimiser."""
    return [p for m in lora_modules(model) for p in (m.lora_A, m.lora_B)]


def set_lora_enabled(model: nn.Module, enabled: bool) -> None:
    """Enable or disable every adapter in ``model``."""
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool; got {type(enabled).__name__}")
    for m in lora_modules(model):
        if enabled:
            m.enable()
        else:
            m.disable()


def merge_lora(model: nn.Module) -> None:
    """Merge every adapter of ``model`` into its base weight."""
    for m in lora_modules(model):
        m.merge()


def unmerge_lora(model: nn.Module) -> None:
    """Undo :func:`merge_lora`."""
    for m in lora_modules(model):
        m.unmerge()
