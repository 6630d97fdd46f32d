"""The Natural-Language Formalization Plan (NLFP): a readable, clause-level plan written before any Lean, its
Markdown form, and its deterministic decoding into a VERINA-style MiniSpec spec.

A plan states what the result means (``intent``), the role and informal constraints of every input, the
output, atomic *assumptions* (precondition clauses ``A1, A2, …``) and *guarantees* (postcondition clauses
``G1, G2, …``), the edge cases with the clause that settles each (or none: unspecified), the formalization
choices (numeric domain, indexing style, list or array view, relational or constructive style, helper
definitions, decidability) and the behaviours deliberately left open. Every clause records the pattern it
follows (a library name, or ``none``), the scope of its quantified variables and a *formal hint*: the
MiniSpec text of its conjunct.

Decoding is deterministic: each clause becomes its hint, or, when the hint is empty, its pattern's spec
template filled with the slot values read from the clause text (the clause written with the pattern's
clause template). Then ``P`` is the conjunction of the assumptions and ``Q`` that of the guarantees, each
flattened into top-level conjuncts (so a clause whose formula is itself a conjunction owns several
conjuncts) and right-nested as Lean's ``∧``. The map from conjunct positions back to clause ids lets an
evaluation failure be reported against the readable clause. By default every conjunct is type-checked on
its own (assumptions over the parameters, guarantees over the parameters and ``result``), so an ill-typed
clause is named rather than failing the spec as a whole.

The Markdown form has fixed headings (``## Intent``, ``## Inputs``, ``## Output``, ``## Assumptions``,
``## Guarantees``, ``## Edge cases``, ``## Choices``, ``## Unspecified``) and one bullet per item; a clause
reads ``- **G1** (pattern: max_characterisation; scope: i < a.size) text — hint: `…```. An empty section
holds ``- none``. The reader accepts a few ASCII spellings a language model may produce (``*`` bullets,
``->`` for ``→``, `` -- `` for `` — ``, any heading level from ``##``) and reports the first line that
breaks the format. Text fields are single lines with surrounding space removed; hints and scopes may not
contain backticks (Markdown code spans), which MiniSpec never needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from neurips26.specbridge.minispec.ast import (
    PROP,
    RESULT,
    TRUE,
    Expr,
    Helper,
    Signature,
    Spec,
    Ty,
    conjoin,
    conjuncts,
)
from neurips26.specbridge.minispec.parser import SpecSyntaxError, parse_expr, parse_spec, signature_of
from neurips26.specbridge.minispec.parser import parse_type as _parse_type
from neurips26.specbridge.minispec.printer import print_spec
from neurips26.specbridge.minispec.typecheck import SpecTypeError, elaborate
from neurips26.specbridge.patterns import SEED_LIBRARY, Library, instantiate, read_slots

HEADINGS: tuple[str, ...] = (
    "Intent",
    "Inputs",
    "Output",
    "Assumptions",
    "Guarantees",
    "Edge cases",
    "Choices",
    "Unspecified",
)
"""The section headings of a plan's Markdown form, in order."""

TITLE = "# Formalization plan"
NO_PATTERN = "none"
CHOICE_KEYS: tuple[str, ...] = ("domain", "indexing", "view", "style", "helpers", "decidability")

_ID = {"assumptions": re.compile(r"A[1-9][0-9]*"), "guarantees": re.compile(r"G[1-9][0-9]*")}
_PATTERN_NAME = re.compile(r"[a-z][a-z0-9_]*")
_HINT_SEP = " — hint: `"

# ----------------------------------------------------------------------------------------------------------
# Errors
# ----------------------------------------------------------------------------------------------------------


class PlanFormatError(ValueError):
    """Markdown that does not read as a plan; ``line`` (from 1) is where the reader stopped."""

    def __init__(self, message: str, line: int) -> None:
        self.message = message
        self.line = line
        super().__init__(f"line {line}: {message}")


class PlanDecodeError(ValueError):
    """A plan whose clause ``clause_id`` cannot be turned into a MiniSpec conjunct (``clause_id`` is None when
    the fault is in the helper definitions)."""

    def __init__(self, message: str, clause_id: str | None) -> None:
        self.message = message
        self.clause_id = clause_id
        where = f"clause {clause_id}" if clause_id is not None else "helpers"
        super().__init__(f"{where}: {message}")


