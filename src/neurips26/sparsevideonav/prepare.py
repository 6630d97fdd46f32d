"""The chapter's models, trained in order and shipped as float16 checkpoints (chapter 14).

``python -m neurips26.sparsevideonav.prepare --scale default`` writes every row of :data:`MODELS` into
``src/neurips26/sparsevideonav/checkpoints/`` (package data); ``--scale smoke`` writes tiny versions into
the user cache. The chain follows the paper's stages:

1. ``codec`` — the PCA codec, fitted on the first demonstrations and rounded to float16 *before* any model
   sees a latent (the shipped codec is the one every model was trained with);
2. ``stage1`` — Stage 0 (dense text-to-video; not shipped) then Stage 1 (sparse image-to-video); its sidecar
   also keeps the loss curves of Stage 1 trained from scratch (the initialisation study);
3. ``stage2`` — + Former and history cross-attention (the 50-step teacher); 4. ``student`` — distilled to 4
   steps; 5. ``pose`` — the pose estimator; 6. ``head`` / ``head-real`` — the action head on imagined futures
   with re-labelled / real action chunks; 7. ``short-bc`` / ``long-bc`` — the baselines (their heads;
   they read the teacher's frozen Former);
8. ``arm-*`` — the Stage-1 ablation family at width 32 (sparse, dense 20 s, continuous 2 s and 10 s,
   intervals 1 and 5, 10 % and 35 % of the data, slot positions), each trained alike.

A checkpoint is fresh when its recorded metrics are re-measured within 5 % (another CPU moves low bits).

``--scale paper`` trains the same eighteen models into the user cache, on the device
:func:`~neurips26.train.choose_device` picks (``python -m torch.distributed.run --nproc_per_node=N -m
neurips26.sparsevideonav.prepare --scale paper`` trains data-parallel: every loss calls its module, each
rank draws its own flow noise, rank 0 builds the demonstrations while the others wait). The paper
fine-tunes Wan2.1-T2V-1.3B (a 30-layer DiT of width 1536 with Wan's VAE) on about 13,000 real trajectories
(~140 h of video), distils its 50 steps into 4 with PCM and trains on 32 H200s; none of that exists
offline. Our ``paper`` keeps the procedural maze and the PCA codec (a 32 × 16 view in 2 × 16 latents per
second, which bounds what a larger network can learn) and takes the paper's trajectory count: 13,000
demonstrations in 3,250 mazes (built in processes, one per core), the codec fitted on 200 mazes; a
generator of 8 blocks at width 256 with 8 heads (12.2 M parameters; 15.4 M with its history layers) and a
Former of width 256 (5.2 M); Stage-1 ablations at width 128 (3.1 M); an action head of width 256 with 2
context and 3 DiT layers (7.3 M) and a pose estimator of hidden width 512. Every recipe runs at batch 256:
20,000 updates for Stages 0 and 2, the pose estimator, the heads and the baselines; 30,000 for Stage 1
(and its from-scratch twin) and each ablation; 10,000 distillation updates on 8,192 teacher trajectories;
the imagined set holds 32,768 decisions and the pose estimator sees 262,144 pairs. About 480,000 small
updates in all, each building its batch in Python on the host: roughly 1.5–2.5 hours on one H100 (an
estimate; it has not been run). The teacher trajectories, the imagined set and the validation metrics are
computed in one process per rank (the same on every rank). ``--trial`` runs that plan for one update of 2
examples per model on three mazes (:func:`trial_caps`).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch

import neurips26
from neurips26 import distributed
from neurips26.cache import cached
from neurips26.checkpoint_files import (
    FORMAT,
    ModelRow,
    Registry,
    Sidecar,
    committed_form,
    config_hash,
    half_state,
    load_half_state,
    prepare_main,
    source_fingerprint,
    weights_hash,
)
from neurips26.process_pool import map_in_processes
from neurips26.scales import pick, trial_run
from neurips26.seeding import sub_seed
from neurips26.sparsevideonav.action_head import ActionHead, ActionHeadConfig, head_loss
from neurips26.sparsevideonav.codec import Codec, fit_codec
from neurips26.sparsevideonav.dataset import Episode, decision_index, episode, make_batch, sample_pairs
from neurips26.sparsevideonav.distill import DistillConfig, distill
from neurips26.sparsevideonav.expert import demonstrations
from neurips26.sparsevideonav.former import Former, FormerConfig
from neurips26.sparsevideonav.generator import GeneratorConfig, SparseVideoGenerator, flow_loss
from neurips26.sparsevideonav.head_training import BCPolicyNet, imagined_set, train_bc, train_head
from neurips26.sparsevideonav.pose_estimator import (
    PoseEstimator,
    PoseEstimatorConfig,
    pose_error,
    train_pose_estimator,
)
from neurips26.sparsevideonav.timeline import REFERENCE_CHUNKS, continuous_offsets, interval_offsets
from neurips26.sparsevideonav.train import (
    MAX_HISTORY,
    Recipe,
    Stage2,
    device_of,
    train_history,
    train_i2v,
    train_t2v,
)
from neurips26.sparsevideonav.world import NavWorld, Pose
from neurips26.train import choose_device, shipped_threads, torch_threads
from neurips26.train.fit import move_batch

PACKAGE_DIR = Path(__file__).resolve().parent / "checkpoints"
PKG = "neurips26.sparsevideonav"
DATA_FILES = tuple(
    (PKG, f) for f in ("world.py", "tasks.py", "instructions.py", "expert.py", "codec.py", "dataset.py")
)
MODEL_FILES = (
    *DATA_FILES,
    *((PKG, f) for f in ("timeline.py", "layers.py", "generator.py", "former.py", "sampler.py", "train.py")),
)
STAGE_FILES = (
    *MODEL_FILES,
    *((PKG, f) for f in ("distill.py", "action_head.py", "pose_estimator.py", "head_training.py")),
)
METRIC_RTOL = 0.05
CURVE_EVERY = 10
VAL_WORLDS = tuple(range(500, 510))
VAL_DECISIONS = 128


# ------------------------------------------------------------------------------------------ the table


@dataclass(frozen=True)
class Row:
    name: str
    role: str


ARMS: dict[str, dict[str, Any]] = {
    "arm-sparse": {},
    "arm-dense": {"offsets": continuous_offsets(20)},
    "arm-cont2": {"offsets": continuous_offsets(2)},
    "arm-cont10": {"offsets": continuous_offsets(10)},
    "arm-int1": {"offsets": interval_offsets(1)},
    "arm-int5": {"offsets": interval_offsets(5)},
    "arm-data10": {"data": 0.10},
    "arm-data35": {"data": 0.35},
    "arm-slot": {"positions": "slot"},
}
MODELS = (
    Row("codec", "two-stage PCA codec, float16"),
    Row("stage1", "Stage 0 + Stage 1 generator (sparse, no history)"),
    Row("stage2", "Stage 2 generator + Former: the 50-step teacher"),
    Row("student", "Stage 3: the 4-step distilled generator"),
    Row("pose", "pose estimator (re-labelling)"),
    Row("head", "Stage 4 action head, re-labelled chunks"),
    Row("head-real", "Stage 4 action head, real chunks (ablation)"),
    Row("short-bc", "short-horizon baseline (8 actions)"),
    Row("long-bc", "long-horizon baseline (80 actions)"),
    *(Row(name, f"Stage-1 ablation at width 32: {name[4:]}") for name in ARMS),
)
NAMES = tuple(r.name for r in MODELS)


@dataclass(frozen=True)
class Plan:
    """Everything the scale sets: data, sizes, recipes.

    The fields after ``arm`` came with the ``paper`` scale: ``heads`` (the generator's attention heads;
    None: 2 below width 32, else 4), ``pose_rows`` (the pose estimator's training pairs; None: every pair),
    ``val_worlds`` and ``val_decisions`` (the validation mazes and decisions the metrics use; smoke keeps one
    maze) and ``workers`` (processes that generate the demonstrations; 0: one per core; never hashed: the
    data do not depend on it). A plan's hash leaves each of them out while it holds its committed value
    (:func:`hashed_plan`), so the default and smoke checkpoints stay fresh.
    """

    train_worlds: int
    per_kind: int
    codec_worlds: int
    width: int
    depth: int
    arm_width: int
    former: FormerConfig
    head: ActionHeadConfig
    pose: PoseEstimatorConfig
    s0: Recipe
    s1: Recipe
    s2: Recipe
    s3: Recipe
    distill: DistillConfig
    pose_recipe: Recipe
    head_recipe: Recipe
    head_decisions: int
    bc: Recipe
    arm: Recipe
    heads: int | None = None
    pose_rows: int | None = None
    val_worlds: int = len(VAL_WORLDS)
    val_decisions: int = VAL_DECISIONS
    workers: int = 1


#: The value each field added with the ``paper`` scale held before it existed (left out of the hash).
COMMITTED = {"heads": None, "pose_rows": None, "val_worlds": len(VAL_WORLDS), "val_decisions": VAL_DECISIONS}

#: The ``paper`` scale's batch (every recipe): the survey's 256 decisions per update.
PAPER_BATCH = 256


def hashed_plan(p: Plan) -> dict[str, Any]:
    """The plan as :func:`expected_hash` hashes it: without ``workers``, without the added fields at their
    committed values (:data:`COMMITTED`) and without a recipe's ``warmup`` while it is None."""
    form = committed_form(p, COMMITTED)
    form.pop("workers")
    for value in form.values():
        if isinstance(value, dict) and value.get("__class__") == "Recipe" and value.get("warmup") is None:
            del value["warmup"]
    return form


def trial_caps(p: Plan) -> Plan:
    """The plan of a trial run (:func:`~neurips26.scales.trial_run`): the scale's networks, but the smoke
    data (3 mazes, one demonstration per kind), one update of 2 examples per recipe without warm-up, 2
    teacher trajectories of 4 Euler steps, 2 imagined decisions, 16 pose pairs, and 1 validation maze with 2
    decisions, in one process."""

    def once(r: Recipe) -> Recipe:
        return replace(r, steps=1, batch=2, warmup=0)

    return replace(
        p,
        train_worlds=3,
        per_kind=1,
        codec_worlds=3,
        s0=once(p.s0),
        s1=once(p.s1),
        s2=once(p.s2),
        s3=once(p.s3),
        distill=replace(p.distill, trajectories=2, teacher_steps=p.distill.phases),
        pose_recipe=once(p.pose_recipe),
        head_recipe=once(p.head_recipe),
        head_decisions=2,
        bc=once(p.bc),
        arm=once(p.arm),
        pose_rows=16,
        val_worlds=1,
        val_decisions=2,
        workers=1,
    )


def plan(scale: str) -> Plan:
    head = ActionHeadConfig(context_layers=1, dit_layers=2)
    default = Plan(
        train_worlds=300,
        per_kind=2,
        codec_worlds=50,
        width=48,
        depth=3,
        arm_width=32,
        former=FormerConfig(),
        head=head,
        pose=PoseEstimatorConfig(),
        s0=Recipe(steps=1200),
        s1=Recipe(steps=1500),
        s2=Recipe(steps=1200),
        s3=Recipe(steps=1000, lr=3e-4),
        distill=DistillConfig(trajectories=1024),
        pose_recipe=Recipe(steps=1500),
        head_recipe=Recipe(steps=1500),
        head_decisions=4096,
        bc=Recipe(steps=1500),
        arm=Recipe(steps=1500),
    )
    tiny = Recipe(steps=20, batch=8)
    smoke = replace(
        default,
        train_worlds=3,
        per_kind=1,
        codec_worlds=3,
        width=16,
        depth=1,
        arm_width=16,
        former=FormerConfig(width=16, heads=2, q_layers=1, v_layers=1),
        head=ActionHeadConfig(width=16, heads=2, context_layers=1, dit_layers=1),
        pose=PoseEstimatorConfig(hidden=16, layers=1),
        s0=tiny,
        s1=tiny,
        s2=tiny,
        s3=tiny,
        distill=DistillConfig(trajectories=16),
        pose_recipe=tiny,
        head_recipe=tiny,
        head_decisions=32,
        bc=tiny,
        arm=tiny,
    )
    wide = Recipe(steps=20_000, batch=PAPER_BATCH, lr=3e-4)
    paper = replace(
        default,
        train_worlds=3250,
        per_kind=2,
        codec_worlds=200,
        width=256,
        depth=8,
        heads=8,
        arm_width=128,
        former=FormerConfig(width=256, heads=8),
        head=ActionHeadConfig(width=256, heads=8, context_layers=2, dit_layers=3),
        pose=PoseEstimatorConfig(hidden=512),
        s0=wide,
        s1=replace(wide, steps=30_000),
        s2=wide,
        s3=replace(wide, steps=10_000, lr=1e-4),
        distill=DistillConfig(trajectories=8192),
        pose_recipe=Recipe(steps=20_000, batch=PAPER_BATCH),
        head_recipe=wide,
        head_decisions=32_768,
        bc=wide,
        arm=replace(wide, steps=30_000),
        pose_rows=262_144,
        workers=0,
    )
    chosen = pick(scale, smoke=smoke, default=default, paper=paper)
    return trial_caps(chosen) if trial_run() else chosen


def generator_config(scale: str, name: str = "stage1") -> GeneratorConfig:
    p = plan(scale)
    if name.startswith("arm-"):
        extra = {k: v for k, v in ARMS[name].items() if k != "data"}
        return GeneratorConfig(width=p.arm_width, heads=2 if p.arm_width < 32 else 4, depth=p.depth, **extra)
    heads = (2 if p.width < 32 else 4) if p.heads is None else p.heads
    return GeneratorConfig(width=p.width, heads=heads, depth=p.depth)


def bc_head_config(scale: str, horizon: int) -> ActionHeadConfig:
    p = plan(scale)
    return replace(
        p.head, horizon=horizon, context_slots=REFERENCE_CHUNKS, memory_tokens=p.former.memory_tokens
    )


def data_fraction(name: str) -> float:
    return float(ARMS.get(name, {}).get("data", 1.0))


# ------------------------------------------------------------------------------------------- data


def _codec_state(codec: Codec) -> dict[str, torch.Tensor]:
    return {k: torch.as_tensor(np.asarray(v)).half() for k, v in codec.state().items()}


def _codec_from(state: dict[str, torch.Tensor]) -> Codec:
    return Codec.from_state({k: v.double().numpy() for k, v in state.items()})


def train_worlds(scale: str, fraction: float = 1.0) -> list[int]:
    n = plan(scale).train_worlds
    return list(range(max(1, round(n * fraction))))


#: The demonstrations' frame cap: 60 s, or 10 s at smoke (CI runs every notebook cold there) and in a trial.
def demo_frames(scale: str) -> int:
    return 40 if trial_run() else pick(scale, smoke=40, default=240, paper=240)


def _demonstrations(
    worlds: list[int],
    per_kind: int,
    progress: bool,
    max_frames: int = 240,
    workers: int = 1,
    codec: Codec | None = None,
) -> list[Any]:
    """The expert demonstrations of ``worlds``, ``per_kind`` seeds (seeds outer), encoded as episodes when
    ``codec`` is given. ``workers`` > 1 (0: one per CPU core, shared among torchrun's ranks) spreads the
    mazes over spawned processes; every demonstration depends only on its (seed, maze, kind), so the list is
    the same."""
    if workers == 0:
        workers = max(1, (os.cpu_count() or 1) // distributed.world().size)
    if workers == 1:
        out = []
        for seed in range(per_kind):
            runs = demonstrations(worlds, seed=seed, progress=progress, max_frames=max_frames)
            out.extend(runs if codec is None else [episode(t, codec) for t in runs])
        return out
    size = max(1, -(-len(worlds) // (4 * workers)))
    chunks = [worlds[i : i + size] for i in range(0, len(worlds), size)]
    tasks = [(chunk, seed) for seed in range(per_kind) for chunk in chunks]
    job = partial(_demonstration_job, max_frames=max_frames, codec=codec)
    parts = map_in_processes(job, tasks, workers=workers, chunksize=1)
    return [item for part in parts for item in part]


def _demonstration_job(task: tuple[list[int], int], max_frames: int, codec: Codec | None) -> list[Any]:
    """One process's share of :func:`_demonstrations`: the mazes and the seed of ``task``."""
    worlds, seed = task
    runs = demonstrations(worlds, seed=seed, max_frames=max_frames)
    return runs if codec is None else [episode(t, codec) for t in runs]


def episodes(split: str, scale: str, codec: Codec | None = None, *, verbose: bool = True) -> list[Episode]:
    """The latent episodes of ``split`` ("train" or "val") encoded with the shipped codec."""
    codec = pretrained("codec", scale, verbose=verbose)[0] if codec is None else codec
    p = plan(scale)
    worlds = (
        train_worlds(scale)
        if split == "train"
        else list(VAL_WORLDS[: 1 if scale == "smoke" else p.val_worlds])
    )
    per_kind = p.per_kind if split == "train" else 1
    key = {
        "split": split,
        "worlds": (worlds[0], worlds[-1], len(worlds)),
        "per_kind": per_kind,
        "codec": weights_hash(_codec_state(codec)),
        "source": source_fingerprint(DATA_FILES),
    }
    frames = demo_frames(scale)
    if frames != 240:  # (the default's key predates the cap's option)
        key["max_frames"] = frames

    def compute() -> list[Episode]:
        return _demonstrations(worlds, per_kind, verbose, frames, p.workers, codec)

    # under torchrun rank 0 builds the episodes while the others wait, then they read its cache entry
    return distributed.main_first(
        lambda first: cached("svn-episodes", key, compute, verbose=verbose and first)
    )


def val_batch(scale: str, offsets, *, action_length: int = 8):
    """The fixed validation decisions (the plan's ``val_decisions``, seeded) as a batch for ``offsets``."""
    eps = episodes("val", scale, verbose=False)
    pairs = sample_pairs(decision_index(eps), plan(scale).val_decisions, seed=7)
    return eps, pairs, make_batch(eps, pairs, offsets, action_length=action_length, max_history=MAX_HISTORY)


# ------------------------------------------------------------------------------------------ sidecar


BASELINES = ("short-bc", "long-bc")


def expected_hash(name: str, scale: str) -> str:
    spec = {
        "name": name,
        "plan": hashed_plan(plan(scale)),
        "generator": generator_config(scale, name),
        "data": data_fraction(name),
        "val": (VAL_WORLDS, VAL_DECISIONS),
        "format": FORMAT,
    }
    if name in BASELINES:  # the baselines read the teacher's frozen Former and ship their head only
        spec["former"] = "stage2, frozen"
    return config_hash(spec)


@dataclass(frozen=True)
class SvnMeta(Sidecar):
    """The sidecar: name, config_hash, source, metrics, loss curves, weights_hash, version, torch,
    train_seconds, format."""

    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "config_hash", "source")
    JSON_FIELDS: ClassVar[tuple[str, ...]] = ("metrics", "curve")

    name: str
    config_hash: str
    source: str
    metrics: dict[str, float] = field(default_factory=dict)
    curve: dict[str, list[float]] = field(default_factory=dict)
    weights_hash: str = ""
    version: str = ""
    torch: str = ""
    train_seconds: float = 0.0
    format: int = FORMAT


def _frozen(model: torch.nn.Module) -> torch.nn.Module:
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def _empty(name: str, scale: str) -> Any:
    """An untrained model of ``name``'s architecture (the shape a checkpoint must fill)."""
    p = plan(scale)
    if name in ("stage1", *ARMS):
        return SparseVideoGenerator(generator_config(scale, name))
    if name == "stage2":
        return Stage2(SparseVideoGenerator(generator_config(scale).with_history("former")), Former(p.former))
    if name == "student":
        return SparseVideoGenerator(generator_config(scale).with_history("former"))
    if name == "pose":
        return PoseEstimator(p.pose)
    if name in ("head", "head-real"):
        return ActionHead(p.head)
    if name in BASELINES:  # the head only: the Former is the teacher's
        return ActionHead(bc_head_config(scale, 8 if name == "short-bc" else 80))
    raise ValueError(f"name must be one of {', '.join(NAMES)}; got {name!r}")


def build(name: str, scale: str, meta: SvnMeta, state: dict[str, torch.Tensor]) -> Any:
    if name == "codec":
        return _codec_from(state)
    model = _frozen(load_half_state(name, _empty(name, scale), state))
    if name in BASELINES:
        return _frozen(BCPolicyNet(pretrained("stage2", scale, verbose=False)[0].former, model))
    return model


# --------------------------------------------------------------------------------------- measuring


def _codec_frames() -> np.ndarray:
    """16 held-out frames: the cell centres of two rows of maze 500, facing +Z, then +X (4-frame chunks)."""
    world = NavWorld(VAL_WORLDS[0])
    frames = [
        world.observe(Pose(*world.maze.cell_center(r, c), yaw)).rgb
        for yaw in (0.0, 90.0)
        for r in (0, 1)
        for c in range(4)
    ]
    return np.stack(frames)


def _memory(former: Former, b, device: torch.device) -> torch.Tensor:
    """``h_T`` of batch ``b``, computed where ``former`` lives and handed over on ``device``."""
    h = move_batch(b, device_of(former))
    return former(h.history, h.history_mask, h.words).to(device)


def _flow_val(model: SparseVideoGenerator, scale: str, former: Former | None = None) -> float:
    _, _, b = val_batch(scale, model.config.offsets)
    b = move_batch(b, device_of(model))
    g = torch.Generator().manual_seed(11)
    with torch.no_grad():
        memory = _memory(former, b, b.clip.device) if former is not None else None
        return float(flow_loss(model, b.clip, b.words, generator=g, memory=memory))


def _head_val(model: ActionHead, scale: str, labels: str) -> float:
    data = move_batch(_val_imagined(scale), device_of(model))
    g = torch.Generator().manual_seed(12)
    targets = data.relabelled if labels == "relabelled" else data.real
    with torch.no_grad():
        return float(head_loss(model, targets, data.stop, data.contexts, data.words, generator=g))


def _val_imagined(scale: str):
    stage2 = pretrained("stage2", scale, verbose=False)[0]
    student = pretrained("student", scale, verbose=False)[0]
    estimator = pretrained("pose", scale, verbose=False)[0]
    codec = pretrained("codec", scale, verbose=False)[0]
    eps, pairs, _ = val_batch(scale, student.config.offsets)
    return imagined_set(stage2.former, student, estimator, codec, eps, pairs, seed=13)


def measure(name: str, scale: str, model: Any) -> dict[str, float]:
    """The metrics recorded in a sidecar, re-measured on the fixed validation decisions (on the model's
    device)."""
    with torch_threads(shipped_threads(scale)):
        return _measure(name, scale, model)


def _measure(name: str, scale: str, model: Any) -> dict[str, float]:
    if name == "codec":
        frames = _codec_frames()
        return {"reconstruction_mse": float(np.mean((model.reconstruct(frames) - frames) ** 2))}
    if name in ("stage1", *ARMS):
        return {"val_flow": _flow_val(model, scale)}
    if name == "stage2":
        return {"val_flow": _flow_val(model.generator, scale, model.former)}
    if name == "student":
        stage2 = pretrained("stage2", scale, verbose=False)[0]
        return {"val_flow": _flow_val(model, scale, stage2.former)}
    if name == "pose":
        codec = pretrained("codec", scale, verbose=False)[0]
        err = pose_error(model, episodes("val", scale, codec, verbose=False)[:4], codec)
        return {f"mae_{k}": float(v) for k, v in err.items()}
    if name in ("head", "head-real"):
        return {"val_loss": _head_val(model, scale, "relabelled" if name == "head" else "real")}
    if name in BASELINES:
        _, _, b = val_batch(scale, (0,), action_length=model.head.config.horizon)
        b = move_batch(b, device_of(model.head))
        g = torch.Generator().manual_seed(14)
        with torch.no_grad():
            memory = _memory(model.former, b, b.clip.device)
            loss = head_loss(
                model.head, b.actions, b.stop, b.clip[:, :2], b.words, generator=g, memory=memory
            )
        return {"val_loss": float(loss)}
    raise ValueError(f"name must be one of {', '.join(NAMES)}; got {name!r}")


# ---------------------------------------------------------------------------------------- training


def _curve(losses: list[float]) -> list[float]:
    return [round(float(np.mean(losses[i : i + CURVE_EVERY])), 5) for i in range(0, len(losses), CURVE_EVERY)]


def _train_model(name: str, scale: str, verbose: bool) -> tuple[Any, dict[str, list[float]]]:
    """The trained model of ``name`` (float32) and its loss curves."""
    with torch_threads(shipped_threads(scale)):
        return _trained(name, scale, verbose)


def _on_device(model: Any) -> Any:
    """A parent model (loaded on the CPU) moved to the training device."""
    return model.to(choose_device())


def _trained(name: str, scale: str, verbose: bool) -> tuple[Any, dict[str, list[float]]]:
    p = plan(scale)
    if name == "codec":
        worlds = train_worlds(scale)[: p.codec_worlds]
        frames = [t.frames for t in _demonstrations(worlds, 1, verbose, demo_frames(scale), p.workers)]
        codec = _codec_from(_codec_state(fit_codec(frames, seed=0)))  # float16-rounded before any use
        return codec, {}
    train = episodes("train", scale, verbose=verbose)
    if name == "stage1":
        dense = replace(generator_config(scale), offsets=continuous_offsets(20))
        s0, c0 = train_t2v(dense, train, p.s0, progress=verbose)
        s1, c1 = train_i2v(generator_config(scale), train, p.s1, init=s0, progress=verbose)
        _, scratch = train_i2v(generator_config(scale), train, p.s1, progress=verbose)
        return s1, {"stage0": _curve(c0), "loss": _curve(c1), "scratch": _curve(scratch)}
    if name in ARMS:
        worlds = set(train_worlds(scale, data_fraction(name)))  # the first fraction of the mazes
        subset = [e for e in train if e.world in worlds]
        model, c = train_i2v(generator_config(scale, name), subset, p.arm, progress=verbose)
        return model, {"loss": _curve(c)}
    if name == "stage2":
        stage1 = pretrained("stage1", scale, verbose=verbose)[0]
        model, c = train_history(stage1, p.former, train, p.s2, progress=verbose)
        return model, {"loss": _curve(c)}
    if name == "student":
        teacher = _on_device(pretrained("stage2", scale, verbose=verbose)[0])
        pairs = sample_pairs(decision_index(train), p.distill.trajectories, seed=sub_seed(p.s3.seed, 15))
        model, c = distill(teacher, train, pairs, p.distill, p.s3, progress=verbose)
        return model, {"loss": _curve(c)}
    if name == "pose":
        codec = pretrained("codec", scale, verbose=verbose)[0]
        model, c = train_pose_estimator(
            train,
            codec,
            steps=p.pose_recipe.steps,
            batch=p.pose_recipe.batch,
            seed=0,
            rows=p.pose_rows,
            config=p.pose,
            progress=verbose,
        )
        return model, {"loss": _curve(c)}
    if name in ("head", "head-real"):
        stage2 = _on_device(pretrained("stage2", scale, verbose=verbose)[0])
        student = _on_device(pretrained("student", scale, verbose=verbose)[0])
        estimator = _on_device(pretrained("pose", scale, verbose=verbose)[0])
        codec = pretrained("codec", scale, verbose=verbose)[0]
        pairs = sample_pairs(decision_index(train), p.head_decisions, seed=16)
        data = imagined_set(stage2.former, student, estimator, codec, train, pairs, seed=17)
        labels = "relabelled" if name == "head" else "real"
        model, c = train_head(p.head, data, p.head_recipe, labels=labels, progress=verbose)
        return model, {"loss": _curve(c)}
    if name in BASELINES:
        former = pretrained("stage2", scale, verbose=verbose)[0].former
        horizon = 8 if name == "short-bc" else 80
        model, c = train_bc(former, bc_head_config(scale, horizon), train, p.bc, progress=verbose)
        return model, {"loss": _curve(c)}
    raise ValueError(f"name must be one of {', '.join(NAMES)}; got {name!r}")


def _train(name: str, scale: str, verbose: bool = True) -> tuple[dict[str, torch.Tensor], SvnMeta]:
    def compute() -> tuple[dict[str, torch.Tensor], SvnMeta]:
        start = time.perf_counter()
        model, curves = _train_model(name, scale, verbose)
        if name == "codec":
            state = _codec_state(model)
        else:
            state = half_state(model.head if name in BASELINES else model)
        meta = SvnMeta(
            name=name,
            config_hash=expected_hash(name, scale),
            source=source_fingerprint(STAGE_FILES),
            curve=curves,
            weights_hash=weights_hash(state),
            version=neurips26.__version__,
            torch=torch.__version__,
            train_seconds=round(time.perf_counter() - start, 1),
        )
        return state, replace(meta, metrics=measure(name, scale, build(name, scale, meta, state)))

    return cached("svn-model", {"name": name, "scale": scale, "hash": expected_hash(name, scale)}, compute)


REGISTRY = Registry(
    chapter="sparsevideonav",
    package_dir=PACKAGE_DIR,
    names=NAMES,
    meta_class=SvnMeta,
    expected_hash=expected_hash,
    build=build,
    measure=measure,
    train=_train,
    source_files=lambda name: STAGE_FILES,
    rtol=METRIC_RTOL,
)


_KEPT: dict[tuple[str, str, str], tuple[Any, SvnMeta]] = {}


def pretrained(name: str, scale: str = "default", *, verbose: bool = True) -> tuple[Any, SvnMeta]:
    """Model ``name``: the fresh checkpoint, else trained exactly as ``prepare`` would.

    At ``paper`` a model is kept in memory once loaded (by its configuration hash): the chain asks for its
    parents dozens of times, and building and measuring a paper-sized model takes seconds. The models are
    frozen; a caller that moves one to the training device moves it for the others too."""
    if scale != "paper":
        return REGISTRY.pretrained(name, scale, verbose=verbose)
    key = (name, scale, expected_hash(name, scale))
    if key not in _KEPT:
        _KEPT[key] = REGISTRY.pretrained(name, scale, verbose=verbose)
    return _KEPT[key]


def prepare(
    scale: str = "default", *, only: list[str] | None = None, out: str | None = None
) -> list[SvnMeta]:
    """Train and write the checkpoints at ``scale`` into ``out``."""
    folder = Path(out) if out else REGISTRY.checkpoint_dir(scale)
    return REGISTRY.write(REGISTRY.chosen(only), scale, folder, lambda n: _train(n, scale))


def main(argv: list[str] | None = None) -> int:
    return prepare_main(
        argv,
        prog="python -m neurips26.sparsevideonav.prepare",
        description="Train the chapter 14 models and write their float16 checkpoints.",
        models=tuple(ModelRow(r.name, r.role) for r in MODELS),
        prepare=prepare,
    )


if __name__ == "__main__":
    # Run the importable module's main, not this ``__main__`` copy's: what it caches on the way then
    # pickles under ``neurips26.sparsevideonav.prepare``, which a later process can read back.
    from neurips26.sparsevideonav import prepare as _importable

    sys.exit(_importable.main())
