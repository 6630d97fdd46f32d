"""The three evaluation layers: references pass, curated mutants die in the test layers while the lenient
structural judge waves them through, the LLM judge's protocol, and failures on bad text and bad input."""

from __future__ import annotations

import sys
import types
from dataclasses import replace

import pytest

from neurips26.llm.offline import Scripted
from neurips26.specbridge.benchmark import benchmark, generate_tasks
from neurips26.specbridge.evaluate import (
    PROFILES,
    LLMJudge,
    StructuralJudge,
    Verdict,
    blame,
    conjunct_shapes,
    evaluate_spec,
    execute_obligation,
    parse_verdict,
    prove_obligation,
    shape,
)
from neurips26.specbridge.minispec.ast import FALSE, Binary, conjoin, conjuncts
from neurips26.specbridge.minispec.parser import parse_expr, parse_spec
from neurips26.specbridge.minispec.printer import print_spec
from neurips26.specbridge.obligations import obligations

TEST_LAYERS = ("alignment", "computable")


@pytest.fixture(scope="module")
def tasks():
    split = benchmark("smoke")
    return split.pool + split.eval + generate_tasks(1, 20, families=("minprefix",))


def _task(tasks, task_id):
    return next(t for t in tasks if t.id == task_id)


def _text(task, **changes) -> str:
    return print_spec(replace(parse_spec(task.spec), **changes))


@pytest.fixture
def fake_prove(monkeypatch):
    """A stand-in prover module recording its calls; ``answers`` decides each status."""
    calls: list[dict] = []
    state = {"answer": lambda call: "proved"}

    def prove(
        spec, which, inputs, result=None, *, negate=False, profile="lean-auto", rlimit=None, max_steps=0
    ):
        call = {"spec": spec, "which": which, "inputs": inputs, "result": result, "negate": negate,
                "profile": profile, "rlimit": rlimit, "max_steps": max_steps}  # fmt: skip
        calls.append(call)
        return types.SimpleNamespace(status=state["answer"](call), profile=profile, route="fake")

    module = types.ModuleType("neurips26.specbridge.prove")
    module.prove = prove
    monkeypatch.setitem(sys.modules, "neurips26.specbridge.prove", module)
    return calls, state


# ----------------------------------------------------------------------------------------------------------
# Reference specs and mutants
# ----------------------------------------------------------------------------------------------------------


def test_reference_specs_pass_computable_and_align_with_themselves(tasks):
    assert any(not t.executable for t in tasks)
    for t in tasks:
        ev = evaluate_spec(t, t.spec, layers=TEST_LAYERS)
        assert ev.parsed and ev.error is None
        assert ev.aligned, (t.id, ev.reasons)
        assert ev.proof is None and "proof" not in ev.outcomes
        n = len(obligations(t))
        assert len(ev.outcomes["computable"]) == n
        if t.executable:
            assert ev.computable and not ev.not_executable, (t.id, ev.reasons)
            assert ev.outcomes["computable"] == ("pass",) * n
            assert ev.failing_conjuncts == ()
        else:  # an unbounded quantifier: the layer fails, the post obligations stay unknown
            assert not ev.computable and ev.not_executable
            assert "not executable" in ev.reasons["computable"]
            kinds = [ob.kind for ob in obligations(t)]
            for kind, outcome in zip(kinds, ev.outcomes["computable"], strict=True):
                assert outcome == ("unknown" if kind.startswith("post") else "pass")


def test_a_dropped_postcondition_conjunct_fails_post_sound(tasks):
    judge = StructuralJudge()
    checked = 0
    for t in tasks:
        spec = parse_spec(t.spec)
        parts = conjuncts(spec.post)
        if not t.executable or len(parts) < 2:
            continue
        kinds = [ob.kind for ob in obligations(t)]
        for i in range(len(parts)):
            text = _text(t, post=conjoin(parts[:i] + parts[i + 1 :]))
            ev = evaluate_spec(t, text, judge=judge, layers=TEST_LAYERS)
            assert not ev.computable, (t.id, i)
            assert any(
                k == "post-sound" and o == "fail"
                for k, o in zip(kinds, ev.outcomes["computable"], strict=True)
            )
            assert ev.weak_conjuncts and all(w == "post" for w, _ in ev.weak_conjuncts)
            assert set(ev.weak_conjuncts) <= set(ev.failing_conjuncts)
            assert ev.aligned, (t.id, i)  # one missing conjunct: the lenient judge does not notice
            checked += 1
    assert checked >= 10


