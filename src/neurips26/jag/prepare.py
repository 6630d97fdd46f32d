"""The chapter's eight networks, their training recipes and float16 checkpoints (chapter 07).

``python -m neurips26.jag.prepare --scale default`` trains the models of :data:`MODELS` and writes float16
checkpoints into ``src/neurips26/jag/checkpoints/`` (package data); ``--scale smoke`` trains tiny versions
into the user cache; ``--only NAME`` (repeatable) restricts the run, and a fresh checkpoint already there is
kept. The notebooks get a model through :func:`pretrained` (the chapter's
:class:`~neurips26.checkpoint_files.Registry`).

The models, all of width 48 with the per-pixel skip path (:class:`~neurips26.jag.model.JAGConfig`), on
the same training clips:

- ``teacher`` — bidirectional, both branches, Diffusion Forcing in ``"teacher"`` mode with the
  teacher-forced memory (the [code]'s diffusion stage), emptied in a quarter of its clips;
- ``tf``, ``df`` — the causal many-step baselines (Teacher Forcing, Diffusion Forcing), no memory;
- ``sf-rgb`` — Self Forcing with an RGB-only student (no geometry, no memory);
- ``jag-nosgf`` — the dual-branch student distilled by Self Forcing, no memory, no reward;
- ``jag-tfmem`` — the dual-branch student with the memory built from the ground truth during training;
- ``jag-sgf`` — Self Geometry Forcing: the memory built from its own frames and the geometric reward;
- ``jag-sgf-noreward`` — the same without the reward.

Every student starts from the ODE initialisation on the teacher's trajectories (the same pairs, drawn once
per scale) and then runs :func:`neurips26.jag.sgf.distill` against the teacher loaded from its checkpoint,
so a student is bound to the teacher it was distilled from: its configuration hash includes the teacher's
weights hash.

Sizes at default [our choice; pilots of the chapter's closing notes]: 256 training clips of 12 frames
(a share of the rendered 1,024: the budget), teacher 1,500 steps, DF/TF 1,000, batch 8 at lr 3e-3; ODE
initialisation on 128 teacher trajectories and 300 steps at lr 1e-3; 200 distillation updates at batch
4 and lr 1e-4 with 5 critic updates each.

A checkpoint is fresh when its configuration hashes as recorded, its state dict fits, and it reproduces
its recorded validation metric (base models: the loss of their mode on eight evaluation clips at a fixed
draw; students: the mean PSNR of a fixed-seed rollout of those clips) within
:data:`~neurips26.checkpoint_files.METRIC_RTOL` plus :data:`METRIC_ATOL`.

``--scale paper`` trains the same table at :data:`PAPER` into the user cache, every model on the device
:func:`~neurips26.train.choose_device` picks. The paper (only its abstract was available) builds JAG on
Wan2.1-T2V-1.3B, a 1.3 B-parameter video DiT, with depth pseudo-labels from an external estimator and
chunks of three latent frames; its data sets are not named, and neither the model nor real video can be
had offline. So ``paper`` is the largest run our procedural rooms support rather than the paper's: frames
of 32 × 32 pixels (64 patches per branch, a 32³ voxel memory: :func:`voxel_resolution`), 4,096 rendered
training clips of 16 frames (2,048 tokens a clip) and 64 evaluation loops of 48 frames; a 6-block,
width-128 network with 4 heads (3.69 M parameters, 13× the default's); the teacher for 20,000 updates and
Teacher/Diffusion Forcing for 10,000, at batch 32 and lr 1e-3 after 500 warm-up updates, in bfloat16 on
CUDA; every student's ODE initialisation on 512 teacher trajectories for 2,000 updates, then 1,000
distillation updates at batch 8 with 5 critic updates each. About 70 min on one H100 (an estimate, not
measured: the teacher ≈ 29 PFLOP, the students bound by their sequential rollouts). The checkpoints take
about 7.4 MB each (the book's caps hold at the default scale only).

``torchrun --nproc_per_node=N -m neurips26.jag.prepare --scale paper`` trains the teacher, Teacher and
Diffusion Forcing and every student's ODE initialisation data-parallel (:func:`~neurips26.train.fit`;
the batch of 32 is cut over the N ranks, each rank drawing its own batch and noise from
``rank_seed(seed, rank)``); the distillation loop (:func:`~neurips26.jag.sgf.distill`) is not ``fit``
and trains in one process: every rank runs it, and rank 0 writes the checkpoint. ``--trial``
(:func:`neurips26.scales.trial_run`) trains every model for one update on two 2-frame clips, with a
one-step teacher trajectory, one critic update and a two-clip validation (:func:`trial_caps`); the
networks and frames keep their sizes.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import Tensor

import neurips26
from neurips26 import distributed
from neurips26.cache import cache_key, cached
from neurips26.canonical import canonical
from neurips26.checkpoint_files import (
    FORMAT,
    Registry,
    Sidecar,
    config_hash,
    half_state,
    load_half_state,
    prepare_main,
    source_fingerprint,
    weights_hash,
)
from neurips26.jag import geometry, scenes
from neurips26.jag.diffusion_forcing import Clips, df_loss, truth_memory
from neurips26.jag.metrics import psnr
from neurips26.jag.model import JAGConfig, JAGModel
from neurips26.jag.self_forcing import TEACHER_STEPS, SelfForcingConfig, ode_loss, ode_pairs, rollout
from neurips26.jag.sgf import DistillConfig, SelfMemory, distill
from neurips26.scales import pick, trial_run
from neurips26.train import choose_device, fit
from neurips26.validation import check_int

PACKAGE_DIR = Path(__file__).resolve().parent / "checkpoints"
"""Where the committed (default-scale) checkpoints live: package data of ``neurips26.jag``."""

SOURCE_FILES: tuple[tuple[str, str], ...] = tuple(
    ("neurips26.jag", f)
    for f in (
        "model.py",
        "scenes.py",
        "paths.py",
        "geometry.py",
        "memory.py",
        "diffusion_forcing.py",
        "self_forcing.py",
        "sgf.py",
    )
)
MAX_TOTAL_BYTES = 4_600_000
METRIC_ATOL = 1e-5
EVAL_CLIPS = 8
EVAL_FRAMES = 12
VALIDATION_SEED = 4321
MEMORY_CHUNK = 256
"""Clips whose teacher-forced memory is built at once on the training device (:func:`training_data`)."""
PRECISIONS = ("bf16",)


@dataclass(frozen=True)
class ModelSpec:
    """A row of the table: ``name``, ``role``; ``base`` the Diffusion Forcing mode of a base model (None for
    a distilled student); the student's ``model`` switches and its distillation ``memory``/``reward``."""

    name: str
    role: str
    base: str | None = None
    causal: bool = True
    geometry: bool = True
    memory: bool = False
    distill_memory: str | None = None
    reward: str | None = None

    def __str__(self) -> str:
        return f"{self.name}  ({self.role})"


