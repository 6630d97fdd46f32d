"""Reconstruction-guided pattern mining: explain trusted specs clause by clause, keep the explanations that
determine their spec, abstract them into patterns, and retrieve patterns for new descriptions.

The pipeline reads only the trusted pool of the benchmark and is deterministic throughout:

1. **Reconstruct.** Each top-level conjunct of a reference pre- or postcondition becomes one plan clause. Its
   text comes from a verbaliser of MiniSpec (:func:`verbalise`: connectives, comparisons and quantifiers in
   words, terms as MiniSpec text) and its formal hint from reading that text back (:func:`reformalise`).
   The verbaliser is lossy exactly where an explaining reader tends to be:

   * a quantifier bound ``i < e + 1`` reads "up to e", and "up to e" is read back as ``i < e``; a
     comparison ``result < e + 1`` reads "result is at most e", like ``result ≤ e``;
   * explicit casts vanish (``↑x``, ``(x : Int)``, ``x.toNat``). Reading back lets Lean's elaboration put
     ``↑`` at the leaves again and restores ``.toNat`` only where an index or a bound needs a ``Nat``, so
     ``↑(n - k)`` comes back as the ``Int`` subtraction ``↑n - ↑k``;
   * ``if c then t else e`` reads "when c, t": the else-part is not said, and the text reads back as
     ``c → t``.

2. **Round trip.** A plan is accepted when its decoded spec equals the reference after :func:`normalise`,
   or has the same truth value on every obligation of the task's tests and reject inputs (evaluated, or
   proved with the full-z3 profile where an unbounded quantifier prevents evaluation; an undecided value
   never counts as agreement). A clause passes when its conjunct alone round-trips.

3. **Abstract.** A conjunct is normalised (bound variables renamed by nesting depth, ``i, j, k`` for
   quantifiers and ``x, y, z`` for filters; ``>``/``≥`` turned into ``<``/``≤``; conjunctions sorted by
   printed text) and anti-unified with the signature: parameters become slots named by role and order of
   first occurrence (containers ``⟨a⟩, ⟨b⟩``, numbers ``⟨n⟩, ⟨m⟩``, Booleans ``⟨t⟩``, characters ``⟨ch⟩``),
   integer literals become ``⟨c⟩, ⟨c2⟩, …``, and an *element predicate* becomes an element slot
   ``⟨p @ E⟩``: a comparison one side of which is built from a single element ``E`` (a bound variable or
   an access ``a[e]!`` of a parameter or ``result``) and integer literals, the other from literals and
   parameters. ``result`` stays. A Boolean result defined by a condition, ``result = true ↔ Φ``, is
   abstracted as ``result = true ↔ ⟨cond⟩``, and Φ is mined as a pair of its own, so the condition idioms
   of Boolean tasks are found as well. Helper calls are unfolded first: a pattern cannot carry a task's
   helper definitions.

4. **Group and name.** Pairs are grouped by :func:`structural_key` (quantifier prefix, connective skeleton
   and head symbols; leaves reduced to *term*, *bound variable* or Boolean literal; casts and ``toList``
   transparent; ``size``/``length`` one symbol). A group with enough distinct source tasks becomes a
   pattern, named after the seed pattern with the same key, or after one conjunct of a multi-conjunct seed
   (``max_characterisation_part2``) when exactly one seed has it, else ``mined_<k>``. The spec template is
   the group's most frequent normalised template; the clause template is its verbalisation with the slots
   in backticks; the cues are the content words of the source clauses and, per source task, the sentence
   of its description sharing most words with the clause. A pattern's *precision* is the share of its
   source conjuncts that the template, filled with that source's values, reproduces on the source's tests.

5. **Transfer.** :func:`retrieve` scores the applicable patterns by TF-IDF cosine between their cue
   document and each sentence of a description and keeps the best sentence's score (so a distractor
   sentence costs nothing); :func:`random_hints` draws applicable patterns at random as a control.

Deliberately left out: learned verbalisers, higher-order anti-unification across groups, and cue
weighting beyond TF-IDF.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from neurips26.specbridge.benchmark import Task
from neurips26.specbridge.evaluate import inline_helpers
from neurips26.specbridge.execute import ExecutionBudget, NotExecutable, postcondition, precondition
from neurips26.specbridge.minispec.ast import (
    ARITH,
    BOOL,
    COMPARE,
    DROP,
    FUNCTIONS,
    GET,
    INT,
    LENGTH,
    NAT,
    PERM,
    RESULT,
    SIZE,
    TAKE,
    TO_INT,
    TO_LIST,
    TO_NAT,
    TRUE,
    Binary,
    Call,
    Expr,
    FilterLength,
    Helper,
    Ite,
    Lit,
    Quant,
    Signature,
    Spec,
    Ty,
    Unary,
    Var,
    conjoin,
    conjuncts,
    map_children,
)
from neurips26.specbridge.minispec.parser import SpecSyntaxError, parse_expr, parse_spec, signature_of
from neurips26.specbridge.minispec.printer import print_expr, print_type
from neurips26.specbridge.minispec.typecheck import SpecTypeError, infer
from neurips26.specbridge.nlfp import (
    NLFP,
    Choices,
    Clause,
    InputNote,
    OutputNote,
    PlanDecodeError,
    decode,
)
from neurips26.specbridge.obligations import Obligation, obligations
from neurips26.specbridge.patterns import (
    ELEMENT_VAR,
    SEED_LIBRARY,
    Library,
    Pattern,
    instantiate,
)
from neurips26.specbridge.prove import prove
from neurips26.specbridge.z3_backend import PROVED, REFUTED
from neurips26.validation import check_int, check_seed

SLOT = "__slot_"
"""Prefix of the placeholder variables that stand for slots inside a template's syntax tree."""

_QUANT_NAMES = ("i", "j", "k")
_FILTER_NAMES = ("x", "y", "z")
_ELEMENT_NAMES = ("p", "q", "r")
_ROLE_NAMES = {"container": ("a", "b"), "number": ("n", "m"), "bool": ("t", "u"), "char": ("ch", "cj")}
_COND = "cond"
_FLIP = {">": "<", "≥": "≤"}

# ----------------------------------------------------------------------------------------------------------
# Syntax-tree helpers
# ----------------------------------------------------------------------------------------------------------


def _free(e: Expr) -> set[str]:
    """The variable names free in ``e``."""
    if isinstance(e, Var):
        return {e.name}
    if isinstance(e, Lit):
        return set()
    if isinstance(e, FilterLength):
        return _free(e.items) | (_free(e.pred) - {e.var})
    if isinstance(e, Quant):
        return (set() if e.bound is None else _free(e.bound)) | (_free(e.body) - {e.var})
    out: set[str] = set()
    map_children(e, lambda c: out.update(_free(c)) or c)  # type: ignore[func-returns-value]
    return out


def _rename_free(e: Expr, old: str, new: str) -> Expr:
    """``e`` with the free occurrences of ``old`` called ``new`` (``new`` must be fresh for ``e``)."""
    if isinstance(e, Var):
        return Var(new) if e.name == old else e
    if isinstance(e, FilterLength):
        pred = e.pred if e.var == old else _rename_free(e.pred, old, new)
        return FilterLength(_rename_free(e.items, old, new), e.var, pred)
    if isinstance(e, Quant):
        bound = None if e.bound is None else _rename_free(e.bound, old, new)
        body = e.body if e.var == old else _rename_free(e.body, old, new)
        return Quant(e.kind, e.var, e.ty, bound, body)
    return map_children(e, lambda c: _rename_free(c, old, new))


def _replace(e: Expr, target: Expr, repl: Expr) -> Expr:
    """``e`` with every subtree equal to ``target`` replaced by ``repl``."""
    if e == target:
        return repl
    return map_children(e, lambda c: _replace(c, target, repl))


def _drop_casts(e: Expr) -> Expr:
    """``e`` without its explicit casts (``↑x``, ``(x : Int)``, ``x.toNat``)."""
    if isinstance(e, Call) and e.fn in (TO_INT, TO_NAT) and len(e.args) == 1:
        return _drop_casts(e.args[0])
    return map_children(e, _drop_casts)


