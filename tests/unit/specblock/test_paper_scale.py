"""The ``paper`` scale of chapter 10: its plan, the fields it added (left out of the committed hashes), the
trial caps, and baseline losses that call the module (what a data-parallel wrapper needs)."""

import dataclasses
import json

import pytest
import torch

from neurips26.scales import TRIAL_ENV
from neurips26.specblock import prepare as prep
from neurips26.specblock.baselines._common import masked_soft_ce, shift_left
from neurips26.specblock.baselines.eagle3 import Eagle3Config, Eagle3Drafter, eagle3_loss
from neurips26.specblock.baselines.medusa import MedusaHeads, medusa_loss
from neurips26.specblock.prepare import (
    MODEL_NAMES,
    PACKAGE_DIR,
    PAPER,
    REGISTRY,
    PrepareConfig,
    model_spec,
    on_device,
    trial_caps,
)
from neurips26.specblock.protocol import fused_features
from neurips26.specblock.target import PAPER_TARGET, TargetConfig
from neurips26.specblock.target_checkpoint import TARGET_NAME
from neurips26.specblock.target_checkpoint import expected_hash as target_hash
from tests.unit.specblock.tiny import tiny_data, tiny_target


@pytest.fixture
def no_trial(monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)


def _committed_hash(name: str) -> str:
    return json.loads((PACKAGE_DIR / f"{name}.json").read_text())["config_hash"]


def test_paper_plan_grows_target_data_and_budgets(no_trial):
    default, paper = PrepareConfig.for_scale("default"), PrepareConfig.for_scale("paper")
    assert paper == PAPER and paper.target == PAPER_TARGET == TargetConfig.for_scale("paper")
    t = paper.target
    assert (t.width, t.depth, t.heads, t.seq_len, t.batch, t.steps) == (256, 8, 8, 256, 64, 5000)
    assert (t.documents, t.warmup, t.lr, t.context) == (200_000, 100, 1e-3, 256)
    # ~82 M training tokens over ~35 M corpus tokens: a few epochs, not the ~170 of 3,000 documents
    assert t.steps * t.batch * t.seq_len / (t.documents * 175) < 3
    assert (paper.prompts, paper.steps, paper.batch, paper.window) == (4000, 4000, 32, 96)
    assert (paper.eagle_steps, paper.eagle_batch) == (paper.medusa_steps, paper.medusa_batch) == (2000, 32)
    kept = ("domains", "new_tokens", "val_prompts", "prompt_seed", "val_seed", "seed", "lr", "mlp_ratio")
    for name in kept:
        assert getattr(paper, name) == getattr(default, name), name
    assert default == PrepareConfig() and default.target == TargetConfig()  # the committed plan
    assert (default.eagle_batch, default.medusa_batch, default.target.val_windows) == (8, 16, 48)


def test_default_hashes_are_the_committed_ones_and_paper_differs(no_trial):
    for name in MODEL_NAMES:
        assert REGISTRY.expected_hash(name, "default") == _committed_hash(name)
        assert REGISTRY.expected_hash(name, "paper") != REGISTRY.expected_hash(name, "default")
    assert target_hash(TargetConfig.for_scale("default")) == _committed_hash(TARGET_NAME)


def test_added_fields_enter_the_hash_only_when_they_leave_their_committed_values():
    spec, config = model_spec("eagle3"), PrepareConfig()
    base = prep.expected_hash(spec, config)
    assert set(prep.GROWTH_FIELDS) == {"eagle_batch", "medusa_batch"}
    for change in ({"eagle_batch": 32}, {"medusa_batch": 8}):
        assert prep.expected_hash(spec, dataclasses.replace(config, **change)) != base
    wider = dataclasses.replace(config, target=dataclasses.replace(config.target, val_windows=2))
    assert prep.expected_hash(spec, wider) != base
    assert target_hash(wider.target) != target_hash(config.target)


