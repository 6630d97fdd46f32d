"""Procedural SpatialClaw scenes: a furnished room seen along a camera path or from a few viewpoints.

:func:`make_scene` builds a rectangular room (floor at ``Y = 0``, four walls) holding 4–8 objects of the
eight categories of :data:`~neurips26.spatialclaw.scene_types.CATEGORIES`, each with a canonical size range,
a colour unique within its category (so ``"<colour> <category>"`` names one object), a yaw that is a
multiple of 90° and a footprint that overlaps no other. A ``video`` scene follows a smooth 16-frame
camera path that translates a few metres and turns; a ``multiview`` scene has 2–4 viewpoints on different
sides of the room. Everything is expressed in the frame the paper's Reconstruct tool uses: gravity-aligned,
the first camera at ``X = Z = 0`` looking along ``-Z`` with ``+X`` to its right, the floor at ``Y = 0``.

:func:`render_frames` draws RGB (Lambert shading), z-depth and instance ids: boxes, walls and floor with the
shared ray caster of :mod:`neurips26.world`, spheres and upright cylinders with its analytic primitives,
composited by nearest depth. :func:`frames_for` caches the renders on disk and in memory.
"""

from __future__ import annotations

import hashlib
import inspect
import math
from collections import OrderedDict
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from neurips26.cache import cache_key, cached
from neurips26.spatialclaw.scene_types import CATEGORIES, KINDS, ORIENTED, Frames, SceneObject, SpatialScene
from neurips26.validation import check_choice, check_int, check_seed
from neurips26.world import (
    PALETTE,
    Box,
    Camera,
    Cylinder,
    GroundPlane,
    Scene,
    Sphere,
    composite,
    heading_pose,
    look_at,
    oriented_box,
    pinhole,
    render,
    wall,
    yaw_rotation,
)

#: Horizontal field of view of every camera (a phone-like wide lens, so a room fits in a few frames).
FOV_DEG = 75.0
VIDEO_FRAMES = 16
VIDEO_FPS = 8.0
MULTIVIEW_FPS = 1.0
#: Instance ids of the structure (objects use 1..8).
FLOOR_ID = 0
WALL_IDS: tuple[int, ...] = (101, 102, 103, 104)
WALL_HEIGHT = 2.6
#: Fewest pixels of an object in a frame for it to count as seen there.
MIN_PIXELS = 20
#: Largest share of an image one object's bounding box may cover (no object hides the whole room).
MAX_COVER = 0.4

_WALL_COLOURS = ((0.80, 0.74, 0.62), (0.62, 0.72, 0.80), (0.78, 0.66, 0.70), (0.68, 0.78, 0.64))
_FLOOR = dict(color=(0.62, 0.60, 0.56), color2=(0.52, 0.50, 0.47), checker=0.5, instance_id=FLOOR_ID)
_BACKGROUND = (0.82, 0.87, 0.93)
#: Box categories: ranges of the full extents (x = width, y = height, z = depth) before the yaw; the front
#: of an oriented object is its local +Z.
_BOX_SIZES: dict[str, tuple[tuple[float, float], ...]] = {
    "chair": ((0.45, 0.55), (0.85, 0.95), (0.45, 0.55)),
    "table": ((1.0, 1.4), (0.72, 0.78), (0.7, 0.9)),
    "sofa": ((1.6, 2.0), (0.75, 0.9), (0.8, 0.95)),
    "tv": ((0.9, 1.2), (0.55, 0.7), (0.08, 0.12)),
}
#: Round categories: (radius range, height range); a ball's height is its diameter.
_ROUND_SIZES: dict[str, tuple[tuple[float, float], tuple[float, float] | None]] = {
    "lamp": ((0.13, 0.17), (1.4, 1.6)),
    "plant": ((0.2, 0.3), (0.65, 0.95)),
    "ball": ((0.16, 0.24), None),
}
_MAX_PER_CATEGORY = {"sofa": 2, "table": 2}
_GAP = 0.15  # free floor between two footprints, metres


# --- layout -------------------------------------------------------------------------------------------


