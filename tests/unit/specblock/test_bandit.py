"""Cost-aware bandit (§3.7): replay buffer, arms' parameter sets, update isolation, hand-made decisions."""

from __future__ import annotations

import math

import pytest
import torch

from neurips26.specblock.bandit import (
    UPDATE_ARMS,
    CostAwareBandit,
    EveryWindowPolicy,
    ReplayBuffer,
    StaticPolicy,
    UpdateConfig,
    VerifiedSequence,
    arm_parameter_names,
    collate,
    measure_update_cost,
    seconds_saved,
    update_drafter,
)
from neurips26.specblock.drafter import SpecBlockConfig, SpecBlockDrafter
from tests.unit.specblock.tiny import tiny_data, tiny_target

SMALL = UpdateConfig(steps=2, lr=1e-2, batch=2, window=8, ttt_blocks=2)


@pytest.fixture(scope="module")
def target():
    return tiny_target()


@pytest.fixture(scope="module")
def sequences(target):
    tokens, logits, hidden, mask = tiny_data(target, batch=4, length=14)
    return [VerifiedSequence(tokens[i], logits[i], hidden[i], mask[i]) for i in range(4)]


def _drafter(target) -> SpecBlockDrafter:
    return SpecBlockDrafter.from_target(target, SpecBlockConfig.for_target(target, heads=2), seed=0).eval()


def _buffer(sequences, capacity: int = 8) -> ReplayBuffer:
    buffer = ReplayBuffer(capacity)
    for s in sequences:
        buffer.add(s)
    return buffer


# ------------------------------------------------------------------------------------------ buffer


def test_buffer_is_bounded_and_drops_the_oldest(sequences):
    buffer = _buffer(sequences, capacity=3)
    assert len(buffer) == 3 and buffer.added == 4
    assert [s.tokens.tolist() for s in buffer] == [s.tokens.tolist() for s in sequences[1:]]


def test_buffer_sampling_is_deterministic_and_pads_with_masked_positions(sequences):
    buffer = _buffer(sequences)
    a = buffer.sample(5, torch.Generator().manual_seed(3))
    b = buffer.sample(5, torch.Generator().manual_seed(3))
    for name in ("tokens", "logits", "hidden", "loss_mask"):
        assert torch.equal(getattr(a, name), getattr(b, name))
    short = VerifiedSequence(
        *(getattr(sequences[0], n)[:6] for n in ("tokens", "logits", "hidden", "loss_mask"))
    )
    batch = collate([short, sequences[1]])
    assert batch.tokens.shape == (2, 14)
    assert not batch.loss_mask[0, 6:].any() and torch.equal(batch.loss_mask[1], sequences[1].loss_mask)


# -------------------------------------------------------------------------------------------- arms


def test_each_arm_names_exactly_its_parameters(target):
    drafter = _drafter(target)
    names = [n for n, _ in drafter.named_parameters()]
    rank = {n for n in names if n.startswith("rank_head.")}
    last = {n for n in names if n.startswith(("layers.1.", "final_norm.", "lm_head."))}
    assert rank and last
    assert arm_parameter_names(drafter, "skip") == ()
    assert set(arm_parameter_names(drafter, "rank")) == rank
    assert set(arm_parameter_names(drafter, "head")) == rank | last
    assert set(arm_parameter_names(drafter, "all")) == set(names)
    assert "embedding" not in names  # the frozen token embedding is a buffer, never updated


@pytest.mark.parametrize("arm", UPDATE_ARMS)
def test_an_update_changes_only_its_arm(target, sequences, arm):
    drafter = _drafter(target)
    before = {n: p.detach().clone() for n, p in drafter.named_parameters()}
    embedding = drafter.embedding.clone()
    seconds = update_drafter(drafter, arm, _buffer(sequences), SMALL, seed=1)
    assert seconds > 0
    allowed = set(arm_parameter_names(drafter, arm))
    changed = {n for n, p in drafter.named_parameters() if not torch.equal(p, before[n])}
    assert changed and changed <= allowed
    assert torch.equal(drafter.embedding, embedding)
    assert all(p.requires_grad for p in drafter.parameters())  # flags restored
    assert not drafter.training  # mode restored


