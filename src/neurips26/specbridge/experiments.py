"""Chapter 19's experiments: every method on the same evaluation tasks, graded by the three layers.

One split (:func:`~neurips26.specbridge.benchmark.benchmark`): the pool is what few-shot methods draw
exemplars from and what mining reads; the evaluation tasks are graded. For each method (:data:`ALL_METHODS`)
and task, :func:`~neurips26.specbridge.methods.generate` asks the method's model (the offline policy by
default) for a spec from the task's description and signature only, and
:func:`~neurips26.specbridge.evaluate.evaluate_spec` grades it: the structural judge (alignment), the
executor (computable) and the ``lean-auto`` prover (proof); the ``smt`` profile is graded beside it as a
sensitivity row. :func:`run_method` caches a method's results (:func:`neurips26.cache.cached`);
:func:`rates`, :func:`aligned_failing`, :func:`unbounded_stats` and :func:`pattern_rates` summarise them;
:func:`mining_stats` compares mining with and without the round trip. Everything is deterministic: the same
numbers on any CPU.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from neurips26.cache import cached
from neurips26.llm import ChatModel
from neurips26.progress import progress
from neurips26.specbridge.benchmark import PATTERNS, Split, Task, benchmark
from neurips26.specbridge.evaluate import Evaluation, StructuralJudge, evaluate_spec
from neurips26.specbridge.execute import unbounded_quantifier
from neurips26.specbridge.methods import ALL_METHODS, Generation, generate
from neurips26.specbridge.minispec.parser import SpecSyntaxError, parse_spec
from neurips26.validation import check_choice, check_seed

LAYERS: tuple[str, ...] = ("alignment", "computable", "proof")
LABELS: dict[str, str] = {
    "direct": "direct",
    "few_shot": "few-shot",
    "few_shot_cot": "few-shot + CoT",
    "nlfp": "NLFP only",
    "specbridge": "SpecBridge",
    "no_round_trip": "SpecBridge, mined without round trip",
    "random_hints": "SpecBridge, random hints",
}


@dataclass(frozen=True, eq=False)
class MethodResult:
    """One method on the evaluation tasks: its ``generations`` and ``evaluations`` (one per task, in order),
    ``smt_proof`` (the proof layer under the ``smt`` profile, per task) and the ``seconds`` it took."""

    method: str
    generations: tuple[Generation, ...]
    evaluations: tuple[Evaluation, ...]
    smt_proof: tuple[bool, ...]
    seconds: float

    def rate(self, layer: str, mask: Sequence[bool] | None = None) -> float:
        """The share of tasks (where ``mask`` is True) passing ``layer`` (``"smt"``: proof under smt)."""
        check_choice("layer", layer, (*LAYERS, "smt"))
        passed = list(self.smt_proof) if layer == "smt" else [e.passed(layer) for e in self.evaluations]
        if mask is not None:
            passed = [p for p, m in zip(passed, mask, strict=True) if m]
        return sum(passed) / len(passed) if passed else float("nan")


def _split(scale: str) -> Split:
    return benchmark(scale)


def run_method(
    method: str,
    scale: str = "default",
    *,
    seed: int = 0,
    backend: ChatModel | None = None,
    verbose: bool = False,
) -> MethodResult:
    """``method`` (one of :data:`~neurips26.specbridge.methods.ALL_METHODS`) on the evaluation tasks of
    ``benchmark(scale)``, graded on the three layers and on the ``smt`` proof profile. ``backend``: a
    :class:`neurips26.llm.ChatModel` instead of the offline policy (then nothing is cached). ``seed``: the
    random hints of the control."""
    method = check_choice("method", method, ALL_METHODS)
    seed = check_seed("seed", seed)
    if backend is not None and not isinstance(backend, ChatModel):
        raise TypeError(f"backend must be a ChatModel or None; got {type(backend).__name__}")

    def compute() -> MethodResult:
        split = _split(scale)
        start = time.perf_counter()
        judge = StructuralJudge()
        gens, evals, smt = [], [], []
        for task in progress(split.eval, desc=LABELS[method]):
            g = generate(method, task, backend=backend, pool=split.pool, seed=seed)
            gens.append(g)
            evals.append(evaluate_spec(task, g.spec_text, judge=judge))
            smt.append(bool(evaluate_spec(task, g.spec_text, layers=("proof",), profile="smt").proof))
        return MethodResult(method, tuple(gens), tuple(evals), tuple(smt), time.perf_counter() - start)

    if backend is not None:
        return compute()
    return cached(
        "specbridge-run",
        {"method": method, "scale": scale, "seed": seed},
        compute,
        package="neurips26.specbridge",
        verbose=verbose,
    )


def run_all(
    methods: Sequence[str] = ALL_METHODS, scale: str = "default", *, seed: int = 0, verbose: bool = False
) -> dict[str, MethodResult]:
    """:func:`run_method` for each of ``methods``, in order."""
    return {m: run_method(m, scale, seed=seed, verbose=verbose) for m in methods}


def rates(results: Mapping[str, MethodResult]) -> dict[str, dict[str, float]]:
    """``{method: {layer: pass rate}}`` over the evaluation tasks, with ``"smt"`` beside the three layers."""
    return {m: {layer: r.rate(layer) for layer in (*LAYERS, "smt")} for m, r in results.items()}


def aligned_failing(result: MethodResult) -> int:
    """Tasks whose spec the judge calls aligned yet which fail computable validation."""
    return sum(bool(e.aligned) and not e.computable for e in result.evaluations)


@dataclass(frozen=True)
class UnboundedStats:
    """Generated specs (over the given methods) with an unbounded quantifier: how many, how many pass the
    proof layer (``lean-auto``), how many pass computable validation (none can), and which (method, task)."""

    unbounded: int
    proved: int
    computable: int
    where: tuple[tuple[str, str], ...]


def _is_unbounded(text: str) -> bool:
    try:
        spec = parse_spec(text)
    except (SpecSyntaxError, ValueError, TypeError):
        return False
    return any(unbounded_quantifier(e, spec.helpers) is not None for e in (spec.pre, spec.post))


def unbounded_stats(results: Mapping[str, MethodResult]) -> UnboundedStats:
    """:class:`UnboundedStats` over every method's generated specs that parse."""
    n = proved = computable = 0
    where = []
    for m, r in results.items():
        for g, e in zip(r.generations, r.evaluations, strict=True):
            if e.parsed and _is_unbounded(g.spec_text):
                n += 1
                proved += bool(e.proof)
                computable += bool(e.computable)
                where.append((m, g.task_id))
    return UnboundedStats(n, proved, computable, tuple(where))


def pattern_rates(
    results: Mapping[str, MethodResult], tasks: Sequence[Task], layer: str = "computable"
) -> dict[str, dict[str, float]]:
    """``{pattern: {method: pass rate of layer over the tasks using that pattern}}`` (patterns that occur)."""
    out: dict[str, dict[str, float]] = {}
    for pattern in PATTERNS:
        mask = [pattern in t.patterns for t in tasks]
        if any(mask):
            out[pattern] = {m: r.rate(layer, mask) for m, r in results.items()}
    return out


def task_count(scale: str = "default") -> tuple[int, int]:
    """``(pool, eval)`` sizes at ``scale``."""
    split = _split(scale)
    return len(split.pool), len(split.eval)


__all__ = [
    "LABELS",
    "LAYERS",
    "MethodResult",
    "UnboundedStats",
    "aligned_failing",
    "pattern_rates",
    "rates",
    "run_all",
    "run_method",
    "task_count",
    "unbounded_stats",
]
