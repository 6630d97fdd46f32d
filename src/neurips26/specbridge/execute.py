"""Evaluate MiniSpec in Python with Lean 4's semantics: the computable layer of spec validation.

Values: ``Nat`` and ``Int`` are Python ``int`` (a ``Nat`` is never negative), ``Bool`` and propositions are
``bool``, ``Char`` is a one-character ``str``, ``String`` is ``str``, ``List`` and ``Array`` are tuples. The
expression is the *elaborated* one of :mod:`neurips26.specbridge.minispec.typecheck` (numerals typed, Lean's
``↑`` casts explicit), and its type table decides what depends on types. The rules are Lean's:

* ``Nat`` subtraction truncates at 0 (``(3 : Nat) - 5 = 0``); ``Int`` ``/`` and ``%`` are Euclidean
  (``Int.ediv``/``Int.emod``: ``(-7) / 2 = -4``, ``(-7) % 2 = 1``, ``7 / (-2) = -3``, ``7 % (-2) = 1``),
  so the remainder is never negative; ``x / 0 = 0`` and ``x % 0 = x`` for both types;
* ``a[i]!`` is the element at ``i``, or the type's default (``0``; ``'A'`` for ``Char``) out of range. The
  index is a ``Nat`` after type checking, so it is never negative; a negative value would also give the
  default;
* ``x.toNat`` of a negative ``Int`` is 0 (of a ``Char``, its code point); ``take``/``drop`` clamp to the list;
  ``sum`` of the empty list is 0; ``List.Perm`` holds iff the two lists are the same multiset;
* ``∧``, ``∨``, ``→`` and ``if`` evaluate lazily, and a bounded quantifier ``∀ i, i < e → P`` tries
  ``i = 0, 1, …, e - 1`` and stops at the first counterexample (``∃``: the first witness).

An unbounded quantifier (``∀ x : Int, P``) has no finite evaluation, and Lean's ``decide`` needs a decision
procedure for the *whole* proposition; so an expression that contains one anywhere (also through a helper,
also in a branch that laziness would skip) raises :class:`NotExecutable` before anything is evaluated. Every
visited node costs one step; past ``max_steps`` the evaluation stops with :class:`ExecutionBudget`, the
analogue of a ``decide`` that exceeds the kernel's limits.
"""

from __future__ import annotations

import numbers
from collections import Counter
from collections.abc import Mapping
from typing import Any

from neurips26.specbridge.minispec.ast import (
    ABS,
    CHAR,
    COUNT,
    DROP,
    GET,
    LENGTH,
    MAX,
    MIN,
    NAT,
    PERM,
    RESULT,
    SIZE,
    SUM,
    TAKE,
    TO_INT,
    TO_LIST,
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
    Ty,
    Unary,
    Var,
)
from neurips26.specbridge.minispec.typecheck import TypedExpr, TypedSpec, check_spec, show
from neurips26.validation import check_int

DEFAULT_MAX_STEPS = 10**6
_DEFAULTS = {"Nat": 0, "Int": 0, "Char": "A"}


class NotExecutable(Exception):
    """The expression contains an unbounded quantifier (``expr``), which has no finite evaluation."""

    def __init__(self, expr: Expr) -> None:
        super().__init__(f"not executable: unbounded quantifier {show(expr)}")
        self.expr = expr


class ExecutionBudget(RuntimeError):
    """The evaluation visited more than ``max_steps`` nodes."""

    def __init__(self, max_steps: int) -> None:
        super().__init__(f"evaluation exceeded its budget of max_steps={max_steps} steps")
        self.max_steps = max_steps


# ----------------------------------------------------------------------------------------------------------
# Lean's integer operations
# ----------------------------------------------------------------------------------------------------------


def ediv(a: int, b: int) -> int:
    """Lean's ``Int.ediv`` (and ``Nat`` division): Euclidean quotient, ``a / 0 = 0``."""
    if b == 0:
        return 0
    return (a - a % abs(b)) // b


def emod(a: int, b: int) -> int:
    """Lean's ``Int.emod`` (and ``Nat`` modulus): Euclidean remainder in ``[0, |b|)``, ``a % 0 = a``."""
    if b == 0:
        return a
    return a % abs(b)