def _is_int_lit(e: Expr) -> bool:
    if isinstance(e, Lit):
        return e.kind == "int"
    return isinstance(e, Unary) and e.op == "-" and isinstance(e.arg, Lit) and e.arg.kind == "int"


def _is_slot(e: Expr) -> bool:
    return isinstance(e, Var) and e.name.startswith(SLOT)


def _is_element_slot(e: Expr) -> bool:
    return isinstance(e, Call) and e.fn.startswith(SLOT) and len(e.args) == 1


def _expr(name: str, value: object) -> Expr:
    if not isinstance(value, Expr):
        raise TypeError(f"{name} must be a MiniSpec Expr; got {type(value).__name__}")
    return value


def _task(task: object) -> Task:
    if not isinstance(task, Task):
        raise TypeError(f"task must be a Task; got {type(task).__name__}")
    return task


# ----------------------------------------------------------------------------------------------------------
# Normalisation
# ----------------------------------------------------------------------------------------------------------


def _candidates(family: tuple[str, ...], depth: int) -> Iterable[str]:
    yield from family[depth:]
    n = max(depth, len(family))
    while True:
        yield f"{family[0]}{n}"
        n += 1


def _rename_binders(e: Expr, avoid: frozenset[str], outer: tuple[str, ...]) -> Expr:
    """``e`` (whose binders all have distinct names free nowhere) with each binder renamed by its nesting
    depth (``len(outer)``), skipping ``avoid`` and the names of enclosing binders."""
    if isinstance(e, Quant | FilterLength):
        family = _QUANT_NAMES if isinstance(e, Quant) else _FILTER_NAMES
        taken = avoid | set(outer)
        new = next(n for n in _candidates(family, len(outer)) if n not in taken)
        inner = e.body if isinstance(e, Quant) else e.pred
        inner = _rename_binders(_rename_free(inner, e.var, new), avoid, (*outer, new))
        if isinstance(e, Quant):
            bound = None if e.bound is None else _rename_binders(e.bound, avoid, outer)
            return Quant(e.kind, new, e.ty, bound, inner)
        return FilterLength(_rename_binders(e.items, avoid, outer), new, inner)
    return map_children(e, lambda c: _rename_binders(c, avoid, outer))


def _unique_binders(e: Expr, counter: list[int]) -> Expr:
    """``e`` with every binder given a distinct temporary name, so that later renaming cannot capture."""
    if isinstance(e, Quant | FilterLength):
        counter[0] += 1
        new = f"__bound{counter[0]}"
        if isinstance(e, Quant):
            bound = None if e.bound is None else _unique_binders(e.bound, counter)
            return Quant(e.kind, new, e.ty, bound, _unique_binders(_rename_free(e.body, e.var, new), counter))
        items = _unique_binders(e.items, counter)
        return FilterLength(items, new, _unique_binders(_rename_free(e.pred, e.var, new), counter))
    return map_children(e, lambda c: _unique_binders(c, counter))


def _canonical_compare(e: Expr) -> Expr:
    e = map_children(e, _canonical_compare)
    if isinstance(e, Binary) and e.op in _FLIP:
        return Binary(_FLIP[e.op], e.right, e.left)
    return e


def _sort_conjunctions(e: Expr) -> Expr:
    if isinstance(e, Binary) and e.op == "∧":
        parts = [_sort_conjunctions(c) for c in _flatten(e, "∧")]
        parts.sort(key=lambda c: print_expr(c))
        return conjoin(parts)
    return map_children(e, _sort_conjunctions)


def _flatten(e: Expr, op: str) -> list[Expr]:
    if isinstance(e, Binary) and e.op == op:
        return _flatten(e.left, op) + _flatten(e.right, op)
    return [e]


def normalise(expr: Expr) -> Expr:
    """The canonical form of ``expr``: bound variables renamed by nesting depth (``i, j, k`` for quantifiers,
    ``x, y, z`` for filters, never capturing a free name), ``a > b``/``a ≥ b`` written ``b < a``/``b ≤ a``
    (Lean defines them so), and every chain of ``∧`` sorted by printed text. Idempotent, and equal for
    α-equivalent inputs."""
    e = _expr("expr", expr)
    e = _rename_binders(_unique_binders(e, [0]), frozenset(_free(e)), ())
    return _sort_conjunctions(_canonical_compare(e))


# ----------------------------------------------------------------------------------------------------------
# The verbaliser
# ----------------------------------------------------------------------------------------------------------

_CMP_WORDS = {"<": "is less than", "≤": "is at most", ">": "is greater than", "≥": "is at least", "=": "is"}
_NOT_CMP_WORDS = {
    "<": "is not less than",
    "≤": "is not at most",
    ">": "is not greater than",
    "≥": "is not at least",
    "=": "is not",
    "≠": "does not differ from",
}
_SLOT_TEXT = re.compile(r"__slot_([A-Za-z0-9_]+)")


def _is_plus_one(e: Expr) -> bool:
    return isinstance(e, Binary) and e.op == "+" and isinstance(e.right, Lit) and e.right.value == 1


class _Verbaliser:
    """Turns a MiniSpec proposition into an English sentence; ``template`` renders slots in backticks."""

    def __init__(self, template: bool) -> None:
        self.template = template

    def term(self, e: Expr) -> str:
        e = _drop_casts(e)
        if isinstance(e, FilterLength):
            pred = e.pred
            if _is_element_slot(pred) and pred.args[0] == Var(e.var):  # type: ignore[union-attr]
                said = f"`⟨{pred.fn[len(SLOT) :]}⟩`"  # type: ignore[union-attr]
            else:
                said = self.code(pred)
            return f"the number of elements {e.var} of {self.term(e.items)} with {said}"
        if isinstance(e, Lit) and e.kind == "bool":
            return "true" if e.value else "false"
        return self.code(e)

    def code(self, e: Expr) -> str:
        text = print_expr(_drop_casts(e))
        if self.template:
            text = _SLOT_TEXT.sub(lambda m: f"`⟨{m.group(1)}⟩`", text)
        return text

    @staticmethod
    def atomic(e: Expr) -> bool:
        if isinstance(e, Binary):
            if e.op in COMPARE:
                return not isinstance(e.left, Ite) and not isinstance(e.right, Ite)
            return False
        if isinstance(e, Unary) and e.op == "¬":
            a = e.arg
            return (isinstance(a, Binary) and a.op in COMPARE) or _is_element_slot(a)
        return not isinstance(e, Quant | Ite)

    def group(self, e: Expr) -> str:
        text = self.sentence(e)
        return text if self.atomic(e) else f"({text})"

    def tail(self, e: Expr, allow: tuple[str, ...]) -> str:
        """A last operand: a quantifier or an allowed connective extends to the end, unparenthesised."""
        if isinstance(e, Quant) or (isinstance(e, Binary) and e.op in allow):
            return self.sentence(e)
        if isinstance(e, Ite) or (isinstance(e, Binary) and e.op in COMPARE and not self.atomic(e)):
            return self.sentence(e)
        return self.group(e)

    def sentence(self, e: Expr) -> str:
        if isinstance(e, Binary):
            op = e.op
            if op == "↔":
                return f"{self.group(e.left)} exactly when {self.tail(e.right, ('→',))}"
            if op == "→":
                return f"if {self.group(e.left)}, then {self.tail(e.right, ('→',))}"
            if op in ("∧", "∨"):
                word = "and" if op == "∧" else "or"
                right = self.sentence(e.right) if isinstance(e.right, Binary) and e.right.op == op else None
                return f"{self.group(e.left)} {word} {right if right is not None else self.group(e.right)}"
            if op in COMPARE:
                for side, other in (("right", e.left), ("left", e.right)):
                    branch = getattr(e, side)
                    if isinstance(branch, Ite):  # the else-part is not said
                        then = (
                            Binary(op, other, branch.then_)
                            if side == "right"
                            else Binary(op, branch.then_, other)
                        )
                        return f"when {self.group(branch.cond)}, {self.sentence(then)}"
                if op == "<" and e.left == Var(RESULT) and _is_plus_one(e.right):
                    return f"result is at most {self.term(e.right.left)}"  # type: ignore[attr-defined]
                if op == "≠":
                    return f"{self.term(e.left)} differs from {self.term(e.right)}"
                return f"{self.term(e.left)} {_CMP_WORDS[op]} {self.term(e.right)}"
        if isinstance(e, Unary) and e.op == "¬":
            a = e.arg
            if isinstance(a, Binary) and a.op in COMPARE:
                return f"{self.term(a.left)} {_NOT_CMP_WORDS[a.op]} {self.term(a.right)}"
            if _is_element_slot(a):
                return f"{self.code(a.args[0])} does not satisfy `⟨{a.fn[len(SLOT) :]}⟩`"  # type: ignore[attr-defined]
            return f"not ({self.sentence(a)})"
        if isinstance(e, Quant):
            return f"{self.header(e)}, {self.sentence(e.body)}"
        if isinstance(e, Ite):
            return f"when {self.group(e.cond)}, {self.sentence(e.then_)}"
        if isinstance(e, Call) and e.fn == PERM and len(e.args) == 2:
            return f"{self.term(e.args[0])} is a rearrangement of {self.term(e.args[1])}"
        if _is_element_slot(e):
            return f"{self.code(e.args[0])} satisfies `⟨{e.fn[len(SLOT) :]}⟩`"  # type: ignore[attr-defined]
        return f"{self.term(e)} holds"

    def header(self, q: Quant) -> str:
        word = "every" if q.kind == "∀" else "some"
        if q.bound is None:
            kind = "integer" if q.ty == INT else "natural number"
            return f"for {word} {kind} {q.var}"
        bound = _drop_casts(q.bound)
        if _is_plus_one(bound):
            return f"for {word} index {q.var} up to {self.term(bound.left)}"  # type: ignore[attr-defined]
        return f"for {word} index {q.var} below {self.term(bound)}"


