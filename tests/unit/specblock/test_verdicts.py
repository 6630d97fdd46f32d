"""The criteria of claims L and D1–D8 on hand-made results: values, thresholds, margins, pass/fail."""

import dataclasses

import pytest

from neurips26.criteria import decide, decide_over_seeds
from neurips26.specblock.adaptation import StreamResult
from neurips26.specblock.bandit import WindowDecision
from neurips26.specblock.experiments import MethodResult, SlotAccuracy, SuiteConfig, SuiteResult
from neurips26.specblock.verdicts import (
    adaptation_criteria,
    depth_gaps,
    drafting_cost_criteria,
    higher,
    lossless_criteria,
    lower,
    median_draft_ms,
    multi_block_criteria,
    path_dependence_criteria,
    rank_head_criteria,
    shift_criteria,
    speedup_criteria,
    strict_linear_criteria,
    valid_prefix_criteria,
)
from neurips26.timing import Timing

TOKENS = ((1, 2, 3), (4, 5))


def row(method, budget, **kw):
    values = dict(
        tokens=TOKENS,
        lossless=True,
        tau=2.0,
        per_depth=(0.0,) * 9,
        drafter_forwards=1.0,
        drafter_ms=1.0,
        target_ms=1.0,
        tree_nodes=float(budget),
        t_d_ms=1.0,
        seconds=float("nan"),
        drafting_units=1.0,
        modelled_speedup=1.5,
        cpu_modelled_speedup=1.0,
    )
    values.update(kw)
    return MethodResult(method=method, budget=budget, **values)


def suite(*rows):
    vanilla = row("vanilla", 0, tau=1.0, drafter_forwards=0.0)
    return SuiteResult(SuiteConfig(), (vanilla, *rows), {0: 1.0}, float("nan"), 0.0)


def test_pairwise_comparisons_pass_exactly_when_the_old_boolean_did_and_scale_by_the_larger():
    c = higher("a > b", 0.9, 0.6, unit=1.0)
    assert c.passed and c.value == pytest.approx(0.3) and c.threshold == 0 and c.scale == 0.9
    assert c.relative_margin == pytest.approx(1 / 3)
    assert not higher("a > b", 0.6, 0.6, unit=1.0).passed  # a tie is not "higher"
    assert not higher("a > b", 0.5, 0.6, unit=1.0).passed
    assert lower("a < b", 2, 10, unit=1.0).passed and lower("a < b", 2, 10, unit=1.0).scale == 10
    assert not lower("a < b", 10, 10, unit=1.0).passed
    zero = higher("a > b", 0.0, 0.0, unit=0.25)  # both 0: the unit is the scale, the margin 0
    assert zero.scale == 0.25 and not zero.passed and zero.relative_margin == 0
    with pytest.raises(ValueError, match="unit"):
        higher("a > b", 1.0, 0.0, unit=0.0)


def test_lossless_is_an_exact_fact_naming_the_runs_that_differ():
    ok, mismatch = lossless_criteria(suite(row("eagle3", 60), row("specblock", 90)))
    assert (
        mismatch == []
        and ok[0].exact
        and ok[0].passed
        and "2 method × budget runs on 2 prompts" in ok[0].name
    )
    bad, mismatch = lossless_criteria(suite(row("eagle3", 60), row("specblock", 90, lossless=False)))
    assert mismatch == ["specblock @ N=90"] and not bad[0].passed
    with pytest.raises(TypeError, match="SuiteResult"):
        lossless_criteria({})


def drafting(specblock, eagle3):
    seconds = {"specblock@90": specblock, "eagle3@60": eagle3}
    return Timing(names=tuple(seconds), seconds=seconds)


def test_drafting_cost_compares_forwards_and_the_cost_ratios_with_0_6():
    rows = (
        row("specblock", 90, drafter_forwards=2.0, drafting_units=1.2, t_d_ms=5.0),
        row("eagle3", 60, drafter_forwards=7.0, drafting_units=2.0, t_d_ms=1.2),
    )
    s = dataclasses.replace(suite(*rows), drafting=drafting((10.0, 12.0, 9.0), (8.4, 8.0, 10.0)))
    assert median_draft_ms(s.row("specblock", 90)) == 10.0
    forwards, model, cpu = drafting_cost_criteria(s, 90, 60)
    assert forwards.passed and forwards.value == -5.0 and forwards.scale == 7.0
    assert model.passed and model.value == pytest.approx(0.6) and model.threshold == 0.6
    assert model.close  # exactly at the threshold, on the passing side
    assert not cpu.passed and cpu.value == pytest.approx(10.0 / 8.4)  # the median of 1.19, 1.5, 0.9
    assert decide([forwards, model, cpu]).verdict == "partly"


def test_drafting_seconds_are_paired_by_round_not_a_ratio_of_medians():
    rows = (row("specblock", 90), row("eagle3", 60))
    # per round 0.5, 2, 0.5: the paired median is 0.5, the ratio of the medians 3 / 2
    s = dataclasses.replace(suite(*rows), drafting=drafting((1.0, 4.0, 3.0), (2.0, 2.0, 6.0)))
    ratio, low, high = s.drafting_ratio(("specblock", 90), ("eagle3", 60))
    assert ratio == pytest.approx(0.5) and low == pytest.approx(0.5) and high == pytest.approx(1.25)
    assert drafting_cost_criteria(s, 90, 60)[2].passed
    with pytest.raises(ValueError, match="specblock@90 was not timed"):
        drafting_cost_criteria(suite(*rows), 90, 60)


