"""Self Geometry Forcing: the generator's own geometry as a persistent 3D memory, and a self-verified reward.

Chapter 07, §"Self Geometry Forcing" (our reconstruction of the abstract; [code] marks the public code's
choices). During a Self Forcing rollout (:func:`neurips26.jag.self_forcing.rollout`):

1. **Memory from self-predicted geometry.** After frame ``k`` is generated, its RGB and depth
   ``exp(log D̂_k)`` are unprojected at the *commanded* pose ``P_k`` and inserted into a fixed-size voxel
   memory (:class:`neurips26.jag.memory.VoxelMemory`, no gradient). Before frame ``k + 1`` is generated,
   the memory is rendered at ``P_{k+1}`` into ``(M_rgb, M_d, V)``, which enter the network as extra
   channels of the two branches (``log M_d`` for the geometry branch, 0 where not ``V``).
   :class:`SelfMemory` is that ``memory_fn``; ``source="truth"`` inserts the ground-truth frames instead
   (the teacher-forced-memory ablation). [code] The public code appends a confidence-filtered point cloud
   per chunk (it grows) and unprojects with the model's own predicted cameras; ours is constant-size and
   uses the commanded poses (exact in a synthetic world).
2. **Self-verified reward on intermediate rollouts** (:func:`geometric_reward`): each new frame is scored
   against the memory rendered at its pose, on the valid pixels ``V``,

       r_geo(k) = − mean_V |D̂_k − M^d_k| / M^d_k − γ · mean_V ‖Î_k − M^rgb_k‖₁,              (R)

   using only the model's own outputs (no external estimator). It enters the generator's loss through the
   exit step, ``L = L_DMD − λ_r Σ_k r_geo(k)`` (λ_r = 0.1, γ = 0.5) [reconstruction]; ``reward="rgb-mse"``
   is the public code's "render loss", the masked MSE of the RGB against the memory's render [code].

:func:`distill` is the training loop shared by the distilled models of the chapter (Self Forcing RGB-only,
JAG without SGF, with a teacher-forced memory, with SGF, with SGF but no reward): per generator update one
rollout, DMD (plus the reward), then ``critic_updates`` critic updates on the rollout's detached frames;
the teacher and the critic score the rollout given the memory it was generated with
(:meth:`SelfMemory.stacked`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from neurips26.jag.memory import VoxelMemory
from neurips26.jag.model import JAGModel
from neurips26.jag.self_forcing import Rollout, SelfForcingConfig, critic_loss, dmd_loss, make_critic, rollout
from neurips26.validation import check_choice, check_float, check_int

#: Where the memory's frames come from.
SOURCES = ("self", "truth")
#: The reward variants: the chapter's (R) and the public code's RGB render loss.
REWARDS = ("geo", "rgb-mse")
#: λ_r and γ of (R) [our choice].
REWARD_WEIGHT = 0.1
RGB_WEIGHT = 0.5


class SelfMemory:
    """The ``memory_fn`` of a rollout: a :class:`VoxelMemory` filled with the frames generated so far
    (``source="self"``) or with the ground-truth frames (``"truth"``), rendered at frame ``k``'s pose.

    ``poses`` (B, T, 4, 4) the commanded cameras, ``K`` (3, 3), ``bounds`` the room; ``truth = (rgb
    (B, T, 3, H, W), log_depth (B, T, 1, H, W), valid)`` is needed for frame 0 (always the given frame) and
    for ``source="truth"``. The rendered memory of every frame is kept in :attr:`rendered` for the reward.
    """

    def __init__(
        self,
        poses: Tensor,
        K: Tensor,  # noqa: N803
        bounds: tuple[Tensor, Tensor],
        truth: tuple[Tensor, Tensor, Tensor],
        *,
        source: str = "self",
        resolution: int = 16,
    ) -> None:
        self.source = check_choice("source", source, SOURCES)
        self.poses, self.K = poses, K
        self.truth = truth
        batch, _, _, self.height, self.width = truth[0].shape
        self.memory = VoxelMemory(bounds, batch, resolution, device=truth[0].device)
        self.inserted = 0
        self.rendered: dict[int, tuple[Tensor, Tensor, Tensor]] = {}

    def _insert(self, k: int, rgb: Tensor, log_depth: Tensor, valid: Tensor | None) -> None:
        depth = log_depth[:, 0].exp()
        self.memory.insert(rgb, depth, self.poses[:, k], self.K, None if valid is None else valid[:, 0])

    def __call__(
        self, k: int, rgb: Tensor, log_depth: Tensor | None
    ) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        """Insert the frames ``< k`` not yet in the memory, render it at pose ``k``: ``(M_rgb (B, 3, H, W),
        log M_d (B, 1, H, W), V (B, 1, H, W))``, zeros where not ``V``."""
        while self.inserted < k:
            j = self.inserted
            if j == 0 or self.source == "truth" or log_depth is None:
                t_rgb, t_d, t_valid = (x[:, j] for x in self.truth)
                self._insert(j, t_rgb, t_d, t_valid)
            else:
                self._insert(j, rgb[:, j].detach(), log_depth[:, j].detach(), None)
            self.inserted += 1
        self.rendered[k] = self.memory.render(self.poses[:, k], self.K, self.height, self.width)
        return _as_input(self.rendered[k])

    def stacked(self) -> tuple[Tensor, Tensor, Tensor]:
        """The memory inputs of every frame rendered so far, ``0 … T − 1``, stacked along time:
        ``(M_rgb (B, T, 3, H, W), log M_d (B, T, 1, H, W), V (B, T, 1, H, W))`` (what the student saw; the
        conditioning of the teacher and the critic in DMD)."""
        frames = sorted(self.rendered)
        if frames != list(range(len(frames))) or not frames:
            raise ValueError(f"the memory must be rendered for frames 0, 1, ... in order; got {frames}")
        inputs = [_as_input(self.rendered[k]) for k in frames]
        return tuple(torch.stack([x[i] for x in inputs], 1) for i in range(3))  # type: ignore[return-value]


def _as_input(rendered: tuple[Tensor, Tensor, Tensor]) -> tuple[Tensor, Tensor, Tensor]:
    """A render ``(M_rgb, M_d (B, H, W), V bool)`` as the network's memory channels ``(M_rgb, log M_d
    (B, 1, H, W), V (B, 1, H, W) float)``, zeros where not ``V``."""
    m_rgb, m_d, valid = rendered
    log_m = torch.where(valid, m_d.clamp(min=1e-3).log(), torch.zeros_like(m_d))
    return m_rgb, log_m[:, None], valid[:, None].to(m_rgb.dtype)


def geometric_reward(
    rgb: Tensor, log_depth: Tensor, rendered: tuple[Tensor, Tensor, Tensor], *, gamma: float = RGB_WEIGHT
) -> Tensor:
    """(R) for one frame: ``rgb`` (B, 3, H, W), ``log_depth`` (B, 1, H, W) against the memory's render
    ``(M_rgb, M_d (B, H, W), V)``; per clip ``(B,)``, 0 where no pixel is valid; differentiable."""
    gamma = check_float("gamma", gamma, minimum=0.0)
    m_rgb, m_d, valid = rendered
    v = valid.to(rgb.dtype)
    count = v.sum(dim=(-2, -1)).clamp(min=1.0)
    depth = log_depth[:, 0].exp()
    rel = torch.where(valid, (depth - m_d).abs() / m_d.clamp(min=1e-3), torch.zeros_like(depth))
    l1 = ((rgb - m_rgb).abs().sum(dim=1) * v).sum(dim=(-2, -1)) / count
    return -(rel.sum(dim=(-2, -1)) / count) - gamma * l1


def rgb_render_loss(rgb: Tensor, rendered: tuple[Tensor, Tensor, Tensor]) -> Tensor:
    """[code] the render loss: the masked MSE of ``rgb`` (B, 3, H, W) against the memory's RGB, ``(B,)``."""
    m_rgb, _, valid = rendered
    v = valid.to(rgb.dtype)[:, None]
    return ((rgb - m_rgb).square() * v).sum(dim=(1, 2, 3)) / (3 * v.sum(dim=(1, 2, 3))).clamp(min=1.0)