def _sample_size(rng: np.random.Generator, category: str) -> tuple[float, float, float]:
    if category == "box":
        edge = float(rng.uniform(0.4, 0.6))
        return (edge, edge, edge)
    if category in _BOX_SIZES:
        return tuple(float(rng.uniform(lo, hi)) for lo, hi in _BOX_SIZES[category])  # type: ignore[return-value]
    (r_lo, r_hi), heights = _ROUND_SIZES[category]
    r = float(rng.uniform(r_lo, r_hi))
    h = 2.0 * r if heights is None else float(rng.uniform(*heights))
    return (2.0 * r, h, 2.0 * r)


def _footprint(size: tuple[float, float, float], yaw_deg: float) -> tuple[float, float]:
    """Extents along world x and z after a quarter-turn yaw."""
    return (size[2], size[0]) if int(round(yaw_deg)) % 180 == 90 else (size[0], size[2])


def _categories(rng: np.random.Generator, n: int, mover: bool) -> list[str]:
    """``n`` categories drawn with repetition from a pool of 3–6 of them (so several objects often share a
    category, as in real rooms: counting and telling instances apart then matter), at most 3 per category
    and 2 for the large ones; with a mover the first is a ball or a box (the object that will move)."""
    names = list(CATEGORIES)
    out = [str(rng.choice(["ball", "box"]))] if mover else []
    pool = [names[int(i)] for i in rng.permutation(len(names))[: int(rng.integers(3, 7))]]
    for extra in (c for c in names if c not in pool):
        if sum(_MAX_PER_CATEGORY.get(c, 3) - out.count(c) for c in pool) >= n - len(out):
            break
        pool.append(extra)
    while len(out) < n:
        c = pool[int(rng.integers(len(pool)))]
        if out.count(c) < _MAX_PER_CATEGORY.get(c, 3):
            out.append(c)
    return out


def _rect(cx: float, cz: float, fx: float, fz: float) -> tuple[float, float, float, float]:
    return (cx - fx / 2, cx + fx / 2, cz - fz / 2, cz + fz / 2)


def _apart(a: tuple[float, ...], b: tuple[float, ...], gap: float) -> bool:
    return a[1] + gap <= b[0] or b[1] + gap <= a[0] or a[3] + gap <= b[2] or b[3] + gap <= a[2]


def _layout(
    rng: np.random.Generator,
    categories: list[str],
    region: tuple[float, float, float, float],
    mover: bool,
) -> list[dict] | None:
    """Non-overlapping placements inside ``region = (x0, x1, z0, z1)``, or None if they do not fit.

    Each placement is a dict with category, size, yaw, centre ``(x, z)`` and, for the mover (the first
    category when ``mover``), its straight track: an axis direction (±15°) over 1–2 m whose whole swept
    footprint stays clear of the others."""
    x0, x1, z0, z1 = region
    specs = []
    for k, cat in enumerate(categories):
        size = _sample_size(rng, cat)
        yaw = 90.0 * int(rng.integers(4)) if cat in ORIENTED else 0.0
        if cat == "table" and rng.random() < 0.5:  # no yaw (no front), but the long side may run along z
            size = (size[2], size[1], size[0])
        specs.append({"category": cat, "size": size, "yaw": yaw, "moving": mover and k == 0})
    # place the mover first (its sweep is the largest), then the rest by decreasing footprint
    order = sorted(
        range(len(specs)), key=lambda i: (not specs[i]["moving"], -specs[i]["size"][0] * specs[i]["size"][2])
    )
    rects: list[tuple[float, float, float, float]] = []
    for i in order:
        spec = specs[i]
        fx, fz = _footprint(spec["size"], spec["yaw"])
        for _ in range(60):
            if spec["moving"]:
                axis = int(rng.integers(4))
                angle = math.radians(90.0 * axis + float(rng.uniform(-15.0, 15.0)))
                length = float(rng.uniform(1.0, 2.0))
                step = (length * math.sin(angle), length * math.cos(angle))
            else:
                step = (0.0, 0.0)
            lo_x, hi_x = x0 + fx / 2 - min(step[0], 0.0), x1 - fx / 2 - max(step[0], 0.0)
            lo_z, hi_z = z0 + fz / 2 - min(step[1], 0.0), z1 - fz / 2 - max(step[1], 0.0)
            if lo_x >= hi_x or lo_z >= hi_z:
                continue
            cx, cz = float(rng.uniform(lo_x, hi_x)), float(rng.uniform(lo_z, hi_z))
            a, b = _rect(cx, cz, fx, fz), _rect(cx + step[0], cz + step[1], fx, fz)
            swept = (min(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), max(a[3], b[3]))
            if all(_apart(swept, r, _GAP) for r in rects):
                rects.append(swept)
                spec["xz"], spec["step"] = (cx, cz), step
                break
        else:
            return None
    return specs


