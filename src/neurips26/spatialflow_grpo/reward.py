"""Region rewards of an edit: one score per region Ω_k, the oracle that the learned rewards imitate.

The **oracle** reads the edit world's ground truth (masks, the new colours c′_k, the source):

- instructed region k ≥ 1: r_k = exp(−‖c̄_k − c′_k‖² / :data:`COLOUR_SCALE`), c̄_k the mean RGB colour of the
  edit over Ω_k (instruction satisfaction);
- preservation region Ω₀: r₀ = exp(−MSE_Ω₀(edit, source) / :data:`PRESERVE_SCALE`), the mean squared error
  over Ω₀'s pixels and the three channels (consistency);
- unused slots score 0.

[our choice] The paper's SFReward is a VLM that scores regions; its scales are not public. Ours put r_k at
e⁻¹ for a colour error of 0.32 and r₀ at e⁻¹ for an RMS change of 0.1. Flow-GRPO gets one number per image
(:func:`scalar_reward`): the mean over the valid regions (``"equal"``) or their area-weighted sum
(``"area"``). The evaluation metrics (:func:`colour_errors`, :func:`background_psnr`, :func:`success`) use
thresholds fixed before any RL run: every instructed region within :data:`COLOUR_TOL` of its colour and a
background PSNR ≥ :data:`PSNR_MIN`.

The learned reward (SFReward-tiny) and the VLM reward of the chapter return the same (B, K_MAX + 1) layout
as :func:`region_rewards`, so every consumer takes any of them.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from neurips26.spatialflow_grpo.editworld import SIZE, EditBatch
from neurips26.validation import check_choice

#: r_k = exp(−‖c̄_k − c′_k‖² / COLOUR_SCALE); r₀ = exp(−MSE_Ω₀ / PRESERVE_SCALE).
COLOUR_SCALE = 0.1
PRESERVE_SCALE = 0.01
#: Success thresholds (fixed before any RL run): colour error per instructed region, background PSNR (dB).
COLOUR_TOL = 0.15
PSNR_MIN = 28.0
#: PSNR of an unchanged background (MSE 0) and the cap of every PSNR (dB); peak value 1.
PSNR_CAP = 60.0
#: Scalarisations of the region rewards for Flow-GRPO.
WEIGHTINGS: tuple[str, ...] = ("equal", "area")


def _check_inputs(edited: object, batch: object) -> tuple[Tensor, EditBatch]:
    if not isinstance(batch, EditBatch):
        raise TypeError(f"batch must be an EditBatch; got {type(batch).__name__}")
    if not isinstance(edited, Tensor):
        raise TypeError(f"edited must be a torch.Tensor; got {type(edited).__name__}")
    want = (len(batch), 3, SIZE, SIZE)
    if tuple(edited.shape) != want:
        raise ValueError(
            f"edited must have shape {want} (one image per case of batch); got {tuple(edited.shape)}"
        )
    if not edited.is_floating_point():
        raise TypeError(f"edited must be a floating-point tensor; got {edited.dtype}")
    return edited, batch


def _region_stats(edited: Tensor, batch: EditBatch) -> tuple[Tensor, Tensor, Tensor]:
    """Per case: the squared colour errors ‖c̄_k − c′_k‖² (B, K_MAX), the background MSE (B,) and the region
    validity (B, K_MAX + 1) on ``edited``'s device."""
    masks = batch.masks.to(edited.device, edited.dtype)
    area = masks.sum(dim=(2, 3))  # (B, K+1)
    # c̄_k = Σ_p m_k(p) x(p) / |Ω_k|; an empty (unused) slot divides by 1 and is masked out by the caller.
    mean_colour = torch.einsum("bkhw,bchw->bkc", masks[:, 1:], edited) / area[:, 1:, None].clamp_min(1.0)
    target = batch.target_colours.to(edited.device, edited.dtype)
    colour_sq = (mean_colour - target).pow(2).sum(dim=-1)  # (B, K)
    diff = (edited - batch.source.to(edited.device, edited.dtype)).pow(2)
    mse = (diff * masks[:, :1]).sum(dim=(1, 2, 3)) / (3.0 * area[:, 0].clamp_min(1.0))
    return colour_sq, mse, batch.region_valid.to(edited.device)


