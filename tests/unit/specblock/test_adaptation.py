"""Domain-shift stream (§3.7): lossless under every policy, update counts, recorded supervision."""

from __future__ import annotations

import pytest
import torch

from neurips26.specblock.adaptation import domain_shift_stream, modelled_update_costs
from neurips26.specblock.bandit import (
    CostAwareBandit,
    EveryWindowPolicy,
    StaticPolicy,
    UpdateConfig,
    VerifiedSequence,
)
from neurips26.specblock.cost_model import iteration_units, target_parameters
from neurips26.specblock.decode import speculative_generate, vanilla_generate
from neurips26.specblock.dynamic_tree import SpecBlockProposer
from neurips26.specblock.protocol import target_outputs
from tests.unit.specblock.tiny import VOCAB, tiny_drafter, tiny_target

SMALL = UpdateConfig(steps=2, lr=1e-2, batch=2, window=8, ttt_blocks=2)
PROMPTS_A = [[1, 2, 3, 4], [5, 6, 7]]
PROMPTS_B = [[9, 8], [10, 11, 12, 13, 14], [3]]
PROPOSER = {"beam_width": 3, "max_blocks": 2}


@pytest.fixture(scope="module")
def target():
    return tiny_target(torch.float64)


@pytest.fixture(scope="module")
def drafter(target):
    return tiny_drafter(target)


@pytest.mark.parametrize(
    ("prompt", "max_new", "eos"), [([1, 2, 3, 4, 5], 12, None), ([7], 9, None), ([2, 9], 30, 5)]
)
def test_record_stays_lossless_and_returns_the_verifier_outputs(target, drafter, prompt, max_new, eos):
    proposer = SpecBlockProposer(drafter, beam_width=3)
    plain = speculative_generate(target, proposer, prompt, max_new, total_tokens=12, eos_id=eos)
    rec = speculative_generate(target, proposer, prompt, max_new, total_tokens=12, eos_id=eos, record=True)
    assert rec.tokens == plain.tokens == vanilla_generate(target, prompt, max_new, eos_id=eos).tokens
    assert plain.logits is None and plain.hidden is None
    full = torch.tensor([prompt + list(rec.tokens)])
    logits, hidden = target_outputs(target, full[:, :-1])
    torch.testing.assert_close(rec.logits, logits[0], atol=1e-9, rtol=0)
    torch.testing.assert_close(rec.hidden, hidden[0], atol=1e-9, rtol=0)
    seq = VerifiedSequence.from_generation(prompt, rec)
    assert seq.loss_mask.tolist() == [False] * (len(prompt) - 1) + [True] * len(rec.tokens) + [False]
    with pytest.raises(TypeError, match="record"):
        speculative_generate(target, proposer, prompt, max_new, total_tokens=12, record=1)


def _policies():
    return [
        StaticPolicy(update=SMALL),
        CostAwareBandit(update=SMALL, costs={"rank": 1e-4, "head": 1e-4, "all": 1e-4}, horizon=100.0),
        EveryWindowPolicy(update=SMALL),
    ]


def test_stream_is_lossless_under_every_policy_and_counts_updates(target, drafter):
    before = [p.detach().clone() for p in drafter.parameters()]
    vanilla = [vanilla_generate(target, p, 10).tokens for p in PROMPTS_A + PROMPTS_B]
    results = {}
    for policy in _policies():
        out = domain_shift_stream(
            target, drafter, policy, PROMPTS_A, PROMPTS_B, max_new_tokens=10, total_tokens=12, window=2,
            proposer=PROPOSER,
        )  # fmt: skip
        assert list(out.tokens) == vanilla
        assert out.domain == ("a", "a", "b", "b", "b")
        assert len(out.tau) == len(out.decode_seconds) == 5 and all(t >= 1 for t in out.tau)
        assert len(out.decisions) == 3  # windows after generations 2, 4 and the last one
        assert out.mean_tau("a") >= 1 and out.total_decode_seconds > 0 and out.update_seconds >= 0
        results[out.policy] = out
    assert results["static"].updates == 0
    assert results["every-window"].updates == 3
    assert 1 <= results["bandit"].updates <= 3  # untried arms are explored first
    # the caller's drafter is never touched: each stream adapts its own copy
    assert all(torch.equal(p, q) for p, q in zip(drafter.parameters(), before, strict=True))


