"""How the chapter's offline policies read prose: sentences, element predicates, parameter roles, edge-case
phrases and pattern cues.

Every offline policy of the method comparison reads a description with these same functions, so the methods
differ only in what their prompts show them and in what they do with it, never in how well they read English.
The reading is deliberately small and lexical:

* an *element predicate* is MiniSpec text about the element variable ``x`` (``"negative"`` -> ``x < 0``,
  ``"greater than 3"`` -> ``x > 3``, ``"greater than `k`"`` -> ``x > k`` when ``k`` is a parameter); of
  several phrases in a sentence the one that starts first wins, and at one position the longest, so
  ``"not divisible by 2"`` reads as odd and ``"no larger than -2"`` as ``x ≤ -2``;
* a *witness predicate* is MiniSpec text about ``x`` as the witness of an arithmetic existence
  (``"perfect square"`` -> ``x * x = n``), and an *element map* the value computed from an element
  (``"doubles"`` -> ``2 * x``);
* numbers are read only when written with digits (or as ``zero``), so ``"at least one element"`` is not
  ``x ≥ 1``.

Nothing here sees a reference specification: the functions take text and a signature only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from neurips26.specbridge.minispec.ast import RESULT, Signature
from neurips26.specbridge.minispec.parser import SpecSyntaxError, parse_signature
from neurips26.specbridge.patterns import Library, Pattern, match_cues

ELEMENT = "x"
"""The variable predicates, witnesses and maps speak about."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_NUMBER = r"(-?\d+|zero)"


def _signature(signature: Signature | str) -> Signature:
    if isinstance(signature, Signature):
        return signature
    if isinstance(signature, str):
        try:
            return parse_signature(signature)
        except SpecSyntaxError as err:
            raise ValueError(f"signature must be a Lean signature 'def f (x : τ) … : τ'; {err}") from None
    raise TypeError(f"signature must be a Signature or its Lean text; got {type(signature).__name__}")


def _text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str; got {type(value).__name__}")
    return value


def sentences(description: str) -> tuple[str, ...]:
    """The sentences of ``description``, split after every ``.``, ``!`` or ``?`` that a space follows (a
    sentence may start in lower case with a parameter name, ``"k is at most …"``)."""
    text = " ".join(_text("description", description).split())
    return tuple(s.strip() for s in _SENTENCE_END.split(text) if s.strip())


def _num(token: str) -> str:
    return "0" if token == "zero" else token


def _param_alt(sig: Signature) -> str | None:
    names = [re.escape(p.name) for p in sig.params if p.ty.name in ("Nat", "Int")]
    return "|".join(names) if names else None


def _comparisons(sig: Signature) -> list[tuple[str, str]]:
    """(regex, MiniSpec template with {0} for the captured operand) for the comparison phrases."""
    out: list[tuple[str, str]] = []
    ops = [
        (
            r"strictly greater than|strictly larger than|greater than|larger than|more than|above|exceeds?",
            ">",
        ),
        (r"strictly less than|strictly smaller than|less than|smaller than|below", "<"),
        (r"at most|no larger than|no more than|not greater than|not above", "≤"),
        (r"at least|no smaller than|no less than|not less than|not below", "≥"),
        (r"equal to|equals", "="),
    ]
    params = _param_alt(sig)
    for words, op in ops:
        out.append((rf"\b(?:{words}) {_NUMBER}\b", f"x {op} {{0}}"))
        if params is not None:
            out.append((rf"\b(?:{words}) `?({params})`?(?![\w])", f"x {op} {{0}}"))
    return out


_FIXED_PREDICATES: tuple[tuple[str, str], ...] = (
    (r"\bnot divisible by 2\b|\bone more than an even number\b|\bnot a multiple of (?:2|two)\b", "x % 2 = 1"),
    (r"\bdivisible by 2\b|\ba multiple of (?:2|two)\b|\beven\b", "x % 2 = 0"),
    (r"\bodd\b", "x % 2 = 1"),
    (r"\bnot divisible by 3\b", "x % 3 ≠ 0"),
    (r"\bdivisible by 3\b|\ba multiple of (?:3|three)\b", "x % 3 = 0"),
    (r"\bstrictly positive\b|\bpositive\b|\bstrictly greater than zero\b", "x > 0"),
    (r"\bstrictly negative\b|\bnegative\b|\bstrictly below zero\b", "x < 0"),
    (r"\bnon-?negative\b", "x ≥ 0"),
    (r"\bnon-?zero\b|\bdifferent from zero\b|\bnot zero\b", "x ≠ 0"),
    (r"\bis zero\b|\bare zero\b|\bzeros?\b", "x = 0"),
)


