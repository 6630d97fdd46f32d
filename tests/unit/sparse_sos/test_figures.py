import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from neurips26.sparse_sos.figures import _hull, draw_cliques, spy_program  # noqa: E402
from neurips26.sparse_sos.tasks.chain_quartic import chain_quartic  # noqa: E402


def test_hull_keeps_the_corners_and_drops_interior_and_collinear_points():
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5], [0.5, 0.0]])
    hull = _hull(square)
    assert sorted(map(tuple, hull)) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    # a segment (a clique of two vertices) keeps its two ends
    assert sorted(map(tuple, _hull(np.array([[0, 0], [2, 2], [1, 1]])))) == [(0, 0), (2, 2)]


def test_draw_cliques_draws_one_patch_per_clique_and_names_a_missing_position():
    graph = nx.cycle_graph(4)
    cliques = [(0, 1, 3), (1, 2, 3)]
    fig, ax = plt.subplots()
    patches = draw_cliques(ax, graph, cliques, nx.circular_layout(graph))
    assert len(patches) == 2 and all(p in ax.patches for p in patches)
    with pytest.raises(ValueError, match="pos"):
        draw_cliques(ax, graph, cliques, {0: (0, 0), 1: (1, 0)})
    with pytest.raises(TypeError, match="graph"):
        draw_cliques(ax, [(0, 1)], cliques, nx.circular_layout(graph))
    plt.close(fig)


def test_spy_program_marks_every_block_boundary():
    program = chain_quartic(4).program().conic
    fig, ax = plt.subplots()
    spy_program(ax, program, title="sparse")
    vertical = [line for line in ax.lines if np.ptp(line.get_xdata()) == 0]
    horizontal = [line for line in ax.lines if np.ptp(line.get_ydata()) == 0]
    assert len(vertical) == len(program.psd)  # one line after each block's columns
    assert len(horizontal) == 1  # one line under the equality rows
    assert horizontal[0].get_ydata()[0] == program.zero - 0.5
    with pytest.raises(TypeError, match="program"):
        spy_program(ax, "not a program")
    plt.close(fig)
