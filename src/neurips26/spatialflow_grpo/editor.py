"""The image editor of chapter 08: a small pixel-space DiT that predicts a flow-matching velocity.

The editor is the policy that Flow-GRPO and SpatialFlow-GRPO fine-tune. It edits a 16 × 16 RGB ``source``
image under an instruction vector, in flow space ``x = 2·image − 1`` (:func:`to_flow`, :func:`from_flow`),
on the linear path of :mod:`neurips26.flow` (``x_t = (1 − t) x₀ + t ε``, velocity ``ε − x₀``).

Built from the book's shared blocks (:mod:`neurips26.nn`)::

    tokens = PatchEmbed([x_t ‖ source]) + pos                (B, 64, D): 6 channels, 2 × 2 patches, 8 × 8 grid
    c      = TimestepEmbed(1000 t) + MLP(instruction)        (B, C)
    h      = ConditionedTransformer(tokens, c)               AdaLN-Zero blocks + modulated final LayerNorm
    v      = unpatchify(Linear(h))                           (B, 3, 16, 16), the head zero at initialisation

The source enters channel-wise, concatenated with the noisy state, so token ``p`` (row-major over the
8 × 8 grid) sees both images' pixels of its own patch directly; the instruction enters only through the
AdaLN modulation. AdaLN-Zero gates and the zero head make the velocity exactly 0 at initialisation.

For RL, :func:`add_rl_lora` puts rank-4 LoRA adapters on ``RL_LORA_TARGETS`` (attention qkv and output,
MLP, and every AdaLN modulation) and freezes the rest, and :func:`adapters_off` gives the reference policy
π_ref of Flow-GRPO: the same network with its adapters disabled. :func:`velocity_fn` wraps the editor as the
``(z, t) -> v`` callable that :mod:`neurips26.flow`'s samplers take, and :func:`pretrain` trains the base
editor with the flow-matching loss on EditWorld's (flawed) pairs.

[our choice] Frequency features 64 and time scale 1000 for ``TimestepEmbedding`` (as chapter 07's DiT);
MLP ratio 2: 117,804 parameters (ratio 4 would give 145,740). Measured on one thread of a 2-core CPU at
batch 64: one pretraining update (forward, backward, Adam) ≈78 ms.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn

from neurips26.flow import (
    DISTRIBUTIONS,
    VelocityFn,
    broadcast_time,
    interpolate,
    sample_times,
    velocity_target,
)
from neurips26.nn import (
    ConditionedTransformer,
    ConditionedTransformerConfig,
    LearnedPositions,
    PatchEmbedding,
    TimestepEmbedding,
    apply_lora,
    lora_modules,
    set_lora_enabled,
)
from neurips26.seeding import sub_seed
from neurips26.train import choose_device, fit, torch_threads
from neurips26.validation import check_choice, check_float, check_int, check_seed

#: ``t ∈ [0, 1]`` is multiplied by this before the sinusoidal features, so nearby times separate.
TIME_SCALE = 1000.0
#: Sinusoidal features of the time embedding.
TIME_FREQUENCIES = 64
#: The linear layers that carry LoRA adapters in RL (module-name suffixes for ``apply_lora``): attention
#: ``qkv`` and output, the MLP's ``fc1``/``fc2`` (neurips26.nn.adaln, .attention), and every AdaLN
#: modulation (each block's and the final LayerNorm's).
RL_LORA_TARGETS: tuple[str, ...] = (
    "attn.qkv",
    "attn.out",
    "mlp.fc1",
    "mlp.fc2",
    "modulation",
    "final_modulation",
)


# ------------------------------------------------------------------------------------------ flow space


def to_flow(images: Tensor) -> Tensor:
    """Images in ``[0, 1]`` → flow space ``x = 2·image − 1`` (data near ``[−1, 1]``, like the noise)."""
    if not isinstance(images, Tensor) or not images.is_floating_point():
        raise TypeError(f"images must be a floating torch.Tensor; got {_kind(images)}")
    return 2 * images - 1


def from_flow(x: Tensor) -> Tensor:
    """Flow space → images: ``clamp((x + 1)/2, 0, 1)``, the inverse of :func:`to_flow` on ``[−1, 1]``."""
    if not isinstance(x, Tensor) or not x.is_floating_point():
        raise TypeError(f"x must be a floating torch.Tensor; got {_kind(x)}")
    return ((x + 1) / 2).clamp(0.0, 1.0)


def _kind(value: object) -> str:
    return f"dtype {value.dtype}" if isinstance(value, Tensor) else type(value).__name__


# -------------------------------------------------------------------------------------------- patches


def patchify(images: Tensor, patch: int) -> Tensor:
    """(B, C, H, W) → (B, N, C·p·p): token ``n`` is patch (n // (W/p), n % (W/p)) (row-major), its values
    in (C, p, p) order."""
    if not isinstance(images, Tensor) or images.ndim != 4:
        raise ValueError(f"images must be a tensor of shape (B, C, H, W); got {_kind(images)}")
    p = check_int("patch", patch, minimum=1)
    b, c, h, w = images.shape
    if h % p or w % p:
        raise ValueError(f"patch ({p}) must divide the image size ({h}, {w})")
    x = images.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5)  # (B, H/p, W/p, C, p, p)
    return x.reshape(b, (h // p) * (w // p), c * p * p)


def unpatchify(tokens: Tensor, channels: int, patch: int, size: tuple[int, int]) -> Tensor:
    """(B, N, C·p·p) → (B, C, H, W), the inverse of :func:`patchify` (row-major tokens, (C, p, p) values)."""
    c = check_int("channels", channels, minimum=1)
    p = check_int("patch", patch, minimum=1)
    h, w = (check_int("size[0]", size[0], minimum=1), check_int("size[1]", size[1], minimum=1))
    if h % p or w % p:
        raise ValueError(f"patch ({p}) must divide size ({h}, {w})")
    n = (h // p) * (w // p)
    if not isinstance(tokens, Tensor) or tokens.ndim != 3 or tokens.shape[1:] != (n, c * p * p):
        got = tuple(tokens.shape) if isinstance(tokens, Tensor) else type(tokens).__name__
        raise ValueError(f"tokens must have shape (B, {n}, {c * p * p}); got {got}")
    x = tokens.reshape(tokens.shape[0], h // p, w // p, c, p, p).permute(0, 3, 1, 4, 2, 5)
    return x.reshape(tokens.shape[0], c, h, w)


# ---------------------------------------------------------------------------------------------- model


@dataclass(frozen=True)
class EditorConfig:
    """Sizes of :class:`Editor`.

    image_size: side of the square images (divisible by ``patch``); channels: image channels (the input has
    twice as many: x_t and source); patch: patch side (2 → an 8 × 8 token grid); width, depth, heads,
    mlp_ratio: the transformer (``heads`` divides ``width``); cond_dim: width of the condition c;
    instruction_dim: length of the instruction vector.
    """

    image_size: int = 16
    channels: int = 3
    patch: int = 2
    width: int = 48
    depth: int = 3
    heads: int = 4
    cond_dim: int = 48
    instruction_dim: int = 36
    mlp_ratio: float = 2.0

    def __post_init__(self) -> None:
        check_int("image_size", self.image_size, minimum=1)
        check_int("channels", self.channels, minimum=1)
        check_int("patch", self.patch, minimum=1)
        check_int("width", self.width, minimum=1)
        check_int("depth", self.depth, minimum=1)
        check_int("heads", self.heads, minimum=1)
        check_int("cond_dim", self.cond_dim, minimum=1)
        check_int("instruction_dim", self.instruction_dim, minimum=1)
        check_float("mlp_ratio", self.mlp_ratio, minimum=0.0, strict_min=True)
        if self.image_size % self.patch:
            raise ValueError(f"patch ({self.patch}) must divide image_size ({self.image_size})")
        if self.width % self.heads:
            raise ValueError(f"heads ({self.heads}) must divide width ({self.width})")

    @property
    def grid(self) -> int:
        """Tokens per side of the grid: image_size / patch (8)."""
        return self.image_size // self.patch

    @property
    def num_tokens(self) -> int:
        """Tokens per image: grid² (64)."""
        return self.grid**2

    @property
    def transformer(self) -> ConditionedTransformerConfig:
        """The shared AdaLN-Zero transformer's configuration."""
        return ConditionedTransformerConfig(
            width=self.width,
            heads=self.heads,
            cond_dim=self.cond_dim,
            depth=self.depth,
            mlp_ratio=self.mlp_ratio,
            conditioning="adaln",
        )


class Editor(nn.Module):
    """Pixel-space DiT editor: ``forward(x_t, t, source, instruction) -> v`` (module docstring).

    Initialised from ``seed`` alone (a private generator; torch's global RNG is left as it was): linear
    and patch weights Xavier-uniform, biases zero, positions and time-MLP weights N(0, 0.02²), every AdaLN
    modulation and the head zero (the velocity is exactly 0 at initialisation).
    """

    def __init__(self, config: EditorConfig | None = None, seed: int = 0) -> None:
        super().__init__()
        config = EditorConfig() if config is None else config
        if not isinstance(config, EditorConfig):
            raise TypeError(f"config must be an EditorConfig; got {type(config).__name__}")
        seed = check_seed("seed", seed)
        self.config = config
        c = config
        with torch.random.fork_rng(devices=[]):  # module constructors draw from the global RNG
            self.patch_embed = PatchEmbedding(2 * c.channels, c.width, c.patch)
            self.positions = LearnedPositions(c.num_tokens, c.width)
            self.time = TimestepEmbedding(c.cond_dim, frequency_dim=TIME_FREQUENCIES, scale=TIME_SCALE)
            self.instruction = nn.Sequential(
                nn.Linear(c.instruction_dim, c.cond_dim), nn.SiLU(), nn.Linear(c.cond_dim, c.cond_dim)
            )
            self.transformer = ConditionedTransformer(c.transformer)
            self.head = nn.Linear(c.width, c.patch**2 * c.channels)
        self._initialise(torch.Generator().manual_seed(seed))

    @torch.no_grad()
    def _initialise(self, generator: torch.Generator) -> None:
        """Set every parameter from ``generator`` (so the weights depend on the seed only)."""
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight, generator=generator)
                nn.init.zeros_(module.bias)
        conv = self.patch_embed.conv  # the patch convolution as the linear map it is (DiT)
        nn.init.xavier_uniform_(conv.weight.view(conv.weight.shape[0], -1), generator=generator)
        nn.init.zeros_(conv.bias)
        nn.init.normal_(self.positions.table.weight, std=0.02, generator=generator)
        for layer in (self.time.mlp[0], self.time.mlp[2]):
            nn.init.normal_(layer.weight, std=0.02, generator=generator)
        zero = [block.modulation for block in self.transformer.blocks]
        zero += [self.transformer.final_modulation, self.head]  # AdaLN-Zero; zero velocity at init
        for layer in zero:
            nn.init.zeros_(layer.weight)
            nn.init.zeros_(layer.bias)

    def parameter_count(self, trainable: bool = False) -> int:
        """Number of parameters (all, or only those requiring grad): 117,804 with the defaults.

        Per part: patch embedding 1,200, positions 3,072, time MLP 5,472, instruction MLP 4,128, three
        blocks 98,640 (each 32,880: qkv 7,056, out 2,352, fc1 4,704, fc2 4,656, modulation 14,112),
        final modulation 4,704, head 588.
        """
        return sum(p.numel() for p in self.parameters() if p.requires_grad or not trainable)

    def _check(self, x_t: object, t: object, source: object, instruction: object) -> tuple[Tensor, ...]:
        c = self.config
        shape = (c.channels, c.image_size, c.image_size)
        if not isinstance(x_t, Tensor) or not x_t.is_floating_point():
            raise TypeError(f"x_t must be a floating torch.Tensor; got {_kind(x_t)}")
        if x_t.ndim != 4 or tuple(x_t.shape[1:]) != shape:
            raise ValueError(f"x_t must have shape (B, {', '.join(map(str, shape))}); got {tuple(x_t.shape)}")
        batch = x_t.shape[0]
        if not isinstance(source, Tensor) or not source.is_floating_point():
            raise TypeError(f"source must be a floating torch.Tensor; got {_kind(source)}")
        if source.shape != x_t.shape:
            raise ValueError(f"source must have x_t's shape {tuple(x_t.shape)}; got {tuple(source.shape)}")
        if not isinstance(instruction, Tensor) or not instruction.is_floating_point():
            raise TypeError(f"instruction must be a floating torch.Tensor; got {_kind(instruction)}")
        if instruction.shape != (batch, c.instruction_dim):
            raise ValueError(
                f"instruction must have shape ({batch}, {c.instruction_dim}); got {tuple(instruction.shape)}"
            )
        if isinstance(t, Tensor) and t.ndim > 1:
            raise ValueError(f"t must be a number or a tensor of shape ({batch},); got {tuple(t.shape)}")
        level = broadcast_time(t, x_t)  # type and range [0, 1], on x_t's device and dtype
        if isinstance(level, float):
            times = torch.full((batch,), level, dtype=x_t.dtype, device=x_t.device)
        else:
            times = level.reshape(-1).expand(batch)
        return x_t, times, source.to(x_t.dtype), instruction.to(x_t.dtype)

    def forward(self, x_t: Tensor, t: float | Tensor, source: Tensor, instruction: Tensor) -> Tensor:
        """Velocity ``v_θ(x_t, t, source, instruction)`` of shape (B, 3, 16, 16).

        ``x_t`` and ``source`` (B, 3, 16, 16) in flow space; ``t`` a number or a (B,) tensor in [0, 1];
        ``instruction`` (B, 36).
        """
        x_t, t, source, instruction = self._check(x_t, t, source, instruction)
        c = self.config
        ids = torch.arange(c.num_tokens, device=x_t.device)
        tokens = self.patch_embed(torch.cat([x_t, source], dim=1)) + self.positions(ids)  # (B, N, D)
        cond = self.time(t) + self.instruction(instruction)  # c = TimestepEmbed(t) + MLP(instruction)
        h = self.transformer(tokens, cond)
        return unpatchify(self.head(h), c.channels, c.patch, (c.image_size, c.image_size))


