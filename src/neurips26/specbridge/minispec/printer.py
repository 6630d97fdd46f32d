"""Writing MiniSpec nodes back as Lean 4 text, with as few parentheses as Lean's precedences allow.

The printer is the parser's inverse: ``parse_expr(print_expr(e)) == e`` for every expression the parser
can produce and ``parse_spec(print_spec(s)) == s`` for every spec. It writes Unicode (``∀ ∃ → ∧ ∨ ¬ ≠ ≤
≥ ↔``) and follows Lean's notation table (see :mod:`~neurips26.specbridge.minispec.parser`). Two
readability rules go beyond the bare minimum: a quantifier or ``if`` that is an operand of a binary operator
is always parenthesised (``(∃ i, …) ∧ (∀ i, …)``, as VERINA writes it), while a quantifier directly inside
a bounded quantifier's body is not (``∀ i, i < n → ∀ j, j < i → …``).

``True``/``False`` are written in proposition positions (a condition, an operand of a connective, a
quantifier body) and ``true``/``false`` elsewhere, which is what Lean expects; both read back as the same
``Lit``. Nodes the parser never builds print as valid Lean but may read back differently: ``Lit(-3)``
prints ``-3`` (read back as ``Unary("-", Lit(3))``), and an unbounded ``Nat`` quantifier whose body starts
with the guard ``x < e`` gets its body parenthesised so that it stays unbounded.
"""

from __future__ import annotations

from neurips26.specbridge.minispec.ast import (
    ABS,
    CHAR,
    COUNT,
    DROP,
    FUNCTIONS,
    GET,
    INT,
    LENGTH,
    MAX,
    MIN,
    NAT,
    PERM,
    PROP,
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
    Param,
    Quant,
    Signature,
    Spec,
    Ty,
    Unary,
    Var,
)
from neurips26.specbridge.minispec.parser import INFIX, NEG, NOT_OPERAND, is_identifier, mentions

_ATOM = 1024  # atoms, a.size, a[i]!, (x : Int): usable as a receiver or an argument
_APP = 1023  # applications (min x y, l.count x, helper calls): need parentheses as arguments
_OPEN = 0  # quantifiers and if-then-else: their last part reaches as far right as possible

_POSTFIX: dict[str, str] = {SIZE: "size", LENGTH: "length", TO_LIST: "toList", SUM: "sum", TO_NAT: "toNat",
                            ABS: "natAbs"}  # fmt: skip
_WITH_ARG: dict[str, str] = {COUNT: "count", TAKE: "take", DROP: "drop"}
_LOGIC = ("∧", "∨", "→", "↔")


def quote_literal(text: str, quote: str) -> str:
    """``text`` between ``quote`` characters, escaped as a Lean string or character literal."""
    out: list[str] = []
    for c in text:
        if c == "\\":
            out.append("\\\\")
        elif c == quote:
            out.append("\\" + quote)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append(c)
    return quote + "".join(out) + quote


