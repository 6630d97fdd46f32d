"""The three evaluation layers of a generated specification: alignment judge, computable tests, proofs.

A generated spec arrives as text. It is parsed, checked against the task's fixed signature and type-checked;
text that fails any of these fails every layer, and the error is recorded. Otherwise:

1. **Alignment.** A judge reads the requirement and the spec and says aligned or not. Offline, the
   :class:`StructuralJudge` plays a reader who skims: it reduces every top-level conjunct of the generated and
   the reference pre- and postcondition to a coarse *shape* (quantifier kinds in order, the connective
   skeleton, the head symbols of atoms) that ignores quantifier bounds, strictness (``<`` vs ``≤``), numeric
   literals, casts and ``Nat`` vs ``Int``, reads through helper definitions, and accepts when the multisets of
   shapes agree up to one missing or extra conjunct on each side. It is lenient on purpose: a dropped clause
   or a shifted bound goes unnoticed, which is exactly the weakness of judge-based grading that the tests of
   the other two layers expose. One guard goes beyond the shape count: an empty postcondition (``True``) is
   never aligned with a non-empty one. :class:`LLMJudge` asks a chat model instead and parses its
   ``ALIGNED`` / ``NOT ALIGNED`` line; a reply without one counts as not aligned (and is counted).
2. **Computable.** Every VERINA obligation (:mod:`~neurips26.specbridge.obligations`) is evaluated by the
   Python executor, with Lean's semantics. The layer passes iff every obligation holds; a spec that cannot
   be executed (an unbounded quantifier) or exceeds the step budget fails the layer for the task, with the
   reason recorded and its obligations left ``"unknown"``.
3. **Proof.** Every obligation goes to the prover (``neurips26.specbridge.prove``) under a proof profile;
   the layer passes iff every obligation is proved (for a negated obligation, ``¬P`` or ``¬Q`` proved).

For each failing computable obligation the evaluation names the top-level conjuncts responsible, so a
failure can be traced back to the plan clause that produced the conjunct: on a ``pre-sound`` or
``post-complete`` obligation, the conjuncts that are false; on a negated one (``pre-complete``,
``post-sound``) the whole formula holds where it should not, so every conjunct is blamed for being too weak
(listed in ``weak_conjuncts`` as well). A formula with no conjuncts (``True``) has nothing to blame.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from neurips26.llm.messages import Message
from neurips26.llm.protocol import ChatModel
from neurips26.specbridge.benchmark import Task
from neurips26.specbridge.execute import (
    DEFAULT_MAX_STEPS,
    ExecutionBudget,
    NotExecutable,
    check_value,
    evaluate,
    typed,
)
from neurips26.specbridge.minispec.ast import (
    RESULT,
    TO_INT,
    TO_NAT,
    Binary,
    Call,
    Expr,
    FilterLength,
    Helper,
    Ite,
    Lit,
    Quant,
    Spec,
    Unary,
    Var,
    conjuncts,
    map_children,
)
from neurips26.specbridge.minispec.parser import parse_spec
from neurips26.specbridge.minispec.typecheck import TypedSpec
from neurips26.specbridge.obligations import Obligation, Outcome, check_signature, obligations, summarise
from neurips26.validation import check_choice, check_int

LAYERS: tuple[str, ...] = ("alignment", "computable", "proof")
PROFILES: tuple[str, ...] = ("lean-auto", "smt")

# ----------------------------------------------------------------------------------------------------------
# Judges
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """A judge's decision: ``aligned``, a short ``reason``, and ``has_verdict`` (False when an LLM reply
    carried no verdict line and was counted as not aligned)."""

    aligned: bool
    reason: str
    has_verdict: bool = True


@runtime_checkable
class Judge(Protocol):
    """Anything that decides whether a spec text captures a task's requirement."""

    def judge(self, task: Task, spec_text: str) -> Verdict: ...


def _substitute(e: Expr, values: Mapping[str, Expr]) -> Expr:
    """``e`` with the free variables named in ``values`` replaced (binders shadow)."""
    if not values:
        return e
    if isinstance(e, Var):
        return values.get(e.name, e)
    if isinstance(e, Quant):
        inner = {k: v for k, v in values.items() if k != e.var}
        bound = None if e.bound is None else _substitute(e.bound, values)
        return Quant(e.kind, e.var, e.ty, bound, _substitute(e.body, inner))
    if isinstance(e, FilterLength):
        inner = {k: v for k, v in values.items() if k != e.var}
        return FilterLength(_substitute(e.items, values), e.var, _substitute(e.pred, inner))
    return map_children(e, lambda c: _substitute(c, values))