def element_predicate(phrase: str, signature: Signature | str) -> str | None:
    """The MiniSpec predicate about the element ``x`` that ``phrase`` states (``"negative"`` -> ``x < 0``,
    ``"greater than k"`` -> ``x > k`` when ``k`` is a numeric parameter of ``signature``), or None. Of several
    candidate phrases the earliest wins, then the longest."""
    text = " ".join(_text("phrase", phrase).lower().split())
    sig = _signature(signature)
    found: list[tuple[int, int, str]] = []
    for regex, out in _FIXED_PREDICATES:
        for m in re.finditer(regex, text):
            found.append((m.start(), -(m.end() - m.start()), out))
    for regex, template in _comparisons(sig):
        for m in re.finditer(regex, text):
            found.append((m.start(), -(m.end() - m.start()), template.format(_num(m.group(1)))))
    if not found:
        return None
    return min(found)[2]


def _number_param(sig: Signature) -> str | None:
    for p in sig.params:
        if p.ty.name in ("Nat", "Int"):
            return p.name
    return None


def witness_predicate(phrase: str, signature: Signature | str) -> str | None:
    """The MiniSpec condition on a witness ``x`` that ``phrase`` asks to exist, or None:
    ``"perfect square"`` -> ``x * x = n`` for the first numeric parameter ``n``, ``"twice some integer"`` ->
    ``n = 2 * x``."""
    text = " ".join(_text("phrase", phrase).lower().split())
    sig = _signature(signature)
    n = _number_param(sig)
    if n is None:
        return None
    nums = [p.name for p in sig.params if p.ty.name in ("Nat", "Int")]
    rules: list[tuple[str, str]] = [
        (r"perfect cube|cube of", f"x * x * x = {n}"),
        (r"perfect square|square of|a square\b|squares\b", f"x * x = {n}"),
        (r"two consecutive|pronic", f"x * (x + 1) = {n}"),
        (r"triangular", f"x * (x + 1) = 2 * {n}"),
        (r"\bodd\b", f"{n} = 2 * x + 1"),
        (r"\beven\b|twice some", f"{n} = 2 * x"),
    ]
    if len(nums) >= 2:
        d, m = nums[0], nums[1]
        rules.insert(0, (rf"`?{re.escape(d)}`? divides `?{re.escape(m)}`?|times some", f"{m} = {d} * x"))
    found = []
    for regex, out in rules:
        m = re.search(regex, text)
        if m is not None:
            found.append((m.start(), out))
    return min(found)[1] if found else None


_MAPS: tuple[tuple[str, str], ...] = (
    (r"\bdoubles?\b|\btwice\b", "2 * x"),
    (r"\btriples?\b", "3 * x"),
    (r"\bnegates?\b", "-x"),
    (r"\bsquares?\b", "x * x"),
    (r"\badds? (-?\d+) to\b", "x + {0}"),
    (r"\bsubtracts? (\d+) from\b", "x - {0}"),
    (r"\bmultipl(?:y|ies) (?:it |every element |each element )?by (-?\d+)\b", "{0} * x"),
    (r"\breplac\w* negative values with 0\b|\bclamp", "x.toNat"),
    (r"\babsolute value\b", "x.natAbs"),
)


def element_map(phrase: str) -> str | None:
    """The MiniSpec value computed from an element ``x`` that ``phrase`` describes (``"doubles"`` ->
    ``2 * x``, ``"adds 3 to"`` -> ``x + 3``), or None."""
    text = " ".join(_text("phrase", phrase).lower().split())
    found = []
    for regex, out in _MAPS:
        m = re.search(regex, text)
        if m is not None:
            found.append((m.start(), out.format(*m.groups())))
    return min(found)[1] if found else None


@dataclass(frozen=True)
class Roles:
    """The roles of a signature's parameters: ``containers`` (Array, List or String parameters, in order),
    ``numbers`` (Nat and Int parameters, in order), ``nats`` (the Nat ones) and the ``result`` type name."""

    containers: tuple[str, ...]
    numbers: tuple[str, ...]
    nats: tuple[str, ...]
    result: str

    @property
    def main(self) -> str | None:
        """The main container (the first one), or None."""
        return self.containers[0] if self.containers else None

    @property
    def bound(self) -> str | None:
        """The Nat parameter that plays a length or count bound (the first one), or None."""
        return self.nats[0] if self.nats else None