# A bound `i < e` made `i ≤ e` (`i < e + 1`, Lean's reading of `i ≤ e` on Nat): curated mutants that the tests
# catch (the index e reads a[e]! = 0, which the data contradict).
WEAKENED_BOUNDS = [
    ("p19-003-max", "(∀ i, i < a.size → a[i]! ≤ result)", "(∀ i, i < a.size + 1 → a[i]! ≤ result)"),
    ("hw-arg-min", "(∀ i, i < a.size → a[result]! ≤ a[i]!)", "(∀ i, i < a.size + 1 → a[result]! ≤ a[i]!)"),
    ("hw-distances", "∀ i, i < a.size →", "∀ i, i < a.size + 1 →"),
    ("p19-004-all", "∀ i, i < nums.size →", "∀ i, i < nums.size + 1 →"),
    ("g20-000-minprefix", "(∀ i, i < k → result ≤ a[i]!)", "(∀ i, i < k + 1 → result ≤ a[i]!)"),
]


@pytest.mark.parametrize(("task_id", "old", "new"), WEAKENED_BOUNDS)
def test_a_changed_bound_fails_a_test_layer_but_not_the_structural_judge(tasks, task_id, old, new):
    t = _task(tasks, task_id)
    assert t.spec.count(old) == 1
    text = t.spec.replace(old, new)
    ev = evaluate_spec(t, text, layers=TEST_LAYERS)
    assert ev.parsed and not ev.computable
    assert "fail" in ev.outcomes["computable"]
    assert ev.failing_conjuncts and all(w == "post" for w, _ in ev.failing_conjuncts)
    assert ev.aligned  # bounds are invisible to the skimming judge (the chapter's claim C4)
    mutant, reference = parse_spec(text), parse_spec(t.spec)
    assert conjunct_shapes(mutant, "post") == conjunct_shapes(reference, "post")


def test_false_in_the_precondition_fails_every_pre_sound_obligation(tasks):
    for t in tasks:
        spec = parse_spec(t.spec)
        ev = evaluate_spec(t, _text(t, pre=Binary("∧", FALSE, spec.pre)), layers=TEST_LAYERS)
        assert not ev.computable
        kinds = [ob.kind for ob in obligations(t)]
        pre_sound = [o for k, o in zip(kinds, ev.outcomes["computable"], strict=True) if k == "pre-sound"]
        assert pre_sound == ["fail"] * len(t.tests)
        assert ("pre", 0) in ev.failing_conjuncts and ("pre", 0) not in ev.weak_conjuncts
        assert ev.aligned  # one extra conjunct


def test_a_wrong_conjunct_is_blamed_by_position(tasks):
    t = _task(tasks, "p19-003-max")
    spec = parse_spec(t.spec)
    parts = conjuncts(spec.post)
    wrong = parse_expr("result = 0")
    ev = evaluate_spec(t, _text(t, post=conjoin((parts[0], wrong, parts[1]))), layers=TEST_LAYERS)
    assert not ev.computable
    assert ("post", 1) in ev.failing_conjuncts and ("post", 1) not in ev.weak_conjuncts
    ob = next(o for o in obligations(t) if o.kind == "post-complete" and o.result != 0)
    blamed, weak = blame(replace(spec, post=conjoin((parts[0], wrong, parts[1]))), ob)
    assert blamed == (("post", 1),) and not weak
    assert execute_obligation(spec, ob) == "pass"


# ----------------------------------------------------------------------------------------------------------
# The structural judge
# ----------------------------------------------------------------------------------------------------------


def test_shapes_ignore_bounds_strictness_literals_casts_and_names_of_bound_variables():
    same = [
        ("∀ i, i < a.size → a[i]! ≤ result", "∀ j, j < a.size - 1 → result ≥ a[j]!"),
        ("∀ i, i < n → a[i]! < 3", "∀ k : Nat, a[k]! ≤ 7"),
        ("(result : Int) = x - 1", "result = x - 2"),
        ("result.toNat < n", "result ≤ ↑n"),
        ("p ∧ q ∨ r", "r ∨ q ∧ p"),
    ]
    for a, b in same:
        assert shape(parse_expr(a)) == shape(parse_expr(b)), (a, b)
    different = [
        ("∀ i, i < n → a[i]! ≤ result", "∀ i, i < n → result ≤ a[i]!"),  # max vs min
        ("∀ i, i < n → a[i]! = 0", "∃ i, i < n ∧ a[i]! = 0"),
        ("result = x", "result ≠ x"),
        ("a.size > 0", "a.size % 2 > 0"),
    ]
    for a, b in different:
        assert shape(parse_expr(a)) != shape(parse_expr(b)), (a, b)