def test_stream_is_deterministic(target, drafter):
    runs = [
        domain_shift_stream(
            target, drafter, EveryWindowPolicy(update=SMALL, seed=3), PROMPTS_A, PROMPTS_B[:1],
            max_new_tokens=8, total_tokens=10, window=1, proposer=PROPOSER,
        )
        for _ in range(2)
    ]  # fmt: skip
    assert runs[0].tau == runs[1].tau and runs[0].tokens == runs[1].tokens


def test_bad_inputs_name_the_argument(target, drafter):
    policy = StaticPolicy()
    common = {"max_new_tokens": 4, "total_tokens": 8, "window": 1}
    with pytest.raises(ValueError, match="window"):
        domain_shift_stream(target, drafter, policy, PROMPTS_A, PROMPTS_B, **(common | {"window": 0}))
    with pytest.raises(ValueError, match="max_new_tokens"):
        domain_shift_stream(target, drafter, policy, PROMPTS_A, PROMPTS_B, **(common | {"max_new_tokens": 0}))
    with pytest.raises(TypeError, match="prompts_a"):
        domain_shift_stream(target, drafter, policy, "abc", PROMPTS_B, **common)
    with pytest.raises(ValueError, match=r"prompts_b\[0\]"):
        domain_shift_stream(target, drafter, policy, PROMPTS_A, [[VOCAB]], **common)
    with pytest.raises(ValueError, match=r"prompts_a\[0\]"):
        domain_shift_stream(target, drafter, policy, [[]], PROMPTS_B, **common)
    with pytest.raises(TypeError, match="policy"):
        domain_shift_stream(target, drafter, "static", PROMPTS_A, PROMPTS_B, **common)
    with pytest.raises(TypeError, match="drafter"):
        domain_shift_stream(target, target, policy, PROMPTS_A, PROMPTS_B, **common)
    with pytest.raises(ValueError, match="prompts_a and prompts_b"):
        domain_shift_stream(target, drafter, policy, [], [], **common)


def test_a_model_cost_bandit_decides_the_same_whatever_the_clock_says(target, drafter):
    costs = modelled_update_costs(target, drafter, SMALL)
    assert 0 < costs["rank"] < costs["head"] < costs["all"]

    def run():
        bandit = CostAwareBandit(update=SMALL, unit="model", costs=costs, horizon=50.0, seed=1)
        return domain_shift_stream(
            target, drafter, bandit, PROMPTS_A, PROMPTS_B, max_new_tokens=10, total_tokens=12, window=1,
            proposer=PROPOSER,
        )  # fmt: skip

    first, second = run(), run()
    # the values compared are in modelled target forwards: no measured second enters a decision
    assert [(d.arm, d.values) for d in first.decisions] == [(d.arm, d.values) for d in second.decisions]
    assert first.tokens == second.tokens and first.tau == second.tau
    with pytest.raises(ValueError, match="unit='model' needs costs"):
        CostAwareBandit(unit="model")
    with pytest.raises(ValueError, match="unit"):
        CostAwareBandit(unit="minutes", costs=costs)


def test_the_stream_reports_each_iterations_modelled_cost_to_a_model_policy(target, drafter):
    class Recording(StaticPolicy):
        unit = "model"

        def observe(self, sequence, tau, cost_per_iteration):
            self.seen = [*getattr(self, "seen", []), cost_per_iteration]
            super().observe(sequence, tau, cost_per_iteration)

    policy = Recording()
    domain_shift_stream(
        target, drafter, policy, PROMPTS_A[:1], [], max_new_tokens=10, total_tokens=12, window=1,
        proposer=PROPOSER,
    )  # fmt: skip
    proposer = SpecBlockProposer(drafter, **PROPOSER)
    result = speculative_generate(target, proposer, PROMPTS_A[0], 10, total_tokens=12)
    p_t = target_parameters(target)
    expected = [
        iteration_units(proposer, n, f, p_t)
        for n, f in zip(result.tree_sizes, result.drafter_forwards, strict=True)
    ]
    assert policy.seen == [pytest.approx(sum(expected) / len(expected))]
