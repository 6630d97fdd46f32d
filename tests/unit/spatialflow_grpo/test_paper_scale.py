"""The ``paper`` scale of chapter 08: its plan, the trial caps, the fields added for it (outside the committed
hashes at their old values), a flow-matching loss that calls the module (a data-parallel wrapper included),
and the reward model on an explicit device."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest
import torch

from neurips26.checkpoint_files import committed_form
from neurips26.nn import lora_modules
from neurips26.scales import TRIAL_ENV
from neurips26.spatialflow_grpo import prepare as P
from neurips26.spatialflow_grpo.editor import Editor, EditorConfig, flow_matching_loss, pretrain, to_flow
from neurips26.spatialflow_grpo.editworld import sample_cases
from neurips26.spatialflow_grpo.experiments import EvalConfig
from neurips26.spatialflow_grpo.reward_model import LabelledEdits, RewardModelConfig, train_reward_model
from neurips26.spatialflow_grpo.rl_loop import RLConfig, run_rl

# The committed (default) configuration hashes: the paper plan and the trial caps must leave them alone.
DEFAULT_HASHES = {
    "base": "e4d08ef656605cd1",
    "sfreward-tiny": "86ef178056b98f43",
    "flow-s0": "dc4f440086ceaa0d",
    "flow-s1": "ecaf58e3439c90f1",
    "flow-s2": "916df1f11fd35825",
    "spatial-s0": "dbf4da7003baa10f",
    "spatial-s1": "1051d7fb26bce51a",
    "spatial-s2": "4c41e9b255087514",
    "flow-area": "02b57e0137147118",
    "spatial-shuffled": "3c1c64628c467190",
    "spatial-b": "f8e69c9230016f42",
    "spatial-area": "0bae4a735144c707",
    "flow-sfr": "525011804f07801f",
    "spatial-sfr": "6244cc8d250552de",
}
#: Stand-in weights hashes of the base and the reward model (the plans are compared, nothing is trained).
BOUND = {"base": "b" * 16, "reward_model": "r" * 16}


@pytest.fixture
def no_trial(monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)


def test_paper_plan_grows_the_editor_the_rl_runs_and_the_reward_data(no_trial):
    default, paper = P.PrepareConfig.for_scale("default"), P.PrepareConfig.for_scale("paper")
    assert (paper.pretraining, paper.rl, paper.reward_model) == (
        P.PAPER_PRETRAINING,
        P.PAPER_RL,
        P.PAPER_REWARD_MODEL,
    )
    editor = paper.pretraining.editor
    assert (editor.width, editor.depth, editor.heads, editor.cond_dim) == (192, 8, 6, 192)
    assert (editor.image_size, editor.patch) == (16, 2) and editor.num_tokens == 64  # EditWorld's grid
    assert Editor(editor).parameter_count() == 4_335_948
    p = paper.pretraining
    assert (p.steps, p.batch, p.lr, p.warmup) == (30_000, 256, 1e-3, 500)
    rl = paper.rl
    assert (rl.group_size, rl.conditions, rl.iterations, rl.updates) == (24, 8, 150, 2)
    assert (rl.sde_steps, rl.sde_window, rl.eval_steps, rl.lr) == (10, (0, 9), 40, 3e-4)
    assert (rl.lora_rank, rl.lora_alpha / rl.lora_rank) == (16, default.rl.lora_alpha / default.rl.lora_rank)
    rm = paper.reward_model
    edits = rm.n_cases * (rm.samples_per_case + rm.ode_samples + 2)  # + the target and the source
    assert (rm.steps, edits, rm.sde_steps, rm.sde_window) == (3000, 13_500, rl.sde_steps, rl.sde_window)
    # what the paper plan keeps: the RL objective's settings, the time law, the reward net's sizes
    for name in ("a", "beta", "eps", "shift", "kl_convention", "adv_std", "probe_size", "seed"):
        assert getattr(rl, name) == getattr(default.rl, name), name
    assert p.time_distribution == default.pretraining.time_distribution
    assert (rm.width, rm.features, rm.hidden) == (16, 32, 96)
    assert EvalConfig.for_scale("paper").eval_steps == rl.eval_steps == 40
    assert P.ValidationSizes.for_scale("paper") == P.ValidationSizes.for_scale("default")


def test_default_hashes_are_the_committed_ones_and_paper_differs(no_trial):
    for name in P.ARM_NAMES:
        assert P.REGISTRY.expected_hash(name, "default") == DEFAULT_HASHES[name]
        assert P.expected_hash(name, "paper", BOUND) != P.expected_hash(name, "default", BOUND)


def test_added_fields_enter_the_hash_only_away_from_their_committed_values():
    assert "lora_alpha" not in committed_form(RLConfig(), RLConfig.ADDED)
    assert "lora_alpha" in committed_form(P.PAPER_RL, RLConfig.ADDED)
    assert not {"sde_steps", "sde_window"} & set(committed_form(RewardModelConfig(), RewardModelConfig.ADDED))
    assert {"sde_steps", "sde_window"} <= set(committed_form(P.PAPER_REWARD_MODEL, RewardModelConfig.ADDED))
    # a sidecar's JSON (the window as a list) gives the config back; one from before the fields, the defaults
    restored = RewardModelConfig(**json.loads(json.dumps(asdict(P.PAPER_REWARD_MODEL))))
    assert restored == P.PAPER_REWARD_MODEL and restored.sde_window == (0, 9)
    before = {k: v for k, v in asdict(RewardModelConfig()).items() if k not in RewardModelConfig.ADDED}
    assert RewardModelConfig(**before) == RewardModelConfig()


@pytest.mark.parametrize("scale", ["smoke", "default", "paper"])
def test_trial_caps_apply_at_every_scale_and_change_the_hash(scale, monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)
    plain = P.PrepareConfig.for_scale(scale)
    plain_hashes = {name: P.expected_hash(name, scale, BOUND) for name in P.ARM_NAMES}
    monkeypatch.setenv(TRIAL_ENV, "1")
    trial = P.PrepareConfig.for_scale(scale)
    assert trial == P.trial_caps(plain)
    assert (trial.pretraining.steps, trial.pretraining.warmup, trial.pretraining.batch) == (1, 0, 4)
    assert trial.pretraining.editor == plain.pretraining.editor  # the networks keep their sizes
    rl = trial.rl
    assert (rl.iterations, rl.updates, rl.group_size, rl.conditions) == (1, 1, 2, 1)
    assert (rl.sde_steps, rl.sde_window, rl.probe_size, rl.eval_steps) == (1, (0, 1), 1, 1)
    assert (rl.lora_rank, rl.lora_alpha) == (plain.rl.lora_rank, plain.rl.lora_alpha)
    rm = trial.reward_model
    assert (rm.steps, rm.batch, rm.n_cases, rm.samples_per_case, rm.ode_samples) == (1, 8, 2, 1, 1)
    assert P.ValidationSizes.for_scale(scale) == P.ValidationSizes(base_pairs=2, arm_cases=2, reward=(4, 1))
    for name in P.ARM_NAMES:  # never taken for a real checkpoint
        assert P.expected_hash(name, scale, BOUND) != plain_hashes[name]


def test_flow_matching_loss_calls_the_module_and_takes_a_data_parallel_wrapper(tmp_path):
    editor = Editor(EditorConfig(width=16, depth=1, heads=2, cond_dim=16), seed=1)
    with torch.no_grad():  # a non-zero head, so the loss depends on the network
        editor.head.weight.normal_(generator=torch.Generator().manual_seed(2))
    batch = sample_cases(4, 3)
    generator = torch.Generator().manual_seed(4)
    noise, t = torch.randn(batch.target.shape, generator=generator), torch.rand(4, generator=generator)
    args = (to_flow(batch.source), to_flow(batch.target), batch.instruction, noise, t)
    x_t = (1 - t)[:, None, None, None] * args[1] + t[:, None, None, None] * noise
    want = (editor(x_t, t, args[0], args[2]) - (noise - args[1])).square().mean()
    calls = []
    editor.register_forward_hook(lambda module, inputs, out: calls.append(1))
    assert torch.equal(flow_matching_loss(editor, *args), want) and calls == [1]
    store = f"file://{tmp_path / 'store'}"
    torch.distributed.init_process_group("gloo", init_method=store, rank=0, world_size=1)
    try:
        got = flow_matching_loss(torch.nn.parallel.DistributedDataParallel(editor), *args)
    finally:
        torch.distributed.destroy_process_group()
    assert torch.equal(got, want) and calls == [1, 1]


def test_the_reward_model_on_the_cpu_is_the_one_trained_there_before():
    cases = sample_cases(6, 5)
    data = LabelledEdits.label(cases.target, cases, 2)
    small = RewardModelConfig(width=4, features=8, hidden=8, batch=16)
    before, losses = train_reward_model(data, steps=3, lr=1e-2, seed=1, config=small)
    on_cpu, losses_cpu = train_reward_model(data, steps=3, lr=1e-2, seed=1, config=small, device="cpu")
    assert losses == losses_cpu
    for (k, a), (_, b) in zip(before.state_dict().items(), on_cpu.state_dict().items(), strict=True):
        assert torch.equal(a, b), k


def test_a_trial_run_trains_the_paper_editor_and_its_adapters(monkeypatch):
    """One pretraining update and one RL iteration at the paper sizes (rank-16 adapters at α/r = 2)."""
    monkeypatch.setenv(TRIAL_ENV, "1")
    config = P.PrepareConfig.for_scale("paper")
    base, losses = pretrain(config.pretraining, device="cpu")
    assert len(losses) == 1 and base.parameter_count() == 4_335_948
    run = run_rl(base, config.arm_config(P.arm_spec("spatial-s0")))
    assert len(run.history.reward) == 1 and [i for i, _ in run.history.probe] == [0, 1]
    adapters = lora_modules(run.editor)
    assert adapters and all((m.rank, m.scale) == (16, 2.0) for m in adapters)