def _colours(rng: np.random.Generator, categories: list[str]) -> list[str]:
    """A colour per object, distinct within each category (so every name is unique)."""
    palette = list(PALETTE)
    used: dict[str, set[str]] = {}
    out = []
    for cat in categories:
        free = [c for c in palette if c not in used.setdefault(cat, set())]
        colour = free[int(rng.integers(len(free)))]
        used[cat].add(colour)
        out.append(colour)
    return out


# --- cameras ------------------------------------------------------------------------------------------


def _clean(pose: np.ndarray) -> np.ndarray:
    """Round-off below 1e-12 set to zero, so the first pose's axes are exact."""
    pose = pose.copy()
    pose[np.abs(pose) < 1e-12] = 0.0
    return pose + 0.0


def _video_path(
    rng: np.random.Generator,
    zone: tuple[float, float, float, float],
    target_region: tuple[float, ...],
    n: int,
) -> np.ndarray:
    """Poses (n, 4, 4) of a smooth walk inside ``zone`` in two legs of 0.8–2.2 m that turn by at least 45°
    (so different frame pairs move in different directions), easing in and out of each waypoint; the
    heading starts level along -Z and turns by 15–60° towards a point of ``target_region`` with a slow
    wobble; the camera pitches down gently."""
    x0, x1, z0, z1 = zone
    t = np.linspace(0.0, 1.0, n)

    def point() -> np.ndarray:
        return np.array([rng.uniform(x0, x1), rng.uniform(z0, z1)])

    waypoints = [point()]
    for _ in range(200):
        p1, p2 = point(), point()
        leg1, leg2 = p1 - waypoints[0], p2 - p1
        l1, l2 = float(np.linalg.norm(leg1)), float(np.linalg.norm(leg2))
        if 0.8 <= l1 <= 2.2 and 0.8 <= l2 <= 2.2 and float(leg1 @ leg2) <= l1 * l2 * math.cos(math.pi / 4):
            break
    waypoints += [p1, p2]
    half = np.clip(2.0 * t, 0.0, 1.0), np.clip(2.0 * t - 1.0, 0.0, 1.0)
    ease = [u * u * (3.0 - 2.0 * u) for u in half]
    xz = waypoints[0] + ease[0][:, None] * (p1 - waypoints[0]) + ease[1][:, None] * (p2 - p1)
    tx0, tx1, tz0, tz1 = target_region
    for _ in range(100):
        target = np.array([rng.uniform(tx0, tx1), rng.uniform(tz0, tz1)])
        turn = math.degrees(math.atan2(target[0] - p2[0], target[1] - p2[1])) % 360.0 - 180.0
        if 15.0 <= abs(turn) <= 60.0:
            break
    smooth = t * t * (3.0 - 2.0 * t)
    yaw = 180.0 + turn * smooth + float(rng.uniform(-12.0, 12.0)) * np.sin(2.0 * np.pi * t)
    pitch = -float(rng.uniform(0.0, 15.0)) * smooth
    bob = 0.04 * np.sin(2.0 * np.pi * t + float(rng.uniform(0, 2 * np.pi)))
    height = float(rng.uniform(1.45, 1.55)) + bob - bob[0]
    poses = [heading_pose((xz[f, 0], height[f], xz[f, 1]), float(yaw[f]), float(pitch[f])) for f in range(n)]
    return np.stack([_clean(p) for p in poses])


