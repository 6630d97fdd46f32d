"""Interactive (plotly) figures of chapter 16, used by its explore notebook
(``chapters/16-spatialclaw/04-explore.md``); the static matplotlib figures are in :mod:`.figures`.

Every figure is a plotly figure whose sliders only switch traces on and off (or fade them), so it works in
the static book without a kernel:

- :func:`transcript_figure` draws the records of :func:`~.transcript.transcript_frames` (the question,
  then per step the model's words, the code that ran and the feedback it read next) as a two-column table
  with a slider over the steps.
- :func:`mask_figure`: RGB frames with segmentation masks overlaid, one slider over the frames and one over
  precomputed noise settings (the frame slider toggles ``visible``, the setting slider ``opacity``, so
  the two sliders are independent).
- :func:`bev_figure`: a bird's-eye view of a scene (room, object footprints and fronts, the camera path)
  with a slider over the frame index that moves the camera's view wedge and, if given, shows the frame.

No torch here (the package's rule); plotly and PIL only.
"""

from __future__ import annotations

import base64
import html
import math
import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from neurips26.plotting import OKABE_ITO, add_step_slider
from neurips26.spatialclaw.kernel_types import png_bytes
from neurips26.spatialclaw.loop import Episode
from neurips26.spatialclaw.scene_types import ORIENTED, Frames, SceneObject, SpatialScene
from neurips26.spatialclaw.transcript import TranscriptFrame, transcript_frames
from neurips26.validation import check_float, check_int

_MONO = "Menlo, Consolas, 'Courier New', monospace"


# --------------------------------------------------------------------------------------------------------
# transcripts
# --------------------------------------------------------------------------------------------------------
def _cell_html(text: str, width: int, max_lines: int) -> str:
    """Plain text as plotly table-cell HTML: escaped, soft-wrapped at ``width`` characters, indentation
    kept (non-breaking spaces), at most ``max_lines`` lines."""
    lines: list[str] = []
    for line in text.splitlines() or [""]:
        indent = len(line) - len(line.lstrip(" "))
        wrapped = textwrap.wrap(
            line,
            width=width,
            subsequent_indent=" " * (indent + 4),
            drop_whitespace=False,
            replace_whitespace=False,
        ) or [""]
        lines.extend(wrapped)
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"… {len(lines) - max_lines} more line(s)"]
    out = []
    for line in lines:
        stripped = line.lstrip(" ")
        out.append("\u00a0" * (len(line) - len(stripped)) + html.escape(stripped, quote=False))
    return "<br>".join(out)


def _record_table(r: TranscriptFrame, max_lines: int, visible: bool) -> go.Table:
    """One record as a two-column table trace."""
    if r.kind == "question":
        heads = (r.title, "the planner's plan, appended to the question" if r.feedback else "(no plan)")
    else:
        heads = (r.title, "the feedback the model read next" if r.feedback else "")
    left = r.words if r.code is None else f"{r.words}\n\n--- the code that ran ---\n{r.code}"
    right = r.feedback
    if r.images:
        right += "\n\n[images attached: " + ", ".join(label for label, _ in r.images[:4])
        right += f" … ({len(r.images)} in all)]" if len(r.images) > 4 else "]"
    return go.Table(
        columnwidth=[0.56, 0.44],
        header={
            "values": [f"<b>{html.escape(h, quote=False)}</b>" for h in heads],
            "align": "left",
            "fill_color": "#f6d5d0" if r.failed else "#dde8f3",
            "font": {"size": 12},
        },
        cells={
            "values": [[_cell_html(left, 62, max_lines)], [_cell_html(right, 46, max_lines)]],
            "align": "left",
            "font": {"family": _MONO, "size": 10},
            "fill_color": "white",
        },
        visible=visible,
    )


def _heading(episode: Episode, truth: object, title: str | None) -> str:
    head = title or episode.question
    if truth is not None:
        head += f" (answer {episode.answer!r}; correct: {truth!r})"
    return "<br>".join(textwrap.wrap(html.escape(head, quote=False), 90))


