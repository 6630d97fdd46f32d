"""Type checking and elaboration of MiniSpec with Lean 4's rules for this fragment.

The checker does what Lean's elaborator does before a spec can be run or proved, and makes the result explicit
so that the Python executor and the z3 encoder read one and the same meaning:

* **Numerals.** An integer literal written without a type takes the type its context needs. Arithmetic
  (``+ - * / %`` and unary ``-``) and relations (``= ≠ < ≤ > ≥``) are elaborated like Lean's ``binop%``
  and ``binrel%``: the operands of a whole tree of operators are collected, their maximal type is found
  (``Int`` when any operand is ``Int``; for ``binop%`` the expected type counts too; ``binrel%`` ignores
  it), and numerals take that type. A tree of numerals only defaults to ``Nat``, or to ``Int`` when it
  contains a negation (as ``-3`` is an ``Int`` in Lean). In the elaborated spec every integer literal
  carries its type (``Lit(3, NAT)``).
* **Coercions.** ``Nat`` never becomes ``Int`` silently *inside* the tree: Lean inserts ``↑`` at the *leaves*,
  so with ``n : Nat`` and ``x : Int``, ``n - 5 = x`` means ``↑n - 5 = x`` (an ``Int`` subtraction), not
  ``↑(n - 5) = x``. Each inserted cast is made explicit as ``Call("toInt", (leaf,))`` and listed in
  ``coercions``. The expected type propagates into ``if`` branches, ``min``/``max`` arguments and helper
  arguments, as Lean's application elaborator does; a tree used as an operand of another tree is not a leaf.
  ``Call("toInt", (e,))`` written in the spec means ``↑(e)``: ``e`` is elaborated on its own and then cast
  (for a numeral it is the ascription ``(e : Int)``, so ``(-3 : Int)`` is fine).
* **Propositions.** Connectives, quantifier bodies, ``if`` conditions and filter predicates accept ``Prop`` or
  ``Bool`` (Lean coerces ``b`` to ``b = true`` and a decidable ``p`` to ``decide p``); their type is
  ``"Prop"``. ``=``/``≠`` compare any two values of one type (``Bool`` with ``Prop`` allowed); ``< ≤ > ≥``
  order ``Nat``, ``Int``, ``Char`` and ``String`` only.
* **Indices and bounds are Nat.** ``a[i]!``, ``take``, ``drop`` and the bound of a bounded quantifier need a
  ``Nat``; an ``Int`` there is a type error (Lean has no ``Int`` to ``Nat`` coercion), so the executor never
  meets a negative index.

Left out on purpose: Lean's ``Array.take``/``Array.count``/``Array.sum`` (the fragment goes through
``toList``), orderings on ``Bool`` and lists, and any polymorphism beyond numerals.

The elaborated spec keys a type table by node. Nodes are structural (equal subtrees are equal keys), so the
elaboration keeps the table unambiguous: integer literals carry their type, casts are explicit, and a bound
variable or helper parameter whose name is already used at another type elsewhere in the spec is renamed
(``x`` to ``x_1``) in the elaborated copy. Beware that ``Lit(True) == Lit(1)`` for Python's dataclass
equality; after elaboration no untyped integer literal remains, so the two never share a key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from neurips26.specbridge.minispec.ast import (
    ABS,
    ARITH,
    BOOL,
    CHAR,
    COMPARE,
    COUNT,
    DROP,
    FUNCTIONS,
    GET,
    INT,
    LENGTH,
    LOGIC,
    MAX,
    MIN,
    NAT,
    PERM,
    PROP,
    RESULT,
    SIZE,
    STRING,
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
    Param,
    Quant,
    Spec,
    Ty,
    Unary,
    Var,
)

TypeEnv = dict[str, Ty]
"""The types of the free variables of an expression, by name."""

Type = Ty | str
"""A :class:`Ty` or the string ``"Prop"``."""

_NUMERAL = "numeral"  # internal: a numeral whose type (Nat or Int) the context has not fixed yet
_NUMERIC = (NAT, INT)
_ORDERED = (NAT, INT, CHAR, STRING)
_LOGICAL = (BOOL, PROP)


class SpecTypeError(TypeError):
    """A MiniSpec expression or spec is ill-typed; ``expr`` is the offending sub-expression (or None)."""

    def __init__(self, message: str, expr: Expr | None = None) -> None:
        super().__init__(message)
        self.expr = expr


# ----------------------------------------------------------------------------------------------------------
# A small printer for messages (the chapter's printer lives in the printer module; this one only names nodes)
# ----------------------------------------------------------------------------------------------------------

_METHODS = {SIZE, LENGTH, TO_LIST, SUM, TO_NAT, ABS, COUNT, TAKE, DROP}


def show(e: Expr) -> str:
    """A readable, Lean-like rendering of ``e`` for messages (parenthesised generously)."""
    if isinstance(e, Var):
        return e.name
    if isinstance(e, Lit):
        if isinstance(e.value, bool):
            return "true" if e.value else "false"
        if isinstance(e.value, str):
            return f"'{e.value}'" if e.ty == CHAR else '"' + e.value.replace('"', '\\"') + '"'
        return str(e.value)
    if isinstance(e, Unary):
        return f"{e.op}{_atom(e.arg)}"
    if isinstance(e, Binary):
        return f"{_atom(e.left)} {e.op} {_atom(e.right)}"
    if isinstance(e, Call):
        args = [_atom(a) for a in e.args]
        if e.fn == GET and len(args) == 2:
            return f"{args[0]}[{show(e.args[1])}]!"
        if e.fn in _METHODS and args:
            return " ".join([f"{args[0]}.{e.fn}", *args[1:]])
        if e.fn == TO_INT and len(args) == 1:
            return f"↑{args[0]}"
        if e.fn == PERM:
            return " ".join(["List.Perm", *args])
        return " ".join([e.fn, *args])
    if isinstance(e, FilterLength):
        return f"({_atom(e.items)}.filter (fun {e.var} => {show(e.pred)})).length"
    if isinstance(e, Ite):
        return f"if {show(e.cond)} then {show(e.then_)} else {show(e.else_)}"
    if isinstance(e, Quant):
        if e.bound is None:
            return f"{e.kind} {e.var} : {e.ty}, {show(e.body)}"
        link = "→" if e.kind == "∀" else "∧"
        return f"{e.kind} {e.var}, {e.var} < {_atom(e.bound)} {link} {show(e.body)}"
    return repr(e)


def _atom(e: Expr) -> str:
    text = show(e)
    simple = isinstance(e, Var | Lit | FilterLength) or (
        isinstance(e, Call) and e.fn in (_METHODS | {GET, TO_INT}) and e.fn not in (COUNT, TAKE, DROP)
    )
    return text if simple else f"({text})"


def _tyname(t: Type) -> str:
    return "a numeral" if t == _NUMERAL else str(t)


# ----------------------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class TypedExpr:
    """An elaborated expression: ``expr`` (numerals typed, casts explicit), its ``type``, the type of every
    node in ``types``, the casts Lean inserts in ``coercions`` (each the argument of an inserted ``toInt``),
    and the elaborated ``helpers`` it may call."""

    expr: Expr
    type: Type
    types: Mapping[Expr, Type]
    coercions: tuple[Expr, ...] = ()
    helpers: tuple[Helper, ...] = ()


@dataclass(frozen=True, eq=False)
class TypedSpec:
    """A type-checked spec: the ``source`` spec, its elaborated copy ``spec`` (what the executor and the z3
    encoder read), the type of every node of ``spec`` (helpers, precondition, postcondition) in ``types``, and
    the Nat→Int casts Lean inserts in ``coercions`` (the arguments of the inserted ``toInt``; casts written
    in the spec are not listed). Parameters and ``result`` are typed as ``Var`` nodes even
    where they are unused."""

    source: Spec
    spec: Spec
    types: Mapping[Expr, Type] = field(repr=False)
    coercions: tuple[Expr, ...] = ()

    def type_of(self, node: Expr) -> Type:
        """The type of a node of the elaborated spec (``"Prop"`` for propositions)."""
        try:
            return self.types[node]
        except KeyError:
            raise KeyError(f"node is not part of the elaborated spec: {show(node)}") from None


# ----------------------------------------------------------------------------------------------------------
# The elaborator
# ----------------------------------------------------------------------------------------------------------


def _is_arith(e: Expr) -> bool:
    return (isinstance(e, Binary) and e.op in ARITH) or (isinstance(e, Unary) and e.op == "-")


def _names(e: Expr, out: set[str]) -> None:
    if isinstance(e, Var):
        out.add(e.name)
    elif isinstance(e, Unary):
        _names(e.arg, out)
    elif isinstance(e, Binary):
        _names(e.left, out)
        _names(e.right, out)
    elif isinstance(e, Call):
        for a in e.args:
            _names(a, out)
    elif isinstance(e, FilterLength):
        out.add(e.var)
        _names(e.items, out)
        _names(e.pred, out)
    elif isinstance(e, Ite):
        _names(e.cond, out)
        _names(e.then_, out)
        _names(e.else_, out)
    elif isinstance(e, Quant):
        out.add(e.var)
        if e.bound is not None:
            _names(e.bound, out)
        _names(e.body, out)


_Scope = dict[str, tuple[str, Ty]]  # source name -> (elaborated name, type)


class _Elaborator:
    def __init__(self, reserved: set[str]) -> None:
        self.types: dict[Expr, Type] = {}
        self.coercions: list[Expr] = []
        self.helpers: dict[str, Helper] = {}  # source helpers by name (their signatures type the calls)
        self.global_vars: dict[str, Ty] = {}  # elaborated variable name -> its one type in the whole spec
        self.reserved = set(reserved)

    # -- bookkeeping ---------------------------------------------------------------------------------------

    def rec(self, node: Expr, t: Type) -> Expr:
        if t == _NUMERAL:
            return node
        old = self.types.get(node)
        if old is not None and old != t:  # cannot happen by construction; guards the table's meaning
            raise SpecTypeError(f"internal: {show(node)} typed both {old} and {t}", node)
        self.types[node] = t
        return node

    def bind(self, scope: _Scope, name: str, ty: Ty) -> tuple[_Scope, str]:
        """Scope extended by ``name : ty``; renamed when ``name`` is already used at another type."""
        new = name
        if self.global_vars.get(new, ty) != ty:
            k = 1
            while f"{name}_{k}" in self.reserved or self.global_vars.get(f"{name}_{k}", ty) != ty:
                k += 1
            new = f"{name}_{k}"
        self.global_vars[new] = ty
        self.reserved.add(new)
        return {**scope, name: (new, ty)}, new

    def coerce(self, e: Expr) -> Expr:
        if e not in self.coercions:
            self.coercions.append(e)
        return self.rec(Call(TO_INT, (e,)), INT)

    # -- numerals ------------------------------------------------------------------------------------------

    def settle(self, e: Expr, ty: Type) -> Expr:
        """Give every open numeral in ``e`` (whose type is still a numeral) the type ``ty``."""
        if ty not in _NUMERIC:
            raise SpecTypeError(f"type mismatch: numeral {show(e)} used where {ty} is expected", e)
        if isinstance(e, Lit):
            if e.ty is not None:
                return e
            if e.value < 0 and ty == NAT:  # type: ignore[operator]
                raise SpecTypeError(f"negative literal {show(e)} cannot be a Nat", e)
            return self.rec(Lit(e.value, ty), ty)
        if isinstance(e, Unary):
            if ty == NAT:
                raise SpecTypeError(
                    f"Nat has no negation (Lean: failed to synthesize Neg Nat) in {show(e)}", e
                )
            return self.rec(Unary(e.op, self.settle(e.arg, ty)), ty)
        if isinstance(e, Binary):
            return self.rec(Binary(e.op, self.settle(e.left, ty), self.settle(e.right, ty)), ty)
        if isinstance(e, Ite):
            return self.rec(Ite(e.cond, self.settle(e.then_, ty), self.settle(e.else_, ty)), ty)
        if isinstance(e, Call) and e.fn in (MIN, MAX):
            return self.rec(Call(e.fn, tuple(self.settle(a, ty) for a in e.args)), ty)
        return e  # already typed

    @staticmethod
    def negated(e: Expr) -> bool:
        if isinstance(e, Lit):
            return not isinstance(e.value, bool | str) and e.value < 0
        if isinstance(e, Unary):
            return True
        if isinstance(e, Binary):
            return _Elaborator.negated(e.left) or _Elaborator.negated(e.right)
        if isinstance(e, Ite):
            return _Elaborator.negated(e.then_) or _Elaborator.negated(e.else_)
        if isinstance(e, Call):
            return any(_Elaborator.negated(a) for a in e.args)
        return False

    def default(self, e: Expr, t: Type) -> tuple[Expr, Type]:
        """Resolve an open numeral as Lean's default instances do: Int if negated, else Nat."""
        if t != _NUMERAL:
            return e, t
        ty = INT if self.negated(e) else NAT
        return self.settle(e, ty), ty

    # -- fitting to an expected type -------------------------------------------------------------------------

    def fit(self, e: Expr, t: Type, expected: Type | None, source: Expr) -> tuple[Expr, Type]:
        if expected is None or expected == t:
            return e, t
        if t == _NUMERAL:
            if expected in _NUMERIC:
                return self.settle(e, expected), expected
        elif t == NAT and expected == INT:
            return self.coerce(e), INT
        elif t in _LOGICAL and expected in _LOGICAL:
            return e, expected
        raise SpecTypeError(
            f"type mismatch: {show(source)} has type {_tyname(t)} but is expected to have type {expected}",
            source,
        )

    # -- the main recursion --------------------------------------------------------------------------------

    def elab(self, e: Expr, scope: _Scope, expected: Type | None) -> tuple[Expr, Type]:
        if _is_arith(e):
            return self.tree(e, scope, expected)
        if isinstance(e, Binary) and e.op in COMPARE:
            return self.fit(*self.relation(e, scope), expected, e)
        if isinstance(e, Var):
            if e.name not in scope:
                raise SpecTypeError(f"unknown variable {e.name!r}", e)
            name, ty = scope[e.name]
            return self.fit(self.rec(Var(name), ty), ty, expected, e)
        if isinstance(e, Lit):
            return self.fit(*self.literal(e, expected), expected, e)
        if isinstance(e, Unary):
            if e.op != "¬":
                raise SpecTypeError(f"unknown unary operator {e.op!r} in {show(e)}", e)
            arg, _ = self.elab(e.arg, scope, PROP)
            return self.fit(self.rec(Unary("¬", arg), PROP), PROP, expected, e)
        if isinstance(e, Binary):
            if e.op not in LOGIC:
                raise SpecTypeError(f"unknown binary operator {e.op!r} in {show(e)}", e)
            left, _ = self.elab(e.left, scope, PROP)
            right, _ = self.elab(e.right, scope, PROP)
            return self.fit(self.rec(Binary(e.op, left, right), PROP), PROP, expected, e)
        if isinstance(e, Ite):
            return self.ite(e, scope, expected)
        if isinstance(e, Call):
            if e.fn in (MIN, MAX):
                return self.minmax(e, scope, expected)
            return self.fit(*self.call(e, scope), expected, e)
        if isinstance(e, FilterLength):
            items, ty = self.elab(e.items, scope, None)
            if not isinstance(ty, Ty) or ty.name != "List":
                raise SpecTypeError(f"filter needs a List; {show(e.items)} has type {_tyname(ty)}", e)
            inner, var = self.bind(scope, e.var, Ty(ty.element))
            pred, _ = self.elab(e.pred, inner, PROP)
            return self.fit(self.rec(FilterLength(items, var, pred), NAT), NAT, expected, e)
        if isinstance(e, Quant):
            return self.fit(*self.quant(e, scope), expected, e)
        raise SpecTypeError(f"not a MiniSpec expression: {e!r}", e if isinstance(e, Expr) else None)

    def literal(self, e: Lit, expected: Type | None) -> tuple[Expr, Type]:
        v = e.value
        if isinstance(v, bool):
            if e.ty not in (None, BOOL):
                raise SpecTypeError(f"boolean literal {show(e)} cannot have type {e.ty}", e)
            return self.rec(e, BOOL), BOOL
        if isinstance(v, str):
            if e.ty == CHAR:
                if len(v) != 1:
                    raise SpecTypeError(f"Char literal must be one character; got {v!r}", e)
                return self.rec(e, CHAR), CHAR
            if e.ty not in (None, STRING):
                raise SpecTypeError(f"string literal {show(e)} cannot have type {e.ty}", e)
            return self.rec(e, STRING), STRING
        if isinstance(v, int):
            if e.ty is None:
                if expected in _NUMERIC:
                    return self.settle(e, expected), expected
                return e, _NUMERAL
            if e.ty not in _NUMERIC:
                raise SpecTypeError(f"integer literal {v} cannot have type {e.ty}", e)
            if e.ty == NAT and v < 0:
                raise SpecTypeError(f"negative literal {v} cannot be a Nat", e)
            return self.rec(e, e.ty), e.ty
        raise SpecTypeError(f"literal value must be int, bool or str; got {type(v).__name__}", e)

    # Lean's binop%: collect the leaves of a tree of arithmetic operators, find their maximal type, cast.
    def leaves(self, e: Expr, out: list[Expr]) -> None:
        if isinstance(e, Binary) and e.op in ARITH:
            self.leaves(e.left, out)
            self.leaves(e.right, out)
        elif isinstance(e, Unary) and e.op == "-":
            self.leaves(e.arg, out)
        else:
            out.append(e)

    def unify_leaves(
        self, roots: list[Expr], scope: _Scope, start: Type | None, where: Expr, numeric: bool
    ) -> tuple[dict[int, tuple[Expr, Type]], Type]:
        leaves: list[Expr] = []
        for r in roots:
            self.leaves(r, leaves)
        done: dict[int, tuple[Expr, Type]] = {}
        top: Type | None = start
        for leaf in leaves:
            new, t = self.elab(leaf, scope, None)
            done[id(leaf)] = (new, t)
            if t == _NUMERAL:
                continue
            if numeric and t not in _NUMERIC:
                raise SpecTypeError(
                    f"arithmetic needs Nat or Int; {show(leaf)} has type {t} in {show(where)}", leaf
                )
            if top is None or top == t:
                top = t
            elif {top, t} == {NAT, INT}:
                top = INT
            elif top in _LOGICAL and t in _LOGICAL:
                pass
            else:
                raise SpecTypeError(f"cannot combine {top} with {t} ({show(leaf)}) in {show(where)}", where)
        if top is None:
            top = _NUMERAL
        return done, top

    def rebuild(self, e: Expr, done: dict[int, tuple[Expr, Type]], top: Type) -> Expr:
        if isinstance(e, Binary) and e.op in ARITH:
            return self.rec(
                Binary(e.op, self.rebuild(e.left, done, top), self.rebuild(e.right, done, top)), top
            )
        if isinstance(e, Unary) and e.op == "-":
            if top == NAT:
                raise SpecTypeError(
                    f"Nat has no negation (Lean: failed to synthesize Neg Nat) in {show(e)}", e
                )
            return self.rec(Unary("-", self.rebuild(e.arg, done, top)), top)
        new, t = done[id(e)]
        if t == top or top == _NUMERAL:
            return new
        if t == _NUMERAL:
            return self.settle(new, top)
        if t == NAT and top == INT:
            return self.coerce(new)
        return new  # Bool with Prop: no conversion needed

    def tree(self, e: Expr, scope: _Scope, expected: Type | None) -> tuple[Expr, Type]:
        start = expected if expected in _NUMERIC else None
        done, top = self.unify_leaves([e], scope, start, e, numeric=True)
        return self.fit(self.rebuild(e, done, top), top, expected, e)

    def relation(self, e: Binary, scope: _Scope) -> tuple[Expr, Type]:
        done, top = self.unify_leaves(
            [e.left, e.right], scope, None, e, numeric=_is_arith(e.left) or _is_arith(e.right)
        )
        if top == _NUMERAL:
            top = INT if self.negated(e) else NAT
        if e.op not in ("=", "≠") and top not in _ORDERED:
            raise SpecTypeError(f"{e.op} needs Nat, Int, Char or String operands; got {top} in {show(e)}", e)
        left, right = self.rebuild(e.left, done, top), self.rebuild(e.right, done, top)
        return self.rec(Binary(e.op, left, right), PROP), PROP

    # Lean elaborates `if` and `min`/`max` with the expected type pushed into the branches/arguments.
    def branches(self, parts: tuple[Expr, ...], scope: _Scope, expected: Type | None, where: Expr) -> tuple:
        if expected in _NUMERIC:
            return tuple(self.elab(p, scope, expected)[0] for p in parts), expected
        first, t1 = self.elab(parts[0], scope, None)
        if t1 in _NUMERIC or (isinstance(t1, Ty) and t1 not in _LOGICAL):
            second, _ = self.elab(parts[1], scope, t1)
            return (first, second), t1
        second, t2 = self.elab(parts[1], scope, None)
        if t1 == _NUMERAL:
            if t2 == _NUMERAL:
                return (first, second), _NUMERAL
            if t2 not in _NUMERIC:
                raise SpecTypeError(
                    f"type mismatch: {show(parts[0])} is a numeral, {show(parts[1])} a {t2}", where
                )
            return (self.settle(first, t2), second), t2
        if t2 not in _LOGICAL and t2 != _NUMERAL:  # t1 is Bool or Prop
            raise SpecTypeError(
                f"type mismatch: {show(parts[0])} has type {t1}, {show(parts[1])} {t2}", where
            )
        return (first, self.fit(second, t2, t1, parts[1])[0]), t1

    def ite(self, e: Ite, scope: _Scope, expected: Type | None) -> tuple[Expr, Type]:
        cond, _ = self.elab(e.cond, scope, PROP)
        (then_, else_), t = self.branches((e.then_, e.else_), scope, expected, e)
        return self.fit(self.rec(Ite(cond, then_, else_), t), t, expected, e)

    def minmax(self, e: Call, scope: _Scope, expected: Type | None) -> tuple[Expr, Type]:
        if len(e.args) != 2:
            raise SpecTypeError(f"{e.fn} takes 2 arguments; got {len(e.args)} in {show(e)}", e)
        args, t = self.branches(e.args, scope, expected, e)
        if t not in _NUMERIC and t != _NUMERAL:
            raise SpecTypeError(f"{e.fn} needs Nat or Int arguments; got {t} in {show(e)}", e)
        return self.fit(self.rec(Call(e.fn, args), t), t, expected, e)

    def container(self, arg: Expr, scope: _Scope, names: tuple[str, ...], where: Expr) -> tuple[Expr, Ty]:
        new, t = self.elab(arg, scope, None)
        if not isinstance(t, Ty) or t.name not in names:
            want = " or ".join(names)
            raise SpecTypeError(f"{where.fn} needs a {want}; {show(arg)} has type {_tyname(t)}", arg)  # type: ignore[attr-defined]
        return new, t

    def call(self, e: Call, scope: _Scope) -> tuple[Expr, Type]:
        fn, args = e.fn, e.args
        if fn in FUNCTIONS:
            if len(args) != FUNCTIONS[fn]:
                raise SpecTypeError(
                    f"{fn} takes {FUNCTIONS[fn]} argument(s); got {len(args)} in {show(e)}", e
                )
            return self.builtin(e, scope)
        helper = self.helpers.get(fn)
        if helper is None:
            raise SpecTypeError(f"unknown function {fn!r} in {show(e)}", e)
        if len(args) != len(helper.params):
            raise SpecTypeError(
                f"{fn} takes {len(helper.params)} argument(s); got {len(args)} in {show(e)}", e
            )
        new = tuple(self.elab(a, scope, p.ty)[0] for a, p in zip(args, helper.params, strict=True))
        return self.rec(Call(fn, new), helper.ret), helper.ret

    def builtin(self, e: Call, scope: _Scope) -> tuple[Expr, Type]:
        fn, args = e.fn, e.args
        out: Type
        if fn == SIZE:
            (c, _), out = self.container(args[0], scope, ("Array",), e), NAT
            new: tuple[Expr, ...] = (c,)
        elif fn == LENGTH:
            c, _ = self.container(args[0], scope, ("List", "String"), e)
            new, out = (c,), NAT
        elif fn == GET:
            c, t = self.container(args[0], scope, ("Array", "List"), e)
            i, _ = self.elab(args[1], scope, NAT)
            new, out = (c, i), Ty(t.element)
        elif fn == TO_LIST:
            c, t = self.container(args[0], scope, ("Array", "String"), e)
            new, out = (c,), Ty("List", t.element or "Char")
        elif fn == COUNT:
            c, t = self.container(args[0], scope, ("List",), e)
            x, _ = self.elab(args[1], scope, Ty(t.element))
            new, out = (c, x), NAT
        elif fn == SUM:
            c, t = self.container(args[0], scope, ("List",), e)
            if t.element not in ("Nat", "Int"):
                raise SpecTypeError(f"sum needs a List Nat or List Int; {show(args[0])} has type {t}", e)
            new, out = (c,), Ty(t.element)
        elif fn in (TAKE, DROP):
            c, t = self.container(args[0], scope, ("List",), e)
            n, _ = self.elab(args[1], scope, NAT)
            new, out = (c, n), t
        elif fn == PERM:
            a, t = self.container(args[0], scope, ("List",), e)
            b, _ = self.elab(args[1], scope, t)
            new, out = (a, b), PROP
        elif fn in (TO_NAT, ABS):
            x, t = self.elab(args[0], scope, None)
            if t == _NUMERAL:
                x, t = self.settle(x, INT), INT
            if t != INT and not (fn == TO_NAT and t == CHAR):
                want = "an Int or a Char" if fn == TO_NAT else "an Int"
                raise SpecTypeError(f"{fn} needs {want}; {show(args[0])} has type {t}", e)
            new, out = (x,), NAT
        else:  # TO_INT: ↑(x) for a Nat, the ascription (x : Int) for a numeral or an Int
            x, t = self.elab(args[0], scope, None)
            if t == _NUMERAL:
                x, t = self.settle(x, INT), INT
            if t not in _NUMERIC:
                raise SpecTypeError(f"toInt needs a Nat or an Int; {show(args[0])} has type {t}", e)
            new, out = (x,), INT
        return self.rec(Call(fn, new), out), out

    def quant(self, e: Quant, scope: _Scope) -> tuple[Expr, Type]:
        if e.kind not in ("∀", "∃"):
            raise SpecTypeError(f"quantifier kind must be '∀' or '∃'; got {e.kind!r}", e)
        if not isinstance(e.ty, Ty):
            raise SpecTypeError(f"quantifier variable type must be a Ty; got {e.ty!r}", e)
        bound = None
        if e.bound is not None:
            if e.ty != NAT:
                raise SpecTypeError(f"a bounded quantifier ranges over Nat; got {e.var} : {e.ty}", e)
            _, bt = self.elab(e.bound, scope, None)
            if bt not in (NAT, _NUMERAL):
                raise SpecTypeError(
                    f"bound {show(e.bound)} of {e.kind} {e.var} has type {bt}; it must be a Nat (use .toNat)",
                    e,
                )
            bound, _ = self.elab(e.bound, scope, NAT)
        elif e.ty not in _NUMERIC:
            raise SpecTypeError(f"an unbounded quantifier ranges over Nat or Int; got {e.var} : {e.ty}", e)
        inner, var = self.bind(scope, e.var, e.ty)
        body, _ = self.elab(e.body, inner, PROP)
        return self.rec(Quant(e.kind, var, e.ty, bound, body), PROP), PROP

    # -- helpers and whole expressions -----------------------------------------------------------------------

    def helper(self, h: Helper) -> Helper:
        if not isinstance(h, Helper):
            raise TypeError(f"helpers must hold Helper records; got {type(h).__name__}")
        if h.name in FUNCTIONS or h.name in self.helpers:
            raise SpecTypeError(f"helper name {h.name!r} is already a built-in or an earlier helper")
        if not (isinstance(h.ret, Ty) or h.ret == PROP):
            raise SpecTypeError(f"helper {h.name} must return a Ty or 'Prop'; got {h.ret!r}")
        scope: _Scope = {}
        params = []
        for p in h.params:
            if not isinstance(p, Param) or not isinstance(p.ty, Ty):
                raise SpecTypeError(f"helper {h.name} has a malformed parameter {p!r}")
            if p.name in scope:
                raise SpecTypeError(f"helper {h.name} has two parameters named {p.name!r}")
            scope, name = self.bind(scope, p.name, p.ty)
            params.append(Param(name, p.ty))
            self.rec(Var(name), p.ty)
        body, _ = self.elab(h.body, scope, h.ret)
        self.helpers[h.name] = h
        return Helper(h.name, tuple(params), h.ret, body)

    def close(self, e: Expr, scope: _Scope, expected: Type | None) -> tuple[Expr, Type]:
        new, t = self.elab(e, scope, expected)
        return self.default(new, t)