MODELS: tuple[ModelSpec, ...] = (
    ModelSpec(
        "teacher",
        "bidirectional teacher, Diffusion Forcing with a shared level and the teacher-forced memory",
        "teacher",
        causal=False,
        memory=True,
    ),
    ModelSpec("tf", "baseline: causal Teacher Forcing, 32 steps", "tf"),
    ModelSpec("df", "baseline: causal Diffusion Forcing, 32 steps", "df"),
    ModelSpec("sf-rgb", "baseline: Self Forcing, RGB only", geometry=False),
    ModelSpec("jag-nosgf", "ablation: dual-branch Self Forcing, no memory"),
    ModelSpec(
        "jag-tfmem",
        "ablation: memory built from the ground truth in training",
        memory=True,
        distill_memory="truth",
    ),
    ModelSpec(
        "jag-sgf",
        "JAG: Self Geometry Forcing, own memory and geometric reward",
        memory=True,
        distill_memory="self",
        reward="geo",
    ),
    ModelSpec("jag-sgf-noreward", "ablation: SGF without the reward", memory=True, distill_memory="self"),
)
MODEL_NAMES: tuple[str, ...] = tuple(m.name for m in MODELS)
TEACHER = "teacher"


def model_spec(name: str) -> ModelSpec:
    if name not in MODEL_NAMES:
        raise ValueError(f"name must be one of {', '.join(MODEL_NAMES)}; got {name!r}")
    return MODELS[MODEL_NAMES.index(name)]


def voxel_resolution(image_size: int) -> int:
    """The voxel memory's resolution for frames of ``image_size`` × ``image_size`` pixels: as many voxels
    along each room axis as pixels along the frame (16 at default, 32 at paper). A voxel then spans the
    same number of pixels at every frame size, so the 2 × 2 splat of :mod:`~neurips26.jag.memory` closes
    the same gaps (at 32 × 32, the teacher-forced memory of 16-frame clips covers about 51 % of their
    pixels at 16³ and 74 % at 32³)."""
    return check_int("image_size", image_size, minimum=1)