def inline_helpers(e: Expr, helpers: tuple[Helper, ...]) -> Expr:
    """``e`` with every call of a helper replaced by the helper's body on the call's arguments."""
    by_name = {h.name: h for h in helpers}

    def go(x: Expr) -> Expr:
        if isinstance(x, Call) and x.fn in by_name:
            h = by_name[x.fn]
            args = [go(a) for a in x.args]
            return go(_substitute(h.body, {p.name: a for p, a in zip(h.params, args, strict=True)}))
        return map_children(x, go)

    return go(e)


_FLIP = {">": "<", "≥": "≤"}


def shape(e: Expr, bound: frozenset[str] = frozenset()) -> str:
    """The coarse shape of ``e`` a skimming reader compares: bound variables become ``·``, numerals ``#``,
    casts (``↑x``, ``x.toNat``) vanish, quantifier bounds and binder types are dropped,
    ``<``/``≤``/``>``/``≥`` all read as one order relation (operands turned so the smaller side comes
    first), and the operands of ``∧``, ``∨``, ``↔``, ``=``, ``≠``, ``+`` and ``*`` are sorted."""
    if isinstance(e, Var):
        return "·" if e.name in bound else e.name
    if isinstance(e, Lit):
        return {"bool": "bool", "int": "#"}.get(e.kind, "lit")
    if isinstance(e, Unary):
        if e.op == "-":
            return "#" if isinstance(e.arg, Lit) else f"neg({shape(e.arg, bound)})"
        return f"¬{shape(e.arg, bound)}"
    if isinstance(e, Binary):
        op = e.op
        if op in ("∧", "∨"):
            parts: list[str] = []
            stack = [e]
            while stack:
                x = stack.pop()
                if isinstance(x, Binary) and x.op == op:
                    stack += [x.left, x.right]
                else:
                    parts.append(shape(x, bound))
            return f"{op}[{','.join(sorted(parts))}]"
        left, right = shape(e.left, bound), shape(e.right, bound)
        if op in _FLIP:
            left, right = right, left
        if op in ("<", "≤", ">", "≥"):
            return f"≤({left},{right})"
        if op in ("↔", "=", "≠", "+", "*"):
            a, b = sorted((left, right))
            return f"{op}{{{a},{b}}}"
        return f"{op}({left},{right})"
    if isinstance(e, Call):
        if e.fn in (TO_INT, TO_NAT) and len(e.args) == 1:
            return shape(e.args[0], bound)
        return f"{e.fn}({','.join(shape(a, bound) for a in e.args)})"
    if isinstance(e, FilterLength):
        return f"filter({shape(e.items, bound)}|{shape(e.pred, bound | {e.var})})"
    if isinstance(e, Ite):
        return f"ite({shape(e.cond, bound)},{shape(e.then_, bound)},{shape(e.else_, bound)})"
    if isinstance(e, Quant):
        return f"{e.kind}.{shape(e.body, bound | {e.var})}"
    raise TypeError(f"e must be a MiniSpec expression; got {type(e).__name__}")


def conjunct_shapes(spec: Spec, which: str) -> Counter[str]:
    """The multiset of :func:`shape` of the top-level conjuncts of the pre- (``which="pre"``) or
    postcondition (``"post"``) of ``spec``, helpers inlined."""
    check_choice("which", which, ("pre", "post"))
    formula = inline_helpers(spec.pre if which == "pre" else spec.post, spec.helpers)
    return Counter(shape(c) for c in conjuncts(formula))


