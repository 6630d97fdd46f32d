"""The five specification-synthesis methods of the comparison, each as a real prompt and an offline policy.

Every method is a prompt one would send a language model (system and user message) plus an offline
:class:`~neurips26.llm.Scripted` policy that reads *only those messages* (never a task object, never the
reference specification) and answers with text. The methods differ in what the prompt shows and in the
procedure the policy follows, never in a tuned error rate; all policies read prose with the same functions
(:mod:`neurips26.specbridge.reading`):

* ``direct``: the description and signature only; the policy writes the single best-matching idiom of a
  six-pattern lexicon (max, min, count, all, exists, sorted) with ``P = True``.
* ``few_shot``: plus the two pool exemplars most similar by TF-IDF cosine of the descriptions (nearest
  first); the policy copies the nearest exemplar's spec, renames its parameters by role and swaps the
  exemplar's element predicate for the one the new description states (on syntax trees), keeping the
  exemplar's precondition.
* ``few_shot_cot``: the same exemplars; the policy aligns every sentence of the description with the most
  similar sentence of either exemplar (word overlap), takes the conjuncts the exemplars' specs attach to
  those sentences (a conjunct belongs to the exemplar sentence sharing most words with its verbalisation)
  and so can combine idioms of two exemplars; its reasoning is printed before the spec.
* ``nlfp``: a Natural-Language Formalization Plan written with the *same* small lexicon ``direct`` uses
  (:data:`DIRECT_LEXICON`, the model's own idioms, plus the ``bool_iff`` wrapper): one clause per sentence
  fragment whose cue phrases match an idiom (slots from the reading functions), assumptions only from
  fragments that read like preconditions, then the plan decoded with the templates.
* ``specbridge``: the information of few-shot + CoT plus plans and hints: the *same* two exemplars, each
  shown with the plan reconstructed from its spec (``mining.reconstruct``; only the clauses whose hint
  round-trips, ``mining.clause_round_trips``), and the top-5 patterns retrieved from the *mined* library as
  formalization hints. The policy plans fragment by fragment. First it looks for the most similar exemplar
  plan clause: each clause is attached to the exemplar sentence it formalizes (the sentence sharing most
  words with the clause text and its formula's cue words, among the sentences that read like
  preconditions for an assumption and the others, boundary sentences about empty inputs left out, for a
  guarantee), and a fragment is scored against the clause text and that sentence by the same cue
  similarity as hints (:data:`EXEMPLAR_MIN_SIMILARITY`, :data:`EXEMPLAR_MIN_SHARED`). The chosen clause's
  hint is abstracted over the exemplar's signature (``mining.abstract``; of ``result = true ↔ Φ`` the
  condition Φ, which the planner wraps again) and the template is filled for the new task
  (:func:`fill_slots`: parameters by role, the element predicate of the fragment or else of the
  description's first sentence stating one, constants from ``reading.constants`` keeping the exemplar's
  where the new prose offers them, the exemplar's element map swapped for the one the new prose states).
  The clause keeps the part (assumption or guarantee) it had in its exemplar, and the clauses its exemplar
  attaches to the same sentence come with it. Only when no exemplar clause fits does the fragment fall
  back to the hints and the own lexicon, as follows. A hint is scored against a fragment by
  :func:`~neurips26.specbridge.reading.cue_similarity` (TF-IDF cosine over content words; a mined cue is
  often a whole source sentence that never recurs verbatim), needs a similarity of at least
  :data:`HINT_MIN_SIMILARITY` and :data:`HINT_MIN_SHARED` content words in common with one cue, and
  competes with the own idioms on that same similarity. Constant slots (``⟨c⟩``, ``⟨c2⟩``: a sentinel, a
  threshold) are filled by :func:`~neurips26.specbridge.reading.constants`. Mining splits a
  multi-conjunct idiom into pieces; when a hint is planned for a fragment, every other hint that shares a
  source sentence with it (a cue of four or more words) and fills for the same fragment is planned too.
* ``no_round_trip`` (ablation) and ``random_hints`` (control) run the SpecBridge policy with the exemplar
  plans' clauses and the hints unverified (every reconstructed clause shown, hints from the library mined
  without round trip), or with verified exemplar plans and hints drawn at random from the mined library.

Choices worth knowing: a plan method's reply holds the plan *and* the decoded spec (a `````lean`` block);
:func:`generate` takes the spec from the reply and decodes the plan itself only when the block is missing.
For a ``Bool`` result the planners wrap the planned propositions in one ``bool_iff`` clause
(``result = true ↔ …``): the wrapper is chosen from the return type, not from cues. Of several patterns cued
by one fragment the planners take the best-scoring one that can be filled and type-checks (ties: hints
first, then the longer spec template); a fragment that cues a pattern already planned adds nothing, nor
does a formula planned already. A fragment about the empty input that does not read like a precondition
plans nothing: it is a boundary case of the main guarantee. A transferred clause is named
``example<k>_<id>`` (``example1_g2``), its text is the verbalisation of its new formula followed by the
clause it came from, and the names are decodable because the plan's library holds the transferred
templates.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from neurips26.llm import ChatModel, Message, Scripted
from neurips26.specbridge.benchmark import Task
from neurips26.specbridge.minispec.ast import (
    LENGTH,
    PROP,
    RESULT,
    SIZE,
    TRUE,
    Binary,
    Call,
    Expr,
    FilterLength,
    Lit,
    Quant,
    Signature,
    Spec,
    Var,
    conjoin,
    conjuncts,
    map_children,
)
from neurips26.specbridge.minispec.parser import SpecSyntaxError, parse_expr, parse_signature, parse_spec
from neurips26.specbridge.minispec.printer import print_expr, print_spec
from neurips26.specbridge.minispec.typecheck import SpecTypeError, elaborate
from neurips26.specbridge.nlfp import (
    NLFP,
    Choices,
    Clause,
    EdgeCase,
    InputNote,
    OutputNote,
    PlanDecodeError,
    PlanFormatError,
    decode,
    from_markdown,
    to_markdown,
)
from neurips26.specbridge.patterns import SEED_LIBRARY, Library, Pattern, fill_clause, instantiate
from neurips26.specbridge.reading import (
    ELEMENT,
    constants,
    cue_patterns,
    cue_similarity,
    edge_case_phrases,
    element_map,
    element_predicate,
    list_view,
    roles,
    sentences,
    shared_cue_words,
    witness_predicate,
)
from neurips26.validation import check_choice, check_int, check_seed

METHODS: tuple[str, ...] = ("direct", "few_shot", "few_shot_cot", "nlfp", "specbridge")
"""The compared methods, weakest information first."""
VARIANTS: tuple[str, ...] = ("no_round_trip", "random_hints")
"""SpecBridge with the library mined without round trip (ablation) and with random hints (control)."""
ALL_METHODS: tuple[str, ...] = METHODS + VARIANTS
PLAN_METHODS: tuple[str, ...] = ("nlfp", "specbridge") + VARIANTS
HINT_METHODS: tuple[str, ...] = ("specbridge",) + VARIANTS
EXEMPLAR_METHODS: tuple[str, ...] = ("few_shot", "few_shot_cot")
N_EXEMPLARS = 2
N_HINTS = 5
DIRECT_LEXICON: tuple[str, ...] = (
    "max_characterisation",
    "min_characterisation",
    "count_matches",
    "all_satisfy",
    "exists_satisfy",
    "sortedness",
)
"""The six seed patterns the direct policy knows."""
MAX_TOKENS = 4096

# ----------------------------------------------------------------------------------------------------------
# Records
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskView:
    """What a method may see of a task: the prose ``description`` and the Lean ``signature`` text."""

    description: str
    signature: str

    def __post_init__(self) -> None:
        for name in ("description", "signature"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise TypeError(f"{name} must be non-empty text; got {value!r}")
        object.__setattr__(self, "description", " ".join(self.description.split()))
        object.__setattr__(self, "signature", " ".join(self.signature.split()))


@dataclass(frozen=True)
class Exemplar:
    """A solved pool task as shown in a prompt: description, signature and spec text, and for the
    SpecBridge variants the ``plan`` reconstructed from the spec (Markdown; ``""`` when none is shown)."""

    description: str
    signature: str
    spec: str
    plan: str = ""


@dataclass(frozen=True)
class Context:
    """What a prompt may show besides the task: pool ``exemplars`` and formalization ``hints``."""

    exemplars: tuple[Exemplar, ...] = ()
    hints: tuple[Pattern, ...] = ()

    def __post_init__(self) -> None:
        for name, kind in (("exemplars", Exemplar), ("hints", Pattern)):
            items = getattr(self, name)
            if not isinstance(items, tuple) or not all(isinstance(x, kind) for x in items):
                raise TypeError(f"{name} must be a tuple of {kind.__name__}")


@dataclass(frozen=True)
class Generation:
    """One method's answer for one task: the ``messages`` sent, the ``reply`` text, the ``spec_text``
    extracted from it, the plan (``plan_text``, plan methods only) and an ``error`` note (None if none)."""

    method: str
    task_id: str
    messages: tuple[Message, ...]
    reply: str
    spec_text: str
    plan_text: str | None
    error: str | None


def check_method(method: object) -> str:
    """``method`` if it names one of :data:`ALL_METHODS` (``ValueError`` naming ``method`` otherwise)."""
    return check_choice("method", method, ALL_METHODS)


# ----------------------------------------------------------------------------------------------------------
# Context: exemplars and hints
# ----------------------------------------------------------------------------------------------------------


def select_exemplars(pool: Sequence[Task], description: str, k: int = N_EXEMPLARS) -> tuple[Task, ...]:
    """The ``k`` pool tasks whose descriptions are most similar to ``description`` by TF-IDF cosine (fitted
    on the pool's descriptions), most similar first, ties by pool order."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    pool = _check_pool(pool)
    k = check_int("k", k, minimum=0)
    if not isinstance(description, str):
        raise TypeError(f"description must be a str; got {type(description).__name__}")
    if not pool or k == 0:
        return ()
    vec = TfidfVectorizer(lowercase=True, token_pattern=r"(?u)\b\w+\b")
    docs = vec.fit_transform([t.description for t in pool])
    q = vec.transform([description])
    scores = (docs @ q.T).toarray().ravel()
    order = sorted(range(len(pool)), key=lambda i: (-round(float(scores[i]), 9), i))
    return tuple(pool[i] for i in order[:k])


def _check_pool(pool: object) -> tuple[Task, ...]:
    if isinstance(pool, str | bytes) or not isinstance(pool, Sequence):
        raise TypeError(f"pool must be a sequence of Task; got {type(pool).__name__}")
    for t in pool:
        if not isinstance(t, Task):
            raise TypeError(f"pool must hold Task; got {type(t).__name__}")
    return tuple(pool)


_MINED: dict[tuple[tuple[str, ...], bool], Library] = {}


def _mined_library(pool: tuple[Task, ...], verify: bool) -> Library:
    key = (tuple(t.id for t in pool), verify)
    if key not in _MINED:
        from neurips26.specbridge import mining

        _MINED[key] = mining.mine(pool, verify=verify).library
    return _MINED[key]


_PLANS: dict[tuple[str, str, str, bool], NLFP] = {}


def exemplar_plan(task: Task, *, verified: bool = True) -> NLFP:
    """The plan reconstructed from ``task``'s trusted spec (``mining.reconstruct``), keeping only the clauses
    whose formal hint alone gives back their conjunct (``mining.clause_round_trips``) when ``verified``,
    every clause otherwise. Clause ids stay those of the reconstruction, so a dropped clause leaves a gap."""
    if not isinstance(task, Task):
        raise TypeError(f"task must be a Task; got {type(task).__name__}")
    if not isinstance(verified, bool):
        raise TypeError(f"verified must be a bool; got {type(verified).__name__}")
    key = (task.id, task.signature, task.spec, verified)
    if key not in _PLANS:
        from neurips26.specbridge import mining

        rec = mining.reconstruct(task)
        plan = rec.plan
        if verified:
            ok = {cid for cid, good in mining.clause_round_trips(task, rec) if good}
            plan = dataclasses.replace(
                plan,
                assumptions=tuple(c for c in plan.assumptions if c.id in ok),
                guarantees=tuple(c for c in plan.guarantees if c.id in ok),
                edge_cases=tuple(e for e in plan.edge_cases if e.clause_id is None or e.clause_id in ok),
            )
        _PLANS[key] = plan
    return _PLANS[key]


Retrieve = Callable[..., Sequence[tuple[Pattern, float]]]


def build_context(
    method: str,
    view: TaskView,
    *,
    pool: Sequence[Task],
    library: Library | None = None,
    retrieve: Retrieve | None = None,
    seed: int = 0,
) -> Context:
    """The context ``method`` may show for ``view``: the top exemplars of ``pool`` for the few-shot methods;
    for the SpecBridge variants the same exemplars, each with its reconstructed plan (:func:`exemplar_plan`:
    round-trip-verified clauses only, every clause for ``no_round_trip``), plus the hints
    (``retrieve(library, description, signature, k=5)``; default ``mining.retrieve``, or
    ``mining.random_hints`` for ``random_hints``; ``library`` default: mined from ``pool``, with round trip
    except for ``no_round_trip``); nothing for ``direct`` and ``nlfp``."""
    method = check_method(method)
    if not isinstance(view, TaskView):
        raise TypeError(f"view must be a TaskView; got {type(view).__name__}")
    pool = _check_pool(pool)
    seed = check_seed("seed", seed)
    if library is not None and not isinstance(library, Library):
        raise TypeError(f"library must be a Library or None; got {type(library).__name__}")
    if retrieve is not None and not callable(retrieve):
        raise TypeError("retrieve must be callable (library, description, signature, k) or None")
    if method in EXEMPLAR_METHODS:
        exs = select_exemplars(pool, view.description, N_EXEMPLARS)
        return Context(exemplars=tuple(Exemplar(t.description, t.signature, t.spec) for t in exs))
    if method not in HINT_METHODS:
        return Context()
    verified = method != "no_round_trip"
    exemplars = tuple(
        Exemplar(t.description, t.signature, t.spec, to_markdown(exemplar_plan(t, verified=verified)))
        for t in select_exemplars(pool, view.description, N_EXEMPLARS)
    )
    if library is None:
        library = _mined_library(pool, verify=method != "no_round_trip")
    sig = parse_signature(view.signature)
    if retrieve is None:
        from neurips26.specbridge import mining

        if method == "random_hints":
            hits = mining.random_hints(library, sig, N_HINTS, seed)
        else:
            hits = mining.retrieve(library, view.description, sig, k=N_HINTS)
    else:
        hits = retrieve(library, view.description, sig, k=N_HINTS)
    hints = tuple(h[0] if isinstance(h, tuple) else h for h in hits)[:N_HINTS]
    return Context(exemplars=exemplars, hints=hints)


# ----------------------------------------------------------------------------------------------------------
# Prompts
# ----------------------------------------------------------------------------------------------------------

_LAYOUT = (
    "Answer with the specification in a ```lean code block, in the VERINA layout:\n"
    "def f_precond (x : τ) … : Prop := P\n"
    "def f_postcond (x : τ) … (result : τ) (h_precond : f_precond x …) : Prop := Q\n"
    "Use the function name and parameters of the given signature. Prefer bounded quantifiers "
    "(∀ i, i < a.size → …) and a relational description of the result."
)

_SYSTEM = {
    "direct": "You write formal specifications in Lean 4 from natural-language requirements.\n" + _LAYOUT,
    "few_shot": "You write formal specifications in Lean 4 from natural-language requirements. Solved "
    "examples follow, the most similar first.\n" + _LAYOUT,
    "few_shot_cot": "You write formal specifications in Lean 4 from natural-language requirements. Solved "
    "examples follow, the most similar first. First reason step by step: match each sentence of the "
    "requirement with the parts of the examples' specifications that formalize similar sentences; then "
    "write the specification.\n" + _LAYOUT,
    "nlfp": "You write formal specifications in Lean 4 through a Natural-Language Formalization Plan. First "
    "write the plan in Markdown with the sections Intent, Inputs, Output, Assumptions (A1, A2, …: the "
    "precondition clauses), Guarantees (G1, G2, …: the postcondition clauses), Edge cases, Choices and "
    "Unspecified; every clause names its pattern and carries its formula as a hint. Then decode the plan: "
    "P is the conjunction of the assumptions, Q that of the guarantees.\n" + _LAYOUT,
}
_SYSTEM["specbridge"] = (
    _SYSTEM["nlfp"].replace(_LAYOUT, "")
    + "Solved examples follow, the most similar first, each with the plan reconstructed from its "
    "specification: where a part of the requirement reads like a sentence of an example, reuse the plan "
    "clause that formalizes that sentence, re-instantiated with this task's names and values. "
    "Formalization hints mined from trusted specifications are listed too: use a hint's clause template "
    "and spec template where its cues match the requirement.\n" + _LAYOUT
)
_SYSTEM["no_round_trip"] = _SYSTEM["specbridge"]
_SYSTEM["random_hints"] = _SYSTEM["specbridge"]


def render_hint(index: int, pattern: Pattern) -> str:
    """A formalization hint as prompt text: name, cues, clause template and spec template."""
    if not isinstance(pattern, Pattern):
        raise TypeError(f"pattern must be a Pattern; got {type(pattern).__name__}")
    return (
        f"### Hint {index}: {pattern.name}\n"
        f"- cues: {' | '.join(pattern.cues)}\n"
        f"- clause template: {pattern.clause_template}\n"
        f"- spec template: {pattern.spec_template}"
    )


def prompt(method: str, view: TaskView | tuple[str, str], context: Context | None = None) -> list[Message]:
    """The messages ``method`` sends for the task ``view`` ((description, signature text)) with what
    ``context`` may show: exemplars (few-shot methods; SpecBridge variants with each exemplar's plan between
    its signature and its spec) and hints (SpecBridge variants)."""
    method = check_method(method)
    if isinstance(view, tuple) and len(view) == 2:
        view = TaskView(*view)
    if not isinstance(view, TaskView):
        raise TypeError(f"view must be a TaskView or (description, signature); got {type(view).__name__}")
    context = Context() if context is None else context
    if not isinstance(context, Context):
        raise TypeError(f"context must be a Context; got {type(context).__name__}")
    parts = [
        "Write the precondition and postcondition of the following task.",
        "",
        "## Task",
        "",
        f"Description: {view.description}",
        f"Signature: `{view.signature}`",
    ]
    if method in EXEMPLAR_METHODS + HINT_METHODS:
        for i, ex in enumerate(context.exemplars, start=1):
            parts += [
                "",
                f"## Example {i}",
                "",
                f"Description: {' '.join(ex.description.split())}",
                f"Signature: `{ex.signature}`",
            ]
            if method in HINT_METHODS and ex.plan.strip():
                parts += ["Plan:", "```markdown", ex.plan.strip(), "```"]
            parts += ["Specification:", "```lean", ex.spec.strip(), "```"]
    if method in HINT_METHODS:
        parts += ["", "## Formalization hints", ""]
        parts += [render_hint(i, p) + "\n" for i, p in enumerate(context.hints, start=1)] or ["(none)"]
    if method in PLAN_METHODS:
        parts += ["", f"Patterns of your own you may name: {', '.join(_PLANNER.names)}."]
    return [Message.system(_SYSTEM[method]), Message.user("\n".join(parts).rstrip() + "\n")]


# ----------------------------------------------------------------------------------------------------------
# Reading a prompt (what the policies see)
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Read:
    description: str
    signature: Signature
    exemplars: tuple[Exemplar, ...]
    hints: tuple[Pattern, ...]


def _always(_: Signature) -> bool:
    return True


def _read_prompt(messages: Sequence[Message]) -> _Read:
    users = [m for m in messages if m.role == "user"]
    if not users:
        raise ValueError("messages must contain a user message with the task")
    text = users[-1].content
    m = re.search(r"## Task\s+Description: ([^\n]*)\nSignature: `([^`]*)`", text)
    if m is None:
        raise ValueError("the user message has no '## Task' section with Description and Signature")
    sig = parse_signature(m.group(2))
    exemplars = []
    for em in re.finditer(
        r"## Example \d+\s+Description: ([^\n]*)\nSignature: `([^`]*)`\n"
        r"(?:Plan:\n```markdown\n(.*?)\n```\n)?Specification:\n```lean\n(.*?)\n```",
        text,
        re.S,
    ):
        exemplars.append(Exemplar(em.group(1), em.group(2), em.group(4), em.group(3) or ""))
    hints = []
    for hm in re.finditer(
        r"### Hint \d+: (\S+)\n- cues: (.*)\n- clause template: (.*)\n- spec template: (.*)", text
    ):
        cues = tuple(c.strip() for c in hm.group(2).split("|") if c.strip())
        try:
            hints.append(Pattern(hm.group(1), cues, hm.group(3).strip(), hm.group(4).strip(), _always))
        except (TypeError, ValueError):
            continue
    return _Read(m.group(1).strip(), sig, tuple(exemplars), tuple(hints))


# ----------------------------------------------------------------------------------------------------------
# Filling pattern slots from prose (direct, nlfp, specbridge)
# ----------------------------------------------------------------------------------------------------------


_CONST_SLOT = re.compile(r"c[0-9]*")


def _slot_roles(pattern: Pattern) -> dict[str, str]:
    """Each slot's role, read from the spec template text: container, list, number, const (a slot named
    ``c``, ``c2``, …: an integer constant of the prose), pred, witness, map or formula. An element slot
    used at the element variable ``x`` itself (``fun x => ⟨p @ x⟩``) is a predicate, at another bound
    variable a witness."""
    t = pattern.spec_template
    out: dict[str, str] = {}
    for s in pattern.slots:
        plain = f"⟨{s}⟩"
        el = re.search(rf"⟨{re.escape(s)} @ (.*?)⟩", t)
        if el is not None and s in pattern.element_slots and f"⟨{s} @" in t:
            at = el.group(1)
            before = t[: el.start()].rstrip()
            if "[" in at or "⟨" in at or at.strip() == ELEMENT:
                out[s] = "map" if re.search(r"(?:=|[-+*/%])$", before) else "pred"
            else:
                out[s] = "witness"
        elif s in pattern.element_slots:
            out[s] = "pred"
        elif re.search(r"↔\s*" + re.escape(plain) + r"\s*$", t):
            out[s] = "formula"
        elif re.search(re.escape(plain) + r"(?:\.size|\[|\.toList|\.length)", t) or t.strip().startswith(
            "List.Perm"
        ):
            out[s] = "container"
        elif re.search(re.escape(plain) + r"\.(?:filter|sum|take|drop|count)", t):
            out[s] = "list"
        elif _CONST_SLOT.fullmatch(s):
            out[s] = "const"
        else:
            out[s] = "number"
    return out


def _mentions_result_container(t: str) -> bool:
    return re.search(r"\bresult(?:\.size|\[|\.toList|\.length)", t) is not None


def fill_slots(
    pattern: Pattern,
    phrase: str,
    signature: Signature,
    *,
    description: str | None = None,
    prefer: Mapping[str, str] | None = None,
) -> dict[str, str] | None:
    """Slot values for ``pattern`` read from ``phrase`` (a fragment of ``description``, default: the phrase
    alone) and the parameter roles of ``signature``, or None when a slot cannot be filled. Constant slots
    take, in order, the distinct values of :func:`~neurips26.specbridge.reading.constants`; a constant slot
    named in ``prefer`` takes the preferred value instead when that value is among them (a transferred
    clause keeps its exemplar's constant where the new prose offers it too)."""
    if not isinstance(pattern, Pattern):
        raise TypeError(f"pattern must be a Pattern; got {type(pattern).__name__}")
    if description is not None and not isinstance(description, str):
        raise TypeError(f"description must be a str or None; got {type(description).__name__}")
    if prefer is not None and not isinstance(prefer, Mapping):
        raise TypeError(f"prefer must be a mapping or None; got {type(prefer).__name__}")
    prefer = {} if prefer is None else prefer
    r = roles(signature)
    consts = list(constants(phrase, phrase if description is None else description, signature))
    kinds = _slot_roles(pattern)
    cands = list(r.containers)
    if (signature.ret.is_container or signature.ret.name == "String") and not _mentions_result_container(
        pattern.spec_template
    ):
        cands.insert(0, RESULT)
    numbers = list(r.nats) + [n for n in r.numbers if n not in r.nats]
    out: dict[str, str] = {}
    ci = ni = 0
    for s in pattern.slots:
        kind = kinds[s]
        if kind in ("container", "list"):
            if ci >= len(cands):
                return None
            name = cands[ci]
            ci += 1
            out[s] = list_view(signature, name) if kind == "list" else name
        elif kind == "number":
            if ni >= len(numbers):
                return None
            out[s] = numbers[ni]
            ni += 1
        elif kind == "const":
            if not consts:
                return None
            want = prefer.get(s)
            out[s] = want if want in consts else consts[0]
            consts.remove(out[s])
        else:
            value = {
                "pred": lambda: element_predicate(phrase, signature),
                "witness": lambda: witness_predicate(phrase, signature),
                "map": lambda: element_map(phrase),
                "formula": lambda: None,
            }[kind]()
            if value is None:
                return None
            out[s] = value
    return out


def _views(e: Expr, signature: Signature) -> Expr:
    """``e`` with ``.size`` of a List or String parameter read as ``.length`` and ``.length`` of an Array
    parameter as ``.size``."""
    seqs = {p.name for p in signature.params if p.ty.name in ("List", "String")}
    arrays = {p.name for p in signature.params if p.ty.name == "Array"}
    if signature.ret.name in ("List", "String"):
        seqs.add(RESULT)
    if signature.ret.name == "Array":
        arrays.add(RESULT)

    def f(x: Expr) -> Expr | None:
        if _is_size_of(x, seqs, SIZE):
            return Call(LENGTH, x.args)  # type: ignore[attr-defined]
        if _is_size_of(x, arrays, LENGTH):
            return Call(SIZE, x.args)  # type: ignore[attr-defined]
        return None

    return _map(e, f)


def _is_size_of(x: Expr, names: set[str], fn: str) -> bool:
    return isinstance(x, Call) and x.fn == fn and isinstance(x.args[0], Var) and x.args[0].name in names


def _map(e: Expr, f: Callable[[Expr], Expr | None]) -> Expr:
    """Bottom-up rewrite: children first, then ``f`` (None keeps the node)."""
    new = map_children(e, lambda c: _map(c, f))
    out = f(new)
    return new if out is None else out


def _typechecks(formula: Expr, signature: Signature, with_result: bool) -> bool:
    env = {p.name: p.ty for p in signature.params}
    if with_result:
        env[RESULT] = signature.ret
    try:
        elaborate(formula, env, (), PROP)
    except (SpecTypeError, ValueError, TypeError):
        return False
    return True


def _formula(
    pattern: Pattern,
    phrase: str,
    signature: Signature,
    with_result: bool,
    description: str | None = None,
    prefer: Mapping[str, str] | None = None,
) -> tuple[Expr, dict] | None:
    slots = fill_slots(pattern, phrase, signature, description=description, prefer=prefer)
    if slots is None:
        return None
    try:
        e = _views(instantiate(pattern, slots), signature)
    except (ValueError, TypeError):
        return None
    if not _typechecks(e, signature, with_result):
        return None
    return e, slots


def _bool_wrap(parts: list[Expr]) -> Expr:
    return Binary("↔", Binary("=", Var(RESULT), Lit(True)), conjoin(parts))


def _spec_text(signature: Signature, pre: Expr, post: Expr, helpers: tuple = ()) -> str:
    return print_spec(Spec(signature, pre, post, helpers))


def _fence(spec: str) -> str:
    return f"```lean\n{spec.strip()}\n```\n"


# ----------------------------------------------------------------------------------------------------------
# direct
# ----------------------------------------------------------------------------------------------------------

_DIRECT = Library(tuple(SEED_LIBRARY.get(n) for n in DIRECT_LEXICON))


def _direct(messages: tuple[Message, ...]) -> str:
    read = _read_prompt(messages)
    sig = read.signature
    is_bool = sig.ret.name == "Bool"
    best: tuple[float, int, Expr] | None = None
    for si, s in enumerate(sentences(read.description)):
        for p, score in cue_patterns(s, _DIRECT, sig):
            got = _formula(p, s, sig, with_result=not is_bool)
            if got is None:
                continue
            if best is None or score > best[0]:
                best = (score, si, got[0])
            break
    post = TRUE if best is None else best[2]
    if is_bool and best is not None:
        post = _bool_wrap([post])
    return _fence(_spec_text(sig, TRUE, post))


# ----------------------------------------------------------------------------------------------------------
# few_shot and few_shot_cot: adapting exemplars
# ----------------------------------------------------------------------------------------------------------


def _first_predicate(description: str, sig: Signature) -> str | None:
    for s in sentences(description):
        p = element_predicate(s, sig)
        if p is not None:
            return p
    return None


def _role_map(old: Signature, new: Signature) -> dict[str, str]:
    """Exemplar parameter -> task parameter by role: containers in order, then Nat, Int and the rest."""

    def groups(sig: Signature) -> list[list[str]]:
        cont = [p.name for p in sig.params if p.ty.is_container or p.ty.name == "String"]
        nat = [p.name for p in sig.params if p.ty.name == "Nat"]
        intp = [p.name for p in sig.params if p.ty.name == "Int"]
        rest = [p.name for p in sig.params if p.name not in cont + nat + intp]
        return [cont, nat, intp, rest]

    out: dict[str, str] = {}
    go, gn = groups(old), groups(new)
    left: list[str] = []
    used: set[str] = set()
    for a, b in zip(go, gn, strict=True):
        for x, y in zip(a, b, strict=False):
            out[x] = y
            used.add(y)
        left += a[len(b) :]
    spare = [p.name for p in new.params if p.name not in used and p.ty.name in ("Nat", "Int")]
    for x, y in zip(left, spare, strict=False):
        out[x] = y
    return out


def _match(pat: Expr, e: Expr, var: str, bound: dict[str, Expr]) -> bool:
    if isinstance(pat, Var) and pat.name == var:
        if var in bound:
            return bound[var] == e
        bound[var] = e
        return True
    if type(pat) is not type(e):
        return False
    for fld in dataclasses.fields(pat):
        if not fld.init:
            continue
        a, b = getattr(pat, fld.name), getattr(e, fld.name)
        if isinstance(a, Expr):
            if not isinstance(b, Expr) or not _match(a, b, var, bound):
                return False
        elif isinstance(a, tuple) and a and isinstance(a[0], Expr):
            if not isinstance(b, tuple) or len(a) != len(b):
                return False
            if not all(_match(x, y, var, bound) for x, y in zip(a, b, strict=True)):
                return False
        elif a != b:
            return False
    return True


def _subst_var(e: Expr, name: str, value: Expr) -> Expr:
    return _map(e, lambda x: value if isinstance(x, Var) and x.name == name else None)


def _swap_predicate(e: Expr, old: str | None, new: str | None) -> Expr:
    """``e`` with every instance of the predicate ``old`` (about ``x``) replaced by ``new`` at the same
    element."""
    if old is None or new is None or old == new:
        return e
    p_old, p_new = parse_expr(old), parse_expr(new)

    def f(x: Expr) -> Expr | None:
        bound: dict[str, Expr] = {}
        if _match(p_old, x, "x", bound) and "x" in bound:
            return _subst_var(p_new, "x", bound["x"])
        return None

    return _map(e, f)


def _binders(e: Expr) -> set[str]:
    out: set[str] = set()

    def f(x: Expr) -> None:
        if isinstance(x, Quant | FilterLength):
            out.add(x.var)

    _map(e, f)
    return out


def _rename(e: Expr, mapping: dict[str, str]) -> Expr:
    """``e`` with the variables of ``mapping`` renamed; binders that would capture a new name are renamed
    first."""
    targets = set(mapping.values())
    taken = _binders(e) | targets | set(mapping)
    for b in sorted(_binders(e) & targets):
        k = 1
        while f"{b}{k}" in taken:
            k += 1
        fresh = f"{b}{k}"
        taken.add(fresh)
        e = _map(
            e,
            lambda x, b=b, fresh=fresh: (
                Var(fresh)
                if isinstance(x, Var) and x.name == b
                else dataclasses.replace(x, var=fresh)
                if isinstance(x, Quant | FilterLength) and x.var == b
                else None
            ),
        )
    return _map(e, lambda x: Var(mapping[x.name]) if isinstance(x, Var) and x.name in mapping else None)


@dataclass(frozen=True)
class _Adapted:
    exemplar: Exemplar
    spec: Spec | None
    pre: tuple[Expr, ...]
    post: tuple[Expr, ...]
    bool_post: bool


def _adapt(ex: Exemplar, description: str, sig: Signature) -> _Adapted:
    """The exemplar's spec renamed to ``sig`` by role, with its element predicate swapped for the task's."""
    try:
        old = parse_spec(ex.spec)
    except SpecSyntaxError:
        return _Adapted(ex, None, (), (), False)
    mapping = _role_map(old.signature, sig)
    p_old = _first_predicate(ex.description, old.signature)
    p_new = _first_predicate(description, sig)

    def adapt(e: Expr) -> Expr:
        return _swap_predicate(_rename(e, mapping), p_old, p_new)

    pre, post = adapt(old.pre), adapt(old.post)
    spec = Spec(sig, pre, post, old.helpers)
    bool_post = (
        isinstance(post, Binary) and post.op == "↔" and post.left == Binary("=", Var(RESULT), Lit(True))
    )
    body = post.right if bool_post else post  # type: ignore[union-attr]
    return _Adapted(ex, spec, conjuncts(pre), conjuncts(body), bool_post)


def _few_shot(messages: tuple[Message, ...]) -> str:
    read = _read_prompt(messages)
    sig = read.signature
    if not read.exemplars:
        return _fence(_spec_text(sig, TRUE, TRUE))
    a = _adapt(read.exemplars[0], read.description, sig)
    if a.spec is None:
        return _fence(_spec_text(sig, TRUE, TRUE))
    return _fence(print_spec(a.spec))


_STOP = frozenset(
    "a an the of in on to is are be and or that this it its for with as by from at if when so no not any "
    "than then there their them they each every all some which who what whose was were has have".split()
)


def _words(text: str) -> set[str]:
    out = set()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if w in _STOP:
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") else w)
    return out


def verbalise(e: Expr) -> str:
    """A few English words for what the conjunct ``e`` says (used to attach it to a sentence)."""
    words: list[str] = []

    def f(x: Expr) -> None:
        if isinstance(x, Quant):
            words.extend(
                ["every", "each", "all", "element"] if x.kind == "∀" else ["some", "contain", "exist"]
            )
            if isinstance(x.body, Quant) and x.kind == "∀":
                words.extend(["sorted", "order", "decreasing", "ascending"])
        elif isinstance(x, FilterLength):
            words.extend(["number", "count", "how", "many", "entrie", "occurrence"])
        elif isinstance(x, Call):
            words.extend(
                {
                    "sum": ["sum", "total", "add"],
                    "take": ["first", "leading", "prefix"],
                    "drop": ["end", "position", "from"],
                    "perm": ["same", "element", "rearrangement", "duplicate", "often"],
                    "count": ["occur", "time", "many"],
                    "size": ["length", "array", "size"],
                }.get(x.fn, [])
            )
        elif isinstance(x, Lit) and x.value == -1 and x.kind == "int":
            words.extend(["-1", "return", "index", "first", "position"])
        elif isinstance(x, Binary) and x.op in ("<", "≤", ">", "≥") and isinstance(x.left, Call):
            words.extend(["empty", "least", "most", "invalid", "never"])

    _map(e, f)
    return " ".join(words)


def _best_sentence(text: str, options: Sequence[str]) -> tuple[int, float]:
    w = _words(text)
    best, score = -1, 0.0
    for i, s in enumerate(options):
        ws = _words(s)
        sc = len(w & ws) / max(1, len(w | ws))
        if sc > score:
            best, score = i, sc
    return best, score


def _few_shot_cot(messages: tuple[Message, ...]) -> str:
    read = _read_prompt(messages)
    sig = read.signature
    is_bool = sig.ret.name == "Bool"
    adapted = [_adapt(ex, read.description, sig) for ex in read.exemplars]
    adapted = [a for a in adapted if a.spec is not None]
    lines = ["Reasoning:"]
    # attach every conjunct of each exemplar to the exemplar sentence its verbalisation matches best
    attached: list[tuple[str, int, str, Expr, bool]] = []  # (exemplar sentence, example no, part, conj, bool)
    ex_sentences: list[tuple[int, str]] = []
    for n, a in enumerate(adapted, start=1):
        sents = list(sentences(a.exemplar.description))
        ex_sentences += [(n, s) for s in sents]
        for part, items in (("pre", a.pre), ("post", a.post)):
            for c in items:
                i, _ = _best_sentence(verbalise(c), sents)
                attached.append((sents[max(i, 0)], n, part, c, a.bool_post))
    pre: list[Expr] = []
    post: list[Expr] = []
    env_ok = {p.name for p in sig.params}
    for k, s in enumerate(sentences(read.description), start=1):
        i, score = _best_sentence(s, [t for _, t in ex_sentences])
        if i < 0 or score < 0.15:
            lines.append(f"- Sentence {k} ({s!r}) matches no example sentence.")
            continue
        n, target = ex_sentences[i]
        took = [
            (part, c)
            for (t, m, part, c, b) in attached
            if t == target and m == n and (part == "pre" or b == is_bool)
        ]
        shown = "; ".join(print_expr(c) for _, c in took) or "nothing"
        lines.append(f"- Sentence {k} ({s!r}) matches example {n}: {target!r}; it gives {shown}.")
        for part, c in took:
            dest = pre if part == "pre" else post
            free_ok = _typechecks(c, sig, with_result=part == "post") or not env_ok
            if free_ok and c not in dest:
                dest.append(c)
    if not post and adapted:
        lines.append("- No sentence settled the result: copy the nearest example's postcondition.")
        a = adapted[0]
        post = [c for c in a.post if _typechecks(c, sig, with_result=True)]
        if a.bool_post != is_bool:
            post = []
    q = conjoin(post)
    if is_bool and post:
        q = _bool_wrap(post)
    helpers = adapted[0].spec.helpers if adapted else ()  # type: ignore[union-attr]
    lines.append("So the specification conjoins these parts.")
    return "\n".join(lines) + "\n\n" + _fence(_spec_text(sig, conjoin(pre), q, helpers))


# ----------------------------------------------------------------------------------------------------------
# nlfp and specbridge: planning
# ----------------------------------------------------------------------------------------------------------

_PRE_LIKE = re.compile(
    r"non-empty|nonempty|never empty|not empty|at least|at most|assume|invalid|not allowed|not a valid|"
    r"outside the contract|must|never exceeds|promise|always holds|not allowed",
    re.I,
)


def _fragments(description: str) -> list[str]:
    out = []
    for s in sentences(description):
        for part in re.split(r";\s+|,?\s+and\s+(?=(?:they|it|every|each|all|its|the|is|are)\b)", s):
            if part.strip():
                out.append(part.strip())
    return out


def _choices(sig: Signature) -> Choices:
    tys = [p.ty for p in sig.params] + [sig.ret]
    domain = "Nat" if any(t.name == "Nat" or t.element == "Nat" for t in tys) else "Int"
    if any(t.name == "Nat" or t.element == "Nat" for t in tys) and any(
        t.name == "Int" or t.element == "Int" for t in tys
    ):
        domain = "Int and Nat (casts where they meet)"
    view = "array" if any(t.name == "Array" for t in tys) else "list"
    return Choices(domain=domain, view=view)


HINT_MIN_SIMILARITY = 0.3
"""The least cue similarity (:func:`~neurips26.specbridge.reading.cue_similarity`) at which a planner
considers a hint for a fragment."""
HINT_MIN_SHARED = 2
"""The least number of content words a fragment must share with one cue of a hint for the planner to
consider the hint (one shared word is too weak a sign in a short fragment)."""


def _ranked(
    frag: str, sig: Signature, lexicon: Library, hints: tuple[Pattern, ...]
) -> list[tuple[Pattern, bool]]:
    """The patterns a fragment cues, in the order the planner tries them, each with whether it is a hint.
    Candidates are the own lexicon's patterns whose cue phrases occur in the fragment and the hints whose
    cue similarity reaches :data:`HINT_MIN_SIMILARITY`; all are ranked by the same cue similarity (fitted
    on the cues of the hints and of the own lexicon together), hints first on ties, then the longer
    template."""
    own = [p for p, _ in cue_patterns(frag, lexicon, sig) if p.name != "bool_iff"]
    everyone = hints + tuple(lexicon)
    sims = dict(zip((p.name for p in everyone), cue_similarity(frag, everyone), strict=True))
    cands = [
        (h, True)
        for h in hints
        if sims[h.name] >= HINT_MIN_SIMILARITY and shared_cue_words(frag, h) >= HINT_MIN_SHARED
    ]
    cands += [(p, False) for p in own]
    cands.sort(key=lambda ph: (-sims[ph[0].name], not ph[1], -len(ph[0].spec_template), ph[0].name))
    return cands


_BOUNDARY = frozenset({"empty"})


def _boundary(text: str) -> bool:
    """Whether ``text`` mentions an empty input (a boundary case of a guarantee, unless it reads like a
    precondition)."""
    return any(ep.kind in _BOUNDARY for ep in edge_case_phrases(text))


def _source_sentences(p: Pattern) -> frozenset[str]:
    """The cues of ``p`` that are sentences (a mined pattern's cues hold its sources' sentences)."""
    return frozenset(c for c in p.cues if len(c.split()) >= 4)


EXEMPLAR_MIN_SIMILARITY = 0.3
"""The least cue similarity between a fragment and an exemplar plan clause (its text and the exemplar
sentence it formalizes) at which the SpecBridge planner transfers that clause."""
EXEMPLAR_MIN_SHARED = 2
"""The least number of content words a fragment must share with the text or the sentence of an exemplar
plan clause for the planner to transfer it."""
TRANSFER_PREFIX = "example"
"""Transferred clauses follow the pattern ``example<k>_<clause id>`` (clause ``G2`` of example 1:
``example1_g2``)."""


@dataclass(frozen=True)
class _Transfer:
    """An exemplar plan clause made reusable: ``pattern`` (spec template: the clause's hint abstracted over
    the exemplar's signature; cues: the clause text and the exemplar sentence it formalizes), the ``part`` it
    belongs to (``"pre"`` or ``"post"``), whether it is the condition of a Boolean result (``bool_inner``),
    the exemplar's constants (``prefer``), its ``source`` sentence, a readable reference ``ref`` and the
    element map the exemplar's prose states (``"x * x"`` for "squares"), if any."""

    pattern: Pattern
    part: str
    bool_inner: bool
    prefer: tuple[tuple[str, str], ...]
    source: str
    ref: str
    element_map: str | None = None


def _is_bool_definition(e: Expr) -> bool:
    """Whether ``e`` reads ``result = true ↔ Φ`` with Φ free of ``result``."""
    return (
        isinstance(e, Binary)
        and e.op == "↔"
        and e.left == Binary("=", Var(RESULT), Lit(True))
        and not re.search(r"\bresult\b", print_expr(e.right))
    )


def _cue_text(text: str) -> str:
    return " ".join(text.lower().split())


def _transfers(exemplars: Sequence[Exemplar]) -> tuple[_Transfer, ...]:
    """The clauses of the exemplars' plans as reusable templates (exemplars without a readable plan, and
    clauses whose hint does not parse or abstract, give none). Each clause is attached to the sentence of
    its exemplar's description that shares most words with the clause text and the cue words of its
    formula (:func:`verbalise`) among the sentences that read like preconditions (assumptions) or the other
    ones (guarantees); the first of them when none shares any word."""
    from neurips26.specbridge import mining

    out: list[_Transfer] = []
    for k, ex in enumerate(exemplars, start=1):
        if not ex.plan.strip():
            continue
        try:
            plan = from_markdown(ex.plan)
            sig = parse_signature(ex.signature)
        except (PlanFormatError, SpecSyntaxError, ValueError):
            continue
        sents = list(sentences(ex.description)) or [ex.description]
        pre_sents = [x for x in sents if _PRE_LIKE.search(x)]
        post_sents = [x for x in sents if not _PRE_LIKE.search(x) and not _boundary(x)]
        old_map = next((m for m in map(element_map, sents) if m is not None), None)
        for c in plan.clauses:
            if not c.formal_hint:
                continue
            try:
                e = parse_expr(c.formal_hint)
            except SpecSyntaxError:
                continue
            inner = _is_bool_definition(e) and c.id.startswith("G")
            try:
                t = mining.abstract(e.right if inner else e, sig)  # type: ignore[union-attr]
            except (ValueError, TypeError):
                continue
            options = (pre_sents if c.id.startswith("A") else post_sents) or sents
            i, _ = _best_sentence(f"{c.text} {verbalise(e)}", options)
            source = options[max(i, 0)]
            ref = f"{c.id} of example {k}"
            slots = ", ".join(f"{x.name} = `⟨{x.name}⟩`" for x in t.slots)
            try:
                pattern = Pattern(
                    f"{TRANSFER_PREFIX}{k}_{c.id.lower()}",
                    (_cue_text(c.text), _cue_text(source)),
                    f"as {ref}" + (f" with {slots}" if slots else ""),
                    t.text,
                    _always,
                )
            except (ValueError, TypeError):
                continue
            prefer = tuple((x.name, x.value) for x in t.slots if x.kind == "const")
            part = "pre" if c.id.startswith("A") else "post"
            out.append(_Transfer(pattern, part, inner, prefer, _cue_text(source), ref, old_map))
    return tuple(out)


def _transfer_formula(
    t: _Transfer, frag: str, sig: Signature, description: str, with_result: bool
) -> tuple[Expr, dict] | None:
    """The exemplar clause ``t`` re-instantiated for the new task: slots filled from ``frag`` (an element
    predicate the fragment lacks is read from the description's first sentence that states one), the
    exemplar's constants kept where the new prose offers them, and the exemplar's element map replaced by
    the one the new prose states."""
    prefer = dict(t.prefer)
    got = _formula(t.pattern, frag, sig, with_result, description=description, prefer=prefer)
    if got is None:
        alt = next((x for x in sentences(description) if element_predicate(x, sig) is not None), None)
        if alt is None or alt == frag:
            return None
        got = _formula(t.pattern, alt, sig, with_result, description=description, prefer=prefer)
        if got is None:
            return None
    new_map = element_map(frag) or next(
        (m for m in map(element_map, sentences(description)) if m is not None), None
    )
    if t.element_map is not None and new_map is not None and new_map != t.element_map:
        try:
            swapped = _swap_predicate(got[0], t.element_map, new_map)
        except SpecSyntaxError:
            return got
        if swapped != got[0] and _typechecks(swapped, sig, with_result):
            return swapped, got[1]
    return got


def _transfer_candidates(frag: str, transfers: tuple[_Transfer, ...]) -> list[_Transfer]:
    """The exemplar clauses similar enough to ``frag`` (:data:`EXEMPLAR_MIN_SIMILARITY`, and
    :data:`EXEMPLAR_MIN_SHARED` content words shared with the clause text or its sentence), most similar
    first, ties by the longer template, then by name."""
    if not transfers:
        return []
    sims = cue_similarity(frag, [t.pattern for t in transfers])
    scored = [
        (sim, t)
        for t, sim in zip(transfers, sims, strict=True)
        if sim >= EXEMPLAR_MIN_SIMILARITY and shared_cue_words(frag, t.pattern) >= EXEMPLAR_MIN_SHARED
    ]
    scored.sort(key=lambda st: (-st[0], -len(st[1].pattern.spec_template), st[1].pattern.name))
    return [t for _, t in scored]


def _plan(
    description: str,
    sig: Signature,
    lexicon: Library,
    hints: tuple[Pattern, ...] = (),
    transfers: tuple[_Transfer, ...] = (),
) -> NLFP:
    """The plan the planner policies write (see the module docstring)."""
    is_bool = sig.ret.name == "Bool"
    r = roles(sig)
    assumptions: list[tuple[Pattern, dict, Expr]] = []
    guarantees: list[tuple[Pattern, dict, Expr]] = []
    used: set[str] = set()

    def place(p: Pattern, frag: str, pre_like: bool) -> bool:
        """Plan ``p`` for ``frag`` if it fits there (filled, well typed, in the right part)."""
        mentions_result = re.search(r"\bresult\b", p.spec_template) is not None
        is_pre = not mentions_result and "pred" not in _slot_roles(p).values() and pre_like
        if not mentions_result and not is_pre and not is_bool:
            return False
        if is_bool and mentions_result and not is_pre:
            return False
        got = _formula(p, frag, sig, with_result=not is_pre and not is_bool, description=description)
        if got is None:
            return False
        part = assumptions if is_pre else guarantees
        if all(got[0] != e for _, _, e in part):  # a formula planned already adds nothing
            part.append((p, got[1], got[0]))
        used.add(p.name)
        return True

    by_name = {t.pattern.name: t for t in transfers}

    def transfer(t: _Transfer, frag: str, pre_like: bool) -> bool:
        """Plan the exemplar clause ``t`` re-instantiated for ``frag`` if it fits (filled, well typed, in the
        part it had in its exemplar)."""
        if t.part == "pre":
            if not pre_like:
                return False
            with_result, part = False, assumptions
        else:
            if t.bool_inner != is_bool:
                return False
            with_result, part = not is_bool, guarantees
        got = _transfer_formula(t, frag, sig, description, with_result)
        if got is None:
            return False
        if all(got[0] != e for _, _, e in part):
            part.append((t.pattern, got[1], got[0]))
        used.add(t.pattern.name)
        return True

    for frag in _fragments(description):
        pre_like = _PRE_LIKE.search(frag) is not None
        if not pre_like and _boundary(frag):
            continue  # a boundary case (empty input, none or several qualify) of the main guarantee
        done = False
        for t in _transfer_candidates(frag, transfers):
            if t.pattern.name in used:
                done = True  # the fragment restates a clause planned already
                break
            if transfer(t, frag, pre_like):
                for q in transfers:  # the other clauses its exemplar attaches to the same sentence
                    same = q.ref.split(" of ")[1] == t.ref.split(" of ")[1] and q.source == t.source
                    if same and q.pattern.name not in used:
                        transfer(q, frag, pre_like)
                done = True
                break
        if done:
            continue
        for p, is_hint in _ranked(frag, sig, lexicon, hints):
            if p.name in used:
                break
            if not place(p, frag, pre_like):
                continue
            if is_hint:  # the other pieces of a multi-conjunct idiom mined from the same sources
                mine = _source_sentences(p)
                for q in hints:
                    if q.name not in used and mine & _source_sentences(q):
                        place(q, frag, pre_like)
            break

    def clause(cid: str, p: Pattern, slots: dict, e: Expr) -> Clause:
        if p.name in by_name:
            from neurips26.specbridge.mining import verbalise as say

            text = f"{say(e)} (as {by_name[p.name].ref})"
        else:
            try:
                text = fill_clause(p, slots)
            except ValueError:
                text = f"{p.name} holds"
        return Clause(cid, " ".join(text.split()), p.name, "", print_expr(e))

    a_clauses = [clause(f"A{i}", *x) for i, x in enumerate(assumptions, start=1)]
    if is_bool and guarantees:
        inner = conjoin([e for _, _, e in guarantees])
        bool_p = lexicon.get("bool_iff") if "bool_iff" in lexicon else None
        text = f"`result` is true exactly when `{print_expr(inner)}`"
        if bool_p is not None:
            try:
                text = fill_clause(bool_p, {s: print_expr(inner) for s in bool_p.slots})
            except ValueError:
                pass
        wrapped = _bool_wrap([e for _, _, e in guarantees])
        inner_names = ", ".join(p.name for p, _, _ in guarantees)
        g_clauses = [
            Clause(
                "G1",
                " ".join(f"{text} (combining {inner_names})".split()),
                "bool_iff" if bool_p is not None else "none",
                "",
                print_expr(wrapped),
            )
        ]
    else:
        g_clauses = [clause(f"G{i}", *x) for i, x in enumerate(guarantees, start=1)]
    edges = []
    for ep in edge_case_phrases(description):
        target = None
        if ep.outcome == "invalid" and a_clauses:
            target = a_clauses[0].id
        elif ep.outcome != "invalid" and g_clauses:
            target = g_clauses[0].id
        case = f"{ep.kind}: {ep.sentence}".replace("→", "to").replace("->", "to")
        if all(e.case != case for e in edges):
            edges.append(EdgeCase(case, target))
    inputs = []
    for p in sig.params:
        role = (
            "main container"
            if p.name == r.main
            else "container"
            if p.name in r.containers
            else "bound"
            if p.name == r.bound
            else "number"
        )
        inputs.append(InputNote(p.name, p.ty, role, ""))
    first = sentences(description)[0] if sentences(description) else description
    unspecified = () if g_clauses else ("what the result is (no guarantee could be planned)",)
    return NLFP(
        intent=first,
        inputs=tuple(inputs),
        output=OutputNote(sig.ret, "the value the description asks for"),
        assumptions=tuple(a_clauses),
        guarantees=tuple(g_clauses),
        edge_cases=tuple(edges),
        choices=_choices(sig),
        unspecified=unspecified,
    )


_PLANNER = Library(_DIRECT.patterns + (SEED_LIBRARY.get("bool_iff"),))
"""The planners' own lexicon: the direct lexicon's six idioms plus the Boolean wrapper."""


def _as_hints(hints: Sequence[Pattern]) -> tuple[Pattern, ...]:
    """The hints under names of their own: a hint that shares a name with the planners' own lexicon is
    added beside that pattern (as ``hint_<name>``), never in its place."""
    own = set(_PLANNER.names)
    return tuple(dataclasses.replace(h, name=f"hint_{h.name}") if h.name in own else h for h in hints)


def _lexicon(hints: Sequence[Pattern], exemplars: Sequence[Exemplar] = ()) -> Library:
    """What a plan of the planners may name: the transferred exemplar clauses, the hints and the own
    lexicon."""
    return Library(tuple(t.pattern for t in _transfers(exemplars)) + _as_hints(hints) + tuple(_PLANNER))


def _planner(use_hints: bool) -> Callable[[tuple[Message, ...]], str]:
    def answer(messages: tuple[Message, ...]) -> str:
        read = _read_prompt(messages)
        hints = _as_hints(read.hints) if use_hints else ()
        transfers = _transfers(read.exemplars) if use_hints else ()
        plan = _plan(read.description, read.signature, _PLANNER, hints, transfers)
        lexicon = Library(tuple(t.pattern for t in transfers) + hints + tuple(_PLANNER))
        try:
            spec = print_spec(decode(plan, read.signature, lexicon).spec)
        except (PlanDecodeError, ValueError) as err:
            return to_markdown(plan) + f"\nThe plan does not decode: {err}\n"
        return to_markdown(plan) + "\n" + _fence(spec)

    answer.__name__ = "specbridge_policy" if use_hints else "nlfp_policy"
    return answer


def policy(method: str) -> Scripted:
    """The offline policy of ``method``: a :class:`~neurips26.llm.Scripted` model that reads only the
    messages it is sent and answers with text (a spec, or a plan followed by its decoded spec)."""
    method = check_method(method)
    fn: Callable[[tuple[Message, ...]], str] = {
        "direct": _direct,
        "few_shot": _few_shot,
        "few_shot_cot": _few_shot_cot,
        "nlfp": _planner(False),
    }.get(method) or _planner(True)
    return Scripted(fn, model=f"offline-{method}")


# ----------------------------------------------------------------------------------------------------------
# Generation
# ----------------------------------------------------------------------------------------------------------

_FENCE = re.compile(r"```lean[^\n]*\n(.*?)```", re.S)


def extract_spec(reply: str) -> str | None:
    """The spec text of ``reply``: its last ```lean block, else the text from the first line that starts a
    ``def`` (VERINA defs written without a fence), else None."""
    if not isinstance(reply, str):
        raise TypeError(f"reply must be a str; got {type(reply).__name__}")
    blocks = _FENCE.findall(reply)
    if blocks:
        return blocks[-1].strip() + "\n"
    m = re.search(r"^def \S+", reply, re.M)
    return reply[m.start() :].strip() + "\n" if m else None


def extract_plan(reply: str) -> str | None:
    """The plan of ``reply``: the Markdown from its first ``# Formalization plan`` or ``## Intent`` heading
    up to the first ```lean block (None when there is no such heading)."""
    if not isinstance(reply, str):
        raise TypeError(f"reply must be a str; got {type(reply).__name__}")
    m = re.search(r"^#+ (?:Formalization plan|Intent)\b", reply, re.M)
    if m is None:
        return None
    end = reply.find("```lean", m.start())
    return reply[m.start() : end if end >= 0 else len(reply)].strip() + "\n"


def generate(
    method: str,
    task: Task,
    *,
    backend: ChatModel | None = None,
    pool: Sequence[Task],
    library: Library | None = None,
    retrieve: Retrieve | None = None,
    seed: int = 0,
) -> Generation:
    """Ask ``backend`` (default: the method's offline policy) for ``method``'s answer to ``task``: the prompt
    holds the task's description and signature only, plus exemplars of ``pool`` or hints (see
    :func:`build_context`); the spec is the reply's last ```lean block (plan methods whose reply lacks one:
    the plan decoded with the seed templates and the hints). An unparsable reply is kept as it is."""
    method = check_method(method)
    if not isinstance(task, Task):
        raise TypeError(f"task must be a Task; got {type(task).__name__}")
    if backend is not None and not isinstance(backend, ChatModel):
        raise TypeError(f"backend must be a ChatModel (with complete) or None; got {type(backend).__name__}")
    view = TaskView(task.description, task.signature)
    ctx = build_context(method, view, pool=pool, library=library, retrieve=retrieve, seed=seed)
    messages = tuple(prompt(method, view, ctx))
    model = policy(method) if backend is None else backend
    error: str | None = None
    reply = model.complete(list(messages), max_tokens=MAX_TOKENS).text
    spec_text = extract_spec(reply)
    plan_text = extract_plan(reply) if method in PLAN_METHODS else None
    if spec_text is None and plan_text is not None:
        try:
            lexicon = _lexicon(ctx.hints, ctx.exemplars if method in HINT_METHODS else ())
            plan = from_markdown(plan_text)
            spec_text = print_spec(decode(plan, task.signature, lexicon).spec)
        except (PlanFormatError, PlanDecodeError, ValueError) as err:
            error = f"the plan does not decode: {err}"
    if spec_text is None:
        error = error or "the reply holds no specification"
        spec_text = reply
    return Generation(method, task.id, messages, reply, spec_text, plan_text, error)


__all__ = [
    "ALL_METHODS",
    "DIRECT_LEXICON",
    "EXEMPLAR_METHODS",
    "EXEMPLAR_MIN_SHARED",
    "EXEMPLAR_MIN_SIMILARITY",
    "HINT_MIN_SHARED",
    "HINT_MIN_SIMILARITY",
    "HINT_METHODS",
    "MAX_TOKENS",
    "METHODS",
    "N_EXEMPLARS",
    "N_HINTS",
    "PLAN_METHODS",
    "TRANSFER_PREFIX",
    "VARIANTS",
    "Context",
    "Exemplar",
    "Generation",
    "TaskView",
    "build_context",
    "check_method",
    "exemplar_plan",
    "extract_plan",
    "extract_spec",
    "fill_slots",
    "generate",
    "policy",
    "prompt",
    "render_hint",
    "select_exemplars",
    "verbalise",
]