def verbalise(expr: Expr) -> str:
    """A readable English sentence for the MiniSpec proposition ``expr``: connectives, comparisons and
    quantifiers in words ("for every index i below a.size, a[i]! is at most result"), terms as MiniSpec text
    without casts. Lossy on purpose in the forms the module docstring lists."""
    return _Verbaliser(False).sentence(_expr("expr", expr))


def _template_clause(expr: Expr) -> str:
    """The verbalisation of a template, its slots in backticks; slots the wording drops are appended."""
    text = _Verbaliser(True).sentence(expr)
    missing = [s for s in _slot_names(expr) if f"⟨{s}⟩" not in text]
    if missing:
        text += " (otherwise " + ", ".join(f"`⟨{s}⟩`" for s in missing) + ")"
    return text


# ----------------------------------------------------------------------------------------------------------
# The reformaliser (reading the verbaliser's English back)
# ----------------------------------------------------------------------------------------------------------

_OPEN, _CLOSE = "([", ")]"


def _depths(text: str) -> list[int]:
    """The bracket depth at each character (inside backticks and quotes counts as nested)."""
    out, depth, quote = [], 0, None
    for c in text:
        if quote is not None:
            out.append(depth + 1)
            if c == quote:
                quote = None
            continue
        if c in "`'\"":
            quote = c
            out.append(depth + 1)
            continue
        if c in _OPEN:
            depth += 1
        out.append(depth)
        if c in _CLOSE:
            depth -= 1
    return out


def _find_top(text: str, needle: str, start: int = 0) -> int:
    """The first index of ``needle`` at bracket depth 0 (from ``start``), or -1."""
    depths = _depths(text)
    i = text.find(needle, start)
    while i >= 0:
        if depths[i] == 0 and all(d == 0 for d in depths[i : i + len(needle)]):
            return i
        i = text.find(needle, i + 1)
    return -1


def _wrapped(text: str) -> bool:
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    for i, c in enumerate(text):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth == 0 and i < len(text) - 1:
            return False
    return True


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text

    def fail(self, part: str) -> ValueError:
        return ValueError(f"text is not a verbalised MiniSpec clause: cannot read {part!r} in {self.text!r}")

    def term(self, s: str) -> Expr:
        s = s.strip()
        m = re.fullmatch(r"the number of elements (\S+) of (.+)", s)
        if m is not None:
            rest = m.group(2)
            k = _find_top(rest, " with ")
            if k < 0:
                raise self.fail(s)
            return FilterLength(self.term(rest[:k]), m.group(1), self.code(rest[k + len(" with ") :]))
        return self.code(s)

    def code(self, s: str) -> Expr:
        try:
            return parse_expr(s.strip())
        except SpecSyntaxError:
            raise self.fail(s) from None

    def sentence(self, s: str) -> Expr:
        s = s.strip()
        if _wrapped(s):
            return self.sentence(s[1:-1])
        m = re.match(r"for (every|some) ", s)
        if m is not None:
            k = _find_top(s, ", ")
            if k < 0:
                raise self.fail(s)
            return self.quant(m.group(1), s[m.end() : k], s[k + 2 :])
        if s.startswith("if "):
            k = _find_top(s, ", then ")
            if k < 0:
                raise self.fail(s)
            return Binary("→", self.sentence(s[3:k]), self.sentence(s[k + len(", then ") :]))
        if s.startswith("when "):
            k = _find_top(s, ", ")
            if k < 0:
                raise self.fail(s)
            return Binary("→", self.sentence(s[5:k]), self.sentence(s[k + 2 :]))
        for word, op in ((" exactly when ", "↔"), (" or ", "∨"), (" and ", "∧")):
            k = _find_top(s, word)
            if k >= 0:
                return Binary(op, self.sentence(s[:k]), self.sentence(s[k + len(word) :]))
        if s.startswith("not (") and _wrapped(s[4:]):
            return Unary("¬", self.sentence(s[5:-1]))
        return self.atom(s)

    def quant(self, word: str, head: str, body: str) -> Expr:
        kind = "∀" if word == "every" else "∃"
        m = re.fullmatch(r"(integer|natural number) (\S+)", head)
        if m is not None:
            return Quant(kind, m.group(2), INT if m.group(1) == "integer" else NAT, None, self.sentence(body))
        m = re.fullmatch(r"index (\S+) (below|up to) (.+)", head)
        if m is None:
            raise self.fail(head)
        return Quant(kind, m.group(1), NAT, self.term(m.group(3)), self.sentence(body))

    def atom(self, s: str) -> Expr:
        k = _find_top(s, " is a rearrangement of ")
        if k >= 0:
            return Call(PERM, (self.term(s[:k]), self.term(s[k + len(" is a rearrangement of ") :])))
        for word, op, negated in ((" does not differ from ", "≠", True), (" differs from ", "≠", False)):
            k = _find_top(s, word)
            if k >= 0:
                atom = Binary(op, self.term(s[:k]), self.term(s[k + len(word) :]))
                return Unary("¬", atom) if negated else atom
        k = _find_top(s, " is ")
        if k >= 0:
            left, rest = s[:k], s[k + len(" is ") :]
            negated = rest.startswith("not ")
            if negated:
                rest = rest[len("not ") :]
            op = "="
            for phrase, sym in (
                ("less than ", "<"),
                ("at most ", "≤"),
                ("greater than ", ">"),
                ("at least ", "≥"),
            ):
                if rest.startswith(phrase):
                    op, rest = sym, rest[len(phrase) :]
                    break
            atom = Binary(op, self.term(left), self.term(rest))
            return Unary("¬", atom) if negated else atom
        if s.endswith(" holds"):
            return self.term(s[: -len(" holds")])
        raise self.fail(s)


