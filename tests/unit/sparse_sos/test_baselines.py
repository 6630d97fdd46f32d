import numpy as np
import pytest
import scipy.sparse as sp
import torch

from neurips26.sparse_sos.backward import danskin, structured_adjoint
from neurips26.sparse_sos.baselines.cvxpylayers_sdp import CvxpyLayersSDP, identity_psd_columns
from neurips26.sparse_sos.baselines.finite_differences import central_differences
from neurips26.sparse_sos.baselines.unrolled_admm import (
    _PSDProjection,
    saved_tensor_bytes,
    unrolled_admm,
)
from neurips26.sparse_sos.conic import BlockConicProgram
from neurips26.sparse_sos.psd import PSDProjectionDerivative
from neurips26.sparse_sos.solve import solve
from neurips26.sparse_sos.svec import smat, svec, svec_dim
from neurips26.sparse_sos.tasks.chain_quartic import chain_quartic_instance

# diffcp 1.1.9 (cvxpylayers' backward) calls np.array(copy=False) on torch tensors: numpy 2 notes it each time
pytestmark = pytest.mark.filterwarnings("ignore:__array__ implementation doesn't accept a copy keyword")


def lmi_program(seed: int = 0, s: int = 4, k: int = 3) -> BlockConicProgram:
    """``min qᵀx s.t. Σx = 0.1, |x_i| ≤ 1, F₀ + Σ x_i F_i ⪰ 0``: one zero row, 2k nonnegative rows and a PSD
    block that is affine in ``x`` (not ``−I``), generic data (a unique solution)."""
    rng = np.random.default_rng(seed)
    F = [rng.standard_normal((s, s)) for _ in range(k)]
    F = [M + M.T for M in F]
    A = sp.vstack(
        [
            sp.csr_matrix(np.ones((1, k))),
            sp.identity(k),
            -sp.identity(k),
            sp.csr_matrix(-np.array([svec(M) for M in F]).T),
        ]
    ).tocsc()
    b = np.concatenate([[0.1], np.ones(2 * k), svec(np.eye(s))])
    return BlockConicProgram(A, b, rng.standard_normal(k), 1, 2 * k, (s,))


def _value_gradient_reference(instance):
    """``d(value_sign · p*)/dθ`` by Danskin, pulled back through ``data``, at an accurate solution: SCS at
    1e-9 (Clarabel's moments at gap 1e-8 are off by up to ~1e-4 on these degenerate programs)."""
    solution = solve(instance.program, "scs", tolerance=1e-9)
    grad = danskin(instance.program, solution)
    _, pullback = torch.autograd.functional.vjp(
        lambda th: instance.data(th).b, instance.theta0, torch.as_tensor(grad.db)
    )
    return solution, instance.value_sign * pullback


# --- cvxpylayers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("formulation", ["sparse", "dense"])
def test_cvxpylayers_value_and_gradient_match_clarabel_and_danskin(formulation):
    instance = chain_quartic_instance(4, 0, formulation)
    layer = CvxpyLayersSDP(instance.program, ("b",))
    assert layer.form == "direct" and layer.canonicalisation_seconds > 0
    theta = instance.theta0.clone().requires_grad_(True)
    out = layer(b=instance.data(theta).b)
    (instance.value_sign * out.value).backward()
    solution, reference = _value_gradient_reference(instance)
    assert abs(float(out.value.detach()) - solution.value) <= 1e-4 * abs(solution.value)
    assert float((theta.grad - reference).norm() / reference.norm()) <= 1e-3
    # the assembled x is feasible for our program: equality rows hold, Gram blocks PSD
    x = out.x.detach().numpy()
    p = instance.program
    assert np.abs((p.A @ x - p.b)[: p.zero]).max() <= 1e-4
    assert all(np.linalg.eigvalsh(Q).min() >= -1e-4 for Q in [smat(x[sl]) for sl in _block_cols(p)])


def _block_cols(program):
    start, out = 0, []
    for s in program.psd:
        out.append(slice(start, start + svec_dim(s)))
        start += svec_dim(s)
    return out