class _Printer:
    def __init__(self, lean: bool) -> None:
        self.lean = lean

    def show(self, e: Expr, prop: bool) -> tuple[str, int, bool]:
        """``e`` as text, its precedence and whether its text ends in an open binder body."""
        if isinstance(e, Var):
            if not is_identifier(e.name):
                raise ValueError(f"e: variable name {e.name!r} is not an identifier")
            return e.name, _ATOM, False
        if isinstance(e, Lit):
            return self.literal(e, prop)
        if isinstance(e, Unary):
            if e.op == "¬":
                if isinstance(e.arg, Quant):
                    text, _, _ = self.show(e.arg, True)
                    return "¬" + text, NOT_OPERAND, True
                text, opened = self.operand(e.arg, NOT_OPERAND, True, left=False)
                return "¬" + text, NOT_OPERAND, opened
            if e.op == "-":
                x = e.arg
                if isinstance(x, Lit) and type(x.value) is int and x.ty in (NAT, INT) and x.value >= 0:
                    return f"(-{x.value} : {x.ty})", _ATOM, False  # reads back as the same negation
                text, _ = self.operand(e.arg, NEG, False, left=True)
                if text.startswith("-"):
                    text = f"({text})"
                return "-" + text, NEG, False
            raise ValueError(f"e: unknown unary operator {e.op!r}")
        if isinstance(e, Binary):
            if e.op not in INFIX:
                raise ValueError(f"e: unknown binary operator {e.op!r}")
            prec, assoc = INFIX[e.op]
            sub_prop = e.op in _LOGIC
            left, _ = self.operand(e.left, prec if assoc == "left" else prec + 1, sub_prop, left=True)
            right, opened = self.operand(
                e.right, prec if assoc == "right" else prec + 1, sub_prop, left=False
            )
            return f"{left} {e.op} {right}", prec, opened
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, FilterLength):
            if not is_identifier(e.var):
                raise ValueError(f"e: filter variable {e.var!r} is not an identifier")
            items = self.receiver(e.items)
            pred, _, _ = self.show(e.pred, False)
            return f"({items}.filter (fun {e.var} => {pred})).length", _ATOM, False
        if isinstance(e, Ite):
            cond, _, _ = self.show(e.cond, True)
            then_, _, _ = self.show(e.then_, prop)
            else_, _, _ = self.show(e.else_, prop)
            return f"if {cond} then {then_} else {else_}", _OPEN, True
        if isinstance(e, Quant):
            return self.quant(e), _OPEN, True
        raise TypeError(f"e must be a MiniSpec expression; got {type(e).__name__}")

    def operand(self, e: Expr, need: int, prop: bool, *, left: bool) -> tuple[str, bool]:
        """``e`` where the context reads precedence ``need``; parenthesised when it would not read back.
        Returns the text and whether it ends open (only possible when not parenthesised)."""
        text, prec, opened = self.show(e, prop)
        if prec < need or (left and opened):
            return f"({text})", False
        return text, opened

    def literal(self, e: Lit, prop: bool) -> tuple[str, int, bool]:
        v = e.value
        if isinstance(v, bool):
            text = ("True" if v else "False") if prop else ("true" if v else "false")
            return text, _ATOM, False
        if isinstance(v, int):
            if e.ty is None:
                return (str(v), _ATOM, False) if v >= 0 else (f"-{-v}", NEG, False)
            if e.ty not in (NAT, INT):
                raise ValueError(f"e: an integer literal has type Nat or Int; got {e.ty}")
            if e.ty == NAT and v < 0:
                raise ValueError(f"e: a Nat literal cannot be negative; got {v}")
            return f"({v} : {e.ty})", _ATOM, False
        if isinstance(v, str):
            if e.ty == CHAR:
                if len(v) != 1:
                    raise ValueError(f"e: a Char literal holds one character; got {v!r}")
                return quote_literal(v, "'"), _ATOM, False
            return quote_literal(v, '"'), _ATOM, False
        raise TypeError(f"e: literal value must be int, bool or str; got {type(v).__name__}")

    def receiver(self, e: Expr) -> str:
        """``e`` before ``.method`` or ``[i]!`` (a bare numeral there would read as a decimal point)."""
        text, _ = self.operand(e, _ATOM, False, left=True)
        return f"({text})" if text[:1].isdigit() else text

    def call(self, e: Call) -> tuple[str, int, bool]:
        fn, args = e.fn, e.args
        if fn in FUNCTIONS and len(args) != FUNCTIONS[fn]:
            raise ValueError(f"e: {fn} takes {FUNCTIONS[fn]} argument(s); got {len(args)}")
        if fn in _POSTFIX:
            recv = self.receiver(args[0])
            return f"{recv}.{_POSTFIX[fn]}", _ATOM, False
        if fn in _WITH_ARG:
            recv = self.receiver(args[0])
            arg, _ = self.operand(args[1], _ATOM, False, left=True)
            return f"{recv}.{_WITH_ARG[fn]} {arg}", _APP, False
        if fn == GET:
            recv = self.receiver(args[0])
            index, _, _ = self.show(args[1], False)
            return f"{recv}[{index}]!", _ATOM, False
        if fn == TO_INT:
            x = args[0]
            if isinstance(x, Lit) and type(x.value) is int and x.ty is None and x.value >= 0:
                return f"↑{x.value}", _APP, False
            text, prec, _ = self.show(x, False)
            if prec >= _APP and not isinstance(x, Unary | Binary | Ite | Quant):
                return f"({text} : Int)", _ATOM, False
            return (f"↑{text}" if prec == _ATOM else f"↑({text})"), _APP, False
        if fn in (PERM, MIN, MAX) or fn not in FUNCTIONS:
            head = {PERM: "List.Perm", MIN: "min", MAX: "max"}.get(fn, fn)
            if fn not in FUNCTIONS and not is_identifier(fn):
                raise ValueError(f"e: helper name {fn!r} is not an identifier")
            if not args:
                raise ValueError(f"e: helper call {fn} needs at least one argument")
            parts = [self.operand(a, _ATOM, False, left=True)[0] for a in args]
            return " ".join([head, *parts]), _APP, False
        raise ValueError(f"e: unknown function {fn!r}")  # pragma: no cover - every built-in is handled

    def quant(self, e: Quant) -> str:
        if e.kind not in ("∀", "∃"):
            raise ValueError(f"e: quantifier kind must be '∀' or '∃'; got {e.kind!r}")
        if not is_identifier(e.var):
            raise ValueError(f"e: bound variable {e.var!r} is not an identifier")
        if e.bound is not None:
            if e.ty != NAT:
                raise ValueError(f"e: a bounded quantifier ranges over Nat; got {e.ty}")
            if mentions(e.bound, e.var):
                raise ValueError(
                    f"e: the bound of {e.kind} {e.var} mentions {e.var}, which the binder would capture; "
                    "rename the bound variable"
                )
            binder = f"{e.var} : Nat" if self.lean else e.var
            bound, _ = self.operand(e.bound, INFIX["<"][0] + 1, False, left=True)
            link = "→" if e.kind == "∀" else "∧"
            if isinstance(e.body, Quant | Ite):
                body, _, _ = self.show(e.body, True)
            else:
                body, _ = self.operand(e.body, INFIX[link][0], True, left=False)
            return f"{e.kind} {binder}, {e.var} < {bound} {link} {body}"
        if e.ty not in (NAT, INT):
            raise ValueError(f"e: an unbounded quantifier ranges over Nat or Int; got {e.ty}")
        body, _, _ = self.show(e.body, True)
        link = "→" if e.kind == "∀" else "∧"
        b = e.body
        if (
            e.ty == NAT
            and isinstance(b, Binary)
            and b.op == link
            and isinstance(b.left, Binary)
            and b.left.op == "<"
            and b.left.left == Var(e.var)
        ):
            body = f"({body})"  # keeps it unbounded when read back
        return f"{e.kind} {e.var} : {e.ty}, {body}"