def _nat_positions(e: Expr, env: dict[str, Ty], helpers: tuple[Helper, ...]) -> Expr:
    """``e`` with ``.toNat`` put back where an ``Int`` stands in a position that needs a ``Nat`` (an index,
    a ``take``/``drop`` count, a quantifier bound)."""

    def nat(x: Expr, scope: dict[str, Ty]) -> Expr:
        x = go(x, scope)
        try:
            ty = infer(x, scope, helpers)
        except SpecTypeError:
            return x
        return Call(TO_NAT, (x,)) if ty == INT else x

    def go(x: Expr, scope: dict[str, Ty]) -> Expr:
        if isinstance(x, Call) and x.fn in (GET, TAKE, DROP) and len(x.args) == 2:
            return Call(x.fn, (go(x.args[0], scope), nat(x.args[1], scope)))
        if isinstance(x, Quant):
            bound = None if x.bound is None else nat(x.bound, scope)
            return Quant(x.kind, x.var, x.ty, bound, go(x.body, {**scope, x.var: x.ty}))
        if isinstance(x, FilterLength):
            items = go(x.items, scope)
            try:
                lt = infer(items, scope, helpers)
                el = Ty(lt.element) if isinstance(lt, Ty) and lt.element else INT  # type: ignore[arg-type]
            except SpecTypeError:
                el = INT
            return FilterLength(items, x.var, go(x.pred, {**scope, x.var: el}))
        return map_children(x, lambda c: go(c, scope))

    return go(e, env)


def _reformalise_expr(text: str, sig: Signature, helpers: tuple[Helper, ...] = ()) -> Expr:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    if not text.strip():
        raise ValueError("text must be a non-empty clause")
    e = _Reader(text).sentence(text.strip().rstrip("."))
    env = {p.name: p.ty for p in sig.params}
    env[RESULT] = sig.ret
    unknown = sorted(_free(e) - set(env)) + sorted(_calls(e) - set(FUNCTIONS) - {h.name for h in helpers})
    if unknown:
        raise ValueError(f"text does not read as a clause over signature {sig.name}: unknown {unknown[0]!r}")
    return _nat_positions(e, env, helpers)


def _calls(e: Expr) -> set[str]:
    out: set[str] = {e.fn} if isinstance(e, Call) else set()
    map_children(e, lambda c: out.update(_calls(c)) or c)  # type: ignore[func-returns-value]
    return out


def reformalise(text: str, signature: Signature | str) -> str:
    """The MiniSpec text a reader writes for the clause ``text`` of :func:`verbalise` over ``signature``
    (its inverse reading: "up to e" as ``< e``, "when c, t" as ``c → t``, casts left to Lean's elaboration
    except ``.toNat`` where an index or bound needs a ``Nat``). ``ValueError`` names ``text`` when it does
    not read as a verbalised clause."""
    sig = signature_of(signature)
    return print_expr(_reformalise_expr(text, sig))


# ----------------------------------------------------------------------------------------------------------
# Reconstruction
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reconstruction:
    """A plan explaining a reference spec clause by clause, and ``pairs``: (clause id, the reference
    conjunct it explains), assumptions first."""

    plan: NLFP
    pairs: tuple[tuple[str, Expr], ...]

    def conjunct(self, clause_id: str) -> Expr:
        """The reference conjunct explained by clause ``clause_id``."""
        for cid, conj in self.pairs:
            if cid == clause_id:
                return conj
        raise ValueError(f"clause_id must be one of {[c for c, _ in self.pairs]}; got {clause_id!r}")


@lru_cache(maxsize=512)
def _parsed(text: str) -> Spec:
    return parse_spec(text)


def _reference(task: Task) -> Spec:
    return _parsed(task.spec)


def _helper_line(h: Helper) -> str:
    params = " ".join(f"({p.name} : {print_type(p.ty)})" for p in h.params)
    ret = h.ret if isinstance(h.ret, str) else print_type(h.ret)
    return f"def {h.name} {params} : {ret} := {print_expr(h.body)}"


def _scope(e: Expr) -> str:
    parts: list[str] = []

    def walk(x: Expr) -> None:
        if isinstance(x, Quant):
            b = _drop_casts(x.bound) if x.bound is not None else None
            parts.append(f"{x.var} : {x.ty}" if b is None else f"{x.var} < {print_expr(b)}")
        map_children(x, lambda c: walk(c) or c)  # type: ignore[func-returns-value]

    walk(e)
    return ", ".join(parts)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()]


def _has_unbounded(e: Expr) -> bool:
    if isinstance(e, Quant) and e.bound is None:
        return True
    found = False

    def walk(c: Expr) -> Expr:
        nonlocal found
        found = found or _has_unbounded(c)
        return c

    map_children(e, walk)
    return found


def reconstruct(task: Task) -> Reconstruction:
    """The plan that explains ``task``'s reference spec: one clause per top-level conjunct of ``P``
    (assumptions ``A1…``) and ``Q`` (guarantees ``G1…``), its text from :func:`verbalise` and its formal hint
    from :func:`reformalise` of that text; the helpers of the reference go into the plan's choices."""
    task = _task(task)
    spec = _reference(task)
    sig = spec.signature
    clauses: dict[str, list[Clause]] = {"A": [], "G": []}
    pairs: list[tuple[str, Expr]] = []
    for prefix, formula in (("A", spec.pre), ("G", spec.post)):
        for conj in conjuncts(formula):
            cid = f"{prefix}{len(clauses[prefix]) + 1}"
            text = verbalise(conj)
            try:
                hint = print_expr(_reformalise_expr(text, sig, spec.helpers))
            except ValueError:
                hint = ""
            clauses[prefix].append(Clause(cid, text, "none", _scope(conj), hint))
            pairs.append((cid, conj))
    types = [p.ty for p in sig.params] + [sig.ret]
    uses_list = "toList" in task.spec or any(t.name == "List" for t in types)
    plan = NLFP(
        intent=_sentences(task.description)[0],
        inputs=tuple(InputNote(p.name, p.ty, f"parameter {i + 1}") for i, p in enumerate(sig.params)),
        output=OutputNote(sig.ret, "the value the guarantees describe"),
        assumptions=tuple(clauses["A"]),
        guarantees=tuple(clauses["G"]),
        choices=Choices(
            domain="Int" if any(t == INT or t.element == "Int" for t in types) else "Nat",
            view="list" if uses_list else "array",
            helpers=tuple(_helper_line(h) for h in spec.helpers),
            decidability="unbounded quantifiers (proof only)"
            if _has_unbounded(spec.pre) or _has_unbounded(spec.post)
            else "bounded quantifiers",
        ),
    )
    return Reconstruction(plan, tuple(pairs))


# ----------------------------------------------------------------------------------------------------------
# Round trip
# ----------------------------------------------------------------------------------------------------------


def _truth(spec: Spec, ob: Obligation) -> bool | None:
    """The truth value of ``spec``'s condition at obligation ``ob`` (not negated), or None if undecided."""
    inputs = ob.input_dict
    result = ob.result_value if ob.which == "post" else None
    try:
        if ob.which == "pre":
            return precondition(spec, inputs)
        return postcondition(spec, inputs, result)
    except NotExecutable:
        status = prove(spec, ob.which, inputs, result, profile="smt").status
        return {PROVED: True, REFUTED: False}.get(status)
    except (ExecutionBudget, SpecTypeError, ValueError, TypeError):
        return None


def _agree(task: Task, part: str, a: Expr, b: Expr, helpers: tuple[Helper, ...]) -> bool:
    """Whether formulas ``a`` and ``b`` (of the pre- or postcondition, ``part``) are equal after
    normalisation or take the same, decided truth value on each obligation of that part."""
    if normalise(a) == normalise(b):
        return True
    sig = _reference(task).signature
    for ob in obligations(task):
        if ob.which != part:
            continue
        specs = [
            Spec(sig, f, TRUE, helpers) if part == "pre" else Spec(sig, TRUE, f, helpers) for f in (a, b)
        ]
        ta, tb = _truth(specs[0], ob), _truth(specs[1], ob)
        if ta is None or tb is None or ta != tb:
            return False
    return True


def _check_reconstruction(reconstruction: object) -> Reconstruction:
    if not isinstance(reconstruction, Reconstruction):
        raise TypeError(f"reconstruction must be a Reconstruction; got {type(reconstruction).__name__}")
    return reconstruction


