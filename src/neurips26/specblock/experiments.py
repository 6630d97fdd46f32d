"""The chapter's experiments: decoding every method on the same prompts, slot accuracies, the claims' data.

- :func:`decode_suite` decodes held-out prompts with vanilla greedy decoding, EAGLE-3 (depth 7, top-k 10),
  Medusa, SpecBlock (2 blocks, beam 10, budgets ``[2, 4, 10, 0]``) and SpecBlock's ablations (no shift,
  1-block TTT, no rank head = the full drafter with a fixed top-k per slot, no valid-prefix mask, strict
  linear = the full drafter drafting one chain of greedy spines without branching) at
  every tree budget ``N`` (the ablations at ``N = 90`` only, for time): tokens (checked lossless
  against vanilla), τ, per-depth acceptance, drafter forwards and seconds per iteration, target
  seconds per iteration, and the measured single-forward
  latencies ``t_T(N)`` (a root + ``N`` nodes over a cached prefix) and ``t_D`` (one drafter forward) of
  the CPU-measured modelled speedup ``τ t_T / (t_T(1+εN) + n_fwd t_D)`` (:mod:`.metrics`), beside the
  speedup of the declared GPU-like :mod:`.cost_model`, which decides the claims. Wall-clock times: vanilla
  and the main methods at ``N ∈ {60, 90}`` (the budgets of claim D2) decode the first ``timing_prompts``
  prompts side by side in ``repeats`` interleaved rounds after a discarded warm-up round
  (:func:`neurips26.timing.time_interleaved`); seconds are medians over the rounds, and a measured speedup
  is the median of the per-round ratios vanilla / method, with their 25–75 % range.
- :func:`slot_accuracy` measures, on held-out distillation data, each SpecBlock variant's first-block
  top-1 accuracy per slot (claim D4: shift vs no shift) and the accuracy of slot ``k`` given slots
  ``< k`` correct (claim D7: valid-prefix vs not).
- :func:`domain_shift_stream` is the domain-shift experiment of claim D8 (the stream and the adapters are
  in :mod:`.adaptation`; see there).
- :func:`run_claims` runs everything the claims need, at one scale, once.

Prompts [ours]: held-out prompts of the drafters' training domains, "code" and "dialogue" (seed 3; the
target trained on seed 0, the distillation used seeds 1 and 2), interleaved. Every result is a frozen
dataclass, cached through :func:`neurips26.cache.cached` (keyed by the config, the package source and the
drafters' weights hashes). No verdicts here: the claims module reads these numbers.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from neurips26.cache import cached
from neurips26.scales import pick
from neurips26.specblock.adaptation import StreamResult, modelled_update_costs
from neurips26.specblock.adaptation import domain_shift_stream as run_stream
from neurips26.specblock.bandit import COST_UNITS, CostAwareBandit, EveryWindowPolicy, StaticPolicy
from neurips26.specblock.baselines.eagle3 import Eagle3Proposer
from neurips26.specblock.baselines.medusa import MedusaProposer
from neurips26.specblock.cost_model import cost_model_speedup, drafter_cost, target_parameters
from neurips26.specblock.data import DOMAINS, interleaved_prompts, prompts, tokenizer
from neurips26.specblock.decode import GenerationResult, speculative_generate, vanilla_generate
from neurips26.specblock.dynamic_tree import DEFAULT_BUDGETS, SpecBlockProposer, check_budgets
from neurips26.specblock.metrics import EPSILON, measure_latency, modelled_speedup, summarize
from neurips26.specblock.prepare import (
    PrepareConfig,
    block_accuracy,
    distillation,
    pretrained,
    target_for,
)
from neurips26.specblock.protocol import Proposer
from neurips26.specblock.target import EOS_ID
from neurips26.timing import Timing, time_interleaved
from neurips26.train.device import torch_threads
from neurips26.validation import check_choice, check_int, check_seed

MAIN_METHODS: tuple[str, ...] = ("eagle3", "medusa", "specblock")
ABLATIONS: tuple[str, ...] = (
    "specblock-noshift",
    "specblock-1block",
    "specblock-norank",
    "specblock-noprefix",
    "specblock-chain",
)
#: Ablations that decode with the full SpecBlock drafter (they change the drafting, not the training).
DRAFTING_ABLATIONS: tuple[str, ...] = ("specblock-norank", "specblock-chain")
METHODS: tuple[str, ...] = ("vanilla", *MAIN_METHODS, *ABLATIONS)
SPECBLOCK_VARIANTS: tuple[str, ...] = (
    "specblock",
    "specblock-noshift",
    "specblock-1block",
    "specblock-noprefix",
)


def check_held_out(prompts: object, new_tokens: object, domains: object, seed: object) -> None:
    """Evaluation prompts of a config: ``prompts`` ≥ 1 of ``new_tokens`` ≥ 1 tokens over a non-empty tuple of
    known ``domains``, from a ``seed`` that is neither the target's nor the distillation's (0, 1, 2)."""
    check_int("prompts", prompts, minimum=1)
    check_int("new_tokens", new_tokens, minimum=1)
    if not isinstance(domains, tuple) or not domains:
        raise TypeError(f"domains must be a non-empty tuple of domain names; got {domains!r}")
    for d in domains:
        check_choice("domains", d, DOMAINS)
    check_seed("seed", seed)
    if seed in (0, 1, 2):
        raise ValueError(f"seed must not be 0, 1 or 2 (the target's and distillation's); got {seed}")


#: Torch threads for every decoding experiment: batch-1 decoding of these small models is 2–3× faster on one
#: thread than on two (a drafter forward is too small to split), and one thread is less disturbed by other
#: processes on the machine.
DECODE_THREADS: int = 1


@dataclass(frozen=True)
class SuiteConfig:
    """What :func:`decode_suite` decodes and how.

    ``scale``: drafters and target of :class:`~.prepare.PrepareConfig` at that scale; ``prompts``
    held-out prompts of ``domains`` (seed ``seed``), ``new_tokens`` each; ``budgets``: tree node budgets
    ``N`` (``ablation_budgets``: those the ablations run at; ``timed_budgets``: those timed);
    ``methods``: a subset of :data:`METHODS` (vanilla always runs, as the reference);
    ``eagle_depth``/``eagle_topk``; SpecBlock's ``max_blocks``, ``beam_width``, ``rank_budgets`` and the
    fixed ``top_k`` of the no-rank-head ablation; timing: the methods in ``timed`` at ``timed_budgets``
    and vanilla decode the first ``timing_prompts`` prompts side by side in ``repeats`` interleaved rounds
    (after one discarded warm-up round); ``latency_repeats`` calls per single-forward latency.
    """

    scale: str = "default"
    prompts: int = 16
    new_tokens: int = 48
    domains: tuple[str, ...] = ("code", "dialogue")
    seed: int = 3
    budgets: tuple[int, ...] = (30, 60, 90)
    ablation_budgets: tuple[int, ...] = (90,)
    timed_budgets: tuple[int, ...] = (60, 90)
    methods: tuple[str, ...] = METHODS
    eagle_depth: int = 7
    eagle_topk: int = 10
    max_blocks: int = 2
    beam_width: int = 10
    rank_budgets: tuple[int, int, int, int] = DEFAULT_BUDGETS
    top_k: int = 4
    timing_prompts: int = 4
    repeats: int = 5
    timed: tuple[str, ...] = ("vanilla", *MAIN_METHODS)
    latency_repeats: int = 20

    def __post_init__(self) -> None:
        check_choice("scale", self.scale, ("smoke", "default", "paper"))
        check_held_out(self.prompts, self.new_tokens, self.domains, self.seed)
        if not isinstance(self.budgets, tuple) or not self.budgets:
            raise TypeError(f"budgets must be a non-empty tuple of ints; got {self.budgets!r}")
        for b in self.budgets:
            check_int("budgets", b, minimum=1)
        for name in ("ablation_budgets", "timed_budgets"):
            values = getattr(self, name)
            if not isinstance(values, tuple) or not set(values) <= set(self.budgets):
                raise ValueError(f"{name} must be a tuple of budgets out of {self.budgets}; got {values!r}")
        for name in ("methods", "timed"):
            values = getattr(self, name)
            if not isinstance(values, tuple):
                raise TypeError(f"{name} must be a tuple of method names; got {values!r}")
            for m in values:
                check_choice(name, m, METHODS)
        check_int("eagle_depth", self.eagle_depth, minimum=1)
        check_int("eagle_topk", self.eagle_topk, minimum=1)
        check_int("max_blocks", self.max_blocks, minimum=1)
        check_int("beam_width", self.beam_width, minimum=1)
        if not isinstance(self.rank_budgets, tuple):
            raise ValueError(f"rank_budgets must be a tuple of four ints >= 0; got {self.rank_budgets!r}")
        check_budgets(self.rank_budgets, "rank_budgets")
        check_int("top_k", self.top_k, minimum=1)
        check_int("timing_prompts", self.timing_prompts, minimum=0, maximum=self.prompts)
        check_int("repeats", self.repeats, minimum=1)
        check_int("latency_repeats", self.latency_repeats, minimum=1)

    @classmethod
    def for_scale(cls, scale: str) -> SuiteConfig:
        """smoke: 4 prompts × 16 tokens, budget 30, 2 timed once; default: 16 × 48, N ∈ {30, 60, 90}."""
        return pick(
            scale,
            smoke=cls(
                scale="smoke",
                ablation_budgets=(30,),
                timed_budgets=(30,),
                prompts=4,
                new_tokens=16,
                budgets=(30,),
                timing_prompts=2,
                repeats=1,
                latency_repeats=2,
            ),
            default=cls(),
            paper=cls(scale="paper", prompts=50, new_tokens=64),
        )

    def prompt_texts(self) -> list[str]:
        """The held-out prompts, domains interleaved."""
        return interleaved_prompts(self.domains, self.prompts, self.seed)


@dataclass(frozen=True)
class MethodResult:
    """One method at one tree budget on every prompt of the suite.

    ``tokens``: per prompt, the generated ids; ``lossless``: equal to vanilla's on every prompt; ``tau``,
    ``per_depth`` (share of iterations accepting ≥ d draft tokens, d = 1 …), ``drafter_forwards``,
    ``drafter_ms``, ``target_ms``, ``tree_nodes``: per iteration, pooled over prompts; ``t_d_ms``: median
    drafter seconds per forward (one drafter forward); ``seconds``: median wall time of the timed
    prompts over the interleaved rounds (``nan`` when not timed). ``drafting_units``: drafting cost per
    iteration in target forwards and ``modelled_speedup`` = τ / c_iter, both under the declared GPU-like
    :mod:`~.cost_model`; ``cpu_modelled_speedup``: τ t_T / (t_T(1+εN) + n_fwd t_D) with this CPU's
    measured ``t_T`` and ``t_D``.
    """

    method: str
    budget: int
    tokens: tuple[tuple[int, ...], ...]
    lossless: bool
    tau: float
    per_depth: tuple[float, ...]
    drafter_forwards: float
    drafter_ms: float
    target_ms: float
    tree_nodes: float
    t_d_ms: float
    seconds: float
    drafting_units: float
    modelled_speedup: float
    cpu_modelled_speedup: float


@dataclass(frozen=True)
class SuiteResult:
    """:func:`decode_suite`'s results: one :class:`MethodResult` per (method, budget), and the latencies.

    ``t_t_ms[N]``: median ms of one target forward over a root + ``N`` nodes on a cached prompt
    (``N = 0``: one token, the ``t_T`` of the latency model); ``vanilla_seconds``: median wall time of
    vanilla decoding on the timed prompts; ``wall_seconds``: the suite's own wall time; ``timing``: the
    interleaved measurement of vanilla and the timed methods (names ``'vanilla'``, ``'method@N'``; None
    when no prompt is timed), behind :meth:`measured_speedup` and :meth:`measured_speedup_spread`;
    ``drafting``: from the same rounds, each timed method's drafter seconds per iteration (names
    ``'method@N'``), behind :meth:`drafting_ratio`.
    """

    config: SuiteConfig
    rows: tuple[MethodResult, ...]
    t_t_ms: dict[int, float]
    vanilla_seconds: float
    wall_seconds: float = field(compare=False)
    timing: Timing | None = None
    drafting: Timing | None = None

    def row(self, method: str, budget: int) -> MethodResult:
        """The row of ``method`` at ``budget`` (vanilla: any budget)."""
        for r in self.rows:
            if r.method == method and (method == "vanilla" or r.budget == budget):
                return r
        raise KeyError(f"no row for method {method!r} at budget {budget}")

    def _timed_name(self, method: str, budget: int) -> str | None:
        row = self.row(method, budget)
        name = timing_name(row.method, row.budget)
        return name if self.timing is not None and name in self.timing.seconds else None

    def measured_speedup(self, method: str, budget: int) -> float:
        """Wall-clock speedup over vanilla on the timed prompts: the median over the interleaved rounds of
        vanilla's seconds / the method's in the same round (``nan`` when not timed)."""
        name = self._timed_name(method, budget)
        return float("nan") if name is None else self.timing.ratio("vanilla", name)

    def drafting_ratio(self, a: tuple[str, int], b: tuple[str, int]) -> tuple[float, float, float]:
        """Drafter seconds per iteration of ``a = (method, N)`` / those of ``b``, paired by round of the
        interleaved timing: the median ratio and its 25 % and 75 % quantiles (``ValueError`` when either is
        not timed)."""
        names = []
        for method, budget in (a, b):
            row = self.row(method, budget)
            name = timing_name(row.method, row.budget)
            if self.drafting is None or name not in self.drafting.seconds:
                raise ValueError(f"{name} was not timed (SuiteConfig.timed and timed_budgets)")
            names.append(name)
        low, high = self.drafting.ratio_spread(*names)
        return self.drafting.ratio(*names), low, high

    def measured_speedup_spread(self, method: str, budget: int) -> tuple[float, float]:
        """The 25 % and 75 % quantiles of the per-round speedups of :meth:`measured_speedup` (``nan``s when
        not timed)."""
        name = self._timed_name(method, budget)
        return (float("nan"),) * 2 if name is None else self.timing.ratio_spread("vanilla", name)


def timing_name(method: str, budget: int) -> str:
    """The name of ``method`` at ``budget`` in :attr:`SuiteResult.timing`: ``'vanilla'`` or ``'method@N'``."""
    return "vanilla" if method == "vanilla" else f"{method}@{budget}"


# --------------------------------------------------------------------------------------------
# drafters and proposers


def _drafters(config: SuiteConfig) -> dict[str, tuple[torch.nn.Module, Any]]:
    names = {m for m in config.methods if m != "vanilla"}
    need = {"specblock" if m in DRAFTING_ABLATIONS else m for m in names}
    return {name: pretrained(name, config.scale, verbose=False) for name in sorted(need)}


def make_proposer(
    method: str, drafters: dict[str, tuple[torch.nn.Module, Any]], config: SuiteConfig
) -> Proposer:
    """The :class:`~.protocol.Proposer` of ``method`` with the suite's settings."""
    check_choice("method", method, METHODS[1:])
    if method == "eagle3":
        return Eagle3Proposer(drafters["eagle3"][0], topk=config.eagle_topk, depth=config.eagle_depth)
    if method == "medusa":
        return MedusaProposer(drafters["medusa"][0])
    source = "specblock" if method in DRAFTING_ABLATIONS else method
    return SpecBlockProposer(
        drafters[source][0],
        max_blocks=config.max_blocks,
        beam_width=config.beam_width,
        budgets=config.rank_budgets,
        top_k=config.top_k,
        use_rank_head=method != "specblock-norank",
        linear=method == "specblock-chain",
        name=method,
    )


