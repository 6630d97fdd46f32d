"""Flow matching on the linear path: interpolation, velocity targets, time grids and an Euler sampler.

Shared by chapters 07 (JAG), 08 and 14. Convention: ``t = 0`` is data, ``t = 1`` is noise, and

    z_t = (1 − t) x₀ + t ε,    ε ~ N(0, I)     (path, :func:`interpolate`)
    u = dz_t/dt = ε − x₀                       (target, :func:`velocity_target`)
    x₀ = z_t − t u,   ε = z_t + (1 − t) u     (:func:`x0_from_velocity`, :func:`noise_from_velocity`)
    L(θ) = E_{t, x₀, ε} ‖v_θ(z_t, t) − u‖²     (the flow-matching loss a caller writes)

A trained ``v_θ`` approximates ``E[ε − x₀ | z_t]``, and the ODE ``dz/dt = v_θ(z, t)`` from ``t = 1`` to 0
carries noise to data (:func:`euler_sample`, :func:`euler_step`) along a grid (:func:`uniform_grid`, or
:func:`shifted_grid` with the SD3/Wan shift ``t' = s t / (1 + (s − 1) t)``). Training levels come from
:func:`sample_times` (uniform or logit-normal).

- :mod:`~neurips26.flow.path`: the path, its target and inversions; times per sample or per frame;
- :mod:`~neurips26.flow.schedule`: time grids, the timestep shift, training-time distributions;
- :mod:`~neurips26.flow.sampler`: the Euler step and sampler.
"""

from neurips26.flow.path import (
    Time,
    broadcast_time,
    interpolate,
    noise_from_velocity,
    velocity_target,
    x0_from_velocity,
)
from neurips26.flow.sampler import VelocityFn, euler_sample, euler_step
from neurips26.flow.schedule import (
    DISTRIBUTIONS,
    check_grid,
    sample_times,
    shift_time,
    shifted_grid,
    uniform_grid,
)

__all__ = [
    "DISTRIBUTIONS",
    "Time",
    "VelocityFn",
    "broadcast_time",
    "check_grid",
    "euler_sample",
    "euler_step",
    "interpolate",
    "noise_from_velocity",
    "sample_times",
    "shift_time",
    "shifted_grid",
    "uniform_grid",
    "velocity_target",
    "x0_from_velocity",
]
