"""Formalization patterns: recurring prose-to-MiniSpec idioms with cue phrases, readable clause templates and
spec templates, plus the hand-written seed library of the chapter.

A :class:`Pattern` ties together what a description says ("the largest element"), how a plan clause reads
("`result` is an element of `a` and no element of `a` is larger") and the MiniSpec conjunct it stands for
(``(∃ i, i < a.size ∧ a[i]! = result) ∧ (∀ i, i < a.size → a[i]! ≤ result)``). Templates mark their slots
with angle brackets:

* ``⟨a⟩`` is a *plain* slot, filled with a MiniSpec expression (``a``, ``a.toList``, ``k + 1``);
* ``⟨p @ E⟩`` is an *element* slot used at the expression ``E``: its value is a MiniSpec expression about
  the element variable ``x`` (``x > 0``, ``x.toNat``), and ``x`` is replaced by ``E`` (``⟨a⟩[i]!``). A plain
  slot placed under a template binder named ``x`` (``fun x => ⟨p⟩``) also reads ``x`` as the element.

Filling happens on syntax trees, not on text, so no parentheses are lost and precedence cannot change the
meaning. A binder of the template whose name a slot value uses freely (a parameter called ``k`` under
``∀ k``) is renamed first; substituting an element into a value that binds one of the element's variables
is refused rather than silently captured.

In clause templates every slot is written between backticks, so the clause text of a plan carries its
slot values as MiniSpec text and :func:`read_slots` can recover them. :data:`SEED_LIBRARY` holds one
hand-written pattern for each name of ``neurips26.specbridge.benchmark.PATTERNS``; its cue lists are the
fixed lexicon a planner without mining relies on, and its shapes are what mining from trusted specs is
expected to find again. Deliberately simple: one template per pattern (ascending order only for
sortedness, arrays rather than lists where an index is needed), and cue matching is lexical.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from neurips26.specbridge.minispec.ast import (
    Binary,
    Call,
    Expr,
    FilterLength,
    Ite,
    Lit,
    Quant,
    Signature,
    Ty,
    Unary,
    Var,
)
from neurips26.specbridge.minispec.parser import SpecSyntaxError, parse_expr

ELEMENT_VAR = "x"
"""The variable an element slot's value speaks about."""

_PLACEHOLDER = "__slot_"
_SLOT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_PATTERN_NAME = re.compile(r"[a-z][a-z0-9_]*")

# ----------------------------------------------------------------------------------------------------------
# Syntax-tree helpers (binder-aware)
# ----------------------------------------------------------------------------------------------------------


def _free_vars(e: Expr) -> set[str]:
    """The names occurring free in ``e``."""
    if isinstance(e, Var):
        return {e.name}
    if isinstance(e, Lit):
        return set()
    if isinstance(e, Unary):
        return _free_vars(e.arg)
    if isinstance(e, Binary):
        return _free_vars(e.left) | _free_vars(e.right)
    if isinstance(e, Call):
        out: set[str] = set()
        for a in e.args:
            out |= _free_vars(a)
        return out
    if isinstance(e, FilterLength):
        return _free_vars(e.items) | (_free_vars(e.pred) - {e.var})
    if isinstance(e, Ite):
        return _free_vars(e.cond) | _free_vars(e.then_) | _free_vars(e.else_)
    if isinstance(e, Quant):
        inner = _free_vars(e.body) - {e.var}
        return inner | (_free_vars(e.bound) if e.bound is not None else set())
    raise TypeError(f"expr must be a MiniSpec Expr; got {type(e).__name__}")


def _all_names(e: Expr) -> set[str]:
    """Every variable name in ``e``, free or bound (binders included)."""
    if isinstance(e, Quant):
        bound = _all_names(e.bound) if e.bound is not None else set()
        return {e.var} | bound | _all_names(e.body)
    if isinstance(e, FilterLength):
        return {e.var} | _all_names(e.items) | _all_names(e.pred)
    if isinstance(e, Var):
        return {e.name}
    if isinstance(e, Lit):
        return set()
    if isinstance(e, Unary):
        return _all_names(e.arg)
    if isinstance(e, Binary):
        return _all_names(e.left) | _all_names(e.right)
    if isinstance(e, Call):
        return set().union(*(_all_names(a) for a in e.args)) if e.args else set()
    if isinstance(e, Ite):
        return _all_names(e.cond) | _all_names(e.then_) | _all_names(e.else_)
    raise TypeError(f"expr must be a MiniSpec Expr; got {type(e).__name__}")


