"""The random-poses baseline of chapter 18 (IOHP): every piece dropped anywhere on the floor (§4).

The floor of the comparison: a method that knows nothing about furniture, people or the model's
relations. Each piece gets a centre drawn uniformly from the room's bounding box ``[x_0, x_1] x [y_0, y_1]``,
redrawn while it falls outside the outline (the L-shape's notch), so the centre is uniform on the floor,

    c_i ~ U(room),      theta_i ~ U{0, pi/2, pi, -pi/2},

and a heading drawn uniformly from the four axis directions. Footprints may overlap each other, the walls
and the door swing: only centres are kept inside. One ``numpy.random.default_rng(seed)`` stream draws
everything, piece by piece in list order, so the same layout and seed always give the same poses.
"""

from __future__ import annotations

import math

import numpy as np

from neurips26.iohp.layout import Layout
from neurips26.validation import check_seed

#: The four axis-aligned headings (rad) a piece may get.
HEADINGS: tuple[float, ...] = (0.0, math.pi / 2.0, math.pi, -math.pi / 2.0)


def random_poses(layout: Layout, seed: int) -> Layout:
    """``layout`` with every piece at a uniform random floor pose (module docstring); relations kept.

    ``layout``: the room, furniture (sizes, order) and relations; its poses are ignored. ``seed``: a
    non-negative int. Returns a new :class:`~neurips26.iohp.layout.Layout` with poses (n, 3).
    """
    if not isinstance(layout, Layout):
        raise TypeError(f"layout must be a Layout; got {type(layout).__name__}")
    seed = check_seed("seed", seed)
    rng = np.random.default_rng(seed)
    room = layout.room
    x0, y0, x1, y1 = room.bounds
    poses = np.zeros((layout.n, 3))
    for i in range(layout.n):
        while True:
            center = np.array([rng.uniform(x0, x1), rng.uniform(y0, y1)])
            if bool(room.contains(center, tol=0.0)):
                break
        poses[i] = (center[0], center[1], HEADINGS[int(rng.integers(len(HEADINGS)))])
    return layout.with_poses(poses)


__all__ = ["HEADINGS", "random_poses"]
