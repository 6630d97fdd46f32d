"""Task 4: SO(2) pose synchronisation on a cycle plus chords, by its Shor relaxation with ``2 × 2`` blocks.

Poses ``R_i ∈ SO(2)``, measurements ``R̃_ij = R(θ_ij) ≈ R_iᵀ R_j`` on the edges. The QCQP
``min Σ_ij ‖R_j − R_i R̃_ij‖²_F`` over ``R_iᵀ R_i = I`` is, up to a constant, ``min Σ_ij −2⟨R̃_ij, X_ij⟩``
with ``X = Rᵀ R`` (``R = [R_1 … R_n]``, ``X_ij = R_iᵀ R_j``); the relaxation drops ``rank X = 2`` and keeps
``X_ii = I_2, X ⪰ 0`` (:func:`~neurips26.sparse_sos.tasks.maxcut.shor_program` with ``d = 2``). ``X`` is
invariant under the gauge ``R ↦ G R``, so its optimum is unique when the relaxation is tight. Rotations are
extracted along the cycle, ``R̂_0 = I, R̂_{i+1} = R̂_i X_{i,i+1}`` (those blocks lie on every chordal pattern).
``θ`` = the measured angles (they enter ``q`` through ``cos``, ``sin``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neurips26.sparse_sos.tasks.base import FORMULATIONS, ConicData, TaskInstance
from neurips26.sparse_sos.tasks.maxcut import Entry, ShorProgram, node_cliques, shor_program
from neurips26.validation import check_choice, check_float, check_int, check_seed

_F64 = torch.float64


def rotation(angle: torch.Tensor) -> torch.Tensor:
    """``R(φ) = [[cos φ, −sin φ], [sin φ, cos φ]]`` for a tensor of angles (shape ``(..., 2, 2)``)."""
    c, s = torch.cos(angle), torch.sin(angle)
    return torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)


@dataclass(frozen=True, eq=False)
class PoseGraph:
    """``n`` poses, edges ``(i, j)`` with ``i < j`` (the cycle first, then chords), ground-truth angles
    ``φ`` (``φ_0 = 0``) and measured relative angles ``θ₀ = φ_j − φ_i + noise``."""

    n: int
    edges: tuple[Entry, ...]
    truth: torch.Tensor
    theta0: torch.Tensor

    def block_entries(self) -> tuple[Entry, ...]:
        """The scalar entries ``(2i + r, 2j + r')`` of every edge block, edge by edge, row-major."""
        return tuple((2 * i + r, 2 * j + c) for i, j in self.edges for r in range(2) for c in range(2))

    def cost_matrix(self, theta: torch.Tensor) -> torch.Tensor:
        """``C`` (``2n × 2n``) with ``⟨C, X⟩ = Σ −2⟨R̃_ij, X_ij⟩``: ``C_ij = −R̃_ij``, ``C_ji = C_ijᵀ``."""
        C = torch.zeros(2 * self.n, 2 * self.n, dtype=_F64, device=theta.device)
        for e, (i, j) in enumerate(self.edges):
            R = rotation(theta[e])
            C[2 * i : 2 * i + 2, 2 * j : 2 * j + 2] = -R
            C[2 * j : 2 * j + 2, 2 * i : 2 * i + 2] = -R.T
        return C

    def truth_rotations(self) -> torch.Tensor:
        return rotation(self.truth)


def pose_graph(n: int, seed: int = 0, *, noise: float = 0.05, chords: int | None = None) -> PoseGraph:
    """A seeded pose graph: the cycle ``0 … n−1``, ``chords`` (default ``max(1, n // 5)``) short chords
    ``(i, i + 2)`` or ``(i, i + 3)``, true angles ``U(−π, π)`` (``φ_0 = 0``), noise ``N(0, noise²)``."""
    n = check_int("n", n, minimum=3, maximum=30)
    seed = check_seed("seed", seed)
    noise = check_float("noise", noise, minimum=0.0)
    chords = max(1, n // 5) if chords is None else check_int("chords", chords, minimum=0)
    rng = np.random.default_rng(seed)
    edges = [(i, i + 1) for i in range(n - 1)] + [(0, n - 1)]
    for _ in range(200):
        if len(edges) >= n + chords:
            break
        i = int(rng.integers(n))
        j = i + int(rng.integers(2, 4))
        if j < n and (i, j) not in edges:
            edges.append((i, j))
    truth = rng.uniform(-np.pi, np.pi, n)
    truth[0] = 0.0
    measured = np.array([truth[j] - truth[i] for i, j in edges]) + noise * rng.standard_normal(len(edges))
    return PoseGraph(
        n, tuple(edges), torch.as_tensor(truth, dtype=_F64), torch.as_tensor(measured, dtype=_F64)
    )


def cycle_rotations(shor: ShorProgram, x: torch.Tensor) -> torch.Tensor:
    """``R̂_0 = I, R̂_{i+1} = R̂_i X_{i,i+1}`` from a primal solution ``x`` (``n × 2 × 2``, differentiable)."""
    n = shor.n
    entries = [(2 * i + r, 2 * i + 2 + c) for i in range(n - 1) for r in range(2) for c in range(2)]
    blocks = shor.entries_of(x, entries).reshape(n - 1, 2, 2)
    out = [torch.eye(2, dtype=_F64, device=x.device)]
    for i in range(n - 1):
        out.append(out[-1] @ blocks[i])
    return torch.stack(out)


def pose_sync_instance(size: int, seed: int = 0, formulation: str = "sparse") -> TaskInstance:
    """Task 4 as a :class:`~neurips26.sparse_sos.tasks.base.TaskInstance`: ``θ`` (measured angles) enters
    ``q``; the value is the relaxation's optimum ``min Σ −2⟨R̃_ij, X_ij⟩``; the solution loss is
    ``Σ_i ‖R̂_i − R_i‖²_F`` of the extracted rotations against the ground truth."""
    check_choice("formulation", formulation, FORMULATIONS)
    graph = pose_graph(size, seed)
    shor = shor_program(graph.n, 2, node_cliques(graph.n, graph.edges, dense=formulation == "dense"))
    M = torch.as_tensor(shor.objective_matrix(graph.block_entries()), dtype=_F64)
    truth = graph.truth_rotations()

    def q_of(theta: torch.Tensor) -> torch.Tensor:
        if not isinstance(theta, torch.Tensor) or tuple(theta.shape) != (len(graph.edges),):
            raise ValueError(f"theta must be a tensor of shape ({len(graph.edges)},)")
        coefficients = -2.0 * rotation(theta.to(_F64)).reshape(-1)  # −2 R̃_ij, row-major per edge
        return M.to(theta.device) @ coefficients

    def data(theta: torch.Tensor) -> ConicData:
        return ConicData(q=q_of(theta))

    def loss(x: torch.Tensor, y: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return ((cycle_rotations(shor, x) - truth.to(x.device)) ** 2).sum()

    program = shor.conic.with_data(q=q_of(graph.theta0).numpy())
    support = int(np.count_nonzero(np.abs(M.numpy()).sum(axis=1)))
    return TaskInstance("pose_sync", size, formulation, program, graph.theta0, data, 1.0, support, loss)