def transcript_figure(
    episode: Episode | Mapping[str, Episode],
    *,
    truth: object | Mapping[str, object] = None,
    title: str | None = None,
    height: int = 620,
    max_lines: int = 90,
) -> go.Figure:
    """A slider over :func:`transcript_frames`: each position shows one record as a two-column table (left:
    the model's words and the code that ran; right: the feedback it read next). ``episode`` may be a
    mapping ``{label: Episode}``: a dropdown then picks the episode and swaps in its slider. ``truth`` (one
    value, or a mapping with the same labels) adds the correct answer to the title; ``max_lines`` caps each
    column."""
    height = check_int("height", height, minimum=200)
    max_lines = check_int("max_lines", max_lines, minimum=5)
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a str or None; got {type(title).__name__}")
    episodes = dict(episode) if isinstance(episode, Mapping) else {"": episode}
    if not episodes:
        raise ValueError("episode must be an Episode or a non-empty mapping of them")
    truths = dict(truth) if isinstance(truth, Mapping) else dict.fromkeys(episodes, truth)
    if set(truths) != set(episodes):
        raise ValueError(
            f"truth must have the same labels as episode: {sorted(episodes)}; got {sorted(truths)}"
        )
    records = {label: transcript_frames(ep) for label, ep in episodes.items()}
    offsets, total = {}, 0
    for label, rs in records.items():
        offsets[label] = total
        total += len(rs)
    fig = go.Figure()
    sliders, headings = {}, {}
    for e, (label, rs) in enumerate(records.items()):
        for k, r in enumerate(rs):
            fig.add_trace(_record_table(r, max_lines, visible=e == 0 and k == 0))
        steps = []
        for k, r in enumerate(rs):
            on = offsets[label] + k
            steps.append(
                {
                    "label": {"question": "Q", "forced": "forced"}.get(r.kind, str(r.index)),
                    "method": "restyle",
                    "args": [{"visible": [t == on for t in range(total)]}],
                }
            )
        sliders[label] = {
            "active": 0,
            "currentvalue": {"prefix": "record: "},
            "pad": {"t": 10},
            "steps": steps,
            "y": 0,
            "yanchor": "top",
        }
        headings[label] = _heading(episodes[label], truths[label], title)
    first = next(iter(records))
    lines = max(h.count("<br>") + 1 for h in headings.values())
    menu = len(records) > 1
    layout: dict[str, object] = {
        "title": {"text": headings[first], "font": {"size": 12}, "y": 0.98, "yanchor": "top", "x": 0.01},
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 36 + 17 * lines + (44 if menu else 0), "b": 10},
        "sliders": [sliders[first]],
    }
    if len(records) > 1:
        buttons = [
            {
                "label": label,
                "method": "update",
                "args": [
                    {"visible": [t == offsets[label] for t in range(total)]},
                    {"sliders": [sliders[label]], "title.text": headings[label]},
                ],
            }
            for label in records
        ]
        layout["updatemenus"] = [
            {
                "buttons": buttons,
                "direction": "down",
                "x": 0.0,
                "xanchor": "left",
                "y": 1.0,
                "yanchor": "bottom",
                "pad": {"b": 8},
            }
        ]
    fig.update_layout(**layout)
    return fig


# --------------------------------------------------------------------------------------------------------
# masks
# --------------------------------------------------------------------------------------------------------
def _rgb(hex_colour: str) -> np.ndarray:
    return np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=float)


#: Overlay colours of object k (the book's palette without black).
_MASK_COLOURS = [_rgb(c) for c in OKABE_ITO[:7]]


def png_data_uri(image: np.ndarray) -> str:
    """A ``data:image/png;base64,...`` URI of an ``(H, W, 3)`` uint8 image (what a plotly ``Image`` trace's
    ``source`` takes: far smaller in the page than the pixel values)."""
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"image must be an (H, W, 3) uint8 array; got {getattr(image, 'shape', image)!r}")
    return "data:image/png;base64," + base64.b64encode(png_bytes(image, optimize=True)).decode("ascii")


def overlay_masks(rgb: np.ndarray, masks: np.ndarray, alpha: float = 0.55) -> np.ndarray:
    """``(H, W, 3)`` uint8: ``rgb`` with each object's ``(K, H, W)`` mask tinted in its own colour (object
    k: the palette's k-th colour) and outlined."""
    from scipy import ndimage

    canvas = rgb.astype(float).copy()
    for k, m in enumerate(masks):
        if not m.any():
            continue
        colour = _MASK_COLOURS[k % len(_MASK_COLOURS)]
        canvas[m] = (1 - alpha) * canvas[m] + alpha * colour
        edge = m & ~ndimage.binary_erosion(m)
        canvas[edge] = colour * 0.6
    return np.clip(np.round(canvas), 0, 255).astype(np.uint8)


def _mask_array(name: str, value: object, shape: tuple[int, ...]) -> np.ndarray:
    arr = np.asarray(getattr(value, "masks", value))  # a PerFrameMask, or an (F, K, H, W) array
    if arr.ndim != 4 or arr.shape[0] != shape[0] or arr.shape[2:] != shape[1:3]:
        raise ValueError(
            f"{name} must be (F, K, H, W) masks matching rgb's (F, H, W) = {shape[:3]}; got shape {arr.shape}"
        )
    return arr.astype(bool)