def _rename_all(e: Expr, old: str, new: str) -> Expr:
    """``e`` with every variable and binder called ``old`` called ``new`` (for templates, whose only free
    variables are ``result`` and placeholders, this is a rename of the template's binders)."""
    if isinstance(e, Var):
        return Var(new) if e.name == old else e
    if isinstance(e, Lit):
        return e
    if isinstance(e, Unary):
        return Unary(e.op, _rename_all(e.arg, old, new))
    if isinstance(e, Binary):
        return Binary(e.op, _rename_all(e.left, old, new), _rename_all(e.right, old, new))
    if isinstance(e, Call):
        return Call(e.fn, tuple(_rename_all(a, old, new) for a in e.args))
    if isinstance(e, FilterLength):
        var = new if e.var == old else e.var
        return FilterLength(_rename_all(e.items, old, new), var, _rename_all(e.pred, old, new))
    if isinstance(e, Ite):
        return Ite(*(_rename_all(x, old, new) for x in (e.cond, e.then_, e.else_)))
    if isinstance(e, Quant):
        bound = _rename_all(e.bound, old, new) if e.bound is not None else None
        var = new if e.var == old else e.var
        return Quant(e.kind, var, e.ty, bound, _rename_all(e.body, old, new))
    raise TypeError(f"expr must be a MiniSpec Expr; got {type(e).__name__}")


def _subst(e: Expr, name: str, repl: Expr, repl_free: set[str], slot: str) -> Expr:
    """``e`` with the free occurrences of ``name`` replaced by ``repl``; ``ValueError`` naming ``slot`` when a
    binder of ``e`` would capture a variable of ``repl``."""

    def go(x: Expr) -> Expr:
        if isinstance(x, Var):
            return repl if x.name == name else x
        if isinstance(x, Lit):
            return x
        if isinstance(x, Unary):
            return Unary(x.op, go(x.arg))
        if isinstance(x, Binary):
            return Binary(x.op, go(x.left), go(x.right))
        if isinstance(x, Call):
            return Call(x.fn, tuple(go(a) for a in x.args))
        if isinstance(x, Ite):
            return Ite(go(x.cond), go(x.then_), go(x.else_))
        if isinstance(x, FilterLength | Quant):
            inner = x.pred if isinstance(x, FilterLength) else x.body
            outer = go(x.items) if isinstance(x, FilterLength) else (None if x.bound is None else go(x.bound))
            if x.var == name:
                new_inner = inner
            else:
                if x.var in repl_free and name in _free_vars(inner):
                    raise ValueError(
                        f"slot {slot}: its value binds {x.var!r}, which the element it is applied to uses; "
                        "rename the bound variable"
                    )
                new_inner = go(inner)
            if isinstance(x, FilterLength):
                return FilterLength(outer, x.var, new_inner)  # type: ignore[arg-type]
            return Quant(x.kind, x.var, x.ty, outer, new_inner)
        raise TypeError(f"expr must be a MiniSpec Expr; got {type(x).__name__}")

    return go(e)


def _fresh(base: str, taken: set[str]) -> str:
    k = 1
    while f"{base}{k}" in taken:
        k += 1
    return f"{base}{k}"


# ----------------------------------------------------------------------------------------------------------
# Template text
# ----------------------------------------------------------------------------------------------------------


def _scan_slots(template: str, what: str, *, allow_element: bool) -> list[tuple[int, int, str, str | None]]:
    """The slots of ``template`` as (start, end, name, element expression text or None)."""
    out: list[tuple[int, int, str, str | None]] = []
    i = 0
    while True:
        start = template.find("⟨", i)
        if start < 0:
            stray = template.find("⟩", i)
            if stray >= 0:
                raise ValueError(f"{what} has an unmatched ⟩ at position {stray}: {template!r}")
            return out
        stray = template.find("⟩", i, start)
        if stray >= 0:
            raise ValueError(f"{what} has an unmatched ⟩ at position {stray}: {template!r}")
        m = _SLOT_NAME.match(template, start + 1)
        if m is None:
            raise ValueError(f"{what} has a slot without a name at position {start}: {template!r}")
        name, j = m.group(0), m.end()
        if template.startswith("⟩", j):
            out.append((start, j + 1, name, None))
            i = j + 1
            continue
        if not (allow_element and template.startswith(" @ ", j)):
            raise ValueError(f"{what}: slot ⟨{name} … is not closed by ⟩: {template!r}")
        depth, k = 0, j + 3
        while k < len(template):
            c = template[k]
            if c == "⟨":
                depth += 1
            elif c == "⟩":
                if depth == 0:
                    break
                depth -= 1
            k += 1
        else:
            raise ValueError(f"{what}: slot ⟨{name} @ … is not closed by ⟩: {template!r}")
        out.append((start, k + 1, name, template[j + 3 : k]))
        i = k + 1


