"""Type checking and elaboration of MiniSpec: Lean's numerals, casts at the leaves, Bool/Prop, errors."""

from __future__ import annotations

import pytest

from neurips26.specbridge.minispec.ast import (
    BOOL,
    CHAR,
    INT,
    NAT,
    PROP,
    STRING,
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
from neurips26.specbridge.minispec.typecheck import (
    SpecTypeError,
    TypedSpec,
    check,
    check_spec,
    elaborate,
    infer,
    show,
)

ARR = Ty("Array", "Int")
LIST = Ty("List", "Int")
a, l, n, m, x, y, b, s, c = (Var(v) for v in "alnmxybsc")
i, j, k = Var("i"), Var("j"), Var("k")
res = Var("result")
ENV = {"a": ARR, "l": LIST, "n": NAT, "m": NAT, "x": INT, "y": INT, "b": BOOL, "s": STRING, "c": CHAR}


def size(e: Expr) -> Call:
    return Call("size", (e,))


def get(e: Expr, idx: Expr) -> Call:
    return Call("get", (e, idx))


def nodes(e: Expr):
    yield e
    if isinstance(e, Unary):
        yield from nodes(e.arg)
    elif isinstance(e, Binary):
        yield from nodes(e.left)
        yield from nodes(e.right)
    elif isinstance(e, Call):
        for arg in e.args:
            yield from nodes(arg)
    elif isinstance(e, FilterLength):
        yield from nodes(e.items)
        yield from nodes(e.pred)
    elif isinstance(e, Ite):
        yield from nodes(e.cond)
        yield from nodes(e.then_)
        yield from nodes(e.else_)
    elif isinstance(e, Quant):
        if e.bound is not None:
            yield from nodes(e.bound)
        yield from nodes(e.body)


def int_literals(e: Expr) -> list[Lit]:
    return [
        z
        for z in nodes(e)
        if isinstance(z, Lit) and isinstance(z.value, int) and not isinstance(z.value, bool)
    ]


# ---------------------------------------------------------------------------------------------------------
# numerals and defaults
# ---------------------------------------------------------------------------------------------------------


def test_numerals_default_to_nat_and_negated_ones_to_int():
    assert infer(Lit(3), {}) == NAT
    assert infer(Unary("-", Lit(3)), {}) == INT
    assert infer(Lit(-3), {}) == INT
    assert infer(Binary("-", Lit(0), Lit(1)), {}) == NAT
    assert infer(Binary("+", Unary("-", Lit(1)), Lit(2)), {}) == INT


def test_numerals_take_the_type_of_the_other_operand():
    t = elaborate(Binary("+", x, Lit(1)), ENV)
    assert t.type == INT and t.expr == Binary("+", x, Lit(1, INT))
    t = elaborate(Binary("=", get(a, Lit(0)), Lit(3)), ENV)
    assert t.expr == Binary("=", get(a, Lit(0, NAT)), Lit(3, INT))
    assert t.types[Lit(3, INT)] == INT and t.types[Lit(0, NAT)] == NAT


def test_every_integer_literal_is_typed_after_elaboration():
    e = Binary(
        "∧",
        Binary("<", Binary("+", Lit(1), Lit(2)), Ite(b, Lit(3), Lit(4))),
        Binary("=", Call("max", (Lit(0), x)), Binary("*", Lit(2), Lit(5))),
    )
    t = elaborate(e, ENV)
    lits = int_literals(t.expr)
    assert len(lits) == 7 and all(z.ty in (NAT, INT) for z in lits)
    assert {z.value: z.ty for z in lits if z.value in (0, 2, 5)} == {0: INT, 2: INT, 5: INT}


def test_expected_type_reaches_numerals_through_if_and_min():
    t = check(Ite(b, Lit(1), Call("min", (Lit(2), Lit(3)))), INT, ENV)
    assert all(z.ty == INT for z in int_literals(t.expr))
    assert check(Lit(7), NAT, ENV).expr == Lit(7, NAT)


def test_negative_literal_is_not_a_nat():
    with pytest.raises(SpecTypeError, match="negative literal"):
        check(Lit(-1), NAT, ENV)
    with pytest.raises(SpecTypeError, match="Neg Nat"):
        infer(Binary("=", n, Unary("-", Lit(1))), ENV)
    with pytest.raises(SpecTypeError, match="Neg Nat"):
        infer(Unary("-", n), ENV)


# ---------------------------------------------------------------------------------------------------------
# coercions: where Lean inserts ↑
# ---------------------------------------------------------------------------------------------------------


def test_mixed_addition_casts_the_nat_operand_and_records_it():
    t = elaborate(Binary("+", x, n), ENV)
    assert t.type == INT
    assert t.expr == Binary("+", x, Call("toInt", (n,)))
    assert t.coercions == (n,)


def test_casts_go_to_the_leaves_not_around_the_subtraction():
    # Lean reads `n - 5 = x` (n : Nat, x : Int) as `↑n - 5 = x`: an Int subtraction
    t = elaborate(Binary("=", Binary("-", n, Lit(5)), x), ENV)
    assert t.expr == Binary("=", Binary("-", Call("toInt", (n,)), Lit(5, INT)), x)
    assert t.types[t.expr.left] == INT
    assert t.coercions == (n,)


def test_explicit_cast_of_a_subtraction_keeps_the_nat_subtraction():
    t = elaborate(Binary("=", Call("toInt", (Binary("-", n, Lit(5)),)), x), ENV)
    inner = Binary("-", n, Lit(5, NAT))
    assert t.expr.left == Call("toInt", (inner,))
    assert t.types[inner] == NAT
    assert t.coercions == ()  # written, not inserted


def test_bool_and_prop_mix_in_equality_and_if():
    assert infer(Binary("=", b, Binary("<", n, m)), ENV) == PROP
    assert infer(Ite(b, Binary("<", n, m), b), ENV) == PROP
    assert infer(Ite(b, b, Binary("<", n, m)), ENV) == BOOL
    with pytest.raises(SpecTypeError, match="type mismatch"):
        infer(Ite(b, b, Lit(1)), ENV)


def test_expected_int_casts_the_leaves_of_a_nat_tree():
    t = check(Binary("-", n, Lit(1)), INT, ENV)
    assert t.expr == Binary("-", Call("toInt", (n,)), Lit(1, INT))
    t = check(Ite(b, Binary("-", n, Lit(1)), Lit(0)), INT, ENV)
    assert t.expr.then_ == Binary("-", Call("toInt", (n,)), Lit(1, INT))


def test_int_where_nat_is_expected_is_an_error():
    with pytest.raises(SpecTypeError, match="type mismatch: x has type Int"):
        check(x, NAT, ENV)
    with pytest.raises(SpecTypeError, match="x"):
        check(Binary("+", n, x), NAT, ENV)


def test_ascription_of_a_numeral_is_an_int_literal():
    t = elaborate(Call("toInt", (Unary("-", Lit(3)),)), ENV)
    assert t.type == INT and t.expr == Call("toInt", (Unary("-", Lit(3, INT)),))
    assert t.coercions == ()


def test_result_compared_with_size_is_cast():
    t = elaborate(Binary("<", res, size(a)), {**ENV, "result": INT})
    assert t.expr == Binary("<", res, Call("toInt", (size(a),)))
    assert t.coercions == (size(a),)


def test_min_follows_its_first_argument_like_lean():
    assert infer(Call("max", (x, n)), ENV) == INT
    with pytest.raises(SpecTypeError, match="type mismatch"):
        infer(Call("max", (n, x)), ENV)
    assert check(Call("max", (n, x)), INT, ENV).type == INT


# ---------------------------------------------------------------------------------------------------------
# propositions, built-ins, binders
# ---------------------------------------------------------------------------------------------------------


def test_connectives_accept_bool_and_prop():
    assert infer(Binary("∧", b, Binary("<", n, m)), ENV) == PROP
    assert infer(Binary("↔", Binary("=", b, Lit(True)), Binary(">", x, Lit(0))), ENV) == PROP
    assert infer(Unary("¬", b), ENV) == PROP
    assert check(Binary(">", x, Lit(0)), BOOL, ENV).type == BOOL
    with pytest.raises(SpecTypeError, match="3"):
        infer(Binary("∧", b, Lit(3)), ENV)


def test_builtin_result_types():
    assert infer(size(a), ENV) == NAT
    assert infer(Call("length", (s,)), ENV) == NAT
    assert infer(get(a, n), ENV) == INT
    assert infer(Call("toList", (a,)), ENV) == LIST
    assert infer(Call("toList", (s,)), ENV) == Ty("List", "Char")
    assert infer(Call("count", (l, Lit(2))), ENV) == NAT
    assert infer(Call("sum", (l,)), ENV) == INT
    assert infer(Call("take", (l, Lit(2))), ENV) == LIST
    assert infer(Call("drop", (l, n)), ENV) == LIST
    assert infer(Call("perm", (l, Call("toList", (a,)))), ENV) == PROP
    assert infer(Call("toNat", (x,)), ENV) == NAT
    assert infer(Call("toNat", (c,)), ENV) == NAT
    assert infer(Call("toInt", (n,)), ENV) == INT
    assert infer(Call("natAbs", (x,)), ENV) == NAT
    assert infer(FilterLength(l, "v", Binary(">", Var("v"), Lit(0))), ENV) == NAT
    assert infer(Binary("=", c, Lit("a", CHAR)), ENV) == PROP
    assert infer(Binary("<", s, Lit("abc")), ENV) == PROP


@pytest.mark.parametrize(
    ("expr", "needle"),
    [
        (get(a, x), "x has type Int"),
        (size(l), "size needs a Array"),
        (Call("length", (a,)), "length needs a List or String"),
        (Call("sum", (Call("toList", (s,)),)), "sum needs a List Nat or List Int"),
        (Call("take", (l, x)), "x has type Int"),
        (Call("toNat", (n,)), "toNat needs an Int or a Char"),
        (Binary("<", b, b), "< needs Nat, Int, Char or String"),
        (Binary("=", l, Call("toList", (s,))), "cannot combine"),
        (Binary("+", s, Lit(1)), "arithmetic needs Nat or Int"),
        (Var("zz"), "unknown variable 'zz'"),
        (Call("nosuch", (n,)), "unknown function 'nosuch'"),
        (Call("size", (a, a)), "size takes 1 argument"),
        (Lit("ab", CHAR), "one character"),
        (Quant("∀", "i", NAT, x, Lit(True)), "bound x of ∀ i has type Int"),
        (Quant("∀", "w", STRING, None, Lit(True)), "unbounded quantifier ranges over Nat or Int"),
        (Ite(n, Lit(1), Lit(2)), "n has type Nat"),
    ],
)
def test_ill_typed_expressions_name_the_culprit(expr, needle):
    with pytest.raises(SpecTypeError) as err:
        infer(expr, ENV)
    assert needle in str(err.value)
    assert isinstance(err.value, TypeError)


def test_quantifier_variables_are_nat_and_bounded_by_a_nat():
    e = Quant("∀", "i", NAT, size(a), Binary("≤", get(a, i), x))
    assert infer(e, ENV) == PROP
    e = Quant("∃", "k", INT, None, Binary("=", Binary("*", k, k), x))
    t = elaborate(e, ENV)
    assert t.types[Var("k")] == INT


def test_helpers_type_their_calls():
    pos = Helper("pos", (Param("v", INT),), PROP, Binary(">", Var("v"), Lit(0)))
    t = elaborate(Call("pos", (n,)), ENV, (pos,))
    assert t.type == PROP and t.expr == Call("pos", (Call("toInt", (n,)),))
    with pytest.raises(SpecTypeError, match="pos takes 1 argument"):
        infer(Call("pos", (n, n)), ENV, (pos,))
    with pytest.raises(SpecTypeError, match="type mismatch"):
        infer(Call("pos", (b,)), ENV, (pos,))


def test_show_is_readable():
    e = Binary("∧", Quant("∀", "i", NAT, size(a), Binary("≤", get(a, i), res)), Unary("¬", b))
    assert show(e) == "(∀ i, i < a.size → a[i]! ≤ result) ∧ (¬b)"


# ---------------------------------------------------------------------------------------------------------
# whole specs
# ---------------------------------------------------------------------------------------------------------

SIG = Signature("f", (Param("a", ARR), Param("k", NAT)), INT)


def first_negative_spec() -> Spec:
    kk = Var("k")
    neg = Binary("<", get(a, Call("toNat", (res,))), Lit(0))
    post = Binary(
        "∧",
        Binary(
            "→",
            Binary("=", res, Unary("-", Lit(1))),
            Quant("∀", "i", NAT, size(a), Unary("¬", Binary("<", get(a, i), Lit(0)))),
        ),
        Binary(
            "→",
            Binary("≠", res, Unary("-", Lit(1))),
            Binary("∧", Binary("≤", Lit(0), res), Binary("∧", Binary("<", res, size(a)), neg)),
        ),
    )
    return Spec(SIG, Binary("≤", kk, size(a)), post)


def test_check_spec_types_every_node_of_the_elaborated_spec():
    ts = check_spec(first_negative_spec())
    assert isinstance(ts, TypedSpec) and ts.source == first_negative_spec()
    for part in (ts.spec.pre, ts.spec.post):
        for node in nodes(part):
            assert ts.type_of(node) in (NAT, INT, BOOL, CHAR, STRING, PROP, ARR, LIST, Ty("List", "Char"))
        assert ts.type_of(part) == PROP
        assert all(z.ty is not None for z in int_literals(part))
    assert size(a) in ts.coercions  # `result < a.size` is `result < ↑a.size`
    with pytest.raises(KeyError, match="not part of the elaborated spec"):
        ts.type_of(Var("nowhere"))


def test_check_spec_renames_a_name_used_at_two_types():
    helper = Helper("big", (Param("a", INT),), BOOL, Binary(">", a, Lit(10)))
    post = Binary(
        "∧",
        Call("big", (res,)),
        Quant("∃", "a", NAT, None, Binary("=", Call("toInt", (Var("a"),)), res)),
    )
    ts = check_spec(Spec(SIG, Lit(True), post, (helper,)))
    (h,) = ts.spec.helpers
    assert h.params[0].name != "a" and ts.type_of(Var(h.params[0].name)) == INT
    assert ts.type_of(Var("a")) == ARR
    q = ts.spec.post.right
    assert q.var not in ("a", h.params[0].name) and ts.type_of(Var(q.var)) == NAT


def test_check_spec_rejects_bad_specs():
    with pytest.raises(SpecTypeError, match="unknown variable 'result'"):
        check_spec(Spec(SIG, Binary(">", res, Lit(0)), Lit(True)))
    with pytest.raises(SpecTypeError, match="expected to have type Prop"):
        check_spec(Spec(SIG, size(a), Lit(True)))
    bad_sig = Signature("f", (Param("result", NAT),), NAT)
    with pytest.raises(SpecTypeError, match="result"):
        check_spec(Spec(bad_sig, Lit(True), Lit(True)))
    with pytest.raises(TypeError, match="spec must be a Spec"):
        check_spec("def f_precond := True")  # type: ignore[arg-type]


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="env"):
        infer(Lit(1), {"n": "Nat"})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="expected"):
        check(Lit(1), "Nat", ENV)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expr"):
        infer("n + 1", ENV)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="helpers"):
        infer(Lit(1), ENV, ("h",))  # type: ignore[arg-type]
