"""The perception stand-ins: tools.SAM3, tools.Reconstruct, vlm, PerFrameMask, Reconstruction, the
``tools`` namespace and PerceptionNoise. Scenes are built by hand so that every expected
value is analytic."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from scipy import ndimage

from neurips26.spatialclaw.per_frame_mask import PerFrameMask
from neurips26.spatialclaw.scene_types import Frames, SceneObject, SpatialScene
from neurips26.spatialclaw.tools import PerceptionNoise, build_tools, build_vlm
from neurips26.spatialclaw.tools.geometry import Geometry
from neurips26.spatialclaw.tools.vlm import CANNOT_DETERMINE, NOT_VISIBLE

NONE = PerceptionNoise.none()


@dataclass(frozen=True)
class Image:
    """The two attributes the tools rely on (duck-typed FrameImage)."""

    array: np.ndarray
    frame_index: int


def images_of(frames: Frames) -> list[Image]:
    return [Image(frames.rgb[f], f) for f in range(frames.num_frames)]


def _obj(iid: int, category: str, colour: str, shape: str, center, size) -> SceneObject:
    return SceneObject(iid, category, colour, shape, tuple(center), tuple(size))


# --- a hand-painted scene: id buffers drawn as rectangles ------------------------------------------

RED_CHAIR, BLUE_CHAIR, GREEN_SOFA, FLOOR = 1, 2, 3, 0


def painted() -> tuple[SpatialScene, Frames]:
    """3 frames of 24x32 px. Frame 0: red chair rows 10-17 x cols 4-9 (48 px, depth 4), blue chair rows
    10-14 x cols 20-23 (20 px, depth 6), green sofa rows 4-9 x cols 8-27 (120 px, depth 8), floor rows
    18-23 (depth 3). Frame 1: chairs two columns to the right. Frame 2: no red chair."""
    objects = (
        _obj(RED_CHAIR, "chair", "red", "box", (-1.0, 0.45, -4.0), (0.5, 0.9, 0.5)),
        _obj(BLUE_CHAIR, "chair", "blue", "box", (1.0, 0.45, -6.0), (0.5, 0.9, 0.5)),
        _obj(GREEN_SOFA, "sofa", "green", "box", (0.0, 0.4, -8.0), (1.8, 0.8, 0.9)),
    )
    pose = np.eye(4)
    pose[:3, :3] = np.diag([1.0, -1.0, -1.0])
    pose[:3, 3] = (0.0, 1.5, 0.0)
    poses = np.stack([pose, pose, pose])
    ids = np.full((3, 24, 32), -1, dtype=np.int32)
    depth = np.full((3, 24, 32), np.inf, dtype=np.float32)

    def paint(f, rows, cols, iid, z):
        ids[f, rows, cols] = iid
        depth[f, rows, cols] = z

    for f, shift in ((0, 0), (1, 2), (2, 2)):
        paint(f, slice(18, 24), slice(None), FLOOR, 3.0)
        paint(f, slice(4, 10), slice(8, 28), GREEN_SOFA, 8.0)
        if f < 2:
            paint(f, slice(10, 18), slice(4 + shift, 10 + shift), RED_CHAIR, 4.0)
        paint(f, slice(10, 15), slice(20 + shift, 24 + shift), BLUE_CHAIR, 6.0)
    rgb = np.zeros((3, 24, 32, 3), dtype=np.uint8)
    scene = SpatialScene(0, "video", objects, poses, (40.0, 40.0, 16.0, 12.0), 32, 24, 8.0, (-3, 3, -9, 1))
    return scene, Frames(rgb=rgb, depth=depth, ids=ids, structure_ids=(FLOOR,))


# --- an analytic scene: a floor and a ball seen by three cameras -----------------------------------

BALL_CENTRE, BALL_RADIUS = np.array([0.6, 0.5, -3.0]), 0.5


def look_at(position, target) -> np.ndarray:
    """OpenCV camera-to-world with no roll."""
    position, target = np.asarray(position, float), np.asarray(target, float)
    forward = (target - position) / np.linalg.norm(target - position)
    right = np.cross(forward, [0.0, 1.0, 0.0])
    right /= np.linalg.norm(right)
    pose = np.eye(4)
    pose[:3, :3] = np.column_stack([right, np.cross(forward, right), forward])
    pose[:3, 3] = position
    return pose


def analytic() -> tuple[SpatialScene, Frames, np.ndarray]:
    """Floor ``Y = 0`` (id 0) and a ball (id 1) rendered analytically; also the (F, H, W, 3) world
    points of every pixel (NaN where the ray escapes)."""
    h, w, k = 30, 40, (36.0, 36.0, 20.0, 15.0)
    poses = np.stack(
        [
            look_at((0.3, 1.4, 1.0), (1.5, 0.4, -3.0)),  # first camera: turned right, looking down
            look_at((-0.8, 1.5, 0.5), (0.6, 0.5, -3.0)),
            look_at((1.8, 1.2, -0.5), (0.0, 0.3, -3.5)),
        ]
    )
    u = (np.arange(w) + 0.5 - k[2]) / k[0]
    v = (np.arange(h) + 0.5 - k[3]) / k[1]
    rays = np.stack([*np.meshgrid(u, v), np.ones((h, w))], axis=-1)
    depth = np.full((3, h, w), np.inf)
    ids = np.full((3, h, w), -1, dtype=np.int32)
    for f, pose in enumerate(poses):
        c, d = pose[:3, 3], rays @ pose[:3, :3].T  # world direction with unit camera z
        with np.errstate(divide="ignore"):
            t_floor = np.where(d[..., 1] < 0, -c[1] / d[..., 1], np.inf)
        oc = c - BALL_CENTRE
        a, b, cc = (d * d).sum(-1), 2 * (d @ oc), oc @ oc - BALL_RADIUS**2
        disc = b * b - 4 * a * cc
        t_ball = np.where(disc >= 0, (-b - np.sqrt(np.maximum(disc, 0))) / (2 * a), np.inf)
        depth[f] = np.minimum(t_floor, t_ball)
        ids[f] = np.where(t_ball < t_floor, 1, np.where(np.isfinite(t_floor), 0, -1))
    depth = depth.astype(np.float32)
    world = np.stack([poses[f][:3, 3] + depth[f, ..., None] * (rays @ poses[f][:3, :3].T) for f in range(3)])
    world[~np.isfinite(depth)] = np.nan
    ball = _obj(1, "ball", "red", "sphere", BALL_CENTRE, (1.0, 1.0, 1.0))
    scene = SpatialScene(1, "video", (ball,), poses, k, w, h, 8.0, (-3, 3, -6, 2))
    frames = Frames(rgb=np.zeros((3, h, w, 3), np.uint8), depth=depth, ids=ids, structure_ids=(0,))
    return scene, frames, world


def expected_world(first_pose: np.ndarray, points: np.ndarray) -> np.ndarray:
    """The stated reconstruction frame, computed independently: origin under the first camera, +X its
    horizontal right, +Y up, -Z its horizontal heading."""
    f = first_pose[:3, 2].copy()
    f[1] = 0.0
    f /= np.linalg.norm(f)
    right = np.array([-f[2], 0.0, f[0]])
    d = points - np.array([first_pose[0, 3], 0.0, first_pose[2, 3]])
    return np.stack([d @ right, points[..., 1], -(d @ f)], axis=-1)


@pytest.fixture(scope="module")
def scene_a():
    return analytic()


@pytest.fixture(scope="module")
def scene_p():
    return painted()


# --- Reconstruct -----------------------------------------------------------------------------------


@pytest.mark.parametrize("order", [[0, 1, 2], [2, 0, 1]])
def test_zero_noise_points_equal_the_analytic_ground_truth(scene_a, order):
    scene, frames, world = scene_a
    recon = build_tools(scene, frames, noise=NONE).Reconstruct.Reconstruct(
        [images_of(frames)[f] for f in order]
    )
    assert recon.frame_indices == order and recon.metric_scale == 1.0
    first = scene.poses[order[0]]
    for f in order:
        want = expected_world(first, world[f])
        got = recon.points[f]
        seen = np.isfinite(frames.depth[f])
        assert np.allclose(got[seen], want[seen], atol=1e-4)
        assert np.isnan(got[~seen]).all() and (recon.points.confidence[f][~seen] == 0).all()
        assert np.allclose(recon.depth[f][seen], frames.depth[f][seen], rtol=1e-6)
        floor = frames.ids[f] == 0
        assert np.abs(got[floor][:, 1]).max() < 1e-4  # ground at Y = 0
        ball = got[frames.ids[f] == 1]
        centre = expected_world(first, BALL_CENTRE[None])[0]
        assert np.allclose(np.linalg.norm(ball - centre, axis=1), BALL_RADIUS, atol=1e-4)
        assert tuple(recon.intrinsics[f]) == scene.intrinsics
    c2w = recon.extrinsics[order[0]]
    assert c2w[0, 3] == pytest.approx(0.0, abs=1e-12) and c2w[2, 3] == pytest.approx(0.0, abs=1e-12)
    assert c2w[1, 3] == pytest.approx(first[1, 3])  # camera height kept
    forward, right = c2w[:3, 2], c2w[:3, 0]
    assert forward[0] == pytest.approx(0.0, abs=1e-12) and forward[2] < 0  # looks along -Z
    assert np.allclose(right, [1.0, 0.0, 0.0], atol=1e-12)  # +X is its right (no roll)


def test_projection_of_reconstructed_points_lands_on_their_pixels(scene_a):
    scene, frames, _ = scene_a
    recon = build_tools(scene, frames, noise=NONE).Reconstruct.Reconstruct(images_of(frames))
    fx, fy, cx, cy = recon.intrinsics[1]
    i, j = 20, 11
    u, v = Geometry.project_point_to_camera(recon.points[1][i, j], recon.extrinsics[1], fx, fy, cx, cy)
    assert (u, v) == pytest.approx((j + 0.5, i + 0.5), abs=1e-4)


def test_noisy_reconstruction_scale_is_in_range_and_the_first_camera_is_exact(scene_a):
    scene, frames, _ = scene_a
    exact = build_tools(scene, frames, noise=NONE).Reconstruct.Reconstruct(images_of(frames))
    scales = []
    for seed in range(6):
        only_scale = PerceptionNoise(depth_noise=0.0, rot_deg=0.0, trans_m=0.0)
        recon = build_tools(scene, frames, noise=only_scale, seed=seed).Reconstruct.Reconstruct(
            images_of(frames)
        )
        seen = np.isfinite(frames.depth[0])
        ratio = recon.depth[0][seen] / frames.depth[0][seen]
        s = float(np.median(ratio))
        assert 0.85 <= s <= 1.15 and np.allclose(ratio, s, rtol=1e-5)
        assert np.allclose(recon.points[2][seen], s * exact.points[2][seen], rtol=1e-4, atol=1e-4)
        assert recon.metric_scale == 1.0  # the tool believes its metres
        scales.append(s)
    assert len(set(np.round(scales, 6))) == len(scales)  # a fresh hidden scale per seed
    noisy = build_tools(scene, frames, seed=3).Reconstruct.Reconstruct(images_of(frames))
    s = noisy.extrinsics[0][1, 3] / exact.extrinsics[0][1, 3]
    assert np.allclose(noisy.extrinsics[0][:3, :3], exact.extrinsics[0][:3, :3], atol=1e-12)
    assert not np.allclose(noisy.extrinsics[1][:3, :3], exact.extrinsics[1][:3, :3], atol=1e-5)
    assert 0.85 <= s <= 1.15


def test_reconstruct_is_deterministic_and_independent_of_call_order(scene_a):
    scene, frames, _ = scene_a
    imgs = images_of(frames)
    first = build_tools(scene, frames, seed=5).Reconstruct
    a1, b1 = first.Reconstruct(imgs), first.Reconstruct(imgs[1:])
    second = build_tools(scene, frames, seed=5).Reconstruct
    b2, a2 = second.Reconstruct(imgs[1:]), second.Reconstruct(imgs)
    for x, y, fs in ((a1, a2, [0, 1, 2]), (b1, b2, [1, 2])):
        for f in fs:
            assert np.array_equal(x.points[f], y.points[f], equal_nan=True)
            assert np.array_equal(x.extrinsics[f], y.extrinsics[f])
    other = build_tools(scene, frames, seed=6).Reconstruct.Reconstruct(imgs)
    assert not np.array_equal(other.depth[0], a1.depth[0], equal_nan=True)


def test_confidence_is_lower_on_object_edges(scene_a):
    scene, frames, _ = scene_a
    recon = build_tools(scene, frames, noise=NONE).Reconstruct.Reconstruct(images_of(frames)[:1])
    conf = recon.points.confidence[0]
    ball = frames.ids[0] == 1
    inner = ndimage.binary_erosion(ball, iterations=2)
    rim = ball & ~ndimage.binary_erosion(ball)
    assert ((conf >= 0) & (conf <= 1)).all()
    assert conf[rim].max() < 0.3 <= conf[inner].min()


def test_reconstruct_bad_inputs_name_the_argument(scene_a):
    scene, frames, _ = scene_a
    tool = build_tools(scene, frames).Reconstruct
    with pytest.raises(ValueError, match="frames"):
        tool.Reconstruct([])
    with pytest.raises(ValueError, match="at most 64"):
        tool.Reconstruct([images_of(frames)[0]] * 65)
    with pytest.raises(ValueError, match="repeat"):
        tool.Reconstruct([images_of(frames)[0]] * 2)
    with pytest.raises(TypeError, match="frames"):
        tool.Reconstruct(frames.rgb)
    with pytest.raises(ValueError, match=r"frames\[0\].frame_index"):
        tool.Reconstruct([Image(frames.rgb[0], 7)])


def test_reconstruction_indexing_and_bev(scene_a):
    scene, frames, _ = scene_a
    tools = build_tools(scene, frames, noise=NONE)
    recon = tools.Reconstruct.Reconstruct(images_of(frames)[1:])
    with pytest.raises(IndexError, match=r"valid frame indices: \[1, 2\]"):
        recon.points[0]
    k = recon.intrinsics[2]
    assert k["fx"] == k.fx == k[0] == scene.intrinsics[0]
    fx, fy, cx, cy = k
    assert np.asarray(recon.depth).shape == (2, 30, 40)
    assert "Reconstruction(2 frames [1, 2]" in repr(recon)
    balls = tools.SAM3.segment_video_by_text(images_of(frames), "ball")
    bev = recon.render_bev(masks=balls, ref_frame=2)
    assert bev.dtype == np.uint8 and bev.ndim == 3 and bev.shape[2] == 3
    assert recon.render_bev(ego_trajectory=False).shape == bev.shape
    with pytest.raises(ValueError, match="labels"):
        recon.render_bev(masks=np.zeros((2, 1, 30, 40), bool))


# --- PerFrameMask lifted through a reconstruction ---------------------------------------------------


def test_centroid_3d_is_the_median_of_confident_masked_points(scene_a):
    scene, frames, world = scene_a
    tools = build_tools(scene, frames, noise=NONE)
    recon = tools.Reconstruct.Reconstruct(images_of(frames))
    ball = tools.SAM3.segment_image_by_text(images_of(frames)[1], "red ball")
    assert ball.num_objects == 1 and ball.labels == ["red ball"]
    mask = ball.get_mask(1, 0)
    assert np.array_equal(mask, frames.ids[1] == 1)
    pts = ball.get_masked_points(recon, 1)
    assert pts.shape == (mask.sum(), 3)
    conf = recon.points.confidence[1][mask]
    want = np.median(recon.points[1][mask][conf >= 0.3], axis=0)
    assert np.allclose(ball.get_centroid_3d(recon, 1), want)
    centre = expected_world(scene.poses[0], BALL_CENTRE[None])[0]
    assert np.linalg.norm(ball.get_centroid_3d(recon, 1) - centre) < BALL_RADIUS + 1e-6
    with pytest.raises(IndexError, match=r"valid frame indices: \[1\]"):
        ball.get_centroid_3d(recon, 0)


# --- SAM3 ------------------------------------------------------------------------------------------


def test_text_prompt_finds_exact_instances_and_synonyms_find_nothing(scene_p):
    scene, frames = scene_p
    sam = build_tools(scene, frames, noise=NONE).SAM3
    img = images_of(frames)[0]
    red = sam.segment_image_by_text(img, "red chair")
    assert red.num_objects == 1 and np.array_equal(red.get_mask(0), frames.ids[0] == RED_CHAIR)
    chairs = sam.segment_image_by_text(img, "Chairs")
    assert chairs.num_objects == 2  # both chairs, the larger first
    assert np.array_equal(chairs.get_mask(0, 0), frames.ids[0] == RED_CHAIR)
    assert np.array_equal(chairs.get_mask(0, 1), frames.ids[0] == BLUE_CHAIR)
    for word in ("seat", "armchair", "couch", "red seat", "big red chair", "red"):
        assert sam.segment_image_by_text(img, word).num_objects == 0, word
    assert sam.segment_image_by_text(img, "the green sofa").num_objects == 1
    assert sam.is_object_exist(images_of(frames), "sofa") and not sam.is_object_exist([img], "couch")
    assert not sam.is_object_exist(images_of(frames)[2], "red chair")


def test_failure_modes_miss_split_and_boundary(scene_p):
    scene, frames = scene_p
    img = images_of(frames)[0]
    exact = frames.ids[0] == GREEN_SOFA
    missed = build_tools(scene, frames, noise=PerceptionNoise(p_miss=1.0)).SAM3
    assert missed.segment_image_by_text(img, "chair").num_objects == 0
    assert not missed.is_object_exist(images_of(frames), "sofa")
    split = build_tools(scene, frames, noise=PerceptionNoise(p_miss=0.0, split_prob=1.0, boundary_px=0)).SAM3
    halves = split.segment_image_by_text(img, "sofa")
    assert halves.num_objects == 2 and halves.labels == ["sofa", "sofa"]
    a, b = halves.get_mask(0, 0), halves.get_mask(0, 1)
    assert not (a & b).any() and np.array_equal(a | b, exact)
    ragged = PerceptionNoise(p_miss=0.0, split_prob=0.0, boundary_px=1)
    for seed in range(8):
        m = (
            build_tools(scene, frames, noise=ragged, seed=seed)
            .SAM3.segment_image_by_text(img, "sofa")
            .get_mask(0)
        )
        assert (m <= ndimage.binary_dilation(exact)).all() and (ndimage.binary_erosion(exact) <= m).all()


def test_noisy_segmentation_is_deterministic_per_call(scene_p):
    scene, frames = scene_p
    noise = PerceptionNoise(p_miss=0.3, split_prob=0.3, boundary_px=1)
    imgs = images_of(frames)
    one = build_tools(scene, frames, noise=noise, seed=2).SAM3
    a = one.segment_image_by_text(imgs[1], "chair")
    one.segment_image_by_text(imgs[0], "sofa")
    b = one.segment_image_by_text(imgs[1], "chair")
    c = build_tools(scene, frames, noise=noise, seed=2).SAM3.segment_image_by_text(imgs[1], "chair")
    assert np.array_equal(a.masks, b.masks) and np.array_equal(a.masks, c.masks)


def test_point_and_box_prompts_are_exact(scene_p):
    scene, frames = scene_p
    sam = build_tools(scene, frames).SAM3  # default noise: point and box prompts stay exact
    img = images_of(frames)[0]
    by_point = sam.segment_image_by_points(img, [[6, 12]], label="mine")
    assert by_point.labels == ["mine"] and np.array_equal(by_point.get_mask(0), frames.ids[0] == RED_CHAIR)
    assert np.array_equal(
        sam.segment_image_by_points(img, [21.7, 11.2]).get_mask(0), frames.ids[0] == BLUE_CHAIR
    )
    votes = sam.segment_image_by_points(img, [[6, 12], [21, 11], [7, 14]], point_labels=[1, 1, 1])
    assert np.array_equal(votes.get_mask(0), frames.ids[0] == RED_CHAIR)
    vetoed = sam.segment_image_by_points(img, [[6, 12], [21, 11], [7, 14]], point_labels=[1, 1, 0])
    assert np.array_equal(vetoed.get_mask(0), frames.ids[0] == BLUE_CHAIR)
    assert sam.segment_image_by_points(img, [[0, 0]]).get_mask(0).sum() == 0  # background
    h, w = frames.ids.shape[1:]
    edge = sam.segment_image_by_points(img, Geometry.normalized_to_pixel((1000, 1000), w, h))  # = (w, h)
    last = sam.segment_image_by_points(img, [[w - 1, h - 1]])  # the far edge selects the last pixel
    assert np.array_equal(edge.masks, last.masks)
    with pytest.raises(ValueError, match="points must lie in the image"):
        sam.segment_image_by_points(img, [[w + 0.5, 0]])
    by_box = sam.segment_image_by_box(img, (3, 9, 11, 19))  # encloses the red chair and some floor
    assert np.array_equal(by_box.get_mask(0), frames.ids[0] == RED_CHAIR)
    assert np.array_equal(
        sam.segment_image_by_box(img, (0, 3, 32, 10)).get_mask(0), frames.ids[0] == GREEN_SOFA
    )


def test_video_tracking_keeps_object_identity(scene_p):
    scene, frames = scene_p
    sam = build_tools(scene, frames, noise=NONE).SAM3
    imgs = images_of(frames)
    chairs = sam.segment_video_by_text(imgs, "chair")
    assert chairs.frame_indices == [0, 1, 2] and chairs.num_objects == 2
    for k, iid in enumerate((RED_CHAIR, BLUE_CHAIR)):
        for f in range(3):
            assert np.array_equal(chairs.get_mask(f, k), frames.ids[f] == iid)
    assert chairs.pixel_count(2, 0) == 0  # the red chair left the view, its slot stays
    both = sam.segment_video_by_text(imgs, ["red chair", "sofa"], start_frame=1)
    assert both.frame_indices == [1, 2] and both.labels == ["red chair", "sofa"]
    late = sam.segment_video_by_text(imgs, "chair", prompt_frame_idx=1, start_frame=1)  # detected on frame 2
    assert late.num_objects == 1 and np.array_equal(late.get_mask(1), frames.ids[1] == BLUE_CHAIR)
    tracked = sam.segment_video_by_points(imgs, [[8, 12]], prompt_frame_idx=1)  # frame 1: the red chair
    assert all(np.array_equal(tracked.get_mask(f), frames.ids[f] == RED_CHAIR) for f in range(3))
    boxed = sam.segment_video_by_box(imgs, (19, 9, 25, 16), end_frame=2)
    assert boxed.frame_indices == [0, 1]
    assert all(np.array_equal(boxed.get_mask(f), frames.ids[f] == BLUE_CHAIR) for f in (0, 1))


def test_sam3_bad_inputs_name_the_argument(scene_p):
    scene, frames = scene_p
    sam = build_tools(scene, frames).SAM3
    img = images_of(frames)[0]
    with pytest.raises(TypeError, match="prompt"):
        sam.segment_image_by_text(img, 3)
    with pytest.raises(TypeError, match="image"):
        sam.segment_image_by_text(frames.rgb[0], "chair")
    with pytest.raises(ValueError, match="points"):
        sam.segment_image_by_points(img, [[500, 500]])
    with pytest.raises(ValueError, match="point_labels"):
        sam.segment_image_by_points(img, [[1, 1]], point_labels=[0])
    with pytest.raises(ValueError, match="box"):
        sam.segment_image_by_box(img, (10, 10, 5, 20))
    with pytest.raises(ValueError, match="start_frame"):
        sam.segment_video_by_text(images_of(frames), "chair", start_frame=5)
    with pytest.raises(ValueError, match="prompt_frame_idx"):
        sam.segment_video_by_text(images_of(frames), "chair", prompt_frame_idx=3)


def test_per_frame_mask_reports_valid_frames_and_objects(scene_p):
    scene, frames = scene_p
    mask = build_tools(scene, frames, noise=NONE).SAM3.segment_image_by_text(images_of(frames)[1], "chair")
    with pytest.raises(IndexError, match=r"frame 0 is not in this mask; valid frame indices: \[1\]"):
        mask.get_mask(0)
    with pytest.raises(IndexError, match="valid object indices: 0..1"):
        mask.get_mask(1, 2)
    with pytest.raises(TypeError, match="frame"):
        mask.get_mask("1")
    assert np.array_equal(mask.get_mask(1, "chair"), mask.get_mask(1, 0))
    assert mask[1].shape == (2, 24, 32) and mask.masks.shape == (1, 2, 24, 32)
    text = repr(mask)
    assert "num_objects=2" in text and "{1: 48}" in text and "{1: 20}" in text
    overlay = mask.visualize(1)
    assert overlay.shape == (24, 32, 3) and overlay.dtype == np.uint8 and overlay[12, 7].any()
    with pytest.raises(ValueError, match="labels"):
        PerFrameMask(np.zeros((1, 2, 4, 4), bool), ["a"], [0])


# --- vlm -------------------------------------------------------------------------------------------


def test_locate_understands_synonyms_and_says_not_visible(scene_p):
    scene, frames = scene_p
    vlm = build_vlm(scene, frames, noise=NONE)
    imgs = images_of(frames)
    for question, iid in (("Where is the couch?", GREEN_SOFA), ("find the red armchair", RED_CHAIR)):
        (xy,) = vlm.locate(imgs[0], question)
        x, y = Geometry.normalized_to_pixel(xy, scene.width, scene.height)
        assert frames.ids[0, int(y), int(x)] == iid
    batch = vlm.locate(imgs, "the red seat")  # the red chair left the view in frame 2
    assert batch[2] == NOT_VISIBLE and all(isinstance(xy, tuple) for xy in batch[:2])
    noisy = build_vlm(scene, frames, seed=1)
    assert (
        noisy.locate(imgs, "the red seat")[1] == noisy.locate(imgs[1], "the red seat")[0]
    )  # keyed per frame
    assert vlm.locate(imgs[0], "the purple tv") == [NOT_VISIBLE]
    assert vlm.locate(imgs[0], "anything at all?") == [NOT_VISIBLE]
    assert noisy.locate(imgs[0], "the couch") == noisy.locate(imgs[0], "the couch")
    with pytest.raises(ValueError, match="images"):
        vlm.locate(imgs * 3, "the couch")
    with pytest.raises(TypeError, match="question"):
        vlm.locate(imgs[0], None)


def test_ask_with_thinking_is_a_deterministic_2d_heuristic(scene_p):
    scene, frames = scene_p
    vlm = build_vlm(scene, frames)
    imgs = images_of(frames)
    assert vlm.ask_with_thinking(imgs, "How many chairs are in the room?").endswith("Answer: 2")
    left = vlm.ask_with_thinking(imgs, "Is the red chair to the left or right of the blue chair?")
    assert left.endswith("Answer: left")
    assert vlm.ask_with_thinking(imgs, "How far apart are the red chair and the sofa?") == CANNOT_DETERMINE
    assert vlm.ask_with_thinking(imgs, "How many meters did the camera move?") == CANNOT_DETERMINE
    # Wrong by construction on a 3-D question: the sofa looks bigger but is twice as far as the chair.
    closer = "Which is closer to the camera, the red chair or the green couch?"
    reply = vlm.ask_with_thinking(imgs, closer)
    assert reply.endswith("Answer: green sofa") and frames.depth[0][frames.ids[0] == RED_CHAIR].max() < 8.0
    assert reply == build_vlm(scene, frames, seed=9).ask_with_thinking(imgs, closer)
    with pytest.raises(ValueError, match="images"):
        vlm.ask_with_thinking(imgs * 22, closer)


# --- the namespace and the noise config --------------------------------------------------------------


def test_ablations_remove_tools_with_a_clear_message(scene_p):
    scene, frames = scene_p
    full = build_tools(scene, frames)
    assert full.names == ("SAM3", "Reconstruct", "Geometry", "Mask", "Time", "Draw")
    no_utils = build_tools(scene, frames, utilities=False)
    assert no_utils.names == ("SAM3", "Reconstruct")
    with pytest.raises(AttributeError, match="not available in this configuration"):
        _ = no_utils.Geometry
    no_perception = build_tools(scene, frames, perception=False)
    assert no_perception.names == ("Geometry", "Mask", "Time", "Draw")
    with pytest.raises(AttributeError, match="tools.SAM3 is not available in this configuration"):
        _ = no_perception.SAM3
    with pytest.raises(AttributeError, match="no tool"):
        _ = full.OCR
    with pytest.raises(AttributeError, match="read-only"):
        full.SAM3 = None
    assert full.Time.fps == 8.0 and full.Time.total_frames == 3
    with pytest.raises(TypeError, match="noise"):
        build_tools(scene, frames, noise={"p_miss": 0.1})
    with pytest.raises(TypeError, match="utilities"):
        build_tools(scene, frames, utilities=1)
    with pytest.raises(ValueError, match="seed"):
        build_vlm(scene, frames, seed=-1)


def test_perception_noise_validates_and_round_trips():
    assert PerceptionNoise() == PerceptionNoise(**PerceptionNoise().as_dict())
    assert PerceptionNoise(depth_scale=[0.9, 1.1]).depth_scale == (0.9, 1.1)
    zero = PerceptionNoise.none()
    assert zero.depth_scale == (1.0, 1.0) and zero.p_miss == zero.split_prob == zero.locate_sigma == 0.0
    with pytest.raises(ValueError, match="p_miss"):
        PerceptionNoise(p_miss=1.5)
    with pytest.raises(ValueError, match=r"depth_scale\[1\]"):
        PerceptionNoise(depth_scale=(1.2, 1.0))
    with pytest.raises(TypeError, match="depth_scale"):
        PerceptionNoise(depth_scale=1.0)
    with pytest.raises(TypeError, match="boundary_px"):
        PerceptionNoise(boundary_px=1.5)
