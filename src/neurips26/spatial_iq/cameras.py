"""The benchmark's cameras: 16 views per scene and the reference (culling) view, as the released generator
places them.

The released Isaac-Sim generator looks at a 4 x 4 board **along its diagonal** from about 37° above the
horizon, at base azimuths 0°, 90°, 180° and 270° plus an offset of 3° or 12.5°, through one of two
(lens, distance) pairs: a narrow 23.7° lens (nearly orthographic) at distance ``d``, or a lens with 3x the
half-angle (about 71°) at ``0.3 d``, which keeps the structure's size in the frame but shows strong
perspective. The reference view, from which the structure is culled, is base azimuth 0 with no offset
through the narrow lens.

In our world (``+Y`` up, azimuth 0 = ``+Z``, 90 = ``+X``; :mod:`neurips26.world`) "along the diagonal"
is azimuth 45°, so view ``k`` looks from azimuth ``45 + 90 k + offset``. One deviation (recorded in the
chapter): the released camera frames each structure's own bounding box; ours frames the whole
4 x 4 x 4 volume, so a camera does not depend on the scene and every block slot's depth can be
tabulated once per camera (:mod:`~neurips26.spatial_iq.visibility`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from neurips26.validation import check_choice, check_int
from neurips26.world import Camera, pinhole, spherical_pose

#: Columns per side of the board and the tallest column (the released 4 x 4 x 4 volume).
GRID = 4
MAX_HEIGHT = 4
#: Camera elevation above the horizon (degrees) and the narrow lens's horizontal field of view.
ELEVATION = 37.0
NARROW_FOV = 23.7
#: The wide lens: 3x the half-angle at 0.3x the distance.
WIDE_FOV = 3 * NARROW_FOV
WIDE_DISTANCE = 0.3
#: The camera offsets of the 16 views (degrees); the reference view has none.
OFFSETS: tuple[float, ...] = (3.0, 12.5)
LENSES: tuple[str, ...] = ("narrow", "wide")
#: Image side in pixels (the models' input; the released images are 512 px).
IMAGE_SIZE = 48
#: Room around the volume's bounding sphere in the narrow view (1 = the sphere touches the frame).
MARGIN = 1.12


@dataclass(frozen=True)
class View:
    """One camera: base azimuth index ``k`` (0..3, i.e. 45° + 90° k), ``offset`` (degrees) and ``lens``."""

    k: int
    offset: float
    lens: str = "narrow"

    def __post_init__(self) -> None:
        check_int("k", self.k, minimum=0, maximum=3)
        if self.offset not in (0.0, *OFFSETS):
            raise ValueError(f"offset must be 0 or one of {OFFSETS}; got {self.offset!r}")
        check_choice("lens", self.lens, LENSES)

    @property
    def azimuth(self) -> float:
        return 45.0 + 90.0 * self.k + self.offset

    def turned(self, quarter_turns: int) -> View:
        """The view ``quarter_turns`` x 90° further round, same offset and lens (the T2 partner)."""
        return View((self.k + quarter_turns) % 4, self.offset, self.lens)


#: The culling view: base azimuth 0, no offset, narrow lens.
REFERENCE = View(0, 0.0, "narrow")
#: The 16 views of a scene, in the released order (azimuth, then offset, then lens).
VIEWS: tuple[View, ...] = tuple(View(k, o, lens) for lens in LENSES for k in range(4) for o in OFFSETS)


def volume_radius(cube: float = 1.0) -> float:
    """Radius of the sphere around the whole 4 x 4 x 4 volume."""
    return 0.5 * cube * math.sqrt(2 * GRID**2 + MAX_HEIGHT**2)


def narrow_distance(cube: float = 1.0) -> float:
    """Distance at which the narrow lens sees the whole volume with :data:`MARGIN`."""
    return MARGIN * volume_radius(cube) / math.sin(math.radians(NARROW_FOV / 2))


@lru_cache(maxsize=64)
def camera(view: View, size: int = IMAGE_SIZE) -> Camera:
    """The pinhole camera of ``view`` at ``size`` x ``size`` pixels, aimed at the volume's centre."""
    if not isinstance(view, View):
        raise TypeError(f"view must be a View; got {type(view).__name__}")
    size = check_int("size", size, minimum=8)
    target = (0.0, MAX_HEIGHT / 2.0, 0.0)
    d = narrow_distance()
    fov, dist = (NARROW_FOV, d) if view.lens == "narrow" else (WIDE_FOV, WIDE_DISTANCE * d)
    return pinhole(size, size, fov, spherical_pose(target, dist, view.azimuth, ELEVATION))


__all__ = [
    "ELEVATION",
    "GRID",
    "IMAGE_SIZE",
    "LENSES",
    "MARGIN",
    "MAX_HEIGHT",
    "NARROW_FOV",
    "OFFSETS",
    "REFERENCE",
    "VIEWS",
    "WIDE_DISTANCE",
    "WIDE_FOV",
    "View",
    "camera",
    "narrow_distance",
    "volume_radius",
]