def clause_round_trips(task: Task, reconstruction: Reconstruction) -> tuple[tuple[str, bool], ...]:
    """Per clause of ``reconstruction``: whether its formal hint alone reproduces its reference conjunct
    (equal after :func:`normalise`, or equal truth values on the task's obligations of that part)."""
    task = _task(task)
    rec = _check_reconstruction(reconstruction)
    spec = _reference(task)
    out = []
    for cid, conj in rec.pairs:
        clause = rec.plan.clause(cid)
        part = "pre" if cid.startswith("A") else "post"
        try:
            hint = parse_expr(clause.formal_hint)
        except SpecSyntaxError:
            out.append((cid, False))
            continue
        out.append((cid, _agree(task, part, conj, hint, spec.helpers)))
    return tuple(out)


def round_trip(task: Task, reconstruction: Reconstruction) -> bool:
    """Whether decoding the plan of ``reconstruction`` gives back ``task``'s reference spec: equal after
    :func:`normalise`, or the same truth value on every obligation of the task (tests and reject inputs).
    A plan that does not decode fails."""
    task = _task(task)
    rec = _check_reconstruction(reconstruction)
    spec = _reference(task)
    try:
        got = decode(rec.plan, spec.signature).spec
    except (PlanDecodeError, SpecTypeError, ValueError):
        return False
    if normalise(got.pre) == normalise(spec.pre) and normalise(got.post) == normalise(spec.post):
        return True
    for ob in obligations(task):
        a, b = _truth(got, ob), _truth(spec, ob)
        if a is None or b is None or a != b:
            return False
    return True


# ----------------------------------------------------------------------------------------------------------
# Abstraction
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """A slot of a template: ``name``, ``kind`` (``"param"``, ``"const"``, ``"cond"`` or ``"element"``), the
    source ``value`` (MiniSpec text; an element slot's value speaks about ``x``) and, for a parameter slot,
    the ``type`` name of the parameter it replaced."""

    name: str
    kind: str
    value: str
    type: str = ""


@dataclass(frozen=True)
class Template:
    """An abstracted conjunct: ``expr`` (slots as placeholder variables ``__slot_a`` and element slots as
    calls ``__slot_p E``), ``text`` in the slot syntax of :class:`~neurips26.specbridge.patterns.Pattern`
    (``⟨a⟩``, ``⟨p @ E⟩``), the ``slots`` with their source values, and whether it mentions ``result``."""

    expr: Expr
    text: str
    slots: tuple[Slot, ...]

    @property
    def bindings(self) -> dict[str, str]:
        """Slot name -> the source's MiniSpec text."""
        return {s.name: s.value for s in self.slots}

    @property
    def uses_result(self) -> bool:
        return RESULT in _free(self.expr)


def _role(ty: Ty) -> str:
    if ty.is_container or ty.name == "String":
        return "container"
    if ty.name in ("Nat", "Int"):
        return "number"
    return "bool" if ty == BOOL else "char"


def _names(family: tuple[str, ...]) -> Iterable[str]:
    yield from family
    n = len(family) + 1
    while True:
        yield f"{family[0]}{n}"
        n += 1


def _element_of(side: Expr, bound: set[str], params: set[str]) -> Expr | None:
    """The single element ``side`` is built from (with integer literals), or None."""

    def is_element(x: Expr) -> bool:
        if isinstance(x, Var):
            return x.name in bound
        return (
            isinstance(x, Call)
            and x.fn == GET
            and isinstance(x.args[0], Var)
            and (x.args[0].name in params or x.args[0].name == RESULT)
        )

    found: list[Expr] = []

    def leaves(x: Expr) -> bool:
        if is_element(x):
            found.append(x)
            return True
        if isinstance(x, Lit):
            return x.kind == "int"
        if isinstance(x, Unary) and x.op == "-":
            return leaves(x.arg)
        if isinstance(x, Binary) and x.op in ARITH:
            return leaves(x.left) and leaves(x.right)
        if isinstance(x, Call) and x.fn in (TO_INT, TO_NAT) and len(x.args) == 1:
            return leaves(x.args[0])
        return False

    if not leaves(side) or not found or any(f != found[0] for f in found):
        return None
    return found[0]


def _element_predicate(atom: Expr, bound: set[str], params: set[str]) -> tuple[Expr, Expr] | None:
    """(element, predicate about ``x``) when ``atom`` compares one element with literals and parameters."""
    if not (isinstance(atom, Binary) and atom.op in COMPARE):
        return None
    for side, other in ((atom.left, atom.right), (atom.right, atom.left)):
        el = _element_of(side, bound, params)
        if el is None:
            continue
        free = _free(other)
        if free & bound or RESULT in free or not free <= params or ELEMENT_VAR in free:
            continue
        return el, _replace(atom, el, Var(ELEMENT_VAR))
    return None


def _is_bool_iff(e: Expr) -> bool:
    return (
        isinstance(e, Binary)
        and e.op == "↔"
        and e.left == Binary("=", Var(RESULT), Lit(True))
        and RESULT not in _free(e.right)
    )


def _slot_names(e: Expr) -> list[str]:
    out: list[str] = []

    def walk(x: Expr) -> Expr:
        if _is_slot(x) or _is_element_slot(x):
            name = (x.name if isinstance(x, Var) else x.fn)[len(SLOT) :]  # type: ignore[union-attr]
            if name not in out:
                out.append(name)
        return map_children(x, walk)

    walk(e)
    return out


def _rename_slots(e: Expr, mapping: Mapping[str, str]) -> Expr:
    if _is_slot(e):
        return Var(SLOT + mapping[e.name[len(SLOT) :]])  # type: ignore[union-attr]
    if _is_element_slot(e):
        return Call(SLOT + mapping[e.fn[len(SLOT) :]], (_rename_slots(e.args[0], mapping),))  # type: ignore[union-attr]
    return map_children(e, lambda c: _rename_slots(c, mapping))


def _template_text(e: Expr) -> str:
    """``e`` printed in the slot syntax ``⟨a⟩`` / ``⟨p @ E⟩``."""
    elements: list[tuple[str, Expr]] = []

    def hide(x: Expr) -> Expr:
        if _is_element_slot(x):
            elements.append((x.fn[len(SLOT) :], x.args[0]))  # type: ignore[union-attr]
            return Var(f"__elem{len(elements) - 1}")
        return map_children(x, hide)

    text = print_expr(hide(e))
    plain = lambda s: _SLOT_TEXT.sub(lambda m: f"⟨{m.group(1)}⟩", s)  # noqa: E731
    text = re.sub(
        r"__elem(\d+)",
        lambda m: f"⟨{elements[int(m.group(1))][0]} @ {plain(print_expr(elements[int(m.group(1))][1]))}⟩",
        text,
    )
    return plain(text)


