"""Encode MiniSpec formulas over concrete values into z3, with Lean 4's semantics, and check them.

A proof obligation of the chapter is *ground*: the inputs and the result are concrete values, and only an
unbounded quantifier (``∀ x : Int, P``) introduces a symbolic variable. The encoder reads the *elaborated*
spec of :mod:`neurips26.specbridge.minispec.typecheck` (numerals typed, Lean's ``↑`` casts explicit) with its
type table, the same input as :mod:`neurips26.specbridge.execute`, and produces a z3 ``BoolRef``:

* ``Nat`` and ``Int`` are z3 ``Int``; a symbolic ``Nat`` carries the hypothesis ``x ≥ 0``. ``Nat``
  subtraction is ``If(a - b < 0, 0, a - b)``; ``/`` and ``%`` are SMT-LIB ``div``/``mod``, which are
  Euclidean exactly like Lean's ``Int.ediv``/``Int.emod``, guarded for a zero divisor (``x / 0 = 0``,
  ``x % 0 = x``, where SMT-LIB leaves the value unspecified). ``Bool`` and propositions are z3 ``Bool``;
  a ``Char`` is its code point.
* Containers and strings are always concrete (MiniSpec has no list constructors), so ``size``, ``toList``,
  ``take``/``drop`` and ``List.Perm`` are computed on the Python values. ``a[i]!`` with a symbolic index is
  an ``If`` chain over the positions ending in the type's default; ``count``, ``sum`` and filter-length with
  symbolic parts are sums of ``If`` terms.
* A bounded quantifier whose bound is concrete is unrolled into a conjunction (``∀``) or disjunction (``∃``);
  with a symbolic bound it becomes a guarded ``ForAll``/``Exists``. An unbounded one is ``z3.ForAll`` /
  ``z3.Exists`` over a fresh ``Int`` (a ``Nat`` one with ``0 ≤ x``).
* With ``fold=True`` (the default) operations on concrete operands are computed in Python with the same
  rules, so a ground obligation reaches z3 already reduced; ``fold=False`` hands every scalar operation to z3,
  which is how the tests compare z3's arithmetic with the executor's.

Left out on purpose: ``take``/``drop`` by a symbolic count and an ``if`` that chooses between containers
under a symbolic condition (:class:`NotEncodable`); the chapter's specs never need them.

**Budget.** :func:`check` gives each solver call z3's deterministic resource limit ``rlimit``. What we
observed in z3 5.4.1: the counter (the ``rlimit count`` statistic) belongs to the whole z3 context and only
grows, but each ``check()`` receives the limit *relative to the count at its start*, so the budget is per
call. What a call spends, however, depends a little on what the context built before (shared terms and
caches): ``∃ k : Int, k * k = 144`` needed 383 units in a fresh process and 376 after sixty unrelated checks
in the same context, so a verdict near the limit could flip with the order of earlier work. :func:`check`
therefore runs every call on a fresh solver in a *fresh context* (the formula is translated into it; about 10
ms extra), where the count depends on the formula and the limit alone: that goal is unknown at 378 units and
proved at 379, before and after any other work; the count measures solver work, not time, so neither the CPU
nor the load changes it. When the limit runs out z3 answers ``unknown`` with the reason ``max. resource limit
exceeded`` or, depending on where it stops, ``canceled``; both are an ordinary "unknown". A wall-clock cap (10
s) stays only as a safety net and raises :class:`ProverTimeout` instead of returning a verdict, so that no
verdict depends on the machine's speed.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import z3

from neurips26.specbridge.execute import ediv, emod
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
    Ty,
    Unary,
    Var,
)
from neurips26.specbridge.minispec.typecheck import TypedExpr, TypedSpec, show
from neurips26.validation import check_float, check_int

RLIMIT = 10**5
"""Default z3 resource limit per solver call."""

WALL_CAP_S = 10.0
"""Wall-clock safety cap per solver call, in seconds; reaching it raises :class:`ProverTimeout`."""

PROVED, REFUTED, UNKNOWN = "proved", "refuted", "unknown"
VERDICTS: tuple[str, ...] = (PROVED, REFUTED, UNKNOWN)

_DEFAULTS = {"Nat": 0, "Int": 0, "Char": "A"}
_SCALARS = ("Nat", "Int", "Bool", "Char")


class NotEncodable(ValueError):
    """The expression uses a construct the encoder deliberately leaves out (``expr`` is the node)."""

    def __init__(self, message: str, expr: Expr | None = None) -> None:
        super().__init__(message)
        self.expr = expr


class ProverTimeout(RuntimeError):
    """A solver call ran into the wall-clock safety cap (``seconds``) before its resource limit."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"z3 reached the wall-clock cap of {seconds} s before its resource limit")
        self.seconds = seconds


