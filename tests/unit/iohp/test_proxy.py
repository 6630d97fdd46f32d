"""Human proxies: rigid attachment, reference proxies, JSON schema, the prompt-only oracle, retry/fallback."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
import torch

from neurips26.iohp.geometry import (
    axis_overlaps,
    overlap_area,
    penetration_depth_exact,
    point_rectangle_distance,
)
from neurips26.iohp.layout import ROOM_TYPES, Furniture, Layout
from neurips26.iohp.proxy import (
    BED_STRIP_DEPTH,
    BODY,
    CHAIR_PULL_OUT,
    MAX_DOOR_LEAF,
    PROXY_SCHEMA,
    SEATED_LEG_DEPTH,
    TV_VIEW_RANGE,
    FunctionalRelation,
    Proxy,
    ProxyOracle,
    allowed_matrix,
    attach,
    default_proxies,
    infer_proxies,
    object_names,
    parse_proxies,
    proxy_arrays,
    proxy_oracle,
    proxy_prompt,
    stack_proxy_arrays,
    to_answers,
)
from neurips26.iohp.rooms import CATEGORIES, sample_room
from neurips26.llm import Message, Recorder, Replay, Scripted, get_backend
from tests.unit.one_thread import one_thread  # noqa: F401  (autouse: one torch thread per test)

F64 = torch.float64


def _room():
    return sample_room("living", 0)[0]


def _layout(specs, poses=None) -> Layout:
    """A layout of ``specs`` = [(category, (w, d, h)), ...], named ``<category>_<k>``, at ``poses``."""
    counts: dict[str, int] = {}
    furniture = []
    for k, (category, size) in enumerate(specs):
        counts[category] = counts.get(category, 0) + 1
        pose = (0.0, 0.0, 0.0) if poses is None else poses[k]
        furniture.append(Furniture(category, size, pose, f"{category}_{counts[category]}"))
    return Layout(_room(), tuple(furniture))


def _every_category() -> Layout:
    return _layout([(c, (spec.width[0], spec.depth[0], spec.height[0])) for c, spec in CATEGORIES.items()])


def _rooms():
    for t, room_type in enumerate(ROOM_TYPES):
        for seed in range(3):
            room, furniture = sample_room(room_type, seed, density="dense")
            rng = np.random.default_rng(100 * t + seed)
            poses = np.c_[rng.uniform(0.5, 3.0, (len(furniture), 2)), rng.uniform(-3, 3, len(furniture))]
            yield Layout(room, furniture).with_poses(poses)


def _by_key(proxies):
    return {(p.owner, p.side): p for p in proxies}


# ----------------------------------------------------------------------------------------------------------
# Rigid attachment
# ----------------------------------------------------------------------------------------------------------


def test_proxy_at_origin_lies_at_half_depths_plus_offset_on_each_side():
    poses = np.zeros((1, 3))
    sizes = np.array([[1.0, 0.5, 0.8]])  # dyadic numbers: every sum below is exact
    size = (0.75, 0.5, 1.7)
    proxies = [
        Proxy(0, "stand", "front", 0.25, size),
        Proxy(0, "stand", "back", 0.25, size, shift=0.125),
        Proxy(0, "stand", "left", 0.25, size, shift=0.125),
        Proxy(0, "stand", "right", 0.0, size),
    ]
    center, rect, theta = attach(proxies, poses, sizes)
    # front/back: beta = +-(d_o/2 + offset + d_k/2) = +-(0.25 + 0.25 + 0.25), alpha = shift
    # left/right: alpha = +-(w_o/2 + offset + d_k/2), beta = shift; the depth runs along v
    np.testing.assert_array_equal(center, [[0.75, 0.0], [-0.75, 0.125], [0.125, 1.0], [0.0, -0.75]])
    np.testing.assert_array_equal(rect, [[0.75, 0.5], [0.75, 0.5], [0.5, 0.75], [0.5, 0.75]])
    np.testing.assert_array_equal(theta, np.zeros(4))
    assert [p.footprint for p in proxies] == [tuple(r) for r in rect]


@pytest.mark.parametrize("side_name", ["front", "back", "left", "right"])
def test_offset_zero_proxy_touches_its_owner_face(side_name):
    # exact with dyadic sizes at theta = 0: the proxy's near face is the owner's face
    center, rect, _ = attach(
        [Proxy(0, "sit", side_name, 0.0, (0.5, 0.75, 1.0))], np.zeros((1, 3)), [[1.5, 0.5]]
    )
    axis = 0 if side_name in ("front", "back") else 1  # theta = 0: u = +x, v = +y; rect and sizes are (w, d)
    sign = 1.0 if side_name in ("front", "left") else -1.0
    near_face = center[0, axis] - sign * rect[0, 1 - axis] / 2
    assert near_face == sign * [1.5, 0.5][1 - axis] / 2
    # any heading: they touch (zero overlap along the owner's face normal) and do not overlap
    rng = np.random.default_rng(1)
    for _ in range(20):
        pose = np.array([[*rng.uniform(-3, 3, 2), rng.uniform(-4, 4)]])
        owner = rng.uniform(0.3, 2.0, (1, 2))
        proxy = Proxy(0, "sit", side_name, 0.0, (*rng.uniform(0.2, 1.5, 2), 1.0))
        c, s, t = attach([proxy], pose, owner)
        rects = [torch.tensor(x, dtype=F64) for x in (pose[:, :2], owner, pose[:, 2], c, s, t)]
        delta = axis_overlaps(*rects).numpy()[0]
        assert abs(delta[axis]) < 1e-12  # on the owner's u (front/back) or v (left/right) axis
        assert penetration_depth_exact(*rects).item() < 1e-24
        assert overlap_area(pose[0, :2], owner[0], pose[0, 2], c[0], s[0], t[0]) < 1e-12


def test_attachment_is_rigid_under_any_motion_of_the_owner():
    rng = np.random.default_rng(2)
    layout = _layout(
        [("bed", (1.6, 2.0, 0.5)), ("nightstand", (0.45, 0.4, 0.5)), ("dining_table", (1.6, 0.9, 0.75))]
    )
    proxies = default_proxies(layout) + (Proxy(2, "stand", "left", 0.3, (0.6, 0.4, 1.7), shift=-0.2),)
    poses = np.c_[rng.uniform(-2, 2, (3, 2)), rng.uniform(-3, 3, 3)]
    sizes = layout.sizes()
    center, rect, theta = attach(proxies, poses, sizes)
    for _ in range(10):
        angle, pivot, shift = rng.uniform(-4, 4), rng.uniform(-2, 2, 2), rng.uniform(-2, 2, 2)
        rot = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
        moved = np.c_[(poses[:, :2] - pivot) @ rot.T + pivot + shift, poses[:, 2] + angle]
        c2, r2, t2 = attach(proxies, moved, sizes)
        np.testing.assert_allclose(c2, (center - pivot) @ rot.T + pivot + shift, atol=1e-12)
        np.testing.assert_array_equal(r2, rect)
        np.testing.assert_allclose(t2, theta + angle, atol=1e-12)
    # moving one owner moves only its own proxies
    moved = poses.copy()
    moved[1] += [0.5, -0.25, 1.0]
    c3, _, _ = attach(proxies, moved, sizes)
    owners = np.array([p.owner for p in proxies])
    np.testing.assert_array_equal(c3[owners != 1], center[owners != 1])
    assert np.all(np.abs(c3[owners == 1] - center[owners == 1]) > 0)


def test_attach_gradient_matches_central_finite_differences():
    rng = np.random.default_rng(3)
    layout = _layout([("bed", (1.6, 2.0, 0.5)), ("chair", (0.5, 0.5, 0.9)), ("desk", (1.2, 0.6, 0.75))])
    proxies = default_proxies(layout) + (Proxy(1, "sit", "right", 0.1, (0.4, 0.3, 1.0), shift=0.2),)
    poses = torch.tensor(
        np.c_[rng.uniform(-2, 2, (3, 2)), rng.uniform(-3, 3, 3)], dtype=F64, requires_grad=True
    )
    sizes = torch.tensor(layout.sizes(), dtype=F64, requires_grad=True)
    weights = torch.tensor(rng.normal(size=(len(proxies), 5)), dtype=F64)

    def scalar(p, s):
        c, r, t = attach(proxies, p, s)
        return (torch.cat([c, r, t[:, None]], dim=1) * weights).sum()

    assert torch.autograd.gradcheck(scalar, (poses, sizes), eps=1e-6, atol=1e-8)


def test_numpy_torch_batched_and_padded_paths_agree():
    rng = np.random.default_rng(4)
    layouts = list(_rooms())[:3]
    n_max = max(lay.n for lay in layouts)
    poses = np.zeros((3, n_max, 3))
    sizes = np.ones((3, n_max, 3))
    for b, lay in enumerate(layouts):
        poses[b, : lay.n], sizes[b, : lay.n] = lay.poses(), lay.sizes()
    arrays, mask = stack_proxy_arrays([default_proxies(lay) for lay in layouts])
    c, r, t = attach(arrays, torch.tensor(poses, dtype=F64), torch.tensor(sizes, dtype=F64))
    for b, lay in enumerate(layouts):
        ref = attach(default_proxies(lay), lay.poses(), lay.sizes())  # NumPy in, NumPy out
        assert all(isinstance(x, np.ndarray) for x in ref)
        k = int(mask[b].sum())
        assert mask[b, :k].all() and not mask[b, k:].any()
        for got, want in zip((c, r, t), ref, strict=True):
            np.testing.assert_allclose(got[b, :k].numpy(), want, rtol=0, atol=1e-13)
    # shared proxies over a leading batch axis equal one call per batch entry
    lay = layouts[0]
    batch = lay.poses()[None] + rng.normal(size=(4, lay.n, 3))
    cb, rb, tb = attach(default_proxies(lay), batch, lay.sizes())
    for i in range(4):
        ci, ri, ti = attach(default_proxies(lay), batch[i], lay.sizes())
        np.testing.assert_array_equal(cb[i], ci)
        np.testing.assert_array_equal(rb[i], ri)
        np.testing.assert_array_equal(tb[i], ti)
    # float32 stays float32; no proxies gives empty arrays
    c32, _, _ = attach(default_proxies(lay), torch.tensor(lay.poses(), dtype=torch.float32), lay.sizes())
    assert c32.dtype == torch.float32
    empty = attach([], lay.poses(), lay.sizes())
    assert [x.shape for x in empty] == [(0, 2), (0, 2), (0,)]
    assert proxy_arrays(default_proxies(lay)).k == len(default_proxies(lay))


# ----------------------------------------------------------------------------------------------------------
# Reference proxies
# ----------------------------------------------------------------------------------------------------------


def test_every_category_gets_reference_proxies_independent_of_poses():
    layout = _every_category()
    proxies = default_proxies(layout)
    assert {layout.furniture[p.owner].category for p in proxies} == set(CATEGORIES)
    assert [p.owner for p in proxies] == sorted(p.owner for p in proxies)
    for i in range(layout.n):
        assert default_proxies(layout, i) == tuple(p for p in proxies if p.owner == i)
    moved = layout.with_poses(np.random.default_rng(5).normal(size=(layout.n, 3)))
    assert default_proxies(moved) == proxies
    assert default_proxies(layout.furniture) == proxies
    other = default_proxies([Furniture("piano", (1.5, 0.6, 1.2))])  # unknown category: a body in front
    assert [(p.posture, p.side, p.size) for p in other] == [("reach_in", "front", (1.5, 0.6, 1.7))]


def test_anthropometric_defaults_and_functional_links():
    layout = _layout(
        [
            ("bed", (1.6, 2.0, 0.5)),  # 0
            ("nightstand", (0.45, 0.4, 0.55)),  # 1
            ("nightstand", (0.45, 0.4, 0.55)),  # 2
            ("wardrobe", (1.0, 0.6, 2.0)),  # 3
            ("sofa", (2.0, 0.9, 0.8)),  # 4
            ("sofa", (1.8, 0.9, 0.8)),  # 5
            ("armchair", (0.8, 0.8, 0.9)),  # 6
            ("armchair", (0.8, 0.8, 0.9)),  # 7
            ("coffee_table", (1.0, 0.6, 0.4)),  # 8
            ("tv_stand", (1.5, 0.4, 0.5)),  # 9
            ("desk", (1.2, 0.6, 0.75)),  # 10
            ("dining_table", (1.6, 0.9, 0.75)),  # 11
            ("chair", (0.5, 0.5, 0.9)),  # 12: the desk's
            ("chair", (0.5, 0.5, 0.9)),  # 13: the table's
            ("chair", (0.5, 0.5, 0.9)),  # 14: the table's
        ]
    )
    by = _by_key(default_proxies(layout))
    assert BODY == (0.6, 0.6, 1.7) and 0.6 <= CHAIR_PULL_OUT <= 0.75 and 0.45 <= SEATED_LEG_DEPTH <= 0.6
    # bed: strips on both long sides and the foot, 0.6 m deep; nightstands within reach of the side strips
    assert {s for (o, s) in by if o == 0} == {"left", "right", "front"}
    assert all(
        by[0, s].size[1] == BED_STRIP_DEPTH == 0.6 and by[0, s].posture == "lie" for s in ("left", "right")
    )
    assert by[0, "front"].size[:2] == (1.6, 0.6)
    assert by[0, "left"].relations == (FunctionalRelation("within_reach", 1, 0.6),)
    assert by[0, "right"].relations == (FunctionalRelation("within_reach", 2, 0.6),)
    # wardrobe: door leaf 0.5 (two leaves) plus half a body
    assert by[3, "front"].size[1] >= 1.0 / 2 and by[3, "front"].size[1] == pytest.approx(0.5 + 0.3)
    assert by[3, "front"].size[1] <= MAX_DOOR_LEAF + 0.3
    # the TV faces the first sofa's seat at 1.8-3.5 m; the coffee table within reach of both sofas, armchair 1
    sofa = by[4, "front"]
    assert sofa.posture == "sit" and sofa.simultaneous and sofa.size[1] == SEATED_LEG_DEPTH
    assert set(sofa.relations) == {
        FunctionalRelation("faces", 9),
        FunctionalRelation("view_range", 9, distance=TV_VIEW_RANGE),
        FunctionalRelation("within_reach", 8),
    }
    assert TV_VIEW_RANGE == (1.8, 3.5)
    assert by[5, "front"].relations == (FunctionalRelation("within_reach", 8),)
    assert by[6, "front"].relations == (FunctionalRelation("within_reach", 8),)
    assert by[7, "front"].relations == ()
    # chairs: the first under the desk, the rest under the dining table, pull-out behind, simultaneous
    for chair, table in ((12, 10), (13, 11), (14, 11)):
        p = by[chair, "back"]
        assert p.relations == (FunctionalRelation("tucked_under", table),) and p.simultaneous
        assert p.size[:2] == (0.6, CHAIR_PULL_OUT)
    # tables: seating zones (chair + pull-out) where chairs are allowed
    assert by[11, "front"].allowed == ("chair",) and by[11, "back"].size[1] == pytest.approx(1.1)
    assert (10, "back") not in by and by[10, "front"].allowed == ("chair",)
    # a chair with no table keeps its legs' zone in front
    (lone,) = default_proxies([Furniture("chair", (0.5, 0.5, 0.9))])
    assert (lone.side, lone.size[1], lone.relations) == ("front", SEATED_LEG_DEPTH, ())


def test_a_usual_bedroom_and_sofa_group_satisfy_their_reference_relations_without_conflict():
    # bed against the wall at x = 0 (head at -x, foot toward +x), a nightstand on each side of the pillow,
    # flush with the wall; a sofa, the coffee table 0.45 m in front facing it, the TV 2.6 m away facing it
    poses = [
        (1.0, 2.0, 0.0),
        (0.2, 2.0 + 0.8 + 0.225, 0.0),
        (0.2, 2.0 - 0.8 - 0.225, 0.0),
        (6.0, 2.0, 0.0),
        (6.0 + 0.45 + 0.45 + 0.3, 2.0, math.pi),
        (6.0 + 0.45 + 2.6, 2.0, math.pi),
    ]
    specs = [
        ("bed", (1.6, 2.0, 0.5)),
        ("nightstand", (0.45, 0.4, 0.55)),
        ("nightstand", (0.45, 0.4, 0.55)),
        ("sofa", (2.0, 0.9, 0.8)),
        ("coffee_table", (1.0, 0.6, 0.4)),
        ("tv_stand", (1.5, 0.4, 0.5)),
    ]
    layout = _layout(specs, poses)
    proxies = default_proxies(layout)
    center, rect, theta = attach(proxies, layout.poses(), layout.sizes())
    p, s = layout.poses(), layout.sizes()
    for k, proxy in enumerate(proxies):
        for j in range(layout.n):
            if j != proxy.owner:
                assert overlap_area(center[k], rect[k], theta[k], p[j, :2], s[j, :2], p[j, 2]) < 1e-9
        for rel in proxy.relations:
            j = rel.target
            gap = center[k] - p[j, :2]
            if rel.kind == "within_reach":
                dist = point_rectangle_distance(center[k], p[j, :2], s[j, :2], p[j, 2]).item()
                assert dist <= rel.reach
            elif rel.kind == "faces":
                u = np.array([math.cos(p[j, 2]), math.sin(p[j, 2])])
                assert u @ gap / np.linalg.norm(gap) > math.cos(math.radians(20))
            elif rel.kind == "view_range":
                assert rel.distance[0] <= np.linalg.norm(gap) <= rel.distance[1]


# ----------------------------------------------------------------------------------------------------------
# JSON schema and parsing
# ----------------------------------------------------------------------------------------------------------


def test_answers_round_trip_and_follow_the_published_schema():
    jsonschema = pytest.importorskip("jsonschema")
    for layout in list(_rooms()) + [_every_category()]:
        proxies = default_proxies(layout)
        answers = to_answers(proxies, layout)
        assert [a["object"] for a in answers] == list(object_names(layout))
        for answer in answers:
            jsonschema.validate(answer, PROXY_SCHEMA)
        assert parse_proxies(json.dumps(answers), layout) == proxies
        assert parse_proxies(answers, layout) == proxies
    fenced = "Here you go:\n```json\n" + json.dumps(answers[:1]) + "\n```\nEnjoy."
    assert parse_proxies(fenced, layout) == default_proxies(layout, 0)
    # optional fields take their defaults; a [w, d] size gets the posture's height; names resolve
    short = {"object": "bed_1", "proxies": [{"posture": "sit", "side": "left", "size": [0.5, 0.4]}]}
    (p,) = parse_proxies(short, layout)
    assert p == Proxy(0, "sit", "left", 0.0, (0.5, 0.4, 1.3))
    names = object_names(
        [Furniture("bed", (1, 2, 1), name="my bed"), Furniture("bed", (1, 2, 1), name="bed_0")]
    )
    assert names == ("bed_0", "bed_0#1")


def _valid():
    return {
        "object": "sofa_1",
        "proxies": [
            {
                "posture": "sit",
                "side": "front",
                "offset": 0.0,
                "size": [2.0, 0.45, 1.3],
                "allowed": ["chair", "coffee_table_1"],
                "relations": [
                    {"kind": "faces", "target": "tv_stand_1"},
                    {"kind": "view_range", "target": "tv_stand_1", "distance": [1.8, 3.5]},
                    {"kind": "within_reach", "target": "coffee_table_1", "reach": 0.6},
                ],
                "simultaneous": True,
            }
        ],
    }


def _set(path, value):
    def edit(answer):
        node = answer
        for key in path[:-1]:
            node = node[key]
        if value is _DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value
        return answer

    return edit


_DELETE = object()
_P = ("proxies", 0)


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (_set((*_P, "posture"), "dance"), "posture"),
        (_set((*_P, "posture"), _DELETE), "posture"),
        (_set((*_P, "side"), "top"), "side"),
        (_set((*_P, "size"), [1.0]), "size"),
        (_set((*_P, "size"), [1.0, -0.2, 1.0]), "size"),
        (_set((*_P, "size"), "big"), "size"),
        (_set((*_P, "offset"), "near"), "offset"),
        (_set((*_P, "offset"), 9.0), "offset"),
        (_set((*_P, "shift"), True), "shift"),
        (_set((*_P, "allowed"), ["kitchen sink"]), "allowed"),
        (_set((*_P, "allowed"), "chair"), "allowed"),
        (_set((*_P, "relations", 0, "kind"), "admires"), "kind"),
        (_set((*_P, "relations", 0, "target"), "tv_9"), "target"),
        (_set((*_P, "relations", 0, "target"), "sofa_1"), "target"),
        (_set((*_P, "relations", 1, "distance"), _DELETE), "distance"),
        (_set((*_P, "relations", 1, "distance"), [3.5, 1.8]), "distance"),
        (_set((*_P, "relations", 2, "reach"), -1), "reach"),
        (_set((*_P, "relations", 0, "reach"), 0.6), "reach"),
        (_set((*_P, "relations"), {"kind": "faces"}), "relations"),
        (_set((*_P, "simultaneous"), "yes"), "simultaneous"),
        (_set((*_P, "postures"), "sit"), "postures"),
        (_set(("object",), "unicorn_1"), "object"),
        (_set(("proxies",), {"posture": "sit"}), "proxies"),
    ],
)
def test_schema_errors_name_the_field(edit, field):
    layout = _layout(
        [("sofa", (2.0, 0.9, 0.8)), ("coffee_table", (1.0, 0.6, 0.4)), ("tv_stand", (1.5, 0.4, 0.5))]
    )
    assert len(parse_proxies(_valid(), layout)) == 1
    bad = edit(copy.deepcopy(_valid()))
    with pytest.raises(ValueError, match=field):
        parse_proxies(bad, layout)
    with pytest.raises(ValueError, match=field):
        parse_proxies(json.dumps(bad), layout)


def test_reply_level_errors_are_named():
    layout = _layout([("sofa", (2.0, 0.9, 0.8)), ("tv_stand", (1.5, 0.4, 0.5))])
    with pytest.raises(ValueError, match="reply is not valid JSON"):
        parse_proxies("I would put the sofa by the window.", layout)
    with pytest.raises(ValueError, match="reply must be a JSON array"):
        parse_proxies("42", layout)
    answer = {"object": "sofa_1", "proxies": []}
    with pytest.raises(ValueError, match="answered twice"):
        parse_proxies([answer, answer], layout)
    with pytest.raises(TypeError, match="text_or_dict"):
        parse_proxies(3, layout)


# ----------------------------------------------------------------------------------------------------------
# The oracle
# ----------------------------------------------------------------------------------------------------------


def test_scripted_oracle_answers_the_reference_proxies_from_the_prompt_text_alone():
    oracle = ProxyOracle()
    for layout in _rooms():
        prompt = proxy_prompt(layout)
        reply = oracle((Message.user(prompt),))
        assert parse_proxies(reply, layout) == default_proxies(layout)
        assert proxy_oracle().complete([Message.user(prompt)], max_tokens=4096).text == reply
    # the oracle never holds the layout: changing the layout object after building the prompt changes nothing
    layout = next(iter(_rooms()))
    prompt = proxy_prompt(layout)
    before = oracle((Message.user(prompt),))
    changed = copy.deepcopy(layout)
    for f in layout.furniture:
        object.__setattr__(f, "size", (f.size[0] + 0.5, f.size[1] + 0.5, f.size[2]))
        object.__setattr__(f, "category", "piano")
    assert oracle((Message.user(prompt),)) == before
    assert oracle((Message.user(proxy_prompt(layout)),)) != before  # a prompt of the changed layout differs
    assert parse_proxies(before, changed) == default_proxies(changed)
    # it reads the text: editing a size in the prompt changes the answer; no object list, no answer
    first = changed.furniture[0]
    line = f"| {first.category} | {first.size[0]!r} x"
    assert line in prompt
    edited = prompt.replace(line, f"| {first.category} | {first.size[0] + 0.25!r} x", 1)
    assert oracle((Message.user(edited),)) != before
    assert oracle((Message.user("What is a sofa?"),)) == "I cannot answer that."
    # a prompt for some objects gets answers for those only
    part = json.loads(oracle((Message.user(proxy_prompt(changed, [1, 0])),)))
    assert [a["object"] for a in part] == [object_names(changed)[1], object_names(changed)[0]]


def test_noisy_oracle_is_seeded_clean_at_zero_and_perturbs_within_its_documented_bounds():
    layouts = list(_rooms())
    prompts = [(Message.user(proxy_prompt(lay)),) for lay in layouts]
    clean = [ProxyOracle()(m) for m in prompts]
    assert [ProxyOracle(0.0, seed=9)(m) for m in prompts] == clean
    noisy = [ProxyOracle(0.3, seed=1)(m) for m in prompts]
    assert [ProxyOracle(0.3, seed=1)(m) for m in prompts] == noisy
    assert [ProxyOracle(0.3, seed=2)(m) for m in prompts] != noisy
    assert noisy != clean
    dropped = spurious = 0
    for lay, text in zip(layouts, noisy, strict=True):
        ref = _by_key(default_proxies(lay))
        got = _by_key(parse_proxies(text, lay))  # a noisy answer still validates
        assert set(got) <= set(ref)
        dropped += len(ref) - len(got)
        for key, p in got.items():
            for a, b in zip(p.size[:2], ref[key].size[:2], strict=True):
                assert 0.7 * b - 1e-12 <= a <= 1.3 * b + 1e-12
            assert p.relations[: len(ref[key].relations)] == ref[key].relations
            spurious += len(p.relations) - len(ref[key].relations)
        # the draws are shared across levels: what is dropped at 0.3 is dropped at 0.6
        higher = _by_key(parse_proxies(ProxyOracle(0.6, seed=1)((Message.user(proxy_prompt(lay)),)), lay))
        assert set(higher) <= set(got)
    assert dropped > 0 and spurious > 0


# ----------------------------------------------------------------------------------------------------------
# Inference: default backend, retry, fallback, recorded runs
# ----------------------------------------------------------------------------------------------------------


def test_infer_with_the_default_oracle_gives_the_reference_proxies_in_one_reply():
    for layout in list(_rooms())[:4]:
        result = infer_proxies(layout)
        assert result.proxies == default_proxies(layout)
        assert result.counts == {"replies": 1, "retries": 0, "fallbacks": 0} and result.errors == ()


def test_a_malformed_reply_gets_exactly_one_retry_that_quotes_the_error():
    layout = next(iter(_rooms()))
    seen = []

    def policy(messages):
        seen.append(messages)
        return "Sure! The sofa goes left." if len(messages) == 2 else ProxyOracle()(messages)

    result = infer_proxies(layout, Scripted(policy))
    assert result.counts == {"replies": 2, "retries": 1, "fallbacks": 0}
    assert result.proxies == default_proxies(layout)
    assert [m.role for m in seen[1]] == ["system", "user", "assistant", "user"]
    assert "not valid JSON" in seen[1][-1].content and "Sure! The sofa goes left." in seen[1][-1].content


def test_garbage_twice_falls_back_to_the_reference_proxies_and_counts_it():
    layout = next(iter(_rooms()))
    backend = Scripted(lambda messages: "{not json")
    result = infer_proxies(layout, backend)
    assert result.counts == {"replies": 2, "retries": 1, "fallbacks": layout.n} and backend.calls == 2
    assert result.fallback_objects == tuple(range(layout.n)) and len(result.errors) == 2
    assert result.proxies == default_proxies(layout)
    none = infer_proxies(layout, Scripted(lambda messages: "{not json"), retries=0)
    assert none.counts == {"replies": 1, "retries": 0, "fallbacks": layout.n}


def test_the_retry_asks_only_for_the_objects_whose_answer_failed():
    layout = next(iter(_rooms()))
    names = object_names(layout)
    seen = []

    def policy(messages):
        seen.append(messages[-1].content)
        answers = json.loads(ProxyOracle()(messages))
        if len(messages) == 2:
            answers[1]["proxies"][0]["posture"] = "hover"  # one bad field in the second object's answer
        return json.dumps(answers)

    result = infer_proxies(layout, Scripted(policy))
    assert result.counts == {"replies": 2, "retries": 1, "fallbacks": 0}
    assert result.proxies == default_proxies(layout)
    assert f"Answer for: {names[1]}\n" in seen[1] and "posture" in seen[1] and "hover" in seen[1]

    # still wrong after the retry: that object alone falls back
    def stubborn(messages):
        answers = json.loads(ProxyOracle()(messages))
        for a in answers:
            if a["object"] == names[1]:
                a["proxies"][0]["size"] = [0.5]
        return json.dumps(answers)

    result = infer_proxies(layout, Scripted(stubborn))
    assert result.counts == {"replies": 2, "retries": 1, "fallbacks": 1} and result.fallback_objects == (1,)
    assert result.proxies == default_proxies(layout)


def test_any_backend_from_get_backend_and_a_recorded_run_replays_exactly(tmp_path):
    layout = next(iter(_rooms()))
    oracle = proxy_oracle(noise=0.3, seed=4)
    assert get_backend(oracle, spec="offline") is oracle
    recorder = Recorder(get_backend(oracle, spec="offline"))
    first = infer_proxies(layout, recorder)
    assert first.proxies != default_proxies(layout) and first.fallbacks == 0
    path = recorder.save(tmp_path / "proxies.json")
    assert infer_proxies(layout, Replay.load(path)) == first


# ----------------------------------------------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------------------------------------------


def test_bad_input_raises_named_errors():
    layout = _layout([("sofa", (2.0, 0.9, 0.8)), ("tv_stand", (1.5, 0.4, 0.5))])
    proxies = default_proxies(layout)
    with pytest.raises(ValueError, match="poses"):
        attach(proxies, np.zeros((2, 2)), layout.sizes())
    with pytest.raises(ValueError, match="sizes"):
        attach(proxies, layout.poses(), np.ones((3, 2)))
    with pytest.raises(ValueError, match="sizes"):
        attach(proxies, layout.poses(), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="proxies"):
        attach([Proxy(5, "sit", "front", 0.0, (1, 1, 1))], layout.poses(), layout.sizes())
    with pytest.raises(TypeError, match="proxies"):
        attach(proxies[0], layout.poses(), layout.sizes())
    with pytest.raises(ValueError, match="posture"):
        Proxy(0, "squat", "front", 0.0, (1, 1, 1))
    with pytest.raises(ValueError, match="side"):
        Proxy(0, "sit", "under", 0.0, (1, 1, 1))
    with pytest.raises(ValueError, match="size"):
        Proxy(0, "sit", "front", 0.0, (1, 0, 1))
    with pytest.raises(ValueError, match="offset"):
        Proxy(0, "sit", "front", -5.0, (1, 1, 1))
    with pytest.raises(TypeError, match="simultaneous"):
        Proxy(0, "sit", "front", 0.0, (1, 1, 1), simultaneous=1)
    with pytest.raises(ValueError, match="target"):
        Proxy(0, "sit", "front", 0.0, (1, 1, 1), relations=(FunctionalRelation("faces", 0),))
    with pytest.raises(ValueError, match="allowed"):
        Proxy(0, "sit", "front", 0.0, (1, 1, 1), allowed=("",))
    with pytest.raises(ValueError, match="distance"):
        FunctionalRelation("view_range", 1)
    with pytest.raises(ValueError, match="reach"):
        FunctionalRelation("faces", 1, reach=0.6)
    with pytest.raises(ValueError, match="index"):
        default_proxies(layout, 7)
    with pytest.raises(TypeError, match="furniture"):
        default_proxies("bedroom")
    with pytest.raises(TypeError, match="backend"):
        infer_proxies(layout, backend="gpt")
    with pytest.raises(ValueError, match="retries"):
        infer_proxies(layout, retries=-1)
    with pytest.raises(ValueError, match="noise"):
        proxy_oracle(noise=1.5)
    with pytest.raises(ValueError, match="seed"):
        proxy_oracle(seed=-1)
    with pytest.raises(ValueError, match="objects"):
        proxy_prompt(layout, [0, 9])
    with pytest.raises(ValueError, match="objects"):
        proxy_prompt(layout, [1, 1])
    with pytest.raises(TypeError, match="layout"):
        proxy_prompt(layout.furniture)


def test_allowed_matrix_reads_owner_indices_and_categories():
    cats = ("desk", "chair", "chair", "bed")
    proxies = (
        Proxy(owner=0, posture="sit", side="front", offset=0.0, size=(0.6, 0.6, 1.2), allowed=("chair",)),
        Proxy(owner=3, posture="stand", side="left", offset=0.0, size=(0.6, 0.6, 1.7), allowed=(1, 7)),
        Proxy(owner=2, posture="stand", side="front", offset=0.0, size=(0.6, 0.6, 1.7)),
    )
    want = np.array(
        [[True, True, True, False], [False, True, False, True], [False, False, True, False]], dtype=bool
    )
    np.testing.assert_array_equal(allowed_matrix(proxies, cats), want)  # index 7 is beyond the 4 objects
    assert allowed_matrix((), cats).shape == (0, 4)
