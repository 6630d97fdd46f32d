"""Two small 2-D control tasks rendered to RGB frames: ``Wall`` (the chapter's main task) and ``Push``.

Both are kinematic and vectorised over a batch of states (NumPy), with positions in the unit square and one
planner action per step: ``skip`` sub-steps of a 2-D move in ``[−1, 1]²`` each scaled by ``step`` (the
action is ``2·skip`` numbers, sub-step after sub-step, as a frame-skipped action of DINO-WM's Wall).

- **Wall**: an agent disk of radius ``radius`` and a vertical wall at ``x = 0.5`` (half thickness
  ``wall_half``) with one gap of half height ``gap_half`` centred at a per-episode ``gap``. A move that
  would put the disk into the wall outside the gap stops at the wall's face (or, inside the gap, at the gap's
  edge): the wall is never crossed outside the gap. Success: the agent within ``success`` of the goal.
- **Push**: a pusher disk and a square block (half side ``block_half``). A move that makes the pusher
  overlap the block pushes the block along the sub-step's dominant axis by the overlap (a kinematic push,
  no rotation). Success: the block within ``success`` of its goal position.

Frames: ``size × size`` RGB in ``[0, 1]`` showing ``[−margin, 1 + margin]²``; the agent/pusher is a soft
Gaussian blob of width ``blob`` (red), the wall grey, the block green. The wide footprint keeps the
patch-feature goal cost informative away from the goal, and the margin keeps the blob whole near the
arena's edge (a blob cut by the frame would lower the cost by leaving the picture). Both, the gap's width
and the start/goal placement were set by the planability gate (CEM on the true simulator with the encoded
cost must succeed on 70% of the episodes) before any world model was trained.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from neurips26.validation import check_choice, check_float, check_int

ENVS = ("wall", "push")


@dataclass(frozen=True)
class State:
    """A batch of states: ``agent`` ``(B, 2)``; Wall: the gap centre ``gap`` ``(B,)``; Push: ``block``
    ``(B, 2)``. Unused fields are arrays of NaN of the right batch size."""

    agent: np.ndarray
    gap: np.ndarray
    block: np.ndarray

    def __len__(self) -> int:
        return len(self.agent)

    def take(self, rows: object) -> State:
        """The states at ``rows`` (an index array or slice)."""
        return State(self.agent[rows], self.gap[rows], self.block[rows])

    @staticmethod
    def stack(states: list[State]) -> State:
        return State(*(np.concatenate([getattr(s, f) for s in states]) for f in ("agent", "gap", "block")))


@dataclass(frozen=True)
class EnvSpec:
    """Geometry and rendering of one task (module doc)."""

    name: str = "wall"
    size: int = 32
    step: float = 0.06
    skip: int = 2
    radius: float = 0.04
    wall_half: float = 0.03
    gap_half: float = 0.11
    block_half: float = 0.07
    blob: float = 0.2
    success: float = 0.1
    margin: float = 0.25

    def __post_init__(self) -> None:
        check_choice("name", self.name, ENVS)
        check_int("size", self.size, minimum=4)
        check_int("skip", self.skip, minimum=1)
        for field in ("step", "radius", "wall_half", "gap_half", "block_half", "blob", "success"):
            check_float(field, getattr(self, field), minimum=0.0, strict_min=True)
        check_float("margin", self.margin, minimum=0.0)
        if self.gap_half <= self.radius:
            raise ValueError("gap_half must exceed radius: the agent must fit through the gap")

    @property
    def action_dim(self) -> int:
        """Numbers in one planner action: ``2 · skip``."""
        return 2 * self.skip


def _check_actions(spec: EnvSpec, actions: object, batch: int) -> np.ndarray:
    a = np.asarray(actions, dtype=float)
    if a.shape != (batch, spec.action_dim):
        raise ValueError(f"actions must have shape ({batch}, {spec.action_dim}); got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError("actions must be finite")
    return np.clip(a, -1.0, 1.0)


def _wall_move(spec: EnvSpec, pos: np.ndarray, gap: np.ndarray, move: np.ndarray) -> np.ndarray:
    """One sub-step of the Wall agent, stopped by the wall and the arena's edges."""
    r = spec.radius
    new = np.clip(pos + move, r, 1.0 - r)
    lo, hi = 0.5 - spec.wall_half - r, 0.5 + spec.wall_half + r  # where the disk would touch the wall
    in_gap_new = np.abs(new[:, 1] - gap) <= spec.gap_half - r
    in_gap_old = np.abs(pos[:, 1] - gap) <= spec.gap_half - r
    old_in_slab = (pos[:, 0] > lo) & (pos[:, 0] < hi)
    new_in_slab = (new[:, 0] > lo) & (new[:, 0] < hi)
    crosses = (pos[:, 0] <= lo) & (new[:, 0] >= hi) | (pos[:, 0] >= hi) & (new[:, 0] <= lo)
    # inside the gap's corridor: the disk may only slide along it, so y stays within the gap
    corridor = old_in_slab & new_in_slab
    new[corridor, 1] = np.clip(
        new[corridor, 1], gap[corridor] - spec.gap_half + r, gap[corridor] + spec.gap_half - r
    )
    # entering or crossing the slab outside the gap: stop at the face on the side it came from
    blocked = ~old_in_slab & (new_in_slab | crosses) & ~(in_gap_new & in_gap_old)
    new[blocked, 0] = np.where(pos[blocked, 0] <= lo, lo, hi)
    return new


