"""Task 5: a certified decay margin of a feedback-controlled pendulum, by an SOS Lyapunov certificate.

The damped pendulum ``ẋ₁ = x₂, ẋ₂ = −a sin x₁ − b x₂ + u`` with the cubic Taylor model
``sin x₁ ≈ x₁ − x₁³/6`` and state feedback ``u = −θ₁x₁ − θ₂x₂``. The certificate is an even polynomial
``V(x) = Σ_{2 ≤ |α| ≤ D, |α| even} v_α x^α`` (``D`` = the instance's size), normalised by
``v_{(2,0)} + v_{(0,2)} = 1`` so that the value is bounded, and

    max ρ   s.t.   V − ε‖x‖² = σ_V,      −V̇ − ρ‖x‖² = σ₀ + σ₁ (r² − ‖x‖²),      σ's SOS,

so ``V̇ ≤ −ρ‖x‖²`` on the disc ``‖x‖ ≤ r`` (Putinar). ``V̇ = ∇V · f_θ`` is bilinear in ``V``'s coefficients
and ``θ``: ``θ`` enters ``A``'s values. Every polynomial here is even (``f`` is odd), so the sparse
formulation splits each Gram basis into its odd- and even-degree monomials (sign symmetry, an exact
reduction), the dense one keeps one block per SOS polynomial. Bases start at degree 1: the identities vanish
to second order at the origin, so a constant monomial would force zero rows into the Gram blocks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from neurips26.sparse_sos.conic import BlockConicProgram
from neurips26.sparse_sos.polynomial import Monomial, add
from neurips26.sparse_sos.svec import svec_dim, triangle_indices
from neurips26.sparse_sos.tasks.base import FORMULATIONS, ConicData, TaskInstance
from neurips26.sparse_sos.tasks.oscillator import AffineMatrix, affine_matrix
from neurips26.validation import check_choice, check_float, check_int, check_seed

_F64 = torch.float64


def _monomials(low: int, high: int) -> list[Monomial]:
    return [(d - k, k) for d in range(low, high + 1) for k in range(d + 1)]


@dataclass(frozen=True, eq=False)
class PendulumProgram:
    """The certificate's conic program; ``A = A₀ + θ₁ A₁ + θ₂ A₂`` (:class:`AffineMatrix`)."""

    conic: BlockConicProgram
    affine: AffineMatrix
    v_monomials: tuple[Monomial, ...]
    rho: int

    def a_values(self, theta: torch.Tensor) -> torch.Tensor:
        V = torch.as_tensor(self.affine.values, dtype=_F64, device=theta.device)
        return torch.cat([torch.ones(1, dtype=_F64, device=theta.device), theta.to(_F64)]) @ V


