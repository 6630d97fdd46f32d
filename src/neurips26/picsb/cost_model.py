"""Declared floating-point operation counts per case, for the accuracy-vs-cost comparison (claim P4).

Wall clock on shared CPUs is noisy and favours whatever the library happens to vectorise well, so chapter
06 also reports a count that depends only on the sizes involved. Conventions [our choice]:

- **Layers** (:func:`conv1d_flops`, :func:`linear_flops`, :func:`groupnorm_flops`): a multiply-add is
  2 FLOPs and a bias adds 1 per output. ``Conv1d``: ``2 · C_out · (C_in/groups) · k · L_out`` (+ bias);
  ``Linear``: ``2 · n_in · n_out`` (+ bias); ``GroupNorm``: 8 per element (mean 1, variance 3,
  normalise 2, affine 2; 6 without the affine). The network walk (:func:`layer_flops`) counts only these
  three module types; the pointwise SiLUs, residual and time-embedding additions, concatenations,
  nearest-neighbour upsampling and the sinusoid are left out (each O(C·L), a few % of the total).
- **FFTs** (:func:`rfft_flops`): a real FFT of ``N`` points costs ``2.5 N log₂ N`` (half the classic
  ``5 N log₂ N`` of a complex radix-2 FFT); an inverse real FFT the same.
- **Pointwise** ops on spectra: a complex multiply 6, a real-times-complex multiply 2, a complex add 2.
- **Backward** = 2 forwards (:meth:`Cost.with_backward`): a training step or a gradient iteration costs
  3 forward passes.

One HF Euler step ``Φ(u) = u + Δt (−D (u²/2)_x − ν k² û)`` (:func:`neurips26.picsb.burgers.step`) on
``X`` points with ``K = X/2 + 1`` rfft modes costs ``X`` (``u²``) ``+ 3 · 2.5 X log₂ X`` (two rffts, one
irfft) ``+ 10 K`` (complex multiply, real-times-complex, complex subtract per mode) ``+ 2X`` (``u + Δt·``):
:func:`step_flops`. ``solve`` is ``T − 1`` steps; ``residual`` is ``T − 1`` steps and ``(T − 1) X``
subtractions. What is here: :class:`Cost`, the layer counts, :func:`layer_flops`, :func:`unet_flops`,
:func:`denoiser_flops`, :func:`step_flops`, :func:`solve_flops`, :func:`residual_flops`,
:func:`energy_flops`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import torch
from torch import nn

from neurips26.nn import UNet1D, UNetConfig
from neurips26.picsb.burgers import BurgersConfig
from neurips26.picsb.denoiser import DenoiserConfig
from neurips26.picsb.energy import EnergyConfig
from neurips26.validation import check_int

#: FLOPs per element of a GroupNorm with its affine map (mean 1, variance 3, normalise 2, affine 2).
GROUPNORM_FLOPS = 8
#: A backward pass counts as this many forward passes.
BACKWARD_FORWARDS = 2
#: Pointwise costs on spectra.
COMPLEX_MUL, REAL_COMPLEX_MUL, COMPLEX_ADD = 6, 2, 2


@dataclass(frozen=True)
class Cost:
    """A cost per case: ``forwards`` (network or solver passes, a backward counting 2) and ``flops``.

    Costs add (``a + b``) and scale by a count (``k * cost``).
    """

    forwards: float = 0.0
    flops: float = 0.0

    def __post_init__(self) -> None:
        for name in ("forwards", "flops"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0:
                raise ValueError(f"{name} must be a non-negative number; got {value!r}")

    def __add__(self, other: Cost) -> Cost:
        if not isinstance(other, Cost):
            return NotImplemented
        return Cost(self.forwards + other.forwards, self.flops + other.flops)

    def __mul__(self, k: float) -> Cost:
        if isinstance(k, bool) or not isinstance(k, numbers.Real):
            return NotImplemented
        return Cost(self.forwards * k, self.flops * k)

    __rmul__ = __mul__

    def with_backward(self) -> Cost:
        """The cost of this forward plus its backward: ``1 + BACKWARD_FORWARDS`` times it."""
        return (1 + BACKWARD_FORWARDS) * self


def conv1d_flops(
    in_channels: int, out_channels: int, kernel: int, out_length: int, *, groups: int = 1, bias: bool = True
) -> int:
    """``2 · C_out · (C_in/groups) · k · L_out``, plus ``C_out · L_out`` for the bias."""
    macs = out_channels * (in_channels // groups) * kernel * out_length
    return 2 * macs + (out_channels * out_length if bias else 0)


def linear_flops(in_features: int, out_features: int, *, bias: bool = True) -> int:
    """``2 · n_in · n_out``, plus ``n_out`` for the bias."""
    return 2 * in_features * out_features + (out_features if bias else 0)


def groupnorm_flops(channels: int, length: int, *, affine: bool = True) -> int:
    """``8 · C · L`` (``6 · C · L`` without the affine map)."""
    return (GROUPNORM_FLOPS if affine else GROUPNORM_FLOPS - 2) * channels * length


def layer_flops(net: nn.Module, *inputs: torch.Tensor) -> dict[str, int]:
    """FLOPs of every ``Conv1d``, ``Linear`` and ``GroupNorm`` of ``net`` in one call ``net(*inputs)``,
    by module name, per case (divided by the batch size, the first axis of ``inputs[0]``).

    The input lengths come from the call itself (forward hooks), so run it on the ``meta`` device to
    count without computing. A module called twice is counted twice.
    """
    counts: dict[str, int] = {}
    batch = inputs[0].shape[0]

    def hook(name: str):
        def record(module: nn.Module, args: tuple, out: torch.Tensor) -> None:
            if isinstance(module, nn.Conv1d):
                flops = conv1d_flops(
                    module.in_channels,
                    module.out_channels,
                    module.kernel_size[0],
                    out.shape[-1],
                    groups=module.groups,
                    bias=module.bias is not None,
                )
            elif isinstance(module, nn.Linear):
                rows = out.numel() // (batch * module.out_features)  # 1 for a (B, n) input
                flops = rows * linear_flops(
                    module.in_features, module.out_features, bias=module.bias is not None
                )
            else:
                flops = groupnorm_flops(module.num_channels, out[0, 0].numel(), affine=module.affine)
            counts[name] = counts.get(name, 0) + flops

        return record

    handles = [
        m.register_forward_hook(hook(name))
        for name, m in net.named_modules()
        if isinstance(m, nn.Conv1d | nn.Linear | nn.GroupNorm)
    ]
    try:
        with torch.no_grad():
            net(*inputs)
    finally:
        for handle in handles:
            handle.remove()
    return counts


def unet_flops(config: UNetConfig, length: int) -> dict[str, int]:
    """Per-layer FLOPs of one :class:`neurips26.nn.UNet1D` forward on a grid of ``length`` points.

    Built and run on the ``meta`` device (no arithmetic, no RNG draw). Raises ``ValueError`` naming
    ``length`` when it is not a multiple of the downsampling factor.
    """
    if not isinstance(config, UNetConfig):
        raise TypeError(f"config must be a UNetConfig; got {type(config).__name__}")
    length = check_int("length", length, minimum=1)
    if length % config.downsampling:
        raise ValueError(
            f"length must be a multiple of the downsampling factor {config.downsampling}; got {length}"
        )
    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        net = UNet1D(config)
        x = torch.zeros(1, config.in_channels, length)
        t = torch.zeros(1)
    return layer_flops(net, x, t)


def denoiser_flops(config: DenoiserConfig | None = None, grid: int = 64) -> int:
    """FLOPs of one :class:`neurips26.picsb.denoiser.Denoiser` forward per case on ``grid`` points: the
    U-Net's layers plus the input masking (``M ⊙ y``: ``T · X``)."""
    config = DenoiserConfig() if config is None else config
    if not isinstance(config, DenoiserConfig):
        raise TypeError(f"config must be a DenoiserConfig; got {type(config).__name__}")
    grid = check_int("grid", grid, minimum=1)
    unet = config.unet_config()
    if grid % unet.downsampling:
        raise ValueError(
            f"grid must be a multiple of the downsampling factor {unet.downsampling}; got {grid}"
        )
    return sum(unet_flops(unet, grid).values()) + config.frames * grid


