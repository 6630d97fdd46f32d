"""The frozen 2D encoder and its two pathways: one ViT, run with LoRA off (V2D) and on (V3D) (§3.1).

SPARK-VLA keeps a single vision backbone. Its 2D pathway is the pre-trained ViT, untouched; its 3D-aware
pathway is the same ViT with low-rank adapters on the attention projections (``qkv`` and ``out``) of the
blocks ``l >= l0 = SPLIT_BLOCK``::

    W' = W + (alpha / r) B A,      A: r x d_in,  B: d_out x r,  B_init = 0          (§3.1)

    z_0 = patches(I) W_E + E_pos;   z_l = Block_l(z_{l-1})   l < l0     (shared prefix, computed once)
    V2D = LN(Block_{L-1}( ... Block_{l0}(z_{l0}) ))        adapters disabled: W
    V3D = LN(Block'_{L-1}( ... Block'_{l0}(z_{l0}) ))      adapters enabled:  W'

Because the base weights are frozen and a disabled adapter skips its update branch, V2D is bit for bit the
encoder's own output ("the 2D pathway is preserved by construction"), and because B starts at zero, V3D = V2D
until the adapters are trained. Blocks below ``l0`` carry no adapter, so both pathways share their
activation ``z_{l0}`` (:meth:`TwoPathwayEncoder.prefix`), which the training code may cache per frame.

The encoder itself stands in for an image-text pre-trained ViT: :func:`pretrain_encoder` trains it on a
2D-semantic task (per-patch colour and shape classification, two linear heads on the final tokens, summed
cross-entropies), then freezes it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neurips26.nn import ViT, ViTConfig, apply_lora, lora_modules, lora_parameters
from neurips26.seeding import sub_seed
from neurips26.train import fit
from neurips26.validation import check_float, check_int, check_seed

#: Sizes of the chapter's ViT (the 2D encoder; the 3D teacher uses the same sizes). The ``paper`` scale
#: trains wider and deeper ones of the same image and patch sizes (``prepare.Plan.encoder``).
ENCODER_CONFIG = ViTConfig(image_size=48, patch_size=8, width=64, depth=4, heads=4, class_token=False)
#: Side of the patch grid and number of patch tokens N = GRID².
GRID = 6
NUM_PATCHES = 36


def split_block(config: ViTConfig) -> int:
    """The first adapted block l0 of a ViT of ``config``: depth // 2, so the shared prefix is the first half
    of the blocks and the adapters sit on the second (2 of 4 in :data:`ENCODER_CONFIG`)."""
    if not isinstance(config, ViTConfig):
        raise TypeError(f"config must be a ViTConfig; got {type(config).__name__}")
    if config.depth < 2:
        raise ValueError(f"config.depth must be >= 2 (a prefix and adapted blocks); got {config.depth}")
    return config.depth // 2


def lora_targets(config: ViTConfig) -> tuple[str, ...]:
    """The layers that get LoRA adapters in a ViT of ``config``: Q, K, V (fused) and the output projection
    of every block from :func:`split_block` on."""
    return tuple(f"blocks.{b}.attn.{layer}" for b in adapted_blocks(config) for layer in ("qkv", "out"))


def adapted_blocks(config: ViTConfig) -> tuple[int, ...]:
    """The blocks l0 .. depth-1 of the LoRA pathway, whose attention maps are distilled (2 and 3 by
    default)."""
    return tuple(range(split_block(config), config.depth))


#: Blocks 0 .. SPLIT_BLOCK-1 are shared by both pathways; blocks SPLIT_BLOCK .. depth-1 carry the adapters.
SPLIT_BLOCK = split_block(ENCODER_CONFIG)
#: The linear layers that get LoRA adapters: Q, K, V (fused) and the output projection of blocks 2 and 3.
LORA_TARGETS = lora_targets(ENCODER_CONFIG)
LORA_RANK = 4
LORA_ALPHA = 8.0

_IMAGE_SHAPE = (3, *ENCODER_CONFIG.image_size)


def check_images(images: object) -> Tensor:
    """``images`` as given, after checking it is a floating tensor of shape (B, 3, 48, 48) with B >= 1.

    TypeError when it is not a tensor, ValueError (naming ``images``) for a wrong dtype or shape.
    """
    if not isinstance(images, Tensor):
        raise TypeError(f"images must be a torch.Tensor of shape (B, 3, 48, 48); got {type(images).__name__}")
    if not images.is_floating_point():
        raise ValueError(f"images must be a floating-point tensor; got dtype {images.dtype}")
    if images.ndim != 4 or tuple(images.shape[1:]) != _IMAGE_SHAPE or images.shape[0] < 1:
        raise ValueError(f"images must have shape (B >= 1, 3, 48, 48); got {tuple(images.shape)}")
    return images


def make_encoder(seed: int, config: ViTConfig = ENCODER_CONFIG) -> ViT:
    """A freshly initialised ViT of ``config`` (default :data:`ENCODER_CONFIG`) on the CPU, its weights a
    function of ``seed``.

    The initialisation draws from torch's global generator inside ``torch.random.fork_rng``, so the
    caller's random state is the same after the call as before it.
    """
    seed = check_seed("seed", seed)
    _check_config(config)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return ViT(config)


def _check_config(config: object) -> ViTConfig:
    """``config``, a ViTConfig of the chapter's images (48 x 48, 8 x 8 patches) without class token."""
    if not isinstance(config, ViTConfig):
        raise TypeError(f"config must be a ViTConfig; got {type(config).__name__}")
    if config.class_token or config.image_size != ENCODER_CONFIG.image_size:
        raise ValueError("config must read 48 x 48 images without class token (the pathways carry patches)")
    if config.patch_size != ENCODER_CONFIG.patch_size:
        raise ValueError(f"config must have patch_size {ENCODER_CONFIG.patch_size} (the 6 x 6 patch grid)")
    return config


