"""MiniSpec's abstract syntax: types, expressions with Lean 4 meaning, signatures and VERINA-style specs.

MiniSpec is the fragment of Lean 4 that the chapter's specifications are written in. Every node is a frozen,
hashable dataclass, so specs can be compared, normalised and used as cache keys. The meaning of every node is
Lean's (``neurips26.specbridge.execute`` evaluates it, ``neurips26.specbridge.z3_backend`` encodes it):

* ``Nat`` subtraction truncates at 0; ``Int`` ``/`` and ``%`` are Euclidean (``Int.ediv``, ``Int.emod``:
  ``(-7) / 2 = -4``, ``(-7) % 2 = 1``); ``x / 0 = 0`` and ``x % 0 = x`` in both;
* ``a[i]!`` (:data:`GET`) is the element at ``i`` or the type's default (``0``; ``'A'`` for ``Char``) when
  ``i`` is out of range;
* a *bounded* quantifier ``∀ i, i < e → P`` / ``∃ i, i < e ∧ P`` ranges over ``Nat`` below ``e``
  (:class:`Quant` with ``bound``); an *unbounded* one ``∀ x : Int, P`` ranges over all of its type and is
  not executable.

A spec (:class:`Spec`) is VERINA's pair ``f_precond (x₁ : τ₁) … : Prop := P`` and
``f_postcond (x₁ : τ₁) … (result : τ) (h_precond : f_precond x₁ …) : Prop := Q`` over one
:class:`Signature`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

# ----------------------------------------------------------------------------------------------------------
# Types
# ----------------------------------------------------------------------------------------------------------

SCALARS: tuple[str, ...] = ("Nat", "Int", "Bool", "Char", "String")
CONTAINERS: tuple[str, ...] = ("List", "Array")
ELEMENTS: tuple[str, ...] = ("Nat", "Int", "Char")


@dataclass(frozen=True)
class Ty:
    """A MiniSpec type: a scalar (``Ty("Int")``) or a container of a scalar element
    (``Ty("Array", "Int")``, ``Ty("List", "Char")``). ``str(ty)`` is its Lean spelling."""

    name: str
    element: str | None = None

    def __post_init__(self) -> None:
        if self.name in SCALARS:
            if self.element is not None:
                raise ValueError(f"type {self.name} takes no element type; got {self.element!r}")
        elif self.name in CONTAINERS:
            if self.element not in ELEMENTS:
                raise ValueError(
                    f"type {self.name} needs an element type in {ELEMENTS}; got {self.element!r}"
                )
        else:
            raise ValueError(f"type name must be one of {SCALARS + CONTAINERS}; got {self.name!r}")

    @property
    def is_container(self) -> bool:
        return self.name in CONTAINERS

    def __str__(self) -> str:
        return self.name if self.element is None else f"{self.name} {self.element}"


NAT, INT, BOOL, CHAR, STRING = Ty("Nat"), Ty("Int"), Ty("Bool"), Ty("Char"), Ty("String")
PROP = "Prop"
"""Propositions are not a :class:`Ty`: a formula's type is the string ``"Prop"`` (see ``typecheck``)."""

# ----------------------------------------------------------------------------------------------------------
# Expressions
# ----------------------------------------------------------------------------------------------------------

ARITH: tuple[str, ...] = ("+", "-", "*", "/", "%")
COMPARE: tuple[str, ...] = ("=", "≠", "<", "≤", ">", "≥")
LOGIC: tuple[str, ...] = ("∧", "∨", "→", "↔")
BINARY: tuple[str, ...] = ARITH + COMPARE + LOGIC

# Built-in functions: name -> arity. Lean spellings (printer) in parentheses.
SIZE = "size"  # a.size (Array)
LENGTH = "length"  # l.length (List), s.length (String)
GET = "get"  # a[i]! : element or default
TO_LIST = "toList"  # a.toList (Array -> List), s.toList (String -> List Char)
COUNT = "count"  # l.count x
SUM = "sum"  # l.sum (List Int / List Nat)
TAKE = "take"  # l.take n
DROP = "drop"  # l.drop n
PERM = "perm"  # List.Perm l₁ l₂ (a Prop)
TO_NAT = "toNat"  # x.toNat (Int -> Nat, negative -> 0; Char -> Nat code)
TO_INT = "toInt"  # (x : Int), the cast ↑x of a Nat
ABS = "natAbs"  # x.natAbs (Int -> Nat)
MIN = "min"  # min x y
MAX = "max"  # max x y
FUNCTIONS: dict[str, int] = {
    SIZE: 1,
    LENGTH: 1,
    GET: 2,
    TO_LIST: 1,
    COUNT: 2,
    SUM: 1,
    TAKE: 2,
    DROP: 2,
    PERM: 2,
    TO_NAT: 1,
    TO_INT: 1,
    ABS: 1,
    MIN: 2,
    MAX: 2,
}


class Expr:
    """Base class of every expression node (all frozen dataclasses)."""

    __slots__ = ()


@dataclass(frozen=True)
class Var(Expr):
    """A parameter, ``result``, a bound variable or a helper's argument."""

    name: str


@dataclass(frozen=True)
class Lit(Expr):
    """A literal: ``int`` (its type, ``Nat`` or ``Int``, from context unless ``ty`` is given), ``bool``,
    or ``str`` (a ``String`` literal, or a ``Char`` one when ``ty`` is ``CHAR``)."""

    value: int | bool | str
    ty: Ty | None = None
    kind: str = field(init=False, repr=False, default="")

    def __post_init__(self) -> None:
        # Python has True == 1: the kind keeps Lit(True) and Lit(1) apart in == and hash.
        if isinstance(self.value, bool):
            kind = "bool"
        elif isinstance(self.value, int):
            kind = "int"
        elif isinstance(self.value, str):
            kind = "str"
        else:
            raise TypeError(f"value must be an int, bool or str; got {type(self.value).__name__}")
        object.__setattr__(self, "kind", kind)


