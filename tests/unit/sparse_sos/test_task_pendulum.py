import numpy as np
import pytest
import torch

from neurips26.sparse_sos.solve import solve
from neurips26.sparse_sos.tasks.pendulum import pendulum_instance, pendulum_program
from tests.unit.sparse_sos.test_task_checks import (
    assert_data_reproduces,
    directional_errors,
    relative_error,
    task_loss,
    task_value,
)


@pytest.mark.parametrize("degree", [2, 4])
def test_sign_symmetry_split_keeps_the_value(degree):
    sparse = pendulum_instance(degree, 0, "sparse")
    dense = pendulum_instance(degree, 0, "dense")
    assert_data_reproduces(sparse)
    assert_data_reproduces(dense)
    assert len(sparse.program.psd) > len(dense.program.psd)
    assert abs(solve(sparse.program).value - solve(dense.program).value) <= 1e-6


def test_quadratic_certificate_margin_matches_the_linearisation():
    # V = xᵀPx certifies V̇ ≤ −ρ‖x‖² on the disc; near the origin only the linear part matters, so ρ* is at
    # most the best margin of the linearisation: max over tr P = 1 of λ_min(−(AᵀP + PA)) (a grid over P)
    inst = pendulum_instance(2, 0, "sparse")
    rho = -solve(inst.program).value
    k1, k2 = 1.0 + inst.theta0.numpy()[0], 0.2 + inst.theta0.numpy()[1]
    A = np.array([[0.0, 1.0], [-k1, -k2]])
    best = -np.inf
    for p11 in np.linspace(0.01, 0.99, 99):
        for p12 in np.linspace(-0.5, 0.5, 101):
            P = np.array([[p11, p12], [p12, 1 - p11]])
            if np.linalg.eigvalsh(P).min() > 1e-3:
                best = max(best, np.linalg.eigvalsh(-(A.T @ P + P @ A)).min())
    assert 0 < rho <= best + 1e-6


def test_value_gradient_matches_finite_differences():
    # measured 1.4e-5 (degree 2), 1.8e-7 (degree 4 and 6)
    for degree in (2, 4):
        assert relative_error(directional_errors(pendulum_instance(degree, 0), task_value)) <= 1e-4


@pytest.mark.parametrize("degree", [2, 4, 6])
def test_structured_gradient_of_the_local_lyapunov_matrix_matches_finite_differences(degree):
    # measured ‖P‖²_F loss: 1.9e-5 (degree 2), 9e-8 (degrees 4, 6); a loss on the quartic coefficients has
    # no derivative (they are not unique: measured 0.6–0.9 relative error)
    assert relative_error(directional_errors(pendulum_instance(degree, 0), task_loss)) <= 1e-3


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="degree"):
        pendulum_program(3, np.ones(2))
    with pytest.raises(ValueError, match="radius"):
        pendulum_program(2, np.ones(2), radius=0.0)
    with pytest.raises(ValueError, match="theta"):
        pendulum_instance(2).data(torch.ones(3))
    with pytest.raises(ValueError, match="formulation"):
        pendulum_instance(2, 0, "full")
