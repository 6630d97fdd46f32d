"""A generic SDP layer: any :class:`~neurips26.sparse_sos.conic.BlockConicProgram` via cvxpy + cvxpylayers.

This is the baseline the paper compares against: a modelling layer (cvxpy 1.9) canonicalises the program
once, and cvxpylayers 1.2 (torch) solves it with SCS through diffcp, whose backward differentiates the
residual map of the *whole* homogeneous self-dual embedding (the dense-in-structure path; it knows nothing
of the blocks). The program is written the way a user of cvxpylayers would write it:

* one symmetric matrix variable ``S_k ⪰ 0`` per PSD block;
* the vector ``x`` assembled from them through a constant sparse matrix, ``x = X (vec S_1, ..., vec S_p,
  w)``, ``w`` the free columns (``γ`` of an SOS program);
* ONE vectorised equality ``A_eq x == b_eq`` (and ``A_nn x <= b_nn`` for nonnegative rows), objective
  ``qᵀx``.

Two forms. **direct** (chosen when the PSD rows of ``A`` are ``−I`` on distinct columns and ``b`` is zero
there, as in every SOS program and Shor relaxation of the chapter): the PSD columns of ``x`` *are*
``svec S_k`` and the PSD rows disappear. **slack** (any other program): ``x`` is free and the PSD rows
become ``A_k x + svec S_k == b_k``. Parameters: ``b`` and/or ``q`` as cvxpy Parameters; ``A``'s stored
values as ``R @ cp.multiply(a, S @ x)`` with constant selection matrices ``S`` (entry ↦ its column) and
``R`` (entry ↦ its row), the DPP-compliant form. Its cost: one cvxpy parameter per stored entry of
``A`` and a parameter-to-data tensor with one column per entry, so canonicalisation grows (chain quartic
``n = 8``, dense: 32 ms against 12 ms with ``b`` as the parameter) while the solve and the backward, which
see the same canonical data, do not. In the direct form the data of the
eliminated PSD rows are constants: the forward checks that they keep their values and returns zero
gradient for them (use ``form="slack"`` when ``θ`` moves them).

Outputs: ``x`` (assembled from the primal variables), ``y`` (our dual convention, ``y ∈ K*``, read from the
constraints' dual variables, which cvxpylayers 1.2 can return — earlier versions returned primal variables
only) and ``value = qᵀx``. Canonicalisation runs once, in the constructor, and is timed separately
(:attr:`CvxpyLayersSDP.canonicalisation_seconds`); forward and backward timings exclude it.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
import torch
from cvxpylayers.torch import CvxpyLayer

from neurips26.sparse_sos.conic import BlockConicProgram
from neurips26.sparse_sos.svec import SQRT2, triangle_indices
from neurips26.validation import check_choice, check_float, check_int

# diffcp 1.1.9 (inside cvxpylayers' backward) calls np.array(copy=False) on torch tensors, which numpy 2
# flags on every backward; the message is about that library's code, not the reader's
warnings.filterwarnings(
    "ignore",
    message="__array__ implementation doesn't accept a copy keyword",
    category=DeprecationWarning,
    module="cvxpylayers.interfaces.diffcp_if",
)

PARAMETERS: tuple[str, ...] = ("b", "q", "a_values")
FORMS: tuple[str, ...] = ("auto", "direct", "slack")
DERIVATIVES: tuple[str, ...] = ("lsqr", "dense")
_F64 = torch.float64


@dataclass(frozen=True)
class CvxpyLayersOutput:
    """The layer's outputs: ``x`` (our coordinates), ``y`` (``y ∈ K*``, our sign) and ``value = qᵀx``."""

    x: torch.Tensor
    y: torch.Tensor
    value: torch.Tensor


def identity_psd_columns(program: BlockConicProgram) -> np.ndarray | None:
    """The column of each PSD row when those rows are ``−svec(x_cols) + s = 0`` (``−I`` on distinct columns,
    ``b = 0``), else ``None``: the test for the direct form."""
    A = sp.csr_matrix(program.A)
    start = program.zero + program.nonneg
    rows = np.arange(start, A.shape[0])
    block = A[rows]
    if rows.size == 0:
        return np.zeros(0, dtype=np.int64)
    if np.any(np.diff(block.indptr) != 1) or not np.all(block.data == -1.0):
        return None
    cols = block.indices.astype(np.int64)
    if np.unique(cols).size != cols.size or np.any(program.b[rows] != 0.0):
        return None
    return cols


