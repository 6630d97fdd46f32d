"""Euler integration of the flow ODE ``dz/dt = v(z, t)`` along a time grid, one step or a whole path.

With a velocity model ``v ≈ E[ε − x₀ | z_t]`` the ODE carries noise at ``t = 1`` to data at ``t = 0``
(rectified flow / flow matching; path and convention in :mod:`neurips26.flow.path`). On a grid
``t₀ > t₁ > … > t_N`` the Euler step is

    z_{t_{n+1}} = z_{t_n} + (t_{n+1} − t_n) · v(z_{t_n}, t_n),

exact whenever ``v`` is constant along the way (a straight path: a single data point's velocity
``ε − x₀``), first-order accurate otherwise. A velocity function is any callable
``velocity_fn(z, t) -> v`` with ``z`` of shape ``(B, ...)``, ``t`` a ``(B,)`` tensor on ``z``'s device and
dtype, and ``v`` of ``z``'s shape. Callers that interleave conditioning (a KV cache, a memory render)
between steps call :func:`euler_step` themselves; :func:`euler_sample` runs the whole loop, and its
``project`` callback ``project(z, t_next) -> z`` runs after every step (e.g. to re-inject known
reference frames at the new level, as image-to-video samplers do).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from neurips26.flow.path import Time, broadcast_time, check_same_shape, check_sample
from neurips26.flow.schedule import check_grid

#: ``velocity_fn(z, t) -> v``: ``z`` of shape ``(B, ...)``, ``t`` of shape ``(B,)``, ``v`` of ``z``'s shape.
VelocityFn = Callable[[Tensor, Tensor], Tensor]
#: ``project(z, t_next) -> z``: the state after a step to level ``t_next`` (a float), edited; same shape.
ProjectFn = Callable[[Tensor, float], Tensor]


def euler_step(z: Tensor, v: Tensor, t: Time, t_next: Time) -> Tensor:
    """One Euler step ``z + (t_next − t) v`` from level ``t`` to ``t_next`` (either direction).

    ``t`` and ``t_next`` are numbers or tensors of levels over leading dimensions of ``z`` (per sample,
    per frame), so frames at different levels, or held still (``t_next = t``), move in one call.
    """
    z = check_sample("z", z)
    v = check_same_shape("v", v, z)
    dt = broadcast_time(t_next, z, "t_next") - broadcast_time(t, z, "t")
    return z + dt * v


def euler_sample(
    velocity_fn: VelocityFn,
    noise: Tensor,
    grid: Sequence[float] | Tensor,
    *,
    return_path: bool = False,
    grad: bool = False,
    project: ProjectFn | None = None,
) -> Tensor | tuple[Tensor, tuple[Tensor, ...]]:
    """Integrate ``dz/dt = velocity_fn(z, t)`` with Euler steps from ``grid[0]`` to ``grid[-1]``.

    ``noise`` (shape ``(B, ...)``) is the state at ``grid[0]`` (pure noise when it is 1); a decreasing
    grid ending at 0 returns samples, an increasing one inverts data to noise. Returns the final ``z``, and
    with ``return_path=True`` also the states at every grid time (``len(grid)`` tensors, the first is
    ``noise``). Runs under ``torch.no_grad()`` unless ``grad=True`` (then gradients flow through every
    step, e.g. to train through a short sampler). ``project``, when given, replaces the state after every
    step by ``project(z, t_next)`` (the path records the projected states); without it the loop is
    unchanged.
    """
    if not callable(velocity_fn):
        raise TypeError(f"velocity_fn must be callable; got {type(velocity_fn).__name__}")
    if project is not None and not callable(project):
        raise TypeError(f"project must be callable or None; got {type(project).__name__}")
    noise = check_sample("noise", noise)
    if noise.ndim < 1:
        raise ValueError("noise must have a batch dimension, shape (B, ...); got a 0-dimensional tensor")
    times = check_grid(grid)
    z, path = noise, [noise]
    with contextlib.nullcontext() if grad else torch.no_grad():
        for t, t_next in zip(times, times[1:], strict=False):
            level = torch.full((z.shape[0],), t, dtype=z.dtype, device=z.device)
            v = velocity_fn(z, level)
            if not isinstance(v, Tensor) or v.shape != z.shape:
                got = tuple(v.shape) if isinstance(v, Tensor) else type(v).__name__
                raise ValueError(f"velocity_fn must return a tensor of shape {tuple(z.shape)}; got {got}")
            z = z + (t_next - t) * v
            if project is not None:
                projected = project(z, t_next)
                if not isinstance(projected, Tensor) or projected.shape != z.shape:
                    got = (
                        tuple(projected.shape) if isinstance(projected, Tensor) else type(projected).__name__
                    )
                    raise ValueError(f"project must return a tensor of shape {tuple(z.shape)}; got {got}")
                z = projected
            if return_path:
                path.append(z)
    return (z, tuple(path)) if return_path else z
