"""Flow-GRPO's policy loss for one denoising step of a batch of groups (Liu et al., 2025, eq. of §3.2 and
the released ``train_sd3.py``).

Each rollout ``i`` of a group gets one advantage ``Â_i`` (:func:`neurips26.rl.group_advantages` of its
whole-image reward) and, at step ``t``, one probability ratio for the whole image,

    ρ_t^i = exp( mean_dims[log π_θ − log π_old] ),

the code's convention (a mean over the latent dimensions, not a sum: log-ratios are scaled by 1/d, which
keeps ``ρ`` near 1 for a tiny clip range). The loss to minimise is

    L_t = − mean_i min(ρ_t^i Â_i, clip(ρ_t^i, 1 ± ε) Â_i) + β · mean_i KL_t^i,

with ``KL_t^i`` from :func:`~neurips26.spatialflow_grpo.sde.step_kl` against the reference policy (the same
network with its LoRA adapter off). The trainer sums ``L_t / T`` over the trained steps (one backward per
step, gradients accumulated, as the code). Per-token log-probabilities come in: the mean over the 64 tokens
of their per-token means is the mean over all dimensions (every token has the same size).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from neurips26.rl import approx_kl, clip_fraction, clipped_surrogate
from neurips26.validation import check_float


@dataclass(frozen=True)
class PolicyLoss:
    """One step's ``loss`` (to minimise, with gradient) and its detached parts: ``surrogate`` (the mean
    clipped objective), ``kl`` (mean KL to the reference), ``approx_kl`` and ``clip_fraction`` of the
    ratios that entered."""

    loss: Tensor
    surrogate: float
    kl: float
    approx_kl: float
    clip_fraction: float


def check_token_log_probs(new: object, old: object) -> tuple[Tensor, Tensor]:
    """Per-token log-probabilities of the current and the old policy, both ``(B, tokens)``."""
    for name, x in (("token_log_prob", new), ("token_log_prob_old", old)):
        if not isinstance(x, Tensor) or not x.is_floating_point():
            what = f"dtype {x.dtype}" if isinstance(x, Tensor) else type(x).__name__
            raise TypeError(f"{name} must be a floating torch.Tensor; got {what}")
        if x.ndim != 2:
            raise ValueError(f"{name} must have shape (B, tokens); got {tuple(x.shape)}")
    if new.shape != old.shape:
        raise ValueError(f"token_log_prob_old must have shape {tuple(new.shape)}; got {tuple(old.shape)}")
    return new, old


def check_kl(kl: object, batch: int) -> Tensor:
    """A per-sample KL ``(B,)``."""
    if not isinstance(kl, Tensor) or kl.shape != (batch,):
        got = tuple(kl.shape) if isinstance(kl, Tensor) else type(kl).__name__
        raise ValueError(f"kl must have shape ({batch},); got {got}")
    return kl


def finish(objective: Tensor, kl: Tensor, beta: float, log_ratio: Tensor, eps: float) -> PolicyLoss:
    """``−mean objective + β mean kl`` with the diagnostics of ``log_ratio``."""
    beta = check_float("beta", beta, minimum=0.0)
    loss = -objective.mean() + beta * kl.mean()
    with torch.no_grad():
        return PolicyLoss(
            loss=loss,
            surrogate=float(objective.mean()),
            kl=float(kl.mean()),
            approx_kl=float(approx_kl(log_ratio)),
            clip_fraction=float(clip_fraction(log_ratio, eps)),
        )


def flow_grpo_loss(
    token_log_prob: Tensor,
    token_log_prob_old: Tensor,
    advantages: Tensor,
    kl: Tensor,
    *,
    eps: float,
    beta: float,
) -> PolicyLoss:
    """Flow-GRPO's step loss (module docstring): one image ratio and one advantage ``(B,)`` per rollout."""
    new, old = check_token_log_probs(token_log_prob, token_log_prob_old)
    if not isinstance(advantages, Tensor) or advantages.shape != new.shape[:1]:
        got = tuple(advantages.shape) if isinstance(advantages, Tensor) else type(advantages).__name__
        raise ValueError(f"advantages must have shape ({new.shape[0]},); got {got}")
    kl = check_kl(kl, new.shape[0])
    eps = check_float("eps", eps, minimum=0.0)
    log_ratio = (new - old.detach()).mean(dim=1)
    return finish(clipped_surrogate(log_ratio, advantages, eps), kl, beta, log_ratio, eps)
