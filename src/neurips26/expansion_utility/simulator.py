"""A step-wise solver of procedural problems: chains with prefixes that can be kept and suffixes resampled.

The chapter cannot run the nine LLM families of the paper, so a chain of thought becomes a run of a
stochastic solver through a problem of ``n`` typed steps. What matters for expansion utility is kept:
a chain has a prefix state that resampling from step ``k`` keeps, a suffix that is regenerated, and a
final answer that is right or wrong.

**State.** Before each step a chain is in a state ``(correct, approach)``: whether everything so far is
right, and which of :data:`APPROACHES` its last decision chose (``0`` the sound one, ``1`` a clumsy one,
``2`` a dead end); the state before step 1 is ``(True, 0)``.

**Steps.** A benchmark draws each problem's step types and difficulties ``d_k`` (a depth profile times a
per-step log-normal factor). With ``e = min(0.95, ε_m · d_k · A[a] · b_m[type])`` — the family's base
error ``ε_m``, the approach's difficulty multiplier ``A[a]``, the family's bias for the step type:

- a *decision* step (``plan``, ``method``) keeps the state's correctness and draws the approach: the sound
  one with probability ``1 − e``, else one of the other two uniformly — path dependence, as a chain's
  plan shapes every later step;
- a *work* step (``compute``, ``lookup``, ``conclude``) turns a correct state wrong with probability ``e``;
  a wrong state stays wrong;
- a *check* step repairs a wrong state with probability ``ρ_m`` and never breaks a right one.

**Answer.** A chain ends in a correct state → the right answer; a wrong one → a guess, right with
probability ``1/|A|`` (``|A|`` the benchmark's answer space). Independently, the answer fails to parse with
probability ``f_m`` (counted wrong, and flagged).

**Confidence.** Each step reports a confidence ``σ(logit(1 − e) + s_m·z)`` with ``z ~ N(0, 1)``: a noisy
monotone function of the step's error probability (``s_m``, the family's miscalibration), with a minimum
and a length per step as further observable features. The solver never sees whether its state is wrong.

Resampling from step ``k`` (:func:`resample_from`) re-runs the solver from the kept state before step
``k`` (``k = n`` regenerates the answer only); :func:`exact_success_prob` gives the same probability exactly,
by dynamic programming over the six states.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from neurips26.seeding import sub_seed
from neurips26.validation import check_float, check_int, check_seed

STEP_TYPES = ("plan", "method", "compute", "lookup", "check", "conclude")
DECISION_TYPES = ("plan", "method")
WORK_TYPES = ("compute", "lookup", "conclude")
APPROACHES = (1.0, 2.5, 6.0)
"""Difficulty multiplier of each approach: sound, clumsy, dead end."""
MAX_ERROR = 0.95

_TYPE_INDEX = {t: i for i, t in enumerate(STEP_TYPES)}
_DECISION = np.array([t in DECISION_TYPES for t in STEP_TYPES])
_CHECK = np.array([t == "check" for t in STEP_TYPES])


@dataclass(frozen=True)
class Benchmark:
    """A family of problems: step counts in ``[min_steps, max_steps]``, answer space ``answers``, the
    probabilities of middle-step types ``mix`` (over ``method``, ``compute``, ``lookup``, ``check``), whether
    a ``plan`` step opens the chain, and the depth profile of difficulty
    ``d(x) = base + peak · exp(−(x − centre)² / (2 width²))`` at relative depth ``x = k / n``."""

    name: str
    min_steps: int
    max_steps: int
    answers: int
    mix: tuple[float, float, float, float]
    plan: bool = True
    base: float = 1.0
    peak: float = 2.0
    centre: float = 0.5
    width: float = 0.2
    spread: float = 0.3

    def __post_init__(self) -> None:
        check_int("min_steps", self.min_steps, minimum=2)
        check_int("max_steps", self.max_steps, minimum=self.min_steps)
        check_int("answers", self.answers, minimum=2)
        if len(self.mix) != 4 or any(p < 0 for p in self.mix) or not np.isclose(sum(self.mix), 1.0):
            raise ValueError(f"mix must be four non-negative probabilities summing to 1; got {self.mix}")
        check_float("base", self.base, minimum=0.0)
        check_float("peak", self.peak, minimum=0.0)
        check_float("width", self.width, minimum=0.0, strict_min=True)
        check_float("spread", self.spread, minimum=0.0)

    def profile(self, x: np.ndarray) -> np.ndarray:
        """Difficulty at relative depths ``x``."""
        return self.base + self.peak * np.exp(-0.5 * ((x - self.centre) / self.width) ** 2)


@dataclass(frozen=True)
class SolverFamily:
    """A model family: base error ``eps``, repair probability ``rho`` at check steps, miscalibration
    ``calibration`` of its confidences, parse-failure rate ``parse_fail``, and a multiplicative ``bias`` on
    the error of each step type (missing types: 1)."""

    name: str
    eps: float
    rho: float
    calibration: float
    parse_fail: float = 0.02
    bias: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_float("eps", self.eps, minimum=0.0, maximum=1.0)
        check_float("rho", self.rho, minimum=0.0, maximum=1.0)
        check_float("calibration", self.calibration, minimum=0.0)
        check_float("parse_fail", self.parse_fail, minimum=0.0, maximum=1.0)
        unknown = set(self.bias) - set(STEP_TYPES)
        if unknown:
            raise ValueError(f"bias must name step types of {STEP_TYPES}; got {sorted(unknown)}")

    def type_bias(self) -> np.ndarray:
        """The bias of every step type, in :data:`STEP_TYPES` order."""
        return np.array([float(self.bias.get(t, 1.0)) for t in STEP_TYPES])


BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark("early-plan", 6, 12, 10, (0.05, 0.6, 0.2, 0.15), base=0.6, peak=3.0, centre=0.0, width=0.12),
    Benchmark("late-carry", 8, 16, 100, (0.0, 0.8, 0.1, 0.1), base=0.7, peak=2.5, centre=0.85, width=0.12),
    Benchmark("uniform", 6, 14, 50, (0.1, 0.6, 0.15, 0.15), base=1.2, peak=0.0),
    Benchmark("mid-lookup", 6, 14, 20, (0.05, 0.45, 0.4, 0.1), base=0.6, peak=3.0, centre=0.5, width=0.1),
    Benchmark("long-proof", 12, 20, 4, (0.15, 0.45, 0.1, 0.3), base=0.6, peak=1.0, centre=0.6, width=0.3),
    Benchmark("short-arith", 3, 6, 100, (0.0, 0.85, 0.0, 0.15), plan=False, base=1.0, peak=1.0, centre=0.7),
    Benchmark("multi-method", 8, 16, 30, (0.3, 0.45, 0.1, 0.15), base=0.8, peak=1.5, centre=0.4, width=0.25),
)
"""The seven benchmarks, fixed before any measurement (where the hard steps sit differs between them)."""

FAMILIES: tuple[SolverFamily, ...] = (
    SolverFamily("atlas", eps=0.02, rho=0.5, calibration=0.3),
    SolverFamily("birch", eps=0.04, rho=0.3, calibration=0.5, bias={"lookup": 2.0}),
    SolverFamily("cedar", eps=0.06, rho=0.2, calibration=0.8, bias={"plan": 2.0, "method": 2.0}),
    SolverFamily("dune", eps=0.08, rho=0.4, calibration=0.4, bias={"compute": 1.5}),
    SolverFamily("ember", eps=0.05, rho=0.0, calibration=1.2),
    SolverFamily("fjord", eps=0.10, rho=0.3, calibration=0.6, bias={"conclude": 2.0}),
    SolverFamily("grove", eps=0.03, rho=0.1, calibration=1.5, parse_fail=0.15),
    SolverFamily("heath", eps=0.15, rho=0.5, calibration=0.5, bias={"check": 1.0, "lookup": 0.5}),
    SolverFamily("iris", eps=0.25, rho=0.2, calibration=1.0),
)
"""The nine families, fixed before any measurement (one with parse failures above 10 %)."""


def benchmark(name: str) -> Benchmark:
    """The benchmark called ``name`` (``ValueError`` naming ``name`` otherwise)."""
    for b in BENCHMARKS:
        if b.name == name:
            return b
    raise ValueError(f"name must be one of {', '.join(b.name for b in BENCHMARKS)}; got {name!r}")


def family(name: str) -> SolverFamily:
    """The family called ``name`` (``ValueError`` naming ``name`` otherwise)."""
    for f in FAMILIES:
        if f.name == name:
            return f
    raise ValueError(f"name must be one of {', '.join(f.name for f in FAMILIES)}; got {name!r}")


@dataclass(frozen=True)
class Problems:
    """``C`` problems of one benchmark: step counts ``n`` ``(C,)``, step ``types`` (indices into
    :data:`STEP_TYPES`) and difficulties ``difficulty`` ``(C, n_max)`` (padding: type ``-1``, 0)."""

    benchmark: Benchmark
    n: np.ndarray
    types: np.ndarray
    difficulty: np.ndarray

    @property
    def n_max(self) -> int:
        return self.types.shape[1]


def sample_problems(bench: Benchmark, count: int, seed: int) -> Problems:
    """``count`` problems of ``bench``: a plan step first (if the benchmark has one), middle steps drawn
    from its ``mix``, a ``conclude`` step last; difficulties from its depth profile."""
    count = check_int("count", count, minimum=1)
    rng = np.random.default_rng(check_seed("seed", seed))
    n = rng.integers(bench.min_steps, bench.max_steps + 1, size=count)
    n_max = int(bench.max_steps)
    middle = np.array([_TYPE_INDEX[t] for t in ("method", "compute", "lookup", "check")])
    types = middle[rng.choice(4, size=(count, n_max), p=bench.mix)]
    k = np.arange(n_max)
    types[:, 0] = _TYPE_INDEX["plan"] if bench.plan else types[:, 0]
    types[np.arange(count), n - 1] = _TYPE_INDEX["conclude"]
    types[k[None, :] >= n[:, None]] = -1
    x = k[None, :] / np.maximum(n[:, None] - 1, 1)
    difficulty = bench.profile(x) * rng.lognormal(0.0, bench.spread, size=(count, n_max))
    difficulty[types < 0] = 0.0
    return Problems(bench, n, types, difficulty)


def error_prob(
    problems: Problems, fam: SolverFamily, approach: np.ndarray, rows: np.ndarray, k: int
) -> np.ndarray:
    """Error probability ``e`` of step ``k`` of the problems ``rows`` under ``approach`` (module doc)."""
    types = problems.types[rows, k]
    bias = fam.type_bias()[np.maximum(types, 0)]
    e = fam.eps * problems.difficulty[rows, k] * np.asarray(APPROACHES)[approach] * bias
    return np.minimum(e, MAX_ERROR)


@dataclass(frozen=True)
class Chains:
    """``C`` sampled chains: their ``problems`` and ``family``; the state before each step,
    ``correct_before`` ``(C, n_max + 1)`` (column ``n`` the state before the answer) and ``approach_before``;
    observable features per step, ``confidence``, ``confidence_min``, ``length`` ``(C, n_max)``; the final
    ``correct`` ``(C,)`` (y₀) and ``parse_failed``."""

    problems: Problems
    family: SolverFamily
    correct_before: np.ndarray
    approach_before: np.ndarray
    confidence: np.ndarray
    confidence_min: np.ndarray
    length: np.ndarray
    correct: np.ndarray
    parse_failed: np.ndarray

    @property
    def n(self) -> np.ndarray:
        return self.problems.n

    def __len__(self) -> int:
        return len(self.correct)


def _step(problems, fam, rows, k, correct, approach, rng):
    """Apply step ``k`` to rollouts of problems ``rows`` in states (correct, approach); returns the new
    state and the step's error probability."""
    types = problems.types[rows, k]
    e = error_prob(problems, fam, approach, rows, k)
    u = rng.random(len(rows))
    decision = _DECISION[np.maximum(types, 0)] & (types >= 0)
    check = _CHECK[np.maximum(types, 0)] & (types >= 0)
    work = (types >= 0) & ~decision & ~check
    new_approach = np.where(u < e, 1 + rng.integers(0, 2, len(rows)), 0)
    approach = np.where(decision, new_approach, approach)
    correct = np.where(work & (u < e), False, correct)
    correct = np.where(check & ~correct & (u < fam.rho), True, correct)
    return correct, approach, e


