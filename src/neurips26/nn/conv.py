"""A small time-conditioned U-Net for images (2-D) and fields on a grid (1-D).

The denoiser / velocity network of the diffusion and flow chapters (Ho et al., *DDPM*, 2020, in miniature):
``f(x, t)`` maps a batch ``x`` (B, C, H, W) — or (B, C, L) in 1-D — and times ``t`` (B,) to a tensor of the
same spatial shape with ``out_channels`` channels. With ``channels = (c_0, …, c_{L-1})`` it works at ``L``
resolutions, halving the grid between them::

    e   = MLP(sinusoid(time_scale · t))                          time embedding (B, time_dim)
    h   = conv(x)                                                stem, c_0 channels
    down: h_i = Res_i(h, e);  h = Down(h_i)  (not after the last level)       skip h_i kept
    mid:  h = Res(h, e)
    up:   h = Res'_i([h ; h_i], e);  h = Up(h)  (not after level 0)          i = L-1 … 0
    out = conv(SiLU(GroupNorm(h)))

    Res(h, e) = skip(h) + conv(SiLU(GN(conv(SiLU(GN(h))) + W e)))            time added per channel

Down is a stride-2 3×3 convolution, Up is nearest-neighbour ×2 then a 3×3 convolution. With
``circular=True`` every convolution pads periodically, so the network commutes with circular shifts by
multiples of ``2^(L-1)`` (the total downsampling factor): the right model for periodic fields and tiled
textures. Each spatial size must be divisible by ``2^(L-1)``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from neurips26.nn.embeddings import sinusoidal_embedding
from neurips26.validation import check_float, check_int


@dataclass(frozen=True)
class UNetConfig:
    """Sizes of a U-Net (shared by :class:`UNet2D` and :class:`UNet1D`).

    in_channels / out_channels: channels of input and output; channels: width at each resolution, finest
    first (its length is the number of resolutions, 1 to 4), each divisible by ``groups`` (GroupNorm);
    time_dim: width of the (even) sinusoidal embedding and of the time MLP; circular: periodic padding;
    time_scale: t is multiplied by it before the sinusoid — 1000 suits t ∈ [0, 1] (flows, continuous-time
    diffusion), 1 suits integer DDPM steps.
    """

    in_channels: int = 1
    out_channels: int = 1
    channels: tuple[int, ...] = (16, 32, 32)
    time_dim: int = 64
    groups: int = 8
    circular: bool = False
    time_scale: float = 1000.0

    def __post_init__(self) -> None:
        check_int("in_channels", self.in_channels, minimum=1)
        check_int("out_channels", self.out_channels, minimum=1)
        if not isinstance(self.channels, tuple | list):
            raise TypeError(f"channels must be a tuple of ints; got {type(self.channels).__name__}")
        object.__setattr__(self, "channels", tuple(self.channels))
        if not 1 <= len(self.channels) <= 4:
            raise ValueError(f"channels must list 1 to 4 resolutions; got {self.channels}")
        groups = check_int("groups", self.groups, minimum=1)
        for i, c in enumerate(self.channels):
            check_int(f"channels[{i}]", c, minimum=1)
            if c % groups:
                raise ValueError(f"channels[{i}] = {c} is not divisible by groups = {groups} (GroupNorm)")
        check_int("time_dim", self.time_dim, minimum=2)
        if self.time_dim % 2:
            raise ValueError(f"time_dim must be even (cos and sin halves); got {self.time_dim}")
        if not isinstance(self.circular, bool):
            raise TypeError(f"circular must be a bool; got {type(self.circular).__name__}")
        check_float("time_scale", self.time_scale, minimum=0.0, strict_min=True)

    @property
    def downsampling(self) -> int:
        """Total downsampling factor 2^(L-1); every spatial size must be a multiple of it."""
        return 2 ** (len(self.channels) - 1)


class _ResBlock(nn.Module):
    """Res(h, e) of the module docstring: two GN-SiLU-conv layers, the time embedding added in between."""

    def __init__(self, conv: type[nn.Module], c_in: int, c_out: int, config: UNetConfig) -> None:
        super().__init__()
        pad = "circular" if config.circular else "zeros"
        self.norm1 = nn.GroupNorm(config.groups, c_in)
        self.conv1 = conv(c_in, c_out, 3, padding=1, padding_mode=pad)
        self.time = nn.Linear(config.time_dim, c_out)
        self.norm2 = nn.GroupNorm(config.groups, c_out)
        self.conv2 = conv(c_out, c_out, 3, padding=1, padding_mode=pad)
        self.skip = conv(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, h: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
        y = self.conv1(F.silu(self.norm1(h)))
        y = y + self.time(e).view(e.shape[0], -1, *[1] * (h.ndim - 2))  # + W e on every grid point
        y = self.conv2(F.silu(self.norm2(y)))
        return self.skip(h) + y


class UNet(nn.Module):
    """Time-conditioned U-Net on ``spatial_dims``-dimensional grids: f(x, t), x (B, C, *grid), t (B,).

    Prefer :class:`UNet2D` or :class:`UNet1D`. Initialisation draws from torch's global RNG: seed it first
    (``neurips26.seeding.seed_everything``).
    """

    def __init__(self, config: UNetConfig, spatial_dims: int) -> None:
        super().__init__()
        if not isinstance(config, UNetConfig):
            raise TypeError(f"config must be a UNetConfig; got {type(config).__name__}")
        self.spatial_dims = check_int("spatial_dims", spatial_dims, minimum=1, maximum=2)
        self.config = config
        conv = nn.Conv2d if spatial_dims == 2 else nn.Conv1d
        pad = "circular" if config.circular else "zeros"
        chans, td = config.channels, config.time_dim

        self.time_mlp = nn.Sequential(nn.Linear(td, td), nn.SiLU(), nn.Linear(td, td))
        self.stem = conv(config.in_channels, chans[0], 3, padding=1, padding_mode=pad)
        self.down_blocks = nn.ModuleList(
            _ResBlock(conv, chans[max(i - 1, 0)], c, config) for i, c in enumerate(chans)
        )
        self.downsample = nn.ModuleList(
            conv(c, c, 3, stride=2, padding=1, padding_mode=pad) for c in chans[:-1]
        )
        self.mid_block = _ResBlock(conv, chans[-1], chans[-1], config)
        # Up block i sees [h ; h_i]: h has the channels of level i+1 (the middle block's at the coarsest).
        self.up_blocks = nn.ModuleList(
            _ResBlock(conv, chans[min(i + 1, len(chans) - 1)] + c, c, config) for i, c in enumerate(chans)
        )
        self.upsample_convs = nn.ModuleList(conv(c, c, 3, padding=1, padding_mode=pad) for c in chans[1:])
        self.out_norm = nn.GroupNorm(config.groups, chans[0])
        self.out_conv = conv(chans[0], config.out_channels, 3, padding=1, padding_mode=pad)

    def _check(self, x: torch.Tensor, t: torch.Tensor | float) -> torch.Tensor:
        """Validate x, and return t as a float tensor of shape (B,)."""
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x must be a torch.Tensor; got {type(x).__name__}")
        grid = ("height", "width") if self.spatial_dims == 2 else ("length",)
        want = f"(batch, {self.config.in_channels}, {', '.join(grid)})"
        if x.ndim != 2 + self.spatial_dims or x.shape[1] != self.config.in_channels:
            raise ValueError(f"x must have shape {want}; got {tuple(x.shape)}")
        factor = self.config.downsampling
        if any(s % factor for s in x.shape[2:]):
            raise ValueError(
                f"every spatial size of x must be divisible by the downsampling factor {factor} "
                f"(= 2^(len(channels) - 1)); got {tuple(x.shape[2:])}"
            )
        if isinstance(t, numbers.Real) and not isinstance(t, bool):
            t = torch.full((x.shape[0],), float(t), device=x.device)
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"t must be a torch.Tensor or a real number; got {type(t).__name__}")
        if t.ndim == 0:
            t = t.expand(x.shape[0])
        if t.shape != (x.shape[0],):
            raise ValueError(f"t must have shape ({x.shape[0]},) or be a scalar; got {tuple(t.shape)}")
        return t

    def forward(self, x: torch.Tensor, t: torch.Tensor | float) -> torch.Tensor:
        """x (B, C_in, *grid), t (B,) or scalar → (B, C_out, *grid)."""
        t = self._check(x, t)
        e = self.time_mlp(sinusoidal_embedding(self.config.time_scale * t, self.config.time_dim))
        h = self.stem(x)
        skips = []
        for i, block in enumerate(self.down_blocks):
            h = block(h, e)
            skips.append(h)
            if i < len(self.downsample):
                h = self.downsample[i](h)  # grid / 2
        h = self.mid_block(h, e)
        for i in reversed(range(len(self.up_blocks))):
            h = self.up_blocks[i](torch.cat([h, skips[i]], dim=1), e)
            if i > 0:
                h = self.upsample_convs[i - 1](F.interpolate(h, scale_factor=2.0, mode="nearest"))  # grid × 2
        return self.out_conv(F.silu(self.out_norm(h)))


class UNet2D(UNet):
    """U-Net for images: x (B, C_in, H, W), t (B,) → (B, C_out, H, W)."""

    def __init__(self, config: UNetConfig | None = None) -> None:
        super().__init__(UNetConfig() if config is None else config, spatial_dims=2)


class UNet1D(UNet):
    """U-Net for fields on a 1-D grid: x (B, C_in, L), t (B,) → (B, C_out, L)."""

    def __init__(self, config: UNetConfig | None = None) -> None:
        super().__init__(UNetConfig() if config is None else config, spatial_dims=1)
