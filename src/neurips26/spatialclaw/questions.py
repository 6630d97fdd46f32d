"""Spatial questions with exact answers, in nine families mirroring the paper's benchmark categories.

The families are our choice (the chapter's *What we changed and why*): distance, relative direction,
object perspective, counting, size, closest object, camera motion, a moving object, camera travel.

Families 1–3 and 7–9 are *chained geometry* (the answer needs several measured quantities combined:
distances, frames of reference, camera poses); 4–6 are *perception-dominated* (finding and telling apart
objects is most of the work). Each answer is computed from the scene's ground truth: centres and sizes of
the objects, their facing, the camera poses, the mover's track. A question is kept only when it is
answerable from the pixels (every object it names covers at least ``MIN_PIXELS`` pixels in some frame) and
unambiguous (angles at least 15° from a decision boundary, sizes and distances at least 15 % apart, the
closest object the same by centres and by surfaces, camera motions clearly dominated by one direction
between well-separated frames).

About a quarter of the questions name one object by a synonym of its category ("the red couch"); the
segmentation stand-in does not know synonyms, so an agent must notice the empty mask and recover.
``Question.names`` keeps the canonical names, in the order the text mentions them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations, permutations

import numpy as np

from neurips26.spatialclaw.scene_types import KINDS, ORIENTED, SYNONYMS, Frames, SceneObject, SpatialScene
from neurips26.spatialclaw.scenes import MIN_PIXELS, frames_for, make_scene, pixel_counts
from neurips26.validation import check_choice, check_int, check_seed

FAMILIES: tuple[str, ...] = (
    "distance",
    "relative_direction",
    "object_perspective",
    "counting",
    "size_comparison",
    "closest",
    "camera_motion",
    "mover_direction",
    "camera_distance",
)
GROUPS: dict[str, str] = {
    f: ("perception" if f in ("counting", "size_comparison", "closest") else "chained") for f in FAMILIES
}
#: Families that need a time axis (a video; the mover family also a moving object).
VIDEO_ONLY: tuple[str, ...] = ("camera_motion", "mover_direction", "camera_distance")
#: Fraction of object-naming questions that use a synonym for one object.
SYNONYM_RATE = 0.25
MARGIN_DEG = 15.0  # least angle between a direction and a decision boundary
SIZE_MARGIN = 1.15  # least ratio between two compared sizes or distances
MIN_SEPARATION = 4  # least number of frames between the two frames of a camera question
QUADRANTS = ("front-left", "front-right", "back-left", "back-right")
MOTIONS = ("left", "right", "forward", "backward")
#: Families with few possible answers, balanced within a scene (drawn uniformly among
#: the answers its candidates offer, from up to ``_MAX_DRAFTS`` candidates).
BALANCED: tuple[str, ...] = (
    "relative_direction",
    "object_perspective",
    "counting",
    "camera_motion",
    "mover_direction",
)
_MAX_DRAFTS = 400
MOVER_DIRECTIONS = ("left", "right", "towards the camera", "away from the camera")


@dataclass(frozen=True)
class Question:
    """One question. ``kind`` ``"mc"`` (``answer`` is one of ``choices``) or ``"numeric"`` (``answer`` a
    float in ``unit``; scored by MRA). ``scene_seed``, ``scene_kind``, ``scene_mover`` rebuild the scene
    (:func:`scene_of`); ``objects`` are the instance ids involved, ``frames`` the frames the text refers to,
    ``names`` the canonical references in text order (``"<colour> <category>"``, or for counting the
    counted category or colour)."""

    qid: str
    family: str
    group: str
    text: str
    kind: str
    choices: tuple[str, ...]
    answer: str | float
    scene_seed: int
    scene_kind: str
    scene_mover: bool
    objects: tuple[int, ...]
    frames: tuple[int, ...]
    unit: str
    names: tuple[str, ...]

    def __post_init__(self) -> None:
        check_choice("family", self.family, FAMILIES)
        check_choice("kind", self.kind, ("mc", "numeric"))
        if self.kind == "mc" and self.answer not in self.choices:
            raise ValueError(f"answer must be one of choices {self.choices}; got {self.answer!r}")
        if self.kind == "numeric" and (self.choices or not isinstance(self.answer, float)):
            raise ValueError("a numeric question has a float answer and no choices")


# --- wording ----------------------------------------------------------------------------------------------


def plural(word: str) -> str:
    """English plural of a category or synonym ("box" -> "boxes", "couch" -> "couches")."""
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


@dataclass(frozen=True)
class _Context:
    """What every family's generator reads: the scene, its renders, the objects an agent can see."""

    scene: SpatialScene
    frames: Frames
    visible: tuple[SceneObject, ...]
    rng: np.random.Generator


