"""The dynamical systems of the SKAE chapter, their RK4 stored-step maps, evaluation labels and resets.

Every system is a continuous-time vector field ``f`` integrated by the classical fourth-order Runge-Kutta
method (RK4). One *stored step* of size ``dt`` is ``substeps`` RK4 updates of size ``dt / substeps``; the
learner only ever sees stored states, as in the paper's stored-step convention (its multibasin appendix:
"one stored step is one fourth-order Runge-Kutta update"). The controlled two-dimensional systems use
``substeps=1`` like the paper; the chaotic flows, whose stored step is long, use several (ours, see each).

Implementation choice: torch, not NumPy. The states feed torch models, so trajectories can be drawn on the
model's device (a GPU draws thousands of fresh windows per training step at no host cost) and in float64
for the exactness tests or float32 for training, with one code path. On one CPU thread the two libraries
cost the same at these sizes (measured: 0.21 ms NumPy vs 0.26 ms torch per RK4 step of the Square
four-well at 128 states; 5.4 vs 4.5 ms at 4,096). Only k-means (scikit-learn) goes through NumPy.

What is here:

- :func:`rk4_step`, :func:`rk4_advance`, :func:`rk4_trajectory` — RK4, vectorised over any leading shape.
- :class:`System` — the common interface: ``vector_field``, ``step``, ``advance``, ``trajectories``,
  ``initial_states`` (uniform over the reset box, or perturbed and warmed-up states on a chaotic flow).
- :class:`GaussianWells` — ``x' = -grad V + omega(x) R x``, ``R x = (x2, -x1)``,
  ``V = -sum_i a_i exp(-|x - c_i|^2 / 2 sigma_i^2) + gamma (x1^4 + x2^4)``; the paper's instances
  :func:`square_four_well`, :func:`high_cross_three_well`, :func:`asymmetric_three_well`,
  :func:`transition_routes_four_well`, and a seeded :func:`random_wells`.
- :class:`LocalLinearGates` — three linear cores joined by gate sectors, with native labels.
- :class:`ShimizuMorioka`, :class:`Sakarya` (at 30x their Dysts integration interval), :class:`Lorenz63`,
  :class:`Lorenz96` (d = 40 by default).
- :func:`proxy_centers`, :func:`nearest_center`, :func:`center_margin` — the paper's evaluation-only
  proxy labels (endpoints rolled 5,000 steps, k-means at the known count) and the margin ``d2 - d1``.
- :class:`HardPoolSampler` — the paper's perturbation-sensitive training reset ("hard pool").
- :data:`SYSTEMS`, :func:`make_system` — the chapter's systems by key; :data:`CONTROLLED`, :data:`FLOWS`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from neurips26.seeding import sub_seed
from neurips26.validation import check_choice, check_float, check_int, check_seed

VectorField = Callable[[torch.Tensor], torch.Tensor]

Box = tuple[tuple[float, float], ...]


# ----------------------------------------------------------------------------------------------------------
# RK4
# ----------------------------------------------------------------------------------------------------------


def rk4_step(field: VectorField, x: torch.Tensor, h: float) -> torch.Tensor:
    """One classical RK4 update of ``x' = field(x)`` with step ``h``; ``x`` has shape ``(..., d)``.

    ``k1 = f(x)``, ``k2 = f(x + h k1 / 2)``, ``k3 = f(x + h k2 / 2)``, ``k4 = f(x + h k3)``,
    ``x + h (k1 + 2 k2 + 2 k3 + k4) / 6``: local error O(h^5), global error O(h^4).
    """
    k1 = field(x)
    k2 = field(x + (0.5 * h) * k1)
    k3 = field(x + (0.5 * h) * k2)
    k4 = field(x + h * k3)
    return x + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def rk4_advance(field: VectorField, x: torch.Tensor, h: float, steps: int) -> torch.Tensor:
    """``x`` after ``steps`` RK4 updates of size ``h`` (no intermediate states kept)."""
    h = check_float("h", h, minimum=0.0, strict_min=True)
    steps = check_int("steps", steps, minimum=0)
    for _ in range(steps):
        x = rk4_step(field, x, h)
    return x


def rk4_trajectory(field: VectorField, x0: torch.Tensor, h: float, steps: int) -> torch.Tensor:
    """States ``x_0 .. x_steps`` of RK4 with step ``h`` from ``x0`` (shape ``(..., d)``):
    shape ``(..., steps + 1, d)``."""
    h = check_float("h", h, minimum=0.0, strict_min=True)
    steps = check_int("steps", steps, minimum=0)
    states = [x0]
    for _ in range(steps):
        states.append(rk4_step(field, states[-1], h))
    return torch.stack(states, dim=-2)


@functools.lru_cache(maxsize=256)
def _constant(values: tuple, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A system's parameters as a tensor, built once per (values, dtype, device): the vector fields run
    thousands of times on small batches, where rebuilding the tensors each call doubles the cost."""
    return torch.tensor(values, dtype=dtype, device=device)


# ----------------------------------------------------------------------------------------------------------
# Validation helpers
# ----------------------------------------------------------------------------------------------------------


def _check_box(name: str, box: object, dim: int) -> Box:
    """``dim`` (low, high) pairs of finite floats with low < high."""
    if not isinstance(box, tuple) or len(box) != dim:
        raise ValueError(f"{name} must be a tuple of {dim} (low, high) pairs; got {box!r}")
    out = []
    for i, pair in enumerate(box):
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise ValueError(f"{name}[{i}] must be a (low, high) pair; got {pair!r}")
        low = check_float(f"{name}[{i}][0]", pair[0])
        high = check_float(f"{name}[{i}][1]", pair[1])
        if not low < high:
            raise ValueError(f"{name}[{i}] must have low < high; got {pair!r}")
        out.append((low, high))
    return tuple(out)


