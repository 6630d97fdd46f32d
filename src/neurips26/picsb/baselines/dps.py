"""DPS-style guided diffusion: an HF-trained unconditional prior steered by sensors and the PDE residual.

Chapter 06, "Baselines" : Diffusion Posterior Sampling (Chung et al. 2023). Unlike PICSB it
needs HF fields to train and a network backward at every sampling step, which is what claim P4 compares.

**Prior** [our choice: VP/DDPM, ε-prediction]: linear ``β_n`` from ``1e-4`` to ``0.02`` over ``N = 1000``
steps, ``ᾱ_n = Π_{m≤n}(1 − β_m)`` and the closed-form forward noising (DDPM eq. 4)

    ``x_n = √ᾱ_n x₀ + √(1 − ᾱ_n) ε``,    loss ``‖ε_θ(x_n, n) − ε‖²`` (DDPM eq. 14).

The network is the chapter's :class:`neurips26.nn.UNet1D` over ``x`` (circular) with the ``T`` frames as
channels, as in :mod:`neurips26.picsb.denoiser`, but with only ``x_n`` as input (``T`` in, ``T`` out)
and the integer step ``n`` as time (``time_scale = 1``). Trained with :func:`neurips26.train.fit`.

**Sampling** (:func:`dps_sample`): ``S`` ancestral DDPM steps on the strided grid ``τ_S > … > τ_1`` of
:func:`step_grid` (the DDPM posterior between ``τ_i`` and ``τ_{i−1}``; the last step returns the mean,
``x̂₀``). At each step Tweedie gives ``x̂₀(x_n) = (x_n − √(1 − ᾱ_n) ε_θ)/√ᾱ_n`` and DPS (Chung et al.,
Alg. 1) subtracts, per case,

    ``ζ_obs ∇_{x_n} [ ‖M ⊙ x̂₀ − y‖ + ζ_pde ‖R(x̂₀)‖ ]``    (the norms are not squared, as in DPS),

through autograd (:func:`guidance_gradient`), the residual term only at the late steps
``ᾱ_τ ≥ pde_alpha_bar`` (:class:`DPSConfig`); ``R`` is the scheme's one-step defect of
:func:`neurips26.picsb.burgers.residual`. The result is projected, ``M ⊙ x = y`` exactly. Cost: one
network forward per step, plus one backward per step when guided (``ζ_obs > 0``) — :class:`DPSResult`
reports both counts for the cost model (a backward counts 2 forwards there). With ``ζ_obs = 0`` this is
plain ancestral sampling (:func:`ancestral_sample`) followed by the projection.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from neurips26 import distributed
from neurips26.nn import UNet1D, UNetConfig
from neurips26.picsb.baselines import check_problem
from neurips26.picsb.burgers import BurgersConfig, residual
from neurips26.picsb.energy import project
from neurips26.picsb.picsb import loss_generator
from neurips26.train import fit
from neurips26.validation import check_float, check_int, check_seed


@dataclass(frozen=True)
class PriorConfig:
    """The DDPM prior: network sizes (``channels``, ``time_dim``, ``groups``; ``T`` from ``burgers``),
    the linear schedule (``diffusion_steps`` ``N``, ``beta_start``, ``beta_end``) and training
    (``train_steps``, ``batch``, ``lr``). Errors name the field."""

    burgers: BurgersConfig = field(default_factory=BurgersConfig)
    channels: tuple[int, ...] = (64, 64)
    time_dim: int = 64
    groups: int = 8
    diffusion_steps: int = 1000
    beta_start: float = 1e-4
    beta_end: float = 0.02
    train_steps: int = 500
    batch: int = 32
    lr: float = 1e-3

    def __post_init__(self) -> None:
        if not isinstance(self.burgers, BurgersConfig):
            raise TypeError(f"burgers must be a BurgersConfig; got {type(self.burgers).__name__}")
        check_int("diffusion_steps", self.diffusion_steps, minimum=1)
        check_float("beta_start", self.beta_start, minimum=0.0, maximum=1.0, strict_min=True)
        check_float("beta_end", self.beta_end, minimum=0.0, maximum=1.0, strict_min=True)
        if self.beta_end >= 1.0 or self.beta_start > self.beta_end:
            raise ValueError(
                f"beta_end must satisfy beta_start <= beta_end < 1; got {self.beta_start}, {self.beta_end}"
            )
        check_int("train_steps", self.train_steps, minimum=1)
        check_int("batch", self.batch, minimum=1)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        self.unet_config()  # validates channels, time_dim, groups

    def unet_config(self) -> UNetConfig:
        """``T`` channels in and out, circular in ``x``, integer step as time (``time_scale = 1``)."""
        frames = self.burgers.frames
        return UNetConfig(
            in_channels=frames,
            out_channels=frames,
            channels=tuple(self.channels),
            time_dim=self.time_dim,
            groups=self.groups,
            circular=True,
            time_scale=1.0,
        )


@dataclass(frozen=True)
class DPSConfig:
    """Sampling: ``steps`` ``S ≥ 1`` (at most ``N``), ``zeta_obs`` ``ζ ≥ 0`` (the guidance step) and
    ``zeta_pde`` ``ζ_pde ≥ 0`` (the residual's weight inside it), applied only at the steps whose
    ``ᾱ_τ ≥ pde_alpha_bar`` [our choice, after DiffusionPDE's late PDE guidance: at high noise Tweedie's
    ``x̂₀`` is far from any field and the gradient of the nonlinear residual through it explodes; 0 applies
    it at every step]. Errors name the field."""

    steps: int = 100
    zeta_obs: float = 1.0
    zeta_pde: float = 0.0
    pde_alpha_bar: float = 0.0

    def __post_init__(self) -> None:
        check_int("steps", self.steps, minimum=1)
        check_float("zeta_obs", self.zeta_obs, minimum=0.0)
        check_float("zeta_pde", self.zeta_pde, minimum=0.0)
        check_float("pde_alpha_bar", self.pde_alpha_bar, minimum=0.0, maximum=1.0)


class Prior(nn.Module):
    """``ε_θ(x_n, n)`` on fields ``(B, T, X)`` with its linear-β schedule (float64, CPU)."""

    def __init__(self, config: PriorConfig | None = None, *, seed: int = 0) -> None:
        super().__init__()
        config = PriorConfig() if config is None else config
        if not isinstance(config, PriorConfig):
            raise TypeError(f"config must be a PriorConfig; got {type(config).__name__}")
        self.config = config
        # The schedule stays a float64 CPU tensor (not a buffer), so ``.to(dtype)`` leaves it exact.
        self.betas = torch.linspace(
            config.beta_start, config.beta_end, config.diffusion_steps, dtype=torch.float64
        )
        self.alpha_bars = torch.cumprod(1.0 - self.betas, dim=0)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(check_seed("seed", seed))
            self.unet = UNet1D(config.unet_config())

    def forward(self, x_n: Tensor, n: Tensor) -> Tensor:
        """The predicted noise ``ε``, shape ``(B, T, X)``; ``n`` integer steps ``(B,)`` in ``[0, N)``."""
        return self.unet(x_n, n.to(device=x_n.device, dtype=x_n.dtype))

    def alpha_bar(self, n: Tensor, like: Tensor) -> Tensor:
        """``ᾱ_n`` per case, shaped ``(B, 1, 1)`` in ``like``'s dtype/device."""
        return self.alpha_bars[n.cpu()].to(dtype=like.dtype, device=like.device)[:, None, None]


def _prior(prior: object) -> Prior:
    if not isinstance(prior, Prior):
        raise TypeError(f"prior must be a Prior; got {type(prior).__name__}")
    return prior


def _generator(generator: object) -> torch.Generator:
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator (noise is seeded); got {type(generator).__name__}"
        )
    return generator


