"""rl_loop: the RL iteration's mechanics on a tiny editor (seeding, shared cases, base untouched)."""

from __future__ import annotations

import pytest
import torch

from neurips26.spatialflow_grpo.editor import Editor, EditorConfig
from neurips26.spatialflow_grpo.editworld import make_suite
from neurips26.spatialflow_grpo.reward import region_rewards
from neurips26.spatialflow_grpo.rl_loop import RLConfig, advantages, iteration_cases, rollout, run_rl

TINY = dict(
    group_size=2,
    conditions=2,
    iterations=2,
    sde_steps=2,
    sde_window=(0, 1),
    probe_every=1,
    probe_size=4,
    eval_steps=2,
)


def small_editor(seed: int = 0) -> Editor:
    editor = Editor(EditorConfig(width=16, depth=1, heads=2, cond_dim=16), seed=seed)
    with torch.no_grad():  # a non-zero head, so the policy depends on its adapters
        editor.head.weight.normal_(0.0, 0.1, generator=torch.Generator().manual_seed(seed))
    return editor


def test_every_method_sees_the_same_cases_and_the_same_first_rollouts():
    base = small_editor()
    flow, spatial = RLConfig(method="flow-grpo", **TINY), RLConfig(method="spatial", **TINY)
    assert iteration_cases(flow, 1).text == iteration_cases(spatial, 1).text
    assert iteration_cases(flow, 0).text != iteration_cases(flow, 1).text
    a = rollout(base, flow, iteration_cases(flow, 0), 0, region_rewards)
    b = rollout(base, spatial, iteration_cases(spatial, 0), 0, region_rewards)
    assert torch.equal(a.states, b.states) and torch.equal(a.rewards, b.rewards)
    assert a.states.shape == (3, 4, 3, 16, 16) and a.token_log_probs.shape == (2, 4, 64)


def test_advantages_have_the_methods_shapes_and_shuffling_moves_only_the_weights():
    base = small_editor()
    config = RLConfig(method="spatial", **TINY)
    rolls = rollout(base, config, iteration_cases(config, 0), 0, region_rewards)
    adv, weights = advantages(config, rolls, 0)
    assert adv.shape == (4, 4) and weights.shape == (4, 4, 64)
    adv_s, weights_s = advantages(config.replace(shuffled=True), rolls, 0)
    assert torch.equal(adv_s, adv) and not torch.equal(weights_s, weights)
    image_adv, none = advantages(config.replace(method="flow-grpo"), rolls, 0)
    assert image_adv.shape == (4,) and none is None


@pytest.mark.parametrize("method", ["flow-grpo", "spatial"])
def test_a_run_is_seeded_trains_only_adapters_and_leaves_the_base_alone(method):
    base = small_editor()
    before = {k: v.clone() for k, v in base.state_dict().items()}
    config = RLConfig(method=method, **TINY)
    probe = make_suite("multiedit", 4)
    one, two = run_rl(base, config, probe=probe), run_rl(base, config, probe=probe)
    assert all(torch.equal(v, base.state_dict()[k]) for k, v in before.items())
    lora = {k: v for k, v in one.editor.state_dict().items() if "lora" in k}
    assert lora and all(torch.equal(v, two.editor.state_dict()[k]) for k, v in lora.items())
    assert any(not torch.equal(v, torch.zeros_like(v)) for k, v in lora.items() if "lora_b" in k.lower())
    assert len(one.history.reward) == 2 and [i for i, _ in one.history.probe] == [0, 1, 2]


def test_bad_config_names_the_field():
    for field, value in [("method", "ppo"), ("group_size", 1), ("updates", 0), ("a", 0.0), ("scalar", "max")]:
        with pytest.raises((ValueError, TypeError), match=field):
            RLConfig(**{field: value})
    with pytest.raises(TypeError, match="base"):
        run_rl("editor", RLConfig(**TINY))
