"""The paired Schrödinger bridge of I2SB (Liu et al. 2023) between an HF end ``x₀`` and an LF end ``x₁``.

Chapter 06, its method notebook. A symmetric noise schedule ``β(t)`` on ``t ∈ [0, 1]`` defines
``σ_t² = ∫₀ᵗ β`` and ``σ̄_t² = ∫ₜ¹ β``; the bridge marginal given both ends is Gaussian (eq. B1)

    q(x_t | x₀, x₁) = N(μ₀(t) x₀ + μ₁(t) x₁, s_t² I),
    μ₀ = σ̄_t² / (σ_t² + σ̄_t²),  μ₁ = σ_t² / (σ_t² + σ̄_t²),  s_t² = σ_t² σ̄_t² / (σ_t² + σ̄_t²),

so ``μ₀ + μ₁ = 1``, ``x_0 = x₀`` and ``x_1 = x₁`` (no variance at either end). A network regresses
I2SB's target ``(x_t − x₀)/σ_t`` (eq. B2) and gives the clean estimate ``x̂₀ = x_t − σ_t · target``.

Sampling starts at ``x₁`` on the grid ``t_n = n / N_s`` and walks back with the DDPM-like posterior
(eq. B3), with ``δ² = σ_{t_n}² − σ_{t_{n−1}}²``:

    x_{t_{n−1}} ~ N((δ² x̂₀ + σ_{t_{n−1}}² x_{t_n}) / σ_{t_n}²,  σ_{t_{n−1}}² δ² / σ_{t_n}² I).

The OT-ODE variant (I2SB's ``ot_ode``) keeps the mean and drops the noise. With the true ``x₀`` it walks
exactly along the mean path ``μ₀(t) x₀ + μ₁(t) x₁``; the stochastic chain keeps ``q(x_t | x₀, x₁)``.

Hard sensor conditioning (eq. B4, our reading of the paper's "observations imposed at every step"):
after every step the sensor sites ``M`` are overwritten with a draw of ``q(x_t | x₀ = y, x₁)``, under the
sampler's own noise convention (noise for the stochastic sampler, the mean for the OT-ODE, as I2SB's
masked sampler does), and at ``t = 0`` ``M ⊙ x = y`` exactly.

Schedule [our choice, continuous form of I2SB's]: ``β(t) = β_max (1 − |2t − 1|)`` rises linearly to
``β_max`` at ``t = ½`` and falls back, so ``σ_t² = β_max t²`` for ``t ≤ ½`` and ``σ̄_t² = σ²_{1−t}``.
I2SB discretises a schedule that is linear in ``√β`` with a floor of 10⁻⁴ per step on 1,000 steps and
mirrors its first half; with ``β_max = 0.3`` both have a total variance near 0.15.

A denoiser is any callable ``net(x_t, t, cond) -> target``: ``x_t`` of the field's shape ``(B, ...)``,
``t`` a ``(B,)`` tensor of times on ``x_t``'s device and dtype, ``cond`` whatever the caller passes
(the chapter's U-Net takes the channels ``(x₁, M ⊙ y, M)``); it returns a target of ``x_t``'s shape.

What is here: :class:`BridgeSchedule`, :func:`q_sample`, :func:`training_target`, :func:`predict_x0`,
:func:`training_pair`, :func:`time_grid`, :func:`posterior_step`, :func:`condition`, :func:`sample`,
:func:`oracle`, :data:`METHODS`.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from neurips26.validation import check_choice, check_float, check_int

#: The bridge's ``β_max`` [our choice, I2SB's default for its 1,000-step grid].
BETA_MAX = 0.3
#: The samplers of :func:`sample`: I2SB's DDPM-like posterior chain and its noise-free OT-ODE.
METHODS = ("stochastic", "ot-ode")

#: ``net(x_t, t, cond) -> target``, the interface of every denoiser (module docstring).
Denoiser = Callable[[Tensor, Tensor, object], Tensor]


@dataclass(frozen=True)
class BridgeSchedule:
    """The symmetric schedule ``β(t) = β_max (1 − |2t − 1|)`` and the bridge coefficients it implies.

    Every method takes ``t`` as a float or a float64 tensor (values in ``[0, 1]``) and returns float64.
    """

    beta_max: float = BETA_MAX

    def __post_init__(self) -> None:
        check_float("beta_max", self.beta_max, minimum=0.0, strict_min=True)

    def beta(self, t: float | Tensor) -> Tensor:
        """``β(t)``, piecewise linear: 0 at both ends, ``β_max`` at ``t = ½``."""
        t = _as_time(t)
        return self.beta_max * (1.0 - (2.0 * t - 1.0).abs())

    def sigma2(self, t: float | Tensor) -> Tensor:
        """``σ_t² = ∫₀ᵗ β``: ``β_max t²`` up to ``½``, then ``β_max (½ − (1 − t)²)``."""
        t = _as_time(t)
        return self.beta_max * torch.where(t <= 0.5, t * t, 0.5 - (1.0 - t) ** 2)

    def sigma_bar2(self, t: float | Tensor) -> Tensor:
        """``σ̄_t² = ∫ₜ¹ β = σ²_{1−t}`` (the schedule is symmetric; no cancellation near ``t = 1``)."""
        return self.sigma2(1.0 - _as_time(t))

    def coefficients(self, t: float | Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """``(μ₀, μ₁, s²)`` of ``q(x_t | x₀, x₁)`` (eq. B1); ``(1, 0, 0)`` at 0, ``(0, 1, 0)`` at 1."""
        s2, sb2 = self.sigma2(t), self.sigma_bar2(t)
        total = s2 + sb2
        return sb2 / total, s2 / total, s2 * sb2 / total


def _schedule(schedule: object) -> BridgeSchedule:
    if schedule is None:
        return BridgeSchedule()
    if not isinstance(schedule, BridgeSchedule):
        raise TypeError(f"schedule must be a BridgeSchedule; got {type(schedule).__name__}")
    return schedule


def _as_time(t: object, name: str = "t") -> Tensor:
    """``t`` as a float64 tensor (CPU for a number), checked to lie in ``[0, 1]``."""
    if isinstance(t, Tensor):
        if t.is_complex() or not t.is_floating_point():
            raise TypeError(f"{name} must be a real floating tensor; got dtype {t.dtype}")
        t = t.to(torch.float64)
        if not bool(torch.isfinite(t).all()) or bool((t < 0).any()) or bool((t > 1).any()):
            raise ValueError(f"{name} must lie in [0, 1]; got values in [{t.min().item()}, {t.max().item()}]")
        return t
    if isinstance(t, bool) or not isinstance(t, numbers.Real):
        raise TypeError(f"{name} must be a float or a tensor; got {type(t).__name__}")
    return torch.tensor(check_float(name, t, minimum=0.0, maximum=1.0), dtype=torch.float64)


def _field(name: str, x: object) -> Tensor:
    if not isinstance(x, Tensor) or not x.is_floating_point():
        what = f"dtype {x.dtype}" if isinstance(x, Tensor) else type(x).__name__
        raise TypeError(f"{name} must be a floating torch.Tensor of shape (B, ...); got {what}")
    if x.ndim < 1:
        raise ValueError(f"{name} must have a batch dimension, shape (B, ...); got {tuple(x.shape)}")
    return x


def _same_shape(name: str, x: object, like: Tensor) -> Tensor:
    x = _field(name, x)
    if x.shape != like.shape:
        raise ValueError(f"{name} must have the field's shape {tuple(like.shape)}; got {tuple(x.shape)}")
    return x


def _per_sample(c: Tensor, like: Tensor, name: str = "t") -> Tensor:
    """A scalar or ``(B,)`` coefficient reshaped to broadcast over ``like`` ``(B, ...)``, in its dtype."""
    if c.ndim == 1:
        if c.shape[0] != like.shape[0]:
            raise ValueError(
                f"{name} must be a number or have shape (B={like.shape[0]},); got {tuple(c.shape)}"
            )
        c = c.reshape(-1, *([1] * (like.ndim - 1)))
    elif c.ndim != 0:
        raise ValueError(f"{name} must be a number or have shape (B={like.shape[0]},); got {tuple(c.shape)}")
    return c.to(device=like.device, dtype=like.dtype)


def _noise(like: Tensor, generator: object) -> Tensor:
    """Standard normal noise of ``like``'s shape, drawn on the generator's device, moved to ``like``'s."""
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator (noise is seeded); got {type(generator).__name__}"
        )
    z = torch.randn(like.shape, generator=generator, device=generator.device, dtype=like.dtype)
    return z.to(like.device)