@dataclass(frozen=True)
class Unary(Expr):
    """``¬ p`` (``op="¬"``) or integer negation ``-x`` (``op="-"``)."""

    op: str
    arg: Expr


@dataclass(frozen=True)
class Binary(Expr):
    """``left op right`` for ``op`` in :data:`BINARY` (arithmetic, comparison, connective)."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Call(Expr):
    """A built-in function of :data:`FUNCTIONS` applied to ``args`` (receiver first for method calls), or a
    helper definition of the spec by name."""

    fn: str
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class FilterLength(Expr):
    """``(l.filter (fun v => pred)).length``: how many elements of list ``items`` satisfy ``pred``.

    ``pred`` is a Bool-valued expression in ``var``; in Lean it is written with ``decide`` where needed."""

    items: Expr
    var: str
    pred: Expr


@dataclass(frozen=True)
class Ite(Expr):
    """``if cond then then_ else else_``."""

    cond: Expr
    then_: Expr
    else_: Expr


@dataclass(frozen=True)
class Quant(Expr):
    """A quantifier ``kind`` (``"∀"`` or ``"∃"``) over ``var : ty``.

    ``bound`` given: the bounded form over ``Nat`` below it, ``∀ var, var < bound → body`` or
    ``∃ var, var < bound ∧ body`` (executable, ``ty`` is ``NAT``). ``bound`` None: unbounded over all of
    ``ty`` (``Int`` or ``Nat``), not executable.
    """

    kind: str
    var: str
    ty: Ty
    bound: Expr | None
    body: Expr

    @property
    def bounded(self) -> bool:
        return self.bound is not None


# ----------------------------------------------------------------------------------------------------------
# Signatures and specs
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """A typed parameter ``(name : ty)``."""

    name: str
    ty: Ty


@dataclass(frozen=True)
class Signature:
    """A Lean function signature: ``def name (p₁ : τ₁) … : ret``."""

    name: str
    params: tuple[Param, ...]
    ret: Ty

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)


@dataclass(frozen=True)
class Helper:
    """A helper definition ``def name (p₁ : τ₁) … : ret := body`` (``ret`` a :class:`Ty` or ``"Prop"``),
    non-recursive, usable in the pre- and postcondition."""

    name: str
    params: tuple[Param, ...]
    ret: Ty | str
    body: Expr


@dataclass(frozen=True)
class Spec:
    """A VERINA-style specification of ``signature``: precondition ``pre`` over the parameters and
    postcondition ``post`` over the parameters and ``result``, with ``helpers`` defined before them."""

    signature: Signature
    pre: Expr
    post: Expr
    helpers: tuple[Helper, ...] = ()


def map_children(e: Expr, f: Callable[[Expr], Expr]) -> Expr:
    """``e`` with ``f`` applied to each direct sub-expression (leaves returned as they are); binders and
    names are kept, so ``f`` must respect scoping itself."""
    if isinstance(e, Var | Lit):
        return e
    if isinstance(e, Unary):
        return Unary(e.op, f(e.arg))
    if isinstance(e, Binary):
        return Binary(e.op, f(e.left), f(e.right))
    if isinstance(e, Call):
        return Call(e.fn, tuple(f(a) for a in e.args))
    if isinstance(e, FilterLength):
        return FilterLength(f(e.items), e.var, f(e.pred))
    if isinstance(e, Ite):
        return Ite(f(e.cond), f(e.then_), f(e.else_))
    if isinstance(e, Quant):
        return Quant(e.kind, e.var, e.ty, None if e.bound is None else f(e.bound), f(e.body))
    raise TypeError(f"expr must be a MiniSpec Expr; got {type(e).__name__}")


TRUE = Lit(True)
FALSE = Lit(False)
RESULT = "result"


def conjuncts(e: Expr) -> tuple[Expr, ...]:
    """The top-level conjuncts of ``e`` (``a ∧ (b ∧ c)`` -> ``(a, b, c)``; ``True`` -> ``()``)."""
    if isinstance(e, Binary) and e.op == "∧":
        return conjuncts(e.left) + conjuncts(e.right)
    if e == TRUE:
        return ()
    return (e,)


def conjoin(parts: tuple[Expr, ...] | list[Expr]) -> Expr:
    """``p₁ ∧ (p₂ ∧ …)``, right-nested like Lean's ``∧``; ``True`` for no parts."""
    parts = list(parts)
    if not parts:
        return TRUE
    out = parts[-1]
    for p in reversed(parts[:-1]):
        out = Binary("∧", p, out)
    return out


__all__ = [
    "ABS",
    "ARITH",
    "COUNT",
    "DROP",
    "GET",
    "LENGTH",
    "MAX",
    "MIN",
    "PERM",
    "SIZE",
    "SUM",
    "TAKE",
    "TO_INT",
    "TO_LIST",
    "TO_NAT",
    "BINARY",
    "BOOL",
    "CHAR",
    "COMPARE",
    "CONTAINERS",
    "ELEMENTS",
    "FALSE",
    "FUNCTIONS",
    "INT",
    "LOGIC",
    "NAT",
    "PROP",
    "RESULT",
    "SCALARS",
    "STRING",
    "TRUE",
    "Binary",
    "Call",
    "Expr",
    "FilterLength",
    "Helper",
    "Ite",
    "Lit",
    "Param",
    "Quant",
    "Signature",
    "Spec",
    "Ty",
    "Unary",
    "Var",
    "conjoin",
    "conjuncts",
    "map_children",
]
