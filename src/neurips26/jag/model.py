"""The dual-branch DiT of JAG: appearance and geometry denoised jointly, block-causal, with a window cache.

Chapter 07, §"Model". Each frame ``k`` of a clip has an appearance state (RGB) and a geometry state (log
z-depth), both noised to the frame's own level ``t_k`` (Diffusion Forcing, ``z^t = (1 − t) z + t ε``). The
network predicts both velocities ``ε − z`` from

    appearance input  [RGB_t (3) ; M_rgb (3) ; V (1)]      → v_app (3 channels)
    geometry input    [logD_t (1) ; M_d (1) ; V (1)]       → v_geo (1 channel)

where ``(M_rgb, M_d, V)`` is the 3D memory rendered at the frame's commanded pose (colour, log depth,
validity; zeros with ``memory=False``). A frame of ``H × W`` pixels becomes ``P = (H/p)(W/p)`` tokens per
branch (16 at 16 × 16, patch 4), in row-major patch order.

Tokens: ``x = PatchEmbed_b(input) + pos[patch] + W_c · plücker[patch]``, the position and camera terms
shared by both branches (the Plücker rays carry the frame index, so no frame embedding is needed).

One block, for each branch ``b`` with its own weights and ``c_k`` the embedding of the frame's level
``t_k`` (DiT adaLN-Zero, applied per token with its frame's ``c_k``)::

    (β1, γ1, α1, β2, γ2, α2)_b = W_b · SiLU(c_k) + b_b                           (A1)
    h_b = LN(x_b) ⊙ (1 + γ1) + β1;   q_b, k_b, v_b = QKV_b(h_b)                   (A2)
    o = softmax(q Kᵀ/√d + M) V,   K = [k_app ; k_geo],  V = [v_app ; v_geo]       (A3: one softmax
                                                                                  over both branches)
    x_b ← x_b + α1 ⊙ Out_b(o_b);   x_b ← x_b + α2 ⊙ MLP_b(LN(x_b) ⊙ (1 + γ2) + β2)  (A4)

The mask ``M`` is block-causal over frames (:func:`block_causal_mask`): a token of frame ``k`` sees every
token, of both branches, of frames ``k − W + 1 … k`` (window ``W = 4``), with full attention inside a
frame; the teacher (``causal=False``) sees the whole clip. A last adaLN-modulated LayerNorm and a
zero-initialised linear map per branch turn tokens back into ``p × p`` velocity patches.

**Incremental generation.** With a sliding window applied in every layer, frame ``k``'s keys at layer
``l`` depend only on what frames ``k − W + 1 … k`` held at layer ``l − 1``. Caching each written frame's
keys/values per layer, and keeping the last ``W − 1`` frames, therefore reproduces the windowed full
forward exactly (the Mistral argument). :meth:`JAGModel.step` runs one denoising step of frame ``k``
against the cache *without changing it*; only :meth:`JAGModel.write` (the clean frame at the context
level 0, under ``no_grad``) appends its keys/values and evicts the oldest frame, as Self Forcing needs.
The cache is the shared :class:`neurips26.nn.KVCache`, one ``(B, H, frames · tokens, d)`` pair per block
with both branches' tokens of a frame side by side; its ``gather`` evicts.

[code] The public code couples a shared trunk to parallel geometry blocks by a zero-initialised two-way
token MLP and *regresses* geometry; we denoise it in its own branch with joint attention instead (see the
chapter's "What we changed and why"). Defaults (width 48, 3 blocks, 4 heads, MLP ratio 4, frequency
features 64): 280,048 parameters, 560,096 bytes in float16; the blocks hold 253,152 of them, the patch,
time and camera embeddings and the two output layers the other 26,896 (the RGB-only model: 145,632). The
``pixel_skip`` path adds 224 (the chapter's checkpoints: 280,272; RGB-only 145,803).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neurips26.nn import KVCache, PatchEmbedding, TimestepEmbedding
from neurips26.validation import check_float, check_int, check_seed

#: The two branches, in token order inside a frame.
BRANCHES = ("appearance", "geometry")
#: Channels of each branch's input: the noisy state, then the rendered memory, then its validity mask.
STATE_CHANNELS = {"appearance": 3, "geometry": 1}
MEMORY_CHANNELS = {"appearance": 3, "geometry": 1}
#: Channels of each branch's output: the velocity of the state.
OUT_CHANNELS = {"appearance": 3, "geometry": 1}
#: Plücker coordinates per patch: direction d and moment o × d.
PLUCKER = 6


def _size_pair(value: object) -> tuple[int, int]:
    if isinstance(value, tuple):
        if len(value) != 2:
            raise ValueError(f"image_size must be an int or a pair (H, W); got {value}")
        return (check_int("image_size", value[0], minimum=1), check_int("image_size", value[1], minimum=1))
    size = check_int("image_size", value, minimum=1)
    return (size, size)


def _check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool; got {type(value).__name__}")
    return value


@dataclass(frozen=True)
class JAGConfig:
    """Sizes and switches of :class:`JAGModel`.

    ``image_size`` (int or ``(H, W)``), ``patch_size`` (must divide both), ``width``, ``depth`` (blocks),
    ``heads`` (must divide width), ``mlp_ratio``; ``window`` W (frames a token sees, its own included;
    ``None`` = the whole history, the full-history baseline); ``geometry=False`` keeps the appearance
    branch only (the RGB-only Self-Forcing baseline); ``memory=False`` zeroes the memory channels;
    ``causal=False`` is the bidirectional teacher. ``time_scale`` multiplies ``t ∈ [0, 1]`` before the
    sinusoidal features (``frequency_dim`` of them). ``pixel_skip`` [our choice, off by default] adds a
    per-pixel path from each branch's input channels to its output, ``v += (1 + g(c_k)) ⊙ S_b(input)``
    with ``S_b`` a zero-initialised 1 × 1 convolution and ``g`` a zero-initialised linear map of the
    frame's level embedding: at width 48 a token (48 numbers) cannot carry a 4 × 4 RGB patch's detail
    (48 numbers) through the blocks, and this path lets the rendered memory's colours reach the output.
    """

    image_size: int | tuple[int, int] = 16
    patch_size: int = 4
    width: int = 48
    depth: int = 3
    heads: int = 4
    mlp_ratio: float = 4.0
    window: int | None = 4
    geometry: bool = True
    memory: bool = True
    causal: bool = True
    time_scale: float = 1000.0
    frequency_dim: int = 64
    pixel_skip: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "image_size", _size_pair(self.image_size))
        check_int("patch_size", self.patch_size, minimum=1)
        if any(s % self.patch_size for s in self.image_size):
            raise ValueError(f"patch_size {self.patch_size} must divide image_size {self.image_size}")
        check_int("width", self.width, minimum=1)
        check_int("depth", self.depth, minimum=1)
        check_int("heads", self.heads, minimum=1)
        if self.width % self.heads:
            raise ValueError(f"heads ({self.heads}) must divide width ({self.width})")
        check_float("mlp_ratio", self.mlp_ratio, minimum=0.0, strict_min=True)
        if self.window is not None:
            check_int("window", self.window, minimum=1)
        _check_bool("geometry", self.geometry)
        _check_bool("memory", self.memory)
        _check_bool("causal", self.causal)
        _check_bool("pixel_skip", self.pixel_skip)
        check_float("time_scale", self.time_scale, minimum=0.0, strict_min=True)
        check_int("frequency_dim", self.frequency_dim, minimum=2)
        if self.frequency_dim % 2:
            raise ValueError(f"frequency_dim must be even; got {self.frequency_dim}")

    @property
    def branches(self) -> tuple[str, ...]:
        """``("appearance", "geometry")``, or ``("appearance",)`` with ``geometry=False``."""
        return BRANCHES if self.geometry else BRANCHES[:1]

    @property
    def num_patches(self) -> int:
        """P = (H/p)(W/p), the tokens per frame per branch."""
        h, w = self.image_size
        return (h // self.patch_size) * (w // self.patch_size)

    @property
    def tokens_per_frame(self) -> int:
        """Tokens of one frame over all branches: P · (number of branches)."""
        return self.num_patches * len(self.branches)

    @property
    def mlp_hidden(self) -> int:
        """Hidden width of each branch's MLP: round(mlp_ratio · width)."""
        return max(1, round(self.mlp_ratio * self.width))

    def in_channels(self, branch: str) -> int:
        """Input channels of a branch: state + memory + validity (7 appearance, 3 geometry)."""
        return STATE_CHANNELS[branch] + MEMORY_CHANNELS[branch] + 1