def _svec_of_vec(s: int) -> sp.csr_matrix:
    """``T`` with ``svec(S) = T vec(S)`` (``vec`` column-major, svec in Clarabel's order)."""
    i, j = triangle_indices(s)
    scale = np.where(i == j, 1.0, SQRT2)
    return sp.csr_matrix((scale, (np.arange(i.size), i + j * s)), shape=(i.size, s * s))


class CvxpyLayersSDP(torch.nn.Module):
    """``(b, q, A's values) ↦ (x*, y*, qᵀx*)`` for one block conic program, solved by SCS through
    cvxpylayers/diffcp (module docstring). ``parameters``: which data are torch inputs (the others stay
    the program's). ``eps``: SCS's ``eps_abs = eps_rel``. ``mode``: diffcp's backward, ``"lsqr"`` (its
    default, matrix-free; its stopping rule leaves errors near 1e-3 of the largest gradient entry on ``A``'s
    values) or ``"dense"`` (a dense least-squares solve of the whole embedding's derivative)."""

    def __init__(
        self,
        program: BlockConicProgram,
        parameters: Sequence[str] = ("b",),
        *,
        form: str = "auto",
        eps: float = 1e-6,
        max_iters: int = 100_000,
        mode: str = "lsqr",
    ) -> None:
        super().__init__()
        if not isinstance(program, BlockConicProgram):
            raise TypeError(f"program must be a BlockConicProgram; got {type(program).__name__}")
        if isinstance(parameters, str) or not isinstance(parameters, Sequence):
            raise TypeError(f"parameters must be a sequence of names from {PARAMETERS}")
        for k, name in enumerate(parameters):
            check_choice(f"parameters[{k}]", name, PARAMETERS)
        if not parameters or len(set(parameters)) != len(parameters):
            raise ValueError(
                f"parameters must name at least one of {PARAMETERS}, each once; got {parameters}"
            )
        check_choice("form", form, FORMS)
        self.eps = check_float("eps", eps, minimum=0.0, strict_min=True)
        self.max_iters = check_int("max_iters", max_iters, minimum=1)
        self.mode = check_choice("mode", mode, DERIVATIVES)
        self.program = program
        self.data_parameters = tuple(parameters)
        psd_cols = identity_psd_columns(program)
        if form == "direct" and psd_cols is None:
            raise ValueError("form: 'direct' needs PSD rows −I on distinct columns with b = 0 there")
        self.form = ("direct" if psd_cols is not None else "slack") if form == "auto" else form
        start = time.perf_counter()
        self._build(psd_cols if self.form == "direct" else None)
        self.canonicalisation_seconds = time.perf_counter() - start

    # -- construction ---------------------------------------------------------------------------------
    def _build(self, psd_cols: np.ndarray | None) -> None:
        p = self.program
        A = sp.csc_matrix(p.A)
        m, n = A.shape
        m0, m1 = p.zero, p.zero + p.nonneg
        sizes = p.psd
        mats = [cp.Variable((s, s), symmetric=True) for s in sizes]
        z_parts = [cp.vec(S, order="F") for S in mats]
        svec_map = sp.block_diag([_svec_of_vec(s) for s in sizes], format="csr") if sizes else None
        # x = X z + (free part), z = (vec S_1, ..., vec S_p)
        if psd_cols is not None:
            free = np.setdiff1d(np.arange(n), psd_cols)
            place = sp.csr_matrix(
                (np.ones(psd_cols.size), (psd_cols, np.arange(psd_cols.size))), (n, len(psd_cols))
            )
            x_expr = place @ (svec_map @ cp.hstack(z_parts)) if sizes else 0
            kept_rows = np.arange(m1)  # the PSD rows are eliminated
        else:
            free = np.arange(n)
            x_expr = 0
            kept_rows = np.arange(m)
        w = cp.Variable(free.size) if free.size else None
        if w is not None:
            free_map = sp.csr_matrix((np.ones(free.size), (free, np.arange(free.size))), (n, free.size))
            x_expr = x_expr + free_map @ w
        self._free, self._psd_cols = free, psd_cols
        self._kept_rows = kept_rows
        # A x on the kept rows, A's entries restricted to those rows
        rows_of_entry = A.indices
        cols_of_entry = np.repeat(np.arange(n), np.diff(A.indptr))
        kept_entry = np.isin(rows_of_entry, kept_rows)
        self._kept_entries = np.flatnonzero(kept_entry)
        self._dropped_entries = np.flatnonzero(~kept_entry)
        row_pos = np.full(m, -1)
        row_pos[kept_rows] = np.arange(kept_rows.size)
        params: list[cp.Parameter] = []
        if "a_values" in self.data_parameters:
            k = self._kept_entries
            a_param = cp.Parameter(k.size)
            select = sp.csr_matrix((np.ones(k.size), (np.arange(k.size), cols_of_entry[k])), (k.size, n))
            gather = sp.csr_matrix(
                (np.ones(k.size), (row_pos[rows_of_entry[k]], np.arange(k.size))), (kept_rows.size, k.size)
            )
            Ax = gather @ cp.multiply(a_param, select @ x_expr)
            params.append(a_param)
        else:
            Ax = sp.csr_matrix(A)[kept_rows] @ x_expr
        if "b" in self.data_parameters:
            b_param = cp.Parameter(kept_rows.size)
            b_rhs = b_param
            params.append(b_param)
        else:
            b_rhs = p.b[kept_rows]
        if "q" in self.data_parameters:
            q_param = cp.Parameter(n)
            objective = q_param @ x_expr
            params.append(q_param)
        else:
            objective = p.q @ x_expr
        # the PSD rows in the slack form: A_k x + svec S_k = b_k
        lhs = Ax
        if psd_cols is None and sizes:
            slack = sp.csr_matrix((np.ones(m - m1), (np.arange(m1, m), np.arange(m - m1))), (m, m - m1)) @ (
                svec_map @ cp.hstack(z_parts)
            )
            lhs = lhs + slack
        eq_rows = np.concatenate([np.arange(m0), np.arange(m1, kept_rows.size)]).astype(np.int64)
        constraints = []
        self._eq = self._nn = None
        if eq_rows.size:
            self._eq = (lhs[eq_rows] == b_rhs[eq_rows]) if eq_rows.size < kept_rows.size else (lhs == b_rhs)
            constraints.append(self._eq)
        if p.nonneg:
            self._nn = lhs[m0:m1] <= b_rhs[m0:m1]
            constraints.append(self._nn)
        self._psd_cons = [S >> 0 for S in mats]
        constraints += self._psd_cons
        problem = cp.Problem(cp.Minimize(objective), constraints)
        if not problem.is_dpp():  # pragma: no cover - the construction above is DPP by design
            raise RuntimeError("the cvxpy problem is not DPP")
        variables = list(mats) + ([w] if w is not None else [])
        variables += [c.dual_variables[0] for c in constraints]
        self._n_mats, self._has_w = len(mats), w is not None
        self._eq_rows = eq_rows
        self.problem = problem
        self.layer = CvxpyLayer(problem, parameters=params, variables=variables)
        self._param_order = [name for name in ("a_values", "b", "q") if name in self.data_parameters]

    # -- forward --------------------------------------------------------------------------------------
    def _check(self, name: str, value: torch.Tensor | None, shape: tuple[int, ...]) -> torch.Tensor | None:
        if value is None:
            return None
        if name not in self.data_parameters:
            raise ValueError(f"{name} was not declared in parameters {self.data_parameters}")
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor; got {type(value).__name__}")
        if tuple(value.shape) != shape:
            raise ValueError(f"{name} must have shape {shape}; got {tuple(value.shape)}")
        return value.to(_F64)

    def forward(
        self,
        b: torch.Tensor | None = None,
        q: torch.Tensor | None = None,
        a_values: torch.Tensor | None = None,
    ) -> CvxpyLayersOutput:
        """Solve with the given data (``None``: the program's own) and return ``(x, y, qᵀx)``."""
        p = self.program
        m, n = p.shape
        nnz = sp.csc_matrix(p.A).nnz
        b = self._check("b", b, (m,))
        q = self._check("q", q, (n,))
        a_values = self._check("a_values", a_values, (nnz,))
        ref = next((t for t in (b, q, a_values) if t is not None), None)
        device = ref.device if ref is not None else torch.device("cpu")
        full = {
            "b": b if b is not None else torch.as_tensor(p.b, dtype=_F64, device=device),
            "q": q if q is not None else torch.as_tensor(p.q, dtype=_F64, device=device),
            "a_values": a_values
            if a_values is not None
            else torch.as_tensor(sp.csc_matrix(p.A).data, dtype=_F64, device=device),
        }
        if self.form == "direct":
            psd_b = full["b"][p.zero + p.nonneg :]
            if torch.any(psd_b != 0):
                raise ValueError("b: the direct form needs b = 0 on the PSD rows (use form='slack')")
            dropped = full["a_values"][torch.as_tensor(self._dropped_entries, device=device)]
            if torch.any(dropped != -1.0):
                raise ValueError("a_values: the direct form needs −1 on the PSD rows (use form='slack')")
        inputs = {
            "b": full["b"][torch.as_tensor(self._kept_rows, device=device)],
            "q": full["q"],
            "a_values": full["a_values"][torch.as_tensor(self._kept_entries, device=device)],
        }
        args = [inputs[name].cpu() for name in self._param_order]
        solver_args = {"eps_abs": self.eps, "eps_rel": self.eps, "max_iters": self.max_iters}
        if torch.is_grad_enabled() and any(t.requires_grad for t in args):
            solver_args["mode"] = self.mode  # diffcp's backward; a solve without one must not get it
        out = self.layer(*args, solver_args=solver_args)
        out = [t.to(device=device, dtype=_F64) for t in out]
        mats = out[: self._n_mats]
        w = out[self._n_mats] if self._has_w else None
        duals = out[self._n_mats + int(self._has_w) :]
        svecs = [self._svec(S) for S in mats]
        x = torch.zeros(n, dtype=_F64, device=device)
        if self.form == "direct":
            if svecs:
                x = x.index_put((torch.as_tensor(self._psd_cols, device=device),), torch.cat(svecs))
            if w is not None:
                x = x.index_put((torch.as_tensor(self._free, device=device),), w)
        else:
            x = w
        y = self._dual(duals, device)
        return CvxpyLayersOutput(x, y, full["q"] @ x)

    @staticmethod
    def _svec(S: torch.Tensor) -> torch.Tensor:
        i, j = triangle_indices(S.shape[0])
        scale = torch.as_tensor(np.where(i == j, 1.0, SQRT2), dtype=_F64, device=S.device)
        return S[torch.as_tensor(i, device=S.device), torch.as_tensor(j, device=S.device)] * scale

    def _dual(self, duals: list[torch.Tensor], device: torch.device) -> torch.Tensor:
        """``y`` in our convention (``y ∈ K*``): the equality rows' duals (cvxpy's sign is ours), the
        nonnegative rows' duals, and the PSD duals (of ``S_k ⪰ 0`` in the direct form; of the PSD equality
        rows in the slack form)."""
        p = self.program
        m = p.shape[0]
        y = torch.zeros(m, dtype=_F64, device=device)
        k = 0
        if self._eq is not None:
            rows = self._kept_rows[self._eq_rows] if self.form == "direct" else self._eq_rows
            y = y.index_put((torch.as_tensor(rows, device=device),), duals[k].reshape(-1))
            k += 1
        if self._nn is not None:
            rows = np.arange(p.zero, p.zero + p.nonneg)
            y = y.index_put((torch.as_tensor(rows, device=device),), duals[k].reshape(-1))
            k += 1
        if self.form == "direct" and p.psd:
            psd = torch.cat([self._svec(Z) for Z in duals[k:]])
            y = y.index_put((torch.arange(p.zero + p.nonneg, m, device=device),), psd)
        return y
