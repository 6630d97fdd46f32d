"""Reading MiniSpec text: Lean 4 spelling in, :mod:`~neurips26.specbridge.minispec.ast` nodes out.

A hand-written tokenizer feeds a precedence-climbing (Pratt) parser that follows Lean 4's notation table:
``↔`` 20 (non-associative) < ``→`` 25 (right) < ``∨`` 30 (right) < ``∧`` 35 (right) < ``¬`` (its operand
is read at 40) < ``= ≠ < ≤ > ≥`` 50 (non-associative) < ``+ -`` 65 (left) < ``* / %`` 70 (left) < unary
``-`` 75 < application, method calls and ``a[i]!``. Quantifiers, ``if … then … else …`` and ``fun`` reach
as far right as possible, as in Lean. ASCII spellings (``->``, ``/\\``, ``forall``, ``!=``, ``fun x =>`` …)
read the same as the Unicode ones. Comments (``--``, ``/- -/``) and attributes (``@[…]``) are skipped, so
exported Lean reads back.

Choices worth knowing:

* ``-3`` is ``Unary("-", Lit(3))``; integer literals carry no type. An ascribed literal ``(3 : Int)`` is
  ``Lit(3, INT)`` (Lean elaborates the numeral at that type); ``(-3 : Int)`` is ``Unary("-", Lit(3, INT))``.
* ``(x : Int)`` and ``↑x`` are the cast ``Call("toInt", (x,))`` when ``x`` is an atom, a method chain or an
  application. A cast around an operator expression, ``(a - b : Int)``, is refused: Lean pushes such an
  ascription to the leaves (``↑a - ↑b``, no truncation), which differs from casting the value; write
  ``↑(a - b)`` or cast the operands.
* A binder without a type must be bounded: ``∀ i, i < e → P`` and ``∃ i, i < e ∧ P`` (also ``∀ i < e, P``).
  ``i : Nat`` written gives the same; a ``Nat`` binder whose body has no such guard, or whose body is
  wrapped in parentheses, is unbounded. Several binders take their guards in order from the body:
  ``∀ i j, i < j → j < e → P`` becomes ``∀ j, j < e → ∀ i, i < j → P`` (a binder whose bound mentions
  another is nested inside it; otherwise the written order is kept).
* ``true`` and ``True`` both read as ``Lit(True)`` (likewise ``false`` and ``False``).
* ``(l.filter (fun v => p)).length`` is the only use of ``filter`` (:class:`FilterLength`).
* Helpers take at least one argument; in :func:`parse_spec` a call must name an earlier helper with the
  right arity (so no recursion), and helper names may not shadow built-in functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields

from neurips26.specbridge.minispec.ast import (
    ABS,
    CHAR,
    COUNT,
    DROP,
    ELEMENTS,
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


class SpecSyntaxError(ValueError):
    """MiniSpec text that does not parse; ``line`` and ``column`` (both from 1) locate the fault."""

    def __init__(self, message: str, line: int, column: int) -> None:
        self.message = message
        self.line = line
        self.column = column
        super().__init__(f"line {line}, column {column}: {message}")

    def __reduce__(self):  # keeps the exception picklable with its three fields
        return (type(self), (self.message, self.line, self.column))


# ----------------------------------------------------------------------------------------------------------
# Tokens
# ----------------------------------------------------------------------------------------------------------

#: Binary operators: Unicode spelling -> (precedence, associativity "left" / "right" / "none").
INFIX: dict[str, tuple[int, str]] = {
    "↔": (20, "none"),
    "→": (25, "right"),
    "∨": (30, "right"),
    "∧": (35, "right"),
    "=": (50, "none"),
    "≠": (50, "none"),
    "<": (50, "none"),
    "≤": (50, "none"),
    ">": (50, "none"),
    "≥": (50, "none"),
    "+": (65, "left"),
    "-": (65, "left"),
    "*": (70, "left"),
    "/": (70, "left"),
    "%": (70, "left"),
}
NOT_OPERAND = 40  # ¬ reads its operand at this precedence
NEG = 75  # unary minus: its precedence and its operand's

#: Method names after a dot -> (built-in function, number of explicit arguments).
METHODS: dict[str, tuple[str, int]] = {
    "size": (SIZE, 0),
    "length": (LENGTH, 0),
    "toList": (TO_LIST, 0),
    "sum": (SUM, 0),
    "toNat": (TO_NAT, 0),
    "natAbs": (ABS, 0),
    "count": (COUNT, 1),
    "take": (TAKE, 1),
    "drop": (DROP, 1),
}
#: Built-ins written as prefix applications.
PREFIX_FUNCTIONS: dict[str, str] = {"min": MIN, "max": MAX}

# Multi-character symbols first so that the longest spelling wins; ASCII spellings map to Unicode.
_SYMBOLS: tuple[tuple[str, str], ...] = (
    ("<->", "↔"),
    ("->", "→"),
    ("=>", "=>"),
    (":=", ":="),
    ("\\/", "∨"),
    ("/\\", "∧"),
    ("!=", "≠"),
    ("<=", "≤"),
    (">=", "≥"),
    ("@[", "@["),
    ("↔", "↔"),
    ("→", "→"),
    ("∨", "∨"),
    ("∧", "∧"),
    ("¬", "¬"),
    ("≠", "≠"),
    ("≤", "≤"),
    ("≥", "≥"),
    ("↦", "=>"),
    ("∀", "∀"),
    ("∃", "∃"),
    ("↑", "↑"),
    ("(", "("),
    (")", ")"),
    ("[", "["),
    ("]", "]"),
    ("!", "!"),
    (",", ","),
    (":", ":"),
    (".", "."),
    ("+", "+"),
    ("-", "-"),
    ("*", "*"),
    ("/", "/"),
    ("%", "%"),
    ("<", "<"),
    (">", ">"),
    ("=", "="),
)
_KEYWORDS: dict[str, str] = {"forall": "∀", "exists": "∃", "fun": "fun"}
_RESERVED: frozenset[str] = frozenset(
    {
        "def", "if", "then", "else", "fun", "true", "false", "True", "False", "Prop", "Type", "Sort",
        "theorem", "example", "by", "do", "have", "let", "in", "match", "with", "at", "from", "show",
        "where", "end", "open", "namespace", "section", "variable", "instance", "structure", "return",
        "for", "calc", "decide", "import", "forall", "exists",
    }
)  # fmt: skip
_SUBSCRIPTS = "₀₁₂₃₄₅₆₇₈₉"
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "r": "\r"}


def is_identifier(name: object) -> bool:
    """Whether ``name`` can be written as a MiniSpec (and Lean) variable or definition name."""
    return (
        isinstance(name, str)
        and bool(name)
        and _ident_start(name[0])
        and all(_ident_char(c) for c in name[1:])
        and name not in _RESERVED
        and name not in PREFIX_FUNCTIONS
    )


def _ident_start(c: str) -> bool:
    return c == "_" or (c.isalpha() and c not in "λΠΣ")


def _ident_char(c: str) -> bool:
    return _ident_start(c) or c.isdigit() or c in _SUBSCRIPTS or c == "'"


@dataclass(frozen=True)
class _Token:
    kind: str  # "ident", "num", "char", "str", "sym", "eof"
    text: str  # the identifier, the digits, the decoded literal or the canonical symbol
    line: int
    column: int
    space_before: bool


def _tokenize(text: str) -> list[_Token]:
    """Split ``text`` into tokens with their positions, skipping blanks, comments and nothing else."""
    tokens: list[_Token] = []
    i, line, col = 0, 1, 1
    n = len(text)
    space = True

    def advance(k: int) -> None:
        nonlocal i, line, col
        for _ in range(k):
            if text[i] == "\n":
                line, col = line + 1, 1
            else:
                col += 1
            i += 1

    while i < n:
        c = text[i]
        if c.isspace():
            advance(1)
            space = True
            continue
        if text.startswith("--", i):
            while i < n and text[i] != "\n":
                advance(1)
            space = True
            continue
        if text.startswith("/-", i):
            start = (line, col)
            depth = 0
            while True:
                if i >= n:
                    raise SpecSyntaxError("unterminated comment /-", *start)
                if text.startswith("/-", i):
                    depth += 1
                    advance(2)
                elif text.startswith("-/", i):
                    depth -= 1
                    advance(2)
                    if depth == 0:
                        break
                else:
                    advance(1)
            space = True
            continue
        sl, sc = line, col
        if c.isdigit():
            j = i
            while j < n and text[j].isdigit():
                j += 1
            if j < n and _ident_start(text[j]):
                raise SpecSyntaxError(f"malformed number {text[i : j + 1]!r}", sl, sc)
            tokens.append(_Token("num", text[i:j], sl, sc, space))
            advance(j - i)
        elif c in "'\"":
            value, length = _read_quoted(text, i, sl, sc)
            if c == "'" and len(value) != 1:
                raise SpecSyntaxError(f"a Char literal holds one character; got {value!r}", sl, sc)
            tokens.append(_Token("char" if c == "'" else "str", value, sl, sc, space))
            advance(length)
        elif _ident_start(c):
            j = i
            while j < n and _ident_char(text[j]):
                j += 1
            word = text[i:j]
            if word in _KEYWORDS:
                tokens.append(_Token("sym", _KEYWORDS[word], sl, sc, space))
            else:
                tokens.append(_Token("ident", word, sl, sc, space))
            advance(j - i)
        else:
            for spelling, canon in _SYMBOLS:
                if text.startswith(spelling, i):
                    # a[i]!=x reads as a[i]! = x
                    if spelling == "!=" and tokens and tokens[-1].text == "]" and not space:
                        spelling, canon = "!", "!"
                    tokens.append(_Token("sym", canon, sl, sc, space))
                    advance(len(spelling))
                    break
            else:
                raise SpecSyntaxError(f"unknown token {c!r}", sl, sc)
        space = False
    tokens.append(_Token("eof", "", line, col, True))
    return tokens


def _read_quoted(text: str, i: int, line: int, col: int) -> tuple[str, int]:
    """The decoded contents of the quoted literal starting at ``text[i]`` and its length in the text."""
    quote = text[i]
    out: list[str] = []
    j = i + 1
    while True:
        if j >= len(text) or text[j] == "\n":
            raise SpecSyntaxError(f"unterminated literal {quote}", line, col)
        c = text[j]
        if c == quote:
            return "".join(out), j + 1 - i
        if c == "\\":
            nxt = text[j + 1 : j + 2]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                j += 2
                continue
            if nxt == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", text[j + 2 : j + 4]):
                out.append(chr(int(text[j + 2 : j + 4], 16)))
                j += 4
                continue
            if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[j + 2 : j + 6]):
                out.append(chr(int(text[j + 2 : j + 6], 16)))
                j += 6
                continue
            raise SpecSyntaxError(f"unknown escape \\{nxt}", line, col + (j - i))
        out.append(c)
        j += 1


# ----------------------------------------------------------------------------------------------------------
# Parser
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Filter(Expr):
    """``l.filter (fun v => p)`` before its ``.length``; never leaves the parser."""

    items: Expr
    var: str
    pred: Expr
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)


def _reject_filters(e: object) -> None:
    """Raise at the first ``filter`` that is not read as ``(l.filter (fun v => p)).length``."""
    if isinstance(e, _Filter):
        raise SpecSyntaxError("filter is only supported as (l.filter (fun v => p)).length", e.line, e.column)
    if isinstance(e, tuple):
        for x in e:
            _reject_filters(x)
    elif isinstance(e, Expr):
        for f in fields(e):
            _reject_filters(getattr(e, f.name))


@dataclass(frozen=True)
class _ProofParam:
    """``(h : g x₁ …)``: a parameter whose type is a proposition (the postcondition's ``h_precond``)."""

    name: str
    head: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class _Def:
    name: str
    params: tuple[Param | _ProofParam, ...]
    ret: Ty | str
    body: Expr | None
    line: int
    column: int
    param_pos: tuple[tuple[int, int], ...]


class _Parser:
    def __init__(self, text: str, helpers: dict[str, int] | None = None) -> None:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str; got {type(text).__name__}")
        self.toks = _tokenize(text)
        self.pos = 0
        self.helpers = helpers  # name -> arity; None: any application of a name is accepted
        self.parens: set[int] = set()  # ids of nodes written inside their own parentheses
        self.keep: list[Expr] = []

    # -- token helpers -----------------------------------------------------------------------------------
    @property
    def tok(self) -> _Token:
        return self.toks[self.pos]

    def peek(self, k: int = 1) -> _Token:
        return self.toks[min(self.pos + k, len(self.toks) - 1)]

    def next(self) -> _Token:
        t = self.toks[self.pos]
        if t.kind != "eof":
            self.pos += 1
        return t

    def error(self, message: str, tok: _Token | None = None) -> SpecSyntaxError:
        t = self.tok if tok is None else tok
        return SpecSyntaxError(message, t.line, t.column)

    def describe(self, t: _Token) -> str:
        return "end of input" if t.kind == "eof" else repr(t.text)

    def is_sym(self, text: str, tok: _Token | None = None) -> bool:
        t = self.tok if tok is None else tok
        return t.kind == "sym" and t.text == text

    def is_word(self, word: str, tok: _Token | None = None) -> bool:
        t = self.tok if tok is None else tok
        return t.kind == "ident" and t.text == word

    def expect(self, text: str, what: str | None = None) -> _Token:
        if not self.is_sym(text):
            raise self.error(f"expected {what or repr(text)}, found {self.describe(self.tok)}")
        return self.next()

    def expect_word(self, word: str) -> _Token:
        if not self.is_word(word):
            raise self.error(f"expected {word!r}, found {self.describe(self.tok)}")
        return self.next()

    def expect_eof(self) -> None:
        if self.tok.kind != "eof":
            raise self.error(f"unexpected {self.describe(self.tok)}")

    def ident(self, what: str = "a name") -> _Token:
        t = self.tok
        if t.kind != "ident":
            raise self.error(f"expected {what}, found {self.describe(t)}")
        if t.text in _RESERVED:
            raise self.error(f"{t.text!r} is a reserved word, not {what}")
        return self.next()

    # -- types -------------------------------------------------------------------------------------------
    def parse_type(self) -> Ty:
        if self.is_sym("("):
            self.next()
            ty = self.parse_type()
            self.expect(")")
            return ty
        t = self.tok
        if t.kind != "ident":
            raise self.error(f"expected a type, found {self.describe(t)}")
        self.next()
        if t.text in ("List", "Array"):
            e = self.tok
            if e.kind != "ident":
                raise self.error(f"{t.text} needs an element type in {ELEMENTS}, found {self.describe(e)}")
            self.next()
            try:
                return Ty(t.text, e.text)
            except ValueError:
                raise self.error(
                    f"bad type {t.text} {e.text}: the element type must be one of {ELEMENTS}", e
                ) from None
        try:
            return Ty(t.text)
        except ValueError:
            raise self.error(f"unknown type {t.text!r}", t) from None

    # -- expressions -------------------------------------------------------------------------------------
    def parse_expr(self, min_prec: int = 0) -> Expr:
        left = self.parse_prefix()
        left_prec = 1024
        while True:
            t = self.tok
            if t.kind != "sym" or t.text not in INFIX:
                break
            prec, assoc = INFIX[t.text]
            if prec < min_prec:
                break
            need_left = prec if assoc == "left" else prec + 1
            if left_prec < need_left:
                raise self.error(f"{t.text!r} does not chain: add parentheses", t)
            self.next()
            right = self.parse_expr(prec if assoc == "right" else prec + 1)
            left = Binary(t.text, left, right)
            left_prec = prec
        return left

    def parse_prefix(self) -> Expr:
        if self.is_sym("¬"):
            self.next()
            return Unary("¬", self.parse_expr(NOT_OPERAND))
        if self.is_sym("-"):
            self.next()
            return Unary("-", self.parse_expr(NEG))
        if self.is_sym("∀") or self.is_sym("∃"):
            return self.parse_quant()
        if self.is_word("if"):
            self.next()
            cond = self.parse_expr()
            self.expect_word("then")
            then_ = self.parse_expr()
            self.expect_word("else")
            return Ite(cond, then_, self.parse_expr())
        if self.is_sym("fun"):
            raise self.error("'fun' is only allowed in (l.filter (fun v => p)).length")
        return self.parse_application()

    def starts_argument(self, t: _Token) -> bool:
        if t.kind in ("num", "char", "str"):
            return True
        if t.kind == "ident":
            return t.text not in _RESERVED or t.text in ("true", "false", "True", "False")
        return t.kind == "sym" and t.text in ("(", "↑")

    def parse_application(self) -> Expr:
        t = self.tok
        if self.is_sym("↑"):
            return self.parse_argument()
        if t.kind == "ident" and t.text not in _RESERVED and self.starts_argument(self.peek()):
            if t.text in PREFIX_FUNCTIONS:
                self.next()
                return self.finish_call(PREFIX_FUNCTIONS[t.text], self.arguments(2, t.text, t), t)
            elif t.text in FUNCTIONS or t.text in METHODS:
                raise self.error(f"{t.text!r} is a built-in: write it as a method, x.{t.text}", t)
            else:
                self.next()
                args = self.arguments(None, t.text, t)
                return self.finish_call(t.text, args, t)
        if self.is_word("List") and self.is_sym(".", self.peek()) and self.is_word("Perm", self.peek(2)):
            for _ in range(3):
                self.next()
            return self.finish_call(PERM, self.arguments(2, "List.Perm", t), t)
        e = self.parse_postfix()
        return e

    def finish_call(self, fn: str, args: tuple[Expr, ...], head: _Token) -> Expr:
        if fn not in FUNCTIONS and self.helpers is not None:
            if fn not in self.helpers:
                raise self.error(f"unknown function {fn!r} (helpers must be defined before use)", head)
            if self.helpers[fn] != len(args):
                raise self.error(f"{fn} takes {self.helpers[fn]} argument(s); got {len(args)}", head)
        if self.starts_argument(self.tok):
            raise self.error(f"too many arguments for {fn}")
        return Call(fn, args)

    def arguments(self, count: int | None, name: str, head: _Token) -> tuple[Expr, ...]:
        args: list[Expr] = []
        while self.starts_argument(self.tok) and (count is None or len(args) < count):
            args.append(self.parse_argument())
        if count is not None and len(args) != count:
            raise self.error(f"{name} takes {count} argument(s); got {len(args)}", head)
        return tuple(args)

    def parse_argument(self) -> Expr:
        if self.is_sym("↑"):
            t = self.next()
            arg = self.parse_argument()
            if isinstance(arg, _Filter):
                raise self.error("filter needs .length", t)
            return Call(TO_INT, (arg,))
        return self.parse_postfix()

    def parse_postfix(self) -> Expr:
        e = self.parse_primary()
        while True:
            t = self.tok
            if self.is_sym(".") and not t.space_before:
                name = self.peek()
                if name.kind != "ident" or name.space_before:
                    raise self.error("expected a method name after '.'", name)
                self.next()
                self.next()
                if name.text == "filter":
                    if isinstance(e, _Filter):
                        raise self.error("filter of a filter is not supported", name)
                    return self.parse_filter(e, name)
                if isinstance(e, _Filter):
                    if name.text != "length":
                        raise self.error("a filter must be followed by .length", name)
                    e = FilterLength(e.items, e.var, e.pred)
                    continue
                if name.text not in METHODS:
                    raise self.error(f"unknown method .{name.text}", name)
                fn, extra = METHODS[name.text]
                if extra == 0:
                    e = Call(fn, (e,))
                    continue
                args = self.arguments(extra, f".{name.text}", name)
                return self.finish_call(fn, (e, *args), name)
            elif self.is_sym("[") and not t.space_before:
                if isinstance(e, _Filter):
                    raise self.error("a filter must be followed by .length", t)
                self.next()
                index = self.parse_expr()
                self.expect("]")
                if not self.is_sym("!") or self.tok.space_before:
                    raise self.error("indexing is written a[i]! (the default-valued form)")
                self.next()
                e = Call(GET, (e, index))
            else:
                return e

    def parse_filter(self, items: Expr, name: _Token) -> _Filter:
        self.expect("(", "'(' before fun")
        if not self.is_sym("fun"):
            raise self.error(f"expected fun, found {self.describe(self.tok)}")
        self.next()
        var = self.ident("a variable").text
        self.expect("=>", "'=>' or '↦'")
        pred = self.parse_expr()
        self.expect(")")
        return _Filter(items, var, pred, name.line, name.column)

    def parse_primary(self) -> Expr:
        t = self.tok
        if t.kind == "num":
            self.next()
            return Lit(int(t.text))
        if t.kind == "char":
            self.next()
            return Lit(t.text, CHAR)
        if t.kind == "str":
            self.next()
            return Lit(t.text)
        if t.kind == "ident":
            if t.text in ("true", "True"):
                self.next()
                return Lit(True)
            if t.text in ("false", "False"):
                self.next()
                return Lit(False)
            if t.text in PREFIX_FUNCTIONS:
                raise self.error(f"{t.text!r} is a built-in function, not a variable")
            name = self.ident().text
            if self.helpers is not None and name in self.helpers:
                raise self.error(f"helper {name} needs {self.helpers[name]} argument(s)", t)
            return Var(name)
        if self.is_sym("("):
            return self.parse_paren()
        raise self.error(f"unexpected {self.describe(t)}")

    def parse_paren(self) -> Expr:
        open_tok = self.next()
        if self.is_sym(")"):
            raise self.error("empty parentheses")
        inner = self.parse_expr()
        if self.is_sym(":"):
            colon = self.next()
            ty = self.parse_type()
            self.expect(")", "')' to close the type ascription")
            return self.ascribe(inner, ty, colon)
        if not self.is_sym(")"):
            if self.tok.kind == "eof":
                raise self.error(f"unbalanced parenthesis: '(' at line {open_tok.line}, column "
                                 f"{open_tok.column} is never closed")  # fmt: skip
            raise self.error(f"expected ')', found {self.describe(self.tok)}")
        self.next()
        if not isinstance(inner, _Filter):
            self.parens.add(id(inner))
            self.keep.append(inner)  # keeps the id taken
        return inner

    def ascribe(self, inner: Expr, ty: Ty, colon: _Token) -> Expr:
        if ty not in (INT, NAT):
            raise self.error(f"only (x : Int) casts and (n : Nat) literals are supported; got : {ty}", colon)
        if isinstance(inner, Lit) and isinstance(inner.value, int) and not isinstance(inner.value, bool):
            if inner.ty is None:
                return Lit(inner.value, ty)
        if (
            isinstance(inner, Unary)
            and inner.op == "-"
            and isinstance(inner.arg, Lit)
            and type(inner.arg.value) is int
            and inner.arg.ty is None
        ):
            return Unary("-", Lit(inner.arg.value, ty))
        if ty == NAT:
            raise self.error("(e : Nat) is only supported for a literal", colon)
        if isinstance(inner, Binary | Unary | Ite | Quant | _Filter):
            raise self.error(
                "(e : Int) around an operator expression is ambiguous (Lean casts the operands): "
                "write ↑(e) or cast the operands",
                colon,
            )
        return Call(TO_INT, (inner,))

    # -- quantifiers -------------------------------------------------------------------------------------
    def parse_quant(self) -> Expr:
        kind_tok = self.next()
        kind = kind_tok.text
        names: list[str] = []
        while self.tok.kind == "ident":
            names.append(self.ident("a bound variable").text)
        if not names:
            raise self.error(f"expected a bound variable after {kind}")
        if len(set(names)) != len(names):
            raise self.error("repeated bound variable", kind_tok)
        if self.is_sym("<"):  # binder predicate ∀ i < e, P
            if len(names) != 1:
                raise self.error("a binder bound ∀ i < e names one variable", self.tok)
            self.next()
            bound = self.parse_expr(51)
            self.expect(",")
            return Quant(kind, names[0], NAT, bound, self.parse_expr())
        ty: Ty | None = None
        if self.is_sym(":"):
            colon = self.next()
            ty = self.parse_type()
            if ty not in (NAT, INT):
                raise self.error(f"a quantifier ranges over Nat or Int; got {ty}", colon)
        self.expect(",", "','")
        body_tok = self.tok
        body = self.parse_expr()
        if ty == INT:
            for name in reversed(names):
                body = Quant(kind, name, INT, None, body)
            return body
        bounded = self.split_guards(kind, names, body)
        if bounded is not None:
            return bounded
        if ty is None:
            raise self.error(
                f"{kind} {' '.join(names)} needs a bound ({names[0]} < e "
                f"{'→' if kind == '∀' else '∧'} …) or a type (: Int, : Nat)",
                body_tok,
            )
        for name in reversed(names):
            body = Quant(kind, name, NAT, None, body)
        return body

    def split_guards(self, kind: str, names: list[str], body: Expr) -> Expr | None:
        """Peel one guard ``v < e`` per binder off the front of ``body`` and nest bounded quantifiers."""
        link = "→" if kind == "∀" else "∧"
        guards: dict[str, Expr] = {}
        order: list[str] = []
        rest = body
        for _ in names:
            if id(rest) in self.parens or not (isinstance(rest, Binary) and rest.op == link):
                return None
            g = rest.left
            if not (isinstance(g, Binary) and g.op == "<" and isinstance(g.left, Var)):
                return None
            v = g.left.name
            if v not in names or v in guards:
                return None
            guards[v] = g.right
            order.append(v)
            rest = rest.right
        # a binder whose bound mentions another binder goes inside it
        deps = {v: {w for w in names if w != v and mentions(guards[v], w)} for v in names}
        placed: list[str] = []
        while len(placed) < len(names):
            ready = [v for v in names if v not in placed and deps[v] <= set(placed)]
            if not ready:
                raise self.error("the bounds of the bound variables depend on each other in a cycle")
            placed.append(ready[0])
        out = rest
        for v in reversed(placed):
            if mentions(guards[v], v):
                raise self.error(f"the bound of {v} mentions {v}")
            out = Quant(kind, v, NAT, guards[v], out)
        return out

    # -- definitions -------------------------------------------------------------------------------------
    def skip_attributes(self) -> None:
        while self.is_sym("@["):
            self.next()
            depth = 1
            while depth:
                t = self.next()
                if t.kind == "eof":
                    raise self.error("unterminated attribute @[", t)
                if t.kind == "sym" and t.text in ("[", "@["):
                    depth += 1
                elif t.kind == "sym" and t.text == "]":
                    depth -= 1

    def parse_params(self) -> tuple[tuple[Param | _ProofParam, ...], tuple[tuple[int, int], ...]]:
        params: list[Param | _ProofParam] = []
        positions: list[tuple[int, int]] = []
        while self.is_sym("("):
            open_tok = self.next()
            names: list[_Token] = []
            while self.tok.kind == "ident":
                names.append(self.ident("a parameter name"))
            if not names:
                raise self.error(f"expected a parameter name, found {self.describe(self.tok)}")
            self.expect(":", "':' and a type")
            t = self.tok
            if t.kind == "ident" and t.text not in ("List", "Array") and t.text not in (
                "Nat", "Int", "Bool", "Char", "String"
            ):  # fmt: skip
                head = self.ident("a type").text
                args: list[str] = []
                while self.tok.kind == "ident":
                    args.append(self.ident("an argument").text)
                for n in names:
                    params.append(_ProofParam(n.text, head, tuple(args)))
                    positions.append((n.line, n.column))
            else:
                ty = self.parse_type()
                for n in names:
                    params.append(Param(n.text, ty))
                    positions.append((n.line, n.column))
            if not self.is_sym(")"):
                if self.tok.kind == "eof":
                    raise self.error(
                        f"unbalanced parenthesis: '(' at line {open_tok.line}, column {open_tok.column} "
                        "is never closed"
                    )
                raise self.error(f"expected ')', found {self.describe(self.tok)}")
            self.next()
        seen: set[str] = set()
        for p, (line, col) in zip(params, positions, strict=True):
            if p.name in seen:
                raise SpecSyntaxError(f"parameter {p.name} is declared twice", line, col)
            seen.add(p.name)
        return tuple(params), tuple(positions)

    def parse_header(self) -> tuple[_Token, tuple, tuple, Ty | str]:
        self.skip_attributes()
        self.expect_word("def")
        name = self.ident("a definition name")
        params, positions = self.parse_params()
        self.expect(":", "':' and the result type")
        if self.is_word("Prop"):
            self.next()
            ret: Ty | str = PROP
        else:
            ret = self.parse_type()
        return name, params, positions, ret

    def parse_def(self) -> _Def:
        name, params, positions, ret = self.parse_header()
        if not self.is_sym(":="):
            raise self.error(f"expected ':=' after the type of {name.text}, found {self.describe(self.tok)}")
        self.next()
        body = self.parse_expr()
        _reject_filters(body)
        return _Def(name.text, params, ret, body, name.line, name.column, positions)


def mentions(e: Expr, name: str) -> bool:
    """Whether variable ``name`` occurs free in ``e`` (a quantifier's bound is outside its binder)."""
    if isinstance(e, Var):
        return e.name == name
    if isinstance(e, Lit):
        return False
    if isinstance(e, Unary):
        return mentions(e.arg, name)
    if isinstance(e, Binary):
        return mentions(e.left, name) or mentions(e.right, name)
    if isinstance(e, Call):
        return any(mentions(a, name) for a in e.args)
    if isinstance(e, FilterLength):
        return mentions(e.items, name) or (e.var != name and mentions(e.pred, name))
    if isinstance(e, Ite):
        return any(mentions(x, name) for x in (e.cond, e.then_, e.else_))
    if isinstance(e, Quant):
        in_bound = e.bound is not None and mentions(e.bound, name)
        return in_bound or (e.var != name and mentions(e.body, name))
    return False


# ----------------------------------------------------------------------------------------------------------
# Public entry points
# ----------------------------------------------------------------------------------------------------------


def parse_expr(text: str) -> Expr:
    """The MiniSpec expression written in ``text`` (the whole text must be one expression)."""
    p = _Parser(text)
    e = p.parse_expr()
    p.expect_eof()
    _reject_filters(e)
    return e


def parse_type(text: str) -> Ty:
    """The MiniSpec type written in ``text`` (``Int``, ``Array Int``, ``List Char`` …)."""
    p = _Parser(text)
    ty = p.parse_type()
    p.expect_eof()
    return ty


def parse_signature(text: str) -> Signature:
    """The signature of a Lean ``def`` line, ``def f (a : Array Int) (k : Nat) : Int`` (a trailing
    ``:=`` with nothing after it is allowed)."""
    p = _Parser(text)
    name, params, positions, ret = p.parse_header()
    if ret == PROP:
        raise p.error("a signature returns a value type, not Prop")
    for prm, (line, col) in zip(params, positions, strict=True):
        if isinstance(prm, _ProofParam):
            raise SpecSyntaxError(f"parameter {prm.name} must have a MiniSpec type", line, col)
    if p.is_sym(":="):
        p.next()
    p.expect_eof()
    return Signature(name.text, params, ret)  # type: ignore[arg-type]


def parse_spec(text: str) -> Spec:
    """The VERINA-style spec in ``text``: helper defs, then ``f_precond`` and ``f_postcond``.

    Checks the layout: both conditions return ``Prop``; the postcondition's parameters are the
    precondition's, then ``(result : τ)``, then ``(h_precond : f_precond x₁ …)``.
    """
    p = _Parser(text, helpers={})
    assert p.helpers is not None
    defs: list[_Def] = []
    while p.tok.kind != "eof":
        d = p.parse_def()
        defs.append(d)
        if not d.name.endswith(("_precond", "_postcond")):
            if d.name in p.helpers or d.name in FUNCTIONS or d.name in PREFIX_FUNCTIONS or d.name in METHODS:
                raise SpecSyntaxError(f"helper name {d.name!r} is already taken", d.line, d.column)
            if not d.params:
                raise SpecSyntaxError(f"helper {d.name} needs at least one parameter", d.line, d.column)
            p.helpers[d.name] = len(d.params)
    end = p.tok
    if len(defs) < 2:
        raise SpecSyntaxError("a spec needs def f_precond … and def f_postcond …", end.line, end.column)
    *helpers, pre, post = defs
    if not pre.name.endswith("_precond") or pre.name == "_precond":
        raise SpecSyntaxError(
            f"the second-to-last def must be f_precond; got {pre.name}", pre.line, pre.column
        )
    fname = pre.name[: -len("_precond")]
    if post.name != f"{fname}_postcond":
        raise SpecSyntaxError(
            f"the last def must be {fname}_postcond; got {post.name}", post.line, post.column
        )
    for d in (*helpers, pre, post):
        for prm, (line, col) in zip(d.params, d.param_pos, strict=True):
            if isinstance(prm, _ProofParam) and not (d is post and prm.name == "h_precond"):
                raise SpecSyntaxError(
                    f"parameter {prm.name} of {d.name}: unknown type {' '.join((prm.head, *prm.args))!r}",
                    line,
                    col,
                )
    for d in helpers:
        if d.name.endswith(("_precond", "_postcond")):
            raise SpecSyntaxError(f"unexpected {d.name} before {pre.name}", d.line, d.column)
    for d in (pre, post):
        if d.ret != PROP:
            raise SpecSyntaxError(f"{d.name} must return Prop; got {d.ret}", d.line, d.column)
    pre_params: tuple[Param, ...] = pre.params  # type: ignore[assignment]
    for prm, (line, col) in zip(pre_params, pre.param_pos, strict=True):
        if prm.name in (RESULT, "h_precond"):
            raise SpecSyntaxError(f"{prm.name} may not be a parameter of {pre.name}", line, col)
    _check_postcond_params(pre, post, pre_params)
    result_ty = post.params[len(pre_params)].ty  # type: ignore[union-attr]
    signature = Signature(fname, pre_params, result_ty)
    assert pre.body is not None and post.body is not None
    return Spec(
        signature,
        pre.body,
        post.body,
        tuple(Helper(d.name, d.params, d.ret, d.body) for d in helpers),  # type: ignore[arg-type]
    )


def _check_postcond_params(pre: _Def, post: _Def, pre_params: tuple[Param, ...]) -> None:
    n = len(pre_params)
    want = " ".join(f"({q.name} : {q.ty})" for q in pre_params) or "no parameters"
    got = post.params
    for k, q in enumerate(pre_params):
        if k >= len(got):
            raise SpecSyntaxError(
                f"{post.name} lacks parameter ({q.name} : {q.ty}) of {pre.name}", post.line, post.column
            )
        if got[k] != q:
            line, col = post.param_pos[k]
            shown = _show_param(got[k])
            raise SpecSyntaxError(
                f"parameter {k + 1} of {post.name} is {shown} but {pre.name} has ({q.name} : {q.ty}); "
                f"{post.name} must start with {want}",
                line,
                col,
            )
    if len(got) <= n or not isinstance(got[n], Param) or got[n].name != RESULT:
        line, col = post.param_pos[n] if len(got) > n else (post.line, post.column)
        found = _show_param(got[n]) if len(got) > n else "nothing"
        raise SpecSyntaxError(
            f"{post.name} needs (result : τ) after {pre.name}'s parameters; found {found}", line, col
        )
    expected = _ProofParam("h_precond", pre.name, tuple(q.name for q in pre_params))
    if len(got) <= n + 1 or got[n + 1] != expected:
        line, col = post.param_pos[n + 1] if len(got) > n + 1 else (post.line, post.column)
        found = _show_param(got[n + 1]) if len(got) > n + 1 else "nothing"
        raise SpecSyntaxError(
            f"{post.name} needs {_show_param(expected)} after (result : τ); found {found}", line, col
        )
    if len(got) > n + 2:
        line, col = post.param_pos[n + 2]
        raise SpecSyntaxError(
            f"{post.name} has an extra parameter {_show_param(got[n + 2])} after h_precond", line, col
        )


def _show_param(prm: Param | _ProofParam) -> str:
    if isinstance(prm, Param):
        return f"({prm.name} : {prm.ty})"
    return f"({prm.name} : {' '.join((prm.head, *prm.args))})"


def signature_of(signature: object) -> Signature:
    """``signature`` as a :class:`Signature`: itself, or its Lean text parsed (ValueError naming
    ``signature`` when the text is not a signature, TypeError for anything else)."""
    if isinstance(signature, Signature):
        return signature
    if isinstance(signature, str):
        try:
            return parse_signature(signature)
        except SpecSyntaxError as err:
            raise ValueError(f"signature must be a Lean signature 'def f (x : τ) … : τ'; {err}") from None
    raise TypeError(f"signature must be a Signature or its Lean text; got {type(signature).__name__}")


__all__ = [
    "signature_of",
    "INFIX",
    "METHODS",
    "PREFIX_FUNCTIONS",
    "SpecSyntaxError",
    "is_identifier",
    "mentions",
    "parse_expr",
    "parse_signature",
    "parse_spec",
    "parse_type",
]