def test_updates_are_deterministic_and_skip_does_nothing(target, sequences):
    a, b = _drafter(target), _drafter(target)
    update_drafter(a, "head", _buffer(sequences), SMALL, seed=5)
    update_drafter(b, "head", _buffer(sequences), SMALL, seed=5)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    c = _drafter(target)
    assert update_drafter(c, "skip", _buffer(sequences), SMALL) == 0.0
    assert all(torch.equal(p, q) for p, q in zip(c.parameters(), _drafter(target).parameters(), strict=True))


def test_measured_cost_is_positive_and_leaves_the_drafter_untouched(target, sequences):
    drafter = _drafter(target)
    before = [p.detach().clone() for p in drafter.parameters()]
    batch = collate(sequences[:2])
    cost = measure_update_cost(drafter, "all", batch, config=SMALL, repeats=2)
    assert cost > 0 and measure_update_cost(drafter, "skip", batch) == 0.0
    assert all(torch.equal(p, q) for p, q in zip(drafter.parameters(), before, strict=True))


# --------------------------------------------------------------------------------------- decisions


def _bandit(**kw) -> CostAwareBandit:
    kw.setdefault("costs", {"rank": 0.001, "head": 0.002, "all": 0.004})
    return CostAwareBandit(horizon=kw.pop("horizon", 1000.0), update=UpdateConfig(steps=4), **kw)


def test_seconds_saved_converts_a_tau_gain_into_seconds():
    assert seconds_saved(0.5, 2.0, 0.01, 1000) == pytest.approx(1000 * 0.01 * (1 / 2 - 1 / 2.5))
    assert seconds_saved(math.inf, 2.0, 0.01, 1000) == pytest.approx(5.0)
    assert seconds_saved(-0.2, 2.0, 0.01, 1000) < 0


def test_skips_when_every_gain_is_not_positive():
    bandit = _bandit(exploration=0.0)
    for arm, gain in zip(UPDATE_ARMS, (-0.1, 0.0, -0.3), strict=True):
        bandit.record_gain(arm, gain)
    arm, values = bandit.decide(2.0, 0.01)
    assert arm == "skip" and all(v <= 0 for v in values.values())


def test_skips_when_the_cost_exceeds_gain_times_horizon():
    bandit = _bandit(exploration=0.0, horizon=100.0, costs={"rank": 1.0, "head": 1.0, "all": 1.0})
    for arm in UPDATE_ARMS:
        bandit.record_gain(arm, 0.1)  # saves 100·0.01·(1/2 − 1/2.1) ≈ 0.024 s < 4 steps × 1 s
    arm, values = bandit.decide(2.0, 0.01)
    assert arm == "skip"
    assert values["all"] == pytest.approx(seconds_saved(0.1, 2.0, 0.01, 100.0) - 4.0)
    cheap = _bandit(exploration=0.0, horizon=100.0, costs={"rank": 1e-4, "head": 1e-4, "all": 1e-4})
    cheap.record_gain("all", 0.1)
    cheap.record_gain("rank", 0.0)
    cheap.record_gain("head", 0.0)
    assert cheap.decide(2.0, 0.01)[0] == "all"  # the same gain pays for a cheap update


def test_untried_arms_are_explored_first_cheapest_first():
    bandit = _bandit(exploration=0.0)
    assert bandit.estimate("rank") == math.inf
    assert bandit.decide(2.0, 0.01)[0] == "rank"  # all untried: equal optimism, lowest cost
    bandit.record_gain("rank", 0.0)
    bandit.record_gain("head", -0.5)
    assert bandit.decide(2.0, 0.01)[0] == "all"  # the one arm never tried
    bandit.record_gain("all", -0.5)
    assert bandit.decide(2.0, 0.01)[0] == "skip"


