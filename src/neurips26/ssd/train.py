"""Training a denoiser with sparse (SSD) or full supervision, and the baselines, on one code path.

One training step (§3.2 of the chapter; Eq. (2))::

    x0 ~ data (a batch of B images)          σ ~ logN(P_mean, P_std²)        n ~ N(0, I)
    x  = x0 + σ n                             (built from the FULL clean image, never masked)
    m  = sample_mask(B, H, W; η)              (fresh every step, shared across channels)
    loss = ssd_loss(pred, target, m)          (only kept pixels supervise; Z = kept entries)

``eta = 0`` is ordinary full supervision, bit for bit. The residual is the EDM-preconditioned one by
default (``parametrisation="x0"``: ``F_θ − T``, equal entry by entry to ``λ(σ)(D_θ − x0)²``); ``"eps"``
regresses the implied noise ``ε̂ = (x − D_θ)/σ`` on ``n`` without a weight, ``"v"`` the implied velocity.

Baselines on the same network, data and step budget: ``input_masking=True`` is MaskDM-style training
(the network sees ``m ⊙ x`` plus the mask as an extra channel and is supervised on the visible pixels;
at sampling time it gets the all-ones mask), ``weight_decay > 0`` and ``DenoiserConfig(dropout=...)``
are the standard regularisers, and early stopping reads the logged evaluation curve.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch
from torch import Tensor

from neurips26 import distributed
from neurips26.ssd.denoiser import (
    EDMDenoiser,
    edm_target,
    eps_prediction,
    sample_sigma,
    v_prediction,
    v_target,
)
from neurips26.ssd.loss import NORMALISERS, PARAMETRISATIONS, ssd_loss
from neurips26.ssd.masks import MASK_TYPES, check_eta, check_images, draw_device, sample_mask
from neurips26.train import History, fit
from neurips26.validation import check_choice, check_float, check_int, check_seed


@dataclass(frozen=True)
class TrainConfig:
    """How one denoiser is trained (validated: a bad value raises an error naming the field).

    eta: mask ratio η, the fraction of pixels removed from supervision (0 = full supervision);
    mask_type: "fixed" (exactly round((1-η)HW) kept pixels), "bernoulli" or "patch"; normaliser: "kept"
    or "all" (the Z of Eq. (2)); parametrisation: "x0" (EDM, default), "eps" or "v"; input_masking: the
    MaskDM-style baseline; steps, batch, lr (Adam), weight_decay, warmup: the optimiser; p_mean, p_std:
    the log-normal noise levels of EDM; eval_every: updates between evaluations; seed: weights are
    seeded by the model, this seeds batches, noise, σ and masks.
    """

    eta: float = 0.0
    mask_type: str = "fixed"
    normaliser: str = "kept"
    parametrisation: str = "x0"
    input_masking: bool = False
    steps: int = 2000
    batch: int = 128
    lr: float = 2e-3
    weight_decay: float = 0.0
    warmup: int = 0
    p_mean: float = -1.2
    p_std: float = 1.2
    eval_every: int = 250
    seed: int = 0

    def __post_init__(self) -> None:
        check_eta(self.eta)
        check_choice("mask_type", self.mask_type, MASK_TYPES)
        check_choice("normaliser", self.normaliser, NORMALISERS)
        check_choice("parametrisation", self.parametrisation, PARAMETRISATIONS)
        if not isinstance(self.input_masking, bool):
            raise TypeError(f"input_masking must be a bool; got {type(self.input_masking).__name__}")
        if self.input_masking and self.parametrisation != "x0":
            raise ValueError(
                "parametrisation must be 'x0' with input_masking (the baseline uses EDM's residual)"
            )
        check_int("steps", self.steps, minimum=1)
        check_int("batch", self.batch, minimum=1)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_float("weight_decay", self.weight_decay, minimum=0.0)
        check_int("warmup", self.warmup, minimum=0, maximum=self.steps)
        check_float("p_mean", self.p_mean)
        check_float("p_std", self.p_std, minimum=0.0, strict_min=True)
        check_int("eval_every", self.eval_every, minimum=1)
        check_seed("seed", self.seed)


def model_device(model: torch.nn.Module) -> torch.device:
    """The device of ``model``'s parameters (the CPU for a model without any)."""
    return next((p.device for p in model.parameters()), torch.device("cpu"))


def noise_generator(device: torch.device, seed: int) -> torch.Generator:
    """A generator seeded with ``seed`` on ``device``, so that a step's σ, noise and masks are drawn there.

    On the CPU it is the plain ``torch.Generator().manual_seed(seed)`` stream. The meta device (shapes
    only) has no generator of its own and ignores the one it is given: it gets a CPU generator.
    """
    device = torch.device(device)
    generator = torch.Generator() if device.type in ("cpu", "meta") else torch.Generator(device=device)
    return generator.manual_seed(check_seed("seed", seed))


