"""The chapter's trained denoisers: one table of models, their training, and their checkpoints (chapter 05).

Run ``python -m neurips26.ssd.prepare --scale default`` to train every model of :data:`MODELS` and write
float16 checkpoints into ``src/neurips26/ssd/checkpoints/`` (package data, so they install with the
library); ``--scale smoke`` trains tiny 8×8 versions in seconds into the user cache (CI runs it), and
``--only NAME`` (repeatable) restricts the run. The table is declared to a
:class:`~neurips26.checkpoint_files.Registry` (:data:`REGISTRY`), and the experiments get a model through
its rule, :func:`pretrained`: the checkpoint of the model's scale when it is there and fresh, otherwise the
same training through :func:`neurips26.cache.cached`, with a progress bar, so the notebooks run before the
checkpoints exist, only slower.

Choices [ours], all for the CPU budget (2 cores, on which the whole table must train in one default run of
30–40 min):

- digit and twin-blob denoisers: ``DenoiserConfig(16, C, channels=(16, 32))`` (106k parameters; a (32, 64)
  U-Net has 382k and trains ~3× slower per step), batch 64 rather than 128, Adam 2e-3,
  2,000 updates for every model (equal step budgets), σ_d = 0.5; the same initial weights and the same
  batch order for every model (one seed), so rows differ only in what the table says;
- every digit run logs a proxy FID of 256 Heun samples every 250 updates (the stability curve of D4, and
  the early-stopping choice: ``select="best"`` keeps the weights at the best logged value); twin-blob runs
  log the asymmetry and colour mismatch the same way;
- the "full" digit set is the 797 training digits left after holding out 1,000 for the proxy FID's
  reference; the small-data runs use 64 of them (a seeded subset), i.e. ~2,000 epochs: far longer than
  needed, as D4 asks; the twin blobs are a fixed set of 2,048 images;
- regulariser baselines at N = 64: dropout 0.1 and (decoupled, AdamW) weight decay 1e-2; MaskDM-style
  input masking at η = 0.9 on the full digits;
- one seed (three would triple the 30–40 min of CPU the default run takes).

Equal budgets, one seed, and one table: the η = 0 row and the η = 0.98 row of a claim differ in η only.

``--scale paper`` trains the same table at :data:`PAPER` into the user cache, every model on the device
:func:`~neurips26.train.choose_device` picks; ``torchrun --nproc_per_node=N -m neurips26.ssd.prepare
--scale paper`` trains each denoiser and the proxy-FID classifier data-parallel (the global batch of 128
is cut over the N ranks, each rank drawing its own σ, noise and masks). The paper's datasets,
resolutions, networks and training lengths are not known to us (only its abstract was available; FID on
natural-image sets, presumably), and natural images cannot be had offline. So ``paper`` is the largest run
our data supports rather than the paper's: the same 16×16 digits (797 training images, 64 for the
small-data rows: that small set is what the claims are about) and twin blobs, with a 4× wider U-Net
(widths 64/128, 1.46 M parameters), 5× the updates at twice the batch (10,000 × 128), 8× the twin-blob
set (16,384), and a proxy-FID curve of 1,024 samples every 500 updates. One seed, as at default. About
20–25 min on one H100 for the eleven runs (an estimate: ~1.3 PFLOP each, launch-bound at this size).
``--trial`` (:func:`neurips26.scales.trial_run`) trains every row for one update of 4 images, on 16 twin
blobs, with a 2-sample, 2-step evaluation, a one-update classifier and a 1-image validation loss.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

import neurips26
from neurips26.cache import cache_key, cached
from neurips26.checkpoint_files import (
    Registry,
    check_directory_budget,
    prepare_main,
    write_within_budget,
)
from neurips26.scales import check_scale, pick, trial_run
from neurips26.ssd.checkpoints import (
    PACKAGE_DIR,
    SOURCE_FILES,
    CheckpointMeta,
    build_denoiser,
    config_hash,
    half_state,
    source_fingerprint,
    weights_hash,
)
from neurips26.ssd.data import load_digits_16, twin_blobs
from neurips26.ssd.denoiser import DenoiserConfig, EDMDenoiser, loss_weight
from neurips26.ssd.masks import check_eta
from neurips26.ssd.metrics import (
    SCORE_SIGMAS,
    DigitCNNConfig,
    ProxyFID,
    classifier_accuracy,
    colour_mismatch,
    digit_classifier,
    twin_asymmetry,
)
from neurips26.ssd.sampler import heun_sample
from neurips26.ssd.train import TrainConfig, train_denoiser
from neurips26.train.device import choose_device, torch_threads
from neurips26.validation import check_choice, check_float, check_int, check_seed

DATASETS = ("digits", "twins")
SELECTIONS = ("last", "best")


# --------------------------------------------------------------------------------------------
# the table of models


@dataclass(frozen=True)
class ModelSpec:
    """One trained denoiser of the chapter: what it is trained on and how it differs from plain training.

    name: the checkpoint's name; data: "digits" or "twins"; eta: the SSD mask ratio η; n_train: number of
    training images (None = the whole training set); dropout, weight_decay: the regulariser baselines;
    input_masking: the MaskDM-style baseline (the network sees the masked noisy image and the mask);
    select: "last" (weights after the last update) or "best" (early stopping: the weights at the best
    logged validation value of the same run).
    """

    name: str
    data: str
    eta: float = 0.0
    n_train: int | None = None
    dropout: float = 0.0
    weight_decay: float = 0.0
    input_masking: bool = False
    select: str = "last"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or any(c in self.name for c in "/\\ "):
            raise ValueError(f"name must be a non-empty str without spaces or slashes; got {self.name!r}")
        check_choice("data", self.data, DATASETS)
        check_eta(self.eta)
        if self.n_train is not None:
            check_int("n_train", self.n_train, minimum=2)
        check_float("dropout", self.dropout, minimum=0.0, maximum=0.99)
        check_float("weight_decay", self.weight_decay, minimum=0.0)
        if not isinstance(self.input_masking, bool):
            raise TypeError(f"input_masking must be a bool; got {type(self.input_masking).__name__}")
        check_choice("select", self.select, SELECTIONS)

    def training(self) -> ModelSpec:
        """The training run behind this row (name and ``select`` dropped): rows that share it train once."""
        return dataclasses.replace(self, name="run", select="last")


MODELS: tuple[ModelSpec, ...] = (
    # D3: quality vs mask ratio on the full digits, and the input-masking baseline
    ModelSpec("digits-eta0", "digits", eta=0.0),
    ModelSpec("digits-eta0.5", "digits", eta=0.5),
    ModelSpec("digits-eta0.9", "digits", eta=0.9),
    ModelSpec("digits-eta0.98", "digits", eta=0.98),
    ModelSpec("digits-maskdm-eta0.9", "digits", eta=0.9, input_masking=True),
    # D4 (stability curve) and D5 (memorisation) on N = 64 digits, with the regulariser baselines
    ModelSpec("digits64-eta0", "digits", eta=0.0, n_train=64),
    ModelSpec("digits64-eta0.98", "digits", eta=0.98, n_train=64),
    ModelSpec("digits64-early", "digits", eta=0.0, n_train=64, select="best"),
    ModelSpec("digits64-dropout", "digits", eta=0.0, n_train=64, dropout=0.1),
    ModelSpec("digits64-wd", "digits", eta=0.0, n_train=64, weight_decay=1e-2),
    # D7: global consistency on twin blobs
    ModelSpec("twins-eta0", "twins", eta=0.0),
    ModelSpec("twins-eta0.98", "twins", eta=0.98),
)
"""Every checkpoint of the chapter, one row each (names are unique)."""

MODEL_NAMES: tuple[str, ...] = tuple(spec.name for spec in MODELS)


def model_spec(name: str) -> ModelSpec:
    """The row of :data:`MODELS` called ``name``."""
    check_choice("name", name, MODEL_NAMES)
    return MODELS[MODEL_NAMES.index(name)]


def _group(spec: ModelSpec) -> tuple[ModelSpec, ...]:
    """The rows that share ``spec``'s training run (e.g. a run and its early-stopped weights)."""
    return tuple(s for s in MODELS if s.training() == spec.training())


