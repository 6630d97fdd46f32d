"""The chapter's two navigation task kinds in the maze world: beyond-view search and instruction following.

A task is a start pose, a target pillar (one of the four coloured landmarks) and an instruction.

- **BVN** (beyond-view navigation, the paper's headline setting): the instruction only names the goal,
  ``find the {colour} object``; the agent must search for a target it cannot see at the start.
- **IFN** (instruction-following navigation): turn-by-turn directions read off the breadth-first route.

**Sampling** (:func:`make_task`): a ``default_rng(seed)`` draws a colour, a start cell and a start yaw
among the cell's open directions (so the agent looks down a corridor). A draw is kept only when the
start cell's centre is at least :data:`MIN_START_DISTANCE` from the pillar in a straight line and the
pillar does not show in the start frame; otherwise the next draw of the same generator is tried.

**IFN grammar.** With ``h`` the current heading (the start yaw at first) and the route split into runs
of equal move direction ``d``::

    instruction := clause "," { clause "," } "stop" "at" "the" COLOUR "object"
    clause      := "turn" ("left" | "right" | "around")      # when d - h = +90, -90, 180 (mod 360)
                 | "go" "straight"                            # one per run, after its turn if any

Yaw 0 looks along +Z and 90 along +X. The renderer is right-handed with y up, so an agent looking along
+Z sees +X on its *left*: a change of +90° is a left turn (what the camera shows, and what the
instruction says).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from neurips26.sparsevideonav.instructions import COLOURS
from neurips26.sparsevideonav.world import NavWorld, Pose
from neurips26.validation import check_choice, check_int

KINDS: tuple[str, ...] = ("bvn", "ifn")
#: Least straight-line distance (m) from the start cell's centre to the target pillar's centre.
MIN_START_DISTANCE = 6.0
#: Draws of (colour, start cell, yaw) tried before :func:`make_task` gives up.
MAX_TRIES = 200

_TURN_WORD = {90: "left", 180: "around", 270: "right"}


@dataclass(frozen=True)
class Task:
    """One episode: ``kind`` ("bvn" | "ifn"), maze ``seed``, ``start`` pose, target pillar ``colour`` and
    ``instance`` id, ``target`` its centre ``(x, z)`` in metres, the instruction ``words`` and the BFS
    ``path`` of cells ``(row, col)`` from the start cell to the target's cell (both included)."""

    kind: str
    seed: int
    start: Pose
    colour: str
    instance: int
    target: tuple[float, float]
    words: tuple[str, ...]
    path: tuple[tuple[int, int], ...]


def heading_between(a_cell: tuple[int, int], b_cell: tuple[int, int]) -> float:
    """The yaw (degrees) of a move from cell ``a_cell`` to its grid neighbour ``b_cell``.

    Rows grow along +Z and columns along +X, so row + 1 → 0°, col + 1 → 90°, row - 1 → 180°,
    col - 1 → 270° (matching :meth:`Pose.forward` = ``(sin yaw, cos yaw)``).
    """
    dr, dc = b_cell[0] - a_cell[0], b_cell[1] - a_cell[1]
    if abs(dr) + abs(dc) != 1:
        raise ValueError(f"a_cell and b_cell must be grid neighbours; got {a_cell!r} and {b_cell!r}")
    # atan2(Δx, Δz) with Δx = Δcol, Δz = Δrow, in [0, 360)
    return float(math.degrees(math.atan2(dc, dr)) % 360.0)


def cell_of(world: NavWorld, x: float, z: float) -> tuple[int, int]:
    """The maze cell ``(row, col)`` holding the point ``(x, z)`` (clamped to the maze)."""
    m = world.maze
    row = min(max(int(z // m.cell), 0), m.rows - 1)
    col = min(max(int(x // m.cell), 0), m.cols - 1)
    return row, col


def ifn_words(path: tuple[tuple[int, int], ...], start_yaw: float, colour: str) -> tuple[str, ...]:
    """The turn-by-turn instruction for walking ``path`` (cells) from heading ``start_yaw`` (module doc)."""
    if len(path) < 2:
        raise ValueError(f"path must have at least 2 cells; got {len(path)}")
    colour = check_choice("colour", colour, COLOURS)
    words: list[str] = []
    heading = round(start_yaw) % 360
    previous = None  # the direction of the run under way
    for a, b in zip(path[:-1], path[1:], strict=True):
        d = round(heading_between(a, b)) % 360
        if d == previous:
            continue  # the same run: already said "go straight"
        turn = (d - heading) % 360
        if turn:
            words += ["turn", _TURN_WORD[turn], ","]
        words += ["go", "straight", ","]
        heading = previous = d
    return (*words, "stop", "at", "the", colour, "object")


def make_task(world: NavWorld, kind: str, seed: int) -> Task:
    """A task of ``kind`` in ``world`` drawn from ``default_rng(seed)`` (module doc); deterministic in
    ``(world.seed, kind, seed)``. ``ValueError`` when no draw meets the constraints in :data:`MAX_TRIES`."""
    if not isinstance(world, NavWorld):
        raise TypeError(f"world must be a NavWorld; got {type(world).__name__}")
    kind = check_choice("kind", kind, KINDS)
    seed = check_int("seed", seed, minimum=0)
    rng = np.random.default_rng(seed)
    m = world.maze
    cells = {colour: (row, col) for row, col, _inst, colour in m.landmarks}
    colours = [c for c in COLOURS if c in cells]
    for _ in range(MAX_TRIES):
        colour = colours[int(rng.integers(len(colours)))]
        row, col = int(rng.integers(m.rows)), int(rng.integers(m.cols))
        opens = m.neighbors(row, col)
        yaw = heading_between((row, col), opens[int(rng.integers(len(opens)))])
        instance, tx, tz = world.landmark(colour)
        x, z = m.cell_center(row, col)
        if math.hypot(x - tx, z - tz) < MIN_START_DISTANCE:
            continue
        start = Pose(float(x), float(z), yaw)
        if world.visible(world.observe(start), instance):
            continue
        path = tuple((int(r), int(c)) for r, c in m.shortest_path((row, col), cells[colour]))
        if kind == "bvn":
            words: tuple[str, ...] = ("find", "the", colour, "object")
        else:
            words = ifn_words(path, yaw, colour)
        return Task(kind, world.seed, start, colour, instance, (tx, tz), words, path)
    raise ValueError(
        f"seed {seed} gave no valid {kind} task in world {world.seed} after {MAX_TRIES} draws "
        f"(start >= {MIN_START_DISTANCE} m from the target and the target out of view)"
    )