def abstract(conjunct: Expr, signature: Signature | str) -> Template:
    """The template of ``conjunct`` anti-unified with ``signature`` (see the module docstring): normalised,
    parameters, integer literals and element predicates replaced by slots, a Boolean result's defining
    condition by ``⟨cond⟩``. ``ValueError`` names ``signature`` when the conjunct uses a name that is neither
    a parameter, ``result``, nor bound."""
    e = normalise(_expr("conjunct", conjunct))
    sig = signature_of(signature)
    params = {p.name: p.ty for p in sig.params}
    unknown = sorted(n for n in _free(e) if n not in params and n != RESULT)
    if unknown:
        raise ValueError(f"signature {sig.name} has no parameter {unknown[0]!r} used by the conjunct")
    values: dict[str, tuple[str, str, str]] = {}  # provisional name -> (kind, value text, type)
    counter = Counter[str]()

    def fresh(kind: str) -> str:
        counter[kind] += 1
        return f"{kind}{counter[kind]}"

    if _is_bool_iff(e):
        name = fresh("cond")
        values[name] = ("cond", print_expr(e.right), "")  # type: ignore[attr-defined]
        e = Binary("↔", e.left, Var(SLOT + name))  # type: ignore[attr-defined]

    element_names: dict[str, str] = {}

    def elements(x: Expr, bound: set[str]) -> Expr:
        found = _element_predicate(x, bound, set(params))
        if found is not None:
            el, pred = found
            text = print_expr(pred)
            if text not in element_names:
                element_names[text] = fresh("elem")
                values[element_names[text]] = ("element", text, "")
            return Call(SLOT + element_names[text], (el,))
        if isinstance(x, Quant):
            bnd = None if x.bound is None else elements(x.bound, bound)
            return Quant(x.kind, x.var, x.ty, bnd, elements(x.body, bound | {x.var}))
        if isinstance(x, FilterLength):
            return FilterLength(elements(x.items, bound), x.var, elements(x.pred, bound | {x.var}))
        return map_children(x, lambda c: elements(c, bound))

    e = elements(e, set())

    def leaves(x: Expr) -> Expr:
        if _is_element_slot(x):
            return Call(x.fn, (leaves(x.args[0]),))  # type: ignore[union-attr]
        if _is_int_lit(x):
            name = fresh("const")
            values[name] = ("const", print_expr(x), "")
            return Var(SLOT + name)
        if isinstance(x, Var) and x.name in params:
            key = f"param_{x.name}"
            values.setdefault(key, ("param", x.name, params[x.name].name))
            return Var(SLOT + key)
        return map_children(x, leaves)

    e = normalise(leaves(e))
    # final slot names by kind and order of first occurrence
    mapping: dict[str, str] = {}
    pools = {
        "element": _names(_ELEMENT_NAMES),
        "const": _names(("c",)),
        "cond": _names((_COND,)),
    }
    role_pools = {role: _names(names) for role, names in _ROLE_NAMES.items()}
    for old in _slot_names(e):
        kind, _, _ = values[old]
        if kind == "param":
            mapping[old] = next(role_pools[_role(params[values[old][1]])])
        else:
            mapping[old] = next(pools[kind])
    e = _rename_slots(e, mapping)
    slots = tuple(Slot(mapping[old], values[old][0], values[old][1], values[old][2]) for old in mapping)
    return Template(e, _template_text(e), slots)


def _key(e: Expr, bound: frozenset[str]) -> str:
    if isinstance(e, Var):
        return "v" if e.name in bound else "t"
    if isinstance(e, Lit):
        return str(e.value).lower() if e.kind == "bool" else "t"
    if _is_int_lit(e):
        return "t"
    if isinstance(e, Unary):
        return f"{'neg' if e.op == '-' else '¬'}({_key(e.arg, bound)})"
    if isinstance(e, Binary):
        op, left, right = e.op, e.left, e.right
        if op in _FLIP:
            op, left, right = _FLIP[op], right, left
        if op in ("∧", "∨"):
            parts = sorted(_key(c, bound) for c in _flatten(e, op))
            return f"{op}({','.join(parts)})"
        a, b = _key(left, bound), _key(right, bound)
        if op in ("=", "≠", "+", "*", "↔"):
            a, b = sorted((a, b))
        return f"{op}({a},{b})"
    if isinstance(e, Call):
        if _is_element_slot(e):
            return f"p({_key(e.args[0], bound)})"
        if e.fn in (TO_INT, TO_NAT, TO_LIST) and len(e.args) == 1:
            return _key(e.args[0], bound)
        fn = "len" if e.fn in (SIZE, LENGTH) else e.fn
        return f"{fn}({','.join(_key(a, bound) for a in e.args)})"
    if isinstance(e, FilterLength):
        return f"count({_key(e.items, bound)},{_key(e.pred, bound | {e.var})})"
    if isinstance(e, Ite):
        return f"ite({_key(e.cond, bound)},{_key(e.then_, bound)},{_key(e.else_, bound)})"
    if isinstance(e, Quant):
        head = f"{e.kind}<{_key(e.bound, bound)}" if e.bound is not None else f"{e.kind}:{e.ty}"
        return f"{head}.{_key(e.body, bound | {e.var})}"
    raise TypeError(f"template must be a Template or a MiniSpec Expr; got {type(e).__name__}")


def _prefix(e: Expr) -> str:
    out: list[str] = []

    def walk(x: Expr) -> Expr:
        if isinstance(x, Quant):
            out.append(f"{x.kind}{'<' if x.bound is not None else ':' + str(x.ty)}")
        return map_children(x, walk)

    walk(e)
    return "".join(out) or "-"


def structural_key(template: Template | Expr) -> str:
    """The grouping key of a template: its quantifier prefix, then its connective skeleton with the head
    symbols of its atoms. Leaves read as a term ``t`` (slot, parameter, ``result`` or integer literal), a
    bound variable ``v`` or a Boolean literal; casts and ``toList`` are transparent; ``size``/``length``
    read ``len``; ``>``/``≥`` read as flipped ``<``/``≤``; operands of symmetric operators are sorted."""
    if isinstance(template, Template):
        e = template.expr
    elif isinstance(template, Expr):
        e = template
    else:
        raise TypeError(f"template must be a Template or a MiniSpec Expr; got {type(template).__name__}")
    e = normalise(e)
    return f"{_prefix(e)} | {_key(e, frozenset())}"


def _seed_expr(pattern: Pattern) -> Expr:
    """A seed pattern's spec template as a template tree (element slots as calls)."""
    text = pattern.spec_template
    out, i = [], 0
    while True:
        start = text.find("⟨", i)
        if start < 0:
            out.append(text[i:])
            break
        out.append(text[i:start])
        m = re.match(r"⟨([A-Za-z][A-Za-z0-9_]*)", text[start:])
        name = m.group(1)  # type: ignore[union-attr]
        j = start + m.end()  # type: ignore[union-attr]
        if text.startswith("⟩", j):
            out.append(SLOT + name)
            i = j + 1
            continue
        depth, k = 0, j + 3
        while not (text[k] == "⟩" and depth == 0):
            depth += {"⟨": 1, "⟩": -1}.get(text[k], 0)
            k += 1
        inner = re.sub(r"⟨([A-Za-z][A-Za-z0-9_]*)⟩", lambda m2: SLOT + m2.group(1), text[j + 3 : k])
        out.append(f"{SLOT}{name} ({inner})")
        i = k + 1
    e = parse_expr("".join(out))
    element = pattern.element_slots

    def lift(x: Expr, under_x: bool) -> Expr:
        if _is_slot(x) and x.name[len(SLOT) :] in element and under_x:  # type: ignore[union-attr]
            return Call(x.name, (Var(ELEMENT_VAR),))  # type: ignore[union-attr]
        if isinstance(x, FilterLength | Quant):
            now = under_x or x.var == ELEMENT_VAR
            if isinstance(x, FilterLength):
                return FilterLength(lift(x.items, under_x), x.var, lift(x.pred, now))
            bnd = None if x.bound is None else lift(x.bound, under_x)
            return Quant(x.kind, x.var, x.ty, bnd, lift(x.body, now))
        return map_children(x, lambda c: lift(c, under_x))

    return lift(e, False)


def _seed_names(seeds: Library) -> tuple[dict[str, str], dict[str, str]]:
    """Seed key -> seed name, and conjunct key -> ``<seed>_part<k>`` for conjuncts of multi-conjunct seeds
    that belong to exactly one seed."""
    whole: dict[str, str] = {}
    part_owner: dict[str, list[str]] = {}
    for p in seeds:
        e = _seed_expr(p)
        whole.setdefault(structural_key(e), p.name)
        parts = conjuncts(e)
        if len(parts) > 1:
            for k, c in enumerate(parts, start=1):
                part_owner.setdefault(structural_key(c), []).append(f"{p.name}_part{k}")
    parts = {key: names[0] for key, names in part_owner.items() if len(names) == 1}
    return whole, parts


# ----------------------------------------------------------------------------------------------------------
# Matching a template against a formula (for sources whose own template differs from the group's)
# ----------------------------------------------------------------------------------------------------------