# --------------------------------------------------------------------------------------------
# sizes per scale


@dataclass(frozen=True)
class PrepareConfig:
    """How the models of :data:`MODELS` are trained and validated at one scale.

    image_size: side of the images (16; 8 at smoke); channels, small, sigma_data: the denoiser
    (:class:`DenoiserConfig`); steps, batch, lr: the training (:class:`TrainConfig`; Adam, no warm-up);
    eval_every: updates between logged evaluations; curve_samples: Heun samples per logged evaluation;
    sampler_steps: Heun steps; n_twins: twin-blob training images; n_holdout: digits held out as the
    proxy FID's reference; val_images: held-out images of the validation loss; classifier: the proxy-FID
    digit classifier; seed: weights, batches, masks, data subsets and evaluation noise.
    """

    image_size: int = 16
    channels: tuple[int, ...] = (16, 32)
    small: bool = False
    sigma_data: float = 0.5
    steps: int = 2000
    batch: int = 64
    lr: float = 2e-3
    eval_every: int = 250
    curve_samples: int = 256
    sampler_steps: int = 18
    n_twins: int = 2048
    n_holdout: int = 1000
    val_images: int = 256
    classifier: DigitCNNConfig = field(default_factory=DigitCNNConfig)
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("image_size", self.image_size, minimum=8)
        if self.image_size not in (8, 16):
            raise ValueError(
                f"image_size must be 8 or 16 (digits are 8×8, upsampled to 16×16); got {self.image_size}"
            )
        if not isinstance(self.channels, tuple):
            raise TypeError(f"channels must be a tuple of ints; got {type(self.channels).__name__}")
        if not isinstance(self.small, bool):
            raise TypeError(f"small must be a bool; got {type(self.small).__name__}")
        # DenoiserConfig checks the widths against the image size and GroupNorm
        DenoiserConfig(
            self.image_size, 1, channels=self.channels, small=self.small, sigma_data=self.sigma_data
        )
        check_int("steps", self.steps, minimum=1)
        check_int("batch", self.batch, minimum=1)
        check_float("lr", self.lr, minimum=0.0, strict_min=True)
        check_int("eval_every", self.eval_every, minimum=1)
        check_int("curve_samples", self.curve_samples, minimum=2)
        check_int("sampler_steps", self.sampler_steps, minimum=1)
        check_int("n_twins", self.n_twins, minimum=2)
        check_int("n_holdout", self.n_holdout, minimum=2, maximum=1000)
        check_int("val_images", self.val_images, minimum=1, maximum=self.n_holdout)
        if not isinstance(self.classifier, DigitCNNConfig):
            raise TypeError(f"classifier must be a DigitCNNConfig; got {type(self.classifier).__name__}")
        if self.classifier.image_size != self.image_size:
            raise ValueError(
                f"classifier.image_size must equal image_size = {self.image_size}; "
                f"got {self.classifier.image_size}"
            )
        check_seed("seed", self.seed)

    @classmethod
    def for_scale(cls, scale: str) -> PrepareConfig:
        """smoke: 8×8, 8 updates (seconds); default: the committed checkpoints; paper: :data:`PAPER`.

        Under a trial run (:func:`~neurips26.scales.trial_run`) the sizes of :func:`trial_caps` apply to
        the scale's plan."""
        check_scale(scale)
        config = pick(
            scale,
            smoke=cls(
                image_size=8,
                small=True,
                steps=8,
                batch=16,
                eval_every=4,
                curve_samples=16,
                n_twins=128,
                val_images=64,
                classifier=DigitCNNConfig(image_size=8, steps=100, batch_size=64),
            ),
            default=cls(),
            paper=PAPER,
        )
        return trial_caps(config) if trial_run() else config


