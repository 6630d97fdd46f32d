"""The side-by-side runs behind claims J1–J7 of chapter 07: every model on the same 32 evaluation loops.

:func:`rollout_table` generates each evaluation loop (32 frames, the first frame's RGB and depth and the
commanded path given) with every row of :data:`ROWS`, for each noise seed of the scale, and scores it:

- fidelity: PSNR of every generated frame against the truth; per frame, PSNR and depth AbsRel on the pixels
  that frame 0 also sees (:func:`~neurips26.jag.metrics.covisible_mask`, the truth's valid pixels);
- drift (J3): the least-squares slope of those per-frame curves (mean over clips) over frames 1 … T − 1;
- revisit consistency (J2): PSNR between the generated frames ``k`` and ``k′`` of every revisit pair of the
  loop (same pose, ``k`` outside the window of ``k′``), and the truth's PSNR at ``k′`` beside it;
- geometric self-consistency (J4): the reprojection error of consecutive generated depth maps;
- network evaluations per generated frame, counted by a hook on the first block (J7), and wall clock.

Rows: the distilled students (4 steps and a cache write per frame), the 32-step causal baselines, JAG with
SGF weights and no window (the full-history baseline), and "repeat frame 0" as a fidelity reference (the
image a model that never moves would give). The same noise seed feeds every row, so the rows differ by
their networks only.

:func:`cost_run` is J1's measurement: one 200-frame rollout of JAG with its window and one of the same
weights with the full history, recording at every frame the keys each query attends to (read off the KV
cache), the bytes of the cache and of the voxel memory, and the seconds the frame took.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import cache

import numpy as np
import torch
from torch import Tensor

from neurips26.cache import cached
from neurips26.jag import metrics, paths, prepare, scenes
from neurips26.jag.cost_model import BYTES, frame_cost, keys_per_query
from neurips26.jag.diffusion_forcing import sample_causal
from neurips26.jag.model import JAGModel
from neurips26.jag.self_forcing import STUDENT_LEVELS, TEACHER_STEPS, rollout
from neurips26.jag.sgf import SelfMemory
from neurips26.nn import KVCache
from neurips26.progress import progress
from neurips26.scales import check_scale, pick
from neurips26.train import torch_threads
from neurips26.validation import check_choice


@dataclass(frozen=True)
class Row:
    """A row of the table: its ``key``, ``label``, the ``checkpoint`` it loads (None: the repeat-frame-0
    reference), the sampler (``"student"``: :func:`~neurips26.jag.self_forcing.rollout`; ``"many"``:
    :func:`~neurips26.jag.diffusion_forcing.sample_causal` with 32 steps) and ``full_history`` (no window)."""

    key: str
    label: str
    checkpoint: str | None
    sampler: str = "student"
    full_history: bool = False


ROWS: tuple[Row, ...] = (
    Row("jag-sgf", "JAG (SGF)", "jag-sgf"),
    Row("sf-rgb", "Self Forcing, RGB only", "sf-rgb"),
    Row("tf", "Teacher Forcing, 32 steps", "tf", "many"),
    Row("df", "Diffusion Forcing, 32 steps", "df", "many"),
    Row("jag-nosgf", "JAG without SGF (no memory)", "jag-nosgf"),
    Row("jag-tfmem", "JAG, teacher-forced memory", "jag-tfmem"),
    Row("jag-sgf-noreward", "JAG (SGF) without the reward", "jag-sgf-noreward"),
    Row("jag-sgf-full", "JAG (SGF), full history", "jag-sgf", full_history=True),
    Row("copy", "repeat frame 0 (reference)", None, "copy"),
)
ROW_KEYS: tuple[str, ...] = tuple(r.key for r in ROWS)


def row(key: str) -> Row:
    """The :class:`Row` of ``key`` (``ValueError`` naming ``key`` otherwise)."""
    return ROWS[ROW_KEYS.index(check_choice("key", key, ROW_KEYS))]


@dataclass(frozen=True)
class ExperimentConfig:
    """``seeds``: the noise seeds every row is generated with; ``window`` of the revisit pairs (the models'
    W); ``cost_frames`` and ``cost_clip`` (a scene seed) of J1's run; ``samples``: clips kept whole for the
    figures; ``latency_rounds``: interleaved rounds of the J1 wall clock."""

    seeds: tuple[int, ...] = (0, 1)
    window: int = 4
    cost_frames: int = 200
    cost_clip: int = 7_000_000
    samples: int = 4
    latency_rounds: int = 2

    @classmethod
    def for_scale(cls, scale: str) -> ExperimentConfig:
        return pick(scale, smoke=cls(seeds=(0,), cost_frames=12, samples=2, latency_rounds=1), default=cls())


# --------------------------------------------------------------------------------------------
# data and models


@dataclass(frozen=True, eq=False)
class EvalData:
    """The evaluation loops of a scale: ``clips`` (a :class:`~neurips26.jag.scenes.ClipBatch`), their
    ``plucker`` rays (N, T, P, 6), ``covisible`` (N, T, H, W) bool (co-visible with frame 0 and valid in the
    truth), per clip the revisit ``pairs`` (P, 2), and the ``window`` they were found with."""

    clips: scenes.ClipBatch
    plucker: Tensor
    covisible: Tensor
    pairs: tuple[np.ndarray, ...]
    window: int = 4


def eval_data(scale: str, window: int = 4) -> EvalData:
    """The 32 evaluation loops of ``scale`` (8 of 12 frames at smoke) with their masks and revisit pairs."""
    config = prepare.PrepareConfig.for_scale(scale)
    clips = scenes.load_split("evaluation", config.data, verbose=False)
    depth = clips.log_depth[:, :, 0].exp()
    valid = clips.valid[:, :, 0]
    covisible = torch.stack(
        [
            metrics.covisible_mask(depth[i, 0], clips.poses[i, 0], clips.poses[i], clips.K) & valid[i]
            for i in range(len(clips))
        ]
    )
    pairs = tuple(paths.revisit_pairs(clips.poses[i].numpy(), window) for i in range(len(clips)))
    return EvalData(clips, prepare.plucker(clips), covisible, pairs, window)


@cache
def _pretrained(name: str, scale: str) -> tuple[JAGModel, str]:
    model, meta = prepare.pretrained(name, scale, verbose=False)
    return model, meta.weights_hash


def with_window(model: JAGModel, window: int | None) -> JAGModel:
    """The same weights with another attention window (``None``: the whole history), in eval mode."""
    twin = JAGModel(replace(model.config, window=window))
    twin.load_state_dict(model.state_dict())
    return twin.eval()


def load_row_model(key: str, scale: str) -> tuple[JAGModel, str]:
    """The network of row ``key`` and its weights hash (full history: the SGF weights with no window);
    each checkpoint is loaded (and checked fresh) once per process and shared: do not train it."""
    spec = row(key)
    if spec.checkpoint is None:
        raise ValueError(f"key {key!r} is the repeat-frame-0 reference: it has no network")
    model, weights = _pretrained(spec.checkpoint, check_scale(scale))
    return (with_window(model, None) if spec.full_history else model), weights


@contextlib.contextmanager
def counted_calls(model: JAGModel) -> Iterator[list[int]]:
    """Count the network evaluations (calls of the first block) made inside the block: ``[count]``."""
    count = [0]
    handle = model.blocks[0].register_forward_hook(lambda *_: count.__setitem__(0, count[0] + 1))
    try:
        yield count
    finally:
        handle.remove()


def self_memory(clips: scenes.ClipBatch) -> SelfMemory:
    """The memory of a rollout: built from the model's own frames, frame 0 the given one, at the voxel
    resolution the models were trained with for frames of this size
    (:func:`~neurips26.jag.prepare.voxel_resolution`: 16 at 16 × 16)."""
    truth = (clips.rgb, clips.log_depth, clips.valid)
    resolution = prepare.voxel_resolution(clips.rgb.shape[-1])
    return SelfMemory(clips.poses, clips.K, clips.bounds, truth, resolution=resolution)


def generate(
    model: JAGModel,
    sampler: str,
    clips: scenes.ClipBatch,
    plucker: Tensor,
    seed: int,
    memory_fn=None,
    *,
    cache: KVCache | None = None,
) -> tuple[Tensor, Tensor | None]:
    """One clip per evaluation loop from its first frame: ``(rgb (N, T, 3, H, W), log_depth or None)``;
    ``cache``: the (empty) cache a student rolls in, for a caller that reads it."""
    generator = torch.Generator().manual_seed(seed)
    first = (clips.rgb[:, 0], clips.log_depth[:, 0])
    with torch.no_grad():
        if sampler == "many":
            return sample_causal(model, first, plucker, TEACHER_STEPS, generator, memory_fn=memory_fn)
        out = rollout(
            model,
            first,
            plucker,
            generator,
            exit_step=len(STUDENT_LEVELS),
            grad=False,
            memory_fn=memory_fn,
            cache=cache,
        )
    return out.rgb, out.log_depth


# --------------------------------------------------------------------------------------------
# scores


@dataclass(frozen=True)
class Scores:
    """One row at one seed, per clip (N,) or per clip and frame (N, T): ``psnr`` (N, T − 1) of the generated
    frames; ``cov_psnr``, ``cov_absrel`` (N, T − 1) on the co-visible pixels (AbsRel NaN without depth);
    ``revisit`` and ``revisit_truth`` (N,) mean over the clip's pairs (NaN without pairs); ``reprojection``
    (N,) mean over consecutive pairs (NaN without depth); ``nfe`` per generated frame; ``seconds`` of the
    whole rollout (all clips); ``samples``: the generated RGB and log depth of the first clips;
    ``specificity`` (N,): the revisit PSNR minus the mean PSNR between generated frames at different poses
    at least the window apart (how much of the revisit consistency is about the place: a model that draws
    the same image everywhere scores 0); ``detail`` (N,): the generated frames' mean spatial standard
    deviation over the truth's (1 keeps the truth's contrast; a blurred or flat output is below 1)."""

    psnr: np.ndarray
    cov_psnr: np.ndarray
    cov_absrel: np.ndarray
    revisit: np.ndarray
    revisit_truth: np.ndarray
    reprojection: np.ndarray
    nfe: float
    seconds: float
    samples: tuple[np.ndarray, np.ndarray | None] = field(repr=False, default=(np.zeros(0), None))
    specificity: np.ndarray = field(default_factory=lambda: np.zeros(0))
    detail: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def mean(self, metric: str) -> float:
        """The mean of ``metric`` over clips (and frames), non-finite values left out (NaN: no depth or no
        revisit pair; +inf: a frame identical to the truth, e.g. the reference on the loop's return to frame
        0's pose); NaN when none is finite."""
        values = np.asarray(getattr(self, metric), dtype=float)
        finite = values[np.isfinite(values)]
        return float(finite.mean()) if finite.size else math.nan

    def curve(self, metric: str) -> np.ndarray:
        """Per generated frame, the mean over clips of ``cov_psnr``, ``cov_absrel`` or ``psnr``."""
        values = np.asarray(getattr(self, metric), dtype=float)
        finite = np.isfinite(values)
        total = np.where(finite, values, 0.0).sum(axis=0)
        count = finite.sum(axis=0)
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)

    def slope(self, metric: str) -> float:
        """J3's drift rate: the slope per frame of :meth:`curve` (dB or AbsRel per frame)."""
        return metrics.slope(self.curve(metric))

    def late(self, metric: str = "psnr") -> float:
        """Mean of ``metric`` over the second half of the generated frames."""
        curve = self.curve(metric)
        return float(np.nanmean(curve[len(curve) // 2 :]))


def score(
    rgb: Tensor, log_depth: Tensor | None, data: EvalData, *, nfe: float, seconds: float, samples: int
) -> Scores:
    """The :class:`Scores` of a generated batch of loops against the truth of ``data``."""
    clips = data.clips
    truth_depth = clips.log_depth[:, :, 0].exp()
    gen = rgb[:, 1:]
    full = metrics.psnr(gen, clips.rgb[:, 1:])
    mask = data.covisible[:, 1:]
    cov_psnr = metrics.psnr(gen, clips.rgb[:, 1:], mask)
    n = len(clips)
    revisit = np.full(n, math.nan)
    revisit_truth = np.full(n, math.nan)
    cov_absrel = np.full(tuple(full.shape), math.nan)
    reprojection = np.full(n, math.nan)
    depth = None if log_depth is None else log_depth[:, :, 0].exp()
    if depth is not None:
        cov_absrel = metrics.abs_rel(depth[:, 1:], truth_depth[:, 1:], mask).numpy()
    specificity = np.full(n, math.nan)
    detail = (
        gen.std(dim=(-2, -1)).mean(dim=(1, 2)) / clips.rgb[:, 1:].std(dim=(-2, -1)).mean(dim=(1, 2))
    ).numpy()
    for i in range(n):
        pairs = data.pairs[i]
        if len(pairs):
            revisit[i] = float(metrics.revisit_psnr(rgb[i], [tuple(p) for p in pairs.tolist()]).mean())
            others = _other_pairs(clips.poses[i], data.window)
            if others and math.isfinite(revisit[i]):
                specificity[i] = revisit[i] - float(metrics.revisit_psnr(rgb[i], others).mean())
            later = torch.as_tensor(pairs[:, 1])
            revisit_truth[i] = float(metrics.psnr(rgb[i, later], clips.rgb[i, later]).mean())
        if depth is not None:
            reprojection[i] = float(np.nanmean(metrics.reprojection_error(depth[i], clips.poses[i], clips.K)))
    keep = min(samples, n)
    return Scores(
        psnr=full.numpy(),
        cov_psnr=cov_psnr.numpy(),
        cov_absrel=np.asarray(cov_absrel),
        revisit=revisit,
        revisit_truth=revisit_truth,
        reprojection=reprojection,
        nfe=nfe,
        seconds=seconds,
        samples=(rgb[:keep].numpy(), None if log_depth is None else log_depth[:keep].numpy()),
        specificity=specificity,
        detail=detail,
    )


def _other_pairs(poses: Tensor, window: int) -> list[tuple[int, int]]:
    """Pairs of generated frames ``(k, k′)``, ``k′ − k ≥ window``, whose poses differ: what a revisit pair is
    compared with in :attr:`Scores.specificity`."""
    frames = poses.shape[0]
    flat = poses.reshape(frames, 16)
    return [
        (k, k2)
        for k in range(1, frames)
        for k2 in range(k + window, frames)
        if not torch.allclose(flat[k], flat[k2], rtol=0.0, atol=1e-9)
    ]


def run_row(key: str, scale: str, seed: int, data: EvalData | None = None) -> Scores:
    """Generate and score the evaluation loops with row ``key`` at noise ``seed`` (uncached)."""
    config = ExperimentConfig.for_scale(scale)
    data = eval_data(scale, config.window) if data is None else data
    clips = data.clips
    spec = row(key)
    if spec.checkpoint is None:
        rgb = clips.rgb[:, :1].expand_as(clips.rgb).clone()
        log_depth = clips.log_depth[:, :1].expand_as(clips.log_depth).clone()
        return score(rgb, log_depth, data, nfe=0.0, seconds=0.0, samples=config.samples)
    model, _ = load_row_model(key, scale)
    memory = self_memory(clips) if model.config.memory else None
    with torch_threads(1), counted_calls(model) as calls:
        start = time.perf_counter()
        rgb, log_depth = generate(model, spec.sampler, clips, data.plucker, seed, memory)
        seconds = time.perf_counter() - start
    nfe = (calls[0] - 1) / (clips.frames - 1)  # one call writes the given frame 0
    return score(rgb, log_depth, data, nfe=nfe, seconds=seconds, samples=config.samples)


@dataclass(frozen=True)
class RolloutTable:
    """Every row at every seed: ``scores[key][seed]``; ``labels`` per key; ``scale``, ``seeds``."""

    scores: dict[str, dict[int, Scores]]
    labels: dict[str, str]
    scale: str
    seeds: tuple[int, ...]

    def __getitem__(self, key: str) -> dict[int, Scores]:
        return self.scores[check_choice("key", key, tuple(self.scores))]

    def mean(self, key: str, metric: str) -> float:
        """``metric`` of ``key`` averaged over seeds (each seed's mean over clips)."""
        values = [s.mean(metric) for s in self[key].values()]
        finite = [v for v in values if math.isfinite(v)]
        return float(np.mean(finite)) if finite else math.nan

    def seed_mean(self, key: str, fn) -> float:
        """``fn(scores)`` (a number per seed) averaged over seeds."""
        return float(np.mean([fn(s) for s in self[key].values()]))

    def table_rows(self, keys: tuple[str, ...] | None = None) -> list[list[str]]:
        """Rows for :func:`~neurips26.tables.markdown_table` with :data:`TABLE_HEADER`: the mean over seeds
        of every metric."""

        def fmt(value: float, spec: str) -> str:
            return "—" if not math.isfinite(value) else format(value, spec)

        out = []
        for key in keys or tuple(self.scores):
            out.append(
                [
                    self.labels[key],
                    fmt(self.mean(key, "psnr"), ".2f"),
                    fmt(self.mean(key, "revisit"), ".2f"),
                    fmt(self.mean(key, "specificity"), "+.2f"),
                    fmt(self.mean(key, "detail"), ".2f"),
                    fmt(self.mean(key, "cov_absrel"), ".3f"),
                    fmt(self.seed_mean(key, lambda s: s.slope("cov_psnr")), "+.3f"),
                    fmt(self.mean(key, "reprojection"), ".3f"),
                    fmt(self.seed_mean(key, lambda s: s.nfe), ".0f"),
                    fmt(self.seed_mean(key, lambda s: s.seconds), ".1f"),
                ]
            )
        return out


TABLE_HEADER = [
    "model",
    "PSNR (dB)",
    "revisit PSNR (dB)",
    "revisit minus other pairs (dB)",
    "detail (× truth)",
    "co-visible AbsRel",
    "co-visible PSNR slope (dB/frame)",
    "reprojection error",
    "NFE / frame",
    "seconds (all loops)",
]


def _cached_row(key: str, scale: str, seed: int, data: EvalData, verbose: bool) -> Scores:
    spec = row(key)
    weights = "" if spec.checkpoint is None else load_row_model(key, scale)[1]
    config = ExperimentConfig.for_scale(scale)
    identity = {"row": spec, "seed": seed, "weights": weights, "scale": scale, "config": config}
    return cached(
        f"jag-rollout-{key}-{scale}",
        identity,
        lambda: run_row(key, scale, seed, data),
        package="neurips26.jag",
        verbose=False,
    )


def rollout_table(
    scale: str = "default", *, keys: tuple[str, ...] = ROW_KEYS, verbose: bool = True
) -> RolloutTable:
    """Every row of ``keys`` at every seed of the scale on the evaluation loops (cached per row and seed)."""
    check_scale(scale)
    config = ExperimentConfig.for_scale(scale)
    data = eval_data(scale, config.window)
    jobs = [(k, s) for k in keys for s in config.seeds]
    scores: dict[str, dict[int, Scores]] = {k: {} for k in keys}
    for key, seed in progress(jobs, desc="rollouts", show=verbose):
        scores[key][seed] = _cached_row(key, scale, seed, data, verbose)
    return RolloutTable(scores, {k: row(k).label for k in keys}, scale, config.seeds)


# --------------------------------------------------------------------------------------------
# J1: constant per-frame state


@dataclass(frozen=True)
class CostRun:
    """J1, per generated frame ``1 … T − 1`` of one long rollout of each variant (``"window"``,
    ``"full"``): ``keys`` each query attended to (the cache's keys plus the frame's own), ``kv_bytes`` of
    the cache, ``memory_bytes`` of the voxel memory, ``seconds`` (median over rounds), and the cost model's
    ``flops`` for the same frame."""

    frames: int
    keys: dict[str, np.ndarray]
    kv_bytes: dict[str, np.ndarray]
    memory_bytes: dict[str, np.ndarray]
    seconds: dict[str, np.ndarray]
    flops: dict[str, np.ndarray]
    window: int

    def model_keys(self, variant: str) -> np.ndarray:
        """The cost model's keys per query for the same frames (its ``b·n·min(k, W)``; frame index ``k`` is
        the model's frame ``k + 1``)."""
        window = self.window if variant == "window" else None
        return np.array([keys_per_query(k + 1, window) for k in range(1, self.frames)])

    def latency(self, variant: str, frames: slice) -> float:
        """Median seconds per frame over the frames of ``frames`` (1-based frame numbers)."""
        values = self.seconds[variant][frames.start - 1 : frames.stop - 1]
        return float(np.median(values))


class FrameProbe:
    """A ``memory_fn`` that records, at the start of each frame, the time, the keys held by the rollout's
    KV cache (:attr:`cache`, to be passed to the rollout) and the memory's bytes, then renders ``memory``
    (or returns no memory)."""

    def __init__(self, model: JAGModel, memory: SelfMemory | None) -> None:
        self.model, self.memory = model, memory
        self.cache = model.make_cache()
        self.times: list[float] = []
        self.keys: list[int] = []
        self.kv: list[int] = []
        self.memory_bytes: list[int] = []

    def __call__(self, k: int, rgb: Tensor, log_depth: Tensor | None):
        self.times.append(time.perf_counter())
        held = self.cache.length
        self.keys.append(held + self.model.config.tokens_per_frame)
        self.kv.append(sum(2 * t.numel() * BYTES for t in self.cache.keys if t is not None))
        self.memory_bytes.append(0 if self.memory is None else self.memory.memory.nbytes)
        if self.memory is None:
            return (None, None, None)
        return self.memory(k, rgb, log_depth)


def timed_rollout(
    model: JAGModel, clips: scenes.ClipBatch, plucker: Tensor, seed: int, memory: SelfMemory | None = None
) -> tuple[Tensor, Tensor | None, np.ndarray, FrameProbe]:
    """A student's rollout on one thread through a :class:`FrameProbe`: ``(rgb, log_depth, seconds of each
    generated frame (T − 1,), the probe)`` (frame 0's cache write is not a generated frame)."""
    probe = FrameProbe(model, memory)
    with torch_threads(1):
        rgb, log_depth = generate(model, "student", clips, plucker, seed, probe, cache=probe.cache)
        end = time.perf_counter()
    return rgb, log_depth, np.diff(np.array([*probe.times, end]))[1:], probe


def cost_run(scale: str = "default", *, verbose: bool = True) -> CostRun:
    """J1's run (module docstring): a loop of ``cost_frames`` frames in a held-out room, batch 1, one thread;
    the two variants alternate over ``latency_rounds`` rounds and each frame's seconds is the median.
    Cached (key: the SGF weights and the configuration), so the wall clock is that of the first run."""
    check_scale(scale)
    config = ExperimentConfig.for_scale(scale)
    identity = {"weights": load_row_model("jag-sgf", scale)[1], "config": config, "scale": scale}
    return cached(
        f"jag-cost-run-{scale}", identity, lambda: _cost_run(scale, config, verbose), package="neurips26.jag"
    )


def _cost_run(scale: str, config: ExperimentConfig, verbose: bool) -> CostRun:
    size = prepare.PrepareConfig.for_scale(scale).data.size  # the frames the models were trained on
    clip = scenes.make_clip(config.cost_clip, config.cost_frames, paths.LOOP_KIND, size=size)
    clips = scenes.ClipBatch.stack([clip])
    plucker = prepare.plucker(clips)
    variants = {"window": "jag-sgf", "full": "jag-sgf-full"}
    models = {v: load_row_model(k, scale)[0] for v, k in variants.items()}
    record: dict[str, dict[str, list]] = {v: {"seconds": []} for v in variants}
    order = list(variants)
    for r in progress(range(config.latency_rounds), desc="J1 rounds", show=verbose):
        for variant in order[r % 2 :] + order[: r % 2]:
            *_, times, probe = timed_rollout(models[variant], clips, plucker, r, self_memory(clips))
            record[variant]["seconds"].append(times)
            record[variant].update(
                keys=np.array(probe.keys[1:]), kv=np.array(probe.kv[1:]), mem=np.array(probe.memory_bytes[1:])
            )
    frames = config.cost_frames
    window = models["window"].config.window
    flops = {
        v: np.array(
            [
                frame_cost(k + 1, window if v == "window" else None, len(STUDENT_LEVELS)).flops
                for k in range(1, frames)
            ]
        )
        for v in variants
    }
    return CostRun(
        frames=frames,
        keys={v: record[v]["keys"] for v in variants},
        kv_bytes={v: record[v]["kv"] for v in variants},
        memory_bytes={v: record[v]["mem"] for v in variants},
        seconds={v: np.median(np.stack(record[v]["seconds"]), axis=0) for v in variants},
        flops=flops,
        window=window,
    )


__all__ = [
    "ROWS",
    "ROW_KEYS",
    "TABLE_HEADER",
    "CostRun",
    "FrameProbe",
    "EvalData",
    "ExperimentConfig",
    "Row",
    "RolloutTable",
    "Scores",
    "cost_run",
    "counted_calls",
    "eval_data",
    "generate",
    "load_row_model",
    "rollout_table",
    "row",
    "run_row",
    "score",
    "self_memory",
    "timed_rollout",
    "with_window",
]
