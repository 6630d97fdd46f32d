import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from neurips26.sparse_sos.backward import (
    ComplementarityWarning,
    danskin,
    structured_adjoint,
    structured_derivative,
)
from neurips26.sparse_sos.conic import BlockConicProgram, ConicSolution
from neurips26.sparse_sos.cost_model import BackwardCost, danskin_flops, structured_flops
from neurips26.sparse_sos.layer import SparseSOSLayer, sos_bound
from neurips26.sparse_sos.psd import PSDProjectionDerivative, project_psd
from neurips26.sparse_sos.solve import solve
from neurips26.sparse_sos.svec import svec, svec_dim
from neurips26.sparse_sos.tasks.chain_quartic import chain_quartic


def _sym(rng, s):
    M = rng.standard_normal((s, s))
    return M + M.T


def random_sdp(seed: int = 0, s: int = 5, m_eq: int = 6) -> BlockConicProgram:
    """``min ⟨C, X⟩ s.t. ⟨A_i, X⟩ = b_i, X ⪰ 0``, generic data: a unique, strictly complementary solution."""
    rng = np.random.default_rng(seed)
    rows = np.array([svec(_sym(rng, s)) for _ in range(m_eq)])
    G = rng.standard_normal((s, s))
    b_eq = rows @ svec(G @ G.T)
    H = rng.standard_normal((s, s))
    A = sp.vstack([sp.csr_matrix(rows), -sp.identity(svec_dim(s))]).tocsc()
    b = np.concatenate([b_eq, np.zeros(svec_dim(s))])
    return BlockConicProgram(A, b, svec(H @ H.T), m_eq, 0, (s,))


def test_psd_projection_derivative_matches_finite_differences():
    rng = np.random.default_rng(0)
    X, H = _sym(rng, 5), _sym(rng, 5)
    D = PSDProjectionDerivative(X)
    h = 1e-6
    fd = (project_psd(X + h * H) - project_psd(X - h * H)) / (2 * h)
    assert np.abs(D.matrix_apply(H) - fd).max() < 1e-6
    # self-adjoint in svec coordinates, and the dense matrix is the same map
    u, v = svec(_sym(rng, 5)), svec(_sym(rng, 5))
    assert np.isclose(D.apply(u) @ v, u @ D.apply(v))
    assert np.allclose(D.dense() @ u, D.apply(u))
    with pytest.raises(ValueError, match="psd must be symmetric"):
        project_psd(np.arange(4.0).reshape(2, 2))


@pytest.mark.parametrize("seed", [0, 1])
def test_adjoint_is_the_transpose_of_the_derivative(seed):
    program = random_sdp(seed)
    solution = solve(program)
    rng = np.random.default_rng(10 + seed)
    dA, db, dq = (
        rng.standard_normal(program.A.nnz),
        rng.standard_normal(program.b.size),
        rng.standard_normal(program.q.size),
    )
    wx, wy, ws = (rng.standard_normal(v.size) for v in (solution.x, solution.y, solution.s))
    jx, jy, js = structured_derivative(program, solution, dA, db, dq)
    g = structured_adjoint(program, solution, wx, wy, ws)
    left = jx @ wx + jy @ wy + js @ ws
    right = g.dA @ dA + g.db @ db + g.dq @ dq
    assert abs(left - right) <= 1e-6 * max(1.0, abs(left))


def test_adjoint_matches_finite_differences_and_the_dense_reference():
    program = random_sdp(0)
    solution = solve(program)
    rng = np.random.default_rng(3)
    wx, wy, ws = (rng.standard_normal(v.size) for v in (solution.x, solution.y, solution.s))
    g = structured_adjoint(program, solution, wx, wy, ws)
    g_dense = structured_adjoint(program, solution, wx, wy, ws, method="dense")
    assert np.allclose(g.db, g_dense.db, atol=1e-8) and np.allclose(g.dA, g_dense.dA, atol=1e-8)

    def loss(p):
        sol = solve(p)
        return wx @ sol.x + wy @ sol.y + ws @ sol.s

    h = 1e-4
    for k in (0, 4):
        up, down = program.b.copy(), program.b.copy()
        up[k] += h
        down[k] -= h
        fd = (loss(program.with_data(b=up)) - loss(program.with_data(b=down))) / (2 * h)
        assert abs(g.db[k] - fd) <= 1e-4 * max(1.0, abs(fd))


