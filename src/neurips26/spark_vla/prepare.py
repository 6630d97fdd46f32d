"""The chapter's trained models (chapter 17): the 2D encoder, the 3D expert, and every variant.

``python -m neurips26.spark_vla.prepare --scale default`` writes ``NAME.pt`` / ``NAME.json`` (float16) into
``src/neurips26/spark_vla/checkpoints/``:

1. ``encoder`` — the 2D ViT pre-trained on the pre-training renders (per-patch colour, shape and sub-patch
   image offset), then frozen: the encoder every variant shares;
2. ``teacher`` — the 3D expert: a ViT of the same size regressing per-patch depth and 3D points;
3. one checkpoint per :data:`~neurips26.spark_vla.variants.VARIANTS` entry (seed 0), and seeds 1 and 2 of
   ``2d``, ``spark-dense`` and ``oracle`` (``NAME-s1``, ``NAME-s2``) for the claim decided over seeds.
   A variant's file holds only what it trains (adapters, router, policy, depth tokens, projector; the
   whole encoder for the larger VLA); the frozen encoder is rebuilt from ``encoder``.

``--scale smoke`` writes small versions into the user cache. A checkpoint is fresh when its validation
metrics (on development episodes, never the evaluation ones) are re-measured within :data:`METRIC_ATOL`.

``--scale paper`` trains the same 21 models at :data:`PAPER` into the user cache, on the device
:func:`~neurips26.train.choose_device` picks. The paper builds on Qwen2.5-0.5B with a frozen VGGT-1B 3D expert
(about 50 M trainable parameters) and robot benchmarks, none of which exist offline; its ``paper`` scale here
is the largest run the procedural 48 x 48 tabletop is worth: the split sizes
:data:`~neurips26.spark_vla.data.SPLIT_SIZES` names for ``paper`` (20,000 training episodes, i.e. 200,000
demonstration samples; 10,000 pre-training renders; 400 development episodes for the sidecar metrics and 400
evaluation ones for the claims), the 2D encoder and the 3D expert as 8-block ViTs of width 256 with 8 heads
(:data:`PAPER_ENCODER`, 6.4 M parameters each; adapters on blocks 4-7, the four maps of those blocks
distilled, the expert's tokens taken after block 7), pre-trained for 1,600 updates of 128 renders at peak lr
1e-3 (about 20 epochs), and every policy a 4-block, 256-wide LM (the larger VLA 512 wide; SPARK then trains
3.6 M parameters, the larger VLA 20.5 M) for 20,000 updates of 256 samples at lr 5e-4 (about 25 epochs; 1,000
warm-up updates). The learning rates are chosen, not yet tuned on a GPU run. About 1.7 hours on one H100 (an
estimate, not measured: a policy step is latency-bound at roughly 15 ms, so about 5 minutes per policy, 19
policies, plus pre-training and about 4 minutes of rendering the 30,800 episodes in one process); the sidecar
metrics (closed loop on 400 episodes) are measured on the CPU, on all its threads. A policy's checkpoint takes
about 7 MB (the bridge's 16 MB), a ViT 13 MB, the larger VLA 41 MB: about 210 MB in all (the book's caps hold
at the default scale only).

``torchrun --nproc_per_node=N -m neurips26.spark_vla.prepare --scale paper`` trains both ViTs and every
policy data-parallel (:func:`~neurips26.train.fit`): the global batch is cut over the ranks; a policy's
step runs in the forward of :class:`~neurips26.spark_vla.training.TrainStep`, whether it is dense or routed
is drawn once for all ranks, random-k and Gumbel draws come from each rank's own stream, and every trainable
parameter takes part in each step (the router enters a routed step times 0). ``--trial``
(:func:`neurips26.scales.trial_run`) trains every model for one update on a few episodes and measures it on
two (:func:`trial_caps`); the networks keep their sizes.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch

import neurips26
from neurips26.cache import cached
from neurips26.checkpoint_files import (
    FORMAT,
    ModelRow,
    Registry,
    Sidecar,
    StaleCheckpointError,
    check_layout,
    committed_form,
    config_hash,
    half_state,
    load_half_state,
    prepare_main,
    source_fingerprint,
    weights_hash,
)
from neurips26.nn import ViTConfig
from neurips26.scales import pick, trial_run
from neurips26.spark_vla import data, sim
from neurips26.spark_vla.encoder import ENCODER_CONFIG, adapted_blocks, make_encoder, pretrain_encoder
from neurips26.spark_vla.model import VLAModel
from neurips26.spark_vla.probes import colour_probe
from neurips26.spark_vla.rollout import action_l1, closed_loop
from neurips26.spark_vla.teacher import make_teacher, pretrain_teacher, teacher_maps, teacher_tokens
from neurips26.spark_vla.training import TrainConfig, train_variant
from neurips26.spark_vla.variants import VARIANTS, VariantSpec
from neurips26.spark_vla.vla import PolicyConfig
from neurips26.train import choose_device, shipped_threads, torch_threads
from neurips26.validation import check_float, check_int

PKG = "neurips26.spark_vla"
PACKAGE_DIR = Path(__file__).resolve().parent / "checkpoints"
SOURCE_FILES = tuple(
    (PKG, f)
    for f in (
        "sim.py", "data.py", "encoder.py", "teacher.py", "distill.py", "router.py", "vla.py", "model.py",
        "training.py", "rollout.py", "variants.py", "baselines/bridge.py", "baselines/depth_oracle.py",
    )
)  # fmt: skip
#: Success rates and L1 errors recorded in the sidecars may move this much on another CPU (2 of 100
#: validation episodes flip; the L1 moves in the fourth decimal).
METRIC_ATOL = 0.03
#: The variants decided over three seeds (claim C1).
SEEDED = ("2d", "spark-dense", "oracle")
#: The one checkpoint allowed above 1 MB.
LARGE = "larger"
VALIDATION_EPISODES = 100
CURVE_EVERY = 25


@dataclass(frozen=True)
class Row:
    name: str
    role: str
    variant: str | None  # None for the encoder and the expert
    seed: int = 0


MODELS = (
    Row("encoder", "2D ViT pre-trained on colour, shape and image offset, then frozen", None),
    Row("teacher", "3D expert: ViT regressing per-patch depth and 3D points", None),
    *(Row(v.name, v.label, v.name) for v in VARIANTS.values()),
    *(Row(f"{n}-s{s}", f"{VARIANTS[n].label}, seed {s}", n, s) for n in SEEDED for s in (1, 2)),
)
NAMES = tuple(r.name for r in MODELS)


def row(name: str) -> Row:
    for r in MODELS:
        if r.name == name:
            return r
    raise ValueError(f"name must be one of {', '.join(NAMES)}; got {name!r}")


@dataclass(frozen=True)
class Plan:
    """Sizes and budgets at one scale.

    ``encoder``: the sizes of the 2D encoder's and the 3D expert's ViTs; ``policy``: the policy's (the
    larger VLA doubles its width); ``pretrain_batch`` and ``pretrain_lr``: both ViTs' pre-training batch and
    peak learning rate; ``warmup``: the policies' warm-up updates (None: ``max(1, steps // 20)``). These
    fields came with the ``paper`` scale: at their :data:`GROWTH_FIELDS` values (the constants the
    committed checkpoints were trained with) they are left out of the configuration hash.
    """

    pretrain_episodes: int
    pretrain_steps: int
    train_episodes: int
    train: TrainConfig
    validation_episodes: int
    encoder: ViTConfig = ENCODER_CONFIG
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    pretrain_batch: int = 64
    pretrain_lr: float = 3e-3
    warmup: int | None = None

    def __post_init__(self) -> None:
        check_int("pretrain_episodes", self.pretrain_episodes, minimum=2)
        check_int("pretrain_steps", self.pretrain_steps, minimum=1)
        check_int("train_episodes", self.train_episodes, minimum=1)
        check_int("validation_episodes", self.validation_episodes, minimum=2)
        check_int("pretrain_batch", self.pretrain_batch, minimum=1)
        check_float("pretrain_lr", self.pretrain_lr, minimum=0.0, strict_min=True)
        if self.warmup is not None:
            check_int("warmup", self.warmup, minimum=0)
        if self.policy.vision_width != self.encoder.width:
            raise ValueError(
                f"policy.vision_width must equal encoder.width ({self.encoder.width}); "
                f"got {self.policy.vision_width}"
            )


GROWTH_FIELDS: dict[str, object] = {
    "encoder": ENCODER_CONFIG,
    "policy": PolicyConfig(),
    "pretrain_batch": 64,
    "pretrain_lr": 3e-3,
    "warmup": None,
}
"""Fields of :class:`Plan` added with the ``paper`` scale and the values the committed checkpoints were
trained with: at these values a field is left out of the hash (:func:`expected_hash`)."""

PAPER_ENCODER = ViTConfig(image_size=48, patch_size=8, width=256, depth=8, heads=8, class_token=False)
"""The ``paper`` scale's 2D encoder and 3D expert: 8 blocks of width 256 (6.4 M parameters each), the
adapters on blocks 4-7."""

PAPER = Plan(
    pretrain_episodes=data.SPLIT_SIZES["paper"]["pretrain"],
    pretrain_steps=1600,
    train_episodes=data.SPLIT_SIZES["paper"]["train"],
    train=TrainConfig(steps=20_000, batch_size=256, lr=5e-4),
    validation_episodes=data.SPLIT_SIZES["paper"]["dev"],
    encoder=PAPER_ENCODER,
    policy=PolicyConfig(width=256, lm_depth=4, heads=8, vision_width=256),
    pretrain_batch=128,
    pretrain_lr=1e-3,
)
"""The ``paper`` scale (module docstring): the sizes :data:`~neurips26.spark_vla.data.SPLIT_SIZES` names
for ``paper``; both ViTs pre-trained for 1,600 updates of 128 renders (about 20 epochs of 10,000); every
policy 4 x 256 for 20,000 updates of 256 demonstration samples (about 25 epochs of 200,000)."""


def trial_caps(p: Plan) -> Plan:
    """``p`` cut to a trial run (:func:`~neurips26.scales.trial_run`): 8 pre-training renders, 4 training
    episodes (40 samples) and 2 validation episodes; one update of each ViT and each policy at batch 4,
    without warm-up. The networks keep ``p``'s sizes."""
    return replace(
        p,
        pretrain_episodes=8,
        pretrain_steps=1,
        pretrain_batch=4,
        train_episodes=4,
        train=replace(p.train, steps=1, batch_size=4),
        validation_episodes=2,
        warmup=0,
    )