@torch.no_grad()
def target_latency_ms(target: torch.nn.Module, prompt: list[int], nodes: int, repeats: int) -> float:
    """Median ms of one target forward over ``1 + nodes`` tokens on a cached ``prompt`` (cache restored)."""
    cache = target.make_cache()
    target(torch.tensor([prompt[:-1]]), cache=cache)
    length = len(cache)
    x = torch.tensor([[prompt[-1]] * (1 + nodes)])
    positions = torch.arange(length, length + 1 + nodes)

    def once() -> None:
        target(x, positions=positions, cache=cache)
        cache.truncate(length)

    return 1e3 * measure_latency(once, repeats)


def _run(fn: Callable[[list[int]], GenerationResult], prompts_ids: list[list[int]]) -> list[GenerationResult]:
    return [fn(ids) for ids in prompts_ids]


#: Warm-up rounds of the interleaved wall-clock measurement, run and discarded.
TIMING_WARMUP: int = 1


@torch_threads(DECODE_THREADS)
def _decode_suite(config: SuiteConfig) -> SuiteResult:
    start = time.perf_counter()
    target = target_for(PrepareConfig.for_scale(config.scale))
    drafters = _drafters(config)
    tok = tokenizer()
    ids = [tok.encode(p, bos=True) for p in config.prompt_texts()]
    timed_ids = ids[: config.timing_prompts]

    def vanilla(p: list[int]) -> GenerationResult:
        return vanilla_generate(target, p, config.new_tokens, eos_id=EOS_ID)

    reference = _run(vanilla, ids)
    ref_tokens = tuple(r.tokens for r in reference)
    t_t = {n: target_latency_ms(target, ids[0], n, config.latency_repeats) for n in (0, *config.budgets)}
    # timed side by side once every method has run: one callable per timed (method, budget), on timed_ids
    to_time: dict[str, Callable[[], object]] = {"vanilla": lambda: _run(vanilla, timed_ids)}
    logged: dict[str, list[list[GenerationResult]]] = {}  # per timed method, its runs in the rounds
    stats = summarize(reference)
    rows = [
        MethodResult(
            method="vanilla",
            budget=0,
            tokens=ref_tokens,
            lossless=True,
            tau=1.0,
            per_depth=(),
            drafter_forwards=0.0,
            drafter_ms=0.0,
            target_ms=1e3 * stats.target_seconds,
            tree_nodes=0.0,
            t_d_ms=0.0,
            seconds=float("nan"),
            drafting_units=0.0,
            modelled_speedup=1.0,
            cpu_modelled_speedup=1.0,
        )
    ]
    max_depth = max(config.eagle_depth, config.max_blocks * 4 + 1)
    target_params = target_parameters(target)
    for method in config.methods:
        if method == "vanilla":
            continue
        proposer = make_proposer(method, drafters, config)
        for budget in config.ablation_budgets if method in ABLATIONS else config.budgets:

            def spec(p: list[int], proposer: Proposer = proposer, budget: int = budget) -> GenerationResult:
                return speculative_generate(
                    target, proposer, p, config.new_tokens, total_tokens=budget, eos_id=EOS_ID
                )

            results = _run(spec, ids)
            s = summarize(results, max_depth=max_depth)
            per_forward = [
                sec / fwd
                for r in results
                for sec, fwd in zip(r.drafter_seconds, r.drafter_forwards, strict=True)
                if fwd
            ]
            t_d = statistics.median(per_forward) if per_forward else 0.0
            units = drafter_cost(proposer).units(s.drafter_forwards, target_params, epsilon=EPSILON)
            if method in config.timed and budget in config.timed_budgets:
                name = timing_name(method, budget)
                to_time[name] = lambda spec=spec, name=name: logged.setdefault(name, []).append(
                    _run(spec, timed_ids)
                )
            rows.append(
                MethodResult(
                    method=method,
                    budget=budget,
                    tokens=tuple(r.tokens for r in results),
                    lossless=tuple(r.tokens for r in results) == ref_tokens,
                    tau=s.tau,
                    per_depth=tuple(float(v) for v in s.per_depth),
                    drafter_forwards=s.drafter_forwards,
                    drafter_ms=1e3 * s.drafter_seconds,
                    target_ms=1e3 * s.target_seconds,
                    tree_nodes=s.tree_nodes,
                    t_d_ms=1e3 * t_d,
                    seconds=float("nan"),
                    drafting_units=units,
                    modelled_speedup=cost_model_speedup(s.tau, s.tree_nodes, units, epsilon=EPSILON),
                    cpu_modelled_speedup=modelled_speedup(
                        s.tau, t_t[0] / 1e3, t_d, s.tree_nodes, s.drafter_forwards, epsilon=EPSILON
                    ),
                )
            )
    timing = drafting = None
    if timed_ids:
        timing = time_interleaved(
            to_time, rounds=config.repeats, warmup=TIMING_WARMUP, threads=DECODE_THREADS, reference="vanilla"
        )
        drafting = _drafting_timing(logged, timing)
        rows = [
            dataclasses.replace(r, seconds=timing.median(name))
            if (name := timing_name(r.method, r.budget)) in timing.seconds
            else r
            for r in rows
        ]
    vanilla_seconds = timing.median("vanilla") if timing is not None else float("nan")
    wall = time.perf_counter() - start
    return SuiteResult(config, tuple(rows), t_t, vanilla_seconds, wall, timing, drafting)


