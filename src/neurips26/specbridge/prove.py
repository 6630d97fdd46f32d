"""Test-driven proof validation: prove or refute one ground obligation of a spec under a proof profile.

An obligation is ``f_precond x`` or ``f_postcond x y`` (or its negation, for a reject input or an unexpected
output) on concrete test values. No Lean toolchain is available, so two deterministic profiles stand in for
Lean's proof automation:

* ``lean-auto`` (the default) emulates what ``decide``, ``simp`` and ``omega`` settle without a human:

  1. a goal without an unbounded quantifier is *evaluated* by the executor within a step budget, as
     ``decide`` within the kernel's limits: true is proved, false refuted, an exhausted budget unknown;
  2. otherwise the goal is simplified the way ``simp`` would: every sub-formula free of unbounded quantifiers
     is evaluated to ``True``/``False`` and the connectives around it are simplified (``True ↔ P`` to ``P``,
     ``False ↔ P`` to ``¬P``), bounded quantifiers with a concrete bound are unrolled, helpers are unfolded,
     and negations are pushed inwards. A conjunction is proved when every part is, refuted when one part is;
     a disjunction dually;
  3. a universal goal ``∀ x̄, B`` (after the negation is pushed in) whose body is quantifier-free *linear*
     integer arithmetic (no product of two non-constant terms, no ``/`` or ``%`` by a non-constant) is
     decided by z3 on ``B`` with ``x̄`` free and quantifier instantiation off, like ``omega`` after
     ``intro``; a counterexample refutes it;
  4. an existential goal ``∃ x, B`` is proved only by a *witness*: the integers with ``|k| ≤ 32`` (``Nat``:
     ``0 … 32``), then the integers of the obligation's values (inputs and result, container elements
     included), each instantiated body going through these same steps; no witness leaves it unknown;
  5. anything else is unknown.

* ``smt`` hands the whole encoded formula, quantifiers included, to z3 under its resource limit (see
  :mod:`neurips26.specbridge.z3_backend`): a much stronger prover on concrete goals, reported beside
  ``lean-auto`` as a sensitivity analysis.

Both profiles are sound, so ``lean-auto`` never proves what ``smt`` refutes, and it never refutes what the
executor evaluates to true (it *is* the executor there). Every verdict depends only on the obligation, the
step budget and ``rlimit``, never on the machine or its load.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import z3

from neurips26.specbridge.execute import (
    DEFAULT_MAX_STEPS,
    ExecutionBudget,
    NotExecutable,
    check_inputs,
    check_value,
    evaluate,
    typed,
    unbounded_quantifier,
)
from neurips26.specbridge.minispec.ast import NAT, RESULT, Binary, Call, Expr, Ite, Quant, Spec, Unary
from neurips26.specbridge.minispec.typecheck import TypedSpec
from neurips26.specbridge.z3_backend import (
    PROVED,
    REFUTED,
    RLIMIT,
    UNKNOWN,
    NotEncodable,
    check,
    encode,
)
from neurips26.validation import check_choice, check_int

PROFILES: tuple[str, ...] = ("lean-auto", "smt")
WHICH: tuple[str, ...] = ("pre", "post")
WITNESS_RADIUS = 32
"""``lean-auto`` tries the integers ``-32 … 32`` as witnesses of an existential goal."""

ROUTES: tuple[str, ...] = (
    "decide",  # evaluated by the executor
    "omega",  # a linear universal goal decided by z3 without quantifier instantiation
    "witness",  # an existential goal proved by a witness
    "smt",  # decided by full z3
    "decide-budget",  # unknown: the evaluation ran out of steps
    "nonlinear",  # unknown: a universal goal outside linear arithmetic
    "quantified",  # unknown: a universal goal with a quantifier left in its body
    "no-witness",  # unknown: no candidate witnessed an existential goal
    "omega-unknown",  # unknown: z3 gave up on a linear universal goal within rlimit
    "smt-unknown",  # unknown: full z3 gave up within rlimit
    "not-encodable",  # unknown: the goal uses a construct the z3 encoder leaves out
    "opaque",  # unknown: a quantified goal in a position lean-auto does not take apart
)
"""The words :attr:`ProofResult.route` is made of (decided parts joined by ``+``)."""


@dataclass(frozen=True)
class ProofResult:
    """The ``status`` (``"proved"``, ``"refuted"`` or ``"unknown"``) of an obligation under ``profile``, and
    the ``route`` that decided it (the :data:`ROUTES` used, joined by ``+``), or why it stayed unknown."""

    status: str
    profile: str
    route: str


# ----------------------------------------------------------------------------------------------------------
# Obligations
# ----------------------------------------------------------------------------------------------------------


def _check_which(which: object) -> str:
    return check_choice("which", which, WHICH)


def _obligation(
    spec: Spec | TypedSpec, which: str, inputs: object, result: object
) -> tuple[TypedSpec, Expr, dict[str, Any]]:
    """The typed spec, the elaborated condition and the checked concrete values of an obligation."""
    which = _check_which(which)
    ts = typed(spec)
    env = check_inputs(ts, inputs)
    if which == "pre":
        if result is not None:
            raise ValueError("result must be None for a precondition obligation (which='pre')")
        return ts, ts.spec.pre, env
    if result is None:
        raise ValueError("result must be given for a postcondition obligation (which='post')")
    env[RESULT] = check_value(RESULT, result, ts.spec.signature.ret)
    return ts, ts.spec.post, env


def obligation_formula(
    spec: Spec | TypedSpec,
    which: str,
    inputs: Mapping[str, Any],
    result: Any = None,
    *,
    negate: bool = False,
    fold: bool = True,
) -> z3.BoolRef:
    """The z3 formula of the obligation (``f_precond inputs``, or ``f_postcond inputs result``; negated when
    ``negate``) that the ``smt`` profile checks; ``fold=False`` leaves all scalar arithmetic to z3."""
    if not isinstance(negate, bool):
        raise TypeError(f"negate must be a bool; got {type(negate).__name__}")
    ts, expr, env = _obligation(spec, which, inputs, result)
    formula = encode(expr, env, ts.types, ts.spec.helpers, fold=fold).formula
    return z3.Not(formula) if negate else formula


# ----------------------------------------------------------------------------------------------------------
# lean-auto: simplification into a goal tree, then the per-shape decision
# ----------------------------------------------------------------------------------------------------------

# Goal tree nodes (tuples, built and consumed only here):
#   ("const", bool)                     a decided sub-goal
#   ("and", [goals]) / ("or", [goals])  connectives after negations were pushed in
#   ("quant", kind, Quant, env, neg)    an unbounded quantifier; ``kind`` already accounts for ``neg``,
#                                       and the body is meant negated when ``neg``
#   ("opaque", reason)                  something lean-auto does not take apart


class _LeanAuto:
    def __init__(self, ts: TypedSpec, values: list[int], rlimit: int, max_steps: int) -> None:
        self.ts = ts
        self.types = ts.types
        self.helpers = ts.spec.helpers
        self.by_name = {h.name: h for h in self.helpers}
        self.values = values
        self.rlimit = rlimit
        self.max_steps = max_steps
        self.fresh = 0

    # -- simplification --------------------------------------------------------------------------------------

    def value(self, e: Expr, env: dict[str, Any]) -> Any:
        return evaluate(e, env, self.types, self.helpers, max_steps=self.max_steps)

    @staticmethod
    def join(kind: str, parts: list[tuple]) -> tuple:
        """``and``/``or`` of ``parts`` with constants simplified away."""
        unit = kind == "and"
        kept = []
        for p in parts:
            if p[0] == "const":
                if p[1] != unit:
                    return ("const", not unit)
                continue
            kept.extend(p[1] if p[0] == kind else [p])
        if not kept:
            return ("const", unit)
        return kept[0] if len(kept) == 1 else (kind, kept)

    def simp(self, e: Expr, env: dict[str, Any], neg: bool) -> tuple:
        if unbounded_quantifier(e, self.helpers) is None:
            try:
                return ("const", bool(self.value(e, env)) != neg)
            except ExecutionBudget:
                return ("opaque", "decide-budget")
        if isinstance(e, Unary) and e.op == "¬":
            return self.simp(e.arg, env, not neg)
        if isinstance(e, Binary) and e.op in ("∧", "∨"):
            kind = "and" if (e.op == "∧") != neg else "or"
            return self.join(kind, [self.simp(e.left, env, neg), self.simp(e.right, env, neg)])
        if isinstance(e, Binary) and e.op == "→":
            kind = "and" if neg else "or"
            return self.join(kind, [self.simp(e.left, env, not neg), self.simp(e.right, env, neg)])
        if isinstance(e, Binary) and e.op == "↔":
            left = self.simp(e.left, env, False)
            if left[0] == "const":
                return self.simp(e.right, env, neg != (not left[1]))
            right = self.simp(e.right, env, False)
            if right[0] == "const":
                return self.simp(e.left, env, neg != (not right[1]))
            # (A ∧ B) ∨ (¬A ∧ ¬B), negated: (A ∧ ¬B) ∨ (¬A ∧ B)
            nl = self.simp(e.left, env, True)
            nr = self.simp(e.right, env, True)
            first = self.join("and", [left, nr if neg else right])
            second = self.join("and", [nl, right if neg else nr])
            return self.join("or", [first, second])
        if isinstance(e, Quant):
            if e.bound is None:
                kind = "∀" if (e.kind == "∀") != neg else "∃"
                return ("quant", kind, e, env, neg)
            try:
                n = self.value(e.bound, env)
            except (NotExecutable, ExecutionBudget):
                return ("opaque", "opaque")
            if n > self.max_steps:
                return ("opaque", "decide-budget")
            kind = "and" if (e.kind == "∀") != neg else "or"
            return self.join(kind, [self.simp(e.body, {**env, e.var: i}, neg) for i in range(max(n, 0))])
        if isinstance(e, Ite):
            try:
                c = self.value(e.cond, env)
            except (NotExecutable, ExecutionBudget):
                return ("opaque", "opaque")
            return self.simp(e.then_ if c else e.else_, env, neg)
        if isinstance(e, Call) and e.fn in self.by_name:
            h = self.by_name[e.fn]
            try:
                args = [self.value(a, env) for a in e.args]
            except (NotExecutable, ExecutionBudget):
                return ("opaque", "opaque")
            return self.simp(h.body, {p.name: v for p, v in zip(h.params, args, strict=True)}, neg)
        return ("opaque", "opaque")

    # -- decision --------------------------------------------------------------------------------------------

    def decide(self, goal: tuple) -> tuple[str, str]:
        tag = goal[0]
        if tag == "const":
            return (PROVED if goal[1] else REFUTED), "decide"
        if tag == "opaque":
            return UNKNOWN, goal[1]
        if tag in ("and", "or"):
            outcomes = [self.decide(g) for g in goal[1]]
            win, lose = (REFUTED, PROVED) if tag == "and" else (PROVED, REFUTED)
            for status, route in outcomes:
                if status == win:
                    return status, route
            for status, route in outcomes:
                if status == UNKNOWN:
                    return status, route
            routes = list(dict.fromkeys(r for _, r in outcomes))
            return lose, "+".join(routes)
        _, kind, q, env, neg = goal
        if kind == "∀":
            return self.universal(q, env, neg)
        return self.existential(q, env, neg)

    def universal(self, q: Quant, env: dict[str, Any], neg: bool) -> tuple[str, str]:
        env = dict(env)
        hyps = []
        body: Expr = q
        while isinstance(body, Quant) and body.bound is None and ((body.kind == "∀") != neg):
            self.fresh += 1
            x = z3.Int(f"{body.var}!{self.fresh}")
            env[body.var] = x
            if body.ty == NAT:
                hyps.append(x >= 0)
            body = body.body
        try:
            enc = encode(body, env, self.types, self.helpers)
        except NotEncodable:
            return UNKNOWN, "not-encodable"
        if not enc.quantifier_free:
            return UNKNOWN, "quantified"
        if not enc.linear:
            return UNKNOWN, "nonlinear"
        formula = z3.Not(enc.formula) if neg else enc.formula
        if hyps:
            formula = z3.Implies(z3.And(hyps), formula)
        status = check(formula, self.rlimit, quantifiers=False)
        return status, ("omega" if status != UNKNOWN else "omega-unknown")

    def existential(self, q: Quant, env: dict[str, Any], neg: bool) -> tuple[str, str]:
        radius = [0] + [s * k for k in range(1, WITNESS_RADIUS + 1) for s in (1, -1)]
        candidates = list(dict.fromkeys(radius + self.values))
        if q.ty == NAT:
            candidates = [k for k in candidates if k >= 0]
        for k in candidates:
            status, route = self.decide(self.simp(q.body, {**env, q.var: k}, neg))
            if status == PROVED:
                return PROVED, "witness" if route == "decide" else f"witness+{route}"
        return UNKNOWN, "no-witness"


def _integers(values: Mapping[str, Any]) -> list[int]:
    """The integers among the obligation's values (scalars and container elements), sorted, once each."""
    out: set[int] = set()
    for v in values.values():
        for x in v if isinstance(v, tuple) else (v,):
            if isinstance(x, int) and not isinstance(x, bool):
                out.add(x)
    return sorted(out)


