"""Scores of a reconstruction and its cost (chapter 06, claims P1–P4 and P8).

Every score is per case: a field batch ``(..., T, X)`` gives a tensor of shape ``(...)``; the experiments
average or take medians over cases themselves.

- :func:`relative_l2` ``‖x̂ − u‖ / ‖u‖`` over ``(T, X)`` — re-exported from
  :mod:`neurips26.picsb.burgers` (one definition). It needs the HF truth, so it is for **scoring only**:
  no training or reconstruction path may call it (the chapter's "no HF field" rule).
- :func:`residual_norm` ``‖R(x̂)‖`` over ``(T − 1, X)``, ``R`` the scheme's one-step defect
  (:func:`neurips26.picsb.burgers.residual`): the PDE consistency of claim P2; 0 for an HF solution.
- :func:`sensor_mismatch` ``max |M ⊙ x̂ − y|``: how exactly the observations are honoured (claim P8; 0
  under hard conditioning).
- :class:`RunCost`: network forward evaluations (NFEs) and wall time of a reconstruction, for the
  accuracy-vs-cost comparison (claim P4); :func:`timed` measures a call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import torch
from torch import Tensor

from neurips26.picsb.burgers import BurgersConfig, relative_l2, residual
from neurips26.picsb.observations import check_mask
from neurips26.validation import check_float, check_int

T = TypeVar("T")


def residual_norm(x: Tensor, config: BurgersConfig | None = None) -> Tensor:
    """Per-case ``‖R(x)‖₂`` over the ``(T − 1, X)`` defects of a field ``(..., T, X)``; shape ``(...)``."""
    return torch.linalg.vector_norm(residual(x, config), dim=(-2, -1))


def sensor_mismatch(x: Tensor, y: Tensor, mask: Tensor) -> Tensor:
    """Per-case ``max |M ⊙ x − y|`` over ``(T, X)`` (only sensor sites count); shape ``x.shape[:-2]``."""
    if not isinstance(x, Tensor) or not x.is_floating_point() or x.ndim < 2:
        raise TypeError(
            f"x must be a floating-point torch.Tensor of shape (..., T, X); got {type(x).__name__}"
        )
    mask = check_mask(mask, x)
    if not isinstance(y, Tensor) or y.shape != x.shape:
        shape = tuple(y.shape) if isinstance(y, Tensor) else type(y).__name__
        raise ValueError(f"y must have the field's shape {tuple(x.shape)}; got {shape}")
    gap = torch.where(mask, x - y.to(x), torch.zeros_like(x)).abs()
    return gap.amax(dim=(-2, -1))


@dataclass(frozen=True)
class RunCost:
    """What one reconstruction of ``cases`` cases cost: ``nfe`` network forward evaluations (per batch,
    i.e. sampler steps; a backward is not counted here — :mod:`neurips26.picsb.cost_model` prices FLOPs)
    and ``seconds`` of wall time. ``per_case`` divides the time by the batch size."""

    nfe: int
    seconds: float
    cases: int = 1

    def __post_init__(self) -> None:
        check_int("nfe", self.nfe, minimum=0)
        check_float("seconds", self.seconds, minimum=0.0)
        check_int("cases", self.cases, minimum=1)

    @property
    def per_case(self) -> float:
        """Wall seconds per case."""
        return self.seconds / self.cases

    def __add__(self, other: RunCost) -> RunCost:
        """Two stages of one reconstruction of the same cases: NFEs and seconds add."""
        if not isinstance(other, RunCost):
            return NotImplemented
        if other.cases != self.cases:
            raise ValueError(f"other must cost the same number of cases {self.cases}; got {other.cases}")
        return RunCost(self.nfe + other.nfe, self.seconds + other.seconds, self.cases)


def timed(fn: Callable[[], T], *, nfe: int = 0, cases: int = 1) -> tuple[T, RunCost]:
    """Run ``fn()`` once and return its result with its :class:`RunCost` (``time.perf_counter`` wall time;
    CUDA work is synchronised before and after so asynchronous kernels are counted)."""
    nfe = check_int("nfe", nfe, minimum=0)
    cases = check_int("cases", cases, minimum=1)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    result = fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return result, RunCost(nfe, time.perf_counter() - start, cases)


__all__ = ["RunCost", "relative_l2", "residual_norm", "sensor_mismatch", "timed"]