def block_causal_mask(
    frames: int,
    tokens_per_frame: int,
    window: int | None,
    *,
    causal: bool = True,
    device: torch.device | str | None = None,
) -> Tensor:
    """Boolean ``(N, N)`` mask, ``N = frames · tokens_per_frame``, True where a query may attend.

    Token ``i`` belongs to frame ``i // tokens_per_frame``. Causal: frame ``k`` sees frames
    ``j`` with ``k − W < j ≤ k`` (all frames ``j ≤ k`` when ``window`` is None); not causal: every frame.
    """
    frames = check_int("frames", frames, minimum=1)
    tokens_per_frame = check_int("tokens_per_frame", tokens_per_frame, minimum=1)
    if window is not None:
        window = check_int("window", window, minimum=1)
    frame = torch.arange(frames, device=device).repeat_interleave(tokens_per_frame)
    if not causal:
        return torch.ones(frame.numel(), frame.numel(), dtype=torch.bool, device=device)
    lag = frame[:, None] - frame[None, :]  # k − j
    allowed = lag >= 0
    if window is not None:
        allowed &= lag < window
    return allowed


def _modulate(x: Tensor, shift: Tensor, scale: Tensor) -> Tensor:
    """``x ⊙ (1 + γ) + β`` with per-frame ``(B, T, D)`` shift/scale broadcast over the patches of x."""
    return x * (1 + scale.unsqueeze(2)) + shift.unsqueeze(2)