def _multiview_poses(
    rng: np.random.Generator, room: tuple[float, float, float, float], look: np.ndarray, n: int
) -> np.ndarray:
    """Poses (n, 4, 4): the first from the +Z side facing -Z level; the others from other sides (the -Z,
    +X and -X walls, in a random order) aimed at ``look``."""
    x0, x1, z0, z1 = room
    inset = 0.5
    first_x = float(rng.uniform(x0 + 0.3 * (x1 - x0), x1 - 0.3 * (x1 - x0)))
    poses = [_clean(heading_pose((first_x, float(rng.uniform(1.4, 1.6)), z1 - inset), 180.0))]
    sides = ["south", "east", "west"]
    rng.shuffle(sides)
    for side in sides[: n - 1]:
        along = float(rng.uniform(0.3, 0.7))
        x, z = {
            "south": (x0 + along * (x1 - x0), z0 + inset),
            "east": (x1 - inset, z0 + along * (z1 - z0)),
            "west": (x0 + inset, z0 + along * (z1 - z0)),
        }[side]
        poses.append(look_at((x, float(rng.uniform(1.4, 1.6)), z), look))
    return np.stack(poses)


def _in_view_fraction(poses: np.ndarray, centres: np.ndarray, width: int, height: int) -> np.ndarray:
    """(F, N) whether each centre projects inside the image (3-px margin) in front of each camera."""
    cam = pinhole(width, height, FOV_DEG)
    out = np.zeros((poses.shape[0], centres.shape[0]), dtype=bool)
    for f, pose in enumerate(poses):
        uv, z = cam.with_pose(pose).project(centres)
        with np.errstate(invalid="ignore"):
            inside = (uv[:, 0] > 3) & (uv[:, 0] < width - 3) & (uv[:, 1] > 3) & (uv[:, 1] < height - 3)
        out[f] = inside & (z > 0.5)
    return out


def _largest_cover(poses: np.ndarray, specs: list[dict], width: int, height: int) -> float:
    """The largest fraction of an image that one object's projected bounding box covers, over frames
    (1.0 when an object straddles the camera plane: it is too close). A cheap, conservative stand-in for
    rendering, used to reject layouts where one object hides the room."""
    cam = pinhole(width, height, FOV_DEG)
    signs = np.array([[sx, sy, sz] for sx in (-0.5, 0.5) for sy in (0.0, 1.0) for sz in (-0.5, 0.5)])
    corners = []
    for spec in specs:
        fx, fz = _footprint(spec["size"], spec["yaw"])
        ends = [spec["xz"], (spec["xz"][0] + spec["step"][0], spec["xz"][1] + spec["step"][1])]
        corners.append(
            np.concatenate(
                [np.array([x, 0.0, z]) + signs * np.array([fx, spec["size"][1], fz]) for x, z in ends]
            )
        )
    worst = 0.0
    for pose in poses:
        view = cam.with_pose(pose)
        for pts in corners:
            uv, z = view.project(pts)
            if np.all(z <= 0.05):
                continue
            if np.any(z <= 0.05):
                return 1.0
            u = np.clip(uv[:, 0], 0, width)
            v = np.clip(uv[:, 1], 0, height)
            worst = max(worst, float((u.max() - u.min()) * (v.max() - v.min())) / (width * height))
    return worst


# --- the scene ----------------------------------------------------------------------------------------


def make_scene(
    seed: int,
    kind: str = "video",
    *,
    n_objects: int | None = None,
    mover: bool = False,
    width: int = 128,
    height: int = 96,
    num_frames: int | None = None,
) -> SpatialScene:
    """The seeded room for ``(seed, kind, ...)``; the same arguments give the same scene (memoised).

    ``n_objects`` (4–8) defaults to a count drawn from the seed (the same draw is made either way, so
    passing the drawn count rebuilds the same scene). ``kind="video"``: ``num_frames`` (default 16) poses
    of a smooth walk at 8 fps; ``"multiview"``: 2–4 viewpoints (default drawn from the seed) at 1 fps.
    ``mover=True`` (video only) makes one ball or box slide along a straight floor line (its ``track``).
    """
    seed = check_seed("seed", seed)
    check_choice("kind", kind, KINDS)
    if n_objects is not None:
        n_objects = check_int("n_objects", n_objects, minimum=4, maximum=8)
    if not isinstance(mover, bool):
        raise TypeError(f"mover must be a bool; got {type(mover).__name__}")
    if mover and kind != "video":
        raise ValueError("mover=True needs kind='video' (a moving object needs a time axis)")
    width = check_int("width", width, minimum=16, maximum=1024)
    height = check_int("height", height, minimum=16, maximum=1024)
    if num_frames is not None:
        if kind == "video":
            num_frames = check_int("num_frames", num_frames, minimum=2, maximum=64)
        else:
            num_frames = check_int("num_frames", num_frames, minimum=2, maximum=4)
    return _make_scene(seed, kind, n_objects, mover, width, height, num_frames)


