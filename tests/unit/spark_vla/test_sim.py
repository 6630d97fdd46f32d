"""Tests of neurips26.spark_vla.sim: the renders' geometry, the tasks' constraints, the expert and the rules.

The development seeds (2,000,000 on) are shared by every test: 50 episodes per task and 200 of ``nearer``
(the cue-balance test needs them), sampled and rendered once per module.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from neurips26.spark_vla import sim
from neurips26.world import Render
from neurips26.world.scene import Box

DEV = 2_000_000
PER_TASK = 50
NEARER = 200
MM = 1e-3


@pytest.fixture(scope="module")
def pool() -> dict[str, list[sim.Episode]]:
    """Dev episodes per task: ``PER_TASK`` of each, ``NEARER`` of ``nearer``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sim, "camera", functools.cache(sim.camera))
        return {
            task: [sim.sample_episode(DEV + i, task) for i in range(NEARER if task == "nearer" else PER_TASK)]
            for task in sim.TASKS
        }


@pytest.fixture(scope="module")
def views(pool: dict[str, list[sim.Episode]]) -> dict[str, list[Render]]:
    return {task: [sim.render_episode(ep) for ep in eps] for task, eps in pool.items()}


def _rendered(pool, views, tasks=sim.TASKS, per_task=PER_TASK):
    """(episode, view) pairs of the first ``per_task`` episodes of each task."""
    return [(ep, v) for t in tasks for ep, v in zip(pool[t][:per_task], views[t][:per_task], strict=True)]


def test_memoised_camera_samples_the_same_episodes(pool: dict[str, list[sim.Episode]]) -> None:
    for i in (0, 1, 7):
        assert sim.sample_episode(DEV + i, "nearer") == pool["nearer"][i]


# ------------------------------------------------------------------------------- geometry of the renders


def _boxes(episode: sim.Episode) -> dict[int, Box]:
    scene, _ = sim.scene_of(episode)
    return {b.instance_id: b for b in scene.boxes}


def test_box_pixels_back_project_onto_their_box(pool, views) -> None:
    checked = 0
    for ep, view in _rendered(pool, views):
        points = view.points()
        table = view.instance == sim.TABLE_ID
        assert np.all(np.abs(points[table][:, 1]) <= MM)
        for iid, box in _boxes(ep).items():
            mask = view.instance == iid
            if not mask.any():
                continue
            local = (points[mask] - np.asarray(box.center)) @ box.rotation_matrix  # box frame
            half = np.asarray(box.half_extents)
            assert np.all(np.abs(local) <= half + MM), (ep.seed, ep.task, iid)  # inside the bounds
            on_face = np.abs(np.abs(local) - half) <= MM
            assert np.all(on_face.any(axis=1)), (ep.seed, ep.task, iid)  # on one face plane
            checked += int(mask.sum())
    assert checked > 5000


def test_round_pixels_back_project_onto_their_surface(pool, views) -> None:
    spheres = cylinders = 0
    for ep, view in _rendered(pool, views):
        points = view.points()
        for it in ep.items:
            mask = view.instance == it.instance_id
            if it.shape == "cube" or not mask.any():
                continue
            p = points[mask]
            c, r = np.asarray(it.center), it.size / 2.0
            if it.shape == "sphere":
                assert np.all(np.abs(np.linalg.norm(p - c, axis=1) - r) <= MM)
                spheres += 1
            else:
                radial = np.hypot(p[:, 0] - it.x, p[:, 2] - it.z)
                side = (np.abs(radial - r) <= MM) & (p[:, 1] >= it.pedestal - MM) & (p[:, 1] <= it.top + MM)
                cap = (np.abs(p[:, 1] - it.top) <= MM) & (radial <= r + MM)
                assert np.all(side | cap), (ep.seed, ep.task, it)
                cylinders += 1
    assert spheres > 20 and cylinders > 20


def test_top_centre_reads_back_the_top_height(pool, views) -> None:
    """Project the top centre of each flat-topped object; where that pixel shows the object, its point
    lies on the top plane. Almost every such top is visible from 35° above."""
    candidates = hits = 0
    for ep, view in _rendered(pool, views):
        points = view.points()
        for it in ep.items:
            if it.shape == "sphere":
                continue
            candidates += 1
            uv, _ = view.camera.project(np.array([it.x, it.top, it.z]))
            row, col = int(uv[1]), int(uv[0])
            if view.instance[row, col] != it.instance_id:  # occluded there
                continue
            hits += 1
            assert abs(points[row, col, 1] - it.top) <= MM, (ep.seed, ep.task, it)
            # and nothing of the object is above its top
            assert points[view.instance == it.instance_id][:, 1].max() <= it.top + MM
    assert hits >= 0.8 * candidates and hits > 100


