"""Every measurement behind chapter 14's claims, side by side on the same held-out mazes.

- :func:`cost_table` — the declared multiply-adds of one decision's video generation for the pipelines
  the paper compares (dense or sparse future, 50 or 4 steps, raw history or the Former) at 4, 16 and 64
  history chunks; :func:`wall_clock` times a few of them in interleaved rounds (one thread, medians).
- :func:`generation_quality` — latent MSE to the real future per offset, and the same-noise distance to
  the 50-step teacher, on decisions of held-out mazes (our stand-in for FVD: the paper scores generated
  video; we score generated latents against the real ones).
- :func:`far_error` — the error at +11 … +20 s of a generator whose chunks need not land there: each target
  is read off the nearest generated chunk at or before it (the interval ablation).
- :func:`steps_to_target` — how many updates a loss curve needs to reach a loss (the initialisation study).
- :func:`closed_loop` — success counts of every agent on the same tasks (BVN and IFN, day and night).
- :func:`run_claims` — all of it, cached by the checkpoints' weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from neurips26.cache import cached
from neurips26.scales import pick
from neurips26.seeding import sub_seed
from neurips26.sparsevideonav.codec import Codec
from neurips26.sparsevideonav.cost_model import decision_cost
from neurips26.sparsevideonav.dataset import LEAD, Episode, decision_index, episode, make_batch, sample_pairs
from neurips26.sparsevideonav.expert import demonstrations
from neurips26.sparsevideonav.former import Former, FormerConfig
from neurips26.sparsevideonav.generator import GeneratorConfig, SparseVideoGenerator
from neurips26.sparsevideonav.policy import (
    MAX_FRAMES,
    BCPolicy,
    Outcome,
    Policy,
    RandomPolicy,
    SparseVideoNavPolicy,
    run_episodes,
)
from neurips26.sparsevideonav.sampler import sample
from neurips26.sparsevideonav.tasks import Task, make_task
from neurips26.sparsevideonav.timeline import REFERENCE_CHUNKS, SPARSE_OFFSETS, continuous_offsets
from neurips26.sparsevideonav.train import MAX_HISTORY
from neurips26.sparsevideonav.verdicts import WORDS
from neurips26.sparsevideonav.world import NavWorld
from neurips26.stats import wilson
from neurips26.timing import Timing, time_interleaved
from neurips26.validation import check_int

TEST_WORLD = 1000
HISTORIES = (4, 16, 64)
FAR_SECONDS = (11, 14, 17, 20)
#: Euler steps of the ablation family's samples (the teacher's own comparisons use 50 and 4).
ARM_STEPS = 16
PIPELINES: dict[str, tuple[str, str, int]] = {
    # name: (future, history, steps)
    "dense · raw · 50": ("dense", "raw", 50),
    "dense · Former · 50": ("dense", "former", 50),
    "sparse · raw · 50": ("sparse", "raw", 50),
    "sparse · Former · 50": ("sparse", "former", 50),
    "sparse · raw · 4": ("sparse", "raw", 4),
    "sparse · Former · 4": ("sparse", "former", 4),
}


# ------------------------------------------------------------------------------------------- cost


def pipeline_config(future: str, history: str, base: GeneratorConfig | None = None) -> GeneratorConfig:
    """The generator of a pipeline: ``future`` "sparse" or "dense" (20 chunks), ``history`` mode."""
    base = GeneratorConfig() if base is None else base
    offsets = SPARSE_OFFSETS if future == "sparse" else continuous_offsets(20)
    return GeneratorConfig(**{**base.__dict__, "offsets": offsets, "history": history})


def cost_table(
    base: GeneratorConfig | None = None, former: FormerConfig | None = None, *, words: int = WORDS
) -> dict[str, dict[int, int]]:
    """Declared multiply-adds of one decision, by pipeline and history length (:data:`HISTORIES`)."""
    former = FormerConfig() if former is None else former
    out: dict[str, dict[int, int]] = {}
    for name, (future, history, steps) in PIPELINES.items():
        config = pipeline_config(future, history, base)
        out[name] = {
            h: decision_cost(
                config,
                steps=steps,
                words=words,
                history_chunks=h,
                former=former if history == "former" else None,
            ).total
            for h in HISTORIES
        }
    return out


def wall_clock(
    names: Sequence[str], *, history: int, rounds: int, seed: int = 0, base: GeneratorConfig | None = None
) -> Timing:
    """One decision's video generation of each pipeline in ``names``, timed in interleaved rounds
    (random weights, batch 1, one thread): wall clock beside the declared cost."""
    torch.manual_seed(seed)
    callables = {}
    g = torch.Generator().manual_seed(seed)
    words = torch.zeros(1, WORDS, dtype=torch.int64)
    words[:, :] = torch.arange(1, WORDS + 1)
    reference = torch.randn(1, REFERENCE_CHUNKS, 2, 16, generator=g)
    past = torch.randn(1, history, 2, 16, generator=g)
    mask = torch.ones(1, history, dtype=torch.bool)
    for name in names:
        future, mode, steps = PIPELINES[name]
        model = SparseVideoGenerator(pipeline_config(future, mode, base)).eval()
        former = Former(FormerConfig(width=model.config.width)).eval() if mode == "former" else None

        def decide(model=model, former=former, mode=mode, steps=steps) -> torch.Tensor:
            with torch.no_grad():
                if mode == "former":
                    memory = former(past, mask, words)
                    fn = lambda z, t: model(z, t, words, memory=memory)  # noqa: E731
                else:
                    fn = lambda z, t: model(z, t, words, history=past, history_mask=mask)  # noqa: E731
                return sample(
                    fn, reference, len(model.config.offsets), steps=steps, generator=torch.Generator()
                )

        callables[name] = decide
    return time_interleaved(callables, rounds=rounds, warmup=1, threads=1, reference=names[-1])


# ---------------------------------------------------------------------------------------- quality


def test_episodes(codec: Codec, worlds: int, *, seed: int = 0, max_frames: int = MAX_FRAMES) -> list[Episode]:
    """Demonstrations on held-out mazes ``TEST_WORLD …`` (both kinds, at most ``max_frames``), encoded."""
    mazes = list(range(TEST_WORLD, TEST_WORLD + worlds))
    return [episode(t, codec) for t in demonstrations(mazes, seed=seed, max_frames=max_frames)]


@dataclass(frozen=True)
class Quality:
    """Per-offset latent MSE to the real future (len(offsets),) and its mean; the samples (N, S, 2, 16)."""

    offsets: tuple[int, ...]
    per_offset: np.ndarray
    samples: torch.Tensor
    truth: torch.Tensor

    @property
    def mse(self) -> float:
        return float(self.per_offset.mean())


def generation_quality(
    generator: SparseVideoGenerator,
    episodes: Sequence[Episode],
    pairs: np.ndarray,
    *,
    steps: int,
    seed: int,
    former: Former | None = None,
    method: str = "euler",
) -> Quality:
    """Sample the future of every (episode, decision) row with ``steps`` steps (seeded noise) and score it."""
    offsets = generator.config.offsets
    b = make_batch(episodes, pairs, offsets, max_history=MAX_HISTORY)
    reference = b.clip[:, :REFERENCE_CHUNKS]
    with torch.no_grad():
        if generator.config.history == "former":
            memory = former(b.history, b.history_mask, b.words)
            fn = lambda z, t: generator(z, t, b.words, memory=memory)  # noqa: E731
        else:
            fn = lambda z, t: generator(z, t, b.words)  # noqa: E731
        out = sample(
            fn,
            reference,
            len(offsets),
            steps=steps,
            method=method,
            generator=torch.Generator().manual_seed(seed),
        )
    err = (out[:, REFERENCE_CHUNKS:] - b.clip[:, REFERENCE_CHUNKS:]).pow(2).mean(dim=(0, 2, 3)).numpy()
    return Quality(tuple(offsets), err, out, b.clip)


def distance(a: Quality, b: Quality) -> float:
    """Mean squared distance between two sets of samples of the same decisions (same noise)."""
    return float((a.samples[:, REFERENCE_CHUNKS:] - b.samples[:, REFERENCE_CHUNKS:]).pow(2).mean())


def far_error(quality: Quality, episodes: Sequence[Episode], pairs: np.ndarray) -> dict[int, float]:
    """MSE at each of :data:`FAR_SECONDS` (+s s is offset s − 1), read off the nearest generated chunk at or
    before it, against the real chunk there."""
    offsets = np.array(quality.offsets)
    out = {}
    for seconds in FAR_SECONDS:
        target = seconds - 1
        k = int(np.flatnonzero(offsets <= target).max())
        truth = np.stack([episodes[int(i)].latents[int(d) + target] for i, d in pairs])
        pred = quality.samples[:, REFERENCE_CHUNKS + k].numpy()
        out[seconds] = float(((pred - truth) ** 2).mean())
    return out


def steps_to_target(curve: Sequence[float], target: float, every: int, window: int = 5) -> float:
    """Updates until the running mean (``window`` points) of ``curve`` (one point per ``every`` updates)
    first reaches ``target``; ``inf`` when it never does."""
    c = np.asarray(curve, dtype=float)
    if len(c) < window:
        return float("inf")
    smooth = np.convolve(c, np.ones(window) / window, mode="valid")
    hit = np.flatnonzero(smooth <= target)
    return float((hit[0] + window) * every) if hit.size else float("inf")


# ----------------------------------------------------------------------------------- closed loop


def test_tasks(kind: str, episodes: int, *, seed: int = 0) -> list[Task]:
    """One task of ``kind`` on each of ``episodes`` held-out mazes (``TEST_WORLD …``)."""
    n = check_int("episodes", episodes, minimum=1)
    return [make_task(NavWorld(TEST_WORLD + i), kind, sub_seed(seed, 151, i)) for i in range(n)]


@dataclass(frozen=True)
class Rate:
    """Successes out of trials, with the 95 % Wilson interval."""

    successes: int
    trials: int

    @property
    def rate(self) -> float:
        return self.successes / self.trials

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.successes, self.trials)


def closed_loop(
    policies: dict[str, Policy],
    codec: Codec,
    conditions: dict[str, tuple[str, bool]],
    episodes: int,
    *,
    seed: int = 0,
    max_frames: int = MAX_FRAMES,
) -> dict[str, dict[str, list[Outcome]]]:
    """Outcomes of every policy on every condition (name → (kind, night)), the same tasks for all."""
    out: dict[str, dict[str, list[Outcome]]] = {}
    for cond, (kind, night) in conditions.items():
        tasks = test_tasks(kind, episodes, seed=seed)
        out[cond] = {
            name: run_episodes(p, tasks, codec, night=night, seed=seed, max_frames=max_frames)
            for name, p in policies.items()
        }
    return out


def rate(outcomes: Sequence[Outcome]) -> Rate:
    return Rate(sum(o.success for o in outcomes), len(outcomes))


def expert_outcomes(kind: str, episodes: int, *, seed: int = 0, max_frames: int = MAX_FRAMES) -> list[bool]:
    """Whether the expert (IFN: the route; BVN: the blind explorer) succeeds on the test tasks, within the
    agents' episode cap (they stand for LEAD frames first)."""
    from neurips26.sparsevideonav.expert import bvn_explorer, ifn_expert

    out = []
    frames = max_frames - LEAD
    for i, task in enumerate(test_tasks(kind, episodes, seed=seed)):
        world = NavWorld(task.seed)
        if kind == "ifn":
            traj = ifn_expert(world, task, max_frames=frames)
        else:
            traj = bvn_explorer(world, task, seed=sub_seed(seed, 152, i), max_frames=frames)
        out.append(bool(traj.success))
    return out


