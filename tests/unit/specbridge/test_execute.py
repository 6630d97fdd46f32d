"""The Python executor of MiniSpec: Lean's arithmetic, defaults, built-ins, laziness, budget, obligations."""

from __future__ import annotations

import pytest

from neurips26.specbridge.execute import (
    ExecutionBudget,
    NotExecutable,
    check_value,
    ediv,
    emod,
    evaluate,
    postcondition,
    precondition,
    typed,
    unbounded_quantifier,
)
from neurips26.specbridge.minispec.ast import (
    BOOL,
    CHAR,
    FALSE,
    INT,
    NAT,
    STRING,
    TRUE,
    Binary,
    Call,
    Expr,
    FilterLength,
    Helper,
    Ite,
    Lit,
    Param,
    Quant,
    Signature,
    Spec,
    Ty,
    Unary,
    Var,
)
from neurips26.specbridge.minispec.typecheck import elaborate

ARR = Ty("Array", "Int")
LIST = Ty("List", "Int")
CHARS = Ty("Array", "Char")
a, l, n, m, x, y, b, s, c, w = (Var(v) for v in "alnmxybscw")
i, j = Var("i"), Var("j")
res = Var("result")
ENV = {
    "a": ARR,
    "l": LIST,
    "n": NAT,
    "m": NAT,
    "x": INT,
    "y": INT,
    "b": BOOL,
    "s": STRING,
    "c": CHAR,
    "w": CHARS,
}
VALUES = {
    "a": (3, -1, 4),
    "l": (1, 2, 2, 5),
    "n": 3,
    "m": 5,
    "x": -7,
    "y": 2,
    "b": True,
    "s": "héllo",
    "c": "h",
}
VALUES["w"] = ("x", "y")


def run(expr: Expr, values: dict | None = None, helpers: tuple[Helper, ...] = (), **kw):
    """Elaborate ``expr`` against ENV and evaluate it on VALUES (updated by ``values``)."""
    t = elaborate(expr, ENV, helpers)
    return evaluate(t.expr, {**VALUES, **(values or {})}, t, t.helpers, **kw)


def lit(v: int, ty: Ty) -> Lit:
    return Lit(v, ty)


def size(e: Expr) -> Call:
    return Call("size", (e,))


def get(e: Expr, idx: Expr) -> Call:
    return Call("get", (e, idx))


# ---------------------------------------------------------------------------------------------------------
# Lean's arithmetic
# ---------------------------------------------------------------------------------------------------------


def test_nat_subtraction_truncates_at_zero():
    assert run(Binary("-", lit(3, NAT), Lit(5))) == 0
    assert run(Binary("=", Binary("-", lit(3, NAT), Lit(5)), Lit(0))) is True
    assert run(Binary("-", n, m)) == 0 and run(Binary("-", m, n)) == 2


def test_int_subtraction_after_leaf_cast_does_not_truncate():
    # n - m = x with x : Int means ↑n - ↑m = x
    assert run(Binary("=", Binary("-", n, m), x), {"x": -2}) is True
    assert run(Binary("=", Call("toInt", (Binary("-", n, m),)), x), {"x": -2}) is False
    assert run(Binary("-", lit(3, INT), Lit(5))) == -2


@pytest.mark.parametrize(
    ("p", "q", "quot", "rem"),
    [
        (-7, 2, -4, 1),
        (7, -2, -3, 1),
        (-7, -2, 4, 1),
        (7, 2, 3, 1),
        (6, 3, 2, 0),
        (-6, 3, -2, 0),
        (5, 0, 0, 5),
    ],
)
def test_int_division_is_euclidean(p, q, quot, rem):
    assert ediv(p, q) == quot and emod(p, q) == rem
    assert p == q * quot + rem or q == 0
    env = {"x": p, "y": q}
    assert run(Binary("/", x, y), env) == quot
    assert run(Binary("%", x, y), env) == rem


def test_division_by_zero_for_nat_and_int():
    assert run(Binary("/", n, lit(0, NAT))) == 0
    assert run(Binary("%", n, lit(0, NAT))) == 3
    assert run(Binary("/", x, Lit(0))) == 0
    assert run(Binary("%", x, Lit(0))) == -7
    assert run(Binary("/", Lit(-7), Lit(2))) == -4 and run(Binary("%", Lit(-7), Lit(2))) == 1


def test_negation_and_multiplication():
    assert run(Unary("-", x)) == 7
    assert run(Binary("*", x, y)) == -14


# ---------------------------------------------------------------------------------------------------------
# built-ins
# ---------------------------------------------------------------------------------------------------------


