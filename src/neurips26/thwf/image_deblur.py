"""Image deblurring methods of chapter 01 (§3.6 and §4 item 6) on the model of ``image_model``.

* :func:`thwf_2d` — ThWF for images: gradient steps on ``F(k, X)`` each followed by hard
  top-``s`` thresholding of the kernel (``s_h`` taps) and of the DCT coefficients (``s_x``).
* :func:`dense_wf_2d` — the same iterations without thresholding (the RGD-style dense baseline
  and the thresholding ablation for images).
* :func:`oracle_sparse_deconvolution` — non-blind: the ThWF coefficient steps with the *true*
  kernel fixed (same sparsity prior and budget; the upper-bound reference for ThWF).
* :func:`oracle_deconvolution` — non-blind Tikhonov (Wiener-type) deconvolution with the true
  kernel and a regularisation set by the discrepancy principle (the classical reference; it
  does not use sparsity, so in noise a sparse blind method can beat it).
* the blurred input itself is the "no deblurring" reference (no function needed).

Choices [ours], because the paper's image experiment is not available:

* **Initialiser** (:func:`support_screening_init`, the default). The paper's image initialiser is
  unknown (only the abstract was found). The 1-D method screens the kernel taps with the
  back-projection ``𝒜^*(y)`` (Eq. (5)), which works because the random dictionary makes
  ``𝔼 𝒜^*𝒜 = I``. For an image the row of ``𝒜^*(Y)`` for tap ``i`` is ``D(Y shifted by −offset_i)``,
  and every shift of a smooth image has nearly the same low-frequency DCT coefficients, so those
  rows hardly differ and their maxima cannot pick the taps. We screen the taps by the loss
  instead: greedily add, then swap, single taps of a kernel with equal weights on its support, each
  candidate scored by ``F`` at ``(k, H_{s_x}(D ĝ_k))`` where ``ĝ_k`` is the Tikhonov deconvolution of
  ``Y`` by ``k`` (``λ = 10^{-2}``, relative to ``|K(0)|² = 1``) [ours]. The start is that kernel and
  those coefficients. It places no tap by assumption, so kernels whose support avoids the window
  centre can be found.
  :func:`initial_estimate` keeps the older start ``k⁰ = δ`` (a delta at the window centre) with
  ``X⁰ = H_{s_x}(D Y)`` (``init="delta"``): it can only find kernels with a tap at the centre,
  since from it ThWF stays at the "no blur" solution otherwise. The dense baseline starts from the
  same point as ThWF (from the full ``(δ, D Y)`` the gradient is exactly zero).
* **Step rule.** Alternating (Gauss–Seidel) block steps, kernel then coefficients. Each block
  uses the exact line-search step along its gradient restricted to the current support (the
  normalised-IHT step of Blumensath & Davies, 2010; on the whole block for the dense method),
  halved until the loss does not increase. ``F`` is quadratic in each block, so the step is
  closed form, needs no tuning, adapts to the scale ambiguity ``(αk, X/α)``, and the loss history
  is non-increasing by construction (dense WF cannot diverge).
* **Scaling ambiguity.** Blind methods recover ``(αk, X/α)``. :func:`normalize_kernel_gain`
  fixes ``α`` by making the kernel sum to 1 (the true kernel does), before display and PSNR.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.fft

from neurips26.thwf.image_model import (
    check_image,
    check_kernel,
    check_window,
    circular_convolve_unchecked,
    circular_correlate_unchecked,
    crop_kernel,
    embed_kernel,
    keep_largest,
)
from neurips26.validation import check_array, check_choice, check_float, check_int

_MAX_HALVINGS = 30  # a step shrunk 2^30-fold is numerically zero: keep the old block instead
INITS: tuple[str, ...] = ("screening", "delta")
SCREENING_REGULARIZATION = 1e-2  # λ of the screening's Tikhonov step, relative to |K(0)|² = 1 [ours]


@dataclass(frozen=True)
class DeblurResult:
    """Output of an iterative method: the estimate (kernel gain normalised to 1) and its history."""

    kernel: np.ndarray  # estimated k / α, sums to 1, (w, w)
    coeffs: np.ndarray  # estimated α·X, (n1, n2)
    image: np.ndarray  # D^{-1}(α·X), the restored image
    loss_history: np.ndarray  # F after 0, 1, ..., iterations steps (non-increasing)
    iterations: int  # iterations actually run (≤ the budget; fewer only on stagnation)


def initial_estimate(observation: np.ndarray, window: int, s_x: int | None) -> tuple[np.ndarray, np.ndarray]:
    """``(k⁰, X⁰) = (δ_centre, H_{s_x}(D Y))``; ``s_x=None`` keeps all coefficients. [ours]"""
    observation = check_image("observation", observation)
    w = check_window("window", window, observation.shape)
    coeffs = scipy.fft.dctn(observation, norm="ortho")
    if s_x is not None:
        coeffs = keep_largest(coeffs, check_int("s_x", s_x, minimum=1, maximum=observation.size))
    kernel = np.zeros((w, w))
    kernel[w // 2, w // 2] = 1.0
    return kernel, coeffs


def _screening_fit(
    y_hat: np.ndarray, observation: np.ndarray, kernel: np.ndarray, s_x: int, lam: float
) -> tuple[float, np.ndarray]:
    """``F(k, X_k)`` with ``X_k = H_{s_x}(D ĝ)``, ``ĝ`` the Tikhonov deconvolution of ``Y`` by ``k``."""
    shape = observation.shape
    k_hat = scipy.fft.rfft2(embed_kernel(kernel, shape))
    g = scipy.fft.irfft2(np.conj(k_hat) * y_hat / (np.abs(k_hat) ** 2 + lam), s=shape)
    coeffs = keep_largest(scipy.fft.dctn(g, norm="ortho"), s_x)
    fit = scipy.fft.irfft2(k_hat * scipy.fft.rfft2(scipy.fft.idctn(coeffs, norm="ortho")), s=shape)
    return float(np.sum((fit - observation) ** 2)), coeffs


def support_screening_init(
    observation: np.ndarray,
    window: int,
    s_h: int,
    s_x: int,
    regularization: float = SCREENING_REGULARIZATION,
    swap_rounds: int = 3,
) -> tuple[np.ndarray, np.ndarray]:
    """ThWF-2D's start: the kernel support screened by the loss, anywhere in the window. [ours]

    A candidate support ``S`` is scored by ``F(k_S, X_S)``: ``k_S`` has equal weights ``1/|S|`` on
    ``S`` (so ``K(0) = 1``), and ``X_S = H_{s_x}(D ĝ)`` with ``ĝ`` the Tikhonov deconvolution
    ``F^{-1}[conj(K) F(Y) / (|K|² + λ)]``. Greedy forward selection adds the best tap ``s_h`` times,
    then up to ``swap_rounds`` rounds replace single taps while that lowers the score. Returns
    ``(k⁰, X⁰) = (k_Ŝ, X_Ŝ)``. Cost: about ``(1 + swap_rounds) · s_h · w²`` scores of a few FFTs each.
    """
    observation = check_image("observation", observation)
    w = check_window("window", window, observation.shape)
    s_h = check_int("s_h", s_h, minimum=1, maximum=w * w)
    s_x = check_int("s_x", s_x, minimum=1, maximum=observation.size)
    lam = check_float("regularization", regularization, minimum=0.0, strict_min=True)
    swap_rounds = check_int("swap_rounds", swap_rounds, minimum=0)
    y_hat = scipy.fft.rfft2(observation)

    def score(taps: list[int]) -> float:
        kernel = np.zeros(w * w)
        kernel[taps] = 1.0 / len(taps)
        return _screening_fit(y_hat, observation, kernel.reshape(w, w), s_x, lam)[0]

    support: list[int] = []
    for _ in range(s_h):  # greedy forward selection (ties: the lowest flat index)
        candidates = [i for i in range(w * w) if i not in support]
        scores = [score(support + [i]) for i in candidates]
        support.append(candidates[int(np.argmin(scores))])
    best = score(support)
    for _ in range(swap_rounds):  # single-tap swaps while the score drops
        improved = False
        for position in range(s_h):
            for i in range(w * w):
                if i in support:
                    continue
                trial = support.copy()
                trial[position] = i
                value = score(trial)
                if value < best:
                    support, best, improved = trial, value, True
        if not improved:
            break
    kernel = np.zeros(w * w)
    kernel[support] = 1.0 / s_h
    kernel = kernel.reshape(w, w)
    return kernel, _screening_fit(y_hat, observation, kernel, s_x, lam)[1]


def normalize_kernel_gain(kernel: np.ndarray, coeffs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Resolve the scaling ambiguity ``(αk, X/α) ~ (k, X)``: return ``(k/α, α·X)`` with ``α = Σ k``.

    The product ``k ⊛ D^{-1}X`` is unchanged and the kernel then sums to 1 like the true one
    (a negative ``α`` also flips the sign). If ``|Σ k|`` is numerically zero the gain cannot be
    read off the sum; then ``α`` is the kernel's largest-magnitude tap (signed).
    """
    kernel = check_kernel("kernel", kernel)
    coeffs = check_image("coeffs", coeffs)
    alpha = float(kernel.sum())
    if abs(alpha) <= 1e-12 * max(float(np.abs(kernel).sum()), 1e-300):
        alpha = float(kernel.ravel()[np.argmax(np.abs(kernel))])
    if alpha == 0.0:
        return kernel.copy(), coeffs.copy()
    return kernel / alpha, coeffs * alpha


