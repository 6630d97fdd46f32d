"""Task 3: the certified decay rate of a damped oscillator chain, and its gradient with respect to damping.

``N`` masses in a chain (springs ``k_i`` between neighbours and to two walls, damping ``c_i = exp θ_i > 0``),
state ``(q_1, v_1, q_2, v_2, …)`` so that ``A(θ)`` (``2N × 2N``) is block tridiagonal. The certified decay
rate is the largest ``μ`` with ``AᵀP + PA ⪯ −2μP`` for some ``P ⪰ I``. Both sides scale with ``P``, so the
inner program fixes the scale, ``tr P = τ = κ · 2N``, and measures feasibility by a margin:

    t*(μ, θ) = max t   s.t.   −(AᵀP + PA + 2μP) − tI ⪰ 0,   P − I ⪰ 0,   tr P = τ,

``μ* = max{μ : t*(μ, θ) ≥ 0}`` (bisection safeguarding Newton steps on ``t*(·, θ) = 0``). By the implicit
function theorem ``dμ*/dθ = −(∂t*/∂θ)/(∂t*/∂μ)``, both partials by Danskin (``θ`` and ``μ`` enter ``A``'s
values). ``μ* ≤ −max Re λ(A)`` always (the spectral abscissa bound).

Sparse formulation: ``P`` block tridiagonal (chordal; cliques of two neighbouring masses), and by Agler's
theorem each LMI with a chordal pattern is a sum of clique-supported PSD blocks — ``P − I = Σ_k E_kᵀ V_k E_k``
(blocks ``4 × 4``) and ``−(AᵀP + PA + 2μP) − tI = Σ_k E_kᵀ W_k E_k`` on the block-pentadiagonal pattern
(blocks ``6 × 6``). Dense formulation: a full ``P`` and one ``2N × 2N`` block per LMI (its ``μ*`` is at least
the banded one's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch

from neurips26.sparse_sos.backward import danskin
from neurips26.sparse_sos.conic import BlockConicProgram
from neurips26.sparse_sos.solve import solve
from neurips26.sparse_sos.svec import svec_dim
from neurips26.sparse_sos.tasks.base import FORMULATIONS, ConicData, TaskInstance
from neurips26.validation import check_choice, check_float, check_int, check_seed

_F64 = torch.float64
SOLVER_SLACK = 1e-7  # |t*| below this is zero to the solver (gap 1e-8 on values of size τ ~ 10²)
Entry = tuple[int, int]


@dataclass(frozen=True, eq=False)
class AffineMatrix:
    """``A = Σ_c w_c A_c`` on one stored CSC pattern: ``values[c]`` are ``A_c``'s values on it."""

    indices: np.ndarray
    indptr: np.ndarray
    shape: tuple[int, int]
    values: np.ndarray  # (components, nnz)

    def matrix(self, weights: np.ndarray) -> sp.csc_matrix:
        return sp.csc_matrix((np.asarray(weights) @ self.values, self.indices, self.indptr), shape=self.shape)


