"""The procedural corpus: seeded and disjoint from the evaluation seeds, flawed layouts still physically
valid, each flaw doing what it says, about the documented share of zones flawed, and bad inputs named."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neurips26.iohp import corpus as corpus_module
from neurips26.iohp.corpus import (
    CORPUS_SEED,
    EVALUATION_SEEDS,
    FAR_DISTANCE,
    FLAW_KINDS,
    MIN_BLOCK_AREA,
    CorpusLayout,
    add_flaws,
    build_corpus,
    corpus_layout,
    corpus_statistics,
    overlaps,
    split_corpus,
)
from neurips26.iohp.geometry import overlap_area
from neurips26.iohp.layout import ROOM_TYPES, Furniture, Layout, Room
from neurips26.iohp.metrics import collision_pairs, door_blocking, out_of_bounds, proxy_conflicts
from neurips26.iohp.proxy import allowed_matrix, attach, default_proxies

N = 48


@pytest.fixture(scope="module")
def corpus() -> tuple[CorpusLayout, ...]:
    return build_corpus(N, cache=False)


def test_layout_fields_follow_the_index(corpus):
    for i, item in enumerate(corpus):
        assert item.seed == CORPUS_SEED + i
        assert item.room_type == ROOM_TYPES[i % 4]
        assert item.density == ("sparse", "medium", "dense")[(i // 4) % 3]
        assert item.layout.categories == item.clean.categories
        assert item.layout.room == item.clean.room


def test_deterministic(corpus):
    for i in (0, 7, 21):
        again = corpus_layout(i)
        assert np.array_equal(again.layout.poses(), corpus[i].layout.poses())
        assert again.flaws == corpus[i].flaws


def test_seeds_disjoint_from_the_evaluation(corpus):
    seeds = {item.seed for item in corpus}
    assert not seeds & set(EVALUATION_SEEDS)
    with pytest.raises(ValueError, match="seed_start"):
        build_corpus(5, seed_start=97, cache=False)
    with pytest.raises(ValueError, match="seed_start"):
        corpus_layout(3, seed_start=0)


def test_flawed_layouts_stay_valid(corpus):
    for item in corpus:
        lay = item.layout
        assert len(collision_pairs(lay)) == 0
        assert not out_of_bounds(lay).any()
        assert not door_blocking(lay).any()


def test_each_flaw_does_what_it_says(corpus):
    seen = set()
    for item in corpus:
        proxies = default_proxies(item.clean)
        rects = attach(proxies, item.layout.poses(), item.layout.sizes())
        owner = np.array([p.owner for p in proxies])
        conflict = proxy_conflicts(
            item.layout, rects, owner, allowed=allowed_matrix(proxies, item.layout.categories)
        )
        moved = [f.moved for f in item.flaws]
        assert len(moved) == len(set(moved)), "a piece moves at most once"
        assert len({f.zone for f in item.flaws}) == len(item.flaws)
        changed = np.flatnonzero(np.any(item.layout.poses() != item.clean.poses(), axis=1))
        assert sorted(changed.tolist()) == sorted(moved)
        for f in item.flaws:
            seen.add(f.kind)
            p = proxies[f.zone]
            new, old = item.layout.poses()[f.moved], item.clean.poses()[f.moved]
            if f.kind == "tv_turned":
                assert item.layout.categories[f.moved] == "tv_stand"
                assert np.allclose(new[:2], old[:2])
                assert math.isclose(abs(math.remainder(new[2] - old[2], 2 * math.pi)), math.pi)
                assert conflict[f.zone]
            elif f.kind == "jammed_chair":
                assert item.layout.categories[f.moved] == "chair"
                back = -np.array([math.cos(old[2]), math.sin(old[2])])
                assert np.dot(new[:2] - old[:2], back) > 0.0 and new[2] == old[2]
                assert conflict[f.zone]
            elif f.kind == "far_nightstand":
                bed = item.layout.furniture[p.owner]
                stand = item.layout.furniture[f.moved]
                assert stand.category == "nightstand"
                gap = corpus_module._rect_gaps(
                    new[None], np.array(stand.size[:2]), np.array(bed.pose), np.array(bed.size[:2])
                )[0]
                assert gap >= FAR_DISTANCE - 1e-9
            else:
                f_m = item.layout.furniture[f.moved]
                area = overlap_area(
                    new[:2],
                    np.array(f_m.size[:2]),
                    new[2],
                    rects[0][f.zone],
                    rects[1][f.zone],
                    rects[2][f.zone],
                )
                assert area >= MIN_BLOCK_AREA - 1e-9
                assert conflict[f.zone]
    assert seen == set(FLAW_KINDS)


def test_flaw_share_and_blocked_share(corpus):
    stats = corpus_statistics(corpus)
    assert stats.layouts == N
    assert 0.15 <= stats.flawed <= 0.35  # the target is 30 %; infeasible zones are skipped
    assert sum(stats.kinds.values()) == sum(len(c.flaws) for c in corpus)
    assert stats.blocked > stats.clean_blocked + 0.05  # the flaws block zones the clean layout left free
    assert max(stats.conflict, stats.inaccessible) <= stats.blocked <= stats.conflict + stats.inaccessible


def test_rate_zero_is_the_clean_layout(corpus):
    item = corpus[9]
    lay, flaws = add_flaws(item.clean, item.seed, flaw_rate=0.0)
    assert lay is item.clean and flaws == ()
    full, full_flaws = add_flaws(item.clean, item.seed, flaw_rate=1.0)
    assert len(full_flaws) >= len(item.flaws)


def test_fast_overlap_equals_the_exact_one():
    rng = np.random.default_rng(0)
    c1, c2 = rng.uniform(0, 2, (200, 2)), rng.uniform(0, 2, (200, 2))
    s1, s2 = rng.uniform(0.2, 1.5, (200, 2)), rng.uniform(0.2, 1.5, (200, 2))
    t1 = rng.integers(-2, 3, 200) * math.pi / 2
    t2 = rng.integers(-2, 3, 200) * math.pi / 2
    fast = overlaps(c1, s1, t1, c2, s2, t2)
    assert np.allclose(fast, overlap_area(c1, s1, t1, c2, s2, t2), atol=1e-12)
    assert (fast > 0).any() and (fast == 0).any()
    t3 = t2 + 0.3  # not axis-aligned: the exact path
    assert np.allclose(overlaps(c1, s1, t1, c2, s2, t3), overlap_area(c1, s1, t1, c2, s2, t3))


def test_jammed_chair_on_a_hand_built_room():
    room = Room("dining", ((0.0, 0.0), (4.0, 0.0), (4.0, 3.0), (0.0, 3.0)))
    table = Furniture("dining_table", (1.6, 0.9, 0.75), (2.0, 1.5, 0.0))
    # the table spans x in [1.55, 2.45]; a chair 2 cm off its +x end facing it (theta = pi), so its back
    # points to +x, toward the wall x = 4, with its 0.6 m pull-out zone free
    chair = Furniture("chair", (0.5, 0.5, 0.9), (2.72, 1.5, math.pi))
    clean = Layout(room, (table, chair))
    lay, flaws = add_flaws(clean, 0, flaw_rate=1.0)
    kinds = {f.kind for f in flaws}
    assert "jammed_chair" in kinds
    x = lay.furniture[1].pose[0]
    assert 4.0 - 0.25 - 0.011 <= x <= 4.0 - 0.25  # flush against the wall, within one push step


def test_split():
    items = list(range(30))
    train, val = split_corpus(items, validation=0.2, seed=3)
    assert len(val) == 6 and len(train) == 24
    assert sorted(train + val) == items
    assert split_corpus(items, validation=0.2, seed=3) == (train, val)
    with pytest.raises(ValueError, match="validation"):
        split_corpus(items, validation=0.0)
    with pytest.raises(ValueError, match="corpus"):
        split_corpus([1])


def test_bad_inputs():
    with pytest.raises(ValueError, match="n"):
        build_corpus(0, cache=False)
    with pytest.raises(ValueError, match="flaw_rate"):
        build_corpus(4, flaw_rate=1.5, cache=False)
    with pytest.raises(ValueError, match="index"):
        corpus_layout(-1)
    with pytest.raises(TypeError, match="clean"):
        add_flaws("room", 0)
    with pytest.raises(ValueError, match="seed"):
        add_flaws(corpus_layout(0).clean, -1)
    with pytest.raises(TypeError, match="corpus"):
        corpus_statistics([])
