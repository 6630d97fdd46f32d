"""The chapter's per-instance baselines (chapter 06, "Baselines"), one module each:

- :mod:`.lf_paste` — the LF prior with the sensors pasted in (``lf_paste``);
- :mod:`.field_tto` — field-space test-time optimisation: Adam on the energy ``E`` with the hard projection
  (``field_tto``);
- :mod:`.fourdvar` — strong-constraint 4D-Var: Adam on the initial state through the HF solver, on the
  sensor misfit (``fourdvar``; exact in this perfect-model twin when started from the LF first frame).

Every baseline takes one problem ``(x1, y, mask)`` of ``(B, T, X)`` tensors (the LF prior, the
observations, the bool sensor mask), validates it with :func:`check_problem` and returns a ``(B, T, X)``
field on ``x1``'s device and dtype. The learned baselines (the HF-trained oracle bridge, DPS) live with the
bridge code. This file holds the shared checks only and imports no submodule, so each loads on its own
(``from neurips26.picsb.baselines import field_tto``).
"""

from __future__ import annotations

import torch
from torch import Tensor

from neurips26.picsb.burgers import BurgersConfig
from neurips26.picsb.observations import check_mask


def check_problem(
    x1: object, y: object, mask: object, burgers: BurgersConfig | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """``x1`` a floating ``(B, T, X)`` field of the HF shape, ``y`` the same shape (cast to ``x1``'s
    dtype/device), ``mask`` a bool tensor of that shape; errors name the argument."""
    cfg = burgers or BurgersConfig()
    if not isinstance(x1, Tensor) or not x1.is_floating_point():
        raise TypeError(f"x1 must be a floating-point torch.Tensor; got {type(x1).__name__}")
    if x1.ndim != 3 or tuple(x1.shape[1:]) != cfg.shape:
        raise ValueError(f"x1 must have shape (B, {cfg.frames}, {cfg.grid}); got {tuple(x1.shape)}")
    if not isinstance(y, Tensor) or not y.is_floating_point():
        raise TypeError(f"y must be a floating-point torch.Tensor; got {type(y).__name__}")
    if y.shape != x1.shape:
        raise ValueError(f"y must have x1's shape {tuple(x1.shape)}; got {tuple(y.shape)}")
    mask = check_mask(mask, x1)
    if mask.device != x1.device:
        mask = mask.to(x1.device)
    return x1, y.to(dtype=x1.dtype, device=x1.device), mask


def jittered(x: Tensor, jitter: float, seed: int) -> Tensor:
    """``x + jitter · ξ``, ``ξ ~ N(0, I)`` drawn in float64 on the CPU from ``seed`` (same on every
    device); ``x`` itself when ``jitter == 0``."""
    if jitter == 0.0:
        return x.clone()
    generator = torch.Generator().manual_seed(seed)
    noise = torch.randn(x.shape, generator=generator, dtype=torch.float64)
    return x + jitter * noise.to(dtype=x.dtype, device=x.device)
