"""The action head: shapes (horizon 8 and 80, memory tokens), a zero velocity at initialisation, the sampler
recovering x₀ with the exact single-point velocity, normalisation and clipping, determinism, bad inputs
naming the argument, and a tiny overfit in which the loss falls and the sampled actions reach the targets."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26.sparsevideonav.action_head import (
    ACTION_SCALE,
    ActionHead,
    ActionHeadConfig,
    clip_to_world,
    denormalise,
    head_loss,
    normalise,
    sample_actions,
)
from neurips26.sparsevideonav.instructions import encode
from neurips26.train import fit

SMALL = {"width": 16, "heads": 2, "context_layers": 1, "dit_layers": 1}


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _words(batch: int) -> torch.Tensor:
    a = encode(("find", "the", "red", "object"))
    b = encode(("go", "straight", ",", "turn", "left", ",", "stop", "at", "the", "blue", "object"))
    return torch.as_tensor(np.stack([a, b] * (batch // 2) + [a] * (batch % 2)))


def _context(config: ActionHeadConfig, batch: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(batch, config.context_slots, 2, 16, generator=torch.Generator().manual_seed(seed))


def _perturbed(model: torch.nn.Module) -> torch.nn.Module:
    g = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=g))
    return model


@pytest.mark.parametrize(
    "fields",
    [{}, {"horizon": 80}, {"memory_tokens": 8}, {"context_slots": 3, "slot_times": (0.0, 1.0, 5.0)}],
)
def test_shapes(fields):
    torch.manual_seed(0)
    cfg = ActionHeadConfig(**SMALL, **fields)
    model = ActionHead(cfg)
    b = 3
    memory = torch.randn(b, cfg.memory_tokens, cfg.width) if cfg.memory_tokens else None
    ctx, words = _context(cfg, b), _words(b)
    v = model(torch.randn(b, cfg.horizon, 3), torch.rand(b), ctx, words, memory=memory)
    assert v.shape == (b, cfg.horizon, 3)
    assert model.stop_logit(ctx, words, memory=memory).shape == (b,)
    actions, stop = sample_actions(
        model, ctx, words, memory=memory, generator=torch.Generator().manual_seed(0)
    )
    assert actions.shape == (b, cfg.horizon, 3) and stop.shape == (b,)
    assert ((stop > 0) & (stop < 1)).all()
    loss = head_loss(
        model, actions, torch.zeros(b), ctx, words, memory=memory, generator=torch.Generator().manual_seed(1)
    )
    assert loss.shape == () and torch.isfinite(loss)


def test_velocity_is_exactly_zero_at_initialisation():
    torch.manual_seed(0)
    model = ActionHead(ActionHeadConfig())  # the default (paper-shaped) size
    ctx, words = _context(model.config, 2), _words(2)
    v = model(torch.randn(2, 8, 3), torch.rand(2), ctx, words)
    assert torch.equal(v, torch.zeros_like(v))
    assert not torch.equal(model.stop_logit(ctx, words), torch.zeros(2))  # the stop head is not zeroed


def test_memory_tokens_reach_the_velocity():
    torch.manual_seed(0)
    cfg = ActionHeadConfig(**SMALL, memory_tokens=4)
    model = _perturbed(ActionHead(cfg))
    ctx, words, x, t = _context(cfg, 2), _words(2), torch.randn(2, 8, 3), torch.rand(2)
    m = torch.randn(2, 4, cfg.width)
    assert not torch.allclose(model(x, t, ctx, words, memory=m), model(x, t, ctx, words, memory=m + 1))


def test_the_instruction_padding_is_inert():
    """Extra all-padding word columns change nothing (dropped by the word encoder, hidden by the key mask)."""
    torch.manual_seed(0)
    cfg = ActionHeadConfig(**SMALL)
    model = _perturbed(ActionHead(cfg))
    ctx, x, t = _context(cfg, 2), torch.randn(2, 8, 3), torch.rand(2)
    words = _words(2)
    short = words[:, :11]
    assert torch.allclose(model(x, t, ctx, words), model(x, t, ctx, short), atol=1e-6)


def test_normalise_round_trip_and_world_clipping():
    a = torch.tensor([[0.2, -0.1, 22.5], [0.0, 0.0, -11.25]], dtype=torch.float64)
    assert torch.allclose(normalise(a)[0], torch.tensor([0.8, -0.4, 1.0], dtype=torch.float64), atol=1e-15)
    assert torch.allclose(denormalise(normalise(a)), a, atol=1e-15)
    wild = torch.tensor([[0.3, 0.4, 40.0], [0.1, 0.1, -30.0]], dtype=torch.float64)
    clipped = clip_to_world(wild)
    # the planar move is scaled to norm 0.25 along its own direction (as NavWorld.step does), yaw clipped
    assert torch.allclose(clipped[0], torch.tensor([0.15, 0.2, 22.5], dtype=torch.float64), atol=1e-12)
    assert torch.allclose(clipped[1], torch.tensor([0.1, 0.1, -22.5], dtype=torch.float64), atol=1e-12)
    assert torch.equal(clip_to_world(a), a)  # inside the limits: untouched
    assert ACTION_SCALE == (0.25, 0.25, 22.5)


@pytest.mark.parametrize("steps", [1, 8])
def test_one_euler_step_with_the_exact_velocity_recovers_x0(steps, monkeypatch):
    """For a single data point the flow velocity is u = (z − x₀)/t, constant along the path: every Euler
    grid lands on x₀, so sample_actions returns denormalise(x₀)."""
    torch.manual_seed(0)
    cfg = ActionHeadConfig(**SMALL)
    model = ActionHead(cfg)
    target = torch.tensor([[0.2, 0.05, -10.0], [0.0, -0.1, 22.0]] * 4)[None].repeat(2, 1, 1)  # (2, 8, 3)
    x0 = normalise(target)

    def exact(z, t, encoded):
        return (z - x0) / t[:, None, None]

    monkeypatch.setattr(model, "velocity", exact)
    actions, _ = sample_actions(
        model, _context(cfg, 2), _words(2), steps=steps, generator=torch.Generator().manual_seed(3)
    )
    assert torch.allclose(actions, target, atol=1e-5)


def test_sampling_is_deterministic_in_the_generator():
    torch.manual_seed(0)
    cfg = ActionHeadConfig(**SMALL)
    model = _perturbed(ActionHead(cfg))
    ctx, words = _context(cfg, 2), _words(2)
    a1, s1 = sample_actions(model, ctx, words, generator=torch.Generator().manual_seed(7))
    a2, s2 = sample_actions(model, ctx, words, generator=torch.Generator().manual_seed(7))
    a3, _ = sample_actions(model, ctx, words, generator=torch.Generator().manual_seed(8))
    assert torch.equal(a1, a2) and torch.equal(s1, s2) and not torch.equal(a1, a3)
    l1 = head_loss(model, a1, s1.round(), ctx, words, generator=torch.Generator().manual_seed(1))
    l2 = head_loss(model, a1, s1.round(), ctx, words, generator=torch.Generator().manual_seed(1))
    assert torch.equal(l1, l2)


def test_pos_weight_scales_the_positive_term():
    """With the velocity exactly zero at init the flow term is the same for both, so the losses differ by
    exactly the extra weight on the positive examples' BCE."""
    torch.manual_seed(0)
    cfg = ActionHeadConfig(**SMALL)
    model = ActionHead(cfg)
    ctx, words, acts = _context(cfg, 2), _words(2), torch.zeros(2, 8, 3)
    stop = torch.tensor([1.0, 0.0])

    def loss(w):
        return head_loss(
            model, acts, stop, ctx, words, generator=torch.Generator().manual_seed(1), pos_weight=w
        )

    logit = model.stop_logit(ctx, words)
    expected = torch.nn.functional.softplus(-logit[0]) / 2  # (3 − 1) · (−log σ(ℓ₀)) / B with B = 2
    assert torch.allclose(loss(3.0) - loss(1.0), 2 * expected, atol=1e-6)