@lru_cache(maxsize=256)
def _make_scene(
    seed: int, kind: str, n_objects: int | None, mover: bool, width: int, height: int, num_frames: int | None
) -> SpatialScene:
    rng = np.random.default_rng([seed, KINDS.index(kind), int(mover)])
    drawn_count = int(rng.integers(4, 9))
    drawn_views = int(rng.integers(2, 5))
    n = drawn_count if n_objects is None else n_objects
    frames = num_frames if num_frames is not None else (VIDEO_FRAMES if kind == "video" else drawn_views)
    best: tuple[float, list[dict], np.ndarray, tuple[float, ...]] | None = None
    for _ in range(40):
        room, specs, poses, score = _attempt(rng, kind, n, mover, frames, width, height)
        if specs is None:
            continue
        if best is None or score > best[0]:
            best = (score, specs, poses, room)
        if score >= 1.0:
            break
    if best is None:
        raise RuntimeError(f"no layout of {n} objects fitted for seed {seed}")  # pragma: no cover
    _, specs, poses, room = best
    return _assemble(rng, seed, kind, specs, poses, room, width, height)


def _attempt(
    rng: np.random.Generator, kind: str, n: int, mover: bool, frames: int, width: int, height: int
) -> tuple:
    """One candidate: (room, placements or None, poses, visibility score in [0, 1])."""
    if kind == "video":
        room_w, room_d = float(rng.uniform(5.0, 7.0)), float(rng.uniform(7.0, 8.5))
    else:
        room_w, room_d = float(rng.uniform(6.0, 7.5)), float(rng.uniform(6.0, 7.5))
    room = (-room_w / 2, room_w / 2, -room_d / 2, room_d / 2)
    x0, x1, z0, z1 = room
    # video: the camera walks in a 2 m band along the +Z wall, the objects stand in front of it;
    # multi-view: the cameras stand near the walls, the objects in the middle
    region = (
        (x0 + 0.3, x1 - 0.3, z0 + 0.3, z1 - 3.1)
        if kind == "video"
        else (x0 + 1.1, x1 - 1.1, z0 + 1.1, z1 - 1.1)
    )
    specs = _layout(rng, _categories(rng, n, mover), region, mover)
    if specs is None:
        return room, None, None, 0.0
    centres = np.array([[s["xz"][0], s["size"][1] / 2, s["xz"][1]] for s in specs])
    if kind == "video":
        zone = (x0 + 0.6, x1 - 0.6, z1 - 2.4, z1 - 0.35)
        poses = _video_path(rng, zone, region, frames)
        seen = _in_view_fraction(poses, centres, width, height)
        score = min(float(seen.mean()) / 0.6, float(seen.sum(axis=0).min()) / 4.0, 1.0)
    else:
        poses = _multiview_poses(rng, room, np.r_[centres[:, 0].mean(), 0.4, centres[:, 2].mean()], frames)
        seen = _in_view_fraction(poses, centres, width, height)
        score = min(float(seen.sum(axis=0).min()) / min(2.0, frames), 1.0)
    if _largest_cover(poses, specs, width, height) > MAX_COVER:  # one object would hide the room
        score = min(score, 0.5)
    return room, specs, poses, score


