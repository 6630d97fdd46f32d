"""VERINA's test obligations for a task, their three-valued outcomes and how outcomes are summarised.

A task's test data turn a candidate spec ``(P, Q)`` into four kinds of obligation, named as VERINA names
them (a precondition is *sound* when it accepts every valid input and *complete* when it rejects the
invalid ones; a postcondition is *complete* when it accepts every expected output and *sound* when it
rejects every wrong one):

* ``pre-sound``: ``P(x)`` for each valid test input ``x``;
* ``pre-complete``: ``¬P(x⁻)`` for each reject input ``x⁻``;
* ``post-complete``: ``Q(x, y*)`` for each test's expected output ``y*``;
* ``post-sound``: ``¬Q(x, y')`` for each unexpected output ``y'`` of a test.

Each obligation ends ``"pass"``, ``"fail"`` or ``"unknown"`` (a prover that gave up, a proposition that
could not be run). A summary fails when any obligation fails, is unknown when none fails but one is
unknown, and passes otherwise: unknown never counts as a pass. An empty set of obligations passes (a task
without reject inputs has nothing for ``pre-complete`` to check).

Obligations are frozen and hashable (lists in the test data become tuples), so they can key a cache.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from neurips26.specbridge.benchmark import Task
from neurips26.specbridge.minispec.ast import Spec
from neurips26.specbridge.minispec.typecheck import TypedSpec

KINDS: tuple[str, ...] = ("pre-sound", "pre-complete", "post-complete", "post-sound")
"""The four obligation kinds, in the order :func:`obligations` lists them."""

NEGATED: frozenset[str] = frozenset({"pre-complete", "post-sound"})
"""The kinds whose formula must be *false* (``¬P``, ``¬Q``)."""

Outcome = Literal["pass", "fail", "unknown"]
OUTCOMES: tuple[str, ...] = ("pass", "fail", "unknown")


def freeze(value: object) -> Any:
    """``value`` with every list (and tuple) turned into a tuple, recursively, so that it can be hashed."""
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: object) -> Any:
    """The inverse of :func:`freeze` for test data: tuples back to lists, as tasks store them."""
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class Obligation:
    """One VERINA obligation: ``kind`` (one of :data:`KINDS`), the position ``test_index`` of its test in
    ``task.tests`` (of its input in ``task.reject`` for ``pre-complete``), the ``inputs`` as
    ``(name, value)`` pairs in parameter order, the output ``result`` (None for precondition obligations)
    and ``negate`` (True when the formula must be false). Values are frozen (lists become tuples)."""

    kind: str
    test_index: int
    inputs: tuple[tuple[str, Any], ...]
    result: Any = None
    negate: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {self.kind!r}")
        if isinstance(self.test_index, bool) or not isinstance(self.test_index, int) or self.test_index < 0:
            raise ValueError(f"test_index must be a non-negative int; got {self.test_index!r}")
        pairs = self.inputs.items() if isinstance(self.inputs, Mapping) else self.inputs
        if not isinstance(pairs, Iterable) or isinstance(pairs, str):
            raise TypeError(
                f"inputs must be a mapping or (name, value) pairs; got {type(self.inputs).__name__}"
            )
        frozen = []
        for pair in pairs:
            if not isinstance(pair, tuple | list) or len(pair) != 2 or not isinstance(pair[0], str):
                raise TypeError(f"inputs must hold (name, value) pairs; got {pair!r}")
            frozen.append((pair[0], freeze(pair[1])))
        object.__setattr__(self, "inputs", tuple(frozen))
        object.__setattr__(self, "result", freeze(self.result))
        if not isinstance(self.negate, bool):
            raise TypeError(f"negate must be a bool; got {type(self.negate).__name__}")
        if self.negate != (self.kind in NEGATED):
            raise ValueError(f"negate must be {self.kind in NEGATED} for a {self.kind} obligation")
        if (self.result is None) != (self.which == "pre"):
            raise ValueError(f"result must be given exactly for postcondition obligations; kind {self.kind}")

    @property
    def which(self) -> str:
        """``"pre"`` or ``"post"``: the condition the obligation is about."""
        return self.kind.split("-")[0]

    @property
    def input_dict(self) -> dict[str, Any]:
        """The inputs as a dict of parameter name -> value (containers as lists, as tasks store them)."""
        return {name: thaw(value) for name, value in self.inputs}

    @property
    def result_value(self) -> Any:
        """The output (containers as lists), or None for a precondition obligation."""
        return thaw(self.result)


def _pairs(task: Task, inputs: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple((p.name, inputs[p.name]) for p in task.params)


def obligations(task: Task) -> tuple[Obligation, ...]:
    """Every obligation of ``task``, kind by kind in the order of :data:`KINDS`, tests in their order
    (``post-sound``: test by test, each test's unexpected outputs in order)."""
    if not isinstance(task, Task):
        raise TypeError(f"task must be a Task; got {type(task).__name__}")
    out: list[Obligation] = []
    for i, t in enumerate(task.tests):
        out.append(Obligation("pre-sound", i, _pairs(task, t.inputs)))
    for i, x in enumerate(task.reject):
        out.append(Obligation("pre-complete", i, _pairs(task, x), negate=True))
    for i, t in enumerate(task.tests):
        out.append(Obligation("post-complete", i, _pairs(task, t.inputs), t.expected))
    for i, t in enumerate(task.tests):
        for y in t.unexpected:
            out.append(Obligation("post-sound", i, _pairs(task, t.inputs), y, negate=True))
    return tuple(out)


def check_outcome(name: str, value: object) -> str:
    """``value`` if it is an :data:`Outcome`; ValueError naming ``name`` otherwise."""
    if not isinstance(value, str) or value not in OUTCOMES:
        raise ValueError(f"{name} must be one of {OUTCOMES}; got {value!r}")
    return value


def summarise(outcomes: Iterable[str]) -> Outcome:
    """``"fail"`` if any outcome fails, else ``"unknown"`` if any is unknown, else ``"pass"`` (also when
    there are none)."""
    if isinstance(outcomes, str) or not isinstance(outcomes, Iterable):
        raise TypeError(f"outcomes must be a sequence of {OUTCOMES}; got {type(outcomes).__name__}")
    seen = {check_outcome(f"outcomes[{i}]", o) for i, o in enumerate(outcomes)}
    if "fail" in seen:
        return "fail"
    if "unknown" in seen:
        return "unknown"
    return "pass"


def by_kind(obs: Iterable[Obligation], outcomes: Iterable[str]) -> dict[str, Outcome]:
    """VERINA's four verdicts: the :func:`summarise` of the ``outcomes`` of each kind's obligations (``obs``
    and ``outcomes`` in the same order)."""
    obs, outcomes = tuple(obs), tuple(outcomes)
    if len(obs) != len(outcomes):
        raise ValueError(f"outcomes must have one entry per obligation ({len(obs)}); got {len(outcomes)}")
    return {k: summarise(o for ob, o in zip(obs, outcomes, strict=True) if ob.kind == k) for k in KINDS}


def check_signature(spec: Spec | TypedSpec, task: Task) -> None:
    """Raise ValueError naming ``signature`` when the function name, the parameter names and types (in
    order) or the result type of ``spec`` differ from the fixed signature of ``task``."""
    if isinstance(spec, TypedSpec):
        spec = spec.source
    if not isinstance(spec, Spec):
        raise TypeError(f"spec must be a Spec; got {type(spec).__name__}")
    if not isinstance(task, Task):
        raise TypeError(f"task must be a Task; got {type(task).__name__}")
    sig = spec.signature
    problems = []
    if sig.name != task.name:
        problems.append(f"function name {sig.name} instead of {task.name}")
    got = [(p.name, str(p.ty)) for p in sig.params]
    want = [(p.name, str(p.ty)) for p in task.params]
    if got != want:
        show = lambda ps: " ".join(f"({n} : {t})" for n, t in ps) or "none"  # noqa: E731
        problems.append(f"parameters {show(got)} instead of {show(want)}")
    if sig.ret != task.ret:
        problems.append(f"result type {sig.ret} instead of {task.ret}")
    if problems:
        raise ValueError(
            f"signature of the spec differs from the task's ({task.signature}): " + "; ".join(problems)
        )


__all__ = [
    "KINDS",
    "NEGATED",
    "OUTCOMES",
    "Obligation",
    "Outcome",
    "by_kind",
    "check_outcome",
    "check_signature",
    "freeze",
    "obligations",
    "summarise",
    "thaw",
]