def test_bad_inputs_name_the_argument():
    torch.manual_seed(0)
    cfg = ActionHeadConfig(**SMALL)
    model = ActionHead(cfg)
    ctx, words, gen = _context(cfg, 2), _words(2), torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="width"):
        ActionHeadConfig(width=30, heads=4)
    with pytest.raises(ValueError, match="horizon"):
        ActionHeadConfig(horizon=0)
    with pytest.raises(ValueError, match="slot_times"):
        ActionHeadConfig(context_slots=3, slot_times=(0.0, 1.0))
    with pytest.raises(TypeError, match="config"):
        ActionHead({"width": 16})
    with pytest.raises(ValueError, match="context"):
        model(torch.zeros(2, 8, 3), torch.rand(2), ctx[:, :9], words)
    with pytest.raises(ValueError, match="words"):
        model(torch.zeros(2, 8, 3), torch.rand(2), ctx, words[:1])
    with pytest.raises(ValueError, match="actions_t"):
        model(torch.zeros(2, 7, 3), torch.rand(2), ctx, words)
    with pytest.raises(ValueError, match="t must"):
        model(torch.zeros(2, 8, 3), torch.rand(3), ctx, words)
    with pytest.raises(ValueError, match="memory"):
        model(torch.zeros(2, 8, 3), torch.rand(2), ctx, words, memory=torch.zeros(2, 8, 16))
    with pytest.raises(ValueError, match="memory"):
        ActionHead(ActionHeadConfig(**SMALL, memory_tokens=8)).stop_logit(ctx, words)
    with pytest.raises(ValueError, match="batch_actions"):
        head_loss(model, torch.zeros(2, 80, 3), torch.zeros(2), ctx, words, generator=gen)
    with pytest.raises(ValueError, match="stop"):
        head_loss(model, torch.zeros(2, 8, 3), torch.zeros(3), ctx, words, generator=gen)
    with pytest.raises(ValueError, match="stop_weight"):
        head_loss(model, torch.zeros(2, 8, 3), torch.zeros(2), ctx, words, generator=gen, stop_weight=-1.0)
    with pytest.raises(TypeError, match="generator"):
        sample_actions(model, ctx, words, generator=0)
    with pytest.raises(ValueError, match="steps"):
        sample_actions(model, ctx, words, generator=gen, steps=0)
    with pytest.raises(TypeError, match="model"):
        sample_actions(torch.nn.Linear(2, 2), ctx, words, generator=gen)


