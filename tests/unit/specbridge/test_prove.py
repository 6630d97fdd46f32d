"""Tests of the proof profiles: agreement with the executor, lean-auto's routes, soundness against smt."""

from __future__ import annotations

import dataclasses

import pytest
import z3

from neurips26.specbridge.benchmark import benchmark
from neurips26.specbridge.execute import postcondition, precondition
from neurips26.specbridge.minispec.parser import parse_spec
from neurips26.specbridge.prove import PROFILES, ROUTES, ProofResult, obligation_formula, prove


def spec_of(post: str, params: str = "(n : Int)", ret: str = "Bool", pre: str = "True"):
    args = " ".join(p.split(":")[0].strip("( ") for p in params.split(")") if p.strip())
    return parse_spec(
        f"def f_precond {params} : Prop :=\n  {pre}\n\n"
        f"def f_postcond {params} (result : {ret}) (h_precond : f_precond {args}) : Prop :=\n  {post}\n"
    )


SQUARE = spec_of("∃ k : Int, k * k = n")


def both(spec, which, inputs, result=None, negate=False) -> tuple[ProofResult, ProofResult]:
    return tuple(prove(spec, which, inputs, result, negate=negate, profile=p) for p in PROFILES)  # type: ignore[return-value]


# ----------------------------------------------------------------------------------------------------------
# The benchmark's obligations
# ----------------------------------------------------------------------------------------------------------


def _tasks():
    split = benchmark("smoke")
    return [(t, parse_spec(t.spec)) for t in split.pool + split.eval]


TASKS = _tasks()


def test_both_profiles_agree_with_the_executor_on_executable_specs() -> None:
    n = 0
    for task, spec in TASKS:
        if not task.executable:
            continue
        cases = [("pre", x, None, precondition(spec, x)) for x in task.reject]
        for tc in task.tests:
            cases.append(("pre", tc.inputs, None, precondition(spec, tc.inputs)))
            for y in (tc.expected, *tc.unexpected):
                cases.append(("post", tc.inputs, y, postcondition(spec, tc.inputs, y)))
        for which, inputs, result, value in cases:
            for negate in (False, True):
                want = "proved" if value != negate else "refuted"
                for r in both(spec, which, inputs, result, negate):
                    assert r.status == want, (task.id, which, inputs, result, negate, r)
                    n += 1
        lean = prove(spec, cases[-1][0], cases[-1][1], cases[-1][2])
        assert lean.route == "decide"
    assert n > 1000


def test_reference_obligations_on_unbounded_specs() -> None:
    unbounded = [(t, s) for t, s in TASKS if not t.executable]
    assert unbounded
    for task, spec in unbounded:
        for tc in task.tests:
            goals = [("post", tc.expected, False)] + [("post", u, True) for u in tc.unexpected]
            for which, y, negate in goals:
                lean, smt = both(spec, which, tc.inputs, y, negate)
                assert smt.status == "proved", (task.id, tc.inputs, y, smt)  # the reference spec is right
                assert lean.status in ("proved", "unknown"), (task.id, tc.inputs, y, lean)
                assert lean.route in ROUTES


def test_lean_auto_never_contradicts_smt() -> None:
    goals = [(SQUARE, n) for n in (-4, 0, 1, 2, 15, 16, 49, 50, 1024)] + [
        (spec_of("∀ x : Int, x < n → x + 1 ≤ n"), n) for n in (0, 5)
    ]
    goals += [(spec_of("∀ x : Int, x ≤ n"), 3), (spec_of("∃ k : Nat, (k : Int) + n = 0"), -3)]
    goals += [(spec_of("∃ k : Nat, (k : Int) + n = 0"), 3)]
    for spec, n in goals:
        for negate in (False, True):
            lean, smt = both(spec, "post", {"n": n}, True, negate)
            assert not (lean.status == "proved" and smt.status == "refuted"), (n, negate, lean, smt)
            assert not (lean.status == "refuted" and smt.status == "proved"), (n, negate, lean, smt)


# ----------------------------------------------------------------------------------------------------------
# The routes of lean-auto
# ----------------------------------------------------------------------------------------------------------


def test_square_smt_proves_and_refutes() -> None:
    assert prove(SQUARE, "post", {"n": 16}, True, profile="smt").status == "proved"
    assert prove(SQUARE, "post", {"n": 15}, True, profile="smt").status == "refuted"
    assert prove(SQUARE, "post", {"n": 15}, True, negate=True, profile="smt").status == "proved"


def test_square_lean_auto_witness_and_nonlinear_unknown() -> None:
    assert prove(SQUARE, "post", {"n": 16}, True) == ProofResult("proved", "lean-auto", "witness")
    assert prove(SQUARE, "post", {"n": 15}, True) == ProofResult("unknown", "lean-auto", "no-witness")
    neg = prove(SQUARE, "post", {"n": 15}, True, negate=True)
    assert neg == ProofResult("unknown", "lean-auto", "nonlinear")  # ∀ k, k * k ≠ 15 is not linear


def test_witness_from_the_inputs_beyond_the_radius() -> None:
    spec = spec_of("∃ k : Int, k = n ∧ k > 100")
    assert prove(spec, "post", {"n": 1000}, True).route == "witness"  # 1000 is an input value
    # its negation ∀ k, ¬(k = n ∧ k > 100) is linear: the counterexample k = 1000 refutes it
    assert prove(spec, "post", {"n": 1000}, True, negate=True) == ProofResult("refuted", "lean-auto", "omega")
    nat = spec_of("∃ k : Nat, (k : Int) + n = 0")
    assert prove(nat, "post", {"n": -3}, True).status == "proved"
    assert prove(nat, "post", {"n": 3}, True).status == "unknown"  # no Nat witness; -3 is not tried
    assert prove(nat, "post", {"n": 3}, True, profile="smt").status == "refuted"


