"""SpecBlock drafter (§3.2): block mask, shift map, TTT attention, cache equivalences, training flags."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from neurips26.nn.transformer import Decoder, DecoderConfig
from neurips26.specblock.drafter import (
    DrafterCache,
    SpecBlockConfig,
    SpecBlockDrafter,
    block_mask,
    shift_slots,
    ttt_context_mask,
)
from neurips26.specblock.protocol import fused_features, target_outputs
from neurips26.specblock.train_drafter import DrafterTraining, train_specblock

K = 4
OLD_KEYWORDS_LOSS = [8.565472602844238, 14.264677047729492, 15.539510726928711]
OLD_KEYWORDS_WEIGHT_SUM = 288.6515706576902


@pytest.fixture(scope="module")
def target() -> Decoder:
    return Decoder(DecoderConfig(vocab_size=20, width=32, depth=4, heads=2, context=64), seed=0)


@pytest.fixture(scope="module")
def drafter64(target) -> SpecBlockDrafter:
    return SpecBlockDrafter.from_target(target, seed=1).double().eval()


def _sequence(target, length=12, seed=0):
    tokens = torch.randint(0, 20, (1, length), generator=torch.Generator().manual_seed(seed))
    _, hidden = target_outputs(target, tokens)
    return tokens, fused_features(hidden).double()


def test_block_mask_is_exactly_earlier_positions_and_left_slots():
    rows = 3
    mask = block_mask(rows, K)
    assert mask.shape == (rows * K, rows * K)
    for i in range(rows):
        for k in range(K):
            seen = {(j, kk) for j in range(rows) for kk in range(K) if mask[i * K + k, j * K + kk]}
            expected = {(j, kk) for j in range(i) for kk in range(K)} | {(i, kk) for kk in range(k + 1)}
            assert seen == expected


def test_shift_map_sends_slot_k_to_k_minus_1_and_slot_0_to_itself():
    h = torch.arange(2 * K * 3, dtype=torch.float64).view(2, K, 3)
    sh = shift_slots(h)
    assert torch.equal(sh[:, 0], h[:, 0])
    for k in range(1, K):
        assert torch.equal(sh[:, k], h[:, k - 1])


def test_ttt_context_mask_follows_the_unroll():
    rows, steps = 3, [2, 3]
    mask = ttt_context_mask(rows, K, steps)
    assert mask.shape == (rows * K, 2 * rows * K)
    for i in range(rows):
        for k in range(K):
            q = mask[i * K + k].view(2, rows, K)
            for j in range(rows):
                for kk in range(K):
                    assert bool(q[0, j, kk]) == (j < i or (j == i and kk < steps[0]))
                    assert bool(q[1, j, kk]) == (j == i and kk < steps[1])


def test_incremental_cache_equals_full_sequence_forward(target, drafter64):
    tokens, features = _sequence(target)
    s = tokens.shape[1] - 1
    full = drafter64.forward_sequence(features[:, :s], tokens[:, 1:])
    cache = DrafterCache()
    first = drafter64.extend(cache, features[0, :5], tokens[0, 1:6])
    second = drafter64.extend(cache, features[0, 5:s], tokens[0, 6 : s + 1])
    assert cache.rows == s
    torch.testing.assert_close(first.logits[0], full.logits[0, :5], atol=1e-10, rtol=0)
    torch.testing.assert_close(second.logits[0], full.logits[0, 5:], atol=1e-10, rtol=0)
    torch.testing.assert_close(second.hidden[0], full.hidden[0, 5:], atol=1e-10, rtol=0)


@pytest.mark.parametrize("m1, m2", [(1, 4), (3, 2)])
def test_inference_expansion_equals_the_ttt_unroll(target, drafter64, m1, m2):
    """Blocks 2 and 3 launched from a leaf at inference see exactly what the TTT unroll trains."""
    tokens, features = _sequence(target, length=16, seed=3)
    s = 6  # rows 0 … 5; compare at the last row i = 5
    i = s - 1
    outs = drafter64.forward_ttt(features[:, :s], tokens[:, 1:], [m1, m2], own_rows=False)
    cache = DrafterCache()
    block1 = drafter64.extend(cache, features[0, :s], tokens[0, 1 : s + 1])
    torch.testing.assert_close(block1.logits[0, i], outs[0].logits[0, i], atol=1e-10, rtol=0)
    # block 2 from block 1's slot m1-1: token x_{i+1+m1}, depth m1 below the root x_{i+1}
    block2 = drafter64.expand(
        cache,
        block1.hidden[0, i, m1 - 1][None],
        tokens[0, i + 1 + m1][None],
        torch.tensor([i + m1]),
        torch.tensor([m1]),
    )
    torch.testing.assert_close(block2.hidden[0, 0], outs[1].hidden[0, i], atol=1e-10, rtol=0)
    # block 3 from block 2's slot m2-1, with block 2's slots < m2 as its ancestor context
    ancestors = [(block2.keys[layer], block2.values[layer]) for layer in range(drafter64.config.layers)]
    block3 = drafter64.expand(
        cache,
        block2.hidden[0, 0, m2 - 1][None],
        tokens[0, i + 1 + m1 + m2][None],
        torch.tensor([i + m1 + m2]),
        torch.tensor([m1]),
        ancestors,
        (torch.arange(K) < m2)[None],
    )
    torch.testing.assert_close(block3.logits[0, 0], outs[2].logits[0, i], atol=1e-10, rtol=0)


def test_released_ttt_own_mask_differs_only_by_earlier_rows_of_the_same_block(target, drafter64):
    tokens, features = _sequence(target, length=16, seed=3)
    released = drafter64.forward_ttt(features[:, :6], tokens[:, 1:], [2])
    row_only = drafter64.forward_ttt(features[:, :6], tokens[:, 1:], [2], own_rows=False)
    torch.testing.assert_close(released[0].logits, row_only[0].logits, atol=0, rtol=0)  # block 1 unchanged
    torch.testing.assert_close(
        released[1].logits[:, 0], row_only[1].logits[:, 0], atol=1e-12, rtol=0
    )  # row 0
    assert not torch.allclose(released[1].logits[:, 1:], row_only[1].logits[:, 1:])


def test_slot_depends_only_on_earlier_slots_and_shift_links_them(target):
    """Changing slot 2's query changes slots ≥ 2 only; without the shift the dependence is by attention."""
    tokens, features = _sequence(target, length=6)
    for shift in (True, False):
        config = SpecBlockConfig.for_target(target, shift=shift)
        drafter = SpecBlockDrafter.from_target(target, config, seed=2).double()
        base = drafter.forward_sequence(features[:, :4], tokens[:, 1:5]).logits
        with torch.no_grad():
            drafter.slot_query[2] += 1.0
        moved = drafter.forward_sequence(features[:, :4], tokens[:, 1:5]).logits
        # the last row's slots 0, 1 are untouched; earlier rows change (they are visible to later rows only)
        torch.testing.assert_close(moved[0, 0, :2], base[0, 0, :2], atol=1e-12, rtol=0)
        assert not torch.allclose(moved[0, 0, 2:], base[0, 0, 2:])
        assert (len(drafter.shifts) == 1) == shift


