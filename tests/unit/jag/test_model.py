"""The dual-branch DiT: sizes, adaLN-Zero start, causality and window, cache = windowed forward, teacher,
RGB-only and memory switches, joint attention, bad input."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from neurips26.jag.model import JAGConfig, JAGModel, block_causal_mask

CONFIG = JAGConfig()


def randomised(model: JAGModel, seed: int = 0, std: float = 0.1) -> JAGModel:
    """Perturb every parameter, so the zero-initialised gates and outputs carry signal (velocities of
    order 1, as after training)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(std * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return model


def clip(config: JAGConfig, b: int, t: int, seed: int = 0, dtype: torch.dtype = torch.float32):
    """Random (app, geo, t, plucker) of a clip with every channel the config expects."""
    g = torch.Generator().manual_seed(seed)
    h, w = config.image_size
    app = torch.randn(b, t, config.in_channels("appearance"), h, w, generator=g, dtype=dtype)
    geo = torch.randn(b, t, config.in_channels("geometry"), h, w, generator=g, dtype=dtype)
    levels = torch.rand(b, t, generator=g, dtype=dtype)
    plucker = torch.randn(b, t, config.num_patches, 6, generator=g, dtype=dtype)
    return app, (geo if config.geometry else None), levels, plucker


@pytest.fixture(scope="module")
def model() -> JAGModel:
    return randomised(JAGModel(seed=1).double(), seed=2)


def test_default_size_is_the_chapters() -> None:
    m = JAGModel()
    assert CONFIG.image_size == (16, 16) and CONFIG.num_patches == 16 and CONFIG.tokens_per_frame == 32
    assert (CONFIG.width, CONFIG.depth, CONFIG.heads, CONFIG.window) == (48, 3, 4, 4)
    assert (CONFIG.in_channels("appearance"), CONFIG.in_channels("geometry")) == (7, 3)
    assert m.parameter_count() == 280_048
    assert m.parameter_bytes() == 560_096  # float16
    blocks = sum(p.numel() for p in m.blocks.parameters())
    assert blocks == 253_152  # 3 blocks × 2 branches × (QKV, out, MLP, adaLN)


def test_seeded_and_deterministic() -> None:
    a, b, c = JAGModel(seed=3), JAGModel(seed=3), JAGModel(seed=4)
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(pa, pb)
    assert not torch.equal(
        a.blocks[0].branches["appearance"].qkv.weight, c.blocks[0].branches["appearance"].qkv.weight
    )


def test_adaln_zero_starts_at_zero_velocity() -> None:
    m = JAGModel(seed=0)
    app, geo, t, pl = clip(CONFIG, 2, 3)
    v_app, v_geo = m(app, geo, t, pl)
    assert v_app.shape == (2, 3, 3, 16, 16) and v_geo.shape == (2, 3, 1, 16, 16)
    assert torch.count_nonzero(v_app) == 0 and torch.count_nonzero(v_geo) == 0


def test_shapes_dtype_and_finite(model: JAGModel) -> None:
    app, geo, t, pl = clip(CONFIG, 2, 5, dtype=torch.float64)
    v_app, v_geo = model(app, geo, t, pl)
    assert v_app.shape == (2, 5, 3, 16, 16) and v_geo.shape == (2, 5, 1, 16, 16)
    assert v_app.dtype == torch.float64 and torch.isfinite(v_app).all() and torch.isfinite(v_geo).all()


def test_mask_is_block_causal_over_the_window() -> None:
    mask = block_causal_mask(5, 2, 3)
    frame_mask = mask[::2, ::2]  # one token per frame
    expected = torch.tensor(
        [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [0, 1, 1, 1, 0], [0, 0, 1, 1, 1]],
        dtype=torch.bool,
    )
    assert torch.equal(frame_mask, expected)
    assert torch.equal(mask, expected.repeat_interleave(2, 0).repeat_interleave(2, 1))  # full within a frame
    assert torch.equal(
        block_causal_mask(4, 3, None),
        torch.ones(4, 4, dtype=torch.bool).tril().repeat_interleave(3, 0).repeat_interleave(3, 1),
    )
    assert block_causal_mask(3, 2, 1, causal=False).all()


def test_later_frames_leave_earlier_outputs_unchanged(model: JAGModel) -> None:
    app, geo, t, pl = clip(CONFIG, 2, 8, dtype=torch.float64)
    v_app, v_geo = model(app, geo, t, pl)
    k = 4
    app2, geo2, t2, pl2 = (x.clone() for x in (app, geo, t, pl))
    g = torch.Generator().manual_seed(9)
    for x in (app2, geo2, pl2):
        x[:, k + 1 :] = torch.randn(x[:, k + 1 :].shape, generator=g, dtype=x.dtype)
    t2[:, k + 1 :] = torch.rand(t2[:, k + 1 :].shape, generator=g, dtype=t2.dtype)
    w_app, w_geo = model(app2, geo2, t2, pl2)
    torch.testing.assert_close(w_app[:, : k + 1], v_app[:, : k + 1], atol=1e-12, rtol=0)
    torch.testing.assert_close(w_geo[:, : k + 1], v_geo[:, : k + 1], atol=1e-12, rtol=0)
    assert (w_app[:, k + 1 :] - v_app[:, k + 1 :]).abs().amax() > 1e-3


def test_receptive_field_is_depth_times_window_minus_one(model: JAGModel) -> None:
    """With W = 4 in each of 3 blocks, frame k sees frames k − 9 … k: frame 0 reaches frame 9, not 10."""
    app, geo, t, pl = clip(CONFIG, 1, 12, dtype=torch.float64)
    v_app, _ = model(app, geo, t, pl)
    app2 = app.clone()
    app2[:, 0] += 1.0
    w_app, _ = model(app2, geo, t, pl)
    change = (w_app - v_app).abs().flatten(2).amax(-1)[0]
    assert (change[:10] > 1e-8).all()
    assert (change[10:] == 0).all()


def _cached_rollout(model: JAGModel, app, geo, pl):
    """Step each clean frame at level 0 against the cache, then write it; returns (v_app, v_geo, lengths)."""
    cache = model.make_cache()
    outs_app, outs_geo, lengths = [], [], []
    zero = torch.zeros(app.shape[0], dtype=app.dtype)
    for k in range(app.shape[1]):
        g_k = None if geo is None else geo[:, k]
        a, g = model.step(app[:, k], g_k, zero, pl[:, k], cache)
        outs_app.append(a)
        outs_geo.append(g)
        model.write(cache, app[:, k], g_k, pl[:, k])
        lengths.append(model.cached_frames(cache))
    v_geo = None if geo is None else torch.stack(outs_geo, 1)
    return torch.stack(outs_app, 1), v_geo, lengths


def test_cached_inference_equals_windowed_full_forward() -> None:
    m = randomised(JAGModel(seed=5), seed=6)  # float32, as generation runs
    app, geo, _, pl = clip(CONFIG, 2, 10, seed=1)
    v_app, v_geo = m(app, geo, torch.zeros(2, 10), pl)
    c_app, c_geo, lengths = _cached_rollout(m, app, geo, pl)
    torch.testing.assert_close(c_app, v_app, atol=1e-5, rtol=0)
    torch.testing.assert_close(c_geo, v_geo, atol=1e-5, rtol=0)
    assert lengths == [1, 2, 3, 3, 3, 3, 3, 3, 3, 3]  # W − 1 frames kept


def test_noisy_step_equals_forward_with_clean_context(model: JAGModel) -> None:
    """Denoising frame k at level t_k against the cache = the full forward on (clean ≤ k−1 at 0, noisy k)."""
    app, geo, t, pl = clip(CONFIG, 2, 7, seed=2, dtype=torch.float64)
    cache = model.make_cache()
    for k in range(7):
        levels = torch.zeros(2, k + 1, dtype=torch.float64)
        levels[:, k] = t[:, k]
        v_app, v_geo = model(app[:, : k + 1], geo[:, : k + 1], levels, pl[:, : k + 1])
        s_app, s_geo = model.step(app[:, k], geo[:, k], t[:, k], pl[:, k], cache)
        torch.testing.assert_close(s_app, v_app[:, k], atol=1e-10, rtol=0)
        torch.testing.assert_close(s_geo, v_geo[:, k], atol=1e-10, rtol=0)
        model.write(cache, app[:, k], geo[:, k], pl[:, k])


def test_step_does_not_modify_the_cache_and_write_is_detached() -> None:
    m = randomised(JAGModel(seed=0), seed=1)
    app, geo, t, pl = clip(CONFIG, 2, 3)
    cache = m.make_cache()
    for k in range(2):
        m.write(cache, app[:, k], geo[:, k], pl[:, k])
    keys = [k.clone() for k in cache.keys]
    ids = [id(k) for k in cache.keys]
    a1, g1 = m.step(app[:, 2], geo[:, 2], t[:, 2], pl[:, 2], cache)
    for _ in range(3):  # several denoising steps of one frame, as the 4-step generator runs
        m.step(app[:, 2] + 0.5, geo[:, 2], t[:, 2] * 0.5, pl[:, 2], cache)
    a2, g2 = m.step(app[:, 2], geo[:, 2], t[:, 2], pl[:, 2], cache)
    assert [id(k) for k in cache.keys] == ids and m.cached_frames(cache) == 2
    assert all(torch.equal(a, b) for a, b in zip(keys, cache.keys, strict=True))
    assert torch.equal(a1, a2) and torch.equal(g1, g2)
    assert not any(k.requires_grad for k in cache.keys)
    (a1.square().sum() + g1.square().sum()).backward()  # gradients reach the weights through the step
    assert m.blocks[0].branches["geometry"].qkv.weight.grad.abs().sum() > 0


def test_full_history_window_none() -> None:
    m = randomised(JAGModel(JAGConfig(window=None), seed=2), seed=3).double()
    app, geo, _, pl = clip(m.config, 1, 7, seed=4, dtype=torch.float64)
    v_app, v_geo = m(app, geo, torch.zeros(1, 7, dtype=torch.float64), pl)
    c_app, c_geo, lengths = _cached_rollout(m, app, geo, pl)
    torch.testing.assert_close(c_app, v_app, atol=1e-10, rtol=0)
    torch.testing.assert_close(c_geo, v_geo, atol=1e-10, rtol=0)
    assert lengths == list(range(1, 8))
    app2 = app.clone()
    app2[:, 0] += 1.0  # full history: frame 0 still reaches the last frame
    assert (
        m(app2, geo, torch.zeros(1, 7, dtype=torch.float64), pl)[0][:, -1] - v_app[:, -1]
    ).abs().amax() > 1e-8


def test_teacher_is_bidirectional_and_differs(model: JAGModel) -> None:
    teacher = JAGModel(dataclasses.replace(CONFIG, causal=False)).double()
    teacher.load_state_dict(model.state_dict())  # same weights, other mask
    app, geo, t, pl = clip(CONFIG, 2, 6, dtype=torch.float64)
    v_app, _ = model(app, geo, t, pl)
    u_app, _ = teacher(app, geo, t, pl)
    assert (u_app[:, 0] - v_app[:, 0]).abs().amax() > 1e-3  # frame 0 now sees the future
    app2 = app.clone()
    app2[:, -1] += 1.0
    assert (teacher(app2, geo, t, pl)[0][:, 0] - u_app[:, 0]).abs().amax() > 1e-8
    with pytest.raises(ValueError, match="causal"):
        teacher.step(app[:, 0], geo[:, 0], t[:, 0], pl[:, 0], teacher.make_cache())


def test_joint_attention_couples_the_branches(model: JAGModel) -> None:
    app, geo, t, pl = clip(CONFIG, 1, 3, dtype=torch.float64)
    v_app, v_geo = model(app, geo, t, pl)
    geo2 = geo.clone()
    geo2[:, :, 0] += 1.0  # the noisy depth only
    w_app, _ = model(app, geo2, t, pl)
    assert (w_app - v_app).abs().amax() > 1e-6  # appearance reads geometry through one softmax


def test_rgb_only_and_no_memory() -> None:
    config = JAGConfig(geometry=False, memory=False)
    m = randomised(JAGModel(config, seed=0), seed=1)
    assert config.branches == ("appearance",) and config.tokens_per_frame == 16
    assert m.parameter_count() < JAGModel().parameter_count() / 1.8
    app, _, t, pl = clip(config, 2, 6)
    v_app, v_geo = m(app, None, t, pl)
    assert v_app.shape == (2, 6, 3, 16, 16) and v_geo is None
    rgb_only, _ = m(app[:, :, :3], None, t, pl)  # state channels alone: memory channels become zeros
    assert torch.equal(rgb_only, v_app)
    app2 = app.clone()
    app2[:, :, 3:] = 5.0  # whatever sits in the memory channels is ignored
    assert torch.equal(m(app2, None, t, pl)[0], v_app)
    c_app, c_geo, _ = _cached_rollout(m, app, None, pl)
    v0, _ = m(app, None, torch.zeros(2, 6), pl)
    torch.testing.assert_close(c_app, v0, atol=1e-5, rtol=0)
    assert c_geo is None


def test_memory_channels_matter_with_memory(model: JAGModel) -> None:
    app, geo, t, pl = clip(CONFIG, 1, 2, dtype=torch.float64)
    v_app, _ = model(app, geo, t, pl)
    app2 = app.clone()
    app2[:, :, 3:6] += 1.0
    assert (model(app2, geo, t, pl)[0] - v_app).abs().amax() > 1e-6
    with pytest.raises(ValueError, match="app"):
        model(app[:, :, :3], geo, t, pl)  # with memory, all 7 channels are required


def test_bad_config() -> None:
    with pytest.raises(ValueError, match="patch_size"):
        JAGConfig(patch_size=5)
    with pytest.raises(ValueError, match="window"):
        JAGConfig(window=0)
    with pytest.raises(ValueError, match="heads"):
        JAGConfig(heads=5)
    with pytest.raises(TypeError, match="causal"):
        JAGConfig(causal=1)
    with pytest.raises(ValueError, match="image_size"):
        JAGConfig(image_size=(16, 16, 3))
    with pytest.raises(TypeError, match="config"):
        JAGModel({"width": 48})
    with pytest.raises(ValueError, match="seed"):
        JAGModel(seed=-1)


def test_bad_inputs(model: JAGModel) -> None:
    app, geo, t, pl = clip(CONFIG, 2, 3, dtype=torch.float64)
    with pytest.raises(ValueError, match="geo"):
        model(app, None, t, pl)
    with pytest.raises(ValueError, match="geo"):
        model(app, geo[:, :2], t, pl)
    with pytest.raises(ValueError, match="app"):
        model(app[..., :8], geo, t, pl)
    with pytest.raises(ValueError, match="t must lie"):
        model(app, geo, t + 1.5, pl)
    with pytest.raises(ValueError, match="t must have shape"):
        model(app, geo, t[:, :2], pl)
    with pytest.raises(ValueError, match="plucker"):
        model(app, geo, t, pl[..., :3])
    with pytest.raises(TypeError, match="app"):
        model(app.long(), geo, t, pl)
    rgb = JAGModel(JAGConfig(geometry=False))
    with pytest.raises(ValueError, match="geo must be None"):
        rgb(app.float(), geo.float(), t.float(), pl.float())
    cache = model.make_cache()
    with pytest.raises(TypeError, match="cache"):
        model.step(app[:, 0], geo[:, 0], t[:, 0], pl[:, 0], {})
    with pytest.raises(ValueError, match="cache"):
        model.step(app[:, 0], geo[:, 0], t[:, 0], pl[:, 0], JAGModel(JAGConfig(depth=2)).make_cache())
    model.write(cache, app[:, 0], geo[:, 0], pl[:, 0])
    with pytest.raises(ValueError, match="batch"):
        model.step(app[:1, 0], geo[:1, 0], t[:1, 0], pl[:1, 0], cache)
    with pytest.raises(ValueError, match="app_k"):
        model.step(app, geo[:, 0], t[:, 0], pl[:, 0], cache)
    with pytest.raises(ValueError, match="level"):
        model.write(cache, app[:, 1], geo[:, 1], pl[:, 1], level=2.0)
    assert model.cached_frames(cache) == 1  # failed calls leave the cache as it was


@pytest.mark.parametrize("window", [1, 2])
def test_short_windows_cache_equals_forward(window: int) -> None:
    m = randomised(JAGModel(JAGConfig(window=window), seed=7), seed=8).double()
    app, geo, _, pl = clip(m.config, 2, 5, seed=3, dtype=torch.float64)
    v_app, v_geo = m(app, geo, torch.zeros(2, 5, dtype=torch.float64), pl)
    c_app, c_geo, lengths = _cached_rollout(m, app, geo, pl)
    torch.testing.assert_close(c_app, v_app, atol=1e-10, rtol=0)
    torch.testing.assert_close(c_geo, v_geo, atol=1e-10, rtol=0)
    assert lengths == [min(k + 1, window - 1) for k in range(5)]


def test_pixel_skip_starts_silent_adds_few_parameters_and_keeps_the_cache_exact() -> None:
    skip_config = dataclasses.replace(CONFIG, pixel_skip=True)
    plain, skip = JAGModel(CONFIG, seed=3), JAGModel(skip_config, seed=3)
    extra = skip.parameter_count() - plain.parameter_count()
    assert extra == (7 * 3 + 3) + (3 * 1 + 1) + (48 * 3 + 3) + (48 * 1 + 1)  # two 1x1 convs, two gains
    app, geo, levels, pl = clip(CONFIG, 2, 5, seed=4)
    for a, b in zip(plain(app, geo, levels, pl), skip(app, geo, levels, pl), strict=True):
        assert torch.equal(a, b)  # zero-initialised: the same velocities as without the path
    m = randomised(JAGModel(skip_config, seed=5), seed=6)
    v_app, v_geo = m(app, geo, torch.zeros(2, 5), pl)
    c_app, c_geo, _ = _cached_rollout(m, app, geo, pl)
    torch.testing.assert_close(c_app, v_app, atol=1e-5, rtol=0)
    torch.testing.assert_close(c_geo, v_geo, atol=1e-5, rtol=0)
    with pytest.raises(TypeError, match="pixel_skip"):
        JAGConfig(pixel_skip=1)