# ----------------------------------------------------------------------------------------------------------
# Records
# ----------------------------------------------------------------------------------------------------------


def _line(name: str, value: object, *, empty_ok: bool = True) -> str:
    """``value`` as a stripped one-line str, or an error naming ``name``."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str; got {type(value).__name__}")
    text = value.strip()
    if "\n" in text or "\r" in text:
        raise ValueError(f"{name} must be a single line; got {value!r}")
    if not empty_ok and not text:
        raise ValueError(f"{name} must be non-empty text")
    return text


def _no_backtick(name: str, text: str) -> str:
    if "`" in text:
        raise ValueError(f"{name} may not contain a backtick; got {text!r}")
    return text


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)


def _items(name: str, value: object, kind: type) -> tuple:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise TypeError(f"{name} must be a tuple of {kind.__name__}; got {type(value).__name__}")
    items = tuple(value)
    for i, v in enumerate(items):
        if not isinstance(v, kind):
            raise TypeError(f"{name}[{i}] must be a {kind.__name__}; got {type(v).__name__}")
    return items


@dataclass(frozen=True)
class InputNote:
    """A parameter of the signature: ``name``, Lean ``type``, its ``role`` and informal ``constraints``."""

    name: str
    type: Ty
    role: str = ""
    constraints: str = ""

    def __post_init__(self) -> None:
        _set(self, "name", _no_backtick("name", _line("name", self.name, empty_ok=False)))
        if not isinstance(self.type, Ty):
            raise TypeError(f"type of input {self.name} must be a Ty; got {type(self.type).__name__}")
        role = _line(f"role of input {self.name}", self.role)
        if "; constraints:" in role:
            raise ValueError(f"role of input {self.name} may not contain '; constraints:'")
        _set(self, "role", role)
        _set(self, "constraints", _line(f"constraints of input {self.name}", self.constraints))


@dataclass(frozen=True)
class OutputNote:
    """The result: its Lean ``type`` and what it ``meaning``-fully is."""

    type: Ty
    meaning: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.type, Ty):
            raise TypeError(f"type of the output must be a Ty; got {type(self.type).__name__}")
        _set(self, "meaning", _line("meaning", self.meaning))


@dataclass(frozen=True)
class Clause:
    """An atomic assumption (``A1`` …) or guarantee (``G1`` …): readable ``text``, the ``pattern`` it follows
    (a library name or ``"none"``), the ``scope`` of its quantified variables (``"i < a.size"`` or ``""``)
    and ``formal_hint``, the MiniSpec text of its conjunct (``""``: decode from the pattern's template)."""

    id: str
    text: str
    pattern: str = NO_PATTERN
    scope: str = ""
    formal_hint: str = ""

    def __post_init__(self) -> None:
        cid = _line("id", self.id, empty_ok=False)
        if not re.fullmatch(r"[AG][1-9][0-9]*", cid):
            raise ValueError(f"id must read A1, A2, … or G1, G2, …; got {self.id!r}")
        _set(self, "id", cid)
        text = _line(f"text of clause {cid}", self.text, empty_ok=False)
        if re.search(r"(?:—|--)\s*hint:", text):
            raise ValueError(f"text of clause {cid} may not contain '— hint:'")
        _set(self, "text", text)
        pattern = _line(f"pattern of clause {cid}", self.pattern, empty_ok=False)
        if not _PATTERN_NAME.fullmatch(pattern):
            raise ValueError(f"pattern of clause {cid} must be a pattern name or 'none'; got {pattern!r}")
        _set(self, "pattern", pattern)
        scope = _no_backtick(f"scope of clause {cid}", _line(f"scope of clause {cid}", self.scope))
        depth = 0
        for c in scope:
            depth += {"(": 1, ")": -1}.get(c, 0)
            if depth < 0:
                break
        if depth != 0:
            raise ValueError(f"scope of clause {cid} must have balanced parentheses; got {scope!r}")
        _set(self, "scope", scope)
        hint = _line(f"formal_hint of clause {cid}", self.formal_hint)
        _set(self, "formal_hint", _no_backtick(f"formal_hint of clause {cid}", hint))


@dataclass(frozen=True)
class EdgeCase:
    """An edge ``case`` of the input and the ``clause_id`` that settles it (None: left unspecified)."""

    case: str
    clause_id: str | None = None

    def __post_init__(self) -> None:
        case = _line("case", self.case, empty_ok=False)
        if " → " in case or " -> " in case or case.lower() == NO_PATTERN:
            raise ValueError(f"case may not contain an arrow or be 'none'; got {case!r}")
        _set(self, "case", case)
        if self.clause_id is not None and not (
            isinstance(self.clause_id, str) and re.fullmatch(r"[AG][1-9][0-9]*", self.clause_id)
        ):
            raise ValueError(
                f"clause_id of edge case {case!r} must be a clause id or None; got {self.clause_id!r}"
            )


@dataclass(frozen=True)
class Choices:
    """The formalization choices: numeric ``domain`` (Nat/Int, casts), ``indexing`` style, list or array
    ``view``, relational or constructive ``style``, ``helpers`` (one-line MiniSpec ``def`` texts the clauses
    may call) and ``decidability`` intent."""

    domain: str = "Int"
    indexing: str = "a[i]!"
    view: str = "array"
    style: str = "relational"
    helpers: tuple[str, ...] = ()
    decidability: str = "bounded quantifiers"

    def __post_init__(self) -> None:
        for key in ("domain", "indexing", "view", "style", "decidability"):
            _set(self, key, _line(key, getattr(self, key)))
        helpers = tuple(
            _no_backtick(f"helpers[{i}]", _line(f"helpers[{i}]", h, empty_ok=False))
            for i, h in enumerate(_items("helpers", self.helpers, str))
        )
        for i, h in enumerate(helpers):
            if not h.startswith("def "):
                raise ValueError(f"helpers[{i}] must be a MiniSpec definition 'def name (x : τ) : τ := …'")
        _set(self, "helpers", helpers)


@dataclass(frozen=True)
class NLFP:
    """A Natural-Language Formalization Plan (see the module docstring for the fields)."""

    intent: str
    inputs: tuple[InputNote, ...]
    output: OutputNote
    assumptions: tuple[Clause, ...]
    guarantees: tuple[Clause, ...]
    edge_cases: tuple[EdgeCase, ...] = ()
    choices: Choices = field(default_factory=Choices)
    unspecified: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _set(self, "intent", _line("intent", self.intent, empty_ok=False))
        inputs = _items("inputs", self.inputs, InputNote)
        names = [n.name for n in inputs]
        if len(set(names)) != len(names) or RESULT in names:
            raise ValueError(f"inputs must have distinct names other than 'result'; got {names}")
        _set(self, "inputs", inputs)
        if not isinstance(self.output, OutputNote):
            raise TypeError(f"output must be an OutputNote; got {type(self.output).__name__}")
        for part in ("assumptions", "guarantees"):
            clauses = _items(part, getattr(self, part), Clause)
            for c in clauses:
                if not _ID[part].fullmatch(c.id):
                    raise ValueError(
                        f"{part} must have ids {part[0].upper()}1, {part[0].upper()}2, …; got {c.id}"
                    )
            _set(self, part, clauses)
        ids = [c.id for c in self.clauses]
        if len(set(ids)) != len(ids):
            raise ValueError(f"clause ids must be distinct; got {ids}")
        edges = _items("edge_cases", self.edge_cases, EdgeCase)
        for e in edges:
            if e.clause_id is not None and e.clause_id not in ids:
                raise ValueError(
                    f"edge_cases: case {e.case!r} names clause {e.clause_id}, which the plan lacks"
                )
        _set(self, "edge_cases", edges)
        if not isinstance(self.choices, Choices):
            raise TypeError(f"choices must be a Choices; got {type(self.choices).__name__}")
        unspecified = tuple(
            _line(f"unspecified[{i}]", u, empty_ok=False)
            for i, u in enumerate(_items("unspecified", self.unspecified, str))
        )
        if any(u.lower() == NO_PATTERN for u in unspecified):
            raise ValueError("unspecified may not hold the item 'none' (an empty section is written so)")
        _set(self, "unspecified", unspecified)

    @property
    def clauses(self) -> tuple[Clause, ...]:
        """The assumptions, then the guarantees."""
        return self.assumptions + self.guarantees

    def clause(self, clause_id: str) -> Clause:
        """The clause with id ``clause_id`` (``ValueError`` naming it when there is none)."""
        for c in self.clauses:
            if c.id == clause_id:
                return c
        raise ValueError(
            f"clause_id must name a clause of the plan {[c.id for c in self.clauses]}; got {clause_id!r}"
        )


# ----------------------------------------------------------------------------------------------------------
# Markdown
# ----------------------------------------------------------------------------------------------------------


def _clause_line(c: Clause) -> str:
    head = f"pattern: {c.pattern}" + (f"; scope: {c.scope}" if c.scope else "")
    hint = f"{_HINT_SEP}{c.formal_hint}`" if c.formal_hint else ""
    return f"- **{c.id}** ({head}) {c.text}{hint}"


def to_markdown(plan: NLFP) -> str:
    """The plan as a Markdown document with the fixed headings of :data:`HEADINGS`, one bullet per item."""
    if not isinstance(plan, NLFP):
        raise TypeError(f"plan must be an NLFP; got {type(plan).__name__}")

    def bullets(lines: list[str]) -> list[str]:
        return lines or ["- none"]

    out = [TITLE, "", "## Intent", "", plan.intent, "", "## Inputs", ""]
    out += bullets(
        [
            f"- `{n.name}` : `{n.type}` — role: {n.role}; constraints: {n.constraints}".rstrip()
            for n in plan.inputs
        ]
    )
    out += ["", "## Output", "", f"- `{RESULT}` : `{plan.output.type}` — {plan.output.meaning}".rstrip()]
    out += ["", "## Assumptions", ""] + bullets([_clause_line(c) for c in plan.assumptions])
    out += ["", "## Guarantees", ""] + bullets([_clause_line(c) for c in plan.guarantees])
    out += ["", "## Edge cases", ""]
    out += bullets([f"- {e.case} → {e.clause_id or 'unspecified'}" for e in plan.edge_cases])
    ch = plan.choices
    out += ["", "## Choices", ""]
    for key in CHOICE_KEYS:
        if key != "helpers":
            out.append(f"- {key}: {getattr(ch, key)}".rstrip())
        elif ch.helpers:
            out += ["- helpers:"] + [f"  - `{h}`" for h in ch.helpers]
        else:
            out.append("- helpers: none")
    out += ["", "## Unspecified", ""] + bullets([f"- {u}" for u in plan.unspecified])
    return "\n".join(out) + "\n"


def _normalise(line: str) -> str:
    s = line.rstrip()
    stripped = s.lstrip()
    indent = s[: len(s) - len(stripped)]
    if stripped.startswith("* "):
        stripped = "- " + stripped[2:]
    return indent + stripped


def _sections(lines: list[str]) -> dict[str, tuple[int, list[tuple[int, str]]]]:
    """Heading -> (its line number, its non-blank body lines with their numbers)."""
    known = {h.lower(): h for h in HEADINGS}
    found: dict[str, tuple[int, list[tuple[int, str]]]] = {}
    current: str | None = None
    for no, raw in enumerate(lines, start=1):
        line = _normalise(raw)
        m = re.fullmatch(r"(#{2,6})\s+(.+?)\s*:?\s*", line)
        if m is not None:
            name = known.get(m.group(2).strip().lower())
            if name is None:
                raise PlanFormatError(f"unknown heading {m.group(2)!r}; a plan has {HEADINGS}", no)
            if name in found:
                raise PlanFormatError(f"heading '## {name}' appears twice", no)
            found[name] = (no, [])
            current = name
            continue
        if current is None or not line.strip():
            continue  # the title and anything before the first section
        found[current][1].append((no, line))
    for h in HEADINGS:
        if h not in found:
            raise PlanFormatError(f"missing heading '## {h}'", len(lines) + 1)
    return found


def _is_none(body: list[tuple[int, str]]) -> bool:
    return len(body) == 1 and body[0][1].strip().lower() in ("- none", "- (none)", "- _none_", "none")


def _parse_ty(text: str, no: int, what: str) -> Ty:
    try:
        return _parse_type(text)
    except (SpecSyntaxError, ValueError) as err:
        raise PlanFormatError(f"{what}: {text!r} is not a MiniSpec type ({err})", no) from None


def _parse_clause(no: int, line: str, part: str) -> Clause:
    m = re.match(r"- \*\*([^*]+)\*\* \(pattern: ([^;)\s]*)", line)
    form = "'- **G1** (pattern: name; scope: …) text — hint: `…`'"
    if m is None:
        raise PlanFormatError(f"a {part[:-1]} must read {form}; got {line!r}", no)
    cid, pattern, i = m.group(1), m.group(2), m.end()
    scope = ""
    if line.startswith("; scope:", i):
        j = i + len("; scope:")
        depth, k = 0, j
        while k < len(line):
            if line[k] == "(":
                depth += 1
            elif line[k] == ")":
                if depth == 0:
                    break
                depth -= 1
            k += 1
        scope, i = line[j:k], k
    if not line.startswith(")", i):
        raise PlanFormatError(f"the parenthesis after the pattern of {cid} is not closed: {line!r}", no)
    rest = line[i + 1 :].strip()
    hint = ""
    if re.search(r"(?:—|--)\s*hint:", rest):
        h = re.fullmatch(r"(.*?)\s+(?:—|--)\s*hint:\s*`([^`]*)`", rest)
        if h is None:
            raise PlanFormatError(f"the hint of {cid} must be one code span — hint: `…`; got {line!r}", no)
        rest, hint = h.group(1), h.group(2)
    if not _ID[part].fullmatch(cid):
        raise PlanFormatError(f"{part} need ids {part[0].upper()}1, {part[0].upper()}2, …; got {cid!r}", no)
    try:
        return Clause(cid, rest, pattern, scope, hint)
    except (TypeError, ValueError) as err:
        raise PlanFormatError(str(err), no) from None


def from_markdown(text: str, *, patterns: Iterable[str] | None = None) -> NLFP:
    """The plan written in ``text`` (the format of :func:`to_markdown`); ``PlanFormatError`` names the line
    and what is missing or malformed. With ``patterns`` given, a clause tagged with another name is
    refused."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    allowed = None if patterns is None else {*patterns, NO_PATTERN}
    lines = text.splitlines()
    sec = _sections(lines)

    def body(h: str) -> list[tuple[int, str]]:
        b = sec[h][1]
        return [] if _is_none(b) else b

    intent_lines = body("Intent")
    if not intent_lines:
        raise PlanFormatError("the Intent section is empty", sec["Intent"][0])
    intent = " ".join(line.strip() for _, line in intent_lines)

    inputs = []
    for no, line in body("Inputs"):
        m = re.fullmatch(r"- `([^`]+)` : `([^`]+)` (?:—|--) role:(.*?); constraints:(.*)", line)
        if m is None:
            raise PlanFormatError(
                f"an input must read '- `name` : `type` — role: …; constraints: …'; got {line!r}", no
            )
        ty = _parse_ty(m.group(2), no, f"input {m.group(1)}")
        try:
            inputs.append(InputNote(m.group(1), ty, m.group(3), m.group(4)))
        except (TypeError, ValueError) as err:
            raise PlanFormatError(str(err), no) from None

    out_lines = body("Output")
    if len(out_lines) != 1:
        raise PlanFormatError(
            "the Output section must hold one line '- `result` : `type` — meaning'", sec["Output"][0]
        )
    no, line = out_lines[0]
    m = re.fullmatch(r"- `result` : `([^`]+)`(?: (?:—|--)(.*))?", line)
    if m is None:
        raise PlanFormatError(f"the output must read '- `result` : `type` — meaning'; got {line!r}", no)
    output = OutputNote(_parse_ty(m.group(1), no, "output"), m.group(2) or "")

    clauses: dict[str, list[Clause]] = {}
    for part, heading in (("assumptions", "Assumptions"), ("guarantees", "Guarantees")):
        clauses[part] = []
        for no, line in body(heading):
            c = _parse_clause(no, line, part)
            if allowed is not None and c.pattern not in allowed:
                raise PlanFormatError(f"clause {c.id} names unknown pattern {c.pattern!r}", no)
            clauses[part].append(c)

    edges = []
    for no, line in body("Edge cases"):
        m = re.fullmatch(r"- (.+) (?:→|->) (\S+)", line)
        if m is None:
            raise PlanFormatError(
                f"an edge case must read '- case → A1' (or → unspecified); got {line!r}", no
            )
        target = m.group(2)
        try:
            edges.append(EdgeCase(m.group(1), None if target.lower() == "unspecified" else target))
        except ValueError as err:
            raise PlanFormatError(str(err), no) from None

    values: dict[str, object] = {}
    helpers: list[str] = []
    in_helpers = False
    for no, line in sec["Choices"][1]:
        if in_helpers and re.match(r"\s+- ", line):
            m = re.fullmatch(r"\s+- `([^`]+)`", line)
            if m is None:
                raise PlanFormatError(f"a helper must read '  - `def …`'; got {line!r}", no)
            helpers.append(m.group(1))
            continue
        in_helpers = False
        m = re.fullmatch(r"- ([a-z]+):(.*)", line)
        if m is None or m.group(1) not in CHOICE_KEYS:
            raise PlanFormatError(
                f"a choice must read '- key: value' with key in {CHOICE_KEYS}; got {line!r}", no
            )
        key, value = m.group(1), m.group(2).strip()
        if key in values:
            raise PlanFormatError(f"choice {key!r} is given twice", no)
        if key == "helpers":
            if value and value.lower() != "none":
                raise PlanFormatError("helpers must be 'none' or a list of '  - `def …`' lines", no)
            in_helpers = not value
            values[key] = ()
        else:
            values[key] = value
    for key in CHOICE_KEYS:
        if key not in values:
            raise PlanFormatError(f"choice {key!r} is missing", sec["Choices"][0])
    values["helpers"] = tuple(helpers)
    try:
        choices = Choices(**values)  # type: ignore[arg-type]
    except (TypeError, ValueError) as err:
        raise PlanFormatError(str(err), sec["Choices"][0]) from None

    unspecified = []
    for no, line in body("Unspecified"):
        if not line.startswith("- "):
            raise PlanFormatError(f"an unspecified behaviour must be a bullet '- …'; got {line!r}", no)
        unspecified.append(line[2:])

    try:
        return NLFP(
            intent,
            tuple(inputs),
            output,
            tuple(clauses["assumptions"]),
            tuple(clauses["guarantees"]),
            tuple(edges),
            choices,
            tuple(unspecified),
        )
    except (TypeError, ValueError) as err:
        raise PlanFormatError(str(err), len(lines)) from None


# ----------------------------------------------------------------------------------------------------------
# Decoding
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decoded:
    """The spec decoded from a plan and ``clause_of``: (``"pre"`` | ``"post"``, index of a top-level conjunct
    of ``spec.pre`` / ``spec.post`` as :func:`~neurips26.specbridge.minispec.ast.conjuncts` lists them) ->
    the id of the clause it came from."""

    spec: Spec
    clause_of: Mapping[tuple[str, int], str]

    def conjuncts_of(self, clause_id: str) -> tuple[tuple[str, int], ...]:
        """The (part, index) positions owned by clause ``clause_id``, in order."""
        return tuple(k for k, v in self.clause_of.items() if v == clause_id)


def _helpers(plan: NLFP, sig: Signature) -> tuple[Helper, ...]:
    if not plan.choices.helpers:
        return ()
    text = "\n\n".join(plan.choices.helpers) + "\n\n" + print_spec(Spec(sig, TRUE, TRUE))
    try:
        return parse_spec(text).helpers
    except SpecSyntaxError as err:
        raise PlanDecodeError(f"the helper definitions do not parse: {err}", None) from None


def clause_formula(clause: Clause, library: Library = SEED_LIBRARY) -> Expr:
    """The MiniSpec conjunct of ``clause``: its formal hint, or else its pattern's template filled from the
    clause text. ``PlanDecodeError`` names the clause when neither works."""
    if not isinstance(clause, Clause):
        raise TypeError(f"clause must be a Clause; got {type(clause).__name__}")
    if not isinstance(library, Library):
        raise TypeError(f"library must be a Library; got {type(library).__name__}")
    if clause.pattern != NO_PATTERN and clause.pattern not in library:
        raise PlanDecodeError(f"unknown pattern {clause.pattern!r} (library: {library.names})", clause.id)
    if clause.formal_hint:
        try:
            return parse_expr(clause.formal_hint)
        except SpecSyntaxError as err:
            raise PlanDecodeError(
                f"formal hint {clause.formal_hint!r} does not parse: {err}", clause.id
            ) from None
    if clause.pattern == NO_PATTERN:
        raise PlanDecodeError("no formal hint and no pattern to decode the text with", clause.id)
    pattern = library.get(clause.pattern)
    slots = read_slots(pattern, clause.text)
    if slots is None:
        raise PlanDecodeError(
            f"no formal hint, and the text does not follow the template of {pattern.name}: "
            f"{pattern.clause_template!r}",
            clause.id,
        )
    try:
        return instantiate(pattern, slots)
    except ValueError as err:
        raise PlanDecodeError(str(err), clause.id) from None


def decode(
    plan: NLFP, signature: Signature | str, library: Library | None = None, *, check_types: bool = True
) -> Decoded:
    """The spec of ``plan`` for ``signature`` (a :class:`Signature` or its Lean text): P = ∧ of the
    assumptions' conjuncts (``True`` if none), Q = ∧ of the guarantees', helpers from the choices, and the
    conjunct-to-clause map. Patterns are looked up in ``library`` (the seed library by default). With
    ``check_types`` each conjunct is type-checked and an ill-typed one is reported by clause id. A plan whose
    inputs or output disagree with ``signature`` is a ``ValueError`` naming ``signature``."""
    if not isinstance(plan, NLFP):
        raise TypeError(f"plan must be an NLFP; got {type(plan).__name__}")
    sig = signature_of(signature)
    library = SEED_LIBRARY if library is None else library
    if not isinstance(library, Library):
        raise TypeError(f"library must be a Library; got {type(library).__name__}")
    if plan.inputs:
        planned = [(n.name, n.type) for n in plan.inputs]
        actual = [(p.name, p.ty) for p in sig.params]
        if planned != actual:
            have = ", ".join(f"{n} : {t}" for n, t in actual)
            want = ", ".join(f"{n} : {t}" for n, t in planned)
            raise ValueError(f"signature has parameters ({have}) but the plan's inputs are ({want})")
    if plan.output.type != sig.ret:
        raise ValueError(f"signature returns {sig.ret} but the plan's output is {plan.output.type}")
    helpers = _helpers(plan, sig)
    env = {p.name: p.ty for p in sig.params}
    parts: dict[str, list[Expr]] = {"pre": [], "post": []}
    clause_of: dict[tuple[str, int], str] = {}
    for part, clauses in (("pre", plan.assumptions), ("post", plan.guarantees)):
        scope = env if part == "pre" else {**env, RESULT: sig.ret}
        for c in clauses:
            formula = clause_formula(c, library)
            if check_types:
                try:
                    elaborate(formula, scope, helpers, PROP)
                except SpecTypeError as err:
                    raise PlanDecodeError(f"ill-typed conjunct: {err}", c.id) from None
            for conj in conjuncts(formula):
                clause_of[(part, len(parts[part]))] = c.id
                parts[part].append(conj)
    spec = Spec(sig, conjoin(parts["pre"]), conjoin(parts["post"]), helpers)
    return Decoded(spec, clause_of)


__all__ = [
    "CHOICE_KEYS",
    "HEADINGS",
    "NLFP",
    "NO_PATTERN",
    "TITLE",
    "Choices",
    "Clause",
    "Decoded",
    "EdgeCase",
    "InputNote",
    "OutputNote",
    "PlanDecodeError",
    "PlanFormatError",
    "clause_formula",
    "decode",
    "from_markdown",
    "to_markdown",
]
