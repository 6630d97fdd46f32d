"""The real 2-D blind-deconvolution model of chapter 01, §3.6 (image variant of ThWF).

An observed image is a sparse-in-DCT image blurred by a small sparse kernel,

    Y = k ⊛ D^{-1}(X) + E,                                         (Eq. (10))

with ``⊛`` the 2-D *circular* convolution on an ``n1 × n2`` grid, ``D`` the orthonormal
2-D DCT-II (``scipy.fft.dctn(norm="ortho")``, so ``D^{-1} = D^T``), ``X`` an ``s_x``-sparse
coefficient array and ``k`` a kernel that lives in a ``w × w`` window (``w`` odd) and has
``s_h`` nonzero taps. The bilinear least-squares loss and its real gradients are

    F(k, X) = ||k ⊛ g − Y||²,  g = D^{-1}X,  R = k ⊛ g − Y,         (Eq. (11))
    ∇_k F = 2 P_window(R ⋆ g),   ∇_X F = 2 D(R ⋆ k),                (Eq. (12))

where ``⋆`` is circular cross-correlation, ``(a ⋆ b)[m] = Σ_n a[n] b[n − m]``, and
``P_window`` crops a full-size array to the kernel window. (The chapter writes the gradients
without the factor 2, the Wirtinger convention; here they are the true real gradients of F.)
Everything is matrix-free and costs a few FFTs.

Window convention: tap ``(i, j)`` of a ``w × w`` kernel is the spatial offset
``(i − c, j − c)`` with ``c = w // 2``, so a delta at the window centre is the identity and
``k ⊛ g`` equals ``scipy.ndimage.convolve(g, k, mode="wrap")``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.fft

from neurips26.thwf.threshold import hard_threshold_unchecked
from neurips26.validation import check_array, check_choice, check_float, check_int, check_seed

# ---------------------------------------------------------------------------------------------
# argument checks shared by this file and the other image modules


def check_image(name: str, value: object) -> np.ndarray:
    """A finite, real, 2-D array (an image or a DCT coefficient array), returned as float64."""
    array = check_array(name, value, ndim=2, complex_ok=False)
    if min(array.shape) < 1:
        raise ValueError(f"{name} must be non-empty; got shape {array.shape}")
    return array.astype(np.float64, copy=False)


def check_kernel(name: str, value: object, image_shape: tuple[int, int] | None = None) -> np.ndarray:
    """A finite, real, square kernel window of odd side that fits inside ``image_shape``."""
    kernel = check_image(name, value)
    w1, w2 = kernel.shape
    if w1 != w2 or w1 % 2 == 0:
        raise ValueError(f"{name} must be a square window of odd side (w × w); got shape {kernel.shape}")
    if image_shape is not None and (w1 > image_shape[0] or w2 > image_shape[1]):
        raise ValueError(f"{name} window {kernel.shape} is larger than the image {tuple(image_shape)}")
    return kernel


def check_window(name: str, value: object, image_shape: tuple[int, int] | None = None) -> int:
    """An odd window side ``w >= 1`` that fits inside ``image_shape``."""
    w = check_int(name, value, minimum=1)
    if w % 2 == 0:
        raise ValueError(f"{name} must be odd (the window has a centre tap); got {w}")
    if image_shape is not None and w > min(image_shape):
        raise ValueError(f"{name}={w} is larger than the image {tuple(image_shape)}")
    return w


# ---------------------------------------------------------------------------------------------
# the dictionary D: orthonormal 2-D DCT


def dct2(image: np.ndarray) -> np.ndarray:
    """``D(image)``: orthonormal 2-D DCT-II coefficients (same shape)."""
    return scipy.fft.dctn(check_image("image", image), norm="ortho")


def idct2(coeffs: np.ndarray) -> np.ndarray:
    """``D^{-1}(coeffs) = D^T(coeffs)``: the image synthesised from orthonormal DCT coefficients."""
    return scipy.fft.idctn(check_image("coeffs", coeffs), norm="ortho")


# ---------------------------------------------------------------------------------------------
# the kernel window <-> full-size circular kernel


def embed_kernel(kernel: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """The full ``shape`` circular kernel: tap ``(i, j)`` goes to ``((i−c) mod n1, (j−c) mod n2)``.

    This is the linear map ``E`` (window → image grid); its adjoint is :func:`crop_kernel`.
    """
    n1 = check_int("shape[0]", shape[0], minimum=1)
    n2 = check_int("shape[1]", shape[1], minimum=1)
    kernel = check_kernel("kernel", kernel, (n1, n2))
    w = kernel.shape[0]
    c = w // 2
    offsets = np.arange(w) - c
    full = np.zeros((n1, n2))
    full[np.ix_(offsets % n1, offsets % n2)] = kernel
    return full


def crop_kernel(full: np.ndarray, window: int) -> np.ndarray:
    """``P_window``: read the ``window × window`` taps around offset (0, 0) of a full-size array."""
    full = check_image("full", full)
    w = check_window("window", window, full.shape)
    offsets = np.arange(w) - w // 2
    return full[np.ix_(offsets % full.shape[0], offsets % full.shape[1])]


# ---------------------------------------------------------------------------------------------
# circular convolution and correlation by FFT (real FFTs: everything here is real)


def circular_convolve_unchecked(a_full: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a ⊛ b`` for two same-shape real arrays, without argument checks (solvers' inner loops)."""
    # (a ⊛ b)[n] = Σ_m a[m] b[n − m]  ⇔  F(a ⊛ b) = F(a)·F(b)
    return scipy.fft.irfft2(scipy.fft.rfft2(a_full) * scipy.fft.rfft2(b), s=b.shape)