def affine_matrix(triplets: Sequence[tuple[int, int, float, int]], shape: tuple[int, int], components: int):
    """:class:`AffineMatrix` from ``(row, col, value, component)`` triplets (duplicates add)."""
    t = np.asarray(triplets, dtype=float).reshape(-1, 4)
    rows, cols, vals, comps = t[:, 0].astype(np.int64), t[:, 1].astype(np.int64), t[:, 2], t[:, 3].astype(int)
    keys = cols * shape[0] + rows
    unique = np.unique(keys)
    values = np.zeros((components, unique.size))
    np.add.at(values, (comps, np.searchsorted(unique, keys)), vals)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(unique // shape[0], minlength=shape[1]))])
    return AffineMatrix((unique % shape[0]).astype(np.int32), indptr.astype(np.int32), shape, values)


def chain_matrix(springs: np.ndarray, damping: torch.Tensor) -> torch.Tensor:
    """``A`` (``2N × 2N``, state ``(q_1, v_1, …)``): ``q̇_i = v_i``, ``v̇_i = −(Kq)_i − c_i v_i``; ``springs``
    has ``N + 1`` entries (wall, neighbours, wall)."""
    N = damping.numel()
    A = torch.zeros(2 * N, 2 * N, dtype=_F64, device=damping.device)
    for i in range(N):
        A[2 * i, 2 * i + 1] = 1.0
        A[2 * i + 1, 2 * i] = -(springs[i] + springs[i + 1])
        A[2 * i + 1, 2 * i + 1] = -damping[i]
        if i + 1 < N:
            A[2 * i + 1, 2 * i + 2] = springs[i + 1]
            A[2 * i + 3, 2 * i] = springs[i + 1]
    return A


def _pattern(n: int, band: int | None) -> list[Entry]:
    """Upper-triangle entries ``(a, b)`` of a ``2N``-matrix whose masses differ by ≤ ``band`` (all: None)."""
    return [(a, b) for b in range(n) for a in range(b + 1) if band is None or b // 2 - a // 2 <= band]


def _mass_cliques(N: int, width: int) -> list[list[int]]:
    """Scalar index sets of ``width`` consecutive masses (one set when ``N ≤ width``)."""
    starts = range(max(1, N - width + 1))
    return [[2 * i + r for i in range(s, min(N, s + width)) for r in range(2)] for s in starts]


@dataclass(frozen=True, eq=False)
class OscillatorLMI:
    """The inner program ``t*(μ, θ)`` as a conic program whose ``A`` is affine in ``(1, μ, c_1..c_N)``."""

    conic: BlockConicProgram
    affine: AffineMatrix
    N: int
    p_entries: tuple[Entry, ...]

    def a_values(self, mu: torch.Tensor, damping: torch.Tensor) -> torch.Tensor:
        V = torch.as_tensor(self.affine.values, dtype=_F64, device=damping.device)
        weights = torch.cat([torch.ones(1, dtype=_F64, device=damping.device), mu.reshape(1), damping])
        return weights @ V

    def at(self, mu: float, damping: np.ndarray) -> BlockConicProgram:
        w = np.concatenate([[1.0, mu], damping])
        return self.conic.with_data(a_values=w @ self.affine.values)


def oscillator_lmi(N: int, springs: np.ndarray, *, dense: bool = False, kappa: float = 10.0) -> OscillatorLMI:
    """Assemble ``t*(μ, θ)`` (module docstring). Columns: ``P``'s entries, ``t``, then ``svec W_k, svec V_k``
    (sparse) — rows: the trace row, the entry-matching rows (sparse), then the PSD blocks."""
    N = check_int("N", N, minimum=2, maximum=20)
    kappa = check_float("kappa", kappa, minimum=1.0)
    n = 2 * N
    p_entries = _pattern(n, None if dense else 1)
    lmi_entries = _pattern(n, None if dense else 2)
    p_col = {e: k for k, e in enumerate(p_entries)}
    t_col = len(p_entries)
    comps = 2 + N  # 1, μ, c_1..c_N
    fixed = chain_matrix(springs, torch.zeros(N, dtype=_F64)).numpy()

    # L(P) = −(AᵀP + PA + 2μP) − tI, entry (a, b), as (column, value, component) terms
    def lmi_terms(a: int, b: int) -> list[tuple[int, float, int]]:
        terms: list[tuple[int, float, int]] = []

        def P(c: int, d: int) -> int | None:
            key = (min(c, d), max(c, d))
            return p_col.get(key)

        # (AᵀP)_ab = Σ_c A_ca P_cb ; (PA)_ab = Σ_c P_ac A_cb
        for c in range(n):
            for value, col in ((fixed[c, a], P(c, b)), (fixed[c, b], P(a, c))):
                if value and col is not None:
                    terms.append((col, -value, 0))
        for i in range(N):  # damping: A_{v_i v_i} = −c_i
            v = 2 * i + 1
            if a == v and P(v, b) is not None:
                terms.append((P(v, b), 1.0, 2 + i))
            if b == v and P(a, v) is not None:
                terms.append((P(a, v), 1.0, 2 + i))
        if P(a, b) is not None:
            terms.append((P(a, b), -2.0, 1))
        if a == b:
            terms.append((t_col, -1.0, 0))
        return terms

    triplets: list[tuple[int, int, float, int]] = []
    rhs: list[float] = []
    row = 0
    for i in range(n):  # tr P = τ
        triplets.append((row, p_col[(i, i)], 1.0, 0))
    rhs.append(kappa * n)
    row += 1
    s2 = 1.0 / math.sqrt(2.0)
    if dense:
        zero = row
        blocks = (n, n)
        for a, b in lmi_entries:  # s = svec(L) = b − A x  ⇒  A = −scale · L's coefficients
            scale = 1.0 if a == b else math.sqrt(2.0)
            r = zero + b * (b + 1) // 2 + a
            triplets += [(r, col, -scale * value, comp) for col, value, comp in lmi_terms(a, b)]
            rhs.append(0.0)
        base = zero + svec_dim(n)
        for a, b in p_entries:  # s = svec(P − I)
            scale = 1.0 if a == b else math.sqrt(2.0)
            triplets.append((base + b * (b + 1) // 2 + a, p_col[(a, b)], -scale, 0))
            rhs.append(-1.0 if a == b else 0.0)
        columns = t_col + 1
    else:
        w_cliques = _mass_cliques(N, 3)
        v_cliques = _mass_cliques(N, 2)
        column = t_col + 1
        copies: list[dict[Entry, list[int]]] = []
        for cliques in (w_cliques, v_cliques):
            found: dict[Entry, list[int]] = {}
            for clique in cliques:
                for lj, bb in enumerate(clique):
                    for li in range(lj + 1):
                        found.setdefault((clique[li], bb), []).append(column + lj * (lj + 1) // 2 + li)
                column += svec_dim(len(clique))
            copies.append(found)
        for a, b in lmi_entries:  # L_ab − Σ_k W_k[ab] = 0
            scale = 1.0 if a == b else s2
            triplets += [(row, col, value, comp) for col, value, comp in lmi_terms(a, b)]
            triplets += [(row, col, -scale, 0) for col in copies[0][(a, b)]]
            rhs.append(0.0)
            row += 1
        for a, b in p_entries:  # P_ab − Σ_k V_k[ab] = δ_ab
            scale = 1.0 if a == b else s2
            triplets.append((row, p_col[(a, b)], 1.0, 0))
            triplets += [(row, col, -scale, 0) for col in copies[1][(a, b)]]
            rhs.append(1.0 if a == b else 0.0)
            row += 1
        zero = row
        blocks = tuple(len(c) for c in w_cliques) + tuple(len(c) for c in v_cliques)
        for k in range(t_col + 1, column):  # −svec W_k + s = 0, then V_k
            triplets.append((zero + k - t_col - 1, k, -1.0, 0))
            rhs.append(0.0)
        columns = column
    m = zero + sum(svec_dim(s) for s in blocks)
    affine = affine_matrix(triplets, (m, columns), comps)
    q = np.zeros(columns)
    q[t_col] = -1.0
    A0 = affine.matrix(np.concatenate([[1.0, 0.0], np.ones(N)]))
    conic = BlockConicProgram(A0, np.asarray(rhs, dtype=float), q, zero, 0, blocks)
    return OscillatorLMI(conic, affine, N, tuple(p_entries))


@dataclass(frozen=True, eq=False)
class OscillatorChain:
    """``N`` masses, springs (``N + 1``), ``θ₀ = log c₀`` (seeded)."""

    N: int
    springs: np.ndarray
    theta0: torch.Tensor

    def spectral_bound(self, theta: torch.Tensor | None = None) -> float:
        """``−max Re λ(A(θ))``, an upper bound of every certified rate."""
        theta = self.theta0 if theta is None else theta
        A = chain_matrix(self.springs, torch.exp(theta.detach())).cpu().numpy()
        return float(-np.linalg.eigvals(A).real.max())


def oscillator_chain(N: int, seed: int = 0) -> OscillatorChain:
    """Springs ``U(0.5, 1.5)`` and damping ``c = U(0.2, 0.6)`` (``θ₀ = log c``) from ``seed``."""
    N = check_int("N", N, minimum=2, maximum=20)
    rng = np.random.default_rng(check_seed("seed", seed))
    springs = rng.uniform(0.5, 1.5, N + 1)
    theta0 = np.log(rng.uniform(0.2, 0.6, N))
    return OscillatorChain(N, springs, torch.as_tensor(theta0, dtype=_F64))


def _t_and_partials(lmi: OscillatorLMI, mu: float, damping: np.ndarray) -> tuple[float, float, np.ndarray]:
    """``t*``, ``∂t*/∂μ`` and ``∂t*/∂c`` (Danskin: ``∂p*/∂a = y xᵀ`` on the pattern, ``t* = −p*``)."""
    program = lmi.at(mu, damping)
    solution = solve(program)
    dA = danskin(program, solution).dA
    partial = -(lmi.affine.values @ dA)  # ∂t*/∂(1, μ, c)
    return -solution.value, float(partial[1]), partial[2:]


def certified_rate(
    chain: OscillatorChain, theta: torch.Tensor | None = None, *, dense: bool = False, tol: float = 1e-9
) -> tuple[float, np.ndarray]:
    """``(μ*, dμ*/dθ)``: ``μ* = −max Re λ(A)`` when ``t*`` there is ``≥ −1e-7`` (the solver's accuracy on
    ``t*``), else safeguarded Newton on ``t*(μ) = 0`` inside a bisection bracket; then the implicit function
    theorem ``dμ*/dθ = −(∂t*/∂θ)/(∂t*/∂μ)`` (with ``∂c/∂θ = c``)."""
    theta = chain.theta0 if theta is None else theta
    damping = np.exp(theta.detach().cpu().numpy())
    lmi = oscillator_lmi(chain.N, chain.springs, dense=dense)
    hi = chain.spectral_bound(theta)
    t, dt_mu, dt_c = _t_and_partials(lmi, hi, damping)
    if t >= -SOLVER_SLACK:  # the certificate reaches the spectral bound (the full P does)
        return hi, -(dt_c * damping) / dt_mu
    lo = hi - 1.0
    for _ in range(50):  # t*(μ) grows without bound as μ → −∞ (P = κI is feasible)
        if _t_and_partials(lmi, lo, damping)[0] >= 0:
            break
        lo -= 1.0
    else:
        raise ValueError(f"theta: no certificate found down to μ = {lo:.3g}")
    mu = 0.5 * (lo + hi)
    for _ in range(60):
        t, dt_mu, dt_c = _t_and_partials(lmi, mu, damping)
        if t >= 0:
            lo = mu
        else:
            hi = mu
        if abs(t) <= tol or hi - lo <= tol:
            break
        newton = mu - t / dt_mu if dt_mu < 0 else None
        mu = newton if newton is not None and lo < newton < hi else 0.5 * (lo + hi)
    return mu, -(dt_c * damping) / dt_mu


def oscillator_instance(size: int, seed: int = 0, formulation: str = "sparse") -> TaskInstance:
    """Task 3 as a :class:`~neurips26.sparse_sos.tasks.base.TaskInstance`: the inner program at ``μ*(θ₀)``;
    ``θ = log c`` enters ``A``'s values; the value is ``t*`` (zero at ``θ₀``); the solution loss is
    ``‖P*‖²_F / τ²`` of the certificate (its entries on the pattern)."""
    check_choice("formulation", formulation, FORMULATIONS)
    chain = oscillator_chain(size, seed)
    dense = formulation == "dense"
    mu, _ = certified_rate(chain, dense=dense)
    lmi = oscillator_lmi(chain.N, chain.springs, dense=dense)
    program = lmi.at(mu, np.exp(chain.theta0.numpy()))
    mu_t = torch.tensor(mu, dtype=_F64)
    weight = torch.as_tensor([1.0 if a == b else 2.0 for a, b in lmi.p_entries], dtype=_F64)
    tau = float(program.b[0])

    def data(theta: torch.Tensor) -> ConicData:
        if not isinstance(theta, torch.Tensor) or tuple(theta.shape) != (chain.N,):
            raise ValueError(f"theta must be a tensor of shape ({chain.N},)")
        return ConicData(a_values=lmi.a_values(mu_t.to(theta.device), torch.exp(theta.to(_F64))))

    def loss(x: torch.Tensor, y: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        p = x[: len(lmi.p_entries)]
        return (weight.to(x.device) * p**2).sum() / tau**2

    support = int(np.count_nonzero(np.abs(lmi.affine.values[2:]).sum(axis=0)))
    return TaskInstance("oscillator", size, formulation, program, chain.theta0, data, -1.0, support, loss)