def _plain_text(template: str, what: str) -> tuple[str, list[str]]:
    """``template`` with plain slots replaced by placeholder identifiers, and the slot names in order."""
    parts, names, last = [], [], 0
    for start, end, name, _ in _scan_slots(template, what, allow_element=False):
        parts.append(template[last:start])
        parts.append(_PLACEHOLDER + name)
        names.append(name)
        last = end
    parts.append(template[last:])
    return "".join(parts), names


@dataclass(frozen=True)
class _Compiled:
    expr: Expr
    slots: tuple[str, ...]
    element_slots: frozenset[str]


def _compile(spec_template: str) -> _Compiled:
    what = "spec_template"
    parts: list[str] = []
    order: list[str] = []
    element: set[str] = set()
    plain: set[str] = set()
    last = 0
    for start, end, name, elem in _scan_slots(spec_template, what, allow_element=True):
        parts.append(spec_template[last:start])
        if elem is None:
            parts.append(_PLACEHOLDER + name)
            plain.add(name)
        else:
            inner, inner_names = _plain_text(elem, what)
            parts.append(f"{_PLACEHOLDER}{name} ({inner})")
            element.add(name)
            order.extend(n for n in inner_names if n not in order)
        if name not in order:
            order.append(name)
        last = end
    parts.append(spec_template[last:])
    both = plain & element
    if both:
        raise ValueError(f"spec_template uses slot {sorted(both)[0]} both plainly and with @")
    try:
        expr = parse_expr("".join(parts))
    except SpecSyntaxError as err:
        raise ValueError(f"spec_template does not parse: {err}") from None
    return _Compiled(expr, tuple(order), frozenset(element))


def _clause_slots(clause_template: str) -> list[str]:
    return [name for _, _, name, _ in _scan_slots(clause_template, "clause_template", allow_element=False)]


# ----------------------------------------------------------------------------------------------------------
# Patterns
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    """A formalization idiom: ``name``, the ``cues`` (lowercase phrases) a description uses for it, a readable
    ``clause_template`` and a MiniSpec ``spec_template`` with the same ⟨slots⟩, and ``applies(signature)``,
    whether the signature has the parameter and result types the template needs."""

    name: str
    cues: tuple[str, ...]
    clause_template: str
    spec_template: str
    applies: Callable[[Signature], bool] = field(compare=False)
    _compiled: _Compiled = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _PATTERN_NAME.fullmatch(self.name) or self.name == "none":
            raise ValueError(f"name must be a lowercase identifier other than 'none'; got {self.name!r}")
        if not isinstance(self.cues, tuple) or not all(isinstance(c, str) and c.strip() for c in self.cues):
            raise TypeError(
                f"cues of pattern {self.name} must be a tuple of non-empty str; got {self.cues!r}"
            )
        if any(c != c.strip().lower() for c in self.cues):
            raise ValueError(f"cues of pattern {self.name} must be lowercase and stripped; got {self.cues!r}")
        for what in ("clause_template", "spec_template"):
            if not isinstance(getattr(self, what), str) or not getattr(self, what).strip():
                raise TypeError(f"{what} of pattern {self.name} must be a non-empty str")
        if not callable(self.applies):
            raise TypeError(f"applies of pattern {self.name} must be callable (Signature -> bool)")
        compiled = _compile(self.spec_template)
        clause = _clause_slots(self.clause_template)
        if set(clause) != set(compiled.slots):
            raise ValueError(
                f"clause_template and spec_template of pattern {self.name} must use the same slots; "
                f"got {sorted(set(clause))} and {sorted(compiled.slots)}"
            )
        object.__setattr__(self, "_compiled", compiled)

    @property
    def slots(self) -> tuple[str, ...]:
        """The slot names, in order of first use in the spec template."""
        return self._compiled.slots

    @property
    def element_slots(self) -> frozenset[str]:
        """The slots whose values speak about the element variable ``x``."""
        element = set(self._compiled.element_slots)
        # a plain slot under a template binder x reads x as the element too
        element |= {s for s in self.slots if _under_x(self._compiled.expr, _PLACEHOLDER + s)}
        return frozenset(element)