class _BranchBlock(nn.Module):
    """One branch's half of a joint block: its LayerNorms, adaLN modulation, QKV, output and MLP."""

    def __init__(self, config: JAGConfig) -> None:
        super().__init__()
        d = config.width
        self.norm1 = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.norm2 = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(d, config.mlp_hidden), nn.GELU(), nn.Linear(config.mlp_hidden, d))
        self.modulation = nn.Linear(d, 6 * d)  # (A1); zero-initialised by JAGModel

    def pre_attention(self, x: Tensor, c: Tensor) -> tuple[Tensor, Tensor, Tensor, tuple[Tensor, ...]]:
        """(A1)-(A2): q, k, v of shape (B, T, P, D) and the modulation vectors (B, T, D)."""
        mod = self.modulation(F.silu(c)).chunk(6, dim=-1)
        q, k, v = self.qkv(_modulate(self.norm1(x), mod[0], mod[1])).chunk(3, dim=-1)
        return q, k, v, mod

    def post_attention(self, x: Tensor, attended: Tensor, mod: tuple[Tensor, ...]) -> Tensor:
        """(A4): the gated attention and MLP residual updates."""
        _, _, gate1, shift2, scale2, gate2 = mod
        x = x + gate1.unsqueeze(2) * self.out(attended)
        return x + gate2.unsqueeze(2) * self.mlp(_modulate(self.norm2(x), shift2, scale2))