def plan(scale: str) -> Plan:
    """The sizes at ``scale``. Default: 6,000 updates at lr 1e-3 for every policy, decided on development
    episodes (at 3e-3 the larger VLA and the Gumbel router stayed on the loss plateau, 0.01 success; at 1e-3
    every probe run but the bridge left it; at 3,000 updates several seeds had not left it yet). Paper:
    :data:`PAPER`. A trial run applies :func:`trial_caps`."""
    default = Plan(
        pretrain_episodes=data.SPLIT_SIZES["default"]["pretrain"],
        pretrain_steps=600,
        train_episodes=data.SPLIT_SIZES["default"]["train"],
        train=TrainConfig(steps=6000, batch_size=64, lr=1e-3),
        validation_episodes=VALIDATION_EPISODES,
    )
    smoke = Plan(
        pretrain_episodes=data.SPLIT_SIZES["smoke"]["pretrain"],
        pretrain_steps=10,
        train_episodes=data.SPLIT_SIZES["smoke"]["train"],
        train=TrainConfig(steps=6, batch_size=8, lr=3e-3),
        validation_episodes=6,
    )
    chosen = pick(scale, smoke=smoke, default=default, paper=PAPER)
    return trial_caps(chosen) if trial_run() else chosen


def expected_hash(name: str, scale: str) -> str:
    r = row(name)
    spec = VARIANTS[r.variant] if r.variant else None
    return config_hash(
        {
            "name": name,
            "spec": spec,
            "seed": r.seed,
            "plan": committed_form(plan(scale), GROWTH_FIELDS),
            "format": FORMAT,
            "encoder": "v1",
        }
    )