def _refs(ctx: _Context, objs: Sequence[SceneObject]) -> tuple[list[str], tuple[str, ...]]:
    """How the text names ``objs`` ("red sofa"; sometimes one of them by a synonym: "red couch") and
    their canonical names."""
    refs = [o.name for o in objs]
    if objs and ctx.rng.random() < SYNONYM_RATE:
        k = int(ctx.rng.integers(len(objs)))
        words = SYNONYMS[objs[k].category]
        refs[k] = f"{objs[k].colour} {words[int(ctx.rng.integers(len(words)))]}"
    return refs, tuple(o.name for o in objs)


def _shuffled(ctx: _Context, options: Sequence[str]) -> tuple[str, ...]:
    order = ctx.rng.permutation(len(options))
    return tuple(options[int(i)] for i in order)


def _xz(v: np.ndarray) -> np.ndarray:
    return np.array([v[0], 0.0, v[2]])


def _right_of(forward: np.ndarray) -> np.ndarray:
    """The right-hand direction of someone upright facing ``forward``: ``forward x up``."""
    f = _xz(forward)
    f = f / np.linalg.norm(f)
    return np.array([-f[2], 0.0, f[0]])


def _angle_to_axes(front: float, side: float) -> float:
    """Angle (degrees) between the direction ``(side, front)`` and the nearest of the four frame axes."""
    angle = math.degrees(math.atan2(side, front)) % 90.0
    return min(angle, 90.0 - angle)


# --- the families -------------------------------------------------------------------------------------
# Each candidate generator yields the distinct questions a scene supports, as (text, choices, answer,
# objects, frames, unit, names) tuples, in a seeded order; make_questions keeps the first ``count``.


def _distance(ctx: _Context):
    pairs = list(combinations(ctx.visible, 2))
    for i in ctx.rng.permutation(len(pairs)):
        a, b = pairs[int(i)]
        refs, names = _refs(ctx, (a, b))
        d = float(np.linalg.norm(a.center_at(0) - b.center_at(0)))
        text = f"What is the distance between the {refs[0]} and the {refs[1]} (centre to centre, in metres)?"
        yield text, (), d, (a.instance_id, b.instance_id), (), "m", names


def _relative_direction(ctx: _Context):
    triples = list(permutations(ctx.visible, 3))
    for i in ctx.rng.permutation(len(triples)):
        a, b, c = triples[int(i)]
        facing = _xz(b.center_at(0) - a.center_at(0))
        v = _xz(c.center_at(0) - a.center_at(0))
        if np.linalg.norm(facing) < 0.8 or np.linalg.norm(v) < 0.8:
            continue
        front, side = float(v @ facing) / np.linalg.norm(facing), float(v @ _right_of(facing))
        if _angle_to_axes(front, side) < MARGIN_DEG:
            continue
        answer = ("front" if front > 0 else "back") + "-" + ("right" if side > 0 else "left")
        refs, names = _refs(ctx, (a, b, c))
        text = (
            f"If I stand at the {refs[0]} facing the {refs[1]}, is the {refs[2]} to my front-left, "
            "front-right, back-left or back-right?"
        )
        yield (
            text,
            _shuffled(ctx, QUADRANTS),
            answer,
            (a.instance_id, b.instance_id, c.instance_id),
            (),
            "",
            names,
        )


def _object_perspective(ctx: _Context):
    pairs = [(a, b) for a, b in permutations(ctx.visible, 2) if a.category in ORIENTED]
    for i in ctx.rng.permutation(len(pairs)):
        a, b = pairs[int(i)]
        v = _xz(b.center_at(0) - a.center_at(0))
        dist = float(np.linalg.norm(v))
        side = float(v @ _right_of(a.front))
        # at least MARGIN_DEG away from straight ahead and straight behind
        if dist < 0.8 or abs(side) < dist * math.sin(math.radians(MARGIN_DEG)):
            continue
        refs, names = _refs(ctx, (a, b))
        text = (
            f"From the {refs[0]}'s point of view (facing where it faces), is the {refs[1]} on its left or "
            "its right?"
        )
        answer = "right" if side > 0 else "left"
        yield text, _shuffled(ctx, ("left", "right")), answer, (a.instance_id, b.instance_id), (), "", names