def test_cvxpylayers_direct_and_slack_forms_agree_and_duals_are_ours():
    instance = chain_quartic_instance(3, 0, "sparse")
    b = torch.as_tensor(instance.program.b)
    direct = CvxpyLayersSDP(instance.program, ("b",), form="direct")(b=b)
    slack = CvxpyLayersSDP(instance.program, ("b",), form="slack")(b=b)
    solution = solve(instance.program)
    assert abs(float(direct.value) - float(slack.value)) <= 1e-5
    # the moments (equality duals, y_0 = 1) and moment matrices in the library's sign
    for out in (direct, slack):
        assert abs(float(out.y[0]) - 1.0) <= 1e-5
        assert np.abs(out.y.numpy() - solution.y).max() <= 1e-3


def test_cvxpylayers_general_program_every_parameter_matches_danskin():
    program = lmi_program()
    assert identity_psd_columns(program) is None
    layer = CvxpyLayersSDP(program, ("b", "q", "a_values"))
    assert layer.form == "slack"
    b = torch.as_tensor(program.b).requires_grad_(True)
    q = torch.as_tensor(program.q).requires_grad_(True)
    a = torch.as_tensor(program.A.data.copy()).requires_grad_(True)
    out = layer(b=b, q=q, a_values=a)
    out.value.backward()
    solution = solve(program)
    grad = danskin(program, solution)
    assert abs(float(out.value.detach()) - solution.value) <= 1e-4 * max(1.0, abs(solution.value))
    np.testing.assert_allclose(out.x.detach().numpy(), solution.x, atol=1e-4)
    np.testing.assert_allclose(out.y.detach().numpy(), solution.y, atol=1e-4)
    for got, want in ((b.grad, grad.db), (q.grad, grad.dq), (a.grad, grad.dA)):
        np.testing.assert_allclose(got.numpy(), want, atol=1e-3 * np.abs(want).max())


def direct_sdp(seed: int = 0, s: int = 5, m_eq: int = 6) -> BlockConicProgram:
    """``min ⟨C, X⟩ s.t. ⟨A_i, X⟩ = b_i, tr X ≤ 100, X ⪰ 0`` with ``x = svec X`` (the direct form), generic
    data: a unique, strictly complementary solution (the trace row inactive)."""
    rng = np.random.default_rng(seed)
    sym = [rng.standard_normal((s, s)) for _ in range(m_eq + 2)]
    sym = [M + M.T for M in sym[:m_eq]] + [M @ M.T for M in sym[m_eq:]]
    rows = np.array([svec(M) for M in sym[:m_eq]] + [svec(np.eye(s))])
    b_eq = rows[:m_eq] @ svec(sym[m_eq])
    A = sp.vstack([sp.csr_matrix(rows), -sp.identity(svec_dim(s))]).tocsc()
    b = np.concatenate([b_eq, [100.0], np.zeros(svec_dim(s))])
    return BlockConicProgram(A, b, svec(sym[m_eq + 1]), m_eq, 1, (s,))


def test_cvxpylayers_a_values_parameter_in_the_direct_form():
    # diffcp's default LSQR backward is off by ~1e-3 of the largest entry on A's values; its dense mode
    # is exact, and the reference needs Clarabel at 1e-10 (at 1e-8 its x is off by ~1e-4 here)
    p = direct_sdp()
    layer = CvxpyLayersSDP(p, ("a_values", "b"), mode="dense")
    assert layer.form == "direct"
    a = torch.as_tensor(p.A.data.copy()).requires_grad_(True)
    b = torch.as_tensor(p.b).requires_grad_(True)
    out = layer(a_values=a, b=b)
    out.value.backward()
    solution = solve(p, tolerance=1e-10)
    grad = danskin(p, solution)
    kept = layer._kept_entries
    assert abs(float(out.value.detach()) - solution.value) <= 1e-4 * abs(solution.value)
    np.testing.assert_allclose(out.y.detach().numpy(), solution.y, atol=1e-4)
    np.testing.assert_allclose(a.grad.numpy()[kept], grad.dA[kept], atol=1e-3 * np.abs(grad.dA).max())
    np.testing.assert_allclose(b.grad.numpy()[: p.zero], grad.db[: p.zero], atol=1e-3 * np.abs(grad.db).max())
    bad = a.detach().clone()
    bad[layer._dropped_entries[0]] = -2.0
    with pytest.raises(ValueError, match="a_values"):
        layer(a_values=bad)