def _randn(like: Tensor, generator: torch.Generator) -> Tensor:
    z = torch.randn(like.shape, generator=generator, device=generator.device, dtype=like.dtype)
    return z.to(like.device)


def q_sample(prior: Prior, x0: Tensor, n: Tensor, noise: Tensor) -> Tensor:
    """The closed-form forward noising ``√ᾱ_n x₀ + √(1 − ᾱ_n) ε`` (DDPM eq. 4), ``n`` of shape ``(B,)``."""
    a = _prior(prior).alpha_bar(n, x0)
    return a.sqrt() * x0 + (1.0 - a).sqrt() * noise


def tweedie_x0(prior: Prior, x_n: Tensor, n: Tensor) -> tuple[Tensor, Tensor]:
    """``(x̂₀, ε_θ)``: Tweedie's estimate ``x̂₀ = (x_n − √(1 − ᾱ_n) ε_θ)/√ᾱ_n`` and the network output."""
    eps = prior(x_n, n)
    a = prior.alpha_bar(n, x_n)
    return (x_n - (1.0 - a).sqrt() * eps) / a.sqrt(), eps


def prior_loss(prior: Prior | nn.Module, x0: Tensor, generator: torch.Generator) -> Tensor:
    """The ε-prediction loss ``mean ‖ε_θ(x_n, n) − ε‖²`` at uniform ``n`` (DDPM eq. 14).

    ``prior`` may be the data-parallel wrapper of a :class:`Prior` (under torchrun): the loss calls it
    once and reads the schedule off the module inside."""
    generator = _generator(generator)
    module = _prior(distributed.unwrap(prior))
    n = torch.randint(
        module.config.diffusion_steps, (x0.shape[0],), generator=generator, device=generator.device
    )
    n = n.to(x0.device)
    noise = _randn(x0, generator)
    return (prior(q_sample(module, x0, n, noise), n) - noise).square().mean()


