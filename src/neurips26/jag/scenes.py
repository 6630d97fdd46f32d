"""The chapter's clips: furnished rooms, camera paths and their renders (RGB, log z-depth, validity).

A clip is one seeded room (:func:`neurips26.world.room` with 3-6 pieces of furniture, closed by a ceiling),
one camera path from :mod:`neurips26.jag.paths` and every frame rendered by :func:`neurips26.world.render`
through a 16 × 16 pinhole with a 70° field of view:

- ``rgb`` (T, 3, H, W) float32 in [-1, 1] (the renderer's [0, 1] colours, ``2 c - 1``);
- ``log_depth`` (T, 1, H, W) float32, the log of the renderer's **z-depth** (along the optical axis, not
  the ray), the geometry branch's target;
- ``valid`` (T, 1, H, W) bool, False where the ray escapes through the door gap (its hit lies outside the
  room's box) or hits nothing; there the depth is clamped to :data:`FAR_DEPTH` so the log stays finite;
- ``poses`` (T, 4, 4) float64 camera-to-world, ``K`` (3, 3) float64, ``bounds`` the room's box
  ``(lo, hi)``, each (3,) float64 (the memory's voxel grid spans it).

[our choice] The world's rooms are open at the top; we add a ceiling at the wall height so that a level
camera does not see the sky over the walls (15% of the pixels on a yaw sweep); the door gap is then the
only way out of the room.

Data sets (:class:`ClipBatch`, tensors stacked to (N, T, ...)) come from :func:`make_dataset`;
:class:`DataConfig` holds the chapter's sizes (1,024 training clips of 12 frames, half of them loops;
32 held-out evaluation scenes with 32-frame loops; smoke: 8 and 8 clips of 12 frames) and
:func:`load_split` renders a split once and caches it (:func:`neurips26.cache.cached`). Training scenes use
seeds ``2 s · 10⁶ + i``, evaluation scenes ``(2 s + 1) · 10⁶ + i`` (``s`` the config's seed): disjoint.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from neurips26.cache import cached
from neurips26.jag.paths import KINDS, LOOP_KIND, path_kind, random_path
from neurips26.progress import progress
from neurips26.scales import pick
from neurips26.validation import check_array, check_choice, check_float, check_int, check_seed
from neurips26.world.camera import Camera, pinhole
from neurips26.world.generators import Room, room
from neurips26.world.render import render
from neurips26.world.scene import BACKGROUND_ID, PackedScene, Scene, box_from_bounds

#: Wall (and ceiling) height of the rooms (metres); the rooms are ``room()``'s default 5 m × 4 m.
WALL_HEIGHT = 2.5
CEILING_COLOR = (0.90, 0.89, 0.86)
#: z-depth (metres) given to invalid pixels; every point of the room is nearer (its diagonal is 6.9 m).
FAR_DEPTH = 8.0
#: The furniture count's range, and the tolerance (metres) of the "hit inside the room" test.
N_FURNITURE = (3, 6)
INSIDE_TOL = 1e-3
#: Bump when rendering changes, so cached data sets are rebuilt.
DATA_VERSION = 1
#: The data splits; scene seeds of a split start at ``(2 seed + index) · SPLIT_STRIDE``.
SPLITS: tuple[str, ...] = ("train", "evaluation")
SPLIT_STRIDE = 1_000_000


# --- rooms and renders -------------------------------------------------------------------------------------
def make_room(seed: int, n_furniture: int = 4) -> Room:
    """``room(seed, n_furniture=...)`` closed by a ceiling slab at :data:`WALL_HEIGHT` (id ``next_id()``).

    The ceiling covers the walls too, so only the door gap opens the room; it lies above the occupancy
    grid's height range, so the grid (and the free space of the paths) is unchanged.
    """
    seed = check_seed("seed", seed)
    n_furniture = check_int("n_furniture", n_furniture, minimum=N_FURNITURE[0], maximum=N_FURNITURE[1])
    base = room(seed, n_furniture=n_furniture, wall_height=WALL_HEIGHT)
    x0, x1, z0, z1 = base.interior
    t = 0.2  # wider than the walls (0.1 m thick)
    ceiling = box_from_bounds(
        (x0 - t, WALL_HEIGHT, z0 - t),
        (x1 + t, WALL_HEIGHT + 0.1, z1 + t),
        color=CEILING_COLOR,
        instance_id=base.scene.next_id(),
        semantic="ceiling",
    )
    return dataclasses.replace(base, scene=base.scene.with_boxes([ceiling]))


def room_bounds(r: Room) -> tuple[np.ndarray, np.ndarray]:
    """The room's inside as a box ``(lo, hi)``, each (3,) float64: floor to ceiling, wall to wall."""
    x0, x1, z0, z1 = r.interior
    return np.array([x0, 0.0, z0]), np.array([x1, WALL_HEIGHT, z1])


