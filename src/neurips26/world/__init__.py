"""Procedural 3D worlds with exact ground truth, and a fast NumPy ray caster (shared by chapters 07, 14-18).

Scenes are boxes (axis-aligned, yawed or fully rotated; unit voxels; thin walls) over an optional
ground plane, held as plain data that round-trips through JSON (:mod:`~neurips26.world.scene`).
Seeded generators build voxel stacks, tabletops, furnished rooms and mazes
(:mod:`~neurips26.world.generators`). Cameras, poses and trajectories live in
:mod:`~neurips26.world.camera`; :func:`render` returns RGB, depth, an instance mask and normals
(:mod:`~neurips26.world.render`); spheres and upright cylinders are hit analytically and composited into a
render by nearest depth (:mod:`~neurips26.world.primitives`); :func:`benchmark_fps` measures its speed.

Conventions:

* World: right-handed, ``+Y`` up, ground ``Y = 0``; lengths in metres (voxels: cube edge 1).
* Camera: OpenCV axes (``x`` right, ``y`` down, ``z`` forward); a pose is the 4x4 camera-to-world
  matrix whose rotation columns are right, down, forward and whose translation is the camera centre.
* Pixels: row ``i``, column ``j`` has centre ``(u, v) = (j + 0.5, i + 0.5)``.
* Depth: z-depth along the optical axis (camera-frame ``z``), ``inf`` where nothing is hit;
  ``Camera.distance_from_depth`` gives the distance along the ray.
* Instance mask: the id of the visible primitive, ``-1`` for background; the ground plane has its
  own id (0 in the generators), so masks partition the image into background, ground and boxes.
* Colours: RGB in ``[0, 1]``. Angles: degrees; yaw and azimuth turn about ``+Y``, 0 = ``+Z``, 90 = ``+X``.
"""

from neurips26.world.benchmark import BenchmarkResult, benchmark_fps
from neurips26.world.camera import (
    PROJECTIONS,
    Camera,
    heading_pose,
    isometric,
    look_at,
    orbit,
    orthographic,
    pinhole,
    random_smooth,
    spherical_pose,
    walk_through,
)
from neurips26.world.generators import (
    FURNITURE,
    PALETTE,
    Maze,
    Room,
    Tabletop,
    VoxelStack,
    maze,
    room,
    tabletop,
    voxel_scene,
    voxel_stack,
)
from neurips26.world.primitives import (
    Cylinder,
    Primitive,
    Sphere,
    composite,
    hit_cylinder,
    hit_sphere,
    render_with_primitives,
)
from neurips26.world.render import (
    AMBIENT,
    LIGHT_DIRECTION,
    OccupancyMap,
    Render,
    boxes_in_view,
    cast_rays,
    occupancy_map,
    render,
)
from neurips26.world.scene import (
    BACKGROUND_ID,
    Box,
    GroundPlane,
    PackedScene,
    Scene,
    box_from_bounds,
    oriented_box,
    voxel,
    wall,
    yaw_rotation,
)

__all__ = [
    "render_with_primitives",
    "hit_sphere",
    "hit_cylinder",
    "composite",
    "Sphere",
    "Primitive",
    "Cylinder",
    "AMBIENT",
    "BACKGROUND_ID",
    "BenchmarkResult",
    "Box",
    "Camera",
    "FURNITURE",
    "GroundPlane",
    "LIGHT_DIRECTION",
    "Maze",
    "OccupancyMap",
    "PALETTE",
    "PROJECTIONS",
    "PackedScene",
    "Render",
    "Room",
    "Scene",
    "Tabletop",
    "VoxelStack",
    "benchmark_fps",
    "box_from_bounds",
    "boxes_in_view",
    "cast_rays",
    "heading_pose",
    "isometric",
    "look_at",
    "maze",
    "occupancy_map",
    "orbit",
    "oriented_box",
    "orthographic",
    "pinhole",
    "random_smooth",
    "render",
    "room",
    "spherical_pose",
    "tabletop",
    "voxel",
    "voxel_scene",
    "voxel_stack",
    "walk_through",
    "wall",
    "yaw_rotation",
]