def test_ucb_bonus_and_best_arm_on_hand_made_gains():
    bandit = _bandit(exploration=0.0)
    for arm, gain in zip(UPDATE_ARMS, (0.05, 0.3, 0.2), strict=True):
        bandit.record_gain(arm, gain)
    assert bandit.decide(2.0, 0.01)[0] == "head"
    optimistic = _bandit(exploration=1.0, memory=2)
    optimistic.decisions = 9
    optimistic.record_gain("rank", 0.1)
    optimistic.record_gain("rank", 0.3)
    optimistic.record_gain("rank", 0.5)  # sliding window keeps the last two
    assert optimistic.estimate("rank") == pytest.approx(0.4 + math.sqrt(math.log(10) / 2))


def test_end_window_credits_the_tau_change_to_the_arm_that_updated(target, sequences):
    bandit = CostAwareBandit(costs={"rank": 1e-4, "head": 1e-4, "all": 1e-4}, update=SMALL, exploration=0.0)
    drafter = _drafter(target)
    bandit.observe(sequences[0], 2.0, 0.01)
    first = bandit.end_window(drafter)
    assert first.arm == "rank" and bandit.updates == 1
    bandit.observe(sequences[1], 2.5, 0.01)
    second = bandit.end_window(drafter)
    assert list(bandit.gains["rank"]) == [pytest.approx(0.5)]
    assert second.arm == "head"  # still untried
    bandit.reset()
    assert len(bandit.buffer) == 0 and bandit.updates == 0 and not bandit.gains["rank"]


def test_reference_policies(target, sequences):
    drafter = _drafter(target)
    before = [p.detach().clone() for p in drafter.parameters()]
    static, every = StaticPolicy(update=SMALL), EveryWindowPolicy(update=SMALL)
    for policy in (static, every):
        policy.observe(sequences[0], 2.0, 0.01)
    assert static.end_window(drafter).arm == "skip"
    assert all(torch.equal(p, q) for p, q in zip(drafter.parameters(), before, strict=True))
    decision = every.end_window(drafter)
    assert decision.arm == "all" and decision.updated and every.updates == 1


# -------------------------------------------------------------------------------------- bad inputs


def test_bad_inputs_name_the_argument(target, sequences):
    drafter = _drafter(target)
    with pytest.raises(ValueError, match="capacity"):
        ReplayBuffer(0)
    with pytest.raises(TypeError, match="item"):
        ReplayBuffer().add("x")
    with pytest.raises(ValueError, match="empty"):
        ReplayBuffer().sample(1, torch.Generator())
    with pytest.raises(ValueError, match="steps"):
        UpdateConfig(steps=0)
    with pytest.raises(ValueError, match="lr"):
        UpdateConfig(lr=0.0)
    with pytest.raises(ValueError, match="arm"):
        arm_parameter_names(drafter, "everything")
    with pytest.raises(ValueError, match="buffer"):
        update_drafter(drafter, "all", ReplayBuffer())
    with pytest.raises(ValueError, match="horizon"):
        CostAwareBandit(horizon=0)
    with pytest.raises(ValueError, match="arms"):
        CostAwareBandit(arms=["skip"])
    with pytest.raises(ValueError, match="costs"):
        CostAwareBandit(costs={"rank": 0.1})
    with pytest.raises(ValueError, match="tau"):
        StaticPolicy().observe(sequences[0], 0.5, 0.01)
    with pytest.raises(ValueError, match="loss_mask"):
        VerifiedSequence(sequences[0].tokens, sequences[0].logits, sequences[0].hidden, sequences[0].tokens)
    no_rank = SpecBlockDrafter.from_target(
        target, SpecBlockConfig.for_target(target, heads=2, rank_head=False)
    )
    with pytest.raises(ValueError, match="rank head"):
        arm_parameter_names(no_rank, "rank")
