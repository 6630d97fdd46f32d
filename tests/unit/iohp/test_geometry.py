"""Oriented-rectangle geometry: SAT penetration invariants, exact overlap area, distances, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from neurips26.iohp.geometry import (
    axis_overlaps,
    corners,
    front,
    front_edge_distance,
    overlap_area,
    pair_penetration,
    penetration,
    penetration_depth_exact,
    point_rectangle_distance,
    side,
)
from neurips26.world import oriented_box
from tests.unit.one_thread import one_thread  # noqa: F401  (autouse: one torch thread per test)

F64 = torch.float64


def _t(x) -> torch.Tensor:
    return torch.tensor(np.array(x, dtype=float), dtype=F64)


def _random_rects(rng: np.random.Generator, n: int, spread: float = 1.0) -> tuple[np.ndarray, ...]:
    """n random rectangles: centres within ``spread``, sizes in [0.3, 2] m, any heading."""
    center = rng.uniform(-spread, spread, size=(n, 2))
    size = rng.uniform(0.3, 2.0, size=(n, 2))
    theta = rng.uniform(-math.pi, math.pi, size=n)
    return center, size, theta


def _overlapping_pairs(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    """n pairs with centres closer than 0.1 m and half-extents >= 0.15 m: every axis overlaps by >= 0.2 m."""
    cp, sp, tp = _random_rects(rng, n)
    cq = cp + rng.uniform(-0.07, 0.07, size=(n, 2))
    _, sq, tq = _random_rects(rng, n)
    return cp, sp, tp, cq, sq, tq


def _rotate(points: np.ndarray, angle: float, pivot: np.ndarray, shift: np.ndarray) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    rot = np.array([[c, -s], [s, c]])
    return (points - pivot) @ rot.T + pivot + shift


# ----------------------------------------------------------------------------------------------------------
# Frames and corners
# ----------------------------------------------------------------------------------------------------------


def test_front_and_side_are_an_orthonormal_right_handed_frame_in_numpy_and_torch():
    theta = np.linspace(-4, 4, 17)
    for u, v in ((front(theta), side(theta)), (front(_t(theta)).numpy(), side(_t(theta)).numpy())):
        np.testing.assert_allclose(np.sum(u * u, -1), 1.0, atol=1e-15)
        np.testing.assert_allclose(np.sum(u * v, -1), 0.0, atol=1e-15)
        np.testing.assert_allclose(u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0], 1.0, atol=1e-15)  # v = u turned +90
    np.testing.assert_allclose(front(0.0), [1.0, 0.0])
    np.testing.assert_allclose(side(0.0), [0.0, 1.0])


def test_corners_order_is_counter_clockwise_with_the_front_face_second():
    rng = np.random.default_rng(0)
    center, size, theta = _random_rects(rng, 20)
    c = corners(center, size, theta)
    assert c.shape == (20, 4, 2)
    nxt = np.roll(c, -1, axis=1)
    area = 0.5 * np.sum(c[..., 0] * nxt[..., 1] - c[..., 1] * nxt[..., 0], axis=1)
    np.testing.assert_allclose(area, size[:, 0] * size[:, 1], rtol=1e-12)  # CCW: positive shoelace area
    u, v = front(theta), side(theta)
    beta = np.einsum("nkj,nj->nk", c - center[:, None], u)
    alpha = np.einsum("nkj,nj->nk", c - center[:, None], v)
    np.testing.assert_allclose(beta, size[:, 1:2] / 2 * np.array([-1, 1, 1, -1]), atol=1e-12)
    np.testing.assert_allclose(alpha, size[:, 0:1] / 2 * np.array([-1, -1, 1, 1]), atol=1e-12)
    # The torch path gives the same corners and keeps the graph.
    tc = corners(_t(center), _t(size), _t(theta).requires_grad_())
    np.testing.assert_allclose(tc.detach().numpy(), c, atol=1e-14)
    assert tc.requires_grad


@pytest.mark.parametrize("theta", [0.0, 0.4, math.pi / 2, 2.5, -1.2])
def test_rendered_box_footprint_equals_geometry_corners(theta):
    center, size, height = np.array([1.3, -0.7]), np.array([1.6, 0.9]), 0.8
    box = oriented_box(
        (center[0], height / 2, center[1]), (size[0], height, size[1]), 90.0 - math.degrees(theta)
    )
    world = box.corners()
    floor = world[world[:, 1] < height / 2][:, [0, 2]]  # the four bottom corners, world (X, Z) = floor (x, y)
    mine = corners(center, size, theta)
    key = lambda p: tuple(np.round(p, 9))  # noqa: E731
    assert sorted(map(key, floor)) == sorted(map(key, mine))
    # And the box's depth axis (local +Z) is the front direction u.
    np.testing.assert_allclose(box.rotation_matrix[[0, 2], 2], front(theta), atol=1e-12)


# ----------------------------------------------------------------------------------------------------------
# Penetration measure phi
# ----------------------------------------------------------------------------------------------------------


def test_phi_is_symmetric():
    rng = np.random.default_rng(1)
    cp, sp, tp = _random_rects(rng, 200)
    cq, sq, tq = _random_rects(rng, 200)
    args_pq = [_t(a) for a in (cp, sp, tp, cq, sq, tq)]
    args_qp = [_t(a) for a in (cq, sq, tq, cp, sp, tp)]
    for tau in (0.05, 0.005):
        a, b = penetration(*args_pq, tau=tau), penetration(*args_qp, tau=tau)
        assert (a > 0).sum() > 50  # the test sees many overlapping pairs
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-15)
    torch.testing.assert_close(penetration_depth_exact(*args_pq), penetration_depth_exact(*args_qp))


def test_phi_is_zero_for_clearly_separated_rectangles_at_any_tau():
    rng = np.random.default_rng(2)
    cp, sp, tp = _random_rects(rng, 100)
    _, sq, tq = _random_rects(rng, 100)
    direction = front(rng.uniform(0, 2 * math.pi, 100))
    reach = np.linalg.norm(sp, axis=1) / 2 + np.linalg.norm(sq, axis=1) / 2  # sum of circumradii
    cq = cp + direction * (reach + rng.uniform(0.01, 1.0, 100))[:, None]
    for tau in (1.0, 0.05, 1e-4):
        phi = penetration(_t(cp), _t(sp), _t(tp), _t(cq), _t(sq), _t(tq), tau=tau)
        assert torch.all(phi == 0)


@pytest.mark.parametrize("angle", [0.0, 0.3, 2.0])
def test_phi_is_zero_for_touching_rectangles_at_small_tau(angle):
    # Side by side along x, then share a face along y, then corner to corner: all rotated by a common angle.
    pivot = np.array([0.2, -0.1])
    cases = [([0, 0], [1.0, 2.0], [1.5, 0.3], [1.0, 1.0]), ([0, 0], [2.0, 1.0], [0.4, 1.5], [1.0, 1.0])]
    cases.append(([0, 0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0]))
    for cp, sp, cq, sq in cases:
        cp2, cq2 = _rotate(np.array([cp, cq], dtype=float), angle, pivot, np.zeros(2))
        for tau in (1e-3, 1e-4):
            phi = penetration(_t(cp2), _t(sp), _t(angle), _t(cq2), _t(sq), _t(angle), tau=tau)
            assert float(phi) == 0.0
        # Exact depth is zero up to rounding of the rotation.
        assert float(penetration_depth_exact(_t(cp2), _t(sp), _t(angle), _t(cq2), _t(sq), _t(angle))) < 1e-28


def test_phi_is_positive_when_overlapping():
    rng = np.random.default_rng(3)
    args = [_t(a) for a in _overlapping_pairs(rng, 200)]
    assert torch.all(axis_overlaps(*args) >= 0.2)
    for tau in (0.05, 0.005):
        phi = penetration(*args, tau=tau)
        assert torch.all(phi >= (0.2 - tau * math.log(4)) ** 2)


def test_phi_is_invariant_under_a_common_rigid_motion():
    rng = np.random.default_rng(4)
    cp, sp, tp = _random_rects(rng, 300)
    cq, sq, tq = _random_rects(rng, 300)
    before = penetration(*[_t(a) for a in (cp, sp, tp, cq, sq, tq)], tau=0.02)
    assert (before > 0).sum() > 50
    for _ in range(5):
        angle = rng.uniform(-math.pi, math.pi)
        pivot, shift = rng.normal(size=2), rng.normal(size=2) * 3
        cp2, cq2 = _rotate(cp, angle, pivot, shift), _rotate(cq, angle, pivot, shift)
        after = penetration(*[_t(a) for a in (cp2, sp, tp + angle, cq2, sq, tq + angle)], tau=0.02)
        torch.testing.assert_close(after, before, rtol=1e-9, atol=1e-12)


def test_phi_is_invariant_to_half_turns_and_to_quarter_turns_with_swapped_size():
    rng = np.random.default_rng(5)
    cp, sp, tp = _random_rects(rng, 200, spread=0.8)
    cq, sq, tq = _random_rects(rng, 200, spread=0.8)
    base = penetration(*[_t(a) for a in (cp, sp, tp, cq, sq, tq)], tau=0.01)
    half = penetration(*[_t(a) for a in (cp, sp, tp + math.pi, cq, sq, tq - math.pi)], tau=0.01)
    quarter = penetration(*[_t(a) for a in (cp, sp[:, ::-1], tp + math.pi / 2, cq, sq, tq)], tau=0.01)
    torch.testing.assert_close(half, base, rtol=1e-9, atol=1e-12)
    torch.testing.assert_close(quarter, base, rtol=1e-9, atol=1e-12)


def test_phi_tends_to_min_overlap_squared_for_axis_aligned_non_nested_boxes():
    rng = np.random.default_rng(6)
    n = 300
    sp, sq = rng.uniform(0.4, 2.0, (n, 2)), rng.uniform(0.4, 2.0, (n, 2))
    # |dx| in (|wp - wq| / 2, (wp + wq) / 2): neither interval contains the other, and they overlap.
    lo, hi = np.abs(sp - sq) / 2 + 0.01, (sp + sq) / 2 - 0.01
    offset = rng.uniform(lo, hi) * rng.choice([-1.0, 1.0], (n, 2))
    cp = rng.normal(size=(n, 2))
    cq = cp + offset
    left, right = np.maximum(cp - sp / 2, cq - sq / 2), np.minimum(cp + sp / 2, cq + sq / 2)
    m = np.min(right - left, axis=1)  # min(overlap_x, overlap_y)
    zeros = np.zeros(n)
    # With theta = 0, (w, d) lies along (y, x); pass sizes as (w, d) = (extent_y, extent_x).
    args = [_t(a) for a in (cp, sp[:, ::-1], zeros, cq, sq[:, ::-1], zeros)]
    np.testing.assert_allclose(penetration_depth_exact(*args).numpy(), m**2, rtol=1e-12)
    tau = 1e-4
    soft = torch.sqrt(penetration(*args, tau=tau)).numpy()
    # The soft minimum lies in [min - tau log 4, min] (four terms in the log-sum-exp): a proven bound.
    assert np.all(soft <= m + 1e-12)
    assert np.all(soft >= m - tau * math.log(4) - 1e-12)
    np.testing.assert_allclose(
        penetration(*args, tau=tau).numpy(), m**2, atol=2 * m.max() * tau * math.log(4)
    )


def test_phi_never_exceeds_the_exact_depth_and_decreases_with_tau():
    rng = np.random.default_rng(7)
    args = [_t(a) for a in (*_random_rects(rng, 300), *_random_rects(rng, 300))]
    exact = penetration_depth_exact(*args)
    previous = exact
    for tau in (1e-4, 1e-3, 1e-2, 5e-2, 0.2):
        phi = penetration(*args, tau=tau)
        assert torch.all(phi <= previous + 1e-15)
        previous = phi
    torch.testing.assert_close(penetration(*args, tau=1e-6), exact, atol=1e-5, rtol=0)


def test_phi_gradient_matches_central_finite_differences():
    rng = np.random.default_rng(8)
    cp, sp, tp, cq, sq, tq = _overlapping_pairs(rng, 6)
    inputs = tuple(_t(a).requires_grad_() for a in (cp, tp, cq, tq, sp, sq))

    def phi(cp_, tp_, cq_, tq_, sp_, sq_):
        return penetration(cp_, sp_, tp_, cq_, sq_, tq_, tau=0.05)

    assert torch.autograd.gradcheck(phi, inputs, eps=1e-6, atol=1e-10, rtol=1e-5)

    # Also by hand, for one pair: the relative error of the full (x, y, theta) gradient of both rectangles.
    pose = _t(np.concatenate([cp[0], [tp[0]], cq[0], [tq[0]]])).requires_grad_()

    def f(z):
        return penetration(z[0:2], _t(sp[0]), z[2], z[3:5], _t(sq[0]), z[5], tau=0.05)

    (grad,) = torch.autograd.grad(f(pose), pose)
    h = 1e-6
    fd = torch.stack(
        [(f(pose.detach() + h * e) - f(pose.detach() - h * e)) / (2 * h) for e in torch.eye(6, dtype=F64)]
    )
    assert float(torch.linalg.norm(grad - fd) / torch.linalg.norm(fd)) < 1e-5


def test_phi_gradient_is_finite_at_degenerate_configurations():
    # Identical, concentric, axis-aligned rectangles: every |.| in the formula sits at its kink.
    c = torch.zeros(2, dtype=F64, requires_grad=True)
    t = torch.zeros((), dtype=F64, requires_grad=True)
    s = _t([1.0, 0.5])
    for tau in (0.05, 1e-4):
        value = penetration(c, s, t, torch.zeros(2, dtype=F64), s, torch.zeros((), dtype=F64), tau=tau)
        grads = torch.autograd.grad(value, (c, t))
        assert all(torch.isfinite(g).all() for g in grads)


def test_phi_works_in_float32_and_broadcasts_batch_shapes():
    rng = np.random.default_rng(9)
    cp, sp, tp = _random_rects(rng, 5)
    cq, sq, tq = _random_rects(rng, 7)
    f64 = penetration(
        _t(cp)[:, None], _t(sp)[:, None], _t(tp)[:, None], _t(cq)[None], _t(sq)[None], _t(tq)[None], tau=0.05
    )
    f32 = penetration(
        *(torch.as_tensor(a, dtype=torch.float32)[:, None] for a in (cp, sp, tp)),
        *(torch.as_tensor(a, dtype=torch.float32)[None] for a in (cq, sq, tq)),
        tau=0.05,
    )
    assert f64.shape == f32.shape == (5, 7)
    assert f32.dtype == torch.float32
    torch.testing.assert_close(f32.double(), f64, rtol=1e-4, atol=1e-6)
    # One shared size for all rectangles broadcasts too.
    shared = penetration(_t(cp), _t([1.0, 1.0]), _t(tp), _t(cq[:5]), _t([1.0, 1.0]), _t(tq[:5]), tau=0.05)
    each = penetration(
        _t(cp),
        torch.ones(5, 2, dtype=F64),
        _t(tp),
        _t(cq[:5]),
        torch.ones(5, 2, dtype=F64),
        _t(tq[:5]),
        tau=0.05,
    )
    torch.testing.assert_close(shared, each)


# ----------------------------------------------------------------------------------------------------------
# Pairwise helper
# ----------------------------------------------------------------------------------------------------------


def _padded_batch(rng: np.random.Generator, batch: int = 3, n: int = 6):
    center = rng.uniform(-1.0, 1.0, (batch, n, 2))
    size = rng.uniform(0.4, 1.5, (batch, n, 2))
    theta = rng.uniform(-math.pi, math.pi, (batch, n))
    size[0, -2:] = 0.0  # padding in scene 0: zero-size rectangles that only masked pairs touch
    return _t(center), _t(size), _t(theta)


def test_pair_penetration_equals_the_per_pair_function_and_zeroes_masked_pairs():
    rng = np.random.default_rng(10)
    center, size, theta = _padded_batch(rng)
    pairs = torch.tensor([(i, j) for i in range(6) for j in range(i + 1, 6)])
    mask = torch.ones(3, len(pairs), dtype=torch.bool)
    mask[0] = (pairs[:, 0] < 4) & (pairs[:, 1] < 4)  # scene 0 has 4 real rectangles
    mask[2, ::3] = False
    out = pair_penetration(center, size, theta, pairs, mask, tau=0.03)
    assert out.shape == (3, len(pairs))
    assert (out[mask] > 0).sum() > 5
    for b in range(3):
        for p, (i, j) in enumerate(pairs.tolist()):
            if not mask[b, p]:
                assert float(out[b, p]) == 0.0
                continue
            ref = penetration(
                center[b, i], size[b, i], theta[b, i], center[b, j], size[b, j], theta[b, j], 0.03
            )
            torch.testing.assert_close(out[b, p], ref, rtol=1e-12, atol=1e-15)
    # Per-scene pair lists (B, P, 2) give the same values.
    per_scene = pair_penetration(center, size, theta, pairs.expand(3, -1, -1), mask, tau=0.03)
    torch.testing.assert_close(per_scene, out)


def test_pair_penetration_gradient_is_finite_and_ignores_padding():
    rng = np.random.default_rng(11)
    center, size, theta = _padded_batch(rng)
    center[0, 4:] = float("nan")  # padding may hold anything, even NaN poses
    theta[0, 4:] = float("inf")
    center.requires_grad_()
    theta.requires_grad_()
    pairs = torch.tensor([(0, 1), (0, 4), (4, 5), (2, 3)])
    mask = torch.tensor([[True, False, False, True]] * 3)
    out = pair_penetration(center, size, theta, pairs, mask, tau=0.03)
    assert torch.isfinite(out).all()
    gc, gt = torch.autograd.grad(out.sum(), (center, theta))
    assert torch.isfinite(gc).all() and torch.isfinite(gt).all()
    assert torch.all(gc[:, 4:] == 0) and torch.all(gt[:, 4:] == 0)
    assert torch.any(gc[:, :4] != 0)


# ----------------------------------------------------------------------------------------------------------
# Exact overlap area
# ----------------------------------------------------------------------------------------------------------


def test_overlap_area_of_axis_aligned_boxes_is_the_product_of_interval_overlaps():
    rng = np.random.default_rng(12)
    n = 400
    cp, cq = rng.uniform(-1, 1, (n, 2)), rng.uniform(-1, 1, (n, 2))
    ep, eq = rng.uniform(0.2, 2.0, (n, 2)), rng.uniform(0.2, 2.0, (n, 2))  # extents along (x, y)
    left, right = np.maximum(cp - ep / 2, cq - eq / 2), np.minimum(cp + ep / 2, cq + eq / 2)
    expected = np.prod(np.clip(right - left, 0, None), axis=1)  # nested boxes included
    quarter = np.full(n, math.pi / 2)  # theta = pi/2 puts w along -x and d along y
    got0 = overlap_area(cp, ep[:, ::-1], np.zeros(n), cq, eq[:, ::-1], np.zeros(n))
    got90 = overlap_area(cp, ep, quarter, cq, eq, quarter)
    assert (expected > 0).sum() > 100 and (expected == 0).sum() > 20
    np.testing.assert_allclose(got0, expected, atol=1e-12)
    np.testing.assert_allclose(got90, expected, atol=1e-12)


def test_overlap_area_of_identical_boxes_is_w_times_d_and_zero_when_apart():
    rng = np.random.default_rng(13)
    center, size, theta = _random_rects(rng, 50)
    np.testing.assert_allclose(
        overlap_area(center, size, theta, center, size, theta), size[:, 0] * size[:, 1], rtol=1e-12
    )
    far = center + front(rng.uniform(0, 7, 50)) * (np.linalg.norm(size, axis=1) + 0.01)[:, None]
    assert np.all(overlap_area(center, size, theta, far, size, rng.uniform(-3, 3, 50)) == 0)
    # Touching along a face: zero area.
    assert float(overlap_area([0, 0], [1, 1], 0.3, [0, 0] + front(0.3), [1, 1], 0.3)) < 1e-14


def test_overlap_area_is_symmetric_and_invariant_under_common_rigid_motions():
    rng = np.random.default_rng(14)
    cp, sp, tp = _random_rects(rng, 300)
    cq, sq, tq = _random_rects(rng, 300)
    area = overlap_area(cp, sp, tp, cq, sq, tq)
    assert (area > 0.01).sum() > 50
    np.testing.assert_allclose(overlap_area(cq, sq, tq, cp, sp, tp), area, atol=1e-12)
    for _ in range(4):
        angle, pivot, shift = rng.uniform(-4, 4), rng.normal(size=2), rng.normal(size=2) * 5
        moved = overlap_area(
            _rotate(cp, angle, pivot, shift), sp, tp + angle, _rotate(cq, angle, pivot, shift), sq, tq + angle
        )
        np.testing.assert_allclose(moved, area, atol=1e-11)


def test_overlap_area_matches_monte_carlo_on_rotated_cases():
    rng = np.random.default_rng(15)
    cases = [
        ([0.0, 0.0], [1.2, 0.7], 0.4, [0.5, 0.2], [0.9, 1.1], -0.9),
        ([1.0, -1.0], [2.0, 0.5], 2.2, [0.6, -0.8], [0.6, 0.6], 0.7),
    ]
    n = 200_000
    for cp, sp, tp, cq, sq, tq in cases:
        # Sample P uniformly in its own frame, count the samples inside Q.
        local = rng.uniform(-0.5, 0.5, (n, 2)) * np.asarray(sp)
        pts = np.asarray(cp) + local[:, :1] * side(tp) + local[:, 1:] * front(tp)
        rel = pts - np.asarray(cq)
        inside = (np.abs(rel @ side(tq)) <= sq[0] / 2) & (np.abs(rel @ front(tq)) <= sq[1] / 2)
        frac = inside.mean()
        area_p = sp[0] * sp[1]
        exact = float(overlap_area(cp, sp, tp, cq, sq, tq))
        sigma = area_p * math.sqrt(frac * (1 - frac) / n)
        assert 0.05 < exact / area_p < 0.95  # a genuine partial overlap
        assert abs(exact - frac * area_p) < 5 * sigma  # 5 standard errors of the estimate


def test_overlap_area_of_a_square_rotated_45_degrees_over_itself_is_the_regular_octagon():
    # The intersection is a regular octagon of inradius 1/2: area 8 r^2 tan(pi/8) = 2 (sqrt 2 - 1).
    got = overlap_area([0.0, 0.0], [1.0, 1.0], 0.0, [0.0, 0.0], [1.0, 1.0], math.pi / 4)
    assert got.shape == ()
    assert float(got) == pytest.approx(2 * (math.sqrt(2) - 1), abs=1e-14)
    # The diamond centred on the square's right edge: its left half, minus two corner triangles of leg
    # r - 1/2 (r = sqrt(2)/2 its half-diagonal): r^2 - (r - 1/2)^2 = r - 1/4.
    r = math.sqrt(2) / 2
    edge = overlap_area([0.0, 0.0], [1.0, 1.0], 0.0, [0.5, 0.0], [1.0, 1.0], math.pi / 4)
    assert float(edge) == pytest.approx(r - 0.25, abs=1e-14)


def test_overlap_area_is_positive_exactly_when_the_exact_depth_is():
    rng = np.random.default_rng(16)
    args = (*_random_rects(rng, 500), *_random_rects(rng, 500))
    area = overlap_area(*args)
    depth = penetration_depth_exact(*[_t(a) for a in args]).numpy()
    assert 50 < (depth > 0).sum() < 450
    np.testing.assert_array_equal(area > 1e-12, depth > 0)


# ----------------------------------------------------------------------------------------------------------
# Distances
# ----------------------------------------------------------------------------------------------------------


def _from_local(center, theta, alpha, beta):
    return np.asarray(center) + alpha * side(theta) + beta * front(theta)


def test_point_rectangle_distance_exact_inside_edge_and_corner_regions():
    center, size, theta = np.array([0.5, -1.0]), np.array([1.0, 2.0]), 0.7  # a = 0.5, b = 1.0
    cases = [
        ((0.1, 0.3), 0.0),  # inside
        ((0.5, -1.0), 0.0),  # on the side edge
        ((0.2, 1.4), 0.4),  # beyond the front face
        ((-0.9, -0.5), 0.4),  # beyond the side
        ((0.8, 1.4), 0.5),  # corner region: (0.3, 0.4)
        ((-1.1, -1.5), math.hypot(0.6, 0.5)),
    ]
    for (alpha, beta), expected in cases:
        point = _from_local(center, theta, alpha, beta)
        got = point_rectangle_distance(_t(point), _t(center), _t(size), _t(theta))
        assert float(got) == pytest.approx(expected, abs=1e-12)


def test_point_rectangle_distance_equals_the_nearest_boundary_segment_outside():
    rng = np.random.default_rng(17)
    center, size, theta = _random_rects(rng, 300)
    points = rng.uniform(-2.5, 2.5, (300, 2))
    got = point_rectangle_distance(_t(points), _t(center), _t(size), _t(theta)).numpy()
    c = corners(center, size, theta)
    a, b = c, np.roll(c, -1, axis=1)
    t = np.clip(np.einsum("nkj,nkj->nk", points[:, None] - a, b - a) / np.sum((b - a) ** 2, -1), 0, 1)
    seg = np.linalg.norm(points[:, None] - (a + t[..., None] * (b - a)), axis=-1).min(axis=1)
    inside = got == 0
    assert 10 < inside.sum() < 290
    np.testing.assert_allclose(got[~inside], seg[~inside], rtol=1e-12, atol=1e-13)


def test_point_rectangle_distance_gradient_finite_inside_on_boundary_and_correct_outside():
    center, size, theta = _t([0.2, 0.1]), _t([1.0, 0.6]), _t(0.3)
    for alpha, beta in ((0.1, 0.1), (0.5, 0.0), (0.0, 0.3), (0.5, 0.3), (0.0, 0.0)):
        point = _t(_from_local(center.numpy(), 0.3, alpha, beta)).requires_grad_()
        th = theta.clone().requires_grad_()
        value = point_rectangle_distance(point, center, size, th)
        assert float(value.detach()) == pytest.approx(0.0, abs=1e-12)
        grads = torch.autograd.grad(value, (point, th))
        assert all(torch.isfinite(g).all() for g in grads)
    outside = _t(
        np.stack([_from_local(center.numpy(), 0.3, *ab) for ab in ((0.9, 0.1), (0.8, -0.7), (-0.2, 0.6))])
    )

    def f(p, c, t):
        return point_rectangle_distance(p, c, size, t)

    inputs = (outside.requires_grad_(), center.clone().requires_grad_(), _t([0.3, 0.3, 0.3]).requires_grad_())
    assert torch.autograd.gradcheck(f, inputs, eps=1e-6, atol=1e-10, rtol=1e-5)


def test_front_edge_distance_exact_values_finite_gradient_and_gradcheck():
    center, size, theta = np.array([-0.3, 0.4]), np.array([1.2, 0.8]), -2.0  # a = 0.6, b = 0.4
    cases = [
        ((0.2, 0.4), 0.0),  # on the front edge
        ((0.2, 0.9), 0.5),  # in front of it
        ((0.2, -0.4), 0.8),  # at the back face
        ((0.9, 0.8), 0.5),  # diagonally past the front-left corner: (0.3, 0.4)
        ((-1.0, 0.1), 0.5),  # beside, behind the edge: (0.4, -0.3)
    ]
    for (alpha, beta), expected in cases:
        point = _t(_from_local(center, theta, alpha, beta)).requires_grad_()
        value = front_edge_distance(point, _t(center), _t(size), _t(theta))
        assert float(value.detach()) == pytest.approx(expected, abs=1e-12)
        (grad,) = torch.autograd.grad(value, point)
        assert torch.isfinite(grad).all()
    points = _t(np.stack([_from_local(center, theta, *ab) for ab in ((0.2, 0.9), (0.9, 0.8), (-1.0, 0.1))]))
    inputs = (points.requires_grad_(), _t(center).requires_grad_(), _t([theta] * 3).requires_grad_())
    assert torch.autograd.gradcheck(
        lambda p, c, t: front_edge_distance(p, c, _t(size), t), inputs, eps=1e-6, atol=1e-10, rtol=1e-5
    )


# ----------------------------------------------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------------------------------------------


def _pair():
    return [_t([0.0, 0.0]), _t([1.0, 1.0]), _t(0.0), _t([0.5, 0.0]), _t([1.0, 1.0]), _t(0.0)]


@pytest.mark.parametrize("tau", [0.0, -0.1, float("nan")])
def test_bad_tau_raises_naming_tau(tau):
    with pytest.raises(ValueError, match="tau"):
        penetration(*_pair(), tau=tau)
    center, size, theta = _padded_batch(np.random.default_rng(0))
    with pytest.raises(ValueError, match="tau"):
        pair_penetration(center, size, theta, torch.tensor([[0, 1]]), None, tau=tau)


@pytest.mark.parametrize("bad", [[0.0, 1.0], [1.0, -0.5], [float("nan"), 1.0]])
def test_non_positive_size_raises_naming_size(bad):
    args = _pair()
    args[1] = _t(bad)
    with pytest.raises(ValueError, match="size_p"):
        penetration(*args, tau=0.01)
    with pytest.raises(ValueError, match="size"):
        overlap_area([0, 0], [1, 1], 0.0, [0, 0], bad, 0.0)
    with pytest.raises(ValueError, match="size"):
        point_rectangle_distance(_t([0, 0]), _t([0, 0]), _t(bad), _t(0.0))
    with pytest.raises(ValueError, match="size"):
        corners(np.zeros(2), np.asarray(bad), 0.0)
    center, size, theta = _padded_batch(np.random.default_rng(0))
    with pytest.raises(ValueError, match="size"):  # a pair that touches padding but is not masked
        pair_penetration(center, size, theta, torch.tensor([[0, 5]]), None, tau=0.01)


def test_mismatched_shapes_raise_naming_the_argument():
    args = _pair()
    args[0] = _t([0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="center_p"):
        penetration(*args, tau=0.01)
    args = _pair()
    args[3] = _t([[0.5, 0.0], [0.4, 0.0]])  # center_q: batch (2,)
    args[5] = _t([0.0, 0.1, 0.2])  # theta_q: batch (3,), which does not broadcast with (2,)
    with pytest.raises(ValueError, match="theta_q"):
        penetration(*args, tau=0.01)
    with pytest.raises(ValueError, match="theta_q"):
        overlap_area(np.zeros(2), np.ones(2), 0.0, np.zeros((2, 2)), np.ones(2), np.zeros(3))
    with pytest.raises(ValueError, match="point"):
        point_rectangle_distance(_t([0, 0, 0]), _t([0, 0]), _t([1, 1]), _t(0.0))
    with pytest.raises(ValueError, match="theta"):
        front_edge_distance(_t(np.zeros((4, 2))), _t(np.zeros((4, 2))), _t([1, 1]), _t(np.zeros(3)))
    center, size, theta = _padded_batch(np.random.default_rng(0))
    with pytest.raises(ValueError, match="size"):
        pair_penetration(center, size[:, :5], theta, torch.tensor([[0, 1]]), None, tau=0.01)
    with pytest.raises(ValueError, match="theta"):
        pair_penetration(center, size, theta[:2], torch.tensor([[0, 1]]), None, tau=0.01)
    with pytest.raises(ValueError, match="pairs"):
        pair_penetration(center, size, theta, torch.tensor([[0, 6]]), None, tau=0.01)
    with pytest.raises(ValueError, match="pairs"):
        pair_penetration(center, size, theta, torch.tensor([0, 1, 2]), None, tau=0.01)
    with pytest.raises(TypeError, match="pairs"):
        pair_penetration(center, size, theta, torch.tensor([[0.0, 1.0]]), None, tau=0.01)
    with pytest.raises(ValueError, match="pair_mask"):
        pair_penetration(
            center, size, theta, torch.tensor([[0, 1]]), torch.ones(2, 1, dtype=torch.bool), tau=0.01
        )
    with pytest.raises(TypeError, match="pair_mask"):
        pair_penetration(center, size, theta, torch.tensor([[0, 1]]), torch.ones(3, 1), tau=0.01)
