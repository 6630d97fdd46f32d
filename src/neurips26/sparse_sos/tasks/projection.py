"""Task 6: project a point ``p = θ`` onto a non-convex planar set ``{x : g(x) ≥ 0}`` by a Putinar certificate.

``g₁(x) = x₁² + 4x₂² + x₁³ − 1``: the outside of a cubic-perturbed ellipse, non-convex, cut to the disc
``g₂(x) = 4 − ‖x‖² ≥ 0`` (which keeps the moment relaxation bounded: Archimedean). The SOS program (order
``d``)

    max γ   s.t.   ‖x − p‖² − γ = σ₀ + σ₁ g₁ + σ₂ g₂,   σ_j SOS,

is :func:`~neurips26.sparse_sos.assemble.assemble_sos` with two constraints; ``p`` enters ``b`` through the
coefficients of ``‖x − p‖² = x₁² + x₂² − 2p₁x₁ − 2p₂x₂ + ‖p‖²``. When the relaxation is tight the moment
matrix has rank one and the first moments ``x̂ = (y_{e₁}, y_{e₂})`` are the projection. The sparse
formulation splits the Gram bases by TSSOS term sparsity; the dense one keeps one block per SOS multiplier.
"""

from __future__ import annotations

import numpy as np
import torch

from neurips26.sparse_sos.assemble import SOSProgram, assemble_sos
from neurips26.sparse_sos.polynomial import SparsePolynomial
from neurips26.sparse_sos.tasks.base import FORMULATIONS, ConicData, TaskInstance
from neurips26.sparse_sos.tasks.chain_quartic import first_moments
from neurips26.validation import check_choice, check_int, check_seed

_F64 = torch.float64
SUPPORT = ((0, 0), (1, 0), (0, 1), (2, 0), (0, 2))  # 1, x₁, x₂, x₁², x₂²


def constraints() -> tuple[SparsePolynomial, SparsePolynomial]:
    """``g₁ = x₁² + 4x₂² + x₁³ − 1`` and ``g₂ = 4 − x₁² − x₂²``."""
    g1 = SparsePolynomial(
        2, ((2, 0), (0, 2), (3, 0), (0, 0)), torch.tensor([1.0, 4.0, 1.0, -1.0], dtype=_F64)
    )
    g2 = SparsePolynomial(2, ((0, 0), (2, 0), (0, 2)), torch.tensor([4.0, -1.0, -1.0], dtype=_F64))
    return g1, g2


def in_set(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """Whether ``g₁ ≥ 0`` and ``g₂ ≥ 0``."""
    return (x1**2 + 4 * x2**2 + x1**3 - 1 >= 0) & (4 - x1**2 - x2**2 >= 0)


def distance_coefficients(p: torch.Tensor) -> torch.Tensor:
    """The coefficients of ``‖x − p‖²`` on :data:`SUPPORT` (differentiable in ``p``)."""
    if not isinstance(p, torch.Tensor) or tuple(p.shape) != (2,):
        raise ValueError(f"theta must be a tensor of shape (2,); got {getattr(p, 'shape', type(p))}")
    p = p.to(_F64)
    one = torch.ones((), dtype=_F64, device=p.device)
    return torch.stack([(p**2).sum(), -2 * p[0], -2 * p[1], one, one])


def projection_program(p: torch.Tensor, order: int = 2, *, sparse: bool = True) -> SOSProgram:
    """The Putinar program for the point ``p`` at relaxation ``order`` (term-sparse when ``sparse``)."""
    order = check_int("order", order, minimum=2, maximum=6)
    f = SparsePolynomial(2, SUPPORT, distance_coefficients(p).detach())
    return assemble_sos(f, order, ((0, 1),), constraints(), term_sparsity=sparse)


def grid_projection(p: np.ndarray, *, step: float = 1e-3) -> tuple[np.ndarray, float]:
    """The brute-force projection: the nearest point of the set on a grid of spacing ``step`` over the
    disc ``‖x‖ ≤ 2`` (``(x̂, distance²)``; accurate to about ``step``)."""
    p = np.asarray(p, dtype=float)
    axis = np.arange(-2.0, 2.0 + step, step)
    best, best_d = p.copy(), np.inf
    for x1 in np.array_split(axis, 16):
        X1, X2 = np.meshgrid(x1, axis, indexing="ij")
        d = np.where(in_set(X1, X2), (X1 - p[0]) ** 2 + (X2 - p[1]) ** 2, np.inf)
        k = np.unravel_index(int(np.argmin(d)), d.shape)
        if d[k] < best_d:
            best, best_d = np.array([X1[k], X2[k]]), float(d[k])
    return best, best_d


def projection_instance(size: int = 2, seed: int = 0, formulation: str = "sparse") -> TaskInstance:
    """Task 6 as a :class:`~neurips26.sparse_sos.tasks.base.TaskInstance`: ``size`` is the relaxation order,
    ``θ = p`` enters ``b``; the value is ``γ*`` (the squared distance when tight); the solution loss is
    ``‖x̂ − t‖²`` of the extracted projection ``x̂`` against a seeded target ``t``."""
    check_choice("formulation", formulation, FORMULATIONS)
    seed = check_seed("seed", seed)
    rng = np.random.default_rng(seed)
    # a point inside the ellipse (outside the set), off its centre so that the projection is unique
    p0 = torch.as_tensor([rng.uniform(-0.4, 0.4), rng.uniform(0.1, 0.3)], dtype=_F64)
    target = torch.as_tensor(rng.standard_normal(2), dtype=_F64)
    program = projection_program(p0, size, sparse=formulation == "sparse")
    rows = torch.as_tensor(program.support_rows)

    def data(theta: torch.Tensor) -> ConicData:
        c = distance_coefficients(theta)
        b = torch.zeros(program.conic.shape[0], dtype=_F64, device=c.device)
        return ConicData(b=b.index_put((rows.to(c.device),), c))

    def loss(x: torch.Tensor, y: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return ((first_moments(program, y) - target.to(y.device)) ** 2).sum()

    return TaskInstance("projection", size, formulation, program.conic, p0, data, -1.0, len(SUPPORT), loss)


def projection_estimate(instance_program: SOSProgram, y: np.ndarray) -> np.ndarray:
    """``x̂ = (y_{e₁}, y_{e₂})`` as numpy."""
    return first_moments(instance_program, torch.as_tensor(y)).numpy()
