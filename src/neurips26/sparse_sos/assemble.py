"""The sparse SOS program as one block conic program, built with ``scipy.sparse`` (no modelling layer).

For a polynomial ``f`` of degree ``≤ 2d`` and cliques ``I_1, ..., I_p`` (Eq. sparse-sos of the chapter):

    max γ   s.t.   f − γ = Σ_k m_{I_k,d}ᵀ Q_k m_{I_k,d} + Σ_j σ_j g_j,   Q_k ⪰ 0,

with Putinar multipliers ``σ_j = m_{I(j),d_j}ᵀ S_j m_{I(j),d_j}`` for constraints ``g_j ≥ 0`` (``d_j = d −
⌈deg g_j / 2⌉``, ``I(j)`` the first clique holding ``g_j``'s variables). Variables ``x = (svec Q_1, ...,
svec Q_p, svec S_1, ..., γ)``; one equality row per monomial ``α`` the blocks can produce,

    Σ_k ⟨A^k_α, Q_k⟩ + Σ_j ⟨A^{j}_α(g_j), S_j⟩ + γ·1[α = 0] = c_α,

then one PSD cone per block (``−svec Q_k + s_k = 0``). The objective is ``min −γ``. ``cliques = (range(n),)``
gives the dense program. The dual of row ``α`` is the moment ``y_α`` (``y_0 = 1``), and the dual of block
``k`` is ``svec M_k(y)``, the block's moment matrix.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch

from neurips26.sparse_sos.conic import BlockConicProgram
from neurips26.sparse_sos.polynomial import (
    Monomial,
    SparsePolynomial,
    add,
    degree,
    monomial_basis,
    variables_of,
)
from neurips26.sparse_sos.sparsity import check_cliques, csp_graph, term_sparsity_blocks
from neurips26.sparse_sos.svec import SQRT2, smat, svec_dim, triangle_indices
from neurips26.validation import check_int


@dataclass(frozen=True)
class GramBlock:
    """One PSD block: its monomial basis, its clique, and the constraint it multiplies (or None)."""

    basis: tuple[Monomial, ...]
    clique: int
    constraint: int | None = None

    @property
    def size(self) -> int:
        return len(self.basis)


@dataclass(frozen=True, eq=False)
class SOSProgram:
    """An assembled SOS program: the conic form plus the maps between it and polynomials.

    ``rows``: the monomial of each equality row; ``support_rows``: the row of each monomial of the
    polynomial's support (where ``c`` goes in ``b``); ``gamma``: the column of ``γ``.
    """

    conic: BlockConicProgram
    n: int
    order: int
    cliques: tuple[tuple[int, ...], ...]
    blocks: tuple[GramBlock, ...]
    rows: tuple[Monomial, ...]
    support: tuple[Monomial, ...]
    support_rows: np.ndarray
    gamma: int

    def rhs(self, coefficients: np.ndarray | torch.Tensor) -> np.ndarray:
        """``b`` for the polynomial's coefficients ``c`` (on :attr:`support`; zero elsewhere)."""
        c = coefficients.detach().cpu().numpy() if isinstance(coefficients, torch.Tensor) else coefficients
        c = np.asarray(c, dtype=float)
        if c.shape != (len(self.support),):
            raise ValueError(f"coefficients must have shape ({len(self.support)},); got {c.shape}")
        b = np.zeros(self.conic.shape[0])
        b[self.support_rows] = c
        return b

    def with_coefficients(self, coefficients: np.ndarray | torch.Tensor) -> BlockConicProgram:
        """The conic program of the same structure for the polynomial with coefficients ``c``."""
        return self.conic.with_data(b=self.rhs(coefficients))

    def block_columns(self) -> list[slice]:
        """The columns of ``x`` holding ``svec`` of each block."""
        out, start = [], 0
        for block in self.blocks:
            out.append(slice(start, start + svec_dim(block.size)))
            start += svec_dim(block.size)
        return out

    def gram_matrices(self, x: np.ndarray) -> list[np.ndarray]:
        """The Gram blocks ``Q_k`` (and multiplier blocks ``S_j``) of a primal solution ``x``."""
        return [smat(x[cols]) for cols in self.block_columns()]

    def moment_matrices(self, y: np.ndarray) -> list[np.ndarray]:
        """The local moment matrices ``M_k(y)`` (the PSD duals of a dual solution ``y``)."""
        return [smat(y[rows]) for rows in self.conic.psd_slices()]

    def moments(self, y: np.ndarray) -> dict[Monomial, float]:
        """``{α: y_α}`` from the equality duals."""
        return {alpha: float(y[r]) for r, alpha in enumerate(self.rows)}

    @property
    def block_sizes(self) -> tuple[int, ...]:
        return tuple(block.size for block in self.blocks)


def _multiplier_degree(order: int, g: SparsePolynomial) -> int:
    return order - math.ceil(g.degree / 2)


