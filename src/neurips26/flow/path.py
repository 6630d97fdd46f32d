"""The linear (rectified-flow) path between data and noise, its velocity, and the two inversions.

Convention (chapters 07, 08 and 14): ``t = 0`` is data, ``t = 1`` is noise. With data ``x₀`` and Gaussian
noise ``ε ~ N(0, I)``,

    z_t = (1 − t) x₀ + t ε                                     (the path)
    dz_t/dt = ε − x₀ =: u                                       (its velocity, the regression target)

so a network ``v(z_t, t) ≈ u`` tells both ends back from one point of the path:

    x₀ = z_t − t u,        ε = z_t + (1 − t) u.

A time ``t`` is a number in ``[0, 1]`` (one level for the whole batch) or a tensor whose shape is a leading
part of the sample's shape: ``(B,)`` gives one level per sample, ``(B, F)`` one level per frame of a
``(B, F, ...)`` video (Diffusion Forcing); it is broadcast over the remaining trailing dimensions and cast
to the sample's device and dtype.
"""

from __future__ import annotations

import numbers

import torch
from torch import Tensor

from neurips26.validation import check_float

#: A time: one number in ``[0, 1]`` or a tensor of levels over the leading dimensions of a sample.
Time = float | Tensor


def check_sample(name: str, x: object) -> Tensor:
    """A floating ``torch.Tensor`` (samples, noise or velocities); else ``TypeError`` naming ``name``."""
    if not isinstance(x, Tensor) or not x.is_floating_point():
        what = f"dtype {x.dtype}" if isinstance(x, Tensor) else type(x).__name__
        raise TypeError(f"{name} must be a floating torch.Tensor; got {what}")
    return x


def check_same_shape(name: str, x: object, like: Tensor) -> Tensor:
    """``x`` checked by :func:`check_sample` and to have ``like``'s shape (``ValueError`` naming ``name``)."""
    x = check_sample(name, x)
    if x.shape != like.shape:
        raise ValueError(f"{name} must have shape {tuple(like.shape)}; got {tuple(x.shape)}")
    return x


def broadcast_time(t: object, like: Tensor, name: str = "t") -> float | Tensor:
    """``t`` checked to lie in ``[0, 1]`` and made ready to multiply ``like``.

    A number comes back as a Python float (exact scalar arithmetic, any device). A tensor must have the
    shape of a leading part of ``like.shape`` (or be 0-dimensional); it comes back on ``like``'s device and
    dtype with trailing singleton dimensions, e.g. ``(B,) → (B, 1, 1, 1)`` for ``like`` of shape
    ``(B, C, H, W)``. Errors name ``name``.
    """
    if isinstance(t, Tensor):
        if t.is_complex() or not t.is_floating_point():
            raise TypeError(f"{name} must be a float or a floating tensor; got dtype {t.dtype}")
        if t.ndim > like.ndim or t.shape != like.shape[: t.ndim]:
            raise ValueError(
                f"{name} must be a number or a tensor of shape {tuple(like.shape[:1])} (or another leading "
                f"part of {tuple(like.shape)}); got shape {tuple(t.shape)}"
            )
        if t.numel() and not bool(((t >= 0) & (t <= 1)).all()):  # NaN fails both comparisons
            finite = t[torch.isfinite(t)]
            span = f"[{finite.min().item()}, {finite.max().item()}]" if finite.numel() else "non-finite"
            raise ValueError(f"{name} must lie in [0, 1]; got values in {span} (or NaN)")
        return t.to(device=like.device, dtype=like.dtype).reshape(*t.shape, *(1,) * (like.ndim - t.ndim))
    if isinstance(t, bool) or not isinstance(t, numbers.Real):
        raise TypeError(f"{name} must be a float in [0, 1] or a tensor; got {type(t).__name__}")
    return check_float(name, t, minimum=0.0, maximum=1.0)


def interpolate(x0: Tensor, noise: Tensor, t: Time) -> Tensor:
    """The point ``z_t = (1 − t) x₀ + t ε`` of the linear path: ``x0`` at ``t = 0``, ``noise`` at 1."""
    x0 = check_sample("x0", x0)
    noise = check_same_shape("noise", noise, x0)
    tt = broadcast_time(t, x0)
    return (1 - tt) * x0 + tt * noise


def velocity_target(x0: Tensor, noise: Tensor) -> Tensor:
    """The path's velocity ``u = dz_t/dt = ε − x₀``, the flow-matching regression target (constant in t)."""
    x0 = check_sample("x0", x0)
    noise = check_same_shape("noise", noise, x0)
    return noise - x0


def x0_from_velocity(z_t: Tensor, v: Tensor, t: Time) -> Tensor:
    """The data end ``x̂₀ = z_t − t v`` reached by following ``v`` from ``z_t`` down to ``t = 0``."""
    z_t = check_sample("z_t", z_t)
    v = check_same_shape("v", v, z_t)
    return z_t - broadcast_time(t, z_t) * v


def noise_from_velocity(z_t: Tensor, v: Tensor, t: Time) -> Tensor:
    """The noise end ``ε̂ = z_t + (1 − t) v`` reached by following ``v`` from ``z_t`` up to ``t = 1``."""
    z_t = check_sample("z_t", z_t)
    v = check_same_shape("v", v, z_t)
    return z_t + (1 - broadcast_time(t, z_t)) * v
