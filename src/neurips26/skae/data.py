"""The chapter's data: fresh training windows, validation and test starts with their true futures, and the
trajectories of the alignment and routing evaluations, all procedural and seeded.

Training windows (paper §method_training; the authors' ``generate_sequence_batch``): each window is a reset
state ``x_0`` and the ``L`` stored steps that follow it, ``(B, L + 1, d)``. On a box-reset system the resets
come from the paper's hard pool (:class:`~neurips26.skae.systems.HardPoolSampler`: a pool point plus jitter
with probability 0.5, else uniform in the box) or, with ``resets="uniform"``, from the box alone. The
paper cycles eight fixed batches (an artefact its authors admit); we draw a fresh batch at every training
step ``s`` from its own stream ``sub_seed(seed, TRAIN, s)`` [ours], so a step's batch does not depend on
how many steps came before it and a resumed run sees the same data.

Chaotic flows have no reset box. As for the paper's Dysts caches, ``flow_trajectories`` trajectories of
``flow_length`` stored steps are rolled once from states warmed up on the attractor, windows are cut at
uniformly drawn offsets, and every state the learner or an evaluation sees is standardised by the
per-coordinate mean and standard deviation of those training trajectories (:class:`Standardizer`; the
identity on the controlled systems).

Evaluation sets (ours where the paper leaves sizes open): validation and test starts (``val_starts`` and
``test_starts``, 100 per seed as in the paper) drawn from the base reset law (uniform in the box, or warmed
up on a flow's attractor) with their true futures to ``horizon``; the alignment set, ``128`` trajectories
of ``129`` states (128 transitions) from uniform box starts, in two disjoint draws (``"eval"``, on which the
paper fits its families transductively, and ``"fit"`` for our held-out variant); routing trajectories
(256 of 192 transitions from the training reset law, paper §routing). Every set has its own stream
(:data:`STREAMS`) via :func:`neurips26.seeding.sub_seed`, so no two sets share a start.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import lru_cache

import torch
from torch import Tensor

from neurips26.seeding import sub_seed
from neurips26.skae.losses import WINDOW
from neurips26.skae.systems import (
    ESCAPE_BOUND,
    SYSTEMS,
    ChaoticFlow,
    HardPoolConfig,
    HardPoolSampler,
    System,
    make_system,
)
from neurips26.validation import check_choice, check_int, check_seed

#: Reset laws of the training windows: ``"auto"`` is the hard pool on a box system, the attractor on a flow.
RESETS = ("auto", "hard-pool", "uniform", "attractor")

#: Independent random streams of one seed (``sub_seed(seed, stream, ...)``).
STREAMS = {
    "train": 0,
    "val": 1,
    "test": 2,
    "align-eval": 3,
    "align-fit": 4,
    "route": 5,
    "pool": 6,
    "flow": 7,
    "val-windows": 8,
    "replacement": 9,
}

#: Window length on the Dysts flows (paper appendix; 8 on the controlled benchmark, :data:`WINDOW`).
FLOW_WINDOW = 10


def has_box(key: str) -> bool:
    """Whether system ``key`` resets in a box (the controlled systems) rather than on an attractor."""
    return make_system(key).box is not None


@dataclass(frozen=True)
class DataConfig:
    """What the training windows of one model are drawn from (everything here enters a checkpoint's hash).

    ``system``: a key of :data:`~neurips26.skae.systems.SYSTEMS`; ``seed``: the data seed (every stream of
    :data:`STREAMS` derives from it); ``window``: ``L`` (stored steps after the reset); ``batch``: windows per
    training step; ``resets``: one of :data:`RESETS`; ``pool``: the hard-pool settings; ``flow_trajectories``
    and ``flow_length``: the cached trajectories of a flow (ignored on box systems); ``warmup``: the stored
    steps that take a flow's starts onto its attractor (``None``: the flow's own, 2,000; a trial run of
    ``prepare`` cuts it; ignored on box systems).
    """

    system: str
    seed: int = 0
    window: int = WINDOW
    batch: int = 256
    resets: str = "auto"
    pool: HardPoolConfig = field(default_factory=HardPoolConfig)
    flow_trajectories: int = 64
    flow_length: int = 2000
    warmup: int | None = None

    def __post_init__(self) -> None:
        check_choice("system", self.system, tuple(SYSTEMS))
        check_seed("seed", self.seed)
        check_int("window", self.window, minimum=1)
        check_int("batch", self.batch, minimum=1)
        check_choice("resets", self.resets, RESETS)
        if not isinstance(self.pool, HardPoolConfig):
            raise TypeError(f"pool must be a HardPoolConfig; got {type(self.pool).__name__}")
        check_int("flow_trajectories", self.flow_trajectories, minimum=1)
        check_int("flow_length", self.flow_length, minimum=self.window)
        if self.warmup is not None:
            check_int("warmup", self.warmup, minimum=0)
        box = has_box(self.system)
        if box and self.resets == "attractor":
            raise ValueError(f"resets must be 'hard-pool' or 'uniform' for the box system {self.system!r}")
        if not box and self.resets in ("hard-pool", "uniform"):
            raise ValueError(f"resets must be 'attractor' for the flow {self.system!r}, which has no box")

    def dynamics(self) -> System:
        """The system of ``system``, a flow with its warm-up set to ``warmup`` when that is given."""
        system = make_system(self.system)
        if self.warmup is not None and isinstance(system, ChaoticFlow):
            return dataclasses.replace(system, warmup=self.warmup)
        return system

    @property
    def reset_law(self) -> str:
        """The resolved reset law: ``"hard-pool"``, ``"uniform"`` or ``"attractor"``."""
        if self.resets != "auto":
            return self.resets
        return "hard-pool" if has_box(self.system) else "attractor"


@dataclass(frozen=True)
class EvalConfig:
    """Sizes of the evaluation sets (they never enter a checkpoint's hash).

    ``val_starts``/``test_starts`` with futures to ``horizon``; ``align_trajectories`` trajectories of
    ``align_steps`` transitions for the alignment; ``route_trajectories`` of ``route_steps`` transitions.
    """

    test_starts: int = 100
    val_starts: int = 16
    horizon: int = 1000
    align_trajectories: int = 128
    align_steps: int = 128
    route_trajectories: int = 256
    route_steps: int = 192

    def __post_init__(self) -> None:
        for name in ("test_starts", "val_starts", "horizon", "align_trajectories", "align_steps"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("route_trajectories", self.route_trajectories, minimum=1)
        check_int("route_steps", self.route_steps, minimum=1)


# ------------------------------------------------------------------------------------------------------
# flows: cached trajectories and the standardisation
# ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Standardizer:
    """``(x − mean) / std`` per coordinate (the identity on the controlled systems)."""

    mean: Tensor
    std: Tensor

    def apply(self, x: Tensor) -> Tensor:
        """Standardised states, same shape and dtype as ``x``."""
        return (x - self.mean.to(x)) / self.std.to(x)

    def invert(self, x: Tensor) -> Tensor:
        """States in native coordinates from standardised ones."""
        return x * self.std.to(x) + self.mean.to(x)


#: How many rounds of replacement :func:`bounded_trajectories` tries before it gives up.
MAX_REPLACEMENTS = 8


def bounded_trajectories(system: System, x0: Tensor, steps: int, seed: int) -> Tensor:
    """``system.trajectories(x0, steps)`` where no trajectory leaves the flow's attractor.

    A chaotic flow can hold an orbit near its attractor for thousands of steps and then lose it: one of
    the 100 Sakarya test starts of seed 2, warmed up and bounded, escapes after 2,000 more steps (its size
    keeps growing with the RK4 resolution, so the escape is the flow's, not the integrator's). A
    trajectory with a non-finite state or a coordinate beyond :data:`~neurips26.skae.systems.ESCAPE_BOUND`
    is replaced by one from a fresh start (stream ``"replacement"`` of ``seed``, round by round), so the
    evaluation sets and the training cache hold only orbits that stay on the attractor. A system with a
    reset box is returned as rolled.
    """
    return _replace_escaped(system, system.trajectories(x0, steps), steps, seed)


def _replace_escaped(system: System, out: Tensor, steps: int, seed: int) -> Tensor:
    """``out`` (rolled from its starts) with every escaped trajectory of a flow replaced (see above)."""
    if not isinstance(system, ChaoticFlow):
        return out
    for round_ in range(MAX_REPLACEMENTS):
        escaped = ~(torch.isfinite(out).all(dim=(1, 2)) & (out.abs().amax(dim=(1, 2)) <= ESCAPE_BOUND))
        if not escaped.any():
            return out
        count = int(escaped.sum())
        fresh = system.initial_states(count, sub_seed(seed, STREAMS["replacement"], round_))
        out = out.clone()
        out[escaped] = system.trajectories(fresh.to(out.dtype), steps)
    raise RuntimeError(
        f"{system.name}: trajectories still escape after {MAX_REPLACEMENTS} replacement rounds"
    )


@dataclass(frozen=True)
class FlowRequest:
    """One set of flow trajectories: ``n`` starts of stream seed ``seed`` on the attractor of ``system``,
    rolled ``steps`` stored steps (:func:`attractor_trajectories`)."""

    system: ChaoticFlow
    n: int
    seed: int
    steps: int


#: Sets rolled ahead by :func:`roll_flow_requests`, each taken once by the cache that asks for it.
_ROLLED_AHEAD: dict[FlowRequest, Tensor] = {}


def attractor_trajectories(request: FlowRequest) -> Tensor:
    """``bounded_trajectories(system, system.initial_states(n, seed), steps, seed)``: ``(n, steps + 1,
    d)`` float64, native units; taken from :func:`prefetch_flow_sets` when it rolled this set ahead."""
    ahead = _ROLLED_AHEAD.pop(request, None)
    if ahead is not None:
        return ahead
    system = request.system
    x0 = system.initial_states(request.n, request.seed)
    return bounded_trajectories(system, x0, request.steps, request.seed)


def roll_flow_requests(requests: list[FlowRequest]) -> list[Tensor]:
    """:func:`attractor_trajectories` of several requests of one flow, rolled as one batch.

    A flow's vector field acts row by row with elementwise float64 arithmetic, so rolling every request's
    starts in one batch gives the same bits as rolling each alone, at a fraction of the per-operation
    overhead that dominates RK4 on small batches (chapter 04's k6 rolls 12 flow sets to 4,000 steps).
    Warm-up: each request's first draw of perturbed starts is warmed up in the batch; a request whose first
    draw loses starts to escapes is redrawn alone (its generator continues). Rows stop when their request's
    horizon is reached; escapes after the warm-up are replaced per request as in
    :func:`bounded_trajectories`. ``tests/unit/skae/test_data.py`` checks the equality bit for bit.
    """
    if not requests:
        return []
    system = requests[0].system
    if any(r.system != system for r in requests):
        raise ValueError("requests must all share one system")
    if not isinstance(system, ChaoticFlow):
        raise TypeError(f"requests must be on a ChaoticFlow; got {type(system).__name__}")
    centre = torch.tensor(system._initial_condition(), dtype=torch.float64)
    draws = []
    for r in requests:
        generator = torch.Generator().manual_seed(check_seed("seed", r.seed))
        noise = torch.randn(r.n, system.dim, generator=generator, dtype=torch.float64)
        draws.append(centre + system.spread * noise)
    x = torch.cat(draws)
    for _ in range(system.warmup):
        x = system._step(x)
    starts, offset = [], 0
    for r in requests:
        block = x[offset : offset + r.n]
        offset += r.n
        bounded = torch.isfinite(block).all(-1) & (block.abs().amax(-1) <= ESCAPE_BOUND)
        starts.append(block if bool(bounded.all()) else system.initial_states(r.n, r.seed))
    order = sorted(range(len(requests)), key=lambda i: -requests[i].steps)  # active rows form a prefix
    outs = [torch.empty(r.n, r.steps + 1, system.dim, dtype=torch.float64) for r in requests]
    x = torch.cat([starts[i] for i in order])
    bounds, offset = [], 0
    for i in order:
        bounds.append((i, offset, offset + requests[i].n))
        offset += requests[i].n
    for t in range(requests[order[0]].steps + 1):
        if t:
            x = system._step(x)
        for i, a, b in bounds:
            if t <= requests[i].steps:
                outs[i][:, t] = x[a:b]
        active = max((b for i, _, b in bounds if requests[i].steps > t), default=0)
        if active < x.shape[0]:
            x = x[:active]
    return [_replace_escaped(system, out, r.steps, r.seed) for r, out in zip(requests, outs, strict=True)]


def _flow_request(config: DataConfig) -> FlowRequest:
    system = config.dynamics()
    return FlowRequest(
        system, config.flow_trajectories, sub_seed(config.seed, STREAMS["flow"]), config.flow_length
    )


@lru_cache(maxsize=8)
def flow_cache(config: DataConfig) -> Tensor:
    """The flow's training trajectories, ``(flow_trajectories, flow_length + 1, d)`` float64, native units.

    Starts warmed up on the attractor (stream ``"flow"``); kept in memory per configuration (read it, do
    not write into it).
    """
    if config.reset_law != "attractor":
        raise ValueError(f"flow_cache needs a flow; {config.system!r} resets in a box")
    return attractor_trajectories(_flow_request(config))


@lru_cache(maxsize=16)
def standardizer(config: DataConfig) -> Standardizer:
    """Mean and standard deviation of the flow cache per coordinate; the identity on a box system."""
    system = make_system(config.system)
    if config.reset_law != "attractor":
        return Standardizer(
            torch.zeros(system.dim, dtype=torch.float64), torch.ones(system.dim, dtype=torch.float64)
        )
    states = flow_cache(config).reshape(-1, system.dim)
    return Standardizer(states.mean(0), states.std(0).clamp_min(1e-12))


@lru_cache(maxsize=16)
def hard_pool(config: DataConfig) -> HardPoolSampler:
    """The hard-pool sampler of ``config`` (stream ``"pool"``), built once per configuration."""
    return HardPoolSampler(
        make_system(config.system), config.pool, seed=sub_seed(config.seed, STREAMS["pool"])
    )


# ------------------------------------------------------------------------------------------------------
# training windows
# ------------------------------------------------------------------------------------------------------


def _windows(config: DataConfig, n: int, seed: int) -> Tensor:
    """``n`` windows ``(n, L + 1, d)`` float32 (standardised on a flow) from the stream ``seed``."""
    system = make_system(config.system)
    law = config.reset_law
    if law == "attractor":
        cache = flow_cache(config)
        generator = torch.Generator().manual_seed(seed)
        which = torch.randint(cache.shape[0], (n,), generator=generator)
        start = torch.randint(cache.shape[1] - config.window, (n,), generator=generator)
        offsets = start[:, None] + torch.arange(config.window + 1)
        out = standardizer(config).apply(cache[which[:, None], offsets])
    else:
        if law == "hard-pool":
            x0 = hard_pool(config).sample(n, seed)
        else:
            x0 = system.initial_states(n, seed)
        out = system.trajectories(x0, config.window)
    return out.to(torch.float32)


class WindowSampler:
    """Training batches for :func:`neurips26.train.fit`: ``sampler(step)`` is the batch of update ``step``.

    Each batch is ``(batch, L + 1, d)`` float32 on the CPU (``fit`` moves it to the model's device), drawn
    from the stream ``sub_seed(seed, "train", step)``: the same config and step give the same windows.
    """

    def __init__(self, config: DataConfig) -> None:
        if not isinstance(config, DataConfig):
            raise TypeError(f"config must be a DataConfig; got {type(config).__name__}")
        self.config = config
        if config.reset_law == "hard-pool":
            hard_pool(config)  # build the pool now, not inside the first training step
        elif config.reset_law == "attractor":
            flow_cache(config)

    def __call__(self, step: int) -> Tensor:
        step = check_int("step", step, minimum=0)
        return _windows(self.config, self.config.batch, sub_seed(self.config.seed, STREAMS["train"], step))


def validation_windows(config: DataConfig, n: int = 256) -> Tensor:
    """``n`` fixed windows of the training law on their own stream (``"val-windows"``): held-out loss."""
    return _validation_windows(config, check_int("n", n, minimum=1)).clone()


@lru_cache(maxsize=256)  # every checkpoint load re-measures its held-out loss on these windows
def _validation_windows(config: DataConfig, n: int) -> Tensor:
    return _windows(config, n, sub_seed(config.seed, STREAMS["val-windows"]))


# ------------------------------------------------------------------------------------------------------
# evaluation sets
# ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trajectories:
    """Starts ``(N, d)`` and their true futures ``x_1..x_H``, ``(N, H, d)``, float64 (standardised on a
    flow): what :func:`~neurips26.skae.rollout.best_periodic` and friends take as ``x0`` and ``truth``."""

    starts: Tensor
    truth: Tensor

    @property
    def states(self) -> Tensor:
        """The whole trajectories ``x_0..x_H``, ``(N, H + 1, d)``."""
        return torch.cat([self.starts[:, None], self.truth], dim=1)


SPLITS = ("val", "test", "align-eval", "align-fit", "route")


def _base_starts(system: System, n: int, seed: int) -> Tensor:
    """The base reset law: uniform in the box, or warmed up on a flow's attractor."""
    return system.initial_states(n, seed)


def trajectories(data: DataConfig, evaluation: EvalConfig, split: str) -> Trajectories:
    """The evaluation set ``split`` (one of :data:`SPLITS`) of ``data``'s system and seed.

    ``"val"``/``"test"``: ``val_starts``/``test_starts`` base-law starts with futures to ``horizon``;
    ``"align-eval"``/``"align-fit"``: ``align_trajectories`` base-law starts, ``align_steps`` transitions;
    ``"route"``: ``route_trajectories`` training-law starts (hard pool on a box system), ``route_steps``
    transitions. Each split has its own stream of ``data.seed``.
    """
    if not isinstance(data, DataConfig):
        raise TypeError(f"data must be a DataConfig; got {type(data).__name__}")
    if not isinstance(evaluation, EvalConfig):
        raise TypeError(f"evaluation must be an EvalConfig; got {type(evaluation).__name__}")
    check_choice("split", split, SPLITS)
    kept = _trajectories(data, evaluation, split)  # kept in memory: hand out copies
    return Trajectories(starts=kept.starts.clone(), truth=kept.truth.clone())


@lru_cache(maxsize=128)  # every evaluation set of the controlled systems, shared by the chapter's runners
def _trajectories(data: DataConfig, evaluation: EvalConfig, split: str) -> Trajectories:
    system = data.dynamics()
    seed = sub_seed(data.seed, STREAMS[split])
    if split in ("val", "test"):
        n = evaluation.val_starts if split == "val" else evaluation.test_starts
        steps = evaluation.horizon
        if isinstance(system, ChaoticFlow):
            raw = attractor_trajectories(FlowRequest(system, n, seed, steps))
            states = standardizer(data).apply(raw)
            return Trajectories(starts=states[:, 0].contiguous(), truth=states[:, 1:].contiguous())
        x0 = _base_starts(system, n, seed)
    elif split == "route":
        n, steps = evaluation.route_trajectories, evaluation.route_steps
        x0 = (
            hard_pool(data).sample(n, seed)
            if data.reset_law == "hard-pool"
            else _base_starts(system, n, seed)
        )
    else:
        n, steps = evaluation.align_trajectories, evaluation.align_steps
        x0 = _base_starts(system, n, seed)
    states = standardizer(data).apply(bounded_trajectories(system, x0, steps, seed))
    return Trajectories(starts=states[:, 0].contiguous(), truth=states[:, 1:].contiguous())


def _eval_request(data: DataConfig, evaluation: EvalConfig, split: str) -> FlowRequest:
    n = evaluation.val_starts if split == "val" else evaluation.test_starts
    return FlowRequest(data.dynamics(), n, sub_seed(data.seed, STREAMS[split]), evaluation.horizon)


def prefetch_flow_sets(configs: list[DataConfig], evaluation: EvalConfig) -> None:
    """Fill the caches of :func:`standardizer` and of the ``"val"``/``"test"`` sets of every flow
    configuration in ``configs``, rolling each flow's training cache and evaluation sets of all its seeds
    in one batch (:func:`roll_flow_requests`; same bits as one by one). Box systems are skipped."""
    if not isinstance(evaluation, EvalConfig):
        raise TypeError(f"evaluation must be an EvalConfig; got {type(evaluation).__name__}")
    flows = [c for c in configs if c.reset_law == "attractor"]
    by_system: dict[str, list[FlowRequest]] = {}
    for c in flows:
        requests = by_system.setdefault(c.system, [])
        for r in (
            _flow_request(c),
            _eval_request(c, evaluation, "val"),
            _eval_request(c, evaluation, "test"),
        ):
            if r not in requests:
                requests.append(r)
    try:
        for requests in by_system.values():
            _ROLLED_AHEAD.update(zip(requests, roll_flow_requests(requests), strict=True))
        for c in flows:
            standardizer(c)
            for split in ("val", "test"):
                _trajectories(c, evaluation, split)
    finally:
        _ROLLED_AHEAD.clear()  # sets the caches already held are not kept twice
