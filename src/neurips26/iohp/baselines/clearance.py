"""The uniform-clearance baseline of chapter 18 (IOHP): one generic keep-out strip per piece (§4).

Not in the paper: it asks whether IOHP's inferred, category-specific proxies matter, or whether any
clearance in front of furniture would do. Every piece ``i`` (width ``w_i``) gets exactly one proxy instead
of the oracle's: a standing body's strip on its front face,

    side = front, offset = 0, size = (w_i, 0.6, 1.7), posture = stand,

no ``allowed`` overlaps, no functional relations and not ``simultaneous`` (so strips never repel each
other, only furniture and walls). With the proxies' attachment (§3.2) its centre is
``c_i + (d_i / 2 + 0.3) u(theta_i)``. The records go to
:func:`neurips26.iohp.objective.build_problem` like any proxies (``proxies=[uniform_clearance_proxies(lay)
for lay in layouts]``), so the objective keeps its keep-out role and loses every functional anchor; the
metrics still score the reference proxies.
"""

from __future__ import annotations

from collections.abc import Sequence

from neurips26.iohp.layout import Furniture, Layout
from neurips26.iohp.proxy import MAX_SIZE, POSTURE_HEIGHT, Proxy
from neurips26.validation import check_float

#: Depth (m) of the generic strip: one standing body (the reference proxies' ``BODY`` depth).
CLEARANCE_DEPTH = 0.6
#: Posture of the generic strip.
CLEARANCE_POSTURE = "stand"


def uniform_clearance_proxies(
    furniture: Layout | Sequence[Furniture], *, depth: float = CLEARANCE_DEPTH
) -> tuple[Proxy, ...]:
    """One generic front strip per piece (module docstring): a tuple of :class:`~neurips26.iohp.proxy.Proxy`.

    ``furniture``: a :class:`~neurips26.iohp.layout.Layout` or its pieces; proxy ``i`` belongs to piece
    ``i``. ``depth`` (m, in (0, 6]): how far the strip reaches from the front face. Poses are not read.
    """
    if isinstance(furniture, Layout):
        items = furniture.furniture
    elif isinstance(furniture, Furniture) or not isinstance(furniture, Sequence):
        raise TypeError(
            f"furniture must be a Layout or a sequence of Furniture; got {type(furniture).__name__}"
        )
    else:
        items = tuple(furniture)
        for i, f in enumerate(items):
            if not isinstance(f, Furniture):
                raise TypeError(f"furniture[{i}] must be a Furniture; got {type(f).__name__}")
    depth = check_float("depth", depth, minimum=0.0, maximum=MAX_SIZE, strict_min=True)
    height = POSTURE_HEIGHT[CLEARANCE_POSTURE]
    return tuple(
        Proxy(i, CLEARANCE_POSTURE, "front", 0.0, (f.width, depth, height)) for i, f in enumerate(items)
    )


__all__ = ["CLEARANCE_DEPTH", "CLEARANCE_POSTURE", "uniform_clearance_proxies"]
