"""Flow-GRPO's policy: the flow sampler turned into a stochastic process with exact step log-probabilities
(Liu et al., *Flow-GRPO*, 2025, §3.1 and its released ``sd3_sde_with_logprob``).

Convention of :mod:`neurips26.flow`: ``x_t = (1 − t) x₀ + t ε``, the network's velocity ``v ≈ ε − x₀``, the
ODE ``dx = v dt`` runs from noise at ``t = 1`` to data at ``t = 0``. The score of the linear path is
``∇ log p_t(x) = −(x + (1 − t) v(x, t)) / t``, so the reverse-time SDE

    dx = [v + σ_t² / (2t) · (x + (1 − t) v)] dt + σ_t dw,      σ_t = a √(t / (1 − t))

has the ODE's marginals at every ``t`` (noise level ``a``; 0.7 in Flow-GRPO). Its Euler–Maruyama step on a
grid ``1 = t₀ > t₁ > … > t_T = 0`` (``Δt = t_{n+1} − t_n < 0``) is the policy ``π_θ(x_{t+Δt} | x_t, c) =
N(μ_θ, s_t² I)`` with

    μ_θ = x_t (1 + σ_t² Δt / (2t)) + v_θ (1 + σ_t² (1 − t) / (2t)) Δt,        s_t = σ_t √(−Δt).

At ``t = 1`` the factor ``1 − t`` under the root is taken at the next grid time, as the released code does,
so the first step is finite. The log-probability is the Gaussian's, averaged (not summed) over the
dimensions of a sample as in the code; :func:`sde_step` also returns it per 2 × 2-pixel token (the 8 × 8
grid on which chapter 08 places its regions). The sample enters detached: only ``μ_θ`` carries gradient.

Two same-variance Gaussian steps have the closed-form KL ``‖μ_θ − μ_ref‖² / (2 s_t²)``, per dimension
``(|Δt| / 2) (σ_t (1 − t) / (2t) + 1 / σ_t)² (v_θ − v_ref)²``: :func:`step_kl` (``convention="exact"``).
The released loss divides by ``σ_t²`` instead of ``s_t²``, i.e. multiplies the exact KL by ``|Δt|``
(``convention="code"``); a ``β`` is only meaningful with its convention.

- :func:`noise_std` (σ_t), :func:`sde_step` (one step: sample, mean, std, log-probabilities),
  :func:`step_log_prob` (log π of a given transition), :func:`step_kl`;
- :func:`sample`: a whole trajectory, ``mode="sde"`` (the policy, with its log-probabilities) or ``"ode"``
  (the deterministic Euler sampler used for evaluation).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from neurips26.flow.path import check_same_shape, check_sample
from neurips26.flow.schedule import check_grid
from neurips26.validation import check_choice, check_float

#: Flow-GRPO's default noise level ``a`` of ``σ_t = a √(t / (1 − t))``.
NOISE_LEVEL = 0.7

#: KL conventions of :func:`step_kl`: the exact per-dimension KL, or the released code's (× |Δt|).
KL_CONVENTIONS = ("exact", "code")

#: Sampling modes of :func:`sample`.
MODES = ("sde", "ode")

#: ``velocity_fn(x, t) -> v``: ``x`` of shape ``(B, C, H, W)``, ``t`` a ``(B,)`` tensor.
VelocityFn = Callable[[Tensor, Tensor], Tensor]


def _check_image(name: str, x: object) -> Tensor:
    x = check_sample(name, x)
    if x.ndim != 4:
        raise ValueError(f"{name} must have shape (B, C, H, W); got {tuple(x.shape)}")
    return x


def _check_times(t: float, t_next: float) -> tuple[float, float]:
    t = check_float("t", t, minimum=0.0, maximum=1.0)
    t_next = check_float("t_next", t_next, minimum=0.0, maximum=1.0)
    if not t_next < t or t == 0.0:
        raise ValueError(f"t_next must be < t (a step towards the data, t > 0); got t={t}, t_next={t_next}")
    return t, t_next


def noise_std(t: float, t_next: float, a: float = NOISE_LEVEL) -> float:
    """``σ_t = a √(t / (1 − t))``, with ``1 − t`` taken at ``t_next`` when ``t = 1`` (the code's guard)."""
    t, t_next = _check_times(t, t_next)
    a = check_float("a", a, minimum=0.0)
    return a * math.sqrt(t / (1.0 - (t_next if t == 1.0 else t)))


def token_means(x: Tensor, patch: int = 2) -> Tensor:
    """The mean of ``x`` ``(B, C, H, W)`` over the channels and pixels of each ``patch × patch`` token:
    ``(B, (H / patch) · (W / patch))``, tokens in row-major order."""
    b, c, h, w = x.shape
    if h % patch or w % patch:
        raise ValueError(f"patch must divide the image size ({h}, {w}); got {patch}")
    return x.reshape(b, c, h // patch, patch, w // patch, patch).mean(dim=(1, 3, 5)).reshape(b, -1)


@dataclass(frozen=True)
class Step:
    """One SDE step: ``sample`` x_{t+Δt} (detached), ``mean`` μ_θ (with gradient), ``std`` s_t, ``sigma`` σ_t,
    ``log_prob`` ``(B,)`` (mean over dimensions) and ``token_log_prob`` ``(B, tokens)`` (mean per token)."""

    sample: Tensor
    mean: Tensor
    std: float
    sigma: float
    log_prob: Tensor
    token_log_prob: Tensor


def step_mean(
    x: Tensor, v: Tensor, t: float, t_next: float, a: float = NOISE_LEVEL
) -> tuple[Tensor, float, float]:
    """``(μ_θ, s_t, σ_t)`` of the step from ``t`` to ``t_next`` (module docstring); ``a = 0`` gives Euler."""
    x = _check_image("x", x)
    v = check_same_shape("v", v, x)
    sigma = noise_std(t, t_next, a)
    dt = t_next - t
    mean = x * (1.0 + sigma**2 / (2.0 * t) * dt) + v * (1.0 + sigma**2 * (1.0 - t) / (2.0 * t)) * dt
    return mean, sigma * math.sqrt(-dt), sigma


def _log_prob_terms(sample: Tensor, mean: Tensor, std: float) -> Tensor:
    """The per-dimension Gaussian log-density ``log N(sample; mean, std²)``."""
    return -((sample.detach() - mean) ** 2) / (2.0 * std**2) - math.log(std) - 0.5 * math.log(2.0 * math.pi)


def step_log_prob(
    x: Tensor, v: Tensor, x_next: Tensor, t: float, t_next: float, a: float = NOISE_LEVEL, patch: int = 2
) -> tuple[Tensor, Tensor]:
    """``log π_θ(x_next | x)`` of a recorded transition: ``((B,), (B, tokens))``, means over dimensions
    and per token (``a`` must be > 0: the ODE step has no density)."""
    if check_float("a", a, minimum=0.0) == 0.0:
        raise ValueError("a must be > 0 for a log-probability (the ODE step is deterministic)")
    mean, std, _ = step_mean(x, v, t, t_next, a)
    x_next = check_same_shape("x_next", x_next, x)
    terms = _log_prob_terms(x_next, mean, std)
    return terms.mean(dim=(1, 2, 3)), token_means(terms, patch)


def sde_step(
    x: Tensor,
    v: Tensor,
    t: float,
    t_next: float,
    *,
    a: float = NOISE_LEVEL,
    generator: torch.Generator | None = None,
    noise: Tensor | None = None,
    patch: int = 2,
) -> Step:
    """Draw ``x_{t+Δt} = μ_θ + s_t ξ`` (``ξ`` from ``noise`` or ``generator``) and its log-probabilities."""
    mean, std, sigma = step_mean(x, v, t, t_next, a)
    if std == 0.0:  # a = 0: the Euler step of the ODE, no noise and no density
        zeros = torch.zeros(x.shape[0], dtype=x.dtype, device=x.device)
        return Step(mean.detach(), mean, std, sigma, zeros, token_means(torch.zeros_like(x), patch))
    if noise is None:
        noise = torch.randn(x.shape, generator=generator, dtype=x.dtype, device="cpu").to(x.device)
    noise = check_same_shape("noise", noise, x)
    sample = (mean + std * noise).detach()
    terms = _log_prob_terms(sample, mean, std)
    return Step(sample, mean, std, sigma, terms.mean(dim=(1, 2, 3)), token_means(terms, patch))


def step_kl(mean: Tensor, mean_ref: Tensor, std: float, sigma: float, convention: str = "exact") -> Tensor:
    """KL(π_θ ‖ π_ref) of one step per sample ``(B,)``, averaged over dimensions: ``mean (μ − μ_ref)² /
    (2 s_t²)`` (``"exact"``) or ``/ (2 σ_t²)`` (``"code"``, Flow-GRPO's loss: the exact value × |Δt|)."""
    mean = _check_image("mean", mean)
    mean_ref = check_same_shape("mean_ref", mean_ref, mean)
    check_choice("convention", convention, KL_CONVENTIONS)
    scale = std if convention == "exact" else sigma
    check_float("std" if convention == "exact" else "sigma", scale, minimum=0.0, strict_min=True)
    return ((mean - mean_ref) ** 2).mean(dim=(1, 2, 3)) / (2.0 * scale**2)


def check_window(window: object, steps: int) -> tuple[int, int]:
    """The stochastic steps ``(start, stop)`` of a ``steps``-step grid (None: all of them)."""
    if window is None:
        return (0, steps)
    if (
        not isinstance(window, tuple)
        or len(window) != 2
        or not all(isinstance(w, int) and not isinstance(w, bool) for w in window)
        or not 0 <= window[0] < window[1] <= steps
    ):
        raise ValueError(f"window must be (start, stop) with 0 <= start < stop <= {steps}; got {window!r}")
    return window


@dataclass(frozen=True)
class Trajectory:
    """A sampled path: ``states`` ``(T + 1, B, C, H, W)`` from the noise ``x_{t₀}`` to the sample ``x_{t_T}``;
    the ``grid``; for ``mode="sde"`` the old policy's ``log_probs`` ``(T, B)`` and ``token_log_probs``
    ``(T, B, tokens)`` of each recorded step (zeros for the ODE)."""

    states: Tensor
    grid: tuple[float, ...]
    log_probs: Tensor
    token_log_probs: Tensor
    mode: str

    @property
    def final(self) -> Tensor:
        """The generated sample ``x_{t_T}``."""
        return self.states[-1]


@torch.no_grad()
def sample(
    velocity_fn: VelocityFn,
    noise: Tensor,
    grid: Sequence[float],
    *,
    mode: str = "sde",
    a: float = NOISE_LEVEL,
    generator: torch.Generator | None = None,
    patch: int = 2,
    window: tuple[int, int] | None = None,
) -> Trajectory:
    """Run the sampler from ``noise`` along ``grid`` (``1 = t₀ > … > t_T = 0``): every step an
    :func:`sde_step` (``mode="sde"``, the policy) or an Euler step (``"ode"``: ``a = 0``).

    ``window = (start, stop)`` makes only steps ``start ≤ n < stop`` stochastic and the others Euler steps
    (Flow-GRPO-Fast's SDE window; their log-probabilities are 0 and they are not trained)."""
    noise = _check_image("noise", noise)
    grid = check_grid(grid)
    if grid[0] <= grid[-1]:
        raise ValueError(f"grid must decrease from noise to data; got {grid}")
    check_choice("mode", mode, MODES)
    window = check_window(window, len(grid) - 1)
    level = a if mode == "sde" else 0.0
    states, log_probs, token_log_probs = [noise], [], []
    x = noise
    for n, (t, t_next) in enumerate(zip(grid[:-1], grid[1:], strict=True)):
        times = torch.full((x.shape[0],), t, dtype=x.dtype, device=x.device)
        noisy = level if window[0] <= n < window[1] else 0.0
        step = sde_step(x, velocity_fn(x, times), t, t_next, a=noisy, generator=generator, patch=patch)
        x = step.sample
        states.append(x)
        log_probs.append(step.log_prob)
        token_log_probs.append(step.token_log_prob)
    return Trajectory(torch.stack(states), grid, torch.stack(log_probs), torch.stack(token_log_probs), mode)