def unbounded_quantifier(expr: Expr, helpers: tuple[Helper, ...] = ()) -> Quant | None:
    """The first unbounded quantifier in ``expr`` or in a helper it calls (directly or not), else None."""
    by_name = {h.name: h for h in helpers}
    seen: set[str] = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Quant):
            if e.bound is None:
                return e
            stack += [e.bound, e.body]
        elif isinstance(e, Unary):
            stack.append(e.arg)
        elif isinstance(e, Binary):
            stack += [e.right, e.left]
        elif isinstance(e, Call):
            stack += reversed(e.args)
            h = by_name.get(e.fn)
            if h is not None and h.name not in seen:
                seen.add(h.name)
                stack.append(h.body)
        elif isinstance(e, FilterLength):
            stack += [e.pred, e.items]
        elif isinstance(e, Ite):
            stack += [e.else_, e.then_, e.cond]
    return None


# ----------------------------------------------------------------------------------------------------------
# The evaluator
# ----------------------------------------------------------------------------------------------------------


class _Machine:
    def __init__(self, types: Mapping[Expr, Any], helpers: tuple[Helper, ...], max_steps: int) -> None:
        self.helpers = {h.name: h for h in helpers}
        self.max_steps = max_steps
        self.steps = 0
        self.types = types
        self.nat_sub: set[int] = set()  # ids of Nat subtractions
        self.defaults: dict[int, object] = {}  # ids of a[i]! nodes -> default value
        self.scanned: set[int] = set()

    def scan(self, e: Expr) -> None:
        """Read the types the evaluation needs (subtraction kind, index defaults) once per node."""
        stack = [e]
        while stack:
            n = stack.pop()
            if id(n) in self.scanned:
                continue
            self.scanned.add(id(n))
            if isinstance(n, Binary):
                if n.op == "-":
                    if self.type_of(n) == NAT:
                        self.nat_sub.add(id(n))
                stack += [n.left, n.right]
            elif isinstance(n, Unary):
                stack.append(n.arg)
            elif isinstance(n, Call):
                if n.fn == GET:
                    t = self.type_of(n)
                    self.defaults[id(n)] = _DEFAULTS[t.name]
                stack += n.args
                h = self.helpers.get(n.fn)
                if h is not None:
                    stack.append(h.body)
            elif isinstance(n, FilterLength):
                stack += [n.items, n.pred]
            elif isinstance(n, Ite):
                stack += [n.cond, n.then_, n.else_]
            elif isinstance(n, Quant):
                stack += [n.body] + ([n.bound] if n.bound is not None else [])

    def type_of(self, n: Expr) -> Any:
        try:
            return self.types[n]
        except KeyError:
            raise ValueError(
                f"types has no type for {show(n)}; evaluate the elaborated expression of check_spec/elaborate"
            ) from None

    def tick(self) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise ExecutionBudget(self.max_steps)

    def ev(self, e: Expr, env: dict[str, Any]) -> Any:
        self.tick()
        t = type(e)
        if t is Var:
            try:
                return env[e.name]  # type: ignore[attr-defined]
            except KeyError:
                raise ValueError(f"env has no value for variable {e.name!r}") from None  # type: ignore[attr-defined]
        if t is Lit:
            return e.value  # type: ignore[attr-defined]
        if t is Binary:
            return self.binary(e, env)  # type: ignore[arg-type]
        if t is Unary:
            v = self.ev(e.arg, env)  # type: ignore[attr-defined]
            return (not v) if e.op == "¬" else -v  # type: ignore[attr-defined]
        if t is Call:
            return self.call(e, env)  # type: ignore[arg-type]
        if t is Quant:
            return self.quant(e, env)  # type: ignore[arg-type]
        if t is Ite:
            c = self.ev(e.cond, env)  # type: ignore[attr-defined]
            return self.ev(e.then_ if c else e.else_, env)  # type: ignore[attr-defined]
        if t is FilterLength:
            items = self.ev(e.items, env)  # type: ignore[attr-defined]
            return sum(1 for v in items if self.bound(e.var, v, e.pred, env))  # type: ignore[attr-defined]
        raise TypeError(f"expr must be a MiniSpec Expr; got {type(e).__name__}")

    def bound(self, var: str, value: Any, body: Expr, env: dict[str, Any]) -> Any:
        """Evaluate ``body`` with ``var`` bound to ``value`` (restoring the outer binding after)."""
        missing = object()
        old = env.get(var, missing)
        env[var] = value
        try:
            return self.ev(body, env)
        finally:
            if old is missing:
                del env[var]
            else:
                env[var] = old

    def binary(self, e: Binary, env: dict[str, Any]) -> Any:
        op = e.op
        if op == "∧":
            return bool(self.ev(e.left, env)) and bool(self.ev(e.right, env))
        if op == "∨":
            return bool(self.ev(e.left, env)) or bool(self.ev(e.right, env))
        if op == "→":
            return (not self.ev(e.left, env)) or bool(self.ev(e.right, env))
        a = self.ev(e.left, env)
        b = self.ev(e.right, env)
        if op == "↔":
            return bool(a) == bool(b)
        if op == "+":
            return a + b
        if op == "-":
            return max(a - b, 0) if id(e) in self.nat_sub else a - b
        if op == "*":
            return a * b
        if op == "/":
            return ediv(a, b)
        if op == "%":
            return emod(a, b)
        if op == "=":
            return a == b
        if op == "≠":
            return a != b
        if op == "<":
            return a < b
        if op == "≤":
            return a <= b
        if op == ">":
            return a > b
        if op == "≥":
            return a >= b
        raise ValueError(f"unknown operator {op!r} in {show(e)}")

    def call(self, e: Call, env: dict[str, Any]) -> Any:
        fn = e.fn
        h = self.helpers.get(fn)
        if h is not None:
            values = [self.ev(a, env) for a in e.args]
            return self.ev(h.body, {p.name: v for p, v in zip(h.params, values, strict=True)})
        args = [self.ev(a, env) for a in e.args]
        if fn in (SIZE, LENGTH):
            return len(args[0])
        if fn == GET:
            c, i = args
            return c[i] if 0 <= i < len(c) else self.defaults[id(e)]
        if fn == TO_LIST:
            return tuple(args[0])
        if fn == COUNT:
            return args[0].count(args[1])
        if fn == SUM:
            return sum(args[0])
        if fn == TAKE:
            return args[0][: args[1]]
        if fn == DROP:
            return args[0][args[1] :]
        if fn == PERM:
            return Counter(args[0]) == Counter(args[1])
        if fn == TO_NAT:
            x = args[0]
            return ord(x) if isinstance(x, str) else max(x, 0)
        if fn == TO_INT:
            return args[0]
        if fn == ABS:
            return abs(args[0])
        if fn == MIN:
            return min(args)
        if fn == MAX:
            return max(args)
        raise ValueError(f"unknown function {fn!r} in {show(e)}")

    def quant(self, e: Quant, env: dict[str, Any]) -> bool:
        if e.bound is None:
            raise NotExecutable(e)
        n = self.ev(e.bound, env)
        want = e.kind == "∀"
        for i in range(max(n, 0)):
            if bool(self.bound(e.var, i, e.body, env)) != want:
                return not want
        return want


