"""The chapter's denoiser: the shared U-Net wrapped in EDM preconditioning (Karras et al., 2022).

Noising is variance-exploding: ``x = x0 + σ n`` with ``n ~ N(0, I)``. The network ``F_θ`` never sees
``x`` or ``σ`` raw; the denoiser is (EDM Eq. (7), Table 1)::

    D_θ(x; σ) = c_skip(σ) x + c_out(σ) F_θ(c_in(σ) x; c_noise(σ))

    c_skip = σ_d² / (σ² + σ_d²)        c_out = σ σ_d / √(σ² + σ_d²)
    c_in   = 1 / √(σ² + σ_d²)          c_noise = ln(σ) / 4

so the input of ``F_θ`` and its ideal output both have unit variance at every noise level (``σ_d`` is
the standard deviation of the data). Training draws ``ln σ ~ N(P_mean, P_std²)`` and weights the
squared error of ``D`` by ``λ(σ) = (σ² + σ_d²) / (σ σ_d)² = 1 / c_out²``.

**Which residual SSD masks.** Writing ``D - x0 = c_out (F_θ - T)`` with the target
``T = (x0 - c_skip x) / c_out`` (:func:`edm_target`, EDM Eq. (8)) gives, pixel by pixel,
``λ(σ) (D - x0)² = (F_θ - T)²``. Masking the λ-weighted ``x0`` residual and masking the preconditioned
residual ``F_θ - T`` is therefore the same loss, entry for entry. The ε and v residuals are the same
difference rescaled per noise level, ``ε̂ - ε = (x0 - D)/σ`` and ``v̂ - v = (x0 - D)/c_out = -(F_θ - T)``,
so for a pixel mask the parametrisation only changes how noise levels are weighted (:func:`eps_prediction`,
:func:`v_prediction`, :func:`v_target`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neurips26.nn.conv import UNet2D, UNetConfig
from neurips26.ssd.masks import draw_device
from neurips26.validation import check_float, check_int, check_seed

# c_noise = ln(σ)/4 lies in about [-1.6, 1.1] for σ ∈ [0.002, 80]. The U-Net's sinusoidal embedding has
# frequencies 1 … 1e-4, so most of its features would be flat over that range; we multiply c_noise by
# this factor first (our choice: on the 8×8 field, 1 and 100 trained to about the same score error).
NOISE_EMBEDDING_SCALE = 100.0

SigmaLike = Tensor | float


# --------------------------------------------------------------------------------------------
# configuration


@dataclass(frozen=True)
class DenoiserConfig:
    """Sizes of the EDM denoiser (validated: a bad value raises an error naming the field).

    image_size: side of the square images (divisible by 2 for the two resolutions); channels_in: image
    channels (1 for fields and digits, 3 for twin blobs); channels: U-Net widths, finest first; circular:
    periodic padding (stationary fields); sigma_data: data standard deviation σ_d of the preconditioning;
    extra_input_channels: channels appended to the network input and not scaled by c_in (1 for the
    MaskDM-style input-mask baseline, which feeds the mask); dropout: probability in every residual block,
    before its second convolution (a regulariser baseline); small: halve every width and the noise
    embedding (the fast variant for 8×8 fields).
    """

    image_size: int
    channels_in: int
    channels: tuple[int, ...] = (32, 64)
    circular: bool = False
    sigma_data: float = 0.5
    extra_input_channels: int = 0
    dropout: float = 0.0
    small: bool = False

    def __post_init__(self) -> None:
        check_int("channels_in", self.channels_in, minimum=1)
        check_int("extra_input_channels", self.extra_input_channels, minimum=0)
        check_float("sigma_data", self.sigma_data, minimum=0.0, strict_min=True)
        check_float("dropout", self.dropout, minimum=0.0, maximum=0.99)
        for name in ("circular", "small"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool; got {type(getattr(self, name)).__name__}")
        if not isinstance(self.channels, tuple | list):
            raise TypeError(f"channels must be a tuple of ints; got {type(self.channels).__name__}")
        object.__setattr__(self, "channels", tuple(self.channels))
        if not 1 <= len(self.channels) <= 4:
            raise ValueError(f"channels must list 1 to 4 resolutions; got {self.channels}")
        for i, c in enumerate(self.channels):
            check_int(f"channels[{i}]", c, minimum=1)
            if c % (16 if self.small else 8):
                need = "16 (small=True halves it; GroupNorm needs multiples of 8)" if self.small else "8"
                raise ValueError(f"channels[{i}] = {c} must be divisible by {need}")
        size = check_int("image_size", self.image_size, minimum=2)
        factor = 2 ** (len(self.channels) - 1)
        if size % factor:
            raise ValueError(
                f"image_size must be divisible by {factor} (= 2^(len(channels) - 1)); got {size}"
            )

    @property
    def unet_config(self) -> UNetConfig:
        """The :class:`~neurips26.nn.UNetConfig` of ``F_θ`` (widths halved when ``small``)."""
        widths = tuple(c // 2 for c in self.channels) if self.small else self.channels
        return UNetConfig(
            in_channels=self.channels_in + self.extra_input_channels,
            out_channels=self.channels_in,
            channels=widths,
            time_dim=32 if self.small else 64,
            groups=8,
            circular=self.circular,
            time_scale=NOISE_EMBEDDING_SCALE,
        )


# --------------------------------------------------------------------------------------------
# the EDM formulas


class Preconditioning(NamedTuple):
    """The four coefficients of EDM's preconditioning at noise level σ (same shape as σ)."""

    c_skip: SigmaLike
    c_out: SigmaLike
    c_in: SigmaLike
    c_noise: SigmaLike