def _counting(ctx: _Context):
    """Count a category, or a colour shared by several objects; every counted object must be visible in
    some frame (the count is of distinct objects, not of detections per frame)."""
    visible_ids = {o.instance_id for o in ctx.visible}
    targets: list[tuple[str, str]] = sorted({("category", o.category) for o in ctx.scene.objects})
    colours = [o.colour for o in ctx.scene.objects]
    targets += sorted({("colour", c) for c in colours if colours.count(c) >= 2})
    for i in ctx.rng.permutation(len(targets)):
        by, value = targets[int(i)]
        counted = [o for o in ctx.scene.objects if getattr(o, by) == value]
        if not all(o.instance_id in visible_ids for o in counted):
            continue
        if by == "colour":
            text = f"How many {value} objects are in the room?"
        else:
            word = value
            if ctx.rng.random() < SYNONYM_RATE:
                word = SYNONYMS[value][int(ctx.rng.integers(len(SYNONYMS[value])))]
            text = f"How many {plural(word)} are in the room?"
        ids = tuple(o.instance_id for o in counted)
        yield text, (), float(len(counted)), ids, (), "", (value,)


def _size_comparison(ctx: _Context):
    measures = (
        ("taller", lambda o: o.size[1], ""),
        ("longer", lambda o: max(o.size[0], o.size[2]), " (longest horizontal side)"),
    )
    options = [(m, a, b) for m in measures for a, b in permutations(ctx.visible, 2)]
    for i in ctx.rng.permutation(len(options)):
        (word, measure, note), a, b = options[int(i)]
        big, small = max(measure(a), measure(b)), min(measure(a), measure(b))
        if big < SIZE_MARGIN * small:
            continue
        refs, names = _refs(ctx, (a, b))
        answer = refs[0] if measure(a) > measure(b) else refs[1]
        text = f"Which is {word}{note}, the {refs[0]} or the {refs[1]}?"
        yield text, _shuffled(ctx, refs), answer, (a.instance_id, b.instance_id), (), "", names


def _bounds(o: SceneObject) -> tuple[np.ndarray, np.ndarray]:
    """World axis-aligned bounds of an object at frame 0 (yaws are quarter turns)."""
    w, h, d = o.size
    half = np.array([d, h, w] if int(round(o.yaw_deg)) % 180 == 90 else [w, h, d]) / 2.0
    return o.center_at(0) - half, o.center_at(0) + half


def _gap(a: SceneObject, b: SceneObject) -> float:
    """Shortest distance between the two objects' bounding boxes."""
    (lo_a, hi_a), (lo_b, hi_b) = _bounds(a), _bounds(b)
    return float(np.linalg.norm(np.maximum(0.0, np.maximum(lo_a - hi_b, lo_b - hi_a))))


def _closest(ctx: _Context):
    objs = ctx.visible
    for i in ctx.rng.permutation(len(objs)):
        a = objs[int(i)]
        others = [o for o in objs if o is not a]
        if len(others) < 3:
            return
        for _ in range(6):
            pick = [others[int(k)] for k in ctx.rng.choice(len(others), 3, replace=False)]
            dists = sorted(float(np.linalg.norm(o.center_at(0) - a.center_at(0))) for o in pick)
            if dists[1] >= SIZE_MARGIN * dists[0] and dists[1] - dists[0] >= 0.25:
                break
        else:
            continue
        nearest = min(pick, key=lambda o: float(np.linalg.norm(o.center_at(0) - a.center_at(0))))
        if nearest is not min(
            pick, key=lambda o: _gap(a, o)
        ):  # "closest" must not hinge on centre vs surface
            continue
        refs, names = _refs(ctx, (a, *pick))
        answer = refs[1 + pick.index(nearest)]
        text = f"Which object is closest to the {refs[0]}: the {refs[1]}, the {refs[2]} or the {refs[3]}?"
        ids = tuple(o.instance_id for o in (a, *pick))
        yield text, _shuffled(ctx, refs[1:]), answer, ids, (), "", names


def _frame_pairs(ctx: _Context) -> list[tuple[int, int]]:
    n = ctx.scene.num_frames
    pairs = [(i, j) for i in range(n) for j in range(i + MIN_SEPARATION, n)]
    return [pairs[int(k)] for k in ctx.rng.permutation(len(pairs))]