def _check_env(env: object) -> _Scope:
    if not isinstance(env, Mapping):
        raise TypeError(f"env must be a dict of name -> Ty; got {type(env).__name__}")
    for k, v in env.items():
        if not isinstance(k, str) or not isinstance(v, Ty):
            raise TypeError(f"env must map names (str) to Ty; got {k!r}: {v!r}")
    return {k: (k, v) for k, v in env.items()}


def _check_helpers(helpers: object) -> tuple[Helper, ...]:
    if not isinstance(helpers, tuple | list) or not all(isinstance(h, Helper) for h in helpers):
        raise TypeError(f"helpers must be a tuple of Helper; got {helpers!r}")
    return tuple(helpers)


def _check_expected(expected: object) -> Type:
    if not (isinstance(expected, Ty) or expected == PROP):
        raise TypeError(f"expected must be a Ty or 'Prop'; got {expected!r}")
    return expected  # type: ignore[return-value]


def elaborate(
    expr: Expr, env: TypeEnv, helpers: tuple[Helper, ...] = (), expected: Type | None = None
) -> TypedExpr:
    """Type-check ``expr`` in ``env`` (against ``expected`` when given) and return it elaborated, with the
    type of every node; ``helpers`` (checked first, in order) may be called by ``expr``."""
    if not isinstance(expr, Expr):
        raise TypeError(f"expr must be a MiniSpec Expr; got {type(expr).__name__}")
    scope = _check_env(env)
    helpers = _check_helpers(helpers)
    if expected is not None:
        expected = _check_expected(expected)
    reserved: set[str] = set(env)
    _names(expr, reserved)
    for h in helpers:
        _names(h.body, reserved)
        reserved.update(p.name for p in h.params)
    el = _Elaborator(reserved)
    for name, (_, ty) in scope.items():
        el.global_vars[name] = ty
        el.rec(Var(name), ty)
    done_helpers = tuple(el.helper(h) for h in helpers)
    new, t = el.close(expr, scope, expected)
    return TypedExpr(new, t, MappingProxyType(el.types), tuple(el.coercions), done_helpers)