@dataclass(frozen=True)
class PrepareConfig:
    """What trains the table at one scale (module docstring).

    ``depth`` and ``heads`` size the network (its width is ``width``, its frames ``data.size``);
    ``warmup`` updates of the base models' linear warm-up; ``ode_teacher_steps`` the Euler steps of the
    teacher trajectories of the ODE initialisation; ``precision`` ``"bf16"`` autocasts the ``fit``-trained
    runs on CUDA (None: float32). These fields came with the ``paper`` scale: at the values of
    :data:`GROWTH_FIELDS` they are left out of the configuration hash (:func:`expected_hash`), so the
    committed checkpoints stay fresh.
    """

    data: scenes.DataConfig = field(default_factory=scenes.DataConfig)
    train_clips: int = 256
    width: int = 48
    teacher_steps: int = 1500
    base_steps: int = 1000
    batch: int = 8
    lr: float = 3e-3
    ode_clips: int = 128
    ode_steps: int = 300
    ode_lr: float = 1e-3
    distill_steps: int = 200
    distill_batch: int = 4
    self_forcing: SelfForcingConfig = field(default_factory=lambda: SelfForcingConfig(lr=1e-4))
    seed: int = 0
    depth: int = 3
    heads: int = 4
    warmup: int = 0
    ode_teacher_steps: int = TEACHER_STEPS
    precision: str | None = None

    def __post_init__(self) -> None:
        check_int("depth", self.depth, minimum=1)
        check_int("heads", self.heads, minimum=1)
        check_int("warmup", self.warmup, minimum=0)
        check_int("ode_teacher_steps", self.ode_teacher_steps, minimum=1)
        if self.precision is not None and self.precision not in PRECISIONS:
            raise ValueError(f"precision must be None or one of {PRECISIONS}; got {self.precision!r}")

    @classmethod
    def for_scale(cls, scale: str) -> PrepareConfig:
        """smoke: 8 clips, a few updates; default: the committed checkpoints; paper: :data:`PAPER`. A trial
        run (:func:`~neurips26.scales.trial_run`) applies :func:`trial_caps` to the scale's plan."""
        smoke = cls(
            data=scenes.DataConfig.for_scale("smoke"),
            train_clips=8,
            teacher_steps=4,
            base_steps=4,
            batch=2,
            ode_clips=4,
            ode_steps=2,
            distill_steps=2,
            distill_batch=2,
            self_forcing=SelfForcingConfig(lr=1e-4, critic_updates=1),
        )
        config = pick(scale, smoke=smoke, default=cls(), paper=PAPER)
        return trial_caps(config) if trial_run() else config

    @property
    def memory_resolution(self) -> int:
        """The voxel resolution of every memory of the plan (:func:`voxel_resolution` of its frames)."""
        return voxel_resolution(self.data.size)

    def model_config(self, spec: ModelSpec) -> JAGConfig:
        return JAGConfig(
            image_size=self.data.size,
            width=self.width,
            depth=self.depth,
            heads=self.heads,
            causal=spec.causal,
            geometry=spec.geometry,
            memory=spec.memory,
            pixel_skip=True,
        )


PAPER = PrepareConfig(
    data=scenes.DataConfig.for_scale("paper"),
    train_clips=4096,
    width=128,
    depth=6,
    heads=4,
    teacher_steps=20_000,
    base_steps=10_000,
    batch=32,
    lr=1e-3,
    warmup=500,
    ode_clips=512,
    ode_steps=2000,
    distill_steps=1000,
    distill_batch=8,
    precision="bf16",
)
"""The ``paper`` scale (module docstring): 3.69 M-parameter networks on 32 × 32 frames, the teacher for
20,000 updates of 32 clips, the students from 512 teacher trajectories and 1,000 distillation updates."""

GROWTH_FIELDS: dict[str, Any] = {
    "depth": 3,
    "heads": 4,
    "warmup": 0,
    "ode_teacher_steps": TEACHER_STEPS,
    "precision": None,
}
"""Fields of :class:`PrepareConfig` added with the ``paper`` scale, and the values the committed checkpoints
were trained with (the code's constants then): at these values a field is left out of the hash."""