def _drafting_timing(logged: dict[str, list[list[GenerationResult]]], timing: Timing) -> Timing | None:
    """The drafter seconds per iteration of each timed method in each timed round of ``timing`` (warm-up
    rounds dropped), as a :class:`~neurips26.timing.Timing`: its paired per-round ratios compare two
    drafters that ran side by side in the same rounds."""
    if not logged:
        return None
    seconds = {}
    for name, runs in logged.items():
        per_round = []
        for results in runs[timing.warmup :]:
            iterations = sum(r.iterations for r in results)
            per_round.append(sum(sum(r.drafter_seconds) for r in results) / max(iterations, 1))
        seconds[name] = tuple(per_round)
    return Timing(
        names=tuple(seconds), seconds=seconds, warmup=timing.warmup, threads=timing.threads, inner=1
    )


def _weights_key(config: SuiteConfig) -> dict[str, str]:
    return {name: meta.weights_hash for name, (_, meta) in _drafters(config).items()}


def decode_suite(config: SuiteConfig | None = None, *, verbose: bool = True) -> SuiteResult:
    """Every method of ``config`` at every budget on the same prompts (module docstring), cached."""
    config = SuiteConfig.for_scale("default") if config is None else config
    if not isinstance(config, SuiteConfig):
        raise TypeError(f"config must be a SuiteConfig; got {type(config).__name__}")
    key = {"config": config, "drafters": _weights_key(config)}
    return cached(
        "specblock-decode-suite",
        key,
        lambda: _decode_suite(config),
        package="neurips26.specblock",
        verbose=verbose,
    )


