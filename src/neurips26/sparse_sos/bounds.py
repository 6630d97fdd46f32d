"""Does the sparse program keep the bound? (claim t4) The task value of the sparse formulation against the
dense one's, at every size where the dense formulation runs.

For an SOS lower bound the sparse cone is inside the dense one, so ``γ_sparse ≤ γ_dense``; for the chain
quartic the two are equal (the correlative-sparsity pattern is a path, whose quartics' certificates split
over the edges). For a chordally decomposed Shor relaxation (MaxCut, pose sync) the values are equal by
the PSD-completion theorem (Grone et al. 1984). Values are compared as ``value_sparse − value_dense``,
with Clarabel at its default gap 1e-8.

The oscillator chain is compared on its certified decay rate ``μ*`` (banded ``P`` against a full one), not
on its task value: that value is the inner program's margin ``t*`` at the formulation's *own* ``μ*``, zero
for both by construction, so comparing it would test nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from neurips26.progress import progress
from neurips26.scales import pick
from neurips26.sparse_sos.solve import solve
from neurips26.sparse_sos.tasks.oscillator import certified_rate, oscillator_chain
from neurips26.sparse_sos.tasks.registry import TASKS, task_instance
from neurips26.validation import check_choice, check_int, check_seed

#: Tasks whose sparse program restricts the certificate (a smaller cone), so ``value_sparse ≤ value_dense``.
RESTRICTION_TASKS: tuple[str, ...] = ("chain_quartic", "oscillator", "pendulum", "projection")
#: Tasks whose sparse value must equal the dense one: chains, and the chordally decomposed Shor relaxations.
EQUAL_TASKS: tuple[str, ...] = ("chain_quartic", "maxcut", "pose_sync")


@dataclass(frozen=True)
class BoundsConfig:
    """``sizes``: per task the sizes to compare at (each must let the dense formulation run)."""

    sizes: tuple[tuple[str, tuple[int, ...]], ...]
    seed: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.sizes, tuple) or not self.sizes:
            raise TypeError("sizes must be a non-empty tuple of (task, sizes) pairs")
        for k, pair in enumerate(self.sizes):
            if not isinstance(pair, tuple) or len(pair) != 2 or not isinstance(pair[1], tuple) or not pair[1]:
                raise ValueError(f"sizes[{k}] must be a (task, non-empty tuple of sizes) pair; got {pair!r}")
            check_choice(f"sizes[{k}][0]", pair[0], tuple(TASKS))
            for j, size in enumerate(pair[1]):
                check_int(f"sizes[{k}][1][{j}]", size, minimum=2)
        check_seed("seed", self.seed)

    @classmethod
    def for_scale(cls, scale: str) -> BoundsConfig:
        sizes = (
            ("chain_quartic", pick(scale, smoke=(3, 4), default=(4, 5, 6, 7, 8), paper=(4, 6, 8, 10))),
            ("maxcut", pick(scale, smoke=(6,), default=(9, 24, 48), paper=(9, 24, 48, 60))),
            ("oscillator", pick(scale, smoke=(3,), default=(4, 8, 12), paper=(4, 8, 12, 20))),
            ("pose_sync", pick(scale, smoke=(4,), default=(6, 12, 24), paper=(6, 12, 24, 30))),
            ("pendulum", pick(scale, smoke=(2,), default=(2, 4, 6), paper=(2, 4, 6))),
            ("projection", pick(scale, smoke=(2,), default=(2, 3), paper=(2, 3))),
        )
        return cls(sizes=sizes)


@dataclass(frozen=True)
class BoundRow:
    """One comparison: the ``sparse`` and ``dense`` task values and ``gap = sparse − dense``."""

    task: str
    size: int
    sparse: float
    dense: float
    gap: float


def bound_value(task: str, size: int, seed: int, formulation: str) -> float:
    """The value compared for ``task``: the certified rate ``μ*`` for the oscillator chain, else the task
    value ``value_sign · p*`` (module docstring)."""
    if task == "oscillator":
        return float(certified_rate(oscillator_chain(size, seed), dense=formulation == "dense")[0])
    instance = task_instance(task, size, seed, formulation)
    return float(instance.value_sign * solve(instance.program).value)


def value_gap(config: BoundsConfig, *, verbose: bool = True) -> list[BoundRow]:
    """Every (task, size) of ``config``: both formulations solved, and their gap."""
    rows = []
    pairs = [(task, size) for task, sizes in config.sizes for size in sizes]
    for task, size in progress(pairs, desc="sparse vs dense", show=verbose):
        v_sparse = bound_value(task, size, config.seed, "sparse")
        v_dense = bound_value(task, size, config.seed, "dense")
        rows.append(BoundRow(task, size, v_sparse, v_dense, v_sparse - v_dense))
    return rows