def velocity_fn(editor: Editor, source: Tensor, instruction: Tensor) -> VelocityFn:
    """The editor as ``(z, t) -> v`` for :mod:`neurips26.flow` samplers, conditioned on one batch.

    ``source`` (B, 3, 16, 16) in flow space and ``instruction`` (B, 36) are fixed; ``z`` must have the
    source's shape and ``t`` is a (B,) tensor (or a number).
    """
    if not isinstance(editor, Editor):
        raise TypeError(f"editor must be an Editor; got {type(editor).__name__}")
    c = editor.config
    if not isinstance(source, Tensor) or not source.is_floating_point():
        raise TypeError(f"source must be a floating torch.Tensor; got {_kind(source)}")
    if source.ndim != 4 or tuple(source.shape[1:]) != (c.channels, c.image_size, c.image_size):
        raise ValueError(
            f"source must have shape (B, {c.channels}, {c.image_size}, {c.image_size}); "
            f"got {tuple(source.shape)}"
        )
    if not isinstance(instruction, Tensor) or instruction.shape != (source.shape[0], c.instruction_dim):
        got = tuple(instruction.shape) if isinstance(instruction, Tensor) else type(instruction).__name__
        raise ValueError(f"instruction must have shape ({source.shape[0]}, {c.instruction_dim}); got {got}")

    def velocity(z: Tensor, t: Tensor) -> Tensor:
        return editor(z, t, source, instruction)

    return velocity


