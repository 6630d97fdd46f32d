"""The amplitude refit on the model: its Jacobian matches central differences, it never raises the target
residual and it stays inside the energy ball."""

import numpy as np
import pytest

from neurips26.sparse_control.driver_omp import Control
from neurips26.sparse_control.evaluation import readout_at
from neurips26.sparse_control.refit import gauss_newton_refit, readout_and_jacobian


def test_jacobian_matches_central_differences(model64, nodes, ioi):
    control = Control(np.array([5, 300, 700]), np.array([0.3, -0.2, 0.1]), 0.0, "c")
    a = control.amplitudes
    y, J = readout_and_jacobian(model64, nodes, control, ioi, a)
    np.testing.assert_allclose(y, readout_at(model64, nodes, control, ioi), atol=1e-10)
    h = 1e-5
    for j in range(3):
        e = np.zeros(3)
        e[j] = h
        up, _ = readout_and_jacobian(model64, nodes, control, ioi, a + e)
        down, _ = readout_and_jacobian(model64, nodes, control, ioi, a - e)
        np.testing.assert_allclose(J[:, j], (up - down) / (2 * h), atol=1e-6)


@pytest.mark.parametrize("energy", [0.5, 4.0])
def test_refit_lowers_the_residual_inside_the_ball(model64, nodes, ioi, energy):
    control = Control(np.array([5, 300, 700]), np.array([0.3, -0.2, 0.1]), 0.0, "c")
    y0 = readout_at(model64, nodes, control, ioi, 0.0)
    start = control.scaled(min(1.0, energy / np.linalg.norm(control.amplitudes)))
    before = np.linalg.norm(readout_at(model64, nodes, start, ioi) - 1.0)
    fitted = gauss_newton_refit(model64, nodes, control, ioi, 1.0, energy=energy)
    after = np.linalg.norm(readout_at(model64, nodes, fitted, ioi) - 1.0)
    assert np.linalg.norm(fitted.amplitudes) <= energy * (1 + 1e-9)
    assert after <= before + 1e-12
    assert fitted.residual == pytest.approx(after / np.linalg.norm(y0 - 1.0))
    assert fitted.nodes.tolist() == control.nodes.tolist()
    with pytest.raises(ValueError, match="energy"):
        gauss_newton_refit(model64, nodes, control, ioi, 1.0, energy=0.0)