def test_centre_from_visible_points(pool, views) -> None:
    """The mean of an object's visible surface points lies inside it (a convex body contains the average of
    its points); a sphere fitted to a sphere's points recovers its centre and radius within 1 mm."""
    fitted = 0
    for ep, view in _rendered(pool, views):
        points = view.points()
        boxes = _boxes(ep)
        for it in ep.items:
            mask = view.instance == it.instance_id
            if not mask.any():
                continue
            p = points[mask]
            m = p.mean(axis=0)
            c, r = np.asarray(it.center), it.size / 2.0
            if it.shape == "cube":
                assert boxes[it.instance_id].contains(m, tol=MM)
            elif it.shape == "sphere":
                assert np.linalg.norm(m - c) <= r + MM
                if len(p) >= 8:  # |p|^2 = 2 c.p + (r^2 - |c|^2), linear in (c, k)
                    a = np.concatenate([2.0 * p, np.ones((len(p), 1))], axis=1)
                    sol = np.linalg.lstsq(a, (p * p).sum(axis=1), rcond=None)[0]
                    centre, radius = sol[:3], np.sqrt(sol[3] + sol[:3] @ sol[:3])
                    assert np.linalg.norm(centre - c) <= MM and abs(radius - r) <= MM
                    fitted += 1
            else:
                assert np.hypot(m[0] - it.x, m[2] - it.z) <= r + MM
                assert it.pedestal - MM <= m[1] <= it.top + MM
    assert fitted > 20


# ------------------------------------------------------------------------------- the expert and the rules


