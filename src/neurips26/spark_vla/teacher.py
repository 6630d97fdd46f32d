"""The frozen 3D expert: a tiny depth/point ViT, and the analytic geometry kernel (§3.2).

The paper distils from a frozen 3D foundation model (VGGT-class). The chapter's stand-in is a ViT of the
encoder's sizes, with its own weights, and a per-token linear head that regresses the standardised depth and
camera-frame point (X, Y, Z) of the surface each patch sees, from the renderer's z-buffer
(:func:`pretrain_teacher`, masked mean squared error, background patches ignored). What the student copies is
not those outputs but the teacher's attention: the head-averaged maps of its blocks l_t,

    A_T^{l_t} = (1/H) sum_h softmax(Q_h K_h^T / sqrt(d_h))        (B, N, N), rows sum to 1     (§3.2 (a))

(:func:`teacher_maps`), or for variant (b) and the Spatial Forcing baseline, a block's hidden state F_T
(:func:`teacher_tokens`). Both are computed without gradient: the teacher exists at training time only.

For tests and smoke runs the analytic teacher needs no training: over the patch-centre points X_i,

    A[i, j] = exp(-||X_i - X_j||^2 / sigma^2) / Z_i,   Z_i = sum_j exp(-||X_i - X_j||^2 / sigma^2),

a softmax of -d^2 / sigma^2 along each row (:func:`analytic_maps`): patches on nearby surfaces in 3D attend
to each other, whatever their distance in the image.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from neurips26.nn import ViT, ViTConfig
from neurips26.seeding import sub_seed
from neurips26.spark_vla.distill import head_average
from neurips26.spark_vla.encoder import ENCODER_CONFIG, _freeze, _pretrain, check_images
from neurips26.validation import check_float, check_int, check_int_tuple, check_seed

#: The teacher's per-patch outputs, in order (each standardised by the caller).
TEACHER_OUTPUTS = ("depth", "x", "y", "z")


class DepthTeacher(nn.Module):
    """A ViT (default :data:`~neurips26.spark_vla.encoder.ENCODER_CONFIG` sizes) plus a per-token linear head.

    ``forward(images)``: (B, 3, 48, 48) -> (B, N, 4), the predicted (depth, X, Y, Z) of each patch.
    ``vit`` is the part whose attention and hidden states :func:`teacher_maps` and :func:`teacher_tokens`
    read.
    """

    def __init__(self, config: ViTConfig = ENCODER_CONFIG) -> None:
        super().__init__()
        if not isinstance(config, ViTConfig):
            raise TypeError(f"config must be a ViTConfig; got {type(config).__name__}")
        if config.class_token:
            raise ValueError("config must have class_token=False: the teacher's tokens are patches only")
        self.vit = ViT(config)
        self.head = nn.Linear(config.width, len(TEACHER_OUTPUTS))

    def forward(self, images: Tensor) -> Tensor:
        images = check_images(images)
        return self.head(self.vit(images).tokens)


def make_teacher(seed: int, config: ViTConfig = ENCODER_CONFIG) -> DepthTeacher:
    """A new :class:`DepthTeacher` of ``config`` on the CPU, weights fixed by ``seed``; global RNG
    untouched."""
    seed = check_seed("seed", seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(sub_seed(seed, 17, 3))
        return DepthTeacher(config)


def _check_teacher(teacher: object) -> ViT:
    """The ViT inside ``teacher`` (a DepthTeacher, or a bare ViT without class token)."""
    if isinstance(teacher, DepthTeacher):
        return teacher.vit
    if isinstance(teacher, ViT) and not teacher.config.class_token:
        return teacher
    kind = type(teacher).__name__
    raise TypeError(f"teacher must be a DepthTeacher (or a ViT without class token); got {kind}")


def _check_targets(targets: object, frames: int, patches: int) -> Tensor:
    """A float tensor (frames, patches, 4); NaN = ignore, no infinities, at least one finite value."""
    if not isinstance(targets, Tensor):
        raise TypeError(f"targets must be a torch.Tensor; got {type(targets).__name__}")
    if not targets.is_floating_point():
        raise ValueError(f"targets must be a floating-point tensor; got dtype {targets.dtype}")
    want = (frames, patches, len(TEACHER_OUTPUTS))
    if tuple(targets.shape) != want:
        raise ValueError(f"targets must have shape (F, N, 4) = {want}; got {tuple(targets.shape)}")
    if bool(torch.isinf(targets).any()):
        raise ValueError("targets must not contain infinities (use NaN to mark an ignored entry)")
    if not bool(torch.isfinite(targets).any()):
        raise ValueError("targets holds no finite value (all NaN); nothing to train on")
    return targets


def _masked_mse(predicted: Tensor, targets: Tensor) -> Tensor:
    """Mean of (predicted - target)^2 over the entries whose target is not NaN (0 when there are none)."""
    valid = ~torch.isnan(targets)
    diff = torch.where(valid, predicted - torch.nan_to_num(targets), torch.zeros_like(predicted))
    return diff.square().sum() / valid.sum().clamp(min=1)


def _r2(predicted: Tensor, targets: Tensor) -> tuple[float, ...]:
    """Per output (last axis): 1 - SS_res / SS_tot over the non-NaN targets (NaN when SS_tot = 0)."""
    scores = []
    for k in range(targets.shape[-1]):
        y, p = targets[..., k], predicted[..., k]
        valid = ~torch.isnan(y)
        y, p = y[valid].double(), p[valid].double()
        total = (y - y.mean()).square().sum() if y.numel() else torch.tensor(0.0)
        residual = (y - p).square().sum()
        scores.append(float(1.0 - residual / total) if float(total) > 0 else float("nan"))
    return tuple(scores)


@dataclass(frozen=True)
class TeacherResult:
    """What :func:`pretrain_teacher` returns.

    model: the frozen teacher (eval mode, no parameter requires grad); r2: the coefficient of determination
    of each output (depth, X, Y, Z) on the training tensors, over the non-NaN targets; losses: the masked
    mean squared error of every step.
    """

    model: DepthTeacher
    r2: tuple[float, ...]
    losses: tuple[float, ...]


def pretrain_teacher(
    images: Tensor,
    targets: Tensor,
    *,
    steps: int,
    batch_size: int = 64,
    lr: float = 3e-3,
    seed: int = 0,
    progress: bool | None = None,
    config: ViTConfig = ENCODER_CONFIG,
) -> TeacherResult:
    """Train the 3D expert to regress per-patch (depth, X, Y, Z), then freeze it.

    images (F, 3, 48, 48); targets (F, N, 4) float, standardised by the caller, NaN where the patch sees no
    surface (ignored). Loss: mean squared error over the non-NaN entries. Training as for
    :func:`~neurips26.spark_vla.encoder.pretrain_encoder` (AdamW, warm-up then cosine, seeded epoch
    permutations; ``seed`` fixes weights and order; global RNG untouched); the model is moved to
    ``images.device``. ``progress``: None/True = a bar by the usual rule, False = none. ``config``: the
    ViT's sizes (:func:`make_teacher`).
    """
    images = check_images(images)
    frames = images.shape[0]
    seed = check_seed("seed", seed)
    model = make_teacher(seed, config).to(device=images.device, dtype=images.dtype)
    targets = _check_targets(targets, frames, model.vit.config.num_patches).to(images.device, images.dtype)

    def loss_fn(m: nn.Module, rows: Tensor) -> Tensor:
        return _masked_mse(m(images[rows]), targets[rows])

    losses = _pretrain(
        model,
        loss_fn,
        frames,
        steps=steps,
        batch_size=batch_size,
        lr=lr,
        seed=seed,
        progress=progress,
        device=images.device,
        desc="3D teacher pre-training",
    )
    _freeze(model)
    with torch.no_grad():
        predicted = torch.cat([model(chunk) for chunk in images.split(256)])
    return TeacherResult(model=model, r2=_r2(predicted, targets), losses=losses)


def _run_blocks(vit: ViT, images: Tensor, last: int, need_weights: bool) -> tuple[list[Tensor], list[Tensor]]:
    """Embedding and blocks 0 .. last of ``vit``: the block outputs z_1 .. z_{last+1} and, with
    ``need_weights``, each block's attention weights (B, heads, N, N). The same computation as
    ``ViT.forward`` (with ``return_attentions=need_weights``), stopped early."""
    z = vit.patch_embed(images) + vit.pos_embed
    outputs, weights = [], []
    for block in vit.blocks[: last + 1]:
        z, w = block(z, need_weights=need_weights)
        outputs.append(z)
        weights.append(w)
    return outputs, weights


@torch.no_grad()
def teacher_maps(teacher: DepthTeacher | ViT, images: Tensor, blocks: tuple[int, ...] = (2, 3)) -> Tensor:
    """Head-averaged attention maps of the teacher's ``blocks``, (B, len(blocks), N, N); rows sum to 1.

    images (B, 3, 48, 48). Computed without gradient, running only the blocks up to the deepest one asked
    for, each with the explicit softmax, so the maps equal those of ``ViT(images, return_attentions=True)``.
    A bare ViT without class token is accepted too (e.g. to show the 2D encoder's own maps).
    """
    vit = _check_teacher(teacher)
    images = check_images(images)
    blocks = check_int_tuple("blocks", blocks, minimum=0, maximum=vit.config.depth - 1, order="distinct")
    _, weights = _run_blocks(vit, images, max(blocks), True)
    return torch.stack([head_average(weights[b]) for b in blocks], dim=1)


@torch.no_grad()
def teacher_tokens(teacher: DepthTeacher | ViT, images: Tensor, block: int = 3) -> Tensor:
    """The output hidden state z_{block+1} of teacher block ``block`` (before the final LayerNorm): (B, N, d).

    The target features of Spatial Forcing and of distillation variant (b); computed without gradient.
    """
    vit = _check_teacher(teacher)
    images = check_images(images)
    block = check_int("block", block, minimum=0, maximum=vit.config.depth - 1)
    outputs, _ = _run_blocks(vit, images, block, False)
    return outputs[block]


def analytic_maps(points: Tensor, sigma: float) -> Tensor:
    """The analytic teacher: A[i, j] ∝ exp(-||X_i - X_j||^2 / sigma^2) over points (B, N, 3) -> (B, N, N).

    Computed as softmax(-d^2 / sigma^2) along each row (stable for any sigma), with d^2 the squared
    distances from explicit differences (exactly symmetric, zero on the diagonal). Rows sum to 1. ValueError
    naming ``points`` for a wrong shape or a non-finite coordinate, naming ``sigma`` unless sigma > 0.
    """
    if not isinstance(points, Tensor):
        raise TypeError(f"points must be a torch.Tensor of shape (B, N, 3); got {type(points).__name__}")
    if not points.is_floating_point():
        raise ValueError(f"points must be a floating-point tensor; got dtype {points.dtype}")
    if points.ndim != 3 or points.shape[-1] != 3 or points.shape[0] < 1 or points.shape[1] < 1:
        raise ValueError(f"points must have shape (B >= 1, N >= 1, 3); got {tuple(points.shape)}")
    if not bool(torch.isfinite(points).all()):
        raise ValueError("points must be finite (give every patch a centre point; no NaN or inf)")
    sigma = check_float("sigma", sigma, minimum=0.0, strict_min=True)
    d2 = (points[:, :, None, :] - points[:, None, :, :]).square().sum(-1)  # (B, N, N)
    return torch.softmax(-(d2 / sigma) / sigma, dim=-1)  # two divisions: sigma² may underflow


__all__ = [
    "TEACHER_OUTPUTS",
    "DepthTeacher",
    "TeacherResult",
    "analytic_maps",
    "make_teacher",
    "pretrain_teacher",
    "teacher_maps",
    "teacher_tokens",
]
