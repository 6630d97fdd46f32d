"""Regions on the token grid: pixel masks → token weights, per-position advantage maps, shuffled controls.

SpatialFlow-GRPO scores each semantic region ``Ω_k`` of an edit separately (``k = 0`` the region to preserve,
``k ≥ 1`` the instructed ones) and must place each region's advantage on the latent positions the region
covers. Our editor's positions are 2 × 2-pixel tokens on an 8 × 8 grid, so a pixel mask becomes soft token
weights by average pooling [reconstruction; the paper pools to its DiT's latent grid]:

    w_k(p) = |Ω_k ∩ token p| / |token p|  ∈ [0, 1],        Σ_k w_k(p) = 1 when the masks partition the image,

and a region-level advantage ``A_{i,k}`` becomes a per-position map

    A_i(p) = Σ_k w_k(p) A_{i,k} / Σ_k w_k(p).

A token on a region's border mixes the advantages of the regions it touches. :func:`shuffle_tokens` is the
control of claim S6: the same weights on a random permutation of the 64 tokens (one permutation per
condition, shared by its group), so each region keeps its area and advantage but loses its place.
"""

from __future__ import annotations

import torch
from torch import Tensor

from neurips26.validation import check_int, check_seed

#: Pixels per token side (2 × 2 patches of a 16 × 16 image → an 8 × 8 grid).
PATCH = 2


def _check_masks(masks: object) -> Tensor:
    if not isinstance(masks, Tensor) or not masks.is_floating_point():
        what = f"dtype {masks.dtype}" if isinstance(masks, Tensor) else type(masks).__name__
        raise TypeError(f"masks must be a floating torch.Tensor; got {what}")
    if masks.ndim != 4:
        raise ValueError(f"masks must have shape (B, regions, H, W); got {tuple(masks.shape)}")
    return masks


def token_weights(masks: Tensor, patch: int = PATCH, *, atol: float = 1e-6) -> Tensor:
    """``w_k(p)``: ``(B, K + 1, H/patch · W/patch)`` from pixel masks ``(B, K + 1, H, W)`` in ``[0, 1]``.

    The masks must partition the image (they sum to 1 at every pixel, within ``atol``; unused region slots
    are all zero): otherwise ``ValueError`` naming ``masks``.
    """
    masks = _check_masks(masks)
    patch = check_int("patch", patch, minimum=1)
    b, k, h, w = masks.shape
    if h % patch or w % patch:
        raise ValueError(f"patch must divide the mask size ({h}, {w}); got {patch}")
    if bool(((masks < -atol) | (masks > 1 + atol)).any()):
        raise ValueError("masks must hold values in [0, 1]")
    total = masks.sum(dim=1)
    if not torch.allclose(total, torch.ones_like(total), atol=atol):
        worst = (total - 1).abs().max().item()
        raise ValueError(f"masks must partition the image (sum 1 at every pixel); off by up to {worst:.3g}")
    pooled = masks.reshape(b, k, h // patch, patch, w // patch, patch).mean(dim=(3, 5))
    return pooled.reshape(b, k, -1)


def _check_weights(weights: object) -> Tensor:
    if not isinstance(weights, Tensor) or not weights.is_floating_point():
        what = f"dtype {weights.dtype}" if isinstance(weights, Tensor) else type(weights).__name__
        raise TypeError(f"weights must be a floating torch.Tensor; got {what}")
    if weights.ndim != 3:
        raise ValueError(f"weights must have shape (B, regions, tokens); got {tuple(weights.shape)}")
    return weights


def region_areas(weights: Tensor) -> Tensor:
    """``|Ω_k|`` in tokens, ``Σ_p w_k(p)``: ``(B, K + 1)`` (0 for an unused slot)."""
    return _check_weights(weights).sum(dim=-1)


def advantage_map(weights: Tensor, advantages: Tensor) -> Tensor:
    """``A_i(p) = Σ_k w_k(p) A_{i,k} / Σ_k w_k(p)``: ``(B, tokens)`` from ``weights`` ``(B, K + 1, tokens)``
    and region advantages ``(B, K + 1)`` (a token no region covers gets 0)."""
    weights = _check_weights(weights)
    if not isinstance(advantages, Tensor) or advantages.shape != weights.shape[:2]:
        got = tuple(advantages.shape) if isinstance(advantages, Tensor) else type(advantages).__name__
        raise ValueError(f"advantages must have shape {tuple(weights.shape[:2])}; got {got}")
    covered = weights.sum(dim=1)
    mixed = (weights * advantages.unsqueeze(-1)).sum(dim=1)
    return torch.where(covered > 0, mixed / covered.clamp_min(1e-12), torch.zeros_like(mixed))


def shuffle_tokens(weights: Tensor, group_size: int, seed: int) -> Tensor:
    """``weights`` with the tokens permuted: one random permutation per condition (each run of
    ``group_size`` consecutive rows, a GRPO group), the same for every region and every member."""
    weights = _check_weights(weights)
    group_size = check_int("group_size", group_size, minimum=1)
    if weights.shape[0] % group_size:
        raise ValueError(f"group_size must divide the batch ({weights.shape[0]}); got {group_size}")
    generator = torch.Generator().manual_seed(check_seed("seed", seed))
    groups, tokens = weights.shape[0] // group_size, weights.shape[-1]
    perms = torch.stack([torch.randperm(tokens, generator=generator) for _ in range(groups)])
    index = perms.repeat_interleave(group_size, dim=0).to(weights.device)
    return torch.gather(weights, 2, index.unsqueeze(1).expand_as(weights))
