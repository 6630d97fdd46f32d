"""The ``paper`` scale of chapter 15: its plan, the trial caps, the committed hashes left alone, views
rendered in processes, the loops on the model's device and the measurement without the unused questions."""

import dataclasses

import numpy as np
import pytest
import torch

from neurips26.checkpoint_files import committed_form
from neurips26.scales import TRIAL_ENV
from neurips26.spatial_iq import prepare as P
from neurips26.spatial_iq import training
from neurips26.spatial_iq.dataset import PAPER_SCENES, TRIAL_SCENES, build, scene_count
from neurips26.spatial_iq.evaluate import answer_sheet
from neurips26.spatial_iq.training import GRPOConfig, new_model, warmup_split
from neurips26.spatial_iq.vlm import TinyVLM, VLMConfig

# The committed (default) configuration hashes and the smoke ones: the paper plan and the trial caps leave
# them alone.
DEFAULT_HASHES = {
    "backbone": "48a8176c33d9abb4",
    "sft-plain": "526485f2c1567d01",
    "sft-cot": "44330ac0f50a5346",
    "warmup": "a9ec502a5cb2c6ae",
    "dapo": "abfb573bc59f21c6",
}
SMOKE_HASHES = {
    "backbone": "b7239b6e50199b00",
    "sft-plain": "a8c797953f7350d3",
    "sft-cot": "5d2a3c520f7607b2",
    "warmup": "5d47f489534f6099",
    "dapo": "afa98dcb387034da",
}


@pytest.fixture
def no_trial(monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)


def test_paper_plan_takes_the_papers_data_sizes_and_a_larger_model(no_trial):
    paper, default = P.plan("paper"), P.plan("default")
    assert paper == P.PAPER_PLAN and default.vlm == VLMConfig()
    assert (scene_count("train", "paper"), scene_count("eval", "paper")) == (17_000, 750)
    assert (scene_count("train", "default"), scene_count("eval", "default")) == (1500, 250)
    assert paper.train_scenes == PAPER_SCENES["train"] and default.train_scenes is None
    views = 4 * paper.train_scenes  # 68,000: the paper's training set
    vlm = paper.vlm
    assert (vlm.width, vlm.depth, vlm.heads, vlm.channels) == (256, 6, 8, (64, 128, 256))
    assert sum(p.numel() for p in TinyVLM(vlm).parameters()) == 5_141_632
    assert (paper.backbone.steps, paper.backbone.batch) == (20_000, 64)
    for recipe, seen in ((paper.plain, views), (paper.cot, views), (paper.warmup, views // 10)):
        assert (recipe.steps - 1) * recipe.batch < 3 * seen <= recipe.steps * recipe.batch  # 3 epochs
    assert [r.seed for r in (paper.backbone, paper.plain, paper.cot, paper.warmup)] == [0, 1, 2, 3]
    assert (paper.grpo.steps, paper.grpo.prompts, paper.grpo.group) == (500, 8, 8)


def test_default_and_smoke_hashes_are_the_committed_ones_and_paper_differs(no_trial):
    for name in P.NAMES:
        assert P.expected_hash(name, "default") == DEFAULT_HASHES[name], name
        assert P.expected_hash(name, "smoke") == SMOKE_HASHES[name], name
        assert P.expected_hash(name, "paper") != DEFAULT_HASHES[name], name


def test_added_fields_enter_the_hash_only_when_set(no_trial):
    default = P.plan("default")
    assert not set(P.GROWTH_FIELDS) & set(committed_form(default, P.GROWTH_FIELDS))
    for name in P.GROWTH_FIELDS:
        moved = dataclasses.replace(default, **{name: 3})
        assert committed_form(moved, P.GROWTH_FIELDS)[name] == 3


@pytest.mark.parametrize("scale", ["smoke", "default", "paper"])
def test_trial_caps_apply_at_every_scale_and_change_the_hash(scale, monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)
    plain, plain_hash = P.plan(scale), P.expected_hash("dapo", scale)
    monkeypatch.setenv(TRIAL_ENV, "1")
    trial = P.plan(scale)
    assert trial == P.trial_caps(plain) and trial.vlm == plain.vlm  # the model keeps its size
    for recipe in (trial.backbone, trial.plain, trial.cot, trial.warmup):
        assert (recipe.steps, recipe.batch) == (1, 4)
    g = trial.grpo
    assert (g.steps, g.prompts, g.group, g.extra_draws, g.updates) == (1, 1, 2, 0, 2)
    assert trial.train_scenes == TRIAL_SCENES["train"] == scene_count("train", scale)
    assert trial.validation_scenes == P.TRIAL_VALIDATION_SCENES
    assert P.expected_hash("dapo", scale) != plain_hash  # never taken for a real checkpoint


def test_views_rendered_in_processes_are_the_serial_ones():
    serial, parallel = build(range(3)), build(range(3), workers=2)
    assert np.array_equal(serial.images, parallel.images) and serial.images.dtype == np.float32
    assert repr(serial.labels) == repr(parallel.labels) and repr(serial.scenes) == repr(parallel.scenes)
    for a, b in ((serial.scene_index, parallel.scene_index), (serial.k, parallel.k)):
        assert np.array_equal(a, b) and a.dtype == b.dtype
    for task in serial.partner:
        assert np.array_equal(serial.partner[task], parallel.partner[task])
    for task in serial.truth:
        assert np.array_equal(serial.truth[task], parallel.truth[task])
    with pytest.raises(ValueError, match="workers"):
        build(range(1), workers=-1)


def test_grpo_samples_and_scores_on_the_models_device(monkeypatch):
    data = build(range(2))
    model = new_model(VLMConfig(), seed=0)
    seen = []

    def generate(model, images, prompt, **kw):
        seen.append(("generator", kw["generator"].device, model.device))
        return real_generate(model, images, prompt, **kw)

    def surrogate(log_ratio, adv, *args):
        seen.append(("advantages", adv.device, log_ratio.device))
        return real_surrogate(log_ratio, adv, *args)

    real_generate, real_surrogate = training.generate, training.clipped_surrogate
    monkeypatch.setattr(training, "generate", generate)
    monkeypatch.setattr(training, "clipped_surrogate", surrogate)
    _, rl = warmup_split(len(data), 0.1)
    config = GRPOConfig(steps=1, prompts=1, group=2, extra_draws=0)
    training.grpo(model, new_model(VLMConfig(), seed=0), data, rl, config)
    assert {kind for kind, _, _ in seen} == {"generator", "advantages"}
    assert all(a == b for _, a, b in seen)


@pytest.mark.parametrize("name", ["backbone", "sft-cot"])
def test_measure_reads_the_paper_protocols_answers_and_restores_threads(name, monkeypatch):
    model, data = new_model(VLMConfig(), seed=0), build(range(2))
    monkeypatch.setattr(P, "validation_views", lambda scale: data)
    sheet = answer_sheet(model, data, P.row(name).kind, "paper")  # every question the protocol asks
    expected = {f"val_{t}": float(np.mean(sheet[t] == data.truth[t])) for t in P.MEASURED}
    before = torch.get_num_threads()
    assert P.measure(name, "smoke", model) == expected
    assert torch.get_num_threads() == before
