"""A stationary Gaussian field whose score is known exactly, and two reference denoisers (chapter 05).

The field lives on a periodic ``n × n`` grid (``n = size``). Its covariance ``Σ`` is circulant: the 2-D
Fourier modes are its eigenvectors, with eigenvalues (the power spectrum)

    λ(k) = c · (1 + |k|²/k₀²)^(−α),      k ∈ {−n/2, …, n/2 − 1}² (integer wavenumbers),       (8)

and ``c`` chosen so that ``mean_k λ(k) = Σ_ii = 1`` (unit pixel variance). Under variance-exploding
noise, ``x_σ = x₀ + σε``, the noisy marginal is ``N(0, Σ + σ²I)``, hence

    s*(x, σ) = ∇ log p_σ(x) = −(Σ + σ²I)⁻¹ x = −F⁻¹[ x̂(k) / (λ(k) + σ²) ]                           (9)
    D*(x, σ) = E[x₀ | x_σ = x] = Σ(Σ + σ²I)⁻¹ x = x + σ² s*(x, σ)           (Wiener denoiser)     (10)

both computed with an FFT in O(n² log n). The *empirical* optimal denoiser replaces the population by
the ``N`` training images: ``E[x₀ | x_σ = x] = Σ_n w_n x_n`` with ``w = softmax(−||x − x_n||²/(2σ²))`` (11).
It is the exact minimiser of the denoising loss on the training set, and sampling with it reproduces
training images: the memorising reference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neurips26.ssd.masks import check_images
from neurips26.validation import check_float, check_int, check_seed


def check_sigma(sigma: object, batch: int) -> torch.Tensor:
    """A noise level ``σ > 0``: a number or a tensor of shape (B,); returned as float64 (B, 1, 1, 1)."""
    if isinstance(sigma, torch.Tensor):
        if sigma.ndim == 0:
            sigma = sigma.reshape(1).expand(batch)
        if sigma.shape != (batch,):
            raise ValueError(f"sigma must be a number or have shape ({batch},); got {tuple(sigma.shape)}")
        s = sigma.detach().to(torch.float64)
        if not bool(torch.isfinite(s).all()) or not bool((s > 0).all()):
            raise ValueError("sigma must be finite and > 0")
    else:
        s = torch.full(
            (batch,), check_float("sigma", sigma, minimum=0.0, strict_min=True), dtype=torch.float64
        )
    return s.reshape(batch, 1, 1, 1)


@dataclass(frozen=True)
class GaussianField:
    """Stationary periodic Gaussian field on ``size × size`` with spectrum Eq. (8), unit pixel variance.

    Images are tensors (B, 1, size, size). ``size`` ≥ 2, ``k0 > 0`` (the correlation scale, in cycles per
    image), ``alpha > 0`` (how fast power falls off with frequency).
    """

    size: int = 8
    k0: float = 2.0
    alpha: float = 2.0

    def __post_init__(self) -> None:
        check_int("size", self.size, minimum=2)
        check_float("k0", self.k0, minimum=0.0, strict_min=True)
        check_float("alpha", self.alpha, minimum=0.0, strict_min=True)

    @property
    def dim(self) -> int:
        """Number of pixels ``d = size²``."""
        return self.size * self.size

    def spectrum(self) -> np.ndarray:
        """``λ(k)`` of Eq. (8) on the FFT grid (size, size), in ``numpy.fft`` order; mean 1."""
        k = np.fft.fftfreq(self.size, d=1.0 / self.size)  # integer wavenumbers −n/2 … n/2 − 1
        k2 = k[:, None] ** 2 + k[None, :] ** 2
        lam = (1.0 + k2 / self.k0**2) ** (-self.alpha)
        return lam / lam.mean()

    def autocovariance(self) -> np.ndarray:
        """``c(δ) = Cov(x_p, x_{p+δ})`` for every periodic offset δ, shape (size, size); ``c(0) = 1``."""
        return np.fft.ifft2(self.spectrum()).real

    def covariance(self) -> np.ndarray:
        """Dense ``Σ`` (d, d) with pixels in row-major order: ``Σ_pq = c(q − p mod n)`` (for tests)."""
        n = self.size
        c = self.autocovariance()
        rows, cols = np.divmod(np.arange(self.dim), n)
        return c[(rows[None, :] - rows[:, None]) % n, (cols[None, :] - cols[:, None]) % n]

    def sample(self, n: int, seed: int) -> torch.Tensor:
        """``n`` independent fields, float32 (n, 1, size, size): ``x = F⁻¹[√λ · F w]`` for white ``w``.

        The filter ``√λ`` is real and symmetric, so ``x`` is real with covariance ``F⁻¹ diag(λ) F = Σ``.
        """
        n = check_int("n", n, minimum=1)
        rng = np.random.default_rng(check_seed("seed", seed))
        white = rng.standard_normal((n, self.size, self.size))
        x = np.fft.ifft2(np.sqrt(self.spectrum()) * np.fft.fft2(white)).real
        return torch.from_numpy(x[:, None].astype(np.float32))

    def _filter(self, x: torch.Tensor, sigma: object, gain) -> torch.Tensor:
        """``F⁻¹[g(λ, σ²) · F x]`` for a real, symmetric gain ``g``; float64 inside, ``x``'s dtype out."""
        x = check_images("x", x, channels=1)
        if x.shape[2:] != (self.size, self.size):
            raise ValueError(f"x must have shape (B, 1, {self.size}, {self.size}); got {tuple(x.shape)}")
        s2 = check_sigma(sigma, x.shape[0]).cpu().numpy() ** 2
        half = self.spectrum()[:, : self.size // 2 + 1]  # rfft2 keeps the non-negative last-axis frequencies
        xf = np.fft.rfft2(x.detach().cpu().numpy().astype(np.float64))
        out = np.fft.irfft2(xf * gain(half, s2), s=(self.size, self.size))
        return torch.from_numpy(out).to(dtype=x.dtype, device=x.device)

    def exact_score(self, x: torch.Tensor, sigma: float | torch.Tensor) -> torch.Tensor:
        """``s*(x, σ) = −(Σ + σ²I)⁻¹x = −F⁻¹[x̂ / (λ + σ²)]`` (Eq. (9)).

        x: (B, 1, size, size); sigma: a number or a tensor (B,). Same dtype as ``x``; not differentiable.
        """
        return self._filter(x, sigma, lambda lam, s2: -1.0 / (lam + s2))

    def wiener_denoiser(self, x: torch.Tensor, sigma: float | torch.Tensor) -> torch.Tensor:
        """``D*(x, σ) = Σ(Σ + σ²I)⁻¹x = F⁻¹[λ/(λ + σ²) · x̂]`` (Eq. (10)): the population-optimal denoiser."""
        return self._filter(x, sigma, lambda lam, s2: lam / (lam + s2))


def empirical_optimal_denoiser(
    x: torch.Tensor, sigma: float | torch.Tensor, train: torch.Tensor, *, chunk: int = 256
) -> torch.Tensor:
    """``Σ_n softmax_n(−||x − x_n||²/(2σ²)) · x_n`` (Eq. (11)) for each row of ``x``; shape of ``x``.

    x: (B, C, H, W) noisy images; sigma: a number or (B,); train: (N, C, H, W) training images. Computed in
    float64, ``chunk`` rows of ``x`` at a time, so a batch of samples against a whole data set stays small.
    """
    x = check_images("x", x)
    train = check_images("train", train)
    if train.shape[1:] != x.shape[1:]:
        raise ValueError(
            f"train must have images of shape {tuple(x.shape[1:])}; got {tuple(train.shape[1:])}"
        )
    chunk = check_int("chunk", chunk, minimum=1)
    sig = check_sigma(sigma, x.shape[0]).reshape(-1, 1).to(train.device)
    data = train.detach().reshape(train.shape[0], -1).to(torch.float64)
    data_sq = (data**2).sum(dim=1)
    flat = x.detach().reshape(x.shape[0], -1).to(device=train.device, dtype=torch.float64)
    out = []
    for start in range(0, flat.shape[0], chunk):
        rows = flat[start : start + chunk]
        # ||x − x_n||² = ||x||² − 2 x·x_n + ||x_n||²; the ||x||² term cancels in the softmax.
        logits = (2.0 * rows @ data.T - data_sq) / (2.0 * sig[start : start + chunk] ** 2)
        out.append(torch.softmax(logits, dim=1) @ data)
    return torch.cat(out).reshape(x.shape).to(dtype=x.dtype, device=x.device)
