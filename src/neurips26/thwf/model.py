"""The random-subspace model of sparse blind deconvolution (chapter 01, Eq. (1)).

A length-``M`` circular convolution ``y = f ⊛ g + e`` of a kernel ``f = [h; 0]`` (``h`` in C^K,
``s_h``-sparse) and a signal ``g = C x̄`` (the *conjugate* of the ``s_x``-sparse code ``x`` in C^N,
with ``A = sqrt(M) conj(F_M C)``) becomes, after a unitary DFT ``F_M`` of both sides, the *lifted*
linear model

    y_l = (b_l^* h) · conj(a_l^* x) + e_l = b_l^* (h x^*) a_l + e_l,      l = 1, ..., M,

(the convolution theorem gives ``sqrt(M) (F_M g)_l = conj(a_l^* x)``, which is conjugate-linear in
``x``: no dictionary maps ``x`` itself to ``g``; :func:`time_domain_signals` builds ``f`` and ``g``)

i.e. ``y = 𝒜(h x^*) + e`` with ``𝒜(Z)_l = b_l^* Z a_l``. Here ``B`` (rows ``b_l^*``) holds the first
``K`` columns of the unitary ``M``-point DFT, so ``B^* B = I_K``, and ``A`` (rows ``a_l^*``) has
i.i.d. CN(0, 1) entries (the theory model of Li, Ling, Strohmer & Wei, 2016). The adjoint is
``𝒜^*(z) = Σ_l z_l b_l a_l^* = B^* diag(z) A`` and ``E[𝒜^* 𝒜(Z)] = Z``.

Every operator here is matrix-free (the ``M × KN`` matrix of ``𝒜`` is never formed; ``B`` is
applied by FFT, :func:`dft_columns` builds it only for tests and pictures) and accepts leading batch
axes: ``A`` of shape ``(..., M, N)`` with ``h`` of shape ``(..., K)`` and ``x`` of shape
``(..., N)``, so the same code serves one instance and a stack of independent trials.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neurips26.validation import check_array, check_choice, check_float, check_int, check_seed

AMPLITUDES: tuple[str, ...] = ("gaussian", "equal")


@functools.lru_cache(maxsize=64)
def _dft_columns(m: int, k: int) -> np.ndarray:
    rows = np.arange(m)[:, None]
    cols = np.arange(k)[None, :]
    # B[l, k] = exp(-2πi l k / M) / sqrt(M): the first K columns of the unitary DFT.
    b = np.exp(-2j * np.pi * ((rows * cols) % m) / m) / np.sqrt(m)
    b.setflags(write=False)
    return b


def dft_columns(m: int, k: int) -> np.ndarray:
    """``B`` in C^{M×K}: the first ``K`` columns of the unitary ``M``-point DFT (``B^* B = I_K``).

    The result is cached and read-only. Needs ``K <= M`` (a kernel no longer than the signal).
    """
    m = check_int("m", m, minimum=1)
    k = check_int("k", k, minimum=1, maximum=m)
    return _dft_columns(m, k)


def check_complex(name: str, value: object, **kwargs) -> np.ndarray:
    """A finite complex array (complex128 arithmetic is the chapter's convention)."""
    arr = check_array(name, value, **kwargs)
    if arr.dtype.kind != "c":
        raise TypeError(f"{name} must be a complex array (complex128); got dtype {arr.dtype}")
    return arr


def apply_b(h: np.ndarray, m: int) -> np.ndarray:
    """``B h`` (rows ``b_l^* h``): the unitary ``M``-point DFT of ``h`` zero-padded to length ``M``.

    This is the kernel's spectrum; an FFT costs ``O(M log M)`` and, unlike a matrix product,
    never calls a multi-threaded BLAS (which is slow for many small products on 2 cores).
    """
    return np.fft.fft(h, n=m, axis=-1, norm="ortho")


def apply_b_adjoint(v: np.ndarray, k: int) -> np.ndarray:
    """``B^* v = Σ_l v_l b_l``: the first ``K`` entries of the unitary inverse DFT of ``v``."""
    return np.fft.ifft(v, axis=-1, norm="ortho")[..., :k]


def check_operator_args(a: object) -> np.ndarray:
    """``A`` as a complex array of shape ``(..., M, N)``."""
    a = check_complex("A", a)
    if a.ndim < 2:
        raise ValueError(f"A must have shape (..., M, N); got {a.shape}")
    return a


def check_factors(a: np.ndarray, h: object, x: object) -> tuple[np.ndarray, np.ndarray]:
    """``h`` (..., K) with ``K <= M`` and ``x`` (..., N) matching ``A`` (..., M, N)."""
    h = check_complex("h", h)
    x = check_complex("x", x)
    if h.ndim < 1 or h.shape[-1] > a.shape[-2]:
        raise ValueError(f"h must have shape (..., K) with K <= M={a.shape[-2]}; got {h.shape}")
    if x.shape[-1:] != (a.shape[-1],):
        raise ValueError(f"x must have shape (..., N={a.shape[-1]}); got {x.shape}")
    return h, x


def forward_unchecked(a: np.ndarray, h: np.ndarray, x: np.ndarray) -> np.ndarray:
    """:func:`forward` without argument checks, for solver inner loops (inputs already validated)."""
    bh = apply_b(h, a.shape[-2])  # b_l^* h for every l
    ax = (a @ x[..., None])[..., 0]  # a_l^* x (batched mat-vec)
    return bh * np.conj(ax)


def forward(a: np.ndarray, h: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``𝒜(h x^*)``: the noiseless measurements ``(b_l^* h) · conj(a_l^* x)``, shape ``(..., M)``.

    Implements Eq. (1) of chapter 01 in ``O(M(N + log M))`` without forming ``h x^*``; ``K`` is
    the length of ``h`` and ``M`` the number of rows of ``A``.
    """
    a = check_operator_args(a)
    h, x = check_factors(a, h, x)
    return forward_unchecked(a, h, x)


def time_domain_signals(a: np.ndarray, h: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The time-domain pair ``(f, g)`` behind :func:`forward`: ``f = [h; 0]`` and ``g = C x̄``.

    ``C = F_M^* conj(A) / sqrt(M)`` is the dictionary with ``A = sqrt(M) conj(F_M C)``, so
    ``F_M(f ⊛ g) = forward(A, h, x)`` (unitary DFT, circular convolution of length ``M``).
    """
    a = check_operator_args(a)
    h, x = check_factors(a, h, x)
    m = a.shape[-2]
    f = np.concatenate([h, np.zeros(h.shape[:-1] + (m - h.shape[-1],), dtype=h.dtype)], axis=-1)
    dictionary = np.fft.ifft(np.conj(a), axis=-2, norm="ortho") / np.sqrt(m)  # C = F_M^* conj(A)/sqrt(M)
    g = (dictionary @ np.conj(x)[..., None])[..., 0]  # g = C x̄
    return f, g


def lifted_forward(a: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``𝒜(Z)_l = b_l^* Z a_l`` for a general (not necessarily rank-one) ``Z`` in C^{K×N}."""
    a = check_operator_args(a)
    z = check_complex("Z", z)
    if z.ndim < 2 or z.shape[-1] != a.shape[-1] or z.shape[-2] > a.shape[-2]:
        want = f"(..., K, N={a.shape[-1]}) with K <= M={a.shape[-2]}"
        raise ValueError(f"Z must have shape {want}; got {z.shape}")
    # b_l^* Z a_l = Σ_ij B[l,i] Z[i,j] conj(A[l,j]) with a_l^* = A[l, :]: row l of (B Z) against conj(a_l^*).
    bz = np.fft.fft(z, n=a.shape[-2], axis=-2, norm="ortho")  # B Z, column by column
    return np.sum(bz * np.conj(a), axis=-1)


def adjoint_unchecked(a: np.ndarray, z: np.ndarray, k: int) -> np.ndarray:
    """:func:`adjoint` without argument checks."""
    # B^* diag(z) A: the inverse DFT of every column of diag(z) A, first K rows.
    return np.fft.ifft(z[..., :, None] * a, axis=-2, norm="ortho")[..., :k, :]


def adjoint(a: np.ndarray, z: np.ndarray, k: int) -> np.ndarray:
    """``𝒜^*(z) = B^* diag(z) A`` in C^{K×N} (the back-projection of chapter 01, Eq. (2))."""
    a = check_operator_args(a)
    z = check_complex("z", z)
    k = check_int("k", k, minimum=1, maximum=a.shape[-2])
    if z.shape[-1:] != (a.shape[-2],):
        raise ValueError(f"z must have shape (..., M={a.shape[-2]}); got {z.shape}")
    return adjoint_unchecked(a, z, k)


class _Sizes:
    """Sizes shared by :class:`Problem` and :class:`ProblemBatch` (``a`` is ``(..., M, N)``)."""

    a: np.ndarray
    k: int
    h0: np.ndarray | None

    @property
    def m(self) -> int:
        return self.a.shape[-2]

    @property
    def n(self) -> int:
        return self.a.shape[-1]

    @property
    def b(self) -> np.ndarray:
        return dft_columns(self.m, self.k)

    @property
    def has_truth(self) -> bool:
        return self.h0 is not None


@dataclass(frozen=True)
class Problem(_Sizes):
    """One blind-deconvolution instance: data ``(A, y)``, kernel length ``K``, optional truth.

    ``A`` is ``(M, N)`` with rows ``a_l^*``; ``y`` is ``(M,)``. ``h0``/``x0`` (unit norm in
    :func:`make_problem`) are kept only to measure errors; solvers never read them.
    """

    a: np.ndarray
    y: np.ndarray
    k: int
    h0: np.ndarray | None = None
    x0: np.ndarray | None = None

    def __post_init__(self) -> None:
        a = check_complex("a", self.a, ndim=2)
        m, n = a.shape
        check_int("k", self.k, minimum=1, maximum=m)
        check_complex("y", self.y, shape=(m,))
        if (self.h0 is None) != (self.x0 is None):
            raise ValueError("h0 and x0 must be given together (both or neither)")
        if self.h0 is not None:
            check_complex("h0", self.h0, shape=(self.k,))
            check_complex("x0", self.x0, shape=(n,))


@dataclass(frozen=True)
class ProblemBatch(_Sizes):
    """``T`` independent instances of one size, stacked: ``a`` (T, M, N), ``y`` (T, M).

    ``h0`` (T, K) and ``x0`` (T, N) are optional; the batched solvers use this layout.
    """

    a: np.ndarray
    y: np.ndarray
    k: int
    h0: np.ndarray | None = None
    x0: np.ndarray | None = None

    def __post_init__(self) -> None:
        a = check_complex("a", self.a, ndim=3)
        t, m, n = a.shape
        check_int("k", self.k, minimum=1, maximum=m)
        check_complex("y", self.y, shape=(t, m))
        if (self.h0 is None) != (self.x0 is None):
            raise ValueError("h0 and x0 must be given together (both or neither)")
        if self.h0 is not None:
            check_complex("h0", self.h0, shape=(t, self.k))
            check_complex("x0", self.x0, shape=(t, n))

    def __len__(self) -> int:
        return self.a.shape[0]

    def problem(self, index: int) -> Problem:
        """The ``index``-th instance as a :class:`Problem`."""
        index = check_int("index", index, minimum=0, maximum=len(self) - 1)
        truth = (self.h0[index], self.x0[index]) if self.has_truth else (None, None)
        return Problem(self.a[index], self.y[index], self.k, *truth)


def stack_problems(problems: Sequence[Problem]) -> ProblemBatch:
    """Stack instances of one size ``(M, N, K)`` into a :class:`ProblemBatch`."""
    if not problems:
        raise ValueError("problems must be a non-empty sequence")
    shapes = {(p.m, p.n, p.k) for p in problems}
    if len(shapes) != 1:
        raise ValueError(f"problems must share (M, N, K); got {sorted(shapes)}")
    truth = all(p.has_truth for p in problems)
    return ProblemBatch(
        np.stack([p.a for p in problems]),
        np.stack([p.y for p in problems]),
        problems[0].k,
        np.stack([p.h0 for p in problems]) if truth else None,
        np.stack([p.x0 for p in problems]) if truth else None,
    )


def sparse_unit_vectors(
    rng: np.random.Generator, length: int, sparsity: np.ndarray, amplitudes: str
) -> np.ndarray:
    """Rows of unit-norm vectors in C^length with ``sparsity[t]`` nonzeros on a uniform random support.

    ``amplitudes="gaussian"``: CN(0, 1) nonzeros, then normalised. ``"equal"``: random phases with
    modulus ``1/sqrt(s)`` (used for support recovery, where the weakest coefficient matters).
    """
    t = sparsity.shape[0]
    # A uniform random support: the s smallest of `length` i.i.d. uniforms in each row.
    ranks = np.argsort(np.argsort(rng.random((t, length)), axis=1), axis=1)
    mask = ranks < sparsity[:, None]
    if amplitudes == "gaussian":
        values = rng.standard_normal((t, length)) + 1j * rng.standard_normal((t, length))
    else:
        values = np.exp(2j * np.pi * rng.random((t, length)))
    v = np.where(mask, values, 0.0)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _sparsity_array(name: str, value: int | Sequence[int], trials: int, length: int) -> np.ndarray:
    if not isinstance(value, (list, tuple, np.ndarray)):
        return np.full(trials, check_int(name, value, minimum=1, maximum=length))
    values = list(value)
    if len(values) != trials:
        raise ValueError(f"{name} must be an int or a sequence of length trials={trials}; got {len(values)}")
    return np.array([check_int(f"{name}[{i}]", v, minimum=1, maximum=length) for i, v in enumerate(values)])


def make_problem_batch(
    k: int,
    n: int,
    m: int,
    s_h: int | Sequence[int],
    s_x: int | Sequence[int],
    trials: int,
    *,
    noise: float = 0.0,
    amplitudes: str = "gaussian",
    seed: int = 0,
) -> ProblemBatch:
    """``trials`` independent instances of Eq. (1): ``A`` i.i.d. CN(0,1), unit-norm sparse ``h0, x0``.

    ``s_h``/``s_x`` are one sparsity for all trials or one per trial (so a phase-transition column
    with several sparsities is one batch). Noise is bounded, ``||e|| = noise · ||𝒜(h0 x0^*)||``, in a
    uniformly random complex direction.
    """
    k = check_int("k", k, minimum=1)
    n = check_int("n", n, minimum=1)
    m = check_int("m", m, minimum=k)
    trials = check_int("trials", trials, minimum=1)
    noise = check_float("noise", noise, minimum=0.0)
    check_choice("amplitudes", amplitudes, AMPLITUDES)
    seed = check_seed("seed", seed)
    sh = _sparsity_array("s_h", s_h, trials, k)
    sx = _sparsity_array("s_x", s_x, trials, n)

    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((trials, m, n)) + 1j * rng.standard_normal((trials, m, n))) / np.sqrt(2.0)
    h0 = sparse_unit_vectors(rng, k, sh, amplitudes)
    x0 = sparse_unit_vectors(rng, n, sx, amplitudes)
    y = forward_unchecked(a, h0, x0)
    if noise > 0.0:
        e = rng.standard_normal((trials, m)) + 1j * rng.standard_normal((trials, m))
        scale = noise * np.linalg.norm(y, axis=1, keepdims=True) / np.linalg.norm(e, axis=1, keepdims=True)
        y = y + scale * e
    return ProblemBatch(a, y, k, h0, x0)


def make_problem(
    k: int,
    n: int,
    m: int,
    s_h: int,
    s_x: int,
    *,
    noise: float = 0.0,
    amplitudes: str = "gaussian",
    seed: int = 0,
) -> Problem:
    """One instance of Eq. (1); see :func:`make_problem_batch` for the distribution."""
    return make_problem_batch(k, n, m, s_h, s_x, 1, noise=noise, amplitudes=amplitudes, seed=seed).problem(0)