def roles(signature: Signature | str) -> Roles:
    """Which parameter of ``signature`` is the main container and which are numbers."""
    sig = _signature(signature)
    containers = tuple(p.name for p in sig.params if p.ty.is_container or p.ty.name == "String")
    numbers = tuple(p.name for p in sig.params if p.ty.name in ("Nat", "Int"))
    nats = tuple(p.name for p in sig.params if p.ty.name == "Nat")
    return Roles(containers, numbers, nats, sig.ret.name)


def list_view(signature: Signature | str, name: str) -> str:
    """The MiniSpec list view of parameter ``name`` (or ``result``): ``a.toList`` for an Array or a String,
    the name itself for a List."""
    sig = _signature(signature)
    ty = sig.ret if name == RESULT else sig.param(name).ty
    return name if ty.name == "List" else f"{name}.toList"


EDGE_KINDS: tuple[str, ...] = ("empty", "ties", "absent", "negative", "zero")


@dataclass(frozen=True)
class EdgePhrase:
    """An edge case a description settles: its ``kind`` (one of :data:`EDGE_KINDS`), what the prose
    says happens (``outcome``: ``"first"``, ``"-1"``, ``"0"``, ``"true"``, ``"invalid"``, … or ``""``) and
    the ``sentence`` it was read from."""

    kind: str
    outcome: str
    sentence: str


def _outcome(s: str) -> str:
    low = s.lower()
    if re.search(r"not allowed|invalid|not a valid|outside the contract|never empty|must", low):
        return "invalid"
    for word, out in (
        (r"-1\b", "-1"),
        (r"\bfirst\b|\bsmallest index\b|\bearliest\b", "first"),
        (r"\btrue\b", "true"),
        (r"\bfalse\b", "false"),
        (r"\bempty array\b|\bempty list\b|\bempty string\b", "empty"),
        (r"\b0\b|\bzero\b", "0"),
    ):
        if re.search(word, low):
            return out
    return ""


def edge_case_phrases(description: str) -> tuple[EdgePhrase, ...]:
    """The edge cases ``description`` mentions, one per (kind, sentence): empty inputs, ties (usually settled
    as ``"first"``), absent elements (usually ``"-1"``), negative numbers and zero."""
    out: list[EdgePhrase] = []
    for s in sentences(description):
        low = s.lower()
        kinds = []
        if re.search(r"\bempty\b|\bzero or one element|\bnothing is left", low):
            kinds.append("empty")
        if re.search(r"several times|more than once|several elements|ties?\b|repeated|equal neighbours", low):
            kinds.append("ties")
        if re.search(r"no element qualifies|contains no|if none|-1\b", low):
            kinds.append("absent")
        if re.search(r"\bnegative\b", low):
            kinds.append("negative")
        if re.search(r"\bzero\b|\b0\b", low) and "empty" not in kinds:
            kinds.append("zero")
        for k in kinds:
            outcome = _outcome(s)
            if k == "ties" and re.search(r"\bfirst\b|\bsmallest index\b", low):
                outcome = "first"
            if k == "absent" and "-1" in low:
                outcome = "-1"
            out.append(EdgePhrase(k, outcome, s))
    return tuple(out)


def cue_patterns(
    sentence: str, library: Library, signature: Signature | str | None = None
) -> tuple[tuple[Pattern, float], ...]:
    """The patterns of ``library`` whose cues occur in ``sentence``, with their cue scores
    (``patterns.match_cues``), best first, ties by name; with ``signature`` only the applicable ones."""
    _text("sentence", sentence)
    if not isinstance(library, Library):
        raise TypeError(f"library must be a Library; got {type(library).__name__}")
    sig = None if signature is None else _signature(signature)
    scored = []
    for p in library:
        if sig is not None and not p.applies(sig):
            continue
        score = match_cues(p, sentence)
        if score > 0:
            scored.append((p, score))
    scored.sort(key=lambda ps: (-ps[1], ps[0].name))
    return tuple(scored)


__all__ = [
    "EDGE_KINDS",
    "ELEMENT",
    "EdgePhrase",
    "Roles",
    "cue_patterns",
    "edge_case_phrases",
    "element_map",
    "element_predicate",
    "list_view",
    "roles",
    "sentences",
    "witness_predicate",
]