def test_linear_universal_goal_by_omega() -> None:
    spec = spec_of("∀ x : Int, x < n → x + 1 ≤ n")
    assert prove(spec, "post", {"n": 5}, True) == ProofResult("proved", "lean-auto", "omega")
    wrong = spec_of("∀ x : Int, x ≤ n")
    assert prove(wrong, "post", {"n": 3}, True) == ProofResult("refuted", "lean-auto", "omega")
    assert prove(wrong, "post", {"n": 3}, True, profile="smt").status == "refuted"
    # several binders are introduced together; Nat binders carry 0 ≤ x
    two = spec_of("∀ x : Nat, ∀ y : Nat, x + y ≥ x - n")
    assert prove(two, "post", {"n": 2}, True).route == "omega"
    assert prove(two, "post", {"n": 2}, True).status == "proved"
    # negating an existential gives a universal goal
    even = spec_of("result = true ↔ ∃ k : Int, n = 2 * k")
    assert prove(even, "post", {"n": 7}, False) == ProofResult("proved", "lean-auto", "omega")
    assert prove(even, "post", {"n": 8}, True) == ProofResult("proved", "lean-auto", "witness")
    assert prove(even, "post", {"n": 7}, True).status == "unknown"  # no witness; Lean cannot refute
    assert prove(even, "post", {"n": 8}, False).status == "refuted"  # ¬∃ is a ∀ with a counterexample


def test_simplification_around_quantifiers() -> None:
    a = "(a : Array Int)"
    spec = spec_of("∀ i, i < a.size → ∃ k : Int, a[i]! = 2 * k", params=a)
    assert prove(spec, "post", {"a": [2, 4, -6]}, True).route == "witness"
    assert prove(spec, "post", {"a": [2, 3]}, True).status == "unknown"
    assert prove(spec, "post", {"a": [2, 3]}, True, profile="smt").status == "refuted"
    assert prove(spec, "post", {"a": []}, True) == ProofResult("proved", "lean-auto", "decide")
    mixed = spec_of("a.size > 0 ∧ (∃ k : Int, a[0]! = k * k)", params=a)
    # the decided conjunct is simplified away (True ∧ P is P), leaving the witness to prove the goal
    assert prove(mixed, "post", {"a": [9]}, True) == ProofResult("proved", "lean-auto", "witness")
    assert prove(mixed, "post", {"a": []}, True) == ProofResult("refuted", "lean-auto", "decide")


def test_step_budget_makes_decide_unknown() -> None:
    spec = spec_of("∀ i, i < n.toNat → ∀ j, j < n.toNat → i + j ≥ 0")
    assert prove(spec, "post", {"n": 30}, True).status == "proved"
    small = prove(spec, "post", {"n": 30}, True, max_steps=50)
    assert small == ProofResult("unknown", "lean-auto", "decide-budget")


def test_rlimit_reaches_smt() -> None:
    low = prove(SQUARE, "post", {"n": 144}, True, profile="smt", rlimit=200)
    assert low == ProofResult("unknown", "smt", "smt-unknown")
    assert prove(SQUARE, "post", {"n": 144}, True, profile="smt").status == "proved"


def test_obligation_formula() -> None:
    f = obligation_formula(SQUARE, "post", {"n": 16}, True)
    assert isinstance(f, z3.BoolRef) and z3.is_quantifier(f)
    g = obligation_formula(SQUARE, "post", {"n": 16}, True, negate=True)
    assert z3.is_not(g)
    assert z3.is_true(obligation_formula(SQUARE, "pre", {"n": 16}))


# ----------------------------------------------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------------------------------------------


def test_bad_input_is_named() -> None:
    ok = {"n": 3}
    with pytest.raises(ValueError, match="which"):
        prove(SQUARE, "mid", ok)
    with pytest.raises(ValueError, match="profile"):
        prove(SQUARE, "pre", ok, profile="z3")
    with pytest.raises(ValueError, match="rlimit"):
        prove(SQUARE, "pre", ok, rlimit=0)
    with pytest.raises(TypeError, match="rlimit"):
        prove(SQUARE, "pre", ok, rlimit="many")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="negate"):
        prove(SQUARE, "pre", ok, negate="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_steps"):
        prove(SQUARE, "pre", ok, max_steps=0)
    with pytest.raises(ValueError, match="result"):
        prove(SQUARE, "post", ok)
    with pytest.raises(ValueError, match="result"):
        prove(SQUARE, "pre", ok, True)
    with pytest.raises(TypeError, match="result"):
        prove(SQUARE, "post", ok, 3)
    with pytest.raises(ValueError, match="inputs"):
        prove(SQUARE, "pre", {"m": 3})
    with pytest.raises(TypeError, match="n"):
        prove(SQUARE, "pre", {"n": "3"})
    with pytest.raises(TypeError, match="spec"):
        prove("def f", "pre", ok)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="negate"):
        obligation_formula(SQUARE, "pre", ok, negate=1)  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        prove(SQUARE, "pre", ok).status = "refuted"  # type: ignore[misc]