def _push_move(spec: EnvSpec, pos: np.ndarray, block: np.ndarray, move: np.ndarray):
    """One sub-step of Push: the pusher moves; an overlap pushes the block along the dominant axis."""
    r, h = spec.radius, spec.block_half
    new = np.clip(pos + move, r, 1.0 - r)
    block = block.copy()
    gap = np.abs(new - block) - (h + r)  # per axis; overlap when both are negative
    overlap = (gap < 0).all(1)
    axis = np.argmax(np.abs(move), axis=1)
    rows = np.flatnonzero(overlap)
    ax = axis[rows]
    push = -gap[rows, ax] * np.sign(move[rows, ax])
    block[rows, ax] = np.clip(block[rows, ax] + push, h, 1.0 - h)
    # a block stuck at the arena's edge stops the pusher instead
    still = (np.abs(new - block) < (h + r)).all(1)
    new[still] = pos[still]
    return new, block


def step(spec: EnvSpec, state: State, actions: object) -> State:
    """The states after one planner action each (``(B, 2·skip)``, clipped to ``[−1, 1]``)."""
    a = _check_actions(spec, actions, len(state))
    agent, block = state.agent.copy(), state.block.copy()
    for s in range(spec.skip):
        move = spec.step * a[:, 2 * s : 2 * s + 2]
        if spec.name == "wall":
            agent = _wall_move(spec, agent, state.gap, move)
        else:
            agent, block = _push_move(spec, agent, block, move)
    return replace(state, agent=agent, block=block)


def distance(spec: EnvSpec, state: State, goal: State) -> np.ndarray:
    """Distance to the goal that decides success: the agent's (Wall) or the block's (Push), ``(B,)``."""
    if spec.name == "wall":
        return np.linalg.norm(state.agent - goal.agent, axis=1)
    return np.linalg.norm(state.block - goal.block, axis=1)


def success(spec: EnvSpec, state: State, goal: State) -> np.ndarray:
    return distance(spec, state, goal) < spec.success


def _grid(size: int, margin: float) -> tuple[np.ndarray, np.ndarray]:
    """Pixel centres in arena coordinates: the frame shows ``[−margin, 1 + margin]²``."""
    c = -margin + (1 + 2 * margin) * (np.arange(size) + 0.5) / size
    return np.meshgrid(c, c, indexing="xy")  # x across columns, y across rows (row 0 at y = 0)


def render(spec: EnvSpec, state: State) -> np.ndarray:
    """RGB frames ``(B, 3, size, size)`` in ``[0, 1]``, float32 (module doc)."""
    x, y = _grid(spec.size, spec.margin)
    b = len(state)
    frames = np.zeros((b, 3, spec.size, spec.size))
    d2 = (x[None] - state.agent[:, 0, None, None]) ** 2 + (y[None] - state.agent[:, 1, None, None]) ** 2
    frames[:, 0] = np.exp(-d2 / (2 * spec.blob**2))
    if spec.name == "wall":
        slab = (np.abs(x - 0.5) <= spec.wall_half) & (y >= 0) & (y <= 1)
        solid = slab[None] & (np.abs(y[None] - state.gap[:, None, None]) > spec.gap_half)
        frames[:, :, :, :] += 0.5 * solid[:, None]
    else:
        inside = (np.abs(x[None] - state.block[:, 0, None, None]) <= spec.block_half) & (
            np.abs(y[None] - state.block[:, 1, None, None]) <= spec.block_half
        )
        frames[:, 1] += inside
    return np.clip(frames, 0.0, 1.0).astype(np.float32)