def test_indexing_defaults_out_of_range():
    assert run(get(a, Lit(1))) == -1
    assert run(get(a, Lit(3))) == 0
    assert run(get(a, Lit(10**9))) == 0
    assert run(get(w, Lit(5))) == "A"
    assert run(get(Call("toList", (s,)), Lit(1))) == "é"
    assert run(get(Call("toList", (s,)), Lit(99))) == "A"
    assert run(get(l, Call("toNat", (x,)))) == 1  # toNat (-7) = 0


def test_each_builtin():
    assert run(size(a)) == 3
    assert run(size(w)) == 2
    assert run(Call("length", (l,))) == 4
    assert run(Call("length", (s,))) == 5
    assert run(Call("toList", (a,))) == (3, -1, 4)
    assert run(Call("toList", (s,))) == ("h", "é", "l", "l", "o")
    assert run(Call("count", (l, Lit(2)))) == 2
    assert run(Call("count", (Call("toList", (s,)), Lit("l", CHAR)))) == 2
    assert run(Call("sum", (l,))) == 10
    assert run(Call("sum", (Call("take", (l, Lit(0))),))) == 0
    assert run(Call("take", (l, Lit(2)))) == (1, 2)
    assert run(Call("take", (l, Lit(10)))) == (1, 2, 2, 5)
    assert run(Call("drop", (l, Lit(3)))) == (5,)
    assert run(Call("drop", (l, Lit(10)))) == ()
    assert run(Call("toNat", (x,))) == 0
    assert run(Call("toNat", (y,))) == 2
    assert run(Call("toNat", (c,))) == ord("h")
    assert run(Call("toInt", (n,))) == 3
    assert run(Call("natAbs", (x,))) == 7
    assert run(Call("min", (x, y))) == -7 and run(Call("max", (x, y))) == 2
    assert run(FilterLength(l, "v", Binary(">", Var("v"), Lit(1)))) == 3
    assert run(Ite(b, Lit(1), Lit(2))) == 1 and run(Ite(Unary("¬", b), Lit(1), Lit(2))) == 2
    assert run(Binary("<", s, Lit("i"))) is True
    assert run(Binary("<", s, Lit("hz"))) is False  # by code point, as Lean: 'é' > 'z'
    assert run(Binary("=", c, Lit("h", CHAR))) is True


def test_perm_is_multiset_equality():
    perm = Call("perm", (l, Var("l2")))
    env = {**ENV, "l2": LIST}
    t = elaborate(perm, env)
    for other, want in [
        ((2, 5, 1, 2), True),
        ((1, 2, 5), False),
        ((1, 2, 5, 5), False),
        ((1, 2, 2, 5), True),
    ]:
        assert evaluate(t.expr, {"l": (1, 2, 2, 5), "l2": other}, t) is want


def test_connectives_on_bools():
    for p in (True, False):
        for q in (True, False):
            vals = {"b": p, "c2": q}
            env = {**ENV, "c2": BOOL}
            for op, want in [("∧", p and q), ("∨", p or q), ("→", (not p) or q), ("↔", p == q)]:
                t = elaborate(Binary(op, b, Var("c2")), env)
                assert evaluate(t.expr, vals, t) is want


def test_helpers_are_called_with_their_arguments():
    sq = Helper("sq", (Param("v", INT),), INT, Binary("*", Var("v"), Var("v")))
    ev = Helper(
        "isEven", (Param("v", INT),), BOOL, Binary("=", Binary("%", Call("sq", (Var("v"),)), Lit(2)), Lit(0))
    )
    assert run(Call("sq", (x,)), helpers=(sq, ev)) == 49
    assert run(Call("isEven", (y,)), helpers=(sq, ev)) is True
    assert run(Call("isEven", (n,)), helpers=(sq, ev)) is False  # n : Nat is cast to Int


# ---------------------------------------------------------------------------------------------------------
# quantifiers, laziness, budget
# ---------------------------------------------------------------------------------------------------------

HUGE = Lit(10**12)


def test_bounded_quantifiers_iterate_below_the_bound():
    allpos = Quant("∀", "i", NAT, size(a), Binary(">", get(a, i), Lit(-5)))
    assert run(allpos) is True
    assert run(allpos, {"a": (3, -9)}) is False
    assert run(Quant("∃", "i", NAT, size(a), Binary("<", get(a, i), Lit(0)))) is True
    assert run(Quant("∀", "i", NAT, Lit(0), FALSE)) is True
    assert run(Quant("∃", "i", NAT, Lit(0), TRUE)) is False


