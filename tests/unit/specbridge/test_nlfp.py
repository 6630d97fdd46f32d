"""Formalization plans: Markdown round trip, decoding per clause, tracing conjuncts to clauses, bad input."""

from __future__ import annotations

import dataclasses

import pytest

from neurips26.specbridge.benchmark import Task, handwritten_tasks
from neurips26.specbridge.execute import NotExecutable, postcondition, precondition
from neurips26.specbridge.minispec.ast import BOOL, INT, TRUE, Ty, conjuncts
from neurips26.specbridge.minispec.parser import parse_expr, parse_spec
from neurips26.specbridge.minispec.printer import print_spec
from neurips26.specbridge.minispec.typecheck import check_spec
from neurips26.specbridge.nlfp import (
    HEADINGS,
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
from neurips26.specbridge.patterns import SEED_LIBRARY

ARR = Ty("Array", "Int")
UPPER = "def isUpperBound (a : Array Int) (m : Int) : Prop := ∀ i, i < a.size → a[i]! ≤ m"


def max_plan() -> NLFP:
    """Relational maximum (hw-find-max), with a helper definition."""
    return NLFP(
        intent="`result` is the largest number stored in `a`.",
        inputs=(InputNote("a", ARR, "the numbers searched", "at least one element; negatives allowed"),),
        output=OutputNote(INT, "the maximum of `a`"),
        assumptions=(Clause("A1", "`a` is not empty", "nonempty_pre", "", "a.size > 0"),),
        guarantees=(
            Clause(
                "G1",
                "`result` occurs in `a`",
                "max_characterisation",
                "i < a.size",
                "∃ i, i < a.size ∧ a[i]! = result",
            ),
            Clause(
                "G2",
                "no element of `a` exceeds `result`",
                "max_characterisation",
                "",
                "isUpperBound a result",
            ),
        ),
        edge_cases=(
            EdgeCase("empty array", "A1"),
            EdgeCase("maximum repeated", "G1"),
            EdgeCase("all negative"),
        ),
        choices=Choices(domain="Int", indexing="a[i]!", view="array", style="relational", helpers=(UPPER,)),
        unspecified=("which position holds the maximum",),
    )


FIRST_TEXT = "`result` is the index of the first element `x` of `a` with `x < 0`, or -1 if there is none"


def first_plan() -> NLFP:
    """First index or -1 (hw-first-negative), guarantee decoded from the pattern template, one assumption."""
    return NLFP(
        intent="`result` is the position of the first negative entry of `a`, or -1 when there is none.",
        inputs=(InputNote("a", ARR, "the numbers scanned from the left", ""),),
        output=OutputNote(INT, "an index of `a`, or the sentinel -1"),
        assumptions=(Clause("A1", "`a` holds at most 100 elements", "none", "", "a.size ≤ 100"),),
        guarantees=(
            Clause("G1", FIRST_TEXT, "first_index_or_sentinel", "i < a.size (j < result.toNat)", ""),
        ),
        edge_cases=(EdgeCase("no negative entry", "G1"), EdgeCase("empty array", "G1")),
        choices=Choices(domain="Int (result may be -1)", indexing="a[i]!, a[result.toNat]!"),
        unspecified=(),
    )


def square_plan() -> NLFP:
    """An unbounded existential (hw-is-perfect-square): provable, not executable."""
    return NLFP(
        intent="`result` says whether `n` is the square of some integer.",
        inputs=(InputNote("n", INT, "the number tested", "any integer"),),
        output=OutputNote(BOOL, "true exactly for perfect squares"),
        assumptions=(),
        guarantees=(
            Clause(
                "G1",
                "`result` is true exactly when `∃ k : Int, k * k = n`",
                "bool_iff",
                "k : Int (unbounded)",
                "result = true ↔ ∃ k : Int, k * k = n",
            ),
        ),
        edge_cases=(EdgeCase("negative n", "G1"),),
        choices=Choices(domain="Int", view="scalar", decidability="unbounded: proof only"),
        unspecified=("how a witness is found",),
    )


PLANS = (max_plan, first_plan, square_plan)


@pytest.fixture(scope="module")
def tasks() -> dict[str, Task]:
    return {t.id: t for t in handwritten_tasks()}


def passes(spec: object, task: Task) -> bool:
    """Whether ``spec`` meets every VERINA obligation of ``task`` when evaluated."""
    for t in task.tests:
        if not precondition(spec, t.inputs) or not postcondition(spec, t.inputs, t.expected):  # type: ignore[arg-type]
            return False
        if any(postcondition(spec, t.inputs, u) for u in t.unexpected):  # type: ignore[arg-type]
            return False
    return not any(precondition(spec, r) for r in task.reject)  # type: ignore[arg-type]


@pytest.mark.parametrize("make", PLANS)
def test_markdown_round_trip(make: object) -> None:
    plan = make()  # type: ignore[operator]
    text = to_markdown(plan)
    assert from_markdown(text) == plan
    assert from_markdown(text, patterns=SEED_LIBRARY.names) == plan
    assert to_markdown(from_markdown(text)) == text
    positions = [text.index(f"## {h}\n") for h in HEADINGS]
    assert positions == sorted(positions)


def test_markdown_clause_bullet_format() -> None:
    text = to_markdown(max_plan())
    assert (
        "- **G1** (pattern: max_characterisation; scope: i < a.size) `result` occurs in `a` — hint: "
        "`∃ i, i < a.size ∧ a[i]! = result`" in text.splitlines()
    )
    assert "- **A1** (pattern: nonempty_pre) `a` is not empty — hint: `a.size > 0`" in text
    assert (
        f"- **G1** (pattern: first_index_or_sentinel; scope: i < a.size (j < result.toNat)) {FIRST_TEXT}\n"
        in (to_markdown(first_plan()))
    )
    assert "## Assumptions\n\n- none\n" in to_markdown(square_plan())


def test_markdown_reader_accepts_ascii_spellings() -> None:
    text = to_markdown(max_plan()).replace("\n- ", "\n* ").replace(" — hint:", " -- hint:")
    text = text.replace("empty array → A1", "empty array -> A1")
    text = text.replace("## Edge cases", "### edge cases")
    assert from_markdown(text) == max_plan()


def test_decode_matches_reference_and_passes_the_task(tasks: dict[str, Task]) -> None:
    task = tasks["hw-find-max"]
    dec = decode(max_plan(), task.signature)
    assert dec.spec == parse_spec(task.spec)  # the plan determines exactly the reference spec
    assert parse_spec(print_spec(dec.spec)) == dec.spec
    check_spec(dec.spec)
    assert passes(dec.spec, task)
    assert dec.clause_of == {("pre", 0): "A1", ("post", 0): "G1", ("post", 1): "G2"}


def test_decode_from_template_passes_the_task(tasks: dict[str, Task]) -> None:
    task = tasks["hw-first-negative"]
    dec = decode(first_plan(), task.signature)
    check_spec(dec.spec)
    assert parse_spec(print_spec(dec.spec)) == dec.spec
    assert passes(dec.spec, task)
    assert dec.spec.post == parse_expr(task.postcondition)
    # the template's formula is a conjunction: one clause owns both top-level conjuncts
    assert dec.clause_of == {("pre", 0): "A1", ("post", 0): "G1", ("post", 1): "G1"}
    assert dec.conjuncts_of("G1") == (("post", 0), ("post", 1))


@pytest.mark.parametrize(("make", "task_id"), [(max_plan, "hw-find-max"), (first_plan, "hw-first-negative")])
def test_dropping_a_clause_fails_the_task(make: object, task_id: str, tasks: dict[str, Task]) -> None:
    task, plan = tasks[task_id], make()  # type: ignore[operator]
    for part in ("assumptions", "guarantees"):
        clauses = getattr(plan, part)
        for k, gone in enumerate(clauses):
            if gone.formal_hint == "a.size ≤ 100":
                continue  # an assumption that no test input violates: dropping it changes nothing
            kept = clauses[:k] + clauses[k + 1 :]
            edges = tuple(e for e in plan.edge_cases if e.clause_id != gone.id)
            weaker = dataclasses.replace(plan, **{part: kept, "edge_cases": edges})
            assert not passes(decode(weaker, task.signature).spec, task), gone.id


def test_clause_of_traces_a_failing_conjunct(tasks: dict[str, Task]) -> None:
    task = tasks["hw-find-max"]
    plan = max_plan()
    wrong = dataclasses.replace(plan.guarantees[1], formal_hint="∀ i, i < a.size → a[i]! < result")
    dec = decode(dataclasses.replace(plan, guarantees=(plan.guarantees[0], wrong)), task.signature)
    failing = set()
    for t in task.tests:
        for idx, conj in enumerate(conjuncts(dec.spec.post)):
            single = dataclasses.replace(dec.spec, post=conj)
            if not postcondition(single, t.inputs, t.expected):
                failing.add(dec.clause_of[("post", idx)])
    assert failing == {"G2"}


def test_unbounded_plan_decodes_but_is_not_executable(tasks: dict[str, Task]) -> None:
    task = tasks["hw-is-perfect-square"]
    dec = decode(square_plan(), task.signature)
    assert dec.spec == parse_spec(task.spec) and dec.spec.pre == TRUE
    check_spec(dec.spec)
    with pytest.raises(NotExecutable):
        postcondition(dec.spec, {"n": 16}, True)


def test_missing_heading_is_named() -> None:
    text = to_markdown(max_plan())
    lines = text.splitlines()
    cut = "\n".join(line for line in lines if line != "## Guarantees")
    with pytest.raises(PlanFormatError, match="missing heading '## Guarantees'") as err:
        from_markdown(cut)
    assert err.value.line == len(lines)  # end of the document
    with pytest.raises(PlanFormatError, match="appears twice"):
        from_markdown(text + "\n## Intent\nagain\n")
    with pytest.raises(PlanFormatError, match="unknown heading"):
        from_markdown(text + "\n## Notes\n")
    with pytest.raises(PlanFormatError, match="choice 'view' is missing"):
        from_markdown(text.replace("- view: array\n", ""))


def test_malformed_lines_are_located() -> None:
    text = to_markdown(max_plan())
    lines = text.splitlines()
    k = next(i for i, line in enumerate(lines) if line.startswith("- **G2**"))
    lines[k] = "- G2: no element exceeds result"
    with pytest.raises(PlanFormatError, match="guarantee must read") as err:
        from_markdown("\n".join(lines))
    assert err.value.line == k + 1
    lines[k] = "- **A2** (pattern: none) misplaced assumption"
    with pytest.raises(PlanFormatError, match="G1, G2"):
        from_markdown("\n".join(lines))
    bad_type = text.replace("`a` : `Array Int`", "`a` : `Array Float`")
    with pytest.raises(PlanFormatError, match="not a MiniSpec type"):
        from_markdown(bad_type)


def test_unknown_pattern_is_named() -> None:
    plan = max_plan()
    odd = dataclasses.replace(plan.guarantees[0], pattern="largest_thing")
    plan = dataclasses.replace(plan, guarantees=(odd, plan.guarantees[1]))
    text = to_markdown(plan)
    assert from_markdown(text) == plan  # without a library, any name is a tag
    with pytest.raises(PlanFormatError, match="unknown pattern 'largest_thing'") as err:
        from_markdown(text, patterns=SEED_LIBRARY.names)
    assert text.splitlines()[err.value.line - 1].startswith("- **G1**")
    with pytest.raises(PlanDecodeError, match="unknown pattern") as derr:
        decode(plan, "def findMax (a : Array Int) : Int")
    assert derr.value.clause_id == "G1"


def test_unfilled_or_unparsable_clauses_are_named() -> None:
    plan = first_plan()
    off = dataclasses.replace(plan.guarantees[0], text="`result` is where the first negative entry sits")
    with pytest.raises(PlanDecodeError, match="does not follow the template") as err:
        decode(dataclasses.replace(plan, guarantees=(off,)), "def firstNegative (a : Array Int) : Int")
    assert err.value.clause_id == "G1"
    bare = dataclasses.replace(plan.guarantees[0], pattern="none")
    with pytest.raises(PlanDecodeError, match="no formal hint") as err:
        decode(dataclasses.replace(plan, guarantees=(bare,)), "def firstNegative (a : Array Int) : Int")
    assert err.value.clause_id == "G1"
    broken = dataclasses.replace(plan.assumptions[0], formal_hint="a.size ≤")
    with pytest.raises(PlanDecodeError, match="does not parse") as err:
        decode(dataclasses.replace(plan, assumptions=(broken,)), "def firstNegative (a : Array Int) : Int")
    assert err.value.clause_id == "A1"


def test_ill_typed_clause_and_signature_mismatch_are_named() -> None:
    plan = max_plan()
    uses_result = dataclasses.replace(plan.assumptions[0], formal_hint="result > 0")
    with pytest.raises(PlanDecodeError, match="ill-typed") as err:
        decode(dataclasses.replace(plan, assumptions=(uses_result,)), "def findMax (a : Array Int) : Int")
    assert err.value.clause_id == "A1"
    spec = decode(
        dataclasses.replace(plan, assumptions=(uses_result,)),
        "def findMax (a : Array Int) : Int",
        check_types=False,
    ).spec
    assert spec.pre == parse_expr("result > 0")
    with pytest.raises(ValueError, match="signature"):
        decode(plan, "def findMax (xs : Array Int) : Int")
    with pytest.raises(ValueError, match="signature"):
        decode(plan, "def findMax (a : Array Int) : Nat")
    with pytest.raises(ValueError, match="signature"):
        decode(plan, "findMax a")
    with pytest.raises(PlanDecodeError, match="helper"):
        decode(
            dataclasses.replace(plan, choices=Choices(helpers=("def isUpperBound : Prop := True",))),
            "def findMax (a : Array Int) : Int",
        )


def test_plan_without_clauses_decodes_to_true() -> None:
    plan = dataclasses.replace(square_plan(), guarantees=(), edge_cases=())
    dec = decode(plan, "def isPerfectSquare (n : Int) : Bool")
    assert dec.spec.pre == TRUE and dec.spec.post == TRUE and dec.clause_of == {}


def test_records_validate_and_name_fields() -> None:
    with pytest.raises(ValueError, match="id"):
        Clause("X1", "text")
    with pytest.raises(ValueError, match="text of clause G1"):
        Clause("G1", "two\nlines")
    with pytest.raises(ValueError, match="formal_hint of clause G1"):
        Clause("G1", "text", formal_hint="`a`")
    with pytest.raises(ValueError, match="scope of clause G1"):
        Clause("G1", "text", scope="i < (a.size")
    with pytest.raises(ValueError, match="pattern of clause G1"):
        Clause("G1", "text", pattern="Max Thing")
    assert Clause("G1", "  padded  ").text == "padded"
    plan = max_plan()
    with pytest.raises(ValueError, match="edge_cases"):
        dataclasses.replace(plan, edge_cases=(EdgeCase("ties", "G7"),))
    with pytest.raises(ValueError, match="guarantees must have ids"):
        dataclasses.replace(plan, guarantees=(Clause("A2", "text"),))
    with pytest.raises(ValueError, match="distinct"):
        dataclasses.replace(plan, guarantees=(plan.guarantees[0], plan.guarantees[0]))
    with pytest.raises(TypeError, match=r"inputs\[0\]"):
        dataclasses.replace(plan, inputs=("a",))
    with pytest.raises(ValueError, match=r"helpers\[0\]"):
        Choices(helpers=("isUpperBound a m",))
    with pytest.raises(ValueError, match="intent"):
        dataclasses.replace(plan, intent=" ")
    with pytest.raises(TypeError, match="plan"):
        to_markdown("plan")  # type: ignore[arg-type]
    assert plan.clause("G2").formal_hint == "isUpperBound a result"
    with pytest.raises(ValueError, match="clause_id"):
        plan.clause("G9")
