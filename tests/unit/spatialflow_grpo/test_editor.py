"""The editor: sizes, zero start, conditioning, patch order, LoRA and π_ref, sampler adapter, pretraining,
bad input."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest
import torch

from neurips26.flow import euler_sample, uniform_grid
from neurips26.nn import LoRALinear, lora_modules, lora_parameters
from neurips26.spatialflow_grpo.editor import (
    RL_LORA_TARGETS,
    Editor,
    EditorConfig,
    PretrainConfig,
    adapters_off,
    add_rl_lora,
    from_flow,
    patchify,
    pretrain,
    to_flow,
    unpatchify,
    velocity_fn,
)


def randomised(editor: Editor, seed: int = 0, std: float = 0.05) -> Editor:
    """Perturb every parameter, so the zero gates, modulations and head carry signal (as after training)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in editor.parameters():
            p.add_(std * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return editor


def inputs(b: int = 4, seed: int = 0, dtype: torch.dtype = torch.float32):
    """Random (x_t, t, source, instruction) in flow space."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(b, 3, 16, 16, generator=g, dtype=dtype)
    t = torch.rand(b, generator=g, dtype=dtype)
    source = 2 * torch.rand(b, 3, 16, 16, generator=g, dtype=dtype) - 1
    instruction = torch.rand(b, 36, generator=g, dtype=dtype)
    return x, t, source, instruction


def fake_batches(size: int, seed: int, step: int) -> SimpleNamespace:
    """One fixed batch of EditWorld-like pairs (the target recolours the top-left quadrant)."""
    g = torch.Generator().manual_seed(seed)
    source = torch.rand(size, 3, 16, 16, generator=g)
    instruction = torch.rand(size, 36, generator=g)
    target = source.clone()
    target[:, :, :8, :8] = instruction[:, :3, None, None]
    return SimpleNamespace(source=source, target=target, instruction=instruction)


@pytest.fixture(scope="module")
def editor() -> Editor:
    return randomised(Editor(seed=1), seed=2)


# ------------------------------------------------------------------------------------------- sizes


def test_default_sizes_and_parameter_count() -> None:
    c = EditorConfig()
    assert (c.image_size, c.channels, c.patch, c.width, c.depth, c.heads) == (16, 3, 2, 48, 3, 4)
    assert (c.cond_dim, c.instruction_dim, c.mlp_ratio, c.grid, c.num_tokens) == (48, 36, 2.0, 8, 64)
    e = Editor()
    assert e.parameter_count() == 117_804
    assert sum(p.numel() for p in e.transformer.blocks.parameters()) == 3 * 32_880
    assert Editor(EditorConfig(mlp_ratio=4.0)).parameter_count() == 145_740


def test_zero_velocity_at_initialisation_and_shape() -> None:
    x, t, source, instruction = inputs()
    v = Editor(seed=3)(x, t, source, instruction)
    assert v.shape == (4, 3, 16, 16) and v.dtype == torch.float32
    assert torch.count_nonzero(v) == 0


def test_seeded_without_touching_the_global_rng() -> None:
    state = torch.get_rng_state()
    a, b, c = Editor(seed=5), Editor(seed=5), Editor(seed=6)
    assert torch.equal(state, torch.get_rng_state())
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(pa, pb)
    assert not torch.equal(a.patch_embed.conv.weight, c.patch_embed.conv.weight)


def test_float64_and_time_forms(editor: Editor) -> None:
    x, t, source, instruction = inputs()
    v = editor(x, torch.full((4,), 0.3), source, instruction)
    assert torch.equal(v, editor(x, 0.3, source, instruction))
    assert torch.equal(v, editor(x, torch.tensor(0.3), source, instruction))
    double = randomised(Editor(seed=1).double(), seed=2)
    xd, td, sd, id_ = inputs(dtype=torch.float64)
    vd = double(xd, td, sd, id_)
    assert vd.dtype == torch.float64 and torch.isfinite(vd).all()


# ------------------------------------------------------------------------------------------ patches


def test_patchify_is_row_major_and_unpatchify_inverts_it() -> None:
    images = torch.arange(2 * 3 * 16 * 16, dtype=torch.float32).reshape(2, 3, 16, 16)
    tokens = patchify(images, 2)
    assert tokens.shape == (2, 64, 12)
    row, col = divmod(11, 8)  # token 11: grid row 1, column 3
    assert torch.equal(tokens[:, 11], images[:, :, 2 * row : 2 * row + 2, 2 * col : 2 * col + 2].flatten(1))
    assert torch.equal(unpatchify(tokens, 3, 2, (16, 16)), images)


def test_head_token_p_writes_its_own_patch() -> None:
    e = Editor(seed=0)
    with torch.no_grad():
        e.head.bias.copy_(torch.arange(12, dtype=torch.float32))  # the same (C, p, p) values everywhere
    x, t, source, instruction = inputs(b=1)
    v = e(x, t, source, instruction)
    assert torch.equal(patchify(v, 2), torch.arange(12.0).expand(1, 64, 12))


def test_flow_space_helpers() -> None:
    images = torch.rand(2, 3, 16, 16, generator=torch.Generator().manual_seed(0))
    x = to_flow(images)
    assert x.min() >= -1 and x.max() <= 1
    torch.testing.assert_close(from_flow(x), images, atol=1e-7, rtol=0)
    assert torch.equal(from_flow(torch.tensor([-3.0, 3.0])), torch.tensor([0.0, 1.0]))


# ------------------------------------------------------------------------------------- conditioning


def test_conditioning_is_wired_after_training_steps() -> None:
    """From the zero start only the head moves in the first update (everything upstream sees a zero
    gradient through the zero head); after a few updates the instruction and the source both matter."""
    e = Editor(seed=0)
    x, t, source, instruction = inputs(b=8)
    target = torch.randn(8, 3, 16, 16, generator=torch.Generator().manual_seed(9))
    optimiser = torch.optim.Adam(e.parameters(), lr=1e-2)
    for _ in range(3):
        loss = (e(x, t, source, instruction) - target).square().mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    with torch.no_grad():
        v = e(x, t, source, instruction)
        other_instruction = e(x, t, source, instruction.flip(0))
        other_source = e(x, t, source.flip(0), instruction)
    assert (v - other_instruction).abs().max() > 1e-4
    assert (v - other_source).abs().max() > 1e-4


def test_velocity_fn_matches_forward_and_runs_the_sampler(editor: Editor) -> None:
    x, t, source, instruction = inputs()
    fn = velocity_fn(editor, source, instruction)
    assert torch.equal(fn(x, t), editor(x, t, source, instruction))
    out = euler_sample(fn, x, uniform_grid(3))
    assert out.shape == x.shape and torch.isfinite(out).all()


# --------------------------------------------------------------------------------------------- LoRA


def test_rl_lora_trains_only_adapters_and_starts_at_the_base(editor: Editor) -> None:
    e = randomised(Editor(seed=1), seed=2)
    x, t, source, instruction = inputs()
    with torch.no_grad():
        base = e(x, t, source, instruction)
    names = add_rl_lora(e, rank=4, alpha=8.0, seed=0)
    assert len(names) == 16
    assert sum(n.endswith("modulation") for n in names) == 4  # three blocks + the final LayerNorm
    assert all(isinstance(e.get_submodule(n), LoRALinear) for n in names)
    trainable = {id(p) for p in e.parameters() if p.requires_grad}
    assert trainable == {id(p) for p in lora_parameters(e)}
    assert e.parameter_count(trainable=True) == 11_520  # rank 4: r·(in + out) per wrapped linear
    with torch.no_grad():
        assert torch.equal(e(x, t, source, instruction), base)  # B = 0: exactly the base editor


def test_adapters_off_is_the_base_and_restores_each_state() -> None:
    e = randomised(Editor(seed=1), seed=2)
    x, t, source, instruction = inputs()
    with torch.no_grad():
        base = e(x, t, source, instruction)
        add_rl_lora(e)
        g = torch.Generator().manual_seed(4)
        for p in lora_parameters(e):
            p.add_(0.1 * torch.randn(p.shape, generator=g))
        adapted = e(x, t, source, instruction)
        assert (adapted - base).abs().max() > 1e-3
        with adapters_off(e) as same:
            assert same is e
            assert torch.equal(e(x, t, source, instruction), base)
        assert torch.equal(e(x, t, source, instruction), adapted)
        lora_modules(e)[0].disable()  # a state set before the block comes back as it was
        with adapters_off(e):
            assert not any(m.enabled for m in lora_modules(e))
        assert [m.enabled for m in lora_modules(e)] == [False] + [True] * 15


def test_lora_targets_name_the_shared_blocks_layers() -> None:
    assert RL_LORA_TARGETS == ("attn.qkv", "attn.out", "mlp.fc1", "mlp.fc2", "modulation", "final_modulation")


# -------------------------------------------------------------------------------------- pretraining


def test_pretraining_is_deterministic_per_seed() -> None:
    config = PretrainConfig(steps=3, batch=8, warmup=1, seed=3)
    a, loss_a = pretrain(config, batch_fn=fake_batches)
    b, loss_b = pretrain(config, batch_fn=fake_batches)
    assert loss_a == loss_b and len(loss_a) == 3
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(pa, pb)
    _, loss_c = pretrain(dataclasses.replace(config, seed=4), batch_fn=fake_batches)
    assert loss_c != loss_a


def test_pretraining_loss_decreases() -> None:
    config = PretrainConfig(steps=60, batch=16, warmup=5, seed=0)
    _, losses = pretrain(config, batch_fn=fake_batches)
    first, last = sum(losses[:10]) / 10, sum(losses[-10:]) / 10
    assert last < 0.8 * first


def test_pretraining_runs_on_editworld_batches() -> None:
    editor, losses = pretrain(PretrainConfig(steps=2, batch=4, warmup=0))
    assert len(losses) == 2 and all(torch.isfinite(torch.tensor(losses)))
    assert not editor.training


# ---------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"x_t": torch.zeros(4, 3, 8, 8)}, "x_t"),
        ({"x_t": torch.zeros(4, 6, 16, 16)}, "x_t"),
        ({"t": 1.5}, "t"),
        ({"t": torch.full((4,), -0.1)}, "t"),
        ({"t": torch.zeros(3)}, "t"),
        ({"t": torch.zeros(4, 1)}, "t"),
        ({"source": torch.zeros(3, 3, 16, 16)}, "source"),
        ({"instruction": torch.zeros(4, 35)}, "instruction"),
        ({"instruction": torch.zeros(3, 36)}, "instruction"),
    ],
)
def test_bad_forward_inputs_name_the_argument(editor: Editor, change: dict, name: str) -> None:
    x, t, source, instruction = inputs()
    args = {"x_t": x, "t": t, "source": source, "instruction": instruction} | change
    with pytest.raises(ValueError, match=name):
        editor(**args)


def test_wrong_types_raise_type_errors(editor: Editor) -> None:
    x, t, source, instruction = inputs()
    with pytest.raises(TypeError, match="x_t"):
        editor(x.numpy(), t, source, instruction)
    with pytest.raises(TypeError, match="t"):
        editor(x, "0.5", source, instruction)
    with pytest.raises(TypeError, match="instruction"):
        editor(x, t, source, instruction.long())
    with pytest.raises(TypeError, match="config"):
        Editor(PretrainConfig())
    with pytest.raises(TypeError, match="editor"):
        add_rl_lora(torch.nn.Linear(2, 2))
    with pytest.raises(TypeError, match="editor"):
        velocity_fn(torch.nn.Linear(2, 2), source, instruction)
    with pytest.raises(ValueError, match="instruction"):
        velocity_fn(editor, source, instruction[:, :5])
    with pytest.raises(TypeError, match="images"):
        to_flow([0.5])


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("image_size", 0),
        ("image_size", 15),
        ("channels", 0),
        ("patch", 0),
        ("width", 0),
        ("depth", 0),
        ("heads", 5),
        ("cond_dim", 0),
        ("instruction_dim", 0),
        ("mlp_ratio", 0.0),
    ],
)
def test_bad_editor_config_names_the_field(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        EditorConfig(**{field: value})


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("steps", 0),
        ("batch", 0),
        ("lr", 0.0),
        ("warmup", 6000),  # more than the steps
        ("min_lr_ratio", 1.5),
        ("grad_clip", -1.0),
        ("seed", -1),
        ("time_distribution", "beta"),
    ],
)
def test_bad_pretrain_config_names_the_field(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        PretrainConfig(**{field: value})