def test_short_circuit_stops_at_the_first_witness_or_counterexample():
    budget = {"max_steps": 200}
    assert run(Quant("∃", "i", NAT, HUGE, Binary("=", i, Lit(3))), **budget) is True
    assert run(Quant("∀", "i", NAT, HUGE, Binary("<", i, Lit(3))), **budget) is False
    loop = Quant("∀", "i", NAT, HUGE, TRUE)
    assert run(Binary("∧", FALSE, loop), **budget) is False
    assert run(Binary("∨", TRUE, loop), **budget) is True
    assert run(Binary("→", FALSE, loop), **budget) is True
    assert run(Ite(TRUE, TRUE, loop), **budget) is True
    assert run(Ite(FALSE, loop, FALSE), **budget) is False
    with pytest.raises(ExecutionBudget):
        run(Binary("∧", TRUE, loop), **budget)


def test_budget_stops_nested_quantifiers():
    e = Quant(
        "∀", "i", NAT, Lit(1000), Quant("∀", "j", NAT, Lit(1000), Binary("≥", Binary("+", i, j), Lit(0)))
    )
    with pytest.raises(ExecutionBudget, match="max_steps=10000"):
        run(e, max_steps=10_000)
    small = Quant(
        "∀", "i", NAT, Lit(10), Quant("∀", "j", NAT, Lit(10), Binary("≥", Binary("+", i, j), Lit(0)))
    )
    assert run(small, max_steps=10_000) is True


def test_unbounded_quantifiers_are_not_executable_even_when_skipped():
    q = Quant("∃", "k", INT, None, Binary("=", Binary("*", Var("k"), Var("k")), x))
    with pytest.raises(NotExecutable) as err:
        run(q)
    assert err.value.expr.var == "k"
    with pytest.raises(NotExecutable):
        run(Binary("∧", FALSE, q))  # Lean's `decide` needs the whole proposition decidable
    hidden = Helper(
        "isSquare",
        (Param("v", INT),),
        "Prop",
        Quant("∃", "k", INT, None, Binary("=", Binary("*", Var("k"), Var("k")), Var("v"))),
    )
    assert unbounded_quantifier(Call("isSquare", (x,)), (hidden,)) is not None
    with pytest.raises(NotExecutable):
        run(Call("isSquare", (x,)), helpers=(hidden,))
    assert unbounded_quantifier(Quant("∀", "i", NAT, size(a), TRUE)) is None