# ---------------------------------------------------------------------------------------- RL adapters


def add_rl_lora(editor: Editor, rank: int = 4, alpha: float = 8.0, seed: int = 0) -> list[str]:
    """Put LoRA adapters (``W + (α/r) B A``, B = 0) on every ``RL_LORA_TARGETS`` layer; freeze the rest.

    As Flow-GRPO's code, RL trains only the adapters; at initialisation the output equals the base
    editor's exactly. Returns the wrapped module names (3 blocks × 5 + the final modulation = 16).
    """
    if not isinstance(editor, Editor):
        raise TypeError(f"editor must be an Editor; got {type(editor).__name__}")
    check_int("rank", rank, minimum=1)
    return apply_lora(editor, RL_LORA_TARGETS, rank, alpha, seed=seed)


@contextlib.contextmanager
def adapters_off(editor: nn.Module) -> Iterator[nn.Module]:
    """Inside the block every LoRA adapter of ``editor`` is disabled (π_ref: the base editor, exactly);
    on exit each adapter gets back the state it had before. Raises RuntimeError on merged adapters."""
    if not isinstance(editor, nn.Module):
        raise TypeError(f"editor must be a torch.nn.Module; got {type(editor).__name__}")
    modules = lora_modules(editor)
    before = [m.enabled for m in modules]
    set_lora_enabled(editor, False)
    try:
        yield editor
    finally:
        for module, enabled in zip(modules, before, strict=True):
            module.enable() if enabled else module.disable()


