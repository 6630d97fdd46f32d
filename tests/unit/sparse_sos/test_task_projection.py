import numpy as np
import pytest
import torch

from neurips26.sparse_sos.solve import solve
from neurips26.sparse_sos.tasks.projection import (
    grid_projection,
    projection_estimate,
    projection_instance,
    projection_program,
)
from tests.unit.sparse_sos.test_task_checks import (
    assert_data_reproduces,
    directional_errors,
    relative_error,
    task_loss,
    task_value,
)


@pytest.mark.parametrize("seed", [0, 1])
def test_projection_matches_the_grid_minimiser(seed):
    inst = projection_instance(2, seed, "sparse")
    assert_data_reproduces(inst)
    solution = solve(inst.program)
    x_grid, d_grid = grid_projection(inst.theta0.numpy(), step=2e-3)
    assert -solution.value == pytest.approx(d_grid, abs=2e-4)  # the grid's own resolution
    x_hat = projection_estimate(projection_program(inst.theta0, 2), solution.y)
    assert np.linalg.norm(x_hat - x_grid) <= 1e-2


def test_gradients_match_finite_differences():
    inst = projection_instance(2, 0, "sparse")
    # measured: Danskin 6.8e-5, structured 3.8e-4
    assert relative_error(directional_errors(inst, task_value)) <= 1e-3
    assert relative_error(directional_errors(inst, task_loss)) <= 3e-3


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="theta"):
        projection_instance(2).data(torch.ones(3))
    with pytest.raises(ValueError, match="order"):
        projection_program(torch.zeros(2), 1)
    with pytest.raises(ValueError, match="formulation"):
        projection_instance(2, 0, "full")