@dataclass(frozen=True)
class Encoding:
    """An encoded formula with what the proof profiles need to know about it: ``linear`` is False when it
    multiplies two non-constant terms or divides by a non-constant one; ``quantifier_free`` is False when it
    contains a z3 quantifier (unbounded, or bounded by a symbolic bound)."""

    formula: z3.BoolRef
    linear: bool
    quantifier_free: bool


def _is_z3(v: object) -> bool:
    return isinstance(v, z3.ExprRef)


class _Encoder:
    def __init__(self, types: Mapping[Expr, Any], helpers: tuple[Helper, ...], fold: bool) -> None:
        self.types = types
        self.helpers = {h.name: h for h in helpers}
        self.fold = fold
        self.linear = True
        self.quantifier_free = True
        self.fresh = 0

    # -- values ----------------------------------------------------------------------------------------------

    def type_of(self, e: Expr) -> Any:
        try:
            return self.types[e]
        except KeyError:
            raise ValueError(
                f"types has no type for {show(e)}; encode the elaborated expression of check_spec/elaborate"
            ) from None

    @staticmethod
    def lift(v: Any) -> z3.ExprRef:
        """The z3 term of a scalar value (a Char becomes its code point)."""
        if _is_z3(v):
            return v
        if isinstance(v, bool):
            return z3.BoolVal(v)
        if isinstance(v, int):
            return z3.IntVal(v)
        if isinstance(v, str) and len(v) == 1:
            return z3.IntVal(ord(v))
        raise NotEncodable(f"value {v!r} has no z3 scalar encoding")

    def out(self, v: Any, ty: Any) -> Any:
        """``v`` as the encoder passes it on: lifted into z3 for a scalar unless folding is on."""
        if not self.fold and isinstance(ty, Ty) and ty.name in _SCALARS and not _is_z3(v):
            return self.lift(v)
        return v

    @staticmethod
    def const_int(v: Any) -> int | None:
        if _is_z3(v):
            s = z3.simplify(v)
            return s.as_long() if z3.is_int_value(s) else None
        return v

    @staticmethod
    def const_bool(v: Any) -> bool | None:
        if _is_z3(v):
            s = z3.simplify(v)
            return True if z3.is_true(s) else False if z3.is_false(s) else None
        return bool(v)

    @staticmethod
    def constant(v: Any) -> bool:
        return not _is_z3(v) or z3.is_int_value(v) or z3.is_true(v) or z3.is_false(v)

    def var(self, name: str) -> z3.ArithRef:
        self.fresh += 1
        return z3.Int(f"{name}!{self.fresh}")

    # -- the recursion ---------------------------------------------------------------------------------------

    def enc(self, e: Expr, env: dict[str, Any]) -> Any:
        if isinstance(e, Var):
            if e.name not in env:
                raise ValueError(f"env has no value for variable {e.name!r}")
            return self.out(env[e.name], self.type_of(e))
        if isinstance(e, Lit):
            return self.out(e.value, self.type_of(e) if not isinstance(e.value, bool) else Ty("Bool"))
        if isinstance(e, Unary):
            v = self.enc(e.arg, env)
            if e.op == "¬":
                return (not v) if not _is_z3(v) else z3.Not(v)
            return -v
        if isinstance(e, Binary):
            return self.binary(e, env)
        if isinstance(e, Call):
            return self.call(e, env)
        if isinstance(e, Ite):
            c = self.enc(e.cond, env)
            cb = self.const_bool(c)
            if cb is not None:
                return self.enc(e.then_ if cb else e.else_, env)
            ty = self.type_of(e)
            if isinstance(ty, Ty) and ty.name not in _SCALARS:
                raise NotEncodable(f"if with a symbolic condition over {ty} in {show(e)}", e)
            return z3.If(c, self.lift(self.enc(e.then_, env)), self.lift(self.enc(e.else_, env)))
        if isinstance(e, FilterLength):
            items = self.enc(e.items, env)
            hits = [self.bind(e.var, v, e.pred, env) for v in items]
            if all(not _is_z3(h) for h in hits):
                return self.out(sum(1 for h in hits if h), NAT)
            return self.total([z3.If(self.lift(h), 1, 0) for h in hits])
        if isinstance(e, Quant):
            return self.quant(e, env)
        raise TypeError(f"expr must be a MiniSpec Expr; got {type(e).__name__}")

    def bind(self, var: str, value: Any, body: Expr, env: dict[str, Any]) -> Any:
        return self.enc(body, {**env, var: value})

    @staticmethod
    def total(terms: list[Any]) -> Any:
        return z3.Sum(terms) if terms else z3.IntVal(0)

    def binary(self, e: Binary, env: dict[str, Any]) -> Any:
        op = e.op
        if op in ("∧", "∨", "→"):
            a = self.enc(e.left, env)
            ab = a if not _is_z3(a) else None
            if ab is not None:  # lazy, as the executor: the right side is not encoded when decided
                if op == "∧":
                    return self.enc(e.right, env) if ab else False
                if op == "∨":
                    return True if ab else self.enc(e.right, env)
                return self.enc(e.right, env) if ab else True
            b = self.lift(self.enc(e.right, env))
            if op == "∧":
                return z3.And(a, b)
            if op == "∨":
                return z3.Or(a, b)
            return z3.Implies(a, b)
        a = self.enc(e.left, env)
        b = self.enc(e.right, env)
        both = not _is_z3(a) and not _is_z3(b)
        if op == "↔":
            return bool(a) == bool(b) if both else self.lift(a) == self.lift(b)
        if op in ("=", "≠"):
            if both:
                same = a == b
            else:
                ty = self.type_of(e.left)
                if not isinstance(ty, Ty) or ty.name not in _SCALARS:  # containers and strings are concrete
                    raise NotEncodable(f"comparison of symbolic {ty} values in {show(e)}", e)
                same = self.lift(a) == self.lift(b)
            if op == "=":
                return same
            return (not same) if both else z3.Not(same)
        if op in ("<", "≤", ">", "≥"):
            if both:
                return {"<": a < b, "≤": a <= b, ">": a > b, "≥": a >= b}[op]
            x, y = self.lift(a), self.lift(b)
            return {"<": x < y, "≤": x <= y, ">": x > y, "≥": x >= y}[op]
        nat = self.type_of(e) == NAT
        if op == "+":
            return a + b if both else self.lift(a) + self.lift(b)
        if op == "-":
            if both:
                return max(a - b, 0) if nat else a - b
            d = self.lift(a) - self.lift(b)
            return z3.If(d < 0, 0, d) if nat else d
        if op == "*":
            if both:
                return a * b
            if not self.constant(a) and not self.constant(b):
                self.linear = False
            return self.lift(a) * self.lift(b)
        if op in ("/", "%"):
            if both:
                return ediv(a, b) if op == "/" else emod(a, b)
            if not self.constant(b):
                self.linear = False
            x, y = self.lift(a), self.lift(b)
            if op == "/":
                return z3.If(y == 0, 0, x / y)  # z3's Int `/` is SMT-LIB div (Euclidean)
            return z3.If(y == 0, x, x % y)  # z3's Int `%` is SMT-LIB mod (never negative)
        raise ValueError(f"unknown operator {op!r} in {show(e)}")

    def call(self, e: Call, env: dict[str, Any]) -> Any:
        fn = e.fn
        h = self.helpers.get(fn)
        if h is not None:
            values = [self.enc(a, env) for a in e.args]
            return self.enc(h.body, {p.name: v for p, v in zip(h.params, values, strict=True)})
        args = [self.enc(a, env) for a in e.args]
        ty = self.type_of(e)
        if fn in (SIZE, LENGTH):
            return self.out(len(args[0]), NAT)
        if fn == GET:
            c, i = args
            default = _DEFAULTS[ty.name]
            k = self.const_int(i)
            if k is not None:
                return self.out(c[k] if 0 <= k < len(c) else default, ty)
            term = self.lift(default)
            for pos in range(len(c) - 1, -1, -1):
                term = z3.If(i == pos, self.lift(c[pos]), term)
            return term
        if fn == TO_LIST:
            return tuple(args[0])
        if fn == COUNT:
            items, x = args
            if not _is_z3(x):
                return self.out(items.count(x), NAT)
            return self.total([z3.If(self.lift(v) == x, 1, 0) for v in items])
        if fn == SUM:
            if self.fold:
                return sum(args[0])
            return self.total([self.lift(v) for v in args[0]])
        if fn in (TAKE, DROP):
            n = self.const_int(args[1])
            if n is None:
                raise NotEncodable(f"{fn} by a symbolic count in {show(e)}", e)
            return args[0][:n] if fn == TAKE else args[0][n:]
        if fn == PERM:
            return Counter(args[0]) == Counter(args[1])
        if fn == TO_NAT:
            x = args[0]
            if isinstance(x, str):
                return self.out(ord(x), NAT)
            if self.type_of(e.args[0]) == CHAR:
                return x  # a symbolic Char is already its code point
            return max(x, 0) if not _is_z3(x) else z3.If(x < 0, 0, x)
        if fn == TO_INT:
            return args[0]
        if fn == ABS:
            x = args[0]
            return abs(x) if not _is_z3(x) else z3.If(x < 0, -x, x)
        if fn in (MIN, MAX):
            a, b = args
            if not _is_z3(a) and not _is_z3(b):
                return min(a, b) if fn == MIN else max(a, b)
            x, y = self.lift(a), self.lift(b)
            return z3.If(x <= y, x, y) if fn == MIN else z3.If(x <= y, y, x)
        raise ValueError(f"unknown function {fn!r} in {show(e)}")

    def quant(self, e: Quant, env: dict[str, Any]) -> Any:
        forall = e.kind == "∀"
        if e.bound is not None:
            bound = self.enc(e.bound, env)
            n = self.const_int(bound)
            if n is not None:
                parts = []
                for i in range(max(n, 0)):
                    v = self.bind(e.var, self.out(i, NAT), e.body, env)
                    if not _is_z3(v):
                        if bool(v) != forall:  # a counterexample (∀) or a witness (∃) decides it
                            return not forall
                        continue
                    parts.append(v)
                if not parts:
                    return self.out(forall, Ty("Bool"))
                return z3.And(parts) if forall else z3.Or(parts)
            x = self.var(e.var)
            body = self.lift(self.bind(e.var, x, e.body, env))
            guard = z3.And(x >= 0, x < bound)
            self.quantifier_free = False
            return z3.ForAll([x], z3.Implies(guard, body)) if forall else z3.Exists([x], z3.And(guard, body))
        x = self.var(e.var)
        body = self.bind(e.var, x, e.body, env)
        if not _is_z3(body):  # the body does not depend on x, and both types are inhabited
            return body
        body = self.lift(body)
        self.quantifier_free = False
        if e.ty == NAT:
            return (
                z3.ForAll([x], z3.Implies(x >= 0, body)) if forall else z3.Exists([x], z3.And(x >= 0, body))
            )
        return z3.ForAll([x], body) if forall else z3.Exists([x], body)