def per_depth_acceptance(result: SuiteResult, budget: int) -> dict[str, np.ndarray]:
    """Per method, the share of iterations accepting at least ``d`` draft tokens (d = 1 …) at ``budget``."""
    if not isinstance(result, SuiteResult):
        raise TypeError(f"result must be a SuiteResult; got {type(result).__name__}")
    if budget not in result.config.budgets:
        raise ValueError(f"budget must be one of the suite's budgets {result.config.budgets}; got {budget!r}")
    return {
        r.method: np.asarray(r.per_depth) for r in result.rows if r.method != "vanilla" and r.budget == budget
    }


# --------------------------------------------------------------------------------------------
# slot accuracy (claims D4, D7)


@dataclass(frozen=True)
class SlotAccuracy:
    """First-block statistics of one SpecBlock variant on held-out distillation data.

    ``accuracy[k]``: top-1 agreement of slot ``k`` with the target on valid positions; ``conditional[k]``:
    the same among positions whose slots ``< k`` were all correct (``conditional[0] == accuracy[0]``);
    ``loss[k]``: mean soft cross-entropy; ``positions[k]``: valid positions counted.
    """

    name: str
    accuracy: tuple[float, ...]
    conditional: tuple[float, ...]
    loss: tuple[float, ...]
    positions: tuple[int, ...]


