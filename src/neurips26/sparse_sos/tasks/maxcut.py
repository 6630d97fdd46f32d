"""Task 2: the Shor relaxation of MaxCut, ``max ⟨L_w, X⟩/4  s.t.  diag X = 1, X ⪰ 0``, chordally decomposed.

The sparse formulation keeps only the entries of ``X`` on a chordal extension of the graph (min-degree,
:func:`~neurips26.sparse_sos.sparsity.min_degree_extension`): one PSD block ``X_k`` per maximal clique,
equality rows fixing the diagonal and tying every entry that two cliques share to its value in the first
clique that holds it (its *owner*). By the chordal completion theorem (Grone et al. 1984) the pattern
entries are PSD-completable exactly when every ``X_k ⪰ 0``, so the sparse value equals the dense one (one
``n × n`` block). Entries of ``X*`` off the chordal pattern are not determined by the sparse program: losses
only use pattern entries.

The builder :func:`shor_program` is generic in the node block size ``d`` (``X_ii = I_d``): ``d = 1`` is
MaxCut, ``d = 2`` the rotation synchronisation of :mod:`.pose_sync`. ``θ = w`` (edge weights) enters ``q``;
``∂value/∂w_ij = (1 − X*_ij)/2`` (Danskin).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np
import scipy.sparse as sp
import torch

from neurips26.sparse_sos.conic import BlockConicProgram
from neurips26.sparse_sos.sparsity import maximal_cliques, min_degree_extension
from neurips26.sparse_sos.svec import svec_dim
from neurips26.sparse_sos.tasks.base import FORMULATIONS, ConicData, TaskInstance
from neurips26.validation import check_choice, check_int, check_seed

GRAPHS: tuple[str, ...] = ("cycle", "ladder", "grid")
_F64 = torch.float64
Entry = tuple[int, int]


@dataclass(frozen=True, eq=False)
class ShorProgram:
    """``min Σ_e c_e X_e  s.t.  X_ii = I_d,  X ⪰ 0`` on a clique cover of the nodes, as a conic program.

    ``entries``: every stored entry ``(a, b)``, ``a ≤ b``, of the ``dn × dn`` matrix ``X`` (scalar indices),
    ``column[(a, b)]`` the column of ``x`` of its owner copy and ``scale[(a, b)]`` the factor with
    ``X_ab = scale · x[column]`` (``1`` on the diagonal, ``1/√2`` off it: ``svec``).
    """

    conic: BlockConicProgram
    n: int
    d: int
    cliques: tuple[tuple[int, ...], ...]
    column: dict[Entry, int]
    scale: dict[Entry, float]

    def entry_map(self, entries: Sequence[Entry]) -> tuple[np.ndarray, np.ndarray]:
        """The columns and scales of ``entries`` (each ``(a, b)``; ``ValueError`` if not on the pattern)."""
        keys = [(min(a, b), max(a, b)) for a, b in entries]
        missing = [k for k in keys if k not in self.column]
        if missing:
            raise ValueError(f"entries must lie on the chordal pattern; {missing[:3]} do not")
        return (
            np.array([self.column[k] for k in keys], dtype=np.int64),
            np.array([self.scale[k] for k in keys], dtype=float),
        )

    def objective_matrix(self, entries: Sequence[Entry]) -> np.ndarray:
        """``M`` with ``q = M c`` for the objective ``Σ_e c_e X_e`` over ``entries`` (``dim x × |E|``)."""
        cols, scales = self.entry_map(entries)
        M = np.zeros((self.conic.shape[1], len(entries)))
        for e, (col, s) in enumerate(zip(cols, scales, strict=True)):
            M[col, e] += s
        return M

    def entries_of(self, x: torch.Tensor, entries: Sequence[Entry]) -> torch.Tensor:
        """``(X_e)_e`` from a primal solution ``x`` (differentiable)."""
        cols, scales = self.entry_map(entries)
        index = torch.as_tensor(cols, device=x.device)
        return x[index] * torch.as_tensor(scales, dtype=_F64, device=x.device)

    def matrix(self, x: np.ndarray | torch.Tensor) -> np.ndarray:
        """``X`` on the pattern as a dense ``dn × dn`` array (``nan`` off the pattern)."""
        x = x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)
        X = np.full((self.n * self.d, self.n * self.d), np.nan)
        for (a, b), col in self.column.items():
            X[a, b] = X[b, a] = self.scale[(a, b)] * x[col]
        return X


def shor_program(n: int, d: int, cliques: Sequence[Sequence[int]]) -> ShorProgram:
    """Assemble the decomposed Shor relaxation for node cliques ``cliques`` (``(range(n),)``: dense).

    Variables: ``svec X_k`` per clique (Clarabel's order) over the scalar indices ``d·i + r`` of its nodes.
    Rows: ``X_ii = I_d`` on the owner copies, ``X^k_ab − X^owner_ab = 0`` for every other copy, then one PSD
    cone ``−svec X_k + s_k = 0`` per clique. ``q = 0`` (set it with :meth:`ShorProgram.objective_matrix`).
    """
    n = check_int("n", n, minimum=1)
    d = check_int("d", d, minimum=1)
    cliques = tuple(tuple(sorted(set(int(v) for v in c))) for c in cliques)
    if not cliques or {v for c in cliques for v in c} != set(range(n)):
        raise ValueError(f"cliques must cover the nodes 0..{n - 1}")
    copies: dict[Entry, list[int]] = {}
    offset = 0
    sizes = []
    for clique in cliques:
        idx = [d * i + r for i in clique for r in range(d)]
        for lj, b in enumerate(idx):
            for li in range(lj + 1):
                copies.setdefault((idx[li], b), []).append(offset + lj * (lj + 1) // 2 + li)
        sizes.append(len(idx))
        offset += svec_dim(len(idx))
    rows, cols, vals, rhs = [], [], [], []
    column = {e: cs[0] for e, cs in copies.items()}
    scale = {(a, b): 1.0 if a == b else 1.0 / math.sqrt(2.0) for (a, b) in copies}
    r = 0
    for i in range(n):  # X_ii = I_d on the owner copy
        for q in range(d):
            for p in range(q + 1):
                e = (d * i + p, d * i + q)
                rows.append(r), cols.append(column[e]), vals.append(scale[e]), rhs.append(float(p == q))
                r += 1
    for _, cs in sorted(copies.items()):  # ties to the owner
        for c in cs[1:]:
            rows += [r, r]
            cols += [c, cs[0]]
            vals += [1.0, -1.0]
            rhs.append(0.0)
            r += 1
    zero = r
    rows += list(range(zero, zero + offset))
    cols += list(range(offset))
    vals += [-1.0] * offset
    A = sp.csc_matrix((vals, (rows, cols)), shape=(zero + offset, offset))
    b = np.concatenate([np.asarray(rhs), np.zeros(offset)])
    conic = BlockConicProgram(A, b, np.zeros(offset), zero, 0, tuple(sizes))
    return ShorProgram(conic, n, d, cliques, column, scale)


def node_cliques(n: int, edges: Sequence[Entry], *, dense: bool = False) -> tuple[tuple[int, ...], ...]:
    """The maximal cliques of the min-degree chordal extension of the graph (``dense``: one clique)."""
    if dense:
        return (tuple(range(n)),)
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(edges)
    return maximal_cliques(min_degree_extension(graph))


def graph_edges(kind: str, n: int) -> tuple[Entry, ...]:
    """The edges of a cycle ``C_n``, a ladder ``P_{n/2} × P_2`` (``n`` even) or a grid ``3 × n/3``."""
    check_choice("kind", kind, GRAPHS)
    n = check_int("n", n, minimum=3)
    if kind == "cycle":
        return tuple((i, (i + 1) % n) if i + 1 < n else (0, n - 1) for i in range(n))
    rows = 2 if kind == "ladder" else 3
    if n % rows:
        raise ValueError(f"n must be a multiple of {rows} for a {kind}; got {n}")
    graph = nx.grid_2d_graph(rows, n // rows)
    label = {node: node[1] * rows + node[0] for node in graph.nodes}
    return tuple(sorted(tuple(sorted((label[a], label[b]))) for a, b in graph.edges))


@dataclass(frozen=True, eq=False)
class MaxCut:
    """A weighted graph: ``n`` nodes, ``edges`` (``i < j``) and seeded weights ``w₀``."""

    n: int
    edges: tuple[Entry, ...]
    theta0: torch.Tensor

    def program(self, *, dense: bool = False) -> ShorProgram:
        return shor_program(self.n, 1, node_cliques(self.n, self.edges, dense=dense))

    def objective(self) -> np.ndarray:
        """``(coefficient of X_e)`` per weight: ``min −⟨L_w, X⟩/4 = Σ_ij w_ij (X_ij/2 − (X_ii + X_jj)/4)``, as
        the ``|entries| × |E|`` matrix over :meth:`entries` = (diagonal ..., edges ...)."""
        T = np.zeros((self.n + len(self.edges), len(self.edges)))
        for e, (i, j) in enumerate(self.edges):
            T[i, e] = T[j, e] = -0.25
            T[self.n + e, e] = 0.5
        return T

    def entries(self) -> tuple[Entry, ...]:
        return tuple((i, i) for i in range(self.n)) + self.edges


def maxcut(n: int, seed: int = 0, *, graph: str = "grid") -> MaxCut:
    """A graph of kind ``graph`` with ``n`` nodes and signed weights ``w₀ = ±U(0.5, 1.5)`` from ``seed``.

    Signed weights keep the relaxation from being trivially tight on the bipartite ladders and grids (with
    positive weights their optimum is the rank-one cut and ``X*`` does not move with ``w``); magnitudes
    away from zero keep ``X*`` well determined (a near-zero weight leaves an almost free angle, and the
    solver's ``X*`` then moves by ~1e-3 with its tolerance).
    """
    n = check_int("n", n, minimum=3, maximum=60)
    seed = check_seed("seed", seed)
    edges = graph_edges(graph, n)
    rng = np.random.default_rng(seed)
    w0 = np.where(rng.random(len(edges)) < 0.5, -1.0, 1.0) * rng.uniform(0.5, 1.5, len(edges))
    return MaxCut(n, edges, torch.as_tensor(w0, dtype=_F64))


def maxcut_instance(
    size: int, seed: int = 0, formulation: str = "sparse", *, graph: str = "grid"
) -> TaskInstance:
    """Task 2 as a :class:`~neurips26.sparse_sos.tasks.base.TaskInstance`: ``θ = w`` enters ``q``; the value
    is the relaxation's ``max ⟨L_w, X⟩/4``; the solution loss is ``Σ_{ij ∈ E} (X*_ij − t_ij)²`` against a
    seeded planted cut ``t_ij = z_i z_j`` (edge entries only: they lie on the chordal pattern).

    The default graph is the ``3 × size/3`` grid (``size`` a multiple of 3): its frustrated squares keep
    ``X*`` above rank one, where a signed cycle is often tight (rank-one ``X*``, locally constant in ``w``,
    so the loss's gradient is zero).
    """
    check_choice("formulation", formulation, FORMULATIONS)
    task = maxcut(size, seed, graph=graph)
    shor = task.program(dense=formulation == "dense")
    entries = task.entries()
    M = torch.as_tensor(shor.objective_matrix(entries) @ task.objective(), dtype=_F64)
    z = np.where(np.random.default_rng(seed + 1).random(task.n) < 0.5, -1.0, 1.0)
    target = torch.as_tensor([z[i] * z[j] for i, j in task.edges], dtype=_F64)
    program = shor.conic.with_data(q=(M @ task.theta0).numpy())

    def data(theta: torch.Tensor) -> ConicData:
        if not isinstance(theta, torch.Tensor) or tuple(theta.shape) != (len(task.edges),):
            raise ValueError(f"theta must be a tensor of shape ({len(task.edges)},)")
        return ConicData(q=M.to(theta.device) @ theta.to(_F64))

    def loss(x: torch.Tensor, y: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return ((shor.entries_of(x, task.edges) - target.to(x.device)) ** 2).sum()

    support = int(np.count_nonzero(np.abs(M.numpy()).sum(axis=1)))
    return TaskInstance("maxcut", size, formulation, program, task.theta0, data, -1.0, support, loss)


def brute_force_maxcut(n: int, edges: Sequence[Entry], weights: np.ndarray) -> float:
    """``max_z Σ_ij w_ij (1 − z_i z_j)/2`` over ``z ∈ {±1}ⁿ`` (``z_0 = 1``; for checks, ``n ≤ 16``)."""
    n = check_int("n", n, minimum=1, maximum=16)
    weights = np.asarray(weights, dtype=float)
    best = -np.inf
    for signs in itertools.product((-1.0, 1.0), repeat=n - 1):
        z = np.array((1.0, *signs))
        best = max(best, sum(w * (1 - z[i] * z[j]) / 2 for (i, j), w in zip(edges, weights, strict=True)))
    return float(best)