class StructuralJudge:
    """The offline, deliberately lenient judge: aligned iff the conjunct shapes (:func:`conjunct_shapes`) of
    the generated and the reference postcondition agree up to one missing or extra conjunct, and those of
    the preconditions too; an empty postcondition never matches a non-empty one."""

    def __init__(self, tolerance: int = 1) -> None:
        self.tolerance = check_int("tolerance", tolerance, minimum=0)

    def __repr__(self) -> str:
        return f"StructuralJudge(tolerance={self.tolerance})"

    def compare(self, generated: Spec, reference: Spec) -> Verdict:
        """The verdict on ``generated`` against ``reference`` (both parsed specs)."""
        for name, s in (("generated", generated), ("reference", reference)):
            if not isinstance(s, Spec):
                raise TypeError(f"{name} must be a Spec; got {type(s).__name__}")
        notes, ok = [], True
        for which, label in (("post", "postcondition"), ("pre", "precondition")):
            g, r = conjunct_shapes(generated, which), conjunct_shapes(reference, which)
            missing, extra = sum((r - g).values()), sum((g - r).values())
            if missing + extra > self.tolerance:
                ok = False
            if which == "post" and not g and r:
                ok = False
                notes.append("postcondition is empty")
            notes.append(f"{label}: {missing} conjunct(s) missing, {extra} extra")
        return Verdict(ok, "; ".join(notes))

    def judge(self, task: Task, spec_text: str) -> Verdict:
        """Parse ``spec_text`` and the task's reference spec and :meth:`compare` them (text that does not
        parse is not aligned)."""
        if not isinstance(task, Task):
            raise TypeError(f"task must be a Task; got {type(task).__name__}")
        if not isinstance(spec_text, str):
            raise TypeError(f"spec_text must be a str; got {type(spec_text).__name__}")
        try:
            generated = parse_spec(spec_text)
        except ValueError as err:
            return Verdict(False, f"does not parse: {err}")
        return self.compare(generated, parse_spec(task.spec))


JUDGE_SYSTEM = (
    "You review formal specifications written in Lean 4. A specification is a precondition f_precond, "
    "which the valid inputs satisfy, and a postcondition f_postcond, which a correct result satisfies. "
    "It is aligned with a requirement when it accepts exactly the inputs the requirement allows and exactly "
    "the results it calls correct: neither weaker (accepting a wrong result) nor stronger (rejecting a right "
    "one)."
)

_VERDICT_LINE = re.compile(r"^(?:verdict\s*:\s*)?(not\s+aligned|aligned)[.!]?$", re.IGNORECASE)
_VERDICT_WORD = re.compile(r"\b(NOT\s+ALIGNED|ALIGNED)\b")


