"""Checks every task instance shares (data round trip, Danskin and structured gradients against central
finite differences), used by the per-task test modules."""

from __future__ import annotations

import numpy as np
import torch

from neurips26.sparse_sos.layer import conic_solution, conic_value
from neurips26.sparse_sos.tasks.base import TaskInstance


def assert_data_reproduces(instance: TaskInstance) -> None:
    """``data(theta0)`` gives back the program's own ``b``, ``q`` and ``A`` values."""
    data = instance.data(instance.theta0.clone())
    program = instance.program
    for name, own in (("b", program.b), ("q", program.q), ("a_values", program.A.tocsc().data)):
        value = getattr(data, name)
        if value is not None:
            np.testing.assert_allclose(value.detach().numpy(), own, atol=1e-12, err_msg=name)


def task_value(instance: TaskInstance, theta: torch.Tensor) -> torch.Tensor:
    return instance.value_sign * conic_value(instance.program, **instance.data(theta)._asdict())


def task_loss(instance: TaskInstance, theta: torch.Tensor) -> torch.Tensor:
    x, y, s = conic_solution(instance.program, **instance.data(theta)._asdict())
    return instance.solution_loss(x, y, s)


def directional_errors(instance: TaskInstance, of, *, h: float = 1e-3, seed: int = 0) -> tuple[float, float]:
    """``(autograd · v, central FD along v)`` for a seeded unit direction ``v``."""
    v = torch.as_tensor(np.random.default_rng(seed).standard_normal(instance.theta0.numel()))
    v = v / v.norm()
    theta = instance.theta0.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(of(instance, theta), theta)
    with torch.no_grad():
        fd = (of(instance, instance.theta0 + h * v) - of(instance, instance.theta0 - h * v)) / (2 * h)
    return float(grad @ v), float(fd)


def relative_error(pair: tuple[float, float]) -> float:
    a, b = pair
    return abs(a - b) / max(abs(b), 1e-12)


def test_relative_error_is_symmetric_in_scale():
    assert relative_error((2.0, 1.0)) == 1.0
    assert relative_error((1.0, 1.0)) == 0.0
