"""Spatial representation distillation: make the LoRA pathway attend like a frozen 3D expert (§3.2).

SPARK-VLA teaches geometry to the LoRA-on pass of its one ViT by matching *attention*, not features. The
default variant (a) compares post-softmax attention maps row by row. Three mismatches must be removed first:

* grid: the teacher's Gt x Gt patch grid is resampled to the student's Gs x Gs. Each row (the key axis) is
  reshaped to an image, resized bilinearly, and the same is done along the query axis; negative values are
  clipped and every row is renormalised, so the result is again row-stochastic (step 1 of §3.2 (a));
* heads: maps are averaged over heads, A_bar = (1/H) sum_h A^h, or mixed by a learned row-stochastic M,
  A~^{h'} = sum_h M[h', h] A^h with M = softmax(logits) over h (step 2);
* loss: L_dist = (1/|P|) sum_{(ls, lt) in P} (1/N) sum_i KL(A_T[i, :] || A_S[i, :]) over the paired blocks
  (step 3), the teacher held constant.

The ablation (b) aligns attention *outputs* instead: a projector P = Linear o GELU o Linear o LayerNorm
maps the student's responses to the teacher's width and L = mean_i (1 - cos(P(O_S)_i, pool(F_T)_i)), where
``pool`` resamples the teacher's token grid bilinearly. The same cosine loss serves the Spatial Forcing
baseline on the language model's visual hidden states, so it is written for any pair of token sets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from neurips26.spark_vla.seeded_linear import seeded_linear
from neurips26.validation import check_float, check_int, check_seed


def _check_tensor(name: str, value: object, ndim: int) -> Tensor:
    """A floating-point tensor of rank ``ndim``."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(value).__name__}")
    if not value.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor; got dtype {value.dtype}")
    if value.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional; got shape {tuple(value.shape)}")
    return value


def _grid_side(name: str, tokens: int) -> int:
    """The side G of a square patch grid with ``tokens`` = G * G cells."""
    side = math.isqrt(tokens)
    if side < 1 or side * side != tokens:
        raise ValueError(f"{name} must hold a square number of patch tokens (G * G); got {tokens}")
    return side


def head_average(maps: Tensor) -> Tensor:
    """Mean over heads of attention maps: (B, H, N, N) -> (B, N, N)."""
    _check_tensor("maps", maps, 4)
    return maps.mean(dim=1)


def check_row_stochastic(name: str, maps: Tensor, atol: float = 1e-4) -> Tensor:
    """Check that every row (last axis) of ``maps`` is a probability vector and return ``maps``.

    Raises ``ValueError`` naming ``name`` when an entry is negative or not finite, or when a row's sum
    differs from 1 by more than ``atol``. Any shape (..., N) is accepted.
    """
    if not isinstance(maps, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(maps).__name__}")
    if not maps.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor; got dtype {maps.dtype}")
    atol = check_float("atol", atol, minimum=0.0)
    if maps.dim() < 1 or maps.shape[-1] == 0:
        raise ValueError(f"{name} must have a non-empty last axis; got shape {tuple(maps.shape)}")
    values = maps.detach()
    if not bool(torch.isfinite(values).all()):
        raise ValueError(f"{name} must contain only finite values")
    if bool((values < 0).any()):
        raise ValueError(f"{name} must be row-stochastic: found a negative entry ({values.min().item():.3g})")
    error = (values.sum(dim=-1) - 1).abs().max().item() if values.numel() else 0.0
    if error > atol:
        raise ValueError(f"{name} must be row-stochastic: a row sum differs from 1 by {error:.3g} > {atol}")
    return maps


def _resize_last(x: Tensor, grid: int, target_grid: int) -> Tensor:
    """Bilinear resize of the last axis (grid * grid cells) to target_grid * target_grid cells."""
    lead = x.shape[:-1]
    images = x.reshape(-1, 1, grid, grid)
    resized = F.interpolate(images, size=(target_grid, target_grid), mode="bilinear", align_corners=False)
    return resized.reshape(*lead, target_grid * target_grid)


def resample_map(maps: Tensor, target_grid: int) -> Tensor:
    """Resample row-stochastic attention maps from a Gt x Gt patch grid to a Gs x Gs one (§3.2 (a), step 1).

    ``maps`` (B, Gt*Gt, Gt*Gt): row i is the attention that query patch i pays to every key patch. Each row
    is reshaped to Gt x Gt and resized bilinearly (``align_corners=False``) to Gs x Gs; then the query axis
    is resized the same way; the result is clamped at 0 and every row renormalised to sum 1. Returns
    (B, Gs*Gs, Gs*Gs). With Gs == Gt bilinear resizing is the identity, so the maps come back unchanged up
    to float rounding. Large downsampling ratios alias (no low-pass filter), as plain bilinear does.
    """
    _check_tensor("maps", maps, 3)
    if maps.shape[1] != maps.shape[2]:
        raise ValueError(f"maps must be square over tokens (B, N, N); got shape {tuple(maps.shape)}")
    grid = _grid_side("maps", maps.shape[1])
    check_row_stochastic("maps", maps)
    target_grid = check_int("target_grid", target_grid, minimum=1)
    keys = _resize_last(maps, grid, target_grid)  # (B, Gt², Gs²)
    both = _resize_last(keys.transpose(1, 2), grid, target_grid).transpose(1, 2)  # (B, Gs², Gs²)
    both = both.clamp(min=0)
    total = both.sum(dim=-1, keepdim=True).clamp(min=torch.finfo(both.dtype).tiny)
    return both / total


