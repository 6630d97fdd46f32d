"""Diffusion Forcing: the many-step base models of chapter 07 and their samplers (teacher, DF, TF).

Every frame ``k`` of a clip has a state ``z_k = (RGB_k, log D_k)`` noised on the linear path of
:mod:`neurips26.flow`, ``z_k^{t_k} = (1 − t_k) z_k + t_k ε_k``, and the network predicts the velocity
``ε_k − z_k`` of both branches. The loss (eq. DF) is

    L = mean_k ‖v^app_k − (ε^app_k − RGB_k)‖² + λ_g · mean_{k, valid} ‖v^geo_k − (ε^geo_k − log D_k)‖²,

the geometry term on the valid pixels only (a ray through the door gap has no depth). What differs between
the three models is how the levels ``t_k`` are drawn (:data:`MODES`):

- ``"df"`` (Diffusion Forcing, causal): an independent level per frame, ``t_k ~ U[0, 1]``;
- ``"tf"`` (Teacher Forcing, causal): one frame ``k ≥ 1`` per clip is noised, the frames before it are clean
  (``t = 0``), and the loss is on frame ``k`` alone (the later frames cannot reach it through the causal
  mask);
- ``"teacher"`` (bidirectional): one shared level for frames ``1 … T − 1`` and a clean first frame, the
  generation task of the chapter; in :data:`TEACHER_GEOMETRY_DROPOUT` of the clips the geometry input is
  pure noise and only the RGB loss counts, so the teacher can also score an RGB-only student (DMD).

Memory channels: a model with ``memory=True`` trained on :class:`Clips` that carry a memory reads the
teacher-forced memory (:func:`truth_memory`), as the [code]'s diffusion stage does. The teacher is such a
model; in :data:`TEACHER_MEMORY_DROPOUT` of its clips the memory is emptied (zeros, ``V = 0``), so that it
also scores students without a memory. Self Geometry Forcing swaps in the self-built memory
(:mod:`neurips26.jag.sgf`).

Samplers, all from a given first frame (RGB and log depth) and the commanded poses:

- :func:`sample_causal` — frame by frame: ``steps`` Euler steps from noise with :meth:`JAGModel.step`
  against the cache of the previous clean frames, then :meth:`JAGModel.write` of the result (the DF and TF
  baselines, 32 steps);
- :func:`sample_teacher` — all frames ``1 … T − 1`` together at a shared level, the first frame clean.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from neurips26 import distributed
from neurips26.flow import euler_step, interpolate, uniform_grid, velocity_target
from neurips26.jag.memory import VoxelMemory
from neurips26.jag.model import JAGModel
from neurips26.validation import check_choice, check_float, check_int

#: How the training levels are drawn (module docstring).
MODES = ("df", "tf", "teacher")
#: Share of the teacher's clips whose geometry is replaced by noise (RGB loss only).
TEACHER_GEOMETRY_DROPOUT = 0.1
#: Share of the teacher's clips whose memory is emptied (the memoryless conditioning).
TEACHER_MEMORY_DROPOUT = 0.25


@dataclass(frozen=True)
class Clips:
    """A batch of clips: ``rgb`` (B, T, 3, H, W) in [−1, 1], ``log_depth`` (B, T, 1, H, W), ``valid``
    (B, T, 1, H, W) bool, ``plucker`` (B, T, P, 6) per patch centre and, optionally, the memory channels
    ``(M_rgb (B, T, 3, H, W), log M_d (B, T, 1, H, W), V (B, T, 1, H, W))`` of every frame
    (:func:`truth_memory`: the teacher-forced memory a memory model trains with)."""

    rgb: Tensor
    log_depth: Tensor
    valid: Tensor
    plucker: Tensor
    memory: tuple[Tensor, Tensor, Tensor] | None = None

    def __post_init__(self) -> None:
        lead = tuple(self.rgb.shape[:2])
        if self.rgb.dim() != 5 or self.rgb.shape[2] != 3:
            raise ValueError(f"rgb must have shape (B, T, 3, H, W); got {tuple(self.rgb.shape)}")
        shape = (*lead, 1, *self.rgb.shape[3:])
        for name in ("log_depth", "valid"):
            if tuple(getattr(self, name).shape) != shape:
                raise ValueError(f"{name} must have shape {shape}; got {tuple(getattr(self, name).shape)}")
        if self.valid.dtype != torch.bool:
            raise TypeError(f"valid must be a bool tensor; got {self.valid.dtype}")
        if tuple(self.plucker.shape[:2]) != lead or self.plucker.shape[-1] != 6:
            raise ValueError(f"plucker must have shape {(*lead, 'P', 6)}; got {tuple(self.plucker.shape)}")

    @property
    def frames(self) -> int:
        return self.rgb.shape[1]

    def take(self, index: Tensor) -> Clips:
        """The clips at ``index`` (a batch draw)."""
        memory = None if self.memory is None else tuple(m[index] for m in self.memory)
        return Clips(self.rgb[index], self.log_depth[index], self.valid[index], self.plucker[index], memory)


def with_memory(state: Tensor, memory: Tensor | None, validity: Tensor | None) -> Tensor:
    """A branch input ``[state ; memory ; validity]`` along the channel axis (zeros where not given)."""
    lead = state.shape[:-3]
    size = state.shape[-2:]
    if memory is None:
        memory = state.new_zeros(*lead, state.shape[-3], *size)
    if validity is None:
        validity = state.new_zeros(*lead, 1, *size)
    return torch.cat([state, memory.to(state), validity.to(state)], dim=-3)


def draw_levels(mode: str, batch: int, frames: int, generator: torch.Generator, *, device=None) -> Tensor:
    """Training levels ``(B, T)`` for ``mode`` (module docstring); ``"tf"`` marks the loss frame with the
    only nonzero level."""
    mode = check_choice("mode", mode, MODES)
    u = torch.rand(batch, frames, generator=generator, dtype=torch.float64)
    if mode == "df":
        t = u
    elif mode == "teacher":
        t = u[:, :1].expand(batch, frames).clone()
        t[:, 0] = 0.0
    else:
        k = torch.randint(1, frames, (batch,), generator=generator)
        t = torch.zeros(batch, frames, dtype=torch.float64)
        t[torch.arange(batch), k] = u[:, 0]
    return t.to(device=device, dtype=torch.float32)


def df_loss(
    model: JAGModel | torch.nn.Module,
    clips: Clips,
    mode: str,
    generator: torch.Generator,
    *,
    geometry_weight: float = 1.0,
) -> Tensor:
    """The loss (eq. DF) on one batch, levels drawn for ``mode``; noise from ``generator`` (drawn on its
    device, then moved to the clips'). ``model`` may be the data-parallel wrapper of a :class:`JAGModel`
    (under torchrun): the loss calls it once and reads the configuration off the module inside."""
    mode = check_choice("mode", mode, MODES)
    config = distributed.unwrap(model).config
    geometry_weight = check_float("geometry_weight", geometry_weight, minimum=0.0)
    batch, frames = clips.rgb.shape[:2]
    device, dtype = clips.rgb.device, clips.rgb.dtype
    t = draw_levels(mode, batch, frames, generator, device=device).to(dtype)
    eps_rgb = torch.randn(clips.rgb.shape, generator=generator).to(device=device, dtype=dtype)
    eps_d = torch.randn(clips.log_depth.shape, generator=generator).to(device=device, dtype=dtype)
    rgb_t = interpolate(clips.rgb, eps_rgb, t)  # t (B, T): one level per frame, broadcast over pixels
    d_t = interpolate(clips.log_depth, eps_d, t)
    weight = torch.ones(batch, frames, device=device, dtype=dtype)
    if mode == "tf":
        weight = (t > 0).to(dtype)  # the loss frame
    elif mode == "teacher":
        weight[:, 0] = 0.0  # the clean first frame is given, not learned
    geo_weight = weight.clone()
    if mode == "teacher" and config.geometry:
        drop = torch.rand(batch, generator=generator).to(device) < TEACHER_GEOMETRY_DROPOUT
        d_t = torch.where(drop[:, None, None, None, None], eps_d, d_t)
        geo_weight = geo_weight * (~drop).to(dtype)[:, None]
    m_rgb, m_d, m_valid = (None, None, None) if clips.memory is None else clips.memory
    if mode == "teacher" and config.memory and clips.memory is not None:
        keep = (torch.rand(batch, generator=generator) >= TEACHER_MEMORY_DROPOUT).to(device, dtype)
        keep = keep[:, None, None, None, None]
        m_rgb, m_d, m_valid = m_rgb * keep, m_d * keep, m_valid * keep
    geo_in = with_memory(d_t, m_d, m_valid) if config.geometry else None
    v_app, v_geo = model(with_memory(rgb_t, m_rgb, m_valid), geo_in, t, clips.plucker)
    per_frame = (v_app - velocity_target(clips.rgb, eps_rgb)).square().mean(dim=(2, 3, 4))
    loss = (per_frame * weight).sum() / weight.sum().clamp(min=1.0)
    if v_geo is not None and geometry_weight > 0:
        mask = clips.valid.to(dtype)
        sq = (v_geo - velocity_target(clips.log_depth, eps_d)).square() * mask
        per_frame_geo = sq.sum(dim=(2, 3, 4)) / mask.sum(dim=(2, 3, 4)).clamp(min=1.0)
        loss = loss + geometry_weight * (per_frame_geo * geo_weight).sum() / geo_weight.sum().clamp(min=1.0)
    return loss


def truth_memory(
    rgb: Tensor,
    log_depth: Tensor,
    valid: Tensor,
    poses: Tensor,
    K: Tensor,  # noqa: N803
    bounds: tuple[Tensor, Tensor],
    *,
    resolution: int = 16,
) -> tuple[Tensor, Tensor, Tensor]:
    """The teacher-forced memory of every frame of a batch of clips: frame ``k`` sees a voxel memory built
    from the ground-truth frames ``0 … k − 1`` (their RGB and depth at their poses) rendered at pose ``k``
    (frame 0: an empty memory). Returns ``(M_rgb (B, T, 3, H, W), log M_d (B, T, 1, H, W), V (B, T, 1, H,
    W))``, zeros where not ``V``; no gradient."""
    batch, frames, _, height, width = rgb.shape
    memory = VoxelMemory(bounds, batch, resolution, device=rgb.device)
    out_rgb, out_d, out_v = [], [], []
    with torch.no_grad():
        for k in range(frames):
            if k > 0:
                memory.insert(
                    rgb[:, k - 1], log_depth[:, k - 1, 0].exp(), poses[:, k - 1], K, valid[:, k - 1, 0]
                )
            m_rgb, m_d, v = memory.render(poses[:, k], K, height, width)
            out_rgb.append(m_rgb)
            out_d.append(torch.where(v, m_d.clamp(min=1e-3).log(), torch.zeros_like(m_d))[:, None])
            out_v.append(v[:, None].to(rgb.dtype))
    return torch.stack(out_rgb, 1), torch.stack(out_d, 1), torch.stack(out_v, 1)


MemoryFn = Callable[[int, Tensor, Tensor | None], tuple[Tensor | None, Tensor | None, Tensor | None]]
"""``memory_fn(k, rgb_so_far, depth_so_far) -> (M_rgb, M_logd, V)`` for frame ``k``, or Nones."""


def sample_causal(
    model: JAGModel,
    first: tuple[Tensor, Tensor],
    plucker: Tensor,
    steps: int,
    generator: torch.Generator,
    *,
    memory_fn: MemoryFn | None = None,
    context: tuple[Tensor, Tensor] | None = None,
) -> tuple[Tensor, Tensor | None]:
    """Frame-by-frame generation from the clean first frame ``first = (rgb (B, 3, H, W), log_depth
    (B, 1, H, W))`` along the cameras ``plucker`` (B, T, P, 6): ``steps`` Euler steps per frame against the
    window cache, then a cache write of the clean frame. Returns ``(rgb (B, T, 3, H, W), log_depth
    (B, T, 1, H, W) or None)``, frame 0 the given one.

    ``context = (rgb (B, T, 3, H, W), log_depth (B, T, 1, H, W))``: teacher forcing at test time. Each
    frame is still sampled, but the cache (and the memory) receive the *true* frame ``k`` instead of the
    sample, so every frame is generated from a true past (what Teacher Forcing trains on); with the same
    ``generator`` state the noise draws equal those of the free-running call."""
    steps = check_int("steps", steps, minimum=1)
    rgb0, d0 = first
    batch, frames = plucker.shape[:2]
    if context is not None and (
        context[0].shape[:2] != (batch, frames) or context[1].shape[:2] != (batch, frames)
    ):
        raise ValueError(f"context must hold ({batch}, {frames}, ...) true RGB and log-depth frames")
    geometry = model.config.geometry
    grid = uniform_grid(steps)
    cache = model.make_cache()
    rgbs, depths = [rgb0], [d0]
    past_rgb, past_d = rgbs, depths  # what the cache and the memory see (the true frames with context)
    if context is not None:
        past_rgb, past_d = [rgb0], [d0]

    def memory(k: int) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        if memory_fn is None:
            return (None, None, None)
        return memory_fn(k, torch.stack(past_rgb, 1), torch.stack(past_d, 1) if geometry else None)

    def inputs(rgb: Tensor, d: Tensor, mem) -> tuple[Tensor, Tensor | None]:
        m_rgb, m_d, valid = mem
        app = with_memory(rgb, m_rgb, valid)
        return app, (with_memory(d, m_d, valid) if geometry else None)

    with torch.no_grad():
        app, geo = inputs(rgb0, d0, memory(0))
        model.write(cache, app, geo, plucker[:, 0])
        for k in range(1, frames):
            mem = memory(k)  # rendered once per frame, from the frames generated so far
            rgb = torch.randn(rgb0.shape, generator=generator).to(rgb0)
            d = torch.randn(d0.shape, generator=generator).to(d0)
            for t, t_next in zip(grid[:-1], grid[1:], strict=True):
                app, geo = inputs(rgb, d, mem)
                level = torch.full((batch,), t, dtype=rgb0.dtype, device=rgb0.device)
                v_app, v_geo = model.step(app, geo, level, plucker[:, k], cache)
                rgb = euler_step(rgb, v_app, t, t_next)
                if v_geo is not None:
                    d = euler_step(d, v_geo, t, t_next)
            rgbs.append(rgb)
            depths.append(d)
            if context is not None:
                rgb, d = context[0][:, k], context[1][:, k]
                past_rgb.append(rgb)
                past_d.append(d)
            app, geo = inputs(rgb, d, mem)
            model.write(cache, app, geo, plucker[:, k])
    return torch.stack(rgbs, 1), (torch.stack(depths, 1) if geometry else None)


def sample_teacher(
    model: JAGModel,
    first: tuple[Tensor, Tensor],
    plucker: Tensor,
    steps: int,
    generator: torch.Generator,
) -> tuple[Tensor, Tensor | None]:
    """All frames at once with the bidirectional teacher: frames ``1 … T − 1`` from noise at a shared level
    in ``steps`` Euler steps, frame 0 clean at level 0 throughout."""
    steps = check_int("steps", steps, minimum=1)
    rgb0, d0 = first
    batch, frames = plucker.shape[:2]
    geometry = model.config.geometry
    rgb = torch.randn((batch, frames, *rgb0.shape[1:]), generator=generator).to(rgb0)
    d = torch.randn((batch, frames, *d0.shape[1:]), generator=generator).to(d0)
    rgb[:, 0], d[:, 0] = rgb0, d0
    grid = uniform_grid(steps)
    with torch.no_grad():
        for t, t_next in zip(grid[:-1], grid[1:], strict=True):
            level = torch.full((batch, frames), t, dtype=rgb0.dtype, device=rgb0.device)
            level[:, 0] = 0.0
            geo = with_memory(d, None, None) if geometry else None
            v_app, v_geo = model(with_memory(rgb, None, None), geo, level, plucker)
            rgb[:, 1:] = euler_step(rgb[:, 1:], v_app[:, 1:], t, t_next)
            if v_geo is not None:
                d[:, 1:] = euler_step(d[:, 1:], v_geo[:, 1:], t, t_next)
    return rgb, (d if geometry else None)


__all__ = [
    "MODES",
    "TEACHER_GEOMETRY_DROPOUT",
    "TEACHER_MEMORY_DROPOUT",
    "Clips",
    "df_loss",
    "draw_levels",
    "sample_causal",
    "sample_teacher",
    "truth_memory",
    "with_memory",
]