def _assemble(
    rng: np.random.Generator,
    seed: int,
    kind: str,
    specs: list[dict],
    poses: np.ndarray,
    room: tuple[float, ...],
    width: int,
    height: int,
) -> SpatialScene:
    """Shift the world so the first camera stands at X = Z = 0, name and number the objects."""
    shift = np.array([poses[0, 0, 3], 0.0, poses[0, 2, 3]])
    poses = poses.copy()
    poses[:, :3, 3] -= shift
    poses.flags.writeable = False
    colours = _colours(rng, [s["category"] for s in specs])
    ids = rng.permutation(len(specs)) + 1
    n_frames = poses.shape[0]
    objects = []
    for spec, colour, iid in zip(specs, colours, ids, strict=True):
        cat = spec["category"]
        centre = (float(spec["xz"][0] - shift[0]), spec["size"][1] / 2, float(spec["xz"][1] - shift[2]))
        track = None
        if spec["moving"]:
            s = np.linspace(0.0, 1.0, n_frames)
            track = tuple(
                (centre[0] + float(a) * spec["step"][0], centre[1], centre[2] + float(a) * spec["step"][1])
                for a in s
            )
        objects.append(
            SceneObject(
                instance_id=int(iid),
                category=cat,
                colour=colour,
                shape=CATEGORIES[cat],
                center=centre,
                size=spec["size"],
                yaw_deg=spec["yaw"],
                track=track,
            )
        )
    objects.sort(key=lambda o: o.instance_id)
    cam = pinhole(width, height, FOV_DEG)
    return SpatialScene(
        seed=seed,
        kind=kind,
        objects=tuple(objects),
        poses=poses,
        intrinsics=(cam.fx, cam.fy, cam.cx, cam.cy),
        width=width,
        height=height,
        fps=VIDEO_FPS if kind == "video" else MULTIVIEW_FPS,
        room=tuple(float(v - shift[k]) for v, k in zip(room, (0, 0, 2, 2), strict=True)),  # type: ignore[arg-type]
    )


# --- rendering ----------------------------------------------------------------------------------------


def camera(scene: SpatialScene, frame: int) -> Camera:
    """The :class:`~neurips26.world.Camera` of ``frame`` (its pixel rays, projection and back-projection)."""
    frame = check_int("frame", frame)
    if not 0 <= frame < scene.num_frames:
        raise IndexError(f"frame must be in 0..{scene.num_frames - 1}; got {frame}")
    fx, fy, cx, cy = scene.intrinsics
    return Camera(scene.width, scene.height, fx, fy, cx, cy, scene.poses[frame])


def structure(scene: SpatialScene) -> Scene:
    """The floor and the four walls as a :class:`~neurips26.world.Scene` (ids :data:`FLOOR_ID`,
    :data:`WALL_IDS`); walls stand just outside ``scene.room``."""
    x0, x1, z0, z1 = scene.room
    t = 0.1
    segments = (
        ((x0 - t, z1 + t / 2), (x1 + t, z1 + t / 2)),
        ((x0 - t, z0 - t / 2), (x1 + t, z0 - t / 2)),
        ((x1 + t / 2, z0), (x1 + t / 2, z1)),
        ((x0 - t / 2, z0), (x0 - t / 2, z1)),
    )
    walls = tuple(
        wall(a, b, height=WALL_HEIGHT, thickness=t, color=c, instance_id=i, semantic="wall")
        for (a, b), c, i in zip(segments, _WALL_COLOURS, WALL_IDS, strict=True)
    )
    return Scene(walls, GroundPlane(**_FLOOR), _BACKGROUND)