def _check_sigma(sigma: object) -> SigmaLike:
    """σ as a positive finite float, or a tensor whose entries are all positive and finite."""
    if isinstance(sigma, Tensor):
        if not sigma.is_floating_point():
            raise TypeError(f"sigma must be a floating-point tensor; got dtype {sigma.dtype}")
        if not bool(torch.isfinite(sigma).all()) or bool((sigma <= 0).any()):
            raise ValueError(f"sigma must be > 0 and finite; got values in [{sigma.min()}, {sigma.max()}]")
        return sigma
    return check_float("sigma", sigma, minimum=0.0, strict_min=True)


def preconditioning(sigma: SigmaLike, sigma_data: float = 0.5) -> Preconditioning:
    """``(c_skip, c_out, c_in, c_noise)`` of EDM Table 1 for σ (a float or a tensor of any shape)."""
    sigma = _check_sigma(sigma)
    sd = check_float("sigma_data", sigma_data, minimum=0.0, strict_min=True)
    total = sigma**2 + sd**2  # σ² + σ_d²: the variance of x = x0 + σ n
    log = torch.log if isinstance(sigma, Tensor) else math.log
    return Preconditioning(
        c_skip=sd**2 / total,
        c_out=sigma * sd / total**0.5,
        c_in=1.0 / total**0.5,
        c_noise=log(sigma) / 4.0,
    )


def loss_weight(sigma: SigmaLike, sigma_data: float = 0.5) -> SigmaLike:
    """EDM's loss weight ``λ(σ) = (σ² + σ_d²) / (σ σ_d)²`` (= 1 / c_out²) on ``‖D(x; σ) - x0‖²``."""
    sigma = _check_sigma(sigma)
    sd = check_float("sigma_data", sigma_data, minimum=0.0, strict_min=True)
    return (sigma**2 + sd**2) / (sigma * sd) ** 2


def sample_sigma(
    batch: int,
    generator: torch.Generator,
    p_mean: float = -1.2,
    p_std: float = 1.2,
    *,
    device: torch.device | str | None = None,
) -> Tensor:
    """Training noise levels, shape (batch,): ``ln σ ~ N(P_mean, P_std²)`` (EDM's log-normal).

    Drawn on ``device`` when ``generator`` lives there, else on the generator's device and moved
    (:func:`~neurips26.ssd.masks.draw_device`); ``device=None`` keeps the generator's device.
    """
    batch = check_int("batch", batch, minimum=1)
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator; got {type(generator).__name__}")
    p_mean = check_float("p_mean", p_mean)
    p_std = check_float("p_std", p_std, minimum=0.0)
    where = draw_device(generator, device)
    normal = torch.randn(batch, generator=generator, device=where)
    return torch.exp(p_mean + p_std * normal).to(where if device is None else device)