def _check_points(name: str, points: object, dim: int) -> tuple[tuple[float, ...], ...]:
    """A non-empty tuple of ``dim``-tuples of finite floats (e.g. the well centres)."""
    if not isinstance(points, tuple) or not points:
        raise ValueError(f"{name} must be a non-empty tuple of {dim}-tuples; got {points!r}")
    out = []
    for i, p in enumerate(points):
        if not isinstance(p, tuple) or len(p) != dim:
            raise ValueError(f"{name}[{i}] must be a tuple of {dim} coordinates; got {p!r}")
        out.append(tuple(check_float(f"{name}[{i}][{j}]", v) for j, v in enumerate(p)))
    return tuple(out)


def _check_values(name: str, values: object, count: int, *, positive: bool) -> tuple[float, ...]:
    """``count`` finite floats (> 0 when ``positive``)."""
    if not isinstance(values, tuple) or len(values) != count:
        raise ValueError(f"{name} must be a tuple of {count} floats (one per centre); got {values!r}")
    return tuple(
        check_float(f"{name}[{i}]", v, minimum=0.0 if positive else None, strict_min=positive)
        for i, v in enumerate(values)
    )


def check_states(name: str, x: object, dim: int) -> torch.Tensor:
    """``x`` as a floating tensor of shape ``(..., dim)`` with finite entries (NumPy arrays are converted
    to float64 tensors); ``ValueError`` naming ``name`` otherwise."""
    if isinstance(x, np.ndarray):
        x = torch.from_numpy(np.asarray(x, dtype=np.float64))
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor or numpy.ndarray; got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"{name} must hold floating-point states; got dtype {x.dtype}")
    if x.ndim < 1 or x.shape[-1] != dim:
        raise ValueError(f"{name} must have shape (..., {dim}); got {tuple(x.shape)}")
    if not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return x


