import numpy as np
import pytest
import torch

from neurips26.sparse_sos.baselines.sdpr_rank_one import kkt_residual, multipliers, rank_one_gradient
from neurips26.sparse_sos.layer import conic_solution
from neurips26.sparse_sos.solve import solve
from neurips26.sparse_sos.tasks.maxcut import node_cliques, shor_program
from neurips26.sparse_sos.tasks.pose_sync import cycle_rotations, pose_graph, pose_sync_instance


def _setup(n: int, seed: int):
    graph = pose_graph(n, seed)
    shor = shor_program(n, 2, node_cliques(n, graph.edges))
    inst = pose_sync_instance(n, seed, "sparse")
    truth = graph.truth_rotations()

    def loss(rotations: torch.Tensor) -> torch.Tensor:
        return ((rotations - truth) ** 2).sum()

    return graph, shor, inst, loss


def test_kkt_holds_at_the_relaxation_and_the_certificate_is_psd():
    graph, shor, inst, loss = _setup(10, 0)
    rotations = cycle_rotations(shor, torch.as_tensor(solve(inst.program).x))
    out = rank_one_gradient(graph, graph.theta0, rotations, loss)
    assert out.residual_start <= 1e-3  # the solver's accuracy
    assert out.residual <= 1e-10  # Newton polish
    assert out.certificate_min_eig >= -1e-8  # C − Λ ⪰ 0: the relaxation is tight
    np.testing.assert_allclose(out.rotations.numpy(), rotations.numpy(), atol=1e-3)
    L = multipliers(graph, out.rotations, graph.theta0)
    np.testing.assert_allclose(L.numpy(), L.transpose(1, 2).numpy())


def test_rank_one_gradient_matches_finite_differences_and_the_structured_gradient():
    graph, shor, inst, loss = _setup(10, 0)
    rotations = cycle_rotations(shor, torch.as_tensor(solve(inst.program).x))
    out = rank_one_gradient(graph, graph.theta0, rotations, loss)
    # central FD of the QCQP solution map (Newton-polished rotations), h = 1e-4
    v = torch.as_tensor(np.random.default_rng(0).standard_normal(len(graph.edges)))
    v = v / v.norm()

    def polished_loss(theta):
        return float(loss(rank_one_gradient(graph, theta, out.rotations, loss).rotations))

    h = 1e-4
    fd = (polished_loss(graph.theta0 + h * v) - polished_loss(graph.theta0 - h * v)) / (2 * h)
    assert float(out.grad @ v) == pytest.approx(fd, rel=1e-6)
    # the structured adjoint through the sparse SDP agrees to the solver's accuracy (measured 2e-4)
    theta = graph.theta0.clone().requires_grad_(True)
    x, y, s = conic_solution(inst.program, **inst.data(theta)._asdict())
    (structured,) = torch.autograd.grad(inst.solution_loss(x, y, s), theta)
    assert torch.linalg.norm(structured - out.grad) <= 5e-3 * torch.linalg.norm(out.grad)


def test_bad_input_names_the_argument():
    graph, _, _, loss = _setup(6, 0)
    with pytest.raises(ValueError, match="theta"):
        rank_one_gradient(graph, torch.zeros(2), torch.zeros(6, 2, 2), loss)
    with pytest.raises(ValueError, match="rotations"):
        rank_one_gradient(graph, graph.theta0, torch.zeros(5, 2, 2), loss)
    assert kkt_residual(graph, torch.zeros(7 * 5, dtype=torch.float64), graph.theta0).shape == (35,)
