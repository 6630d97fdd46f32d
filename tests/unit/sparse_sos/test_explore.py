"""The banded quartic (the explore notebook's clique-size knob) and the explore grid."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
import torch

from neurips26.sparse_sos.assemble import assemble_sos
from neurips26.sparse_sos.explore import (
    ExploreConfig,
    equality_pattern,
    explore_grid,
    sparse_cubes,
)
from neurips26.sparse_sos.sparsity import correlative_cliques
from neurips26.sparse_sos.tasks.banded_quartic import (
    banded_block_size,
    banded_monomials,
    banded_quartic,
    banded_quartic_instance,
)
from neurips26.sparse_sos.tasks.chain_quartic import chain_monomials, chain_quartic, chain_quartic_instance

from .test_task_checks import assert_data_reproduces


@pytest.mark.parametrize("seed", [0, 3])
def test_band_one_is_the_chain_quartic(seed):
    n = 5
    banded, chain = banded_quartic(n, 1, seed), chain_quartic(n, seed)
    assert banded_monomials(n, 1) == chain_monomials(n)
    assert banded.support == chain.support
    assert torch.equal(banded.theta0, chain.theta0)
    a, b = banded_quartic_instance(n, 1, seed).program, chain_quartic_instance(n, seed).program
    assert a.psd == b.psd and a.zero == b.zero
    assert (a.A != b.A).nnz == 0
    np.testing.assert_array_equal(a.b, b.b)
    np.testing.assert_array_equal(a.q, b.q)


@pytest.mark.parametrize("band", [1, 2, 3])
@pytest.mark.parametrize("order", [2, 3])
def test_block_sizes_follow_the_band(band, order):
    n = 6
    task = banded_quartic(n, band, 0)
    cliques = correlative_cliques(n, task.polynomial().support)
    assert sorted(cliques) == [tuple(range(i, i + band + 1)) for i in range(n - band)]
    sizes = assemble_sos(task.polynomial(), order, cliques).conic.psd
    assert list(sizes) == [comb(band + 1 + order, order)] * (n - band)
    assert banded_block_size(band, order) == comb(band + 1 + order, order)
    assert sparse_cubes(n, band, order) == sum(s**3 for s in sizes)
    dense = banded_quartic_instance(n, band, 0, "dense", order=order).program
    assert list(dense.psd) == [comb(n + order, order)]


def test_banded_theta_count_and_data_round_trip():
    n, band = 6, 2
    pairs = sum(min(band, n - 1 - i) for i in range(n - 1))
    assert len(banded_monomials(n, band)) == 3 * n + 3 * pairs
    instance = banded_quartic_instance(n, band, 1, order=3)
    assert instance.support_size == instance.theta0.numel() == 3 * n + 3 * pairs
    assert_data_reproduces(instance)


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: banded_quartic(4, 4), "band"),
        (lambda: banded_quartic(4, 0), "band"),
        (lambda: banded_quartic(1, 1), "n"),
        (lambda: banded_quartic(4, 1, -1), "seed"),
        (lambda: banded_quartic_instance(4, 1, 0, order=4), "order"),
        (lambda: banded_quartic_instance(4, 1, 0, "diagonal"), "formulation"),
        (lambda: banded_block_size(0, 2), "band"),
    ],
)
def test_banded_quartic_validates(call, field):
    with pytest.raises(ValueError, match=field):
        call()


@pytest.mark.parametrize(
    ("changes", "field", "error"),
    [
        ({"ns": (5, 4)}, "ns", ValueError),
        ({"ns": [4, 5]}, "ns", TypeError),
        ({"ns": (2, 4)}, "ns", ValueError),
        ({"bands": (0, 1)}, "bands", ValueError),
        ({"bands": (5,)}, "bands", ValueError),
        ({"orders": (2, 4)}, "orders", ValueError),
        ({"dense_max_block": 0}, "dense_max_block", ValueError),
        ({"sparse_max_cubes": 0}, "sparse_max_cubes", ValueError),
        ({"rounds": 0}, "rounds", ValueError),
        ({"seed": -1}, "seed", ValueError),
    ],
)
def test_explore_config_validates(changes, field, error):
    fields = {"ns": (4, 5), "bands": (1, 2), "orders": (2,)} | changes
    with pytest.raises(error, match=field):
        ExploreConfig(**fields)


def test_explore_config_cells_follow_the_caps():
    config = ExploreConfig(
        ns=(3, 4, 8), bands=(1, 3), orders=(2, 3), dense_max_block=15, sparse_max_cubes=50_000
    )
    cells = set(config.cells())
    assert (3, 2, 3, "sparse") not in cells  # band 3 needs n > 3
    assert (3, 3, 4, "sparse") in cells and (3, 3, 8, "sparse") not in cells  # 35³ = 42,875 per block
    assert {key for key in cells if key[3] == "dense"} == {
        (1, 2, 3, "dense"),
        (1, 2, 4, "dense"),
        (3, 2, 4, "dense"),
    }
    for scale in ("smoke", "default", "paper"):
        assert ExploreConfig.for_scale(scale).cells()


def test_tiny_grid_invariants():
    config = ExploreConfig(ns=(3, 4), bands=(1, 2), orders=(2,), dense_max_block=15, rounds=1)
    grid = explore_grid(config, verbose=False)
    assert set(grid.cells) == set(config.cells())
    for (band, order, n, formulation), cell in grid.cells.items():
        expected = (
            [comb(band + 1 + order, order)] * (n - band)
            if formulation == "sparse"
            else [comb(n + order, order)]
        )
        assert list(cell.block_sizes) == expected
        assert cell.iterations > 0 and cell.nnz_a > 0 and cell.nnz_m > cell.nnz_a
        assert cell.eig_flops < cell.flops
        assert cell.danskin_flops < cell.flops
        assert cell.backward_seconds > 0 and cell.danskin_seconds > 0
        if formulation == "sparse" and (band, order, n, "dense") in grid.cells:
            dense = grid.cells[band, order, n, "dense"]
            assert sum(s**3 for s in cell.block_sizes) <= dense.largest_block**3
            assert cell.flops <= dense.flops
            assert cell.gamma <= dense.gamma + 1e-6
            assert abs(cell.gamma - dense.gamma) < 1e-5  # banded (chordal) supports: no gap
    ns, flops = grid.series(1, 2, "sparse", "flops")
    assert list(ns) == [3, 4] and np.all(np.diff(flops) > 0)
    assert grid.slope(1, 2, "sparse", "flops") > 0
    with pytest.raises(ValueError, match="what"):
        grid.series(1, 2, "sparse", "speed")
    with pytest.raises(TypeError, match="config"):
        explore_grid({"ns": (3,)})


def test_equality_pattern_counts_every_entry():
    program = banded_quartic_instance(6, 2, 0).program
    eq = program.A.tocsr()[: program.zero]
    counts, edges = equality_pattern(program, bins=40)
    assert counts.shape == (40, 40) and counts.sum() == eq.nnz
    assert len(edges) == len(program.psd) + 1 and edges[0] == 0 and edges[-1] <= 40
    tiny = banded_quartic_instance(3, 1, 0).program
    small, _ = equality_pattern(tiny, bins=10_000)  # one bin per row and column
    assert small.shape == (tiny.zero, tiny.A.shape[1]) and small.max() == 1
    with pytest.raises(ValueError, match="bins"):
        equality_pattern(program, bins=0)