# ---------------------------------------------------------------------------------------- pretraining


#: ``batch_fn(batch_size, seed, step)`` → a batch with ``source``, ``target`` (B, 3, 16, 16) in [0, 1] and
#: ``instruction`` (B, 36), as ``editworld.training_batch``.
BatchFn = Callable[[int, int, int], Any]


@dataclass(frozen=True)
class PretrainConfig:
    """Settings of :func:`pretrain`.

    steps, batch: updates and pairs per update; lr: peak Adam rate, reached after ``warmup`` updates
    (linear), then cosine decay to ``min_lr_ratio·lr`` (``neurips26.train.lr_at``); grad_clip: global
    gradient-norm bound (None: no clipping); seed: weights, data, noise and times; time_distribution:
    ``"uniform"`` or ``"logit-normal"`` (``neurips26.flow.sample_times``); editor: the editor's sizes.

    Defaults (ours, measured on the three suites with 12 ODE steps): 1,500 steps at 2e-3 with uniform times
    (our first budget) left an editor that ignored the instruction (2 % success on Single: it copied the
    source); 5,000 steps at 2e-3 reached 63 % on Single and 1 % on MultiEdit; 5,000 steps at 3e-3 with
    logit-normal times (SD3's) reach 94 % on Single, 59 % on Mixed and 10 % on MultiEdit, missing the later
    clauses of multi-clause edits as its flawed pairs taught it: the headroom RL is for.
    """

    steps: int = 5000
    batch: int = 64
    lr: float = 3e-3
    warmup: int = 50
    min_lr_ratio: float = 0.1
    grad_clip: float | None = 1.0
    seed: int = 0
    time_distribution: str = "logit-normal"
    editor: EditorConfig = field(default_factory=EditorConfig)

    def __post_init__(self) -> None:
        check_int("steps", self.steps, minimum=1)
        check_int("batch", self.batch, minimum=1)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_int("warmup", self.warmup, minimum=0, maximum=self.steps)
        check_float("min_lr_ratio", self.min_lr_ratio, minimum=0.0, maximum=1.0)
        if self.grad_clip is not None:
            check_float("grad_clip", self.grad_clip, minimum=0.0, strict_min=True)
        check_seed("seed", self.seed)
        check_choice("time_distribution", self.time_distribution, DISTRIBUTIONS)
        if not isinstance(self.editor, EditorConfig):
            raise TypeError(f"editor must be an EditorConfig; got {type(self.editor).__name__}")


