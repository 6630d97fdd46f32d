"""Tests of the edit world: palette, masks, squares, edits, instruction codes, suites, flaws, seeds."""

import itertools
import math
import re

import numpy as np
import pytest
import torch

from neurips26.spatialflow_grpo.editworld import (
    COLOUR_NAMES,
    FLAW_PARTIAL,
    FLAW_TINT,
    FLAWS,
    INSTRUCTION_DIM,
    K_MAX,
    PALETTE,
    PALETTE_RGB,
    SIDE_RANGE,
    SUITES,
    TEXTURE_AMPLITUDE,
    TINT,
    EditBatch,
    decode_instruction,
    encode_instruction,
    instruction_text,
    make_suite,
    palette_distance_to_box,
    sample_cases,
    training_batch,
)

CLAUSE = re.compile(r"the (\w+) square (\w+)")


@pytest.fixture(scope="module")
def cases() -> EditBatch:
    return sample_cases(300, 5)


def _palette_index(image: torch.Tensor) -> np.ndarray:
    """(16, 16) index of the palette colour each pixel has exactly, −1 for other pixels."""
    pix = image.permute(1, 2, 0).numpy()[:, :, None, :]  # (16, 16, 1, 3)
    hit = np.all(pix == PALETTE_RGB[None, None], axis=-1)  # (16, 16, 6)
    return np.where(hit.any(-1), hit.argmax(-1), -1)


def test_palette_is_far_apart_and_far_from_every_background_pixel(cases):
    assert len(PALETTE) == len(COLOUR_NAMES) == 6
    for a, b in itertools.combinations(PALETTE_RGB, 2):
        assert np.linalg.norm(a - b) >= 0.5
    assert palette_distance_to_box(0.25, 0.75) >= 0.35
    pixels = cases.source.permute(0, 2, 3, 1).reshape(-1, 3).numpy()
    background = pixels[~np.all(pixels[:, None] == PALETTE_RGB[None], axis=-1).any(-1)]
    assert background.min() > 0.25 and background.max() < 0.75  # well inside (0.25, 0.75)
    distance = np.linalg.norm(background[:, None] - PALETTE_RGB[None], axis=-1)
    assert distance.min() >= 0.35


def test_background_is_a_gradient_plus_faint_texture():
    batch = make_suite("single", n=64, seed=3)
    yy, xx = np.mgrid[0:16, 0:16]
    spreads = []
    for i in np.nonzero(batch.n_objects.numpy() == 1)[0]:
        keep = batch.masks[i, 0].numpy().astype(bool)
        design = np.stack([np.ones(keep.sum()), xx[keep], yy[keep]], axis=1)
        for c in range(3):
            values = batch.source[i, c].numpy()[keep]
            coef, *_ = np.linalg.lstsq(design, values, rcond=None)
            residual = values - design @ coef
            assert np.abs(residual).max() <= TEXTURE_AMPLITUDE + 0.005
            spreads.append(residual.std())
        pixels = batch.source[i][:, torch.from_numpy(keep)]  # (3, P)
        assert (pixels.amax(dim=0) - pixels.amin(dim=0)).max() <= 0.12 + 1e-6  # low saturation
        assert (pixels.amax(dim=1) - pixels.amin(dim=1)).max() <= 0.42 + 1e-6  # a gentle gradient
    # uniform texture on [−A, A] has std A/√3
    assert abs(np.mean(spreads) - TEXTURE_AMPLITUDE / math.sqrt(3)) < 0.003


def test_masks_partition_and_validity(cases):
    m = cases.masks
    assert m.dtype == torch.float32 and set(m.unique().tolist()) <= {0.0, 1.0}
    assert torch.equal(m.sum(dim=1), torch.ones(len(cases), 16, 16))
    slots = torch.arange(K_MAX + 1)[None]
    assert torch.equal(cases.region_valid, slots <= cases.n_clauses[:, None])
    unused = ~cases.region_valid
    assert (m.sum(dim=(2, 3))[unused] == 0).all()
    assert (m.sum(dim=(2, 3))[:, 0] > 0).all()


def test_each_region_is_exactly_the_named_square_and_omega0_holds_kept_objects(cases):
    for i in range(len(cases)):
        clauses = decode_instruction(cases.instruction[i])
        index = _palette_index(cases.source[i])
        for k, (colour, _) in enumerate(clauses, start=1):
            mask = cases.masks[i, k].numpy().astype(bool)
            assert np.array_equal(mask, index == COLOUR_NAMES.index(colour))
            rows, cols = np.nonzero(mask)
            side = rows.max() - rows.min() + 1
            assert side == cols.max() - cols.min() + 1 and mask.sum() == side * side
            assert SIDE_RANGE[0] <= side <= SIDE_RANGE[1]
        kept = (index >= 0) & (cases.masks[i, 1:].sum(0).numpy() == 0)
        assert (cases.masks[i, 0].numpy()[kept] == 1).all()
        assert len(set(index[kept].tolist())) == int(cases.n_objects[i] - cases.n_clauses[i])
        assert len(set(index[index >= 0].tolist())) == int(cases.n_objects[i])


