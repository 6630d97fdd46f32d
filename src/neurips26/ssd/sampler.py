"""EDM's deterministic Heun sampler (Karras et al., 2022, Algorithm 1), with no mask at sampling time.

Samples solve the probability-flow ODE of variance-exploding noising, ``dx/dσ = (x - D(x; σ)) / σ``,
from ``x ~ N(0, σ_max² I)`` down to σ = 0, on the noise levels (EDM Eq. (5))::

    σ_i = (σ_max^{1/ρ} + i/(N-1) (σ_min^{1/ρ} - σ_max^{1/ρ}))^ρ,   i = 0 … N-1,   σ_N = 0

Each step takes an Euler step and corrects it with the trapezoidal rule (Heun, second order), except the
last one, to σ = 0, which stays Euler: ``2N - 1`` denoiser calls in all. SSD changes only training, so
the sampler is the same for every mask ratio.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor, nn

from neurips26.ssd.masks import draw_device
from neurips26.validation import check_float, check_int

Denoiser = Callable[..., Tensor]


def karras_sigmas(
    steps: int = 18, sigma_min: float = 0.002, sigma_max: float = 80.0, rho: float = 7.0
) -> Tensor:
    """The ``steps + 1`` levels ``σ_0 = σ_max > … > σ_{N-1} = σ_min > σ_N = 0`` (EDM Eq. (5)), float64."""
    steps = check_int("steps", steps, minimum=1)
    sigma_min = check_float("sigma_min", sigma_min, minimum=0.0, strict_min=True)
    sigma_max = check_float("sigma_max", sigma_max, minimum=sigma_min, strict_min=True)
    rho = check_float("rho", rho, minimum=0.0, strict_min=True)
    if steps == 1:
        ramp = torch.zeros(1, dtype=torch.float64)
    else:
        ramp = torch.arange(steps, dtype=torch.float64) / (steps - 1)  # i / (N - 1)
    lo, hi = sigma_min ** (1.0 / rho), sigma_max ** (1.0 / rho)
    sigmas = (hi + ramp * (lo - hi)) ** rho
    return torch.cat([sigmas, torch.zeros(1, dtype=torch.float64)])


def heun_sample(
    model: Denoiser,
    shape: Sequence[int],
    *,
    steps: int = 18,
    sigma_min: float = 0.002,
    sigma_max: float = 80.0,
    rho: float = 7.0,
    generator: torch.Generator,
    extra_fn: Callable[[Tensor, Tensor], Tensor] | None = None,
    dtype: torch.dtype = torch.float32,
) -> Tensor:
    """Draw samples of ``shape`` (B, C, H, W) with EDM's deterministic Heun sampler (Algorithm 1).

    ``model(x, sigma)`` is any denoiser ``D(x; σ)`` taking ``x`` (B, C, H, W) and σ as a (B,) tensor —
    an :class:`~neurips26.ssd.denoiser.EDMDenoiser` or an exact one such as a Wiener filter. With
    ``extra_fn``, the call is ``model(x, sigma, extra_fn(x, sigma))`` (the input-mask baseline gets an
    all-ones mask). The start ``x ~ N(0, σ_max² I)`` is drawn from ``generator`` (on the model's device when
    the generator can drive it, else on the generator's and moved: :func:`~neurips26.ssd.masks.draw_device`);
    the same generator state gives the same samples. The samples live on the model's device (a module's
    parameters'; the generator's for a parameter-free denoiser). Runs under ``torch.no_grad``; a
    ``torch.nn.Module`` denoiser is put in eval mode for the run (no dropout), its mode restored afterwards.
    """
    if not callable(model):
        raise TypeError(f"model must be callable as model(x, sigma); got {type(model).__name__}")
    if extra_fn is not None and not callable(extra_fn):
        raise TypeError(
            f"extra_fn must be callable as extra_fn(x, sigma) or None; got {type(extra_fn).__name__}"
        )
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator; got {type(generator).__name__}")
    if not isinstance(shape, Sequence) or len(shape) != 4:
        raise ValueError(f"shape must be (batch, channels, height, width); got {shape!r}")
    shape = tuple(check_int(f"shape[{i}]", s, minimum=1) for i, s in enumerate(shape))
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point torch.dtype; got {dtype!r}")
    sigmas = karras_sigmas(steps, sigma_min, sigma_max, rho).tolist()
    parameter = next(model.parameters(), None) if isinstance(model, nn.Module) else None
    device = parameter.device if parameter is not None else generator.device
    batch = shape[0]

    def denoise(x: Tensor, sigma: float) -> Tensor:
        s = torch.full((batch,), sigma, dtype=dtype, device=device)
        return model(x, s) if extra_fn is None else model(x, s, extra_fn(x, s))

    was_training = isinstance(model, nn.Module) and model.training
    if was_training:
        model.eval()
    try:
        with torch.no_grad():
            # x_0 ~ N(0, σ_0² I)
            where = draw_device(generator, device)
            start = torch.randn(shape, generator=generator, dtype=dtype, device=where)
            x = sigmas[0] * start.to(device)
            for s_cur, s_next in zip(sigmas[:-1], sigmas[1:], strict=True):
                d_cur = (x - denoise(x, s_cur)) / s_cur  # dx/dσ at σ_i
                x_euler = x + (s_next - s_cur) * d_cur  # Euler step to σ_{i+1}
                if s_next == 0.0:
                    x = x_euler  # the last step, to σ = 0, stays first order
                else:
                    d_next = (x_euler - denoise(x_euler, s_next)) / s_next
                    x = x + (s_next - s_cur) * 0.5 * (d_cur + d_next)  # trapezoidal (Heun) correction
    finally:
        if was_training:
            model.train()
    return x
