"""The declared cost model: layer formulas against torch's FlopCounterMode (linear parts exactly, attention on
the explicit path), the whole routed and dense pipelines counted end to end, monotonicity, the routed/dense
ratios, the forward callables (routed at k = 2N is the dense forward, seeded), the timing wrapper, and bad
input named."""

import time

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from neurips26.nn import DecoderBlock, ViTBlock
from neurips26.spark_vla.cost import (
    SPARK_BLOCK_PASSES,
    TWO_D_BLOCK_PASSES,
    CostBreakdown,
    attention_flops,
    block_flops,
    build_forward_callables,
    declared_cost,
    linear_flops,
    lora_flops,
    routed_to_dense_ratio,
    sequence_length,
    spark_costs,
    time_forwards,
    token_ratio,
)
from neurips26.spark_vla.encoder import LORA_RANK, TwoPathwayEncoder, make_encoder
from neurips26.spark_vla.router import Router
from neurips26.spark_vla.vla import Policy, PolicyConfig, larger_config
from neurips26.timing import Timing

CONFIG = PolicyConfig()


def counted(fn) -> int:
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        fn()
    return counter.get_total_flops()


@pytest.fixture(scope="module")
def models():
    encoder = TwoPathwayEncoder(make_encoder(0))
    with torch.no_grad():  # trained-looking adapters, so the 3D pathway differs from the 2D one
        for name, p in encoder.named_parameters():
            if "lora_B" in name:
                p.normal_(0.0, 0.05, generator=torch.Generator().manual_seed(1))
    return encoder, Policy(CONFIG, seed=0), Router(CONFIG.vision_width, CONFIG.width, seed=0)


# ------------------------------------------------------------------------------------- layer formulas


@pytest.mark.parametrize(("tokens", "config"), [(31, CONFIG), (85, CONFIG), (20, larger_config(CONFIG))])
def test_decoder_block_formula_matches_the_flop_counter(tokens, config):
    decoder = config.decoder()
    block = DecoderBlock(decoder, None)
    x = torch.randn(2, tokens, config.width)
    mask = torch.ones(tokens, tokens, dtype=torch.bool).tril()
    kwargs = {"positions": None, "mask": mask, "cache": None, "layer": 0}
    full = block_flops(tokens, config.width, decoder.mlp_width)
    # explicit softmax path: Q K^T and A V appear as matmuls over the full T x T square
    assert counted(lambda: block(x, return_weights=True, **kwargs)) == 2 * full
    # fused path: the CPU attention kernel is not counted, the linear maps are, exactly
    linear = full - attention_flops(tokens, config.width)
    assert counted(lambda: block(x, return_weights=False, **kwargs)) == 2 * linear


def test_vit_block_formula_matches_the_flop_counter():
    block = ViTBlock(64, 4, 256)
    z = torch.randn(3, 36, 64)
    assert counted(lambda: block(z, need_weights=True)) == 3 * block_flops(36, 64, 256)


def test_hand_values_of_the_formulas():
    assert linear_flops(5, 3, 7) == 2 * 5 * 3 * 7
    assert attention_flops(85, 64) == 4 * 85**2 * 64
    assert block_flops(85, 64, 256) == 24 * 85 * 64**2 + 4 * 85**2 * 64
    assert lora_flops(36, 4, 64, 192) == 2 * 36 * 4 * (64 + 192)
    assert sequence_length(CONFIG, 72) == 85 and sequence_length(CONFIG, 18) == 31


def test_declared_cost_parts_by_hand():
    cost = declared_cost(CONFIG, 18, encoder_block_passes=6, lora_rank=4, router=True)
    assert isinstance(cost, CostBreakdown) and cost.sequence_length == 31
    w, v = CONFIG.width, CONFIG.vision_width  # the LM's width, the ViT tokens' width
    assert cost.lm == 2 * (24 * 31 * w**2 + 4 * 31**2 * w)
    assert cost.lm_attention == 2 * 4 * 31**2 * w
    assert cost.projector == 2 * 18 * (v * w + w * w)
    assert cost.router == 2 * 72 * ((v + w) * 64 + 64 * 1)
    assert cost.head == 2 * 3 * w + 2 * 4 * (2 * w * 2 * w + 2 * w * 4)
    patch = 2 * 36 * 192 * 64
    lora = 2 * (2 * 36 * 4 * (64 + 192) + 2 * 36 * 4 * (64 + 64))
    assert cost.encoder == patch + 6 * block_flops(36, 64, 256) + lora
    row = cost.as_row()
    assert row["total"] == cost.total == cost.encoder + cost.router + cost.projector + cost.lm + cost.head
    assert set(row) >= {"lm", "encoder", "router", "projector", "total"}


def test_spark_encoder_is_the_2d_encoder_plus_two_adapted_blocks():
    assert (SPARK_BLOCK_PASSES, TWO_D_BLOCK_PASSES) == (6, 4)
    spark = declared_cost(CONFIG, 72, encoder_block_passes=6, lora_rank=LORA_RANK, router=False)
    two_d = declared_cost(CONFIG, 72, encoder_block_passes=4, lora_rank=None, router=False)
    extra = 2 * block_flops(36, 64, 256) + 2 * (lora_flops(36, 4, 64, 192) + lora_flops(36, 4, 64, 64))
    assert spark.encoder - two_d.encoder == extra
    assert declared_cost(CONFIG, 72, encoder_block_passes=0, lora_rank=None, router=False).encoder == 0


# --------------------------------------------------------------------------- whole forwards, brute force