def _slider(prefix: str, pad: int, steps: list[dict]) -> dict:
    """A plotly slider below the figure (``pad`` pixels down) over ``steps``, labelled ``prefix``."""
    return {
        "active": 0,
        "currentvalue": {"prefix": prefix},
        "pad": {"t": pad},
        "y": 0,
        "yanchor": "top",
        "steps": steps,
    }


def mask_figure(
    rgb: np.ndarray,
    masks: Mapping[str, object] | np.ndarray,
    *,
    frame_indices: Sequence[int] | None = None,
    title: str | None = None,
    alpha: float = 0.55,
    height: int = 470,
) -> go.Figure:
    """Frames with masks overlaid: ``rgb`` ``(F, H, W, 3)`` uint8; ``masks`` ``{setting label: (F, K, H,
    W) bool or a PerFrameMask over the same F frames}`` (or one array: a single setting). One slider picks
    the frame (labelled by ``frame_indices``, default ``0..F-1``), a second (when there are several
    settings) the setting; a caption in the image counts the objects visible in that frame."""
    if not isinstance(rgb, np.ndarray) or rgb.ndim != 4 or rgb.shape[3] != 3 or rgb.dtype != np.uint8:
        raise ValueError(f"rgb must be an (F, H, W, 3) uint8 array; got {getattr(rgb, 'shape', rgb)!r}")
    n_frames = rgb.shape[0]
    if n_frames == 0:
        raise ValueError("rgb must hold at least one frame")
    settings = {"masks": masks} if not isinstance(masks, Mapping) else dict(masks)
    if not settings:
        raise ValueError("masks must hold at least one setting")
    arrays = {str(label): _mask_array(f"masks[{label!r}]", m, rgb.shape) for label, m in settings.items()}
    frames = list(range(n_frames)) if frame_indices is None else [int(f) for f in frame_indices]
    if len(frames) != n_frames:
        raise ValueError(f"frame_indices must name {n_frames} frames (one per rgb frame); got {len(frames)}")
    alpha = check_float("alpha", alpha, minimum=0.0, maximum=1.0)
    height = check_int("height", height, minimum=200)
    h, w = rgb.shape[1:3]
    fig = go.Figure()
    labels = list(arrays)
    for s, label in enumerate(labels):
        arr = arrays[label]
        for f in range(n_frames):
            shown = s == 0
            fig.add_trace(
                go.Image(
                    source=png_data_uri(overlay_masks(rgb[f], arr[f], alpha)),
                    hoverinfo="skip",
                    visible=f == 0,
                    opacity=1.0 if shown else 0.0,
                    name=f"{label}, frame {frames[f]}",
                )
            )
            seen = int(arr[f].any(axis=(1, 2)).sum())
            fig.add_trace(
                go.Scatter(
                    x=[2],
                    y=[h * 0.06],
                    text=[f"{seen} of {arr.shape[1]} object(s) in this frame"],
                    mode="text",
                    textposition="middle right",
                    textfont={"color": "black", "size": 12},
                    hoverinfo="skip",
                    showlegend=False,
                    visible=f == 0,
                    opacity=1.0 if shown else 0.0,
                )
            )
    n_traces = 2 * len(labels) * n_frames
    frame_of = [(t // 2) % n_frames for t in range(n_traces)]
    setting_of = [t // (2 * n_frames) for t in range(n_traces)]
    frame_steps = [
        {"label": str(fi), "method": "restyle", "args": [{"visible": [g == f for g in frame_of]}]}
        for f, fi in enumerate(frames)
    ]
    sliders = [_slider("frame ", 30, frame_steps)]
    if len(labels) > 1:
        setting_steps = [
            {"label": label, "method": "restyle", "args": [{"opacity": [float(g == k) for g in setting_of]}]}
            for k, label in enumerate(labels)
        ]
        sliders.append(_slider("setting: ", 100, setting_steps))
    fig.update_xaxes(visible=False, range=[-0.5, w - 0.5])
    fig.update_yaxes(visible=False, range=[h - 0.5, -0.5], scaleanchor="x")
    fig.update_layout(
        title=title,
        height=height + (70 if len(labels) > 1 else 0),
        margin={"l": 10, "r": 10, "t": 50 if title else 10, "b": 150 if len(labels) > 1 else 80},
        sliders=sliders,
    )
    return fig


# --------------------------------------------------------------------------------------------------------
# bird's-eye view
# --------------------------------------------------------------------------------------------------------
def _bev(points: np.ndarray) -> tuple[list[float], list[float]]:
    """World (…, 3) → BEV axes: right of the first camera (+X) and forward of it (-Z)."""
    p = np.atleast_2d(points)
    return [float(v) for v in p[:, 0]], [float(-v) for v in p[:, 2]]


def footprint_outline(obj: SceneObject, frame: int = 0) -> np.ndarray:
    """``(P, 3)`` closed outline of ``obj``'s footprint on the floor at ``frame`` (a rotated rectangle for
    boxes, a circle for spheres and cylinders)."""
    c = obj.center_at(frame)
    if obj.shape != "box":
        t = np.linspace(0.0, 2.0 * math.pi, 33)
        r = obj.size[0] / 2.0
        return np.stack([c[0] + r * np.cos(t), np.zeros_like(t), c[2] + r * np.sin(t)], axis=1)
    xz = obj.footprint(frame)
    xz = np.vstack([xz, xz[:1]])  # closed
    return np.stack([xz[:, 0], np.zeros(len(xz)), xz[:, 1]], axis=1)


def _frame_rgb(frames: object, n: int) -> np.ndarray | None:
    if frames is None:
        return None
    rgb = frames.rgb if isinstance(frames, Frames) else frames
    if not isinstance(rgb, np.ndarray) or rgb.ndim != 4 or rgb.shape[0] != n or rgb.dtype != np.uint8:
        raise ValueError(
            f"frames must be the scene's Frames or an ({n}, H, W, 3) uint8 array; "
            f"got {getattr(rgb, 'shape', type(rgb).__name__)}"
        )
    return rgb


def _object_colour(obj: SceneObject) -> str:
    from neurips26.world import PALETTE

    r, g, b = (int(round(255 * v)) for v in PALETTE[obj.colour])
    return f"rgb({r},{g},{b})"


def bev_figure(
    scene: SpatialScene,
    *,
    frames: Frames | np.ndarray | None = None,
    highlight: Sequence[int | str] = (),
    title: str | None = None,
    wedge_m: float = 1.2,
    height: int = 520,
) -> go.Figure:
    """A bird's-eye view of ``scene``: up is the first camera's forward (-Z), right its right (+X); the
    room, each object's footprint in its colour (a line from the centre marks the front of chairs, sofas
    and TVs; a moving object leaves a dotted track), the camera path, and a slider over the frame index
    that moves the camera's view wedge (``wedge_m`` metres long, the lens's horizontal field of view) and
    the moving object. ``frames`` (the scene's renders) adds the frame itself beside the map. Objects in
    ``highlight`` (instance ids or names) are drawn thicker and labelled in bold."""
    if not isinstance(scene, SpatialScene):
        raise TypeError(f"scene must be a SpatialScene; got {type(scene).__name__}")
    n = scene.num_frames
    rgb = _frame_rgb(frames, n)
    wedge_m = check_float("wedge_m", wedge_m, minimum=0.0, strict_min=True)
    height = check_int("height", height, minimum=200)
    if isinstance(highlight, str) or not isinstance(highlight, Sequence):
        raise TypeError(f"highlight must be a sequence of instance ids or names; got {highlight!r}")
    marked = set()
    for h in highlight:
        try:
            marked.add(scene.object(h).instance_id if isinstance(h, int) else scene.by_name(h).instance_id)
        except KeyError as err:
            raise ValueError(f"highlight names an object not in the scene: {h!r}") from err

    if rgb is None:
        fig = go.Figure()
        cell: dict[str, int] = {}
    else:
        fig = make_subplots(rows=1, cols=2, column_widths=[0.55, 0.45], horizontal_spacing=0.04)
        cell = {"row": 1, "col": 1}
    x0, x1, z0, z1 = scene.room
    room = np.array([[x0, 0, z0], [x1, 0, z0], [x1, 0, z1], [x0, 0, z1], [x0, 0, z0]])
    rx, ry = _bev(room)
    fig.add_trace(
        go.Scatter(
            x=rx, y=ry, mode="lines", line={"color": "#555", "width": 2}, name="walls", hoverinfo="skip"
        ),
        **cell,
    )
    poses = scene.poses
    cx, cy = _bev(poses[:, :3, 3])
    fig.add_trace(
        go.Scatter(
            x=cx,
            y=cy,
            mode="lines+markers",
            line={"color": OKABE_ITO[2], "dash": "dash", "width": 1.5},
            marker={"size": 5},
            text=[f"frame {f}" for f in range(n)],
            hovertemplate="%{text}<extra>camera</extra>",
            name="camera path",
        ),
        **cell,
    )
    moving: list[SceneObject] = []
    for obj in scene.objects:
        bold = obj.instance_id in marked
        if obj.moving:
            moving.append(obj)
            tx, ty = _bev(np.array(obj.track))
            fig.add_trace(
                go.Scatter(
                    x=tx,
                    y=ty,
                    mode="lines",
                    line={"color": "#888", "dash": "dot"},
                    hoverinfo="skip",
                    showlegend=False,
                ),
                **cell,
            )
            continue
        _add_object(fig, obj, 0, bold, cell, visible=True)
    static = len(fig.data)
    half = math.atan(scene.width / 2.0 / scene.intrinsics[0])
    per_frame = []  # how many traces frame f adds (they follow the static ones, frame by frame)
    for f in range(n):
        before = len(fig.data)
        pose = poses[f]
        fwd = pose[:3, 2] * np.array([1.0, 0.0, 1.0])
        fwd /= np.linalg.norm(fwd)
        right = np.array([-fwd[2], 0.0, fwd[0]])
        p = pose[:3, 3]
        ends = [p + wedge_m * (math.cos(a) * fwd + math.sin(a) * right) for a in np.linspace(-half, half, 9)]
        wx, wy = _bev(np.array([p, *ends, p]))
        fig.add_trace(
            go.Scatter(
                x=wx,
                y=wy,
                mode="lines",
                fill="toself",
                fillcolor="rgba(0,158,115,0.18)",
                line={"color": OKABE_ITO[2], "width": 1},
                name=f"camera {f}",
                hoverinfo="skip",
                showlegend=False,
                visible=f == 0,
            ),
            **cell,
        )
        for obj in moving:
            _add_object(fig, obj, f, obj.instance_id in marked, cell, visible=f == 0)
        if rgb is not None:
            fig.add_trace(
                go.Image(source=png_data_uri(np.ascontiguousarray(rgb[f])), hoverinfo="skip", visible=f == 0),
                row=1,
                col=2,
            )
        per_frame.append(len(fig.data) - before)
    add_step_slider(fig, [str(f) for f in range(n)], traces_per_step=per_frame, prefix="frame ", first=static)
    fig.update_layout(
        title=title,
        height=height,
        margin={"l": 50, "r": 10, "t": 50 if title else 20, "b": 90},
        showlegend=False,
    )
    fig.update_xaxes(title_text="right of the first camera, +X (m)", **cell)
    fig.update_yaxes(title_text="forward of the first camera, −Z (m)", scaleanchor="x", scaleratio=1, **cell)
    if rgb is not None:
        fig.update_xaxes(visible=False, row=1, col=2)
        fig.update_yaxes(visible=False, row=1, col=2)
    return fig


def _add_object(
    fig: go.Figure, obj: SceneObject, frame: int, bold: bool, cell: dict[str, int], *, visible: bool
) -> list[int]:
    """Footprint, front line and label of ``obj`` at ``frame``; the indices of the traces added."""
    colour = _object_colour(obj)
    ox, oy = _bev(footprint_outline(obj, frame))
    start = len(fig.data)
    fig.add_trace(
        go.Scatter(
            x=ox,
            y=oy,
            mode="lines",
            fill="toself",
            fillcolor=colour,
            line={"color": "black", "width": 3 if bold else 1},
            opacity=0.85,
            name=obj.name,
            hovertemplate=f"{obj.name} (id {obj.instance_id})<extra></extra>",
            visible=visible,
        ),
        **cell,
    )
    c = obj.center_at(frame)
    if obj.category in ORIENTED:
        reach = max(obj.size[0], obj.size[2]) / 2.0 + 0.25
        fx, fy = _bev(np.array([c, c + reach * obj.front]))
        fig.add_trace(
            go.Scatter(
                x=fx,
                y=fy,
                mode="lines",
                line={"color": "black", "width": 2},
                hoverinfo="skip",
                visible=visible,
            ),
            **cell,
        )
    lx, ly = _bev(c)
    label = f"<b>{obj.name}</b>" if bold else obj.name
    fig.add_trace(
        go.Scatter(
            x=lx,
            y=ly,
            mode="text",
            text=[label],
            textposition="top center",
            hoverinfo="skip",
            textfont={"size": 11},
            visible=visible,
        ),
        **cell,
    )
    return list(range(start, len(fig.data)))


__all__ = [
    "bev_figure",
    "footprint_outline",
    "mask_figure",
    "overlay_masks",
    "png_data_uri",
    "transcript_figure",
]