#: Parts of the oriented categories, so that their facing can be seen: ``(x0, x1, y0, y1, z0, z1)`` as
#: fractions of the bounding box (x, z in [-0.5, 0.5], y in [0, 1]; the front is local +Z) and an optional
#: colour (None: the object's). Chairs and sofas: a seat and a backrest along the back; a TV: a body and a
#: dark screen on its front face.
_PARTS: dict[str, tuple[tuple[tuple[float, ...], tuple[float, float, float] | None], ...]] = {
    "chair": (((-0.5, 0.5, 0.0, 0.5, -0.5, 0.5), None), ((-0.5, 0.5, 0.5, 1.0, -0.5, -0.3), None)),
    "sofa": (((-0.5, 0.5, 0.0, 0.5, -0.5, 0.5), None), ((-0.5, 0.5, 0.5, 1.0, -0.5, -0.2), None)),
    "tv": (
        ((-0.5, 0.5, 0.0, 1.0, -0.5, 0.25), None),
        ((-0.45, 0.45, 0.08, 0.92, 0.25, 0.5), (0.08, 0.08, 0.1)),
    ),
}
#: Extra parts get the id ``_PART_ID_BASE * instance_id + k`` while rendering, mapped back afterwards
#: (the world renderer wants unique ids per box).
_PART_ID_BASE = 1000


def _boxes_of(obj: SceneObject, frame: int) -> tuple[Box, ...]:
    """The world boxes that draw a box-shaped object at ``frame`` (one, or its parts)."""
    centre = obj.center_at(frame)
    colour = PALETTE[obj.colour]
    parts = _PARTS.get(obj.category)
    if parts is None:
        return (
            oriented_box(
                tuple(centre),
                obj.size,
                obj.yaw_deg,
                color=colour,
                instance_id=obj.instance_id,
                semantic=obj.category,
            ),
        )
    size = np.asarray(obj.size)
    rot = yaw_rotation(obj.yaw_deg)
    bottom = centre - np.array([0.0, size[1] / 2.0, 0.0])
    boxes = []
    for k, ((x0, x1, y0, y1, z0, z1), part_colour) in enumerate(parts):
        lo, hi = np.array([x0, y0, z0]) * size, np.array([x1, y1, z1]) * size
        offset = (lo + hi) / 2.0
        boxes.append(
            oriented_box(
                tuple(bottom + rot @ offset),
                tuple(hi - lo),
                obj.yaw_deg,
                color=colour if part_colour is None else part_colour,
                instance_id=obj.instance_id if k == 0 else _PART_ID_BASE * obj.instance_id + k,
                semantic=obj.category,
            )
        )
    return tuple(boxes)


def _round_primitive(obj: SceneObject, frame: int) -> Sphere | Cylinder:
    """The shared-world primitive that draws a sphere or cylinder object at ``frame``."""
    centre = tuple(float(c) for c in obj.center_at(frame))
    colour = PALETTE[obj.colour]
    if obj.shape == "sphere":
        return Sphere(centre, obj.size[0] / 2.0, colour, obj.instance_id, obj.category)
    return Cylinder(centre, obj.size[0] / 2.0, obj.size[1], colour, obj.instance_id, obj.category)