# ----------------------------------------------------------------------------------------------------------
# The common interface
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class System:
    """A continuous-time system ``x' = f(x)`` observed every ``dt`` (``substeps`` RK4 updates per step).

    Subclasses define ``dim``, ``_field`` (the vector field without argument checks) and either ``box``
    (the base reset box: uniform resets, as the paper's controlled systems) or ``initial_condition``
    (chaotic flows: perturbed copies of it, warmed up on the attractor).
    """

    dt: float
    substeps: int = 1

    name: ClassVar[str] = "system"

    def __post_init__(self) -> None:
        check_float("dt", self.dt, minimum=0.0, strict_min=True)
        check_int("substeps", self.substeps, minimum=1)

    @property
    def count(self) -> int | None:
        """The known basin count (evaluation proxies, block counts); None for the chaotic flows."""
        return None

    @property
    def dim(self) -> int:
        """State dimension."""
        raise NotImplementedError

    @property
    def box(self) -> Box | None:
        """The base reset box, one (low, high) per coordinate, or None (a flow warmed up on its attractor)."""
        return None

    def _field(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def vector_field(self, x: torch.Tensor | np.ndarray) -> torch.Tensor:
        """``f(x)`` for states of shape ``(..., dim)``."""
        return self._field(check_states("x", x, self.dim))

    def _step(self, x: torch.Tensor) -> torch.Tensor:
        h = self.dt / self.substeps
        for _ in range(self.substeps):
            x = rk4_step(self._field, x, h)
        return x

    def step(self, x: torch.Tensor | np.ndarray) -> torch.Tensor:
        """The stored-step map ``F_dt(x)``: ``substeps`` RK4 updates of size ``dt / substeps``."""
        return self._step(check_states("x", x, self.dim))

    def advance(self, x: torch.Tensor | np.ndarray, steps: int) -> torch.Tensor:
        """``F_dt`` applied ``steps`` times (only the end states are kept)."""
        x = check_states("x", x, self.dim)
        for _ in range(check_int("steps", steps, minimum=0)):
            x = self._step(x)
        return x

    def trajectories(self, x0: torch.Tensor | np.ndarray, steps: int) -> torch.Tensor:
        """Stored states ``x_0 .. x_steps`` from ``x0`` (shape ``(..., dim)``): ``(..., steps + 1, dim)``."""
        x = check_states("x0", x0, self.dim)
        states = [x]
        for _ in range(check_int("steps", steps, minimum=0)):
            states.append(self._step(states[-1]))
        return torch.stack(states, dim=-2)

    def with_dt(self, dt: float) -> System:
        """The same system observed every ``dt`` (same substeps per stored step)."""
        return dataclasses.replace(self, dt=dt)

    def box_tensors(self, *, dtype: torch.dtype = torch.float64, device: torch.device | str | None = None):
        """(low, high) of the reset box as tensors of shape ``(dim,)``."""
        if self.box is None:
            raise ValueError(f"{self.name} has no reset box; its initial states come from its attractor")
        low = torch.tensor([b[0] for b in self.box], dtype=dtype, device=device)
        high = torch.tensor([b[1] for b in self.box], dtype=dtype, device=device)
        return low, high

    def initial_states(
        self,
        n: int,
        seed: int,
        *,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str | None = None,
    ) -> torch.Tensor:
        """``n`` seeded initial states, shape ``(n, dim)``: uniform over the reset box (the paper's base
        reset law). Flows override this to warm perturbed states up onto their attractor."""
        n = check_int("n", n, minimum=1)
        generator = torch.Generator().manual_seed(check_seed("seed", seed))
        u = torch.rand(n, self.dim, generator=generator, dtype=torch.float64)
        low, high = self.box_tensors()
        return (low + (high - low) * u).to(dtype=dtype, device=device)


# ----------------------------------------------------------------------------------------------------------
# Gaussian wells
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class GaussianWells(System):
    """Gaussian wells with an independent rotation (the paper's multibasin appendix, its Gaussian-well
    equation):

        x' = -grad V(x) + omega(x) R x,   R x = (x2, -x1),
        V(x) = -sum_i a_i exp(-|x - c_i|^2 / (2 sigma_i^2)) + gamma (x1^4 + x2^4),
        omega(x) = omega + route_gain * C(x2),   C(x2) = sum_r exp(-(x2 - r)^2 / route_width),

    with ``r`` over ``route_levels``. ``route_gain = 0`` (the default) is the plain family; the
    Transition-routes four-well adds the corridor term with gain 0.3 at ``x2 = +-1.8``.
    """

    centers: tuple[tuple[float, float], ...]
    amplitudes: tuple[float, ...]
    sigmas: tuple[float, ...]
    omega: float
    gamma: float
    reset_box: Box
    route_gain: float = 0.0
    route_levels: tuple[float, ...] = (1.8, -1.8)
    route_width: float = 0.3
    key: str = "gaussian-wells"

    name: ClassVar[str] = "gaussian-wells"

    def __post_init__(self) -> None:
        super().__post_init__()
        centers = _check_points("centers", self.centers, 2)
        _check_values("amplitudes", self.amplitudes, len(centers), positive=True)
        _check_values("sigmas", self.sigmas, len(centers), positive=True)
        check_float("omega", self.omega)
        check_float("gamma", self.gamma, minimum=0.0)
        _check_box("reset_box", self.reset_box, 2)
        check_float("route_gain", self.route_gain)
        if not isinstance(self.route_levels, tuple):
            raise ValueError(f"route_levels must be a tuple of floats; got {self.route_levels!r}")
        for i, level in enumerate(self.route_levels):
            check_float(f"route_levels[{i}]", level)
        check_float("route_width", self.route_width, minimum=0.0, strict_min=True)
        keys = (centers, tuple(map(float, self.amplitudes)), tuple(float(s) ** 2 for s in self.sigmas))
        object.__setattr__(self, "_keys", keys)  # (centres, a_i, sigma_i^2) for _constant

    @property
    def dim(self) -> int:
        return 2

    @property
    def box(self) -> Box:
        return self.reset_box

    @property
    def count(self) -> int:
        """Number of wells: the known basin count of the instance."""
        return len(self.centers)

    def _params(self, x: torch.Tensor):
        return tuple(_constant(key, x.dtype, x.device) for key in self._keys)

    def potential(self, x: torch.Tensor | np.ndarray) -> torch.Tensor:
        """``V(x)`` for states of shape ``(..., 2)`` (for plots and for checking the gradient)."""
        x = check_states("x", x, 2)
        c, a, s2 = self._params(x)
        r2 = ((x[..., None, :] - c) ** 2).sum(-1)
        return -(a * torch.exp(-r2 / (2.0 * s2))).sum(-1) + self.gamma * (x**4).sum(-1)

    def _omega(self, x2: torch.Tensor) -> torch.Tensor | float:
        if self.route_gain == 0.0:
            return self.omega
        corridor = sum(torch.exp(-((x2 - level) ** 2) / self.route_width) for level in self.route_levels)
        return self.omega + self.route_gain * corridor

    def _field(self, x: torch.Tensor) -> torch.Tensor:
        c, a, s2 = self._params(x)
        d = x[..., None, :] - c  # (..., M, 2)
        g = a * torch.exp(-(d**2).sum(-1) / (2.0 * s2)) / s2  # (..., M): a_i e_i / sigma_i^2
        grad = (g[..., None] * d).sum(-2) + 4.0 * self.gamma * x**3
        x1, x2 = x[..., 0], x[..., 1]
        w = self._omega(x2)
        return torch.stack([-grad[..., 0] + w * x2, -grad[..., 1] - w * x1], dim=-1)


def polygon(count: int, radius: float, phase: float) -> tuple[tuple[float, float], ...]:
    """``p_i^(M)(r, phi) = r (cos(2 pi i / M + phi), sin(2 pi i / M + phi))``, ``i = 0 .. M-1``."""
    angles = [2 * math.pi * i / count + phase for i in range(count)]
    return tuple((radius * math.cos(a), radius * math.sin(a)) for a in angles)


def square_four_well() -> GaussianWells:
    """Square four-well: centres ``p^(4)(1.8, pi/4)``, ``(a, sigma) = (3.0, 0.5)``, ``(omega, gamma) =
    (1.0, 0.03)``, ``dt = 0.03``, box ``[-3.3, 3.3]^2`` (paper: multibasin appendix, Gaussian-well
    parameter table and the observation-interval/reset-box table; code: ``cal_square_4`` in
    ``skae/claude_catalog/paper_systems.py``)."""
    return GaussianWells(
        dt=0.03, centers=polygon(4, 1.8, math.pi / 4), amplitudes=(3.0,) * 4, sigmas=(0.5,) * 4,
        omega=1.0, gamma=0.03, reset_box=((-3.3, 3.3), (-3.3, 3.3)), key="square-4",
    )  # fmt: skip


def high_cross_three_well() -> GaussianWells:
    """High-cross three-well: centres ``p^(3)(1.8, pi/2)``, ``(a, sigma) = (3.0, 0.5)``, ``(omega, gamma)
    = (2.0, 0.03)``, ``dt = 0.03``, box ``[-3.3, 3.3]^2`` (same tables; code ``cal_high_cross_3``)."""
    return GaussianWells(
        dt=0.03, centers=polygon(3, 1.8, math.pi / 2), amplitudes=(3.0,) * 3, sigmas=(0.5,) * 3,
        omega=2.0, gamma=0.03, reset_box=((-3.3, 3.3), (-3.3, 3.3)), key="high-cross-3",
    )  # fmt: skip


def asymmetric_three_well() -> GaussianWells:
    """Asymmetric three-well: centres ``(0, 1.8), (-1.5, -0.9), (1.5, -0.9)`` with ``(a, sigma) = (2.5,
    0.55), (1.5, 0.4), (2.0, 0.5)``, ``(omega, gamma) = (1.0, 0.03)``, ``dt = 0.03``, box ``[-3, 3] x
    [-2.5, 3]`` (same tables; code ``cal_asymmetric_3``)."""
    return GaussianWells(
        dt=0.03, centers=((0.0, 1.8), (-1.5, -0.9), (1.5, -0.9)), amplitudes=(2.5, 1.5, 2.0),
        sigmas=(0.55, 0.4, 0.5), omega=1.0, gamma=0.03, reset_box=((-3.0, 3.0), (-2.5, 3.0)),
        key="asymmetric-3",
    )  # fmt: skip


def transition_routes_four_well() -> GaussianWells:
    """Transition-routes four-well: centres ``(+-1.8, +-1.8)``, ``a = 3.0``, ``sigma = 0.6``, ``gamma =
    0.03``, rotation ``(1.0 + 0.3 C(x2)) R x`` with ``C(x2) = exp(-(x2 - 1.8)^2 / 0.3) + exp(-(x2 + 1.8)^2
    / 0.3)``, ``dt = 0.02``, box ``[-3.5, 3.5]^2`` (paper: multibasin appendix, transition-routes
    equation and the reset-box table; code ``transition_routes_4``, whose ``0.12 x^3`` is ``4 gamma x^3``)."""
    return GaussianWells(
        dt=0.02, centers=((-1.8, 1.8), (1.8, 1.8), (-1.8, -1.8), (1.8, -1.8)), amplitudes=(3.0,) * 4,
        sigmas=(0.6,) * 4, omega=1.0, gamma=0.03, reset_box=((-3.5, 3.5), (-3.5, 3.5)),
        route_gain=0.3, route_levels=(1.8, -1.8), route_width=0.3, key="transition-routes-4",
    )  # fmt: skip


def random_wells(
    count: int,
    seed: int,
    *,
    spread: float = 2.0,
    min_separation: float = 1.4,
    dt: float = 0.03,
) -> GaussianWells:
    """A seeded random instance of the Gaussian-well family (ours, for the exploration notebook).

    Centres are drawn uniformly in the disc of radius ``spread`` and kept when at least
    ``min_separation`` from every earlier centre (rejection sampling); ``a ~ U(2, 3.5)``,
    ``sigma ~ U(0.4, 0.6)``, ``omega ~ U(0.5, 1.5)`` and ``gamma = 0.03`` span the paper's instances.
    The reset box is the centres' bounding box widened by 1.5, the default rule of the paper code's
    Gaussian-well class. A shallow well next to a deeper one need not hold a stable equilibrium, so an
    instance can have fewer attractors than wells (measured: 3 of seeds 0-7 at ``count=5`` have 4;
    none at 3 or 4).
    """
    count = check_int("count", count, minimum=1, maximum=12)
    rng = np.random.default_rng(check_seed("seed", seed))
    spread = check_float("spread", spread, minimum=0.0, strict_min=True)
    min_separation = check_float("min_separation", min_separation, minimum=0.0)
    centers: list[tuple[float, float]] = []
    for _ in range(100_000):
        if len(centers) == count:
            break
        r, phi = spread * math.sqrt(rng.uniform()), rng.uniform(0.0, 2 * math.pi)
        c = (r * math.cos(phi), r * math.sin(phi))
        if all(math.dist(c, o) >= min_separation for o in centers):
            centers.append(c)
    if len(centers) < count:
        raise ValueError(f"cannot place {count} centres {min_separation} apart within radius {spread}")
    xs, ys = [c[0] for c in centers], [c[1] for c in centers]
    return GaussianWells(
        dt=dt,
        centers=tuple(centers),
        amplitudes=tuple(float(v) for v in rng.uniform(2.0, 3.5, count)),
        sigmas=tuple(float(v) for v in rng.uniform(0.4, 0.6, count)),
        omega=float(rng.uniform(0.5, 1.5)),
        gamma=0.03,
        reset_box=((min(xs) - 1.5, max(xs) + 1.5), (min(ys) - 1.5, max(ys) + 1.5)),
        key=f"random-{count}-seed{seed}",
    )


# ----------------------------------------------------------------------------------------------------------
# Local-linear gates
# ----------------------------------------------------------------------------------------------------------


def _rotation(angle: float) -> np.ndarray:
    return np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])