def encode(
    expr: Expr,
    env: Mapping[str, Any],
    types: Mapping[Expr, Any] | TypedSpec | TypedExpr,
    helpers: tuple[Helper, ...] = (),
    *,
    fold: bool = True,
) -> Encoding:
    """The z3 encoding of the elaborated proposition ``expr`` under ``env`` (variable name -> a Python value
    as the executor takes it, or a z3 ``Int`` term for a symbolic ``Nat``/``Int``), with the node types
    ``types`` and the elaborated ``helpers`` it calls. ``fold=False`` leaves every scalar operation to z3.
    Raises :class:`NotEncodable` for the constructs the encoder leaves out."""
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
    if not isinstance(fold, bool):
        raise TypeError(f"fold must be a bool; got {type(fold).__name__}")
    enc = _Encoder(types, tuple(helpers), fold)
    value = enc.enc(expr, dict(env))
    if isinstance(value, tuple | str) and not (isinstance(value, str) and len(value) == 1):
        raise TypeError(f"expr must be a proposition; {show(expr)} is a container or string")
    formula = enc.lift(value)
    if not z3.is_bool(formula):
        raise TypeError(f"expr must be a proposition; {show(expr)} is a number")
    return Encoding(formula, enc.linear, enc.quantifier_free)


# ----------------------------------------------------------------------------------------------------------
# Checking
# ----------------------------------------------------------------------------------------------------------