def print_expr(e: Expr, *, lean: bool = False) -> str:
    """``e`` as MiniSpec (Lean 4) text. ``lean=True`` writes bounded binders as ``∀ i : Nat, i < n → …``,
    the form that Lean's ``decide`` resolves through ``Nat.decidableBallLT`` whatever the bound's type."""
    if not isinstance(e, Expr):
        raise TypeError(f"e must be a MiniSpec expression; got {type(e).__name__}")
    return _Printer(lean).show(e, True)[0]


def print_type(ty: Ty) -> str:
    """The Lean spelling of ``ty`` (``Int``, ``Array Int``, ``List Char``)."""
    if not isinstance(ty, Ty):
        raise TypeError(f"ty must be a Ty; got {type(ty).__name__}")
    return str(ty)


def _params(params: tuple[Param, ...], what: str) -> list[str]:
    out = []
    for p in params:
        if not isinstance(p, Param):
            raise TypeError(f"{what} must hold Param objects; got {type(p).__name__}")
        if not is_identifier(p.name):
            raise ValueError(f"{what}: parameter name {p.name!r} is not an identifier")
        out.append(f"({p.name} : {print_type(p.ty)})")
    return out


def print_signature(signature: Signature) -> str:
    """The Lean signature line ``def f (a : Array Int) (k : Nat) : Int``."""
    if not isinstance(signature, Signature):
        raise TypeError(f"signature must be a Signature; got {type(signature).__name__}")
    if not is_identifier(signature.name):
        raise ValueError(f"signature: function name {signature.name!r} is not an identifier")
    head = " ".join(["def", signature.name, *_params(signature.params, "signature")])
    return f"{head} : {print_type(signature.ret)}"


def _definition(name: str, params: list[str], ret: str, body: str, attribute: str | None) -> str:
    head = " ".join(["def", name, *params])
    text = f"{head} : {ret} :=\n  {body}\n"
    return f"{attribute}\n{text}" if attribute else text


def print_spec(spec: Spec, *, lean: bool = False, attribute: str | None = None) -> str:
    """``spec`` in VERINA's layout: helpers first, then ``f_precond`` and ``f_postcond``, each body on its
    own line indented by two spaces, one blank line between definitions. ``lean=True`` writes bounded
    binders with ``: Nat`` (see :func:`print_expr`); ``attribute`` (e.g. ``"@[reducible, simp]"``) is put
    on the line before every ``def``."""
    if not isinstance(spec, Spec):
        raise TypeError(f"spec must be a Spec; got {type(spec).__name__}")
    printer = _Printer(lean)
    sig = spec.signature
    print_signature(sig)  # validates the names and types
    params = _params(sig.params, "spec.signature.params")
    if any(p.name in (RESULT, "h_precond") for p in sig.params):
        raise ValueError("spec.signature: 'result' and 'h_precond' are reserved parameter names")
    blocks: list[str] = []
    for h in spec.helpers:
        if not isinstance(h, Helper):
            raise TypeError(f"spec.helpers must hold Helper objects; got {type(h).__name__}")
        if not is_identifier(h.name) or h.name in FUNCTIONS:
            raise ValueError(f"spec.helpers: helper name {h.name!r} is not usable")
        if not h.params:
            raise ValueError(f"spec.helpers: helper {h.name} needs at least one parameter")
        ret = h.ret if h.ret == PROP else print_type(h.ret)  # type: ignore[arg-type]
        body = printer.show(h.body, h.ret == PROP)[0]
        blocks.append(_definition(h.name, _params(h.params, f"helper {h.name}"), ret, body, attribute))
    f = sig.name
    blocks.append(_definition(f"{f}_precond", params, PROP, printer.show(spec.pre, True)[0], attribute))
    post_params = [*params, f"({RESULT} : {print_type(sig.ret)})",
                   f"(h_precond : {' '.join([f'{f}_precond', *(p.name for p in sig.params)])})"]  # fmt: skip
    blocks.append(
        _definition(f"{f}_postcond", post_params, PROP, printer.show(spec.post, True)[0], attribute)
    )
    return "\n".join(blocks)


__all__ = ["print_expr", "print_signature", "print_spec", "print_type", "quote_literal"]
