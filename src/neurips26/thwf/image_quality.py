"""Image-quality and kernel-support measures for the deblurring experiment of chapter 01.

PSNR and SSIM compare a restored image with the clean (sparse) ground truth on the fixed
intensity range ``data_range = 1`` (the test image is scaled to [0, 1]); SSIM is scikit-image's
``structural_similarity`` (Wang et al., 2004), not re-implemented here. The kernel-support
indicator asks whether the ``s_h`` largest-magnitude taps of an estimated kernel sit exactly on
the true kernel's taps (claim 5 of the chapter: "ThWF's kernel support matches the truth").
"""

from __future__ import annotations

import numpy as np
from skimage.metrics import structural_similarity

from neurips26.thwf.image_model import check_image, check_kernel
from neurips26.validation import check_float, check_int


def _pair(estimate: object, reference: object) -> tuple[np.ndarray, np.ndarray]:
    estimate = check_image("estimate", estimate)
    reference = check_image("reference", reference)
    if estimate.shape != reference.shape:
        raise ValueError(f"estimate shape {estimate.shape} differs from reference shape {reference.shape}")
    return estimate, reference


def psnr(estimate: np.ndarray, reference: np.ndarray, data_range: float = 1.0) -> float:
    """Peak signal-to-noise ratio ``10 log10(range² / MSE)`` in dB; ``inf`` for identical images."""
    estimate, reference = _pair(estimate, reference)
    data_range = check_float("data_range", data_range, minimum=0.0, strict_min=True)
    mse = float(np.mean((estimate - reference) ** 2))
    if mse == 0.0:
        return float("inf")
    return float(10.0 * np.log10(data_range**2 / mse))


def ssim(estimate: np.ndarray, reference: np.ndarray, data_range: float = 1.0) -> float:
    """Structural similarity (scikit-image, default 7×7 window); 1 for identical images."""
    estimate, reference = _pair(estimate, reference)
    data_range = check_float("data_range", data_range, minimum=0.0, strict_min=True)
    if min(estimate.shape) < 7:
        raise ValueError(f"estimate must be at least 7×7 for SSIM's 7×7 window; got {estimate.shape}")
    return float(structural_similarity(estimate, reference, data_range=data_range))


def kernel_support(kernel: np.ndarray, s: int | None = None) -> frozenset[tuple[int, int]]:
    """The taps ``(i, j)`` of the ``s`` largest-magnitude entries (all nonzero taps if ``s=None``).

    Ties are broken by a stable sort on the flat index, so the set is deterministic.
    """
    kernel = check_kernel("kernel", kernel)
    flat = np.abs(kernel).ravel()
    if s is None:
        order = np.flatnonzero(flat)
    else:
        s = check_int("s", s, minimum=0, maximum=kernel.size)
        order = np.argsort(-flat, kind="stable")[:s]
    rows, cols = np.unravel_index(order, kernel.shape)
    return frozenset(zip(rows.tolist(), cols.tolist(), strict=True))


def kernel_support_overlap(estimate: np.ndarray, truth: np.ndarray) -> float:
    """Fraction of the true taps found among the ``s_h = ||truth||_0`` largest taps of ``estimate``."""
    truth = check_kernel("truth", truth)
    estimate = check_kernel("estimate", estimate)
    if estimate.shape != truth.shape:
        raise ValueError(f"estimate shape {estimate.shape} differs from truth shape {truth.shape}")
    true_support = kernel_support(truth)
    if not true_support:
        raise ValueError("truth must have at least one nonzero tap")
    found = kernel_support(estimate, len(true_support))
    return len(found & true_support) / len(true_support)


def kernel_support_recovered(estimate: np.ndarray, truth: np.ndarray) -> bool:
    """True when the ``s_h`` largest taps of ``estimate`` are exactly the true kernel's taps."""
    return kernel_support_overlap(estimate, truth) == 1.0