@pytest.mark.parametrize("batch", [1, 2])
def test_the_whole_routed_and_dense_forwards_match_the_flop_counter(models, batch):
    encoder, policy, router = models
    fns = build_forward_callables(encoder, policy, router, batch, 18)
    routed, dense = spark_costs(18)
    # attention runs fused (uncounted on CPU); everything else is counted exactly
    assert counted(fns["dense"]) == batch * dense.linear
    assert counted(fns["routed"]) == batch * routed.linear
    assert dense.router == 0 and routed.router > 0


def test_encoder_pathways_with_explicit_attention_match_the_declared_encoder(models):
    encoder = models[0]
    images = torch.rand(1, 3, 48, 48, generator=torch.Generator().manual_seed(0))

    def both_pathways():
        z = encoder.prefix(images)
        encoder.pathway(z, lora=False, need_weights=True)
        encoder.pathway(z, lora=True, need_weights=True)

    # the shared prefix runs fused: count its attention in by hand
    prefix_attention = 2 * attention_flops(36, 64)
    spark = declared_cost(CONFIG, 72, encoder_block_passes=6, lora_rank=LORA_RANK, router=False)
    assert counted(both_pathways) + prefix_attention == spark.encoder


# ------------------------------------------------------------------------------------------- the ratios


def test_cost_is_strictly_increasing_in_the_visual_tokens():
    costs = [declared_cost(CONFIG, m, encoder_block_passes=6, lora_rank=4, router=True) for m in range(1, 73)]
    for a, b in zip(costs, costs[1:], strict=False):
        assert b.lm > a.lm and b.projector > a.projector and b.total > a.total
        assert b.encoder == a.encoder and b.router == a.router


def test_ratio_is_one_at_the_full_budget_and_near_the_token_ratio_at_k18():
    assert routed_to_dense_ratio(72) == 1.0
    assert token_ratio(72) == 1.0
    # with every token kept, routing only adds the router
    routed, dense = spark_costs(72)
    expected = 1 + routed.router / dense.total
    assert routed_to_dense_ratio(72, scope="total") == pytest.approx(expected, rel=1e-12)
    lm = routed_to_dense_ratio(18)
    assert 0.3 <= lm <= 0.45
    assert token_ratio(18) == pytest.approx(31 / 85, rel=1e-12)
    assert lm < token_ratio(18)  # the quadratic attention term makes short sequences relatively cheaper
    total = routed_to_dense_ratio(18, scope="total")
    assert lm < total < 1.0  # the encoder's two pathways are not routed


def test_ratio_is_monotone_in_k():
    lm = [routed_to_dense_ratio(k) for k in range(1, 73)]
    assert all(b > a for a, b in zip(lm, lm[1:], strict=False))


# ----------------------------------------------------------------------------------- callables and timing


def test_routed_with_every_token_is_the_dense_forward(models):
    fns = build_forward_callables(*models, 2, 72)
    assert torch.equal(fns["routed"](), fns["dense"]())


def test_callables_are_seeded_and_routing_changes_the_output(models):
    a = build_forward_callables(*models, 2, 18, seed=3)
    b = build_forward_callables(*models, 2, 18, seed=3)
    c = build_forward_callables(*models, 2, 18, seed=4)
    routed = a["routed"]()
    assert routed.shape == (2, 4, 4)
    assert torch.equal(routed, b["routed"]()) and torch.equal(a["dense"](), b["dense"]())
    assert not torch.equal(routed, c["routed"]())
    assert not torch.equal(routed, a["dense"]())


def test_time_forwards_returns_a_timing_of_both_forwards(models):
    fns = build_forward_callables(*models, 1, 18)
    start = time.perf_counter()
    timing = time_forwards(fns, rounds=2, warmup=1)
    assert time.perf_counter() - start < 5.0
    assert isinstance(timing, Timing)
    assert set(timing.names) == {"dense", "routed"} and timing.rounds == 2
    assert timing.reference == "dense" and timing.threads == 1
    assert timing.ratio("routed", "dense") > 0


# ------------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("k", [0, 73])
def test_bad_k_is_named(models, k):
    with pytest.raises(ValueError, match="k"):
        routed_to_dense_ratio(k)
    with pytest.raises(ValueError, match="k"):
        token_ratio(k)
    with pytest.raises(ValueError, match="k"):
        build_forward_callables(*models, 1, k)


def test_bad_arguments_are_named(models):
    with pytest.raises(ValueError, match="visual_tokens"):
        declared_cost(CONFIG, -1, encoder_block_passes=6, lora_rank=4, router=True)
    with pytest.raises(ValueError, match="encoder_block_passes"):
        declared_cost(CONFIG, 18, encoder_block_passes=-1, lora_rank=None, router=True)
    with pytest.raises(ValueError, match="encoder_block_passes"):
        declared_cost(CONFIG, 18, encoder_block_passes=1, lora_rank=4, router=True)
    with pytest.raises(ValueError, match="lora_rank"):
        declared_cost(CONFIG, 18, encoder_block_passes=6, lora_rank=0, router=True)
    with pytest.raises(TypeError, match="router"):
        declared_cost(CONFIG, 18, encoder_block_passes=6, lora_rank=4, router=1)
    with pytest.raises(TypeError, match="config"):
        declared_cost("default", 18, encoder_block_passes=6, lora_rank=4, router=True)
    with pytest.raises(ValueError, match="num_candidates"):
        routed_to_dense_ratio(18, num_candidates=64)
    with pytest.raises(ValueError, match="scope"):
        routed_to_dense_ratio(18, scope="encoder")
    with pytest.raises(ValueError, match="tokens"):
        attention_flops(-1, 64)
    with pytest.raises(ValueError, match="batch"):
        build_forward_callables(*models, 0, 18)
    with pytest.raises(TypeError, match="encoder"):
        build_forward_callables(models[1], models[1], models[2], 1, 18)
    with pytest.raises(ValueError, match="callables"):
        time_forwards({}, rounds=1, warmup=0)