def test_structural_judge_reads_through_helpers_and_rejects_what_a_skimmer_would(tasks):
    t = _task(tasks, "hw-find-max")  # its reference uses the helper isUpperBound
    judge = StructuralJudge()
    inline = t.spec.split("\n\n", 1)[1].replace("isUpperBound a result", "(∀ i, i < a.size → a[i]! ≤ result)")
    assert "isUpperBound" not in inline
    assert judge.judge(t, inline).aligned
    flipped = inline.replace("a[i]! ≤ result)", "result ≤ a[i]!)")  # characterises the minimum instead
    v = judge.judge(t, flipped)
    assert isinstance(v, Verdict) and not v.aligned and "postcondition" in v.reason
    assert not judge.judge(t, _text(t, post=parse_expr("True"))).aligned  # empty postcondition
    assert not judge.judge(t, "def oops").aligned
    assert StructuralJudge(tolerance=0).judge(t, _text(t, pre=parse_expr("True"))).aligned is False
    with pytest.raises(ValueError, match="tolerance"):
        StructuralJudge(tolerance=-1)


# ----------------------------------------------------------------------------------------------------------
# The LLM judge
# ----------------------------------------------------------------------------------------------------------


def test_parse_verdict():
    assert parse_verdict("The spec is fine.\nALIGNED") is True
    assert parse_verdict("It is not aligned with the ties rule.\nNOT ALIGNED") is False
    assert parse_verdict("Reason: good.\n**Verdict: Aligned.**\n") is True
    assert parse_verdict("Misses empty arrays; verdict NOT ALIGNED, sorry") is False
    assert parse_verdict("Looks fine to me.") is None
    assert parse_verdict("The spec is misaligned.") is None
    with pytest.raises(TypeError, match="text"):
        parse_verdict(None)


def test_llm_judge_through_a_scripted_backend(tasks):
    t = _task(tasks, "p19-003-max")
    seen = []

    def policy(messages):
        seen.append(messages)
        spec_part = messages[-1].content
        if "result ≤ a[i]!" in spec_part:
            return "This characterises the minimum, not the maximum.\nNOT ALIGNED"
        if "+ 1" in spec_part:
            return "I am not sure what to make of this."
        return "Both clauses of the maximum are there.\nALIGNED"

    judge = LLMJudge(Scripted(policy))
    ev = evaluate_spec(t, t.spec, judge=judge, layers=TEST_LAYERS)
    assert ev.aligned and ev.computable
    user = seen[0][-1].content
    assert t.description.strip() in user and t.signature in user and "maxElement_postcond" in user
    assert "ALIGNED or NOT ALIGNED" in user and seen[0][0].role == "system"
    flipped = t.spec.replace("a[i]! ≤ result)", "result ≤ a[i]!)")
    assert not evaluate_spec(t, flipped, judge=judge, layers=TEST_LAYERS).aligned
    assert judge.no_verdict == 0
    vague = evaluate_spec(
        t, t.spec.replace("i < a.size →", "i < a.size + 1 →"), judge=judge, layers=TEST_LAYERS
    )
    assert not vague.aligned and judge.no_verdict == 1 and judge.calls == 3
    assert "no verdict" in vague.reasons["alignment"]
    with pytest.raises(TypeError, match="backend"):
        LLMJudge("gpt")


# ----------------------------------------------------------------------------------------------------------
# The proof layer (a stand-in prover checks the plumbing; the real one runs where it exists)
# ----------------------------------------------------------------------------------------------------------


def test_proof_layer_maps_statuses_and_passes_negation(tasks, fake_prove):
    calls, state = fake_prove
    t = _task(tasks, "hw-find-max")
    obs = obligations(t)
    ev = evaluate_spec(t, t.spec, profile="smt", rlimit=500, max_steps=999)
    assert ev.proof and ev.outcomes["proof"] == ("pass",) * len(obs)
    assert len(calls) == len(obs) and ev.proof_routes == ("fake",) * len(obs)
    for call, ob in zip(calls, obs, strict=True):
        assert call["which"] == ob.which and call["negate"] == ob.negate
        assert call["profile"] == "smt" and call["rlimit"] == 500 and call["max_steps"] == 999
        assert call["inputs"] == ob.input_dict and call["result"] == ob.result_value
    state["answer"] = lambda call: "unknown" if call["negate"] else "proved"
    ev = evaluate_spec(t, t.spec)
    assert not ev.proof and "unknown" in ev.outcomes["proof"] and "fail" not in ev.outcomes["proof"]
    state["answer"] = lambda call: "refuted" if call["which"] == "pre" else "proved"
    ev = evaluate_spec(t, t.spec)
    assert not ev.proof and ev.outcomes["proof"].count("fail") == sum(ob.which == "pre" for ob in obs)
    assert "refuted" in ev.reasons["proof"]


