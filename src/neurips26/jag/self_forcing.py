"""Self Forcing: a few-step causal generator trained on its own rollouts by distribution matching (DMD).

Chapter 07, the distillation stage (Huang et al.'s Self Forcing; DMD from Yin et al.). The many-step
bidirectional teacher of :mod:`neurips26.jag.diffusion_forcing` is distilled into a causal student that
makes each frame in ``S = 4`` steps and is trained on what it generates itself, so training and inference
see the same context (no exposure bias).

**The few-step sampler** (:data:`STUDENT_LEVELS`, Wan's levels {1000, 750, 500, 250} with shift 5, i.e.
``t ∈ {1, 15/16, 5/6, 5/8}``): a frame starts from noise; at step ``i`` the student predicts the clean
frame ``x̂₀ = z − t_i v`` (:func:`neurips26.flow.x0_from_velocity`) and, unless it is the last step, the
frame is re-noised to the next level, ``z = (1 − t_{i+1}) x̂₀ + t_{i+1} ε``. After the frame the clean
output is written into the window cache at level 0.

**The rollout with gradient truncation** (:func:`rollout`): frame 0 is the given first frame; for every
later frame the steps before the *exit step* run without gradient and the exit step's ``x̂₀`` is the frame
(with gradient); the cache write is gradient-free. One exit step is drawn per rollout and shared by its
frames, as both public codes do [code] (``per_frame=True`` draws one per frame).

**DMD** (:func:`dmd_loss`): the rollout ``x̂`` is re-noised to a level ``τ ~ U[τ_min, τ_max]`` (one per
clip, the first frame clean); the frozen teacher gives ``x̂₀^real`` and the online critic ``x̂₀^fake``, and

    g = (x̂₀^fake − x̂₀^real) / mean|x̂ − x̂₀^real|,      L_DMD = ½ ‖x̂ − sg(x̂ − g)‖²,

whose gradient in ``x̂`` is ``g``: it moves the student's samples from where the critic says they are
towards where the teacher says data is. The critic (:func:`critic_loss`) is a bidirectional copy of the
teacher trained with the flow-matching loss on the student's detached samples, several updates per
generator update (:attr:`SelfForcingConfig.critic_updates`, 5 [code]).

**ODE initialisation** (:func:`ode_pairs`, :func:`ode_loss`): before Self Forcing, the causal student
regresses the clean ends of teacher sampling trajectories from their states at the student's levels (each
frame at its own randomly chosen level, the first frame clean), so the rollouts start from sensible frames.

Both branches are distilled when the student has geometry; an RGB-only student (the Self Forcing RGB
baseline) is matched on RGB, the teacher then seeing pure-noise geometry (it was trained with geometry
dropout for that, :data:`~neurips26.jag.diffusion_forcing.TEACHER_GEOMETRY_DROPOUT`).

**The memory in the scores.** The teacher reads a memory (trained on the teacher-forced one, emptied in
:data:`~neurips26.jag.diffusion_forcing.TEACHER_MEMORY_DROPOUT` of its clips). In DMD, the teacher and the
critic see the memory the student was conditioned on during its rollout (a :data:`Conditioning`; none for
a memoryless student, which is the teacher's empty-memory conditioning), and the ODE pairs of a student
with a memory are drawn with the teacher-forced one. A teacher without a memory cannot tell the student
that copying the rendered memory is right: in the chapter's first version it had none, and the SGF student
learnt flat frames that only the reward held together.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from neurips26 import distributed
from neurips26.flow import interpolate, shifted_grid, uniform_grid, velocity_target, x0_from_velocity
from neurips26.jag.diffusion_forcing import Clips, with_memory
from neurips26.jag.model import JAGModel
from neurips26.nn import KVCache
from neurips26.validation import check_float, check_int, check_seed

#: The student's denoising levels: four steps of Wan's schedule with shift 5 [code], then the data.
STUDENT_LEVELS: tuple[float, ...] = shifted_grid(4, 5.0)[:-1]
#: Euler steps of the teacher trajectories for the ODE initialisation.
TEACHER_STEPS = 32

MemoryFn = Callable[[int, Tensor, Tensor | None], tuple[Tensor | None, Tensor | None, Tensor | None]]
"""``memory_fn(k, rgb_frames, depth_frames) -> (M_rgb, M_logd, V)`` for frame ``k`` given the frames so far
(``(B, k, ...)``), or Nones: the hook Self Geometry Forcing fills (:mod:`neurips26.jag.sgf`)."""


@dataclass(frozen=True)
class SelfForcingConfig:
    """``levels`` the student's steps (descending, in (0, 1]); ``critic_updates`` per generator update;
    ``tau_min``/``tau_max`` the DMD re-noising range; ``per_frame`` exit steps; ``lr`` for both networks."""

    levels: tuple[float, ...] = STUDENT_LEVELS
    critic_updates: int = 5
    tau_min: float = 0.02
    tau_max: float = 0.98
    per_frame: bool = False
    lr: float = 1e-4
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.levels or any(not 0.0 < t <= 1.0 for t in self.levels):
            raise ValueError(f"levels must be a non-empty tuple of levels in (0, 1]; got {self.levels}")
        if any(a <= b for a, b in zip(self.levels[:-1], self.levels[1:], strict=False)):
            raise ValueError(f"levels must be strictly decreasing; got {self.levels}")
        check_int("critic_updates", self.critic_updates, minimum=1)
        check_float("tau_min", self.tau_min, minimum=0.0, maximum=1.0)
        check_float("tau_max", self.tau_max, minimum=self.tau_min, maximum=1.0)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_seed("seed", self.seed)

    @property
    def steps(self) -> int:
        return len(self.levels)


def check_exit_step(exit_step: int, steps: int) -> int:
    """``exit_step`` in ``[1, steps]`` (1-based), else ``ValueError`` naming ``exit_step``."""
    return check_int("exit_step", exit_step, minimum=1, maximum=steps)


@dataclass
class Rollout:
    """A generated clip: ``rgb`` (B, T, 3, H, W) and ``log_depth`` (B, T, 1, H, W) or None, frame 0 the
    given one; ``exit_steps`` (T,) the 1-based exit step of every frame (0 for frame 0)."""

    rgb: Tensor
    log_depth: Tensor | None
    exit_steps: list[int]


def _inputs(
    model: JAGModel, rgb: Tensor, d: Tensor, memory: tuple[Tensor | None, Tensor | None, Tensor | None]
) -> tuple[Tensor, Tensor | None]:
    m_rgb, m_d, valid = memory
    return with_memory(rgb, m_rgb, valid), (with_memory(d, m_d, valid) if model.config.geometry else None)


def rollout(
    model: JAGModel,
    first: tuple[Tensor, Tensor],
    plucker: Tensor,
    generator: torch.Generator,
    *,
    levels: tuple[float, ...] = STUDENT_LEVELS,
    exit_step: int | None = None,
    per_frame: bool = False,
    grad: bool = True,
    memory_fn: MemoryFn | None = None,
    cache: KVCache | None = None,
) -> Rollout:
    """Generate a clip frame by frame with the few-step sampler (module docstring).

    ``first = (rgb (B, 3, H, W), log_depth (B, 1, H, W))``, ``plucker`` (B, T, P, 6). ``exit_step`` (1-based)
    fixes the exit step of every frame; otherwise one is drawn from ``generator`` (per frame with
    ``per_frame``). With ``grad`` the exit step keeps its graph; inference passes ``grad=False`` and the
    last step (``exit_step = len(levels)``). ``cache``: an empty cache of the model to roll in (default a new
    one), for a caller that reads what it holds.
    """
    steps = len(levels)
    rgb0, d0 = first
    batch, frames = plucker.shape[:2]
    grid = (*levels, 0.0)
    cache = model.make_cache() if cache is None else cache
    rgbs, depths = [rgb0], [d0]
    exits = [0]
    shared = None
    if exit_step is not None:
        shared = check_exit_step(exit_step, steps)
    elif not per_frame:
        shared = int(torch.randint(1, steps + 1, (1,), generator=generator))

    def memory(k: int) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        if memory_fn is None:
            return (None, None, None)
        geo = torch.stack(depths, 1) if model.config.geometry else None
        return memory_fn(k, torch.stack(rgbs, 1), geo)

    with torch.no_grad():
        app, geo = _inputs(model, rgb0, d0, memory(0))
        model.write(cache, app, geo, plucker[:, 0])
    for k in range(1, frames):
        exit_k = shared if shared is not None else int(torch.randint(1, steps + 1, (1,), generator=generator))
        mem = memory(k)
        rgb = torch.randn(rgb0.shape, generator=generator).to(rgb0)
        d = torch.randn(d0.shape, generator=generator).to(d0)
        for i in range(exit_k):
            t = grid[i]
            keep = grad and i == exit_k - 1
            with torch.set_grad_enabled(keep):
                app, geo = _inputs(model, rgb, d, mem)
                level = torch.full((batch,), t, dtype=rgb0.dtype, device=rgb0.device)
                v_app, v_geo = model.step(app, geo, level, plucker[:, k], cache)
                x_rgb = x0_from_velocity(rgb, v_app, t)
                x_d = x0_from_velocity(d, v_geo, t) if v_geo is not None else d
            if i < exit_k - 1:  # re-noise to the next level (gradient-free)
                t_next = grid[i + 1]
                rgb = interpolate(x_rgb, torch.randn(rgb0.shape, generator=generator).to(rgb0), t_next)
                d = interpolate(x_d, torch.randn(d0.shape, generator=generator).to(d0), t_next)
        rgbs.append(x_rgb)
        depths.append(x_d)
        exits.append(exit_k)
        with torch.no_grad():
            app, geo = _inputs(model, x_rgb.detach(), x_d.detach(), mem)
            model.write(cache, app, geo, plucker[:, k])
    depth = torch.stack(depths, 1) if model.config.geometry else None
    return Rollout(torch.stack(rgbs, 1), depth, exits)


Conditioning = tuple[Tensor, Tensor, Tensor]
"""The memory input of a whole clip: ``(M_rgb (B, T, 3, H, W), log M_d (B, T, 1, H, W), V (B, T, 1, H, W))``,
zeros where not ``V``, as :func:`~neurips26.jag.diffusion_forcing.truth_memory` and
:meth:`neurips26.jag.sgf.SelfMemory.stacked` give it."""


def _memory_parts(memory: Conditioning | None) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    return (None, None, None) if memory is None else memory


def _clean_estimate(
    model: JAGModel,
    rgb: Tensor,
    d: Tensor | None,
    tau: Tensor,
    plucker: Tensor,
    memory: Conditioning | None = None,
):
    """``x̂₀`` of both branches from a bidirectional model at per-clip level ``tau`` (frame 0 at 0), given
    the clip's ``memory`` (None: empty)."""
    batch, frames = rgb.shape[:2]
    t = tau[:, None].expand(batch, frames).clone()
    t[:, 0] = 0.0
    m_rgb, m_d, valid = _memory_parts(memory)
    geo = with_memory(d, m_d, valid) if d is not None else None
    if model.config.geometry and d is None:  # an RGB-only student scored by a two-branch teacher
        raise ValueError("d must be given to a model with geometry")
    v_app, v_geo = model(with_memory(rgb, m_rgb, valid), geo, t, plucker)
    x_rgb = x0_from_velocity(rgb, v_app, t)
    x_d = x0_from_velocity(d, v_geo, t) if v_geo is not None else None
    return x_rgb, x_d


