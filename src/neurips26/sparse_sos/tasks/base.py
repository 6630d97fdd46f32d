"""What every task of the chapter provides, so one set of runners times and checks all six.

A task instance is a block conic program (sparse or dense formulation of the same problem) plus a
differentiable map from the task's parameters ``θ`` to the program's data ``(b, q, A's values)``, the sign
that turns the optimal value ``p* = min qᵀx`` into the task's value (``γ* = −p*`` for an SOS bound), and,
where the task has one, a loss on the solution ``(x*, y*, s*)`` that needs the structured adjoint.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import torch

from neurips26.sparse_sos.conic import BlockConicProgram

FORMULATIONS: tuple[str, ...] = ("sparse", "dense")


class ConicData(NamedTuple):
    """The parts of a program's data that depend on ``θ`` (``None``: the program's own, constant)."""

    b: torch.Tensor | None = None
    q: torch.Tensor | None = None
    a_values: torch.Tensor | None = None


@dataclass(frozen=True, eq=False)
class TaskInstance:
    """One task at one size, in one formulation.

    ``data(θ)`` must be differentiable in ``θ`` (float64 torch), and ``data(theta0)`` must reproduce
    ``program``'s data. ``value_sign · p*(θ)`` is the task's value (the certified bound, the relaxation's
    value, the certified rate ...). ``solution_loss(x, y, s)``, when not ``None``, is the task's loss on
    the solution (a certificate, moments, an extracted minimiser or rotations) for the structured path.
    ``support_size``: how many data entries depend on ``θ`` (``|S|`` of the Danskin cost model).
    """

    task: str
    size: int
    formulation: str
    program: BlockConicProgram
    theta0: torch.Tensor
    data: Callable[[torch.Tensor], ConicData]
    value_sign: float
    support_size: int
    solution_loss: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor] | None = None

    @property
    def multi_block(self) -> bool:
        """Whether the sparse formulation has more than one PSD block (the structure the backward keeps)."""
        return len(self.program.psd) > 1