def _check_images(name: str, x: object, channels: int | None = None) -> Tensor:
    """A floating-point tensor of shape (B, C, H, W) (with C = ``channels`` when given)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(x).__name__}")
    if x.ndim != 4 or not x.is_floating_point():
        raise ValueError(
            f"{name} must be a floating-point tensor of shape (batch, channels, height, width); "
            f"got shape {tuple(x.shape)} and dtype {x.dtype}"
        )
    if channels is not None and x.shape[1] != channels:
        raise ValueError(f"{name} must have {channels} channels; got shape {tuple(x.shape)}")
    return x


def _per_sample(sigma: object, x: Tensor) -> Tensor:
    """σ (float, scalar or (B,) tensor) checked and shaped (B, 1, 1, 1) to broadcast over x."""
    sigma = _check_sigma(sigma)
    if not isinstance(sigma, Tensor):
        return torch.full((x.shape[0], 1, 1, 1), sigma, dtype=x.dtype, device=x.device)
    if sigma.ndim == 0:
        sigma = sigma.expand(x.shape[0])
    if sigma.shape != (x.shape[0],):
        raise ValueError(
            f"sigma must be a float, a scalar or have shape ({x.shape[0]},); got {tuple(sigma.shape)}"
        )
    return sigma.to(dtype=x.dtype, device=x.device).view(-1, 1, 1, 1)


def edm_target(x0: Tensor, noise: Tensor, sigma: SigmaLike, sigma_data: float = 0.5) -> Tensor:
    """The target ``T = (x0 - c_skip x) / c_out`` of ``F_θ`` for ``x = x0 + σ n`` (EDM Eq. (8)).

    ``x0`` and ``noise`` (B, C, H, W), σ a float or (B,). The masked residual of the default SSD loss is
    ``F_θ(c_in x; c_noise) - T``; element by element ``(F_θ - T)² = λ(σ) (D_θ(x; σ) - x0)²``.
    """
    x0 = _check_images("x0", x0)
    noise = _check_images("noise", noise)
    if noise.shape != x0.shape:
        raise ValueError(f"noise must have the shape of x0 {tuple(x0.shape)}; got {tuple(noise.shape)}")
    s = _per_sample(sigma, x0)
    c = preconditioning(s, sigma_data)
    return (x0 - c.c_skip * (x0 + s * noise)) / c.c_out


def v_target(x0: Tensor, noise: Tensor, sigma: SigmaLike, sigma_data: float = 0.5) -> Tensor:
    """The velocity ``v = (σ_d² n - σ x0) / (σ_d √(σ² + σ_d²))`` of ``x = x0 + σ n``.

    This is the v of Salimans & Ho (2022), ``v = α n - s x0'``, for the unit-variance rescaling
    ``x0' = x0 / σ_d``, ``α = 1/√(1 + σ'²)``, ``s = σ'/√(1 + σ'²)``, ``σ' = σ / σ_d``; it equals
    ``-edm_target(x0, noise, σ)``: EDM's ``F_θ`` is a (negated) v-prediction network.
    """
    x0 = _check_images("x0", x0)
    noise = _check_images("noise", noise)
    if noise.shape != x0.shape:
        raise ValueError(f"noise must have the shape of x0 {tuple(x0.shape)}; got {tuple(noise.shape)}")
    s = _per_sample(sigma, x0)
    sd = check_float("sigma_data", sigma_data, minimum=0.0, strict_min=True)
    return (sd**2 * noise - s * x0) / (sd * (s**2 + sd**2) ** 0.5)


def eps_prediction(denoised: Tensor, x: Tensor, sigma: SigmaLike) -> Tensor:
    """The noise estimate ``ε̂ = (x - D) / σ`` implied by a denoised image ``D`` of ``x = x0 + σ n``."""
    denoised, x = _check_pair(denoised, x)
    return (x - denoised) / _per_sample(sigma, x)


def v_prediction(denoised: Tensor, x: Tensor, sigma: SigmaLike, sigma_data: float = 0.5) -> Tensor:
    """The velocity estimate ``v̂`` implied by ``D``: :func:`v_target` with ``x0 → D``, ``n → ε̂``."""
    denoised, x = _check_pair(denoised, x)
    s = _per_sample(sigma, x)
    sd = check_float("sigma_data", sigma_data, minimum=0.0, strict_min=True)
    eps = (x - denoised) / s
    return (sd**2 * eps - s * denoised) / (sd * (s**2 + sd**2) ** 0.5)


def _check_pair(denoised: object, x: object) -> tuple[Tensor, Tensor]:
    denoised = _check_images("denoised", denoised)
    x = _check_images("x", x)
    if denoised.shape != x.shape:
        raise ValueError(f"denoised must have the shape of x {tuple(x.shape)}; got {tuple(denoised.shape)}")
    return denoised, x


# --------------------------------------------------------------------------------------------
# the network


def _dropout_before(p: float) -> Callable[[nn.Module, tuple[Tensor, ...]], tuple[Tensor, ...]]:
    """A forward pre-hook that applies dropout to a module's input while the module is training."""

    def hook(module: nn.Module, inputs: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        return (F.dropout(inputs[0], p=p, training=module.training), *inputs[1:])

    return hook


class EDMDenoiser(nn.Module):
    """``D_θ(x; σ) = c_skip x + c_out F_θ(c_in x; c_noise)`` with the shared U-Net as ``F_θ``.

    ``x`` (B, C, H, W), σ a float or (B,) tensor (> 0), ``extra`` (B, extra_input_channels, H, W) or None.
    Weights are drawn from a private generator seeded by ``seed`` (the global RNG is left untouched).
    Dropout (``config.dropout > 0``) acts on the input of each residual block's second convolution, as
    in EDM's networks; it is added by a hook, so the state dict is the plain U-Net's.
    """

    def __init__(self, config: DenoiserConfig, *, seed: int) -> None:
        super().__init__()
        if not isinstance(config, DenoiserConfig):
            raise TypeError(f"config must be a DenoiserConfig; got {type(config).__name__}")
        seed = check_seed("seed", seed)
        self.config = config
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.net = UNet2D(config.unet_config)
        if config.dropout > 0:
            blocks = [*self.net.down_blocks, self.net.mid_block, *self.net.up_blocks]
            for block in blocks:
                block.conv2.register_forward_pre_hook(_dropout_before(config.dropout))

    def _inputs(self, x: object, sigma: object, extra: object) -> tuple[Tensor, Tensor, Preconditioning]:
        cfg = self.config
        x = _check_images("x", x, cfg.channels_in)
        if x.shape[2:] != (cfg.image_size, cfg.image_size):
            raise ValueError(
                f"x must be {cfg.image_size}×{cfg.image_size} images; got shape {tuple(x.shape)}"
            )
        s = _per_sample(sigma, x)
        c = preconditioning(s, cfg.sigma_data)
        net_in = c.c_in * x
        if cfg.extra_input_channels:
            if extra is None:
                raise ValueError(
                    f"extra is required: this denoiser takes {cfg.extra_input_channels} extra channels"
                )
            extra = _check_images("extra", extra, cfg.extra_input_channels)
            if extra.shape[0] != x.shape[0] or extra.shape[2:] != x.shape[2:]:
                raise ValueError(
                    f"extra must have batch and grid of x {tuple(x.shape)}; got {tuple(extra.shape)}"
                )
            net_in = torch.cat([net_in, extra.to(x.dtype)], dim=1)
        elif extra is not None:
            raise ValueError("extra must be None: this denoiser has extra_input_channels = 0")
        return x, net_in, c

    def raw(self, x: Tensor, sigma: SigmaLike, extra: Tensor | None = None) -> Tensor:
        """``F_θ(c_in x; c_noise)``, shape (B, C, H, W): the output whose residual the loss masks."""
        _, net_in, c = self._inputs(x, sigma, extra)
        return self.net(net_in, c.c_noise.view(-1))

    def forward(
        self, x: Tensor, sigma: SigmaLike, extra: Tensor | None = None, *, raw: bool = False
    ) -> Tensor:
        """The denoised estimate ``D_θ(x; σ)`` of ``x0`` (EDM Eq. (7)), shape of ``x``; ``raw=True`` returns
        ``F_θ`` instead (:meth:`raw`), so a training loss that masks ``F_θ``'s residual still calls the
        module (data-parallel training averages gradients in the forward of its wrapper)."""
        x, net_in, c = self._inputs(x, sigma, extra)
        out = self.net(net_in, c.c_noise.view(-1))
        return out if raw else c.c_skip * x + c.c_out * out

    def num_parameters(self) -> int:
        """Number of trainable parameters."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


def score(model: Callable[[Tensor, Tensor], Tensor], x: Tensor, sigma: SigmaLike) -> Tensor:
    """The score estimate ``s(x; σ) = (D(x; σ) - x) / σ²`` of ``p_σ`` (Tweedie) for any denoiser ``D``.

    ``model(x, sigma)`` is called with σ as a (B,) tensor; ``x`` (B, C, H, W).
    """
    if not callable(model):
        raise TypeError(f"model must be callable as model(x, sigma); got {type(model).__name__}")
    x = _check_images("x", x)
    s = _per_sample(sigma, x)
    return (model(x, s.view(-1)) - x) / s**2