@pytest.mark.parametrize("scale", ["smoke", "default", "paper"])
def test_trial_caps_apply_at_every_scale_and_change_the_hash(scale, monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)
    plain = PrepareConfig.for_scale(scale)
    plain_hashes = {n: REGISTRY.expected_hash(n, scale) for n in MODEL_NAMES}
    monkeypatch.setenv(TRIAL_ENV, "1")
    trial = PrepareConfig.for_scale(scale)
    assert trial == trial_caps(plain)
    t = trial.target
    assert (t.steps, t.warmup, t.batch, t.seq_len, t.documents, t.val_windows) == (1, 0, 2, 32, 20, 2)
    p = plain.target
    assert (t.width, t.depth, t.heads, t.mlp_ratio) == (p.width, p.depth, p.heads, p.mlp_ratio)
    assert (trial.prompts, trial.new_tokens, trial.val_prompts) == (4, 8, 2)
    assert (trial.steps, trial.batch, trial.window, trial.eagle_steps, trial.medusa_steps) == (1, 2, 8, 1, 1)
    assert (trial.eagle_batch, trial.medusa_batch, trial.mlp_ratio) == (4, 4, plain.mlp_ratio)
    assert all(REGISTRY.expected_hash(n, scale) != h for n, h in plain_hashes.items())


def test_eagle3_forward_is_the_ttt_unroll_and_its_loss_calls_the_module():
    target = tiny_target(torch.float64)
    drafter = Eagle3Drafter(target, Eagle3Config(heads=2, ttt_steps=3), seed=3)
    data = tiny_data(target)
    tokens, logits, hidden, mask = data
    features = fused_features(hidden)
    outs = drafter.ttt_forward(features, tokens)
    assert all(torch.equal(a, b) for a, b in zip(drafter(features, tokens), outs, strict=True))
    want = sum(  # the loss as computed before it went through forward
        0.8**j * masked_soft_ce(out, shift_left(logits, 1 + j), shift_left(mask, 1 + j, False))
        for j, out in enumerate(outs)
    )
    calls = []
    drafter.register_forward_hook(lambda module, args, out: calls.append(1))
    assert torch.equal(eagle3_loss(drafter, data), want)
    assert calls == [1]  # one call of the module, not of its ttt_forward method
    with pytest.raises(TypeError, match="drafter must be an Eagle3Drafter"):
        eagle3_loss(torch.nn.Linear(2, 2), data)


def test_medusa_loss_calls_the_module_and_equals_the_weighted_head_losses():
    target = tiny_target(torch.float64)
    heads = MedusaHeads(target)
    data = tiny_data(target)
    _, logits, hidden, mask = data
    out = heads(hidden[:, :, -1, :])
    want = sum(
        0.8**k * masked_soft_ce(out[:, :, k], shift_left(logits, 1 + k), shift_left(mask, 1 + k, False))
        for k in range(heads.config.heads)
    )
    calls = []
    heads.register_forward_hook(lambda module, args, out: calls.append(1))
    assert torch.equal(medusa_loss(heads, data), want)
    assert calls == [1]
    with pytest.raises(TypeError, match="heads must be MedusaHeads"):
        medusa_loss(torch.nn.Linear(2, 2), data)


def test_on_device_keeps_the_target_and_moves_a_copy():
    target = tiny_target()
    assert on_device(target, "cpu") is target
    moved = on_device(target, "meta")
    assert moved is not target and next(moved.parameters()).device.type == "meta"
    assert next(target.parameters()).device.type == "cpu"


def test_only_the_shipped_scale_caps_the_checkpoints(no_trial, monkeypatch):
    """The paper target (~10.6 MB in float16) is over the 2 MB cap of the shipped one."""
    seen = []
    monkeypatch.setattr(prep, "make_checkpoint", lambda *a: ({}, None))
    monkeypatch.setattr(prep, "forget_targets", lambda: None)
    monkeypatch.setattr(prep, "write_within_budget", lambda d, s, m, **k: seen.append(("write", k["capped"])))
    monkeypatch.setattr(prep, "check_directory_budget", lambda d, n, capped: seen.append(("total", capped)))
    prep.prepare("paper", only=[TARGET_NAME], out="unused")
    prep.prepare("default", only=[TARGET_NAME], out="unused")
    assert seen == [("write", False), ("total", False), ("write", True), ("total", True)]