# ---------------------------------------------------------------------------------------- claims


@dataclass(frozen=True)
class ClaimsConfig:
    """Episodes per condition, held-out mazes and decisions for generation quality, timing rounds, the
    episode cap in frames."""

    episodes: int
    quality_worlds: int
    quality_decisions: int
    rounds: int
    max_frames: int = MAX_FRAMES
    seed: int = 0

    @classmethod
    def for_scale(cls, scale: str) -> ClaimsConfig:
        return pick(
            scale,
            smoke=cls(episodes=2, quality_worlds=1, quality_decisions=8, rounds=1, max_frames=24),
            default=cls(episodes=12, quality_worlds=12, quality_decisions=256, rounds=7),
        )


CONDITIONS = {
    "BVN day": ("bvn", False),
    "IFN day": ("ifn", False),
    "BVN night": ("bvn", True),
    "IFN night": ("ifn", True),
}


@dataclass(frozen=True)
class ClaimsData:
    """Everything the claims are decided from (see :func:`run_claims`)."""

    cost: dict[str, dict[int, int]]
    quality: dict[str, np.ndarray]
    fidelity: dict[str, float]
    far: dict[str, dict[int, float]]
    init: dict[str, float]
    success: dict[str, dict[str, tuple[int, int]]]
    expert: dict[str, tuple[int, int]]
    outcomes: dict[str, dict[str, list[Outcome]]]