def test_config_validation_names_the_field(target):
    with pytest.raises(ValueError, match="block_size"):
        SpecBlockConfig(width=32, feature_dim=96, vocab_size=20, block_size=0)
    with pytest.raises(ValueError, match="heads"):
        SpecBlockConfig(width=32, feature_dim=96, vocab_size=20, heads=3)
    with pytest.raises(ValueError, match="vocab_size"):
        SpecBlockConfig(width=32, feature_dim=96, vocab_size=10)
    with pytest.raises(TypeError, match="shift"):
        SpecBlockConfig(width=32, feature_dim=96, vocab_size=20, shift=1)
    with pytest.raises(ValueError, match="embedding"):
        SpecBlockDrafter(SpecBlockConfig.for_target(target), torch.zeros(3, 3))


def _data(target, n=6, length=20):
    tokens = torch.randint(0, 20, (n, length), generator=torch.Generator().manual_seed(5))
    logits, hidden = target_outputs(target, tokens)
    mask = torch.zeros(n, length, dtype=torch.bool)
    mask[:, 4:18] = True
    return tokens, logits, hidden, mask


def test_training_is_deterministic_and_flags_shape_the_drafter(target):
    data = _data(target)
    recipe = DrafterTraining(steps=3, batch=3, window=8, seed=4)
    a, history_a = train_specblock(target, data, recipe, show_progress=False)
    b, history_b = train_specblock(target, data, recipe, show_progress=False)
    assert history_a.loss == history_b.loss and len(history_a.loss) == 3
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        assert torch.equal(p, q), name
    assert torch.equal(a.embedding, target.token_embedding.weight)  # copied and frozen
    plain, history = train_specblock(
        target,
        data,
        dataclasses.replace(recipe, ttt_blocks=1, valid_prefix=False),
        architecture=SpecBlockConfig.for_target(target, shift=False, rank_head=False),
        show_progress=False,
    )
    assert plain.rank_head is None and len(plain.shifts) == 0
    assert history.eval["rank_loss"] == [0.0, 0.0, 0.0]
    assert dataclasses.asdict(plain.config)["shift"] is False
    strict, history = train_specblock(
        target,
        data,
        dataclasses.replace(recipe, strict_chain=True, ttt_own_rows=False),
        show_progress=False,
    )
    assert all(torch.isfinite(torch.tensor(history.loss)))


