"""Matplotlib figures of the chapter: frames, a bird's-eye view with its frames of reference, mask overlays.

* :func:`plot_frames` draws a few RGB frames side by side, titled with their absolute frame index.
* :func:`plot_bev` draws a scene from above: the room, every object's footprint in its own colour and
  labelled with its name, the camera path with view frusta, the world axes and, on request, one camera's
  axes and one object's own frame (its facing arrow, its right-hand direction and its left and right
  half-planes), the frame an object-perspective question is asked in.
* :func:`plot_masks` overlays the objects of a :class:`~.per_frame_mask.PerFrameMask` on one frame.

The bird's-eye view keeps the scene's conventions (:mod:`.scene_types`): ``+X`` points right on the page
and ``-Z`` (where the first camera looks) points up the page, so the first frame's left and right are the
page's left and right; ``+Y`` (up) points out of the page. Matplotlib and NumPy only (no torch).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from neurips26.plotting import COLORS, OKABE_ITO
from neurips26.spatialclaw.frame_indexed import check_frame
from neurips26.spatialclaw.per_frame_mask import PerFrameMask
from neurips26.spatialclaw.scene_types import Frames, SceneObject, SpatialScene

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: Colours of the frames of reference: world, camera and object axes.
FRAME_COLOURS: dict[str, str] = {"world": OKABE_ITO[7], "camera": COLORS["method"], "object": OKABE_ITO[4]}
#: Half-plane shades of an object's frame: its left and its right.
SIDE_COLOURS: dict[str, str] = {"left": OKABE_ITO[3], "right": OKABE_ITO[2]}


# --- helpers ----------------------------------------------------------------------------------------------


def _check_index(name: str, value: object, size: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int; got {type(value).__name__}")
    if not 0 <= int(value) < size:
        raise IndexError(f"{name} must be in 0..{size - 1}; got {value}")
    return int(value)


def _rgb_stack(frames: object) -> np.ndarray:
    """The (F, H, W, 3) uint8 RGB array of ``frames`` (a :class:`Frames` or such an array)."""
    rgb = frames.rgb if isinstance(frames, Frames) else frames
    if not isinstance(rgb, np.ndarray):
        raise TypeError(f"frames must be a Frames or an (F, H, W, 3) array; got {type(frames).__name__}")
    if rgb.ndim != 4 or rgb.shape[-1] != 3:
        raise ValueError(f"frames must have shape (F, H, W, 3); got {rgb.shape}")
    return rgb


def _axes_list(axes: object, n: int, figsize: tuple[float, float]) -> list[Axes]:
    import matplotlib.pyplot as plt

    if axes is None:
        _, created = plt.subplots(1, n, figsize=figsize, squeeze=False, constrained_layout=True)
        return list(created[0])
    if hasattr(axes, "imshow"):  # one Axes
        axes = [axes]
    axes = list(np.ravel(np.asarray(axes, dtype=object)))
    if len(axes) != n or not all(hasattr(a, "imshow") for a in axes):
        raise ValueError(f"axes must hold {n} matplotlib Axes (one per index); got {len(axes)} items")
    return axes


def _one_axes(ax: object, figsize: tuple[float, float]) -> Axes:
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize, constrained_layout=True)
        return ax
    if not hasattr(ax, "imshow"):
        raise TypeError(f"ax must be a matplotlib Axes or None; got {type(ax).__name__}")
    return ax


def _object(scene: SpatialScene, ref: object, name: str) -> SceneObject:
    """An object of ``scene`` named by its instance id or by ``"<colour> <category>"``."""
    if isinstance(ref, SceneObject):
        return ref
    try:
        if isinstance(ref, str):
            return scene.by_name(ref)
        if isinstance(ref, numbers.Integral) and not isinstance(ref, bool):
            return scene.object(int(ref))
    except KeyError:
        names = [o.name for o in scene.objects]
        raise KeyError(f"{name}: no object {ref!r} in the scene; its objects are {names}") from None
    raise TypeError(f"{name} must be an object name, an instance id or a SceneObject; got {ref!r}")


def right_of(forward_xz: np.ndarray) -> np.ndarray:
    """The right-hand direction ``(x, z)`` of someone upright facing ``forward_xz``: ``forward x up``."""
    f = np.asarray(forward_xz, dtype=float)
    return np.array([-f[1], f[0]])


def _arrow(ax: Axes, start: np.ndarray, vec: np.ndarray, colour: str, label: str, **kw: object) -> None:
    ax.annotate(
        "",
        xy=(start[0] + vec[0], start[1] + vec[1]),
        xytext=(start[0], start[1]),
        arrowprops={
            "arrowstyle": "-|>",
            "color": colour,
            "lw": kw.pop("lw", 2.0),
            "shrinkA": 0,
            "shrinkB": 0,
        },
        zorder=6,
    )
    if label:
        end = start + vec * 1.18
        ax.text(
            end[0],
            end[1],
            label,
            color=colour,
            fontsize=kw.pop("fontsize", 8),
            ha="center",
            va="center",
            zorder=9,
            bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8},
        )


# --- frames -----------------------------------------------------------------------------------------------


def plot_frames(
    frames: Frames | np.ndarray,
    indices: Sequence[int],
    *,
    axes: object = None,
    titles: Sequence[str] | None = None,
) -> list[Axes]:
    """Draw the RGB frames ``indices`` (absolute frame indices) of ``frames`` (a :class:`Frames` or an
    ``(F, H, W, 3)`` uint8 array) side by side, into ``axes`` (one Axes per index) or a new figure.
    Returns the Axes."""
    rgb = _rgb_stack(frames)
    if isinstance(indices, str | bytes) or not isinstance(indices, Sequence) or not indices:
        raise TypeError(f"indices must be a non-empty sequence of frame indices; got {indices!r}")
    idx = [_check_index("indices", i, rgb.shape[0]) for i in indices]
    if titles is not None and (isinstance(titles, str) or len(titles) != len(idx)):
        raise ValueError(f"titles must hold one title per index ({len(idx)}); got {titles!r}")
    out = _axes_list(axes, len(idx), (2.6 * len(idx), 2.3))
    for k, (ax, i) in enumerate(zip(out, idx, strict=True)):
        ax.imshow(rgb[i], interpolation="nearest")
        ax.set_title(f"frame {i}" if titles is None else titles[k], fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
    return out


# --- bird's-eye view --------------------------------------------------------------------------------------


def _draw_object(ax: Axes, obj: SceneObject, frame: int, label: bool, highlight: bool) -> None:
    from matplotlib.patches import Circle, Polygon

    from neurips26.world import PALETTE

    colour = PALETTE[obj.colour]
    edge = {"edgecolor": "black", "lw": 2.2 if highlight else 0.8, "zorder": 3, "alpha": 0.9}
    c = obj.center_at(frame)
    if obj.shape == "box":
        ax.add_patch(Polygon(obj.footprint(frame), closed=True, facecolor=colour, **edge))
    else:
        ax.add_patch(Circle((c[0], c[2]), obj.size[0] / 2, facecolor=colour, **edge))
    if obj.track is not None:  # the mover: its whole path
        track = np.array(obj.track)
        ax.plot(track[:, 0], track[:, 2], ls=":", color="0.3", lw=1.2, zorder=2)
    if label:
        ax.text(
            c[0],
            c[2] - max(obj.size[0], obj.size[2]) / 2 - 0.12,
            obj.name,
            fontsize=7.5,
            ha="center",
            va="bottom",
            zorder=7,
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.75},
        )


def _draw_frustum(
    ax: Axes, scene: SpatialScene, frame: int, length: float, colour: str, alpha: float
) -> None:
    from matplotlib.patches import Polygon

    pose = scene.poses[frame]
    pos = pose[[0, 2], 3]
    fwd = pose[[0, 2], 2]
    fwd = fwd / max(np.linalg.norm(fwd), 1e-9)
    fx, _, cx, _ = scene.intrinsics
    half = math.atan2(scene.width - cx, fx)  # half the horizontal field of view
    side = right_of(fwd)
    tip = length * math.cos(half)
    corners = [
        pos,
        pos + tip * fwd + length * math.sin(half) * side,
        pos + tip * fwd - length * math.sin(half) * side,
    ]
    ax.add_patch(
        Polygon(np.array(corners), closed=True, facecolor=colour, edgecolor=colour, alpha=alpha, zorder=2)
    )


def plot_bev(
    scene: SpatialScene,
    *,
    ax: object = None,
    frame: int = 0,
    labels: bool = True,
    highlight: Sequence[str | int] = (),
    trajectory: bool = True,
    frusta: Sequence[int] | None = None,
    world_axes: bool = True,
    camera_frame: int | None = None,
    object_frame: str | int | None = None,
    arrows: Sequence[tuple[str | int, str | int]] = (),
    half_planes: bool = True,
) -> Axes:
    """A bird's-eye view of ``scene`` at ``frame`` (module docstring); returns the Axes.

    ``highlight``: objects (names or ids) drawn with a thick edge. ``trajectory``: the camera path, dots
    at every frame. ``frusta``: frames whose view wedge is drawn (default: the first, the middle and the
    last; ``()`` for none). ``world_axes``: ``+X`` and ``-Z`` arrows at the origin and the ``+Y`` (out of
    the page) mark. ``camera_frame``: a frame whose camera axes ``x_c`` (right) and ``z_c`` (forward) are
    drawn. ``object_frame``: an object (name or id) whose facing arrow and right-hand arrow are drawn and,
    with ``half_planes``, its left and right half-planes shaded. ``arrows``: ``(from, to)`` object pairs
    joined by an arrow between their centres.
    """
    from matplotlib.patches import Polygon

    if not isinstance(scene, SpatialScene):
        raise TypeError(f"scene must be a SpatialScene; got {type(scene).__name__}")
    frame = _check_index("frame", frame, scene.num_frames)
    if camera_frame is not None:
        camera_frame = _check_index("camera_frame", camera_frame, scene.num_frames)
    if frusta is None:
        frusta = sorted({0, scene.num_frames // 2, scene.num_frames - 1})
    frusta = [_check_index("frusta", f, scene.num_frames) for f in frusta]
    if isinstance(highlight, str) or isinstance(arrows, str):
        raise TypeError("highlight and arrows must be sequences (of names, and of (from, to) pairs)")
    bold = {_object(scene, h, "highlight").instance_id for h in highlight}
    pairs = []
    for pair in arrows:
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ValueError(f"arrows must hold (from, to) pairs of objects; got {pair!r}")
        pairs.append((_object(scene, pair[0], "arrows"), _object(scene, pair[1], "arrows")))
    owner = None if object_frame is None else _object(scene, object_frame, "object_frame")
    ax = _one_axes(ax, (6.0, 6.0))

    x0, x1, z0, z1 = scene.room
    span = max(x1 - x0, z1 - z0)
    ax.add_patch(
        Polygon(
            [(x0, z0), (x1, z0), (x1, z1), (x0, z1)],
            closed=True,
            fill=False,
            edgecolor="0.35",
            lw=2.5,
            zorder=1,
        )
    )
    if owner is not None and half_planes:
        c = owner.center_at(frame)[[0, 2]]
        f = owner.front[[0, 2]]
        big = 3.0 * span
        for side, sign in (("right", 1.0), ("left", -1.0)):
            r = sign * right_of(f)
            quad = [c - big * f, c + big * f, c + big * f + big * r, c - big * f + big * r]
            ax.add_patch(
                Polygon(np.array(quad), closed=True, facecolor=SIDE_COLOURS[side], alpha=0.12, lw=0, zorder=0)
            )
    for obj in scene.objects:
        _draw_object(ax, obj, frame, labels, obj.instance_id in bold)

    if trajectory:
        path = scene.poses[:, [0, 2], 3]
        ax.plot(path[:, 0], path[:, 1], "-", color=FRAME_COLOURS["camera"], lw=1.5, zorder=4)
        ax.scatter(path[:, 0], path[:, 1], s=10, color=FRAME_COLOURS["camera"], zorder=5)
    for f in frusta:
        _draw_frustum(ax, scene, f, 0.22 * span, FRAME_COLOURS["camera"], 0.12)
        pos = scene.poses[f, [0, 2], 3]
        ax.text(
            pos[0], pos[1], f"  {f}", color=FRAME_COLOURS["camera"], fontsize=8, ha="left", va="top", zorder=7
        )

    unit = 0.12 * span
    if world_axes:
        origin = np.zeros(2)
        _arrow(ax, origin, np.array([unit, 0.0]), FRAME_COLOURS["world"], "+X")
        _arrow(ax, origin, np.array([0.0, -unit]), FRAME_COLOURS["world"], "−Z")
        ax.scatter([0.0], [0.0], s=60, facecolor="white", edgecolor=FRAME_COLOURS["world"], zorder=7)
        ax.scatter([0.0], [0.0], s=6, color=FRAME_COLOURS["world"], zorder=8)
        ax.text(-0.05 * span, 0.06 * span, "+Y (up)", fontsize=7, color=FRAME_COLOURS["world"], ha="right")
    if camera_frame is not None:
        pose = scene.poses[camera_frame]
        pos = pose[[0, 2], 3]
        x_c = pose[[0, 2], 0] / max(np.linalg.norm(pose[[0, 2], 0]), 1e-9)
        z_c = pose[[0, 2], 2] / max(np.linalg.norm(pose[[0, 2], 2]), 1e-9)
        _arrow(ax, pos, 0.8 * unit * x_c, FRAME_COLOURS["camera"], "$x_c$")
        _arrow(ax, pos, 0.8 * unit * z_c, FRAME_COLOURS["camera"], "$z_c$")
    for a, b in pairs:
        ca, cb = a.center_at(frame)[[0, 2]], b.center_at(frame)[[0, 2]]
        _arrow(ax, ca, cb - ca, "0.25", "", lw=1.4)
    if owner is not None:
        c = owner.center_at(frame)[[0, 2]]
        f = owner.front[[0, 2]]
        _arrow(ax, c, 0.9 * unit * f, FRAME_COLOURS["object"], "front")
        _arrow(ax, c, 0.9 * unit * right_of(f), FRAME_COLOURS["object"], "right")

    pad = 0.3
    ax.set_xlim(x0 - pad, x1 + pad)
    ax.set_ylim(z1 + pad, z0 - pad)  # -Z up the page: the first camera looks up
    ax.set_aspect("equal")
    ax.set_xlabel("X (m), right of the first camera")
    ax.set_ylabel("Z (m); −Z is up the page")
    return ax


# --- masks ------------------------------------------------------------------------------------------------


def plot_masks(
    image: object,
    mask: PerFrameMask,
    frame: int,
    *,
    ax: object = None,
    alpha: float = 0.55,
    title: str | None = None,
) -> Axes:
    """Overlay every object of ``mask`` at absolute ``frame`` on ``image`` (an (H, W, 3) uint8 array or a
    ``FrameImage``), one palette colour per object, with a legend of the objects' labels and pixel
    counts; a mask with no objects leaves the image as it is and says so in the title. Returns the Axes."""
    from matplotlib.patches import Patch

    rgb = getattr(image, "array", image)
    if not isinstance(rgb, np.ndarray) or rgb.ndim != 3 or rgb.shape[-1] != 3:
        raise TypeError(f"image must be an (H, W, 3) array or a FrameImage; got {type(image).__name__}")
    if not isinstance(mask, PerFrameMask):
        raise TypeError(f"mask must be a PerFrameMask; got {type(mask).__name__}")
    if tuple(mask.shape) != rgb.shape[:2]:
        raise ValueError(f"mask must have the image's shape {rgb.shape[:2]}; got {tuple(mask.shape)}")
    if not (isinstance(alpha, numbers.Real) and 0.0 <= float(alpha) <= 1.0):
        raise ValueError(f"alpha must be in [0, 1]; got {alpha!r}")
    frame = check_frame(frame, mask.frame_indices, "mask")
    ax = _one_axes(ax, (3.2, 2.6))
    out = rgb.astype(float) / 255.0
    handles = []
    for k in range(mask.num_objects):
        m = mask.get_mask(frame, k)
        colour = np.array([int(OKABE_ITO[k % 6][i : i + 2], 16) for i in (1, 3, 5)]) / 255.0
        out[m] = (1.0 - alpha) * out[m] + alpha * colour
        handles.append(Patch(color=colour, label=f"{k}: {mask.labels[k]} ({int(m.sum())} px)"))
    ax.imshow(np.clip(out, 0.0, 1.0), interpolation="nearest")
    for k in range(mask.num_objects):  # an outline, so a mask stays visible on an object of its colour
        m = mask.get_mask(frame, k)
        if m.any() and not m.all():
            ax.contour(m.astype(float), levels=[0.5], colors=["black"], linewidths=1.0)
    found = f"{mask.num_objects} object(s)" if mask.num_objects else "no objects found"
    ax.set_title(f"frame {frame}: {found}" if title is None else title, fontsize=9)
    if handles:
        ax.legend(handles=handles, fontsize=7, loc="lower left", framealpha=0.8)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    return ax


__all__ = ["FRAME_COLOURS", "SIDE_COLOURS", "plot_bev", "plot_frames", "plot_masks", "right_of"]
