"""The image-deblurring comparison of chapter 01 (claim 5, §4 item 6), one seeded run.

All methods see the same blurred, noisy camera crop and (for the iterative ones) the same
iteration budget:

* ``blurred``         — the observation itself (no deblurring);
* ``dense_wf``        — dense WF: the ThWF iterations without thresholding (RGD-style baseline);
* ``thwf``            — ThWF-2D: the same iterations with hard top-``s_h`` / top-``s_x`` thresholds;
* ``oracle_sparse``   — non-blind upper bound: ThWF's coefficient steps with the TRUE kernel;
* ``oracle_tikhonov`` — non-blind Tikhonov deconvolution with the TRUE kernel (discrepancy rule).

Blind estimates are defined only up to ``(αk, X/α)``; every returned kernel is normalised to sum 1
(:func:`~neurips26.thwf.image_deblur.normalize_kernel_gain`) before the image is scored, so PSNR
and SSIM compare like with like. The shift ambiguity is not resolved: a shifted estimate scores
as a worse one.

Both iterative blind methods start from the same point, :func:`support_screening_init`.

Claim checked at default scale, for kernels with random supports and for kernels grown from the
window centre: PSNR(thwf) > PSNR(dense_wf) > PSNR(blurred), and ThWF's kernel support equals the
true one for small ``s_h``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from neurips26.scales import check_scale, pick
from neurips26.thwf.image_deblur import (
    DeblurResult,
    dense_wf_2d,
    oracle_deconvolution,
    oracle_sparse_deconvolution,
    support_screening_init,
    thwf_2d,
)
from neurips26.thwf.image_model import KERNEL_SUPPORTS, DeblurProblem, make_deblur_problem
from neurips26.thwf.image_quality import kernel_support_overlap, psnr, ssim
from neurips26.validation import check_choice, check_float, check_int, check_seed

METHODS: tuple[str, ...] = ("blurred", "dense_wf", "thwf", "oracle_sparse", "oracle_tikhonov")


@dataclass(frozen=True)
class ImageDeblurConfig:
    """Sizes of the deblurring comparison (all [ours]: the paper's image settings are unknown).

    ``size × size`` camera crop (centre ``crop × crop`` of the 512² image, resized), kernel window
    ``window × window`` with ``s_h`` taps placed as ``support`` says (``"random"``: anywhere in the
    window, the model; ``"centred"``: a walk from the centre), ``s_x`` DCT coefficients, bounded
    noise ``||E|| = noise_level · ||k ⊛ g||``, and the common iteration budget of every iterative
    method.
    """

    size: int = 64
    window: int = 7
    s_h: int = 3
    s_x: int = 400
    noise_level: float = 0.01
    iterations: int = 300
    crop: int = 256
    support: str = "random"

    def __post_init__(self) -> None:
        check_int("size", self.size, minimum=8, maximum=512)
        check_int("window", self.window, minimum=1, maximum=self.size)
        if self.window % 2 == 0:
            raise ValueError(f"window must be odd (the kernel window has a centre tap); got {self.window}")
        check_int("s_h", self.s_h, minimum=1, maximum=self.window**2)
        check_int("s_x", self.s_x, minimum=1, maximum=self.size**2)
        check_float("noise_level", self.noise_level, minimum=0.0, maximum=1.0)
        check_int("iterations", self.iterations, minimum=1)
        check_int("crop", self.crop, minimum=self.size, maximum=512)
        check_choice("support", self.support, KERNEL_SUPPORTS)

    @classmethod
    def for_scale(cls, scale: str, support: str = "random") -> ImageDeblurConfig:
        """smoke: 32² crop, 5×5 window, 30 iterations; default: 64² crop, 7×7 window, 300 iterations."""
        check_scale(scale)
        return cls(
            size=pick(scale, smoke=32, default=64, paper=128),
            window=pick(scale, smoke=5, default=7),
            s_h=3,
            s_x=pick(scale, smoke=100, default=400, paper=1600),
            noise_level=0.01,
            iterations=pick(scale, smoke=30, default=300, paper=1000),
            support=support,
        )


@dataclass(frozen=True)
class MethodResult:
    """One method's restored image, kernel (sum 1) and scores against the ground truth."""

    name: str
    image: np.ndarray
    kernel: np.ndarray
    psnr: float  # dB, data range 1
    ssim: float
    iterations: int  # 0 for the closed-form methods
    loss_history: np.ndarray  # F per iteration (empty for the closed-form methods)
    kernel_support_overlap: float  # fraction of true taps among the s_h largest estimated taps
    seconds: float

    @property
    def kernel_support_recovered(self) -> bool:
        """The ``s_h`` largest taps are exactly the true taps."""
        return self.kernel_support_overlap == 1.0


@dataclass(frozen=True)
class DeblurComparison:
    """Every method of :data:`METHODS` on one seeded problem, in that order."""

    config: ImageDeblurConfig
    seed: int
    problem: DeblurProblem
    methods: dict[str, MethodResult]
    seconds: float

    @property
    def psnr_order_holds(self) -> bool:
        """Claim 5, first half: PSNR(thwf) > PSNR(dense_wf) > PSNR(blurred)."""
        m = self.methods
        return m["thwf"].psnr > m["dense_wf"].psnr > m["blurred"].psnr

    @property
    def thwf_support_recovered(self) -> bool:
        """Claim 5, second half: ThWF's kernel support equals the true support."""
        return self.methods["thwf"].kernel_support_recovered


def _score(
    name: str,
    problem: DeblurProblem,
    image: np.ndarray,
    kernel: np.ndarray,
    iterations: int,
    loss_history: np.ndarray,
    seconds: float,
) -> MethodResult:
    return MethodResult(
        name=name,
        image=image,
        kernel=kernel,
        psnr=psnr(image, problem.image),
        ssim=ssim(image, problem.image),
        iterations=iterations,
        loss_history=loss_history,
        kernel_support_overlap=kernel_support_overlap(kernel, problem.kernel),
        seconds=seconds,
    )


def _score_run(name: str, problem: DeblurProblem, run: DeblurResult, seconds: float) -> MethodResult:
    return _score(name, problem, run.image, run.kernel, run.iterations, run.loss_history, seconds)


def deblur_comparison(config: ImageDeblurConfig, seed: int = 0) -> DeblurComparison:
    """Run blurred / dense WF / ThWF / both oracles on one seeded problem and score them."""
    if not isinstance(config, ImageDeblurConfig):
        raise TypeError(f"config must be an ImageDeblurConfig; got {type(config).__name__}")
    seed = check_seed("seed", seed)
    start = time.perf_counter()
    c = config
    problem = make_deblur_problem(c.size, c.window, c.s_h, c.s_x, c.noise_level, seed, c.crop, c.support)
    y = problem.observation
    results: dict[str, MethodResult] = {}

    delta = np.zeros((c.window, c.window))
    delta[c.window // 2, c.window // 2] = 1.0  # the blurred input "assumes" no blur
    results["blurred"] = _score("blurred", problem, y, delta, 0, np.empty(0), 0.0)

    t = time.perf_counter()
    common = support_screening_init(y, c.window, c.s_h, c.s_x)  # the common start of both methods
    init_seconds = time.perf_counter() - t

    t = time.perf_counter()
    run = dense_wf_2d(y, c.window, c.s_h, c.s_x, c.iterations, start=common)
    results["dense_wf"] = _score_run("dense_wf", problem, run, init_seconds + time.perf_counter() - t)

    t = time.perf_counter()
    run = thwf_2d(y, c.window, c.s_h, c.s_x, c.iterations, start=common)
    results["thwf"] = _score_run("thwf", problem, run, init_seconds + time.perf_counter() - t)

    t = time.perf_counter()
    run = oracle_sparse_deconvolution(y, problem.kernel, c.s_x, c.iterations)
    results["oracle_sparse"] = _score_run("oracle_sparse", problem, run, time.perf_counter() - t)

    t = time.perf_counter()
    image = oracle_deconvolution(y, problem.kernel, problem.noise_norm)
    results["oracle_tikhonov"] = _score(
        "oracle_tikhonov", problem, image, problem.kernel, 0, np.empty(0), time.perf_counter() - t
    )
    return DeblurComparison(
        config=config, seed=seed, problem=problem, methods=results, seconds=time.perf_counter() - start
    )