def _slot_accuracy(scale: str, names: tuple[str, ...]) -> dict[str, SlotAccuracy]:
    data = distillation(PrepareConfig.for_scale(scale), "val")
    out = {}
    for name in names:
        drafter, _ = pretrained(name, scale, verbose=False)
        s = block_accuracy(drafter, data)
        out[name] = SlotAccuracy(
            name=name,
            accuracy=tuple(float(v) for v in s["correct"] / s["valid"].clamp_min(1)),
            conditional=tuple(float(v) for v in s["chain_correct"] / s["chain_valid"].clamp_min(1)),
            loss=tuple(float(v) for v in s["loss"]),
            positions=tuple(int(v) for v in s["valid"]),
        )
    return out


def slot_accuracy(
    scale: str = "default", names: tuple[str, ...] = SPECBLOCK_VARIANTS, *, verbose: bool = True
) -> dict[str, SlotAccuracy]:
    """:class:`SlotAccuracy` of each SpecBlock variant in ``names`` at ``scale`` (cached)."""
    check_choice("scale", scale, ("smoke", "default", "paper"))
    if not isinstance(names, tuple) or not names:
        raise TypeError(f"names must be a non-empty tuple of SpecBlock variants; got {names!r}")
    for n in names:
        check_choice("names", n, SPECBLOCK_VARIANTS)
    key = {
        "scale": scale,
        "names": names,
        "drafters": {n: pretrained(n, scale, verbose=False)[1].weights_hash for n in names},
    }
    return cached(
        "specblock-slot-accuracy",
        key,
        lambda: _slot_accuracy(scale, names),
        package="neurips26.specblock",
        verbose=verbose,
    )


