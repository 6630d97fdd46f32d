"""Tests of the scores: rel-L2 is burgers' one, ‖R‖ vanishes on HF solutions, mismatch only sees sensors."""

import pytest
import torch

from neurips26.picsb import burgers, metrics
from neurips26.picsb.burgers import initial_conditions, low_fidelity, solve
from neurips26.picsb.energy import project
from neurips26.picsb.observations import ObservationConfig, make_masks, observe


def _case(n=3, seed=0):
    u0 = initial_conditions(n, seed=seed)
    hf, x1 = solve(u0), low_fidelity(u0)
    mask = make_masks(n, 32, 64, ObservationConfig(), seed=seed)
    return hf, x1, mask, observe(hf, mask)


def test_relative_l2_is_the_single_definition_from_burgers():
    assert metrics.relative_l2 is burgers.relative_l2
    hf, x1, _, _ = _case()
    assert metrics.relative_l2(hf, hf).abs().max().item() == 0.0
    torch.testing.assert_close(metrics.relative_l2(2.0 * hf, hf), torch.ones(3, dtype=torch.float64))


def test_residual_norm_is_zero_on_hf_and_constants_and_positive_on_lf():
    hf, x1, _, _ = _case()
    assert metrics.residual_norm(hf).shape == (3,)
    assert metrics.residual_norm(hf).max().item() < 1e-12
    assert metrics.residual_norm(torch.full((2, 32, 64), 0.7, dtype=torch.float64)).max().item() < 1e-14
    lf = metrics.residual_norm(x1)
    assert (lf > 1e-3).all()
    torch.testing.assert_close(lf, burgers.residual(x1).flatten(1).norm(dim=1))


def test_sensor_mismatch_sees_only_the_sensors_and_is_zero_after_projection():
    hf, x1, mask, y = _case()
    assert metrics.sensor_mismatch(hf, y, mask).abs().max().item() == 0.0
    assert metrics.sensor_mismatch(project(x1, mask, y), y, mask).abs().max().item() == 0.0
    off = torch.where(mask, hf, hf + 5.0)  # change only the unobserved sites
    assert metrics.sensor_mismatch(off, y, mask).max().item() == 0.0
    bumped = hf.clone()
    site = mask[1].nonzero()[0]
    bumped[1, site[0], site[1]] += 0.25
    torch.testing.assert_close(
        metrics.sensor_mismatch(bumped, y, mask), torch.tensor([0.0, 0.25, 0.0], dtype=torch.float64)
    )


def test_cost_adds_stages_and_timed_measures():
    c = metrics.RunCost(nfe=5, seconds=2.0, cases=4) + metrics.RunCost(nfe=3, seconds=1.0, cases=4)
    assert (c.nfe, c.seconds, c.cases, c.per_case) == (8, 3.0, 4, 0.75)
    result, cost = metrics.timed(lambda: 41 + 1, nfe=7, cases=2)
    assert result == 42 and cost.nfe == 7 and cost.cases == 2 and cost.seconds >= 0.0


def test_bad_inputs_name_the_argument():
    hf, x1, mask, y = _case()
    with pytest.raises(ValueError, match="nfe"):
        metrics.RunCost(nfe=-1, seconds=1.0)
    with pytest.raises(ValueError, match="seconds"):
        metrics.RunCost(nfe=1, seconds=-1.0)
    with pytest.raises(ValueError, match="cases"):
        metrics.RunCost(nfe=1, seconds=1.0, cases=0)
    with pytest.raises(ValueError, match="other"):
        metrics.RunCost(1, 1.0, cases=2) + metrics.RunCost(1, 1.0, cases=3)
    with pytest.raises(ValueError, match="mask"):
        metrics.sensor_mismatch(hf, y, mask[:, :-1])
    with pytest.raises(TypeError, match="mask"):
        metrics.sensor_mismatch(hf, y, mask.double())
    with pytest.raises(ValueError, match="y"):
        metrics.sensor_mismatch(hf, y[:2], mask)
    with pytest.raises(ValueError, match="u must have shape"):
        metrics.residual_norm(hf[:, :, :32])
    with pytest.raises(ValueError, match="estimate and truth"):
        metrics.relative_l2(hf, hf[:2])
    with pytest.raises(ValueError, match="nfe"):
        metrics.timed(lambda: None, nfe=-2)