@dataclass(frozen=True)
class SparkMeta(Sidecar):
    """The sidecar: name, config_hash, source, metrics (validation), curve (training loss), stats (the
    expert's target standardisation), weights_hash, version, torch, train_seconds, format."""

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "config_hash", "source")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ("metrics", "curve", "stats")

    name: str
    config_hash: str
    source: str
    metrics: dict[str, float] = field(default_factory=dict)
    curve: dict[str, list[float]] = field(default_factory=dict)
    stats: dict[str, list[float]] = field(default_factory=dict)
    weights_hash: str = ""
    version: str = ""
    torch: str = ""
    train_seconds: float = 0.0
    format: int = FORMAT


# ----------------------------------------------------------------------------------------------- data


def _tensor(a: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a))


def validation(scale: str) -> data.EpisodeSet:
    """The development episodes the sidecar metrics are measured on."""
    return data.episodes("dev", scale, count=plan(scale).validation_episodes)


def _frozen(model: torch.nn.Module) -> torch.nn.Module:
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


# ------------------------------------------------------------------------------------- build / measure


def _variant_drop(model: VLAModel) -> list[str]:
    """State keys a variant's checkpoint leaves out: the frozen encoder copy (rebuilt from ``encoder``), and
    the adapters too when the variant never enables them (they stay at their seeded initial values)."""
    if model.pathways is None:
        return []
    keep_adapters = model.spec.uses_lora
    return [
        k for k in model.state_dict() if k.startswith("pathways.") and not (keep_adapters and ".lora_" in k)
    ]


