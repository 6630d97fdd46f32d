"""The rank head: predicts, per draft slot, how deep the target's token sits in the drafter's ranking.

Classes bucket the rank of the *target's* argmax token inside the drafter's distribution:
class 0 = rank 1 (the draft's top-1 is right), 1 = ranks 2–4, 2 = ranks 5–10, 3 = rank > 10 ("give up").
At inference the predicted class sets how many siblings a slot spawns (:mod:`.dynamic_tree`).

Input (no gradient flows into the drafter): ``φ = [sg(RMSNorm(g)); 15 logit features]`` where the 15
features come from the detached logits with the softmax approximated over the top 20:
top-10 log-probabilities, the logit gaps top1−top2, top1−top3, top1−top5, the top-1 probability and the
entropy over the top 20. Head: ``Linear(H+15 → 256) → SiLU → Linear(256 → 4)``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from neurips26.validation import check_int

NUM_CLASSES = 4
NUM_FEATURES = 15
#: Upper rank of classes 0, 1, 2 (class 3 is everything above the last).
CLASS_BOUNDS: tuple[int, ...] = (1, 4, 10)


def rank_class(rank: Tensor | int) -> Tensor | int:
    """Bucket a 1-based rank: 1 → 0, 2–4 → 1, 5–10 → 2, > 10 → 3 (works on ints and integer tensors)."""
    if isinstance(rank, Tensor):
        if rank.dtype.is_floating_point or rank.dtype == torch.bool:
            raise TypeError(f"rank must hold integers; got dtype {rank.dtype}")
        if rank.numel() and int(rank.min()) < 1:
            raise ValueError("rank must be >= 1 (ranks are 1-based)")
        return torch.bucketize(rank, torch.tensor(CLASS_BOUNDS, device=rank.device), right=False)
    rank = check_int("rank", rank, minimum=1)
    return sum(rank > bound for bound in CLASS_BOUNDS)


def target_rank(draft_logits: Tensor, target_token: Tensor) -> Tensor:
    """1-based rank of ``target_token`` ``(…)`` in ``draft_logits`` ``(…, V)``: 1 + #tokens scored higher."""
    chosen = draft_logits.gather(-1, target_token[..., None])
    return 1 + (draft_logits > chosen).sum(-1)


def logit_features(logits: Tensor, top: int = 20) -> Tensor:
    """The 15 rank-head features of ``logits`` ``(…, V)`` (detached), softmax approximated over the top 20.

    ``[log p_1 … log p_10, z_1−z_2, z_1−z_3, z_1−z_5, p_1, H_top20]`` with ``z_1 ≥ z_2 ≥ …`` the top logits,
    ``log p_j = z_j − logsumexp(z_1 … z_20)`` and ``H_top20 = −Σ_j p_j log p_j``.
    """
    if logits.shape[-1] < top:
        raise ValueError(f"logits need at least {top} entries on the last axis; got {logits.shape[-1]}")
    z = logits.detach().topk(top, dim=-1).values  # (…, 20), sorted descending
    log_p = z - torch.logsumexp(z, dim=-1, keepdim=True)
    p = log_p.exp()
    gaps = z[..., :1] - z[..., [1, 2, 4]]
    entropy = -(p * log_p).sum(-1, keepdim=True)
    return torch.cat([log_p[..., :10], gaps, p[..., :1], entropy], dim=-1)


class RankHead(nn.Module):
    """``MLP([sg(normed hidden); features(sg(logits))]) → 4`` rank-class logits; trained only by its loss."""

    def __init__(self, width: int, hidden: int = 256):
        super().__init__()
        self.width = check_int("width", width, minimum=1)
        self.net = nn.Sequential(
            nn.Linear(self.width + NUM_FEATURES, check_int("hidden", hidden, minimum=1)),
            nn.SiLU(),
            nn.Linear(hidden, NUM_CLASSES),
        )

    def forward(self, normed_hidden: Tensor, logits: Tensor) -> Tensor:
        """``normed_hidden`` ``(…, H)`` = RMSNorm(g), ``logits`` ``(…, V)`` → ``(…, 4)``; inputs detached."""
        phi = torch.cat([normed_hidden.detach(), logit_features(logits)], dim=-1)
        return self.net(phi)
