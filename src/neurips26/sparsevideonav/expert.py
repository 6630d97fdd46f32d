"""Expert demonstrations for the maze tasks, with the realised per-frame actions as labels.

**Action labels.** The world applies an action as "turn, then move along the new heading", so a pose
sequence ``p_k = (x_k, z_k, yaw_k)`` is explained exactly by the deltas

    Δyaw_k = yaw_{k+1} - yaw_k,
    (Δfwd_k, Δlat_k) = ((x, z)_{k+1} - (x, z)_k) · (forward(yaw_{k+1}), left(yaw_{k+1})),

(:func:`relative_deltas`; the two unit vectors are orthonormal, so :func:`compose` inverts it exactly).
The labels are the *realised* deltas, so a move shortened by a wall is recorded as what happened.

**Steering** (shared by both experts): toward a waypoint at bearing error ``e``, turn by
``clip(e, ±22.5°)``; with ``e'`` the error left after the turn, step ``min(0.25 m, d) · cos e'`` forward
when ``|e'| < 45°`` and stand still otherwise. Waypoints are cell centres, one per cell of the route, so
the agent never cuts a corner.

- :func:`ifn_expert` follows the task's BFS route and stops in the target's cell once within 1.5 m.
- :func:`bvn_explorer` searches blind: a seeded depth-first exploration over cells that knows only the
  openings of cells it has stood in, unvisited neighbours taken in a seeded random order, dead ends backed
  out of along the way in. It watches every rendered frame; from the first sighting of the target it
  takes the BFS route to the target's cell and stops once within 1.5 m. Entering a cell it faces the way
  it moves; arriving in a dead end it thus faces the end wall, and backing out it turns in place through
  the side walls, so a pillar (which stands against a wall of its cell) in a visited dead end is seen.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neurips26.sparsevideonav.tasks import KINDS, Task, cell_of, make_task
from neurips26.sparsevideonav.world import FPS, SPEED, TURN, NavWorld, Pose, reached
from neurips26.validation import check_array, check_choice, check_int

MAX_STEP = SPEED / FPS  # 0.25 m a frame
MAX_TURN = TURN / FPS  # 22.5 degrees a frame
MOVE_ERROR = 45.0  # degrees: no forward step at a larger heading error
WAYPOINT_TOL = 0.2  # m: a waypoint closer than this counts as reached


@dataclass(frozen=True)
class Trajectory:
    """One demonstration of ``task``: ``poses`` (T+1, 3) float64 ``[x, z, yaw]``, ``actions`` (T, 3)
    float64 realised ``(Δfwd, Δlat, Δyaw)`` (module doc), ``frames`` (T+1, 16, 32, 3) float32 (frame k seen
    at pose k), ``seen_at`` the first frame showing the target (None if never), ``stopped`` whether the
    expert chose to stop, ``success`` stopped within 1.5 m of the target."""

    task: Task
    poses: np.ndarray
    actions: np.ndarray
    frames: np.ndarray
    seen_at: int | None
    stopped: bool
    success: bool

    @property
    def seconds(self) -> float:
        """Duration in seconds, ``T / FPS``."""
        return len(self.actions) / FPS


def _check_poses(name: str, poses: object) -> np.ndarray:
    arr = check_array(name, np.asarray(poses, dtype=float) if isinstance(poses, list | tuple) else poses)
    if arr.ndim != 2 or arr.shape[1] != 3 or arr.shape[0] < 1:
        raise ValueError(f"{name} must have shape (T+1, 3) with T+1 >= 1; got {arr.shape}")
    return arr.astype(np.float64)


def _basis(yaw_deg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """forward = (sin yaw, cos yaw) and left = (cos yaw, -sin yaw) (:meth:`Pose.left`), each (T, 2)."""
    r = np.radians(yaw_deg)
    s, c = np.sin(r), np.cos(r)
    return np.stack([s, c], axis=1), np.stack([c, -s], axis=1)


def relative_deltas(poses: object) -> np.ndarray:
    """Per-frame ``(Δfwd, Δlat, Δyaw)`` (T, 3) float64 of a pose sequence (T+1, 3) (module doc).

    Yaw is not wrapped: ``Δyaw`` is the plain difference, so a pose sequence from the world (which never
    wraps yaw) gives turns within ±22.5°.
    """
    p = _check_poses("poses", poses)
    dyaw = np.diff(p[:, 2])
    fwd, left = _basis(p[1:, 2])
    dxz = np.diff(p[:, :2], axis=0)
    return np.stack([(dxz * fwd).sum(1), (dxz * left).sum(1), dyaw], axis=1)


def compose(start: Pose, deltas: object) -> np.ndarray:
    """The poses (T+1, 3) reached from ``start`` by deltas (T, 3): the inverse of :func:`relative_deltas`.

    ``yaw_{k+1} = yaw_k + Δyaw_k`` and ``(x, z)_{k+1} = (x, z)_k + Δfwd_k forward(yaw_{k+1}) +
    Δlat_k left(yaw_{k+1})`` — no clipping and no walls (pure kinematics).
    """
    if not isinstance(start, Pose):
        raise TypeError(f"start must be a Pose; got {type(start).__name__}")
    d = check_array("deltas", np.asarray(deltas, dtype=float) if isinstance(deltas, list | tuple) else deltas)
    if d.ndim != 2 or d.shape[1] != 3:
        raise ValueError(f"deltas must have shape (T, 3); got {d.shape}")
    yaw = start.yaw + np.concatenate([[0.0], np.cumsum(d[:, 2])])
    fwd, left = _basis(yaw[1:])
    steps = d[:, :1] * fwd + d[:, 1:2] * left
    xz = np.array([start.x, start.z]) + np.concatenate([np.zeros((1, 2)), np.cumsum(steps, axis=0)])
    return np.concatenate([xz, yaw[:, None]], axis=1)


def _wrap(angle: float) -> float:
    """An angle in degrees wrapped to (-180, 180]."""
    a = (angle + 180.0) % 360.0 - 180.0
    return 180.0 if a == -180.0 else a


def steer(pose: Pose, goal: tuple[float, float]) -> tuple[float, float, float]:
    """The action ``(Δfwd, 0, Δyaw)`` that turns toward ``goal`` (x, z) and steps when roughly facing it.

    ``Δyaw = clip(e, ±22.5°)`` with ``e`` the bearing error; ``Δfwd = min(0.25, d) cos e'`` when the error
    left after the turn ``|e'| < 45°``, else 0.
    """
    dx, dz = goal[0] - pose.x, goal[1] - pose.z
    dist = math.hypot(dx, dz)
    if dist < 1e-9:
        return 0.0, 0.0, 0.0
    error = _wrap(math.degrees(math.atan2(dx, dz)) - pose.yaw)  # forward = (sin, cos) → bearing atan2(dx, dz)
    dyaw = float(np.clip(error, -MAX_TURN, MAX_TURN))
    rest = error - dyaw
    fwd = min(MAX_STEP, dist) * math.cos(math.radians(rest)) if abs(rest) < MOVE_ERROR else 0.0
    return fwd, 0.0, dyaw


class _Recorder:
    """Steps the world, renders each pose and notes the first sighting of the target."""

    def __init__(self, world: NavWorld, task: Task, max_frames: int) -> None:
        self.world, self.task, self.max_frames = world, task, max_frames
        self.poses: list[Pose] = [task.start]
        self.frames: list[np.ndarray] = []
        self.seen_at: int | None = None
        self._look()

    def _look(self) -> None:
        frame = self.world.observe(self.poses[-1])
        self.frames.append(frame.rgb)
        if self.seen_at is None and self.world.visible(frame, self.task.instance):
            self.seen_at = len(self.frames) - 1

    @property
    def pose(self) -> Pose:
        return self.poses[-1]

    @property
    def full(self) -> bool:
        return len(self.poses) - 1 >= self.max_frames

    def at_goal(self) -> bool:
        """Inside the target's cell and within 1.5 m of the pillar: the experts' stop rule."""
        p = self.pose
        return cell_of(self.world, p.x, p.z) == self.task.path[-1] and reached(p, self.task.target)

    def act(self, action: tuple[float, float, float]) -> None:
        self.poses.append(self.world.step(self.pose, action))
        self._look()

    def go_to(self, goal: tuple[float, float], *, until_seen: bool) -> str:
        """Steer to ``goal`` frame by frame; returns "arrived", "full" (the frame budget is spent), and
        either "seen" (``until_seen``: the target has been sighted; the blind search never tests the
        stop rule, which needs the target) or "goal" (otherwise: the stop rule holds)."""
        while True:
            if until_seen and self.seen_at is not None:
                return "seen"
            if not until_seen and self.at_goal():
                return "goal"
            if math.hypot(goal[0] - self.pose.x, goal[1] - self.pose.z) <= WAYPOINT_TOL:
                return "arrived"
            if self.full:
                return "full"
            self.act(steer(self.pose, goal))

    def follow(self, cells: Sequence[tuple[int, int]]) -> bool:
        """Walk through the centres of ``cells`` until the stop rule holds; returns whether it did."""
        for cell in cells:
            status = self.go_to(self.world.maze.cell_center(*cell), until_seen=False)
            if status != "arrived":
                return status == "goal"
        return self.at_goal()

    def result(self, stopped: bool) -> Trajectory:
        poses = np.array([[p.x, p.z, p.yaw] for p in self.poses], dtype=np.float64)
        return Trajectory(
            task=self.task,
            poses=poses,
            actions=relative_deltas(poses),
            frames=np.stack(self.frames).astype(np.float32),
            seen_at=self.seen_at,
            stopped=stopped,
            success=stopped and reached(self.pose, self.task.target),
        )


def _check_run(world: object, task: object, max_frames: object) -> int:
    if not isinstance(world, NavWorld):
        raise TypeError(f"world must be a NavWorld; got {type(world).__name__}")
    if not isinstance(task, Task):
        raise TypeError(f"task must be a Task; got {type(task).__name__}")
    if task.seed != world.seed:
        raise ValueError(f"task must belong to world {world.seed}; got a task of world {task.seed}")
    return check_int("max_frames", max_frames, minimum=1)


def ifn_expert(world: NavWorld, task: Task, *, max_frames: int = 240) -> Trajectory:
    """Follow ``task.path`` through its cell centres and stop in the target's cell within 1.5 m; ends
    unstopped when ``max_frames`` actions do not suffice."""
    max_frames = _check_run(world, task, max_frames)
    rec = _Recorder(world, task, max_frames)
    stopped = rec.follow(task.path[1:])
    return rec.result(stopped)


def bvn_explorer(world: NavWorld, task: Task, *, seed: int, max_frames: int = 240) -> Trajectory:
    """Seeded blind depth-first search until the target is sighted, then the BFS route to it (module doc).

    Before the sighting it uses only the openings of cells it has stood in and the seeded order, never
    the task's target, so two tasks differing only in the target share their actions up to the earlier
    sighting.
    """
    max_frames = _check_run(world, task, max_frames)
    seed = check_int("seed", seed, minimum=0)
    rng = np.random.default_rng(seed)
    m = world.maze
    rec = _Recorder(world, task, max_frames)
    here = cell_of(world, task.start.x, task.start.z)
    stack = [here]  # the way back to the start
    todo: dict[tuple[int, int], list[tuple[int, int]]] = {}  # unexplored openings of visited cells
    segment = (here, here)  # the last move between cell centres
    while rec.seen_at is None and not rec.full:
        here = stack[-1]
        if here not in todo:  # first time standing here: the walls show the openings
            opens = [c for c in m.neighbors(*here) if c not in todo and c not in stack]
            todo[here] = [opens[i] for i in rng.permutation(len(opens))]
        pending = [c for c in todo[here] if c not in todo]
        todo[here] = pending
        if pending:
            nxt = pending[0]
            stack.append(nxt)
        elif len(stack) > 1:
            stack.pop()
            nxt = stack[-1]
        else:
            break  # the whole maze explored without a sighting
        segment = (here, nxt)
        rec.go_to(m.cell_center(*nxt), until_seen=True)
    if rec.seen_at is None:
        return rec.result(False)
    # sighted: the BFS route from the current cell; skip its first centre when the agent is on the way
    # between that centre and the next (no corner to cut)
    path = m.shortest_path(cell_of(world, rec.pose.x, rec.pose.z), task.path[-1])
    if len(path) > 1 and path[1] in segment:
        path = path[1:]
    return rec.result(rec.follow(path))


def demonstrations(
    world_seeds: Sequence[int],
    *,
    kinds: Sequence[str] = KINDS,
    seed: int = 0,
    max_frames: int = 240,
    progress: bool = False,
) -> list[Trajectory]:
    """One expert trajectory per (world seed, kind), world seeds outer, deterministic in all arguments.

    The task seed and the explorer seed of each episode are derived from ``(seed, world seed, kind)``, so
    episodes differ across worlds and kinds. BVN uses :func:`bvn_explorer`, IFN :func:`ifn_expert`.
    """
    if isinstance(world_seeds, str) or not isinstance(world_seeds, Sequence):
        raise TypeError(f"world_seeds must be a sequence of ints; got {type(world_seeds).__name__}")
    seeds = [check_int(f"world_seeds[{i}]", s, minimum=0) for i, s in enumerate(world_seeds)]
    kinds = [check_choice(f"kinds[{i}]", k, KINDS) for i, k in enumerate(kinds)]
    seed = check_int("seed", seed, minimum=0)
    max_frames = check_int("max_frames", max_frames, minimum=1)
    items = seeds
    if progress:
        from neurips26.progress import progress as bar

        items = bar(seeds, total=len(seeds), desc="demonstrations")
    out = []
    for ws in items:
        world = NavWorld(ws)
        for kind in kinds:
            task_seed, run_seed = np.random.SeedSequence([seed, ws, KINDS.index(kind)]).generate_state(2)
            task = make_task(world, kind, int(task_seed))
            if kind == "bvn":
                out.append(bvn_explorer(world, task, seed=int(run_seed), max_frames=max_frames))
            else:
                out.append(ifn_expert(world, task, max_frames=max_frames))
    return out
