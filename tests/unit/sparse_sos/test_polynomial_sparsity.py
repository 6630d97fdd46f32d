import itertools

import networkx as nx
import numpy as np
import pytest
import torch
from scipy.special import comb

from neurips26.sparse_sos.polynomial import (
    SparsePolynomial,
    gram_coefficients,
    monomial_basis,
    polynomial,
)
from neurips26.sparse_sos.sparsity import (
    check_cliques,
    correlative_cliques,
    csp_graph,
    has_running_intersection,
    maximal_cliques,
    min_degree_extension,
    running_intersection_order,
    term_sparsity_blocks,
)
from neurips26.sparse_sos.tasks.chain_quartic import chain_quartic


@pytest.mark.parametrize(("k", "d"), [(1, 2), (2, 2), (3, 2), (2, 3)])
def test_basis_size_is_binomial(k, d):
    basis = monomial_basis(range(k), 5, d)
    assert len(basis) == comb(k + d, d, exact=True)
    assert len(set(basis)) == len(basis) and basis[0] == (0,) * 5
    assert all(sum(a[k:]) == 0 for a in basis)  # supported on the clique


def test_gram_map_rebuilds_the_polynomial():
    """m_Iᵀ Q m_I evaluated at random points equals the polynomial of its Gram coefficients."""
    rng = np.random.default_rng(0)
    basis = monomial_basis((0, 2), 3, 2)
    G = rng.standard_normal((len(basis), 2 * len(basis)))
    Q = G @ G.T
    f = polynomial(3, gram_coefficients(basis, Q))
    x = torch.as_tensor(rng.standard_normal((7, 3)))
    m = torch.stack([torch.prod(x ** torch.as_tensor(a, dtype=x.dtype), dim=-1) for a in basis], dim=-1)
    direct = torch.einsum("bi,ij,bj->b", m, torch.as_tensor(Q), m)
    assert torch.allclose(f(x), direct, atol=1e-9)


def test_polynomial_rejects_bad_input():
    with pytest.raises(ValueError, match="coefficients"):
        SparsePolynomial(2, ((1, 0),), torch.zeros(2))
    with pytest.raises(ValueError, match=r"support\[0\]"):
        SparsePolynomial(2, ((1, 0, 0),), torch.zeros(1))
    with pytest.raises(TypeError, match="coefficients"):
        SparsePolynomial(2, ((1, 0),), np.zeros(1))
    with pytest.raises(ValueError, match="support must not repeat"):
        SparsePolynomial(2, ((1, 0), (1, 0)), torch.zeros(2))


def test_chain_cliques_are_its_edges():
    task = chain_quartic(6)
    cliques = correlative_cliques(6, task.support)
    assert sorted(cliques) == [(i, i + 1) for i in range(5)]
    assert has_running_intersection(cliques)


@pytest.mark.parametrize("seed", range(4))
def test_min_degree_extension_is_chordal_and_cliques_cover_every_edge(seed):
    graph = nx.gnp_random_graph(12, 0.25, seed=seed)
    chordal = min_degree_extension(graph)
    assert nx.is_chordal(chordal) and set(graph.edges) <= {tuple(sorted(e)) for e in chordal.edges} | set(
        graph.edges
    )
    cliques = maximal_cliques(chordal)
    check_cliques(graph, cliques)  # raises if an edge or a vertex is missing
    assert has_running_intersection(cliques)


def test_running_intersection_detects_a_cycle_of_cliques():
    # the 4-cycle's edges as cliques: no order has the running-intersection property
    assert not has_running_intersection([(0, 1), (2, 3), (1, 2), (0, 3)])
    with pytest.raises(ValueError, match="cliques"):
        running_intersection_order([(0, 1), (1, 2), (2, 3), (0, 3)])


def test_check_cliques_names_the_missing_edge():
    graph = csp_graph(3, [(1, 1, 0), (0, 1, 1)])
    with pytest.raises(ValueError, match="cliques must cover every edge"):
        check_cliques(graph, [(0, 1), (2,)])


def test_term_sparsity_reaches_a_fixed_point():
    basis = monomial_basis((0, 1), 2, 2)
    support = [(4, 0), (0, 4), (2, 0), (1, 1)]
    blocks = term_sparsity_blocks(basis, support)
    # every basis monomial appears in exactly one block, and one more round changes nothing
    assert sorted(i for b in blocks for i in b) == list(range(len(basis)))
    grown = set(support) | {
        tuple(p + q for p, q in zip(basis[i], basis[j], strict=True))
        for b in blocks
        for i, j in itertools.product(b, b)
    }
    assert term_sparsity_blocks(basis, grown) == blocks
    assert len(blocks) > 1  # the odd monomials x_0, x_1 separate from the even ones
