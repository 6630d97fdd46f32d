"""The action head: read the next actions off an imagined future (the paper's Stage 4, at a CPU size).

The paper's head is a small DiT that denoises a chunk of continuous actions while cross-attending to the
generated sparse future (encoded by Video-Former layers) and the instruction. Ours keeps that shape:

- **Context encoder** (a "Video-Former-lite"). The context is ``S`` latent chunks (B, S, 2, 16) — for
  SparseVideoNav the 2 reference chunks and the 8 generated future chunks. Each token is projected to
  ``width`` and gets the sinusoidal embedding of its slot's temporal index plus a learned embedding of its
  half of the view. Each of ``context_layers`` pre-norm residual layers runs a spatial self-attention over
  the 2 tokens of a chunk, a temporal self-attention across the ``S`` chunks for each half, and an FFN; a
  LayerNorm closes. Optional extra tokens (B, M, width), e.g. the Former's ``h_T``, are appended after it.
- **Words**: :class:`~neurips26.sparsevideonav.layers.WordEncoder`.
- **Denoiser.** The ``horizon`` actions, normalised by :data:`ACTION_SCALE` (the world's per-frame limits,
  so the numbers lie in about [−1, 1]), are ``horizon`` tokens of 3 numbers: a linear map to ``width``
  plus the sinusoidal embedding of the step index. Each of ``dit_layers`` layers is an
  :class:`~neurips26.nn.AdaLNZeroBlock` modulated by the flow time ``t`` (``TimestepEmbedding(scale=1000)``)
  followed by a cross-attention to ``context ⧺ words`` (the word padding masked). A LayerNorm and a
  zero-initialised linear head give the velocity, so the head's output is exactly zero at initialisation.
- **Flow matching** on the linear path ``a_t = (1 − t) a₀ + t ε`` with target ``ε − a₀``
  (:mod:`neurips26.flow`); sampling integrates ``da/dt = v_θ`` with Euler from ``t = 1`` to 0.
- **Stop head.** An MLP on ``[mean of the context tokens ⧺ masked mean of the words]`` gives one logit:
  does the expert stop within this chunk. The label is rare (about 1 decision in 25), so its BCE weights
  positives by ``pos_weight`` (default :data:`STOP_POS_WEIGHT` = 5): the trained logit then estimates
  ``log(5 p / (1 − p))``, i.e. the probability read off it crosses 0.5 once the true stop chance ``p``
  passes 1/6 — a deliberate lean towards stopping, since an agent that never stops never succeeds, while
  full re-balancing (weight ≈ 24) would fire at ``p`` ≈ 1/25, on almost any view of the goal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neurips26.distributed import unwrap
from neurips26.flow import euler_sample, uniform_grid
from neurips26.nn import AdaLNZeroBlock, ConditionedTransformerConfig, MultiHeadAttention, TimestepEmbedding
from neurips26.nn.embeddings import sinusoidal_embedding
from neurips26.sparsevideonav.codec import LATENT_DIM
from neurips26.sparsevideonav.codec import TOKENS as TOKENS_PER_CHUNK  # the view's two halves
from neurips26.sparsevideonav.instructions import MAX_WORDS, VOCAB
from neurips26.sparsevideonav.layers import CrossAttention, FeedForward, WordEncoder, masked_mean
from neurips26.validation import check_float, check_int, check_tuple

#: The world's per-frame limits (Δforward m, Δlateral m, Δyaw deg) = (SPEED/FPS, SPEED/FPS, TURN/FPS);
#: actions are divided by it before the flow sees them.
ACTION_SCALE: tuple[float, float, float] = (0.25, 0.25, 22.5)
#: Default positive-class weight of the stop BCE (module doc).
STOP_POS_WEIGHT = 5.0


@dataclass(frozen=True)
class ActionHeadConfig:
    """Sizes of an :class:`ActionHead` (module doc).

    width, heads; context_layers (encoder layers over the context chunks); dit_layers; horizon (actions
    per chunk: 8, or 80 for the long-horizon baseline); context_slots ``S`` (chunks of 2 tokens given as
    context: 2 reference + 8 generated for SVN); slot_times (the temporal index of each slot, length ``S``;
    None = ``0 … S − 1``); memory_tokens (extra width-D tokens appended to the context, 0 = none);
    sample_steps (Euler steps of :func:`sample_actions`); vocab, max_words (the instruction).
    """

    width: int = 48
    heads: int = 4
    context_layers: int = 2
    dit_layers: int = 3
    horizon: int = 8
    context_slots: int = 10
    slot_times: tuple[float, ...] | None = None
    memory_tokens: int = 0
    sample_steps: int = 8
    vocab: int = field(default=len(VOCAB))
    max_words: int = MAX_WORDS

    def __post_init__(self) -> None:
        check_int("width", self.width, minimum=2)
        check_int("heads", self.heads, minimum=1)
        check_int("context_layers", self.context_layers, minimum=0)
        check_int("dit_layers", self.dit_layers, minimum=1)
        check_int("horizon", self.horizon, minimum=1)
        check_int("context_slots", self.context_slots, minimum=1)
        check_int("memory_tokens", self.memory_tokens, minimum=0)
        check_int("sample_steps", self.sample_steps, minimum=1)
        check_int("vocab", self.vocab, minimum=2)
        check_int("max_words", self.max_words, minimum=1)
        if self.width % self.heads or self.width % 2:
            raise ValueError(
                f"width must be even and divisible by heads; got width={self.width}, heads={self.heads}"
            )
        if self.slot_times is not None:
            times = check_tuple("slot_times", self.slot_times, check_float, order="any")
            if len(times) != self.context_slots:
                raise ValueError(
                    f"slot_times must have context_slots = {self.context_slots} entries; got {len(times)}"
                )
            object.__setattr__(self, "slot_times", times)

    @property
    def times(self) -> tuple[float, ...]:
        """The temporal index of every context slot."""
        return (
            self.slot_times if self.slot_times is not None else tuple(map(float, range(self.context_slots)))
        )


@dataclass(frozen=True)
class Encoded:
    """The conditioning of one batch, computed once per decision: keys (B, N, width) = context ⧺ memory ⧺
    words, key_mask (B, N) bool, summary (B, 2 width) = [mean context token ⧺ masked mean word]."""

    keys: Tensor
    key_mask: Tensor
    summary: Tensor


def normalise(actions: Tensor) -> Tensor:
    """World-unit actions (..., 3) → divided by :data:`ACTION_SCALE` (about [−1, 1])."""
    return actions / actions.new_tensor(ACTION_SCALE)


def denormalise(actions: Tensor) -> Tensor:
    """Normalised actions (..., 3) → world units (m, m, deg); the inverse of :func:`normalise`."""
    return actions * actions.new_tensor(ACTION_SCALE)


def clip_to_world(actions: Tensor) -> Tensor:
    """World-unit actions (..., 3) clipped as :meth:`NavWorld.step` clips them: the planar move (Δfwd, Δlat)
    scaled down to norm ≤ 0.25 m, the turn clipped to ±22.5°."""
    move = actions[..., :2]
    norm = move.norm(dim=-1, keepdim=True)
    limit = ACTION_SCALE[0]
    move = move * torch.where(norm > limit, limit / norm.clamp_min(1e-12), torch.ones_like(norm))
    turn = actions[..., 2:].clamp(-ACTION_SCALE[2], ACTION_SCALE[2])
    return torch.cat([move, turn], dim=-1)


class _ContextLayer(nn.Module):
    """Spatial self-attention within a chunk, temporal self-attention across chunks per half, FFN."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.norm_s = nn.LayerNorm(width)
        self.spatial = MultiHeadAttention(width, heads)
        self.norm_t = nn.LayerNorm(width)
        self.temporal = MultiHeadAttention(width, heads)
        self.ffn = FeedForward(width, 4 * width)

    def forward(self, x: Tensor) -> Tensor:
        """x (B, S, 2, D) → (B, S, 2, D)."""
        b, s, k, d = x.shape
        flat = x.reshape(b * s, k, d)  # the 2 halves of one chunk
        flat = flat + self.spatial(self.norm_s(flat))[0]
        across = flat.view(b, s, k, d).transpose(1, 2).reshape(b * k, s, d)  # one half, all S chunks
        across = across + self.temporal(self.norm_t(across))[0]
        x = across.view(b, k, s, d).transpose(1, 2)
        return self.ffn(x)