def _match(t: Expr, s: Expr, tmpl: Template, sig: Signature, b: dict[str, Expr], ren: dict[str, str]) -> bool:
    kinds = {sl.name: sl for sl in tmpl.slots}
    params = {p.name: p.ty for p in sig.params}
    if _is_slot(t):
        name = t.name[len(SLOT) :]  # type: ignore[union-attr]
        if name in b:
            return b[name] == s
        kind = kinds[name].kind
        if kind == "param":
            v = s.args[0] if isinstance(s, Call) and s.fn == TO_LIST and len(s.args) == 1 else s
            ok = isinstance(v, Var) and v.name in params and _role(params[v.name]) == _role_of_slot(name)
        elif kind == "const":
            ok = _is_int_lit(s)
        else:
            ok = RESULT not in _free(s)
        if ok:
            b[name] = s
        return ok
    if _is_element_slot(t):
        name = t.fn[len(SLOT) :]  # type: ignore[union-attr]
        el = t.args[0]  # type: ignore[union-attr]
        if any(n not in b for n in _slot_names(el)):
            return False
        el_c = _fill_tree(el, b, ren)
        found = _element_predicate(s, _bound_names(ren), set(params))
        if found is None or found[0] != el_c:
            return False
        if name in b:
            return b[name] == found[1]
        b[name] = found[1]
        return True
    if type(t) is not type(s):
        return False
    if isinstance(t, Var):
        return s == Var(ren.get(t.name, t.name))  # type: ignore[union-attr]
    if isinstance(t, Lit):
        return repr(t) == repr(s)
    if isinstance(t, Unary | Binary):
        if t.op != s.op:  # type: ignore[union-attr]
            return False
        if isinstance(t, Unary):
            return _match(t.arg, s.arg, tmpl, sig, b, ren)  # type: ignore[union-attr]
        return _match(t.left, s.left, tmpl, sig, b, ren) and _match(t.right, s.right, tmpl, sig, b, ren)  # type: ignore[union-attr]
    if isinstance(t, Call):
        return (
            t.fn == s.fn  # type: ignore[union-attr]
            and len(t.args) == len(s.args)  # type: ignore[union-attr]
            and all(_match(x, y, tmpl, sig, b, ren) for x, y in zip(t.args, s.args, strict=True))  # type: ignore[union-attr]
        )
    if isinstance(t, FilterLength):
        return _match(t.items, s.items, tmpl, sig, b, ren) and _match(  # type: ignore[union-attr]
            t.pred,
            s.pred,
            tmpl,
            sig,
            b,
            {**ren, t.var: s.var},  # type: ignore[union-attr]
        )
    if isinstance(t, Ite):
        return all(
            _match(getattr(t, f), getattr(s, f), tmpl, sig, b, ren) for f in ("cond", "then_", "else_")
        )
    if isinstance(t, Quant):
        if (t.kind, t.ty, t.bound is None) != (s.kind, s.ty, s.bound is None):  # type: ignore[union-attr]
            return False
        if t.bound is not None and not _match(t.bound, s.bound, tmpl, sig, b, ren):  # type: ignore[union-attr, arg-type]
            return False
        return _match(t.body, s.body, tmpl, sig, b, {**ren, t.var: s.var})  # type: ignore[union-attr]
    return False


def _role_of_slot(name: str) -> str:
    for role, names in _ROLE_NAMES.items():
        if name.rstrip("0123456789") in names or name in names:
            return role
    return "container"


def _bound_names(ren: dict[str, str]) -> set[str]:
    return set(ren.values())


def _fill_tree(e: Expr, b: Mapping[str, Expr], ren: Mapping[str, str]) -> Expr:
    if _is_slot(e):
        return b[e.name[len(SLOT) :]]  # type: ignore[union-attr]
    if isinstance(e, Var):
        return Var(ren.get(e.name, e.name))
    return map_children(e, lambda c: _fill_tree(c, b, ren))


# ----------------------------------------------------------------------------------------------------------
# Mining
# ----------------------------------------------------------------------------------------------------------

_STOP = frozenset(
    "a an the of and or is are be to in on at by for with from as that this it its if then than when "
    "exactly every some each all no not any such there which who whom whose what where how do does did "
    "i j k x y z up below holds satisfies otherwise most least less greater true false".split()
)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", text.lower())


def _content(text: str, drop: set[str]) -> list[str]:
    return [w for w in _words(text) if w not in _STOP and w not in drop and len(w) > 1 and not w.isdigit()]


def _best_sentence(description: str, clause_text: str) -> str:
    target = set(_words(clause_text)) - _STOP
    best, score = "", -1
    for s in _sentences(description):
        overlap = len((set(_words(s)) - _STOP) & target)
        if overlap > score:
            best, score = s, overlap
    return best


@dataclass(frozen=True)
class Source:
    """One source of a mined pattern: the task, the clause, whether the pair is the condition nested in a
    Boolean result's clause, the clause text, whether the clause passed the round trip (None when mining
    ran without it) and whether the pattern, filled with this source's values, reproduces the source
    conjunct on the task's tests, with the slot ``values`` it was filled with (empty when the template does
    not fit the source)."""

    task_id: str
    clause_id: str
    nested: bool
    text: str
    round_trip: bool | None
    reproduced: bool
    values: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class MinedPattern:
    """A mined ``pattern`` with its structural ``key``, its ``support`` (distinct source tasks), its
    ``sources`` and its ``precision`` (share of sources reproduced)."""

    pattern: Pattern
    key: str
    support: int
    sources: tuple[Source, ...]

    @property
    def precision(self) -> float:
        return sum(s.reproduced for s in self.sources) / len(self.sources)

    @property
    def source_tasks(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.task_id for s in self.sources))


@dataclass(frozen=True)
class MiningResult:
    """The mined ``library``, the per-pattern report ``patterns`` (in library order), the ``rejected``
    clauses (task id, clause id, text) that failed the round trip and were left out, and a readable
    ``log``."""

    library: Library
    patterns: tuple[MinedPattern, ...]
    rejected: tuple[tuple[str, str, str], ...]
    log: tuple[str, ...]

    @property
    def mean_precision(self) -> float:
        """The mean of the patterns' precisions (0.0 for an empty library)."""
        return float(np.mean([p.precision for p in self.patterns])) if self.patterns else 0.0

    @property
    def seed_names(self) -> tuple[str, ...]:
        """The names of the mined patterns that are seed pattern names."""
        return tuple(p.pattern.name for p in self.patterns if p.pattern.name in SEED_LIBRARY)


@dataclass(frozen=True)
class _Item:
    task: Task
    clause_id: str
    part: str
    nested: bool
    text: str
    plan: Expr  # the plan's formula (from the hint), helpers unfolded
    reference: Expr | None  # the reference formula it should reproduce
    template: Template
    round_trip: bool | None


def _items(task: Task, verify: bool) -> tuple[list[_Item], list[tuple[str, str, str]]]:
    spec = _reference(task)
    sig = spec.signature
    rec = reconstruct(task)
    checks = dict(clause_round_trips(task, rec)) if verify else {}
    items: list[_Item] = []
    rejected: list[tuple[str, str, str]] = []
    for cid, conj in rec.pairs:
        clause = rec.plan.clause(cid)
        ok = checks.get(cid) if verify else None
        if verify and not ok:
            rejected.append((task.id, cid, clause.text))
            continue
        try:
            plan = normalise(inline_helpers(parse_expr(clause.formal_hint), spec.helpers))
        except SpecSyntaxError:
            continue
        ref = normalise(inline_helpers(conj, spec.helpers))
        part = "pre" if cid.startswith("A") else "post"
        items.append(_Item(task, cid, part, False, clause.text, plan, ref, abstract(plan, sig), ok))
        if _is_bool_iff(plan):
            inner = plan.right  # type: ignore[attr-defined]
            inner_ref = ref.right if _is_bool_iff(ref) else None  # type: ignore[attr-defined]
            items.append(
                _Item(task, cid, part, True, verbalise(inner), inner, inner_ref, abstract(inner, sig), ok)
            )
    return items, rejected