def _answer(problems, fam, rows, correct, rng):
    """Final answers: right when the state is correct, a lucky guess otherwise; parse failures."""
    guess = rng.random(len(rows)) < 1.0 / problems.benchmark.answers
    failed = rng.random(len(rows)) < fam.parse_fail
    return (correct | guess) & ~failed, failed


def sample_chains(problems: Problems, fam: SolverFamily, seed: int) -> Chains:
    """One chain per problem by ``fam``, with its states, features and answer."""
    rng = np.random.default_rng(check_seed("seed", seed))
    C, n_max = problems.types.shape
    rows = np.arange(C)
    correct = np.ones(C, dtype=bool)
    approach = np.zeros(C, dtype=np.int64)
    correct_before = np.zeros((C, n_max + 1), dtype=bool)
    approach_before = np.zeros((C, n_max + 1), dtype=np.int64)
    confidence = np.zeros((C, n_max))
    confidence_min = np.zeros((C, n_max))
    length = np.zeros((C, n_max), dtype=np.int64)
    for k in range(n_max):
        live = k < problems.n
        correct_before[:, k], approach_before[:, k] = correct, approach
        new_correct, new_approach, e = _step(problems, fam, rows, k, correct, approach, rng)
        correct, approach = np.where(live, new_correct, correct), np.where(live, new_approach, approach)
        logit = np.log1p(-e) - np.log(e + 1e-9)
        tokens = 4 + rng.poisson(6, C)  # a step's length in tokens
        noise = fam.calibration * rng.standard_normal((C, 2))
        confidence[:, k] = np.where(live, 1 / (1 + np.exp(-(logit + noise[:, 0]))), 0.0)
        dip = np.abs(noise[:, 1]) * np.log(tokens)  # the weakest token of a longer step dips lower
        confidence_min[:, k] = np.where(live, 1 / (1 + np.exp(-(logit + noise[:, 0] - dip))), 0.0)
        length[:, k] = np.where(live, tokens, 0)
    end = problems.n
    correct_before[rows, end] = correct
    approach_before[rows, end] = approach
    answer, failed = _answer(problems, fam, rows, correct, rng)
    return Chains(
        problems, fam, correct_before, approach_before, confidence, confidence_min, length, answer, failed
    )


