"""The functions the reference policy's code cells define in the kernel, as a module that ruff and the
unit tests see.

:class:`~.reference_policy.ReferencePolicy` writes these functions into its cells *as text*: it reads each
one's source with :func:`inspect.getsource` (:func:`cell_source`), so a cell holds exactly the lines below
and the kernel runs them as the model's own code. The text is what the cached episodes and the claims
depend on, so a change here changes what the policy writes (and the episode cache key, which hashes the
package source). The kernel never imports this module.

In the kernel the functions read the cell's globals: ``np``, ``recon`` (the cell's
``tools.Reconstruct.Reconstruct(InputImages)``), ``InputImages``, ``seg`` (name -> mask), and in a compute
cell ``N`` (the names), ``parts`` (name -> merged object indices), ``SCREEN``, ``MEASURE`` and, for
counting, ``COUNT_GAP``. Here they are module globals with neutral values; a test sets them (e.g. with
``monkeypatch.setattr``) before calling a function. The family answers are named ``answer_<family>`` here
and written as ``def answer(frames):`` (:func:`cell_source` renames them).

Conventions are the reconstruction's (:mod:`~.reconstruction`): +Y up, the first camera looks along -Z
with +X to its right; a horizontal direction is ``(x, z)``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

# --- the kernel globals the functions read (set by the cell in the kernel, by a test here) ----------------

#: ``tools.Reconstruct.Reconstruct(InputImages)`` of the cell.
recon: Any = None
#: The sample's frames (``InputImages[f].array`` is ``(H, W, 3)`` uint8).
InputImages: Any = None
#: Segmentation of each named object (a :class:`~.per_frame_mask.PerFrameMask`).
seg: dict[str, Any] = {}
#: The object names of the question, as written (compute cells).
N: list[str] = []
#: The object indices of each name that are one (merged) object (compute cells).
parts: dict[str, list[int]] = {}
#: Object perspective: the anchor is a screen (it faces its dark side) rather than a seat.
SCREEN = False
#: Size comparison: ``"taller"`` or ``"longer"``.
MEASURE = "taller"
#: Counting: footprints closer than this (metres) are one object (``reference_policy.COUNT_GAP_M``).
COUNT_GAP = 0.1


def cell_source(function: Callable[..., object], name: str | None = None) -> str:
    """The source text of ``function`` as a cell writes it (ends with a newline); ``name`` renames its
    ``def`` line (``answer_distance`` -> ``answer``)."""
    if not callable(function) or getattr(function, "__module__", None) != __name__:
        raise ValueError(f"function must be a function of {__name__}; got {function!r}")
    text = inspect.getsource(function)
    if name is not None:
        old = f"def {function.__name__}("
        if not text.startswith(old):
            raise ValueError(f"cannot rename {function.__name__}: its source does not start with {old!r}")
        text = f"def {name}(" + text[len(old) :]
    return text


def cell_sources(*functions: Callable[..., object]) -> str:
    """The sources of ``functions`` one after another, two blank lines apart (as the cells write them)."""
    return "\n\n".join(cell_source(f) for f in functions)


# --- every code cell: lifting masks to 3-D (written after the cell's ``recon = ...`` line) ---------------


def object_points(mask, parts, frames=None):
    """Confident world points and their RGB under the listed parts of mask, per absolute frame."""
    out = {}
    for f in mask.frame_indices:
        if f not in recon.frame_indices or (frames is not None and f not in frames):
            continue
        sel = np.zeros(mask.shape, dtype=bool)
        for k in parts:
            sel |= mask.get_mask(f, k)
        pts = recon.points[f][sel]
        keep = np.all(np.isfinite(pts), axis=1) & (recon.points.confidence[f][sel] >= 0.3)
        if keep.sum() >= 8:
            out[f] = (pts[keep], InputImages[f].array[sel][keep])
    return out


def pooled(pf):
    if not pf:
        raise ValueError("no confident points for this object")
    return np.concatenate([p for p, _ in pf.values()])


def footprint(P):
    """Smallest horizontal rectangle around P (2-98 percentiles): centre (x, z), axes u, w, extents."""
    xz = P[:, [0, 2]]
    a = np.radians(np.arange(0, 90, 5))
    U = np.stack([np.cos(a), np.sin(a)])  # (2, 18): the rectangle's first axis at each angle
    W = np.stack([-np.sin(a), np.cos(a)])  # its second axis
    lo, hi = np.percentile(np.concatenate([xz @ U, xz @ W], axis=1), [2, 98], axis=0)
    ext_u, ext_w = (hi - lo)[: a.size], (hi - lo)[a.size :]
    k = int(np.argmin(ext_u * ext_w))  # the first smallest, as a loop over the angles would keep
    u, w = U[:, k], W[:, k]
    mid_u, mid_w = (lo[k] + hi[k]) / 2, (lo[k + a.size] + hi[k + a.size]) / 2
    return mid_u * u + mid_w * w, u, w, ext_u[k], ext_w[k]


def centre(pf):
    """Object centre: middle of its footprint rectangle and of its height range, over all frames."""
    P = pooled(pf)
    c = footprint(P)[0]
    lo, hi = np.percentile(P[:, 1], [2, 98])
    return np.array([c[0], (lo + hi) / 2, c[1]])


def right_of(v):
    """Right-hand direction (x, z) of someone upright facing v (x, z)."""
    return np.array([-v[1], v[0]])


def report(name):
    print(f"SEG|{name}|{seg[name].num_objects}")
    for k in range(seg[name].num_objects):
        pf = object_points(seg[name], [k])
        if pf:
            x, y, z = centre(pf)
            print(f"PART|{name}|{k}|{x:.3f}|{y:.3f}|{z:.3f}|{len(pf)}")


def C(name, frames=None):
    return centre(object_points(seg[name], parts[name], frames))


# --- the camera families ---------------------------------------------------------------------------------


def motion(rec, i, j):
    """Camera i -> j in camera i's upright heading frame: metres right, metres forward, turn to the right
    (the sine of the heading change), straight-line metres."""
    Pi, Pj = rec.extrinsics[i], rec.extrinsics[j]
    fwd = Pi[:3, 2].copy()
    fwd[1] = 0.0
    fwd = fwd / np.linalg.norm(fwd)
    right = np.cross(fwd, np.array([0.0, 1.0, 0.0]))
    step = Pj[:3, 3] - Pi[:3, 3]
    return np.array([step @ right, step @ fwd, Pj[:3, 2] @ right, np.linalg.norm(step)])


def label(m, kind):
    if kind == "turn":
        return "right" if m[2] > 0 else "left"
    if abs(m[0]) > abs(m[1]):
        return "right" if m[0] > 0 else "left"
    return "forward" if m[1] > 0 else "backward"


# --- one ``answer(frames)`` per object family (written as ``def answer``; ``C`` is in every compute cell) -


def answer_distance(frames):
    return float(np.linalg.norm(C(N[0], frames) - C(N[1], frames)))


def answer_relative_direction(frames):
    a, b, c = C(N[0], frames), C(N[1], frames), C(N[2], frames)
    facing, v = (b - a)[[0, 2]], (c - a)[[0, 2]]
    return ("front" if v @ facing > 0 else "back") + "-" + ("right" if v @ right_of(facing) > 0 else "left")


def facing(name, frames, screen):
    """Where the object faces (x, z): towards its dark screen (tv) or away from its backrest (chair,
    sofa); seen only from behind, away from the cameras along its nearer footprint axis."""
    pf = object_points(seg[name], parts[name], frames)
    P = pooled(pf)
    rgb = np.concatenate([c for _, c in pf.values()])
    c, u, w, eu, ew = footprint(P)
    if screen:
        marked, sign = P[rgb.max(axis=1) < 40], 1.0
    else:
        marked, sign = P[P[:, 1] > 0.62 * np.percentile(P[:, 1], 98)], -1.0
    if len(marked) >= 8:
        off = marked[:, [0, 2]].mean(axis=0) - c
        su, sw = off @ u / max(eu, 1e-6), off @ w / max(ew, 1e-6)
        if max(abs(su), abs(sw)) > 0.08:
            return sign * (u * np.sign(su) if abs(su) >= abs(sw) else w * np.sign(sw))
    away = c - np.mean([recon.extrinsics[f][:3, 3] for f in pf], axis=0)[[0, 2]]
    axis = u if abs(away @ u) >= abs(away @ w) else w
    return axis * np.sign(away @ axis)


def answer_object_perspective(frames):
    front = facing(N[0], frames, SCREEN)
    v = (C(N[1], frames) - C(N[0], frames))[[0, 2]]
    return "right" if v @ right_of(front) > 0 else "left"


def measure(name, frames):
    P = pooled(object_points(seg[name], parts[name], frames))
    if MEASURE == "taller":
        return float(np.percentile(P[:, 1], 98))
    return float(max(footprint(P)[3:]))


def answer_size_comparison(frames):
    return N[0] if measure(N[0], frames) > measure(N[1], frames) else N[1]


def answer_closest(frames):
    a = C(N[0], frames)
    dist = {n: float(np.linalg.norm(C(n, frames) - a)) for n in N[1:]}
    return min(dist, key=dist.get)


def answer_mover_direction(frames):
    pf = object_points(seg[N[0]], parts[N[0]], frames)
    fs = sorted(pf)
    track = np.array([centre({f: pf[f]}) for f in fs])
    slope = np.polyfit(np.array(fs, dtype=float), track[:, [0, 2]], 1)[0]
    lateral, ahead = slope[0], -slope[1]  # the first camera looks along -Z, +X to its right
    if abs(lateral) > abs(ahead):
        return "right" if lateral > 0 else "left"
    return "away from the camera" if ahead > 0 else "towards the camera"


# --- counting ------------------------------------------------------------------------------------------


def footprint_box(mask, k):
    """Horizontal box (5-95 percentiles) of all confident points of object k, over every frame."""
    pf = object_points(mask, [k])
    if not pf:
        return None
    xz = pooled(pf)[:, [0, 2]]
    return np.percentile(xz, 5, axis=0), np.percentile(xz, 95, axis=0)


def count_clusters(boxes):
    """Detections whose footprints touch (gap <= COUNT_GAP) are one object; the number of objects."""
    root = list(range(len(boxes)))

    def find(i):
        while root[i] != i:
            i = root[i]
        return i

    for i in range(len(boxes)):
        for j in range(i):
            gap = np.maximum(0.0, np.maximum(boxes[i][0] - boxes[j][1], boxes[j][0] - boxes[i][1]))
            if np.linalg.norm(gap) <= COUNT_GAP:
                root[find(i)] = find(j)
    return len({find(i) for i in range(len(boxes))})