def render_tensors(
    spec: EnvSpec, agent: torch.Tensor, gap: torch.Tensor, block: torch.Tensor
) -> torch.Tensor:
    """:func:`render` of the states ``agent`` ``(B, 2)``, ``gap`` ``(B,)``, ``block`` ``(B, 2)`` (the fields
    of :class:`State` as tensors) on their device: float64 arithmetic, float32 frames ``(B, 3, size,
    size)``. The ``paper`` scale renders its training frames where the predictor trains, so that a batch
    crosses from the host as a few numbers per state rather than as images."""
    c = torch.arange(spec.size, dtype=torch.float64, device=agent.device)
    c = -spec.margin + (1 + 2 * spec.margin) * (c + 0.5) / spec.size  # pixel centres (see _grid)
    x, y = c[None, None, :], c[None, :, None]  # x across columns, y across rows
    agent = agent.to(torch.float64)
    frames = torch.zeros((len(agent), 3, spec.size, spec.size), dtype=torch.float64, device=agent.device)
    d2 = (x - agent[:, 0, None, None]) ** 2 + (y - agent[:, 1, None, None]) ** 2
    frames[:, 0] = torch.exp(-d2 / (2 * spec.blob**2))
    if spec.name == "wall":
        slab = ((x - 0.5).abs() <= spec.wall_half) & (y >= 0) & (y <= 1)
        solid = slab & ((y - gap.to(torch.float64)[:, None, None]).abs() > spec.gap_half)
        frames += 0.5 * solid[:, None]
    else:
        block = block.to(torch.float64)
        inside = ((x - block[:, 0, None, None]).abs() <= spec.block_half) & (
            (y - block[:, 1, None, None]).abs() <= spec.block_half
        )
        frames[:, 1] += inside
    return frames.clamp(0.0, 1.0).to(torch.float32)


def random_state(
    spec: EnvSpec,
    n: int,
    rng: np.random.Generator,
    *,
    side: str | None = None,
    near_gap: float | None = None,
    gap: np.ndarray | None = None,
) -> State:
    """``n`` random valid states. Wall: the gap centre in ``[0.3, 0.7]`` (or ``gap``); ``side``
    "left"/"right" puts the agent on that side of the wall, ``near_gap`` within that vertical distance of
    the gap's centre. Push: the block away from the edges, the pusher not overlapping it."""
    n = check_int("n", n, minimum=1)
    r = spec.radius
    if spec.name == "wall":
        gap = rng.uniform(0.3, 0.7, n) if gap is None else np.asarray(gap, dtype=float)
        lo, hi = 0.5 - spec.wall_half - r, 0.5 + spec.wall_half + r
        left = np.full(n, side == "left") if side is not None else rng.random(n) < 0.5
        x = np.where(left, rng.uniform(r, lo - 0.02, n), rng.uniform(hi + 0.02, 1 - r, n))
        if near_gap is None:
            y = rng.uniform(r, 1 - r, n)
        else:
            y = np.clip(gap + rng.uniform(-near_gap, near_gap, n), r, 1 - r)
        return State(np.stack([x, y], axis=1), gap, np.full((n, 2), np.nan))
    h = spec.block_half
    block = rng.uniform(0.25, 0.75, (n, 2))
    agent = rng.uniform(r, 1 - r, (n, 2))
    for _ in range(100):  # resample pushers that overlap their block
        bad = (np.abs(agent - block) < h + r + 0.02).all(1)
        if not bad.any():
            break
        agent[bad] = rng.uniform(r, 1 - r, (int(bad.sum()), 2))
    return State(agent, np.full(n, np.nan), block)


def with_goal_layout(spec: EnvSpec, state: State, goal: State) -> State:
    """The goal with the start's static layout (Wall: the same gap), so that the goal image shows the
    same wall as the observation."""
    return replace(goal, gap=state.gap.copy())
