"""Closed-loop evaluation, batched over episodes, and open-loop action error.

Each evaluation episode starts at the home position; the policy sees the episode's one image, its instruction
and the current end-effector position, predicts a chunk of H = 4 actions that are executed open-loop, and
re-plans from the new position, 5 times (20 steps). The encoder runs once per episode (the image does not
change); the selection runs again at every re-plan (only FastV-style selection depends on the position).
The 3D expert is never called here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neurips26.seeding import sub_seed
from neurips26.spark_vla import sim
from neurips26.spark_vla.data import Demonstrations, EpisodeSet
from neurips26.spark_vla.model import (
    FrameFeatures,
    VLAModel,
    from_policy_units,
    policy_proprio,
    to_policy_units,
)
from neurips26.spark_vla.vla import action_loss


@dataclass(frozen=True, eq=False)
class ClosedLoop:
    """Outcome per episode (E,): ``success``, ``distance`` to the goal at the end, ``tokens`` forwarded to the
    LM per re-plan, ``selected`` (E, k) candidate indices of the first re-plan (None without selection)."""

    success: np.ndarray
    distance: np.ndarray
    tokens: int
    selected: np.ndarray | None

    def rate(self, mask: np.ndarray | None = None) -> float:
        s = self.success if mask is None else self.success[mask]
        return float(s.mean()) if s.size else float("nan")


def closed_loop(
    model: VLAModel, features: FrameFeatures, data: EpisodeSet, *, seed: int = 0, batch_size: int = 100
) -> ClosedLoop:
    """Run every episode of ``data`` (rows of ``features``) closed loop; deterministic given ``seed``."""
    if not isinstance(model, VLAModel):
        raise TypeError(f"model must be a VLAModel; got {type(model).__name__}")
    device = features.v2d.device
    model.eval()
    instructions = torch.from_numpy(data.instructions).to(device)
    n = len(data)
    successes, distances, selected = [], [], []
    tokens = 0
    with torch.no_grad():
        for start in range(0, n, batch_size):
            index = torch.arange(start, min(n, start + batch_size), device=device)
            rows = features.rows(index)
            candidates, _ = model.candidates(rows)
            instruction = instructions[index]
            ee = np.tile(np.asarray(sim.HOME, dtype=float), (len(index), 1))
            gripper = np.zeros(len(index))
            generator = torch.Generator(device=device).manual_seed(sub_seed(seed, start))
            for chunk in range(sim.EPISODE_STEPS // sim.CHUNK):
                proprio = policy_proprio(torch.as_tensor(ee, dtype=torch.float32, device=device))
                visual, chosen, _ = model.select(candidates, instruction, proprio, generator=generator)
                if chunk == 0:
                    tokens = visual.shape[1]
                    if chosen is not None:
                        selected.append(chosen.cpu().numpy())
                actions = from_policy_units(model.policy(instruction, visual, proprio).actions)
                actions = actions.double().cpu().numpy()
                ee, gripper = sim.execute(ee, actions)
            goal = data.goals[start : start + len(index)]
            grip = data.grips[start : start + len(index)]
            successes.append(sim.success(goal, grip, ee, gripper))
            distances.append(np.linalg.norm(ee - goal, axis=1))
    return ClosedLoop(
        success=np.concatenate(successes),
        distance=np.concatenate(distances),
        tokens=int(tokens),
        selected=np.concatenate(selected) if selected else None,
    )


def action_l1(
    model: VLAModel, features: FrameFeatures, data: EpisodeSet, demos: Demonstrations, *, seed: int = 0
) -> float:
    """Mean L1 error of the predicted chunks on expert demonstrations of held-out episodes (open loop), in
    the policy's units (5 cm steps, gripper 0/1)."""
    device = features.v2d.device
    model.eval()
    instructions = torch.from_numpy(data.instructions).to(device)
    episode = torch.from_numpy(demos.episode).to(device)
    proprio = policy_proprio(torch.from_numpy(demos.proprio).to(device))
    chunks = to_policy_units(torch.from_numpy(demos.chunks).to(device))
    generator = torch.Generator(device=device).manual_seed(sub_seed(seed, 99))
    with torch.no_grad():
        candidates, _ = model.candidates(features.rows(episode))
        visual, _, _ = model.select(candidates, instructions[episode], proprio, generator=generator)
        pred = model.policy(instructions[episode], visual, proprio).actions
        return float(action_loss(pred, chunks))


__all__ = ["ClosedLoop", "action_l1", "closed_loop"]