def parse_verdict(text: str) -> bool | None:
    """The verdict in a judge's reply: the last line reading ``ALIGNED`` or ``NOT ALIGNED`` (any case,
    optionally after ``Verdict:``, markdown emphasis ignored), else the last upper-case ``ALIGNED`` /
    ``NOT ALIGNED`` in the text; None when there is neither."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    for line in reversed(text.splitlines()):
        m = _VERDICT_LINE.match(line.strip().strip("*_`#> ").strip())
        if m:
            return not m.group(1).lower().startswith("not")
    words = _VERDICT_WORD.findall(text)
    if words:
        return not words[-1].startswith("NOT")
    return None


class LLMJudge:
    """A judge backed by a chat model: it shows the requirement, the fixed signature and the spec, asks for
    a short reason and a final ``ALIGNED`` / ``NOT ALIGNED`` line, decodes greedily and parses the verdict
    (:func:`parse_verdict`). ``calls`` counts the questions asked, ``no_verdict`` the replies without a
    verdict, which count as not aligned."""

    def __init__(self, backend: ChatModel, *, max_tokens: int = 256) -> None:
        if not isinstance(backend, ChatModel):
            raise TypeError(f"backend must be a ChatModel (with complete); got {type(backend).__name__}")
        self.backend = backend
        self.max_tokens = check_int("max_tokens", max_tokens, minimum=16)
        self.calls = 0
        self.no_verdict = 0

    def __repr__(self) -> str:
        return f"LLMJudge({self.backend!r}, calls={self.calls}, no_verdict={self.no_verdict})"

    def messages(self, task: Task, spec_text: str) -> tuple[Message, ...]:
        """The conversation sent to the model for ``task`` and ``spec_text``."""
        if not isinstance(task, Task):
            raise TypeError(f"task must be a Task; got {type(task).__name__}")
        if not isinstance(spec_text, str):
            raise TypeError(f"spec_text must be a str; got {type(spec_text).__name__}")
        user = (
            f"Requirement:\n{task.description.strip()}\n\n"
            f"Fixed Lean signature:\n{task.signature}\n\n"
            f"Specification:\n```lean\n{spec_text.strip()}\n```\n\n"
            "In one to three sentences, say whether the specification captures the requirement, naming any "
            "input or result it gets wrong. Then write your verdict alone on the last line: ALIGNED or "
            "NOT ALIGNED."
        )
        return (Message.system(JUDGE_SYSTEM), Message.user(user))

    def judge(self, task: Task, spec_text: str) -> Verdict:
        """Ask the model about ``spec_text`` for ``task`` and parse its verdict."""
        messages = self.messages(task, spec_text)
        reply = self.backend.complete(messages, temperature=0.0, max_tokens=self.max_tokens).text
        self.calls += 1
        verdict = parse_verdict(reply)
        reason = " ".join(reply.split())[:300]
        if verdict is None:
            self.no_verdict += 1
            return Verdict(False, f"no verdict in the reply: {reason}", has_verdict=False)
        return Verdict(verdict, reason)


# ----------------------------------------------------------------------------------------------------------
# Computable and proof layers, one obligation at a time
# ----------------------------------------------------------------------------------------------------------


def _env(ts: TypedSpec, ob: Obligation) -> dict[str, Any]:
    sig = ts.spec.signature
    values = dict(ob.inputs)
    names = [p.name for p in sig.params]
    if sorted(values) != sorted(names):
        raise ValueError(f"obligation inputs must name exactly the parameters {names}; got {sorted(values)}")
    env = {p.name: check_value(p.name, values[p.name], p.ty) for p in sig.params}
    if ob.which == "post":
        env[RESULT] = check_value(RESULT, ob.result, sig.ret)
    return env


def _formula(ts: TypedSpec, which: str) -> Expr:
    return ts.spec.pre if which == "pre" else ts.spec.post


def execute_obligation(
    spec: Spec | TypedSpec, obligation: Obligation, *, max_steps: int = DEFAULT_MAX_STEPS
) -> Outcome:
    """``"pass"`` when ``obligation`` holds for ``spec`` under the Python executor, ``"fail"`` when not.
    Raises :class:`~neurips26.specbridge.execute.NotExecutable` or
    :class:`~neurips26.specbridge.execute.ExecutionBudget` when the formula cannot be evaluated."""
    if not isinstance(obligation, Obligation):
        raise TypeError(f"obligation must be an Obligation; got {type(obligation).__name__}")
    ts = typed(spec)
    value = evaluate(
        _formula(ts, obligation.which), _env(ts, obligation), ts.types, ts.spec.helpers, max_steps=max_steps
    )
    return "pass" if bool(value) != obligation.negate else "fail"


def _prove(
    spec: Spec | TypedSpec, obligation: Obligation, profile: str, rlimit: int | None, max_steps: int
) -> tuple[Outcome, str]:
    from neurips26.specbridge.prove import prove

    kwargs: dict[str, Any] = {"negate": obligation.negate, "profile": profile, "max_steps": max_steps}
    if rlimit is not None:
        kwargs["rlimit"] = rlimit
    result = obligation.result_value if obligation.which == "post" else None
    answer = prove(spec, obligation.which, obligation.input_dict, result, **kwargs)
    outcome = {"proved": "pass", "refuted": "fail"}.get(answer.status, "unknown")
    return outcome, str(getattr(answer, "route", ""))  # type: ignore[return-value]


def prove_obligation(
    spec: Spec | TypedSpec,
    obligation: Obligation,
    *,
    profile: str = "lean-auto",
    rlimit: int | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> Outcome:
    """The prover's verdict on ``obligation`` under ``profile`` (``rlimit`` resource units per z3 call when
    given, else the prover's default): proved -> ``"pass"``, refuted -> ``"fail"``, else ``"unknown"``."""
    if not isinstance(obligation, Obligation):
        raise TypeError(f"obligation must be an Obligation; got {type(obligation).__name__}")
    check_choice("profile", profile, PROFILES)
    if rlimit is not None:
        rlimit = check_int("rlimit", rlimit, minimum=1)
    max_steps = check_int("max_steps", max_steps, minimum=1)
    return _prove(spec, obligation, profile, rlimit, max_steps)[0]


def blame(
    spec: Spec | TypedSpec, obligation: Obligation, *, max_steps: int = DEFAULT_MAX_STEPS
) -> tuple[tuple[tuple[str, int], ...], bool]:
    """The top-level conjuncts ``(which, index)`` responsible when ``obligation`` fails, and whether they
    are blamed for weakness: for a negated obligation every conjunct (True), otherwise the conjuncts that
    evaluate to false (False; a conjunct that cannot be evaluated is left out)."""
    if not isinstance(obligation, Obligation):
        raise TypeError(f"obligation must be an Obligation; got {type(obligation).__name__}")
    ts = typed(spec)
    which = obligation.which
    parts = conjuncts(_formula(ts, which))
    if obligation.negate:
        return tuple((which, i) for i in range(len(parts))), True
    env = _env(ts, obligation)
    out = []
    for i, c in enumerate(parts):
        try:
            value = evaluate(c, env, ts.types, ts.spec.helpers, max_steps=max_steps)
        except (NotExecutable, ExecutionBudget):
            continue
        if not value:
            out.append((which, i))
    return tuple(out), False