PAPER = PrepareConfig(
    channels=(64, 128),
    steps=10_000,
    batch=128,
    eval_every=500,
    curve_samples=1024,
    n_twins=16_384,
)
"""The ``paper`` scale (module docstring): a 1.46 M-parameter U-Net, 10,000 updates of 128 images."""


def trial_caps(config: PrepareConfig) -> PrepareConfig:
    """``config`` cut to a trial run: one update of 4 images (no warm-up at any scale), 16 twin blobs, a
    2-sample, 2-step evaluation after it, a one-update classifier and a 1-image validation loss; the
    network keeps ``config``'s sizes."""
    return dataclasses.replace(
        config,
        steps=1,
        batch=4,
        eval_every=1,
        curve_samples=2,
        sampler_steps=2,
        n_twins=16,
        val_images=1,
        classifier=dataclasses.replace(config.classifier, steps=1, batch_size=4),
    )


def denoiser_config(spec: ModelSpec, config: PrepareConfig) -> DenoiserConfig:
    """The network of ``spec`` at ``config``'s size (one input channel for digits, three for twin blobs)."""
    return DenoiserConfig(
        config.image_size,
        1 if spec.data == "digits" else 3,
        channels=config.channels,
        sigma_data=config.sigma_data,
        extra_input_channels=1 if spec.input_masking else 0,
        dropout=spec.dropout,
        small=config.small,
    )