# ------------------------------------------------------------------------------------------ pre-training


def _check_progress(progress: object) -> bool:
    """``progress`` (None or a bool) as the bool that :func:`neurips26.train.fit` takes.

    None and True both show a bar under the rule of :func:`neurips26.progress.progress_enabled` (in a
    notebook or terminal, never in CI or with ``NEURIPS26_PROGRESS=0``); False never shows one.
    """
    if progress is None:
        return True
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be a bool or None; got {type(progress).__name__}")
    return progress


def _minibatch_order(frames: int, batch_size: int, steps: int, seed: int, device: torch.device) -> Tensor:
    """(steps, b) frame indices, b = min(batch_size, frames): epochs of seeded random permutations, cut into
    consecutive batches, so every frame is seen once per epoch. A private generator draws them."""
    b = min(batch_size, frames)
    generator = torch.Generator().manual_seed(sub_seed(seed, 17, 1))
    need = steps * b
    epochs = -(-need // frames)
    order = torch.cat([torch.randperm(frames, generator=generator) for _ in range(epochs)])
    return order[:need].view(steps, b).to(device)


def _pretrain(
    model: nn.Module,
    loss_fn: Callable[[nn.Module, Tensor], Tensor],
    frames: int,
    *,
    steps: int,
    batch_size: int,
    lr: float,
    seed: int,
    progress: bool | None,
    device: torch.device,
    desc: str,
) -> tuple[float, ...]:
    """Train ``model`` in place with :func:`neurips26.train.fit` on seeded minibatches of frame indices.

    AdamW (weight decay 0.01 on matrices, betas 0.9/0.95), gradient norm clipped at 1, learning rate
    ``lr`` with a linear warm-up over the first 5 % of the steps then a cosine decay to ``0.1 lr``.
    ``loss_fn(model, rows)`` gets a 1-D tensor of frame indices. Returns the per-step losses.
    """
    steps = check_int("steps", steps, minimum=1)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    lr = check_float("lr", lr, minimum=0.0, strict_min=True)
    seed = check_seed("seed", seed)
    show = _check_progress(progress)
    order = _minibatch_order(frames, batch_size, steps, seed, device)
    history = fit(
        model,
        loss_fn,
        lambda s: order[s],
        steps=steps,
        seed=sub_seed(seed, 17, 2),
        lr=lr,
        weight_decay=0.01,
        warmup=steps // 20,
        min_lr_ratio=0.1,
        grad_clip=1.0,
        progress=show,
        desc=desc,
    )
    return tuple(float(v) for v in history.loss)


def _freeze(model: nn.Module) -> None:
    """Eval mode and ``requires_grad = False`` for every parameter."""
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)