def rfft_flops(n: int) -> float:
    """``2.5 N log₂ N``: a real FFT (or inverse real FFT) of ``N`` points."""
    n = check_int("n", n, minimum=1)
    return 2.5 * n * math.log2(n)


def step_flops(grid: int) -> float:
    """One HF Euler step on ``grid`` points (module docstring):
    ``X + 3 · 2.5 X log₂ X + 10 (X/2 + 1) + 2X``."""
    grid = check_int("grid", grid, minimum=2)
    modes = grid // 2 + 1
    spectral = (COMPLEX_MUL + REAL_COMPLEX_MUL + COMPLEX_ADD) * modes
    return grid + 3 * rfft_flops(grid) + spectral + 2 * grid


def _burgers(config: object) -> BurgersConfig:
    if config is None:
        return BurgersConfig()
    if not isinstance(config, BurgersConfig):
        raise TypeError(f"burgers_config must be a BurgersConfig; got {type(config).__name__}")
    return config


def solve_flops(burgers_config: BurgersConfig | None = None) -> float:
    """One HF ``solve`` per case: ``(T − 1)`` Euler steps."""
    cfg = _burgers(burgers_config)
    return (cfg.frames - 1) * step_flops(cfg.grid)


def residual_flops(burgers_config: BurgersConfig | None = None) -> float:
    """One ``residual`` evaluation per case: ``(T − 1)`` steps plus ``(T − 1) X`` subtractions."""
    cfg = _burgers(burgers_config)
    return (cfg.frames - 1) * (step_flops(cfg.grid) + cfg.grid)


def energy_flops(
    burgers_config: BurgersConfig | None = None, energy_config: EnergyConfig | None = None
) -> float:
    """One energy ``E`` evaluation per case (:func:`neurips26.picsb.energy.energy`).

    The residual and its squared norm (``2 (T − 1) X``); the data term when ``σ_o > 0`` (select, subtract,
    square-add: ``4 T X``); the prior: ``x − x₁`` (``T X``), an rfft and an irfft per frame, the mode mask
    (``2 T (X/2 + 1)``) and the squared norm (``2 T X``); 3 scalings and 2 sums of the per-case terms.
    """
    cfg = _burgers(burgers_config)
    energy_config = EnergyConfig() if energy_config is None else energy_config
    if not isinstance(energy_config, EnergyConfig):
        raise TypeError(f"energy_config must be an EnergyConfig; got {type(energy_config).__name__}")
    t, x = cfg.frames, cfg.grid
    flops = residual_flops(cfg) + 2 * (t - 1) * x
    if energy_config.sigma_o > 0:
        flops += 4 * t * x
    flops += t * x + 2 * t * rfft_flops(x) + REAL_COMPLEX_MUL * t * (x // 2 + 1) + 2 * t * x
    return flops + 5
