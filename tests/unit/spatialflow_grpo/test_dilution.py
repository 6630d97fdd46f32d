"""dilution: the simulated correlation of scalar and region advantages matches 1/√K."""

from __future__ import annotations

import math

import pytest

from neurips26.spatialflow_grpo.dilution import dilution_toy, expected_correlation


@pytest.mark.parametrize("k", [1, 2, 3, 6])
def test_correlation_and_sign_agreement_match_the_theory(k):
    r = dilution_toy(k, groups=128, replicates=10, seed=k)
    assert r.theory == pytest.approx(1 / math.sqrt(k))
    if k == 1:
        assert r.correlation == pytest.approx(1.0) and r.sign_agreement == pytest.approx(1.0)
        return
    assert abs(r.correlation - r.expected) < 4 * r.correlation_se + 0.005
    assert r.expected < r.theory  # finite groups bias the sample correlation towards 0
    assert abs(r.sign_agreement - r.theory_sign) < 4 * r.sign_agreement_se + 0.01


def test_the_expected_correlation_tends_to_one_over_root_k_for_large_groups():
    assert expected_correlation(3, 8) == pytest.approx(0.5484, abs=1e-4)
    assert expected_correlation(3, 10_000) == pytest.approx(1 / math.sqrt(3), abs=1e-4)
    assert expected_correlation(1, 8) == 1.0


def test_seeded_and_bad_inputs_name_the_argument():
    assert dilution_toy(3, groups=16, replicates=3, seed=1) == dilution_toy(
        3, groups=16, replicates=3, seed=1
    )
    with pytest.raises(ValueError, match="regions"):
        dilution_toy(0)
    with pytest.raises(ValueError, match="group_size"):
        dilution_toy(2, group_size=1)