def pendulum_program(
    degree: int,
    theta: np.ndarray,
    *,
    sparse: bool = True,
    a: float = 1.0,
    b: float = 0.2,
    radius: float = 1.0,
    eps: float = 1e-3,
) -> PendulumProgram:
    """Assemble the program (module docstring) for ``V`` of even ``degree``."""
    degree = check_int("degree", degree, minimum=2, maximum=8)
    if degree % 2:
        raise ValueError(f"degree must be even; got {degree}")
    radius = check_float("radius", radius, minimum=0.0, strict_min=True)
    eps = check_float("eps", eps, minimum=0.0)
    v_monos = [m for m in _monomials(2, degree) if sum(m) % 2 == 0]
    bases = {
        "V": _monomials(1, degree // 2),
        "s0": _monomials(1, degree // 2 + 1),
        "s1": _monomials(1, degree // 2),
    }
    blocks: list[tuple[str, list[Monomial]]] = []
    for name, basis in bases.items():
        parts = [[m for m in basis if sum(m) % 2 == p] for p in (1, 0)] if sparse else [basis]
        blocks += [(name, part) for part in parts if part]
    terms: list[
        tuple[tuple[str, Monomial] | str, int, float, int]
    ] = []  # (row key, column, value, component)
    for k, alpha in enumerate(v_monos):
        terms.append((("V", alpha), k, 1.0, 0))
        a1, a2 = alpha
        if a1:  # ∂V/∂x₁ · x₂
            terms.append((("D", add(alpha, (-1, 1))), k, -a1, 0))
        if a2:  # ∂V/∂x₂ · (−(a + θ₁)x₁ + (a/6)x₁³ − (b + θ₂)x₂), all negated (−V̇)
            terms.append((("D", add(alpha, (1, -1))), k, a2 * a, 0))
            terms.append((("D", add(alpha, (1, -1))), k, a2, 1))
            terms.append((("D", add(alpha, (3, -1))), k, -a2 * a / 6, 0))
            terms.append((("D", alpha), k, a2 * b, 0))
            terms.append((("D", alpha), k, a2, 2))
    rho = len(v_monos)
    for e in ((2, 0), (0, 2)):
        terms.append((("D", e), rho, -1.0, 0))
        terms.append(("norm", v_monos.index(e), 1.0, 0))
    column = rho + 1
    g = [((0, 0), radius**2), ((2, 0), -1.0), ((0, 2), -1.0)]
    for name, basis in blocks:
        rows_i, cols_j = triangle_indices(len(basis))
        for e, (i, j) in enumerate(zip(rows_i, cols_j, strict=True)):
            scale = 1.0 if i == j else math.sqrt(2.0)
            product = add(basis[i], basis[j])
            if name == "V":
                terms.append((("V", product), column + e, -scale, 0))
            elif name == "s0":
                terms.append((("D", product), column + e, -scale, 0))
            else:
                terms += [(("D", add(product, d)), column + e, -scale * c, 0) for d, c in g]
        column += svec_dim(len(basis))
    keys = sorted({t[0] for t in terms}, key=str)
    row_of = {key: r for r, key in enumerate(keys)}
    zero = len(keys)
    triplets = [(row_of[key], col, value, comp) for key, col, value, comp in terms]
    triplets += [(zero + k, rho + 1 + k, -1.0, 0) for k in range(column - rho - 1)]
    m = zero + column - rho - 1
    affine = affine_matrix(triplets, (m, column), 3)
    rhs = np.zeros(m)
    rhs[row_of["norm"]] = 1.0
    for e in ((2, 0), (0, 2)):
        rhs[row_of[("V", e)]] = eps
    q = np.zeros(column)
    q[rho] = -1.0
    A0 = affine.matrix(np.concatenate([[1.0], np.asarray(theta, dtype=float)]))
    conic = BlockConicProgram(A0, rhs, q, zero, 0, tuple(len(basis) for _, basis in blocks))
    return PendulumProgram(conic, affine, tuple(v_monos), rho)


def pendulum_instance(size: int = 4, seed: int = 0, formulation: str = "sparse") -> TaskInstance:
    """Task 5 as a :class:`~neurips26.sparse_sos.tasks.base.TaskInstance`: ``size`` = the degree of ``V``;
    ``θ`` (the gain, ``θ₀ = (1, 1) + 0.1·N(0, 1)`` from ``seed``) enters ``A``'s values; the value is the
    certified margin ``ρ*``; the solution loss is ``‖P‖²_F`` of ``V``'s quadratic part ``xᵀPx`` (the local
    Lyapunov matrix). Only that part is unique: ``ρ*`` is set near the origin, so for ``size ≥ 4`` the
    quartic coefficients of an optimal ``V`` form a face, and a loss on them has no derivative."""
    check_choice("formulation", formulation, FORMULATIONS)
    rng = np.random.default_rng(check_seed("seed", seed))
    theta0 = torch.as_tensor(1.0 + 0.1 * rng.standard_normal(2), dtype=_F64)
    prog = pendulum_program(size, theta0.numpy(), sparse=formulation == "sparse")

    def data(theta: torch.Tensor) -> ConicData:
        if not isinstance(theta, torch.Tensor) or tuple(theta.shape) != (2,):
            raise ValueError("theta must be a tensor of shape (2,)")
        return ConicData(a_values=prog.a_values(theta))

    quadratic = [prog.v_monomials.index(e) for e in ((2, 0), (1, 1), (0, 2))]
    weights = torch.tensor([1.0, 0.5, 1.0], dtype=_F64)  # ‖P‖²_F with P = [[v₂₀, v₁₁/2], [v₁₁/2, v₀₂]]

    def loss(x: torch.Tensor, y: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        v = x[torch.as_tensor(quadratic, device=x.device)]
        return (weights.to(x.device) * v**2).sum()

    support = int(np.count_nonzero(np.abs(prog.affine.values[1:]).sum(axis=0)))
    return TaskInstance("pendulum", size, formulation, prog.conic, theta0, data, -1.0, support, loss)