class _DiTLayer(nn.Module):
    """AdaLN-Zero self-attention + MLP under the flow time, then cross-attention to the conditioning."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.dit = AdaLNZeroBlock(
            ConditionedTransformerConfig(width=width, heads=heads, cond_dim=width, depth=1)
        )
        self.norm = nn.LayerNorm(width)
        self.cross = CrossAttention(width, heads)

    def forward(self, x: Tensor, c: Tensor, keys: Tensor, key_mask: Tensor) -> Tensor:
        x = self.dit(x, c)
        return x + self.cross(self.norm(x), keys, key_mask)


def _shape(x: object) -> tuple:
    return tuple(getattr(x, "shape", ()))


class ActionHead(nn.Module):
    """``v_θ(a_t, t | context, words, memory)`` over a chunk of normalised actions, and a stop logit.

    forward(actions_t (B, H, 3), t (B,), context (B, S, 2, 16), words (B, L) ids, *, memory (B, M, width)
    or None) → velocity (B, H, 3), or ``(velocity, stop logit (B,))`` with ``with_stop=True`` (what
    :func:`head_loss` needs, in one call of the module). :meth:`encode` computes the conditioning once;
    :meth:`velocity` and :meth:`stop_logit` read it.
    """

    def __init__(self, config: ActionHeadConfig | None = None):
        super().__init__()
        config = ActionHeadConfig() if config is None else config
        if not isinstance(config, ActionHeadConfig):
            raise TypeError(f"config must be an ActionHeadConfig; got {type(config).__name__}")
        self.config = config
        d = config.width
        # context encoder
        self.inp = nn.Linear(LATENT_DIM, d)
        self.side = nn.Parameter(0.02 * torch.randn(TOKENS_PER_CHUNK, d))
        self.context_layers = nn.ModuleList(
            _ContextLayer(d, config.heads) for _ in range(config.context_layers)
        )
        self.context_norm = nn.LayerNorm(d)
        self.register_buffer("slot_times", torch.tensor(config.times), persistent=False)
        # words
        self.words = WordEncoder(config.vocab, d, config.max_words, heads=config.heads)
        # denoiser
        self.action_in = nn.Linear(3, d)
        self.time = TimestepEmbedding(d, scale=1000.0)
        self.dit = nn.ModuleList(_DiTLayer(d, config.heads) for _ in range(config.dit_layers))
        self.out_norm = nn.LayerNorm(d)
        self.out = nn.Linear(d, 3)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)
        # stop head
        self.stop = nn.Sequential(nn.Linear(2 * d, d), nn.GELU(), nn.Linear(d, 1))

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def encode(self, context: Tensor, words: Tensor, memory: Tensor | None = None) -> Encoded:
        """The conditioning of a batch: context (B, S, 2, 16), words (B, L), memory (B, M, width) or None."""
        cfg = self.config
        shape = (cfg.context_slots, TOKENS_PER_CHUNK, LATENT_DIM)
        if not isinstance(context, Tensor) or context.dim() != 4 or tuple(context.shape[1:]) != shape:
            raise ValueError(
                f"context must have shape (B, {', '.join(map(str, shape))}); got {_shape(context)}"
            )
        b = context.shape[0]
        if not isinstance(words, Tensor) or words.dim() != 2 or words.shape[0] != b:
            raise ValueError(f"words must be an integer tensor of shape ({b}, L); got {_shape(words)}")
        if cfg.memory_tokens:
            if not isinstance(memory, Tensor) or tuple(memory.shape) != (b, cfg.memory_tokens, cfg.width):
                raise ValueError(
                    f"memory must have shape ({b}, {cfg.memory_tokens}, {cfg.width}); got {_shape(memory)}"
                )
        elif memory is not None:
            raise ValueError("memory must be None for a head configured with memory_tokens=0")
        d = cfg.width
        pos = sinusoidal_embedding(self.slot_times.to(self.side.dtype), d)  # (S, D)
        x = self.inp(context.to(self.side.dtype)) + pos[None, :, None, :] + self.side[None, None]
        for layer in self.context_layers:
            x = layer(x)
        ctx = self.context_norm(x).reshape(b, cfg.context_slots * TOKENS_PER_CHUNK, d)
        if memory is not None:
            ctx = torch.cat([ctx, memory.to(ctx.dtype)], dim=1)
        word_features, word_mask = self.words(words)
        keys = torch.cat([ctx, word_features], dim=1)
        ones = torch.ones(b, ctx.shape[1], dtype=torch.bool, device=ctx.device)
        key_mask = torch.cat([ones, word_mask], dim=1)
        summary = torch.cat([ctx.mean(dim=1), masked_mean(word_features, word_mask)], dim=-1)
        return Encoded(keys=keys, key_mask=key_mask, summary=summary)

    def velocity(self, actions_t: Tensor, t: Tensor, encoded: Encoded) -> Tensor:
        """The velocity (B, H, 3) of normalised actions ``actions_t`` (B, H, 3) at flow times ``t`` (B,)."""
        cfg = self.config
        b = encoded.keys.shape[0]
        if not isinstance(actions_t, Tensor) or tuple(actions_t.shape) != (b, cfg.horizon, 3):
            raise ValueError(f"actions_t must have shape ({b}, {cfg.horizon}, 3); got {_shape(actions_t)}")
        if not isinstance(t, Tensor) or tuple(t.shape) != (b,):
            raise ValueError(f"t must be a tensor of shape ({b},); got {_shape(t)}")
        dtype = encoded.keys.dtype
        steps = torch.arange(cfg.horizon, device=actions_t.device).to(dtype)
        x = self.action_in(actions_t.to(dtype)) + sinusoidal_embedding(steps, cfg.width)[None]
        c = self.time(t.to(dtype))
        for layer in self.dit:
            x = layer(x, c, encoded.keys, encoded.key_mask)
        return self.out(self.out_norm(x))

    def forward(
        self,
        actions_t: Tensor,
        t: Tensor,
        context: Tensor,
        words: Tensor,
        *,
        memory: Tensor | None = None,
        with_stop: bool = False,
    ) -> Tensor | tuple[Tensor, Tensor]:
        encoded = self.encode(context, words, memory)
        velocity = self.velocity(actions_t, t, encoded)
        return (velocity, self.stop_from(encoded)) if with_stop else velocity

    def stop_logit(self, context: Tensor, words: Tensor, *, memory: Tensor | None = None) -> Tensor:
        """The stop logit (B,) of a batch (module doc)."""
        return self.stop_from(self.encode(context, words, memory))

    def stop_from(self, encoded: Encoded) -> Tensor:
        """The stop logit (B,) from an already computed conditioning."""
        return self.stop(encoded.summary).squeeze(-1)


def _check_model(model: object) -> ActionHead:
    if not isinstance(model, ActionHead):
        raise TypeError(f"model must be an ActionHead; got {type(model).__name__}")
    return model


def _head_of(model: object) -> ActionHead:
    """The action head inside ``model``: an :class:`ActionHead` (DDP-wrapped or not), or a module whose
    ``head`` is one (a baseline policy that computes its own memory)."""
    core = unwrap(model) if isinstance(model, nn.Module) else model
    head = getattr(core, "head", None)
    if not isinstance(core, ActionHead) and isinstance(head, ActionHead):
        return head
    return _check_model(core)


def head_loss(
    model: nn.Module,
    batch_actions: Tensor,
    stop: Tensor,
    context: Tensor,
    words: Tensor,
    *,
    generator: torch.Generator,
    memory: Tensor | None = None,
    stop_weight: float = 1.0,
    pos_weight: float = STOP_POS_WEIGHT,
    **inputs: Tensor,
) -> Tensor:
    """``E ‖v_θ(a_t, t) − (ε − a₀)‖² + stop_weight · BCE(stop logit, stop; pos_weight)``.

    ``batch_actions`` (B, H, 3) in world units (normalised here by :data:`ACTION_SCALE`: ``a₀``); one
    ``t ~ U(0, 1)`` and one ``ε ~ N(0, I)`` per example from ``generator``; ``stop`` (B,) labels in {0, 1}.
    ``model`` is an :class:`ActionHead` (or its DDP wrapper, or a module with an action ``head`` whose
    forward takes the head's arguments plus ``inputs``); it is called once, ``with_stop=True``.
    """
    head = _head_of(model)
    stop_weight = check_float("stop_weight", stop_weight, minimum=0.0)
    pos_weight = check_float("pos_weight", pos_weight, minimum=0.0, strict_min=True)
    cfg = head.config
    if (
        not isinstance(batch_actions, Tensor)
        or batch_actions.dim() != 3
        or batch_actions.shape[1:]
        != (
            cfg.horizon,
            3,
        )
    ):
        raise ValueError(f"batch_actions must have shape (B, {cfg.horizon}, 3); got {_shape(batch_actions)}")
    b = batch_actions.shape[0]
    if not isinstance(stop, Tensor) or tuple(stop.shape) != (b,):
        raise ValueError(f"stop must be a tensor of shape ({b},); got {_shape(stop)}")
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator; got {type(generator).__name__}")
    dtype, device = head.side.dtype, head.side.device  # the conditioning's dtype and device
    x0 = normalise(batch_actions.to(device=device, dtype=dtype))
    t = torch.rand(b, generator=generator, dtype=dtype).to(device)
    eps = torch.randn(x0.shape, generator=generator, dtype=dtype).to(device)
    tt = t[:, None, None]
    x_t = (1 - tt) * x0 + tt * eps  # the linear path
    velocity, logit = model(x_t, t, context, words, memory=memory, with_stop=True, **inputs)
    flow = F.mse_loss(velocity, eps - x0)  # target u = ε − a₀
    bce = F.binary_cross_entropy_with_logits(
        logit, stop.to(device=device, dtype=dtype), pos_weight=logit.new_tensor(pos_weight)
    )
    return flow + stop_weight * bce


def sample_actions(
    model: ActionHead,
    context: Tensor,
    words: Tensor,
    *,
    generator: torch.Generator,
    memory: Tensor | None = None,
    steps: int | None = None,
) -> tuple[Tensor, Tensor]:
    """``(actions (B, H, 3) in world units, stop probability (B,))`` for a batch of decisions.

    Euler from seeded noise at ``t = 1`` to ``t = 0`` on ``uniform_grid(steps or config.sample_steps)``
    under ``no_grad``, the conditioning encoded once; then denormalised and clipped to the world's limits
    (:func:`clip_to_world`). The stop probability is ``sigmoid`` of the (pos-weighted, module doc) logit.
    """
    model = _check_model(model)
    steps = model.config.sample_steps if steps is None else check_int("steps", steps, minimum=1)
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator; got {type(generator).__name__}")
    with torch.no_grad():
        encoded = model.encode(context, words, memory)
        b, dtype, device = encoded.keys.shape[0], encoded.keys.dtype, encoded.keys.device
        noise = torch.randn(b, model.config.horizon, 3, generator=generator, dtype=dtype).to(device)
        x0 = euler_sample(lambda z, t: model.velocity(z, t, encoded), noise, uniform_grid(steps))
        stop = torch.sigmoid(model.stop_from(encoded))
    return clip_to_world(denormalise(x0)), stop


__all__ = [
    "ACTION_SCALE",
    "STOP_POS_WEIGHT",
    "ActionHead",
    "ActionHeadConfig",
    "Encoded",
    "clip_to_world",
    "denormalise",
    "head_loss",
    "normalise",
    "sample_actions",
]
