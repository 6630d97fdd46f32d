import numpy as np
import pytest
import torch

from neurips26.sparse_sos.solve import solve
from neurips26.sparse_sos.tasks.maxcut import node_cliques, shor_program
from neurips26.sparse_sos.tasks.pose_sync import cycle_rotations, pose_graph, pose_sync_instance, rotation
from tests.unit.sparse_sos.test_task_checks import (
    assert_data_reproduces,
    directional_errors,
    relative_error,
    task_loss,
    task_value,
)


def test_data_round_trip_and_blocks():
    inst = pose_sync_instance(10, 0, "sparse")
    assert_data_reproduces(inst)
    assert inst.multi_block and max(inst.program.psd) == 6
    assert pose_sync_instance(10, 0, "dense").program.psd == (20,)


@pytest.mark.parametrize("formulation", ["sparse", "dense"])
def test_noiseless_measurements_give_back_the_ground_truth(formulation):
    graph = pose_graph(8, 0, noise=0.0)
    shor = shor_program(8, 2, node_cliques(8, graph.edges, dense=formulation == "dense"))
    M = torch.as_tensor(shor.objective_matrix(graph.block_entries()))
    solution = solve(shor.conic.with_data(q=(M @ (-2 * rotation(graph.theta0).reshape(-1))).numpy()))
    assert solution.value == pytest.approx(-4 * len(graph.edges), abs=1e-5)  # every ⟨R̃, X_ij⟩ = 2
    rotations = cycle_rotations(shor, torch.as_tensor(solution.x))
    np.testing.assert_allclose(rotations.numpy(), graph.truth_rotations().numpy(), atol=1e-6)


def test_sparse_value_equals_dense():
    sparse = solve(pose_sync_instance(12, 1, "sparse").program).value
    dense = solve(pose_sync_instance(12, 1, "dense").program).value
    assert abs(sparse - dense) <= 1e-5


def test_gradients_match_finite_differences():
    inst = pose_sync_instance(15, 0, "sparse")
    # measured: Danskin 5.6e-4, structured 5.3e-4 (x* accurate to ~1e-4 at the solver's gap)
    assert relative_error(directional_errors(inst, task_value)) <= 3e-3
    assert relative_error(directional_errors(inst, task_loss)) <= 3e-3


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="n"):
        pose_graph(40)
    with pytest.raises(ValueError, match="noise"):
        pose_graph(6, noise=-1.0)
    with pytest.raises(ValueError, match="theta"):
        pose_sync_instance(6).data(torch.ones(2))
    with pytest.raises(ValueError, match="formulation"):
        pose_sync_instance(6, 0, "full")