def camera_displacement(scene: SpatialScene, i: int, j: int) -> tuple[float, float, float]:
    """Motion of the camera from frame ``i`` to ``j`` in frame ``i``'s upright heading frame: metres to the
    right, metres forward, and the turn in degrees (positive = to the right)."""
    r_i, r_j = scene.poses[i, :3, :3], scene.poses[j, :3, :3]
    step = scene.poses[j, :3, 3] - scene.poses[i, :3, 3]
    forward = _xz(r_i[:, 2]) / np.linalg.norm(_xz(r_i[:, 2]))
    right = _right_of(forward)
    f_j = _xz(r_j[:, 2])
    turn = math.degrees(math.atan2(float(f_j @ right), float(f_j @ forward)))
    return float(step @ right), float(step @ forward), turn


def _camera_motion(ctx: _Context):
    for i, j in _frame_pairs(ctx):
        lateral, ahead, turn = camera_displacement(ctx.scene, i, j)
        options = []
        big, small = max(abs(lateral), abs(ahead)), min(abs(lateral), abs(ahead))
        if big >= 0.4 and big >= 2.0 * small:
            if abs(lateral) > abs(ahead):
                answer = "right" if lateral > 0 else "left"
            else:
                answer = "forward" if ahead > 0 else "backward"
            text = (
                f"Between frame {i} and frame {j}, did the camera move mainly left, right, forward or "
                f"backward (in the camera's own frame at frame {i})?"
            )
            options.append((text, _shuffled(ctx, MOTIONS), answer))
        if abs(turn) >= MARGIN_DEG:
            text = f"Between frame {i} and frame {j}, did the camera turn left or right?"
            options.append((text, _shuffled(ctx, ("left", "right")), "right" if turn > 0 else "left"))
        if options:
            text, choices, answer = options[int(ctx.rng.integers(len(options)))]
            yield text, choices, answer, (), (i, j), "", ()


def _mover_direction(ctx: _Context):
    for mover in ctx.visible:
        if not mover.moving:
            continue
        step = mover.center_at(ctx.scene.num_frames - 1) - mover.center_at(0)
        forward = _xz(ctx.scene.poses[0, :3, 2])
        forward = forward / np.linalg.norm(forward)
        lateral, ahead = float(step @ _right_of(forward)), float(step @ forward)
        big, small = max(abs(lateral), abs(ahead)), min(abs(lateral), abs(ahead))
        if big < 0.3 or big < 2.0 * small:  # too short, or not clearly along one axis
            continue
        if abs(lateral) > abs(ahead):
            answer = "right" if lateral > 0 else "left"
        else:
            answer = "away from the camera" if ahead > 0 else "towards the camera"
        refs, names = _refs(ctx, (mover,))
        text = (
            f"In which direction did the moving {refs[0]} move, as seen from the first camera: left, right, "
            "towards the camera or away from it?"
        )
        yield text, _shuffled(ctx, MOVER_DIRECTIONS), answer, (mover.instance_id,), (0,), "", names


def _camera_distance(ctx: _Context):
    for i, j in _frame_pairs(ctx):
        d = float(np.linalg.norm(ctx.scene.poses[j, :3, 3] - ctx.scene.poses[i, :3, 3]))
        if d < 0.5:
            continue
        text = (
            f"How far did the camera travel between frame {i} and frame {j} (straight-line distance, "
            "in metres)?"
        )
        yield text, (), d, (), (i, j), "m", ()


_GENERATORS: dict[str, Callable] = {
    "distance": _distance,
    "relative_direction": _relative_direction,
    "object_perspective": _object_perspective,
    "counting": _counting,
    "size_comparison": _size_comparison,
    "closest": _closest,
    "camera_motion": _camera_motion,
    "mover_direction": _mover_direction,
    "camera_distance": _camera_distance,
}


def visible_objects(
    scene: SpatialScene, frames: Frames, min_pixels: int = MIN_PIXELS
) -> tuple[SceneObject, ...]:
    """The objects covering at least ``min_pixels`` pixels in at least one frame."""
    counts = pixel_counts(scene, frames)
    return tuple(o for k, o in enumerate(scene.objects) if counts[:, k].max() >= min_pixels)