def test_tiny_overfit_loss_falls_and_sampled_actions_reach_the_targets():
    """16 fixed decisions: the loss falls > 5x in 200 steps and the sampler, integrating the learned
    velocity, lands within 0.3 ACTION_SCALE of the training targets on average (loss and sampler agree)."""
    torch.manual_seed(0)
    cfg = ActionHeadConfig(width=48, heads=4, context_layers=0, dit_layers=2, context_slots=2)
    model = ActionHead(cfg)
    g = torch.Generator().manual_seed(0)
    b = 16
    ctx, words = _context(cfg, b), _words(b)
    targets = clip_to_world(denormalise(2 * torch.rand(b, cfg.horizon, 3, generator=g) - 1))
    stop = torch.zeros(b)
    stop[:2] = 1.0
    gen = torch.Generator().manual_seed(1)
    history = fit(
        model,
        lambda m, _batch: head_loss(m, targets, stop, ctx, words, generator=gen),
        lambda _step: None,
        steps=200,
        seed=0,
        lr=1e-2,
        progress=False,
    )
    assert np.mean(history.loss[:10]) > 5 * np.mean(history.loss[-20:])
    actions, p = sample_actions(model, ctx, words, generator=torch.Generator().manual_seed(3))
    assert (normalise(actions) - normalise(targets)).abs().mean() < 0.3
    assert (p[:2] > 0.5).all() and (p[2:] < 0.5).all()
