"""Task 1: certify a lower bound of a chain quartic, ``f_θ(x) = Σ_i x_i⁴ + Σ_α θ_α x^α``.

The ``x^α`` run over every monomial of degree 1 to 3 in a pair ``(x_i, x_{i+1})`` of neighbours, so
``dim θ = 3n + 3(n − 1)``: each variable's ``x_i, x_i², x_i³`` and each edge's ``x_i x_{i+1}, x_i² x_{i+1},
x_i x_{i+1}²``. The correlative-sparsity graph is the path, its cliques are the edges ``{i, i+1}``, and the
sparse certificate has ``n − 1`` blocks of size 6 (order 2), where the dense one has one block of size
``binom(n + 2, 2)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neurips26.sparse_sos.assemble import SOSProgram, assemble_sos
from neurips26.sparse_sos.polynomial import Monomial, SparsePolynomial
from neurips26.sparse_sos.sparsity import correlative_cliques
from neurips26.sparse_sos.tasks.base import FORMULATIONS, ConicData, TaskInstance
from neurips26.validation import check_choice, check_float, check_int, check_seed


def chain_monomials(n: int) -> tuple[Monomial, ...]:
    """The ``θ`` monomials: per variable ``x_i, x_i², x_i³``, then per edge ``x_i x_{i+1}, x_i² x_{i+1},
    x_i x_{i+1}²``."""
    n = check_int("n", n, minimum=2)
    out: list[Monomial] = []
    for i in range(n):
        for p in (1, 2, 3):
            alpha = [0] * n
            alpha[i] = p
            out.append(tuple(alpha))
    for i in range(n - 1):
        for a, b in ((1, 1), (2, 1), (1, 2)):
            alpha = [0] * n
            alpha[i], alpha[i + 1] = a, b
            out.append(tuple(alpha))
    return tuple(out)


@dataclass(frozen=True, eq=False)
class ChainQuartic:
    """A chain quartic family: ``n`` variables, its ``θ`` monomials and a seeded ``θ₀ ~ scale · N(0, 1)``."""

    n: int
    theta0: torch.Tensor
    monomials: tuple[Monomial, ...]

    @property
    def support(self) -> tuple[Monomial, ...]:
        """The ``θ`` monomials, then the quartics ``x_i⁴``."""
        quartics = tuple(tuple(4 if j == i else 0 for j in range(self.n)) for i in range(self.n))
        return self.monomials + quartics

    def coefficients(self, theta: torch.Tensor) -> torch.Tensor:
        """``c(θ) = (θ, 1, ..., 1)`` on :attr:`support` (differentiable in ``θ``)."""
        if not isinstance(theta, torch.Tensor):
            raise TypeError(f"theta must be a torch.Tensor; got {type(theta).__name__}")
        if tuple(theta.shape) != (len(self.monomials),):
            raise ValueError(f"theta must have shape ({len(self.monomials)},); got {tuple(theta.shape)}")
        ones = torch.ones(self.n, dtype=torch.float64, device=theta.device)
        return torch.cat([theta.to(torch.float64), ones])

    def polynomial(self, theta: torch.Tensor | None = None) -> SparsePolynomial:
        """``f_θ`` (``θ₀`` by default)."""
        theta = self.theta0 if theta is None else theta
        return SparsePolynomial(self.n, self.support, self.coefficients(theta))

    def program(self, *, dense: bool = False, order: int = 2) -> SOSProgram:
        """The SOS program: cliques ``{i, i+1}`` (``dense=False``) or one clique of every variable."""
        f = self.polynomial()
        return assemble_sos(f, order, correlative_cliques(self.n, f.support, dense=dense))


def chain_quartic(n: int, seed: int = 0, *, scale: float = 0.3) -> ChainQuartic:
    """The chain quartic with ``n`` variables and ``θ₀ ~ scale · N(0, 1)`` drawn from ``seed``."""
    n = check_int("n", n, minimum=2)
    seed = check_seed("seed", seed)
    scale = check_float("scale", scale, minimum=0.0)
    monomials = chain_monomials(n)
    theta0 = scale * np.random.default_rng(seed).standard_normal(len(monomials))
    return ChainQuartic(n, torch.as_tensor(theta0, dtype=torch.float64), monomials)


def first_moments(program: SOSProgram, y: torch.Tensor) -> torch.Tensor:
    """``(y_{e_1}, ..., y_{e_n})``: the first-order moments, the minimiser's estimate when the relaxation is
    tight (rank-one moment matrices)."""
    rows = [program.rows.index(tuple(1 if j == i else 0 for j in range(program.n))) for i in range(program.n)]
    return y[torch.as_tensor(rows, device=y.device)]


def chain_quartic_instance(n: int, seed: int = 0, formulation: str = "sparse") -> TaskInstance:
    """Task 1 as a :class:`~neurips26.sparse_sos.tasks.base.TaskInstance`: ``θ`` enters ``b``; the value
    is ``γ*``; the solution loss is ``‖x̂‖²`` of the minimiser estimate ``x̂ = (y_{e_i})``."""
    check_choice("formulation", formulation, FORMULATIONS)
    task = chain_quartic(n, seed)
    program = task.program(dense=formulation == "dense")
    rows = torch.as_tensor(program.support_rows)

    def data(theta: torch.Tensor) -> ConicData:
        b = torch.zeros(program.conic.shape[0], dtype=torch.float64, device=theta.device)
        return ConicData(b=b.index_put((rows.to(theta.device),), task.coefficients(theta)))

    def loss(x: torch.Tensor, y: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return (first_moments(program, y) ** 2).sum()

    return TaskInstance(
        "chain_quartic", n, formulation, program.conic, task.theta0, data, -1.0, len(task.monomials), loss
    )