def _under_x(e: Expr, placeholder: str, inside: bool = False) -> bool:
    if isinstance(e, Var):
        return inside and e.name == placeholder
    if isinstance(e, FilterLength | Quant):
        now = inside or e.var == ELEMENT_VAR
        inner = e.pred if isinstance(e, FilterLength) else e.body
        outer = e.items if isinstance(e, FilterLength) else e.bound
        return _under_x(inner, placeholder, now) or (
            outer is not None and _under_x(outer, placeholder, inside)
        )
    if isinstance(e, Unary):
        return _under_x(e.arg, placeholder, inside)
    if isinstance(e, Binary):
        return _under_x(e.left, placeholder, inside) or _under_x(e.right, placeholder, inside)
    if isinstance(e, Call):
        return any(_under_x(a, placeholder, inside) for a in e.args)
    if isinstance(e, Ite):
        return any(_under_x(a, placeholder, inside) for a in (e.cond, e.then_, e.else_))
    return False


def instantiate(pattern: Pattern, slots: Mapping[str, str]) -> Expr:
    """The spec template of ``pattern`` with every slot filled by the MiniSpec expression text in ``slots``
    (a ``ValueError`` names an unfilled, unknown or unparsable slot)."""
    if not isinstance(pattern, Pattern):
        raise TypeError(f"pattern must be a Pattern; got {type(pattern).__name__}")
    if not isinstance(slots, Mapping):
        raise TypeError(f"slots must be a dict of slot name -> MiniSpec text; got {type(slots).__name__}")
    comp = pattern._compiled
    for name in comp.slots:
        if name not in slots:
            raise ValueError(f"slot ⟨{name}⟩ of pattern {pattern.name} is not filled")
    values: dict[str, Expr] = {}
    for name, text in slots.items():
        if name not in comp.slots:
            raise ValueError(f"slots names ⟨{name}⟩, which pattern {pattern.name} does not have {comp.slots}")
        if not isinstance(text, str):
            raise TypeError(f"slot ⟨{name}⟩ of pattern {pattern.name} must be MiniSpec text (a str)")
        if not text.strip():
            raise ValueError(f"slot ⟨{name}⟩ of pattern {pattern.name} is not filled (empty text)")
        try:
            values[name] = parse_expr(text)
        except SpecSyntaxError as err:
            raise ValueError(f"slot ⟨{name}⟩ of pattern {pattern.name} does not parse: {err}") from None
    # rename template binders that a slot value uses freely (the element variable x excepted)
    template = comp.expr
    used: set[str] = set()
    for v in values.values():
        used |= _free_vars(v)
    taken = used | _all_names(template)
    for var in sorted(_binders(template)):
        if var != ELEMENT_VAR and var in used:
            new = _fresh(var, taken)
            taken.add(new)
            template = _rename_all(template, var, new)
    return _fill(template, values, comp.element_slots)


def _binders(e: Expr) -> set[str]:
    return {n for n in _all_names(e) if not n.startswith(_PLACEHOLDER)} - _free_vars(e)


def _fill(e: Expr, values: dict[str, Expr], element: frozenset[str]) -> Expr:
    def slot_of(name: str) -> str | None:
        return name[len(_PLACEHOLDER) :] if name.startswith(_PLACEHOLDER) else None

    def go(x: Expr) -> Expr:
        if isinstance(x, Var):
            s = slot_of(x.name)
            return values[s] if s is not None else x
        if isinstance(x, Lit):
            return x
        if isinstance(x, Call):
            s = slot_of(x.fn)
            if s is not None and s in element:
                at = go(x.args[0])
                return _subst(values[s], ELEMENT_VAR, at, _free_vars(at), s)
            return Call(x.fn, tuple(go(a) for a in x.args))
        if isinstance(x, Unary):
            return Unary(x.op, go(x.arg))
        if isinstance(x, Binary):
            return Binary(x.op, go(x.left), go(x.right))
        if isinstance(x, Ite):
            return Ite(go(x.cond), go(x.then_), go(x.else_))
        if isinstance(x, FilterLength):
            return FilterLength(go(x.items), x.var, go(x.pred))
        if isinstance(x, Quant):
            return Quant(x.kind, x.var, x.ty, None if x.bound is None else go(x.bound), go(x.body))
        raise TypeError(f"expr must be a MiniSpec Expr; got {type(x).__name__}")

    return go(e)