# ----------------------------------------------------------------------------------------------------------
# The evaluation of one spec
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Evaluation:
    """The three layers for one generated spec of task ``task_id``.

    ``parsed`` is False (and ``error`` says why) when the text does not parse, does not match the task's
    signature or is ill-typed; then every layer fails. ``aligned``, ``computable`` and ``proof`` are the
    layer verdicts (None for a layer not run). ``outcomes[layer]`` holds one outcome per obligation in the
    order of :func:`~neurips26.specbridge.obligations.obligations` (a single one for ``"alignment"``).
    ``not_executable`` is True when the executor met an unbounded quantifier. ``failing_conjuncts`` lists the
    ``(which, index)`` of the top-level conjuncts blamed for failing computable obligations, and
    ``weak_conjuncts`` the subset blamed because a negated obligation held. ``reasons[layer]`` explains a
    verdict in a line; ``proof_routes`` says, per obligation, how the prover decided it (or why not).

    Evaluations hold dicts, so they compare by value but are not hashable."""

    task_id: str
    parsed: bool
    error: str | None
    aligned: bool | None
    computable: bool | None
    proof: bool | None
    outcomes: dict[str, tuple[Outcome, ...]]
    not_executable: bool
    failing_conjuncts: tuple[tuple[str, int], ...]
    weak_conjuncts: tuple[tuple[str, int], ...] = ()
    reasons: dict[str, str] = field(default_factory=dict)
    proof_routes: tuple[str, ...] = ()

    def passed(self, layer: str) -> bool:
        """Whether ``layer`` passed (a layer not run did not)."""
        check_choice("layer", layer, LAYERS)
        return bool({"alignment": self.aligned, "computable": self.computable, "proof": self.proof}[layer])


def _check_layers(layers: object) -> tuple[str, ...]:
    if not isinstance(layers, tuple) or not layers:
        raise TypeError(f"layers must be a non-empty tuple of names from {LAYERS}; got {layers!r}")
    for name in layers:
        check_choice("layers", name, LAYERS)
    return tuple(name for name in LAYERS if name in layers)


def _counts(obs: tuple[Obligation, ...], outcomes: tuple[str, ...], what: str) -> str:
    bad = Counter(ob.kind for ob, o in zip(obs, outcomes, strict=True) if o == what)
    return ", ".join(f"{n} {kind}" for kind, n in sorted(bad.items()))


def _computable(
    ts: TypedSpec, obs: tuple[Obligation, ...], max_steps: int
) -> tuple[tuple[Outcome, ...], bool, str, list[tuple[str, int]], list[tuple[str, int]]]:
    outcomes: list[Outcome] = []
    broken: dict[str, str] = {}  # which -> why it cannot be evaluated
    not_executable = False
    failing: list[tuple[str, int]] = []
    weak: list[tuple[str, int]] = []
    for ob in obs:
        if ob.which in broken:
            outcomes.append("unknown")
            continue
        try:
            o = execute_obligation(ts, ob, max_steps=max_steps)
        except NotExecutable as err:
            not_executable = True
            broken[ob.which] = str(err)
            outcomes.append("unknown")
            continue
        except ExecutionBudget as err:
            outcomes.append("unknown")
            broken.setdefault(f"budget-{ob.which}", str(err))
            continue
        outcomes.append(o)
        if o == "fail":
            blamed, is_weak = blame(ts, ob, max_steps=max_steps)
            for pair in blamed:
                if pair not in failing:
                    failing.append(pair)
                if is_weak and pair not in weak:
                    weak.append(pair)
    if broken:
        reason = "; ".join(sorted(set(broken.values())))
    elif "fail" in outcomes:
        reason = f"failing obligations: {_counts(obs, tuple(outcomes), 'fail')}"
    else:
        reason = f"all {len(obs)} obligations hold"
    return tuple(outcomes), not_executable, reason, failing, weak


