"""Tests of neurips26.spark_vla.encoder: the frozen 2D encoder and its LoRA-off / LoRA-on pathways."""

from __future__ import annotations

import pytest
import torch

from neurips26.nn import LoRALinear, ViT, lora_modules
from neurips26.spark_vla.encoder import (
    ENCODER_CONFIG,
    GRID,
    LORA_TARGETS,
    NUM_PATCHES,
    SPLIT_BLOCK,
    PathwayOutput,
    TwoPathwayEncoder,
    check_images,
    make_encoder,
    pretrain_encoder,
)


def _images(batch: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.rand(batch, 3, 48, 48, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def _randomise_adapters(model: TwoPathwayEncoder, seed: int = 1) -> None:
    """Give every adapter a non-zero B, so that the LoRA pathway differs from the frozen one."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in lora_modules(model.encoder):
            m.lora_B.copy_(0.1 * torch.randn(m.lora_B.shape, generator=g, dtype=m.lora_B.dtype))


@pytest.fixture(scope="module")
def encoder() -> ViT:
    vit = make_encoder(3)
    vit.eval()
    for p in vit.parameters():
        p.requires_grad_(False)
    return vit


def _toy_semantics(frames: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Images whose patches are flat colours (3 classes) with or without a dark left half (2 shapes)."""
    g = torch.Generator().manual_seed(seed)
    colour = torch.randint(0, 3, (frames, GRID, GRID), generator=g)
    shape = torch.randint(0, 2, (frames, GRID, GRID), generator=g)
    palette = 0.7 * torch.eye(3) + 0.15
    images = palette[colour].permute(0, 3, 1, 2).repeat_interleave(8, 2).repeat_interleave(8, 3)
    left = torch.zeros(8)
    left[:4] = 1.0
    dark = shape.float().repeat_interleave(8, 1).repeat_interleave(8, 2) * left.repeat(GRID)
    images = images * (1 - 0.5 * dark[:, None]) + 0.03 * torch.randn(images.shape, generator=g)
    colour_labels = colour.flatten(1).clone()
    colour_labels[torch.rand(colour_labels.shape, generator=g) < 0.1] = -1  # some unlabelled patches
    return images, colour_labels, shape.flatten(1).clone()


# ----------------------------------------------------------------------------------------- constants


def test_constants_agree_with_the_config() -> None:
    assert ENCODER_CONFIG.num_patches == NUM_PATCHES == GRID * GRID
    assert not ENCODER_CONFIG.class_token and ENCODER_CONFIG.depth > SPLIT_BLOCK
    assert all(int(t.split(".")[1]) >= SPLIT_BLOCK for t in LORA_TARGETS)


def test_make_encoder_is_seeded_and_leaves_the_global_rng_alone() -> None:
    state = torch.random.get_rng_state()
    a, b, c = make_encoder(5), make_encoder(5), make_encoder(6)
    assert torch.equal(torch.random.get_rng_state(), state)
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert not all(torch.equal(sa[k], sc[k]) for k in sa)
    assert a.config == ENCODER_CONFIG


@pytest.mark.parametrize(
    "bad",
    [
        torch.rand(2, 3, 32, 32),
        torch.rand(2, 1, 48, 48),
        torch.rand(3, 48, 48),
        torch.rand(0, 3, 48, 48),
        torch.zeros(2, 3, 48, 48, dtype=torch.int64),
    ],
)
def test_check_images_names_images(bad: torch.Tensor) -> None:
    with pytest.raises(ValueError, match="images"):
        check_images(bad)


def test_check_images_rejects_non_tensors() -> None:
    with pytest.raises(TypeError, match="images"):
        check_images([[0.0]])
    x = _images(1)
    assert check_images(x) is x


# -------------------------------------------------------------------------------------- two pathways


def test_fresh_adapters_make_both_pathways_bit_identical(encoder: ViT) -> None:
    model = TwoPathwayEncoder(encoder)
    assert all(torch.count_nonzero(m.lora_B) == 0 for m in lora_modules(model.encoder))
    assert all(torch.count_nonzero(m.lora_A) > 0 for m in lora_modules(model.encoder))
    v2d, v3d = model(_images(4))
    assert v2d.shape == v3d.shape == (4, NUM_PATCHES, ENCODER_CONFIG.width)
    assert torch.equal(v2d, v3d)


@pytest.mark.parametrize("batch", [1, 5])
def test_lora_off_equals_the_frozen_encoder_for_any_adapters(encoder: ViT, batch: int) -> None:
    model = TwoPathwayEncoder(encoder, seed=2)
    _randomise_adapters(model)
    images = _images(batch, seed=batch)
    v2d, v3d = model(images)
    reference = encoder(images).tokens
    assert torch.equal(v2d, reference)
    assert (v3d - reference).abs().max() > 1e-3  # the adapters really act


def test_prefix_then_pathway_is_the_vit_forward(encoder: ViT) -> None:
    model = TwoPathwayEncoder(encoder)
    _randomise_adapters(model)
    images = _images(3, seed=7)
    z = model.prefix(images)
    full = encoder(images, return_hidden_states=True, return_attentions=True)
    assert not z.requires_grad
    assert torch.equal(z, encoder(images, return_hidden_states=True).hidden_states[SPLIT_BLOCK])
    assert torch.equal(model.pathway(z, lora=False).tokens, encoder(images).tokens)
    # with weights, the hand-run blocks equal ViTBlock.forward(z, need_weights=True) bit for bit ...
    out = model.pathway(z, lora=False, need_weights=True)
    assert len(out.attentions) == len(out.responses) == ENCODER_CONFIG.depth - SPLIT_BLOCK
    h = z
    for block, maps in zip(encoder.blocks[SPLIT_BLOCK:], out.attentions, strict=True):
        h, weights = block(h, need_weights=True)
        assert torch.equal(maps, weights)
    assert torch.equal(out.tokens, encoder.norm(h))
    # ... and the explicit softmax agrees with the fused attention (and ViT's own maps) up to rounding
    assert torch.allclose(out.tokens, full.tokens, atol=1e-5)
    for mine, theirs in zip(out.attentions, full.attentions[SPLIT_BLOCK:], strict=True):
        assert torch.allclose(mine, theirs, atol=1e-6)


def test_responses_are_the_attention_sublayer_outputs(encoder: ViT) -> None:
    model = TwoPathwayEncoder(encoder)
    _randomise_adapters(model)
    z = model.prefix(_images(2, seed=3))
    out = model.pathway(z, lora=True)
    assert isinstance(out, PathwayOutput) and out.attentions is None
    block = model.encoder.blocks[SPLIT_BLOCK]
    expected, _ = block.attn(block.norm1(z))
    assert torch.equal(out.responses[0], expected)
    # the residual stream after the first pathway block is z + a + MLP(...)
    after, _ = block(z)
    second = model.encoder.blocks[SPLIT_BLOCK + 1]
    assert torch.equal(out.responses[1], second.attn(second.norm1(after))[0])


def test_attention_rows_sum_to_one(encoder: ViT) -> None:
    model = TwoPathwayEncoder(encoder)
    _randomise_adapters(model)
    out = model.pathway(model.prefix(_images(3)), lora=True, need_weights=True)
    for maps in out.attentions:
        assert maps.shape == (3, ENCODER_CONFIG.heads, NUM_PATCHES, NUM_PATCHES)
        assert (maps >= 0).all()
        assert torch.allclose(maps.sum(-1), torch.ones(()), atol=1e-6)


def test_pathway_restores_the_adapter_state(encoder: ViT) -> None:
    model = TwoPathwayEncoder(encoder)
    adapters = lora_modules(model.encoder)
    adapters[1].disable()
    before = [m.enabled for m in adapters]
    z = model.prefix(_images(1))
    model.pathway(z, lora=True)
    assert [m.enabled for m in adapters] == before
    model.pathway(z, lora=False, need_weights=True)
    assert [m.enabled for m in adapters] == before
    with pytest.raises(RuntimeError):  # a call that fails inside the blocks (dtype clash) restores it too
        model.pathway(z.double(), lora=True)
    assert [m.enabled for m in adapters] == before


def test_gradients_reach_only_the_adapters(encoder: ViT) -> None:
    model = TwoPathwayEncoder(encoder)
    _randomise_adapters(model)
    _, v3d = model(_images(2))
    (v3d**2).mean().backward()
    adapter_ids = {id(p) for p in model.adapter_parameters()}
    for name, p in model.named_parameters():
        if id(p) in adapter_ids:
            assert p.grad is not None and torch.count_nonzero(p.grad) > 0, name
        else:
            assert not p.requires_grad and p.grad is None, name
    # the caller's encoder was copied, not modified
    assert not any(isinstance(m, LoRALinear) for m in encoder.modules())
    assert all(p.grad is None for p in encoder.parameters())


def test_adapter_gradient_matches_central_differences() -> None:
    vit = make_encoder(1).double()
    model = TwoPathwayEncoder(vit, rank=2, alpha=4.0)
    _randomise_adapters(model)
    z = model.prefix(_images(1, dtype=torch.float64))
    target = torch.randn(z.shape, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    b = lora_modules(model.encoder)[0].lora_B

    def loss() -> torch.Tensor:
        return ((model.pathway(z, lora=True, need_weights=True).tokens - target) ** 2).mean()

    model.zero_grad()
    loss().backward()
    analytic = b.grad.clone()
    h = 1e-6
    with torch.no_grad():
        for index in [(0, 0), (5, 1), (100, 0), (191, 1)]:
            saved = b[index].item()
            b[index] = saved + h
            up = loss().item()
            b[index] = saved - h
            down = loss().item()
            b[index] = saved
            numeric = (up - down) / (2 * h)
            assert abs(numeric - analytic[index].item()) <= 1e-6 * max(1.0, abs(numeric)) + 1e-9


def test_adapter_parameter_count(encoder: ViT) -> None:
    model = TwoPathwayEncoder(encoder)
    d = ENCODER_CONFIG.width
    per_block = 4 * (d + 3 * d) + 4 * (d + d)  # rank r (d_in + d_out) for qkv and out
    assert model.num_adapter_parameters() == 2 * per_block == 3072
    assert len(model.adapter_parameters()) == 2 * len(LORA_TARGETS)
    assert set(model.lora_names) == set(LORA_TARGETS)
    trainable = [p for p in model.parameters() if p.requires_grad]
    assert {id(p) for p in trainable} == {id(p) for p in model.adapter_parameters()}


@pytest.mark.parametrize("rank", [0, -1])
def test_rank_must_be_positive(encoder: ViT, rank: int) -> None:
    with pytest.raises(ValueError, match="rank"):
        TwoPathwayEncoder(encoder, rank=rank)


def test_bad_arguments_name_themselves(encoder: ViT) -> None:
    model = TwoPathwayEncoder(encoder)
    with pytest.raises(ValueError, match="images"):
        model(torch.rand(2, 3, 40, 40))
    with pytest.raises(ValueError, match="images"):
        model.prefix(torch.rand(2, 48, 48))
    with pytest.raises(ValueError, match="alpha"):
        TwoPathwayEncoder(encoder, alpha=0.0)
    with pytest.raises(ValueError, match="targets"):
        TwoPathwayEncoder(encoder, targets=("blocks.0.attn.qkv",))
    with pytest.raises(ValueError, match="targets"):
        TwoPathwayEncoder(encoder, targets=("nothing.here",))
    with pytest.raises(TypeError, match="encoder"):
        TwoPathwayEncoder(torch.nn.Linear(2, 2))
    with pytest.raises(TypeError, match="lora"):
        model.pathway(model.prefix(_images(1)), lora=1)


# -------------------------------------------------------------------------------------- pre-training


def test_pretraining_learns_the_2d_task_and_freezes_the_encoder() -> None:
    images, colours, shapes = _toy_semantics(96)
    state = torch.random.get_rng_state()
    result = pretrain_encoder(
        images, colours, shapes, num_colours=3, num_shapes=2, steps=40, batch_size=16, progress=False
    )
    assert torch.equal(torch.random.get_rng_state(), state)
    assert len(result.losses) == 40
    first, last = sum(result.losses[:5]) / 5, sum(result.losses[-5:]) / 5
    assert last < 0.5 * first
    assert result.colour_accuracy > 0.9 and result.shape_accuracy > 0.8  # chance: 1/3 and 1/2
    assert isinstance(result.model, ViT) and not result.model.training
    assert not any(p.requires_grad for p in result.model.parameters())


def test_pretraining_is_deterministic() -> None:
    images, colours, shapes = _toy_semantics(40, seed=1)
    kwargs = {"num_colours": 3, "num_shapes": 2, "steps": 4, "batch_size": 16, "seed": 3, "progress": False}
    a = pretrain_encoder(images, colours, shapes, **kwargs)
    b = pretrain_encoder(images, colours, shapes, **kwargs)
    c = pretrain_encoder(images, colours, shapes, **{**kwargs, "seed": 4})
    sa, sb, sc = (r.model.state_dict() for r in (a, b, c))
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert a.losses == b.losses
    assert not all(torch.equal(sa[k], sc[k]) for k in sa)


def test_pretraining_rejects_bad_input() -> None:
    images, colours, shapes = _toy_semantics(8)
    kwargs = {"num_colours": 3, "num_shapes": 2, "steps": 1, "progress": False}
    with pytest.raises(ValueError, match="images"):
        pretrain_encoder(images[:, :2], colours, shapes, **kwargs)
    with pytest.raises(ValueError, match="colour_labels"):
        pretrain_encoder(images, colours[:, :30], shapes, **kwargs)
    with pytest.raises(ValueError, match="colour_labels"):
        pretrain_encoder(images, colours.float(), shapes, **kwargs)
    with pytest.raises(ValueError, match="shape_labels"):
        pretrain_encoder(images, colours, shapes + 5, **kwargs)
    with pytest.raises(ValueError, match="shape_labels"):
        pretrain_encoder(images, colours, torch.full_like(shapes, -1), **kwargs)
    with pytest.raises(ValueError, match="steps"):
        pretrain_encoder(images, colours, shapes, **{**kwargs, "steps": 0})
    with pytest.raises(ValueError, match="lr"):
        pretrain_encoder(images, colours, shapes, **{**kwargs, "lr": -1.0})
    with pytest.raises(ValueError, match="num_colours"):
        pretrain_encoder(images, colours, shapes, **{**kwargs, "num_colours": 0})
    with pytest.raises(TypeError, match="progress"):
        pretrain_encoder(images, colours, shapes, **{**kwargs, "progress": "yes"})
