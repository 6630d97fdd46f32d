"""Why one continuous linear embedding struggles with several attractors (paper §introduction and appendix
"Why multibasin systems require local structure"), made concrete.

The paper proves no theorem; it cites the obstruction (Lan–Mezić 2013; Brunton et al. 2016; Pan et al.
2024; Liu et al. 2025) and builds no example. The argument, in the form this module demonstrates [ours]:
if ``Φ`` is continuous and ``Φ(F(x)) = K Φ(x)`` exactly, every long-run linear prediction
``x̂_n(x) = D(K^n Φ(x))`` is a continuous function of the start ``x``. The true long-run state is not: it is
the attractor of the start's basin, and it jumps across a basin boundary. So a continuous lift must get the
starts near every boundary wrong, and a finite, fitted one gets far more wrong (its ``K`` has to carry the
unstable direction at the boundary, so it grows or averages across basins). A *gated* lift, whose active
coordinates depend on the basin (``Φ_g(x) = [1_{B₁}(x) Φ(x), 1_{B₂}(x) Φ(x)]``, the role a sparse
support plays), is discontinuous exactly at the boundary and is free of the obstruction.

* :class:`DoubleWell` — ``ẋ = x − x³`` (attractors ``±1``, boundary ``0``), the smallest multibasin system.
* :func:`basin_indicator` — the one-hot basin of each state, found by rolling the state forward and taking
  the nearest attractor. Each ``1_B`` is a Koopman eigenfunction of eigenvalue 1 (``1_B ∘ F = 1_B``) and is
  discontinuous on the boundary; :func:`boundary_jump` finds a boundary point on a segment by bisection and
  returns the indicator on both sides of it.
* :func:`collapse_demo` — EDMD (least-squares ``K`` and decoder) on a continuous Gaussian dictionary and on
  its gated copy; reports the long-run predictions, asymptotic-basin accuracy, the share of starts that
  settle at their attractor, the spectral radius of ``K`` and the gap ``|x̂_n(δ) − x̂_n(−δ)|`` across the
  boundary (→ 0 for the continuous lift by continuity; ≈ 2 for the gated one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from neurips26.skae.metrics import asymptotic_basin_accuracy
from neurips26.skae.systems import Box, System, nearest_center
from neurips26.validation import check_float, check_int, check_seed

#: Lifts of the collapse demo.
LIFTS = ("continuous", "gated")


@dataclass(frozen=True, kw_only=True)
class DoubleWell(System):
    """``ẋ = x − x³`` on the line: stable points ``±1``, the unstable point ``0`` is the basin boundary."""

    dt: float = 0.05
    half_width: float = 2.0

    name: ClassVar[str] = "double-well"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_float("half_width", self.half_width, minimum=0.0, strict_min=True)

    @property
    def count(self) -> int:
        return 2

    @property
    def dim(self) -> int:
        return 1

    @property
    def box(self) -> Box:
        return ((-self.half_width, self.half_width),)

    @property
    def attractors(self) -> np.ndarray:
        """The stable equilibria ``(−1, +1)`` as an array of shape ``(2, 1)``."""
        return np.array([[-1.0], [1.0]])

    def _field(self, x: torch.Tensor) -> torch.Tensor:
        return x - x**3


def basin_indicator(system: System, x: object, attractors: object, *, steps: int = 2000) -> np.ndarray:
    """One-hot basin of each state ``(..., d)``: roll ``steps`` stored steps, take the nearest attractor.

    Returns a ``(..., k)`` float array for ``k`` attractors ``(k, d)``; ``steps ≥ 1``.
    """
    if not isinstance(system, System):
        raise TypeError(f"system must be a System; got {type(system).__name__}")
    steps = check_int("steps", steps, minimum=1)
    a = np.asarray(attractors, dtype=float)
    if a.ndim != 2 or a.shape[1] != system.dim or a.shape[0] < 2 or not np.all(np.isfinite(a)):
        raise ValueError(f"attractors must be a finite array of shape (k >= 2, {system.dim}); got {a.shape}")
    end = system.advance(x, steps)
    labels = nearest_center(end, a).cpu().numpy()
    return np.eye(a.shape[0])[labels]


@dataclass(frozen=True)
class BoundaryJump:
    """A boundary point found on a segment, and the basin indicator just before and after it."""

    point: np.ndarray
    before: np.ndarray
    after: np.ndarray
    width: float


def boundary_jump(
    system: System,
    start: object,
    end: object,
    attractors: object,
    *,
    tol: float = 1e-8,
    steps: int = 2000,
) -> BoundaryJump:
    """Bisect the segment ``start → end`` (in different basins) down to a bracket of length ``≤ tol``.

    ``before``/``after`` are the indicators at the bracket's two ends: they differ however small ``tol`` is,
    which is the discontinuity of ``1_B``.
    """
    tol = check_float("tol", tol, minimum=0.0, strict_min=True)
    a = torch.as_tensor(np.asarray(start, dtype=float))
    b = torch.as_tensor(np.asarray(end, dtype=float))
    if a.shape != (system.dim,) or b.shape != (system.dim,):
        raise ValueError(f"start and end must be states of shape ({system.dim},)")

    def ind(p: torch.Tensor) -> np.ndarray:
        return basin_indicator(system, p[None], attractors, steps=steps)[0]

    ia, ib = ind(a), ind(b)
    if np.array_equal(ia, ib):
        raise ValueError("start and end must lie in different basins")
    while float(torch.linalg.vector_norm(b - a)) > tol:
        mid = 0.5 * (a + b)
        im = ind(mid)
        if np.array_equal(im, ia):
            a = mid
        else:
            b, ib = mid, im
    return BoundaryJump(
        point=(0.5 * (a + b)).numpy(),
        before=ia,
        after=ib,
        width=float(torch.linalg.vector_norm(b - a)),
    )


def gaussian_dictionary(x: np.ndarray, centers: np.ndarray, width: float) -> np.ndarray:
    """``[1, x, exp(−(x − c_i)² / 2w²)]`` for 1-D states ``x`` ``(N,)``: a continuous lift, ``(N, 2 + m)``."""
    x = np.asarray(x, dtype=float)[:, None]
    return np.concatenate([np.ones_like(x), x, np.exp(-((x - centers[None]) ** 2) / (2 * width**2))], axis=1)


def _lift(x: np.ndarray, centers: np.ndarray, width: float, kind: str) -> np.ndarray:
    phi = gaussian_dictionary(x, centers, width)
    if kind == "continuous":
        return phi
    right = (x >= 0)[:, None]  # the basin of +1 (the boundary point 0 goes right)
    return np.concatenate([phi * right, phi * ~right], axis=1)


@dataclass(frozen=True)
class LiftResult:
    """One lift of the collapse demo.

    ``starts`` and ``final`` are the starts and their decoded states after ``horizon`` latent steps;
    ``accuracy`` the asymptotic-basin accuracy; ``settled`` the share within ``0.1`` of the right
    attractor; ``radius`` the spectral radius of ``K``; ``fit_rmse`` the one-step state error of
    ``D K Φ``; ``gap`` ``|x̂_n(δ) − x̂_n(−δ)|`` at ``δ = 1e-9``.
    """

    starts: np.ndarray
    final: np.ndarray
    accuracy: float
    settled: float
    radius: float
    fit_rmse: float
    gap: float


def collapse_demo(
    *,
    atoms: int = 16,
    samples: int = 4000,
    horizon: int = 2000,
    grid: int = 401,
    seed: int = 0,
    system: DoubleWell | None = None,
) -> dict[str, LiftResult]:
    """EDMD on the double well with a continuous Gaussian dictionary and with its basin-gated copy.

    ``atoms`` Gaussians with centres evenly spread over the box and width their spacing; ``K`` and the
    linear decoder are least-squares fits on ``samples`` uniform states and their next stored states;
    long-run predictions are made from ``grid`` evenly spaced starts over the box.
    """
    atoms = check_int("atoms", atoms, minimum=2)
    samples = check_int("samples", samples, minimum=atoms + 2)
    horizon = check_int("horizon", horizon, minimum=1)
    grid = check_int("grid", grid, minimum=2)
    seed = check_seed("seed", seed)
    system = DoubleWell() if system is None else system
    if not isinstance(system, DoubleWell):
        raise TypeError(f"system must be a DoubleWell; got {type(system).__name__}")
    w = system.half_width
    rng = np.random.default_rng(seed)
    x = rng.uniform(-w, w, samples)
    y = system.step(torch.as_tensor(x[:, None])).numpy()[:, 0]
    centers = np.linspace(-w, w, atoms)
    width = float(centers[1] - centers[0])
    starts = np.linspace(-w, w, grid)
    truth = np.where(starts >= 0, 1, 0)  # index into attractors (−1, +1)
    out = {}
    for kind in LIFTS:
        p, q = _lift(x, centers, width, kind), _lift(y, centers, width, kind)
        k = np.linalg.lstsq(p, q, rcond=None)[0].T
        d = np.linalg.lstsq(p, x[:, None], rcond=None)[0].T

        def predict(x0: np.ndarray, k: np.ndarray = k, d: np.ndarray = d, kind: str = kind) -> np.ndarray:
            z = _lift(x0, centers, width, kind)
            with np.errstate(over="ignore", invalid="ignore"):
                for _ in range(horizon):
                    z = z @ k.T
                return (z @ d.T)[:, 0]

        final = predict(starts)
        with np.errstate(over="ignore", invalid="ignore"):
            settled = float(np.mean(np.abs(final - np.where(truth == 1, 1.0, -1.0)) < 0.1))
            edge = predict(np.array([1e-9, -1e-9]))
            gap = float(abs(edge[0] - edge[1]))
        out[kind] = LiftResult(
            starts=starts,
            final=final,
            accuracy=asymptotic_basin_accuracy(final[:, None], truth, system.attractors),
            settled=settled,
            radius=float(np.abs(np.linalg.eigvals(k)).max()),
            fit_rmse=float(np.sqrt(np.mean((p @ k.T @ d.T - y[:, None]) ** 2))),
            gap=gap,
        )
    return out