def _check_bounds(bounds: object) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(bounds, tuple | list) or len(bounds) != 2:
        raise TypeError(f"bounds must be a (lo, hi) pair of (3,) arrays; got {type(bounds).__name__}")
    lo, hi = (
        check_array(f"bounds[{k}]", np.asarray(b, dtype=float), shape=(3,)) for k, b in enumerate(bounds)
    )
    if not np.all(hi > lo):
        raise ValueError(f"bounds must have hi > lo on every axis; got lo={lo}, hi={hi}")
    return lo, hi


@dataclass(frozen=True, eq=False)
class Views:
    """Rendered frames in the model's layout: ``rgb`` (T, 3, H, W) float32 in [-1, 1], ``depth`` (T, 1, H, W)
    float32 z-depth (:data:`FAR_DEPTH` where invalid), ``valid`` (T, 1, H, W) bool, ``instance`` (T, 1, H, W)
    int32 (the renderer's ids, ``-1`` for nothing hit)."""

    rgb: Tensor
    depth: Tensor
    valid: Tensor
    instance: Tensor


def render_views(
    scene: Scene | PackedScene,
    camera: Camera,
    poses: np.ndarray,
    bounds: tuple[np.ndarray, np.ndarray] | None = None,
) -> Views:
    """Render ``scene`` from ``camera``'s intrinsics at each pose (T, 4, 4), in float32.

    A pixel is valid when its ray hits something and, with ``bounds``, the hit (back-projected in float64)
    lies inside the box ``bounds`` (to :data:`INSIDE_TOL`): a ray through the door gap hits the floor
    outside or nothing. Invalid depths are set to :data:`FAR_DEPTH`.
    """
    if not isinstance(camera, Camera):
        raise TypeError(f"camera must be a Camera; got {type(camera).__name__}")
    poses = check_array("poses", np.asarray(poses, dtype=float), shape=(None, 4, 4))
    box = None if bounds is None else _check_bounds(bounds)
    packed = scene.pack(np.float32) if isinstance(scene, Scene) else scene
    rgb, depth, valid, ids = [], [], [], []
    for pose in poses:
        frame = render(packed, camera.with_pose(pose), dtype=np.float32)
        ok = (frame.instance != BACKGROUND_ID) & np.isfinite(frame.depth)
        if box is not None:
            pts = frame.camera.point_map(np.where(ok, frame.depth, 1.0).astype(np.float64))
            ok &= np.all((pts >= box[0] - INSIDE_TOL) & (pts <= box[1] + INSIDE_TOL), axis=-1)
        rgb.append(frame.rgb.transpose(2, 0, 1) * 2.0 - 1.0)
        depth.append(np.where(ok, frame.depth, np.float32(FAR_DEPTH))[None])
        valid.append(ok[None])
        ids.append(frame.instance[None])
    return Views(
        rgb=torch.from_numpy(np.stack(rgb).astype(np.float32)),
        depth=torch.from_numpy(np.stack(depth).astype(np.float32)),
        valid=torch.from_numpy(np.stack(valid)),
        instance=torch.from_numpy(np.stack(ids).astype(np.int32)),
    )