def train_prior(
    hf_fields: Tensor, config: PriorConfig | None = None, *, seed: int = 0, progress: bool = False
) -> tuple[Prior, list[float]]:
    """Train the prior on ``hf_fields`` ``(N, T, X)`` with :func:`neurips26.train.fit`; returns the model
    (eval mode, on the fields' device and dtype) and the per-step losses. One generator seeded ``seed``
    draws the batch indices and the noise; under torchrun each rank draws its noise from its own
    (:func:`neurips26.picsb.picsb.loss_generator`) and trains data-parallel."""
    config = PriorConfig() if config is None else config
    if not isinstance(config, PriorConfig):
        raise TypeError(f"config must be a PriorConfig; got {type(config).__name__}")
    seed = check_seed("seed", seed)
    if not isinstance(hf_fields, Tensor) or not hf_fields.is_floating_point():
        raise TypeError(f"hf_fields must be a floating-point torch.Tensor; got {type(hf_fields).__name__}")
    shape = config.burgers.shape
    if hf_fields.ndim != 3 or tuple(hf_fields.shape[1:]) != shape or hf_fields.shape[0] == 0:
        raise ValueError(
            f"hf_fields must have shape (N >= 1, {shape[0]}, {shape[1]}); got {tuple(hf_fields.shape)}"
        )
    prior = Prior(config, seed=seed).to(device=hf_fields.device, dtype=hf_fields.dtype)
    data = hf_fields.detach()
    generator = torch.Generator(device=data.device).manual_seed(seed)
    noise = loss_generator(generator, seed)

    def batches(step: int) -> Tensor:
        idx = torch.randint(len(data), (config.batch,), generator=generator, device=data.device)
        return data[idx]

    history = fit(
        prior,
        lambda net, x0: prior_loss(net, x0, noise),
        batches,
        steps=config.train_steps,
        seed=seed,
        lr=config.lr,
        progress=progress,
        desc="DPS prior",
    )
    prior.eval()
    return prior, [float(v) for v in history.loss]


def step_grid(diffusion_steps: int, steps: int) -> tuple[int, ...]:
    """The ``S`` sampling steps ``τ_S > … > τ_1`` (rounded even spacing of ``[0, N − 1]``, descending)."""
    diffusion_steps = check_int("diffusion_steps", diffusion_steps, minimum=1)
    steps = check_int("steps", steps, minimum=1, maximum=diffusion_steps)
    grid = torch.linspace(0, diffusion_steps - 1, steps, dtype=torch.float64).round().long().tolist()
    return tuple(reversed(grid))


def _posterior(x_n: Tensor, x0_hat: Tensor, a: float, a_prev: float) -> tuple[Tensor, float]:
    """Mean and variance of ``q(x_{τ'} | x_τ, x̂₀)`` between ``ᾱ = a`` and ``ᾱ' = a_prev`` (DDPM eq. 7)."""
    beta = 1.0 - a / a_prev
    c0 = a_prev**0.5 * beta / (1.0 - a)
    ct = (a / a_prev) ** 0.5 * (1.0 - a_prev) / (1.0 - a)
    return c0 * x0_hat + ct * x_n, (1.0 - a_prev) / (1.0 - a) * beta


def guidance_loss(
    x0_hat: Tensor, y: Tensor, mask: Tensor, zeta_pde: float, burgers: BurgersConfig | None = None
) -> Tensor:
    """Per case ``‖M ⊙ x̂₀ − y‖ + ζ_pde ‖R(x̂₀)‖``, shape ``(B,)`` (the norms DPS differentiates)."""
    zero = torch.zeros((), dtype=x0_hat.dtype, device=x0_hat.device)
    loss = torch.where(mask, x0_hat - y, zero).flatten(1).norm(dim=1)
    if zeta_pde > 0:
        loss = loss + zeta_pde * residual(x0_hat, burgers).flatten(1).norm(dim=1)
    return loss