def trial_caps(config: PrepareConfig) -> PrepareConfig:
    """``config`` cut to a trial run: two training clips and two evaluation loops of two frames (rendered at
    the plan's frame size), one update of every run at batch 2 (no warm-up), ODE pairs from two clips along
    a one-step teacher trajectory, and one distillation update of 2 clips with one critic update. The
    networks keep ``config``'s sizes."""
    data = dataclasses.replace(config.data, train_clips=2, train_frames=2, eval_clips=2, eval_frames=2)
    return dataclasses.replace(
        config,
        data=data,
        train_clips=2,
        teacher_steps=1,
        base_steps=1,
        batch=2,
        warmup=0,
        ode_clips=2,
        ode_steps=1,
        ode_teacher_steps=1,
        distill_steps=1,
        distill_batch=2,
        self_forcing=dataclasses.replace(config.self_forcing, critic_updates=1),
    )


def hash_form(config: PrepareConfig) -> dict[str, Any]:
    """The canonical form of ``config`` (:func:`~neurips26.canonical.canonical`) without the
    :data:`GROWTH_FIELDS` that hold their committed values: what :func:`expected_hash` hashes."""
    form = canonical(config)
    for name, committed in GROWTH_FIELDS.items():
        if getattr(config, name) == committed:
            del form[name]
    return form


def _rank_seed(seed: int) -> int:
    """The seed of this rank's generator: ``seed`` in one process (and on rank 0), another stream on the
    other ranks of a torchrun group (:func:`~neurips26.distributed.rank_seed`)."""
    return distributed.rank_seed(seed, distributed.world().rank)


def _precision(config: PrepareConfig, device: torch.device) -> str | None:
    """The plan's autocast precision on CUDA; None (float32) elsewhere."""
    return config.precision if device.type == "cuda" else None


# --------------------------------------------------------------------------------------------
# data


def plucker(batch: scenes.ClipBatch) -> Tensor:
    """The Plücker rays of every patch of every frame of ``batch``: (N, T, P, 6) float32, what the models
    read as their camera input (patch 4)."""
    n, frames = batch.poses.shape[:2]
    rays = geometry.plucker_patches(batch.poses.reshape(-1, 4, 4), batch.K, *batch.rgb.shape[-2:], 4)
    return rays.reshape(n, frames, -1, 6).float()


def clips_on(clips: Clips, device: torch.device | str) -> Clips:
    """``clips`` with every tensor on ``device`` (the same tensors where they already live there)."""
    memory = None if clips.memory is None else tuple(m.to(device) for m in clips.memory)
    moved = (x.to(device) for x in (clips.rgb, clips.log_depth, clips.valid, clips.plucker))
    return Clips(*moved, memory)  # type: ignore[arg-type]


def _truth_memory(
    batch: scenes.ClipBatch, resolution: int, device: torch.device
) -> tuple[Tensor, Tensor, Tensor]:
    """:func:`~neurips26.jag.diffusion_forcing.truth_memory` of every clip of ``batch``, built on
    ``device`` :data:`MEMORY_CHUNK` clips at a time (each clip's memory is its own), returned on the CPU."""
    bounds = (batch.bounds[0].to(device), batch.bounds[1].to(device))
    chunks = []
    for start in range(0, len(batch), MEMORY_CHUNK):
        part = slice(start, start + MEMORY_CHUNK)
        rgb, log_depth, valid, poses = (
            x[part].to(device) for x in (batch.rgb, batch.log_depth, batch.valid, batch.poses)
        )
        memory = truth_memory(rgb, log_depth, valid, poses, batch.K.to(device), bounds, resolution=resolution)
        chunks.append(tuple(m.cpu() for m in memory))
    if len(chunks) == 1:
        return chunks[0]
    return tuple(torch.cat(parts) for parts in zip(*chunks, strict=True))  # type: ignore[return-value]


def training_data(scale: str) -> tuple[scenes.ClipBatch, Clips]:
    """The first ``train_clips`` training clips and their :class:`Clips` with the teacher-forced memory
    (built on :func:`~neurips26.train.choose_device`'s device; everything comes back on the CPU)."""
    return _training_data(PrepareConfig.for_scale(scale))


@cache
def _training_data(config: PrepareConfig) -> tuple[scenes.ClipBatch, Clips]:
    batch = scenes.load_split("train", config.data, verbose=False).head(config.train_clips)
    memory = _truth_memory(batch, config.memory_resolution, choose_device())
    return batch, Clips(batch.rgb, batch.log_depth, batch.valid, plucker(batch), memory)