def circular_correlate_unchecked(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a ⋆ b`` for two same-shape real arrays, without argument checks (solvers' inner loops)."""
    # (a ⋆ b)[m] = Σ_n a[n] b[n − m]  ⇔  F(a ⋆ b) = F(a)·conj(F(b))   (real a, b)
    return scipy.fft.irfft2(scipy.fft.rfft2(a) * np.conj(scipy.fft.rfft2(b)), s=a.shape)


def convolve2d_circular(kernel: np.ndarray, image: np.ndarray) -> np.ndarray:
    """``k ⊛ image``: 2-D circular convolution of ``image`` with a ``w × w`` kernel window."""
    image = check_image("image", image)
    kernel = check_kernel("kernel", kernel, image.shape)
    return circular_convolve_unchecked(embed_kernel(kernel, image.shape), image)


def correlate2d_circular(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a ⋆ b``: full-size circular cross-correlation, ``(a ⋆ b)[m] = Σ_n a[n] b[n − m]``."""
    a = check_image("a", a)
    b = check_array("b", b, shape=a.shape, complex_ok=False)
    return circular_correlate_unchecked(a, b.astype(np.float64, copy=False))


# ---------------------------------------------------------------------------------------------
# forward model, loss, gradients


def forward(kernel: np.ndarray, coeffs: np.ndarray) -> np.ndarray:
    """The noiseless observation ``k ⊛ D^{-1}(X)`` of Eq. (10)."""
    coeffs = check_image("coeffs", coeffs)
    kernel = check_kernel("kernel", kernel, coeffs.shape)
    g = scipy.fft.idctn(coeffs, norm="ortho")  # g = D^{-1}X
    return circular_convolve_unchecked(embed_kernel(kernel, coeffs.shape), g)


def loss(kernel: np.ndarray, coeffs: np.ndarray, observation: np.ndarray) -> float:
    """``F(k, X) = ||k ⊛ D^{-1}X − Y||²`` of Eq. (11)."""
    observation = check_image("observation", observation)
    coeffs = check_array("coeffs", coeffs, shape=observation.shape, complex_ok=False)
    residual = forward(kernel, coeffs) - observation
    return float(np.sum(residual**2))


@dataclass(frozen=True)
class Gradients:
    """Loss and real gradients at one point ``(k, X)`` (Eqs. (11), (12))."""

    loss: float
    kernel: np.ndarray  # ∇_k F, shape (w, w)
    coeffs: np.ndarray  # ∇_X F, shape (n1, n2)


def gradients(kernel: np.ndarray, coeffs: np.ndarray, observation: np.ndarray) -> Gradients:
    """``F`` and ``(∇_k F, ∇_X F)`` by FFT, Eq. (12): ``2 P_w(R ⋆ g)`` and ``2 D(R ⋆ k)``."""
    observation = check_image("observation", observation)
    coeffs = check_array("coeffs", coeffs, shape=observation.shape, complex_ok=False)
    kernel = check_kernel("kernel", kernel, observation.shape)
    w = kernel.shape[0]
    g = scipy.fft.idctn(coeffs, norm="ortho")  # g = D^{-1} X
    k_full = embed_kernel(kernel, observation.shape)
    residual = circular_convolve_unchecked(k_full, g) - observation  # R = k ⊛ g − Y
    grad_k = 2.0 * crop_kernel(circular_correlate_unchecked(residual, g), w)  # 2 P_w(R ⋆ g)
    grad_x = 2.0 * scipy.fft.dctn(circular_correlate_unchecked(residual, k_full), norm="ortho")  # 2 D(R ⋆ k)
    return Gradients(loss=float(np.sum(residual**2)), kernel=grad_k, coeffs=grad_x)


# ---------------------------------------------------------------------------------------------
# test data: a DCT-sparse camera crop and a sparse motion-blur-like kernel


def keep_largest(array: np.ndarray, s: int) -> np.ndarray:
    """Hard top-``s`` of a whole 2-D array: all but its ``s`` largest-magnitude entries zeroed.

    The flattened form of ThWF's ``𝒯_s`` (:func:`neurips26.thwf.threshold.hard_threshold`);
    ties are broken by a stable sort (lowest flat index wins), so the result is deterministic.
    """
    array = check_array("array", array, complex_ok=False)
    s = check_int("s", s, minimum=0, maximum=array.size)
    return hard_threshold_unchecked(array.astype(np.float64, copy=False).ravel(), s).reshape(array.shape)


def camera_crop(size: int = 64, crop: int = 256) -> np.ndarray:
    """The centre ``crop × crop`` of ``skimage.data.camera()`` resized to ``size × size``, in [0, 1]."""
    from skimage import data, transform  # local import: scikit-image is only needed for test data

    size = check_int("size", size, minimum=4, maximum=512)
    crop = check_int("crop", crop, minimum=size, maximum=512)
    camera = data.camera().astype(np.float64) / 255.0  # (512, 512) uint8, ships with scikit-image
    top = (camera.shape[0] - crop) // 2
    left = (camera.shape[1] - crop) // 2
    patch = camera[top : top + crop, left : left + crop]
    small = transform.resize(patch, (size, size), order=1, anti_aliasing=True, mode="reflect")
    return np.clip(small, 0.0, 1.0)


def sparse_test_image(size: int = 64, s_x: int = 400, crop: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """An exactly ``s_x``-sparse-in-DCT test image: ``(image, X)`` with ``image = D^{-1}X``.

    ``X`` keeps the top-``s_x`` orthonormal DCT coefficients of :func:`camera_crop`; the image is
    re-synthesised from them, so it can stray slightly outside [0, 1] (PSNR still uses range 1).
    """
    size = check_int("size", size, minimum=4, maximum=512)
    s_x = check_int("s_x", s_x, minimum=1, maximum=size * size)
    coeffs = keep_largest(scipy.fft.dctn(camera_crop(size, crop), norm="ortho"), s_x)
    return scipy.fft.idctn(coeffs, norm="ortho"), coeffs


KERNEL_SUPPORTS: tuple[str, ...] = ("random", "centred")
"""How :func:`sparse_blur_kernel` places the taps: anywhere in the window, or a walk from its centre."""


def sparse_blur_kernel(window: int = 7, s_h: int = 3, seed: int = 0, support: str = "random") -> np.ndarray:
    """A seeded ``s_h``-tap non-negative kernel in a ``window × window`` array, summing to 1.

    ``support="random"`` (the model of §3.6: an ``s_h``-sparse kernel anywhere in its window): the
    taps are ``s_h`` distinct positions drawn uniformly from the window. ``support="centred"``: the
    taps form a self-avoiding random walk through 8-neighbours that starts at the window centre (a
    short camera-shake trajectory); such a kernel always has a tap where the delta start of
    :func:`~neurips26.thwf.image_deblur.initial_estimate` puts its mass. Weights are uniform in
    [0.5, 1.5], then normalised; random weights make exact zeros of the kernel spectrum unlikely.
    """
    w = check_window("window", window)
    s_h = check_int("s_h", s_h, minimum=1, maximum=w * w)
    seed = check_seed("seed", seed)
    check_choice("support", support, KERNEL_SUPPORTS)
    kernel = np.zeros((w, w))
    if support == "random":
        rng = np.random.default_rng([seed, 2])  # a stream of its own (not the centred walk's)
        taps = rng.choice(w * w, size=s_h, replace=False)
        kernel.ravel()[taps] = rng.uniform(0.5, 1.5, size=s_h)
        return kernel / kernel.sum()
    rng = np.random.default_rng(seed)
    c = w // 2
    path = [(c, c)]
    taken = {(c, c)}
    while len(path) < s_h:
        # extend the walk from its newest tap if possible, else from any earlier one
        for i0, j0 in reversed(path):
            free = [
                (i0 + di, j0 + dj)
                for di in (-1, 0, 1)
                for dj in (-1, 0, 1)
                if (di or dj) and 0 <= i0 + di < w and 0 <= j0 + dj < w and (i0 + di, j0 + dj) not in taken
            ]
            if free:
                nxt = free[rng.integers(len(free))]
                path.append(nxt)
                taken.add(nxt)
                break
    rows, cols = zip(*path, strict=True)
    kernel[list(rows), list(cols)] = rng.uniform(0.5, 1.5, size=s_h)
    return kernel / kernel.sum()


@dataclass(frozen=True)
class DeblurProblem:
    """One instance of Eq. (10): ground truth, observation and the noise norm ``||E||``."""

    image: np.ndarray  # clean sparse image g = D^{-1}X, (n, n)
    coeffs: np.ndarray  # X, s_x-sparse, (n, n)
    kernel: np.ndarray  # k, s_h taps, (w, w), non-negative, sums to 1
    observation: np.ndarray  # Y = k ⊛ g + E
    noise_norm: float  # ||E||_2 = noise_level · ||k ⊛ g||_2
    s_h: int
    s_x: int


def make_deblur_problem(
    size: int = 64,
    window: int = 7,
    s_h: int = 3,
    s_x: int = 400,
    noise_level: float = 0.01,
    seed: int = 0,
    crop: int = 256,
    support: str = "random",
) -> DeblurProblem:
    """Build Eq. (10) from the camera crop: sparse image, seeded kernel, bounded noise.

    ``support`` places the kernel's taps (:func:`sparse_blur_kernel`): ``"random"`` anywhere in the
    window (the model), ``"centred"`` on a walk from the window centre.

    The noise is bounded as in the chapter's model: a seeded Gaussian direction rescaled to
    ``||E|| = noise_level · ||k ⊛ g||`` exactly.
    """
    size = check_int("size", size, minimum=4, maximum=512)
    w = check_window("window", window, (size, size))
    s_h = check_int("s_h", s_h, minimum=1, maximum=w * w)
    s_x = check_int("s_x", s_x, minimum=1, maximum=size * size)
    noise_level = check_float("noise_level", noise_level, minimum=0.0, maximum=1.0)
    seed = check_seed("seed", seed)
    image, coeffs = sparse_test_image(size, s_x, crop)
    kernel = sparse_blur_kernel(w, s_h, seed, support)
    clean = forward(kernel, coeffs)
    direction = np.random.default_rng([seed, 1]).standard_normal(clean.shape)
    noise_norm = noise_level * float(np.linalg.norm(clean))
    noise = noise_norm * direction / np.linalg.norm(direction)
    return DeblurProblem(
        image=image,
        coeffs=coeffs,
        kernel=kernel,
        observation=clean + noise,
        noise_norm=noise_norm,
        s_h=s_h,
        s_x=s_x,
    )
