"""A procedural tabletop where depth matters: scenes, renders, instructions, an expert and closed-loop rules.

The workspace is a 0.6 × 0.45 m table top (``Y = 0``, ``|X| <= 0.3``, ``|Z| <= 0.225``) holding 2–4 objects
(cubes, upright cylinders, spheres; 5–10 cm) in six colours, on grey pedestals of random height for the
depth tasks. One pinhole camera looks at the table centre from 0.75 m, 35° down, on the ``+Z`` side, so
"nearer" means larger ``Z`` and smaller z-depth. Renders are 48 × 48 RGB with exact z-depth, world points
and instance masks (boxes by the shared ray caster, round objects by its analytic primitives).

Four tasks, each a 3D goal point ``g`` and a gripper value ``grip``:

* ``nearer``  "pick up the nearer red cube": two cubes of one colour whose centres differ by ≥ 6 cm in
  z-depth, with independent sizes and pedestals (so neither apparent size nor image row settles which is
  nearer); ``g`` = the top centre of the nearer one, ``grip = 1``.
* ``tallest`` "place it on the tallest object": ``g`` = 3 cm above the highest top (≥ 3 cm above the
  runner-up), ``grip = 0`` (release).
* ``behind``  "move behind the blue cylinder": ``g`` = 8 cm beyond the cylinder's axis, away from the
  camera, 4 cm above the table; ``grip = 0``.
* ``colour``  "pick up the red sphere" (the control): every object stands on the table (no pedestals), so
  the image position of an object fixes its 3D position; ``g`` = its top centre, ``grip = 1``.

Expert: from end-effector position ``e`` the step is ``clip(g - e, ±5 cm)`` per axis,
with gripper ``grip`` once the step lands within 3 cm of ``g`` and ``1 - grip`` before (close on arrival
to pick, open on arrival to place). Actions come in chunks of ``H = 4`` steps; an episode runs 20 steps
(5 chunks), re-planning from proprioception after each chunk with the one image of the episode (the arm
is not drawn). Success: the final position within 3 cm of ``g`` and the final gripper value on the right
side of 0.5.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from neurips26.validation import check_array, check_choice, check_seed
from neurips26.world import (
    PALETTE,
    Camera,
    Cylinder,
    GroundPlane,
    Render,
    Scene,
    Sphere,
    oriented_box,
    pinhole,
    render_with_primitives,
    spherical_pose,
)

IMAGE_SIZE = 48
PATCH = 8
GRID = IMAGE_SIZE // PATCH  # 6 x 6 patches
NUM_PATCHES = GRID * GRID
CHUNK = 4  # H: steps per action chunk
EPISODE_STEPS = 20
MAX_STEP = 0.05  # metres per axis per step
SUCCESS_RADIUS = 0.03
HOME = (0.0, 0.25, 0.10)
WORKSPACE = ((-0.3, 0.3), (-0.225, 0.225))  # X range, Z range (metres)
CAMERA_DISTANCE = 0.75
CAMERA_ELEVATION = 35.0
CAMERA_FOV = 50.0
MIN_DEPTH_GAP = 0.06  # nearer task: z-depth gap of the two same-colour cubes
MIN_HEIGHT_GAP = 0.03  # tallest task: top of the tallest above the runner-up

TASKS = ("nearer", "tallest", "behind", "colour")
DEPTH_TASKS = ("nearer", "tallest", "behind")
SHAPES = ("cube", "cylinder", "sphere")
COLOURS: dict[str, tuple[float, float, float]] = {
    name: PALETTE[name] for name in ("red", "green", "blue", "yellow", "orange", "purple")
}
PEDESTAL_COLOUR = (0.55, 0.55, 0.55)
TABLE_COLOUR = (0.80, 0.74, 0.62)
TABLE_ID = 0
PEDESTAL_ID_BASE = 10

#: Per-patch pre-training classes of the 2D encoder: colour (table, pedestal, six colours) and shape.
COLOUR_CLASSES = ("table", "pedestal", *COLOURS)
SHAPE_CLASSES = ("table", "pedestal", *SHAPES)

VOCABULARY = (
    "<pad>", "pick", "up", "grasp", "reach", "the", "nearer", "closer", "cube", "place", "put", "it", "on",
    "top", "of", "tallest", "highest", "object", "move", "go", "behind", "cylinder", "sphere", "to",
    *COLOURS,
)  # fmt: skip
INSTRUCTION_LENGTH = 8
_WORD_ID = {w: i for i, w in enumerate(VOCABULARY)}


@dataclass(frozen=True)
class Item:
    """One object: ``shape`` of edge/diameter ``size`` on a pedestal ``pedestal`` metres tall at (x, z)."""

    shape: str
    colour: str
    size: float
    pedestal: float
    x: float
    z: float
    yaw: float
    instance_id: int

    @property
    def top(self) -> float:
        """Height of the object's highest point."""
        return self.pedestal + self.size

    @property
    def center(self) -> tuple[float, float, float]:
        return (self.x, self.pedestal + self.size / 2.0, self.z)


