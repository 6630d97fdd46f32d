"""The navigation world: an agent walking through a seeded 5 × 5 maze, seeing it through a small
first-person camera.

- **Maze.** :func:`neurips26.world.maze` (2 m corridors, coloured pillars as landmarks).
- **Pose** ``(x, z, yaw)``: position on the ground in metres, heading in degrees (0 = +Z, 90 = +X, the
  world's convention). The camera is a ``pinhole(32, 16, 90°)`` at eye height 1 m looking along the heading.
- **Motion.** Frames at 4 per second; an action is a per-frame ``(Δforward, Δlateral, Δyaw)`` in the
  agent's frame (Δlateral positive to the agent's left, :meth:`Pose.left`; Δyaw positive turns left:
  the renderer is right-handed with y up), clipped to 1 m/s (0.25 m a frame) and 90°/s (22.5° a
  frame). The body is a disk of radius :data:`BODY` that walls stop: a move that would overlap a wall is
  tried along each axis alone, and dropped when neither fits (the agent slides along walls and never
  passes through them).
- **Seeing.** An object is *visible* when at least :data:`VISIBLE_PIXELS` pixels of the instance mask show
  it. Night frames (the test condition) are the day frame times 0.35 plus seeded Gaussian noise.
- **Success.** Stopping within 1.5 m of the target (distance to the pillar's centre).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from neurips26.validation import check_float, check_int
from neurips26.world import Maze, heading_pose, maze, pinhole, render

FPS = 4
SPEED = 1.0  # m/s
TURN = 90.0  # degrees/s
EYE = 1.0  # m
WIDTH, HEIGHT, FOV = 32, 16, 90.0
BODY = 0.3  # m
VISIBLE_PIXELS = 4
SUCCESS_RADIUS = 1.5  # m
NIGHT_GAIN = 0.35
NIGHT_NOISE = 0.03
ROWS = COLS = 5
CELL = 2.0  # m


@dataclass(frozen=True)
class Pose:
    """``x``, ``z`` in metres and ``yaw`` in degrees (0 = +Z, 90 = +X)."""

    x: float
    z: float
    yaw: float

    def forward(self) -> np.ndarray:
        """The unit heading on the ground ``(x, z)``."""
        r = math.radians(self.yaw)
        return np.array([math.sin(r), math.cos(r)])

    def left(self) -> np.ndarray:
        """The unit direction to the agent's left ``(x, z)`` (+X at yaw 0: the renderer is right-handed
        with y up, so +X appears on the left of a camera looking along +Z)."""
        r = math.radians(self.yaw)
        return np.array([math.cos(r), -math.sin(r)])


@dataclass(frozen=True)
class Frame:
    """One observation: ``rgb`` ``(16, 32, 3)`` in ``[0, 1]`` and the instance mask ``(16, 32)``."""

    rgb: np.ndarray
    instance: np.ndarray


class NavWorld:
    """One maze and its physics, camera and landmarks (module doc)."""

    def __init__(self, seed: int) -> None:
        self.seed = check_int("seed", seed, minimum=0)
        self.maze: Maze = maze(ROWS, COLS, self.seed, cell=CELL)
        self.packed = self.maze.scene.pack(np.float32)
        self.occupancy = self.maze.occupancy(CELL / 20)

    @property
    def size(self) -> tuple[float, float]:
        """The maze's extent ``(x, z)`` in metres."""
        return self.maze.cols * CELL, self.maze.rows * CELL

    def landmark(self, colour: str) -> tuple[int, float, float]:
        """``(instance id, x, z)`` of the pillar of ``colour`` (its box's centre)."""
        for _row, _col, instance, name in self.maze.landmarks:
            if name == colour:
                box = next(b for b in self.maze.scene.boxes if b.instance_id == instance)
                return instance, float(box.center[0]), float(box.center[2])
        raise ValueError(f"colour must be one of {[lm[3] for lm in self.maze.landmarks]}; got {colour!r}")

    def free(self, x: float, z: float) -> bool:
        """Whether the body disk at ``(x, z)`` overlaps no wall and stays inside the maze."""
        w, d = self.size
        if not (BODY <= x <= w - BODY and BODY <= z <= d - BODY):
            return False
        occ = self.occupancy
        reach = int(math.ceil(BODY / occ.cell))
        row, col = occ.cell_of(x, z)
        rows = np.arange(int(row) - reach, int(row) + reach + 1)
        cols = np.arange(int(col) - reach, int(col) + reach + 1)
        rr, cc = np.meshgrid(rows, cols, indexing="ij")
        inside = (rr >= 0) & (rr < occ.shape[0]) & (cc >= 0) & (cc < occ.shape[1])
        rr, cc = rr[inside], cc[inside]
        hit = occ.occupied[rr, cc]
        if not hit.any():
            return True
        cx, cz = occ.center_of(rr[hit], cc[hit])
        # the nearest point of each occupied square to the body's centre
        half = occ.cell / 2
        nx = np.clip(x, cx - half, cx + half)
        nz = np.clip(z, cz - half, cz + half)
        return bool(((nx - x) ** 2 + (nz - z) ** 2 > BODY**2).all())

    def step(self, pose: Pose, action: object) -> Pose:
        """The pose after one frame of ``action = (Δforward, Δlateral, Δyaw)`` (module doc)."""
        a = np.asarray(action, dtype=float)
        if a.shape != (3,) or not np.isfinite(a).all():
            raise ValueError(f"action must be three finite numbers (forward, lateral, yaw); got {a.shape}")
        max_move, max_turn = SPEED / FPS, TURN / FPS
        move = np.array([a[0], a[1]])
        norm = float(np.linalg.norm(move))
        if norm > max_move:
            move *= max_move / norm
        yaw = pose.yaw + float(np.clip(a[2], -max_turn, max_turn))
        turned = Pose(pose.x, pose.z, yaw)
        delta = move[0] * turned.forward() + move[1] * turned.left()
        for dx, dz in ((delta[0], delta[1]), (delta[0], 0.0), (0.0, delta[1])):
            if self.free(pose.x + dx, pose.z + dz):
                return Pose(pose.x + dx, pose.z + dz, yaw)
        return turned

    def observe(self, pose: Pose, *, night: bool = False, rng: np.random.Generator | None = None) -> Frame:
        """The first-person frame at ``pose`` (night: darker and noisy, from ``rng``)."""
        camera = pinhole(WIDTH, HEIGHT, FOV, heading_pose((pose.x, EYE, pose.z), pose.yaw))
        r = render(self.packed, camera)
        rgb = r.rgb.astype(np.float32)
        if night:
            if rng is None:
                raise ValueError("rng must be given for a night frame (its noise is seeded)")
            rgb = np.clip(NIGHT_GAIN * rgb + NIGHT_NOISE * rng.standard_normal(rgb.shape), 0.0, 1.0)
        return Frame(rgb.astype(np.float32), r.instance)

    def visible(self, frame: Frame, instance: int) -> bool:
        """Whether ``instance`` shows in at least :data:`VISIBLE_PIXELS` pixels of ``frame``."""
        return int((frame.instance == instance).sum()) >= VISIBLE_PIXELS


def reached(pose: Pose, target: tuple[float, float], radius: float = SUCCESS_RADIUS) -> bool:
    """Success: the agent stands within ``radius`` of ``target`` (``(x, z)``), boundary included."""
    radius = check_float("radius", radius, minimum=0.0)
    return math.hypot(pose.x - target[0], pose.z - target[1]) <= radius