def attention_kl(teacher: Tensor, student: Tensor, eps: float = 1e-8) -> Tensor:
    """Mean row-wise KL(teacher || student) of attention maps, a scalar (§3.2 (a), step 3).

    For every row i: sum_j T[i, j] log((T[i, j] + eps) / (S[i, j] + eps)); the mean runs over all leading
    axes (batch, and heads when present), i.e. over the B * N rows of (B, N, N) maps. The teacher is
    detached. Non-negative up to rounding (and up to O(N eps) from ``eps``); exactly 0 when the maps are
    equal.
    """
    if not isinstance(teacher, Tensor) or not teacher.is_floating_point():
        raise TypeError(f"teacher must be a floating-point torch.Tensor; got {type(teacher).__name__}")
    if not isinstance(student, Tensor) or not student.is_floating_point():
        raise TypeError(f"student must be a floating-point torch.Tensor; got {type(student).__name__}")
    if teacher.dim() < 2:
        raise ValueError(f"teacher must have shape (B, N, N); got {tuple(teacher.shape)}")
    if student.shape != teacher.shape:
        raise ValueError(
            f"student must have the teacher's shape {tuple(teacher.shape)}; got {tuple(student.shape)}"
        )
    eps = check_float("eps", eps, minimum=0.0)
    target = teacher.detach()
    rows = (target * (torch.log(target + eps) - torch.log(student + eps))).sum(dim=-1)
    return rows.mean()


class HeadMixing(nn.Module):
    """Learned row-stochastic mixing of student heads into teacher heads (§3.2 (a), step 2, option).

    M = softmax(logits, dim=-1) has shape (teacher_heads, student_heads); the logits start at zero, so every
    mixed head starts as the plain head average.
    """

    def __init__(self, student_heads: int, teacher_heads: int) -> None:
        super().__init__()
        self.student_heads = check_int("student_heads", student_heads, minimum=1)
        self.teacher_heads = check_int("teacher_heads", teacher_heads, minimum=1)
        self.logits = nn.Parameter(torch.zeros(self.teacher_heads, self.student_heads))

    def mixing(self) -> Tensor:
        """The row-stochastic mixing matrix M (teacher_heads, student_heads)."""
        return torch.softmax(self.logits, dim=-1)

    def forward(self, student_maps: Tensor) -> Tensor:
        """(B, Hs, N, N) -> (B, Ht, N, N): mixed head h' = sum_h M[h', h] A[h]."""
        _check_tensor("student_maps", student_maps, 4)
        if student_maps.shape[1] != self.student_heads:
            raise ValueError(
                f"student_maps must have {self.student_heads} heads (axis 1); got {tuple(student_maps.shape)}"
            )
        m = self.mixing().to(dtype=student_maps.dtype)
        return torch.einsum("gh,bhij->bgij", m, student_maps)


def attention_distillation_loss(
    student_maps: Sequence[Tensor],
    teacher_maps: Sequence[Tensor],
    *,
    mixing: Sequence[HeadMixing] | None = None,
) -> Tensor:
    """L_dist of §3.2 (a): the mean over block pairs of ``attention_kl(teacher, student)``.

    ``student_maps``: per-block attention maps (B, Hs, N, N) of the LoRA pathway (blocks 2 and 3 in the
    chapter). ``teacher_maps``: as many teacher maps, already resampled to the student's grid; (B, N, N)
    head-averaged when ``mixing`` is None (the student is then head-averaged too), else (B, Ht, N, N), with
    ``mixing`` one :class:`HeadMixing` per pair. Returns a scalar.
    """
    if isinstance(student_maps, Tensor) or not isinstance(student_maps, Sequence):
        raise TypeError(f"student_maps must be a sequence of tensors; got {type(student_maps).__name__}")
    if isinstance(teacher_maps, Tensor) or not isinstance(teacher_maps, Sequence):
        raise TypeError(f"teacher_maps must be a sequence of tensors; got {type(teacher_maps).__name__}")
    if len(student_maps) == 0:
        raise ValueError("student_maps must hold at least one block's maps")
    if len(teacher_maps) != len(student_maps):
        raise ValueError(
            f"teacher_maps must hold one map per student block ({len(student_maps)}); got {len(teacher_maps)}"
        )
    if mixing is not None and len(mixing) != len(student_maps):
        raise ValueError(f"mixing must hold one HeadMixing per pair ({len(student_maps)}); got {len(mixing)}")
    losses = []
    for i, (student, teacher) in enumerate(zip(student_maps, teacher_maps, strict=True)):
        _check_tensor(f"student_maps[{i}]", student, 4)
        if mixing is None:
            _check_tensor(f"teacher_maps[{i}]", teacher, 3)
            mixed = head_average(student)
        else:
            _check_tensor(f"teacher_maps[{i}]", teacher, 4)
            mixed = mixing[i](student)
        if mixed.shape != teacher.shape:
            raise ValueError(
                f"teacher_maps[{i}] must have shape {tuple(mixed.shape)} to match student_maps[{i}]; "
                f"got {tuple(teacher.shape)}"
            )
        losses.append(attention_kl(teacher, mixed))
    return torch.stack(losses).mean()


