"""The data every SpatialClaw module shares: a scene's objects and cameras, and its rendered frames.

Plain frozen dataclasses over NumPy arrays (no torch: the kernel imports them). Conventions are
``neurips26.world``'s: world ``+Y`` up, floor ``Y = 0``, metres; a camera pose is the 4x4
camera-to-world matrix with OpenCV axes (columns right, down, forward, position); the first camera looks
along ``-Z`` and ``+X`` is its right; pixel ``(row i, column j)`` has centre ``(u, v) = (j + 0.5, i + 0.5)``;
depth is z-depth along the optical axis (``inf`` where nothing is hit); instance ids are ``-1`` for
background.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: The eight object categories and their shape (the paper's benchmarks ask about furniture-like objects).
CATEGORIES: dict[str, str] = {
    "chair": "box",
    "table": "box",
    "sofa": "box",
    "tv": "box",
    "box": "box",
    "lamp": "cylinder",
    "plant": "cylinder",
    "ball": "sphere",
}
#: Other words for each category. The segmentation stand-in knows only the category names (a prompt with a
#: synonym finds nothing, its lexicon-miss failure mode); the grounding VLM stand-in knows both. Questions
#: sometimes use a synonym, so an agent must notice an empty mask and recover.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "chair": ("seat", "armchair"),
    "table": ("desk",),
    "sofa": ("couch",),
    "tv": ("television", "monitor"),
    "box": ("crate", "carton"),
    "lamp": ("floor lamp",),
    "plant": ("potted plant", "houseplant"),
    "ball": ("sphere",),
}
#: Categories with a front (their ``yaw_deg`` is meaningful): object-perspective questions use them.
ORIENTED: tuple[str, ...] = ("chair", "sofa", "tv")
SHAPES: tuple[str, ...] = ("box", "sphere", "cylinder")
KINDS: tuple[str, ...] = ("video", "multiview")


@dataclass(frozen=True)
class SceneObject:
    """One object: ``instance_id`` (unique, ≥ 1), ``category`` (a key of :data:`CATEGORIES`), ``colour``
    (a name of ``neurips26.world.PALETTE``), ``shape`` (``box``/``sphere``/``cylinder``), ``center`` (3,)
    in metres (the centre of its bounding box at frame 0), ``size`` (3,) full extents ``(x, y, z)`` in
    its own frame before the yaw, and ``yaw_deg``: its front is its local ``+Z`` turned by ``yaw_deg``
    about ``+Y`` (0 = facing ``+Z``, 90 = facing ``+X``). ``track``: for the moving object, its centre
    at every frame ``(F, 3)``; ``None`` for static objects."""

    instance_id: int
    category: str
    colour: str
    shape: str
    center: tuple[float, float, float]
    size: tuple[float, float, float]
    yaw_deg: float = 0.0
    track: tuple[tuple[float, float, float], ...] | None = None

    @property
    def name(self) -> str:
        """``"<colour> <category>"``, how questions refer to it (unique within a scene)."""
        return f"{self.colour} {self.category}"

    @property
    def moving(self) -> bool:
        return self.track is not None

    def center_at(self, frame: int) -> np.ndarray:
        """Centre (3,) at ``frame`` (a static object's ``center`` at every frame)."""
        if self.track is None:
            return np.asarray(self.center, dtype=float)
        return np.asarray(self.track[frame], dtype=float)

    @property
    def front(self) -> np.ndarray:
        """Unit facing direction in the world (3,): local ``+Z`` turned by ``yaw_deg`` about ``+Y``."""
        yaw = np.radians(self.yaw_deg)
        return np.array([np.sin(yaw), 0.0, np.cos(yaw)])

    def footprint(self, frame: int = 0) -> np.ndarray:
        """``(4, 2)`` world ``(x, z)`` corners of the object's width × depth rectangle on the floor at
        ``frame``, in order round it: local ``±x`` along the yawed right axis, ``±z`` along :attr:`front`."""
        c = self.center_at(frame)
        yaw = np.radians(self.yaw_deg)
        right = np.array([np.cos(yaw), -np.sin(yaw)])  # local +X turned by the yaw about +Y, as (x, z)
        front = self.front[[0, 2]]
        half_w, half_d = self.size[0] / 2, self.size[2] / 2
        signs = ((-1, -1), (1, -1), (1, 1), (-1, 1))
        return np.array([c[[0, 2]] + sx * half_w * right + sz * half_d * front for sx, sz in signs])


@dataclass(frozen=True)
class SpatialScene:
    """A room with objects seen by a camera: ``kind`` ``video`` (a smooth trajectory of ``F`` frames) or
    ``multiview`` (2–4 distinct viewpoints). ``poses`` (F, 4, 4) camera-to-world; ``intrinsics``
    ``(fx, fy, cx, cy)`` shared by every frame; ``width`` × ``height`` pixels; ``fps`` of the video (1 for
    multi-view); ``room`` the interior ``(x_min, x_max, z_min, z_max)``; ``seed`` the generator's seed."""

    seed: int
    kind: str
    objects: tuple[SceneObject, ...]
    poses: np.ndarray
    intrinsics: tuple[float, float, float, float]
    width: int
    height: int
    fps: float
    room: tuple[float, float, float, float]

    @property
    def num_frames(self) -> int:
        return int(self.poses.shape[0])

    def object(self, instance_id: int) -> SceneObject:
        for o in self.objects:
            if o.instance_id == instance_id:
                return o
        raise KeyError(f"no object with instance_id {instance_id}")

    def by_name(self, name: str) -> SceneObject:
        for o in self.objects:
            if o.name == name:
                return o
        raise KeyError(f"no object named {name!r}")


@dataclass(frozen=True)
class Frames:
    """Rendered frames of a :class:`SpatialScene`: ``rgb`` (F, H, W, 3) uint8, ``depth`` (F, H, W)
    float32 z-depth (``inf``: nothing hit), ``ids`` (F, H, W) int32 instance ids (``-1`` background; walls
    and floor have their own ids, listed in ``structure_ids``)."""

    rgb: np.ndarray
    depth: np.ndarray
    ids: np.ndarray
    structure_ids: tuple[int, ...]

    @property
    def num_frames(self) -> int:
        return int(self.rgb.shape[0])
