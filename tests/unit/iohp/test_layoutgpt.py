"""The LayoutGPT-style baseline: retrieval returns the nearest exemplar by the documented distance (hand-built
case), ties and room types behave as documented, objects are size-matched, positions rescaled, headings
copied, unmatched pieces keep their pose, the result is deterministic, and bad inputs are named."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neurips26.iohp.baselines.layoutgpt import (
    OBJECT_WEIGHT,
    SHAPE_WEIGHT,
    exemplar_distances,
    exemplar_index,
    layoutgpt_layout,
    match_objects,
    retrieve,
    room_shape,
)
from neurips26.iohp.corpus import build_corpus
from neurips26.iohp.layout import Furniture, Layout, Room


def _room(kind: str, w: float, d: float, notch: bool = False) -> Room:
    if notch:  # notch at the bounding-box corner (w, d): corner 2
        outline = ((0.0, 0.0), (w, 0.0), (w, d - 1.0), (w - 1.0, d - 1.0), (w - 1.0, d), (0.0, d))
        return Room(kind, outline, (w - 1.0, d - 1.0, w, d))
    return Room(kind, ((0.0, 0.0), (w, 0.0), (w, d), (0.0, d)))


def _piece(cat: str, w: float, d: float, pose=(0.0, 0.0, 0.0)) -> Furniture:
    return Furniture(cat, (w, d, 0.5), pose)


BED = ("bed", 1.6, 2.0)
STAND = ("nightstand", 0.45, 0.4)


def _exemplars() -> list[Layout]:
    return [
        Layout(_room("bedroom", 5.0, 4.0), (_piece(*BED, (2.5, 1.0, math.pi / 2)),)),  # 0: size off
        Layout(_room("bedroom", 4.0, 3.5), (_piece(*BED, (2.0, 1.0, math.pi / 2)), _piece(*STAND))),  # 1
        Layout(_room("living", 4.0, 3.6), (_piece(*BED), _piece(*STAND))),  # 2: other type, exact size
        Layout(_room("bedroom", 4.0, 3.6, notch=True), (_piece(*BED), _piece(*STAND))),  # 3: L-shape
    ]


def test_room_shape():
    assert room_shape(_room("office", 4.0, 4.0)) == -1
    assert room_shape(_room("office", 4.0, 4.0, notch=True)) == 2


def test_retrieves_the_nearest_exemplar_by_hand():
    query = Layout(_room("bedroom", 4.0, 3.6), (_piece(*BED), _piece(*STAND)))
    d = exemplar_distances(_exemplars(), query)
    # 0: |5-4| + |4-3.6| + 0.5 (one nightstand missing); 1: 0.1; 2: another type; 3: the shape term
    assert d == pytest.approx([1.0 + 0.4 + OBJECT_WEIGHT, 0.1, np.inf, SHAPE_WEIGHT])
    assert retrieve(_exemplars(), query) == 1
    # without bedrooms the type filter falls away and the exact living room wins
    assert retrieve(_exemplars()[2:3], query) == 0


def test_ties_go_to_the_lowest_index():
    ex = _exemplars()
    query = Layout(_room("bedroom", 4.0, 3.5), (_piece(*BED), _piece(*STAND)))
    assert retrieve([ex[1], ex[1], ex[0]], query) == 0
    assert retrieve([ex[0], ex[1], ex[1]], query) == 1


def test_size_matched_pairs():
    room = _room("dining", 4.0, 4.0)
    ours = Layout(room, (_piece("chair", 0.45, 0.45), _piece("chair", 0.55, 0.55), _piece("plant", 0.3, 0.3)))
    theirs = Layout(
        room, (_piece("chair", 0.56, 0.54), _piece("table", 1.0, 1.0), _piece("chair", 0.44, 0.46))
    )
    assert match_objects(ours, theirs).tolist() == [2, 0, -1]


def test_copy_rescales_positions_keeps_headings_and_sizes():
    ex = Layout(
        _room("bedroom", 4.0, 3.0),
        (_piece(*BED, (1.0, 2.0, math.pi / 2)), _piece(*STAND, (3.0, 0.75, math.pi))),
    )
    fallback = (1.11, 2.22, 0.33)
    query = Layout(
        _room("bedroom", 5.0, 4.5),
        (_piece("nightstand", 0.5, 0.35), _piece("bed", 1.8, 2.1), _piece("plant", 0.3, 0.3, fallback)),
    )
    result = layoutgpt_layout([ex], query)
    assert result.exemplar == 0 and result.partner.tolist() == [1, 0, -1]
    poses = result.layout.poses()
    assert poses[0] == pytest.approx((3.0 * 5.0 / 4.0, 0.75 * 4.5 / 3.0, math.pi))
    assert poses[1] == pytest.approx((1.0 * 5.0 / 4.0, 2.0 * 4.5 / 3.0, math.pi / 2))
    assert poses[2] == pytest.approx(fallback)
    assert np.array_equal(result.layout.sizes(), query.sizes())


def test_translation_of_both_rooms_moves_the_copy():
    ex = Layout(_room("office", 4.0, 3.0), (_piece("desk", 1.2, 0.6, (2.0, 0.3, math.pi / 2)),))
    query = Layout(_room("office", 4.0, 3.0), (_piece("desk", 1.2, 0.6),))
    shifted = Room("office", tuple((x + 2.0, y - 1.0) for x, y in query.room.outline))
    a = layoutgpt_layout([ex], query).layout.poses()
    b = layoutgpt_layout([ex], Layout(shifted, query.furniture)).layout.poses()
    assert b == pytest.approx(a + [[2.0, -1.0, 0.0]])


def test_deterministic_on_the_corpus():
    corpus = build_corpus(12, cache=False)
    index = exemplar_index(corpus)
    query = corpus[5].layout
    a = layoutgpt_layout(index, query)
    b = layoutgpt_layout(corpus, query)
    assert a.exemplar == b.exemplar == 5 and a.distance == 0.0  # a layout retrieves itself
    assert np.array_equal(a.layout.poses(), b.layout.poses())
    assert np.allclose(a.layout.poses(), query.poses())
    other = layoutgpt_layout(corpus[:5] + corpus[6:], query)
    assert np.all(np.isfinite(other.layout.poses())) and other.exemplar != 5


def test_bad_inputs():
    query = Layout(_room("bedroom", 4.0, 3.6), (_piece(*BED),))
    with pytest.raises(ValueError, match="corpus"):
        layoutgpt_layout([], query)
    with pytest.raises(TypeError, match="corpus"):
        layoutgpt_layout([query, "x"], query)
    with pytest.raises(TypeError, match="layout"):
        layoutgpt_layout(_exemplars(), "layout")
    with pytest.raises(ValueError, match="shape_weight"):
        retrieve(_exemplars(), query, shape_weight=-1.0)
    with pytest.raises(ValueError, match="object_weight"):
        retrieve(_exemplars(), query, object_weight=math.inf)
    with pytest.raises(TypeError, match="exemplar"):
        match_objects(query, None)
    with pytest.raises(TypeError, match="room"):
        room_shape("room")
