"""Sparse high-fidelity sensors: masks and noisy observations ``y = M ⊙ (u + ξ)`` (chapter 06, §3.1).

Two sensor layouts on the HF ``(T, X)`` grid:

- ``"probes"`` (default): ``4`` fixed probe columns read at every frame, 4/64 = 6.25 % of the grid. The
  columns are drawn at seeded *irregular* positions: four equally spaced probes (every 16 cells) see
  ``sin(3x)`` exactly as they see ``sin(−x)`` (``3 ≡ −1 mod 4``), so the k = 3 mode of the initial
  condition would alias onto k = 1; equally spaced draws are rejected.
- ``"random"``: a fresh random 3 % of the space-time points per case.

A mask is a ``bool`` tensor of the field's shape; ``ξ ~ N(0, σ_o² I)`` with ``σ_o ∈ {0, 0.01}`` in the
chapter (σ_o = 0: the observations are exact and the energy's data term becomes the projection
``M ⊙ x = y``). Bad input raises ``ValueError`` naming ``sensor_columns`` (a probe outside ``[0, X)``) or
``mask`` (not the field's shape).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from neurips26.validation import check_choice, check_float, check_int, check_seed

#: The sensor layouts.
KINDS = ("probes", "random")


@dataclass(frozen=True)
class ObservationConfig:
    """Which sensors and how much noise: ``kind`` in :data:`KINDS`, ``probes`` columns (``"probes"``),
    ``fraction`` of the points (``"random"``), noise standard deviation ``sigma_o >= 0``."""

    kind: str = "probes"
    probes: int = 4
    fraction: float = 0.03
    sigma_o: float = 0.0

    def __post_init__(self) -> None:
        check_choice("kind", self.kind, KINDS)
        check_int("probes", self.probes, minimum=1)
        check_float("fraction", self.fraction, minimum=0.0, maximum=1.0, strict_min=True)
        check_float("sigma_o", self.sigma_o, minimum=0.0)


def probe_columns(count: int, grid: int, seed: int) -> tuple[int, ...]:
    """``count`` distinct probe columns in ``[0, grid)``, sorted, seeded, never equally spaced (when
    ``count >= 2`` and another layout exists): equal spacing aliases the initial condition's modes."""
    count = check_int("count", count, minimum=1)
    grid = check_int("grid", grid, minimum=count)
    rng = np.random.default_rng(check_seed("seed", seed))
    regular_only = count == grid  # every column: the only layout there is
    while True:
        columns = np.sort(rng.choice(grid, size=count, replace=False))
        gaps = np.diff(np.append(columns, columns[0] + grid))  # cyclic gaps
        if count < 2 or regular_only or np.any(gaps != gaps[0]):
            return tuple(int(c) for c in columns)


def probe_mask(
    sensor_columns: tuple[int, ...] | list[int],
    frames: int,
    grid: int,
    *,
    device: torch.device | str | None = None,
) -> Tensor:
    """The ``(frames, grid)`` bool mask that reads the given columns at every frame."""
    frames = check_int("frames", frames, minimum=1)
    grid = check_int("grid", grid, minimum=1)
    if not isinstance(sensor_columns, tuple | list) or not sensor_columns:
        raise TypeError(f"sensor_columns must be a non-empty tuple or list of ints; got {sensor_columns!r}")
    columns = [check_int(f"sensor_columns[{i}]", c) for i, c in enumerate(sensor_columns)]
    if any(not 0 <= c < grid for c in columns):
        raise ValueError(f"sensor_columns must lie in [0, {grid}); got {tuple(columns)}")
    if len(set(columns)) != len(columns):
        raise ValueError(f"sensor_columns must not repeat a column; got {tuple(columns)}")
    mask = torch.zeros(frames, grid, dtype=torch.bool, device=device)
    mask[:, columns] = True
    return mask


def random_mask(
    n: int, frames: int, grid: int, fraction: float, seed: int, *, device: torch.device | str | None = None
) -> Tensor:
    """``n`` independent masks ``(n, frames, grid)``, each with exactly ``max(1, round(fraction·T·X))``
    points chosen uniformly without replacement (seeded)."""
    n = check_int("n", n, minimum=1)
    frames = check_int("frames", frames, minimum=1)
    grid = check_int("grid", grid, minimum=1)
    fraction = check_float("fraction", fraction, minimum=0.0, maximum=1.0, strict_min=True)
    generator = torch.Generator().manual_seed(check_seed("seed", seed))
    points = frames * grid
    count = max(1, round(fraction * points))
    order = torch.argsort(torch.rand(n, points, generator=generator), dim=1)  # a random permutation per case
    mask = torch.zeros(n, points, dtype=torch.bool)
    mask.scatter_(1, order[:, :count], True)
    return mask.reshape(n, frames, grid).to(device)


def make_masks(
    n: int,
    frames: int,
    grid: int,
    config: ObservationConfig,
    seed: int,
    *,
    device: torch.device | str | None = None,
) -> Tensor:
    """The ``(n, frames, grid)`` masks of ``config``: the same seeded probe columns for every case
    (fixed sensors), or independent random masks."""
    if not isinstance(config, ObservationConfig):
        raise TypeError(f"config must be an ObservationConfig; got {type(config).__name__}")
    n = check_int("n", n, minimum=1)
    if config.kind == "probes":
        columns = probe_columns(config.probes, grid, seed)
        return probe_mask(columns, frames, grid, device=device).expand(n, frames, grid).clone()
    return random_mask(n, frames, grid, config.fraction, seed, device=device)


def check_mask(mask: object, field: Tensor) -> Tensor:
    """``mask`` as a bool tensor of exactly ``field``'s shape; errors name ``mask``."""
    if not isinstance(mask, Tensor):
        raise TypeError(f"mask must be a torch.Tensor; got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must be a bool tensor; got dtype {mask.dtype}")
    if mask.shape != field.shape:
        raise ValueError(f"mask must have the field's shape {tuple(field.shape)}; got {tuple(mask.shape)}")
    return mask


def observe(u: Tensor, mask: Tensor, sigma_o: float = 0.0, seed: int = 0) -> Tensor:
    """Observations ``y = M ⊙ (u + ξ)``, ``ξ ~ N(0, σ_o² I)`` (seeded; zero off the sensors).

    ``u`` and ``mask`` have the same shape; the noise is drawn in float64 on the CPU, so the same seed
    gives the same observations on every device.
    """
    if not isinstance(u, Tensor) or not u.is_floating_point():
        raise TypeError(f"u must be a floating-point torch.Tensor; got {type(u).__name__}")
    mask = check_mask(mask, u)
    sigma_o = check_float("sigma_o", sigma_o, minimum=0.0)
    generator = torch.Generator().manual_seed(check_seed("seed", seed))
    noise = torch.randn(u.shape, generator=generator, dtype=torch.float64)
    noisy = u + sigma_o * noise.to(dtype=u.dtype, device=u.device) if sigma_o > 0 else u
    return torch.where(mask, noisy, torch.zeros_like(u))