def gram_blocks(
    n: int,
    order: int,
    cliques: Sequence[Sequence[int]],
    constraints: Sequence[SparsePolynomial] = (),
    *,
    support: Sequence[Monomial] = (),
    term_sparsity: bool = False,
) -> tuple[GramBlock, ...]:
    """The PSD blocks of the certificate: one per clique (split by TSSOS term sparsity when asked), then one
    multiplier block per constraint on the first clique that holds its variables."""
    blocks: list[GramBlock] = []
    for k, clique in enumerate(cliques):
        basis = monomial_basis(clique, n, order)
        if term_sparsity:
            local = [a for a in support if set(variables_of(a)) <= set(clique)]
            for part in term_sparsity_blocks(basis, local):
                blocks.append(GramBlock(tuple(basis[i] for i in part), k))
        else:
            blocks.append(GramBlock(basis, k))
    for j, g in enumerate(constraints):
        used = set(v for alpha in g.support for v in variables_of(alpha))
        home = next((k for k, c in enumerate(cliques) if used <= set(c)), None)
        if home is None:
            raise ValueError(
                f"cliques must hold the variables of constraints[{j}] ({sorted(used)}) in one clique"
            )
        d_j = _multiplier_degree(order, g)
        if d_j < 0:
            raise ValueError(
                f"order must be at least ⌈deg g / 2⌉ = {math.ceil(g.degree / 2)} for constraints[{j}]"
            )
        blocks.append(GramBlock(monomial_basis(cliques[home], n, d_j), home, j))
    return tuple(blocks)


def assemble_sos(
    f: SparsePolynomial,
    order: int,
    cliques: Sequence[Sequence[int]],
    constraints: Sequence[SparsePolynomial] = (),
    *,
    term_sparsity: bool = False,
) -> SOSProgram:
    """Assemble ``max γ s.t. f − γ ∈ Σ_k SOS(m_{I_k,d}) + Σ_j SOS·g_j`` (module docstring).

    ``ValueError`` naming the argument: ``order`` below ``deg f / 2``; ``cliques`` that miss an edge of the
    sparsity graph (or a variable); a monomial of ``f`` the blocks cannot produce.
    """
    if not isinstance(f, SparsePolynomial):
        raise TypeError(f"f must be a SparsePolynomial; got {type(f).__name__}")
    order = check_int("order", order, minimum=1)
    if f.degree % 2:
        raise ValueError(f"order: f has odd degree {f.degree}; an SOS certificate needs an even degree")
    if 2 * order < f.degree:
        raise ValueError(f"order must be at least deg f / 2 = {f.degree // 2}; got {order}")
    for j, g in enumerate(constraints):
        if not isinstance(g, SparsePolynomial) or g.n != f.n:
            raise TypeError(f"constraints[{j}] must be a SparsePolynomial in {f.n} variables")
    graph = csp_graph(f.n, f.support, [g.support for g in constraints])
    cliques = check_cliques(graph, cliques)
    blocks = gram_blocks(f.n, order, cliques, constraints, support=f.support, term_sparsity=term_sparsity)

    # every (row monomial, column, value) of the equality rows
    entries: list[tuple[Monomial, int, float]] = []
    column = 0
    for block in blocks:
        rows_i, cols_j = triangle_indices(block.size)
        scale = np.where(rows_i == cols_j, 1.0, SQRT2)
        g_terms = (
            [((0,) * f.n, 1.0)]
            if block.constraint is None
            else [(d, float(v)) for d, v in constraints[block.constraint].coefficient_map().items()]
        )
        for e, (i, j) in enumerate(zip(rows_i, cols_j, strict=True)):
            base = add(block.basis[i], block.basis[j])
            for delta, value in g_terms:
                entries.append((add(base, delta), column + e, scale[e] * value))
        column += svec_dim(block.size)
    gamma = column
    zero_monomial = (0,) * f.n
    entries.append((zero_monomial, gamma, 1.0))

    monomials = sorted({alpha for alpha, _, _ in entries}, key=lambda a: (degree(a), tuple(-x for x in a)))
    row_of = {alpha: r for r, alpha in enumerate(monomials)}
    missing = [a for a in f.support if a not in row_of]
    if missing:
        raise ValueError(
            f"cliques: the blocks cannot produce the monomials {missing[:3]} of f (a monomial whose "
            "variables lie in no clique, or a degree above 2·order)"
        )
    m_eq = len(monomials)
    eq_rows = [row_of[a] for a, _, _ in entries]
    eq_cols = [c for _, c, _ in entries]
    eq_vals = [v for _, _, v in entries]
    n_psd = gamma  # every svec entry is one PSD row
    psd_rows = m_eq + np.arange(n_psd)
    rows = np.concatenate([eq_rows, psd_rows])
    cols = np.concatenate([eq_cols, np.arange(n_psd)])
    vals = np.concatenate([eq_vals, -np.ones(n_psd)])
    A = sp.csc_matrix((vals, (rows, cols)), shape=(m_eq + n_psd, gamma + 1))
    A.sum_duplicates()
    q = np.zeros(gamma + 1)
    q[gamma] = -1.0
    support_rows = np.array([row_of[a] for a in f.support], dtype=np.int64)
    b = np.zeros(m_eq + n_psd)
    b[support_rows] = f.coefficients.detach().cpu().numpy()
    conic = BlockConicProgram(A, b, q, m_eq, 0, tuple(block.size for block in blocks))
    return SOSProgram(conic, f.n, order, cliques, blocks, tuple(monomials), f.support, support_rows, gamma)