def test_unparsable_or_ill_typed_text_fails_every_layer(tasks, fake_prove):
    calls, _ = fake_prove
    t = _task(tasks, "hw-find-max")
    bad = [
        "def findMax_precond (a : Array Int) : Prop :=\n  a.size >\n",
        t.spec.replace("a.size > 0", "a.size > true"),
        "",
    ]
    for text in bad:
        ev = evaluate_spec(t, text)
        assert not ev.parsed and ev.error
        assert ev.aligned is False and ev.computable is False and ev.proof is False
        assert ev.outcomes["alignment"] == ("fail",)
        assert ev.outcomes["computable"] == ("fail",) * len(obligations(t))
        assert not any(ev.passed(layer) for layer in ("alignment", "computable", "proof"))
    assert calls == []


def test_signature_mismatch_fails_and_is_named(tasks):
    t = _task(tasks, "hw-find-max")
    ev = evaluate_spec(t, t.spec.replace("findMax", "findMaximum"), layers=TEST_LAYERS)
    assert not ev.parsed and "signature" in ev.error and not ev.aligned and not ev.computable
    ev = evaluate_spec(t, t.spec.replace("(a : Array Int)", "(a : Array Nat)"), layers=TEST_LAYERS)
    assert not ev.parsed and "signature" in ev.error


def test_bad_arguments_are_named(tasks):
    t = _task(tasks, "hw-find-max")
    with pytest.raises(TypeError, match="task"):
        evaluate_spec(t.id, t.spec)
    with pytest.raises(TypeError, match="spec_text"):
        evaluate_spec(t, parse_spec(t.spec))
    with pytest.raises(ValueError, match="profile"):
        evaluate_spec(t, t.spec, profile="omega")
    with pytest.raises(ValueError, match="layers"):
        evaluate_spec(t, t.spec, layers=("alignment", "proofs"))
    with pytest.raises(TypeError, match="layers"):
        evaluate_spec(t, t.spec, layers="computable")
    with pytest.raises(TypeError, match="judge"):
        evaluate_spec(t, t.spec, judge=lambda task, text: True)
    with pytest.raises(ValueError, match="rlimit"):
        evaluate_spec(t, t.spec, rlimit=0)
    with pytest.raises(ValueError, match="max_steps"):
        evaluate_spec(t, t.spec, max_steps=0)


def test_the_step_budget_fails_the_computable_layer(tasks):
    t = _task(tasks, "p19-002-sort")
    ev = evaluate_spec(t, t.spec, layers=("computable",), max_steps=20)
    assert not ev.computable and not ev.not_executable and "budget" in ev.reasons["computable"]
    assert "unknown" in ev.outcomes["computable"] and ev.aligned is None


# ----------------------------------------------------------------------------------------------------------
# With the real prover
# ----------------------------------------------------------------------------------------------------------


def test_with_the_prover_references_are_proved_and_false_preconditions_refuted(tasks):
    prove = pytest.importorskip("neurips26.specbridge.prove")
    assert set(PROFILES) == set(prove.PROFILES)
    for t in tasks:
        assert evaluate_spec(t, t.spec, layers=("proof",), profile="smt").proof, t.id
        if t.executable:  # lean-auto decides every bounded obligation by evaluation
            ev = evaluate_spec(t, t.spec, layers=("proof",))
            assert ev.proof and all("decide" in r for r in ev.proof_routes), (t.id, ev.reasons)
    even = evaluate_spec(_task(tasks, "hw-is-even"), _task(tasks, "hw-is-even").spec)
    assert even.proof and not even.computable and even.not_executable  # proofs reach past execution
    t = _task(tasks, "p19-003-max")
    spec = parse_spec(t.spec)
    ev = evaluate_spec(t, _text(t, pre=Binary("∧", FALSE, spec.pre)), layers=("proof",))
    assert not ev.proof
    kinds = [ob.kind for ob in obligations(t)]
    assert all(o == "fail" for k, o in zip(kinds, ev.outcomes["proof"], strict=True) if k == "pre-sound")
    ob = obligations(t)[0]
    assert (
        prove_obligation(spec, ob) == "pass"
        and prove_obligation(spec, ob, profile="smt", rlimit=10**5) == "pass"
    )
    with pytest.raises(ValueError, match="profile"):
        prove_obligation(spec, ob, profile="omega")


def test_with_the_prover_a_dropped_conjunct_is_not_proved(tasks):
    pytest.importorskip("neurips26.specbridge.prove")
    t = _task(tasks, "p19-003-max")
    parts = conjuncts(parse_spec(t.spec).post)
    ev = evaluate_spec(t, _text(t, post=parts[1]), layers=("computable", "proof"))
    assert not ev.computable and not ev.proof