def make_questions(scene: SpatialScene, family: str, seed: int, count: int = 1) -> list[Question]:
    """Up to ``count`` distinct questions of ``family`` about ``scene`` (fewer, possibly none, when the
    scene cannot support more: e.g. no oriented object, no mover, a multi-view scene for a camera
    family). The same arguments give the same questions."""
    if not isinstance(scene, SpatialScene):
        raise TypeError(f"scene must be a SpatialScene; got {type(scene).__name__}")
    check_choice("family", family, FAMILIES)
    seed = check_seed("seed", seed)
    count = check_int("count", count, minimum=0)
    if family in VIDEO_ONLY and scene.kind != "video":
        return []
    frames = frames_for(scene)
    rng = np.random.default_rng([seed, FAMILIES.index(family), scene.seed, KINDS.index(scene.kind)])
    ctx = _Context(scene, frames, visible_objects(scene, frames), rng)
    mover = any(o.moving for o in scene.objects)
    drafts: list[tuple] = []
    seen: set[str] = set()
    for draft in _GENERATORS[family](ctx):
        if draft[0] not in seen:
            seen.add(draft[0])
            drafts.append(draft)
        if len(drafts) >= (_MAX_DRAFTS if family in BALANCED else count):
            break
    out: list[Question] = []
    while drafts and len(out) < count:
        k = 0
        if family in BALANCED:  # a uniformly drawn answer among those the scene offers, so no prior pays
            answers = sorted({str(d[2]) for d in drafts})
            target = answers[int(rng.integers(len(answers)))]
            k = next(i for i, d in enumerate(drafts) if str(d[2]) == target)
        text, choices, answer, objects, frame_ids, unit, names = drafts.pop(k)
        out.append(
            Question(
                qid=f"{family}-{scene.kind}{scene.seed}-q{seed}-{len(out)}",
                family=family,
                group=GROUPS[family],
                text=text,
                kind="numeric" if not choices else "mc",
                choices=choices,
                answer=answer,
                scene_seed=scene.seed,
                scene_kind=scene.kind,
                scene_mover=mover,
                objects=objects,
                frames=frame_ids,
                unit=unit,
                names=names,
            )
        )
    return out


def _scene_plan(family: str, k: int) -> tuple[str, bool]:
    """Kind and mover flag of the ``k``-th scene a suite builds for ``family``: multi-view for counting and
    every third distance/closest scene, a mover only for the mover family, video otherwise."""
    if family == "counting" or (family in ("distance", "closest") and k % 3 == 2):
        return "multiview", False
    return "video", family == "mover_direction"


def question_suite(
    families: Sequence[str] = FAMILIES, per_family: int = 20, seed: int = 0, *, questions_per_scene: int = 3
) -> list[Question]:
    """``per_family`` questions of each family, over scenes built with seeds drawn from ``seed`` (default
    scene arguments, so :func:`scene_of` rebuilds them), at most ``questions_per_scene`` per scene (one for
    the mover family, whose scenes have one mover). Ordered by family, then scene."""
    if isinstance(families, str) or not isinstance(families, Sequence):
        raise TypeError(f"families must be a sequence of family names; got {families!r}")
    for f in families:
        check_choice("families", f, FAMILIES)
    per_family = check_int("per_family", per_family, minimum=1)
    seed = check_seed("seed", seed)
    questions_per_scene = check_int("questions_per_scene", questions_per_scene, minimum=1)
    out: list[Question] = []
    for family in dict.fromkeys(families):
        rng = np.random.default_rng([seed, FAMILIES.index(family)])
        per_scene = 1 if family == "mover_direction" else questions_per_scene
        found: list[Question] = []
        max_scenes = 4 * math.ceil(per_family / per_scene) + 10
        for k in range(max_scenes):
            if len(found) >= per_family:
                break
            kind, mover = _scene_plan(family, k)
            scene = make_scene(int(rng.integers(2**31)), kind, mover=mover)
            found += make_questions(scene, family, seed, min(per_scene, per_family - len(found)))
        if len(found) < per_family:
            raise RuntimeError(
                f"only {len(found)} {family} questions in {max_scenes} scenes"
            )  # pragma: no cover
        out += found
    return out


def scene_of(question: Question) -> SpatialScene:
    """The scene a question is about (as :func:`question_suite` builds it: default scene arguments)."""
    if not isinstance(question, Question):
        raise TypeError(f"question must be a Question; got {type(question).__name__}")
    return make_scene(question.scene_seed, question.scene_kind, mover=question.scene_mover)