def train_config(spec: ModelSpec, config: PrepareConfig) -> TrainConfig:
    """The optimiser settings of ``spec`` (equal for every row except η, weight decay and input masking)."""
    return TrainConfig(
        eta=spec.eta,
        input_masking=spec.input_masking,
        steps=config.steps,
        batch=config.batch,
        lr=config.lr,
        weight_decay=spec.weight_decay,
        eval_every=config.eval_every,
        seed=config.seed,
    )


def expected_hash(spec: ModelSpec, config: PrepareConfig) -> str:
    """The configuration hash a fresh checkpoint of ``spec`` at ``config`` carries in its sidecar."""
    return config_hash(
        {
            "name": spec.name,
            "spec": spec,
            "prepare": config,
            "denoiser": denoiser_config(spec, config),
            "train": train_config(spec, config),
        }
    )


# --------------------------------------------------------------------------------------------
# data and validation


def digit_images(split: str, config: PrepareConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """Digits of ``split`` ("train" or "holdout") at ``config.image_size``, and their labels.

    16×16: :func:`~neurips26.ssd.data.load_digits_16`; 8×8 (smoke): the same images averaged over 2×2 blocks.
    """
    check_choice("split", split, ("train", "holdout"))
    images, labels = load_digits_16(split, n_holdout=config.n_holdout, seed=config.seed)
    if config.image_size != 16:
        images = F.interpolate(images, size=(config.image_size,) * 2, mode="area")
    return images, labels


def training_images(spec: ModelSpec, config: PrepareConfig) -> torch.Tensor:
    """The training set of ``spec``, (N, C, S, S) in [-1, 1]; a subset is a seeded draw without repeats."""
    if spec.data == "digits":
        images = digit_images("train", config)[0]
    else:
        images = twin_blobs(config.n_twins, seed=config.seed, size=config.image_size)[0]
    if spec.n_train is None:
        return images
    n = check_int("n_train", spec.n_train, maximum=images.shape[0])
    order = np.random.default_rng(np.random.SeedSequence([config.seed, 64])).permutation(images.shape[0])
    return images[torch.from_numpy(np.sort(order[:n]))]


def validation_images(data: str, config: PrepareConfig) -> torch.Tensor:
    """Held-out images of ``data`` for the validation loss: the first held-out digits, or fresh twin blobs."""
    check_choice("data", data, DATASETS)
    if data == "digits":
        return digit_images("holdout", config)[0][: config.val_images]
    return twin_blobs(config.val_images, seed=config.seed + 1, size=config.image_size)[0]


@lru_cache(maxsize=4)
def digit_proxy_fid(config: PrepareConfig, verbose: bool = False) -> tuple[ProxyFID, float]:
    """The :class:`~neurips26.ssd.metrics.ProxyFID` for ``config`` and its classifier's held-out accuracy.

    The classifier is trained (once, through the cache) on the training digits, on
    :func:`~neurips26.train.choose_device`'s device; its reference set and the accuracy are on the
    held-out digits, which no denoiser sees.
    """
    train_x, train_y = digit_images("train", config)
    hold_x, hold_y = digit_images("holdout", config)
    device = choose_device()
    classifier = digit_classifier(train_x, train_y, config.classifier, verbose=verbose, device=device).model
    return ProxyFID(classifier, hold_x), classifier_accuracy(classifier, hold_x, hold_y)


def model_threads(config: PrepareConfig) -> contextlib.AbstractContextManager[None]:
    """:func:`torch_threads` for the models of ``config``: one thread for 8×8 models (smoke), else as set."""
    return torch_threads(1 if config.image_size <= 8 else None)


def _ones_mask(x: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
    """The all-ones mask an input-masking denoiser gets at sampling time (every pixel visible)."""
    return torch.ones_like(x[:, :1])


def sample_images(model: EDMDenoiser, n: int, seed: int, steps: int = 18) -> torch.Tensor:
    """``n`` Heun samples (18 steps by default) of ``model``; an input-masking model sees every pixel."""
    n = check_int("n", n, minimum=1)
    cfg = model.config
    extra_fn = _ones_mask if cfg.extra_input_channels else None
    return heun_sample(
        model,
        (n, cfg.channels_in, cfg.image_size, cfg.image_size),
        steps=steps,
        generator=torch.Generator().manual_seed(check_seed("seed", seed)),
        extra_fn=extra_fn,
    )


def validation_loss(model: EDMDenoiser, images: torch.Tensor, seed: int) -> float:
    """The full (η = 0) EDM loss ``mean λ(σ)(D(x0 + σn; σ) − x0)²`` on held-out ``images``.

    Averaged over the 8 noise levels of :data:`~neurips26.ssd.metrics.SCORE_SIGMAS` with noise drawn from
    ``seed``: a deterministic number that moves when the weights or the network code change. An
    input-masking model gets the all-ones mask, as when sampling. Runs in eval mode without gradients, on
    the model's device (``images`` are moved there); the noise is drawn on the CPU (the same numbers on
    every device) and moved.
    """
    images = images.to(next(model.parameters()).device)
    generator = torch.Generator().manual_seed(check_seed("seed", seed))
    sd = model.config.sigma_data
    was_training = model.training
    model.eval()
    losses = []
    with torch.no_grad():
        for sigma in SCORE_SIGMAS:
            x = images + sigma * torch.randn(images.shape, generator=generator).to(images.device)
            extra = _ones_mask(x, None) if model.config.extra_input_channels else None
            denoised = model(x, sigma, extra)
            losses.append(float((loss_weight(sigma, sd) * (denoised - images) ** 2).mean()))
    model.train(was_training)
    return float(np.mean(losses))


def _curve_evaluator(
    data: str, config: PrepareConfig
) -> tuple[Callable[[EDMDenoiser], dict[str, float]], str]:
    """``eval_fn(model)`` logged during training, and the key early stopping minimises."""
    seed = config.seed + 2

    if data == "digits":
        fid = digit_proxy_fid(config)[0]

        def digits_eval(model: EDMDenoiser) -> dict[str, float]:
            return {"proxy_fid": fid(sample_images(model, config.curve_samples, seed, config.sampler_steps))}

        return digits_eval, "proxy_fid"

    def twins_eval(model: EDMDenoiser) -> dict[str, float]:
        x = sample_images(model, config.curve_samples, seed, config.sampler_steps)
        return {
            "asymmetry": float(twin_asymmetry(x).mean()),
            "colour_mismatch": float(colour_mismatch(x).mean()),
        }

    return twins_eval, "asymmetry"


# --------------------------------------------------------------------------------------------
# training


def train_models(
    specs: Sequence[ModelSpec], config: PrepareConfig, *, progress: bool = True
) -> dict[str, tuple[dict[str, torch.Tensor], CheckpointMeta]]:
    """Train the one run shared by ``specs`` and return, per name, its float16 weights and sidecar.

    The logged evaluation (proxy FID or twin asymmetry every ``eval_every`` updates) doubles as the
    early-stopping record: a ``select="best"`` row gets the weights of the best logged value. The
    sidecar's ``val_loss`` is measured on the float16 weights, as a loaded checkpoint has them; its other
    metrics are the logged values at the selected step (measured on the float32 weights while training).
    The run trains on :func:`~neurips26.train.choose_device`'s device (data-parallel under torchrun); the
    sidecar's ``val_loss`` is measured on the CPU, where :data:`REGISTRY` re-measures it.
    """
    specs = tuple(specs)
    if not specs or not all(isinstance(s, ModelSpec) for s in specs):
        raise TypeError("specs must be a non-empty sequence of ModelSpec")
    run = specs[0].training()
    if any(s.training() != run for s in specs):
        raise ValueError("specs must share one training run (differ only in name and select)")
    if not isinstance(config, PrepareConfig):
        raise TypeError(f"config must be a PrepareConfig; got {type(config).__name__}")
    dcfg, tcfg = denoiser_config(run, config), train_config(run, config)
    model = EDMDenoiser(dcfg, seed=config.seed).to(choose_device())
    evaluate, monitor = _curve_evaluator(run.data, config)
    best: dict[str, object] = {"value": math.inf, "state": None, "index": -1}
    logged = [0]

    def eval_fn(m: EDMDenoiser) -> dict[str, float]:
        values = evaluate(m)
        if values[monitor] < best["value"]:
            best.update(value=values[monitor], state=half_state(m), index=logged[0])
        logged[0] += 1
        return values

    data = training_images(run, config)
    start = time.perf_counter()
    with model_threads(config):
        history = train_denoiser(model, data, tcfg, eval_fn=eval_fn, progress=progress, desc=specs[0].name)
    seconds = time.perf_counter() - start
    if best["state"] is None:  # no logged value was finite: early stopping keeps the last weights
        best.update(state=half_state(model), index=len(history.eval_step) - 1)

    every = max(1, config.steps // 200)
    curves = {
        "eval_step": [float(s) for s in history.eval_step],
        **{k: [float(v) for v in vals] for k, vals in history.eval.items()},
        "loss_step": [float(s) for s in history.step[::every]],
        "loss": [float(v) for v in history.smoothed_loss(20)[::every]],
    }
    states = {"last": half_state(model), "best": best["state"]}
    chosen = {"last": len(history.eval_step) - 1, "best": int(best["index"])}
    val = validation_images(run.data, config)
    out = {}
    for spec in specs:
        state, index = states[spec.select], chosen[spec.select]
        stub = CheckpointMeta(name=spec.name, config_hash="", source="", denoiser=dataclasses.asdict(dcfg))
        loaded = build_denoiser(stub, state)
        metrics = {
            "val_loss": validation_loss(loaded, val, config.seed + 3),
            "selected_step": float(history.eval_step[index]),
            **{k: float(vals[index]) for k, vals in history.eval.items()},
        }
        if run.data == "digits":
            metrics["classifier_accuracy"] = digit_proxy_fid(config)[1]
        out[spec.name] = (
            state,
            CheckpointMeta(
                name=spec.name,
                config_hash=expected_hash(spec, config),
                source=source_fingerprint(),
                denoiser=dataclasses.asdict(dcfg),
                spec={
                    "model": dataclasses.asdict(spec),
                    "train": dataclasses.asdict(tcfg),
                    "prepare": dataclasses.asdict(config),
                    "n_train": int(data.shape[0]),
                    "parameters": loaded.num_parameters(),
                },
                metrics=metrics,
                curves=curves,
                weights_hash=weights_hash(state),
                version=neurips26.__version__,
                torch=torch.__version__,
                train_seconds=round(seconds, 2),
            ),
        )
    return out


def _build(name: str, scale: str, meta: CheckpointMeta, state: dict[str, torch.Tensor]) -> EDMDenoiser:
    return build_denoiser(meta, state)


def _measure(name: str, scale: str, model: EDMDenoiser) -> dict[str, float]:
    """The validation loss recorded in the sidecar, re-measured on the recorded held-out images and noise."""
    config = PrepareConfig.for_scale(scale)
    with model_threads(config):
        return {
            "val_loss": validation_loss(
                model, validation_images(model_spec(name).data, config), config.seed + 3
            )
        }


def _trained_run(
    spec: ModelSpec, config: PrepareConfig, verbose: bool
) -> dict[str, tuple[dict[str, torch.Tensor], CheckpointMeta]]:
    """The checkpoints of ``spec``'s run, trained once and kept in the user cache (keyed by code, config)."""
    group = _group(spec)
    key = {
        "hashes": [expected_hash(s, config) for s in group],
        "network": source_fingerprint(),
        "train": cache_key("source", None, "neurips26.train"),
        "nn": cache_key("source", None, "neurips26.nn"),
    }
    return cached(
        f"ssd-model-{group[0].name}",
        key,
        lambda: train_models(group, config, progress=True),
        package="neurips26.ssd",
        verbose=verbose,
    )


def _train(name: str, scale: str, verbose: bool) -> tuple[dict[str, torch.Tensor], CheckpointMeta]:
    return _trained_run(model_spec(name), PrepareConfig.for_scale(scale), verbose)[name]


REGISTRY = Registry(
    chapter="ssd",
    package_dir=PACKAGE_DIR,
    names=MODEL_NAMES,
    meta_class=CheckpointMeta,
    expected_hash=lambda name, scale: expected_hash(model_spec(name), PrepareConfig.for_scale(scale)),
    build=_build,
    measure=_measure,
    train=_train,
    source_files=lambda name: SOURCE_FILES,
)
"""The chapter's denoisers in the :class:`~neurips26.checkpoint_files.Registry`: the table, the hash of a
row at a scale, the validation loss a checkpoint must reproduce (relative
:data:`~neurips26.checkpoint_files.METRIC_RTOL`), and the cached training of its run."""

checkpoint_dir = REGISTRY.checkpoint_dir
load_checkpoint = REGISTRY.load
pretrained = REGISTRY.pretrained


# --------------------------------------------------------------------------------------------
# the command line


def prepare(
    scale: str = "smoke",
    *,
    only: Sequence[str] | None = None,
    out: Path | str | None = None,
    progress: bool = True,
) -> list[CheckpointMeta]:
    """Train the models of :data:`MODELS` (or the names in ``only``) at ``scale`` and write their checkpoints.

    ``out`` defaults to :func:`checkpoint_dir` (the package for "default"). A run shared by several rows
    trains once. At the shipped scale (default), whose checkpoints are package data, raises
    ``RuntimeError`` when a checkpoint exceeds 1 MB or the directory the book's cap; the other scales
    write to the user cache uncapped (a ``paper`` checkpoint takes ~2.9 MB).
    """
    capped = scale == REGISTRY.shipped_scale
    config = PrepareConfig.for_scale(scale)
    names = MODEL_NAMES if only is None else tuple(check_choice("only", n, MODEL_NAMES) for n in only)
    directory = Path(checkpoint_dir(scale) if out is None else out)
    written: list[CheckpointMeta] = []
    runs: list[ModelSpec] = []
    for name in names:
        run = model_spec(name).training()
        if run not in runs:
            runs.append(run)
    for run in runs:
        group = tuple(s for s in _group(run) if s.name in names)
        for state, meta in train_models(group, config, progress=progress).values():
            write_within_budget(directory, state, meta, capped=capped)
            written.append(meta)
    check_directory_budget(directory, len(written), capped=capped)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m neurips26.ssd.prepare --scale smoke|default|paper [--only NAME]... [--out DIR]``."""
    return prepare_main(
        argv,
        prog="python -m neurips26.ssd.prepare",
        description="Train and write the checkpoints of chapter 05.",
        models=MODELS,
        prepare=prepare,
    )


if __name__ == "__main__":
    # Run the importable module's main, not this ``__main__`` copy's: what it caches on the way then
    # pickles under ``neurips26.ssd.prepare``, which a later process can read back.
    from neurips26.ssd import prepare as _importable

    sys.exit(_importable.main())
