"""SpecBlock's training losses, as in its released trainer: the valid-prefix loss and the rank-head loss.

Shapes: every function works on a batch of blocks with any leading axes ``(…)`` and a slot axis ``K``:
draft logits ``(…, K, V)``, teacher logits ``(…, K, V)`` (slot ``k`` at row ``i`` has teacher = the target's
logits at position ``i+1+k``), ``valid`` ``(…, K)`` bool (the data mask of the token slot ``k`` predicts).

Valid-prefix (chain) mask::

    c_{·,0} = m_0,    c_{·,k+1} = c_{·,k} · 1[argmax ℓ_k = argmax P*_k] · m_{k+1}

so slot ``k`` is trained only where every earlier slot of its block was top-1 correct, the prefixes that
survive verification. (The factor ``m_{k+1}`` drops slots whose teacher lies in padding; inside a response
it is 1.) Per-slot soft cross-entropy, normalised per slot by ``Σ c``, weighted ``γ^k`` (γ = 0.8)::

    L = Σ_k γ^k · Σ_n c_{n,k} (−Σ_v P*_{n,k}(v) log softmax(ℓ_{n,k})_v) / Σ_n c_{n,k}

Rank loss, per slot over the rank-chain mask (broken *after* the first slot whose class was mispredicted),
with asymmetric ordinal smoothing ``ỹ_c ∝ (1 + |c−y| + max(y−c, 0))^{−2}``, distance weight
``w_dist = 1 + |y−ŷ| + max(y−ŷ, 0)`` and per-batch frequency weights ``w_freq(c) = min(1, 10/count_c)``::

    L_rank,k = Σ_n w_freq(y_n) w_dist,n (−Σ_c ỹ_{n,c} log softmax(r_n)_c) / Σ_n w_freq(y_n)

averaged over the slots that hold at least one sample.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from neurips26.specblock.rank_head import NUM_CLASSES, rank_class, target_rank
from neurips26.validation import check_float


def _check_pair(draft: Tensor, teacher: Tensor, valid: Tensor) -> None:
    if draft.shape != teacher.shape or draft.dim() < 2:
        raise ValueError(
            f"draft_logits and teacher_logits must share one shape (…, K, V); got {tuple(draft.shape)} and "
            f"{tuple(teacher.shape)}"
        )
    if valid.shape != draft.shape[:-1]:
        raise ValueError(f"valid must have shape {tuple(draft.shape[:-1])}; got {tuple(valid.shape)}")


def chain_mask(
    draft_logits: Tensor, teacher_logits: Tensor, valid: Tensor, *, valid_prefix: bool = True
) -> Tensor:
    """The valid-prefix mask ``c`` ``(…, K)`` (float, no gradient); ``valid_prefix=False`` → ``c = m``."""
    _check_pair(draft_logits, teacher_logits, valid)
    m = valid.to(draft_logits.dtype)
    if not valid_prefix:
        return m
    match = (draft_logits.detach().argmax(-1) == teacher_logits.argmax(-1)).to(m.dtype)
    # c_{k+1} = c_k · match_k · m_{k+1}: cumulative product of [m_0, match_0·m_1, match_1·m_2, …]
    factors = torch.cat([m[..., :1], match[..., :-1] * m[..., 1:]], dim=-1)
    return torch.cumprod(factors, dim=-1)


def slot_weights(block_size: int, gamma: float = 0.8, *, dtype=None, device=None) -> Tensor:
    """``γ^k`` for ``k = 0 … K-1`` (on ``device``)."""
    gamma = check_float("gamma", gamma, minimum=0.0, maximum=1.0)
    return gamma ** torch.arange(block_size, dtype=dtype or torch.get_default_dtype(), device=device)


def draft_loss(
    draft_logits: Tensor, teacher_logits: Tensor, chain: Tensor, *, gamma: float = 0.8
) -> tuple[Tensor, Tensor]:
    """Soft CE to the target's softmax under the chain mask: ``(Σ_k γ^k L_k, L_k per slot (K,))``."""
    _check_pair(draft_logits, teacher_logits, chain)
    k = draft_logits.shape[-2]
    teacher = torch.softmax(teacher_logits.detach().to(draft_logits.dtype), dim=-1)
    ce = -(teacher * F.log_softmax(draft_logits, dim=-1)).sum(-1)  # (…, K)
    flat_ce, flat_c = ce.reshape(-1, k), chain.reshape(-1, k).to(ce.dtype)
    per_slot = (flat_c * flat_ce).sum(0) / flat_c.sum(0).clamp_min(1.0)  # Σ c CE / Σ c (0 when Σ c = 0)
    return (slot_weights(k, gamma, dtype=ce.dtype, device=ce.device) * per_slot).sum(), per_slot