# ----------------------------------------------------------------------------------------------------------
# The entry point
# ----------------------------------------------------------------------------------------------------------


def prove(
    spec: Spec | TypedSpec,
    which: str,
    inputs: Mapping[str, Any],
    result: Any = None,
    *,
    negate: bool = False,
    profile: str = "lean-auto",
    rlimit: int = RLIMIT,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> ProofResult:
    """Try to prove the obligation ``f_precond inputs`` (``which="pre"``) or ``f_postcond inputs result``
    (``which="post"``), or its negation when ``negate``, with the proof ``profile`` (``"lean-auto"`` or
    ``"smt"``); z3 calls get ``rlimit`` resource units each and evaluations ``max_steps`` steps. Raises
    :class:`~neurips26.specbridge.z3_backend.ProverTimeout` if z3 reaches its wall-clock safety cap."""
    which = _check_which(which)
    profile = check_choice("profile", profile, PROFILES)
    rlimit = check_int("rlimit", rlimit, minimum=1)
    max_steps = check_int("max_steps", max_steps, minimum=1)
    if not isinstance(negate, bool):
        raise TypeError(f"negate must be a bool; got {type(negate).__name__}")
    ts, expr, env = _obligation(spec, which, inputs, result)
    if profile == "smt":
        try:
            formula = encode(expr, env, ts.types, ts.spec.helpers).formula
        except NotEncodable:
            return ProofResult(UNKNOWN, profile, "not-encodable")
        status = check(z3.Not(formula) if negate else formula, rlimit)
        return ProofResult(status, profile, "smt" if status != UNKNOWN else "smt-unknown")
    auto = _LeanAuto(ts, _integers(env), rlimit, max_steps)
    status, route = auto.decide(auto.simp(expr, env, negate))
    return ProofResult(status, profile, route)


__all__ = [
    "PROFILES",
    "ROUTES",
    "RLIMIT",
    "WHICH",
    "WITNESS_RADIUS",
    "ProofResult",
    "obligation_formula",
    "prove",
]
