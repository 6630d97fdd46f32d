"""Tests of the z3 encoding: Lean's arithmetic in z3, agreement with the executor, the resource budget."""

from __future__ import annotations

import pytest
import z3

from neurips26.specbridge.benchmark import benchmark
from neurips26.specbridge.execute import ediv, emod, evaluate, postcondition, precondition
from neurips26.specbridge.minispec.ast import INT, NAT, STRING, Ty
from neurips26.specbridge.minispec.parser import parse_expr, parse_spec
from neurips26.specbridge.minispec.typecheck import elaborate
from neurips26.specbridge.prove import obligation_formula
from neurips26.specbridge.z3_backend import (
    RLIMIT,
    NotEncodable,
    ProverTimeout,
    check,
    encode,
    has_quantifier,
)

ARR = Ty("Array", "Int")


def verdict(text: str, env_types: dict | None = None, values: dict | None = None, **kw: object) -> str:
    """Elaborate ``text`` in ``env_types``, encode it under ``values`` and check it."""
    te = elaborate(parse_expr(text), env_types or {}, expected="Prop")
    fold = bool(kw.pop("fold", False))
    enc = encode(te.expr, values or {}, te, te.helpers, fold=fold)
    return check(enc.formula, **kw)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------------------
# Lean's arithmetic corner cases, decided by z3 itself (no folding in Python)
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "(3 : Nat) - 5 = 0",
        "(-7 : Int) / 2 = -4",
        "(-7 : Int) % 2 = 1",
        "(7 : Int) / (-2) = -3",
        "(7 : Int) % (-2) = 1",
        "(5 : Int) / 0 = 0",
        "(5 : Int) % 0 = 5",
        "(5 : Nat) / 0 = 0",
        "(5 : Nat) % 0 = 5",
    ],
)
def test_lean_arithmetic_ground(text: str) -> None:
    assert verdict(text) == "proved"
    assert verdict(f"¬ ({text})") == "refuted"


def test_lean_arithmetic_symbolic() -> None:
    assert verdict("∀ x : Int, x / 0 = 0 ∧ x % 0 = x") == "proved"
    assert verdict("∀ x : Nat, x - (x + 1) = 0") == "proved"
    assert verdict("∀ x : Int, x % 3 ≥ 0 ∧ x % 3 < 3") == "proved"  # Euclidean: never negative
    assert verdict("∀ x : Int, x % 3 = 1 → x / 3 * 3 + 1 = x") == "proved"
    assert verdict("∀ x : Int, x - (x + 1) = 0") == "refuted"  # Int subtraction does not truncate


def test_div_mod_match_the_executor_on_a_grid() -> None:
    env = {"x": INT, "y": INT, "q": INT, "r": INT}
    te = elaborate(parse_expr("x / y = q ∧ x % y = r"), env, expected="Prop")
    for a in range(-7, 8):
        for b in range(-3, 4):
            values = {"x": z3.IntVal(a), "y": z3.IntVal(b), "q": ediv(a, b), "r": emod(a, b)}
            assert check(encode(te.expr, values, te).formula, isolated=False) == "proved", (a, b)
    nat = elaborate(parse_expr("x - y = d"), {"x": NAT, "y": NAT, "d": NAT}, expected="Prop")
    for a in range(5):
        for b in range(5):
            values = {"x": z3.IntVal(a), "y": z3.IntVal(b), "d": max(a - b, 0)}
            assert check(encode(nat.expr, values, nat).formula, isolated=False) == "proved", (a, b)


def test_default_indexing() -> None:
    a = {"a": ARR}
    vals = {"a": (5, 6, 7)}
    assert verdict("a[5]! = 0", a, vals) == "proved"
    assert verdict("a[2]! = 7", a, vals) == "proved"
    # a symbolic index goes through the If chain and falls back to the default past the end
    assert verdict("∀ i : Nat, i ≥ 3 → a[i]! = 0", a, vals) == "proved"
    assert verdict("∀ i : Nat, i < 3 → a[i]! ≥ 5", a, vals) == "proved"
    assert verdict("∀ i : Nat, a[i]! ≠ 0", a, vals) == "refuted"
    s = {"s": STRING}
    assert verdict("∀ i : Nat, i ≥ 2 → s.toList[i]! = 'A'", s, {"s": "xy"}) == "proved"
    assert verdict("s.toList[7]! = 'A'", s, {"s": "xy"}) == "proved"


