"""Stage 4 and the baselines: the imagined set keeps the real reference and re-labels the imagined frames;
the heads train deterministically on either label set; a baseline reads the reference and a frozen h_T."""

from __future__ import annotations

import pytest
import torch

from neurips26.sparsevideonav.action_head import ActionHead, ActionHeadConfig
from neurips26.sparsevideonav.codec import fit_codec
from neurips26.sparsevideonav.dataset import decision_index, episode, make_batch, sample_pairs
from neurips26.sparsevideonav.expert import demonstrations
from neurips26.sparsevideonav.former import Former, FormerConfig
from neurips26.sparsevideonav.generator import GeneratorConfig
from neurips26.sparsevideonav.head_training import BCPolicyNet, imagined_set, train_bc, train_head
from neurips26.sparsevideonav.pose_estimator import PoseEstimator, PoseEstimatorConfig, relabel
from neurips26.sparsevideonav.train import Recipe, train_history, train_i2v


@pytest.fixture(scope="module")
def setup():
    torch.set_num_threads(1)
    trajectories = demonstrations([0, 1])
    codec = fit_codec([t.frames for t in trajectories])
    eps = [episode(t, codec) for t in trajectories]
    stage1, _ = train_i2v(GeneratorConfig(width=16, heads=2, depth=1), eps, Recipe(steps=2, batch=4))
    stage2, _ = train_history(stage1, FormerConfig(width=16, heads=2), eps, Recipe(steps=2, batch=4))
    torch.manual_seed(0)
    estimator = PoseEstimator(PoseEstimatorConfig(hidden=8, layers=1)).eval()
    pairs = sample_pairs(decision_index(eps), 12, seed=1)
    data = imagined_set(stage2.former, stage2.generator, estimator, codec, eps, pairs, seed=2, batch=5)
    return codec, eps, stage2, estimator, pairs, data


def test_the_imagined_set_keeps_the_reference_and_relabels_the_imagined_frames(setup):
    codec, eps, stage2, estimator, pairs, data = setup
    real = make_batch(eps, pairs, stage2.generator.config.offsets)
    assert data.contexts.shape == (12, 10, 2, 16) and len(data) == 12
    assert torch.equal(data.contexts[:, :2], real.clip[:, :2])  # the present is not re-imagined
    assert not torch.allclose(data.contexts[:, 2:], real.clip[:, 2:])  # the future is
    assert torch.allclose(data.real, real.actions) and torch.equal(data.stop, real.stop)
    again = relabel(estimator, codec, data.contexts[:, :2], data.contexts[:, 2:])
    assert torch.allclose(data.relabelled, again.float(), atol=1e-5)


def test_heads_train_deterministically_on_either_labels(setup):
    *_, data = setup
    config = ActionHeadConfig(width=16, heads=2, context_layers=1, dit_layers=1)
    a, la = train_head(config, data, Recipe(steps=3, batch=4))
    b, lb = train_head(config, data, Recipe(steps=3, batch=4))
    c, lc = train_head(config, data, Recipe(steps=3, batch=4), labels="real")
    assert la == lb and la != lc
    assert all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters(), strict=True))
    with pytest.raises(ValueError, match="labels"):
        train_head(config, data, Recipe(steps=1, batch=2), labels="guessed")


def test_a_baseline_reads_the_reference_and_a_frozen_former_memory(setup):
    _, eps, *_ = setup
    former = Former(FormerConfig(width=16, heads=2))
    before = [p.clone() for p in former.parameters()]
    head = ActionHeadConfig(
        width=16, heads=2, context_layers=1, dit_layers=1, horizon=80, context_slots=2, memory_tokens=8
    )
    net, losses = train_bc(former, head, eps, Recipe(steps=2, batch=4))
    assert net.head.config.horizon == 80 and len(losses) == 2
    assert net.former is former and all(
        torch.equal(a, b) for a, b in zip(before, former.parameters(), strict=True)
    )
    with pytest.raises(ValueError, match="head"):
        BCPolicyNet(former, ActionHead(ActionHeadConfig(width=16, heads=2)))
    with pytest.raises(TypeError, match="former"):
        train_bc(FormerConfig(), head, eps, Recipe(steps=1, batch=2))
