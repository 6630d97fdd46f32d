"""Correlative sparsity: the variable graph, a min-degree chordal extension, its maximal cliques, and TSSOS
term sparsity.

Correlative sparsity (Waki, Kim, Kojima, Muramatsu 2006): variables ``i`` and ``j`` are adjacent when a
monomial of the polynomial (or a constraint) involves both. A chordal extension of that graph has maximal
cliques ``I_1, ..., I_p`` with the running-intersection property, and the sparse SOS certificate uses one
Gram block per clique, in the basis ``m_{I_k,d}``.

Term sparsity (Wang, Magron, Lasserre 2021, TSSOS) splits a basis further: basis monomials ``β, β'`` are
adjacent when ``β + β'`` is in the support or is an even square ``2γ``; the blocks are the connected
components (or the maximal cliques of a chordal extension), and the support grows by the products the
blocks allow until it stops changing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import networkx as nx

from neurips26.sparse_sos.polynomial import Monomial, add, variables_of
from neurips26.validation import check_choice, check_int


def csp_graph(
    n: int, support: Iterable[Monomial], constraints: Iterable[Iterable[Monomial]] = ()
) -> nx.Graph:
    """The correlative-sparsity graph on ``range(n)``: ``i ~ j`` iff a monomial or a constraint uses both."""
    n = check_int("n", n, minimum=1)
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    groups = [variables_of(alpha) for alpha in support]
    groups += [tuple(sorted({v for alpha in g for v in variables_of(alpha)})) for g in constraints]
    for group in groups:
        graph.add_edges_from((a, b) for i, a in enumerate(group) for b in group[i + 1 :])
    return graph


def min_degree_extension(graph: nx.Graph) -> nx.Graph:
    """A chordal extension by the min-degree elimination heuristic (ties: the smallest node label).

    Eliminating a vertex joins all its remaining neighbours (the fill-in); the graph plus every fill edge
    is chordal, with the elimination order a perfect elimination ordering.
    """
    if not isinstance(graph, nx.Graph):
        raise TypeError(f"graph must be a networkx.Graph; got {type(graph).__name__}")
    chordal = graph.copy()
    work = graph.copy()
    while work.number_of_nodes():
        v = min(work.nodes, key=lambda u: (work.degree(u), u))
        neighbours = sorted(work.neighbors(v))
        fill = [
            (a, b) for i, a in enumerate(neighbours) for b in neighbours[i + 1 :] if not work.has_edge(a, b)
        ]
        work.add_edges_from(fill)
        chordal.add_edges_from(fill)
        work.remove_node(v)
    return chordal


def maximal_cliques(chordal: nx.Graph) -> tuple[tuple[int, ...], ...]:
    """The maximal cliques of a chordal graph, each sorted, in running-intersection order."""
    if not nx.is_chordal(chordal):
        raise ValueError("chordal must be a chordal graph (use min_degree_extension first)")
    cliques = [tuple(sorted(c)) for c in nx.chordal_graph_cliques(chordal)]
    return running_intersection_order(cliques)


def correlative_cliques(
    n: int,
    support: Iterable[Monomial],
    constraints: Iterable[Iterable[Monomial]] = (),
    *,
    dense: bool = False,
) -> tuple[tuple[int, ...], ...]:
    """The cliques of the sparse certificate (min-degree extension of :func:`csp_graph`); ``dense=True``
    gives one clique with every variable (the dense SOS program)."""
    if dense:
        return (tuple(range(n)),)
    return maximal_cliques(min_degree_extension(csp_graph(n, support, constraints)))


def running_intersection_order(cliques: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    """The cliques ordered so that each one meets the union of the earlier ones inside one earlier clique.

    Orders by a maximum-weight spanning tree of the clique intersection graph (a clique tree when the cliques
    come from a chordal graph), breadth first from the largest clique. ``ValueError`` naming ``cliques``
    when no order has the running-intersection property.
    """
    cliques = [tuple(sorted(set(c))) for c in cliques]
    if not cliques or any(not c for c in cliques):
        raise ValueError("cliques must be a non-empty list of non-empty cliques")
    if len(cliques) == 1:
        return (cliques[0],)
    weights = nx.Graph()
    weights.add_nodes_from(range(len(cliques)))
    for a in range(len(cliques)):
        for b in range(a + 1, len(cliques)):
            shared = len(set(cliques[a]) & set(cliques[b]))
            weights.add_edge(a, b, weight=shared)
    tree = nx.maximum_spanning_tree(weights)
    root = max(range(len(cliques)), key=lambda k: (len(cliques[k]), -k))
    order = [root, *(v for _, v in nx.bfs_edges(tree, root))]
    ordered = tuple(cliques[k] for k in order)
    if not has_running_intersection(ordered):
        raise ValueError(f"cliques have no running-intersection order: {cliques}")
    return ordered


def has_running_intersection(cliques: Sequence[Sequence[int]]) -> bool:
    """Whether ``I_k ∩ (I_1 ∪ ... ∪ I_{k-1}) ⊆ I_j`` for some ``j < k``, for every ``k``."""
    seen: set[int] = set()
    for k, clique in enumerate(cliques):
        shared = set(clique) & seen
        if k and not any(shared <= set(cliques[j]) for j in range(k)):
            return False
        seen |= set(clique)
    return True


def check_cliques(graph: nx.Graph, cliques: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    """Cliques that cover every vertex and every edge of ``graph``; ``ValueError`` naming ``cliques``."""
    cliques = tuple(tuple(sorted(set(c))) for c in cliques)
    covered = {frozenset((a, b)) for c in cliques for i, a in enumerate(c) for b in c[i + 1 :]}
    missing = [e for e in graph.edges if frozenset(e) not in covered]
    if missing:
        raise ValueError(
            f"cliques must cover every edge of the sparsity graph; missing {sorted(missing)[:5]}"
        )
    lonely = set(graph.nodes) - {v for c in cliques for v in c}
    if lonely:
        raise ValueError(f"cliques must cover every variable; missing {sorted(lonely)}")
    return cliques


def term_sparsity_blocks(
    basis: Sequence[Monomial],
    support: Iterable[Monomial],
    *,
    extension: str = "components",
    max_rounds: int = 20,
) -> tuple[tuple[int, ...], ...]:
    """TSSOS blocks of one Gram basis: index sets into ``basis``, iterated to the support's fixed point.

    Round 0 joins ``β ~ β'`` when ``β + β'`` is in ``support`` or is ``2γ`` for a basis monomial ``γ``;
    each round adds the products ``β + β'`` of the blocks found to the support and repeats until the
    blocks stop changing. ``extension="components"`` takes connected components (TSSOS's block closure);
    ``"chordal"`` the maximal cliques of a min-degree chordal extension.
    """
    check_choice("extension", extension, ("components", "chordal"))
    max_rounds = check_int("max_rounds", max_rounds, minimum=1)
    basis = tuple(basis)
    current = set(support) | {add(g, g) for g in basis}
    blocks: tuple[tuple[int, ...], ...] = ()
    for _ in range(max_rounds):
        graph = nx.Graph()
        graph.add_nodes_from(range(len(basis)))
        for i in range(len(basis)):
            for j in range(i + 1, len(basis)):
                if add(basis[i], basis[j]) in current:
                    graph.add_edge(i, j)
        if extension == "components":
            found = tuple(sorted(tuple(sorted(c)) for c in nx.connected_components(graph)))
        else:
            found = tuple(
                sorted(tuple(sorted(c)) for c in nx.chordal_graph_cliques(min_degree_extension(graph)))
            )
        if found == blocks:
            break
        blocks = found
        current |= {add(basis[i], basis[j]) for block in blocks for i in block for j in block}
    return blocks
