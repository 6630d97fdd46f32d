"""Top-down floor plans for chapter 18's notebooks (matplotlib): room, doors, windows, furniture, proxies
and the floor a person can reach from the door.

:func:`draw_plan` draws one layout on an axis; the proxies are drawn where they attach to the layout's own
poses (:func:`~neurips26.iohp.proxy.attach`), cyan when free and red when a piece they may not overlap covers
them (:func:`~neurips26.iohp.metrics.proxy_conflicts`), and the reachable floor
(:func:`~neurips26.iohp.metrics.access_map`) is shaded green. :func:`plan_grid` draws several side by side.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Polygon, Rectangle, Wedge

from neurips26.iohp.geometry import corners, front
from neurips26.iohp.layout import Layout
from neurips26.iohp.metrics import access_map, proxy_conflicts
from neurips26.iohp.proxy import Proxy, allowed_matrix, attach
from neurips26.iohp.rooms import category_color

FLOOR_COLOR = "#efe9dd"
WALL_COLOR = "#444444"
FREE_PROXY = "#17becf"
BLOCKED_PROXY = "#d62728"
REACHABLE = "#2ca02c"


def _check_layout(layout: object) -> Layout:
    if not isinstance(layout, Layout):
        raise TypeError(f"layout must be a Layout; got {type(layout).__name__}")
    return layout


def draw_plan(
    ax: Axes,
    layout: Layout,
    proxies: Sequence[Proxy] | None = None,
    *,
    reachable: bool = False,
    labels: bool = False,
    title: str | None = None,
) -> Axes:
    """Draw ``layout`` from above on ``ax``: floor, walls, door swings (dashed arcs), windows (blue), pieces
    in their category colours with a tick on the front face, ``proxies`` (attached to the layout's poses;
    red and hatched = in conflict), and with ``reachable`` the floor a person reaches from the door, green."""
    layout = _check_layout(layout)
    room = layout.room
    outline = np.array(room.outline)
    ax.add_patch(Polygon(outline, closed=True, facecolor=FLOOR_COLOR, edgecolor=WALL_COLOR, linewidth=2.5))
    if reachable:
        access = access_map(layout)
        grid = access.grid
        rows, cols = grid.shape
        extent = (grid.x0, grid.x0 + cols * grid.cell, grid.y0, grid.y0 + rows * grid.cell)
        shade = np.where(access.swept, 1.0, np.nan)
        ax.imshow(shade, origin="lower", extent=extent, cmap="Greens", vmin=0, vmax=2.5, alpha=0.55, zorder=1)
    for window in room.windows:
        a, b = window.opening()
        ax.plot([a[0], b[0]], [a[1], b[1]], color="#4a90d9", linewidth=5, solid_capstyle="butt", zorder=3)
    for door in room.doors:
        a, b = door.opening()
        ax.plot([a[0], b[0]], [a[1], b[1]], color=FLOOR_COLOR, linewidth=4, zorder=3)
        n = np.array(door.inward)
        hinge_angle = np.degrees(np.arctan2(*(b - a)[::-1]))
        normal_angle = np.degrees(np.arctan2(n[1], n[0]))
        lo, hi = sorted((hinge_angle, normal_angle))
        if hi - lo > 180:
            lo, hi = hi, lo + 360
        ax.add_patch(
            Wedge(tuple(a), door.width, lo, hi, fill=False, linestyle="--", edgecolor="#888888", zorder=2)
        )
    n = layout.n
    poses, sizes = layout.poses(), layout.sizes()
    if n:
        box = corners(poses[:, :2], sizes[:, :2], poses[:, 2])
        tip = front(poses[:, 2])
        for i, category in enumerate(layout.categories):
            ax.add_patch(
                Polygon(
                    box[i],
                    closed=True,
                    facecolor=category_color(category),
                    edgecolor="black",
                    lw=0.8,
                    zorder=4,
                )
            )
            c, d = poses[i, :2], sizes[i, 1]
            ax.plot(*np.stack([c, c + tip[i] * d / 2]).T, color="black", linewidth=1.0, zorder=5)
            if labels:
                ax.text(*c, category.replace("_", " "), ha="center", va="center", fontsize=6, zorder=6)
    if proxies:
        proxies = tuple(proxies)
        center, size, theta = attach(proxies, poses, sizes)
        owner = np.array([p.owner for p in proxies], dtype=np.int64)
        allowed = allowed_matrix(proxies, layout.categories)
        blocked = proxy_conflicts(layout, (center, size, theta), owner, allowed=allowed)
        rect = corners(np.asarray(center), np.asarray(size), np.asarray(theta))
        for k in range(len(proxies)):
            color = BLOCKED_PROXY if blocked[k] else FREE_PROXY
            hatch = "xxx" if blocked[k] else None  # hatched too: a red chair must not read as a conflict
            ax.add_patch(
                Polygon(
                    rect[k],
                    closed=True,
                    facecolor=color,
                    alpha=0.35,
                    edgecolor=color,
                    lw=1.0,
                    hatch=hatch,
                    zorder=7,
                )
            )
    x0, y0, x1, y1 = room.bounds
    ax.set_xlim(x0 - 0.2, x1 + 0.2)
    ax.set_ylim(y0 - 0.2, y1 + 0.2)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title, fontsize=9)
    return ax


def plan_grid(
    layouts: Sequence[Layout],
    titles: Sequence[str] | None = None,
    proxies: Sequence[Sequence[Proxy] | None] | None = None,
    *,
    reachable: bool = False,
    columns: int = 4,
    size: float = 3.0,
) -> Figure:
    """Several plans side by side (``columns`` per row), each with its title and proxies."""
    layouts = [_check_layout(lay) for lay in layouts]
    if not layouts:
        raise ValueError("layouts must not be empty")
    if titles is not None and len(titles) != len(layouts):
        raise ValueError(f"titles must hold one title per layout ({len(layouts)}); got {len(titles)}")
    if proxies is not None and len(proxies) != len(layouts):
        raise ValueError(f"proxies must hold one entry per layout ({len(layouts)}); got {len(proxies)}")
    columns = max(1, min(columns, len(layouts)))
    rows = -(-len(layouts) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(size * columns, size * rows), squeeze=False)
    for k, ax in enumerate(axes.flat):
        if k >= len(layouts):
            ax.axis("off")
            continue
        draw_plan(
            ax,
            layouts[k],
            None if proxies is None else proxies[k],
            reachable=reachable,
            title=None if titles is None else titles[k],
        )
    fig.tight_layout()
    return fig


def legend_handles() -> list[Rectangle]:
    """Legend patches: free proxy, proxy in conflict, reachable floor."""
    return [
        Rectangle((0, 0), 1, 1, facecolor=FREE_PROXY, alpha=0.35, label="proxy, free"),
        Rectangle((0, 0), 1, 1, facecolor=BLOCKED_PROXY, alpha=0.35, hatch="xxx", label="proxy, blocked"),
        Rectangle((0, 0), 1, 1, facecolor=REACHABLE, alpha=0.4, label="reachable floor"),
    ]


__all__ = ["draw_plan", "legend_handles", "plan_grid"]