def has_quantifier(formula: z3.ExprRef) -> bool:
    """Whether the z3 term contains a quantifier anywhere."""
    stack, seen = [formula], set()
    while stack:
        f = stack.pop()
        key = f.get_id()
        if key in seen:
            continue
        seen.add(key)
        if z3.is_quantifier(f):
            return True
        stack.extend(f.children())
    return False


def _constant(formula: z3.BoolRef) -> bool | None:
    """The truth value of ``formula`` when it is ``True``/``False`` under negations, else None."""
    flip = False
    while z3.is_not(formula):
        formula, flip = formula.arg(0), not flip
    if z3.is_true(formula):
        return not flip
    if z3.is_false(formula):
        return flip
    return None


def _solve(
    formula: z3.BoolRef, rlimit: int, quantifiers: bool, cap_s: float, isolated: bool
) -> z3.CheckSatResult:
    if isolated:  # a fresh context: no terms or caches left over from earlier work
        ctx = z3.Context()
        formula = formula.translate(ctx)
        s = z3.Solver(ctx=ctx)
    else:
        s = z3.Solver(ctx=formula.ctx)
    s.set("rlimit", rlimit)
    s.set("timeout", max(1, int(cap_s * 1000)))
    if not quantifiers:
        s.set("smt.mbqi", False)
        s.set("smt.ematching", False)
    s.add(formula)
    start = time.perf_counter()
    answer = s.check()
    elapsed = time.perf_counter() - start
    if answer == z3.unknown and ("timeout" in s.reason_unknown() or elapsed >= 0.95 * cap_s):
        raise ProverTimeout(cap_s)
    return answer


