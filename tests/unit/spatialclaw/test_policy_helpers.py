"""The kernel-side helpers of the reference policy, called directly as Python functions on small scenes;
and the text the policy writes is exactly their source."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace

import numpy as np
import pytest

from neurips26.spatialclaw import policy_helpers as ph
from neurips26.spatialclaw import reference_policy as rp
from neurips26.spatialclaw.per_frame_mask import PerFrameMask
from neurips26.spatialclaw.reconstruction import Reconstruction

H, W = 4, 4  # pixels per object block; object i fills columns [i*W, (i+1)*W) of every frame


def _cloud(centre, size) -> np.ndarray:
    """(H, W, 3) points on an axis-aligned box of ``size`` around ``centre`` (symmetric: its percentile
    middle is ``centre``)."""
    cx, cy, cz = centre
    sx, sy, sz = size
    xs = np.linspace(-sx / 2, sx / 2, W)
    ys = np.linspace(-sy / 2, sy / 2, H)
    pts = np.zeros((H, W, 3))
    pts[..., 0] = cx + xs[None, :]
    pts[..., 1] = cy + ys[:, None]
    pts[..., 2] = cz + np.where(np.arange(W) % 2 == 0, -sz / 2, sz / 2)[None, :]
    return pts


def _world(monkeypatch, objects, frames=(0, 1, 2), confidence=1.0):
    """Set the kernel globals for ``objects`` (name -> centre, or name -> (frame -> centre)), each a
    0.4 x 0.6 x 0.2 m box seen in every frame; returns the reconstruction."""
    names = list(objects)
    n, width = len(frames), W * len(names)
    points = np.zeros((n, H, width, 3))
    for i, name in enumerate(names):
        where = objects[name]
        for j, f in enumerate(frames):
            centre = where(f) if callable(where) else where
            points[j, :, i * W : (i + 1) * W] = _cloud(centre, (0.4, 0.6, 0.2))
    extrinsics = np.repeat(np.eye(4)[None], n, axis=0)
    extrinsics[:, :3, 2] = (0.0, 0.0, -1.0)  # every camera looks along -Z
    extrinsics[:, :3, 3] = (0.0, 1.5, 3.0)
    recon = Reconstruction(
        list(frames),
        depth=np.ones((n, H, width)),
        extrinsics=extrinsics,
        intrinsics=np.tile([50.0, 50.0, width / 2, H / 2], (n, 1)),
        points=points,
        confidence=np.full((n, H, width), confidence),
    )
    seg = {}
    for i, name in enumerate(names):
        masks = np.zeros((n, 1, H, width), dtype=bool)
        masks[:, 0, :, i * W : (i + 1) * W] = True
        seg[name] = PerFrameMask(masks, [name], list(frames))
    images = {f: SimpleNamespace(array=np.full((H, width, 3), 200, dtype=np.uint8)) for f in frames}
    monkeypatch.setattr(ph, "recon", recon)
    monkeypatch.setattr(ph, "InputImages", images)
    monkeypatch.setattr(ph, "seg", seg)
    monkeypatch.setattr(ph, "N", names)
    monkeypatch.setattr(ph, "parts", {name: [0] for name in names})
    return recon


# --- the text the policy writes ------------------------------------------------------------------------


def test_cell_source_renames_the_answer_and_rejects_foreign_functions():
    text = ph.cell_source(ph.answer_distance, "answer")
    assert text.startswith("def answer(frames):\n") and text.endswith("\n")
    assert "answer_distance" not in text
    assert ph.cell_source(ph.pooled).startswith("def pooled(pf):\n")
    with pytest.raises(ValueError, match="function"):
        ph.cell_source(np.mean)
    assert ph.cell_sources(ph.pooled, ph.right_of).count("\n\n\ndef ") == 1


def test_the_cells_hold_the_helpers_source_byte_for_byte():
    """The cached episodes and the claims depend on this text: its digest is pinned (a change to a helper
    must be deliberate, and makes the suite's episodes run again)."""
    for f in (ph.object_points, ph.pooled, ph.footprint, ph.centre, ph.right_of, ph.report):
        assert ph.cell_source(f) in rp._HELPERS
    texts = [rp._HELPERS, rp._CAMERA, rp._COUNT, *(rp._FAMILY_CODE[k] for k in sorted(rp._FAMILY_CODE))]
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()
    assert digest == "aa0ca32f98261b86a8a643320929423ea6d88742b02491117185eea1e3a844a2"


def test_written_helpers_run_in_a_fresh_namespace(monkeypatch):
    """The helper text alone defines working functions (no name it needs is missing from a cell's
    globals)."""
    recon = _world(monkeypatch, {"red chair": (1.0, 0.3, -2.0)})
    namespace = {"np": np, "recon": recon, "InputImages": ph.InputImages, "seg": ph.seg}
    exec(
        rp._HELPERS.split("H, W = InputImages[0].array.shape[:2]\n", 1)[1].rsplit("seg = {}", 1)[0], namespace
    )
    got = namespace["centre"](namespace["object_points"](ph.seg["red chair"], [0]))
    np.testing.assert_allclose(got, ph.centre(ph.object_points(ph.seg["red chair"], [0])))


# --- lifting to 3-D ----------------------------------------------------------------------------------------


def test_object_points_keeps_confident_frames_with_enough_points(monkeypatch):
    _world(monkeypatch, {"red chair": (1.0, 0.3, -2.0)}, frames=(3, 5, 9))
    pf = ph.object_points(ph.seg["red chair"], [0])
    assert sorted(pf) == [3, 5, 9]
    pts, rgb = pf[5]
    assert pts.shape == (H * W, 3) and rgb.shape == (H * W, 3)
    assert sorted(ph.object_points(ph.seg["red chair"], [0], frames=[9, 3])) == [3, 9]
    _world(monkeypatch, {"red chair": (1.0, 0.3, -2.0)}, confidence=0.2)  # below the 0.3 threshold
    assert ph.object_points(ph.seg["red chair"], [0]) == {}
    with pytest.raises(ValueError, match="no confident points"):
        ph.pooled({})


def test_footprint_finds_a_rotated_rectangle():
    rng = np.random.default_rng(0)
    angle = np.radians(30.0)
    local = rng.uniform(-0.5, 0.5, (4000, 2)) * (2.0, 1.0)  # a 2 m x 1 m rectangle
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    xz = local @ rot.T + (3.0, -1.0)
    P = np.stack([xz[:, 0], rng.uniform(0, 1, 4000), xz[:, 1]], axis=1)
    c, u, w, eu, ew = ph.footprint(P)
    np.testing.assert_allclose(c, (3.0, -1.0), atol=0.03)
    assert sorted([eu, ew]) == pytest.approx([0.96, 1.92], abs=0.04)  # the 2-98 percentile extents
    assert abs(u @ w) < 1e-12 and np.linalg.norm(u) == pytest.approx(1.0)
    long_axis = u if eu > ew else w
    assert abs(long_axis @ rot[:, 0]) == pytest.approx(1.0, abs=0.01)  # within the 5-degree grid


def test_centre_and_right_of(monkeypatch):
    _world(monkeypatch, {"red chair": (1.0, 0.3, -2.0)})
    np.testing.assert_allclose(
        ph.centre(ph.object_points(ph.seg["red chair"], [0])), (1.0, 0.3, -2.0), atol=1e-9
    )
    np.testing.assert_allclose(ph.right_of(np.array([0.0, -1.0])), (1.0, 0.0))  # facing -Z: right is +X
    np.testing.assert_allclose(ph.right_of(np.array([1.0, 0.0])), (0.0, 1.0))  # facing +X: right is +Z


def test_report_prints_the_markers_the_policy_reads(monkeypatch, capsys):
    _world(monkeypatch, {"red chair": (1.0, 0.3, -2.0)})
    ph.report("red chair")
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["SEG|red chair|1", "PART|red chair|0|1.000|0.300|-2.000|3"]
    assert rp._lines("\n".join(lines), "PART") == [["red chair", "0", "1.000", "0.300", "-2.000", "3"]]


# --- the family answers -------------------------------------------------------------------------------


def test_distance_direction_closest_and_size(monkeypatch):
    _world(
        monkeypatch, {"a": (0.0, 0.5, 0.0), "b": (0.0, 0.5, -3.0), "c": (2.0, 0.5, -1.0), "d": (0, 0.5, 4)}
    )
    assert ph.answer_distance(None) == pytest.approx(3.0)
    # standing at a facing b (-Z): c at +X, ahead, is front-right
    assert ph.answer_relative_direction(None) == "front-right"
    monkeypatch.setattr(ph, "N", ["a", "b", "c", "d"])
    assert ph.answer_closest(None) == "c"  # sqrt(5) < 3 < 4
    _world(monkeypatch, {"tall": (0.0, 1.5, 0.0), "low": (1.0, 0.3, 0.0)})
    monkeypatch.setattr(ph, "MEASURE", "taller")
    assert ph.answer_size_comparison(None) == "tall"
    assert ph.measure("tall", None) == pytest.approx(1.5 + 0.3, abs=1e-9)  # its top row


def test_mover_direction_reads_the_track(monkeypatch):
    _world(monkeypatch, {"ball": lambda f: (0.5 * f, 0.2, -2.0)}, frames=(0, 1, 2, 3))
    assert ph.answer_mover_direction(None) == "right"
    _world(monkeypatch, {"ball": lambda f: (0.0, 0.2, -2.0 - 0.5 * f)}, frames=(0, 1, 2, 3))
    assert ph.answer_mover_direction(None) == "away from the camera"


def test_object_perspective_faces_away_from_the_cameras_when_unmarked(monkeypatch):
    # a uniform box (no dark screen, no backrest) seen from +Z faces away from the cameras (-Z), as they
    # do: the cup at +X is on its right
    _world(monkeypatch, {"box": (0.0, 0.3, 0.0), "cup": (1.0, 0.3, 0.0)})
    monkeypatch.setattr(ph, "SCREEN", False)
    front = ph.facing("box", None, False)
    np.testing.assert_allclose(np.abs(front), (0.0, 1.0), atol=1e-9)
    assert front[1] < 0
    assert ph.answer_object_perspective(None) == "right"


# --- the camera and counting -------------------------------------------------------------------------


def _pose(position, forward):
    forward = np.asarray(forward, dtype=float) / np.linalg.norm(forward)
    right = np.cross(forward, (0.0, 1.0, 0.0))
    c2w = np.eye(4)
    c2w[:3, 0], c2w[:3, 1], c2w[:3, 2], c2w[:3, 3] = right, np.cross(forward, right), forward, position
    return c2w


def test_motion_and_label():
    rec = SimpleNamespace(extrinsics={0: _pose((0, 1, 0), (0, 0, -1)), 1: _pose((0, 1, -2), (0, 0, -1))})
    m = ph.motion(rec, 0, 1)
    np.testing.assert_allclose(m, (0.0, 2.0, 0.0, 2.0), atol=1e-12)
    assert ph.label(m, "move") == "forward"
    rec.extrinsics[1] = _pose((0.5, 1, 0), (1, 0, -1))  # a small step right, turned right by 45 degrees
    m = ph.motion(rec, 0, 1)
    assert m[0] == pytest.approx(0.5) and m[2] == pytest.approx(np.sqrt(0.5))
    assert ph.label(m, "move") == "right" and ph.label(m, "turn") == "right"
    assert ph.label(np.array([0.0, -1.0, -0.2, 1.0]), "move") == "backward"


def test_count_clusters_merges_touching_footprints(monkeypatch):
    monkeypatch.setattr(ph, "COUNT_GAP", 0.1)

    def box(x0, z0, x1, z1):
        return np.array([x0, z0]), np.array([x1, z1])

    assert ph.count_clusters([]) == 0
    chain = [box(0, 0, 1, 1), box(1.05, 0, 2, 1), box(2.08, 0, 3, 1)]  # each within 0.1 of the next
    assert ph.count_clusters(chain) == 1
    assert ph.count_clusters([box(0, 0, 1, 1), box(1.2, 0, 2, 1)]) == 2
    assert ph.count_clusters([box(0, 0, 1, 1), box(1.05, 1.05, 2, 2)]) == 1  # diagonal gap 0.07


def test_footprint_box(monkeypatch):
    _world(monkeypatch, {"red chair": (1.0, 0.3, -2.0)})
    lo, hi = ph.footprint_box(ph.seg["red chair"], 0)
    assert np.all(lo < (1.0, -2.0)) and np.all(hi > (1.0, -2.0))
    np.testing.assert_allclose((lo + hi) / 2, (1.0, -2.0), atol=1e-9)
    _world(monkeypatch, {"red chair": (1.0, 0.3, -2.0)}, confidence=0.0)
    assert ph.footprint_box(ph.seg["red chair"], 0) is None
