"""Backward speed on the six tasks (claim t1): the declared cost of three backwards and the wall clock of
two of them against a generic SDP layer, measured in one run.

Per task, at the largest size where the dense formulation still solves in about two seconds (and, for the
oscillator chain, where the notebook's budget still allows seven rounds of its sparse structured backward),
one forward solve per formulation; then:

* **declared cost** (:mod:`~neurips26.sparse_sos.cost_model`): the structured adjoint on the dense
  formulation (what a generic layer's backward does on the unstructured program, in our code), the
  structured adjoint on the sparse formulation, and Danskin's path;
* **wall clock**, in interleaved rounds (:func:`neurips26.timing.time_interleaved`): the backward of the
  dense formulation through cvxpylayers/diffcp (the generic SDP layer, on the task's value), our
  structured backward (on the task's solution loss) and Danskin's (on the value). Only the backward is
  timed: each callable reuses one forward.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from neurips26.progress import progress
from neurips26.scales import pick
from neurips26.sparse_sos.baselines.cvxpylayers_sdp import CvxpyLayersSDP
from neurips26.sparse_sos.profiles import prepare_backward, profile_backward
from neurips26.sparse_sos.tasks.base import TaskInstance
from neurips26.sparse_sos.tasks.registry import TASKS, task_instance
from neurips26.timing import time_interleaved
from neurips26.validation import check_choice, check_int, check_seed

#: Tasks whose sparse formulation is a clique decomposition of the dense one: PSD blocks of bounded size,
#: one per clique of a chordal graph, while the dense block grows with the instance. The pendulum (sign
#: symmetry) and the projection (term sparsity, which finds nothing to split at orders 2–3) have two
#: variables and fixed-size programs: their "sparse" and dense formulations barely differ, so the structured
#: path's cost criterion does not apply to them (Danskin's does).
CLIQUE_TASKS: tuple[str, ...] = ("chain_quartic", "maxcut", "oscillator", "pose_sync")

#: The wall-clock contenders, in the order of the timing table.
GENERIC = "dense + cvxpylayers"
STRUCTURED = "sparse structured"
DANSKIN = "Danskin"


@dataclass(frozen=True)
class SpeedConfig:
    """``sizes``: (task, size) pairs — the largest size where each task's dense formulation runs;
    ``rounds`` interleaved timing rounds (after one warm-up)."""

    sizes: tuple[tuple[str, int], ...]
    seed: int = 0
    rounds: int = 7

    def __post_init__(self) -> None:
        if not isinstance(self.sizes, tuple) or not self.sizes:
            raise TypeError("sizes must be a non-empty tuple of (task, size) pairs")
        for k, pair in enumerate(self.sizes):
            if not isinstance(pair, tuple) or len(pair) != 2:
                raise ValueError(f"sizes[{k}] must be a (task, size) pair; got {pair!r}")
            check_choice(f"sizes[{k}][0]", pair[0], tuple(TASKS))
            check_int(f"sizes[{k}][1]", pair[1], minimum=2)
        check_seed("seed", self.seed)
        check_int("rounds", self.rounds, minimum=1)

    @classmethod
    def for_scale(cls, scale: str) -> SpeedConfig:
        # dense solves at default (Clarabel, one thread): chain n = 8 0.4 s, MaxCut 48 nodes 1.0 s, pose
        # sync 24 poses 0.8 s, the rest below 0.1 s; the next sizes (MaxCut 60, pose sync 30) take > 2 s.
        # The oscillator stops at N = 12: its sparse structured backward takes 1.4 s there and 8 s at N = 16.
        default = (
            ("chain_quartic", 8),
            ("maxcut", 48),
            ("oscillator", 12),
            ("pose_sync", 24),
            ("pendulum", 4),
            ("projection", 2),
        )
        smoke = (
            ("chain_quartic", 4),
            ("maxcut", 9),
            ("oscillator", 3),
            ("pose_sync", 6),
            ("pendulum", 2),
            ("projection", 2),
        )
        paper = (
            ("chain_quartic", 8),
            ("maxcut", 60),
            ("oscillator", 20),
            ("pose_sync", 30),
            ("pendulum", 6),
            ("projection", 3),
        )
        return cls(
            sizes=pick(scale, smoke=smoke, default=default, paper=paper),
            rounds=pick(scale, smoke=2, default=7, paper=15),
        )


@dataclass(frozen=True)
class TaskSpeed:
    """One task's measurements: ``flops`` per backward (dense structured, sparse structured, Danskin), the
    per-round backward seconds of the three wall-clock contenders, the blocks of each formulation, and the
    LSQR ``iterations`` of the structured adjoint on each (``"dense"``, ``"structured"``)."""

    task: str
    size: int
    sparse_blocks: tuple[int, ...]
    dense_blocks: tuple[int, ...]
    flops: dict[str, int]
    seconds: dict[str, tuple[float, ...]]
    iterations: dict[str, int] = field(default_factory=dict)

    @property
    def clique_decomposed(self) -> bool:
        """Whether the task is one of :data:`CLIQUE_TASKS` (its sparse blocks come from cliques, so the
        structured path's cost criterion applies)."""
        return self.task in CLIQUE_TASKS

    def cost_ratio(self, path: str) -> float:
        """Declared cost of the dense structured backward over ``path``'s (``"structured"``/``"danskin"``)."""
        return self.flops["dense"] / self.flops[path]

    def rounds_faster(self, name: str) -> int:
        """Rounds in which ``name``'s backward beat the generic layer's."""
        return int(sum(a < g for a, g in zip(self.seconds[name], self.seconds[GENERIC], strict=True)))

    def median_ratio(self, name: str) -> float:
        """Median over rounds of generic / ``name`` backward seconds (paired per round)."""
        pairs = [g / a for a, g in zip(self.seconds[name], self.seconds[GENERIC], strict=True)]
        return float(np.median(pairs))


def _generic_backward(instance: TaskInstance) -> tuple[callable, float]:
    """The dense formulation's value through cvxpylayers: one forward, and a callable running its backward."""
    theta = instance.theta0.clone().requires_grad_(True)
    b, q, a = instance.data(theta)
    parameters = tuple(
        name for name, part in zip(("b", "q", "a_values"), (b, q, a), strict=True) if part is not None
    )
    layer = CvxpyLayersSDP(instance.program, parameters)
    value = instance.value_sign * layer(b=b, q=q, a_values=a).value

    def backward() -> torch.Tensor:
        (grad,) = torch.autograd.grad(value, theta, retain_graph=True)
        return grad

    return backward, layer.canonicalisation_seconds


def task_speed(task: str, size: int, *, seed: int = 0, rounds: int = 7) -> TaskSpeed:
    """Measure one task (module docstring). ``ValueError`` naming ``task`` or ``size`` (via the task's own
    check) on a bad one, ``rounds`` when it is below 1."""
    check_choice("task", task, tuple(TASKS))
    check_int("rounds", rounds, minimum=1)
    sparse = task_instance(task, size, seed, "sparse")
    dense = task_instance(task, size, seed, "dense")
    costs = {
        "dense": profile_backward(dense, "structured").cost,
        "structured": profile_backward(sparse, "structured").cost,
        "danskin": profile_backward(sparse, "danskin").cost,
    }
    flops = {path: cost.flops for path, cost in costs.items()}
    iterations = {path: costs[path].iterations for path in ("dense", "structured")}
    generic, _ = _generic_backward(dense)
    runs = {
        GENERIC: generic,
        STRUCTURED: prepare_backward(sparse, "structured").run,
        DANSKIN: prepare_backward(sparse, "danskin").run,
    }
    timing = time_interleaved(runs, rounds=rounds, warmup=1, threads=1, reference=GENERIC)
    return TaskSpeed(
        task, size, sparse.program.psd, dense.program.psd, flops, dict(timing.seconds), iterations
    )


def backward_speed(config: SpeedConfig, *, verbose: bool = True) -> dict[str, TaskSpeed]:
    """:func:`task_speed` for every task of ``config``, in order."""
    return {
        task: task_speed(task, size, seed=config.seed, rounds=config.rounds)
        for task, size in progress(config.sizes, desc="tasks", show=verbose)
    }
