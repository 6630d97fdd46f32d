"""Viscous Burgers on the periodic interval: the high- and low-fidelity solvers and the PDE residual.

The chapter's PDE (chapter 06, §"PDE and data") is ``u_t + u u_x = nu u_xx`` on ``[0, 2 pi)``, ``nu = 0.1``.

- **High fidelity (HF)**: ``X = 64`` points, ``T = 32`` stored frames ``Δt = 0.02`` apart; pseudo-spectral
  in ``x`` with the 2/3 de-aliasing rule and **one explicit Euler step per frame** (the frame interval is
  the step). One step is the map ``Φ`` of :func:`step`.
- **Residual** ``R(u)^n = u^{n+1} − Φ(u^n)``: the scheme's one-step defect (:func:`residual`). The HF
  solution has ``R = 0`` to round-off and a constant field has ``R = 0``; dividing by ``Δt`` gives the
  usual PDE residual ``(u^{n+1} − u^n)/Δt + (u²/2)_x − nu u_xx`` of a first draft of this chapter.
- **Low fidelity (LF)**: the same scheme on its own coarse grid (``X_LF = 8``) with ``Δt_LF = 4 Δt`` and
  ``nu_LF = 2 nu`` (discretisation plus model-form error), lifted back to the HF ``(T, X)`` grid by Fourier
  interpolation in ``x`` (:func:`fourier_lift`, exact for band-limited fields) and linear interpolation in
  ``t`` (:func:`time_lift`). Median LF relative L2 error ≈ 17 % over 48 cases.
- **Initial conditions** ``u_0(x) = Σ_{k≤3} a_k sin(k x + φ_k)``, ``a_k ~ U(−1, 1)/k``, ``φ_k ~ U(0, 2π)``
  (:func:`initial_conditions`, seeded).

The nonlinear term is written in conservative form ``(u²/2)_x`` (equal to ``u u_x`` for smooth fields; it
keeps the mean exactly). Everything is torch, differentiable, on the input's device and dtype, and works
on any leading batch shape: :func:`solve` is the differentiable HF rollout that strong-constraint 4D-Var
optimises through.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import torch
from torch import Tensor

from neurips26.validation import check_float, check_int, check_seed

#: The domain length: ``x_j = 2 pi j / X``, integer wavenumbers.
LENGTH = 2.0 * math.pi


@dataclass(frozen=True)
class BurgersConfig:
    """Sizes and coefficients of the HF and LF solvers (defaults: the chapter's).

    ``modes`` is the number of sine modes of the initial conditions; their amplitude law bounds
    ``max |u_0| <= Σ_{k<=modes} 1/k`` (:attr:`u_max`), which the stability check uses (the viscous Burgers
    maximum principle keeps ``max |u|`` from growing). Raises ``ValueError`` naming the field: ``lf_grid``
    must divide ``grid``; ``dt`` (HF) or ``lf_dt_factor`` (LF) must satisfy the explicit-Euler bounds of
    :func:`check_stability`.
    """

    grid: int = 64
    frames: int = 32
    dt: float = 0.02
    nu: float = 0.1
    modes: int = 3
    lf_grid: int = 8
    lf_dt_factor: int = 4
    lf_nu_factor: float = 2.0

    def __post_init__(self) -> None:
        check_int("grid", self.grid, minimum=4)
        if self.grid % 2:
            raise ValueError(f"grid must be even; got {self.grid}")
        check_int("frames", self.frames, minimum=2)
        check_float("dt", self.dt, minimum=0.0, strict_min=True)
        check_float("nu", self.nu, minimum=0.0, strict_min=True)
        check_int("modes", self.modes, minimum=1, maximum=self.grid // 3)
        check_int("lf_grid", self.lf_grid, minimum=4, maximum=self.grid)
        if self.grid % self.lf_grid:
            raise ValueError(f"lf_grid must divide grid = {self.grid}; got {self.lf_grid}")
        check_int("lf_dt_factor", self.lf_dt_factor, minimum=1)
        check_float("lf_nu_factor", self.lf_nu_factor, minimum=0.0, strict_min=True)
        check_stability("dt", self.dt, self.nu, self.grid, self.u_max)
        check_stability("lf_dt_factor", self.lf_dt, self.lf_nu, self.lf_grid, self.u_max)

    @property
    def u_max(self) -> float:
        """The bound ``Σ_{k<=modes} 1/k`` on ``max |u_0|`` under the initial-condition law."""
        return sum(1.0 / k for k in range(1, self.modes + 1))

    @property
    def lf_dt(self) -> float:
        """The LF step ``Δt_LF = lf_dt_factor · Δt``."""
        return self.lf_dt_factor * self.dt

    @property
    def lf_nu(self) -> float:
        """The LF viscosity ``nu_LF = lf_nu_factor · nu``."""
        return self.lf_nu_factor * self.nu

    @property
    def lf_frames(self) -> int:
        """LF frames needed to cover the HF horizon ``(T − 1) Δt``: ``ceil((T − 1)/factor) + 1``."""
        return -(-(self.frames - 1) // self.lf_dt_factor) + 1

    @property
    def shape(self) -> tuple[int, int]:
        """The HF field shape ``(T, X)``."""
        return (self.frames, self.grid)


def dealiased_kmax(grid: int) -> int:
    """The largest wavenumber the 2/3 rule keeps on ``grid`` points: ``|k| < grid/3``."""
    return (check_int("grid", grid, minimum=2) - 1) // 3


def check_stability(name: str, dt: float, nu: float, grid: int, u_max: float) -> None:
    """Raise ``ValueError`` naming ``name`` and the bound when explicit Euler is unstable.

    Linearised about a speed ``U``, mode ``k`` is multiplied per step by ``g = 1 − Δt (nu k² + i U k)``.
    ``|g| <= 1`` needs the diffusion limit ``nu k² Δt <= 2`` and, since Euler is unconditionally unstable
    for pure advection, the advection-diffusion limit ``Δt <= 2 nu / (U² + nu² k²)``; both are tightest at
    the de-aliased ``k_max`` (modes above it are never excited from a band-limited start). HF defaults:
    ``k_max = 21``, ``U = 11/6``: the limits are 0.045 and 0.026 against ``Δt = 0.02``.
    """
    k = dealiased_kmax(grid)
    diffusion = 2.0 / (nu * k * k)
    if dt > diffusion:
        raise ValueError(
            f"{name}: step {dt:g} exceeds the explicit-Euler diffusion limit nu*k_max^2*dt <= 2, "
            f"i.e. dt <= {diffusion:.4g} (nu = {nu:g}, k_max = {k})"
        )
    advection = 2.0 * nu / (u_max * u_max + (nu * k) ** 2)
    if dt > advection:
        raise ValueError(
            f"{name}: step {dt:g} exceeds the explicit-Euler advection-diffusion limit "
            f"dt <= 2*nu/(u_max^2 + nu^2*k_max^2) = {advection:.4g} (nu = {nu:g}, k_max = {k}, "
            f"u_max = {u_max:.4g})"
        )


@functools.lru_cache(maxsize=64)
def _spectral(grid: int, dtype: torch.dtype, device: torch.device) -> tuple[Tensor, Tensor]:
    """``(i k / 2) · D`` (the de-aliased conservative advection symbol) and ``k²`` on the rfft modes."""
    k = torch.arange(grid // 2 + 1, dtype=dtype, device=device)
    keep = (k <= dealiased_kmax(grid)).to(dtype)  # the 2/3 rule; also drops the Nyquist derivative
    return 0.5j * k * keep, k * k


def _check_field(name: str, u: object, min_ndim: int) -> Tensor:
    if not isinstance(u, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(u).__name__}")
    if not u.is_floating_point():
        raise TypeError(f"{name} must be floating point; got dtype {u.dtype}")
    if u.ndim < min_ndim or u.shape[-1] < 4 or u.shape[-1] % 2:
        raise ValueError(
            f"{name} must have shape (..., X) with X even >= 4 and ndim >= {min_ndim}; got {tuple(u.shape)}"
        )
    return u


def step(u: Tensor, dt: float, nu: float) -> Tensor:
    """One explicit Euler step ``Φ(u) = u + Δt (−D[(u²/2)_x] + nu u_xx)`` along the last axis.

    Spectral derivatives on the grid of ``u`` (shape ``(..., X)``); ``D`` zeroes the product's modes
    ``|k| >= X/3`` (2/3 de-aliasing), so the step is alias-free for fields band-limited to the kept modes.
    """
    adv, k2 = _spectral(u.shape[-1], u.dtype, u.device)
    tendency = -adv * torch.fft.rfft(u * u, dim=-1) - nu * k2 * torch.fft.rfft(u, dim=-1)
    return u + dt * torch.fft.irfft(tendency, n=u.shape[-1], dim=-1)


def rollout(u0: Tensor, frames: int, dt: float, nu: float) -> Tensor:
    """The ``frames`` states ``u_0, Φ(u_0), Φ²(u_0), ...`` from ``u0`` (shape ``(..., X)``).

    Returns ``(..., frames, X)``.
    """
    states = [u0]
    for _ in range(frames - 1):
        states.append(step(states[-1], dt, nu))
    return torch.stack(states, dim=-2)


def solve(u0: Tensor, config: BurgersConfig | None = None) -> Tensor:
    """The differentiable HF solution from ``u0`` (shape ``(..., X)``): ``(..., T, X)``.

    Autograd flows back to ``u0`` (strong-constraint 4D-Var optimises the initial state through it).
    """
    cfg = config or BurgersConfig()
    u0 = _check_field("u0", u0, 1)
    if u0.shape[-1] != cfg.grid:
        raise ValueError(f"u0 must have X = {cfg.grid} points; got shape {tuple(u0.shape)}")
    return rollout(u0, cfg.frames, cfg.dt, cfg.nu)


def residual(u: Tensor, config: BurgersConfig | None = None) -> Tensor:
    """The one-step defect ``R(u)^n = u^{n+1} − Φ(u^n)``, ``n = 0..T−2``, of a field ``(..., T, X)``.

    Returns ``(..., T − 1, X)``. ``R(solve(u0)) = 0`` up to round-off and ``R(const) = 0``; differentiable.
    """
    cfg = config or BurgersConfig()
    u = _check_field("u", u, 2)
    if tuple(u.shape[-2:]) != cfg.shape:
        raise ValueError(f"u must have shape (..., {cfg.frames}, {cfg.grid}); got {tuple(u.shape)}")
    return u[..., 1:, :] - step(u[..., :-1, :], cfg.dt, cfg.nu)


def fourier_lift(u: Tensor, grid: int) -> Tensor:
    """Trigonometric interpolation of ``u`` (shape ``(..., X_c)``) onto ``grid`` points (a multiple of X_c).

    Zero-pads the spectrum; an even ``X_c``'s Nyquist coefficient is split between ``±X_c/2`` so the
    interpolant is real and passes through the coarse values. Exact for fields band-limited to
    ``|k| < X_c/2``.
    """
    coarse = u.shape[-1]
    grid = check_int("grid", grid, minimum=coarse)
    if grid % coarse:
        raise ValueError(f"grid must be a multiple of the coarse size {coarse}; got {grid}")
    spectrum = torch.fft.rfft(u, dim=-1)
    if coarse % 2 == 0:
        half = torch.ones(spectrum.shape[-1], dtype=u.dtype, device=u.device)
        half[-1] = 0.5
        spectrum = spectrum * half
    return torch.fft.irfft(spectrum, n=grid, dim=-1) * (grid / coarse)


def time_lift(frames: Tensor, factor: int, count: int) -> Tensor:
    """Linear interpolation in time of ``frames`` (shape ``(..., M, X)``, ``factor`` HF steps apart)
    at the first ``count`` HF frames ``n = 0..count−1``: ``(..., count, X)``."""
    factor = check_int("factor", factor, minimum=1)
    if frames.ndim < 2 or frames.shape[-2] < 2:
        raise ValueError(f"frames must have shape (..., M >= 2, X); got {tuple(frames.shape)}")
    count = check_int("count", count, minimum=1, maximum=(frames.shape[-2] - 1) * factor + 1)
    n = torch.arange(count, device=frames.device)
    lo = torch.clamp(n // factor, max=frames.shape[-2] - 2)  # the LF interval holding HF frame n
    w = ((n - lo * factor).to(frames.dtype) / factor)[:, None]  # its fraction through that interval
    return (1.0 - w) * frames[..., lo, :] + w * frames[..., lo + 1, :]


def low_fidelity(u0: Tensor, config: BurgersConfig | None = None) -> Tensor:
    """The LF prior ``x_1``, shape ``(..., T, X)``, from the HF initial state ``u0`` (shape ``(..., X)``).

    The LF run starts from the initial condition sampled on its own grid (every ``X/X_LF``-th HF point),
    takes ``Δt_LF = factor Δt`` steps with ``nu_LF``, and is lifted by Fourier interpolation in ``x`` and
    linear interpolation in ``t``.
    """
    cfg = config or BurgersConfig()
    u0 = _check_field("u0", u0, 1)
    if u0.shape[-1] != cfg.grid:
        raise ValueError(f"u0 must have X = {cfg.grid} points; got shape {tuple(u0.shape)}")
    coarse = rollout(u0[..., :: cfg.grid // cfg.lf_grid], cfg.lf_frames, cfg.lf_dt, cfg.lf_nu)
    return time_lift(fourier_lift(coarse, cfg.grid), cfg.lf_dt_factor, cfg.frames)


def initial_conditions(
    n: int,
    seed: int,
    config: BurgersConfig | None = None,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> Tensor:
    """``n`` seeded initial states ``Σ_{k<=modes} a_k sin(k x + φ_k)`` on the HF grid: ``(n, X)``.

    ``a_k ~ U(−1, 1)/k``, ``φ_k ~ U(0, 2π)``; drawn in float64 on the CPU (same numbers on every device).
    """
    cfg = config or BurgersConfig()
    n = check_int("n", n, minimum=1)
    generator = torch.Generator().manual_seed(check_seed("seed", seed))
    k = torch.arange(1, cfg.modes + 1, dtype=torch.float64)
    amplitude = (2.0 * torch.rand(n, cfg.modes, generator=generator, dtype=torch.float64) - 1.0) / k
    phase = LENGTH * torch.rand(n, cfg.modes, generator=generator, dtype=torch.float64)
    x = LENGTH * torch.arange(cfg.grid, dtype=torch.float64) / cfg.grid
    u0 = (amplitude[:, :, None] * torch.sin(k[:, None] * x + phase[:, :, None])).sum(1)
    return u0.to(dtype=dtype, device=device)


def relative_l2(estimate: Tensor, truth: Tensor) -> Tensor:
    """Per-case relative L2 error ``‖estimate − truth‖ / ‖truth‖`` over the last two axes ``(T, X)``."""
    if estimate.shape != truth.shape or truth.ndim < 2:
        raise ValueError(
            f"estimate and truth must have the same shape (..., T, X); got {tuple(estimate.shape)} "
            f"and {tuple(truth.shape)}"
        )
    diff = torch.linalg.vector_norm(estimate - truth, dim=(-2, -1))
    return diff / torch.linalg.vector_norm(truth, dim=(-2, -1))