def reward_loss(sample: Rollout, memory: SelfMemory, kind: str) -> Tensor:
    """``− Σ_k r_geo(k)`` (``kind="geo"``; the mean over clips) or the render loss summed over frames
    (``"rgb-mse"``), over the generated frames ``1 … T − 1``."""
    kind = check_choice("reward", kind, REWARDS)
    total = sample.rgb.new_zeros(())
    for k in range(1, sample.rgb.shape[1]):
        rendered = memory.rendered[k]
        if kind == "geo":
            if sample.log_depth is None:
                raise ValueError("reward 'geo' needs a model with geometry; use reward='rgb-mse'")
            total = total - geometric_reward(sample.rgb[:, k], sample.log_depth[:, k], rendered).mean()
        else:
            total = total + rgb_render_loss(sample.rgb[:, k], rendered).mean()
    return total


@dataclass(frozen=True)
class DistillConfig:
    """A distilled model: ``memory`` None (no memory channels), ``"self"`` or ``"truth"``; ``reward`` None,
    ``"geo"`` or ``"rgb-mse"`` (needs a memory); ``reward_weight`` λ_r; ``steps`` generator updates at
    batch ``batch``; ``self_forcing`` the rollout and DMD settings; ``resolution`` the voxel memory's
    (:class:`SelfMemory`)."""

    memory: str | None = "self"
    reward: str | None = "geo"
    reward_weight: float = REWARD_WEIGHT
    steps: int = 200
    batch: int = 8
    self_forcing: SelfForcingConfig = SelfForcingConfig()
    resolution: int = 16

    def __post_init__(self) -> None:
        if self.memory is not None:
            check_choice("memory", self.memory, SOURCES)
        if self.reward is not None:
            check_choice("reward", self.reward, REWARDS)
            if self.memory is None:
                raise ValueError("reward needs a memory to verify against; set memory='self' or 'truth'")
        check_float("reward_weight", self.reward_weight, minimum=0.0)
        check_int("steps", self.steps, minimum=1)
        check_int("batch", self.batch, minimum=1)
        check_int("resolution", self.resolution, minimum=1)


