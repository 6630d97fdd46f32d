import numpy as np
import pytest
import torch

from neurips26.sparse_sos.backward import danskin
from neurips26.sparse_sos.solve import solve
from neurips26.sparse_sos.sparsity import has_running_intersection
from neurips26.sparse_sos.tasks.maxcut import (
    brute_force_maxcut,
    graph_edges,
    maxcut,
    maxcut_instance,
    node_cliques,
    shor_program,
)
from tests.unit.sparse_sos.test_task_checks import (
    assert_data_reproduces,
    directional_errors,
    relative_error,
    task_loss,
    task_value,
)


@pytest.mark.parametrize("kind,n", [("cycle", 7), ("ladder", 8), ("grid", 9)])
def test_data_round_trip_and_chordal_cover(kind, n):
    inst = maxcut_instance(n, 0, "sparse", graph=kind)
    assert_data_reproduces(inst)
    cliques = node_cliques(n, graph_edges(kind, n))
    assert has_running_intersection(cliques)
    covered = {frozenset((a, b)) for c in cliques for a in c for b in c if a != b}
    assert all(frozenset(e) in covered for e in graph_edges(kind, n))
    assert inst.multi_block and len(maxcut_instance(n, 0, "dense", graph=kind).program.psd) == 1


def test_odd_cycle_value_matches_the_closed_form_and_bounds_brute_force():
    # unit weights on C_5: Shor's bound n/2 (1 + cos(π/n)); the true max cut is 4
    inst = maxcut_instance(5, 0, "sparse", graph="cycle")
    value = -solve(inst.program.with_data(q=inst.data(torch.ones(5)).q.numpy())).value
    assert value == pytest.approx(2.5 * (1 + np.cos(np.pi / 5)), abs=1e-6)
    assert brute_force_maxcut(5, maxcut(5, graph="cycle").edges, np.ones(5)) == 4.0
    # signed weights: relaxation ≥ brute force
    task = maxcut(8, 3, graph="cycle")
    inst = maxcut_instance(8, 3, "dense", graph="cycle")
    assert -solve(inst.program).value >= brute_force_maxcut(8, task.edges, task.theta0.numpy()) - 1e-7


@pytest.mark.parametrize("kind,n", [("cycle", 10), ("ladder", 10), ("grid", 12)])
def test_sparse_value_equals_dense_on_the_chordal_extension(kind, n):
    sparse = -solve(maxcut_instance(n, 1, "sparse", graph=kind).program).value
    dense = -solve(maxcut_instance(n, 1, "dense", graph=kind).program).value
    assert abs(sparse - dense) <= 1e-5


def test_value_gradient_is_one_minus_x_over_two_and_matches_finite_differences():
    task = maxcut(9, 0, graph="grid")
    inst = maxcut_instance(9, 0, "sparse", graph="grid")
    theta = inst.theta0.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(task_value(inst, theta), theta)
    shor = task.program()
    x = torch.as_tensor(solve(inst.program).x)
    expected = (1 - shor.entries_of(x, task.edges)) / 2
    np.testing.assert_allclose(grad.numpy(), expected.numpy(), atol=1e-9)
    # Danskin's dq is x*: the same numbers without autograd
    assert danskin(inst.program, solve(inst.program)).dq.shape == (inst.program.shape[1],)
    # measured: relative error ≤ 2e-4 (the solver's x* is accurate to ~1e-4 at its 1e-8 gap)
    assert relative_error(directional_errors(inst, task_value)) <= 1e-3


def test_danskin_error_is_the_solvers_accuracy():
    # the same check at Clarabel gap 1e-10: the error drops from 1.9e-4 to 4.5e-6 (measured)
    inst = maxcut_instance(6, 0, "sparse", graph="cycle")
    v = torch.as_tensor(np.random.default_rng(0).standard_normal(6))
    v = v / v.norm()

    def solved(theta):
        program = inst.program.with_data(q=inst.data(theta).q.numpy())
        return program, solve(program, tolerance=1e-10)

    program, solution = solved(inst.theta0)
    grad = inst.value_sign * float(danskin(program, solution).dq @ inst.data(v).q.numpy())
    h = 1e-3
    fd = (
        inst.value_sign
        * (solved(inst.theta0 + h * v)[1].value - solved(inst.theta0 - h * v)[1].value)
        / (2 * h)
    )
    assert relative_error((grad, fd)) <= 2e-5


@pytest.mark.parametrize("formulation", ["sparse", "dense"])
def test_structured_loss_gradient_matches_finite_differences(formulation):
    inst = maxcut_instance(6, 0, formulation, graph="cycle")
    # measured 8.4e-4 (sparse and dense): X* has rank 2 here and the solver's X* is accurate to ~1e-4
    assert relative_error(directional_errors(inst, task_loss)) <= 5e-3


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="n must be a multiple of 3"):
        graph_edges("grid", 10)
    with pytest.raises(ValueError, match="kind"):
        graph_edges("star", 10)
    with pytest.raises(ValueError, match="formulation"):
        maxcut_instance(6, 0, "medium")
    with pytest.raises(ValueError, match="theta"):
        maxcut_instance(6, graph="cycle").data(torch.ones(3))
    with pytest.raises(ValueError, match="cliques"):
        shor_program(4, 1, ((0, 1), (1, 2)))
    with pytest.raises(ValueError, match="entries"):
        maxcut(6, graph="cycle").program().entry_map([(0, 3)])