def test_squares_are_at_least_one_pixel_apart(cases):
    for i in range(len(cases)):
        index = _palette_index(cases.source[i])
        padded = np.pad(index, 1, constant_values=-1)
        for dy, dx in itertools.product((-1, 0, 1), repeat=2):
            neighbour = padded[1 + dy : 17 + dy, 1 + dx : 17 + dx]
            touching = (index >= 0) & (neighbour >= 0)
            assert (index[touching] == neighbour[touching]).all()  # 8-neighbours share the square's colour


def test_target_recolours_only_instructed_squares_and_colours_stay_distinct(cases):
    edit = cases.masks[:, 1:].sum(dim=1, keepdim=True)
    assert torch.equal(cases.target * (1 - edit), cases.source * (1 - edit))
    for i in range(len(cases)):
        n = int(cases.n_clauses[i])
        for k in range(n):
            inside = cases.masks[i, k + 1].bool()
            assert (cases.target[i][:, inside] == cases.target_colours[i, k][:, None]).all()
        assert (cases.target_colours[i, n:] == 0).all()
        before = set(_palette_index(cases.source[i]).ravel().tolist()) - {-1}
        after = set(_palette_index(cases.target[i]).ravel().tolist()) - {-1}
        assert len(before) == len(after) == int(cases.n_objects[i])
        new = [COLOUR_NAMES[j] for j in after - before]
        assert len(new) == n  # each c′ is a colour no object had before, and the c′ differ


def test_instruction_code_round_trips_to_the_text(cases):
    assert cases.instruction.shape == (len(cases), INSTRUCTION_DIM)
    for i in range(len(cases)):
        clauses = decode_instruction(cases.instruction[i])
        assert len(clauses) == int(cases.n_clauses[i])
        assert instruction_text(clauses) == cases.text[i]
        assert tuple(CLAUSE.findall(cases.text[i])) == clauses
        assert torch.equal(encode_instruction(clauses), cases.instruction[i])
        for k, (_, new) in enumerate(clauses):
            assert torch.equal(cases.target_colours[i, k], torch.tensor(PALETTE[new]))
    assert instruction_text([("red", "blue"), ("green", "cyan")]) == (
        "recolour the red square blue and the green square cyan"
    )


def test_clause_order_is_random():
    batch = sample_cases(200, 1, clauses=(2,), objects=(2,))
    # with two objects, clause 1 names the larger square about half the time
    area = batch.masks.sum(dim=(2, 3))
    first_larger = (area[:, 1] > area[:, 2]).float().mean()
    second_larger = (area[:, 2] > area[:, 1]).float().mean()
    assert abs(first_larger - second_larger) < 0.2


def test_determinism_per_seed():
    a, b, c = sample_cases(16, 7), sample_cases(16, 7), sample_cases(16, 8)
    for name in ("source", "target", "masks", "instruction"):
        assert torch.equal(getattr(a, name), getattr(b, name))
    assert a.text == b.text and not torch.equal(a.source, c.source)
    assert torch.equal(make_suite("mixed", 8).source, make_suite("mixed", 8).source)
    t0, t1 = training_batch(8, 0, 3), training_batch(8, 0, 3)
    assert torch.equal(t0.target, t1.target) and torch.equal(t0.flaw, t1.flaw)
    assert not torch.equal(t0.source, training_batch(8, 0, 4).source)
    assert not torch.equal(t0.source, training_batch(8, 1, 3).source)


def test_suites_are_disjoint_streams():
    suites = [make_suite(name, 8).source for name in SUITES]
    streams = [*suites, training_batch(8, 0, 0).source, sample_cases(8, 0).source]
    for a, b in itertools.combinations(streams, 2):
        assert not torch.equal(a, b)


def test_suite_clause_and_object_counts():
    single = make_suite("single")
    assert len(single) == 256 and single.suite == "single"
    assert (single.n_clauses == 1).all() and set(single.n_objects.tolist()) == {1, 2, 3}
    mixed = make_suite("mixed")
    assert torch.equal(torch.bincount(mixed.n_clauses), torch.tensor([0, 128, 128]))
    assert (mixed.n_objects >= mixed.n_clauses).all() and (mixed.n_objects <= 3).all()
    assert set(mixed.n_objects[mixed.n_clauses == 2].tolist()) == {2, 3}
    multi = make_suite("multiedit")
    assert (multi.n_objects == 3).all()
    assert torch.equal(torch.bincount(multi.n_clauses), torch.tensor([0, 0, 128, 128]))
    kept = multi.n_objects - multi.n_clauses
    assert torch.equal(kept, (multi.n_clauses == 2).long())