def test_speedup_compares_specblock_with_eagle3_at_the_papers_and_at_equal_budgets():
    s = suite(
        row("specblock", 90, modelled_speedup=2.5),
        row("specblock", 60, modelled_speedup=1.6),
        row("eagle3", 60, modelled_speedup=1.6),
    )
    paper, equal = speedup_criteria(s, 90, 60, 60)
    assert paper.passed and paper.value == pytest.approx(0.9) and paper.scale == 2.5
    assert equal.passed and equal.value == 0 and equal.direction == ">="  # a tie passes "≥"
    assert "(equal N)" in equal.name


def test_path_dependence_reads_tau_and_the_depth_bands():
    depth_sb = (0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.1, 0.0, 0.0)
    depth_md = (0.85, 0.75, 0.6, 0.4, 0.0, 0.0, 0.0, 0.0, 0.0)
    s = suite(
        row("specblock", 60, tau=5.0, per_depth=depth_sb), row("medusa", 60, tau=4.0, per_depth=depth_md)
    )
    shallow, deep = depth_gaps(s, 60)
    assert shallow == pytest.approx(0.05) and deep == pytest.approx((0.2 + 0.5 + 0.4) / 3)
    tau, gap = path_dependence_criteria(s, 60)
    assert tau.passed and tau.value == 1.0 and tau.scale == 5.0
    assert gap.passed and gap.value == pytest.approx(deep - shallow) and gap.scale == pytest.approx(deep)


def slot(name, accuracy, conditional):
    return SlotAccuracy(name, accuracy, conditional, (0.0,) * 4, (100,) * 4)


def test_slot_claims_compare_the_means_of_slots_1_to_3():
    slots = {
        "specblock": slot("specblock", (0.9, 0.8, 0.7, 0.6), (0.9, 0.9, 0.9, 0.9)),
        "specblock-noshift": slot("specblock-noshift", (0.95, 0.8, 0.7, 0.7), (0.95, 0.9, 0.9, 0.9)),
        "specblock-noprefix": slot("specblock-noprefix", (0.9, 0.8, 0.7, 0.6), (0.9, 0.8, 0.8, 0.8)),
    }
    (shift,) = shift_criteria(slots)
    assert (
        not shift.passed
        and shift.value == pytest.approx(0.7 - 2.2 / 3)
        and shift.scale == pytest.approx(2.2 / 3)
    )
    (prefix,) = valid_prefix_criteria(slots)
    assert prefix.passed and prefix.value == pytest.approx(0.1) and prefix.scale == pytest.approx(0.9)
    with pytest.raises(TypeError, match="SlotAccuracy"):
        shift_criteria({"specblock": slots["specblock"]})


def test_ablation_claims_compare_tau_at_the_ablation_budget():
    s = suite(
        row("specblock", 90, tau=6.0),
        row("specblock-1block", 90, tau=4.0),
        row("specblock-norank", 90, tau=6.5),
    )
    (multi,) = multi_block_criteria(s, 90)
    (rank,) = rank_head_criteria(s, 90)
    assert multi.passed and multi.value == 2.0 and multi.scale == 6.0
    assert not rank.passed and rank.value == -0.5 and rank.scale == 6.5


def stream(policy, tau_after, updates, windows=3):
    decisions = tuple(WindowDecision("all" if i < updates else "skip", 0.1) for i in range(windows))
    return StreamResult(
        policy, ("a", "b", "b"), (3.0, tau_after, tau_after), (0.1,) * 3, ((1,),) * 3, decisions
    )


def test_adaptation_criteria_decide_per_seed_and_over_seeds():
    def runs(bandit_tau, bandit_updates):
        return {
            "static": stream("static", 1.0, 0),
            "bandit": stream("bandit", bandit_tau, bandit_updates),
            "every-window": stream("every-window", 2.0, 3),
        }

    tau, updates = adaptation_criteria(runs(1.5, 2))
    assert tau.passed and tau.value == pytest.approx(0.5) and tau.scale == 1.5
    assert updates.passed and updates.value == -1 and updates.scale == 3
    decision = decide_over_seeds(
        {
            4: adaptation_criteria(runs(1.5, 2)),
            5: adaptation_criteria(runs(1.5, 3)),
            6: adaptation_criteria(runs(0.9, 3)),
        }
    )
    assert decision.seed_verdicts == ("reproduced", "partly", "not reproduced")
    assert decision.verdict == "partly" and decision.seeds == (4, 5, 6)
    with pytest.raises(TypeError, match="StreamResult"):
        adaptation_criteria({"static": stream("static", 1.0, 0)})


def test_strict_linear_compares_tau_and_the_cost_model_speedup_with_the_chain():
    s = suite(
        row("specblock", 90, tau=5.9, modelled_speedup=3.0),
        row("specblock-chain", 90, tau=2.0, modelled_speedup=1.6),
    )
    tau, speedup = strict_linear_criteria(s, 90)
    assert tau.passed and tau.value == pytest.approx(3.9) and tau.scale == 5.9
    assert speedup.passed and speedup.value == pytest.approx(1.4)
    # a chain as cheap as it is short can still win on speedup: the verdict is then partly
    cheap = suite(
        row("specblock", 90, tau=5.9, modelled_speedup=1.5),
        row("specblock-chain", 90, tau=2.0, modelled_speedup=1.6),
    )
    assert decide(strict_linear_criteria(cheap, 90)).verdict == "partly"
    with pytest.raises(KeyError, match="specblock-chain"):
        strict_linear_criteria(suite(row("specblock", 90)), 90)
