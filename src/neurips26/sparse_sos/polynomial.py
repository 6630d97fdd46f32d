"""Sparse polynomials in torch, monomial bases ``m_{I,d}`` and the Gram map ``m_I^T Q m_I``.

A monomial ``x^α`` is a tuple ``α`` of ``n`` non-negative exponents. A polynomial is a support (a tuple of
monomials) and a coefficient vector ``c`` aligned with it; the coefficients may be a torch tensor that
depends on parameters ``θ`` (``c(θ)``), which is how a layer's input enters the SOS program.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from neurips26.validation import check_int

Monomial = tuple[int, ...]


def check_monomial(name: str, alpha: object, n: int) -> Monomial:
    """A tuple of ``n`` non-negative ints; ``ValueError``/``TypeError`` naming ``name`` otherwise."""
    if not isinstance(alpha, tuple) or len(alpha) != n:
        raise ValueError(f"{name} must be a tuple of {n} exponents; got {alpha!r}")
    return tuple(check_int(f"{name}[{i}]", a, minimum=0) for i, a in enumerate(alpha))


def degree(alpha: Monomial) -> int:
    """Total degree ``|α| = Σ α_i``."""
    return int(sum(alpha))


def variables_of(alpha: Monomial) -> tuple[int, ...]:
    """The variables a monomial involves (``i`` with ``α_i > 0``)."""
    return tuple(i for i, a in enumerate(alpha) if a)


def monomial_basis(variables: Sequence[int], n: int, d: int) -> tuple[Monomial, ...]:
    """``m_{I,d}``: every monomial in the variables ``I`` of total degree ≤ ``d``, graded, then lexicographic.

    Its length is ``binom(|I| + d, d)``; ``I = range(n)`` gives the dense basis ``m_d`` of the dense SOS
    program.
    """
    n = check_int("n", n, minimum=1)
    d = check_int("d", d, minimum=0)
    variables = tuple(sorted(set(check_int("variables", v, minimum=0, maximum=n - 1) for v in variables)))
    basis: list[Monomial] = []
    for total in range(d + 1):
        for combo in itertools.combinations_with_replacement(variables, total):
            alpha = [0] * n
            for v in combo:
                alpha[v] += 1
            basis.append(tuple(alpha))
    # graded order, and inside a degree the lexicographic order of the exponent vectors (descending)
    basis.sort(key=lambda a: (degree(a), tuple(-x for x in a)))
    return tuple(basis)


def add(alpha: Monomial, beta: Monomial) -> Monomial:
    """``x^α x^β = x^{α+β}``."""
    return tuple(a + b for a, b in zip(alpha, beta, strict=True))


@dataclass(frozen=True)
class SparsePolynomial:
    """``f(x) = Σ_{α ∈ support} c_α x^α`` in ``n`` variables; ``coefficients`` is a float64 torch tensor.

    The coefficients may carry autograd history (``c(θ)``), so gradients of anything computed from them
    flow back to ``θ``.
    """

    n: int
    support: tuple[Monomial, ...]
    coefficients: torch.Tensor

    def __post_init__(self) -> None:
        check_int("n", self.n, minimum=1)
        if not isinstance(self.support, tuple) or not self.support:
            raise ValueError("support must be a non-empty tuple of monomials")
        for k, alpha in enumerate(self.support):
            check_monomial(f"support[{k}]", alpha, self.n)
        if len(set(self.support)) != len(self.support):
            raise ValueError("support must not repeat a monomial")
        if not isinstance(self.coefficients, torch.Tensor):
            raise TypeError(f"coefficients must be a torch.Tensor; got {type(self.coefficients).__name__}")
        if self.coefficients.shape != (len(self.support),):
            raise ValueError(
                f"coefficients must have shape ({len(self.support)},); got {tuple(self.coefficients.shape)}"
            )

    @property
    def degree(self) -> int:
        """The largest total degree in the support."""
        return max(degree(a) for a in self.support)

    def coefficient_map(self) -> dict[Monomial, torch.Tensor]:
        """``{α: c_α}`` (entries keep their autograd history)."""
        return {alpha: self.coefficients[k] for k, alpha in enumerate(self.support)}

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """``f(x)`` for ``x`` of shape ``(..., n)``."""
        if x.shape[-1] != self.n:
            raise ValueError(f"x must have last dimension {self.n}; got shape {tuple(x.shape)}")
        exps = torch.tensor(self.support, dtype=x.dtype, device=x.device)  # (|S|, n)
        powers = torch.prod(x.unsqueeze(-2) ** exps, dim=-1)  # (..., |S|)
        return powers @ self.coefficients.to(device=x.device, dtype=x.dtype)


def polynomial(n: int, terms: Mapping[Monomial, float | torch.Tensor]) -> SparsePolynomial:
    """A :class:`SparsePolynomial` from ``{α: c_α}`` (tensors keep their autograd history)."""
    if not terms:
        raise ValueError("terms must hold at least one monomial")
    support = tuple(terms)
    values = [torch.as_tensor(v, dtype=torch.float64) for v in terms.values()]
    return SparsePolynomial(n, support, torch.stack(values))


def gram_coefficients(basis: Sequence[Monomial], gram: np.ndarray) -> dict[Monomial, float]:
    """The coefficients of ``m^T Q m`` for the basis ``m`` and a symmetric ``Q``: ``Σ_{β+β'=α} Q_{ββ'}``."""
    gram = np.asarray(gram, dtype=float)
    s = len(basis)
    if gram.shape != (s, s):
        raise ValueError(f"gram must have shape ({s}, {s}); got {gram.shape}")
    out: dict[Monomial, float] = {}
    for i, j in itertools.product(range(s), repeat=2):
        alpha = add(basis[i], basis[j])
        out[alpha] = out.get(alpha, 0.0) + float(gram[i, j])
    return out


def parametric(
    n: int, support: Sequence[Monomial], coefficients_of: Callable[[torch.Tensor], torch.Tensor]
) -> Callable[[torch.Tensor], SparsePolynomial]:
    """``θ ↦ f_θ``: a family with a fixed support and differentiable coefficients ``c(θ)``."""
    support = tuple(support)

    def build(theta: torch.Tensor) -> SparsePolynomial:
        return SparsePolynomial(n, support, coefficients_of(theta))

    return build