@dataclass(frozen=True)
class Episode:
    """A scene, its instruction, the target object and the goal the expert reaches."""

    seed: int
    task: str
    items: tuple[Item, ...]
    target: int  # index into items of the object the instruction refers to
    goal: tuple[float, float, float]
    grip: int
    words: tuple[str, ...]

    @property
    def is_depth_task(self) -> bool:
        return self.task in DEPTH_TASKS


@cache
def camera() -> Camera:
    """The fixed scene camera: 48 × 48, 50° FOV, 0.75 m from the table centre, 35° down, on the +Z side
    (built once; a :class:`~neurips26.world.Camera` is immutable)."""
    pose = spherical_pose((0.0, 0.0, 0.0), CAMERA_DISTANCE, 0.0, CAMERA_ELEVATION)
    cam = pinhole(IMAGE_SIZE, IMAGE_SIZE, CAMERA_FOV, pose)
    cam.c2w.flags.writeable = False  # shared by every caller
    return cam


def z_depth(point: tuple[float, float, float]) -> float:
    """Camera-frame z (depth along the optical axis) of a world point."""
    w2c = camera().w2c
    return float((w2c[:3, :3] @ np.asarray(point) + w2c[:3, 3])[2])


def _project(point: tuple[float, float, float]) -> np.ndarray:
    """Pixel (u, v) of a world point in :func:`camera`."""
    uv, _ = camera().project(np.asarray(point, dtype=float)[None])
    return uv[0]


def _place(
    rng: np.random.Generator, sizes: list[float], tries: int = 200
) -> list[tuple[float, float]] | None:
    """Footprint centres inside the workspace whose pedestal squares (size + 2 cm) keep 2 cm apart."""
    (x0, x1), (z0, z1) = WORKSPACE
    out: list[tuple[float, float]] = []
    for s in sizes:
        half = (s + 0.02) / 2.0
        for _ in range(tries):
            x, z = rng.uniform(x0 + half, x1 - half), rng.uniform(z0 + half, z1 - half)
            if all(
                math.hypot(x - ox, z - oz) >= (s + os_) / 2.0 * math.sqrt(2.0) + 0.04
                for (ox, oz), os_ in zip(out, sizes, strict=False)
            ):
                out.append((x, z))
                break
        else:
            return None
    return out


def _words(rng: np.random.Generator, task: str, colour: str, shape: str) -> tuple[str, ...]:
    templates = {
        "nearer": (("pick", "up", "the", "nearer", colour, "cube"),
                   ("grasp", "the", "closer", colour, "cube")),
        "tallest": (("place", "it", "on", "the", "tallest", "object"), ("put", "it", "on", "top", "of", "the",
                                                                         "highest", "object")),
        "behind": (("move", "behind", "the", colour, "cylinder"),
                   ("go", "behind", "the", colour, "cylinder")),
        "colour": (("pick", "up", "the", colour, shape), ("grasp", "the", colour, shape),
                   ("reach", "to", "the", colour, shape)),
    }  # fmt: skip
    options = templates[task]
    return options[int(rng.integers(len(options)))]