def test_bounded_quantifiers_unrolled_or_guarded() -> None:
    a = {"a": ARR}
    vals = {"a": (1, 2, 3)}
    assert verdict("∀ i, i < a.size → a[i]! > 0", a, vals) == "proved"
    assert verdict("∃ i, i < a.size ∧ a[i]! = 4", a, vals) == "refuted"
    # a bound that depends on an unbounded variable becomes a guarded quantifier
    assert verdict("∀ n : Nat, ∀ i, i < n → i + 1 ≤ n") == "proved"
    te = elaborate(parse_expr("∀ n : Nat, ∀ i, i < n → i < n + 1"), {}, expected="Prop")
    assert not encode(te.expr, {}, te).quantifier_free


def test_encoding_flags() -> None:
    env = {"n": INT}
    for text, linear in [("∃ k : Int, k * k = n", False), ("∃ k : Int, 2 * k = n", True)]:
        te = elaborate(parse_expr(text), env, expected="Prop")
        enc = encode(te.expr, {"n": 4}, te)
        assert enc.linear is linear
        assert not enc.quantifier_free and has_quantifier(enc.formula)
    te = elaborate(parse_expr("∀ k : Int, k / n = 0"), env, expected="Prop")
    assert encode(te.expr, {"n": 3}, te).linear is True  # division by a constant is linear
    te = elaborate(parse_expr("∀ k : Int, n / k = 0"), env, expected="Prop")
    assert encode(te.expr, {"n": 3}, te).linear is False
    # a fully ground formula folds to a constant
    te = elaborate(parse_expr("n * n = 16"), env, expected="Prop")
    assert z3.is_true(encode(te.expr, {"n": -4}, te).formula)
    assert not has_quantifier(encode(te.expr, {"n": -4}, te, fold=False).formula)


def test_not_encodable() -> None:
    text = "∀ n : Nat, (l.take n).length ≤ l.length"
    te = elaborate(parse_expr(text), {"l": Ty("List", "Int")}, expected="Prop")
    with pytest.raises(NotEncodable):
        encode(te.expr, {"l": (1, 2)}, te)


# ----------------------------------------------------------------------------------------------------------
# Differential agreement with the executor on the benchmark's obligations
# ----------------------------------------------------------------------------------------------------------


def _obligations() -> list[tuple]:
    """The obligations of every executable smoke task's reference spec on its first two tests and its reject
    inputs, with the executor's truth value."""
    out = []
    split = benchmark("smoke")
    for task in split.pool + split.eval:
        if not task.executable:
            continue
        spec = parse_spec(task.spec)
        for tc in task.tests[:2]:
            out.append((task.id, spec, "pre", tc.inputs, None, precondition(spec, tc.inputs)))
            for y in (tc.expected, *tc.unexpected):
                out.append((task.id, spec, "post", tc.inputs, y, postcondition(spec, tc.inputs, y)))
        for x in task.reject:
            out.append((task.id, spec, "pre", x, None, precondition(spec, x)))
    return out


def test_z3_arithmetic_agrees_with_the_executor_on_smoke_obligations() -> None:
    obligations = _obligations()
    assert len(obligations) > 100
    assert {v for *_, v in obligations} == {True, False}  # both verdicts occur
    for task_id, spec, which, inputs, result, value in obligations:
        want = "proved" if value else "refuted"
        got = check(obligation_formula(spec, which, inputs, result, fold=False), isolated=False)
        assert got == want, (task_id, which, inputs, result)
        negated = check(obligation_formula(spec, which, inputs, result, negate=True))
        assert negated == ("refuted" if value else "proved"), (task_id, which, inputs, result)


# ----------------------------------------------------------------------------------------------------------
# The deterministic budget
# ----------------------------------------------------------------------------------------------------------


def _square(n: int) -> z3.BoolRef:
    k = z3.Int("k")
    return z3.Exists([k], k * k == n)