def build_model(name: str, scale: str, meta: SparkMeta, state: dict[str, torch.Tensor]):
    """The model of checkpoint ``name`` at ``scale`` on the CPU (a variant's frozen encoder from
    ``encoder``)."""
    r = row(name)
    p = plan(scale)
    if name == "encoder":
        return _frozen(load_half_state(name, make_encoder(0, p.encoder), state))
    if name == "teacher":
        return _frozen(load_half_state(name, make_teacher(0, p.encoder), state))
    encoder, _ = pretrained("encoder", scale, verbose=False)
    model = VLAModel(VARIANTS[r.variant], encoder.cpu(), seed=r.seed, config=p.policy)
    reference = model.state_dict()
    dropped = set(_variant_drop(model))
    kept = {k: v for k, v in reference.items() if k not in dropped}
    check_layout(name, state, kept)
    missing, unexpected = model.load_state_dict(
        {k: v.to(kept[k].dtype) for k, v in state.items()}, strict=False
    )
    if unexpected or set(missing) != set(reference) - set(kept):
        raise StaleCheckpointError(f"checkpoint {name!r} does not fit the variant's parameters")
    return _frozen(model)


def measure(name: str, scale: str, model) -> dict[str, float]:
    """Validation metrics: the encoder's colour-probe accuracy, the expert's R² of depth and height, a
    variant's closed-loop success and action L1 on development episodes; on the model's device, with
    :func:`~neurips26.train.shipped_threads` (restored afterwards)."""
    with torch_threads(shipped_threads(scale)):
        return _measure(name, scale, model)


def _measure(name: str, scale: str, model) -> dict[str, float]:
    val = validation(scale)
    device = next(model.parameters()).device
    images = _tensor(val.images).to(device)
    if name == "encoder":
        tokens = model(images).tokens.cpu().numpy()
        half = len(val) // 2
        acc = colour_probe(tokens[:half], val.colour_labels[:half], tokens[half:], val.colour_labels[half:])
        return {"val_colour_probe": round(float(acc), 4)}
    if name == "teacher":
        meta_stats = _teacher_stats(scale)
        pred = model(images).cpu().numpy() * meta_stats[1] + meta_stats[0]
        out = {}
        for k, key in ((0, "val_depth_r2"), (2, "val_height_r2")):
            truth = val.geometry[..., k].ravel()
            guess = pred[..., k].ravel()
            out[key] = round(float(1.0 - np.mean((guess - truth) ** 2) / np.var(truth)), 4)
        return out
    features = model.frame_features(images, _tensor(val.depth).to(device))
    loop = closed_loop(model, features, val)
    l1 = action_l1(model, features, val, data.demonstrations(val))
    return {"val_success": round(loop.rate(), 4), "val_l1": round(l1, 4)}


# -------------------------------------------------------------------------------------------- training


def _curve(values) -> list[float]:
    values = list(values)
    return [round(float(np.mean(values[i : i + CURVE_EVERY])), 5) for i in range(0, len(values), CURVE_EVERY)]


def _teacher_stats(scale: str) -> tuple[np.ndarray, np.ndarray]:
    """Mean and std of the expert's per-patch targets (depth, X, Y, Z) over the pre-training renders."""
    pre = data.episodes("pretrain", scale, count=plan(scale).pretrain_episodes)
    flat = pre.geometry.reshape(-1, 4).astype(np.float64)
    return flat.mean(axis=0), flat.std(axis=0)


def _fit(name: str, scale: str, verbose: bool):
    """Train ``name`` on :func:`~neurips26.train.choose_device`'s device, on
    :func:`~neurips26.train.shipped_threads` threads."""
    with torch_threads(shipped_threads(scale)):
        return _fit_on(name, scale, verbose, choose_device())