@dataclass(frozen=True, kw_only=True)
class LocalLinearGates(System):
    """Local-linear gates (the paper's multibasin appendix, native gated systems; code
    ``GatedLocalLinear`` in ``skae/data.py``).

    Centres ``c_b = r_c (cos alpha_b, sin alpha_b)``, ``alpha_b = 2 pi b / 3``, ``r_c = 1.75``. Inside the
    core ``|x - c_b| <= 1.05``: ``x' = A_b (x - c_b)`` with ``A_b = Q(alpha_b) At_b Q(alpha_b)^T``.
    Elsewhere ``x' = G (x - c_s(x))`` with ``s(x)`` the nearest angular sector (the centre whose angle is
    closest to ``atan2(x2, x1)``) and ``G = [[-1.35, -0.9], [0.9, -1.35]]``. ``dt = 0.04``, box
    ``[-2.6, 2.6]^2``. Native label: the core's basin inside a core, the sector outside (the code's
    ``basin_label``); the cores lie inside their sectors, so it is the sector everywhere.
    """

    dt: float = 0.04
    center_radius: float = 1.75
    core_radius: float = 1.05
    templates: tuple[tuple[tuple[float, float], tuple[float, float]], ...] = (
        ((-0.9, -1.2), (1.2, -0.9)),
        ((-1.35, 0.2), (-0.3, -0.7)),
        ((-0.7, -0.1), (0.5, -1.2)),
    )
    gate: tuple[tuple[float, float], tuple[float, float]] = ((-1.35, -0.9), (0.9, -1.35))
    half_width: float = 2.6

    name: ClassVar[str] = "local-linear-gates"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_float("center_radius", self.center_radius, minimum=0.0, strict_min=True)
        check_float("core_radius", self.core_radius, minimum=0.0, strict_min=True)
        check_float("half_width", self.half_width, minimum=0.0, strict_min=True)
        if len(self.templates) != 3:
            raise ValueError(f"templates must hold 3 matrices (one per basin); got {len(self.templates)}")
        for name, m in [*((f"templates[{b}]", t) for b, t in enumerate(self.templates)), ("gate", self.gate)]:
            _check_points(name, m, 2)
            if len(m) != 2:
                raise ValueError(f"{name} must be a 2x2 matrix; got {m!r}")
        # Hashable copies of the derived constants (centres, core matrices, angles) for _constant.
        keys = (
            tuple(map(tuple, self.centers.tolist())),
            tuple(tuple(map(tuple, m)) for m in self.matrices.tolist()),
            tuple(self.angles.tolist()),
        )
        object.__setattr__(self, "_keys", keys)

    @property
    def dim(self) -> int:
        return 2

    @property
    def box(self) -> Box:
        return ((-self.half_width, self.half_width), (-self.half_width, self.half_width))

    @property
    def count(self) -> int:
        """Three basins."""
        return 3

    @property
    def angles(self) -> np.ndarray:
        """Centre angles ``alpha_b = 2 pi b / 3``."""
        return 2 * np.pi * np.arange(3) / 3

    @property
    def centers(self) -> np.ndarray:
        """The native centres ``c_b``, shape (3, 2)."""
        return self.center_radius * np.stack([np.cos(self.angles), np.sin(self.angles)], axis=1)

    @property
    def matrices(self) -> np.ndarray:
        """The core matrices ``A_b = Q(alpha_b) At_b Q(alpha_b)^T``, shape (3, 2, 2)."""
        pairs = zip(self.angles, self.templates, strict=True)
        return np.stack([_rotation(a) @ np.array(t) @ _rotation(a).T for a, t in pairs])

    def _sector(self, x: torch.Tensor) -> torch.Tensor:
        angles = torch.atan2(x[..., 1], x[..., 0])
        alpha = _constant(self._keys[2], x.dtype, x.device)
        delta = torch.remainder(angles[..., None] - alpha + math.pi, 2 * math.pi) - math.pi
        return delta.abs().argmin(-1)

    def _labels(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        c = _constant(self._keys[0], x.dtype, x.device)
        dist = torch.linalg.vector_norm(x[..., None, :] - c, dim=-1)
        nearest = dist.argmin(-1)
        in_core = dist.min(-1).values <= self.core_radius
        return torch.where(in_core, nearest, self._sector(x)), in_core

    def native_labels(self, x: torch.Tensor | np.ndarray) -> torch.Tensor:
        """The native basin label (0, 1, 2) of states of shape ``(..., 2)``."""
        return self._labels(check_states("x", x, 2))[0]

    def _field(self, x: torch.Tensor) -> torch.Tensor:
        label, in_core = self._labels(x)
        c = _constant(self._keys[0], x.dtype, x.device)[label]
        cores = _constant(self._keys[1], x.dtype, x.device)[label]
        gate = _constant(self.gate, x.dtype, x.device)
        m = torch.where(in_core[..., None, None], cores, gate)
        return (m @ (x - c)[..., None])[..., 0]


# ----------------------------------------------------------------------------------------------------------
# Chaotic flows
# ----------------------------------------------------------------------------------------------------------


#: A flow state with a coordinate beyond this (native units) has left the attractor (the four flows'
#: attractors stay within |x_i| < 60). Sakarya has unbounded orbits: about 1 of 300 starts perturbed from
#: (1, 1, 1) grows without bound (checked with 4 to 256 RK4 substeps: its size keeps growing with the
#: resolution), and at one substep it overflows to inf. :meth:`ChaoticFlow.initial_states` replaces a start
#: that escapes during the warm-up, :func:`neurips26.skae.data.bounded_trajectories` one that escapes later.
ESCAPE_BOUND = 100.0
#: How many batches of ``n`` perturbed starts :meth:`ChaoticFlow.initial_states` draws at most.
MAX_DRAWS = 8


@dataclass(frozen=True, kw_only=True)
class ChaoticFlow(System):
    """A chaotic flow: initial states are ``initial_condition`` plus Gaussian noise of standard deviation
    ``spread``, rolled ``warmup`` stored steps onto the attractor (as the paper's Dysts caches: default
    initial condition, Gaussian perturbations, a 2,000-step warm-up). A start that escapes during the
    warm-up (non-finite, or beyond :data:`ESCAPE_BOUND`) is replaced by the next bounded one of further
    draws from the same generator, so a seed gives the same states. Ours: ``spread`` is a fixed
    standard deviation, not 0.2 times the Dysts coordinate standard deviation, and states stay in native
    coordinates (the paper standardises them with Dysts metadata; standardising is left to the data
    pipeline)."""

    spread: float = 0.5
    warmup: int = 2000

    initial_condition: ClassVar[tuple[float, ...]] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        check_float("spread", self.spread, minimum=0.0)
        check_int("warmup", self.warmup, minimum=0)

    @property
    def dim(self) -> int:
        return len(self.initial_condition)

    def _initial_condition(self) -> tuple[float, ...]:
        return self.initial_condition

    def initial_states(
        self,
        n: int,
        seed: int,
        *,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str | None = None,
    ) -> torch.Tensor:
        """``n`` seeded states on the attractor, shape ``(n, dim)`` (computed in float64, then cast)."""
        n = check_int("n", n, minimum=1)
        generator = torch.Generator().manual_seed(check_seed("seed", seed))
        centre = torch.tensor(self._initial_condition(), dtype=torch.float64)
        kept: list[torch.Tensor] = []
        count = 0
        for _ in range(MAX_DRAWS):
            noise = torch.randn(n, self.dim, generator=generator, dtype=torch.float64)
            x = (centre + self.spread * noise).to(device=device)
            for _ in range(self.warmup):
                x = self._step(x)
            bounded = torch.isfinite(x).all(-1) & (x.abs().amax(-1) <= ESCAPE_BOUND)
            kept.append(x[bounded])
            count += int(bounded.sum())
            if count >= n:
                return torch.cat(kept)[:n].to(dtype=dtype)
        raise RuntimeError(f"{self.name}: fewer than {n} of {MAX_DRAWS * n} perturbed starts stayed bounded")


#: How the flows' substeps were chosen (ours): the fewest RK4 updates per stored step whose one-step
#: error, against 64 updates, is below 1e-6 times the norm of the attractor's coordinatewise standard
#: deviation, measured on 64 warmed-up states (errors at 1/2/5 substeps: Shimizu-Morioka 8e-8/5e-9/1e-10,
#: Sakarya 6e-7/4e-8/9e-10, Lorenz-63 4e-4/2e-5/6e-7, Lorenz-96 5e-4/3e-5/7e-7).
SUBSTEP_RULE = 1e-6

#: Dysts integration intervals of the paper's Dysts inventory (its table of native dt).
SHIMIZU_MORIOKA_NATIVE_DT = 2.4080013336e-3
SAKARYA_NATIVE_DT = 9.9704617436e-4


@dataclass(frozen=True, kw_only=True)
class ShimizuMorioka(ChaoticFlow):
    """Shimizu-Morioka: ``x' = y``, ``y' = x - a y - x z``, ``z' = -b z + x^2`` with ``a = 0.85``,
    ``b = 0.5``, observed at 30x its Dysts interval, ``dt = 30 * 2.4080013336e-3 = 0.072240040007`` (paper:
    Dysts inventory). Ours: the initial condition ``(0.1, 0, 0.1)`` and one RK4 update per stored step,
    the fewest whose one-step error against 64 substeps is below 1e-6 of the attractor's scale (measured
    8e-8; see :data:`SUBSTEP_RULE`)."""

    dt: float = 30 * SHIMIZU_MORIOKA_NATIVE_DT
    substeps: int = 1
    a: float = 0.85
    b: float = 0.5

    name: ClassVar[str] = "shimizu-morioka"
    initial_condition: ClassVar[tuple[float, ...]] = (0.1, 0.0, 0.1)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_float("a", self.a)
        check_float("b", self.b)

    def _field(self, x: torch.Tensor) -> torch.Tensor:
        x1, x2, x3 = x.unbind(-1)
        return torch.stack([x2, x1 - self.a * x2 - x1 * x3, -self.b * x3 + x1**2], dim=-1)


@dataclass(frozen=True, kw_only=True)
class Sakarya(ChaoticFlow):
    """Sakarya: ``x' = a x + h y + s y z``, ``y' = -b y - p x + q x z``, ``z' = c z - r x y`` with
    ``a = -1, b = c = h = p = s = 1, q = 0.4, r = 0.3``, observed at ``dt = 30 * 9.9704617436e-4 =
    0.029911385231`` (paper: Dysts inventory). Ours: initial condition ``(1, 1, 1)``, one RK4 update per
    stored step (one-step error 6e-7 of the attractor's scale; :data:`SUBSTEP_RULE`)."""

    dt: float = 30 * SAKARYA_NATIVE_DT
    substeps: int = 1
    a: float = -1.0
    b: float = 1.0
    c: float = 1.0
    h: float = 1.0
    p: float = 1.0
    q: float = 0.4
    r: float = 0.3
    s: float = 1.0

    name: ClassVar[str] = "sakarya"
    initial_condition: ClassVar[tuple[float, ...]] = (1.0, 1.0, 1.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        for field_name in ("a", "b", "c", "h", "p", "q", "r", "s"):
            check_float(field_name, getattr(self, field_name))

    def _field(self, x: torch.Tensor) -> torch.Tensor:
        x1, x2, x3 = x.unbind(-1)
        return torch.stack(
            [
                self.a * x1 + self.h * x2 + self.s * x2 * x3,
                -self.b * x2 - self.p * x1 + self.q * x1 * x3,
                self.c * x3 - self.r * x1 * x2,
            ],
            dim=-1,
        )


@dataclass(frozen=True, kw_only=True)
class Lorenz63(ChaoticFlow):
    """Lorenz-63: ``x' = sigma (y - x)``, ``y' = x (rho - z) - y``, ``z' = x y - beta z`` with the classical
    ``sigma = 10, rho = 28, beta = 8/3`` (Lorenz 1963). Ours (not in the paper): ``dt = 0.03``, 5 RK4
    substeps (one-step error 6e-7 of the attractor's scale; :data:`SUBSTEP_RULE`), initial condition
    ``(1, 1, 1)``."""

    dt: float = 0.03
    substeps: int = 5
    sigma: float = 10.0
    rho: float = 28.0
    beta: float = 8.0 / 3.0
    spread: float = 1.0

    name: ClassVar[str] = "lorenz-63"
    initial_condition: ClassVar[tuple[float, ...]] = (1.0, 1.0, 1.0)

    def __post_init__(self) -> None:
        super().__post_init__()
        for field_name in ("sigma", "rho", "beta"):
            check_float(field_name, getattr(self, field_name))

    def _field(self, x: torch.Tensor) -> torch.Tensor:
        x1, x2, x3 = x.unbind(-1)
        return torch.stack(
            [self.sigma * (x2 - x1), x1 * (self.rho - x3) - x2, x1 * x2 - self.beta * x3], dim=-1
        )


@dataclass(frozen=True, kw_only=True)
class Lorenz96(ChaoticFlow):
    """Lorenz-96: ``x_i' = (x_{i+1} - x_{i-2}) x_{i-1} - x_i + F`` (indices mod d) with forcing ``F = 8``
    and stored interval ``dt = 0.05`` as the paper's high-dimensional appendix (which uses d = 128);
    d = 40 here by default (ours, CPU scale), 5 RK4 substeps (step 0.01; one-step error 7e-7 of the
    attractor's scale, :data:`SUBSTEP_RULE`), initial condition ``F`` everywhere with ``x_0 = F + 0.01``
    (the standard nudge off the unstable equilibrium) plus noise."""

    dt: float = 0.05
    substeps: int = 5
    size: int = 40
    forcing: float = 8.0
    spread: float = 1.0

    name: ClassVar[str] = "lorenz-96"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int("size", self.size, minimum=4)
        check_float("forcing", self.forcing)

    @property
    def dim(self) -> int:
        return self.size

    def _initial_condition(self) -> tuple[float, ...]:
        return (self.forcing + 0.01,) + (self.forcing,) * (self.size - 1)

    def _field(self, x: torch.Tensor) -> torch.Tensor:
        ahead = torch.roll(x, -1, dims=-1)
        back1 = torch.roll(x, 1, dims=-1)
        back2 = torch.roll(x, 2, dims=-1)
        return (ahead - back2) * back1 - x + self.forcing


# ----------------------------------------------------------------------------------------------------------
# Evaluation labels: nearest-centre proxies and the centre margin
# ----------------------------------------------------------------------------------------------------------


def farthest_point_init(points: np.ndarray, k: int) -> np.ndarray:
    """``k`` seeds for k-means: the first point, then repeatedly the point farthest from those chosen
    (the paper's deterministic initialisation). ``points`` has shape ``(n, d)``; returns ``(k, d)``."""
    k = check_int("k", k, minimum=1)
    if points.ndim != 2 or len(points) < k:
        raise ValueError(f"points must have shape (n >= {k}, d); got {points.shape}")
    chosen = [0]
    dist = np.linalg.norm(points - points[0], axis=1)
    for _ in range(1, k):
        nxt = int(np.argmax(dist))
        chosen.append(nxt)
        dist = np.minimum(dist, np.linalg.norm(points - points[nxt], axis=1))
    return points[chosen].copy()


def proxy_centers(
    system: System,
    endpoints: torch.Tensor | np.ndarray,
    *,
    count: int | None = None,
    roll_steps: int = 5000,
    seed: int = 0,
    max_iter: int = 25,
) -> torch.Tensor:
    """Estimated basin centres for a catalog system without native labels (the paper's alignment
    evaluator): roll the trajectory ``endpoints`` (shape ``(n, dim)``) ``roll_steps`` more stored steps,
    then k-means at the known ``count`` (default ``system.count`` or the number of wells) — scikit-learn's
    ``KMeans`` with the farthest-point initialisation from the first endpoint, ``n_init=1``, at most
    ``max_iter`` Lloyd updates and ``random_state=seed``. Returns the centres, shape ``(count, dim)``,
    float64. Evaluation only: no label or count reaches a model."""
    from sklearn.cluster import KMeans

    x = check_states("endpoints", endpoints, system.dim)
    if x.ndim != 2:
        raise ValueError(f"endpoints must have shape (n, {system.dim}); got {tuple(x.shape)}")
    if count is None:
        count = system.count
    if count is None:
        raise ValueError(f"count is needed for {system.name}, which has no known basin count")
    count = check_int("count", count, minimum=1, maximum=len(x))
    check_int("max_iter", max_iter, minimum=1)
    rolled = system.advance(x.to(torch.float64), check_int("roll_steps", roll_steps, minimum=0))
    points = rolled.cpu().numpy()
    if not np.all(np.isfinite(points)):
        raise ValueError("the rolled endpoints diverged (non-finite); check the system and dt")
    km = KMeans(
        n_clusters=count,
        init=farthest_point_init(points, count),
        n_init=1,
        max_iter=max_iter,
        random_state=check_seed("seed", seed),
        algorithm="lloyd",
    ).fit(points)
    return torch.from_numpy(km.cluster_centers_.astype(np.float64))


def _center_distances(x: torch.Tensor | np.ndarray, centers: torch.Tensor | np.ndarray) -> torch.Tensor:
    c = centers if isinstance(centers, torch.Tensor) else torch.from_numpy(np.asarray(centers, np.float64))
    if c.ndim != 2 or len(c) < 1:
        raise ValueError(f"centers must have shape (k, d); got {tuple(c.shape)}")
    x = check_states("x", x, c.shape[1])
    return torch.linalg.vector_norm(x[..., None, :] - c.to(dtype=x.dtype, device=x.device), dim=-1)


def nearest_center(x: torch.Tensor | np.ndarray, centers: torch.Tensor | np.ndarray) -> torch.Tensor:
    """The index of the nearest centre for states of shape ``(..., d)`` (the proxy label)."""
    return _center_distances(x, centers).argmin(-1)


def center_margin(x: torch.Tensor | np.ndarray, centers: torch.Tensor | np.ndarray) -> torch.Tensor:
    """``d2 - d1``: the distance to the second-nearest centre minus that to the nearest (>= 0). Large
    means the nearest-centre assignment is well separated from its runner-up (not a distance to a basin
    boundary). Needs at least two centres."""
    d = _center_distances(x, centers)
    if d.shape[-1] < 2:
        raise ValueError("centers must hold at least two centres for a margin")
    two = torch.topk(d, 2, dim=-1, largest=False).values
    return two[..., 1] - two[..., 0]


# ----------------------------------------------------------------------------------------------------------
# The hard-pool reset sampler
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HardPoolConfig:
    """The paper's perturbation-sensitive, high-transient reset (its experimental-details appendix):
    score ``candidates`` uniform box resets by perturbation growth plus late motion, keep the top
    ``pool``, and draw each training reset from that pool with probability ``pool_probability``.
    Spans ``s`` are the box's coordinatewise widths."""

    candidates: int = 4096
    pool: int = 1024
    probes: int = 4
    probe_scale: float = 0.04
    horizon: int = 32
    motion_from: int = 24
    motion_weight: float = 0.5
    pool_probability: float = 0.5
    jitter: float = 0.01

    def __post_init__(self) -> None:
        check_int("candidates", self.candidates, minimum=1)
        check_int("pool", self.pool, minimum=1, maximum=self.candidates)
        check_int("probes", self.probes, minimum=1)
        check_float("probe_scale", self.probe_scale, minimum=0.0, strict_min=True)
        check_int("horizon", self.horizon, minimum=1)
        check_int("motion_from", self.motion_from, minimum=0, maximum=self.horizon - 1)
        check_float("motion_weight", self.motion_weight, minimum=0.0)
        check_float("pool_probability", self.pool_probability, minimum=0.0, maximum=1.0)
        check_float("jitter", self.jitter, minimum=0.0)


class HardPoolSampler:
    """Training resets for a box-reset system (the paper's "hard pool"; no labels or boundaries used).

    Construction (seeded): draw ``candidates`` uniform box resets ``x``; for each, ``probes`` Gaussian
    perturbations of coordinatewise standard deviation ``probe_scale * s``, clipped to the box; roll all
    ``1 + probes`` states ``horizon`` stored steps. Score =
    ``mean_j |x^j_H - x_H| / |probe_scale s|  +  motion_weight * mean_{all} |x_H - x_{motion_from}| / |s|``
    (perturbation growth plus late motion). The top ``pool`` candidates form the pool.

    :meth:`sample`: each reset comes from the pool with probability ``pool_probability`` (a uniform pool
    point plus clipped Gaussian jitter of standard deviation ``jitter * s``), otherwise from the base
    uniform box law. Ours: one seeded generator per call rather than the paper code's per-candidate seed
    offsets (its eight cycled fixed batches are not reproduced; fresh resets are drawn every call).
    """

    def __init__(self, system: System, config: HardPoolConfig | None = None, *, seed: int) -> None:
        if not isinstance(system, System):
            raise TypeError(f"system must be a System; got {type(system).__name__}")
        if system.box is None:
            raise ValueError(f"system {system.name} has no reset box; the hard pool needs one")
        self.system = system
        self.config = config if config is not None else HardPoolConfig()
        if not isinstance(self.config, HardPoolConfig):
            raise TypeError(f"config must be a HardPoolConfig; got {type(self.config).__name__}")
        self.seed = check_seed("seed", seed)
        self.low, self.high = system.box_tensors()
        self.span = self.high - self.low
        cfg = self.config
        generator = torch.Generator().manual_seed(sub_seed(self.seed, 1))
        base = system.initial_states(cfg.candidates, seed=sub_seed(self.seed, 0))
        noise = torch.randn(cfg.candidates, cfg.probes, system.dim, generator=generator, dtype=torch.float64)
        probes = self._clip(base[:, None, :] + cfg.probe_scale * self.span * noise)
        states = torch.cat([base[:, None, :], probes], dim=1)  # (C, 1 + probes, d)
        late = system.advance(states, cfg.motion_from)
        end = system.advance(late, cfg.horizon - cfg.motion_from)
        growth = torch.linalg.vector_norm(end[:, 1:] - end[:, :1], dim=-1).mean(1)
        growth = growth / torch.linalg.vector_norm(cfg.probe_scale * self.span)
        motion = torch.linalg.vector_norm(end - late, dim=-1).mean(1) / torch.linalg.vector_norm(self.span)
        #: Each candidate's score, shape (candidates,); the pool is the top ``pool`` of them.
        self.scores = growth + cfg.motion_weight * motion
        self.candidates = base
        order = torch.argsort(self.scores, descending=True, stable=True)
        #: The pool, shape (pool, dim), highest score first.
        self.pool = base[order[: cfg.pool]]

    def _clip(self, x: torch.Tensor) -> torch.Tensor:
        return torch.maximum(torch.minimum(x, self.high.to(x)), self.low.to(x))

    def sample(
        self,
        n: int,
        seed: int,
        *,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str | None = None,
    ) -> torch.Tensor:
        """``n`` training resets, shape ``(n, dim)``, deterministic in ``seed``."""
        n = check_int("n", n, minimum=1)
        cfg = self.config
        generator = torch.Generator().manual_seed(check_seed("seed", seed))
        use_pool = torch.rand(n, generator=generator, dtype=torch.float64) < cfg.pool_probability
        index = torch.randint(len(self.pool), (n,), generator=generator)
        jitter = torch.randn(n, self.system.dim, generator=generator, dtype=torch.float64)
        uniform = torch.rand(n, self.system.dim, generator=generator, dtype=torch.float64)
        hard = self._clip(self.pool[index] + cfg.jitter * self.span * jitter)
        base = self.low + self.span * uniform
        return torch.where(use_pool[:, None], hard, base).to(dtype=dtype, device=device)


# ----------------------------------------------------------------------------------------------------------
# The chapter's roster
# ----------------------------------------------------------------------------------------------------------

#: The chapter's systems by key; each value builds a fresh instance with the documented parameters.
SYSTEMS: dict[str, Callable[[], System]] = {
    "square-4": square_four_well,
    "high-cross-3": high_cross_three_well,
    "asymmetric-3": asymmetric_three_well,
    "transition-routes-4": transition_routes_four_well,
    "local-linear-gates": LocalLinearGates,
    "shimizu-morioka": ShimizuMorioka,
    "sakarya": Sakarya,
    "lorenz-63": Lorenz63,
    "lorenz-96": Lorenz96,
}

#: The five controlled multibasin systems (known basin counts; box resets).
CONTROLLED = ("square-4", "high-cross-3", "asymmetric-3", "transition-routes-4", "local-linear-gates")

#: The three low-dimensional chaotic flows (Lorenz-96 is the separate high-dimensional check).
FLOWS = ("shimizu-morioka", "sakarya", "lorenz-63")


def make_system(key: str) -> System:
    """A fresh instance of the system named ``key`` (one of :data:`SYSTEMS`)."""
    return SYSTEMS[check_choice("key", key, tuple(SYSTEMS))]()