def run_claims(scale: str = "default") -> ClaimsData:
    """Every measurement of the claims (cached by the checkpoints' weights)."""
    from neurips26.sparsevideonav.prepare import ARMS, CURVE_EVERY, NAMES, plan, pretrained

    config = ClaimsConfig.for_scale(scale)
    hashes = {n: pretrained(n, scale, verbose=False)[1].weights_hash for n in NAMES}

    def compute() -> ClaimsData:
        torch.set_num_threads(1)
        models = {n: pretrained(n, scale, verbose=False)[0] for n in NAMES}
        codec: Codec = models["codec"]
        stage2, student = models["stage2"], models["student"]
        p = plan(scale)
        cost = cost_table(student.config, p.former)
        eps = test_episodes(codec, config.quality_worlds, seed=config.seed, max_frames=config.max_frames)
        pairs = sample_pairs(decision_index(eps), config.quality_decisions, seed=sub_seed(config.seed, 153))
        q = lambda g, steps, former=None: generation_quality(  # noqa: E731
            g, eps, pairs, steps=steps, seed=sub_seed(config.seed, 154), former=former
        )
        teacher50, teacher4 = q(stage2.generator, 50, stage2.former), q(stage2.generator, 4, stage2.former)
        student4 = q(student, 4, stage2.former)
        quality = {
            "teacher@50": teacher50.per_offset,
            "teacher@4": teacher4.per_offset,
            "student@4": student4.per_offset,
        }
        far: dict[str, dict[int, float]] = {}
        for name in ARMS:
            arm = q(models[name], ARM_STEPS)
            quality[name] = arm.per_offset
            far[name] = far_error(arm, eps, pairs)
        fidelity = {
            "student_distance": distance(student4, teacher50),
            "teacher4_distance": distance(teacher4, teacher50),
            "student_mse": student4.mse,
            "teacher50_mse": teacher50.mse,
            "teacher4_mse": teacher4.mse,
        }
        curves = pretrained("stage1", scale, verbose=False)[1].curve
        target = float(np.mean(curves["scratch"][-max(1, len(curves["scratch"]) // 10) :]))
        init = {
            "target": target,
            "initialised": steps_to_target(curves["loss"], target, CURVE_EVERY),
            "scratch": steps_to_target(curves["scratch"], target, CURVE_EVERY),
        }
        policies: dict[str, Policy] = {
            "SparseVideoNav": SparseVideoNavPolicy(stage2.former, student, models["head"]),
            "ShortBC": BCPolicy(models["short-bc"]),
            "LongBC": BCPolicy(models["long-bc"]),
            "Random": RandomPolicy(),
        }
        loop = {"seed": config.seed, "max_frames": config.max_frames}
        outcomes = closed_loop(policies, codec, CONDITIONS, config.episodes, **loop)
        ablations = {
            "real labels": SparseVideoNavPolicy(stage2.former, student, models["head-real"]),
            "zeroed future": SparseVideoNavPolicy(stage2.former, student, models["head"], zero_future=True),
        }
        day = {k: v for k, v in CONDITIONS.items() if "day" in k}
        for cond, runs in closed_loop(ablations, codec, day, config.episodes, **loop).items():
            outcomes[cond].update(runs)
        success = {
            cond: {name: (rate(o).successes, rate(o).trials) for name, o in runs.items()}
            for cond, runs in outcomes.items()
        }
        expert = {}
        for kind in ("bvn", "ifn"):
            wins = expert_outcomes(kind, config.episodes, **loop)
            expert[kind] = (sum(wins), len(wins))
        return ClaimsData(cost, quality, fidelity, far, init, success, expert, outcomes)

    return cached(
        "svn-claims",
        {"scale": scale, "config": config, "models": hashes},
        compute,
        package="neurips26.sparsevideonav",
    )


__all__ = [
    "ARM_STEPS",
    "CONDITIONS",
    "FAR_SECONDS",
    "HISTORIES",
    "PIPELINES",
    "TEST_WORLD",
    "ClaimsConfig",
    "ClaimsData",
    "Quality",
    "Rate",
    "closed_loop",
    "cost_table",
    "distance",
    "expert_outcomes",
    "far_error",
    "generation_quality",
    "pipeline_config",
    "rate",
    "run_claims",
    "steps_to_target",
    "test_episodes",
    "test_tasks",
    "wall_clock",
]