def flow_matching_loss(
    editor: Editor | nn.Module, source: Tensor, x0: Tensor, instruction: Tensor, noise: Tensor, t: Tensor
) -> Tensor:
    """The flow-matching loss: mean over all entries of ``(v_θ(x_t, t, source, instruction) − (ε − x₀))²``.

    ``x_t = (1 − t) x₀ + t ε``. All images in flow space; ``x0`` is the target edit, ``noise`` ε, ``t`` (B,).
    ``editor`` is called once (it may be the data-parallel wrapper of an :class:`Editor` under torchrun).
    """
    x_t = interpolate(x0, noise, t)
    return (editor(x_t, t, source, instruction) - velocity_target(x0, noise)).square().mean()


def pretrain(
    config: PretrainConfig | None = None,
    progress: bool = False,
    *,
    batch_fn: BatchFn | None = None,
    device: torch.device | str | None = None,
) -> tuple[Editor, list[float]]:
    """Train a base editor with the flow-matching loss on EditWorld pairs; return it and the loss per update.

    Update ``s`` uses ``batch_fn(config.batch, config.seed, s)`` (default: ``editworld.training_batch``),
    ``x₀ = to_flow(target)``, noise and times from a generator seeded by ``(seed, s)``, Adam (``fit`` with
    weight decay 0, betas (0.9, 0.999)) on one torch thread: the same seed gives the same weights.

    The editor trains on ``device`` (None: :func:`~neurips26.train.choose_device`'s); the batches are made
    on the CPU and moved there by ``fit``. Under torchrun ``fit`` trains data-parallel: every rank makes the
    same global batch of update ``s`` (pairs, noise and times) and keeps its own rows of it, so the ranks
    see different pairs and noise, and the global batch is the one a single process draws.
    """
    config = PretrainConfig() if config is None else config
    if not isinstance(config, PretrainConfig):
        raise TypeError(f"config must be a PretrainConfig; got {type(config).__name__}")
    if batch_fn is None:
        from neurips26.spatialflow_grpo.editworld import training_batch as batch_fn
    if not callable(batch_fn):
        raise TypeError(
            f"batch_fn must be callable as batch_fn(batch_size, seed, step); got {_kind(batch_fn)}"
        )
    editor = Editor(config.editor, seed=sub_seed(config.seed, 0))
    editor.to(choose_device() if device is None else torch.device(device))

    def batches(step: int) -> tuple[Tensor, ...]:
        pairs = batch_fn(config.batch, config.seed, step)
        source, target = to_flow(pairs.source), to_flow(pairs.target)
        generator = torch.Generator().manual_seed(sub_seed(config.seed, 1, step))
        noise = torch.randn(target.shape, generator=generator, dtype=target.dtype)
        t = sample_times(
            target.shape[0], generator, dtype=target.dtype, distribution=config.time_distribution
        )
        return source, target, pairs.instruction, noise, t

    def loss_fn(model: nn.Module, batch: tuple[Tensor, ...]) -> Tensor:
        source, x0, instruction, noise, t = batch
        return flow_matching_loss(model, source, x0, instruction, noise, t)

    with torch_threads(1):
        history = fit(
            editor,
            loss_fn,
            batches,
            steps=config.steps,
            seed=config.seed,
            lr=config.lr,
            weight_decay=0.0,
            warmup=config.warmup,
            min_lr_ratio=config.min_lr_ratio,
            grad_clip=config.grad_clip,
            betas=(0.9, 0.999),
            progress=progress,
            desc="pretraining the editor",
        )
    editor.eval()
    return editor, list(history.loss)
