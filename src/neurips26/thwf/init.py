"""Spectral initialisers (chapter 01, §"Sparse spectral initialisation", Eq. (5)).

Because ``E[𝒜^*(y)] = h0 x0^*`` on noiseless data, the back-projection ``Y = 𝒜^*(y) = B^* diag(y) A``
is a noisy copy of the rank-one, ``s_h × s_x``-sparse matrix ``h0 x0^*``. Each entry carries noise
of size ``≈ d̂/sqrt(M)`` with ``d̂ = ||y|| ≈ ||h0|| ||x0||``.

* :func:`sparse_spectral_init` (ThWF): pick the row support ``Ŝ_h`` and column support ``Ŝ_x``
  from the row and column maxima of ``|Y|``, then take the leading singular pair
  ``(σ1, u, v)`` of ``Y`` restricted to ``Ŝ_h × Ŝ_x``: ``h⁰ = sqrt(σ1) u``, ``x⁰ = sqrt(σ1) v``.
  Support rules: ``"top_s"`` keeps the ``s_h`` (``s_x``) largest maxima (known sparsity, default);
  ``"adaptive"`` keeps every row (column) whose maximum exceeds
  ``τ0 = α d̂ sqrt(log(KN)/M)`` (unknown sparsity; ``α = 2`` **[ours]**).
  The maxima, not the row norms, are used because the noise in a row norm grows with ``N``.
* :func:`dense_spectral_init` (RGD and the dense-init ablation): the leading singular pair of the
  whole ``Y``.

The restriction is done by zeroing the rows/columns outside the supports, whose leading singular
pair is that of the submatrix padded with zeros; this handles one instance and a batch
(with a different support size per instance) in the same code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.thwf.model import Problem, ProblemBatch, adjoint_unchecked
from neurips26.thwf.threshold import top_s_mask_unchecked
from neurips26.validation import check_choice, check_float, check_int

SUPPORT_RULES: tuple[str, ...] = ("top_s", "adaptive")


@dataclass(frozen=True)
class Initialization:
    """Initial factors and what the initialiser estimated (leading axes = batch, if any).

    ``h`` (…, K), ``x`` (…, N); ``support_h``/``support_x`` boolean masks of the chosen supports;
    ``d_hat = ||y||`` (the data's scale, for the screening level and the divergence test); ``sigma1``
    the leading singular value, ``= ||h⁰|| ||x⁰||`` (the initial estimate's scale; with ``d_hat`` it
    sets ThWF's step).
    """

    h: np.ndarray
    x: np.ndarray
    support_h: np.ndarray
    support_x: np.ndarray
    d_hat: np.ndarray
    sigma1: np.ndarray


def _check_problem(problem: object) -> Problem | ProblemBatch:
    if not isinstance(problem, (Problem, ProblemBatch)):
        raise TypeError(f"problem must be a Problem or ProblemBatch; got {type(problem).__name__}")
    return problem


def sparsity_argument(
    name: str, value: object, problem: Problem | ProblemBatch, length: int
) -> int | np.ndarray:
    """A sparsity: an int in [1, length], or (for a batch) one int per instance."""
    if isinstance(value, np.ndarray) or isinstance(value, (list, tuple)):
        if not isinstance(problem, ProblemBatch):
            raise TypeError(f"{name} must be an int for a single Problem; got {type(value).__name__}")
        arr = np.asarray(value)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{name} must hold integers; got dtype {arr.dtype}")
        if arr.shape != (len(problem),):
            raise ValueError(f"{name} must have shape ({len(problem)},) (one per instance); got {arr.shape}")
        if arr.min() < 1 or arr.max() > length:
            raise ValueError(f"{name} must lie in [1, {length}]; got values in [{arr.min()}, {arr.max()}]")
        return arr.astype(np.int64)
    return check_int(name, value, minimum=1, maximum=length)


def back_projection(problem: Problem | ProblemBatch) -> np.ndarray:
    """``Y = 𝒜^*(y) = B^* diag(y) A`` (K×N, or T×K×N for a batch)."""
    problem = _check_problem(problem)
    return adjoint_unchecked(problem.a, problem.y, problem.k)


def _leading_pair(y_masked: np.ndarray, d_hat: np.ndarray, mask_h, mask_x) -> Initialization:
    u, sv, vh = np.linalg.svd(y_masked, full_matrices=False)
    sigma1 = sv[..., 0]
    root = np.sqrt(sigma1)[..., None]
    # Y ≈ σ1 u v^* ≈ h0 x0^*  →  h⁰ = sqrt(σ1) u,  x⁰ = sqrt(σ1) v  (v = conj of the first row of V^*)
    h = root * u[..., :, 0] * mask_h
    x = root * np.conj(vh[..., 0, :]) * mask_x
    return Initialization(h, x, mask_h, mask_x, d_hat, sigma1)


def sparse_spectral_init(
    problem: Problem | ProblemBatch,
    s_h: int | np.ndarray,
    s_x: int | np.ndarray,
    *,
    rule: str = "top_s",
    alpha: float = 2.0,
) -> Initialization:
    """ThWF's sparse spectral initialiser (Eq. (5)); see the module docstring.

    ``s_h``/``s_x`` are used by ``rule="top_s"`` (ints, or one per instance of a batch) and
    ignored by ``rule="adaptive"``, which uses ``alpha`` instead. An empty adaptive support falls
    back to the single largest row/column **[ours]**.
    """
    problem = _check_problem(problem)
    check_choice("rule", rule, SUPPORT_RULES)
    alpha = check_float("alpha", alpha, minimum=0.0, strict_min=True)
    k, n, m = problem.k, problem.n, problem.m
    s_h = sparsity_argument("s_h", s_h, problem, k)
    s_x = sparsity_argument("s_x", s_x, problem, n)

    y_back = adjoint_unchecked(problem.a, problem.y, problem.k)  # Y = 𝒜^*(y)
    d_hat = np.linalg.norm(problem.y, axis=-1)  # d̂ = ||y|| ≈ ||h0|| ||x0||
    modulus = np.abs(y_back)
    row_max = modulus.max(axis=-1)  # max_j |Y_ij|, one score per kernel tap i
    col_max = modulus.max(axis=-2)  # max_i |Y_ij|, one score per code entry j
    if rule == "top_s":
        mask_h = top_s_mask_unchecked(row_max, s_h)
        mask_x = top_s_mask_unchecked(col_max, s_x)
    else:
        tau0 = alpha * d_hat * np.sqrt(np.log(k * n) / m)  # τ0 = α d̂ sqrt(log(KN)/M)
        mask_h = (row_max > np.asarray(tau0)[..., None]) | top_s_mask_unchecked(row_max, 1)
        mask_x = (col_max > np.asarray(tau0)[..., None]) | top_s_mask_unchecked(col_max, 1)
    y_masked = y_back * mask_h[..., :, None] * mask_x[..., None, :]
    return _leading_pair(y_masked, d_hat, mask_h, mask_x)


def dense_spectral_init(problem: Problem | ProblemBatch) -> Initialization:
    """The leading singular pair of the whole back-projection ``Y`` (Li et al., 2016)."""
    problem = _check_problem(problem)
    y_back = adjoint_unchecked(problem.a, problem.y, problem.k)
    d_hat = np.linalg.norm(problem.y, axis=-1)
    mask_h = np.ones(y_back.shape[:-1], dtype=bool)
    mask_x = np.ones(y_back.shape[:-2] + y_back.shape[-1:], dtype=bool)
    return _leading_pair(y_back, d_hat, mask_h, mask_x)
