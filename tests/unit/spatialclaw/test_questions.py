"""Question families: every answer recomputed here from the scene, choices, names and synonyms, visibility
of what a question names, the suite's sizes and scene plan, determinism and argument checks."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from neurips26.spatialclaw.questions import (
    FAMILIES,
    GROUPS,
    Question,
    make_questions,
    plural,
    question_suite,
    scene_of,
)
from neurips26.spatialclaw.scene_types import CATEGORIES, ORIENTED, SYNONYMS, SceneObject, SpatialScene
from neurips26.spatialclaw.scenes import frames_for, make_scene, pixel_counts


@pytest.fixture(scope="module", autouse=True)
def _private_cache(tmp_path_factory):
    """One render cache for the module (renders are reused across tests, never the user's cache)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NEURIPS26_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(scope="module")
def suite() -> list[Question]:
    return question_suite(FAMILIES, per_family=5, seed=3, questions_per_scene=2)


def _refers_to(ref: str, obj: SceneObject) -> bool:
    """Whether a text reference ("red couch") names ``obj`` by its category or a synonym of it."""
    colour, _, word = ref.partition(" ")
    return colour == obj.colour and (word == obj.category or word in SYNONYMS[obj.category])


def _obj(scene: SpatialScene, q: Question, k: int) -> SceneObject:
    return scene.by_name(q.names[k])


def _flat(v: np.ndarray) -> np.ndarray:
    return np.array([v[0], 0.0, v[2]])


def _right(forward: np.ndarray) -> np.ndarray:
    f = _flat(forward) / np.linalg.norm(_flat(forward))
    return np.cross(f, [0.0, 1.0, 0.0])


def _expected(scene: SpatialScene, q: Question) -> str | float:
    """The answer, derived here without the module's helpers."""
    c = [np.asarray(_obj(scene, q, k).center) for k in range(len(q.names))] if q.family != "counting" else []
    if q.family == "distance":
        return float(np.linalg.norm(c[0] - c[1]))
    if q.family == "relative_direction":
        facing = _flat(c[1] - c[0])
        v = _flat(c[2] - c[0])
        front = "front" if v @ facing > 0 else "back"
        return front + "-" + ("right" if v @ _right(facing) > 0 else "left")
    if q.family == "object_perspective":
        a = _obj(scene, q, 0)
        assert a.category in ORIENTED
        return "right" if (c[1] - c[0]) @ _right(a.front) > 0 else "left"
    if q.family == "counting":
        (target,) = q.names
        key = "category" if target in CATEGORIES else "colour"
        return float(sum(getattr(o, key) == target for o in scene.objects))
    if q.family == "size_comparison":
        a, b = _obj(scene, q, 0), _obj(scene, q, 1)
        size = (lambda o: o.size[1]) if "taller" in q.text else (lambda o: max(o.size[0], o.size[2]))
        winner = a if size(a) > size(b) else b
        return next(ch for ch in q.choices if _refers_to(ch, winner))
    if q.family == "closest":
        others = [_obj(scene, q, k) for k in (1, 2, 3)]
        winner = min(others, key=lambda o: np.linalg.norm(np.asarray(o.center) - c[0]))
        return next(ch for ch in q.choices if _refers_to(ch, winner))
    i, j = (q.frames + (0,))[:2]
    if q.family == "camera_distance":
        return float(np.linalg.norm(scene.poses[j, :3, 3] - scene.poses[i, :3, 3]))
    if q.family == "camera_motion":
        forward, right = _flat(scene.poses[i, :3, 2]), scene.poses[i, :3, 0]
        forward /= np.linalg.norm(forward)
        if "turn" in q.text:
            return "right" if scene.poses[j, :3, 2] @ right > 0 else "left"
        step = scene.poses[j, :3, 3] - scene.poses[i, :3, 3]
        if abs(step @ right) > abs(step @ forward):
            return "right" if step @ right > 0 else "left"
        return "forward" if step @ forward > 0 else "backward"
    if q.family == "mover_direction":
        mover = _obj(scene, q, 0)
        step = np.asarray(mover.track[-1]) - np.asarray(mover.track[0])
        if abs(step[0]) > abs(step[2]):  # the first camera: right = +X, forward = -Z
            return "right" if step[0] > 0 else "left"
        return "away from the camera" if step[2] < 0 else "towards the camera"
    raise AssertionError(q.family)


def test_every_answer_is_recomputed_exactly(suite):
    for q in suite:
        scene = scene_of(q)
        want = _expected(scene, q)
        if q.kind == "numeric":
            assert isinstance(q.answer, float) and q.answer == pytest.approx(want, rel=1e-12)
        else:
            assert q.answer == want, q.text


@pytest.mark.parametrize("family", ["distance", "relative_direction", "object_perspective", "closest"])
@pytest.mark.parametrize("seed", [11, 12])
def test_answers_on_more_scenes(family, seed):
    scene = make_scene(seed)
    for q in make_questions(scene, family, seed=seed, count=4):
        assert (
            q.answer == pytest.approx(_expected(scene, q))
            if q.kind == "numeric"
            else q.answer == _expected(scene, q)
        )


def test_suite_sizes_groups_and_ids(suite):
    assert len(suite) == 5 * len(FAMILIES)
    assert Counter(q.family for q in suite) == {f: 5 for f in FAMILIES}
    assert len({q.qid for q in suite}) == len(suite)
    for q in suite:
        assert q.group == GROUPS[q.family]
    assert {f for f, g in GROUPS.items() if g == "perception"} == {"counting", "size_comparison", "closest"}
    small = question_suite(("distance", "camera_distance"), per_family=3, seed=5)
    assert [q.family for q in small] == ["distance"] * 3 + ["camera_distance"] * 3


def test_scene_plan(suite):
    for q in suite:
        scene = scene_of(q)
        assert scene.seed == q.scene_seed and scene.kind == q.scene_kind
        assert q.scene_mover == any(o.moving for o in scene.objects) == (q.family == "mover_direction")
        if q.family == "counting":
            assert q.scene_kind == "multiview"
        if q.family in ("camera_motion", "camera_distance", "mover_direction", "relative_direction"):
            assert q.scene_kind == "video"
    assert {q.scene_kind for q in suite if q.family in ("distance", "closest")} >= {"video"}


def test_choices_names_and_wording(suite):
    for q in suite:
        scene = scene_of(q)
        if q.kind == "mc":
            assert q.answer in q.choices and len(set(q.choices)) == len(q.choices) >= 2
        else:
            assert q.choices == () and q.unit in ("m", "")
        assert len({o.name for o in scene.objects}) == len(scene.objects)
        if q.family == "counting":
            (target,) = q.names
            words = (target, *SYNONYMS.get(target, ()))
            assert any(f"many {plural(w)} " in q.text or f"many {w} objects" in q.text for w in words)
            continue
        for k, name in enumerate(q.names):  # each canonical name is an object, referred to in the text
            obj = scene.by_name(name)
            assert obj.instance_id == q.objects[k]
            refs = [f"{obj.colour} {w}" for w in (obj.category, *SYNONYMS[obj.category])]
            ends = (" ", "'s", "?", ",", ":")
            assert any(
                f"the {pre}{r}{end}" in q.text for r in refs for pre in ("", "moving ") for end in ends
            )
            if q.family in ("size_comparison", "closest") and k >= (q.family == "closest"):
                assert any(_refers_to(ch, obj) for ch in q.choices)


def test_synonyms_appear_in_about_a_quarter():
    qs = question_suite(("distance", "closest", "relative_direction"), per_family=12, seed=1)
    with_synonym = [q for q in qs if any(n not in q.text for n in q.names)]
    assert 0.08 <= len(with_synonym) / len(qs) <= 0.45
    for q in with_synonym:  # exactly one reference changed, to a synonym of its category
        changed = [n for n in q.names if n not in q.text]
        assert len(changed) == 1
        colour, category = changed[0].split(" ", 1)
        assert any(f"{colour} {w}" in q.text for w in SYNONYMS[category])


def test_involved_objects_are_visible_and_frames_separated(suite):
    for q in suite:
        scene = scene_of(q)
        counts = pixel_counts(scene, frames_for(scene))
        for iid in q.objects:
            k = [o.instance_id for o in scene.objects].index(iid)
            assert counts[:, k].max() >= 20, (q.text, iid)
        if q.family in ("camera_motion", "camera_distance"):
            i, j = q.frames
            assert j - i >= 4 and 0 <= i < j < scene.num_frames
            if q.family == "camera_distance":
                assert q.answer >= 0.5


def _box_gap(a: SceneObject, b: SceneObject) -> float:
    def bounds(o):
        w, h, d = o.size
        half = np.array([d, h, w] if o.yaw_deg % 180 == 90 else [w, h, d]) / 2
        return np.asarray(o.center) - half, np.asarray(o.center) + half

    (la, ha), (lb, hb) = bounds(a), bounds(b)
    return float(np.linalg.norm(np.clip(np.maximum(la - hb, lb - ha), 0, None)))


def test_margins_hold(suite):
    for q in suite:
        scene = scene_of(q)
        if q.family == "relative_direction":
            a, b, c = (np.asarray(scene.by_name(n).center) for n in q.names)
            facing, v = _flat(b - a), _flat(c - a)
            angle = math.degrees(math.atan2(v @ _right(facing), v @ facing / np.linalg.norm(facing))) % 90
            assert 15 - 1e-9 <= angle <= 75 + 1e-9
        if q.family == "size_comparison":
            a, b = (scene.by_name(n) for n in q.names)
            size = (lambda o: o.size[1]) if "taller" in q.text else (lambda o: max(o.size[0], o.size[2]))
            assert max(size(a), size(b)) >= 1.15 * min(size(a), size(b))
        if q.family == "closest":
            ref, *others = (np.asarray(scene.by_name(n).center) for n in q.names)
            d = sorted(np.linalg.norm(o - ref) for o in others)
            assert d[1] >= 1.15 * d[0]
            objs = [scene.by_name(n) for n in q.names]
            gaps = [_box_gap(objs[0], o) for o in objs[1:]]
            by_centre = [np.linalg.norm(o - ref) for o in others]
            assert int(np.argmin(gaps)) == int(np.argmin(by_centre))  # closest by surfaces too


def test_camera_families_need_a_video_and_the_mover_family_a_mover():
    assert make_questions(make_scene(2, "multiview"), "camera_motion", seed=0, count=3) == []
    assert make_questions(make_scene(2), "mover_direction", seed=0, count=3) == []
    qs = make_questions(make_scene(2, mover=True), "mover_direction", seed=0, count=3)
    assert len(qs) <= 1


def test_determinism():
    scene = make_scene(6)
    a = make_questions(scene, "relative_direction", seed=4, count=3)
    b = make_questions(scene, "relative_direction", seed=4, count=3)
    assert a == b and len(a) == 3
    assert make_questions(scene, "relative_direction", seed=5, count=3) != a
    assert question_suite(("camera_motion",), 2, seed=9) == question_suite(("camera_motion",), 2, seed=9)


def test_bad_arguments_name_themselves():
    scene = make_scene(0)
    with pytest.raises(ValueError, match="family"):
        make_questions(scene, "height", seed=0)
    with pytest.raises(ValueError, match="seed"):
        make_questions(scene, "distance", seed=-1)
    with pytest.raises(ValueError, match="count"):
        make_questions(scene, "distance", seed=0, count=-1)
    with pytest.raises(TypeError, match="scene"):
        make_questions("scene", "distance", seed=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="families"):
        question_suite(("distance", "height"), 1)
    with pytest.raises(TypeError, match="families"):
        question_suite("distance", 1)
    with pytest.raises(ValueError, match="per_family"):
        question_suite(("distance",), 0)
    with pytest.raises(TypeError, match="question"):
        scene_of("q")  # type: ignore[arg-type]


def test_question_rejects_an_answer_outside_its_choices():
    with pytest.raises(ValueError, match="answer"):
        Question("q", "closest", "perception", "t", "mc", ("a", "b"), "c", 0, "video", False, (), (), "", ())