class ResponseProjector(nn.Module):
    """The Spatial Forcing projector shape (§3.2 (b)): LayerNorm -> Linear(d, 2 d_T) -> GELU -> Linear(2 d_T,
    d_T), mapping student tokens (..., width) to the teacher's width (..., teacher_width).

    Weights follow PyTorch's default initialisation, drawn from a private generator seeded by ``seed``.
    """

    def __init__(self, width: int, teacher_width: int, *, seed: int = 0) -> None:
        super().__init__()
        self.width = check_int("width", width, minimum=1)
        self.teacher_width = check_int("teacher_width", teacher_width, minimum=1)
        generator = torch.Generator().manual_seed(check_seed("seed", seed))
        self.norm = nn.LayerNorm(self.width)
        self.fc1 = seeded_linear(self.width, 2 * self.teacher_width, generator)
        self.act = nn.GELU()
        self.fc2 = seeded_linear(2 * self.teacher_width, self.teacher_width, generator)

    def forward(self, tokens: Tensor) -> Tensor:
        """(..., width) -> (..., teacher_width)."""
        if not isinstance(tokens, Tensor):
            raise TypeError(f"tokens must be a torch.Tensor; got {type(tokens).__name__}")
        if tokens.dim() < 1 or tokens.shape[-1] != self.width:
            raise ValueError(f"tokens must end in width {self.width}; got shape {tuple(tokens.shape)}")
        return self.fc2(self.act(self.fc1(self.norm(tokens))))


def pool_tokens(tokens: Tensor, target_grid: int) -> Tensor:
    """Bilinearly resample a square grid of tokens: (B, Gt*Gt, D) -> (B, Gs*Gs, D) (``align_corners=False``).

    Brings the teacher's features to the student's patch grid for the cosine losses; the identity when
    Gs == Gt.
    """
    _check_tensor("tokens", tokens, 3)
    grid = _grid_side("tokens", tokens.shape[1])
    target_grid = check_int("target_grid", target_grid, minimum=1)
    b, _, d = tokens.shape
    images = tokens.transpose(1, 2).reshape(b, d, grid, grid)
    resized = F.interpolate(images, size=(target_grid, target_grid), mode="bilinear", align_corners=False)
    return resized.reshape(b, d, target_grid * target_grid).transpose(1, 2)


def cosine_alignment_loss(projected: Tensor, target: Tensor) -> Tensor:
    """Mean over all tokens of 1 - cos(projected_i, target_i), a scalar in [0, 2]; ``target`` is detached.

    Shapes (..., D) both (e.g. (B, N, D)). Used by ablation (b) and by the Spatial Forcing baseline.
    """
    if not isinstance(projected, Tensor) or not projected.is_floating_point():
        raise TypeError(f"projected must be a floating-point torch.Tensor; got {type(projected).__name__}")
    if not isinstance(target, Tensor) or not target.is_floating_point():
        raise TypeError(f"target must be a floating-point torch.Tensor; got {type(target).__name__}")
    if projected.dim() < 2 or projected.shape[-1] == 0:
        raise ValueError(f"projected must have shape (..., D) with D >= 1; got {tuple(projected.shape)}")
    if target.shape != projected.shape:
        raise ValueError(
            f"target must have the shape of projected {tuple(projected.shape)}; got {tuple(target.shape)}"
        )
    cos = F.cosine_similarity(projected, target.detach(), dim=-1, eps=1e-8)
    return (1 - cos).mean()


__all__ = [
    "HeadMixing",
    "ResponseProjector",
    "attention_distillation_loss",
    "attention_kl",
    "check_row_stochastic",
    "cosine_alignment_loss",
    "head_average",
    "pool_tokens",
    "resample_map",
]