def _check_labels(name: str, labels: object, frames: int, classes: int) -> Tensor:
    """An int64 tensor (frames, N) with values in {-1} ∪ [0, classes), at least one not -1."""
    if not isinstance(labels, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of int64 labels; got {type(labels).__name__}")
    if labels.dtype != torch.int64:
        raise ValueError(f"{name} must have dtype torch.int64; got {labels.dtype}")
    if tuple(labels.shape) != (frames, NUM_PATCHES):
        raise ValueError(
            f"{name} must have shape (F, {NUM_PATCHES}) = ({frames}, {NUM_PATCHES}), one label per patch "
            f"of each image; got {tuple(labels.shape)}"
        )
    if bool((labels < -1).any()) or bool((labels >= classes).any()):
        raise ValueError(f"{name} must lie in [0, {classes}) or be -1 (ignore)")
    if not bool((labels >= 0).any()):
        raise ValueError(f"{name} holds no label (all -1); nothing to train on")
    return labels


class _SemanticHeads(nn.Module):
    """The ViT plus linear per-token heads (colour, shape, 2D offset): the pre-training model."""

    def __init__(self, vit: ViT, num_colours: int, num_shapes: int) -> None:
        super().__init__()
        self.vit = vit
        width = vit.config.width
        self.colour = nn.Linear(width, num_colours)
        self.shape = nn.Linear(width, num_shapes)
        self.offset = nn.Linear(width, 2)

    def forward(self, images: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        tokens = self.vit(images).tokens  # (B, N, d)
        # (B, N, colours), (B, N, shapes), (B, N, 2)
        return self.colour(tokens), self.shape(tokens), self.offset(tokens)


def _masked_cross_entropy(logits: Tensor, labels: Tensor) -> Tensor:
    """Mean cross-entropy over the patches whose label is not -1 (0 when there are none)."""
    total = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-1, reduction="sum")
    return total / (labels >= 0).sum().clamp(min=1)


def _accuracy(predicted: Tensor, labels: Tensor) -> float:
    """Fraction of the labelled patches (label != -1) whose predicted class is right."""
    kept = labels >= 0
    return float((predicted[kept] == labels[kept]).double().mean())


@dataclass(frozen=True)
class PretrainResult:
    """What :func:`pretrain_encoder` returns.

    model: the frozen ViT (eval mode, no parameter requires grad); colour_accuracy, shape_accuracy: final
    per-patch accuracies of the two heads on the training tensors (labelled patches only); losses: the
    training loss (colour + shape cross-entropy) of every step.
    """

    model: ViT
    colour_accuracy: float
    shape_accuracy: float
    losses: tuple[float, ...]


def pretrain_encoder(
    images: Tensor,
    colour_labels: Tensor,
    shape_labels: Tensor,
    *,
    num_colours: int,
    num_shapes: int,
    steps: int,
    batch_size: int = 64,
    lr: float = 3e-3,
    seed: int = 0,
    progress: bool | None = None,
    offsets: Tensor | None = None,
    config: ViTConfig = ENCODER_CONFIG,
) -> PretrainResult:
    """Pre-train the 2D encoder on per-patch colour and shape classification, then freeze it.

    ``offsets`` (F, 36, 2), optional: per-patch image-plane offsets of the labelled object (NaN = none),
    regressed (mean squared error over the finite entries, added to the loss) by a third linear head, so
    that the tokens also say where in the patch a thing is (a 2D task, like the localisation that
    image-text pre-training gives real encoders).

    images (F, 3, 48, 48) in [0, 1]; colour_labels, shape_labels (F, 36) int64, -1 = no label (ignored).
    Loss per minibatch: CE(colour) + CE(shape), each averaged over the labelled patches, from two linear
    heads on the final tokens (the heads are discarded afterwards). Training: AdamW, warm-up then cosine
    learning rate (:func:`neurips26.train.fit`), minibatches drawn as seeded epoch permutations. ``seed``
    fixes the initial weights and the minibatch order; the global RNG is left untouched. The model is
    built on the CPU and moved to ``images.device``. ``progress``: None/True = a bar by the usual rule,
    False = none. ``config``: the ViT's sizes (:func:`make_encoder`).
    """
    images = check_images(images)
    frames = images.shape[0]
    num_colours = check_int("num_colours", num_colours, minimum=1)
    num_shapes = check_int("num_shapes", num_shapes, minimum=1)
    colour_labels = _check_labels("colour_labels", colour_labels, frames, num_colours).to(images.device)
    shape_labels = _check_labels("shape_labels", shape_labels, frames, num_shapes).to(images.device)
    seed = check_seed("seed", seed)

    vit = make_encoder(seed, config)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(sub_seed(seed, 17, 0))
        model = _SemanticHeads(vit, num_colours, num_shapes)
    model = model.to(device=images.device, dtype=images.dtype)

    if offsets is not None:
        if not isinstance(offsets, Tensor) or tuple(offsets.shape) != (frames, NUM_PATCHES, 2):
            raise ValueError(f"offsets must be a tensor of shape ({frames}, {NUM_PATCHES}, 2)")
        offsets = offsets.to(device=images.device, dtype=images.dtype)

    def loss_fn(m: nn.Module, rows: Tensor) -> Tensor:
        colour_logits, shape_logits, offset_pred = m(images[rows])
        loss = _masked_cross_entropy(colour_logits, colour_labels[rows]) + _masked_cross_entropy(
            shape_logits, shape_labels[rows]
        )
        if offsets is not None:
            target = offsets[rows]
            seen = torch.isfinite(target)
            loss = loss + ((offset_pred[seen] - target[seen]) ** 2).sum() / seen.sum().clamp(min=1)
        return loss

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
        desc="2D encoder pre-training",
    )
    _freeze(model)
    with torch.no_grad():
        colour_pred, shape_pred = [], []
        for chunk in images.split(256):
            colour_logits, shape_logits, _ = model(chunk)
            colour_pred.append(colour_logits.argmax(-1))
            shape_pred.append(shape_logits.argmax(-1))
    return PretrainResult(
        model=model.vit,
        colour_accuracy=_accuracy(torch.cat(colour_pred), colour_labels),
        shape_accuracy=_accuracy(torch.cat(shape_pred), shape_labels),
        losses=losses,
    )


