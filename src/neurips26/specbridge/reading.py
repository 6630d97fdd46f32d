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
* a pattern's cues are matched in two ways: :func:`cue_patterns` looks for whole cue phrases (right for a
  hand-written lexicon of short phrases), :func:`cue_similarity` compares content words by TF-IDF cosine
  (right for mined cues, which include the sentences a pattern was mined from). Content words leave out
  the generic task vocabulary and the words of element predicates, which are slot values, not idioms;
* the constants a template slot may take (:func:`constants`) are the sentinel the prose gives for "none
  qualifies", the numbers a fragment writes that its predicate does not use, and ``0``.

Nothing here sees a reference specification: the functions take text and a signature only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from neurips26.specbridge.minispec.ast import RESULT, Signature
from neurips26.specbridge.minispec.parser import signature_of
from neurips26.specbridge.patterns import Library, Pattern, match_cues

ELEMENT = "x"
"""The variable predicates, witnesses and maps speak about."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_NUMBER = r"(-?\d+|zero)"


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
    sig = signature_of(signature)
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
    sig = signature_of(signature)
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
    sig = signature_of(signature)
    containers = tuple(p.name for p in sig.params if p.ty.is_container or p.ty.name == "String")
    numbers = tuple(p.name for p in sig.params if p.ty.name in ("Nat", "Int"))
    nats = tuple(p.name for p in sig.params if p.ty.name == "Nat")
    return Roles(containers, numbers, nats, sig.ret.name)


def list_view(signature: Signature | str, name: str) -> str:
    """The MiniSpec list view of parameter ``name`` (or ``result``): ``a.toList`` for an Array or a String,
    the name itself for a List."""
    sig = signature_of(signature)
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
    sig = None if signature is None else signature_of(signature)
    scored = []
    for p in library:
        if sig is not None and not p.applies(sig):
            continue
        score = match_cues(p, sentence)
        if score > 0:
            scored.append((p, score))
    scored.sort(key=lambda ps: (-ps[1], ps[0].name))
    return tuple(scored)


_STOP = frozenset(
    "a an the of in on to is are be been and or that this it its for with as by from at if when so "
    "then there their them they which who what whose was were has have do does "
    "write function return returns given give gives find finds value values number numbers "
    "than greater larger more above exceed exceeds less smaller below most least equal equals strictly "
    "positive negative odd even zero non-zero nonzero non-negative nonnegative different divisible".split()
)


def content_words(text: str) -> tuple[str, ...]:
    """The content words of ``text`` in order of first occurrence: lowercase words of two or more letters,
    stop words, the generic task vocabulary ("write", "function", "return", "value", …) and the words of
    element predicates ("greater", "at most", "negative", "odd": they state a slot value rather than an
    idiom) left out, a plural ``-s`` cut from words longer than three letters. Quantifier words ("every",
    "some", "no") are kept."""
    out: dict[str, None] = {}
    for w in re.findall(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*", _text("text", text).lower()):
        if len(w) < 2 or w in _STOP:
            continue
        out[w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w] = None
    return tuple(out)


def cue_similarity(fragment: str, patterns: tuple[Pattern, ...] | list[Pattern]) -> tuple[float, ...]:
    """How well ``fragment`` matches each of ``patterns`` by its cues: the TF-IDF cosine (fitted on the
    patterns' cue texts, one document per cue, content words only) between the fragment and the pattern's
    best-matching cue, rounded to 1e-9; 0.0 for every pattern when no cue has a content word. Unlike
    :func:`~neurips26.specbridge.patterns.match_cues` a long cue (a sentence a pattern was mined from) need
    not recur verbatim: shared content words count, rare ones more."""
    _text("fragment", fragment)
    pats = tuple(patterns)
    for p in pats:
        if not isinstance(p, Pattern):
            raise TypeError(f"patterns must hold Pattern; got {type(p).__name__}")
    return _similarity(fragment, tuple(p.cues for p in pats))


@lru_cache(maxsize=4096)
def _similarity(fragment: str, cue_sets: tuple[tuple[str, ...], ...]) -> tuple[float, ...]:
    docs = [(i, " ".join(content_words(c))) for i, cues in enumerate(cue_sets) for c in cues]
    docs = [(i, d) for i, d in docs if d]
    if not docs:
        return tuple(0.0 for _ in cue_sets)
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(lowercase=False, token_pattern=r"\S+")
    matrix = vec.fit_transform([d for _, d in docs])
    query = vec.transform([" ".join(content_words(fragment))])
    sims = (matrix @ query.T).toarray().ravel()
    best = [0.0] * len(cue_sets)
    for (i, _), sim in zip(docs, sims, strict=True):
        best[i] = max(best[i], round(float(sim), 9))
    return tuple(best)


def shared_cue_words(fragment: str, pattern: Pattern) -> int:
    """The most content words (:func:`content_words`) that ``fragment`` shares with one cue of
    ``pattern``."""
    words = set(content_words(fragment))
    if not isinstance(pattern, Pattern):
        raise TypeError(f"pattern must be a Pattern; got {type(pattern).__name__}")
    return max((len(words & set(content_words(c))) for c in pattern.cues), default=0)


_SENTINELS = {"-1": "-1", "0": "0"}


def constants(fragment: str, description: str, signature: Signature | str) -> tuple[str, ...]:
    """The integer constants a template slot ``⟨c⟩`` may take for ``fragment`` of ``description``, most
    likely first and without repeats: the result the description gives when no element qualifies (an
    ``absent`` edge case, usually ``-1``), the numbers written in the fragment that its element predicate
    does not already use, and finally ``0`` (where counting starts)."""
    _text("fragment", fragment)
    _text("description", description)
    sig = signature_of(signature)
    out: dict[str, None] = {}
    for ep in edge_case_phrases(description):
        if ep.kind == "absent" and ep.outcome in _SENTINELS:
            out[_SENTINELS[ep.outcome]] = None
    pred = element_predicate(fragment, sig) or ""
    used = set(re.findall(r"-?\d+", pred))
    for m in re.finditer(r"(?<![\w`])(-?\d+)(?![\w`])", fragment):
        if m.group(1) not in used:
            out[str(int(m.group(1)))] = None
    out["0"] = None
    return tuple(out)


__all__ = [
    "EDGE_KINDS",
    "ELEMENT",
    "EdgePhrase",
    "Roles",
    "constants",
    "content_words",
    "cue_patterns",
    "cue_similarity",
    "shared_cue_words",
    "edge_case_phrases",
    "element_map",
    "element_predicate",
    "list_view",
    "roles",
    "sentences",
    "witness_predicate",
]