def resample_from(chains: Chains, r: int, seed: int) -> np.ndarray:
    """Resample every chain from every step: ``(C, n_max + 1, r)`` booleans, entry ``[c, k, j]`` whether the
    ``j``-th continuation of chain ``c`` that keeps steps ``1…k`` (0-based: regenerates ``k…n−1`` and the
    answer; ``k = n`` regenerates the answer only) answers right; ``False`` beyond ``n``."""
    r = check_int("r", r, minimum=1)
    problems, fam = chains.problems, chains.family
    C, n_max = problems.types.shape
    cc, kk = np.nonzero(np.arange(n_max + 1)[None, :] <= problems.n[:, None])  # every (chain, start)
    rows = np.repeat(cc, r)
    start = np.repeat(kk, r)
    rng = np.random.default_rng(check_seed("seed", seed))
    correct = chains.correct_before[rows, start].copy()
    approach = chains.approach_before[rows, start].copy()
    for k in range(n_max):
        live = (k >= start) & (k < problems.n[rows])
        if not live.any():
            continue
        new_correct, new_approach, _ = _step(problems, fam, rows, k, correct, approach, rng)
        correct, approach = np.where(live, new_correct, correct), np.where(live, new_approach, approach)
    answer, _ = _answer(problems, fam, rows, correct, rng)
    out = np.zeros((C, n_max + 1, r), dtype=bool)
    out[rows, start, np.tile(np.arange(r), len(cc))] = answer
    return out


