"""ThWF: thresholded Wirtinger flow for sparse blind deconvolution (chapter 01).

The random-subspace model (:mod:`~neurips26.thwf.model`), the loss and its Wirtinger gradients
(:mod:`~neurips26.thwf.loss`), thresholding operators (:mod:`~neurips26.thwf.threshold`), the
sparse spectral initialiser (:mod:`~neurips26.thwf.init`), the ThWF iterations
(:mod:`~neurips26.thwf.thwf`), error metrics (:mod:`~neurips26.thwf.metrics`), the baselines
(:mod:`~neurips26.thwf.baselines`), the claim experiments (:mod:`~neurips26.thwf.experiments`) and the
2-D image-deblurring variant (:mod:`~neurips26.thwf.image_model`, :mod:`~neurips26.thwf.image_deblur`,
:mod:`~neurips26.thwf.image_quality`, :mod:`~neurips26.thwf.image_experiment`).

Equation numbers in the docstrings of this package refer to this list (the chapter's notebooks
derive each one; the book numbers them per page):

(1) model ``y_l = b_l^* (h x^*) a_l + e_l``, i.e. ``y = 𝒜(h x^*) + e``;
(2) back-projection ``𝒜^*(z) = B^* diag(z) A``, with ``𝔼 𝒜^*(y) = h₀x₀^*``;
(3) loss ``F(h, x) = ||𝒜(h x^*) − y||²``;
(4) Wirtinger gradients ``∇_h F = 𝒜^*(r) x``, ``∇_x F = 𝒜^*(r)^* h`` with ``r = 𝒜(h x^*) − y``;
(5) sparse spectral initialiser: supports from ``|𝒜^*(y)|``, leading singular pair of the block;
(6) gradient step with step ``η/σ̂``, ``σ̂ = max(||y||, ||h⁰|| ||x⁰||)``;
(7) thresholding ``𝒯`` (hard top-s or complex soft);
(8) adaptive soft-threshold levels; (9) lifted error ``||h x^* − h₀x₀^*||_F / ||h₀x₀^*||_F``;
(10) image model ``Y = k ⊛ D^{-1}(X) + E``; (11) image loss; (12) image gradients by FFT.
"""

from neurips26.thwf.baselines import (
    BaselineResult,
    ConvexResult,
    convex_lifting,
    rgd,
    rgd_batch,
    spf,
    spf_batch,
)
from neurips26.thwf.image_deblur import (
    DeblurResult,
    dense_wf_2d,
    oracle_deconvolution,
    oracle_sparse_deconvolution,
    thwf_2d,
)
from neurips26.thwf.image_experiment import DeblurComparison, ImageDeblurConfig, deblur_comparison
from neurips26.thwf.image_model import DeblurProblem, make_deblur_problem
from neurips26.thwf.image_quality import psnr, ssim
from neurips26.thwf.init import Initialization, back_projection, dense_spectral_init, sparse_spectral_init
from neurips26.thwf.loss import loss, wirtinger_gradients
from neurips26.thwf.metrics import SUCCESS_TOLERANCE, exact_support, lifted_error, success, support
from neurips26.thwf.model import (
    Problem,
    ProblemBatch,
    adjoint,
    apply_b,
    apply_b_adjoint,
    dft_columns,
    forward,
    lifted_forward,
    make_problem,
    make_problem_batch,
    stack_problems,
)
from neurips26.thwf.threshold import adaptive_soft_levels, hard_threshold, soft_threshold, top_s_mask
from neurips26.thwf.thwf import ThWFBatchResult, ThWFResult, thwf, thwf_batch

__all__ = [
    "DeblurComparison",
    "DeblurProblem",
    "DeblurResult",
    "ImageDeblurConfig",
    "deblur_comparison",
    "dense_wf_2d",
    "make_deblur_problem",
    "oracle_deconvolution",
    "oracle_sparse_deconvolution",
    "psnr",
    "ssim",
    "thwf_2d",
    "SUCCESS_TOLERANCE",
    "BaselineResult",
    "ConvexResult",
    "Initialization",
    "Problem",
    "ProblemBatch",
    "ThWFBatchResult",
    "ThWFResult",
    "adaptive_soft_levels",
    "adjoint",
    "apply_b",
    "apply_b_adjoint",
    "back_projection",
    "convex_lifting",
    "dense_spectral_init",
    "dft_columns",
    "exact_support",
    "forward",
    "hard_threshold",
    "lifted_error",
    "lifted_forward",
    "loss",
    "make_problem",
    "make_problem_batch",
    "rgd",
    "rgd_batch",
    "soft_threshold",
    "sparse_spectral_init",
    "spf",
    "spf_batch",
    "stack_problems",
    "success",
    "support",
    "thwf",
    "thwf_batch",
    "top_s_mask",
    "wirtinger_gradients",
]