def test_cvxpylayers_moment_loss_gradient_matches_the_structured_adjoint_at_an_accurate_solution():
    # a loss on the duals (first moments) of the degenerate chain quartic: diffcp (through cvxpylayers'
    # dual outputs) and the structured adjoint evaluated at an accurate (SCS 1e-9) solution agree; the
    # adjoint at Clarabel's gap-1e-8 solution is off by ~3e-4 (its moments are off by ~6e-5)
    instance = chain_quartic_instance(5, 0, "sparse")
    p = instance.program
    theta = instance.theta0.clone().requires_grad_(True)
    out = CvxpyLayersSDP(p, ("b",))(b=instance.data(theta).b)
    instance.solution_loss(out.x, out.y, None).backward()
    solution = solve(p, "scs", tolerance=1e-9)
    y = torch.as_tensor(solution.y).requires_grad_(True)
    instance.solution_loss(None, y, None).backward()
    zeros = np.zeros_like(solution.x), np.zeros_like(solution.s)
    adjoint = structured_adjoint(p, solution, zeros[0], y.grad.numpy(), zeros[1])
    _, reference = torch.autograd.functional.vjp(
        lambda th: instance.data(th).b, instance.theta0, torch.as_tensor(adjoint.db)
    )
    assert float((theta.grad - reference).norm() / reference.norm()) <= 1e-4
    assert float(theta.grad[2]) == pytest.approx(-0.19249, abs=2e-5)


def test_cvxpylayers_validates_its_inputs():
    instance = chain_quartic_instance(2, 0, "sparse")
    p = instance.program
    with pytest.raises(TypeError, match="program"):
        CvxpyLayersSDP("not a program")
    with pytest.raises(ValueError, match="parameters"):
        CvxpyLayersSDP(p, ("b", "c"))
    with pytest.raises(TypeError, match="parameters"):
        CvxpyLayersSDP(p, "b")
    with pytest.raises(ValueError, match="form"):
        CvxpyLayersSDP(lmi_program(), ("b",), form="direct")
    with pytest.raises(ValueError, match="eps"):
        CvxpyLayersSDP(p, ("b",), eps=0.0)
    with pytest.raises(ValueError, match="mode"):
        CvxpyLayersSDP(p, ("b",), mode="exact")
    layer = CvxpyLayersSDP(p, ("b",))
    with pytest.raises(ValueError, match="q was not declared"):
        layer(q=torch.as_tensor(p.q))
    with pytest.raises(ValueError, match="b must have shape"):
        layer(b=torch.zeros(3, dtype=torch.float64))
    with pytest.raises(TypeError, match="b must be a torch.Tensor"):
        layer(b=p.b)
    b = torch.as_tensor(p.b).clone()
    b[-1] = 1.0
    with pytest.raises(ValueError, match="PSD rows"):
        layer(b=b)


# --- finite differences --------------------------------------------------------------------------------


def test_central_differences_on_a_smooth_function_with_known_gradient():
    theta = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64)

    def f(t):
        return torch.sin(t).sum() + t[0] * t[1] ** 2

    exact = torch.cos(theta) + torch.tensor(
        [theta[1] ** 2, 2 * theta[0] * theta[1], 0.0], dtype=torch.float64
    )
    result = central_differences(f, theta)
    assert result.solves == 6 and result.step == 1e-3
    # truncation h²|f'''|/6 ≤ 1e-6 · (1 + 2)/6
    assert float((result.gradient - exact).abs().max()) <= 1e-6
    # a noisy f (solver accuracy 1e-8): h = 1e-3 keeps the noise near 1e-5, h = 1e-7 does not
    rng = np.random.default_rng(0)

    def noisy(t):
        return float(f(t)) + 1e-8 * rng.standard_normal()

    assert float((central_differences(noisy, theta).gradient - exact).abs().max()) <= 5e-5
    assert float((central_differences(noisy, theta, step=1e-7).gradient - exact).abs().max()) >= 1e-3


