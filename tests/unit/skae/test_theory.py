"""The collapse demo and the basin indicator: the stated properties."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26.skae.systems import square_four_well
from neurips26.skae.theory import DoubleWell, basin_indicator, boundary_jump, collapse_demo


def test_double_well_basins_and_indicator_is_invariant() -> None:
    s = DoubleWell()
    x = torch.linspace(-2, 2, 81, dtype=torch.float64)[:, None]
    x = x[x[:, 0].abs() > 1e-6]
    ind = basin_indicator(s, x, s.attractors)
    np.testing.assert_array_equal(ind[:, 1], (x[:, 0] > 0).numpy().astype(float))
    # 1_B is a Koopman eigenfunction of eigenvalue 1: 1_B(F(x)) = 1_B(x)
    np.testing.assert_array_equal(basin_indicator(s, s.step(x), s.attractors), ind)


def test_indicator_jumps_at_the_boundary() -> None:
    s = DoubleWell()
    jump = boundary_jump(s, [-1.5], [1.2], s.attractors, tol=1e-9, steps=200)
    assert abs(jump.point[0]) < 1e-8 and jump.width <= 1e-9
    assert np.abs(jump.before - jump.after).sum() == 2.0  # a jump of 1 in two coordinates, however close
    with pytest.raises(ValueError, match="different basins"):
        boundary_jump(s, [0.5], [1.5], s.attractors)
    with pytest.raises(ValueError, match="tol"):
        boundary_jump(s, [-1.0], [1.0], s.attractors, tol=0.0)


def test_indicator_on_a_two_dimensional_system() -> None:
    sq = square_four_well()
    wells = np.array(sq.centers)
    ind = basin_indicator(sq, torch.as_tensor(wells), wells, steps=200)
    np.testing.assert_array_equal(ind, np.eye(4))  # a well's centre is in its own basin
    with pytest.raises(ValueError, match="attractors"):
        basin_indicator(sq, torch.as_tensor(wells), wells[:1])
    with pytest.raises(ValueError, match="steps"):
        basin_indicator(sq, torch.as_tensor(wells), wells, steps=0)


@pytest.mark.parametrize("seed", [0, 1])
def test_collapse_demo_continuous_lift_fails_gated_lift_settles(seed: int) -> None:
    r = collapse_demo(seed=seed)
    cont, gated = r["continuous"], r["gated"]
    # both fit one step well ...
    assert cont.fit_rmse < 1e-3 and gated.fit_rmse < 1e-3
    # ... but only the gated (discontinuous) lift sends every start to its own attractor
    assert gated.accuracy == 1.0 and gated.settled >= 0.95
    assert cont.settled <= 0.05 and cont.accuracy <= 0.7
    # continuity: the continuous lift predicts the same long-run state on both sides of the boundary
    assert cont.gap < 1e-3 and gated.gap > 1.5
    assert cont.radius > 1.0  # it has to carry the unstable direction at the boundary


def test_collapse_demo_validation() -> None:
    with pytest.raises(ValueError, match="horizon"):
        collapse_demo(horizon=0)
    with pytest.raises(ValueError, match="atoms"):
        collapse_demo(atoms=1)