def validation_data(scale: str) -> tuple[scenes.ClipBatch, Clips]:
    """Eight evaluation clips, their first twelve frames: what the recorded metrics are measured on (on
    the CPU)."""
    return _validation_data(PrepareConfig.for_scale(scale))


@cache
def _validation_data(config: PrepareConfig) -> tuple[scenes.ClipBatch, Clips]:
    full = scenes.load_split("evaluation", config.data, verbose=False)
    n = min(EVAL_CLIPS, len(full))
    frames = min(EVAL_FRAMES, full.frames)
    rgb, log_depth, valid = (x[:n, :frames] for x in (full.rgb, full.log_depth, full.valid))
    poses = full.poses[:n, :frames]
    memory = truth_memory(
        rgb, log_depth, valid, poses, full.K, full.bounds, resolution=config.memory_resolution
    )
    sub = scenes.ClipBatch(rgb, log_depth, valid, poses, full.K, full.bounds, full.kinds[:n], full.seeds[:n])
    return sub, Clips(rgb, log_depth, valid, plucker(sub), memory)


# --------------------------------------------------------------------------------------------
# sidecar, building, measuring


def expected_hash(name: str, scale: str, teacher_hash: str = "") -> str:
    """The configuration hash of ``name`` at ``scale`` (a student's includes its teacher's weights); the
    plan enters as its :func:`hash_form`."""
    config = PrepareConfig.for_scale(scale)
    spec = model_spec(name)
    payload: dict[str, Any] = {"model": spec, "prepare": hash_form(config), "format": FORMAT}
    if spec.base is None:
        payload["teacher"] = teacher_hash
    return config_hash(payload)


@dataclass(frozen=True)
class JAGMeta(Sidecar):
    """The sidecar of a checkpoint: name, config_hash, source, model (the JAGConfig), spec, metrics,
    curves, teacher (the teacher's weights hash, students only), weights_hash, version, torch,
    train_seconds, format."""

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "config_hash", "source")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ("model", "spec", "metrics", "curves")

    name: str
    config_hash: str
    source: str
    model: dict[str, Any] = field(default_factory=dict)
    spec: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    curves: dict[str, list[float]] = field(default_factory=dict)
    teacher: str = ""
    weights_hash: str = ""
    version: str = ""
    torch: str = ""
    train_seconds: float = 0.0
    format: int = FORMAT


def build_model(meta: JAGMeta, state: dict[str, Tensor]) -> JAGModel:
    """The model of ``meta`` with the float16 ``state`` loaded in float32 (eval mode)."""
    kwargs = dict(meta.model)
    kwargs["image_size"] = tuple(kwargs["image_size"])
    model = JAGModel(JAGConfig(**kwargs))
    load_half_state(meta.name, model, state)
    return model.eval()


@torch.no_grad()
def validation_metrics(name: str, model: JAGModel, scale: str) -> dict[str, float]:
    """Base models: ``val_loss`` of their mode at a fixed draw; students: ``val_psnr`` of a fixed-seed
    4-step rollout (their memory built from their own frames when they have one). Computed on the model's
    device (the clips are moved there; the noise is drawn on the CPU)."""
    spec = model_spec(name)
    config = PrepareConfig.for_scale(scale)
    device = next(model.parameters()).device
    sub, clips = validation_data(scale)
    sub, clips = sub.to(device), clips_on(clips, device)
    generator = torch.Generator().manual_seed(VALIDATION_SEED)
    if spec.base is not None:
        return {"val_loss": float(df_loss(model, clips, spec.base, generator))}
    memory = None
    if spec.memory:
        truth = (sub.rgb, sub.log_depth, sub.valid)
        memory = SelfMemory(
            sub.poses, sub.K, sub.bounds, truth, source="self", resolution=config.memory_resolution
        )
    out = rollout(
        model,
        (clips.rgb[:, 0], clips.log_depth[:, 0]),
        clips.plucker,
        generator,
        exit_step=len(config.self_forcing.levels),
        grad=False,
        memory_fn=memory,
    )
    return {"val_psnr": float(psnr(out.rgb[:, 1:], clips.rgb[:, 1:]).mean())}


# --------------------------------------------------------------------------------------------
# training