class JointBlock(nn.Module):
    """A DiT block over both branches with one joint attention, Eqs. (A1)-(A4) of the module docstring."""

    def __init__(self, config: JAGConfig) -> None:
        super().__init__()
        self.heads = config.heads
        self.head_dim = config.width // config.heads
        self.branches = nn.ModuleDict({b: _BranchBlock(config) for b in config.branches})

    def _heads(self, parts: list[Tensor]) -> Tensor:
        """Per-branch (B, T, P, D) → joint (B, H, T · nb · P, d), frame-major: [frame 0: app, geo; …]."""
        joint = torch.stack(parts, dim=2)  # (B, T, nb, P, D)
        b = joint.shape[0]
        return joint.reshape(b, -1, self.heads, self.head_dim).transpose(1, 2)

    def forward(
        self,
        xs: dict[str, Tensor],
        c: Tensor,
        *,
        mask: Tensor | None = None,
        past: tuple[Tensor, Tensor] | None = None,
    ) -> tuple[dict[str, Tensor], tuple[Tensor, Tensor]]:
        """Update each branch's tokens ``xs[b]`` (B, T, P, D) under frame embeddings ``c`` (B, T, D).

        ``mask``: boolean (N, N) over the joint tokens; ``past``: cached keys/values (B, H, N_past, d)
        that every query sees, placed before the new ones. Returns the new tokens and the new tokens'
        keys/values (B, H, N, d), which a cache write stores.
        """
        names = list(xs)
        pre = {n: self.branches[n].pre_attention(xs[n], c) for n in names}
        q, k, v = (self._heads([pre[n][i] for n in names]) for i in range(3))
        keys, values = k, v
        if past is not None:
            keys, values = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        o = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)  # (A3), one softmax
        batch, frames, patches = xs[names[0]].shape[:3]
        o = o.transpose(1, 2).reshape(batch, frames, len(names), patches, -1)  # back to per-branch
        out = {n: self.branches[n].post_attention(xs[n], o[:, :, i], pre[n][3]) for i, n in enumerate(names)}
        return out, (k, v)


class _FinalLayer(nn.Module):
    """adaLN-modulated LayerNorm and a zero-initialised linear map to ``p × p × C_out`` per token."""

    def __init__(self, config: JAGConfig, out_channels: int) -> None:
        super().__init__()
        d = config.width
        self.norm = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.modulation = nn.Linear(d, 2 * d)
        self.linear = nn.Linear(d, config.patch_size**2 * out_channels)

    def forward(self, x: Tensor, c: Tensor) -> Tensor:
        shift, scale = self.modulation(F.silu(c)).chunk(2, dim=-1)
        return self.linear(_modulate(self.norm(x), shift, scale))