def _attempt(rng: np.random.Generator, seed: int, task: str, coins: tuple[bool, bool]) -> Episode | None:
    colours = list(COLOURS)
    if task == "nearer":
        n = int(rng.integers(2, 5))
        shapes = ["cube", "cube"] + [SHAPES[int(rng.integers(3))] for _ in range(n - 2)]
        pair_colour = colours[int(rng.integers(len(colours)))]
        others = [c for c in colours if c != pair_colour]
        picked = rng.choice(len(others), size=n - 2, replace=False)
        item_colours = [pair_colour, pair_colour] + [others[int(k)] for k in picked]
    else:
        n = int(rng.integers(2, 5))
        shapes = [SHAPES[int(rng.integers(3))] for _ in range(n)]
        if task == "behind":  # exactly one cylinder
            shapes = ["cylinder"] + [("cube", "sphere")[int(rng.integers(2))] for _ in range(n - 1)]
        item_colours = [colours[int(k)] for k in rng.choice(len(colours), size=n, replace=False)]
    sizes = [float(rng.uniform(0.05, 0.10)) for _ in range(n)]
    spots = _place(rng, sizes)
    if spots is None:
        return None
    pedestals = [0.0 if task == "colour" else float(rng.uniform(0.0, 0.10)) for _ in range(n)]
    items = tuple(
        Item(sh, c, s, p, x, z, float(rng.uniform(0.0, 90.0)), k + 1)
        for k, (sh, c, s, p, (x, z)) in enumerate(
            zip(shapes, item_colours, sizes, pedestals, spots, strict=True)
        )
    )
    if task == "nearer":
        d0, d1 = z_depth(items[0].center), z_depth(items[1].center)
        if abs(d0 - d1) < MIN_DEPTH_GAP:
            return None
        target = 0 if d0 < d1 else 1
        # neither cue may give the answer away: whether the nearer cube's centre is lower in the image, and
        # whether it looks bigger (edge / depth), are each decided by a fair coin tossed once per episode
        rows = [float(_project(items[k].center)[1]) for k in (0, 1)]
        looks = [items[k].size / (d0, d1)[k] for k in (0, 1)]
        lower = rows[target] > rows[1 - target]
        bigger = looks[target] > looks[1 - target]
        if (lower, bigger) != coins:
            return None
        it = items[target]
        goal, grip = (it.x, it.top, it.z), 1
        words = _words(rng, task, pair_colour, "cube")
    elif task == "tallest":
        tops = sorted((it.top, k) for k, it in enumerate(items))
        if tops[-1][0] - tops[-2][0] < MIN_HEIGHT_GAP:
            return None
        target = tops[-1][1]
        it = items[target]
        goal, grip = (it.x, it.top + 0.03, it.z), 0
        words = _words(rng, task, "", "")
    elif task == "behind":
        target = 0
        it = items[0]
        goal, grip = (it.x, 0.04, it.z - 0.08), 0
        if goal[2] < WORKSPACE[1][0] - 0.05:
            return None
        words = _words(rng, task, it.colour, "cylinder")
    else:
        target = int(rng.integers(n))
        it = items[target]
        goal, grip = (it.x, it.top, it.z), 1
        words = _words(rng, task, it.colour, it.shape)
    return Episode(seed, task, items, target, goal, grip, words)


def sample_episode(seed: int, task: str) -> Episode:
    """A random episode of ``task`` (rejection-sampled until its constraints hold), deterministic in ``seed``.

    For ``nearer``, two fair coins tossed once per episode decide whether the nearer cube's centre is lower
    in the image and whether it looks bigger; scenes are redrawn until both hold, so neither cue decides."""
    seed = check_seed("seed", seed)
    task = check_choice("task", task, TASKS)
    rng = np.random.default_rng([seed, TASKS.index(task)])
    coins = (bool(rng.random() < 0.5), bool(rng.random() < 0.5))
    for _ in range(5000):
        episode = _attempt(rng, seed, task, coins)
        if episode is not None:
            return episode
    raise RuntimeError(f"could not sample a {task!r} episode for seed {seed}")  # pragma: no cover


def scene_of(episode: Episode) -> tuple[Scene, list[Sphere | Cylinder]]:
    """The boxes (table, pedestals, cubes) and the round primitives that draw ``episode``."""
    boxes = []
    rounds: list[Sphere | Cylinder] = []
    for it in episode.items:
        if it.pedestal > 0:
            boxes.append(
                oriented_box(
                    (it.x, it.pedestal / 2.0, it.z),
                    (it.size + 0.02, it.pedestal, it.size + 0.02),
                    it.yaw,
                    color=PEDESTAL_COLOUR,
                    instance_id=PEDESTAL_ID_BASE + it.instance_id,
                    semantic="pedestal",
                )
            )
        colour = COLOURS[it.colour]
        if it.shape == "cube":
            boxes.append(
                oriented_box(it.center, (it.size,) * 3, it.yaw, color=colour, instance_id=it.instance_id,
                             semantic="cube")
            )  # fmt: skip
        elif it.shape == "sphere":
            rounds.append(Sphere(it.center, it.size / 2.0, colour, it.instance_id))
        else:
            rounds.append(Cylinder(it.center, it.size / 2.0, it.size, colour, it.instance_id))
    scene = Scene(
        boxes=tuple(boxes), ground=GroundPlane(0.0, TABLE_COLOUR, TABLE_COLOUR, 0.0, TABLE_ID, "table")
    )
    return scene, rounds