def test_training_rejects_bad_arguments(target):
    data = _data(target)
    with pytest.raises(TypeError, match="training"):
        train_specblock(target, data, {"steps": 3})
    with pytest.raises(TypeError, match="architecture"):
        train_specblock(target, data, architecture={"shift": False})
    with pytest.raises(TypeError, match="data"):
        train_specblock(target, object())
    with pytest.raises(TypeError, match="target"):
        train_specblock("target", data)


def test_drafter_training_defaults_are_the_chapter_recipe():
    assert dataclasses.asdict(DrafterTraining()) == dict(
        steps=300,
        batch=16,
        lr=3e-3,
        seed=0,
        ttt_blocks=3,
        valid_prefix=True,
        strict_chain=False,
        ttt_own_rows=True,
        window=48,
        gamma=0.8,
        rank_weight=1.0,
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        DrafterTraining().steps = 1  # type: ignore[misc]
    normalised = DrafterTraining(lr=1, gamma=1, rank_weight=0)  # ints accepted as reals, stored as float
    assert isinstance(normalised.lr, float) and normalised.lr == 1.0 and isinstance(normalised.gamma, float)


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("steps", -1, ValueError),  # integer counts: below their minimum
        ("batch", 0, ValueError),
        ("ttt_blocks", 0, ValueError),
        ("window", 0, ValueError),
        ("seed", -1, ValueError),
        ("steps", 2.0, TypeError),  # integer counts: not an int (a bool is not one either)
        ("batch", True, TypeError),
        ("lr", 0.0, ValueError),  # reals: out of range or not finite
        ("lr", float("nan"), ValueError),
        ("gamma", 1.5, ValueError),
        ("rank_weight", -0.1, ValueError),
        ("gamma", "0.8", TypeError),  # reals: not a number
        ("valid_prefix", 1, TypeError),  # flags: only a bool
        ("strict_chain", None, TypeError),
        ("ttt_own_rows", "yes", TypeError),
    ],
)
def test_drafter_training_rejects_a_bad_field_naming_it(field, value, error):
    with pytest.raises(error, match=field):
        DrafterTraining(**{field: value})


def test_the_recipe_trains_the_drafter_the_old_keywords_trained(target):
    """The recipe trains the drafter the old keyword arguments did: the reference numbers are the old
    ``train_specblock(target, data, steps=3, batch=3, window=8, seed=4, ttt_blocks=2, strict_chain=True)``
    (commit 6db94ff) on this data."""
    data = _data(target)
    recipe = DrafterTraining(steps=3, batch=3, window=8, seed=4, ttt_blocks=2, strict_chain=True)
    drafter, history = train_specblock(target, data, recipe, show_progress=False)
    # bitwise equal here; the tolerance only allows for another CPU's float rounding
    assert history.loss == pytest.approx(OLD_KEYWORDS_LOSS, rel=1e-5)
    assert float(sum(p.double().sum() for p in drafter.state_dict().values())) == pytest.approx(
        OLD_KEYWORDS_WEIGHT_SUM, rel=1e-6
    )
