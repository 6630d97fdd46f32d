"""The experiments at smoke scale: every method lossless, shapes and accounting sane, bad configs."""

import dataclasses

import numpy as np
import pytest

from neurips26.specblock.cost_model import drafter_cost, target_parameters
from neurips26.specblock.experiments import (
    METHODS,
    SPECBLOCK_VARIANTS,
    SuiteConfig,
    decode_suite,
    make_proposer,
    per_depth_acceptance,
    run_claims,
)
from neurips26.specblock.metrics import EPSILON, modelled_speedup
from neurips26.specblock.prepare import PrepareConfig, pretrained, target_for
from tests.unit.specblock.tiny import isolated_cache


@pytest.fixture(scope="module")
def claims(tmp_path_factory):
    with isolated_cache(tmp_path_factory.mktemp("cache")):
        yield run_claims("smoke", verbose=False)


def test_every_method_is_lossless_with_sane_accounting(claims):
    suite = claims.suite
    config = SuiteConfig.for_scale("smoke")
    assert config.prompts == 4 and config.new_tokens == 16 and len(config.budgets) == 1
    assert {r.method for r in suite.rows} == set(METHODS)
    vanilla = suite.row("vanilla", 30)
    assert len(vanilla.tokens) == 4 and all(0 < len(t) <= 16 for t in vanilla.tokens)
    for row in suite.rows:
        assert row.lossless and row.tokens == vanilla.tokens, row.method
        if row.method == "vanilla":
            continue
        assert row.budget == 30 and 1.0 <= row.tau <= 1 + row.tree_nodes
        assert row.tree_nodes <= 30 and row.drafter_ms >= 0 and row.t_d_ms >= 0
        depth = np.asarray(row.per_depth)
        assert np.all(np.diff(depth) <= 1e-12) and np.all((depth >= 0) & (depth <= 1))
        assert row.modelled_speedup > 0
    assert suite.row("eagle3", 30).drafter_forwards <= 7
    assert suite.row("medusa", 30).drafter_forwards == 1
    assert suite.row("specblock", 30).drafter_forwards <= 2
    assert set(suite.t_t_ms) == {0, 30} and all(v > 0 for v in suite.t_t_ms.values())
    assert np.isfinite(suite.measured_speedup("specblock", 30))
    assert np.isnan(suite.row("specblock-noshift", 30).seconds)  # ablations are not timed
    assert np.isnan(suite.measured_speedup("specblock-noshift", 30))
    # vanilla and the timed methods were timed side by side: seconds are medians, speedups paired ratios
    timing = suite.timing
    assert set(timing.names) == {"vanilla", "eagle3@30", "medusa@30", "specblock@30"}
    assert timing.rounds == config.repeats and timing.warmup == 1 and timing.threads == 1
    assert suite.vanilla_seconds == vanilla.seconds == timing.median("vanilla")
    assert suite.row("medusa", 30).seconds == timing.median("medusa@30")
    assert suite.measured_speedup("specblock", 30) == timing.ratio("vanilla", "specblock@30")
    low, high = suite.measured_speedup_spread("specblock", 30)
    assert low <= suite.measured_speedup("specblock", 30) <= high
    table = per_depth_acceptance(suite, 30)
    assert set(table) == set(METHODS) - {"vanilla"}
    with pytest.raises(ValueError, match="budget"):
        per_depth_acceptance(suite, 45)


def test_speedups_follow_the_cost_model_and_the_cpu_latency_model(claims):
    suite = claims.suite
    config = suite.config
    target = target_for(PrepareConfig.for_scale("smoke"))
    drafters = {n: pretrained(n, "smoke", verbose=False) for n in ("eagle3", "medusa", "specblock")}
    for method in ("eagle3", "medusa", "specblock", "specblock-norank"):
        row = suite.row(method, 30)
        cost = drafter_cost(make_proposer(method, drafters, config))
        units = cost.units(row.drafter_forwards, target_parameters(target), epsilon=EPSILON)
        assert row.drafting_units == pytest.approx(units)
        assert row.modelled_speedup == pytest.approx(
            row.tau / (1 + EPSILON * row.tree_nodes + row.drafting_units)
        )
        cpu = modelled_speedup(
            row.tau, suite.t_t_ms[0], row.t_d_ms, row.tree_nodes, row.drafter_forwards, epsilon=EPSILON
        )
        assert row.cpu_modelled_speedup == pytest.approx(cpu)
    # the rank head is read only when it is used: same drafter, fewer parameters per forward without it
    with_rank = drafter_cost(make_proposer("specblock", drafters, config))
    without = drafter_cost(make_proposer("specblock-norank", drafters, config))
    assert without.per_forward < with_rank.per_forward and without.setup == with_rank.setup
    vanilla = suite.row("vanilla", 30)
    assert vanilla.drafting_units == 0 and vanilla.modelled_speedup == vanilla.cpu_modelled_speedup == 1.0


def test_slot_accuracy_is_reported_per_variant_and_slot(claims):
    assert set(claims.slots) == set(SPECBLOCK_VARIANTS)
    for acc in claims.slots.values():
        assert len(acc.accuracy) == len(acc.conditional) == 4
        assert acc.conditional[0] == pytest.approx(acc.accuracy[0])
        assert all(0.0 <= a <= 1.0 for a in acc.accuracy + acc.conditional)
        assert acc.positions[0] > 0


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"prompts": 0}, ValueError, "prompts"),
        ({"budgets": (30, 0)}, ValueError, "budgets"),
        ({"budgets": 30}, TypeError, "budgets"),
        ({"methods": ("vanilla", "lookahead")}, ValueError, "methods"),
        ({"rank_budgets": (2, 4, 10)}, ValueError, "rank_budgets"),
        ({"seed": 1}, ValueError, "seed"),
        ({"timing_prompts": 20}, ValueError, "timing_prompts"),
        ({"scale": "huge"}, ValueError, "scale"),
        ({"domains": ("code", "poetry")}, ValueError, "domains"),
    ],
)
def test_suite_config_rejects_bad_values_naming_the_field(kwargs, error, name):
    with pytest.raises(error, match=name):
        dataclasses.replace(SuiteConfig(), **kwargs)


def test_bad_arguments_are_rejected():
    with pytest.raises(TypeError, match="config"):
        decode_suite("smoke")
    with pytest.raises(ValueError, match="scale"):
        run_claims("huge")