def render_episode(episode: Episode) -> Render:
    """The episode's one view: RGB, z-depth, instance ids and normals (float64), seen by :func:`camera`."""
    if not isinstance(episode, Episode):
        raise TypeError(f"episode must be an Episode; got {type(episode).__name__}")
    scene, rounds = scene_of(episode)
    return render_with_primitives(scene, camera(), rounds, dtype=np.float64)


def _patches(a: np.ndarray) -> np.ndarray:
    """(48, 48, ...) -> (36, 64, ...): the pixels of each 8 × 8 patch, patches in row-major order."""
    rest = a.shape[2:]
    return (
        a.reshape(GRID, PATCH, GRID, PATCH, *rest).swapaxes(1, 2).reshape(NUM_PATCHES, PATCH * PATCH, *rest)
    )


def patch_labels(episode: Episode, view: Render) -> tuple[np.ndarray, np.ndarray]:
    """Per-patch colour and shape classes (36,) each, indices into :data:`COLOUR_CLASSES` and
    :data:`SHAPE_CLASSES`: the most frequent object (or pedestal) in the patch when it covers ≥ 1/4 of
    it, else the table."""
    by_id: dict[int, tuple[int, int]] = {}
    for it in episode.items:
        by_id[it.instance_id] = (COLOUR_CLASSES.index(it.colour), SHAPE_CLASSES.index(it.shape))
        by_id[PEDESTAL_ID_BASE + it.instance_id] = (1, 1)
    colour = np.zeros(NUM_PATCHES, dtype=np.int64)
    shape = np.zeros(NUM_PATCHES, dtype=np.int64)
    for p, ids in enumerate(_patches(view.instance)):
        ids = ids[ids != TABLE_ID]
        if ids.size * 4 < PATCH * PATCH:
            continue
        values, counts = np.unique(ids, return_counts=True)
        colour[p], shape[p] = by_id[int(values[np.argmax(counts)])]
    return colour, shape


def patch_offsets(episode: Episode, view: Render) -> np.ndarray:
    """(36, 2) image-plane offset (du, dv), in patch widths, from each patch's centre to the centroid of the
    visible pixels of the object (or pedestal) that labels it (:func:`patch_labels`'s rule); NaN on table
    patches. A 2D quantity: where in the image the thing is, finer than the patch grid."""
    out = np.full((NUM_PATCHES, 2), np.nan)
    rows, cols = np.mgrid[0:IMAGE_SIZE, 0:IMAGE_SIZE]
    for p, ids in enumerate(_patches(view.instance)):
        ids = ids[ids != TABLE_ID]
        if ids.size * 4 < PATCH * PATCH:
            continue
        values, counts = np.unique(ids, return_counts=True)
        mask = view.instance == values[np.argmax(counts)]
        pr, pc = divmod(p, GRID)
        centre_u, centre_v = (pc + 0.5) * PATCH, (pr + 0.5) * PATCH
        out[p] = (cols[mask] + 0.5).mean() - centre_u, (rows[mask] + 0.5).mean() - centre_v
    out /= PATCH
    return out


def patch_geometry(view: Render) -> np.ndarray:
    """(36, 4) per-patch mean of (z-depth, X, Y, Z) over the patch's pixels (the 3D expert's targets)."""
    points = view.points()
    depth = view.depth[..., None]
    geo = np.concatenate([depth, points], axis=-1)
    return _patches(geo).mean(axis=1)


def patch_centres(view: Render) -> np.ndarray:
    """(36, 3) world point under the centre of each patch (the analytic teacher's X_i)."""
    return patch_geometry(view)[:, 1:]


def target_patches(episode: Episode, view: Render) -> np.ndarray:
    """(36,) bool: patches showing at least one pixel of the object the instruction refers to."""
    tid = episode.items[episode.target].instance_id
    return (_patches(view.instance) == tid).any(axis=1)


def instruction_ids(words: tuple[str, ...]) -> np.ndarray:
    """Token ids (8,) int64, right-padded with 0."""
    if len(words) > INSTRUCTION_LENGTH:
        raise ValueError(f"words must have at most {INSTRUCTION_LENGTH} words; got {len(words)}")
    ids = np.zeros(INSTRUCTION_LENGTH, dtype=np.int64)
    for k, w in enumerate(words):
        if w not in _WORD_ID:
            raise ValueError(f"words contains {w!r}, which is not in the vocabulary")
        ids[k] = _WORD_ID[w]
    return ids