def test_danskin_matches_finite_differences_and_is_solver_invariant():
    task = chain_quartic(5, seed=2)
    program = task.program()
    theta = task.theta0.clone().requires_grad_(True)
    gamma = sos_bound(program, task.coefficients(theta))
    gamma.backward()
    h = 1e-3  # Clarabel at gap 1e-8: central differences with h = 1e-3 have error O(h²) + O(1e-8 / h)
    for k in (0, 7, 20):
        up, down = task.theta0.clone(), task.theta0.clone()
        up[k] += h
        down[k] -= h
        fd = (sos_bound(program, task.coefficients(up)) - sos_bound(program, task.coefficients(down))) / (
            2 * h
        )
        assert abs(theta.grad[k].item() - fd.item()) <= 1e-4 * max(1.0, abs(fd.item()))
    theta_scs = task.theta0.clone().requires_grad_(True)
    sos_bound(program, task.coefficients(theta_scs), solver="scs").backward()
    assert torch.allclose(theta.grad, theta_scs.grad, atol=2e-3)


def test_layer_gamma_gradient_agrees_between_paths():
    task = chain_quartic(4, seed=1)
    layer = SparseSOSLayer(task.program())
    c = task.coefficients(task.theta0).clone().requires_grad_(True)
    layer.bound(c).backward()
    danskin_grad = c.grad.clone()
    c.grad = None
    out = layer(c)
    out.gamma.backward()
    assert torch.allclose(out.gamma, -torch.as_tensor(solve(task.program().conic).value, dtype=torch.float64))
    assert (c.grad - danskin_grad).abs().max() < 1e-4  # structured adjoint at Clarabel's 1e-8 accuracy
    assert len(out.gram) == 3 and all(q.shape == (6, 6) for q in out.gram)


def test_danskin_gradient_of_the_value_is_the_data_identity():
    program = random_sdp(1)
    solution = solve(program)
    g = danskin(program, solution)
    assert np.allclose(g.dq, solution.x) and np.allclose(g.db, -solution.y)


def test_complementarity_failure_warns():
    """Where y − s is singular on a PSD block (here: both zero) the adjoint warns and regularises."""
    program = random_sdp(0)
    solution = solve(program)
    degenerate = ConicSolution(
        solution.x, np.zeros_like(solution.s), np.zeros_like(solution.y), 0.0, "test", "Solved", 0, 0.0
    )
    rng = np.random.default_rng(0)
    wx = rng.standard_normal(solution.x.size)
    with pytest.warns(ComplementarityWarning, match="strict complementarity"):
        g = structured_adjoint(program, degenerate, wx, np.zeros(solution.y.size), np.zeros(solution.s.size))
    assert g.regularised and np.all(np.isfinite(g.db))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not structured_adjoint(program, solution, wx, 0 * solution.y, 0 * solution.s).regularised


def test_cost_model_on_a_hand_counted_two_block_toy():
    # blocks 2 and 3: 9·(8 + 27) = 315 for the eigendecompositions; 4 iterations of 8·35 + 4·10 = 320
    assert structured_flops((2, 3), 10, 4) == 315 + 4 * 320
    assert danskin_flops(12, 5) == 120
    assert BackwardCost.danskin(12, 5).nnz_m == 0
    with pytest.raises(ValueError, match="iterations"):
        structured_flops((2,), 1, -1)
    with pytest.raises(ValueError, match=r"block_sizes\[0\]"):
        structured_flops((0,), 1, 1)