def guidance_gradient(
    prior: Prior,
    x_n: Tensor,
    n: Tensor,
    y: Tensor,
    mask: Tensor,
    zeta_pde: float = 0.0,
    burgers: BurgersConfig | None = None,
) -> tuple[Tensor, Tensor]:
    """``(∇_{x_n} guidance_loss(x̂₀(x_n)), x̂₀)`` through the network by autograd (one forward and one
    backward); cases are independent (the per-case losses are summed)."""
    with torch.enable_grad():
        x = x_n.detach().requires_grad_(True)
        x0_hat, _ = tweedie_x0(prior, x, n)
        loss = guidance_loss(x0_hat, y, mask, zeta_pde, burgers or prior.config.burgers)
        (grad,) = torch.autograd.grad(loss.sum(), x)
    return grad, x0_hat.detach()


@dataclass(frozen=True)
class DPSResult:
    """``field`` ``(B, T, X)`` (``M ⊙ field = y``), and the network passes per case: ``nfe_forward``
    (``S``) and ``nfe_backward`` (``S`` when guided, else 0)."""

    field: Tensor
    nfe_forward: int
    nfe_backward: int


def _sample(
    prior: Prior,
    shape: tuple[int, ...],
    like: Tensor,
    steps: int,
    generator: torch.Generator,
    guide: tuple[Tensor, Tensor, float, float, float] | None,
) -> Tensor:
    grid = step_grid(prior.config.diffusion_steps, steps)
    alpha_bars = prior.alpha_bars.tolist()
    x = _randn(torch.empty(shape, dtype=like.dtype, device=like.device), generator)
    for i, tau in enumerate(grid):
        n = torch.full((shape[0],), tau, dtype=torch.long, device=like.device)
        if guide is None:
            with torch.no_grad():
                x0_hat, _ = tweedie_x0(prior, x, n)
        else:
            y, mask, zeta_obs, zeta_pde, pde_alpha_bar = guide
            pde = zeta_pde if alpha_bars[tau] >= pde_alpha_bar else 0.0
            grad, x0_hat = guidance_gradient(prior, x, n, y, mask, pde)
        a = alpha_bars[tau]
        if i + 1 < len(grid):
            mean, var = _posterior(x, x0_hat, a, alpha_bars[grid[i + 1]])
            new = mean + var**0.5 * _randn(x, generator)
        else:
            new = x0_hat
        if guide is not None:
            new = new - zeta_obs * grad
        x = new.detach()
    return x


def ancestral_sample(
    prior: Prior, shape: tuple[int, ...], like: Tensor, steps: int, generator: torch.Generator
) -> Tensor:
    """Plain (unguided) ancestral DDPM sampling of ``shape`` fields in ``like``'s dtype/device."""
    prior = _prior(prior)
    steps = check_int("steps", steps, minimum=1, maximum=prior.config.diffusion_steps)
    return _sample(prior, tuple(shape), like, steps, _generator(generator), None)


def dps_sample(
    prior: Prior,
    y: Tensor,
    mask: Tensor,
    config: DPSConfig | None = None,
    *,
    generator: torch.Generator,
    x1: Tensor | None = None,
) -> DPSResult:
    """DPS from the unconditional prior, guided by ``y`` on ``mask`` and the residual, then projected.

    ``y``, ``mask``: ``(B, T, X)``; ``x1`` (the LF prior) is optional and only checked: the prior is
    unconditional, so the LF run does not enter. Runs in ``x1``'s (else ``y``'s) dtype and device (the
    prior must be there); the noise comes from ``generator`` only.
    """
    prior = _prior(prior)
    config = DPSConfig() if config is None else config
    if not isinstance(config, DPSConfig):
        raise TypeError(f"config must be a DPSConfig; got {type(config).__name__}")
    check_int("steps", config.steps, maximum=prior.config.diffusion_steps)
    generator = _generator(generator)
    burgers = prior.config.burgers
    ref = y if x1 is None else x1
    _, y, mask = check_problem(ref, y, mask, burgers)
    guided = config.zeta_obs > 0
    guide = (y, mask, config.zeta_obs, config.zeta_pde, config.pde_alpha_bar) if guided else None
    x = _sample(prior, tuple(y.shape), y, config.steps, generator, guide)
    return DPSResult(
        field=project(x, mask, y), nfe_forward=config.steps, nfe_backward=config.steps if guided else 0
    )
