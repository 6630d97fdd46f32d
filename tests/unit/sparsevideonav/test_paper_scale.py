"""The ``paper`` scale of chapter 14: its plan, the trial caps, the committed hashes it leaves alone, and the
losses that now call the module (Stage 2, the pose estimator, the action heads, the baselines) computing
exactly what they computed before."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from neurips26.scales import TRIAL_ENV
from neurips26.sparsevideonav import prepare as svn
from neurips26.sparsevideonav import train as svn_train
from neurips26.sparsevideonav.action_head import ActionHead, ActionHeadConfig, head_loss, normalise
from neurips26.sparsevideonav.codec import fit_codec
from neurips26.sparsevideonav.dataset import decision_index, episode, make_batch, sample_pairs
from neurips26.sparsevideonav.expert import demonstrations
from neurips26.sparsevideonav.former import Former, FormerConfig
from neurips26.sparsevideonav.generator import GeneratorConfig, SparseVideoGenerator, flow_loss
from neurips26.sparsevideonav.head_training import BCPolicyNet
from neurips26.sparsevideonav.pose_estimator import PoseEstimator, PoseEstimatorConfig
from neurips26.sparsevideonav.train import MAX_HISTORY, Recipe, Stage2
from neurips26.train.fit import move_batch

# The smoke hashes as committed before the paper scale (the default ones are read from the sidecars).
SMOKE_HASHES = {
    "codec": "2b61eb7cf78eb80c",
    "stage1": "f66b6c9c23ada788",
    "stage2": "a0dabcda1d258e4a",
    "student": "82f7917d53700bf2",
    "pose": "9854b0d95957c115",
    "head": "3f85c505eb161f46",
    "head-real": "c3f5f59089005f0f",
    "short-bc": "34cda2dbed0e9222",
    "long-bc": "9ba93e256f0edb9a",
    "arm-sparse": "b04cad0971efa497",
    "arm-dense": "7b30e43a4482ceca",
    "arm-cont2": "693c1a201b53f9f9",
    "arm-cont10": "2111c6401a3eb5f6",
    "arm-int1": "cb4806e55b14ec28",
    "arm-int5": "d86d43548f80849b",
    "arm-data10": "35e73eeed1675495",
    "arm-data35": "08c734bbb73badfc",
    "arm-slot": "c11808bb5a4dc51e",
}


@pytest.fixture
def no_trial(monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)


def test_the_paper_plan_grows_the_data_networks_and_budget(no_trial):
    default, paper = svn.plan("default"), svn.plan("paper")
    assert (default.train_worlds * default.per_kind, paper.train_worlds * paper.per_kind) == (600, 6500)
    assert (paper.width, paper.depth, paper.heads, paper.arm_width) == (256, 8, 8, 128)
    assert paper.former.width == paper.width and paper.former.memory_tokens == 8  # h_T fits the generator
    assert (paper.head.width, paper.pose.hidden) == (256, 512)
    assert [r.steps for r in (paper.s0, paper.s1, paper.s2, paper.s3)] == [20_000, 30_000, 20_000, 10_000]
    recipes = (paper.s0, paper.s1, paper.s2, paper.s3, paper.pose_recipe, paper.head_recipe, paper.bc)
    assert {r.batch for r in (*recipes, paper.arm)} == {svn.PAPER_BATCH}
    assert (paper.distill.trajectories, paper.head_decisions) == (8192, 32_768)
    assert paper.pose_rows == 262_144 and paper.workers == 0
    stage1 = svn.generator_config("paper")
    assert (stage1.width, stage1.heads, stage1.depth) == (256, 8, 8)
    assert svn.generator_config("paper", "arm-dense").width == 128
    assert svn.demo_frames("paper") == svn.demo_frames("default") == 240
    # the validation set and the default plan are the ones the checkpoints were measured on
    assert (paper.val_worlds, paper.val_decisions) == (default.val_worlds, default.val_decisions) == (10, 128)
    assert (default.heads, default.pose_rows, default.workers) == (None, None, 1)
    assert svn.generator_config("default").heads == 4 and svn.generator_config("smoke").heads == 2


def test_default_and_smoke_hashes_are_the_committed_ones_and_paper_differs(no_trial):
    for name in svn.NAMES:
        sidecar = json.loads((svn.PACKAGE_DIR / f"{name}.json").read_text())
        assert svn.expected_hash(name, "default") == sidecar["config_hash"], name
        assert svn.expected_hash(name, "paper") != sidecar["config_hash"], name
    for name, committed in SMOKE_HASHES.items():
        assert svn.expected_hash(name, "smoke") == committed, name


def test_the_hash_leaves_out_the_added_fields_at_their_committed_values(no_trial):
    default = svn.plan("default")
    form = svn.hashed_plan(default)
    assert not {"heads", "pose_rows", "val_worlds", "val_decisions", "workers"} & set(form)
    assert "warmup" not in form["s1"]
    moved = svn.hashed_plan(replace(default, s1=replace(default.s1, warmup=0), heads=4, workers=3))
    assert moved["s1"]["warmup"] == 0 and moved["heads"] == 4 and "workers" not in moved


@pytest.mark.parametrize("scale", ["smoke", "default", "paper"])
def test_the_trial_caps_apply_at_every_scale_and_change_the_hash(scale, monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)
    plain, plain_hash = svn.plan(scale), svn.expected_hash("stage2", scale)
    monkeypatch.setenv(TRIAL_ENV, "1")
    trial = svn.plan(scale)
    assert trial == svn.trial_caps(plain)
    recipes = (
        trial.s0,
        trial.s1,
        trial.s2,
        trial.s3,
        trial.pose_recipe,
        trial.head_recipe,
        trial.bc,
        trial.arm,
    )
    assert all((r.steps, r.batch, r.warmup_steps) == (1, 2, 0) for r in recipes)
    assert (trial.train_worlds, trial.per_kind, trial.codec_worlds, trial.workers) == (3, 1, 3, 1)
    assert (trial.distill.trajectories, trial.distill.teacher_steps, trial.head_decisions) == (2, 4, 2)
    assert (trial.pose_rows, trial.val_worlds, trial.val_decisions) == (16, 1, 2)
    assert svn.demo_frames(scale) == 40
    # the networks keep the scale's sizes
    for name in ("width", "depth", "heads", "arm_width", "former", "head", "pose"):
        assert getattr(trial, name) == getattr(plain, name), name
    assert svn.expected_hash("stage2", scale) != plain_hash  # never taken for a real checkpoint


def test_the_default_warm_up_is_five_percent_of_the_steps():
    assert [Recipe(steps=n).warmup_steps for n in (1, 20, 1500)] == [1, 1, 75]
    assert Recipe(steps=10, warmup=0).warmup_steps == 0
    with pytest.raises(ValueError, match="warmup"):
        Recipe(steps=10, warmup=11)


def test_loss_noise_is_seeded_per_rank_and_rank_zero_keeps_the_seed(monkeypatch):
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(var, raising=False)
    alone = torch.rand(4, generator=svn_train._seeded(5))
    assert torch.equal(alone, torch.rand(4, generator=torch.Generator().manual_seed(5)))
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    assert torch.equal(torch.rand(4, generator=svn_train._seeded(5)), alone)
    monkeypatch.setenv("RANK", "1")
    assert not torch.equal(torch.rand(4, generator=svn_train._seeded(5)), alone)


# --------------------------------------------------------------------- the losses through the module


@pytest.fixture(scope="module")
def data():
    trajectories = demonstrations([0, 1], max_frames=80)
    codec = fit_codec([t.frames for t in trajectories])
    eps = [episode(t, codec) for t in trajectories]
    pairs = sample_pairs(decision_index(eps), 6, seed=3)
    config = GeneratorConfig(width=16, heads=2, depth=1).with_history("former")
    batch = make_batch(eps, pairs, config.offsets, max_history=MAX_HISTORY)
    return config, batch, codec, pairs


def _grads(model: torch.nn.Module) -> list[torch.Tensor]:
    return [p.grad.clone() for p in model.parameters() if p.grad is not None]


def _same_loss_and_grads(model, old, new) -> None:
    """``old(model)`` and ``new(model)`` give the same loss and the same gradients, bit for bit."""
    model.zero_grad()
    a = old(model)
    a.backward()
    ga = _grads(model)
    model.zero_grad()
    b = new(model)
    b.backward()
    gb = _grads(model)
    assert torch.equal(a, b)
    assert len(ga) == len(gb) > 0 and all(torch.equal(x, y) for x, y in zip(ga, gb, strict=True))


def test_the_stage2_loss_through_its_forward_equals_the_former_then_generator(data):
    config, b, _, _ = data
    torch.manual_seed(0)
    model = Stage2(SparseVideoGenerator(config), Former(FormerConfig(width=16, heads=2)))
    torch.nn.init.normal_(model.generator.blocks[0].memory.out.weight, std=0.1)  # let h_T matter

    def old(m):
        memory = m.memory(b.history, b.history_mask, b.words)
        return flow_loss(
            m.generator, b.clip, b.words, generator=torch.Generator().manual_seed(1), memory=memory
        )

    def new(m):
        g = torch.Generator().manual_seed(1)
        return flow_loss(m, b.clip, b.words, generator=g, history=b.history, history_mask=b.history_mask)

    _same_loss_and_grads(model, old, new)
    with pytest.raises(ValueError, match="history"):
        model(b.clip, torch.rand(len(b.clip)), b.words)


def test_the_pose_loss_through_its_forward_equals_the_normalised_output():
    torch.manual_seed(0)
    model = PoseEstimator(PoseEstimatorConfig(hidden=8, layers=1))
    g = torch.Generator().manual_seed(2)
    a, c, target = (
        torch.rand(5, 16, 32, 3, generator=g),
        torch.rand(5, 16, 32, 3, generator=g),
        torch.rand(5, 3),
    )
    _same_loss_and_grads(
        model,
        lambda m: F.mse_loss(m.normalised(a, c), target),
        lambda m: F.mse_loss(m(a, c, normalised=True), target),
    )
    assert torch.equal(model(a, c), model.normalised(a, c) * torch.tensor([0.25, 0.25, 22.5]))


def _reference_head_loss(model, actions, stop, context, words, *, generator, memory=None):
    """The Stage-4 loss as written before it went through the module's forward (encode, velocity,
    stop_from)."""
    encoded = model.encode(context, words, memory)
    dtype, device = encoded.keys.dtype, encoded.keys.device
    x0 = normalise(actions.to(device=device, dtype=dtype))
    t = torch.rand(actions.shape[0], generator=generator, dtype=dtype).to(device)
    eps = torch.randn(x0.shape, generator=generator, dtype=dtype).to(device)
    x_t = (1 - t[:, None, None]) * x0 + t[:, None, None] * eps
    flow = F.mse_loss(model.velocity(x_t, t, encoded), eps - x0)
    logit = model.stop_from(encoded)
    bce = F.binary_cross_entropy_with_logits(logit, stop.to(dtype), pos_weight=logit.new_tensor(5.0))
    return flow + bce


def test_the_head_loss_through_the_forward_equals_encode_velocity_stop(data):
    config, b, _, _ = data
    torch.manual_seed(0)
    head = ActionHead(ActionHeadConfig(width=16, heads=2, context_layers=1, dit_layers=1, context_slots=10))
    stop = torch.tensor([0.0, 1.0, 0.0, 0.0, 1.0, 0.0])

    def old(m):
        g = torch.Generator().manual_seed(4)
        return _reference_head_loss(m, b.actions.float(), stop, b.clip, b.words, generator=g)

    def new(m):
        return head_loss(
            m, b.actions.float(), stop, b.clip, b.words, generator=torch.Generator().manual_seed(4)
        )

    _same_loss_and_grads(head, old, new)
    with pytest.raises(TypeError, match="ActionHead"):
        head_loss(torch.nn.Linear(2, 2), b.actions, stop, b.clip, b.words, generator=torch.Generator())


def test_the_baseline_loss_through_its_forward_equals_the_frozen_former_then_head(data):
    _, b, _, _ = data
    torch.manual_seed(0)
    former = Former(FormerConfig(width=16, heads=2)).eval().requires_grad_(False)
    config = ActionHeadConfig(width=16, heads=2, context_layers=1, dit_layers=1, context_slots=2)
    net = BCPolicyNet(former, ActionHead(replace(config, memory_tokens=former.config.memory_tokens)))
    context = b.clip[:, :2]

    def old(m):
        with torch.no_grad():
            memory = m.former(b.history, b.history_mask, b.words)
        g = torch.Generator().manual_seed(6)
        return head_loss(m.head, b.actions, b.stop, context, b.words, generator=g, memory=memory)

    def new(m):
        g = torch.Generator().manual_seed(6)
        return head_loss(
            m,
            b.actions,
            b.stop,
            context,
            b.words,
            generator=g,
            history=b.history,
            history_mask=b.history_mask,
        )

    _same_loss_and_grads(net, old, new)
    assert all(p.grad is None for p in net.former.parameters())  # the Former stays frozen


def test_move_batch_moves_a_batchs_tensors_and_keeps_its_numpy_fields(data):
    _, b, _, _ = data
    moved = move_batch(b, torch.device("meta"))
    assert moved.clip.device.type == "meta" and moved.history_mask.device.type == "meta"
    assert moved.episode is b.episode and isinstance(moved.decision, np.ndarray)


@pytest.mark.slow
def test_demonstrations_built_in_processes_are_the_serial_ones(data):
    _, _, codec, _ = data
    serial = svn._demonstrations([0, 1, 2], 2, False, 40, 1, codec)
    spread = svn._demonstrations([0, 1, 2], 2, False, 40, 2, codec)
    assert len(serial) == len(spread) == 12
    for a, c in zip(serial, spread, strict=True):
        assert (a.world, a.kind, a.last) == (c.world, c.kind, c.last)
        assert np.array_equal(a.latents, c.latents) and np.array_equal(a.actions, c.actions)