def infer(expr: Expr, env: TypeEnv, helpers: tuple[Helper, ...] = ()) -> Type:
    """The type of ``expr`` in ``env`` (a :class:`Ty` or ``"Prop"``); numerals alone default to ``Nat``
    (``Int`` when negated). Raises :class:`SpecTypeError` naming the offending sub-expression."""
    return elaborate(expr, env, helpers).type


def check(expr: Expr, expected: Type, env: TypeEnv, helpers: tuple[Helper, ...] = ()) -> TypedExpr:
    """Check that ``expr`` has type ``expected`` in ``env`` (numerals take it; a ``Nat`` is cast to an
    expected ``Int``; ``Bool`` and ``"Prop"`` are interchangeable) and return the elaborated expression."""
    expected = _check_expected(expected)
    return elaborate(expr, env, helpers, expected)


def check_spec(spec: Spec) -> TypedSpec:
    """Type-check a VERINA-style spec: helpers in order, then the precondition over the parameters and the
    postcondition over the parameters and ``result``, both propositions (a ``Bool`` is accepted)."""
    if not isinstance(spec, Spec):
        raise TypeError(f"spec must be a Spec; got {type(spec).__name__}")
    sig = spec.signature
    names = [p.name for p in sig.params]
    if len(set(names)) != len(names):
        raise SpecTypeError(f"signature {sig.name} has repeated parameter names {names}")
    if RESULT in names:
        raise SpecTypeError(f"signature {sig.name} may not name a parameter {RESULT!r}")
    if not isinstance(sig.ret, Ty) or not all(isinstance(p.ty, Ty) for p in sig.params):
        raise SpecTypeError(f"signature {sig.name} must use Ty for parameter and result types")
    helpers = _check_helpers(spec.helpers)
    reserved = set(names) | {RESULT}
    for part in (spec.pre, spec.post, *(h.body for h in helpers)):
        _names(part, reserved)
    for h in helpers:
        reserved.update(p.name for p in h.params)
    el = _Elaborator(reserved)
    for p in (*sig.params, Param(RESULT, sig.ret)):
        el.global_vars[p.name] = p.ty
        el.rec(Var(p.name), p.ty)  # parameters and result are typed even where unused
    done_helpers = tuple(el.helper(h) for h in helpers)
    scope: _Scope = {p.name: (p.name, p.ty) for p in sig.params}
    pre, _ = el.close(spec.pre, scope, PROP)
    post, _ = el.close(spec.post, {**scope, RESULT: (RESULT, sig.ret)}, PROP)
    elaborated = Spec(sig, pre, post, done_helpers)
    return TypedSpec(spec, elaborated, MappingProxyType(el.types), tuple(el.coercions))


__all__ = [
    "SpecTypeError",
    "Type",
    "TypeEnv",
    "TypedExpr",
    "TypedSpec",
    "check",
    "check_spec",
    "elaborate",
    "infer",
    "show",
]