def _proof(
    ts: TypedSpec, obs: tuple[Obligation, ...], profile: str, rlimit: int | None, max_steps: int
) -> tuple[tuple[Outcome, ...], tuple[str, ...], str]:
    answers = [_prove(ts, ob, profile, rlimit, max_steps) for ob in obs]
    outcomes = tuple(o for o, _ in answers)
    routes = tuple(r for _, r in answers)
    if all(o == "pass" for o in outcomes):
        return outcomes, routes, f"all {len(obs)} obligations proved ({profile})"
    notes = []
    for what, word in (("fail", "refuted"), ("unknown", "unknown")):
        if what in outcomes:
            notes.append(f"{word}: {_counts(obs, outcomes, what)}")
    return outcomes, routes, f"{'; '.join(notes)} ({profile})"


def evaluate_spec(
    task: Task,
    spec_text: str,
    *,
    judge: Judge | None = None,
    profile: str = "lean-auto",
    rlimit: int | None = None,
    layers: tuple[str, ...] = LAYERS,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> Evaluation:
    """Grade ``spec_text`` for ``task`` on the evaluation ``layers`` (all three by default): alignment by
    ``judge`` (a :class:`StructuralJudge` when None), computable by the executor, proof by the prover under
    ``profile`` (``rlimit`` resource units per z3 call when given, else the prover's default). ``max_steps``
    bounds every evaluation, in both test layers."""
    if not isinstance(task, Task):
        raise TypeError(f"task must be a Task; got {type(task).__name__}")
    if not isinstance(spec_text, str):
        raise TypeError(f"spec_text must be a str; got {type(spec_text).__name__}")
    if judge is None:
        judge = StructuralJudge()
    elif not isinstance(judge, Judge):
        raise TypeError(f"judge must have a judge(task, spec_text) method; got {type(judge).__name__}")
    profile = check_choice("profile", profile, PROFILES)
    if rlimit is not None:
        rlimit = check_int("rlimit", rlimit, minimum=1)
    layers = _check_layers(layers)
    max_steps = check_int("max_steps", max_steps, minimum=1)
    obs = obligations(task)

    try:
        spec = parse_spec(spec_text)
        check_signature(spec, task)
        ts = typed(spec)
    except (ValueError, TypeError, RecursionError) as err:
        error = f"{type(err).__name__}: {err}"
        outcomes: dict[str, tuple[Outcome, ...]] = {}
        for layer in layers:
            outcomes[layer] = ("fail",) if layer == "alignment" else ("fail",) * len(obs)
        verdicts = {layer: (False if layer in layers else None) for layer in LAYERS}
        return Evaluation(
            task_id=task.id,
            parsed=False,
            error=error,
            aligned=verdicts["alignment"],
            computable=verdicts["computable"],
            proof=verdicts["proof"],
            outcomes=outcomes,
            not_executable=False,
            failing_conjuncts=(),
            reasons={layer: error for layer in layers},
        )

    outcomes = {}
    reasons: dict[str, str] = {}
    aligned = computable = proof = None
    not_executable = False
    failing: list[tuple[str, int]] = []
    weak: list[tuple[str, int]] = []
    routes: tuple[str, ...] = ()
    if "alignment" in layers:
        verdict = judge.judge(task, spec_text)
        aligned = bool(verdict.aligned)
        outcomes["alignment"] = ("pass" if aligned else "fail",)
        reasons["alignment"] = verdict.reason
    if "computable" in layers:
        results, not_executable, reasons["computable"], failing, weak = _computable(ts, obs, max_steps)
        outcomes["computable"] = results
        computable = summarise(results) == "pass"
    if "proof" in layers:
        outcomes["proof"], routes, reasons["proof"] = _proof(ts, obs, profile, rlimit, max_steps)
        proof = summarise(outcomes["proof"]) == "pass"
    return Evaluation(
        task_id=task.id,
        parsed=True,
        error=None,
        aligned=aligned,
        computable=computable,
        proof=proof,
        outcomes=outcomes,
        not_executable=not_executable,
        failing_conjuncts=tuple(failing),
        weak_conjuncts=tuple(weak),
        reasons=reasons,
        proof_routes=routes,
    )


__all__ = [
    "JUDGE_SYSTEM",
    "LAYERS",
    "PROFILES",
    "Evaluation",
    "Judge",
    "LLMJudge",
    "StructuralJudge",
    "Verdict",
    "blame",
    "conjunct_shapes",
    "evaluate_spec",
    "execute_obligation",
    "inline_helpers",
    "parse_verdict",
    "prove_obligation",
    "shape",
]