# --------------------------------------------------------------------------------------------
# domain shift (claim D8) — the stream and the adapters live in .adaptation (written separately)


POLICIES: tuple[str, ...] = ("static", "bandit", "every-window")


@dataclass(frozen=True)
class ShiftConfig:
    """The stream of :func:`domain_shift_stream`: ``before`` prompts of domain ``a``, then ``after`` of ``b``
    (seed ``seed``), ``new_tokens`` each, SpecBlock at ``total_tokens`` with the released settings, a policy
    decision every ``window`` generations; ``policies``: a subset of :data:`POLICIES`; ``cost``: the unit the
    bandit weighs gains and update costs in, ``'model'`` (the declared cost model, the chapter's default: the
    same decisions on every machine) or ``'seconds'`` (measured on this machine, under its load)."""

    scale: str = "default"
    a: str = "code"
    b: str = "arithmetic"
    before: int = 8
    after: int = 12
    new_tokens: int = 32
    seed: int = 4
    total_tokens: int = 60
    window: int = 2
    policies: tuple[str, ...] = POLICIES
    cost: str = "model"

    def __post_init__(self) -> None:
        check_choice("scale", self.scale, ("smoke", "default", "paper"))
        check_choice("cost", self.cost, COST_UNITS)
        check_choice("a", self.a, DOMAINS)
        check_choice("b", self.b, DOMAINS)
        check_int("before", self.before, minimum=0)
        check_int("after", self.after, minimum=0)
        if self.before + self.after == 0:
            raise ValueError("before + after must be at least 1")
        check_int("new_tokens", self.new_tokens, minimum=1)
        check_seed("seed", self.seed)
        check_int("total_tokens", self.total_tokens, minimum=1)
        check_int("window", self.window, minimum=1)
        if not isinstance(self.policies, tuple) or not self.policies:
            raise TypeError(f"policies must be a non-empty tuple of policy names; got {self.policies!r}")
        for p in self.policies:
            check_choice("policies", p, POLICIES)

    @classmethod
    def for_scale(cls, scale: str) -> ShiftConfig:
        """smoke: 2 + 2 prompts × 8 tokens; default: 8 + 12 prompts × 32 tokens; every policy."""
        return pick(
            scale,
            smoke=cls(scale="smoke", before=2, after=2, new_tokens=8),
            default=cls(),
            paper=cls(scale="paper", before=20, after=20, new_tokens=48, window=4),
        )


