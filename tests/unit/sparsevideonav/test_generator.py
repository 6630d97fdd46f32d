"""The generator and the Former: zero-init history injection (Stage 2 = Stage 1 at init), FiLM = identity at
init, padding inert, h_T's shape independent of the history's length, offset k embeds as dense index k, the
reference stays out of the loss, raw history joins the sequence, the cross-attention's masks, and the cost
model equal to PyTorch's FLOP count of the real modules."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from neurips26.sparsevideonav import cost_model as C
from neurips26.sparsevideonav.former import FiLM, Former, FormerConfig
from neurips26.sparsevideonav.generator import GeneratorConfig, SparseVideoGenerator, flow_loss, load_stage
from neurips26.sparsevideonav.instructions import MAX_WORDS, encode
from neurips26.sparsevideonav.layers import CrossAttention, WordEncoder
from neurips26.sparsevideonav.timeline import SPARSE_OFFSETS, continuous_offsets


@pytest.fixture(autouse=True)
def _float64():
    """Double precision for exact comparisons, restored afterwards (other test files share the process)."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def _words(batch: int = 2) -> torch.Tensor:
    a = encode(("find", "the", "red", "object"))
    b = encode(("go", "straight", ",", "turn", "left", ",", "stop", "at", "the", "blue", "object"))
    return torch.as_tensor(np.stack([a, b] * (batch // 2) + [a] * (batch % 2)))


def _clip(config: GeneratorConfig, batch: int = 2, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, config.slots, 2, 16, generator=g)


def _perturbed(model: torch.nn.Module, seed: int = 1) -> torch.nn.Module:
    """Every parameter moved off its initial value (so zero-init layers are no longer zero)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=g))
    return model


def test_cross_attention_masks_padding_and_an_empty_row_adds_zero():
    torch.manual_seed(0)
    attn = CrossAttention(8, 2, context_dim=6)
    x, ctx = torch.randn(2, 3, 8), torch.randn(2, 5, 6)
    mask = torch.tensor([[True, True, False, False, False], [False] * 5])
    out = attn(x, ctx, mask)
    garbage = ctx.clone()
    garbage[0, 2:] = 1e3
    garbage[1] = -7.0
    assert torch.allclose(attn(x, garbage, mask), out, atol=1e-12)  # padding is inert
    # = attending to the real keys only
    assert torch.allclose(out[0], attn(x[:1], ctx[:1, :2])[0], atol=1e-12)
    assert torch.equal(out[1], torch.zeros(3, 8))  # no real key: nothing added
    assert torch.equal(attn(x, ctx[:, :0]), torch.zeros(2, 3, 8))
    zero = CrossAttention(8, 2, zero_init=True)
    assert torch.equal(zero(x, torch.randn(2, 4, 8)), torch.zeros(2, 3, 8))
    with pytest.raises(ValueError, match="key_mask"):
        attn(x, ctx, mask[:, :3])
    with pytest.raises(ValueError, match="context"):
        attn(x, torch.randn(2, 5, 7))


def test_word_encoder_drops_padding_columns_and_zeroes_padding():
    torch.manual_seed(0)
    enc = WordEncoder(40, 16, MAX_WORDS)
    ids = _words()
    feats, mask = enc(ids)
    assert feats.shape == (2, 11, 16) and mask.sum(1).tolist() == [4, 11]
    assert torch.equal(feats[0, 4:], torch.zeros(7, 16))
    alone, _ = enc(ids[:1])  # padding of another row changes nothing
    assert torch.allclose(alone[0], feats[0, :4], atol=1e-12)
    with pytest.raises(ValueError, match="instruction"):
        enc(torch.full((1, 3), 99))


def test_stage_two_equals_stage_one_at_initialisation():
    torch.manual_seed(0)
    stage1 = _perturbed(SparseVideoGenerator(GeneratorConfig(width=16, heads=2, depth=2)))
    config2 = stage1.config.with_history("former")
    torch.manual_seed(1)
    stage2 = SparseVideoGenerator(config2)
    new = load_stage(stage2, stage1)
    assert new and all(".memory" in name for name in new)
    x, t, words = _clip(config2), torch.tensor([0.3, 0.8]), _words()
    memory = torch.randn(2, config2.memory_tokens, 16)
    v1 = stage1(x, t, words)
    assert torch.abs(v1).max() > 1e-3  # a real output, not the zero head
    assert torch.equal(stage2(x, t, words, memory=memory), v1)
    with pytest.raises(ValueError, match="memory"):
        stage2(x, t, words)
    with pytest.raises(ValueError, match="memory"):
        stage1(x, t, words, memory=memory)


def test_offset_k_embeds_as_dense_index_k():
    torch.manual_seed(0)
    sparse = SparseVideoGenerator(GeneratorConfig(width=16, heads=2, depth=1))
    dense = SparseVideoGenerator(GeneratorConfig(width=16, heads=2, depth=1, offsets=continuous_offsets(20)))
    for offset_slot, k in enumerate(SPARSE_OFFSETS):
        assert sparse.slot_positions[2 + offset_slot] == dense.slot_positions[2 + k]
    slot = SparseVideoGenerator(GeneratorConfig(width=16, heads=2, depth=1, positions="slot"))
    assert slot.slot_positions.tolist() == list(range(10))


def test_the_loss_ignores_the_reference_and_a_perfect_velocity_scores_zero():
    torch.manual_seed(0)
    model = _perturbed(SparseVideoGenerator(GeneratorConfig(width=16, heads=2, depth=1)))
    clip, words = _clip(model.config), _words()
    g = torch.Generator().manual_seed(5)
    loss = flow_loss(model, clip, words, generator=g)
    g = torch.Generator().manual_seed(5)
    moved = clip.clone()
    moved[:, 2:] += 0.0  # same future
    assert torch.equal(flow_loss(model, moved, words, generator=g), loss)
    # the reference enters x_t clean: changing it changes the input, not the target set
    assert loss.item() > 0

    class Oracle(torch.nn.Module):  # knows ε − x₀ because it sees the same draw
        config = model.config

        def forward(self, x_t, t, words, **_):
            tt = t[:, None, None, None]
            eps = (x_t - (1 - tt) * clip) / tt
            return eps - clip

    g = torch.Generator().manual_seed(6)
    assert flow_loss(Oracle(), clip, words, generator=g).item() < 1e-20


def test_raw_history_joins_the_sequence_and_its_padding_is_inert():
    torch.manual_seed(0)
    model = _perturbed(SparseVideoGenerator(GeneratorConfig(width=16, heads=2, depth=2, history="raw")))
    x, t, words = _clip(model.config), torch.tensor([0.4, 0.6]), _words()
    history = torch.randn(2, 3, 2, 16)
    mask = torch.tensor([[True, True, True], [False, True, True]])
    out = model(x, t, words, history=history, history_mask=mask)
    garbage = history.clone()
    garbage[1, 0] = 50.0
    assert torch.allclose(model(x, t, words, history=garbage, history_mask=mask), out, atol=1e-10)
    assert torch.allclose(model(x[1:], t[1:], words[1:], history=history[1:, 1:])[0], out[1], atol=1e-10)
    assert not torch.allclose(model(x, t, words, history=history[:, 1:]), out, atol=1e-6)  # it is used


def test_former_shape_is_independent_of_history_and_padding_is_inert():
    torch.manual_seed(0)
    former = _perturbed(Former(FormerConfig(width=16, heads=2)))
    words = _words()
    for h in (0, 1, 4, 17):
        hist = torch.randn(2, h, 2, 16)
        assert former(hist, torch.ones(2, h, dtype=torch.bool), words).shape == (2, 8, 16)
    hist = torch.randn(2, 5, 2, 16)
    mask = torch.tensor([[False, False, True, True, True], [True] * 5])
    out = former(hist, mask, words)
    garbage = hist.clone()
    garbage[0, :2] = 1e3
    assert torch.allclose(former(garbage, mask, words), out, atol=1e-6)
    # the padded row equals the same history given without its padding
    assert torch.allclose(former(hist[:1, 2:], mask[:1, 2:], words[:1])[0], out[0], atol=1e-6)
    with pytest.raises(ValueError, match="history_mask"):
        former(hist, mask[:, :3], words)
    with pytest.raises(ValueError, match="history"):
        former(torch.randn(2, 5, 3, 16), mask, words)


def test_film_is_the_identity_at_initialisation():
    torch.manual_seed(0)
    film = FiLM(16)
    x = torch.randn(2, 5, 16)
    assert torch.equal(film(x, torch.randn(2, 4, 16), torch.ones(2, 4, dtype=torch.bool)), x)


def _explicit_sdpa(q, k, v, attn_mask=None, dropout_p=0.0, **_):
    """Scaled dot-product attention as two matmuls, so PyTorch's FLOP counter sees it."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    return torch.softmax(scores, dim=-1) @ v


def _flops(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


@pytest.mark.parametrize("history", ["none", "former", "raw"])
@pytest.mark.parametrize("offsets", [SPARSE_OFFSETS, continuous_offsets(20)])
def test_the_cost_model_counts_what_the_generator_computes(monkeypatch, history, offsets):
    monkeypatch.setattr(F, "scaled_dot_product_attention", _explicit_sdpa)
    torch.manual_seed(0)
    config = GeneratorConfig(width=16, heads=2, depth=2, history=history, offsets=offsets)
    model = SparseVideoGenerator(config)
    x, t, words = _clip(config, batch=1), torch.tensor([0.5]), _words(1)  # 4 words
    kwargs = {}
    if history == "former":
        kwargs["memory"] = torch.randn(1, 8, 16)
    if history == "raw":
        kwargs["history"] = torch.randn(1, 6, 2, 16)
    with torch.no_grad():
        flops = _flops(lambda: model(x, t, words, **kwargs))
    assert flops == 2 * C.generator_macs(config, words=4, history_chunks=6)


@pytest.mark.parametrize("history_chunks", [0, 1, 7])
def test_the_cost_model_counts_what_the_former_computes(monkeypatch, history_chunks):
    monkeypatch.setattr(F, "scaled_dot_product_attention", _explicit_sdpa)
    torch.manual_seed(0)
    config = FormerConfig(width=16, heads=2, pseudo_chunks=3)
    former = Former(config)
    hist = torch.randn(1, history_chunks, 2, 16)
    mask = torch.ones(1, history_chunks, dtype=torch.bool)
    words = _words(2)[1:]  # 11 words
    flops = _flops(lambda: former(hist, mask, words))
    assert flops == 2 * C.former_macs(config, words=11, history_chunks=history_chunks)


def test_a_decision_costs_the_former_once_and_the_generator_per_step():
    gen = GeneratorConfig(history="former")
    cost = C.decision_cost(gen, steps=4, words=5, history_chunks=10, former=FormerConfig())
    assert cost.total == C.former_macs(FormerConfig(), words=5, history_chunks=10) + 4 * C.generator_macs(
        gen, words=5
    )
    raw = C.decision_cost(gen.with_history("raw"), steps=50, words=5, history_chunks=64)
    short = C.generator_macs(gen.with_history("raw"), words=5, history_chunks=4)
    assert raw.former == 0 and raw.per_step > short
    with pytest.raises(ValueError, match="former"):
        C.decision_cost(gen, steps=4, words=5, history_chunks=1)
    with pytest.raises(ValueError, match="steps"):
        C.decision_cost(gen, steps=0, words=5, history_chunks=1, former=FormerConfig())


def test_bad_configs_name_the_field():
    with pytest.raises(ValueError, match="history"):
        GeneratorConfig(history="sometimes")
    with pytest.raises(ValueError, match="offsets"):
        GeneratorConfig(offsets=(0, 2, 1))
    with pytest.raises(ValueError, match="positions"):
        GeneratorConfig(positions="true")
    with pytest.raises(ValueError, match="width"):
        FormerConfig(width=10, heads=4)
    model = SparseVideoGenerator(GeneratorConfig(width=16, heads=2, depth=1))
    with pytest.raises(ValueError, match="x must"):
        model(torch.randn(2, 9, 2, 16), torch.rand(2), _words())
    with pytest.raises(ValueError, match="t must"):
        model(_clip(model.config), torch.rand(3), _words())