def read_slots(pattern: Pattern, text: str) -> dict[str, str] | None:
    """The slot values of a clause ``text`` written with ``pattern``'s clause template (each slot between
    backticks; a final full stop is ignored), or None when the text does not follow the template."""
    if not isinstance(pattern, Pattern):
        raise TypeError(f"pattern must be a Pattern; got {type(pattern).__name__}")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    template = pattern.clause_template.strip().rstrip(".")
    regex, seen, last = [], set(), 0
    for start, end, name, _ in _scan_slots(template, "clause_template", allow_element=False):
        regex.append(re.escape(template[last:start]))
        regex.append(f"(?P={name})" if name in seen else f"(?P<{name}>[^`]+?)")
        seen.add(name)
        last = end
    regex.append(re.escape(template[last:]))
    m = re.fullmatch("".join(regex), text.strip().rstrip("."))
    if m is None:
        return None
    return {k: v.strip() for k, v in m.groupdict().items()}


def fill_clause(pattern: Pattern, slots: Mapping[str, str]) -> str:
    """The clause template of ``pattern`` with its slots replaced by the texts in ``slots`` (the readable
    counterpart of :func:`instantiate`; ``ValueError`` names an unfilled slot)."""
    if not isinstance(pattern, Pattern):
        raise TypeError(f"pattern must be a Pattern; got {type(pattern).__name__}")
    out, last = [], 0
    template = pattern.clause_template
    for start, end, name, _ in _scan_slots(template, "clause_template", allow_element=False):
        if name not in slots or not str(slots[name]).strip():
            raise ValueError(f"slot ⟨{name}⟩ of pattern {pattern.name} is not filled")
        out.append(template[last:start])
        out.append(str(slots[name]).strip())
        last = end
    out.append(template[last:])
    return "".join(out)


def match_cues(pattern: Pattern, sentence: str) -> float:
    """A lexical score of ``sentence`` for ``pattern``: the number of words of the cue phrases that occur in
    it as whole phrases (case-insensitive), so longer matching cues weigh more; 0.0 when none occurs."""
    if not isinstance(pattern, Pattern):
        raise TypeError(f"pattern must be a Pattern; got {type(pattern).__name__}")
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a str; got {type(sentence).__name__}")
    low = " ".join(sentence.lower().split())
    score = 0.0
    for cue in pattern.cues:
        if re.search(rf"(?<!\w){re.escape(cue)}(?!\w)", low):
            score += float(len(cue.split()))
    return score


# ----------------------------------------------------------------------------------------------------------
# A library of patterns
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Library:
    """An ordered collection of patterns with distinct names."""

    patterns: tuple[Pattern, ...]

    def __post_init__(self) -> None:
        if isinstance(self.patterns, Pattern) or not isinstance(self.patterns, Iterable):
            raise TypeError(f"patterns must be an iterable of Pattern; got {type(self.patterns).__name__}")
        pats = tuple(self.patterns)
        for p in pats:
            if not isinstance(p, Pattern):
                raise TypeError(f"patterns must hold Pattern; got {type(p).__name__}")
        names = [p.name for p in pats]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"patterns must have distinct names; repeated {dupes}")
        object.__setattr__(self, "patterns", pats)

    @property
    def names(self) -> tuple[str, ...]:
        """The pattern names, in order."""
        return tuple(p.name for p in self.patterns)

    def get(self, name: str) -> Pattern:
        """The pattern called ``name`` (``ValueError`` naming it when there is none)."""
        for p in self.patterns:
            if p.name == name:
                return p
        raise ValueError(f"name must be a pattern of the library {self.names}; got {name!r}")

    def applicable(self, signature: Signature) -> tuple[Pattern, ...]:
        """The patterns whose type applicability admits ``signature``."""
        if not isinstance(signature, Signature):
            raise TypeError(f"signature must be a Signature; got {type(signature).__name__}")
        return tuple(p for p in self.patterns if p.applies(signature))

    def __iter__(self) -> Iterator[Pattern]:
        return iter(self.patterns)

    def __len__(self) -> int:
        return len(self.patterns)

    def __contains__(self, name: object) -> bool:
        return any(p.name == name for p in self.patterns)