def _renoise(x: Tensor, tau: Tensor, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """``(x_τ, ε)`` with the first frame kept clean."""
    eps = torch.randn(x.shape, generator=generator).to(x)
    level = tau[:, None].expand(x.shape[:2]).clone()
    level[:, 0] = 0.0
    return interpolate(x, eps, level), eps


def _geometry_for(
    model: JAGModel, d: Tensor | None, like: Tensor, generator: torch.Generator
) -> Tensor | None:
    """What a model's geometry branch sees: ``d``, or pure noise for an RGB-only student's samples."""
    if not model.config.geometry:
        return None
    if d is not None:
        return d
    return torch.randn((*like.shape[:2], 1, *like.shape[3:]), generator=generator).to(like)


def dmd_loss(
    student_sample: Rollout,
    teacher: JAGModel,
    critic: JAGModel,
    plucker: Tensor,
    generator: torch.Generator,
    config: SelfForcingConfig,
    *,
    memory: Conditioning | None = None,
) -> Tensor:
    """``L_DMD`` of a rollout (module docstring), over frames ``1 … T − 1`` and the student's branches; the
    teacher and the critic see the ``memory`` the student was conditioned on (None: an empty one)."""
    x_rgb, x_d = student_sample.rgb, student_sample.log_depth
    batch = x_rgb.shape[0]
    u = torch.rand(batch, generator=generator).to(x_rgb)
    tau = config.tau_min + (config.tau_max - config.tau_min) * u
    with torch.no_grad():
        n_rgb, _ = _renoise(x_rgb.detach(), tau, generator)
        d_in = x_d.detach() if x_d is not None else None
        n_d = _renoise(d_in, tau, generator)[0] if d_in is not None else None
        geo = _geometry_for(teacher, n_d, n_rgb, generator)  # one draw for both scores
        real = _clean_estimate(teacher, n_rgb, geo, tau, plucker, memory)
        fake = _clean_estimate(critic, n_rgb, geo if critic.config.geometry else None, tau, plucker, memory)
    loss = x_rgb.new_zeros(())
    pairs = [(x_rgb, real[0], fake[0])]
    if x_d is not None and real[1] is not None and fake[1] is not None:
        pairs.append((x_d, real[1], fake[1]))
    for x, x_real, x_fake in pairs:
        norm = (x.detach() - x_real).abs().mean(dim=(1, 2, 3, 4), keepdim=True).clamp(min=1e-6)
        g = (x_fake - x_real) / norm
        target = (x - g).detach()
        loss = loss + 0.5 * (x[:, 1:] - target[:, 1:]).square().mean()
    return loss


def critic_loss(
    critic: JAGModel,
    sample: Rollout,
    plucker: Tensor,
    generator: torch.Generator,
    config: SelfForcingConfig,
    *,
    memory: Conditioning | None = None,
) -> Tensor:
    """Flow matching of the critic on the student's detached samples (frames ``1 … T − 1``), conditioned on
    the ``memory`` the student saw (None: an empty one)."""
    x_rgb = sample.rgb.detach()
    x_d = sample.log_depth.detach() if sample.log_depth is not None else None
    batch = x_rgb.shape[0]
    tau = config.tau_min + (config.tau_max - config.tau_min) * torch.rand(batch, generator=generator).to(
        x_rgb
    )
    n_rgb, e_rgb = _renoise(x_rgb, tau, generator)
    t = tau[:, None].expand(x_rgb.shape[:2]).clone()
    t[:, 0] = 0.0
    geo = None
    m_rgb, m_d, valid = _memory_parts(memory)
    if critic.config.geometry:
        if x_d is None:
            geo = with_memory(
                torch.randn((*x_rgb.shape[:2], 1, *x_rgb.shape[3:]), generator=generator).to(x_rgb),
                m_d,
                valid,
            )
        else:
            n_d, e_d = _renoise(x_d, tau, generator)
            geo = with_memory(n_d, m_d, valid)
    v_app, v_geo = critic(with_memory(n_rgb, m_rgb, valid), geo, t, plucker)
    loss = (v_app - velocity_target(x_rgb, e_rgb))[:, 1:].square().mean()
    if v_geo is not None and x_d is not None:
        loss = loss + (v_geo - velocity_target(x_d, e_d))[:, 1:].square().mean()
    return loss


def make_critic(teacher: JAGModel) -> JAGModel:
    """The online critic: a trainable copy of the teacher (DMD initialises the fake score from the real)."""
    critic = copy.deepcopy(teacher)
    critic.train()
    for p in critic.parameters():
        p.requires_grad_(True)
    return critic


def ode_pairs(
    teacher: JAGModel,
    clips: Clips,
    generator: torch.Generator,
    *,
    levels: tuple[float, ...] = STUDENT_LEVELS,
    steps: int = TEACHER_STEPS,
) -> tuple[dict[float, tuple[Tensor, Tensor | None]], tuple[Tensor, Tensor | None]]:
    """Teacher sampling trajectories from the clips' first frames: the states at each of ``levels`` and
    the clean ends (frame 0 the given one throughout), by Euler on the union of ``steps`` (default
    :data:`TEACHER_STEPS`) uniform steps and the levels; the teacher reads ``clips.memory`` when the clips
    carry one."""
    steps = check_int("steps", steps, minimum=1)
    grid = sorted(set(uniform_grid(steps)) | set(levels), reverse=True)
    rgb0, d0 = clips.rgb[:, 0], clips.log_depth[:, 0]
    batch, frames = clips.rgb.shape[:2]
    geometry = teacher.config.geometry
    m_rgb, m_d, valid = _memory_parts(clips.memory)
    rgb = torch.randn(clips.rgb.shape, generator=generator).to(rgb0)
    d = torch.randn(clips.log_depth.shape, generator=generator).to(d0)
    rgb[:, 0], d[:, 0] = rgb0, d0
    states: dict[float, tuple[Tensor, Tensor | None]] = {}
    with torch.no_grad():
        for t, t_next in zip(grid[:-1], grid[1:], strict=True):
            if t in levels:
                states[t] = (rgb.clone(), d.clone() if geometry else None)
            level = torch.full((batch, frames), t, dtype=rgb0.dtype, device=rgb0.device)
            level[:, 0] = 0.0
            v_app, v_geo = teacher(
                with_memory(rgb, m_rgb, valid),
                with_memory(d, m_d, valid) if geometry else None,
                level,
                clips.plucker,
            )
            rgb[:, 1:] = rgb[:, 1:] + (t_next - t) * v_app[:, 1:]
            if v_geo is not None:
                d[:, 1:] = d[:, 1:] + (t_next - t) * v_geo[:, 1:]
    return states, (rgb, d if geometry else None)


def ode_loss(
    student: JAGModel | torch.nn.Module,
    states: dict[float, tuple[Tensor, Tensor | None]],
    ends: tuple[Tensor, Tensor | None],
    plucker: Tensor,
    generator: torch.Generator,
    *,
    memory: Conditioning | None = None,
) -> Tensor:
    """The causal student's regression of the clean ends from trajectory states, each frame at a level
    drawn from ``states`` (frame 0 clean): ``‖x̂₀ − x₀^teacher‖²`` on both branches, the student reading
    the ``memory`` the trajectories were drawn with (None: an empty one). ``student`` may be the
    data-parallel wrapper of a :class:`JAGModel` (under torchrun): the loss calls it once and reads the
    configuration off the module inside."""
    geometry = distributed.unwrap(student).config.geometry
    levels = sorted(states, reverse=True)
    end_rgb, end_d = ends
    batch, frames = end_rgb.shape[:2]
    pick = torch.randint(len(levels), (batch, frames), generator=generator)
    pick[:, 0] = -1
    rgb = end_rgb.clone()
    d = end_d.clone() if end_d is not None else None
    t = torch.zeros(batch, frames, dtype=end_rgb.dtype, device=end_rgb.device)
    for i, level in enumerate(levels):
        where = (pick == i).to(end_rgb.device)
        rgb[where] = states[level][0][where]
        if d is not None and states[level][1] is not None:
            d[where] = states[level][1][where]
        t[where] = level
    m_rgb, m_d, valid = _memory_parts(memory)
    geo = with_memory(d, m_d, valid) if (geometry and d is not None) else None
    if geometry and geo is None:
        raise ValueError("states must hold geometry for a student with geometry")
    v_app, v_geo = student(with_memory(rgb, m_rgb, valid), geo, t, plucker)
    loss = (x0_from_velocity(rgb, v_app, t) - end_rgb)[:, 1:].square().mean()
    if v_geo is not None and d is not None and end_d is not None:
        loss = loss + (x0_from_velocity(d, v_geo, t) - end_d)[:, 1:].square().mean()
    return loss


__all__ = [
    "STUDENT_LEVELS",
    "TEACHER_STEPS",
    "Conditioning",
    "Rollout",
    "SelfForcingConfig",
    "check_exit_step",
    "critic_loss",
    "dmd_loss",
    "make_critic",
    "ode_loss",
    "ode_pairs",
    "rollout",
]