Batch = tuple[Tensor, Tensor, Tensor, Tensor, Tensor]
"""``(rgb, log_depth, valid, poses, plucker)`` of a batch of clips (B, T, ...)."""


def distill(
    student: JAGModel,
    teacher: JAGModel,
    batches: Callable[[int], Batch],
    K: Tensor,  # noqa: N803
    bounds: tuple[Tensor, Tensor],
    config: DistillConfig,
    *,
    progress: Callable[[int, dict[str, float]], None] | None = None,
) -> dict[str, list[float]]:
    """Train ``student`` by Self Forcing (+ SGF per ``config``) against the frozen ``teacher``; returns the
    per-update logs (``dmd``, ``reward``, ``critic``). ``batches(step)`` gives a batch, on the student's
    device (the rollout, its memory and the noise follow the batch); ``progress(step, logs)`` is called
    after every update.

    The loop trains in one process, not data-parallel (two optimisers, a rollout and several critic
    updates per step do not fit :func:`~neurips26.train.fit`): under torchrun every rank runs it whole.
    """
    sf = config.self_forcing
    generator = torch.Generator().manual_seed(sf.seed)
    teacher.eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    critic = make_critic(teacher)  # trainable: make_critic turns its gradients back on
    opt_g = torch.optim.AdamW(student.parameters(), lr=sf.lr, weight_decay=0.0)
    opt_c = torch.optim.AdamW(critic.parameters(), lr=sf.lr, weight_decay=0.0)
    logs: dict[str, list[float]] = {"dmd": [], "reward": [], "critic": []}
    student.train()
    for step in range(config.steps):
        rgb, log_depth, valid, poses, plucker = batches(step)
        memory = None
        if config.memory is not None:
            memory = SelfMemory(
                poses, K, bounds, (rgb, log_depth, valid), source=config.memory, resolution=config.resolution
            )
        sample = rollout(
            student,
            (rgb[:, 0], log_depth[:, 0]),
            plucker,
            generator,
            levels=sf.levels,
            per_frame=sf.per_frame,
            memory_fn=memory,
        )
        condition = memory.stacked() if memory is not None else None
        loss = dmd_loss(sample, teacher, critic, plucker, generator, sf, memory=condition)
        logs["dmd"].append(float(loss.detach()))
        reward = 0.0
        if config.reward is not None and memory is not None:
            r = reward_loss(sample, memory, config.reward)
            loss = loss + config.reward_weight * r
            reward = float(r.detach())
        logs["reward"].append(reward)
        opt_g.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
        opt_g.step()
        detached = Rollout(
            sample.rgb.detach(),
            None if sample.log_depth is None else sample.log_depth.detach(),
            sample.exit_steps,
        )
        for _ in range(sf.critic_updates):
            c = critic_loss(critic, detached, plucker, generator, sf, memory=condition)
            opt_c.zero_grad(set_to_none=True)
            c.backward()
            torch.nn.utils.clip_grad_norm_(critic.parameters(), 1.0)
            opt_c.step()
        logs["critic"].append(float(c.detach()))
        if progress is not None:
            progress(step, {k: v[-1] for k, v in logs.items()})
    student.eval()
    return logs


__all__ = [
    "REWARDS",
    "REWARD_WEIGHT",
    "RGB_WEIGHT",
    "SOURCES",
    "DistillConfig",
    "SelfMemory",
    "distill",
    "geometric_reward",
    "reward_loss",
    "rgb_render_loss",
]