def test_evaluate_rejects_bad_arguments():
    t = elaborate(Binary("-", n, m), ENV)
    with pytest.raises(TypeError, match="expr"):
        evaluate("n - m", VALUES, t)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="env"):
        evaluate(t.expr, [3, 5], t)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="types"):
        evaluate(t.expr, VALUES, None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_steps"):
        evaluate(t.expr, VALUES, t, max_steps=0)
    with pytest.raises(ValueError, match="types has no type"):
        evaluate(Binary("-", n, Lit(1)), VALUES, t)  # not elaborated: its literal is untyped
    with pytest.raises(ValueError, match="env has no value for variable 'm'"):
        evaluate(t.expr, {"n": 3}, t)


# ---------------------------------------------------------------------------------------------------------
# reference specs and obligations
# ---------------------------------------------------------------------------------------------------------


def spec_max() -> Spec:
    sig = Signature("maxOf", (Param("a", ARR),), INT)
    post = Binary(
        "∧",
        Quant("∃", "i", NAT, size(a), Binary("=", get(a, i), res)),
        Quant("∀", "i", NAT, size(a), Binary("≤", get(a, i), res)),
    )
    return Spec(sig, Binary(">", size(a), Lit(0)), post)


def spec_first_negative() -> Spec:
    sig = Signature("firstNeg", (Param("a", ARR),), INT)
    none = Binary("=", res, Unary("-", Lit(1)))
    some = Binary("≠", res, Unary("-", Lit(1)))
    r = Call("toNat", (res,))
    nonneg = Unary("¬", Binary("<", get(a, j), Lit(0)))
    found = Binary(
        "∧",
        Binary("≤", Lit(0), res),
        Binary(
            "∧",
            Binary("<", res, size(a)),
            Binary("∧", Binary("<", get(a, r), Lit(0)), Quant("∀", "j", NAT, r, nonneg)),
        ),
    )
    post = Binary("∧", Binary("→", none, Quant("∀", "j", NAT, size(a), nonneg)), Binary("→", some, found))
    return Spec(sig, TRUE, post)


def spec_sorted() -> Spec:
    sig = Signature("isSorted", (Param("a", ARR),), BOOL)
    ordered = Quant("∀", "j", NAT, size(a), Quant("∀", "i", NAT, j, Binary("≤", get(a, i), get(a, j))))
    return Spec(sig, TRUE, Binary("↔", Binary("=", res, TRUE), ordered))


def test_max_spec_accepts_only_the_maximum():
    spec = spec_max()
    assert precondition(spec, {"a": [2, 9, -3]}) is True
    assert precondition(spec, {"a": []}) is False
    assert postcondition(spec, {"a": [2, 9, -3]}, 9) is True
    for wrong in (2, 8, 10, -3):
        assert postcondition(spec, {"a": [2, 9, -3]}, wrong) is False
    assert postcondition(spec, {"a": (-4, -2)}, -2) is True


def test_first_negative_spec_with_sentinel():
    spec = spec_first_negative()
    cases = [((3, -1, 4, -5), 1), ((1, 2), -1), ((), -1), ((-2,), 0)]
    for arr, want in cases:
        assert precondition(spec, {"a": arr}) is True
        assert postcondition(spec, {"a": arr}, want) is True
        for wrong in {want - 1, want + 1, 3, -2} - {want}:
            assert postcondition(spec, {"a": arr}, wrong) is False, (arr, wrong)


def test_sorted_spec_is_a_bool_iff():
    spec = spec_sorted()
    for arr, want in [((1, 2, 2, 7), True), ((), True), ((3, 1), False), ((1, 5, 4), False)]:
        assert postcondition(spec, {"a": arr}, want) is True
        assert postcondition(spec, {"a": arr}, not want) is False


def test_nat_int_trap_in_a_spec():
    # "difference of two counts" with a Nat result is truncated; with an Int result it is not
    sig_nat = Signature("d", (Param("n", NAT), Param("m", NAT)), NAT)
    sig_int = Signature("d", (Param("n", NAT), Param("m", NAT)), INT)
    post = Binary("=", res, Binary("-", n, m))
    assert postcondition(Spec(sig_nat, TRUE, post), {"n": 3, "m": 5}, 0) is True
    assert postcondition(Spec(sig_int, TRUE, post), {"n": 3, "m": 5}, -2) is True
    assert postcondition(Spec(sig_int, TRUE, post), {"n": 3, "m": 5}, 0) is False


def test_typed_specs_are_remembered_without_confusing_true_and_one():
    sig = Signature("f", (Param("n", NAT),), NAT)
    s1 = Spec(sig, Binary("=", Lit(True), Lit(True)), TRUE)
    s2 = Spec(sig, Binary("=", Lit(1), Lit(1)), TRUE)
    assert s1 != s2  # Lit records the kind of its value: True and 1 differ
    t1, t2 = typed(s1), typed(s2)
    assert typed(s1) is t1 and t1 is not t2
    assert t1.type_of(t1.spec.pre.left) == BOOL and t2.type_of(t2.spec.pre.left) == NAT
    assert precondition(s1, {"n": 0}) is True and precondition(s2, {"n": 0}) is True
    assert typed(t1) is t1


def test_inputs_are_checked_against_parameter_types():
    spec = spec_max()
    with pytest.raises(TypeError, match="a must be Array Int"):
        precondition(spec, {"a": "123"})
    with pytest.raises(TypeError, match=r"a\[1\] must be Int"):
        precondition(spec, {"a": [1, 2.5]})
    with pytest.raises(TypeError, match=r"a\[0\] must be Int"):
        precondition(spec, {"a": [True]})
    with pytest.raises(TypeError, match="result must be Int"):
        postcondition(spec, {"a": [1]}, "1")
    with pytest.raises(ValueError, match="missing"):
        precondition(spec, {})
    with pytest.raises(ValueError, match="unexpected"):
        precondition(spec, {"a": [1], "b": 2})
    with pytest.raises(TypeError, match="inputs must be a dict"):
        precondition(spec, [[1]])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="spec must be a Spec"):
        precondition("spec", {"a": [1]})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="k must be Nat"):
        check_value("k", -1, NAT)
    with pytest.raises(TypeError, match="ch must be Char"):
        check_value("ch", "ab", CHAR)
    with pytest.raises(TypeError, match="flag must be Bool"):
        check_value("flag", 1, BOOL)
    assert check_value("w", ["a", "b"], Ty("List", "Char")) == ("a", "b")


def test_helper_parameter_named_like_a_spec_parameter():
    # the helper's `a : Int` and the signature's `a : Array Int` are different variables
    above = Helper("above", (Param("a", INT), Param("t", INT)), BOOL, Binary(">", a, Var("t")))
    sig = Signature("countAbove", (Param("a", ARR), Param("t", INT)), NAT)
    post = Binary("=", res, FilterLength(Call("toList", (a,)), "v", Call("above", (Var("v"), Var("t")))))
    spec = Spec(sig, TRUE, post, (above,))
    assert postcondition(spec, {"a": [5, -1, 7, 2], "t": 2}, 2) is True
    assert postcondition(spec, {"a": [5, -1, 7, 2], "t": 2}, 3) is False
