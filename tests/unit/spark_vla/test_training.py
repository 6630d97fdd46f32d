"""Variants, the assembled model, the training step and the closed loop, on a few tiny development episodes.

An untrained frozen encoder and an analytic 3D expert (maps from the true patch points) stand in for the
pre-trained ones: these tests check the plumbing (shapes, which tokens reach the LM, what trains, that the
expert is never needed at inference, determinism), not what training reaches.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26 import cache
from neurips26.spark_vla import data, sim
from neurips26.spark_vla.encoder import make_encoder
from neurips26.spark_vla.model import VLAModel, from_policy_units, policy_proprio, to_policy_units
from neurips26.spark_vla.rollout import action_l1, closed_loop
from neurips26.spark_vla.teacher import analytic_maps
from neurips26.spark_vla.training import StepLosses, TrainConfig, step_loss, train_variant
from neurips26.spark_vla.variants import VARIANTS, VariantSpec, variant

EPISODES = 6


@pytest.fixture(scope="module")
def episodes(tmp_path_factory) -> data.EpisodeSet:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(cache.CACHE_DIR_ENV, str(tmp_path_factory.mktemp("cache")))
        patch.delenv(cache.NO_CACHE_ENV, raising=False)
        eps = data.episodes("dev", "smoke", count=EPISODES)
        demos = data.demonstrations(eps)
    return eps, demos


@pytest.fixture(scope="module")
def encoder():
    vit = make_encoder(0)
    for p in vit.parameters():
        p.requires_grad_(False)
    return vit.eval()


def _features(model: VLAModel, eps: data.EpisodeSet, *, teacher: bool = True):
    images = torch.from_numpy(eps.images)
    maps = tokens = None
    if teacher:
        points = torch.from_numpy(eps.geometry[..., 1:].astype(np.float32))
        one = analytic_maps(points, 0.1)
        maps = torch.stack([one, one], dim=1)
        tokens = torch.randn(len(eps), 36, 64, generator=torch.Generator().manual_seed(0))
    return model.frame_features(images, torch.from_numpy(eps.depth), maps, tokens)


def _batch(demos: data.Demonstrations, rows: slice = slice(0, 8)) -> dict[str, torch.Tensor]:
    return {
        "episode": torch.from_numpy(demos.episode[rows]),
        "proprio": torch.from_numpy(demos.proprio[rows]),
        "chunks": torch.from_numpy(demos.chunks[rows]),
    }


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_variant_builds_selects_and_steps(name, episodes, encoder):
    eps, demos = episodes
    spec = variant(name)
    model = VLAModel(spec, encoder, seed=0)
    features = _features(model, eps)
    batch = _batch(demos)
    rows = features.rows(batch["episode"])
    candidates, _ = model.candidates(rows)
    assert candidates.shape == (8, spec.num_candidates, 64)
    instruction = torch.from_numpy(eps.instructions)[batch["episode"]]
    generator = torch.Generator().manual_seed(1)
    visual, index, _ = model.select(
        candidates, instruction, policy_proprio(batch["proprio"]), generator=generator
    )
    expected = spec.num_candidates if spec.selection == "all" else model.k
    assert visual.shape == (8, expected, 64)
    if index is not None:
        assert all(len(set(r.tolist())) == model.k for r in index)
    trace: list[StepLosses] = []
    for dense in (True, False):
        loss = step_loss(model, features, torch.from_numpy(eps.instructions), batch, dense=dense,
                         generator=generator, trace=trace)  # fmt: skip
        assert torch.isfinite(loss)
        loss.backward()
    assert (trace[0].distill > 0) == (spec.distill != "none")
    # which parameters learn: never the frozen encoder copy's base weights
    trained = {n for n, p in model.named_parameters() if p.grad is not None and p.grad.abs().sum() > 0}
    assert not any(n.startswith("pathways.") and ".lora_" not in n for n in trained)
    assert any(".lora_" in n for n in trained) == spec.uses_lora
    if spec.pathways == "tuned":
        assert any(n.startswith("vit.") for n in trained)


def test_dense_router_step_fits_the_router_and_only_the_router_to_its_targets(episodes, encoder):
    eps, demos = episodes
    model = VLAModel(variant("spark"), encoder, seed=0)
    features = _features(model, eps)
    trace: list[StepLosses] = []
    loss = step_loss(model, features, torch.from_numpy(eps.instructions), _batch(demos), dense=True,
                     generator=None, trace=trace)  # fmt: skip
    assert trace[0].dense and trace[0].route > 0
    loss.backward()
    assert all(p.grad is not None for p in model.router.parameters())
    # routed step: the router gets no gradient (selection is not differentiable), the policy does
    model.zero_grad(set_to_none=True)
    trace.clear()
    step_loss(model, features, torch.from_numpy(eps.instructions), _batch(demos), dense=False, generator=None,
              trace=trace).backward()  # fmt: skip
    assert not trace[0].dense and trace[0].route == 0.0
    assert all(p.grad is None for p in model.router.parameters())


def test_gumbel_gates_are_one_forward_and_train_the_router(episodes, encoder):
    eps, demos = episodes
    model = VLAModel(variant("gumbel"), encoder, seed=0)
    features = _features(model, eps)
    batch = _batch(demos)
    candidates, _ = model.candidates(features.rows(batch["episode"]))
    instruction = torch.from_numpy(eps.instructions)[batch["episode"]]
    generator = torch.Generator().manual_seed(3)
    _, index, gates = model.select(
        candidates, instruction, batch["proprio"], generator=generator, training=True
    )
    assert gates.shape == index.shape and torch.equal(gates.detach(), torch.ones_like(gates))
    step_loss(model, features, torch.from_numpy(eps.instructions), batch, dense=True,
              generator=torch.Generator().manual_seed(3)).backward()  # fmt: skip
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.router.parameters())


def test_training_is_deterministic_and_needs_the_expert_only_when_distilling(episodes, encoder):
    eps, demos = episodes
    config = TrainConfig(steps=3, batch_size=8)
    spec = variant("spark")
    features = _features(VLAModel(spec, encoder), eps)
    a, _ = train_variant(
        spec, encoder, features, torch.from_numpy(eps.instructions), demos, config=config, seed=5
    )
    b, _ = train_variant(
        spec, encoder, features, torch.from_numpy(eps.instructions), demos, config=config, seed=5
    )
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        assert torch.equal(p, q), name
    bare = _features(VLAModel(spec, encoder), eps, teacher=False)
    with pytest.raises(ValueError, match="expert"):
        train_variant(spec, encoder, bare, torch.from_numpy(eps.instructions), demos, config=config)
    # inference never reads the expert: the closed loop runs on features without its maps and tokens
    result = closed_loop(a, a.frame_features(torch.from_numpy(eps.images), torch.from_numpy(eps.depth)), eps)
    assert result.success.shape == (EPISODES,) and result.tokens == a.k
    assert result.selected.shape == (EPISODES, a.k)
    again = closed_loop(a, a.frame_features(torch.from_numpy(eps.images), torch.from_numpy(eps.depth)), eps)
    np.testing.assert_array_equal(result.distance, again.distance)
    assert np.isfinite(action_l1(a, bare, eps, demos))


def test_policy_units_round_trip_and_home_is_the_origin():
    chunks = torch.randn(3, 4, 4, dtype=torch.float64)
    torch.testing.assert_close(from_policy_units(to_policy_units(chunks)), chunks)
    home = torch.tensor([sim.HOME], dtype=torch.float64)
    assert torch.equal(policy_proprio(home), torch.zeros(1, 3, dtype=torch.float64))


def test_bad_specs_name_the_argument():
    with pytest.raises(ValueError, match="variant"):
        variant("sparkle")
    with pytest.raises(ValueError, match="selection"):
        VariantSpec("x", "2d", selection="router")
    with pytest.raises(ValueError, match="LoRA"):
        VariantSpec("x", "2d", distill="maps")
    with pytest.raises(ValueError, match="rho"):
        VariantSpec("x", "both", rho=0.0)
    with pytest.raises(ValueError, match="pathways"):
        VariantSpec("x", "three-d")
