"""SpatialFlow-GRPO's update: region-level advantages placed on the tokens their regions cover
[reconstruction from the abstract of Yang et al., 2026; the formulas are ours, see the chapter's index].

Every rollout ``i`` gets one reward per region, ``r_{i,k}`` (``k = 0`` preservation, ``k ≥ 1`` the
instructed regions), normalised within its group region by region,

    A_{i,k} = (r_{i,k} − mean_j r_{j,k}) / (std_j r_{j,k} + δ),   clipped to [−5, 5]

(:func:`region_advantages`; optionally plus ``λ_g`` times the whole-image advantage). The policy update
keeps Flow-GRPO's clipped surrogate but lets each region's advantage act only where the region is. With
token weights ``w_k(p)`` (:mod:`~neurips26.spatialflow_grpo.regions`) and the per-token log-ratio
``Δℓ(p)`` (a mean over the token's dimensions, as Flow-GRPO's convention), two readings of the abstract's
"region-weighted aggregation":

* **(a) region-level ratio** (default): ``ρ_k = exp(Σ_p w_k(p) Δℓ(p) / Σ_p w_k(p))``, the objective
  ``Σ_k α_k min(ρ_k A_k, clip(ρ_k, 1 ± ε) A_k)``;
* **(b) per-position ratio**: ``ρ(p) = exp(Δℓ(p))`` with the advantage map ``A(p)``, the surrogate per
  token, then ``Σ_k α_k · (Σ_p w_k(p) s(p) / Σ_p w_k(p))``.

Region weights ``α_k``: ``"equal"`` (``1 / (K + 1)`` over the regions an instruction has, so a small edit
region is not swamped by the background) or ``"area"`` (``|Ω_k| / |Ω|``). The loss to minimise is
``−mean_i objective_i + β · mean_i KL_i`` as in :func:`~neurips26.spatialflow_grpo.grpo.flow_grpo_loss`.

Reductions (unit-tested): one region covering the whole image under (a) is Flow-GRPO exactly; equal region
advantages with area weights under (b) have Flow-GRPO's value and gradient at ``θ = θ_old``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from neurips26.rl import clipped_surrogate, group_advantages
from neurips26.spatialflow_grpo.grpo import PolicyLoss, check_kl, check_token_log_probs, finish
from neurips26.spatialflow_grpo.regions import advantage_map
from neurips26.validation import check_choice, check_float, check_int

#: Readings of the region-weighted policy update.
READINGS = ("a", "b")

#: Region weights α_k of the aggregation.
ALPHAS = ("equal", "area")


def _check_valid(valid: object, shape: tuple[int, ...]) -> Tensor:
    if not isinstance(valid, Tensor) or valid.dtype != torch.bool or tuple(valid.shape) != shape:
        got = f"{valid.dtype} {tuple(valid.shape)}" if isinstance(valid, Tensor) else type(valid).__name__
        raise ValueError(f"valid must be a bool tensor of shape {shape}; got {got}")
    return valid


def region_advantages(
    rewards: Tensor,
    valid: Tensor,
    group_size: int,
    *,
    eps: float = 1e-4,
    clip: float | None = 5.0,
    global_advantages: Tensor | None = None,
    global_weight: float = 0.0,
) -> Tensor:
    """``A_{i,k}``: ``(B, K + 1)`` from region rewards ``(B, K + 1)`` of ``B / group_size`` consecutive
    groups, each region normalised within its group (group std); unused regions (``valid`` False, the same
    for a whole group) get 0. ``global_weight`` ``λ_g`` adds ``λ_g · global_advantages`` ``(B,)`` to the
    valid regions (the A + λ_g A^global option; 0 by default)."""
    if not isinstance(rewards, Tensor) or not rewards.is_floating_point() or rewards.ndim != 2:
        got = tuple(rewards.shape) if isinstance(rewards, Tensor) else type(rewards).__name__
        raise ValueError(f"rewards must be a floating tensor of shape (B, regions); got {got}")
    valid = _check_valid(valid, tuple(rewards.shape))
    group_size = check_int("group_size", group_size, minimum=2)
    if rewards.shape[0] % group_size:
        raise ValueError(f"group_size must divide the batch ({rewards.shape[0]}); got {group_size}")
    grouped = valid.reshape(-1, group_size, rewards.shape[1])
    if not bool((grouped == grouped[:, :1]).all()):
        raise ValueError("valid must be the same for every member of a group (one condition per group)")
    adv = group_advantages(rewards.reshape(grouped.shape), eps=eps, clip=clip).reshape(rewards.shape)
    global_weight = check_float("global_weight", global_weight)
    if global_weight:
        if not isinstance(global_advantages, Tensor) or global_advantages.shape != rewards.shape[:1]:
            raise ValueError(
                f"global_advantages must have shape ({rewards.shape[0]},) when global_weight != 0"
            )
        adv = adv + global_weight * global_advantages.unsqueeze(1)
    return torch.where(valid, adv, torch.zeros_like(adv))


def region_alphas(weights: Tensor, valid: Tensor, alpha: str = "equal") -> Tensor:
    """``α_k`` ``(B, K + 1)``: ``1 / #valid`` on the valid regions (``"equal"``) or ``|Ω_k| / Σ |Ω|``
    (``"area"``); 0 on unused slots. Rows sum to 1."""
    check_choice("alpha", alpha, ALPHAS)
    valid = _check_valid(valid, tuple(weights.shape[:2]))
    if alpha == "equal":
        share = valid.to(weights.dtype)
    else:
        share = weights.sum(dim=-1) * valid.to(weights.dtype)
    return share / share.sum(dim=1, keepdim=True).clamp_min(1e-12)


def spatial_objective(
    log_ratio: Tensor,
    advantages: Tensor,
    weights: Tensor,
    valid: Tensor,
    *,
    eps: float,
    reading: str = "a",
    alpha: str = "equal",
) -> Tensor:
    """The per-rollout objective ``(B,)`` of reading (a) or (b) (module docstring) from per-token
    log-ratios ``(B, tokens)``, region advantages ``(B, K + 1)`` and token weights ``(B, K + 1, tokens)``."""
    check_choice("reading", reading, READINGS)
    if weights.ndim != 3 or weights.shape[0] != log_ratio.shape[0] or weights.shape[2] != log_ratio.shape[1]:
        raise ValueError(
            f"weights must have shape ({log_ratio.shape[0]}, regions, {log_ratio.shape[1]}); "
            f"got {tuple(weights.shape)}"
        )
    if not isinstance(advantages, Tensor) or advantages.shape != weights.shape[:2]:
        got = tuple(advantages.shape) if isinstance(advantages, Tensor) else type(advantages).__name__
        raise ValueError(f"advantages must have shape {tuple(weights.shape[:2])}; got {got}")
    alphas = region_alphas(weights, valid, alpha)
    areas = weights.sum(dim=-1).clamp_min(1e-12)
    if reading == "a":
        region_log_ratio = (weights * log_ratio.unsqueeze(1)).sum(dim=-1) / areas
        per_region = clipped_surrogate(region_log_ratio, advantages, eps)
    else:
        per_token = clipped_surrogate(log_ratio, advantage_map(weights, advantages), eps)
        per_region = (weights * per_token.unsqueeze(1)).sum(dim=-1) / areas
    return (alphas * per_region).sum(dim=1)


def spatial_loss(
    token_log_prob: Tensor,
    token_log_prob_old: Tensor,
    advantages: Tensor,
    weights: Tensor,
    valid: Tensor,
    kl: Tensor,
    *,
    eps: float,
    beta: float,
    reading: str = "a",
    alpha: str = "equal",
) -> PolicyLoss:
    """SpatialFlow-GRPO's step loss: ``−mean_i`` :func:`spatial_objective` ``+ β mean_i KL_i``."""
    new, old = check_token_log_probs(token_log_prob, token_log_prob_old)
    kl = check_kl(kl, new.shape[0])
    eps = check_float("eps", eps, minimum=0.0)
    log_ratio = new - old.detach()
    objective = spatial_objective(
        log_ratio, advantages, weights, valid, eps=eps, reading=reading, alpha=alpha
    )
    return finish(objective, kl, beta, log_ratio, eps)
