"""The ATISS-style baseline: tokens round-trip up to the grid, the loss ignores padding and falls in a few
steps of a tiny model, generation is seeded, forces the requested categories and sizes, stays in the room's
bounding box, and bad inputs are named. The full-size model is never trained here."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from neurips26.iohp.baselines import atiss
from neurips26.iohp.baselines.atiss import (
    ATISS_CONFIG,
    CATEGORY_NAMES,
    GRID,
    MAX_OBJECTS,
    ROOM_TOKENS,
    VOCAB_SIZE,
    atiss_layout,
    atiss_model,
    atiss_tokens,
    category_count_correlation,
    detokenize,
    encode,
    object_tokens,
    room_tokens,
    sample_atiss,
    sequence_loss,
    tokenize,
    train_atiss,
    validation_nll,
)
from neurips26.iohp.corpus import build_corpus, split_corpus
from neurips26.iohp.layout import Door, Furniture, Layout, Room
from neurips26.nn import DecoderConfig
from neurips26.seeding import sub_seed

TINY = DecoderConfig(vocab_size=VOCAB_SIZE, width=16, depth=1, heads=2, context=128, positions="learned")


@pytest.fixture(scope="module")
def corpus():
    return build_corpus(16, cache=False)


@pytest.fixture(scope="module")
def tiny_model():
    torch.manual_seed(0)
    return atiss_model(TINY, seed=1)


def _box_room() -> Room:
    door = Door.on_segment(0, (0.0, 0.0), (4.0, 0.0), 1.0, 0.8)
    return Room("bedroom", ((0.0, 0.0), (4.0, 0.0), (4.0, 3.5), (0.0, 3.5)), doors=(door,))


def test_full_config_is_about_110k_parameters():
    model = atiss_model()
    assert 100_000 <= model.num_parameters() <= 120_000
    assert ATISS_CONFIG.context >= ROOM_TOKENS + 6 * MAX_OBJECTS + 1


def test_round_trip_is_exact_on_the_grid():
    # sizes and wall gaps on the 5 cm grid: decoding gives back exactly the layout
    room = _box_room()
    bed = Furniture("bed", (1.6, 2.0, 0.5), (2.0, 2.5, math.pi / 2))  # flush with the wall y = 3.5
    stand = Furniture("nightstand", (0.4, 0.4, 0.55), (0.2, 1.0, 0.0))  # flush with x = 0
    chair = Furniture("chair", (0.5, 0.5, 0.9), (3.35, 0.85, -math.pi / 2))
    lay = Layout(room, (bed, stand, chair))
    scene = detokenize(tokenize(lay))
    assert scene.room_type == "bedroom" and scene.size == pytest.approx((4.0, 3.5))
    assert scene.notch_corner is None and scene.door_direction == 1
    assert scene.door_center == pytest.approx((1.0, 0.0)) and scene.door_width == pytest.approx(0.8)
    for f, o in zip(lay.furniture, scene.objects, strict=True):
        assert o.category == f.category
        assert o.size == pytest.approx(f.size[:2], abs=1e-9)
        assert o.pose[:2] == pytest.approx(f.pose[:2], abs=1e-9)
        assert math.isclose(math.remainder(o.pose[2] - f.pose[2], 2 * math.pi), 0.0, abs_tol=1e-12)


def test_round_trip_is_within_the_grid_on_the_corpus(corpus):
    for item in corpus:
        lay = item.layout
        x0, y0, x1, y1 = lay.room.bounds
        scene = detokenize(tokenize(lay))
        assert scene.size == pytest.approx((x1 - x0, y1 - y0), abs=GRID / 2)
        assert (scene.notch_corner is None) == (lay.room.notch is None)
        for f, o in zip(lay.furniture, scene.objects, strict=True):
            assert o.category == f.category
            assert np.all(np.abs(np.array(o.size) - f.size[:2]) <= GRID / 2 + 1e-9)
            # gap error <= GRID / 2, half-size error <= GRID / 4
            err = np.abs(np.array(o.pose[:2]) + [x0, y0] - f.pose[:2])
            assert np.all(err <= 0.75 * GRID + 1e-9)
            assert math.isclose(math.cos(o.pose[2] - f.pose[2]), 1.0, abs_tol=1e-9)


def test_tokenize_order_and_notch(corpus):
    lay = next(c.layout for c in corpus if c.layout.room.notch is not None and c.layout.n >= 3)
    base = object_tokens(lay)
    order = np.arange(lay.n)[::-1]
    seq = tokenize(lay, order)
    assert np.array_equal(seq[:ROOM_TOKENS], room_tokens(lay.room))
    assert np.array_equal(seq[ROOM_TOKENS:-1].reshape(-1, 6), base[order])
    assert seq[-1] == atiss.END
    nx, ny = detokenize(seq).notch_size
    a0, b0, a1, b1 = lay.room.notch
    assert (nx, ny) == pytest.approx((a1 - a0, b1 - b0), abs=GRID / 2)
    with pytest.raises(ValueError, match="order"):
        tokenize(lay, [0] * lay.n)


@torch.no_grad()
def test_loss_ignores_padding(tiny_model, corpus):
    enc = encode(corpus[:4])
    orders = [np.arange(len(o)) for o in enc.objects]
    batch = enc.batch([0, 1, 2, 3], orders, TINY.context)
    together = float(sequence_loss(tiny_model, batch, reduction="sum"))
    alone = sum(
        float(sequence_loss(tiny_model, enc.batch([i], [orders[i]], TINY.context), reduction="sum"))
        for i in range(4)
    )
    assert together == pytest.approx(alone, rel=1e-5)


@torch.no_grad()
def test_validation_nll_matches_the_loss(tiny_model, corpus):
    lay = corpus[3].layout
    order = np.random.default_rng(sub_seed(5, 0)).permutation(lay.n)
    tokens = torch.from_numpy(tokenize(lay, order))[None]
    expected = float(sequence_loss(tiny_model, tokens))
    assert validation_nll(tiny_model, [lay], seed=5) == pytest.approx(expected, rel=1e-6)


def test_training_lowers_the_loss_and_is_seeded(corpus):
    run = train_atiss(corpus, 40, 0, batch=8, lr=1e-2, warmup=5, config=TINY, eval_every=20)
    assert np.mean(run.loss[-5:]) < np.mean(run.loss[:5]) - 0.5
    assert run.val_step == (20, 40) and run.val_nll[-1] < run.val_nll[0]
    assert not set(run.train) & set(run.validation)
    assert sorted(run.train + run.validation) == list(range(len(corpus)))
    assert (run.train, run.validation) == split_corpus(corpus, validation=0.1, seed=0)
    short = train_atiss(corpus, 5, 0, batch=8, lr=1e-2, warmup=5, config=TINY, eval_every=20)
    assert short.loss[0] == run.loss[0]  # same weights, same first batch
    same = train_atiss(corpus, 5, 0, batch=8, lr=1e-2, warmup=5, config=TINY, eval_every=20)
    assert same.loss == short.loss and same.val_nll == short.val_nll
    other = train_atiss(corpus, 5, 1, batch=8, lr=1e-2, warmup=5, config=TINY, eval_every=20)
    assert other.loss != short.loss


def test_generation_is_seeded_and_in_the_box(tiny_model, corpus):
    lay = corpus[5].layout
    a = atiss_layout(tiny_model, lay, 3)
    b = atiss_layout(tiny_model, lay, 3)
    c = atiss_layout(tiny_model, lay, 4)
    assert np.array_equal(a.poses(), b.poses())
    assert not np.array_equal(a.poses(), c.poses())
    assert a.n == lay.n and a.categories == lay.categories and a.relations == lay.relations
    assert np.array_equal(a.sizes(), lay.sizes())
    x0, y0, x1, y1 = lay.room.bounds
    box = a.corners()
    assert np.all(box[..., 0] >= x0 - 1e-9) and np.all(box[..., 0] <= x1 + 1e-9)
    assert np.all(box[..., 1] >= y0 - 1e-9) and np.all(box[..., 1] <= y1 + 1e-9)
    g0 = atiss_layout(tiny_model, lay, 0, strategy="greedy")
    g1 = atiss_layout(tiny_model, lay, 1, strategy="greedy")
    assert np.array_equal(g0.poses(), g1.poses())


def test_constrained_decoding_forces_the_requested_objects(tiny_model, corpus):
    for item in corpus[:6]:
        lay = item.layout
        tokens = atiss_tokens(tiny_model, lay, 7)
        scene = detokenize(tokens)  # raises if a sampled token were of the wrong field
        assert tuple(o.category for o in scene.objects) == lay.categories
        assert np.array_equal(tokens[:ROOM_TOKENS], room_tokens(lay.room))
        blocks = tokens[ROOM_TOKENS:-1].reshape(-1, 6)
        assert np.array_equal(blocks[:, :3], object_tokens(lay)[:, :3])  # category and size forced
        placed = atiss_layout(tiny_model, lay, 7)  # the layout is what the tokens say (true sizes)
        x0, y0, _, _ = lay.room.bounds
        decoded = np.array([o.pose for o in scene.objects]) + [x0, y0, 0.0]
        assert np.all(np.abs(decoded[:, :2] - placed.poses()[:, :2]) <= GRID / 4 + 1e-9)
        assert np.allclose(np.cos(decoded[:, 2] - placed.poses()[:, 2]), 1.0)


def test_unconstrained_sampling_and_count_correlation(tiny_model, corpus):
    room = corpus[0].layout.room
    a = sample_atiss(tiny_model, room, 2, max_objects=5)
    b = sample_atiss(tiny_model, room, 2, max_objects=5)
    assert a.n <= 5 and a.poses().tolist() == b.poses().tolist() and a.categories == b.categories
    assert set(a.categories) <= set(CATEGORY_NAMES)
    result = category_count_correlation(tiny_model, corpus[:4], 0)
    assert result.generated.shape == result.reference.shape == (4, len(CATEGORY_NAMES))
    assert -1.0 <= result.r <= 1.0
    assert result.mean_objects[1] == pytest.approx(np.mean([c.layout.n for c in corpus[:4]]))


def test_bad_inputs(tiny_model, corpus):
    lay = corpus[0].layout
    with pytest.raises(ValueError, match="vocab_size"):
        atiss_model(DecoderConfig(vocab_size=50, width=16, depth=1, heads=2, context=128))
    with pytest.raises(ValueError, match="strategy"):
        atiss_layout(tiny_model, lay, 0, strategy="beam")
    with pytest.raises(ValueError, match="temperature"):
        atiss_layout(tiny_model, lay, 0, temperature=0.0)
    with pytest.raises(ValueError, match="seed"):
        atiss_layout(tiny_model, lay, -1)
    with pytest.raises(TypeError, match="model"):
        atiss_layout("model", lay, 0)
    with pytest.raises(TypeError, match="layout"):
        atiss_layout(tiny_model, "layout", 0)
    many = Layout(lay.room, tuple(Furniture("plant", (0.3, 0.3, 1.0)) for _ in range(MAX_OBJECTS + 1)))
    with pytest.raises(ValueError, match="layout"):
        tokenize(many)
    with pytest.raises(ValueError, match="room"):
        room_tokens(Room("office", ((0.0, 0.0), (3.0, 0.0), (3.0, 3.0), (0.0, 3.0))))
    with pytest.raises(ValueError, match="steps"):
        train_atiss(corpus, 0, 0, config=TINY)
    with pytest.raises(ValueError, match="validation"):
        train_atiss(corpus, 1, 0, config=TINY, validation=0.9)
    with pytest.raises(ValueError, match="tokens"):
        detokenize(np.array([5, 1, 2]))
    with pytest.raises(ValueError, match="tokens"):
        detokenize(np.concatenate([room_tokens(lay.room), [atiss.LEN0, 0, 0, 0, 0, 0]]))
    with pytest.raises(ValueError, match="max_objects"):
        sample_atiss(tiny_model, lay.room, 0, max_objects=MAX_OBJECTS + 1)
