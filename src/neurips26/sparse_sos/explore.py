"""The explore notebook's grid: how the certificate's structure — chain length ``n``, clique size (the
band of a :mod:`~neurips26.sparse_sos.tasks.banded_quartic`) and relaxation order ``d`` — drives the
cost of one backward pass.

Every cell of the grid is one banded quartic in one formulation, solved once by Clarabel at ``θ₀``. It
records the certificate's block sizes, ``nnz(A)``, ``nnz(M)`` of the structured backward's operator, the
declared flops of the structured adjoint (:mod:`~neurips26.sparse_sos.cost_model`, with the LSQR
iterations of a real run) and of Danskin's gradient, the certified bound ``γ*``, and wall seconds of
the forward and of both backwards (medians of ``rounds`` interleaved rounds,
:func:`neurips26.timing.time_interleaved`, one thread). The sparse formulation runs on every
``(band, order, n)`` with ``band < n`` whose blocks have ``Σ_k s_k³ ≤ sparse_max_cubes`` (the
eigendecompositions' work; band 3 at order 3 — blocks of 35 — takes seconds a solve beyond n = 8); the
dense one (one block ``binom(n + d, d)``, whatever the band) only where that block has at most
``dense_max_block`` rows, which keeps its solve under about a second.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np
import scipy.sparse as sp

from neurips26.progress import progress
from neurips26.scales import pick
from neurips26.sparse_sos.conic import BlockConicProgram
from neurips26.sparse_sos.cost_model import BackwardCost
from neurips26.sparse_sos.profiles import PreparedBackward, prepare_backward
from neurips26.sparse_sos.tasks.banded_quartic import ORDERS, banded_block_size, banded_quartic_instance
from neurips26.stats import loglog_fit
from neurips26.timing import time_interleaved
from neurips26.validation import check_int, check_int_tuple, check_seed

#: What a grid cell records (the names :meth:`ExploreGrid.series` takes).
CELL_FIELDS: tuple[str, ...] = (
    "blocks",
    "largest_block",
    "nnz_a",
    "nnz_m",
    "iterations",
    "flops",
    "danskin_flops",
    "gamma",
    "forward_seconds",
    "backward_seconds",
    "danskin_seconds",
)


def sparse_cubes(n: int, band: int, order: int) -> int:
    """``Σ_k s_k³`` of the banded quartic's sparse certificate: ``n − band`` blocks of
    ``binom(band + 1 + d, d)`` (:func:`~neurips26.sparse_sos.tasks.banded_quartic.banded_block_size`)."""
    return (n - band) * banded_block_size(band, order) ** 3


@dataclass(frozen=True)
class ExploreConfig:
    """The grid: chain lengths ``ns``, bandwidths ``bands`` (clique size ``band + 1``), relaxation
    ``orders`` (2, 3); the sparse formulation where its blocks have ``Σ s_k³ ≤ sparse_max_cubes``, the
    dense one where ``binom(n + d, d) ≤ dense_max_block``; ``rounds`` interleaved timing rounds per cell;
    ``θ₀`` from ``seed``."""

    ns: tuple[int, ...]
    bands: tuple[int, ...] = (1, 2, 3)
    orders: tuple[int, ...] = ORDERS
    dense_max_block: int = 45
    sparse_max_cubes: int = 250_000
    rounds: int = 3
    seed: int = 0

    def __post_init__(self) -> None:
        check_int_tuple("ns", self.ns, minimum=3, maximum=64)
        check_int_tuple("bands", self.bands, minimum=1, maximum=6)
        check_int_tuple("orders", self.orders, minimum=min(ORDERS), maximum=max(ORDERS))
        if self.bands[0] >= self.ns[-1]:
            raise ValueError(f"bands must hold a band below the largest n = {self.ns[-1]}; got {self.bands}")
        check_int("dense_max_block", self.dense_max_block, minimum=1)
        check_int("sparse_max_cubes", self.sparse_max_cubes, minimum=1)
        check_int("rounds", self.rounds, minimum=1)
        check_seed("seed", self.seed)

    @classmethod
    def for_scale(cls, scale: str) -> ExploreConfig:
        return cls(
            ns=pick(scale, smoke=(4, 5, 6), default=(4, 5, 6, 8, 10, 12), paper=(4, 5, 6, 8, 10, 12, 16, 20)),
            bands=pick(scale, smoke=(1, 2), default=(1, 2, 3), paper=(1, 2, 3)),
            orders=ORDERS,
            dense_max_block=pick(scale, smoke=35, default=45, paper=56),
            sparse_max_cubes=pick(scale, smoke=250_000, default=250_000, paper=500_000),
            rounds=pick(scale, smoke=1, default=3, paper=7),
        )

    def steps(self) -> tuple[tuple[int, int], ...]:
        """The ``(band, order)`` pairs, band first: one slider step each."""
        return tuple((band, order) for band in self.bands for order in self.orders)

    def cells(self) -> tuple[tuple[int, int, int, str], ...]:
        """Every ``(band, order, n, formulation)`` the grid runs (module docstring)."""
        out = []
        for band, order in self.steps():
            for n in self.ns:
                if band >= n:
                    continue
                if sparse_cubes(n, band, order) <= self.sparse_max_cubes:
                    out.append((band, order, n, "sparse"))
                if comb(n + order, order) <= self.dense_max_block:
                    out.append((band, order, n, "dense"))
        return tuple(out)


@dataclass(frozen=True)
class ExploreCell:
    """One program and its backward passes (module docstring); ``block_sizes`` of its PSD blocks."""

    band: int
    order: int
    n: int
    formulation: str
    block_sizes: tuple[int, ...]
    nnz_a: int
    nnz_m: int
    iterations: int
    flops: int
    danskin_flops: int
    gamma: float
    forward_seconds: float
    backward_seconds: float
    danskin_seconds: float

    @property
    def blocks(self) -> int:
        return len(self.block_sizes)

    @property
    def largest_block(self) -> int:
        return max(self.block_sizes)

    @property
    def eig_flops(self) -> int:
        """The eigendecompositions' share ``Σ_k 9 s_k³`` of :attr:`flops`; the rest is LSQR's."""
        return 9 * sum(s**3 for s in self.block_sizes)


def measure_cell(
    band: int, order: int, n: int, formulation: str, *, seed: int = 0, rounds: int = 3
) -> ExploreCell:
    """Build, solve and time one cell (module docstring)."""
    instance = banded_quartic_instance(n, band, seed, formulation, order=order)
    structured = prepare_backward(instance, "structured")
    _, iterations = structured.run()  # the declared cost counts this run's LSQR iterations (and warms up)
    danskin = PreparedBackward(
        instance, "danskin", structured.program, structured.solution, structured.forward_seconds, None
    )
    timing = time_interleaved(
        {"structured": structured.run, "danskin": danskin.run}, rounds=rounds, warmup=0, threads=1
    )
    cost = BackwardCost.structured(structured.program, structured.solution, iterations)
    theta_dim = int(instance.theta0.numel())
    return ExploreCell(
        band,
        order,
        n,
        formulation,
        tuple(int(s) for s in instance.program.psd),
        cost.nnz_a,
        cost.nnz_m,
        cost.iterations,
        cost.flops,
        BackwardCost.danskin(instance.support_size, theta_dim).flops,
        float(instance.value_sign * structured.solution.value),
        float(structured.forward_seconds),
        timing.median("structured"),
        timing.median("danskin"),
    )


@dataclass(frozen=True)
class ExploreGrid:
    """Every cell of :meth:`ExploreConfig.cells`, keyed ``(band, order, n, formulation)``."""

    config: ExploreConfig
    cells: dict[tuple[int, int, int, str], ExploreCell]

    def series(self, band: int, order: int, formulation: str, what: str) -> tuple[np.ndarray, np.ndarray]:
        """``(n, value)`` over the chain lengths the cell ran at; ``what`` one of :data:`CELL_FIELDS`."""
        if what not in CELL_FIELDS:
            raise ValueError(f"what must be one of {CELL_FIELDS}; got {what!r}")
        ns = [n for n in self.config.ns if (band, order, n, formulation) in self.cells]
        values = [float(getattr(self.cells[band, order, n, formulation], what)) for n in ns]
        return np.array(ns, dtype=int), np.array(values, dtype=float)

    def slope(self, band: int, order: int, formulation: str, what: str) -> float:
        """The log–log slope of ``what`` against ``n`` (nan with fewer than two points)."""
        ns, values = self.series(band, order, formulation, what)
        if len(ns) < 2:
            return float("nan")
        return float(loglog_fit(ns, values, skip_invalid=True)[0])


def explore_grid(config: ExploreConfig, *, verbose: bool = True) -> ExploreGrid:
    """Run every cell of ``config`` (module docstring)."""
    if not isinstance(config, ExploreConfig):
        raise TypeError(f"config must be an ExploreConfig; got {type(config).__name__}")
    cells = {}
    for key in progress(config.cells(), desc="explore grid", show=verbose):
        cells[key] = measure_cell(*key, seed=config.seed, rounds=config.rounds)
    return ExploreGrid(config, cells)


def equality_pattern(program: BlockConicProgram, bins: int = 80) -> tuple[np.ndarray, np.ndarray]:
    """The equality rows of ``A`` binned for a spy plot: ``(counts, column edges of the blocks)``.

    ``counts[i, j]`` is the number of stored entries of ``A[:zero]`` (one row per monomial) in row bin
    ``i`` and column bin ``j`` (at most ``bins`` each; a small matrix keeps one row or column per bin);
    the edges are the first columns of the PSD blocks' ``svec`` ranges and of ``γ``, in bin units.
    """
    if not isinstance(program, BlockConicProgram):
        raise TypeError(f"program must be a BlockConicProgram; got {type(program).__name__}")
    bins = check_int("bins", bins, minimum=1)
    eq = sp.coo_matrix(program.A.tocsr()[: program.zero])
    rows, cols = eq.shape
    rb, cb = min(bins, rows), min(bins, cols)
    counts = np.zeros((rb, cb), dtype=int)
    np.add.at(counts, (eq.row * rb // rows, eq.col * cb // cols), 1)
    offsets = np.cumsum([0] + [s * (s + 1) // 2 for s in program.psd])
    return counts, offsets * cb / cols