def _policy(name: str, seed: int, costs: dict[str, float], unit: str):  # noqa: ANN202
    if name == "static":
        return StaticPolicy(seed=seed)
    if name == "bandit":
        return CostAwareBandit(seed=seed, unit=unit, costs=costs if unit == "model" else None)
    return EveryWindowPolicy(seed=seed)


@torch_threads(DECODE_THREADS)
def _stream(config: ShiftConfig) -> dict[str, StreamResult]:
    target = target_for(PrepareConfig.for_scale(config.scale))
    drafter, _ = pretrained("specblock", config.scale, verbose=False)
    prompts_a = prompts(config.a, config.before, config.seed)
    prompts_b = prompts(config.b, config.after, config.seed)
    costs = modelled_update_costs(target, drafter)
    out = {}
    for name in config.policies:
        torch.manual_seed(config.seed)
        out[name] = run_stream(
            target,
            drafter,
            _policy(name, config.seed, costs, config.cost),
            prompts_a,
            prompts_b,
            max_new_tokens=config.new_tokens,
            total_tokens=config.total_tokens,
            window=config.window,
            eos_id=EOS_ID,
        )
    return out


def domain_shift_stream(
    config: ShiftConfig | None = None, *, verbose: bool = True
) -> dict[str, StreamResult]:
    """Claim D8: per policy name, its :class:`~.adaptation.StreamResult` on ``config``'s stream (cached).

    The SpecBlock drafter (trained on code and dialogue) decodes ``before`` prompts of domain ``a`` and
    then ``after`` of ``b``; every policy starts from its own copy of the same drafter.
    """
    config = ShiftConfig.for_scale("default") if config is None else config
    if not isinstance(config, ShiftConfig):
        raise TypeError(f"config must be a ShiftConfig; got {type(config).__name__}")
    weights = pretrained("specblock", config.scale, verbose=False)[1].weights_hash
    return cached(
        "specblock-domain-shift",
        {"config": config, "drafter": weights},
        lambda: _stream(config),
        package="neurips26.specblock",
        verbose=verbose,
    )


# --------------------------------------------------------------------------------------------
# everything the claims need


@dataclass(frozen=True)
class ClaimsData:
    """The numbers behind claims L and D1–D7 at one scale (D8: :func:`domain_shift_stream`)."""

    scale: str
    suite: SuiteResult
    slots: dict[str, SlotAccuracy]


def run_claims(scale: str = "default", *, verbose: bool = True) -> ClaimsData:
    """:func:`decode_suite` and :func:`slot_accuracy` at ``scale`` (each cached); no verdicts."""
    check_choice("scale", scale, ("smoke", "default", "paper"))
    return ClaimsData(
        scale=scale,
        suite=decode_suite(SuiteConfig.for_scale(scale), verbose=verbose),
        slots=slot_accuracy(scale, verbose=verbose),
    )