# ----------------------------------------------------------------------------------------------------------
# The seed library
# ----------------------------------------------------------------------------------------------------------


def _types(sig: Signature) -> list[Ty]:
    return [p.ty for p in sig.params]


def _has(sig: Signature, name: str, *, result: bool = False) -> bool:
    tys = _types(sig) + ([sig.ret] if result else [])
    return any(t.name == name for t in tys)


def _numeric_ret(sig: Signature) -> bool:
    return sig.ret.name in ("Nat", "Int")


def _seq_param(sig: Signature) -> bool:
    return any(t.is_container or t.name == "String" for t in _types(sig))


SEED_PATTERNS: tuple[Pattern, ...] = (
    Pattern(
        "all_satisfy",
        ("every element", "all elements", "each element", "every entry", "all entries", "all of its",
         "each number", "every value", "none of"),
        "every element `x` of `⟨a⟩` satisfies `⟨p⟩`",
        "∀ i, i < ⟨a⟩.size → ⟨p @ ⟨a⟩[i]!⟩",
        lambda s: _has(s, "Array", result=True),
    ),
    Pattern(
        "exists_satisfy",
        ("some element", "some entry", "at least one element", "contains", "occurs", "presence",
         "anywhere", "there is"),
        "some element `x` of `⟨a⟩` satisfies `⟨p⟩`",
        "∃ i, i < ⟨a⟩.size ∧ ⟨p @ ⟨a⟩[i]!⟩",
        lambda s: _has(s, "Array", result=True),
    ),
    Pattern(
        "first_index_or_sentinel",
        ("index of", "-1 if", "return -1", "first element", "first position", "earliest",
         "position of the first", "first index", "smallest index"),
        "`result` is the index of the first element `x` of `⟨a⟩` with `⟨p⟩`, or -1 if there is none",
        "(result = -1 → ∀ i, i < ⟨a⟩.size → ¬ ⟨p @ ⟨a⟩[i]!⟩) ∧ "
        "(result ≠ -1 → 0 ≤ result ∧ result < (⟨a⟩.size : Int) ∧ ⟨p @ ⟨a⟩[result.toNat]!⟩ ∧ "
        "∀ j, j < result.toNat → ¬ ⟨p @ ⟨a⟩[j]!⟩)",
        lambda s: s.ret.name == "Int" and _has(s, "Array"),
    ),
    Pattern(
        "max_characterisation",
        ("largest", "maximum", "greatest", "biggest", "highest"),
        "`result` is an element of `⟨a⟩` and no element of `⟨a⟩` is larger",
        "(∃ i, i < ⟨a⟩.size ∧ ⟨a⟩[i]! = result) ∧ (∀ i, i < ⟨a⟩.size → ⟨a⟩[i]! ≤ result)",
        lambda s: _numeric_ret(s) and _has(s, "Array"),
    ),
    Pattern(
        "min_characterisation",
        ("smallest", "minimum", "least", "lowest", "fewest"),
        "`result` is an element of `⟨a⟩` and no element of `⟨a⟩` is smaller",
        "(∃ i, i < ⟨a⟩.size ∧ ⟨a⟩[i]! = result) ∧ (∀ i, i < ⟨a⟩.size → result ≤ ⟨a⟩[i]!)",
        lambda s: _numeric_ret(s) and _has(s, "Array"),
    ),
    Pattern(
        "sortedness",
        ("sorted", "ascending", "non-decreasing", "descending", "in order", "never decrease",
         "smallest to largest"),
        "`⟨r⟩` is sorted in non-decreasing order",
        "∀ i j, i < j → j < ⟨r⟩.size → ⟨r⟩[i]! ≤ ⟨r⟩[j]!",
        lambda s: _has(s, "Array", result=True),
    ),
    Pattern(
        "permutation",
        ("rearrangement", "rearranged", "permutation", "same elements", "anagram", "anagrams",
         "exactly as often", "duplicates are kept", "same number of times"),
        "`⟨r⟩` is a rearrangement of `⟨a⟩` (the same elements, each as often)",
        "List.Perm ⟨r⟩.toList ⟨a⟩.toList",
        lambda s: sum(t.name in ("Array", "String") for t in [*_types(s), s.ret]) >= 2,
    ),
    Pattern(
        "count_matches",
        ("how many", "count", "number of", "how often", "occurrences"),
        "`result` is how many elements `x` of `⟨l⟩` satisfy `⟨p⟩`",
        "result = (⟨l⟩.filter (fun x => ⟨p⟩)).length",
        lambda s: _numeric_ret(s) and _seq_param(s),
    ),
    Pattern(
        "sum_equals",
        ("sum", "sums", "total", "add up", "adds up", "totals"),
        "`result` is the sum of `⟨l⟩`",
        "result = ⟨l⟩.sum",
        lambda s: _numeric_ret(s) and any(t.is_container and t.element != "Char" for t in _types(s)),
    ),
    Pattern(
        "bool_iff",
        ("decide whether", "whether", "return true", "true exactly when", "true if", "true when", "check",
         "checks"),
        "`result` is true exactly when `⟨c⟩`",
        "result = true ↔ ⟨c⟩",
        lambda s: s.ret.name == "Bool",
    ),
    Pattern(
        "bounded_exists_arith",
        ("perfect square", "perfect cube", "no larger than", "triangular", "consecutive", "witness",
         "finite", "square of"),
        "some natural number `x` at most `⟨n⟩` satisfies `⟨p⟩`",
        "∃ k, k < ⟨n⟩ + 1 ∧ ⟨p @ k⟩",
        lambda s: _has(s, "Nat"),
    ),
    Pattern(
        "prime_like_universal",
        ("prime", "primality", "coprime", "divisor", "divisible by no"),
        "`⟨n⟩` is prime: at least 2 and divisible by no `k` with 2 ≤ k < `⟨n⟩`",
        "2 ≤ ⟨n⟩ ∧ ∀ k, k < ⟨n⟩ → 2 ≤ k → ⟨n⟩ % k ≠ 0",
        lambda s: _has(s, "Nat"),
    ),
    Pattern(
        "nonempty_pre",
        ("non-empty", "nonempty", "never empty", "not empty", "at least one element", "empty array is not",
         "empty arrays are not"),
        "`⟨a⟩` is not empty",
        "⟨a⟩.size > 0",
        lambda s: _has(s, "Array"),
    ),
    Pattern(
        "index_in_range",
        ("at most the length", "never exceeds", "at most", "larger k", "within range", "invalid",
         "position"),
        "`⟨k⟩` is at most the size of `⟨a⟩`",
        "⟨k⟩ ≤ ⟨a⟩.size",
        lambda s: _has(s, "Array") and _has(s, "Nat", result=True),
    ),
    Pattern(
        "pointwise_map",
        ("element by element", "position by position", "each element", "for each element", "i-th",
         "same length", "as long as", "every element", "keeping positions"),
        "`result` has the size of `⟨a⟩` and each `result[i]!` is `⟨f⟩` for the element `x` at `i`",
        "result.size = ⟨a⟩.size ∧ ∀ i, i < ⟨a⟩.size → result[i]! = ⟨f @ ⟨a⟩[i]!⟩",
        lambda s: s.ret.name == "Array" and _has(s, "Array"),
    ),
    Pattern(
        "prefix_take_drop",
        ("first k", "leading", "from position", "onwards", "prefix", "up to", "to the end", "first `k`"),
        "`result` is the sum of the first `⟨k⟩` elements of `⟨l⟩`",
        "result = (⟨l⟩.take ⟨k⟩).sum",
        lambda s: _numeric_ret(s) and _has(s, "Nat") and any(t.is_container for t in _types(s)),
    ),
    Pattern(
        "unbounded_int_exists",
        ("some integer", "an integer", "multiple of", "existence", "exists", "twice some",
         "without bounding"),
        "some integer `x` satisfies `⟨p⟩`",
        "∃ k : Int, ⟨p @ k⟩",
        lambda s: _has(s, "Int") or _has(s, "Nat"),
    ),
)  # fmt: skip
"""One hand-written pattern for each benchmark pattern name, in the benchmark's order."""

SEED_LIBRARY = Library(SEED_PATTERNS)
"""The seeded library: a fixed cue lexicon and templates, written by hand."""

__all__ = [
    "ELEMENT_VAR",
    "SEED_LIBRARY",
    "SEED_PATTERNS",
    "Library",
    "Pattern",
    "fill_clause",
    "instantiate",
    "match_cues",
    "read_slots",
]