def _check_float_tensor(name: str, value: object, shape: tuple[int | None, ...]) -> Tensor:
    """A floating tensor whose shape matches ``shape`` (None = any size)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(value).__name__}")
    if not value.is_floating_point():
        raise TypeError(f"{name} must be a floating tensor; got dtype {value.dtype}")
    if value.dim() != len(shape) or any(
        s is not None and s != v for s, v in zip(shape, value.shape, strict=False)
    ):
        want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{name} must have shape {want}; got {tuple(value.shape)}")
    return value


class JAGModel(nn.Module):
    """The dual-branch DiT (module docstring): whole clips with :meth:`forward`, frame by frame with
    :meth:`step` / :meth:`write` and a :class:`~neurips26.nn.KVCache` from :meth:`make_cache`.

    Initialised from ``seed`` without touching torch's global RNG: linear and patch weights Xavier-uniform,
    biases zero, position embedding N(0, 0.02²), time MLP N(0, 0.02²), and every adaLN modulation and
    output layer zero (adaLN-Zero: each block starts as the identity and the velocities at 0).
    """

    def __init__(self, config: JAGConfig | None = None, *, seed: int = 0) -> None:
        super().__init__()
        config = JAGConfig() if config is None else config
        if not isinstance(config, JAGConfig):
            raise TypeError(f"config must be a JAGConfig; got {type(config).__name__}")
        self.config = config
        d, p = config.width, config.patch_size
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(check_seed("seed", seed))
            self.embed = nn.ModuleDict(
                {b: PatchEmbedding(config.in_channels(b), d, p) for b in config.branches}
            )
            self.position = nn.Parameter(torch.zeros(config.num_patches, d))
            self.camera = nn.Linear(PLUCKER, d)  # Plücker (6) → width, added to both branches
            self.time = TimestepEmbedding(d, frequency_dim=config.frequency_dim, scale=config.time_scale)
            self.blocks = nn.ModuleList(JointBlock(config) for _ in range(config.depth))
            self.final = nn.ModuleDict({b: _FinalLayer(config, OUT_CHANNELS[b]) for b in config.branches})
            if config.pixel_skip:
                self.skip = nn.ModuleDict(
                    {b: nn.Conv2d(config.in_channels(b), OUT_CHANNELS[b], 1) for b in config.branches}
                )
                self.skip_gain = nn.ModuleDict({b: nn.Linear(d, OUT_CHANNELS[b]) for b in config.branches})
            self._initialise()

    def _initialise(self) -> None:
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                nn.init.zeros_(module.bias)
        for embed in self.embed.values():  # the patch conv as the linear map it is (DiT)
            nn.init.xavier_uniform_(embed.conv.weight.view(embed.conv.weight.shape[0], -1))
            nn.init.zeros_(embed.conv.bias)
        nn.init.normal_(self.position, std=0.02)
        for layer in (self.time.mlp[0], self.time.mlp[2]):
            nn.init.normal_(layer.weight, std=0.02)
        zero = [blk.modulation for block in self.blocks for blk in block.branches.values()]
        zero += [f.modulation for f in self.final.values()] + [f.linear for f in self.final.values()]
        if self.config.pixel_skip:
            zero += [*self.skip.values(), *self.skip_gain.values()]
        for layer in zero:
            nn.init.zeros_(layer.weight)
            nn.init.zeros_(layer.bias)

    # ------------------------------------------------------------------------------------ sizes

    def parameter_count(self) -> int:
        """The number of trainable parameters (280,048 with the defaults, 280,272 with ``pixel_skip``)."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)

    def parameter_bytes(self, dtype: torch.dtype = torch.float16) -> int:
        """The size of the parameters stored in ``dtype`` (float16: 560,096 bytes with the defaults)."""
        return self.parameter_count() * torch.empty((), dtype=dtype).element_size()

    # ----------------------------------------------------------------------------------- inputs

    def _branch_inputs(self, app: object, geo: object, lead: tuple[int | None, ...]) -> dict[str, Tensor]:
        """Check ``app``/``geo`` (``lead`` + (C, H, W)) and return each branch's full-channel input.

        With ``memory=False`` either the state channels alone or all channels may be passed; the memory
        and validity channels are zeros in both cases.
        """
        cfg = self.config
        h, w = cfg.image_size
        if not cfg.geometry and geo is not None:
            raise ValueError("geo must be None: this model has no geometry branch (geometry=False)")
        if cfg.geometry and geo is None:
            raise ValueError("geo must be a tensor: this model has a geometry branch (geometry=True)")
        given = {"appearance": ("app", app), "geometry": ("geo", geo)}
        inputs: dict[str, Tensor] = {}
        for branch in cfg.branches:
            name, x = given[branch]
            x = _check_float_tensor(name, x, (*lead, None, h, w))
            full, state = cfg.in_channels(branch), STATE_CHANNELS[branch]
            allowed = (full,) if cfg.memory else (state, full)
            if x.shape[len(lead)] not in allowed:
                raise ValueError(
                    f"{name} must have {' or '.join(map(str, allowed))} channels (state, memory, validity); "
                    f"got shape {tuple(x.shape)}"
                )
            if not cfg.memory:  # no memory: the memory and validity channels are zeros
                zeros = x.new_zeros(*x.shape[: len(lead)], full - state, h, w)
                x = torch.cat([x.narrow(len(lead), 0, state), zeros], dim=len(lead))
            inputs[branch] = x
        batch = [x.shape[0] for x in inputs.values()]
        if len(lead) == 2:
            frames = [x.shape[1] for x in inputs.values()]
            pairs = list(zip(batch, frames, strict=True))
            if len(set(pairs)) > 1:
                raise ValueError(f"app and geo must share (B, T); got {pairs}")
        elif len(set(batch)) > 1:
            raise ValueError(f"app and geo must share the batch size; got {batch}")
        return inputs

    def _embed(
        self, inputs: dict[str, Tensor], t: Tensor, plucker: Tensor
    ) -> tuple[dict[str, Tensor], Tensor]:
        """Tokens (B, T, P, D) per branch and frame embeddings c (B, T, D) from (B, T, C, H, W) inputs."""
        first = next(iter(inputs.values()))
        b, frames = first.shape[:2]
        p = self.config.num_patches
        camera = self.camera(plucker.to(first.dtype)) + self.position  # (B, T, P, D), shared by branches
        xs = {n: self.embed[n](x.flatten(0, 1)).view(b, frames, p, -1) + camera for n, x in inputs.items()}
        c = self.time(t.to(first.dtype).flatten()).view(b, frames, -1)
        return xs, c

    def _check_levels(self, t: object, shape: tuple[int, ...]) -> Tensor:
        t = _check_float_tensor("t", t, shape)
        if bool(((t < 0) | (t > 1) | ~torch.isfinite(t)).any()):
            raise ValueError("t must lie in [0, 1] (one noise level per frame)")
        return t

    def _check_plucker(self, plucker: object, lead: tuple[int, ...]) -> Tensor:
        return _check_float_tensor("plucker", plucker, (*lead, self.config.num_patches, PLUCKER))

    def _unpatchify(self, tokens: Tensor, channels: int) -> Tensor:
        """(B, T, P, p·p·C) → (B, T, C, H, W), patches in row-major order."""
        b, frames = tokens.shape[:2]
        (h, w), p = self.config.image_size, self.config.patch_size
        x = tokens.view(b, frames, h // p, w // p, channels, p, p)
        return x.permute(0, 1, 4, 2, 5, 3, 6).reshape(b, frames, channels, h, w)

    def _outputs(
        self, xs: dict[str, Tensor], c: Tensor, inputs: dict[str, Tensor]
    ) -> tuple[Tensor, Tensor | None]:
        v = {n: self._unpatchify(self.final[n](x, c), OUT_CHANNELS[n]) for n, x in xs.items()}
        if self.config.pixel_skip:
            for n, x in inputs.items():
                b, frames = x.shape[:2]
                path = self.skip[n](x.flatten(0, 1)).view(b, frames, OUT_CHANNELS[n], *x.shape[3:])
                gain = 1.0 + self.skip_gain[n](c)  # (B, T, C_out), from the frame's level
                v[n] = v[n] + gain[..., None, None] * path
        return v["appearance"], v.get("geometry")

    # ----------------------------------------------------------------------------- whole clips

    def forward(
        self, app: Tensor, geo: Tensor | None, t: Tensor, plucker: Tensor
    ) -> tuple[Tensor, Tensor | None]:
        """Velocities of a whole clip: ``(v_app (B, T, 3, H, W), v_geo (B, T, 1, H, W) or None)``.

        ``app`` (B, T, 7, H, W), ``geo`` (B, T, 3, H, W) or None (``geometry=False``), ``t`` (B, T) the
        per-frame levels in [0, 1], ``plucker`` (B, T, P, 6) per patch centre in row-major order.
        Block-causal over ``window`` frames, or bidirectional for the teacher (``causal=False``).
        """
        if not isinstance(app, Tensor) or app.dim() != 5:
            raise ValueError(f"app must have shape (B, T, C, H, W); got {getattr(app, 'shape', type(app))}")
        lead = tuple(app.shape[:2])
        inputs = self._branch_inputs(app, geo, lead)
        t = self._check_levels(t, lead)
        plucker = self._check_plucker(plucker, lead)
        xs, c = self._embed(inputs, t, plucker)
        mask = None
        if self.config.causal:
            mask = block_causal_mask(
                lead[1], self.config.tokens_per_frame, self.config.window, device=app.device
            )
        for block in self.blocks:
            xs, _ = block(xs, c, mask=mask)
        return self._outputs(xs, c, inputs)

    # ------------------------------------------------------------------------ frame by frame

    def make_cache(self) -> KVCache:
        """An empty cache: one (B, heads, frames · tokens_per_frame, head_dim) key/value pair per block."""
        return KVCache(self.config.depth)

    def cached_frames(self, cache: KVCache) -> int:
        """How many frames the cache holds (at most ``window − 1``)."""
        return cache.length // self.config.tokens_per_frame

    def _check_cache(self, cache: object, batch: int, device: torch.device) -> KVCache:
        if not self.config.causal:
            raise ValueError(
                "causal must be True for step/write: the teacher (causal=False) is bidirectional"
            )
        if not isinstance(cache, KVCache):
            raise TypeError(f"cache must be a KVCache from make_cache(); got {type(cache).__name__}")
        if cache.num_layers != self.config.depth:
            raise ValueError(
                f"cache must have {self.config.depth} layers (one per block); got {cache.num_layers}"
            )
        if cache.length and cache.batch_size != batch:
            raise ValueError(f"cache holds batch size {cache.batch_size}; the frame has {batch}")
        if cache.length and cache.keys[0].device != device:
            raise ValueError(f"cache is on {cache.keys[0].device}; the frame is on {device}")
        return cache

    def _frame(
        self, app_k: object, geo_k: object, t_k: object, plucker_k: object, cache: object
    ) -> tuple[tuple[Tensor, Tensor | None], list[tuple[Tensor, Tensor]], KVCache]:
        """One frame against the cache: outputs (B, C, H, W) and each block's new keys/values."""
        if not isinstance(app_k, Tensor) or app_k.dim() != 4:
            raise ValueError(
                f"app_k must have shape (B, C, H, W); got {getattr(app_k, 'shape', type(app_k))}"
            )
        batch = app_k.shape[0]
        inputs = self._branch_inputs(app_k, geo_k, (batch,))
        t_k = self._check_levels(t_k, (batch,))
        plucker_k = self._check_plucker(plucker_k, (batch,))
        cache = self._check_cache(cache, batch, app_k.device)
        xs, c = self._embed({n: x.unsqueeze(1) for n, x in inputs.items()}, t_k[:, None], plucker_k[:, None])
        new = []
        for layer, block in enumerate(self.blocks):
            past = None if cache.keys[layer] is None else (cache.keys[layer], cache.values[layer])
            xs, kv = block(xs, c, past=past)  # the cache holds only frames inside the window: no mask
            new.append(kv)
        v_app, v_geo = self._outputs(xs, c, {n: x.unsqueeze(1) for n, x in inputs.items()})
        return (v_app[:, 0], None if v_geo is None else v_geo[:, 0]), new, cache

    def step(
        self, app_k: Tensor, geo_k: Tensor | None, t_k: Tensor, plucker_k: Tensor, cache: KVCache
    ) -> tuple[Tensor, Tensor | None]:
        """One denoising step of frame k given the cached past frames; the cache is not changed.

        ``app_k`` (B, 7, H, W), ``geo_k`` (B, 3, H, W) or None, ``t_k`` (B,), ``plucker_k`` (B, P, 6).
        Returns ``(v_app (B, 3, H, W), v_geo (B, 1, H, W) or None)``; gradients flow through this frame.
        """
        outputs, _, _ = self._frame(app_k, geo_k, t_k, plucker_k, cache)
        return outputs

    @torch.no_grad()
    def write(
        self,
        cache: KVCache,
        app_k: Tensor,
        geo_k: Tensor | None,
        plucker_k: Tensor,
        *,
        level: float = 0.0,
    ) -> None:
        """Append the clean frame k, run at the context ``level`` (0), to the cache; evict beyond the window.

        Runs under ``no_grad`` (the Self-Forcing cache write). Afterwards the cache holds the last
        ``window − 1`` written frames (every frame with ``window=None``).
        """
        level = check_float("level", level, minimum=0.0, maximum=1.0)
        if not isinstance(app_k, Tensor) or app_k.dim() != 4:
            raise ValueError(
                f"app_k must have shape (B, C, H, W); got {getattr(app_k, 'shape', type(app_k))}"
            )
        t_k = torch.full((app_k.shape[0],), level, dtype=app_k.dtype, device=app_k.device)
        _, new, cache = self._frame(app_k, geo_k, t_k, plucker_k, cache)
        for layer, (k, v) in enumerate(new):
            cache.append(layer, k, v)
        if self.config.window is not None:
            keep = (self.config.window - 1) * self.config.tokens_per_frame
            if cache.length > keep:
                cache.gather(torch.arange(cache.length - keep, cache.length, device=app_k.device))