# ------------------------------------------------------------------------------------------ two pathways


@dataclass(frozen=True)
class PathwayOutput:
    """What :meth:`TwoPathwayEncoder.pathway` returns.

    tokens: (B, N, d) the final LayerNorm'd tokens; attentions: one (B, heads, N, N) softmax map per block
    from ``SPLIT_BLOCK`` to the last (rows sum to 1), or None unless asked; responses: per such block the
    attention sub-layer's output a = Attn(LN1(z)), (B, N, d) (the "response" of variant (b), §3.2).
    """

    tokens: Tensor
    attentions: tuple[Tensor, ...] | None
    responses: tuple[Tensor, ...]


def _block_index(name: str) -> int | None:
    """The block number in a module name ``blocks.<k>. ...``, or None outside the blocks."""
    parts = name.split(".")
    if len(parts) >= 2 and parts[0] == "blocks" and parts[1].isdigit():
        return int(parts[1])
    return None


class TwoPathwayEncoder(nn.Module):
    """One frozen ViT, two pathways: adapters off (V2D, the original encoder) and on (V3D) (§3.1).

    ``encoder`` is deep-copied (the caller's model is left as it is); every base parameter of the copy is
    frozen and :func:`neurips26.nn.apply_lora` puts rank-``rank`` adapters (scale ``alpha / rank``, B = 0,
    A seeded ``seed + k``) on ``targets`` (default :func:`lora_targets` of the encoder's config), which must
    all lie in blocks ``>= l0 =`` :func:`split_block` (``SPLIT_BLOCK`` = 2 for :data:`ENCODER_CONFIG`) so
    that the prefix is shared. Only the adapters' A and B train.
    """

    def __init__(
        self,
        encoder: ViT,
        *,
        rank: int = LORA_RANK,
        alpha: float = LORA_ALPHA,
        seed: int = 0,
        targets: Sequence[str] | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(encoder, ViT):
            raise TypeError(f"encoder must be a neurips26.nn.ViT; got {type(encoder).__name__}")
        if encoder.config.class_token:
            raise ValueError("encoder must have no class token (class_token=False): pathways carry patches")
        if encoder.config.depth < 2:
            raise ValueError("encoder must have at least 2 blocks (a shared prefix and adapted blocks)")
        split = split_block(encoder.config)
        self.rank = check_int("rank", rank, minimum=1)
        self.alpha = check_float("alpha", alpha, minimum=0.0, strict_min=True)
        check_seed("seed", seed)
        if targets is None:
            targets = lora_targets(encoder.config)
        if isinstance(targets, str):
            targets = (targets,)
        targets = tuple(targets)
        self.encoder = copy.deepcopy(encoder)
        for p in self.encoder.parameters():
            p.requires_grad_(False)
        try:
            wrapped = apply_lora(self.encoder, targets, self.rank, self.alpha, seed=seed)
        except (TypeError, ValueError) as error:
            raise ValueError(f"targets {targets!r} cannot carry adapters: {error}") from error
        shared = [n for n in wrapped if (_block_index(n) is None or _block_index(n) < split)]
        if shared:
            raise ValueError(
                f"targets must lie in blocks >= SPLIT_BLOCK = {split} (the shared prefix has no "
                f"adapters); got {shared}"
            )
        self.lora_names = tuple(wrapped)
        self.split_block = split

    @property
    def num_patches(self) -> int:
        """N, the number of patch tokens."""
        return self.encoder.config.num_patches

    @property
    def width(self) -> int:
        """d, the token width."""
        return self.encoder.config.width

    @torch.no_grad()
    def prefix(self, images: Tensor) -> Tensor:
        """The shared activation z_{SPLIT_BLOCK}: patch + position embedding and blocks 0 .. SPLIT_BLOCK-1.

        images (B, 3, 48, 48) -> (B, N, d), computed without gradient (the prefix is frozen).
        """
        images = check_images(images)
        z = self.encoder.patch_embed(images) + self.encoder.pos_embed
        for block in self.encoder.blocks[: self.split_block]:
            z, _ = block(z)
        return z

    def pathway(self, prefix: Tensor, *, lora: bool, need_weights: bool = False) -> PathwayOutput:
        """Blocks SPLIT_BLOCK .. depth-1 and the final LayerNorm on ``prefix`` (B, N, d), adapters on or off.

        Each block runs by hand, z <- z + a with a = Attn(LN1(z)), then z <- z + MLP(LN2(z)), so that the
        responses a and, with ``need_weights``, the attention maps (B, heads, N, N) can be returned. With
        ``need_weights`` the attention is computed as an explicit softmax (as ``ViT(...,
        return_attentions=True)`` does) rather than fused, which changes the tokens by float rounding
        only. Every adapter is switched to ``lora`` for the call and then put back as it was.
        """
        if not isinstance(lora, bool):
            raise TypeError(f"lora must be a bool; got {type(lora).__name__}")
        if not isinstance(need_weights, bool):
            raise TypeError(f"need_weights must be a bool; got {type(need_weights).__name__}")
        shape = (self.num_patches, self.width)
        if not isinstance(prefix, Tensor) or prefix.ndim != 3 or tuple(prefix.shape[1:]) != shape:
            got = tuple(prefix.shape) if isinstance(prefix, Tensor) else type(prefix).__name__
            raise ValueError(f"prefix must be a tensor of shape (B, {shape[0]}, {shape[1]}); got {got}")
        adapters = lora_modules(self.encoder)
        before = [m.enabled for m in adapters]
        attentions: list[Tensor] = []
        responses: list[Tensor] = []
        try:
            for m in adapters:
                m.enabled = lora
            z = prefix
            for block in self.encoder.blocks[self.split_block :]:
                a, weights = block.attn(block.norm1(z), return_weights=need_weights)
                z = z + a
                z = z + block.fc2(F.gelu(block.fc1(block.norm2(z))))
                responses.append(a)
                if need_weights:
                    attentions.append(weights)
            tokens = self.encoder.norm(z)
        finally:
            for m, enabled in zip(adapters, before, strict=True):
                m.enabled = enabled
        return PathwayOutput(
            tokens=tokens,
            attentions=tuple(attentions) if need_weights else None,
            responses=tuple(responses),
        )

    def forward(self, images: Tensor) -> tuple[Tensor, Tensor]:
        """(V2D, V3D), each (B, N, d): both pathways from one shared prefix of ``images`` (B, 3, 48, 48)."""
        z = self.prefix(images)
        return self.pathway(z, lora=False).tokens, self.pathway(z, lora=True).tokens

    def adapter_parameters(self) -> list[nn.Parameter]:
        """The trainable LoRA factors (A, B of every adapter), in module order."""
        return lora_parameters(self.encoder)

    def num_adapter_parameters(self) -> int:
        """How many numbers the adapters hold (r (d_in + d_out) per adapted layer)."""
        return sum(p.numel() for p in self.adapter_parameters())


__all__ = [
    "ENCODER_CONFIG",
    "GRID",
    "LORA_ALPHA",
    "LORA_RANK",
    "LORA_TARGETS",
    "NUM_PATCHES",
    "SPLIT_BLOCK",
    "PathwayOutput",
    "PretrainResult",
    "TwoPathwayEncoder",
    "adapted_blocks",
    "check_images",
    "lora_targets",
    "make_encoder",
    "pretrain_encoder",
    "split_block",
]