def _rollout(episodes: list[sim.Episode], ee: np.ndarray, policy) -> np.ndarray:
    """Five chunks of ``policy(goal, grip, ee)`` executed from ``ee``; returns success (B,)."""
    goal = np.array([ep.goal for ep in episodes])
    grip = np.array([ep.grip for ep in episodes])
    gripper = np.zeros(len(episodes))
    for _ in range(sim.EPISODE_STEPS // sim.CHUNK):
        ee, gripper = sim.execute(ee, policy(goal, grip, ee))
    return sim.success(goal, grip, ee, gripper)


def test_expert_succeeds_everywhere(pool) -> None:
    episodes = [ep for t in sim.TASKS for ep in pool[t][:10]]
    home = np.tile(np.asarray(sim.HOME), (len(episodes), 1))
    assert _rollout(episodes, home, sim.expert_chunk).all()
    rng = np.random.default_rng(0)  # random starts: anywhere over the workspace, 1 to 30 cm up
    (x0, x1), (z0, z1) = sim.WORKSPACE
    lo, hi = np.array([x0, 0.01, z0]), np.array([x1, 0.30, z1])
    for _ in range(5):
        start = rng.uniform(lo, hi, home.shape)
        assert _rollout(episodes, start, sim.expert_chunk).all()


def test_zero_policy_fails(pool) -> None:
    episodes = [ep for t in sim.TASKS for ep in pool[t][:50]]
    home = np.tile(np.asarray(sim.HOME), (len(episodes), 1))
    zero = lambda goal, grip, ee: np.zeros((len(ee), sim.CHUNK, 4))  # noqa: E731
    assert len(episodes) == 200 and _rollout(episodes, home, zero).mean() < 0.05


def test_expert_states_follow_execute_without_noise(pool) -> None:
    ep = pool["behind"][3]
    states, chunks = sim.expert_states(ep, np.random.default_rng(0))
    assert states.shape == (5, 3) and chunks.shape == (5, sim.CHUNK, 4)
    ee = np.asarray(sim.HOME)[None]
    for k in range(5):  # execute sums a chunk's steps in another order: equal to rounding
        np.testing.assert_allclose(states[k], ee[0], atol=1e-12)
        expected = sim.expert_chunk(np.asarray([ep.goal]), np.array([ep.grip]), ee)[0]
        np.testing.assert_allclose(chunks[k], expected, atol=1e-12)
        ee, _ = sim.execute(ee, chunks[k][None])


def test_execute_clips_each_step() -> None:
    ee = np.zeros((2, 3))
    chunk = np.zeros((2, 4, 4))
    chunk[0, :, 0] = 0.2  # four steps of +20 cm in x -> +5 cm each
    chunk[0, :, 1] = [-0.3, 0.01, 0.02, -0.07]
    chunk[1, :, 2] = 0.049
    chunk[:, -1, 3] = [1.0, 0.0]
    new, gripper = sim.execute(ee, chunk)
    np.testing.assert_allclose(new[0], [0.2, -0.05 + 0.01 + 0.02 - 0.05, 0.0], atol=1e-15)
    np.testing.assert_allclose(new[1], [0.0, 0.0, 4 * 0.049], atol=1e-15)
    np.testing.assert_array_equal(gripper, [1.0, 0.0])
    with pytest.raises(ValueError, match="ee"):
        sim.execute(np.zeros(3), chunk)
    with pytest.raises(ValueError, match="chunk"):
        sim.execute(ee, np.zeros((2, 4, 3)))
    with pytest.raises(ValueError, match="chunk"):
        sim.execute(ee, np.zeros((3, 4, 4)))
    with pytest.raises(ValueError, match="chunk"):
        sim.execute(ee, np.zeros((2, 4)))


# ------------------------------------------------------------------------------------------- the tasks


def test_nearer_target_is_nearer_in_depth_and_pixels(pool, views) -> None:
    for ep, view in zip(pool["nearer"], views["nearer"], strict=True):
        a, b = ep.items[0], ep.items[1]
        assert a.shape == b.shape == "cube" and a.colour == b.colour
        assert all(it.colour != a.colour for it in ep.items[2:])
        assert ep.words[-2:] == (a.colour, "cube") and ep.grip == 1
        target, other = ep.items[ep.target], ep.items[1 - ep.target]
        assert ep.goal == (target.x, target.top, target.z)
        dt, do = sim.z_depth(target.center), sim.z_depth(other.center)
        assert do - dt >= sim.MIN_DEPTH_GAP
        pt = view.depth[view.instance == target.instance_id]
        po = view.depth[view.instance == other.instance_id]
        assert pt.size > 0 and po.size > 0, ep.seed
        assert np.median(pt) < np.median(po), ep.seed


def test_nearer_cues_are_balanced(pool, views) -> None:
    """Lower in the image and more pixels each point at the target in about half of the episodes
    (a fair coin each; binomial(200, 1/2) has sd 3.5 pp, so 35-65 % is a > 4 sigma window)."""
    lower = bigger = 0
    cam = sim.camera()
    for ep, view in zip(pool["nearer"], views["nearer"], strict=True):
        target, other = ep.items[ep.target], ep.items[1 - ep.target]
        (ut, uo), _ = cam.project(np.array([target.center, other.center]))
        lower += ut[1] > uo[1]
        bigger += (view.instance == target.instance_id).sum() > (view.instance == other.instance_id).sum()
    assert 0.35 <= lower / NEARER <= 0.65
    assert 0.35 <= bigger / NEARER <= 0.65


def test_tallest_goal_is_above_a_clear_winner(pool) -> None:
    for ep in pool["tallest"]:
        target = ep.items[ep.target]
        others = [it.top for k, it in enumerate(ep.items) if k != ep.target]
        assert target.top - max(others) >= sim.MIN_HEIGHT_GAP - 1e-12
        np.testing.assert_allclose(ep.goal, (target.x, target.top + 0.03, target.z), atol=1e-12)
        assert ep.grip == 0


def test_behind_goal_is_beyond_the_one_cylinder(pool) -> None:
    for ep in pool["behind"]:
        cylinders = [k for k, it in enumerate(ep.items) if it.shape == "cylinder"]
        assert cylinders == [ep.target]
        cyl = ep.items[ep.target]
        assert sim.z_depth(ep.goal) > sim.z_depth((cyl.x, ep.goal[1], cyl.z))
        assert ep.goal[1] == pytest.approx(0.04) and ep.grip == 0
        assert ep.words[-2:] == (cyl.colour, "cylinder")


def test_colour_task_has_no_pedestals_and_names_the_target(pool) -> None:
    for ep in pool["colour"]:
        assert all(it.pedestal == 0.0 for it in ep.items)
        target = ep.items[ep.target]
        assert ep.words[-2:] == (target.colour, target.shape)
        assert len({it.colour for it in ep.items}) == len(ep.items)  # the colour word alone identifies it
        assert ep.goal == (target.x, target.top, target.z) and ep.grip == 1


def test_instruction_ids(pool) -> None:
    assert len(sim.VOCABULARY) == 30 and len(set(sim.VOCABULARY)) == 30 and sim.VOCABULARY[0] == "<pad>"
    for eps in pool.values():
        for ep in eps:
            assert len(ep.words) <= sim.INSTRUCTION_LENGTH
            ids = sim.instruction_ids(ep.words)
            assert ids.shape == (8,) and ids.dtype == np.int64
            n = len(ep.words)
            assert np.all((ids[:n] > 0) & (ids[:n] < 30)) and np.all(ids[n:] == 0)
            assert tuple(sim.VOCABULARY[i] for i in ids[:n]) == ep.words
    with pytest.raises(ValueError, match="words"):
        sim.instruction_ids(("pick", "up", "the", "violet", "cube"))
    with pytest.raises(ValueError, match="words"):
        sim.instruction_ids(("the",) * 9)


# ------------------------------------------------------------------------------------- per-patch labels


def _patch(a: np.ndarray, p: int) -> np.ndarray:
    r, c = divmod(p, sim.GRID)
    return a[r * sim.PATCH : (r + 1) * sim.PATCH, c * sim.PATCH : (c + 1) * sim.PATCH]


def test_patch_labels_of_single_object_patches(pool, views) -> None:
    """A patch whose non-table pixels all belong to one object (or pedestal) gets its class when they cover
    >= 1/4 of the patch and the table's class otherwise; a patch of table only is table."""
    quarter = sim.PATCH * sim.PATCH // 4
    objects = full = tables = 0
    for ep, view in _rendered(pool, views):
        colour, shape = sim.patch_labels(ep, view)
        assert colour.shape == shape.shape == (36,) and colour.dtype == shape.dtype == np.int64
        items = {it.instance_id: it for it in ep.items}
        for p in range(sim.NUM_PATCHES):
            ids = _patch(view.instance, p)
            rest = np.unique(ids[ids != sim.TABLE_ID])
            if len(rest) > 1:
                continue
            if len(rest) == 0 or (ids != sim.TABLE_ID).sum() < quarter:
                assert (colour[p], shape[p]) == (0, 0)
                tables += 1
            elif int(rest[0]) in items:
                it = items[int(rest[0])]
                assert sim.COLOUR_CLASSES[colour[p]] == it.colour and sim.SHAPE_CLASSES[shape[p]] == it.shape
                objects += 1
                full += bool(np.all(ids == rest[0]))
            else:  # a pedestal
                assert (colour[p], shape[p]) == (1, 1)
    assert objects > 100 and full >= 1 and tables > 1000


def test_target_patches_cover_the_target(pool, views) -> None:
    for ep, view in _rendered(pool, views):
        mask = sim.target_patches(ep, view)
        assert mask.shape == (36,) and mask.dtype == bool and mask.any(), (ep.seed, ep.task)
        tid = ep.items[ep.target].instance_id
        expected = [bool((_patch(view.instance, p) == tid).any()) for p in range(sim.NUM_PATCHES)]
        assert mask.tolist() == expected


def test_patch_geometry_is_the_patch_mean(pool, views) -> None:
    view = views["tallest"][0]
    geo = sim.patch_geometry(view)
    assert geo.shape == (36, 4)
    points = view.points()
    for p in (0, 14, 35):
        np.testing.assert_allclose(geo[p, 0], _patch(view.depth, p).mean(), rtol=1e-12)
        np.testing.assert_allclose(geo[p, 1:], _patch(points, p).reshape(-1, 3).mean(axis=0), rtol=1e-12)
    np.testing.assert_array_equal(sim.patch_centres(view), geo[:, 1:])


# ------------------------------------------------------------------------------- determinism, bad input


def test_same_seed_same_episode_and_render(pool, views) -> None:
    for task in ("colour", "tallest", "behind"):
        again = sim.sample_episode(DEV + 4, task)
        assert again == pool[task][4]
        view = sim.render_episode(again)
        for field in ("rgb", "depth", "instance", "normals"):
            assert getattr(view, field).tobytes() == getattr(views[task][4], field).tobytes()
    episodes = [pool[t][4] for t in sim.TASKS]
    assert all(a.items != b.items for k, a in enumerate(episodes) for b in episodes[k + 1 :])
    assert pool["colour"][4] != pool["colour"][5]


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="task"):
        sim.sample_episode(0, "stack")
    with pytest.raises(ValueError, match="seed"):
        sim.sample_episode(-1, "colour")
    with pytest.raises(TypeError, match="seed"):
        sim.sample_episode(1.5, "colour")
    with pytest.raises(TypeError, match="episode"):
        sim.render_episode("colour")
