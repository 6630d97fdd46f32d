"""The ``paper`` plan of chapter 17: its sizes, the trial caps, the committed hashes it leaves alone, and the
training step that runs inside the module's forward (what DistributedDataParallel synchronises)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from neurips26 import cache
from neurips26.scales import TRIAL_ENV
from neurips26.spark_vla import data
from neurips26.spark_vla import prepare as P
from neurips26.spark_vla.encoder import (
    ENCODER_CONFIG,
    LORA_TARGETS,
    SPLIT_BLOCK,
    TwoPathwayEncoder,
    adapted_blocks,
    lora_targets,
    make_encoder,
    split_block,
)
from neurips26.spark_vla.model import VLAModel
from neurips26.spark_vla.teacher import analytic_maps, make_teacher, teacher_maps, teacher_tokens
from neurips26.spark_vla.training import TrainStep, step_loss
from neurips26.spark_vla.variants import VARIANTS
from neurips26.spark_vla.vla import PolicyConfig

EPISODES = 4


@pytest.fixture(autouse=True)
def _no_trial(monkeypatch):
    monkeypatch.delenv(TRIAL_ENV, raising=False)


@pytest.fixture(scope="module")
def episodes(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(cache.CACHE_DIR_ENV, str(tmp_path_factory.mktemp("cache")))
        patch.delenv(cache.NO_CACHE_ENV, raising=False)
        eps = data.episodes("dev", "smoke", count=EPISODES)
        demos = data.demonstrations(eps)
    return eps, demos


def _batch(demos: data.Demonstrations) -> dict[str, torch.Tensor]:
    rows = slice(0, 8)
    return {
        "episode": torch.from_numpy(demos.episode[rows]),
        "proprio": torch.from_numpy(demos.proprio[rows]),
        "chunks": torch.from_numpy(demos.chunks[rows]),
    }


def test_paper_plan_uses_the_paper_split_sizes_and_larger_networks():
    paper, default = P.plan("paper"), P.plan("default")
    sizes = data.SPLIT_SIZES["paper"]
    assert (paper.pretrain_episodes, paper.train_episodes) == (sizes["pretrain"], sizes["train"])
    assert paper.validation_episodes == sizes["dev"]
    assert (paper.encoder.width, paper.encoder.depth, paper.encoder.heads) == (256, 8, 8)
    assert (paper.policy.width, paper.policy.lm_depth, paper.policy.vision_width) == (256, 4, 256)
    assert (paper.train.steps, paper.train.batch_size) == (20_000, 256)
    assert paper.pretrain_steps * paper.pretrain_batch >= 20 * paper.pretrain_episodes
    # the default plan keeps the committed sizes
    assert default.encoder == ENCODER_CONFIG and default.policy == PolicyConfig()
    assert (default.pretrain_batch, default.pretrain_lr, default.warmup) == (64, 3e-3, None)
    assert P.expected_hash("spark", "paper") != P.expected_hash("spark", "default")


def test_default_hash_leaves_the_growth_fields_out():
    form = P.committed_form(P.plan("default"), P.GROWTH_FIELDS)
    assert not set(P.GROWTH_FIELDS) & set(form)
    grown = {"encoder", "policy", "pretrain_batch", "pretrain_lr"}  # warm-up keeps the default rule
    assert grown <= set(P.committed_form(P.plan("paper"), P.GROWTH_FIELDS))


def test_committed_sidecars_still_match_the_default_hashes():
    sidecars = sorted(P.PACKAGE_DIR.glob("*.json"))
    if not sidecars:
        pytest.skip("no committed checkpoints")
    for path in sidecars:
        meta = json.loads(path.read_text())
        assert meta["config_hash"] == P.expected_hash(meta["name"], "default"), meta["name"]


def test_trial_caps_cut_the_budget_not_the_networks(monkeypatch):
    paper = P.plan("paper")
    monkeypatch.setenv(TRIAL_ENV, "1")
    trial = P.plan("paper")
    assert (trial.pretrain_steps, trial.train.steps, trial.warmup) == (1, 1, 0)
    assert trial.pretrain_episodes <= 8 and trial.train_episodes <= 4 and trial.validation_episodes <= 2
    assert trial.train.batch_size <= 4 and trial.pretrain_batch <= 4
    assert (trial.encoder, trial.policy) == (paper.encoder, paper.policy)
    assert P.plan("default").train.steps == 1  # the caps apply at any scale
    trial_hash = P.expected_hash("spark", "paper")
    monkeypatch.delenv(TRIAL_ENV)
    assert trial_hash != P.expected_hash("spark", "paper")


def test_default_geometry_is_the_committed_one():
    assert split_block(ENCODER_CONFIG) == SPLIT_BLOCK == 2
    assert lora_targets(ENCODER_CONFIG) == LORA_TARGETS
    assert LORA_TARGETS == tuple(f"blocks.{b}.attn.{x}" for b in (2, 3) for x in ("qkv", "out"))
    assert adapted_blocks(ENCODER_CONFIG) == (2, 3)
    paper = P.PAPER_ENCODER
    assert split_block(paper) == 4 and adapted_blocks(paper) == (4, 5, 6, 7) and len(lora_targets(paper)) == 8


def _features(model: VLAModel, eps: data.EpisodeSet, blocks: int = 2, width: int = 64):
    points = torch.from_numpy(eps.geometry[..., 1:].astype(np.float32))
    maps = torch.stack([analytic_maps(points, 0.1)] * blocks, dim=1)
    tokens = torch.randn(len(eps), 36, width, generator=torch.Generator().manual_seed(0))
    return model.frame_features(torch.from_numpy(eps.images), torch.from_numpy(eps.depth), maps, tokens)


def _grads(model: VLAModel) -> dict[str, torch.Tensor | None]:
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    return {n: None if p.grad is None else p.grad.clone() for n, p in named}


@pytest.mark.parametrize("name", ["spark", "gumbel", "random-k", "sf", "response", "larger", "oracle"])
@pytest.mark.parametrize("dense", [True, False])
def test_train_step_forward_equals_step_loss(name, dense, episodes):
    """The forward fit calls (and DDP wraps) gives the loss and gradients of ``step_loss`` bit for bit,
    missing ones included (DDP finds them: ``find_unused_parameters``)."""
    eps, demos = episodes
    model = VLAModel(VARIANTS[name], make_encoder(0), seed=0)
    features = _features(model, eps)
    instructions = torch.from_numpy(eps.instructions)
    batch = _batch(demos)

    def run(fn) -> tuple[torch.Tensor, dict[str, torch.Tensor | None]]:
        model.zero_grad(set_to_none=True)
        with torch.random.fork_rng():
            torch.manual_seed(5)
            loss = fn(torch.Generator().manual_seed(3))
        loss.backward()
        return loss.detach(), _grads(model)

    old, old_grads = run(lambda g: step_loss(model, features, instructions, batch, dense=dense, generator=g))
    step = TrainStep(model, features, instructions)
    new, new_grads = run(lambda g: step(batch, dense=dense, generator=g))
    assert torch.equal(old, new)
    assert old_grads.keys() == new_grads.keys()
    for key, grad in old_grads.items():
        assert (grad is None and new_grads[key] is None) or torch.equal(grad, new_grads[key]), key

    if name == "spark" and not dense:  # the routed step leaves the router out
        assert any(k.startswith("router.") and g is None for k, g in old_grads.items())


def test_paper_sized_model_takes_a_step(episodes):
    """The paper's encoder geometry end to end: 8 blocks, adapters on 4-7, one distilled map per adapted
    block from a teacher of the same sizes, the 256-wide policy."""
    eps, demos = episodes
    p = P.PAPER
    encoder = make_encoder(0, p.encoder)
    teacher = make_teacher(0, p.encoder)
    model = VLAModel(VARIANTS["spark"], encoder, seed=0, config=p.policy)
    assert isinstance(model.pathways, TwoPathwayEncoder) and model.pathways.split_block == 4
    assert len(model.pathways.lora_names) == 8
    images = torch.from_numpy(eps.images)
    maps = teacher_maps(teacher, images, adapted_blocks(p.encoder))
    tokens = teacher_tokens(teacher, images, p.encoder.depth - 1)
    assert maps.shape == (EPISODES, 4, 36, 36) and tokens.shape == (EPISODES, 36, 256)
    features = model.frame_features(images, torch.from_numpy(eps.depth), maps, tokens)
    loss = TrainStep(model, features, torch.from_numpy(eps.instructions))(
        _batch(demos), dense=True, generator=torch.Generator().manual_seed(0)
    )
    loss.backward()
    assert torch.isfinite(loss) and model.router.fc1.weight.grad is not None