def training_loss(
    model: EDMDenoiser | torch.nn.Module, x0: Tensor, config: TrainConfig, generator: torch.Generator
) -> Tensor:
    """The loss of one step on the clean batch ``x0`` (B, C, H, W); randomness from ``generator``.

    ``x0`` must be on the model's device; σ, the noise and the masks are drawn there when ``generator``
    lives there (:func:`noise_generator`), else on the generator's device and moved
    (:func:`~neurips26.ssd.masks.draw_device`): every tensor of the step ends up on the model's device.
    ``model`` may be the data-parallel wrapper of the denoiser (under torchrun): the loss only calls it
    (``raw=True`` for the masked ``F_θ`` residual) and reads the configuration off the module inside.
    """
    cfg = distributed.unwrap(model).config
    x0 = check_images("x0", x0, channels=cfg.channels_in)
    device = model_device(model)
    if x0.device != device:
        raise ValueError(f"x0 must be on the model's device {device}; got {x0.device}")
    b, _, h, w = x0.shape
    sd = cfg.sigma_data
    sigma = sample_sigma(b, generator, config.p_mean, config.p_std, device=device).to(x0.dtype)
    noise = torch.randn(
        x0.shape, generator=generator, dtype=x0.dtype, device=draw_device(generator, device)
    ).to(device)
    x = x0 + sigma.view(-1, 1, 1, 1) * noise  # the noisy input uses every pixel of x0
    mask = None
    if config.eta > 0 or config.input_masking:
        mask = sample_mask(
            (b, h, w),
            config.eta,
            mask_type=config.mask_type,
            generator=generator,
            dtype=x0.dtype,
            device=device,
        )
    if config.input_masking:
        # MaskDM-style: the network sees only the kept pixels of x and the mask itself
        pred = model(x * mask, sigma, mask, raw=True)
        return ssd_loss(pred, edm_target(x0, noise, sigma, sd), mask, normaliser=config.normaliser)
    if config.parametrisation == "x0":
        pred, target = model(x, sigma, raw=True), edm_target(x0, noise, sigma, sd)
    elif config.parametrisation == "eps":
        pred, target = eps_prediction(model(x, sigma), x, sigma), noise
    else:
        pred, target = v_prediction(model(x, sigma), x, sigma, sd), v_target(x0, noise, sigma, sd)
    return ssd_loss(pred, target, mask, normaliser=config.normaliser)


def train_denoiser(
    model: EDMDenoiser,
    data: Tensor,
    config: TrainConfig,
    *,
    eval_fn: Callable[[EDMDenoiser], float | Mapping[str, float]] | None = None,
    progress: bool = True,
    desc: str | None = None,
) -> History:
    """Train ``model`` in place on ``data`` (N, C, H, W) for ``config.steps`` Adam updates.

    Batches are drawn with replacement from ``data`` by a generator seeded with ``config.seed`` (and moved
    to the model's device by :func:`~neurips26.train.fit`); noise levels, noise and masks come from a
    second one on the model's device (:func:`noise_generator`), so two runs with the same seeds and the
    same initial weights see the same batches. ``eval_fn(model)`` runs every ``config.eval_every``
    updates (and after the last) and its values land in ``History.eval``.

    Under torchrun the same call trains data-parallel (:func:`~neurips26.train.fit`): every rank draws the
    same global batch and keeps its share, and rank r draws its σ, noise and masks from
    ``rank_seed(config.seed + 1, r)`` (rank 0, and a single process, from ``config.seed + 1``).
    """
    if not isinstance(model, EDMDenoiser):
        raise TypeError(f"model must be an EDMDenoiser; got {type(model).__name__}")
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig; got {type(config).__name__}")
    data = check_images("data", data, channels=model.config.channels_in).float()
    if config.input_masking and model.config.extra_input_channels != 1:
        raise ValueError("model must have extra_input_channels = 1 for input_masking (the mask channel)")
    batch_gen = torch.Generator().manual_seed(config.seed)  # indices into data, which stays where it is
    noise_seed = distributed.rank_seed(config.seed + 1, distributed.world().rank)
    noise_gen = noise_generator(model_device(model), noise_seed)  # σ, noise, masks: model's device

    def batches(step: int) -> Tensor:
        idx = torch.randint(data.shape[0], (config.batch,), generator=batch_gen)
        return data[idx]

    return fit(
        model,
        lambda m, x0: training_loss(m, x0, config, noise_gen),
        batches,
        steps=config.steps,
        seed=config.seed,
        lr=config.lr,
        weight_decay=config.weight_decay,
        warmup=config.warmup,
        min_lr_ratio=1.0,
        grad_clip=None,
        betas=(0.9, 0.999),
        eval_fn=eval_fn,
        eval_every=config.eval_every,
        progress=progress,
        desc=desc or f"denoiser η={config.eta:g}",
    )