def exact_success_prob(chains: Chains) -> np.ndarray:
    """The exact probability ``p_k`` that a continuation from step ``k`` answers right, ``(C, n_max + 1)``
    (NaN beyond ``n``): dynamic programming over the six states ``(correct, approach)``."""
    problems, fam = chains.problems, chains.family
    C, n_max = problems.types.shape
    cc, kk = np.nonzero(np.arange(n_max + 1)[None, :] <= problems.n[:, None])
    M = len(cc)
    A = len(APPROACHES)
    dist = np.zeros((M, 2, A))  # [m, correct, approach]
    dist[np.arange(M), chains.correct_before[cc, kk].astype(int), chains.approach_before[cc, kk]] = 1.0
    for k in range(n_max):
        live = (k >= kk) & (k < problems.n[cc])
        if not live.any():
            continue
        types = problems.types[cc, k]
        new = np.zeros_like(dist)
        for a in range(A):
            e = error_prob(problems, fam, np.full(M, a), cc, k)
            decision = _DECISION[np.maximum(types, 0)] & (types >= 0)
            check = _CHECK[np.maximum(types, 0)] & (types >= 0)
            work = ~decision & ~check
            for c in (0, 1):
                mass = dist[:, c, a]
                # decision: keep correctness, draw the approach
                new[:, c, 0] += np.where(decision, mass * (1 - e), 0.0)
                for b in (1, 2):
                    new[:, c, b] += np.where(decision, mass * e / 2, 0.0)
                # work: a correct state errs with probability e
                if c == 1:
                    new[:, 1, a] += np.where(work, mass * (1 - e), 0.0)
                    new[:, 0, a] += np.where(work, mass * e, 0.0)
                    new[:, 1, a] += np.where(check, mass, 0.0)
                else:
                    new[:, 0, a] += np.where(work, mass, 0.0)
                    new[:, 1, a] += np.where(check, mass * fam.rho, 0.0)
                    new[:, 0, a] += np.where(check, mass * (1 - fam.rho), 0.0)
        dist = np.where(live[:, None, None], new, dist)
    p_correct = dist[:, 1, :].sum(1)
    guess = 1.0 / problems.benchmark.answers
    p = (p_correct + (1 - p_correct) * guess) * (1 - fam.parse_fail)
    out = np.full((C, n_max + 1), np.nan)
    out[cc, kk] = p
    return out


def cell_seed(seed: int, bench: Benchmark, fam: SolverFamily, part: int) -> int:
    """An independent seed for ``part`` of the cell ``(fam, bench)`` of a run with ``seed``."""
    return sub_seed(seed, BENCHMARKS.index(bench), FAMILIES.index(fam), part)