def image_tensor_array(view: Render) -> np.ndarray:
    """(3, 48, 48) float32 RGB in [0, 1], channels first (what the encoders read)."""
    return np.ascontiguousarray(view.rgb.transpose(2, 0, 1), dtype=np.float32)


def expert_action(goal: np.ndarray, grip: np.ndarray, ee: np.ndarray) -> np.ndarray:
    """One expert step for a batch: ``goal`` (B, 3), ``grip`` (B,), ``ee`` (B, 3) -> (B, 4): dx, dy, dz, g."""
    step = np.clip(goal - ee, -MAX_STEP, MAX_STEP)
    arrived = np.linalg.norm(goal - (ee + step), axis=-1) <= SUCCESS_RADIUS
    g = np.where(arrived, grip, 1 - grip).astype(float)
    return np.concatenate([step, g[:, None]], axis=-1)


def expert_chunk(goal: np.ndarray, grip: np.ndarray, ee: np.ndarray) -> np.ndarray:
    """The expert's next ``H`` actions (B, H, 4) from ``ee`` (B, 3), executed without noise."""
    out = np.empty((ee.shape[0], CHUNK, 4))
    for h in range(CHUNK):
        out[:, h] = expert_action(goal, grip, ee)
        ee = ee + out[:, h, :3]
    return out


def execute(ee: np.ndarray, chunk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Apply a chunk (B, H, 4) from ``ee`` (B, 3): each displacement clipped to ±5 cm; returns the new
    position and the last gripper value (B,)."""
    ee = check_array("ee", np.asarray(ee, dtype=float), ndim=2)
    chunk = check_array("chunk", np.asarray(chunk, dtype=float), ndim=3)
    if chunk.shape[0] != ee.shape[0] or chunk.shape[2] != 4:
        raise ValueError(f"chunk must have shape ({ee.shape[0]}, H, 4); got {chunk.shape}")
    ee = ee + np.clip(chunk[:, :, :3], -MAX_STEP, MAX_STEP).sum(axis=1)
    return ee, chunk[:, -1, 3]


def success(goal: np.ndarray, grip: np.ndarray, ee: np.ndarray, gripper: np.ndarray) -> np.ndarray:
    """(B,) bool: within 3 cm of the goal with the gripper on the right side of 0.5."""
    near = np.linalg.norm(np.asarray(ee) - np.asarray(goal), axis=-1) <= SUCCESS_RADIUS
    return near & ((np.asarray(gripper) > 0.5) == (np.asarray(grip) == 1))


def expert_states(
    episode: Episode, rng: np.random.Generator, *, start: np.ndarray | None = None, noise: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """States at every chunk boundary of one expert episode and the expert's chunk from each.

    The executed steps get Gaussian noise of std ``noise`` (DART-style), so that the data also covers
    states slightly off the expert's path; the labels are always the noiseless expert chunk from the
    visited state. Returns proprio (C, 3) and chunks (C, H, 4), C = 20 / H = 5.
    """
    goal = np.asarray(episode.goal)[None]
    grip = np.array([episode.grip])
    ee = np.asarray(HOME if start is None else start, dtype=float)[None]
    states, chunks = [], []
    for _ in range(EPISODE_STEPS // CHUNK):
        states.append(ee[0].copy())
        chunks.append(expert_chunk(goal, grip, ee)[0])
        for _ in range(CHUNK):
            a = expert_action(goal, grip, ee)
            ee = ee + np.clip(a[:, :3] + noise * rng.standard_normal((1, 3)), -MAX_STEP, MAX_STEP)
    return np.stack(states), np.stack(chunks)


__all__ = [
    "CHUNK",
    "COLOURS",
    "COLOUR_CLASSES",
    "DEPTH_TASKS",
    "EPISODE_STEPS",
    "GRID",
    "HOME",
    "IMAGE_SIZE",
    "INSTRUCTION_LENGTH",
    "NUM_PATCHES",
    "SHAPES",
    "SHAPE_CLASSES",
    "SUCCESS_RADIUS",
    "TASKS",
    "VOCABULARY",
    "Episode",
    "Item",
    "camera",
    "execute",
    "expert_action",
    "expert_chunk",
    "expert_states",
    "image_tensor_array",
    "instruction_ids",
    "patch_centres",
    "patch_geometry",
    "patch_labels",
    "patch_offsets",
    "render_episode",
    "sample_episode",
    "scene_of",
    "success",
    "target_patches",
    "z_depth",
]
