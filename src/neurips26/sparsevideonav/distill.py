"""Stage 3: distil the 50-step teacher into a 4-step student (a simplified Phased Consistency Model).

The paper distils its history-injected generator with PCM (Wang et al., 2024) from N = 50 teacher steps
to M = 4 student steps and reports a 9.6× speed-up at similar fidelity; it does not give PCM's settings.
Ours, written from PCM's idea:

- **Phases.** ``[0, 1]`` splits into ``M`` phases with edges ``1 = s₀ > s₁ > … > s_M = 0`` (uniform: the
  released 4-step grid 1, 0.75, 0.5, 0.25, 0). Within phase ``k`` (``s_{k−1} ≥ t > s_k``) the student's
  one-step map to the phase's end is ``f_φ(x_t, t) = x_t + (s_k − t) u_φ(x_t, t)``; sampling applies it
  once per phase, i.e. 4 Euler steps on the edges.
- **Teacher trajectories, solved once.** For a set of training decisions (reference, words, history) the
  teacher integrates its flow from seeded noise with 50 Euler steps (reference re-injected), the phase
  edges that fall between its grid times added to the grid (0.75 and 0.25: 52 steps), and every state is
  kept. So ``x̂_{s_k}`` — where the teacher's ODE goes from ``x_t`` — is a stored state.
- **Loss.** ``‖f_φ(x_t, t) − sg[x̂_{s_k}]‖²`` (land where the teacher lands) plus a consistency term
  ``‖f_φ(x_t, t) − sg[f_{φ⁻}(x_{t'}, t')]‖²`` between adjacent grid times ``t > t'`` of the same phase, with
  ``φ⁻`` an EMA (0.95) of the student (``f`` at the phase end is the identity). Future slots only: the
  reference is re-injected.
- **What the student shares.** Only the generator is distilled; it starts as a copy of the teacher's and
  reads the teacher's frozen Former memory ``h_T`` (the Former runs once per decision, not per step).

The trajectories are solved on the teacher's device (the student's too) and the updates run through
:func:`neurips26.train.fit`, so under ``torchrun`` the student trains data-parallel; every rank solves the
same trajectories (the same seed: they are the data, not a loss's noise).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from neurips26.distributed import unwrap
from neurips26.flow import euler_sample, uniform_grid
from neurips26.seeding import sub_seed
from neurips26.sparsevideonav.dataset import Episode, make_batch
from neurips26.sparsevideonav.generator import SparseVideoGenerator
from neurips26.sparsevideonav.sampler import initial_state, inject
from neurips26.sparsevideonav.timeline import REFERENCE_CHUNKS
from neurips26.sparsevideonav.train import MAX_HISTORY, Recipe, Stage2, device_of, fit_recipe
from neurips26.train.fit import move_batch
from neurips26.validation import check_float, check_int


@dataclass(frozen=True)
class DistillConfig:
    """phases M, teacher_steps N (a multiple of M), ema decay, consistency weight, teacher trajectories."""

    phases: int = 4
    teacher_steps: int = 50
    ema: float = 0.95
    consistency: float = 1.0
    trajectories: int = 1024

    def __post_init__(self) -> None:
        check_int("phases", self.phases, minimum=1)
        check_int("teacher_steps", self.teacher_steps, minimum=1)
        check_float("ema", self.ema, minimum=0.0, maximum=1.0)
        check_float("consistency", self.consistency, minimum=0.0)
        check_int("trajectories", self.trajectories, minimum=1)

    @property
    def grid(self) -> tuple[float, ...]:
        """The teacher's time grid, 1 → 0: ``teacher_steps`` uniform steps with the phase edges inserted
        where they fall between grid times (50 steps and 4 phases: 0.75 and 0.25 join, 52 steps)."""
        times = set(uniform_grid(self.teacher_steps)) | set(self.edges)
        merged: list[float] = []
        for t in sorted(times, reverse=True):
            if not merged or merged[-1] - t > 1e-9:
                merged.append(t)
        return tuple(merged)

    @property
    def edges(self) -> tuple[float, ...]:
        """Phase edges ``s₀ = 1 > … > s_M = 0`` (the student's sampling grid)."""
        return uniform_grid(self.phases)


@dataclass(frozen=True)
class TeacherPaths:
    """The teacher's trajectories: states (N, K + 1, S, 2, 16) on its grid (index 0 = noise), the clean
    reference (N, 2, 2, 16), words (N, L), the Former memory (N, M, D)."""

    states: Tensor
    reference: Tensor
    words: Tensor
    memory: Tensor


@torch.no_grad()
def teacher_paths(
    teacher: Stage2,
    episodes: Sequence[Episode],
    pairs: np.ndarray,
    config: DistillConfig,
    *,
    seed: int,
    batch: int = 256,
) -> TeacherPaths:
    """Integrate the teacher from seeded noise for every (episode, decision) row of ``pairs``."""
    gen = teacher.generator
    offsets = gen.config.offsets
    device = device_of(gen)
    states, refs, words, memories = [], [], [], []
    noise = torch.Generator().manual_seed(seed)
    for start in range(0, len(pairs), batch):
        b = make_batch(episodes, pairs[start : start + batch], offsets, max_history=MAX_HISTORY)
        b = move_batch(b, device)
        reference = b.clip[:, :REFERENCE_CHUNKS]
        memory = teacher.memory(b.history, b.history_mask, b.words)
        z = initial_state(reference, len(offsets), generator=noise)
        _, path = euler_sample(
            lambda x, t, w=b.words, m=memory: gen(x, t, w, memory=m),
            z,
            config.grid,
            return_path=True,
            project=lambda x, _t, r=reference: inject(x, r),
        )
        states.append(torch.stack(path, dim=1))
        refs.append(reference)
        words.append(b.words)
        memories.append(memory)
    width = max(w.shape[1] for w in words)
    words = [torch.nn.functional.pad(w, (0, width - w.shape[1])) for w in words]
    return TeacherPaths(torch.cat(states), torch.cat(refs), torch.cat(words), torch.cat(memories))


def _phase_end(t: Tensor, edges: Tensor) -> Tensor:
    """The end ``s_k`` of the phase holding each ``t`` (``s_{k−1} ≥ t > s_k``)."""
    below = edges[None, :] < t[:, None] - 1e-9  # edges strictly below t
    return torch.where(below, edges[None, :], torch.full_like(below, -1.0, dtype=t.dtype)).amax(dim=1)


def pcm_loss(
    student: SparseVideoGenerator,
    ema: SparseVideoGenerator,
    paths: TeacherPaths,
    rows: Tensor,
    steps: Tensor,
    config: DistillConfig,
) -> Tensor:
    """The Stage-3 loss (module doc) at trajectories ``rows`` and teacher grid indices ``steps`` (< K)."""
    grid = torch.tensor(config.grid, dtype=paths.states.dtype, device=paths.states.device)
    edges = torch.tensor(config.edges, dtype=paths.states.dtype, device=paths.states.device)
    t, t_next = grid[steps], grid[steps + 1]
    end = _phase_end(t, edges)
    index_end = torch.searchsorted(-grid, -end - 1e-9)  # the grid index of s_k (grid falls from 1 to 0)
    x_t = paths.states[rows, steps]
    x_next = paths.states[rows, steps + 1]
    target = paths.states[rows, index_end]
    words, memory = paths.words[rows], paths.memory[rows]
    first = REFERENCE_CHUNKS

    def one_step(model, x, level):
        return x + (end - level)[:, None, None, None] * model(x, level, words, memory=memory)

    f = one_step(student, x_t, t)
    loss = (f - target)[:, first:].pow(2).mean()
    if config.consistency > 0:
        with torch.no_grad():
            inside = (t_next > end + 1e-9)[:, None, None, None]
            f_ema = torch.where(inside, one_step(ema, x_next, t_next), x_next)
        loss = loss + config.consistency * (f - f_ema)[:, first:].pow(2).mean()
    return loss


def distill(
    teacher: Stage2,
    episodes: Sequence[Episode],
    pairs: np.ndarray,
    config: DistillConfig,
    recipe: Recipe,
    *,
    progress: bool = False,
) -> tuple[SparseVideoGenerator, list[float]]:
    """The 4-step student (eval mode) and its loss curve: teacher paths once, then :func:`pcm_loss` updates.

    Each update draws ``recipe.batch`` (trajectory, grid index) pairs uniformly, seeded by the update.
    The EMA target moves once per update, before the loss (so it lags the student by one update).
    """
    paths = teacher_paths(teacher, episodes, pairs, config, seed=sub_seed(recipe.seed, 143))
    student = copy.deepcopy(teacher.generator).train()
    for p in student.parameters():
        p.requires_grad_(True)
    ema = copy.deepcopy(teacher.generator).eval()
    for p in ema.parameters():
        p.requires_grad_(False)
    n = len(paths.states)

    def batch_at(step: int):
        rng = np.random.default_rng(sub_seed(recipe.seed, 144, step))
        return (
            torch.as_tensor(rng.integers(0, n, recipe.batch)),
            torch.as_tensor(rng.integers(0, len(config.grid) - 1, recipe.batch)),
        )

    def loss(model: SparseVideoGenerator, batch) -> Tensor:
        with torch.no_grad():  # φ⁻ ← ema φ⁻ + (1 − ema) φ
            for target, source in zip(ema.parameters(), unwrap(model).parameters(), strict=True):
                target.mul_(config.ema).add_(source.detach(), alpha=1 - config.ema)
        rows, steps = batch
        return pcm_loss(model, ema, paths, rows, steps, config)

    losses = fit_recipe(
        student, loss, batch_at, recipe, "stage 3 (distillation)", progress=progress, freeze=True
    )
    return student, losses


__all__ = ["DistillConfig", "TeacherPaths", "distill", "pcm_loss", "teacher_paths"]