def test_central_differences_of_the_sos_bound_match_danskin():
    # the step rule: h = 1e-3 through Clarabel (gap 1e-8) leaves ε/h ≈ 1e-5 per entry; 9 entries of a
    # gradient of norm 0.8 give ≤ 3e-5/0.8 ≈ 4e-5 relative
    instance = chain_quartic_instance(2, 0, "sparse")
    p = instance.program

    def gamma(th):
        return instance.value_sign * solve(p.with_data(b=instance.data(th).b.numpy())).value

    result = central_differences(gamma, instance.theta0)
    _, reference = _value_gradient_reference(instance)
    assert result.solves == 2 * instance.theta0.numel()
    assert float((result.gradient - reference).norm() / reference.norm()) <= 5e-5


def test_central_differences_validates_its_inputs():
    theta = torch.zeros(2, dtype=torch.float64)
    with pytest.raises(TypeError, match="f"):
        central_differences(3.0, theta)
    with pytest.raises(TypeError, match="theta"):
        central_differences(lambda t: 0.0, [0.0, 1.0])
    with pytest.raises(ValueError, match="step"):
        central_differences(lambda t: 0.0, theta, step=0.0)
    with pytest.raises(ValueError, match="theta"):
        central_differences(lambda t: 0.0, torch.tensor([float("nan")]))
    with pytest.raises(ValueError, match="scalar"):
        central_differences(lambda t: t, theta)


# --- unrolled ADMM -------------------------------------------------------------------------------------


def test_psd_projection_backward_is_the_divided_difference_formula_even_at_ties():
    rng = np.random.default_rng(1)
    U, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    X = (U * np.array([-1.0, -1.0, 0.5, 2.0, 2.0])) @ U.T  # repeated eigenvalues on both sides
    H = rng.standard_normal((5, 5))
    H = H + H.T
    Xt = torch.as_tensor(X).unsqueeze(0).requires_grad_(True)
    (_PSDProjection.apply(Xt) * torch.as_tensor(H)).sum().backward()
    want = PSDProjectionDerivative(X).apply(svec(H))
    got = Xt.grad[0].numpy()
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(svec(0.5 * (got + got.T)), want, atol=1e-10)


def test_unrolled_admm_converges_to_clarabel_on_both_program_kinds():
    for program, iterations in ((chain_quartic_instance(3, 0, "sparse").program, 300), (lmi_program(), 400)):
        out = unrolled_admm(program, iterations=iterations)
        solution = solve(program)
        assert abs(float(out.value.detach()) - solution.value) <= 1e-6 * max(1.0, abs(solution.value))
        assert out.primal_residual <= 1e-6


def test_unrolled_admm_gradient_approaches_danskin_and_memory_is_linear_in_k():
    instance = chain_quartic_instance(3, 0, "sparse")
    _, reference = _value_gradient_reference(instance)
    errors, memory = [], {}
    for k in (20, 80, 320):
        theta = instance.theta0.clone().requires_grad_(True)
        out, nbytes = saved_tensor_bytes(
            lambda th=theta, k=k: unrolled_admm(
                instance.program, b=instance.data(th).b, iterations=k, rho=0.3
            )
        )
        (instance.value_sign * out.value).backward()
        errors.append(float((theta.grad - reference).norm() / reference.norm()))
        memory[k] = nbytes
    assert errors[0] > errors[1] > errors[2] and errors[2] <= 1e-3
    # every iteration saves the same tensors: bytes = fixed + K · per-iteration
    per_iteration = (memory[80] - memory[20]) / 60
    assert per_iteration > 0
    assert memory[320] - memory[80] == pytest.approx(240 * per_iteration, rel=1e-9)


def test_unrolled_admm_validates_its_inputs():
    program = lmi_program()
    with pytest.raises(TypeError, match="program"):
        unrolled_admm("program")
    with pytest.raises(ValueError, match="iterations"):
        unrolled_admm(program, iterations=0)
    with pytest.raises(ValueError, match="rho"):
        unrolled_admm(program, rho=-1.0)
    with pytest.raises(ValueError, match="alpha"):
        unrolled_admm(program, alpha=2.0)
    with pytest.raises(ValueError, match="b must have shape"):
        unrolled_admm(program, b=torch.zeros(2, dtype=torch.float64))
    with pytest.raises(TypeError, match="fn"):
        saved_tensor_bytes(3)