def region_rewards(edited: Tensor, batch: EditBatch) -> Tensor:
    """The oracle's (B, K_MAX + 1) region rewards of images ``edited`` (B, 3, 16, 16) in [0, 1] for the cases
    of ``batch`` (module docstring): column 0 preservation, column k clause k; invalid slots 0."""
    edited, batch = _check_inputs(edited, batch)
    colour_sq, mse, valid = _region_stats(edited, batch)
    rewards = torch.cat(
        [torch.exp(-mse / PRESERVE_SCALE)[:, None], torch.exp(-colour_sq / COLOUR_SCALE)], dim=1
    )
    return torch.where(valid, rewards, torch.zeros_like(rewards))


def region_weights(batch: EditBatch, weighting: str = "equal") -> Tensor:
    """(B, K_MAX + 1) weights ω_k of the scalar reward R = Σ_k ω_k r_k, summing to 1 over the valid regions:
    ``"equal"`` 1 / (number of valid regions), ``"area"`` |Ω_k| / 256; invalid slots 0."""
    if not isinstance(batch, EditBatch):
        raise TypeError(f"batch must be an EditBatch; got {type(batch).__name__}")
    weighting = check_choice("weighting", weighting, WEIGHTINGS)
    valid = batch.region_valid.to(batch.masks.dtype)
    if weighting == "equal":
        return valid / valid.sum(dim=1, keepdim=True)
    return batch.masks.sum(dim=(2, 3)) * valid / float(SIZE * SIZE)


def scalar_reward(rewards: Tensor, batch: EditBatch, weighting: str = "equal") -> Tensor:
    """The whole-image reward (B,) Flow-GRPO gets from region rewards (B, K_MAX + 1): Σ_k ω_k r_k with
    :func:`region_weights` (``"equal"``: the mean over valid regions; ``"area"``: Σ_k |Ω_k| r_k / 256)."""
    if not isinstance(rewards, Tensor):
        raise TypeError(f"rewards must be a torch.Tensor; got {type(rewards).__name__}")
    weights = region_weights(batch, weighting)
    if tuple(rewards.shape) != tuple(weights.shape):
        raise ValueError(f"rewards must have shape {tuple(weights.shape)}; got {tuple(rewards.shape)}")
    weights = weights.to(rewards.device, rewards.dtype)
    return (weights * torch.where(weights > 0, rewards, torch.zeros_like(rewards))).sum(dim=1)


def colour_errors(edited: Tensor, batch: EditBatch) -> Tensor:
    """(B, K_MAX) colour errors ‖c̄_k − c′_k‖ (Euclidean RGB) of the instructed regions; NaN if unused."""
    edited, batch = _check_inputs(edited, batch)
    colour_sq, _, valid = _region_stats(edited, batch)
    return torch.where(valid[:, 1:], colour_sq.sqrt(), torch.full_like(colour_sq, math.nan))


def background_psnr(edited: Tensor, batch: EditBatch) -> Tensor:
    """(B,) PSNR (dB, peak 1) of ``edited`` against the source over Ω₀: −10 log₁₀ MSE_Ω₀, capped at
    :data:`PSNR_CAP`."""
    edited, batch = _check_inputs(edited, batch)
    _, mse, _ = _region_stats(edited, batch)
    floor = 10.0 ** (-PSNR_CAP / 10.0)
    return (-10.0 * torch.log10(mse.clamp_min(floor))).clamp_max(PSNR_CAP)


def success(edited: Tensor, batch: EditBatch) -> Tensor:
    """(B,) bool: every instructed region within :data:`COLOUR_TOL` of its new colour and a background PSNR
    ≥ :data:`PSNR_MIN` dB (chapter 08's success criterion, fixed before any RL run)."""
    errors = colour_errors(edited, batch)
    colour_ok = (errors <= COLOUR_TOL) | errors.isnan()
    return colour_ok.all(dim=1) & (background_psnr(edited, batch) >= PSNR_MIN)