def _base(spec: ModelSpec, scale: str, progress: bool) -> tuple[JAGModel, dict[str, list[float]]]:
    """A base model trained by :func:`~neurips26.train.fit` on the device :func:`choose_device` picks
    (data-parallel under torchrun). One generator draws the batches and the loss's levels and noise, on
    the CPU: seeded ``seed`` in one process, ``rank_seed(seed, rank)`` on each rank of a torchrun group,
    so every rank keeps its share of a batch of its own and noises it with its own draws."""
    config = PrepareConfig.for_scale(scale)
    _, clips = training_data(scale)
    device = choose_device()
    model = JAGModel(config.model_config(spec), seed=config.seed).to(device)
    generator = torch.Generator().manual_seed(_rank_seed(config.seed))
    steps = config.teacher_steps if spec.base == "teacher" else config.base_steps

    def batches(step: int) -> Clips:
        return clips.take(torch.randint(clips.rgb.shape[0], (config.batch,), generator=generator))

    history = fit(
        model,
        lambda m, b: df_loss(m, b, spec.base, generator),
        batches,
        steps=steps,
        seed=config.seed,
        lr=config.lr,
        warmup=config.warmup,
        precision=_precision(config, device),
        progress=progress,
        desc=spec.name,
    )
    return model, {"loss": [float(v) for v in history.loss]}


def _student(
    spec: ModelSpec, scale: str, teacher: JAGModel, progress: bool
) -> tuple[JAGModel, dict[str, list[float]]]:
    """A student on the device :func:`choose_device` picks: the ODE initialisation by
    :func:`~neurips26.train.fit` (data-parallel under torchrun, the pairs and their levels drawn from this
    rank's generator, as in :func:`_base`), then :func:`~neurips26.jag.sgf.distill` in one process."""
    config = PrepareConfig.for_scale(scale)
    batch, clips = training_data(scale)
    device = choose_device()
    teacher = teacher.to(device)
    generator = torch.Generator().manual_seed(_rank_seed(config.seed))
    pairs = []
    with torch.no_grad():
        for start in range(0, config.ode_clips, config.batch):
            part = clips.take(torch.arange(start, min(start + config.batch, config.ode_clips)))
            if not spec.memory:  # the teacher's memoryless conditioning, the only one the student can read
                part = Clips(part.rgb, part.log_depth, part.valid, part.plucker)
            part = clips_on(part, device)
            trajectory = ode_pairs(teacher, part, generator, steps=config.ode_teacher_steps)
            pairs.append((trajectory, part.plucker, part.memory))
    student = JAGModel(config.model_config(spec), seed=config.seed).to(device)
    ode = fit(
        student,
        lambda m, b: ode_loss(m, b[0][0], b[0][1], b[1], generator, memory=b[2]),
        lambda step: pairs[step % len(pairs)],
        steps=config.ode_steps,
        seed=config.seed,
        lr=config.ode_lr,
        precision=_precision(config, device),
        progress=progress,
        desc=f"{spec.name} ODE init",
    )
    plucker = clips.plucker

    def batches(step: int):
        idx = torch.randint(clips.rgb.shape[0], (config.distill_batch,), generator=generator)
        rows = (batch.rgb[idx], batch.log_depth[idx], batch.valid[idx], batch.poses[idx], plucker[idx])
        return tuple(x.to(device) for x in rows)

    distill_config = DistillConfig(
        memory=spec.distill_memory,
        reward=spec.reward,
        steps=config.distill_steps,
        batch=config.distill_batch,
        self_forcing=config.self_forcing,
        resolution=config.memory_resolution,
    )
    bounds = (batch.bounds[0].to(device), batch.bounds[1].to(device))
    logs = distill(student, teacher, batches, batch.K.to(device), bounds, distill_config)
    return student, {"ode_loss": [float(v) for v in ode.loss], **logs}