def _fit_on(name: str, scale: str, verbose: bool, device: torch.device):
    p = plan(scale)
    r = row(name)
    if name in ("encoder", "teacher"):
        pre = data.episodes("pretrain", scale, count=p.pretrain_episodes)
        images = _tensor(pre.images).to(device)
        budget = {"steps": p.pretrain_steps, "batch_size": p.pretrain_batch, "lr": p.pretrain_lr}
        if name == "encoder":
            result = pretrain_encoder(
                images,
                _tensor(pre.colour_labels),
                _tensor(pre.shape_labels),
                num_colours=len(sim.COLOUR_CLASSES),
                num_shapes=len(sim.SHAPE_CLASSES),
                seed=0,
                progress=verbose,
                offsets=_tensor(pre.offsets),
                config=p.encoder,
                **budget,
            )
            return result.model, {"loss": _curve(result.losses)}, {}
        mean, std = _teacher_stats(scale)
        targets = _tensor(((pre.geometry - mean) / std).astype(np.float32))
        result = pretrain_teacher(images, targets, seed=0, progress=verbose, config=p.encoder, **budget)
        return result.model, {"loss": _curve(result.losses)}, {"mean": mean.tolist(), "std": std.tolist()}
    spec: VariantSpec = VARIANTS[r.variant]
    encoder, _ = pretrained("encoder", scale, verbose=verbose)
    encoder = encoder.to(device)
    train = data.episodes("train", scale, count=p.train_episodes)
    demos = data.demonstrations(train)
    images = _tensor(train.images).to(device)
    maps = tokens = None
    if spec.uses_teacher:
        teacher, _ = pretrained("teacher", scale, verbose=verbose)
        teacher = teacher.to(device)
        blocks, last = adapted_blocks(p.encoder), p.encoder.depth - 1  # (2, 3) and 3 by default
        with torch.no_grad():
            maps = torch.cat([teacher_maps(teacher, chunk, blocks) for chunk in images.split(500)])
            tokens = torch.cat([teacher_tokens(teacher, chunk, last) for chunk in images.split(500)])
    probe = VLAModel(spec, encoder, seed=r.seed, config=p.policy).to(device)
    features = probe.frame_features(images, _tensor(train.depth).to(device), maps, tokens)
    model, history = train_variant(
        spec,
        encoder,
        features,
        _tensor(train.instructions),
        demos,
        config=p.train,
        seed=r.seed,
        progress=verbose,
        policy=p.policy,
        warmup=p.warmup,
    )
    return _frozen(model), {"loss": _curve(history.loss)}, {}


def _train(name: str, scale: str, verbose: bool = True):
    def compute():
        start = time.perf_counter()
        model, curves, stats = _fit(name, scale, verbose)
        drop = _variant_drop(model) if isinstance(model, VLAModel) else []
        state = half_state(model, drop=drop)
        meta = SparkMeta(
            name=name,
            config_hash=expected_hash(name, scale),
            source=source_fingerprint(SOURCE_FILES),
            curve=curves,
            stats=stats,
            weights_hash=weights_hash(state),
            version=neurips26.__version__,
            torch=torch.__version__,
            train_seconds=round(time.perf_counter() - start, 1),
        )
        return state, replace(meta, metrics=measure(name, scale, build_model(name, scale, meta, state)))

    return cached(
        "spark-vla-model", {"name": name, "scale": scale, "hash": expected_hash(name, scale)}, compute
    )


REGISTRY = Registry(
    chapter="spark_vla",
    package_dir=PACKAGE_DIR,
    names=NAMES,
    meta_class=SparkMeta,
    expected_hash=expected_hash,
    build=build_model,
    measure=measure,
    train=_train,
    source_files=lambda name: SOURCE_FILES,
    rtol=0.0,
    atol=METRIC_ATOL,
)


def pretrained(name: str, scale: str = "default", *, verbose: bool = True):
    """Model ``name`` (a frozen ViT, a DepthTeacher or a VLAModel) and its sidecar: the fresh checkpoint,
    else trained exactly as ``prepare`` would."""
    return REGISTRY.pretrained(name, scale, verbose=verbose)


def prepare(
    scale: str = "default", *, only: list[str] | None = None, out: str | None = None
) -> list[SparkMeta]:
    """Train and write the checkpoints at ``scale`` into ``out``, ``larger`` as the chapter's one large
    checkpoint (the fine-tuned encoder and the 4x LM do not fit the 1 MB of the others)."""
    folder = Path(out) if out else REGISTRY.checkpoint_dir(scale)
    return REGISTRY.write(REGISTRY.chosen(only), scale, folder, lambda n: _train(n, scale), large=LARGE)


def main(argv: list[str] | None = None) -> int:
    return prepare_main(
        argv,
        prog="python -m neurips26.spark_vla.prepare",
        description="Train the chapter 17 encoder, 3D expert and VLA variants and write float16 checkpoints.",
        models=tuple(ModelRow(r.name, r.role) for r in MODELS),
        prepare=prepare,
    )


if __name__ == "__main__":
    # Run the importable module's main, not this ``__main__`` copy's: what it caches on the way then
    # pickles under ``neurips26.spark_vla.prepare``, which a later process can read back.
    from neurips26.spark_vla import prepare as _importable

    sys.exit(_importable.main())


__all__ = [
    "MODELS",
    "NAMES",
    "SEEDED",
    "SparkMeta",
    "measure",
    "plan",
    "prepare",
    "pretrained",
    "validation",
]
