import numpy as np
import pytest
import torch

from neurips26.sparse_sos.assemble import assemble_sos
from neurips26.sparse_sos.polynomial import polynomial
from neurips26.sparse_sos.solve import SolverError, solve
from neurips26.sparse_sos.svec import clarabel_to_scs, smat, svec
from neurips26.sparse_sos.tasks.chain_quartic import chain_quartic


def test_svec_round_trip_and_inner_product():
    rng = np.random.default_rng(0)
    A, B = (lambda M: M + M.T)(rng.standard_normal((4, 4))), (lambda M: M + M.T)(rng.standard_normal((4, 4)))
    assert np.allclose(smat(svec(A)), A)
    assert np.isclose(svec(A) @ svec(B), np.trace(A @ B))
    # Clarabel: upper triangle by columns; SCS: lower triangle by columns
    M = np.arange(9.0).reshape(3, 3)
    M = M + M.T
    assert np.allclose(svec(M) / np.where([1, 0, 1, 0, 0, 1], 1, np.sqrt(2)), [0, 4, 8, 8, 12, 16])
    scs_order = svec(M)[clarabel_to_scs(3)] / np.where([1, 0, 0, 1, 0, 1], 1, np.sqrt(2))
    assert np.allclose(scs_order, [M[0, 0], M[1, 0], M[2, 0], M[1, 1], M[2, 1], M[2, 2]])
    with pytest.raises(ValueError, match="symmetric"):
        svec(np.arange(4.0).reshape(2, 2))


@pytest.mark.parametrize("n", [3, 5])
def test_certificate_is_feasible_and_tight(n):
    task = chain_quartic(n, seed=n)
    program = task.program()
    solution = solve(program.conic)
    A, b = program.conic.A, program.conic.b
    assert np.abs(A @ solution.x + solution.s - b)[: program.conic.zero].max() < 1e-7
    for Q in program.gram_matrices(solution.x):
        assert np.linalg.eigvalsh(Q).min() >= -1e-8
    assert np.isclose(solution.y[0], 1.0, atol=1e-7)  # y_0 = 1: the moments of a probability measure
    # the certificate holds pointwise: f(x) - γ = Σ_k m_kᵀ Q_k m_k
    gamma = -solution.value
    rng = np.random.default_rng(1)
    x = torch.as_tensor(rng.standard_normal((5, n)))
    total = torch.zeros(5, dtype=torch.float64)
    for block, Q in zip(program.blocks, program.gram_matrices(solution.x), strict=True):
        m = torch.stack([torch.prod(x ** torch.as_tensor(a, dtype=x.dtype), -1) for a in block.basis], -1)
        total += torch.einsum("bi,ij,bj->b", m, torch.as_tensor(Q), m)
    assert torch.allclose(task.polynomial()(x) - gamma, total, atol=1e-6)


def test_clarabel_and_scs_agree_and_sparse_bound_is_below_dense():
    task = chain_quartic(4, seed=0)
    sparse, dense = task.program(), task.program(dense=True)
    g_clarabel = -solve(sparse.conic).value
    g_scs = -solve(sparse.conic, "scs").value
    g_dense = -solve(dense.conic).value
    assert abs(g_clarabel - g_scs) <= 1e-4
    assert g_clarabel <= g_dense + 1e-6
    assert abs(g_clarabel - g_dense) <= 1e-5  # chains: the sparse bound is the dense one


def test_sparse_bound_can_be_strictly_below_dense():
    """A cycle-coupled quartic with the chain's cliques forced on it is rejected; with a chordal extension the
    sparse bound never exceeds the dense one."""
    terms = {
        (4, 0, 0): 1.0,
        (0, 4, 0): 1.0,
        (0, 0, 4): 1.0,
        (1, 1, 0): -1.0,
        (0, 1, 1): -1.0,
        (1, 0, 1): -1.0,
    }
    f = polynomial(3, terms)
    with pytest.raises(ValueError, match="cliques"):
        assemble_sos(f, 2, [(0, 1), (1, 2)])
    g_dense = -solve(assemble_sos(f, 2, [(0, 1, 2)]).conic).value
    g_split = -solve(assemble_sos(f, 2, [(0, 1, 2)], term_sparsity=True).conic).value
    assert g_split <= g_dense + 1e-6


def test_assemble_rejects_bad_order():
    f = polynomial(2, {(4, 0): 1.0, (0, 4): 1.0})
    with pytest.raises(ValueError, match="order"):
        assemble_sos(f, 1, [(0, 1)])
    with pytest.raises(ValueError, match="order"):
        assemble_sos(polynomial(2, {(3, 0): 1.0}), 2, [(0, 1)])


def test_solver_errors_name_the_status_and_the_solver_argument():
    f = polynomial(2, {(4, 0): 1.0, (0, 4): 1.0})
    program = assemble_sos(f, 2, [(0, 1)])
    with pytest.raises(ValueError, match="solver"):
        solve(program.conic, "mosek")
    unbounded = assemble_sos(polynomial(2, {(4, 0): -1.0, (0, 4): 1.0}), 2, [(0, 1)])
    with pytest.raises(SolverError, match="status"):
        solve(unbounded.conic)
