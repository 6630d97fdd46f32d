"""Figures of chapter 03: a variable graph with its cliques, and the sparsity pattern of a conic program.

The notebooks call these so that each figure is one line; the palette is the book's
(:mod:`neurips26.plotting`): clique ``k`` is drawn in ``OKABE_ITO[k mod 8]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import networkx as nx
import numpy as np

from neurips26.plotting import COLORS, OKABE_ITO
from neurips26.sparse_sos.conic import BlockConicProgram
from neurips26.sparse_sos.svec import svec_dim


def _hull(points: np.ndarray) -> np.ndarray:
    """The convex hull of 2-D points in counter-clockwise order (Andrew's monotone chain); collinear or
    repeated points give the segment's two ends."""
    pts = sorted(set(map(tuple, np.round(points, 12))))
    if len(pts) <= 2:
        return np.array(pts)

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list[tuple[float, float]] = []
    upper: list[tuple[float, float]] = []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return np.array(lower[:-1] + upper[:-1])


def draw_cliques(
    ax,
    graph: nx.Graph,
    cliques: Sequence[Sequence[int]],
    pos: Mapping[int, Sequence[float]],
    *,
    chordal: nx.Graph | None = None,
    title: str = "",
) -> list:
    """Draw ``graph`` at ``pos`` with each clique as a translucent coloured hull behind it.

    Edges of ``graph`` are solid; the fill edges of ``chordal`` (its edges not in ``graph``) are dashed.
    Returns the clique patches, one per clique, in the order of ``cliques``. ``ValueError`` naming
    ``pos`` when a vertex has no position.
    """
    from matplotlib.patches import Polygon

    if not isinstance(graph, nx.Graph):
        raise TypeError(f"graph must be a networkx.Graph; got {type(graph).__name__}")
    missing = sorted(({v for c in cliques for v in c} | set(graph.nodes)) - set(pos))
    if missing:
        raise ValueError(f"pos must give a position to every vertex; missing {missing[:5]}")
    xy = {v: np.asarray(pos[v], dtype=float) for v in pos}
    patches = []
    for k, clique in enumerate(cliques):
        colour = OKABE_ITO[k % len(OKABE_ITO)]
        hull = _hull(np.array([xy[v] for v in clique]))
        # a wide, round-joined outline turns a segment or a triangle into a soft blob around its vertices
        patch = Polygon(hull, closed=True, facecolor=colour, edgecolor=colour, alpha=0.2, lw=14)
        patch.set_joinstyle("round")
        patch.set_capstyle("round")
        ax.add_patch(patch)
        patches.append(patch)
    for a, b in graph.edges:
        ax.plot(*np.stack([xy[a], xy[b]]).T, color=COLORS["reference"], lw=1.5, zorder=2)
    if chordal is not None:
        for a, b in chordal.edges:
            if not graph.has_edge(a, b):
                ax.plot(*np.stack([xy[a], xy[b]]).T, color=COLORS["reference"], lw=1.5, ls="--", zorder=2)
    for v in graph.nodes:
        ax.scatter(*xy[v], s=260, color="white", edgecolor=COLORS["reference"], zorder=3)
        ax.annotate(f"$x_{{{v + 1}}}$", xy[v], ha="center", va="center", fontsize=9, zorder=4)
    ax.margins(0.2)
    ax.axis("off")
    if title:
        ax.set_title(title)
    return patches


def spy_program(ax, program: BlockConicProgram, *, title: str = "", markersize: float = 1.0) -> None:
    """The nonzeros of ``A`` with a line under the equality rows and one between the columns of each PSD
    block (``svec Q_k``), so the blocks and their overlap rows can be seen."""
    if not isinstance(program, BlockConicProgram):
        raise TypeError(f"program must be a BlockConicProgram; got {type(program).__name__}")
    ax.spy(program.A, markersize=markersize, color=COLORS["method"])
    ax.axhline(program.zero - 0.5, color=COLORS["baseline"], lw=0.8)
    start = 0
    for s in program.psd:
        start += svec_dim(s)
        ax.axvline(start - 0.5, color=COLORS["reference"], lw=0.4, alpha=0.5)
    ax.set_title(title)
    ax.set_xlabel("column (svec of the blocks, then γ)")
    ax.set_ylabel("row (monomials, then PSD rows)")