def q_sample(
    x0: Tensor,
    x1: Tensor,
    t: float | Tensor,
    generator: torch.Generator | None,
    *,
    schedule: BridgeSchedule | None = None,
    ot_ode: bool = False,
) -> Tensor:
    """A draw of ``q(x_t | x₀, x₁)`` (eq. B1) for fields ``(B, ...)``; ``t`` a float or ``(B,)`` tensor.

    ``ot_ode=True`` returns the mean ``μ₀ x₀ + μ₁ x₁`` (I2SB's OT-ODE convention; ``generator`` unused).
    Exactly ``x₀`` at ``t = 0`` and ``x₁`` at ``t = 1``.
    """
    x0 = _field("x0", x0)
    x1 = _same_shape("x1", x1, x0)
    mu0, mu1, var = _schedule(schedule).coefficients(_as_time(t))
    mu0, mu1, var = (_per_sample(c, x0) for c in (mu0, mu1, var))
    mean = mu0 * x0 + mu1 * x1
    if ot_ode:
        return mean
    return mean + var.sqrt() * _noise(x0, generator)


def training_target(
    x0: Tensor, x_t: Tensor, t: float | Tensor, *, schedule: BridgeSchedule | None = None
) -> Tensor:
    """I2SB's regression target ``(x_t − x₀) / σ_t`` (eq. B2); needs ``t > 0`` (``σ_0 = 0``)."""
    x0 = _field("x0", x0)
    x_t = _same_shape("x_t", x_t, x0)
    t = _as_time(t)
    if bool((t <= 0).any()):
        raise ValueError("t must lie in (0, 1] for the training target ((x_t − x₀)/σ_t with σ_0 = 0)")
    sigma = _per_sample(_schedule(schedule).sigma2(t).sqrt(), x0)
    return (x_t - x0) / sigma