def evaluate(
    expr: Expr,
    env: Mapping[str, Any],
    types: Mapping[Expr, Any] | TypedSpec | TypedExpr,
    helpers: tuple[Helper, ...] = (),
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> Any:
    """The value of the elaborated ``expr`` under ``env`` (variable name -> value), with the node types
    ``types`` (a table, or the :class:`TypedSpec`/:class:`TypedExpr` holding it) and the elaborated
    ``helpers`` it calls. Raises :class:`NotExecutable` for an unbounded quantifier anywhere in it and
    :class:`ExecutionBudget` past ``max_steps`` visited nodes."""
    if not isinstance(expr, Expr):
        raise TypeError(f"expr must be a MiniSpec Expr; got {type(expr).__name__}")
    if not isinstance(env, Mapping):
        raise TypeError(f"env must be a mapping of variable name -> value; got {type(env).__name__}")
    if isinstance(types, TypedSpec | TypedExpr):
        types = types.types
    if not isinstance(types, Mapping):
        raise TypeError(f"types must be a mapping of node -> type; got {type(types).__name__}")
    if not isinstance(helpers, tuple | list) or not all(isinstance(h, Helper) for h in helpers):
        raise TypeError(f"helpers must be a tuple of Helper; got {helpers!r}")
    max_steps = check_int("max_steps", max_steps, minimum=1)
    q = unbounded_quantifier(expr, tuple(helpers))
    if q is not None:
        raise NotExecutable(q)
    machine = _Machine(types, tuple(helpers), max_steps)
    machine.scan(expr)
    return machine.ev(expr, dict(env))


# ----------------------------------------------------------------------------------------------------------
# Test values and VERINA's obligations
# ----------------------------------------------------------------------------------------------------------


def check_value(name: str, value: object, ty: Ty) -> Any:
    """``value`` as the Python value of Lean type ``ty`` (lists become tuples); ``TypeError`` naming ``name``
    when it is not one (``a must be Array Int; got ...``)."""
    bad = TypeError(f"{name} must be {ty}; got {type(value).__name__} {value!r}")
    if ty.is_container:
        if not isinstance(value, list | tuple):
            raise bad
        return tuple(check_value(f"{name}[{i}]", v, Ty(ty.element)) for i, v in enumerate(value))  # type: ignore[arg-type]
    if ty.name in ("Nat", "Int"):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise bad
        if ty.name == "Nat" and value < 0:
            raise TypeError(f"{name} must be Nat (a non-negative int); got {value!r}")
        return int(value)
    if ty.name == "Bool":
        if not isinstance(value, bool):
            raise bad
        return value
    if ty == CHAR:
        if not isinstance(value, str) or len(value) != 1:
            raise TypeError(f"{name} must be Char (a one-character str); got {value!r}")
        return value
    if not isinstance(value, str):
        raise bad
    return value


_CACHE: dict[str, TypedSpec] = {}
_CACHE_SIZE = 4096


def typed(spec: Spec | TypedSpec) -> TypedSpec:
    """The :class:`TypedSpec` of ``spec`` (type-checked once and remembered; a TypedSpec comes back as is)."""
    if isinstance(spec, TypedSpec):
        return spec
    if not isinstance(spec, Spec):
        raise TypeError(f"spec must be a Spec or TypedSpec; got {type(spec).__name__}")
    key = repr(spec)  # not the Spec itself: dataclass equality confuses Lit(True) with Lit(1)
    hit = _CACHE.get(key)
    if hit is None:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()
        hit = _CACHE[key] = check_spec(spec)
    return hit


def check_inputs(ts: TypedSpec, inputs: object) -> dict[str, Any]:
    """The environment of an obligation: ``inputs`` keyed by exactly the spec's parameters, each value
    checked against its parameter's type (:func:`check_value`)."""
    if not isinstance(inputs, Mapping):
        raise TypeError(f"inputs must be a dict of parameter name -> value; got {type(inputs).__name__}")
    params = ts.spec.signature.params
    names = [p.name for p in params]
    missing = [n for n in names if n not in inputs]
    extra = [k for k in inputs if k not in names]
    if missing or extra:
        raise ValueError(
            f"inputs must give exactly the parameters {names}; missing {missing}, unexpected {extra}"
        )
    return {p.name: check_value(p.name, inputs[p.name], p.ty) for p in params}


def precondition(
    spec: Spec | TypedSpec, inputs: Mapping[str, Any], *, max_steps: int = DEFAULT_MAX_STEPS
) -> bool:
    """The truth value of ``f_precond`` on ``inputs`` (keyed by parameter name, each checked against its
    parameter type first)."""
    ts = typed(spec)
    env = check_inputs(ts, inputs)
    return bool(evaluate(ts.spec.pre, env, ts.types, ts.spec.helpers, max_steps=max_steps))


def postcondition(
    spec: Spec | TypedSpec, inputs: Mapping[str, Any], result: Any, *, max_steps: int = DEFAULT_MAX_STEPS
) -> bool:
    """The truth value of ``f_postcond`` on ``inputs`` and ``result``. The precondition is not evaluated: its
    proof argument ``h_precond`` carries no data, and VERINA asks the postcondition only of valid inputs."""
    ts = typed(spec)
    env = check_inputs(ts, inputs)
    env[RESULT] = check_value(RESULT, result, ts.spec.signature.ret)
    return bool(evaluate(ts.spec.post, env, ts.types, ts.spec.helpers, max_steps=max_steps))


__all__ = [
    "check_inputs",
    "DEFAULT_MAX_STEPS",
    "ExecutionBudget",
    "NotExecutable",
    "check_value",
    "ediv",
    "emod",
    "evaluate",
    "postcondition",
    "precondition",
    "typed",
    "unbounded_quantifier",
]
