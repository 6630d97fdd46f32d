"""Oriented rectangles on the floor plane: IOHP's penetration measure, exact overlap area and distances.

Every piece of furniture, human proxy and fixed obstacle in the IOHP chapter is an oriented rectangle on
the floor (§3.1): centre ``c = (x, y)``, size ``(w, d)`` and heading ``theta``. The owner's front
direction is ``u(theta) = (cos theta, sin theta)``, its lateral direction ``v(theta) = (-sin theta,
cos theta)``, and the footprint is ``{c + alpha v + beta u : |alpha| <= a, |beta| <= b}`` with half-extents
``a = w / 2`` (along v) and ``b = d / 2`` (along u); the front face is at ``beta = b``.

The layout objective (§3.3) needs a smooth measure of how deeply two rectangles interpenetrate (§3.4). By the
separating-axis theorem two rectangles P, Q are disjoint exactly when their shadows separate on one of the
four axes ``N = {u_P, v_P, u_Q, v_Q}``. On axis ``n`` the shadows overlap by

    delta_n = r_P(n) + r_Q(n) - |(c_Q - c_P)^T n|,      r_P(n) = a_P |v_P^T n| + b_P |u_P^T n|,

and the penetration depth is ``min_n delta_n``. §3.4 replaces the minimum by a log-sum-exp soft minimum at
temperature ``tau`` (metres) and squares its positive part:

    phi(P, Q) = relu(-tau log sum_n exp(-delta_n / tau))^2.

The soft minimum lies in ``[min_n delta_n - tau log 4, min_n delta_n]`` and decreases as ``tau`` grows, so
``phi`` is zero when the rectangles are apart or only touch, never exceeds the exact squared depth
(:func:`penetration_depth_exact`) and tends to it as ``tau -> 0``; for axis-aligned boxes that do not nest the
limit is ``min(overlap_x, overlap_y)^2``. The cross terms are written with the heading difference
``Delta = theta_Q - theta_P`` (``|u_P^T v_Q| = |sin Delta|``, ``|u_P^T u_Q| = |cos Delta|``), so a
rectangle's own axes give exactly ``a`` and ``b`` and swapping P and Q only permutes the four overlaps.

The metrics count collisions by area (pairs overlapping by more than 0.001 m^2), so :func:`overlap_area`
computes the exact intersection area in NumPy float64 by Sutherland-Hodgman clipping of one rectangle by the
other's four edges, vectorised over a batch. The functional terms of §3.3 need a point's distance to a
rectangle (``within_reach``) and to its front edge (``tucked_under``); both are exact Euclidean distances
whose gradient is zero, not NaN, where the distance is zero (a double ``where`` around the square root, no
epsilon bias). :func:`pair_penetration` evaluates ``phi`` on a padded batch of scenes for a masked list of
index pairs, which is how the objective asks only for the pairs it needs.

Corner order (:func:`corners`): back-right, front-right, front-left, back-left, i.e. ``(alpha, beta)`` =
``(-a, -b), (-a, b), (a, b), (a, -b)``; counter-clockwise in the ``(x, y)`` plane, corners 1 and 2 spanning
the front face (the order of ``layout.rectangle_corners``). Rendering with
``neurips26.world.oriented_box((x, h / 2, y), (w, h, d), 90 - degrees(theta))`` puts the box's depth axis
on ``u`` and its width axis on ``-v``, so its floor footprint is the same set.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TypeVar

import numpy as np
import torch

from neurips26.validation import check_float

ArrayT = TypeVar("ArrayT", np.ndarray, torch.Tensor)

#: Signs of ``(alpha, beta)`` for the four corners, in the documented order (counter-clockwise).
_ALPHA_SIGNS = (-1.0, -1.0, 1.0, 1.0)
_BETA_SIGNS = (-1.0, 1.0, 1.0, -1.0)

#: Vertex slots per polygon in the vectorised clipping; exact convex clipping of a 4-gon by four half-planes
#: never needs more than 8, the extra room absorbs rounding in near-degenerate cases.
_CLIP_SLOTS = 16


# ----------------------------------------------------------------------------------------------------------
# Frames and corners (NumPy or torch, whichever is passed)
# ----------------------------------------------------------------------------------------------------------


def wrap_angle(theta: float) -> float:
    """``theta`` in ``(-pi, pi]``; multiples of 90 degrees come out exact (the planners' axis headings)."""
    q = theta / (math.pi / 2.0)
    if abs(q - round(q)) < 1e-9:
        return (0.0, math.pi / 2.0, math.pi, -math.pi / 2.0)[int(round(q)) % 4]
    r = math.remainder(theta, 2.0 * math.pi)
    return math.pi if r <= -math.pi else r


def front(theta: ArrayT) -> ArrayT:
    """The front direction ``u(theta) = (cos theta, sin theta)``: shape ``theta.shape + (2,)``.

    NumPy in, NumPy out; torch in, torch out (differentiable).
    """
    if isinstance(theta, torch.Tensor):
        return torch.stack((torch.cos(theta), torch.sin(theta)), dim=-1)
    theta = np.asarray(theta, dtype=float)
    return np.stack((np.cos(theta), np.sin(theta)), axis=-1)


def side(theta: ArrayT) -> ArrayT:
    """The lateral direction ``v(theta) = (-sin theta, cos theta)``, u turned by +90 degrees: (..., 2)."""
    if isinstance(theta, torch.Tensor):
        return torch.stack((-torch.sin(theta), torch.cos(theta)), dim=-1)
    theta = np.asarray(theta, dtype=float)
    return np.stack((-np.sin(theta), np.cos(theta)), axis=-1)


def corners(center: ArrayT, size: ArrayT, theta: ArrayT) -> ArrayT:
    """The four corners of the rectangles, shape ``(..., 4, 2)`` (batch shapes broadcast).

    ``center`` (..., 2), ``size`` = full ``(w, d)`` (..., 2), ``theta`` (...). Order: back-right,
    front-right, front-left, back-left (``(alpha, beta) = (-a, -b), (-a, b), (a, b), (a, -b)``), which is
    counter-clockwise; corners 1 and 2 span the front face. Torch if any argument is a tensor, else NumPy.
    """
    if any(isinstance(t, torch.Tensor) for t in (center, size, theta)):
        center, size, theta = _tensors(("center", center), ("size", size), ("theta", theta))
        _check_vec2("center", center)
        _check_size("size", size)
        signs_a = center.new_tensor(_ALPHA_SIGNS)
        signs_b = center.new_tensor(_BETA_SIGNS)
    else:
        center = np.asarray(center, dtype=float)
        size = np.asarray(size, dtype=float)
        theta = np.asarray(theta, dtype=float)
        _check_vec2("center", center)
        _check_size("size", size)
        signs_a = np.asarray(_ALPHA_SIGNS)
        signs_b = np.asarray(_BETA_SIGNS)
    _check_batch(("center", center.shape[:-1]), ("size", size.shape[:-1]), ("theta", tuple(theta.shape)))
    u, v = front(theta), side(theta)
    alpha = signs_a * (size[..., 0:1] / 2)  # (..., 4)
    beta = signs_b * (size[..., 1:2] / 2)
    return center[..., None, :] + alpha[..., None] * v[..., None, :] + beta[..., None] * u[..., None, :]


# ----------------------------------------------------------------------------------------------------------
# Penetration measure (torch, differentiable)
# ----------------------------------------------------------------------------------------------------------


def axis_overlaps(
    center_p: torch.Tensor,
    size_p: torch.Tensor,
    theta_p: torch.Tensor,
    center_q: torch.Tensor,
    size_q: torch.Tensor,
    theta_q: torch.Tensor,
) -> torch.Tensor:
    """The separating-axis overlaps ``delta_n`` on ``(u_P, v_P, u_Q, v_Q)``: shape ``(..., 4)``.

    Centres (..., 2), sizes ``(w, d)`` (..., 2), headings (...); batch shapes broadcast. ``delta_n > 0`` on
    every axis exactly when the rectangles overlap; the largest negative one is the gap between them.
    """
    cp, sp, tp, cq, sq, tq = _pair_inputs(center_p, size_p, theta_p, center_q, size_q, theta_q)
    return _axis_overlaps(cp, sp, tp, cq, sq, tq)


def penetration(
    center_p: torch.Tensor,
    size_p: torch.Tensor,
    theta_p: torch.Tensor,
    center_q: torch.Tensor,
    size_q: torch.Tensor,
    theta_q: torch.Tensor,
    tau: float,
) -> torch.Tensor:
    """``phi(P, Q) = relu(-tau log sum_n exp(-delta_n / tau))^2`` (§3.4): shape = the broadcast batch.

    Differentiable in every argument and NaN-free everywhere (the absolute values and the relu have
    subgradient 0 at their kinks; log-sum-exp is evaluated stably). ``tau`` > 0 in metres. Array-likes are
    converted to the dtype of the tensor arguments (float32 and float64 both work).
    """
    tau = check_float("tau", tau, minimum=0.0, strict_min=True)
    delta = axis_overlaps(center_p, size_p, theta_p, center_q, size_q, theta_q)
    soft_min = -tau * torch.logsumexp(-delta / tau, dim=-1)
    return torch.relu(soft_min) ** 2


def penetration_depth_exact(
    center_p: torch.Tensor,
    size_p: torch.Tensor,
    theta_p: torch.Tensor,
    center_q: torch.Tensor,
    size_q: torch.Tensor,
    theta_q: torch.Tensor,
) -> torch.Tensor:
    """The ``tau -> 0`` limit of :func:`penetration`: ``relu(min_n delta_n)^2``; the broadcast batch."""
    delta = axis_overlaps(center_p, size_p, theta_p, center_q, size_q, theta_q)
    return torch.relu(delta.min(dim=-1).values) ** 2


def pair_penetration(
    center: torch.Tensor,
    size: torch.Tensor,
    theta: torch.Tensor,
    pairs: torch.Tensor,
    pair_mask: torch.Tensor | None,
    tau: float,
) -> torch.Tensor:
    """``phi`` for a masked list of index pairs in a padded batch of scenes: shape ``(B, P)``.

    ``center`` (B, n, 2), ``size`` (B, n, 2), ``theta`` (B, n): the rectangles of B scenes padded to n (put
    objects, proxies and obstacles in one padded list). ``pairs`` (P, 2) shared by all scenes, or (B, P, 2)
    per scene: integer indices into n. ``pair_mask`` (B, P) or (P,) bool, True for pairs that exist; None
    means all. Masked pairs give exactly 0 and pass no gradient; the rectangles they index may be padding
    with any finite or zero size (only sizes of unmasked pairs are checked).
    """
    tau = check_float("tau", tau, minimum=0.0, strict_min=True)
    center, size, theta = _tensors(("center", center), ("size", size), ("theta", theta))
    if center.ndim != 3 or center.shape[-1] != 2:
        raise ValueError(f"center must have shape (B, n, 2); got {tuple(center.shape)}")
    batch, n = center.shape[0], center.shape[1]
    if tuple(size.shape) != (batch, n, 2):
        raise ValueError(f"size must have shape {(batch, n, 2)} like center; got {tuple(size.shape)}")
    if tuple(theta.shape) != (batch, n):
        raise ValueError(f"theta must have shape {(batch, n)}; got {tuple(theta.shape)}")
    pairs = torch.as_tensor(pairs, device=center.device)
    if pairs.dtype.is_floating_point or pairs.dtype.is_complex or pairs.dtype == torch.bool:
        raise TypeError(f"pairs must hold integer indices; got dtype {pairs.dtype}")
    pairs = pairs.long()
    if pairs.ndim == 2 and pairs.shape[-1] == 2:
        pairs = pairs.unsqueeze(0).expand(batch, -1, -1)
    elif not (pairs.ndim == 3 and pairs.shape[0] == batch and pairs.shape[-1] == 2):
        raise ValueError(f"pairs must have shape (P, 2) or ({batch}, P, 2); got {tuple(pairs.shape)}")
    n_pairs = pairs.shape[1]
    if pairs.numel() and (int(pairs.min()) < 0 or int(pairs.max()) >= n):
        raise ValueError(
            f"pairs must index rectangles in [0, {n}); got values in [{pairs.min()}, {pairs.max()}]"
        )
    if pair_mask is None:
        mask = torch.ones(batch, n_pairs, dtype=torch.bool, device=center.device)
    else:
        mask = torch.as_tensor(pair_mask, device=center.device)
        if mask.dtype != torch.bool:
            raise TypeError(f"pair_mask must be a bool tensor; got dtype {mask.dtype}")
        if tuple(mask.shape) == (n_pairs,):
            mask = mask.unsqueeze(0).expand(batch, -1)
        elif tuple(mask.shape) != (batch, n_pairs):
            raise ValueError(
                f"pair_mask must have shape ({batch}, {n_pairs}) or ({n_pairs},); got {tuple(mask.shape)}"
            )

    rows = torch.arange(batch, device=center.device)[:, None]
    i, j = pairs[..., 0], pairs[..., 1]
    m2 = mask[..., None]
    # Masked pairs see two unit squares at the origin: finite values whose gradient is then discarded.
    cp = torch.where(m2, center[rows, i], 0.0)
    cq = torch.where(m2, center[rows, j], 0.0)
    sp = torch.where(m2, size[rows, i], 1.0)
    sq = torch.where(m2, size[rows, j], 1.0)
    tp = torch.where(mask, theta[rows, i], 0.0)
    tq = torch.where(mask, theta[rows, j], 0.0)
    if not bool(((sp > 0) & (sq > 0)).all()):
        raise ValueError("size must be > 0 for every rectangle in an unmasked pair")
    delta = _axis_overlaps(cp, sp, tp, cq, sq, tq)
    phi = torch.relu(-tau * torch.logsumexp(-delta / tau, dim=-1)) ** 2
    return torch.where(mask, phi, torch.zeros((), dtype=phi.dtype, device=phi.device))


def _axis_overlaps(
    cp: torch.Tensor, sp: torch.Tensor, tp: torch.Tensor, cq: torch.Tensor, sq: torch.Tensor, tq: torch.Tensor
) -> torch.Tensor:
    """The four SAT overlaps on already validated tensors (no checks): ``(..., 4)``."""
    a_p, b_p = sp[..., 0] / 2, sp[..., 1] / 2
    a_q, b_q = sq[..., 0] / 2, sq[..., 1] / 2
    diff = tq - tp
    cos_abs, sin_abs = torch.abs(torch.cos(diff)), torch.abs(torch.sin(diff))
    d = cq - cp
    u_p, v_p, u_q, v_q = front(tp), side(tp), front(tq), side(tq)

    def proj(n: torch.Tensor) -> torch.Tensor:
        return torch.abs((d * n).sum(dim=-1))

    delta = (
        b_p + a_q * sin_abs + b_q * cos_abs - proj(u_p),  # axis u_P
        a_p + a_q * cos_abs + b_q * sin_abs - proj(v_p),  # axis v_P
        b_q + a_p * sin_abs + b_p * cos_abs - proj(u_q),  # axis u_Q
        a_q + a_p * cos_abs + b_p * sin_abs - proj(v_q),  # axis v_Q
    )
    return torch.stack(torch.broadcast_tensors(*delta), dim=-1)


# ----------------------------------------------------------------------------------------------------------
# Distances (torch, differentiable)
# ----------------------------------------------------------------------------------------------------------


def point_rectangle_distance(
    point: torch.Tensor, center: torch.Tensor, size: torch.Tensor, theta: torch.Tensor
) -> torch.Tensor:
    """Euclidean distance from ``point`` to the rectangle (0 inside or on it): shape = the broadcast batch.

    ``point`` (..., 2), ``center`` (..., 2), ``size`` (w, d) (..., 2), ``theta`` (...). In the rectangle's
    frame the excess beyond each half-extent is clamped at 0 and the two excesses are combined by a norm.
    The gradient is exact outside and 0 (never NaN) where the distance is 0.
    """
    alpha, beta, size = _checked_local(point, center, size, theta)
    ex_a = torch.relu(torch.abs(alpha) - size[..., 0] / 2)
    ex_b = torch.relu(torch.abs(beta) - size[..., 1] / 2)
    return _safe_norm(ex_a, ex_b)


def front_edge_distance(
    point: torch.Tensor, center: torch.Tensor, size: torch.Tensor, theta: torch.Tensor
) -> torch.Tensor:
    """Distance from ``point`` to the front edge segment ``{beta = d/2, |alpha| <= w/2}``: the batch shape.

    Shapes as in :func:`point_rectangle_distance`. Used by ``tucked_under`` (a chair's front at a table's
    edge). Exact distance to the segment from either side; gradient 0, not NaN, on the segment.
    """
    alpha, beta, size = _checked_local(point, center, size, theta)
    ex_a = torch.relu(torch.abs(alpha) - size[..., 0] / 2)
    return _safe_norm(ex_a, beta - size[..., 1] / 2)


def _checked_local(
    point: torch.Tensor, center: torch.Tensor, size: torch.Tensor, theta: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Validate a point-rectangle query; ``(alpha, beta, size)``: the point in the rectangle's frame."""
    point, center, size, theta = _tensors(
        ("point", point), ("center", center), ("size", size), ("theta", theta)
    )
    _check_vec2("point", point)
    _check_vec2("center", center)
    _check_size("size", size)
    _check_batch(
        ("point", tuple(point.shape[:-1])),
        ("center", tuple(center.shape[:-1])),
        ("size", tuple(size.shape[:-1])),
        ("theta", tuple(theta.shape)),
    )
    alpha, beta = _local(point, center, theta)
    return alpha, beta, size


def _local(
    point: torch.Tensor, center: torch.Tensor, theta: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(alpha, beta)``: the point's coordinates along ``v`` and ``u`` of the rectangle's frame."""
    rel = point - center
    alpha = (rel * side(theta)).sum(dim=-1)
    beta = (rel * front(theta)).sum(dim=-1)
    return alpha, beta


def _safe_norm(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``sqrt(x^2 + y^2)`` with gradient 0 at the origin: the root only ever sees a positive argument."""
    sq = x * x + y * y
    positive = sq > 0
    root = torch.sqrt(torch.where(positive, sq, torch.ones_like(sq)))
    return torch.where(positive, root, torch.zeros_like(sq))


# ----------------------------------------------------------------------------------------------------------
# Exact overlap area (NumPy float64)
# ----------------------------------------------------------------------------------------------------------


def overlap_area(
    center_p: np.ndarray,
    size_p: np.ndarray,
    theta_p: np.ndarray,
    center_q: np.ndarray,
    size_q: np.ndarray,
    theta_q: np.ndarray,
) -> np.ndarray:
    """The exact area of ``P ∩ Q`` in m^2, float64, shape = the broadcast batch (0-d for single rectangles).

    Centres (..., 2), sizes ``(w, d)`` (..., 2), headings (...); NumPy arrays, array-likes or tensors.
    Computed by clipping P's corner polygon by Q's four edges (Sutherland-Hodgman, vectorised over the
    batch) in coordinates relative to ``c_P``, then the shoelace formula.
    """
    named = {
        "center_p": center_p,
        "size_p": size_p,
        "theta_p": theta_p,
        "center_q": center_q,
        "size_q": size_q,
        "theta_q": theta_q,
    }
    arrays = {name: _as_float64(name, value) for name, value in named.items()}
    for name in ("center_p", "center_q"):
        _check_vec2(name, arrays[name])
    for name in ("size_p", "size_q"):
        _check_size(name, arrays[name])
    cp, sp, tp, cq, sq, tq = (arrays[k] for k in named)
    shape = _check_batch(
        ("center_p", cp.shape[:-1]),
        ("size_p", sp.shape[:-1]),
        ("theta_p", tp.shape),
        ("center_q", cq.shape[:-1]),
        ("size_q", sq.shape[:-1]),
        ("theta_q", tq.shape),
    )
    poly_p = corners(np.zeros(2), sp, tp)  # P relative to its own centre
    poly_q = corners(cq - cp, sq, tq)
    poly_p = np.broadcast_to(poly_p, (*shape, 4, 2)).reshape(-1, 4, 2)
    poly_q = np.broadcast_to(poly_q, (*shape, 4, 2)).reshape(-1, 4, 2)
    return _clipped_area(poly_p, poly_q).reshape(shape)


def _clipped_area(subject: np.ndarray, clip: np.ndarray) -> np.ndarray:
    """Area of ``subject ∩ clip`` for (N, 4, 2) counter-clockwise convex quadrilaterals: (N,)."""
    n = subject.shape[0]
    slots = np.arange(_CLIP_SLOTS)
    poly = np.zeros((n, _CLIP_SLOTS, 2))
    poly[:, :4] = subject
    count = np.full(n, 4)
    for k in range(4):
        q0 = clip[:, k][:, None, :]  # (N, 1, 2)
        edge = clip[:, (k + 1) % 4][:, None, :] - q0
        valid = slots[None, :] < count[:, None]
        nxt = np.where(slots[None, :] + 1 < count[:, None], slots[None, :] + 1, 0)
        p_next = np.take_along_axis(poly, nxt[..., None], axis=1)
        s_here = _cross(edge, poly - q0)  # >= 0: on the inner (left) side of the clip edge
        s_next = np.take_along_axis(s_here, nxt, axis=1)
        in_here, in_next = s_here >= 0, s_next >= 0
        emit_vertex = valid & in_here
        emit_cross = valid & (in_here != in_next)
        denom = np.where(emit_cross, s_here - s_next, 1.0)
        t = np.where(emit_cross, s_here / denom, 0.0)
        crossing = poly + t[..., None] * (p_next - poly)
        candidates = np.stack((poly, crossing), axis=2).reshape(n, 2 * _CLIP_SLOTS, 2)
        keep = np.stack((emit_vertex, emit_cross), axis=2).reshape(n, 2 * _CLIP_SLOTS)
        order = np.argsort(~keep, axis=1, kind="stable")[:, :_CLIP_SLOTS]
        poly = np.take_along_axis(candidates, order[..., None], axis=1)
        count = np.minimum(keep.sum(axis=1), _CLIP_SLOTS)
    valid = slots[None, :] < count[:, None]
    nxt = np.where(slots[None, :] + 1 < count[:, None], slots[None, :] + 1, 0)
    p_next = np.take_along_axis(poly, nxt[..., None], axis=1)
    twice = np.where(valid, _cross(poly, p_next), 0.0).sum(axis=1)
    return np.maximum(twice / 2.0, 0.0)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The z component of the 2-D cross product ``a x b`` over the last axis."""
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


# ----------------------------------------------------------------------------------------------------------
# Input handling
# ----------------------------------------------------------------------------------------------------------


def _tensors(*named: tuple[str, object]) -> list[torch.Tensor]:
    """Tensors on one device and one floating dtype (promoted from the tensor arguments, else the default)."""
    given = [v for _, v in named if isinstance(v, torch.Tensor)]
    dtype = functools.reduce(torch.promote_types, [t.dtype for t in given]) if given else None
    if dtype is None or not dtype.is_floating_point:
        dtype = torch.get_default_dtype()
    device = given[0].device if given else torch.device("cpu")
    out = []
    for name, value in named:
        try:
            out.append(torch.as_tensor(value, dtype=dtype, device=device))
        except (TypeError, ValueError, RuntimeError) as err:
            raise TypeError(
                f"{name} must be a tensor or array-like of numbers; got {type(value).__name__}"
            ) from err
    return out


def _as_float64(name: str, value: object) -> np.ndarray:
    """A float64 NumPy array from an array-like or a tensor; finite values only."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be an array-like of real numbers; got {type(value).__name__}") from err
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return array


def _check_vec2(name: str, value: np.ndarray | torch.Tensor) -> None:
    """``value`` has a last axis of length 2 (a floor point or vector)."""
    if value.ndim < 1 or value.shape[-1] != 2:
        raise ValueError(f"{name} must have shape (..., 2); got {tuple(value.shape)}")


def _check_size(name: str, value: np.ndarray | torch.Tensor) -> None:
    """``value`` is a (..., 2) array of strictly positive, finite sizes ``(w, d)``."""
    _check_vec2(name, value)
    if isinstance(value, torch.Tensor):
        ok = bool(((value > 0) & torch.isfinite(value)).all())
    else:
        ok = bool(np.all((value > 0) & np.isfinite(value)))
    if not ok:
        raise ValueError(f"{name} must hold finite sizes (w, d) > 0")


def _check_batch(*named: tuple[str, Sequence[int]]) -> tuple[int, ...]:
    """The broadcast of the named batch shapes; ValueError naming the first one that does not broadcast."""
    shape: tuple[int, ...] = ()
    for name, batch in named:
        try:
            shape = tuple(np.broadcast_shapes(shape, tuple(batch)))
        except ValueError as err:
            raise ValueError(
                f"{name} has batch shape {tuple(batch)}, which does not broadcast with {shape} "
                "of the arguments before it"
            ) from err
    return shape


def _pair_inputs(
    center_p: object, size_p: object, theta_p: object, center_q: object, size_q: object, theta_q: object
) -> list[torch.Tensor]:
    """Validated tensors for a pair of rectangle batches (shapes, positive sizes)."""
    cp, sp, tp, cq, sq, tq = _tensors(
        ("center_p", center_p),
        ("size_p", size_p),
        ("theta_p", theta_p),
        ("center_q", center_q),
        ("size_q", size_q),
        ("theta_q", theta_q),
    )
    _check_vec2("center_p", cp)
    _check_vec2("center_q", cq)
    _check_size("size_p", sp)
    _check_size("size_q", sq)
    _check_batch(
        ("center_p", tuple(cp.shape[:-1])),
        ("size_p", tuple(sp.shape[:-1])),
        ("theta_p", tuple(tp.shape)),
        ("center_q", tuple(cq.shape[:-1])),
        ("size_q", tuple(sq.shape[:-1])),
        ("theta_q", tuple(tq.shape)),
    )
    return [cp, sp, tp, cq, sq, tq]


__all__ = [
    "wrap_angle",
    "axis_overlaps",
    "corners",
    "front",
    "front_edge_distance",
    "overlap_area",
    "pair_penetration",
    "penetration",
    "penetration_depth_exact",
    "point_rectangle_distance",
    "side",
]
