"""The closed loop: agents that decide every 8 frames from what they have seen, run side by side.

An episode starts as the demonstrations do (:mod:`~neurips26.sparsevideonav.dataset`): the agent stands
for :data:`~.dataset.LEAD` frames, then decides. A **decision** at chunk ``d`` (after frame ``4d − 1``)
encodes every frame so far with the codec: the last 2 chunks are the reference, the ones before the
history. The policy returns 8 actions and a stop probability; the agent executes the 8 actions (the world
clips them to its limits and its walls), and stops after them when the probability passes 0.5. An episode
ends at the stop or at :data:`MAX_FRAMES` (60 s); it succeeds when the agent stopped within 1.5 m of the
target (:func:`~.world.reached`).

Policies (one interface, :meth:`Policy.decide`):

- :class:`SparseVideoNavPolicy` — Former memory, the generator imagines the sparse future (``steps``
  sampler steps: the student with 4, the teacher with 50), the action head reads it. ``zero_future``
  hands the head zeros instead (does it use what it imagined?);
- :class:`BCPolicy` — the short- or long-horizon baseline (executes the first 8 of its actions);
- :class:`RandomPolicy` — uniform moves and turns within the limits, stopping at the demonstrations'
  base rate.

Episodes of one policy run in lockstep, batched (every active episode decides at the same chunk).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from neurips26.seeding import sub_seed
from neurips26.sparsevideonav.action_head import ActionHead, sample_actions
from neurips26.sparsevideonav.codec import Codec
from neurips26.sparsevideonav.dataset import ACTION_CHUNK, LEAD
from neurips26.sparsevideonav.former import Former
from neurips26.sparsevideonav.generator import SparseVideoGenerator
from neurips26.sparsevideonav.head_training import BCPolicyNet, imagine
from neurips26.sparsevideonav.instructions import encode
from neurips26.sparsevideonav.tasks import Task
from neurips26.sparsevideonav.timeline import CHUNK_FRAMES, REFERENCE_CHUNKS
from neurips26.sparsevideonav.world import FPS, NavWorld, Pose, reached
from neurips26.validation import check_int

#: Frames an episode may last (60 s at 4 FPS), the stand-still lead included.
MAX_FRAMES = 240
STOP_THRESHOLD = 0.5


@dataclass(frozen=True)
class Observation:
    """What a batch of agents decides from: reference (B, 2, 2, 16), history (B, H, 2, 16) with its mask
    (B, H), words (B, L); all float32/int64 tensors."""

    reference: Tensor
    history: Tensor
    history_mask: Tensor
    words: Tensor


class Policy:
    """``decide(observation, generator) -> (actions (B, 8, 3) numpy, stop probability (B,) numpy)``."""

    name = "policy"

    def decide(self, obs: Observation, generator: torch.Generator) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError


class SparseVideoNavPolicy(Policy):
    """Imagine the sparse future, then read the actions off it (module doc)."""

    name = "SparseVideoNav"

    def __init__(
        self,
        former: Former,
        generator: SparseVideoGenerator,
        head: ActionHead,
        *,
        steps: int = 4,
        method: str = "euler",
        zero_future: bool = False,
    ):
        self.former, self.generator, self.head = former, generator, head
        self.steps = check_int("steps", steps, minimum=1)
        self.method = method
        self.zero_future = bool(zero_future)

    def imagine(self, obs: Observation, generator: torch.Generator) -> Tensor:
        """The imagined clip (B, 10, 2, 16) for ``obs``."""
        return imagine(
            self.former,
            self.generator,
            obs.reference,
            obs.history,
            obs.history_mask,
            obs.words,
            generator=generator,
            steps=self.steps,
            method=self.method,
        )

    def decide(self, obs: Observation, generator: torch.Generator) -> tuple[np.ndarray, np.ndarray]:
        clip = self.imagine(obs, generator)
        if self.zero_future:
            clip = torch.cat(
                [clip[:, :REFERENCE_CHUNKS], torch.zeros_like(clip[:, REFERENCE_CHUNKS:])], dim=1
            )
        actions, stop = sample_actions(self.head, clip, obs.words, generator=generator)
        return actions.numpy(), stop.numpy()


class BCPolicy(Policy):
    """A behaviour-cloning baseline: reference + Former memory → the next actions (the first 8 run)."""

    def __init__(self, net: BCPolicyNet):
        self.net = net
        self.name = "ShortBC" if net.head.config.horizon == ACTION_CHUNK else "LongBC"

    def decide(self, obs: Observation, generator: torch.Generator) -> tuple[np.ndarray, np.ndarray]:
        with torch.no_grad():
            memory = self.net.former(obs.history, obs.history_mask, obs.words)
        actions, stop = sample_actions(
            self.net.head, obs.reference, obs.words, generator=generator, memory=memory
        )
        return actions[:, :ACTION_CHUNK].numpy(), stop.numpy()


class RandomPolicy(Policy):
    """Uniform moves in [0, 0.25] m and turns in ±22.5° per frame; stops with probability ``stop_rate``."""

    name = "Random"

    def __init__(self, stop_rate: float = 1 / 25):
        self.stop_rate = float(stop_rate)

    def decide(self, obs: Observation, generator: torch.Generator) -> tuple[np.ndarray, np.ndarray]:
        b = obs.reference.shape[0]
        u = torch.rand(b, ACTION_CHUNK, 2, generator=generator, dtype=torch.float64).numpy()
        actions = np.stack([0.25 * u[..., 0], np.zeros_like(u[..., 0]), 22.5 * (2 * u[..., 1] - 1)], axis=-1)
        stop = (torch.rand(b, generator=generator, dtype=torch.float64).numpy() < self.stop_rate).astype(
            float
        )
        return actions, stop


@dataclass(frozen=True)
class Outcome:
    """An episode: its task, success, stopped, frames (lead included), poses (N, 3), final distance (m)."""

    task: Task
    success: bool
    stopped: bool
    frames: int
    poses: np.ndarray
    distance: float

    @property
    def seconds(self) -> float:
        return self.frames / FPS


def run_episodes(
    policy: Policy,
    tasks: Sequence[Task],
    codec: Codec,
    *,
    night: bool = False,
    seed: int = 0,
    max_frames: int = MAX_FRAMES,
) -> list[Outcome]:
    """Run ``policy`` on every task in lockstep (module doc); seeded noise for sampling and night frames."""
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must be a Policy; got {type(policy).__name__}")
    max_frames = check_int("max_frames", max_frames, minimum=LEAD + 1)
    n = len(tasks)
    worlds = [NavWorld(t.seed) for t in tasks]
    rngs = [np.random.default_rng(sub_seed(seed, 149, i)) for i in range(n)]
    poses = [t.start for t in tasks]
    trails = [[(p.x, p.z, p.yaw)] for p in poses]

    def look(i: int) -> np.ndarray:
        return worlds[i].observe(poses[i], night=night, rng=rngs[i] if night else None).rgb

    first = [look(i) for i in range(n)]
    frames = [[f] * (LEAD + 1) for f in first]  # stand and look: frames 0 … LEAD
    words = torch.as_tensor(np.stack([encode(t.words) for t in tasks]))
    active = list(range(n))
    stopped = [False] * n
    noise = torch.Generator().manual_seed(sub_seed(seed, 150))
    while active:
        count = len(frames[active[0]])  # lockstep: 4d frames seen
        d = count // CHUNK_FRAMES
        chunks = np.stack([codec.encode(np.stack(frames[i][: CHUNK_FRAMES * d])) for i in active]).astype(
            np.float32
        )
        obs = Observation(
            reference=torch.as_tensor(chunks[:, d - REFERENCE_CHUNKS : d]),
            history=torch.as_tensor(chunks[:, : d - REFERENCE_CHUNKS]),
            history_mask=torch.ones(len(active), d - REFERENCE_CHUNKS, dtype=torch.bool),
            words=words[active],
        )
        actions, stop = policy.decide(obs, noise)
        still = []
        for row, i in enumerate(active):
            for k in range(ACTION_CHUNK):
                if len(frames[i]) >= max_frames:
                    break
                poses[i] = worlds[i].step(poses[i], actions[row, k])
                trails[i].append((poses[i].x, poses[i].z, poses[i].yaw))
                frames[i].append(look(i))
            if stop[row] >= STOP_THRESHOLD:
                stopped[i] = True
            elif len(frames[i]) < max_frames:
                still.append(i)
        active = still
    out = []
    for i, task in enumerate(tasks):
        pose: Pose = poses[i]
        distance = float(np.hypot(pose.x - task.target[0], pose.z - task.target[1]))
        out.append(
            Outcome(
                task=task,
                success=stopped[i] and reached(pose, task.target),
                stopped=stopped[i],
                frames=len(frames[i]),
                poses=np.array(trails[i]),
                distance=distance,
            )
        )
    return out


__all__ = [
    "MAX_FRAMES",
    "STOP_THRESHOLD",
    "BCPolicy",
    "Observation",
    "Outcome",
    "Policy",
    "RandomPolicy",
    "SparseVideoNavPolicy",
    "run_episodes",
]