def predict_x0(
    x_t: Tensor, target: Tensor, t: float | Tensor, *, schedule: BridgeSchedule | None = None
) -> Tensor:
    """The clean estimate ``x̂₀ = x_t − σ_t · target`` from a predicted target (inverse of eq. B2)."""
    x_t = _field("x_t", x_t)
    target = _same_shape("target", target, x_t)
    sigma = _per_sample(_schedule(schedule).sigma2(_as_time(t)).sqrt(), x_t)
    return x_t - sigma * target


def training_pair(
    x0: Tensor, x1: Tensor, generator: torch.Generator, *, schedule: BridgeSchedule | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """One bridge training batch: ``t ~ U(0, 1]`` per sample, ``x_t ~ q(x_t | x₀, x₁)``, target (eq. B2).

    Returns ``(t, x_t, target)`` with ``t`` of shape ``(B,)`` in ``x0``'s dtype and device.
    ``t = 1 − U[0, 1)`` never hits 0, where the target is 0/0; near 0 it tends to the noise (bounded).
    """
    x0 = _field("x0", x0)
    x1 = _same_shape("x1", x1, x0)
    _noise(x0[:0], generator)  # the generator check, before any draw
    u = torch.rand(x0.shape[0], generator=generator, device=generator.device, dtype=torch.float64)
    t = (1.0 - u).to(x0.device)
    x_t = q_sample(x0, x1, t, generator, schedule=schedule)
    return t.to(x0.dtype), x_t, training_target(x0, x_t, t, schedule=schedule)


def time_grid(steps: int) -> tuple[float, ...]:
    """The sampling grid ``t_n = n / N_s``, ``n = 0..N_s`` (ascending; sampling walks it backwards)."""
    steps = check_int("steps", steps, minimum=1)
    return tuple(n / steps for n in range(steps + 1))


def posterior_step(
    x_t: Tensor,
    x0_hat: Tensor,
    t: float,
    t_prev: float,
    generator: torch.Generator | None,
    *,
    schedule: BridgeSchedule | None = None,
    ot_ode: bool = False,
) -> Tensor:
    """``x_{t_prev}`` from ``x_t`` and a clean estimate ``x̂₀`` (eq. B3, I2SB's ``p_posterior``), t_prev < t.

    Mean ``(δ² x̂₀ + σ²_{t_prev} x_t) / σ_t²``, variance ``σ²_{t_prev} δ² / σ_t²``; no noise when ``ot_ode``
    (``generator`` unused), and none at ``t_prev = 0`` where the variance is 0 and the step returns ``x̂₀``.
    """
    x_t = _field("x_t", x_t)
    x0_hat = _same_shape("x0_hat", x0_hat, x_t)
    t_now, t_before = _as_time(t), _as_time(t_prev, "t_prev")
    if t_now.ndim or t_before.ndim or not float(t_before) < float(t_now):
        raise ValueError(f"t_prev must be a number below t; got t_prev={float(t_before)}, t={float(t_now)}")
    sched = _schedule(schedule)
    s2, s2_prev = sched.sigma2(t_now), sched.sigma2(t_before)
    delta2 = s2 - s2_prev
    a, b, var = (_per_sample(c, x_t) for c in (delta2 / s2, s2_prev / s2, s2_prev * delta2 / s2))
    mean = a * x0_hat + b * x_t
    if ot_ode or float(t_before) == 0.0:
        return mean
    return mean + var.sqrt() * _noise(x_t, generator)


def _mask(mask: object, y: object, x1: Tensor) -> tuple[Tensor, Tensor]:
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        what = f"dtype {mask.dtype}" if isinstance(mask, Tensor) else type(mask).__name__
        raise TypeError(f"mask must be a bool torch.Tensor of the field's shape; got {what}")
    if mask.shape != x1.shape:
        raise ValueError(f"mask must have the field's shape {tuple(x1.shape)}; got {tuple(mask.shape)}")
    y = _same_shape("y", y, x1)
    return mask.to(x1.device), y.to(device=x1.device, dtype=x1.dtype)


def condition(
    x: Tensor,
    t: float,
    x1: Tensor,
    y: Tensor,
    mask: Tensor,
    generator: torch.Generator | None,
    *,
    schedule: BridgeSchedule | None = None,
    ot_ode: bool = False,
) -> Tensor:
    """Hard sensor conditioning at time ``t`` (eq. B4): ``x`` with its ``mask`` sites set to a draw of
    ``q(x_t | x₀ = y, x₁)`` there (the mean when ``ot_ode``); ``y`` has the field's shape, read on ``mask``.

    The other sites are returned bit for bit, and at ``t = 0`` the sites hold ``y`` exactly.
    """
    x = _field("x", x)
    x1 = _same_shape("x1", x1, x)
    mask, y = _mask(mask, y, x1)
    pinned = q_sample(y, x1, t, generator, schedule=schedule, ot_ode=ot_ode)
    return torch.where(mask, pinned, x)


def sample(
    net: Denoiser,
    x1: Tensor,
    steps: int,
    *,
    method: str = "stochastic",
    cond: object = None,
    mask: Tensor | None = None,
    y: Tensor | None = None,
    generator: torch.Generator | None = None,
    schedule: BridgeSchedule | None = None,
    return_path: bool = False,
) -> Tensor:
    """An HF field from the LF end ``x1`` ``(B, ...)`` in ``steps`` (``N_s``) network calls.

    From ``x_{t_N} = x₁``, for ``n = N..1``: ``x̂₀ = predict_x0(x, net(x, t_n, cond), t_n)``, then
    :func:`posterior_step` to ``t_{n−1}`` (``method``: ``"stochastic"``, eq. B3, needs ``generator``; or
    ``"ot-ode"``, deterministic), then, with ``mask`` and ``y``, :func:`condition` at ``t_{n−1}`` (eq. B4),
    so the result has ``M ⊙ x = y`` exactly. ``cond`` is passed to ``net`` unchanged. Runs without
    gradients. Returns the field, or with ``return_path`` the states ``x_{t_N}, ..., x_{t_0}`` stacked
    on a new first axis ``(N_s + 1, B, ...)``.
    """
    if not callable(net):
        raise TypeError(f"net must be a callable net(x_t, t, cond) -> target; got {type(net).__name__}")
    x1 = _field("x1", x1)
    grid = time_grid(steps)
    ot_ode = check_choice("method", method, METHODS) == "ot-ode"
    if not ot_ode:
        _noise(x1[:0], generator)  # the generator check, before any network call
    if (mask is None) != (y is None):
        raise ValueError("mask and y must be given together (hard conditioning) or both left out")
    if mask is not None:
        mask, y = _mask(mask, y, x1)
    sched = _schedule(schedule)
    x = x1
    path = [x]
    with torch.no_grad():
        for t, t_prev in zip(grid[:0:-1], grid[-2::-1], strict=True):
            t_vec = torch.full((x.shape[0],), t, device=x.device, dtype=x.dtype)
            target = net(x, t_vec, cond)
            if not isinstance(target, Tensor) or target.shape != x.shape:
                got = tuple(target.shape) if isinstance(target, Tensor) else type(target).__name__
                raise ValueError(f"net must return a target of x_t's shape {tuple(x.shape)}; got {got}")
            x0_hat = predict_x0(x, target.to(x.dtype), t, schedule=sched)
            x = posterior_step(x, x0_hat, t, t_prev, generator, schedule=sched, ot_ode=ot_ode)
            if mask is not None:
                x = condition(x, t_prev, x1, y, mask, generator, schedule=sched, ot_ode=ot_ode)
            path.append(x)
        if mask is not None:
            x = torch.where(mask, y, x)  # already exact at t = 0 (μ₀ = 1, s = 0); stated, not assumed
            path[-1] = x
    return torch.stack(path) if return_path else x


def oracle(x0: Tensor, *, schedule: BridgeSchedule | None = None) -> Denoiser:
    """A "network" that knows ``x0``: returns the true target ``(x_t − x₀)/σ_t`` (eq. B2), ignores ``cond``.

    With it ``x̂₀ = x₀`` up to rounding, so the samplers can be checked against closed forms.
    """
    x0 = _field("x0", x0)
    sched = _schedule(schedule)

    def net(x_t: Tensor, t: Tensor, cond: object = None) -> Tensor:
        return training_target(x0.to(device=x_t.device, dtype=x_t.dtype), x_t, t, schedule=sched)

    return net