def _applies(slots: Sequence[Slot], rets: frozenset[str], uses_result: bool) -> Callable[[Signature], bool]:
    needs: dict[str, list[frozenset[str]]] = {}
    for s in slots:
        if s.kind == "param":
            needs.setdefault(_role_of_slot(s.name), []).append(frozenset(s.type.split("|")))

    def applies(signature: Signature) -> bool:
        if not isinstance(signature, Signature):
            raise TypeError(f"signature must be a Signature; got {type(signature).__name__}")
        if uses_result and signature.ret.name not in rets:
            return False
        for role, wanted in needs.items():
            have = [p.ty.name for p in signature.params if _role(p.ty) == role]
            if len(have) < len(wanted) or not all(any(h in w for h in have) for w in wanted):
                return False
        return True

    return applies


def _reproduces(item: _Item, pattern: Pattern, template: Template) -> tuple[bool, dict[str, str]]:
    if item.template.text == template.text:
        bindings = item.template.bindings
    else:
        b: dict[str, Expr] = {}
        sig = _reference(item.task).signature
        if not _match(template.expr, item.plan, template, sig, b, {}):
            return False, {}
        bindings = {k: print_expr(v) for k, v in b.items()}
    if item.reference is None:
        return False, bindings
    try:
        filled = instantiate(pattern, bindings)
    except ValueError:
        return False, {}
    return _agree(item.task, item.part, filled, item.reference, ()), bindings


def mine(pool: Sequence[Task], *, verify: bool = True, min_support: int = 2) -> MiningResult:
    """Mine a pattern library from the trusted ``pool``: reconstruct every task, keep the clauses that pass
    the round trip (all of them when ``verify`` is False: the ablation without round trip), abstract them,
    group by :func:`structural_key` and turn each group with at least ``min_support`` distinct tasks into a
    pattern (see the module docstring for names, templates, cues and precision)."""
    if isinstance(pool, str | bytes) or not isinstance(pool, Sequence):
        raise TypeError(f"pool must be a sequence of Task; got {type(pool).__name__}")
    for t in pool:
        if not isinstance(t, Task):
            raise TypeError(f"pool must hold Task; got {type(t).__name__}")
    if not isinstance(verify, bool):
        raise TypeError(f"verify must be a bool; got {type(verify).__name__}")
    min_support = check_int("min_support", min_support, minimum=1)
    log: list[str] = []
    items: list[_Item] = []
    rejected: list[tuple[str, str, str]] = []
    for task in pool:
        got, rej = _items(task, verify)
        items += got
        rejected += rej
        for tid, cid, text in rej:
            log.append(f"{tid} {cid}: round trip failed, clause left out: {text}")
    groups: dict[str, list[_Item]] = {}
    for it in items:
        groups.setdefault(structural_key(it.template), []).append(it)
    whole, parts = _seed_names(SEED_LIBRARY)
    kept = [(k, g) for k, g in groups.items() if len({it.task.id for it in g}) >= min_support]
    kept.sort(key=lambda kg: (-len({it.task.id for it in kg[1]}), kg[0]))
    used: set[str] = set()
    mined: list[MinedPattern] = []
    counter = 0
    for key, group in kept:
        texts = Counter(it.template.text for it in group)
        best = min(texts, key=lambda t: (-texts[t], t))
        rep = next(it.template for it in group if it.template.text == best)
        name = whole.get(key) or parts.get(key)
        if name is None or name in used:
            counter += 1
            name = f"mined_{counter}"
        used.add(name)
        cues: list[str] = []
        for it in group:
            drop = {p.name.lower() for p in it.task.params}
            cues += _content(it.text, drop)
        for it in group:
            sentence = " ".join(_best_sentence(it.task.description, it.text).lower().split()).rstrip(".")
            if sentence:
                cues.append(sentence)
        cues = list(dict.fromkeys(c for c in cues if c.strip()))
        types: dict[str, set[str]] = {}
        for it in group:
            if it.template.text == best:
                for s in it.template.slots:
                    types.setdefault(s.name, set()).add(s.type)
        slots = [
            Slot(s.name, s.kind, s.value, "|".join(sorted(types.get(s.name, {s.type})))) for s in rep.slots
        ]
        rets = frozenset(it.task.ret.name for it in group)
        pattern = Pattern(
            name,
            tuple(cues) or (name.replace("_", " "),),
            _template_clause(rep.expr),
            rep.text,
            _applies(slots, rets, rep.uses_result),
        )
        sources = []
        for it in group:
            ok, values = _reproduces(it, pattern, rep)
            sources.append(
                Source(it.task.id, it.clause_id, it.nested, it.text, it.round_trip, ok, tuple(values.items()))
            )
        mp = MinedPattern(pattern, key, len({it.task.id for it in group}), tuple(sources))
        mined.append(mp)
        log.append(
            f"{name}: support {mp.support}, precision {mp.precision:.2f}, template {rep.text} "
            f"(from {', '.join(mp.source_tasks)})"
        )
    log.append(
        f"{len(mined)} patterns from {len(items)} pairs of {len(pool)} tasks "
        f"({'with' if verify else 'without'} round trip; {len(rejected)} clauses rejected)"
    )
    return MiningResult(Library(tuple(m.pattern for m in mined)), tuple(mined), tuple(rejected), tuple(log))


# ----------------------------------------------------------------------------------------------------------
# Transfer
# ----------------------------------------------------------------------------------------------------------


def _check_library(library: object) -> Library:
    if not isinstance(library, Library):
        raise TypeError(f"library must be a Library; got {type(library).__name__}")
    return library


def retrieve(
    library: Library, description: str, signature: Signature | str, k: int = 5
) -> tuple[tuple[Pattern, float], ...]:
    """The ``k`` best patterns of ``library`` for ``description`` among those that apply to ``signature``,
    with their scores: the TF-IDF cosine (vectoriser fitted on the library's cue documents, one per
    pattern) between the pattern's cues and the description's best-matching sentence, rounded to 1e-9;
    ties broken by name."""
    library = _check_library(library)
    if not isinstance(description, str):
        raise TypeError(f"description must be a str; got {type(description).__name__}")
    if not description.strip():
        raise ValueError("description must be non-empty text")
    sig = signature_of(signature)
    k = check_int("k", k, minimum=1)
    candidates = [p for p in library if p.applies(sig)]
    if not candidates:
        return ()
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs = [" ".join(p.cues) for p in library]
    vectoriser = TfidfVectorizer()
    try:
        matrix = vectoriser.fit_transform(docs)
    except ValueError:  # no usable word in any cue
        return tuple((p, 0.0) for p in sorted(candidates, key=lambda p: p.name)[:k])
    queries = vectoriser.transform(_sentences(description) or [description])
    sims = (queries @ matrix.T).toarray()  # rows are l2-normalised: dot products are cosines
    index = {p.name: i for i, p in enumerate(library)}
    scored = [(p, round(float(sims[:, index[p.name]].max()), 9)) for p in candidates]
    scored.sort(key=lambda ps: (-ps[1], ps[0].name))
    return tuple(scored[:k])


def random_hints(
    library: Library, signature: Signature | str, k: int, seed: int
) -> tuple[tuple[Pattern, float], ...]:
    """``k`` patterns of ``library`` that apply to ``signature``, drawn without replacement with
    ``numpy.random.default_rng(seed)`` (the control condition), each with score 0.0."""
    library = _check_library(library)
    sig = signature_of(signature)
    k = check_int("k", k, minimum=1)
    seed = check_seed("seed", seed)
    candidates = sorted((p for p in library if p.applies(sig)), key=lambda p: p.name)
    if not candidates:
        return ()
    rng = np.random.default_rng(seed)
    picks = rng.permutation(len(candidates))[: min(k, len(candidates))]
    return tuple((candidates[int(i)], 0.0) for i in picks)


__all__ = [
    "SLOT",
    "MinedPattern",
    "MiningResult",
    "Reconstruction",
    "Slot",
    "Source",
    "Template",
    "abstract",
    "clause_round_trips",
    "mine",
    "normalise",
    "random_hints",
    "reconstruct",
    "reformalise",
    "retrieve",
    "round_trip",
    "structural_key",
    "verbalise",
]