def check(
    formula: z3.BoolRef,
    rlimit: int = RLIMIT,
    *,
    quantifiers: bool = True,
    cap_s: float = WALL_CAP_S,
    isolated: bool = True,
) -> str:
    """``"proved"``, ``"refuted"`` or ``"unknown"`` for the goal ``formula``, whose free constants are read
    universally (as after Lean's ``intro``): proved iff ``¬formula`` is unsat; refuted iff ``¬formula`` has a
    model and ``formula`` is quantifier-free (the model is a counterexample), or else ``formula`` is unsat;
    unknown otherwise. Each solver call gets ``rlimit`` resource units on a fresh solver, in a fresh z3
    context unless ``isolated=False`` (faster, but the count may then depend on earlier work near the
    limit); ``quantifiers=False`` turns quantifier instantiation off. Raises :class:`ProverTimeout` at
    ``cap_s`` seconds."""
    if not isinstance(formula, z3.BoolRef):
        raise TypeError(f"formula must be a z3 BoolRef; got {type(formula).__name__}")
    rlimit = check_int("rlimit", rlimit, minimum=1)
    if not isinstance(quantifiers, bool):
        raise TypeError(f"quantifiers must be a bool; got {type(quantifiers).__name__}")
    if not isinstance(isolated, bool):
        raise TypeError(f"isolated must be a bool; got {type(isolated).__name__}")
    cap_s = check_float("cap_s", cap_s, minimum=0.0, strict_min=True)
    constant = _constant(formula)
    if constant is not None:
        return PROVED if constant else REFUTED
    answer = _solve(z3.Not(formula), rlimit, quantifiers, cap_s, isolated)
    if answer == z3.unsat:
        return PROVED
    if answer == z3.sat and not has_quantifier(formula):
        return REFUTED
    if _solve(formula, rlimit, quantifiers, cap_s, isolated) == z3.unsat:
        return REFUTED
    return UNKNOWN


__all__ = [
    "PROVED",
    "REFUTED",
    "RLIMIT",
    "UNKNOWN",
    "VERDICTS",
    "WALL_CAP_S",
    "Encoding",
    "NotEncodable",
    "ProverTimeout",
    "check",
    "encode",
    "has_quantifier",
]