def render_frames(scene: SpatialScene) -> Frames:
    """RGB (uint8), z-depth (float32) and instance ids (int32) of every frame of ``scene``.

    Boxes, walls and floor go through :func:`neurips26.world.render`; spheres and cylinders are hit
    analytically along the same rays and win a pixel when nearer (:func:`neurips26.world.composite`).
    A moving object stands at its track position of each frame.
    """
    if not isinstance(scene, SpatialScene):
        raise TypeError(f"scene must be a SpatialScene; got {type(scene).__name__}")
    base = structure(scene)
    static_boxes = tuple(
        b for o in scene.objects if o.shape == "box" and not o.moving for b in _boxes_of(o, 0)
    )
    moving_boxes = [o for o in scene.objects if o.shape == "box" and o.moving]
    round_objects = [o for o in scene.objects if o.shape != "box"]
    static_packed = base.with_boxes(static_boxes).pack(np.float64)
    n_f, h, w = scene.num_frames, scene.height, scene.width
    rgb = np.empty((n_f, h, w, 3), dtype=np.uint8)
    depth = np.empty((n_f, h, w), dtype=np.float32)
    ids = np.empty((n_f, h, w), dtype=np.int32)
    for f in range(n_f):
        cam = camera(scene, f)
        packed = (
            static_packed
            if not moving_boxes
            else base.with_boxes(static_boxes + tuple(b for o in moving_boxes for b in _boxes_of(o, f))).pack(
                np.float64
            )
        )
        out = render(packed, cam, dtype=np.float64)
        parts = out.instance >= _PART_ID_BASE
        if parts.any():
            out = replace(out, instance=np.where(parts, out.instance // _PART_ID_BASE, out.instance))
        out = composite(out, [_round_primitive(o, f) for o in round_objects])
        colour, z, inst = out.rgb, out.depth, out.instance
        rgb[f] = np.round(colour * 255.0).astype(np.uint8)
        depth[f] = z
        ids[f] = inst
    return Frames(rgb=rgb, depth=depth, ids=ids, structure_ids=(FLOOR_ID, *WALL_IDS))


# --- cache --------------------------------------------------------------------------------------------

_MEMO: OrderedDict[str, Frames] = OrderedDict()
_MEMO_SIZE = 32


@lru_cache(maxsize=1)
def _renderer_fingerprint() -> str:
    """Hash of the code a render depends on (this module, the scene types, ``neurips26.world``), so
    edits there invalidate cached renders and edits elsewhere in the package do not."""
    here = Path(__file__).resolve()
    world = Path(inspect.getfile(render)).resolve().parent
    digest = hashlib.sha256()
    for path in [here, here.with_name("scene_types.py"), *sorted(world.glob("*.py"))]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _scene_config(scene: SpatialScene) -> dict:
    """Everything a render depends on, as the cache's canonical config: the scene's content (not the
    arguments that made it, so a hand-built scene never collides with a generated one) and the code."""
    return {
        "seed": scene.seed,
        "kind": scene.kind,
        "objects": list(scene.objects),
        "poses": np.asarray(scene.poses, dtype=float).tolist(),
        "intrinsics": list(scene.intrinsics),
        "size": [scene.width, scene.height],
        "room": list(scene.room),
        "code": _renderer_fingerprint(),
    }


def _read_only(frames: Frames) -> Frames:
    for arr in (frames.rgb, frames.depth, frames.ids):
        arr.flags.writeable = False
    return frames


def frames_for(scene: SpatialScene) -> Frames:
    """The renders of ``scene``: from memory, else from the disk cache (``spatialclaw-frames``, keyed on
    the scene's content and the renderer's source), else :func:`render_frames`. Arrays are read-only (they
    are shared); copy before writing."""
    if not isinstance(scene, SpatialScene):
        raise TypeError(f"scene must be a SpatialScene; got {type(scene).__name__}")
    config = _scene_config(scene)
    key = cache_key("spatialclaw-frames", config)
    if key in _MEMO:
        _MEMO.move_to_end(key)
        return _MEMO[key]
    frames = cached(
        "spatialclaw-frames",
        config,
        lambda: render_frames(scene),
        verbose=False,
    )
    _MEMO[key] = _read_only(frames)
    if len(_MEMO) > _MEMO_SIZE:
        _MEMO.popitem(last=False)
    return frames


# --- visibility -----------------------------------------------------------------------------------------


def object_pixels(frames: Frames, frame: int, instance_id: int) -> int:
    """How many pixels of ``frame`` show the object ``instance_id`` (occlusion included)."""
    frame = check_int("frame", frame)
    if not 0 <= frame < frames.num_frames:
        raise IndexError(f"frame must be in 0..{frames.num_frames - 1}; got {frame}")
    return int(np.count_nonzero(frames.ids[frame] == check_int("instance_id", instance_id)))


def pixel_counts(scene: SpatialScene, frames: Frames) -> np.ndarray:
    """(F, N) pixel counts of every object (in ``scene.objects`` order) in every frame: what questions
    use to keep only objects an agent can actually see."""
    ids = np.array([o.instance_id for o in scene.objects])
    flat = frames.ids.reshape(frames.num_frames, -1)
    return (flat[:, :, None] == ids[None, None, :]).sum(axis=1)


def visible_frames(frames: Frames, instance_id: int, min_pixels: int = MIN_PIXELS) -> tuple[int, ...]:
    """Frames where object ``instance_id`` covers at least ``min_pixels`` pixels."""
    counts = (frames.ids == check_int("instance_id", instance_id)).reshape(frames.num_frames, -1).sum(axis=1)
    return tuple(int(f) for f in np.flatnonzero(counts >= min_pixels))