def _block_step(
    x: np.ndarray,
    grad: np.ndarray,
    apply: Callable[[np.ndarray], np.ndarray],
    residual: np.ndarray,
    current_loss: float,
    s: int | None,
) -> tuple[np.ndarray, np.ndarray, float]:
    """One (thresholded) gradient step on a block where ``F = ||apply(x) − Y||²`` is quadratic.

    ``apply`` is the linear map of this block with the other block fixed, and ``residual`` is
    ``apply(x) − Y``. Exact line search along the gradient restricted to ``supp(x)``:
    ``μ = ||∇_S||² / (2 ||apply(∇_S)||²)`` (F(x − μ∇_S) is minimal there), then
    ``x⁺ = H_s(x − μ ∇)`` and ``μ ← μ/2`` until ``F(x⁺) ≤ F(x)``.
    Returns ``(x⁺, apply(x⁺) − Y, F(x⁺))``.
    """
    direction = grad if s is None else np.where(x != 0, grad, 0.0)
    if not np.any(direction):  # empty support or zero gradient there: use the full gradient
        direction = grad
    image_of_direction = apply(direction)
    denom = 2.0 * float(np.sum(image_of_direction**2))
    if denom == 0.0:
        return x, residual, current_loss
    step = float(np.sum(direction**2)) / denom
    for _ in range(_MAX_HALVINGS):
        candidate = x - step * grad
        if s is not None:
            candidate = keep_largest(candidate, s)
        new_residual = residual + apply(candidate - x)  # apply is linear
        new_loss = float(np.sum(new_residual**2))
        if new_loss <= current_loss:
            return candidate, new_residual, new_loss
        step *= 0.5
    return x, residual, current_loss