def train_model(name: str, scale: str, *, progress: bool = True) -> tuple[dict[str, Tensor], JAGMeta]:
    """Train ``name`` at ``scale`` (a student against the teacher of :func:`pretrained`); its float16
    state and sidecar (metrics measured on the float16 weights)."""
    spec = model_spec(name)
    config = PrepareConfig.for_scale(scale)
    start = time.perf_counter()
    teacher_hash = ""
    if spec.base is not None:
        model, curves = _base(spec, scale, progress)
    else:
        teacher, teacher_meta = pretrained(TEACHER, scale, verbose=progress)
        teacher_hash = teacher_meta.weights_hash
        model, curves = _student(spec, scale, teacher, progress)
    seconds = time.perf_counter() - start
    state = half_state(model)
    model_dict = asdict(config.model_config(spec))
    stub = JAGMeta(name=name, config_hash="", source="", model=model_dict)
    metrics = validation_metrics(name, build_model(stub, state), scale)
    every = {k: max(1, len(v) // 200) for k, v in curves.items()}
    meta = JAGMeta(
        name=name,
        config_hash=expected_hash(name, scale, teacher_hash),
        source=source_fingerprint(SOURCE_FILES),
        model=model_dict,
        spec={**asdict(spec), "parameters": sum(v.numel() for v in state.values())},
        metrics=metrics,
        curves={k: v[:: every[k]] for k, v in curves.items()},
        teacher=teacher_hash,
        weights_hash=weights_hash(state),
        version=neurips26.__version__,
        torch=torch.__version__,
        train_seconds=round(seconds, 2),
    )
    return state, meta


def _teacher_hash(scale: str) -> str:
    """The weights hash of the teacher a student of ``scale`` is distilled from (loaded or trained)."""
    return pretrained(TEACHER, scale, verbose=False)[1].weights_hash


def _expected(name: str, scale: str) -> str:
    if model_spec(name).base is not None:
        return expected_hash(name, scale)
    return expected_hash(name, scale, _teacher_hash(scale))


def _trained(name: str, scale: str, verbose: bool) -> tuple[dict[str, Tensor], JAGMeta]:
    key = {
        "hash": _expected(name, scale),
        "source": source_fingerprint(SOURCE_FILES),
        "train": cache_key("source", None, "neurips26.train"),
    }
    return cached(
        f"jag-model-{name}-{scale}",
        key,
        lambda: train_model(name, scale, progress=verbose),
        package="neurips26.jag",
        verbose=verbose,
    )


REGISTRY = Registry(
    chapter="jag",
    package_dir=PACKAGE_DIR,
    names=MODEL_NAMES,
    meta_class=JAGMeta,
    expected_hash=_expected,
    build=lambda name, scale, meta, state: build_model(meta, state),
    measure=lambda name, scale, model: validation_metrics(name, model, scale),
    train=_trained,
    source_files=lambda name: SOURCE_FILES,
    atol=METRIC_ATOL,
)
"""The chapter's models in the :class:`~neurips26.checkpoint_files.Registry`."""

checkpoint_dir = REGISTRY.checkpoint_dir
load_checkpoint = REGISTRY.load
pretrained = REGISTRY.pretrained


def prepare(
    scale: str = "smoke",
    *,
    only: Sequence[str] | None = None,
    out: Path | str | None = None,
    progress: bool = True,
) -> list[JAGMeta]:
    """Train and write the models at ``scale`` (the teacher first) into ``out``; fresh ones are kept.

    Below and above the shipped scale the models are trained through the results cache (:func:`_trained`),
    where a student's :func:`pretrained` teacher is then found when ``out`` is not the scale's checkpoint
    directory (rather than trained a second time)."""

    def train(name: str) -> tuple[dict[str, Tensor], JAGMeta]:
        if scale == REGISTRY.shipped_scale:
            return train_model(name, scale, progress=progress)
        return _trained(name, scale, progress)

    return REGISTRY.write(
        REGISTRY.chosen(only),
        scale,
        checkpoint_dir(scale) if out is None else out,
        train,
        max_total=MAX_TOTAL_BYTES,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m neurips26.jag.prepare --scale smoke|default|paper [--only NAME]... [--out DIR]``."""
    return prepare_main(
        argv,
        prog="python -m neurips26.jag.prepare",
        description="Train and write the teacher, the baselines and the JAG students of chapter 07.",
        models=MODELS,
        prepare=prepare,
    )


if __name__ == "__main__":
    # Run the importable module's main rather than this ``__main__`` copy's: the sidecars cached on the way
    # (:func:`_trained`) then pickle as ``neurips26.jag.prepare.JAGMeta``, which a later process can load
    # (a student's teacher is looked up there).
    from neurips26.jag import prepare as _importable

    sys.exit(_importable.main())


__all__ = [
    "MODELS",
    "MODEL_NAMES",
    "REGISTRY",
    "JAGMeta",
    "ModelSpec",
    "PrepareConfig",
    "plucker",
    "pretrained",
    "prepare",
]
