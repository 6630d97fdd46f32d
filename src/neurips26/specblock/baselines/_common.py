"""Shared by the baseline drafters (the paper's recipe): teacher data, shifts, soft CE, context checks.

Alignment convention of the chapter: the target's logits at position ``j`` predict token ``j+1``. A drafter
output that predicts ``x_{i+2+k}`` is taught by the target's softmax at position ``i+1+k``
(:func:`shift_left` by ``1+k``) on the positions where ``loss_mask`` shifted the same way is True.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

from neurips26.nn.transformer import Decoder
from neurips26.specblock.protocol import DecodeContext
from neurips26.validation import check_int, check_seed

_FIELDS = ("tokens", "logits", "hidden", "loss_mask")


def unpack_distill(data: object, target: Decoder | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``(tokens, logits, hidden, loss_mask)`` from a ``DistillData``-like object or a 4-tuple, checked.

    Shapes: ``tokens (B, T)`` long, ``logits (B, T, V)``, ``hidden (B, T, depth+1, H)``, ``loss_mask (B, T)``
    bool. With ``target``, ``V``, ``depth`` and ``H`` must match it.
    """
    if isinstance(data, tuple | list):
        if len(data) != 4:
            raise ValueError(f"data must hold (tokens, logits, hidden, loss_mask); got {len(data)} items")
        values = tuple(data)
    elif all(hasattr(data, name) for name in _FIELDS):
        values = tuple(getattr(data, name) for name in _FIELDS)
    else:
        raise TypeError(
            "data must have attributes tokens, logits, hidden, loss_mask (e.g. DistillData) or be a 4-tuple; "
            f"got {type(data).__name__}"
        )
    for name, value in zip(_FIELDS, values, strict=True):
        if not isinstance(value, Tensor):
            raise TypeError(f"data.{name} must be a torch.Tensor; got {type(value).__name__}")
    tokens, logits, hidden, loss_mask = values
    if tokens.dim() != 2 or tokens.dtype != torch.long or tokens.shape[1] < 2:
        raise ValueError(f"data.tokens must be a (B, T) long tensor with T >= 2; got {tuple(tokens.shape)}")
    b, t = tokens.shape
    if logits.dim() != 3 or logits.shape[:2] != (b, t):
        raise ValueError(f"data.logits must have shape ({b}, {t}, V); got {tuple(logits.shape)}")
    if hidden.dim() != 4 or hidden.shape[:2] != (b, t):
        raise ValueError(f"data.hidden must have shape ({b}, {t}, depth+1, H); got {tuple(hidden.shape)}")
    if loss_mask.shape != (b, t) or loss_mask.dtype != torch.bool:
        raise ValueError(f"data.loss_mask must be a ({b}, {t}) bool tensor; got {tuple(loss_mask.shape)}")
    if target is not None:
        cfg = target.config
        if logits.shape[2] != cfg.vocab_size:
            raise ValueError(f"data.logits has vocabulary {logits.shape[2]}; the target has {cfg.vocab_size}")
        if hidden.shape[2:] != (cfg.depth + 1, cfg.width):
            raise ValueError(
                f"data.hidden must have (depth+1, H) = {(cfg.depth + 1, cfg.width)} of the target; "
                f"got {tuple(hidden.shape[2:])}"
            )
        if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= cfg.vocab_size):
            raise ValueError(f"data.tokens holds ids outside the vocabulary [0, {cfg.vocab_size})")
    return tokens, logits, hidden, loss_mask


def shift_left(x: Tensor, by: int, fill: float | int | bool = 0) -> Tensor:
    """``y[:, i] = x[:, i + by]`` along axis 1, ``fill`` where ``i + by`` runs past the end."""
    by = check_int("by", by, minimum=0)
    if by == 0:
        return x
    out = torch.full_like(x, fill)
    if by < x.shape[1]:
        out[:, : x.shape[1] - by] = x[:, by:]
    return out


def masked_soft_ce(student_logits: Tensor, teacher_logits: Tensor, mask: Tensor) -> Tensor:
    """Mean over ``mask`` of ``−Σ_v softmax(teacher)_v · log softmax(student)_v`` (0 with an empty mask).

    Soft cross-entropy = KL(teacher ‖ student) up to the teacher's entropy, a constant
    (as in the paper's released trainer).
    """
    teacher = torch.softmax(teacher_logits.to(student_logits.dtype), dim=-1)
    ce = -(teacher * F.log_softmax(student_logits, dim=-1)).sum(-1)
    weight = mask.to(ce.dtype)
    return (ce * weight).sum() / weight.sum().clamp(min=1.0)


def batch_indices(n: int, batch: int, seed: int) -> Callable[[int], Tensor]:
    """``indices(step)``: ``min(batch, n)`` distinct rows of ``n``, a pure function of ``(seed, step)``."""
    n = check_int("n", n, minimum=1)
    batch = check_int("batch", batch, minimum=1)
    seed = check_seed("seed", seed)

    def indices(step: int) -> Tensor:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + step)
        return torch.randperm(n, generator=generator)[: min(batch, n)]

    return indices


def check_context(context: object, vocab_size: int, depth: int, width: int) -> DecodeContext:
    """A :class:`DecodeContext` whose tokens and hidden rows fit a target of these sizes."""
    if not isinstance(context, DecodeContext):
        raise TypeError(f"context must be a DecodeContext; got {type(context).__name__}")
    tokens, hidden = context.tokens, context.hidden
    if not isinstance(tokens, Tensor) or tokens.dim() != 1 or tokens.numel() == 0:
        raise ValueError(
            f"context.tokens must be a non-empty 1-D tensor; got {getattr(tokens, 'shape', tokens)}"
        )
    if tokens.dtype != torch.long:
        raise TypeError(f"context.tokens must hold long ids; got dtype {tokens.dtype}")
    if int(tokens.min()) < 0 or int(tokens.max()) >= vocab_size:
        raise ValueError(f"context.tokens holds ids outside the vocabulary [0, {vocab_size})")
    want = (tokens.numel() - 1, depth + 1, width)
    if not isinstance(hidden, Tensor) or tuple(hidden.shape) != want:
        raise ValueError(
            f"context.hidden must have shape (L-1, depth+1, H) = {want}; "
            f"got {getattr(hidden, 'shape', type(hidden).__name__)}"
        )
    check_int("context.new_from", context.new_from, minimum=0, maximum=tokens.numel() - 1)
    check_int("context.total_tokens", context.total_tokens, minimum=0)
    return context