def rank_labels(draft_logits: Tensor, teacher_logits: Tensor) -> Tensor:
    """Rank class ``(…, K)`` of the target's argmax token inside the drafter's logits (the rank label)."""
    return rank_class(target_rank(draft_logits.detach(), teacher_logits.argmax(-1)))


def smoothed_rank_targets(labels: Tensor, num_classes: int = NUM_CLASSES) -> Tensor:
    """Asymmetric ordinal label smoothing: ``ỹ_c ∝ (1 + |c−y| + max(y−c, 0))^{−2}``, rows sum to 1.

    Over-estimating the rank (predicting a larger class, more branches) costs less than under-estimating,
    so classes above the true one keep more mass than those below.
    """
    c = torch.arange(num_classes, device=labels.device)
    y = labels[..., None]
    raw = (1.0 + (c - y).abs() + (y - c).clamp_min(0)).to(torch.get_default_dtype()) ** -2
    return raw / raw.sum(-1, keepdim=True)


def rank_chain_mask(rank_logits: Tensor, labels: Tensor, valid: Tensor) -> Tensor:
    """Rank-chain mask ``(…, K)``: ``r_0 = m_0``, ``r_{k+1} = r_k · 1[ŷ_k = y_k] · m_{k+1}`` (the first
    mispredicted slot is still included, the ones after it are not)."""
    m = valid.to(rank_logits.dtype)
    right = (rank_logits.detach().argmax(-1) == labels).to(m.dtype)
    return torch.cumprod(torch.cat([m[..., :1], right[..., :-1] * m[..., 1:]], dim=-1), dim=-1)


def rank_loss(rank_logits: Tensor, labels: Tensor, mask: Tensor, *, max_weight_count: float = 10.0) -> Tensor:
    """The rank-head loss (see the module docstring): mean over slots with any masked sample."""
    if rank_logits.shape[:-1] != labels.shape or labels.shape != mask.shape:
        raise ValueError(
            f"rank_logits (…, K, 4), labels and mask (…, K) must agree; got {tuple(rank_logits.shape)}, "
            f"{tuple(labels.shape)}, {tuple(mask.shape)}"
        )
    k = labels.shape[-1]
    logits = rank_logits.reshape(-1, k, rank_logits.shape[-1])
    y = labels.reshape(-1, k)
    m = mask.reshape(-1, k).to(logits.dtype)
    smooth = smoothed_rank_targets(y, rank_logits.shape[-1]).to(logits.dtype)
    ce = -(smooth * F.log_softmax(logits, dim=-1)).sum(-1)  # (N, K)
    with torch.no_grad():
        y_hat = logits.argmax(-1)
        w_dist = 1.0 + (y - y_hat).abs() + (y - y_hat).clamp_min(0)
        onehot = F.one_hot(y, rank_logits.shape[-1]).to(logits.dtype) * m[..., None]
        counts = onehot.sum(0)  # (K, 4): per slot, per class
        w_class = (max_weight_count / counts.clamp_min(1.0)).clamp(max=1.0)
        w_freq = w_class.gather(1, y.T).T * m  # (N, K)
    total, slots = logits.new_zeros(()), 0
    for slot in range(k):
        norm = w_freq[:, slot].sum()
        if norm > 0:
            total = total + (w_freq[:, slot] * w_dist[:, slot].to(logits.dtype) * ce[:, slot]).sum() / norm
            slots += 1
    return total / max(slots, 1)