# --- clips -------------------------------------------------------------------------------------------------
def _draws(seed: int) -> tuple[int, int]:
    """The furniture count and the path seed that :func:`make_clip` draws from scene ``seed``."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 70]))
    drawn = int(rng.integers(N_FURNITURE[0], N_FURNITURE[1] + 1))
    return drawn, int(rng.integers(2**31))


def clip_room(seed: int) -> Room:
    """The room of the clip of scene ``seed`` as :func:`make_clip` builds it when it draws the furniture
    count (every clip of :func:`make_dataset` and of the splits): for drawing its plan or re-rendering it."""
    return make_room(check_seed("seed", seed), _draws(seed)[0])


@dataclass(frozen=True, eq=False)
class Clip:
    """One rendered clip (shapes: module docstring); ``kind`` is its path kind, ``seed`` its scene seed."""

    rgb: Tensor
    log_depth: Tensor
    valid: Tensor
    poses: Tensor
    K: Tensor  # noqa: N815 - the standard symbol
    bounds: tuple[Tensor, Tensor]
    kind: str
    seed: int

    @property
    def frames(self) -> int:
        return self.rgb.shape[0]

    @property
    def depth(self) -> Tensor:
        """z-depth (T, 1, H, W): ``exp(log_depth)``."""
        return self.log_depth.exp()


def make_clip(
    seed: int,
    frames: int,
    kind: str | None = None,
    *,
    size: int = 16,
    fov: float = 70.0,
    n_furniture: int | None = None,
) -> Clip:
    """The clip of scene ``seed``: :func:`make_room`, a :func:`~neurips26.jag.paths.random_path` of ``kind``
    (drawn from the seed when None) and a ``size`` × ``size`` pinhole render of each of its ``frames`` poses.

    ``n_furniture`` (3-6) is drawn from the seed when None. The room, the furniture count and the path use
    independent streams derived from ``seed``.
    """
    seed = check_seed("seed", seed)
    frames = check_int("frames", frames, minimum=2)
    if kind is not None:
        check_choice("kind", kind, KINDS)
    size = check_int("size", size, minimum=1)
    fov = check_float("fov", fov, minimum=0.0, strict_min=True, maximum=179.0)
    drawn, path_seed = _draws(seed)
    n_furniture = drawn if n_furniture is None else n_furniture
    r = make_room(seed, n_furniture)
    kind = path_kind(path_seed, kind)
    return render_clip(r, random_path(r, frames, path_seed, kind), kind=kind, seed=seed, size=size, fov=fov)


def render_clip(
    r: Room, poses: np.ndarray, *, kind: str, seed: int, size: int = 16, fov: float = 70.0
) -> Clip:
    """Room ``r`` rendered at ``poses`` (T, 4, 4) by a ``size`` × ``size`` pinhole of ``fov`` degrees, as a
    :class:`Clip` labelled ``kind`` and ``seed`` (what :func:`make_clip` does with its drawn path; a reader's
    own path goes here)."""
    camera = pinhole(size, size, fov)
    lo, hi = room_bounds(r)
    views = render_views(r.scene, camera, poses, (lo, hi))
    return Clip(
        rgb=views.rgb,
        log_depth=views.depth.log(),
        valid=views.valid,
        poses=torch.from_numpy(np.asarray(poses, dtype=np.float64)),
        K=torch.from_numpy(camera.K),
        bounds=(torch.from_numpy(lo), torch.from_numpy(hi)),
        kind=kind,
        seed=seed,
    )


@dataclass(frozen=True, eq=False)
class ClipBatch:
    """``N`` clips of equal length and size, stacked: ``rgb`` (N, T, 3, H, W), ``log_depth`` and ``valid``
    (N, T, 1, H, W), ``poses`` (N, T, 4, 4) float64; ``K`` (3, 3) and ``bounds`` ``((3,), (3,))`` are shared
    (every room has the same size and every clip the same camera); ``kinds`` and ``seeds`` per clip."""

    rgb: Tensor
    log_depth: Tensor
    valid: Tensor
    poses: Tensor
    K: Tensor  # noqa: N815 - the standard symbol
    bounds: tuple[Tensor, Tensor]
    kinds: tuple[str, ...]
    seeds: tuple[int, ...]

    def __len__(self) -> int:
        return self.rgb.shape[0]

    @property
    def frames(self) -> int:
        return self.rgb.shape[1]

    @property
    def loops(self) -> Tensor:
        """(N,) bool: which clips are out-and-back loops."""
        return torch.tensor([k == LOOP_KIND for k in self.kinds], dtype=torch.bool)

    @classmethod
    def stack(cls, clips: list[Clip]) -> ClipBatch:
        """Stack clips that share their length, size, ``K`` and ``bounds``."""
        if not clips or not all(isinstance(c, Clip) for c in clips):
            raise TypeError("clips must be a non-empty list of Clip")
        first = clips[0]
        for c in clips[1:]:
            if c.rgb.shape != first.rgb.shape:
                raise ValueError(
                    f"clips must share their shape; got {tuple(c.rgb.shape)}, {tuple(first.rgb.shape)}"
                )
            if not torch.equal(c.K, first.K):
                raise ValueError("clips must share K (one camera)")
            if not all(torch.equal(a, b) for a, b in zip(c.bounds, first.bounds, strict=True)):
                raise ValueError("clips must share bounds (one room size)")
        return cls(
            rgb=torch.stack([c.rgb for c in clips]),
            log_depth=torch.stack([c.log_depth for c in clips]),
            valid=torch.stack([c.valid for c in clips]),
            poses=torch.stack([c.poses for c in clips]),
            K=first.K,
            bounds=first.bounds,
            kinds=tuple(c.kind for c in clips),
            seeds=tuple(c.seed for c in clips),
        )

    def clip(self, i: int) -> Clip:
        """Clip ``i`` as a :class:`Clip`."""
        i = check_int("i", i, minimum=0, maximum=len(self) - 1)
        return Clip(
            self.rgb[i],
            self.log_depth[i],
            self.valid[i],
            self.poses[i],
            self.K,
            self.bounds,
            self.kinds[i],
            self.seeds[i],
        )

    def head(self, n: int) -> ClipBatch:
        """The first ``n`` clips."""
        n = check_int("n", n, minimum=1, maximum=len(self))
        return ClipBatch(
            self.rgb[:n],
            self.log_depth[:n],
            self.valid[:n],
            self.poses[:n],
            self.K,
            self.bounds,
            self.kinds[:n],
            self.seeds[:n],
        )

    def select(self, index: Tensor | list[int]) -> ClipBatch:
        """The clips at ``index`` (a list or an int64 tensor of positions, e.g. a training minibatch)."""
        idx = torch.as_tensor(index, dtype=torch.long).reshape(-1)
        if idx.numel() == 0 or int(idx.min()) < -len(self) or int(idx.max()) >= len(self):
            raise ValueError(f"index must hold 1 or more positions in [0, {len(self)}); got {index!r}")
        rows = idx.tolist()
        return ClipBatch(
            self.rgb[idx.to(self.rgb.device)],
            self.log_depth[idx.to(self.rgb.device)],
            self.valid[idx.to(self.rgb.device)],
            self.poses[idx.to(self.poses.device)],
            self.K,
            self.bounds,
            tuple(self.kinds[i] for i in rows),
            tuple(self.seeds[i] for i in rows),
        )

    def to(self, device: torch.device | str) -> ClipBatch:
        """The batch on ``device`` (dtypes kept)."""
        return ClipBatch(
            self.rgb.to(device),
            self.log_depth.to(device),
            self.valid.to(device),
            self.poses.to(device),
            self.K.to(device),
            (self.bounds[0].to(device), self.bounds[1].to(device)),
            self.kinds,
            self.seeds,
        )


def make_dataset(
    n: int,
    frames: int,
    seed: int,
    loop_share: float = 0.5,
    *,
    size: int = 16,
    fov: float = 70.0,
    show_progress: bool = False,
) -> ClipBatch:
    """``n`` clips of scenes ``seed, seed + 1, ..., seed + n - 1``; ``round(n · loop_share)`` of them (a
    seeded random subset) are out-and-back loops, the others a seeded draw of the three other kinds."""
    n = check_int("n", n, minimum=1)
    frames = check_int("frames", frames, minimum=2)
    seed = check_seed("seed", seed)
    loop_share = check_float("loop_share", loop_share, minimum=0.0, maximum=1.0)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 71]))
    loops = np.zeros(n, dtype=bool)
    loops[rng.permutation(n)[: int(np.floor(n * loop_share + 0.5))]] = True
    others = [k for k in KINDS if k != LOOP_KIND]
    kinds = [
        LOOP_KIND if loop else others[int(j)]
        for loop, j in zip(loops, rng.integers(len(others), size=n), strict=True)
    ]
    clips = [
        make_clip(seed + i, frames, kinds[i], size=size, fov=fov)
        for i in progress(range(n), desc="rendering clips", show=show_progress)
    ]
    return ClipBatch.stack(clips)


# --- the chapter's splits ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class DataConfig:
    """The chapter's data (defaults: the default scale). ``train_*``: training clips and their length, a
    ``loop_share`` of them loops; ``eval_*``: held-out scenes, all loops; ``size``, ``fov``: the camera."""

    train_clips: int = 1024
    train_frames: int = 12
    eval_clips: int = 32
    eval_frames: int = 32
    loop_share: float = 0.5
    size: int = 16
    fov: float = 70.0
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("train_clips", "eval_clips"):
            check_int(name, getattr(self, name), minimum=1, maximum=SPLIT_STRIDE)
        for name in ("train_frames", "eval_frames"):
            check_int(name, getattr(self, name), minimum=2)
        check_float("loop_share", self.loop_share, minimum=0.0, maximum=1.0)
        check_int("size", self.size, minimum=1)
        check_float("fov", self.fov, minimum=0.0, strict_min=True, maximum=179.0)
        check_seed("seed", self.seed)

    @classmethod
    def for_scale(cls, scale: str) -> DataConfig:
        """Smoke: 8 training clips and 8 evaluation scenes, 12 frames each; default: 1,024 × 12 training
        frames and 32 evaluation loops of 32 frames at 16 × 16 pixels; paper: 4,096 × 16 training frames
        and 64 evaluation loops of 48 frames at 32 × 32."""
        return pick(
            scale,
            smoke=cls(train_clips=8, eval_clips=8, eval_frames=12),
            default=cls(),
            paper=cls(train_clips=4096, train_frames=16, eval_clips=64, eval_frames=48, size=32),
        )


def split_seed(name: str, config: DataConfig) -> int:
    """The first scene seed of split ``name``: ``(2 · config.seed + index) · SPLIT_STRIDE``."""
    return (2 * config.seed + SPLITS.index(check_choice("name", name, SPLITS))) * SPLIT_STRIDE


def make_split(name: str, config: DataConfig | None = None, *, show_progress: bool = False) -> ClipBatch:
    """Render split ``name`` (``"train"`` or ``"evaluation"``) of ``config`` (uncached)."""
    config = DataConfig() if config is None else config
    if not isinstance(config, DataConfig):
        raise TypeError(f"config must be a DataConfig; got {type(config).__name__}")
    seed = split_seed(name, config)
    if name == "train":
        n, frames, share = config.train_clips, config.train_frames, config.loop_share
    else:
        n, frames, share = config.eval_clips, config.eval_frames, 1.0
    return make_dataset(n, frames, seed, share, size=config.size, fov=config.fov, show_progress=show_progress)


def load_split(name: str, config: DataConfig | None = None, *, verbose: bool = True) -> ClipBatch:
    """Split ``name`` of ``config``, rendered once and then loaded from the cache (key: name, config and
    :data:`DATA_VERSION`)."""
    config = DataConfig() if config is None else config
    check_choice("name", name, SPLITS)
    key = {"split": name, "config": config, "version": DATA_VERSION}
    return cached("jag-data", key, lambda: make_split(name, config, show_progress=verbose), verbose=verbose)


__all__ = [
    "DATA_VERSION",
    "FAR_DEPTH",
    "N_FURNITURE",
    "SPLITS",
    "WALL_HEIGHT",
    "Clip",
    "ClipBatch",
    "DataConfig",
    "Views",
    "clip_room",
    "load_split",
    "make_clip",
    "make_dataset",
    "make_room",
    "make_split",
    "render_clip",
    "render_views",
    "room_bounds",
    "split_seed",
]