def test_flaw_rates_and_flawed_targets():
    batches = [training_batch(64, 11, step) for step in range(63)]  # 4,032 cases
    n_clauses = torch.cat([b.n_clauses for b in batches])
    flaw = torch.cat([b.flaw for b in batches])
    assert len(n_clauses) == 4032
    assert torch.bincount(n_clauses)[1:].min() > 1200  # uniform in 1..3
    partial, tint = flaw[:, FLAWS.index("partial")], flaw[:, FLAWS.index("tint")]
    multi = n_clauses >= 2
    assert not partial[~multi].any()
    p = partial[multi].float().mean().item()
    assert abs(p - FLAW_PARTIAL) < 4 * math.sqrt(FLAW_PARTIAL * (1 - FLAW_PARTIAL) / int(multi.sum()))
    q = tint.float().mean().item()
    assert abs(q - FLAW_TINT) < 4 * math.sqrt(FLAW_TINT * (1 - FLAW_TINT) / len(tint))
    for b in batches[:8]:
        for i in range(len(b)):
            n = int(b.n_clauses[i])
            for k in range(n):
                inside = b.masks[i, k + 1].bool()
                expected = b.source[i] if (b.flaw[i, 0] and k > 0) else b.target_colours[i, k][:, None, None]
                assert torch.equal(b.target[i][:, inside], expected.expand(3, 16, 16)[:, inside])
            keep = b.masks[i, 0].bool()
            shift = b.target[i][:, keep] - b.source[i][:, keep]
            if b.flaw[i, 1]:
                channel = int(shift.abs().sum(dim=1).argmax())
                unclipped = b.source[i][channel, keep] <= 1 - TINT
                assert torch.allclose(
                    shift[channel][unclipped], torch.full_like(shift[channel][unclipped], TINT)
                )
                assert (torch.cat([shift[:channel], shift[channel + 1 :]]) == 0).all()
            else:
                assert (shift == 0).all()


def test_select_and_repeat_each(cases):
    part = cases.select([4, 1, 4])
    assert len(part) == 3 and part.text == (cases.text[4], cases.text[1], cases.text[4])
    assert torch.equal(part.masks, cases.masks[[4, 1, 4]])
    assert torch.equal(cases.select(torch.tensor([2, 0])).source, cases.source[[2, 0]])
    group = cases.select([0, 1, 2]).repeat_each(4)
    assert len(group) == 12 and group.suite == cases.suite
    for i in range(3):
        for j in range(4):
            assert torch.equal(group.source[i * 4 + j], cases.source[i])
            assert torch.equal(group.instruction[i * 4 + j], cases.instruction[i])
            assert group.text[i * 4 + j] == cases.text[i]
    flawed = training_batch(6, 0, 0).repeat_each(2)
    assert flawed.flaw.shape == (12, 2) and torch.equal(flawed.flaw[::2], flawed.flaw[1::2])
    moved = cases.to("cpu")
    assert torch.equal(moved.target, cases.target) and moved.text == cases.text


@pytest.mark.parametrize(
    ("call", "error", "name"),
    [
        (lambda: sample_cases(0, 1), ValueError, "n"),
        (lambda: sample_cases(2.5, 1), TypeError, "n"),
        (lambda: sample_cases(4, -1), ValueError, "seed"),
        (lambda: sample_cases(4, "x"), TypeError, "seed"),
        (lambda: sample_cases(4, 1, clauses=(0,)), ValueError, "clauses"),
        (lambda: sample_cases(4, 1, clauses=(4,)), ValueError, "clauses"),
        (lambda: sample_cases(4, 1, clauses=[1]), TypeError, "clauses"),
        (lambda: sample_cases(4, 1, clauses=(3,), objects=(1, 2)), ValueError, "objects"),
        (lambda: make_suite("multi"), ValueError, "name"),
        (lambda: make_suite("single", n=0), ValueError, "n"),
        (lambda: make_suite("single", seed=-2), ValueError, "seed"),
        (lambda: training_batch(0, 0, 0), ValueError, "batch_size"),
        (lambda: training_batch(4, 0, -1), ValueError, "step"),
        (lambda: encode_instruction([("red", "mauve")]), ValueError, "clauses"),
        (lambda: decode_instruction(torch.zeros(35)), ValueError, "code"),
        (lambda: sample_cases(4, 0).select([9]), ValueError, "index"),
        (lambda: sample_cases(4, 0).select(torch.tensor([0.0])), TypeError, "index"),
        (lambda: sample_cases(4, 0).repeat_each(0), ValueError, "g"),
    ],
)
def test_bad_inputs_name_the_argument(call, error, name):
    with pytest.raises(error, match=rf"\b{name}\b"):
        call()


def test_edit_batch_checks_shapes():
    batch = sample_cases(2, 0)
    with pytest.raises(ValueError, match="masks"):
        EditBatch(**{**batch.__dict__, "masks": batch.masks[:, :3]})
    with pytest.raises(TypeError, match="source"):
        EditBatch(**{**batch.__dict__, "source": batch.source.numpy()})
