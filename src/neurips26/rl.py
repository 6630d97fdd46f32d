"""Group-relative policy optimisation parts shared by the RL chapters (08 SpatialFlow-GRPO, 15 Spatial-IQ).

GRPO (Shao et al., *DeepSeekMath*, 2024) needs no value network: for each condition (a prompt, an image to
edit) it samples a *group* of ``G`` outputs, scores them, and uses each output's reward relative to its
group as the advantage,

    Â_i = (R_i − mean_j R_j) / (std R + δ),     clipped to [−c, c],

with the population standard deviation (no Bessel correction) of the group (``std="group"``) or of every
reward in the batch (``std="batch"``, Flow-GRPO's ``global_std``), ``δ = 1e-4`` keeping equal rewards finite
(they give ``Â = 0``) and ``c = 5`` (Flow-GRPO's per-prompt tracker). The policy then maximises PPO's clipped
surrogate of the probability ratio ``ρ = π_θ / π_old``,

    min(ρ Â, clip(ρ, 1 − ε_low, 1 + ε_high) Â),

which at ``θ = θ_old`` (ρ = 1) has the plain policy-gradient ``Â ∇ log π_θ`` as its gradient and stops
pulling once ``ρ`` leaves the clip range in the direction the advantage favours.

- :func:`group_advantages`: the normalisation above, over the group axis of ``(groups, G, ...)`` rewards
  (trailing axes, e.g. one per region, are normalised separately);
- :func:`clipped_surrogate`: the elementwise surrogate from log-ratios;
- :func:`approx_kl`, :func:`clip_fraction`: the two diagnostics Flow-GRPO logs.
"""

from __future__ import annotations

import torch
from torch import Tensor

from neurips26.validation import check_choice, check_float

#: How the advantage's standard deviation is taken: within each group, or over the whole batch.
STD_MODES = ("group", "batch")


def _check_tensor(name: str, x: object) -> Tensor:
    if not isinstance(x, Tensor) or not x.is_floating_point():
        what = f"dtype {x.dtype}" if isinstance(x, Tensor) else type(x).__name__
        raise TypeError(f"{name} must be a floating torch.Tensor; got {what}")
    return x


def group_advantages(
    rewards: Tensor,
    *,
    std: str = "group",
    eps: float = 1e-4,
    clip: float | None = 5.0,
    leave_one_out: bool = False,
) -> Tensor:
    """Group-relative advantages of ``rewards`` shaped ``(groups, G, ...)``, same shape.

    The baseline is the group's mean (``leave_one_out``: the mean of the other ``G − 1`` members, RLOO);
    the scale is the population std of the group (``std="group"``) or of all ``groups × G`` rewards
    (``std="batch"``), per trailing index, plus ``eps``; the result is clipped to ``[−clip, clip]``
    (``None``: no clipping). ``ValueError`` names ``rewards`` (fewer than 2 dims), ``group_size`` (G < 2),
    ``std``, ``eps`` or ``clip``.
    """
    rewards = _check_tensor("rewards", rewards)
    if rewards.ndim < 2:
        raise ValueError(f"rewards must have shape (groups, group_size, ...); got {tuple(rewards.shape)}")
    g = rewards.shape[1]
    if g < 2:
        raise ValueError(f"group_size must be >= 2 (one output has no group to be compared with); got {g}")
    check_choice("std", std, STD_MODES)
    eps = check_float("eps", eps, minimum=0.0, strict_min=True)
    if clip is not None:
        clip = check_float("clip", clip, minimum=0.0, strict_min=True)
    total = rewards.sum(dim=1, keepdim=True)
    baseline = (total - rewards) / (g - 1) if leave_one_out else total / g
    if std == "group":
        scale = rewards.std(dim=1, keepdim=True, correction=0)
    else:
        scale = rewards.reshape(-1, *rewards.shape[2:]).std(dim=0, correction=0)
        scale = scale.reshape(1, 1, *rewards.shape[2:])
    advantages = (rewards - baseline) / (scale + eps)
    return advantages if clip is None else advantages.clamp(-clip, clip)


def clipped_surrogate(
    log_ratio: Tensor, advantages: Tensor, eps_low: float, eps_high: float | None = None
) -> Tensor:
    """PPO's clipped objective ``min(ρ A, clip(ρ, 1 − eps_low, 1 + eps_high) A)`` elementwise, ``ρ =
    exp(log_ratio)`` (to be maximised; ``eps_high`` defaults to ``eps_low``). Shapes broadcast."""
    log_ratio = _check_tensor("log_ratio", log_ratio)
    advantages = _check_tensor("advantages", advantages)
    eps_low = check_float("eps_low", eps_low, minimum=0.0)
    eps_high = eps_low if eps_high is None else check_float("eps_high", eps_high, minimum=0.0)
    ratio = torch.exp(log_ratio)
    return torch.minimum(ratio * advantages, ratio.clamp(1.0 - eps_low, 1.0 + eps_high) * advantages)


def approx_kl(log_ratio: Tensor) -> Tensor:
    """``½ mean(log ρ)²``, Flow-GRPO's logged estimate of KL(π_old ‖ π_θ) (a scalar tensor)."""
    return 0.5 * _check_tensor("log_ratio", log_ratio).pow(2).mean()


def clip_fraction(log_ratio: Tensor, eps_low: float, eps_high: float | None = None) -> Tensor:
    """The share of ratios outside ``[1 − eps_low, 1 + eps_high]`` (a scalar tensor)."""
    ratio = torch.exp(_check_tensor("log_ratio", log_ratio))
    eps_low = check_float("eps_low", eps_low, minimum=0.0)
    eps_high = eps_low if eps_high is None else check_float("eps_high", eps_high, minimum=0.0)
    return ((ratio < 1.0 - eps_low) | (ratio > 1.0 + eps_high)).to(ratio.dtype).mean()