def _kernel_step(
    observation: np.ndarray,
    kernel: np.ndarray,
    g: np.ndarray,
    residual: np.ndarray,
    current: float,
    s_h: int | None,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Kernel block, image ``g`` fixed: ``F(k) = ||g ⊛ E k − Y||²``, ``∇_k F = 2 P_w(R ⋆ g)``."""
    shape = observation.shape
    grad_k = 2.0 * crop_kernel(circular_correlate_unchecked(residual, g), kernel.shape[0])
    g_hat = scipy.fft.rfft2(g)

    def apply_k(d: np.ndarray) -> np.ndarray:  # d ↦ (E d) ⊛ g
        return scipy.fft.irfft2(scipy.fft.rfft2(embed_kernel(d, shape)) * g_hat, s=shape)

    return _block_step(kernel, grad_k, apply_k, residual, current, s_h)


def _coeff_step(
    observation: np.ndarray,
    kernel: np.ndarray,
    coeffs: np.ndarray,
    residual: np.ndarray,
    current: float,
    s_x: int | None,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Coefficient block, ``k`` fixed: ``F(X) = ||k ⊛ D^{-1}X − Y||²``, ``∇_X F = 2 D(R ⋆ k)``."""
    shape = observation.shape
    k_full = embed_kernel(kernel, shape)
    grad_x = 2.0 * scipy.fft.dctn(circular_correlate_unchecked(residual, k_full), norm="ortho")
    k_hat = scipy.fft.rfft2(k_full)

    def apply_x(d: np.ndarray) -> np.ndarray:  # d ↦ k ⊛ D^{-1} d
        return scipy.fft.irfft2(scipy.fft.rfft2(scipy.fft.idctn(d, norm="ortho")) * k_hat, s=shape)

    return _block_step(coeffs, grad_x, apply_x, residual, current, s_x)


def _alternating_descent(
    observation: np.ndarray,
    kernel: np.ndarray,
    coeffs: np.ndarray,
    s_h: int | None,
    s_x: int | None,
    iterations: int,
    tol: float,
    update_kernel: bool = True,
) -> DeblurResult:
    """Gauss–Seidel (thresholded) gradient iterations on ``F(k, X)``; ``s=None`` = no threshold.

    One iteration = a kernel step (skipped if ``update_kernel`` is False: the non-blind oracle)
    followed by a coefficient step. Stops early when the relative decrease of F is ``<= tol``.
    """
    g = scipy.fft.idctn(coeffs, norm="ortho")  # g = D^{-1}X
    k_full = embed_kernel(kernel, observation.shape)
    residual = circular_convolve_unchecked(k_full, g) - observation  # R = k ⊛ g − Y
    current = float(np.sum(residual**2))
    history = [current]
    done = 0
    for _ in range(iterations):
        before = current
        if update_kernel:
            kernel, residual, current = _kernel_step(observation, kernel, g, residual, current, s_h)
        coeffs, residual, current = _coeff_step(observation, kernel, coeffs, residual, current, s_x)
        g = scipy.fft.idctn(coeffs, norm="ortho")
        history.append(current)
        done += 1
        if before - current <= tol * before:  # stagnation (or F exactly zero)
            break
    kernel, coeffs = normalize_kernel_gain(kernel, coeffs)
    return DeblurResult(
        kernel=kernel,
        coeffs=coeffs,
        image=scipy.fft.idctn(coeffs, norm="ortho"),
        loss_history=np.asarray(history),
        iterations=done,
    )


def _start(
    observation: np.ndarray,
    w: int,
    s_h: int,
    s_x: int | None,
    init: str,
    start: tuple[np.ndarray, np.ndarray] | None,
) -> tuple[np.ndarray, np.ndarray]:
    """The starting point ``(k⁰, X⁰)``: given, screened (:func:`support_screening_init`) or delta."""
    if start is not None:
        if not isinstance(start, tuple) or len(start) != 2:
            raise TypeError("start must be a (kernel, coeffs) tuple")
        kernel = check_kernel("start[0]", start[0], observation.shape)
        if kernel.shape[0] != w:
            raise ValueError(f"start[0] must be a {w} × {w} window; got {kernel.shape}")
        coeffs = check_array("start[1]", start[1], shape=observation.shape, complex_ok=False)
        return kernel.copy(), coeffs.astype(np.float64)
    if check_choice("init", init, INITS) == "delta":
        return initial_estimate(observation, w, s_x)
    return support_screening_init(observation, w, s_h, s_x if s_x is not None else observation.size)


def thwf_2d(
    observation: np.ndarray,
    window: int,
    s_h: int,
    s_x: int,
    iterations: int = 300,
    tol: float = 1e-12,
    *,
    init: str = "screening",
    start: tuple[np.ndarray, np.ndarray] | None = None,
) -> DeblurResult:
    """ThWF for images (§3.6): thresholded alternating gradient steps from a start.

    Each iteration: ``k ← H_{s_h}(k − μ_k ∇_k F)``, then ``X ← H_{s_x}(X − μ_X ∇_X F)``
    (Eq. (12) gradients, steps from the exact line search of ``_block_step``). Stops early only
    when the relative decrease of ``F`` falls below ``tol``. The start is ``start`` if given, else
    :func:`support_screening_init` (``init="screening"``) or :func:`initial_estimate` (``"delta"``).
    """
    observation = check_image("observation", observation)
    w = check_window("window", window, observation.shape)
    s_h = check_int("s_h", s_h, minimum=1, maximum=w * w)
    s_x = check_int("s_x", s_x, minimum=1, maximum=observation.size)
    iterations = check_int("iterations", iterations, minimum=0)
    tol = check_float("tol", tol, minimum=0.0)
    kernel, coeffs = _start(observation, w, s_h, s_x, init, start)
    return _alternating_descent(observation, kernel, coeffs, s_h, s_x, iterations, tol)


def dense_wf_2d(
    observation: np.ndarray,
    window: int,
    s_h_init: int,
    s_x_init: int,
    iterations: int = 300,
    tol: float = 1e-12,
    *,
    init: str = "screening",
    start: tuple[np.ndarray, np.ndarray] | None = None,
) -> DeblurResult:
    """Dense WF for images: the iterations of :func:`thwf_2d` without any thresholding.

    Starts from the same point as ThWF (``s_h_init``, ``s_x_init`` = ThWF's sparsities, used only by
    the start), so the comparison isolates the thresholding.
    """
    observation = check_image("observation", observation)
    w = check_window("window", window, observation.shape)
    s_h_init = check_int("s_h_init", s_h_init, minimum=1, maximum=w * w)
    s_x_init = check_int("s_x_init", s_x_init, minimum=1, maximum=observation.size)
    iterations = check_int("iterations", iterations, minimum=0)
    tol = check_float("tol", tol, minimum=0.0)
    kernel, coeffs = _start(observation, w, s_h_init, s_x_init, init, start)
    return _alternating_descent(observation, kernel, coeffs, None, None, iterations, tol)


def oracle_sparse_deconvolution(
    observation: np.ndarray,
    kernel: np.ndarray,
    s_x: int,
    iterations: int = 300,
    tol: float = 1e-12,
) -> DeblurResult:
    """Non-blind sparse oracle: the ThWF coefficient steps with the TRUE kernel held fixed.

    Iterative hard thresholding on ``min ||k ⊛ D^{-1}X − Y||²`` s.t. ``||X||_0 <= s_x`` from
    ``X⁰ = H_{s_x}(D Y)``: the same prior and budget as ThWF, with the kernel known. This is the
    upper-bound reference for ThWF (Tikhonov, :func:`oracle_deconvolution`, does not use sparsity).
    """
    observation = check_image("observation", observation)
    kernel = check_kernel("kernel", kernel, observation.shape)
    s_x = check_int("s_x", s_x, minimum=1, maximum=observation.size)
    iterations = check_int("iterations", iterations, minimum=0)
    tol = check_float("tol", tol, minimum=0.0)
    _, coeffs = initial_estimate(observation, kernel.shape[0], s_x)
    return _alternating_descent(observation, kernel, coeffs, None, s_x, iterations, tol, update_kernel=False)


def tikhonov_residual_norm(observation: np.ndarray, kernel: np.ndarray, regularization: float) -> float:
    """``||k ⊛ ĝ_λ − Y||`` of the Tikhonov solution, in closed form in the Fourier domain.

    With ``K = F(k)``, ``ĝ_λ = conj(K) F(Y) / (|K|² + λ)`` the residual is
    ``−λ F(Y) / (|K|² + λ)``; Parseval (unnormalised FFT) divides its energy by ``n1 n2``.
    """
    observation = check_image("observation", observation)
    kernel = check_kernel("kernel", kernel, observation.shape)
    lam = check_float("regularization", regularization, minimum=0.0)
    k_hat = scipy.fft.fft2(embed_kernel(kernel, observation.shape))
    y_hat = scipy.fft.fft2(observation)
    power = np.abs(k_hat) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(power + lam > 0, lam / (power + lam), 1.0)  # |K|=0, λ=0: pseudo-inverse
    return float(np.sqrt(np.sum(np.abs(ratio * y_hat) ** 2) / observation.size))


def discrepancy_regularization(observation: np.ndarray, kernel: np.ndarray, noise_norm: float) -> float:
    """Morozov's discrepancy principle: the ``λ`` with ``||k ⊛ ĝ_λ − Y|| = ||E||``.

    A rule that needs only the noise norm (known in our bounded-noise model), not the truth.
    The residual grows monotonically with ``λ``, so bisection on ``log λ`` finds it. ``λ = 0``
    when ``||E|| = 0``; ``inf`` (estimate 0) when ``||E|| ≥ ||Y||``.
    """
    observation = check_image("observation", observation)
    kernel = check_kernel("kernel", kernel, observation.shape)
    noise_norm = check_float("noise_norm", noise_norm, minimum=0.0)
    if noise_norm == 0.0:
        return 0.0
    if noise_norm >= float(np.linalg.norm(observation)):
        return float("inf")
    scale = float(np.max(np.abs(scipy.fft.fft2(embed_kernel(kernel, observation.shape))) ** 2))
    lo, hi = np.log(scale * 1e-16), np.log(scale * 1e8)
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if tikhonov_residual_norm(observation, kernel, float(np.exp(mid))) < noise_norm:
            lo = mid
        else:
            hi = mid
    return float(np.exp(0.5 * (lo + hi)))


def oracle_deconvolution(
    observation: np.ndarray,
    kernel: np.ndarray,
    noise_norm: float = 0.0,
    regularization: float | None = None,
) -> np.ndarray:
    """Non-blind Tikhonov (Wiener-type) deconvolution with the TRUE kernel: the upper bound.

    ``ĝ = F^{-1}[conj(K) F(Y) / (|K|² + λ)]`` with ``λ`` from :func:`discrepancy_regularization`
    unless given. With ``λ = 0`` this is the exact inverse filter (pseudo-inverse where ``K = 0``),
    which recovers a noiseless image exactly when the kernel spectrum has no zeros.
    """
    observation = check_image("observation", observation)
    kernel = check_kernel("kernel", kernel, observation.shape)
    if regularization is None:
        lam = discrepancy_regularization(observation, kernel, noise_norm)
    else:
        lam = check_float("regularization", regularization, minimum=0.0)
    if np.isinf(lam):
        return np.zeros_like(observation)
    k_hat = scipy.fft.rfft2(embed_kernel(kernel, observation.shape))
    y_hat = scipy.fft.rfft2(observation)
    power = np.abs(k_hat) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        filt = np.where(power + lam > 0, np.conj(k_hat) / (power + lam), 0.0)
    return scipy.fft.irfft2(filt * y_hat, s=observation.shape)