def test_square_roots_proved_and_refuted() -> None:
    assert check(_square(16)) == "proved"
    assert check(_square(15)) == "refuted"
    assert check(z3.Not(_square(15))) == "proved"


def test_unknown_at_a_low_rlimit_is_stable() -> None:
    # 379 resource units is exactly what proving sqrt(144) exists costs in an isolated context (z3 5.4.1)
    low, enough = 378, 379
    assert check(_square(144), low) == "unknown"
    assert check(_square(144), enough) == "proved"
    assert [check(_square(144), low) for _ in range(3)] == ["unknown"] * 3
    x, y = z3.Ints("x y")
    others = []
    for j in range(30):  # other checks, and other work in the shared context
        others.append(check(_square(j), RLIMIT, isolated=False))
        s = z3.Solver()
        s.add(x * y == j + 7, x > 1, y > 1)
        s.check()
    assert others.count("proved") == 6  # 0, 1, 4, 9, 16, 25
    assert check(_square(144), low) == "unknown"
    assert check(_square(144), enough) == "proved"


def test_wall_clock_cap_raises() -> None:
    x, y, z = z3.Ints("x y z")
    hard = z3.Exists([x, y, z], x * x * x + y * y * y + z * z * z == 33)
    with pytest.raises(ProverTimeout):
        check(hard, 10**9, cap_s=0.05)


def test_bad_input_is_named() -> None:
    with pytest.raises(TypeError, match="formula"):
        check("x > 0")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rlimit"):
        check(z3.BoolVal(True), 0)
    with pytest.raises(TypeError, match="rlimit"):
        check(z3.BoolVal(True), 1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cap_s"):
        check(z3.BoolVal(True), cap_s=0.0)
    with pytest.raises(TypeError, match="isolated"):
        check(z3.BoolVal(True), isolated=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="quantifiers"):
        check(z3.BoolVal(True), quantifiers="no")  # type: ignore[arg-type]
    te = elaborate(parse_expr("x > 0"), {"x": INT}, expected="Prop")
    with pytest.raises(TypeError, match="expr"):
        encode("x > 0", {"x": 1}, te)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="env"):
        encode(te.expr, [1], te)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="types"):
        encode(te.expr, {"x": 1}, 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="fold"):
        encode(te.expr, {"x": 1}, te, fold=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="env"):
        encode(te.expr, {}, te)
    num = elaborate(parse_expr("x + 1"), {"x": INT})
    with pytest.raises(TypeError, match="proposition"):
        encode(num.expr, {"x": 1}, num)


SYMBOLIC = [
    "a[x.toNat]! = 3",
    "a.toList.count x = 1",
    "(a.toList.filter (fun v => v > x)).length = 3",
    "x.natAbs + x.toNat = 4",
    "min x 2 - max x (-1) = -3",
    "x.toNat - 3 = 1",
    "x / 2 = -2 ∧ x % 2 = 1",
    "7 / x = -3 ∨ 7 % x = 1",
    "if x > 0 then a[x.toNat]! > 0 else (a.toList.take 2).sum = x",
    "∀ i, i < a.size → a[i]! ≠ x",
    "∃ i, i < x.toNat ∧ a[i]! = 5",
    "s.toList[x.toNat]! = 'b'",
    "(s.toList.count 'b' : Int) = x",
]


@pytest.mark.parametrize("text", SYMBOLIC)
def test_symbolic_encodings_agree_with_the_executor(text: str) -> None:
    env_types = {"x": INT, "a": ARR, "s": STRING}
    te = elaborate(parse_expr(text), env_types, expected="Prop")
    values = {"a": (3, -1, 5, 3), "s": "abba"}
    x = z3.Int("x")
    symbolic = encode(te.expr, {**values, "x": x}, te).formula
    seen = set()
    for v in range(-4, 5):
        want = bool(evaluate(te.expr, {**values, "x": v}, te))
        seen.add(want)
        got = check(z3.substitute(symbolic, (x, z3.IntVal(v))), isolated=False)
        assert got == ("proved" if want else "refuted"), (text, v)
    assert seen == {True, False}  # the expression is not constant on the range
