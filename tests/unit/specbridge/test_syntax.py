"""MiniSpec parser, printer and Lean exporter: round trips, precedence, errors, golden Lean files."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from neurips26.specbridge.minispec.ast import (
    CHAR,
    INT,
    NAT,
    Binary,
    Call,
    Expr,
    FilterLength,
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
from neurips26.specbridge.minispec.lean import lean_available, lean_obligation, lean_spec, lean_value
from neurips26.specbridge.minispec.parser import (
    SpecSyntaxError,
    parse_expr,
    parse_signature,
    parse_spec,
    parse_type,
)
from neurips26.specbridge.minispec.printer import print_expr, print_signature, print_spec, print_type

GOLDEN = Path(__file__).parent / "golden"

a, b, c, x, y, n, i, j = (Var(s) for s in "abcxyzij".replace("z", "n"))


def get(arr: Expr, idx: Expr) -> Call:
    return Call("get", (arr, idx))


def size(arr: Expr) -> Call:
    return Call("size", (arr,))


# ----------------------------------------------------------------------------------------------------------
# Round trips on hand-written expressions
# ----------------------------------------------------------------------------------------------------------

EXPRESSIONS = [
    "a.size > 0 ∧ k ≤ a.size",
    "(∃ i, i < a.size ∧ a[i]! = result) ∧ (∀ i, i < a.size → a[i]! ≤ result)",
    "p → q → r",
    "(p → q) → r",
    "¬p ∧ q",
    "¬(p ∧ q)",
    "¬a = b",
    "(¬∀ i, i < n → P) ∧ Q",
    "a ↔ b ∨ c ∧ d",
    "(a ↔ b) ∧ c",
    "a - b - c",
    "a - (b - c)",
    "a * (b + c) % d",
    "a / b * c",
    "-x * y",
    "-(x * y)",
    "x - -y",
    "-(-x)",
    "(-x).toNat + x.natAbs",
    "a.toList.count x",
    "(a.toList.take 3).sum",
    "(l.drop n).length = l.length - n",
    "(a.toList.filter (fun v => v > 0 ∧ v ≠ x)).length ≤ a.size",
    "∀ i, i < a.size → ∀ j, j < i → a[j]! ≤ a[i]!",
    "∃ i, i < n ∧ ∃ j, j < i ∧ a[i]! + a[j]! = x",
    "∀ x : Int, x * x ≥ 0",
    "∃ k : Nat, k * k = n",
    "∀ x : Nat, (x < n → P)",
    "if x < 0 then -x else x",
    "(if x < 0 then 0 else x) + 1",
    "result = if b then 1 else 2",
    "min (a + 1) (l.count x) ≤ max a b",
    "List.Perm result.toList a.toList",
    "(x : Int) + (a.size : Int) - ↑(n - 1)",
    "(3 : Nat) - 5 = 0 ∧ (-7 : Int) / 2 = -4",
    "helper a (b + 1) c.toNat",
    's.length = 2 ∧ s.toList.count \'a\' = 1 ∧ s ≠ "q\\"uo\\\\te"',
    "b = true ∨ True",
    "a[a[0]! % a.size]! = a[(i + 1)]!",
]


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_round_trip_hand_written(text: str) -> None:
    e = parse_expr(text)
    printed = print_expr(e)
    assert parse_expr(printed) == e
    assert print_expr(parse_expr(printed)) == printed  # the printer's form is a fixed point


def test_printer_uses_minimal_parentheses() -> None:
    assert print_expr(parse_expr("((a + b)) + (c)")) == "a + b + c"
    assert print_expr(parse_expr("(a * b) + (c * d)")) == "a * b + c * d"
    assert print_expr(parse_expr("(¬ p) ∧ (q)")) == "¬p ∧ q"
    assert print_expr(parse_expr("((a.toList).count (x))")) == "a.toList.count x"
    assert print_expr(parse_expr("(p → (q → r))")) == "p → q → r"


# ----------------------------------------------------------------------------------------------------------
# Precedence and associativity: the exact trees
# ----------------------------------------------------------------------------------------------------------


def test_arrow_is_right_associative_and_conjunction_binds_tighter() -> None:
    p, q, r = Var("p"), Var("q"), Var("r")
    assert parse_expr("p → q → r") == Binary("→", p, Binary("→", q, r))
    assert parse_expr("p ∧ q → r") == Binary("→", Binary("∧", p, q), r)
    assert parse_expr("p ∨ q ∧ r") == Binary("∨", p, Binary("∧", q, r))
    assert parse_expr("p ↔ q → r") == Binary("↔", p, Binary("→", q, r))


def test_not_binds_tighter_than_and_but_looser_than_equality() -> None:
    p, q = Var("p"), Var("q")
    assert parse_expr("¬p ∧ q") == Binary("∧", Unary("¬", p), q)
    assert parse_expr("¬a = b") == Unary("¬", Binary("=", a, b))


def test_unary_minus_and_literals() -> None:
    assert parse_expr("-3") == Unary("-", Lit(3))
    assert parse_expr("-x * y") == Binary("*", Unary("-", x), y)
    assert parse_expr("a - b - c") == Binary("-", Binary("-", a, b), c)
    assert parse_expr("(3 : Int)") == Lit(3, INT)
    assert parse_expr("(-3 : Int)") == Unary("-", Lit(3, INT))
    assert parse_expr("'a'") == Lit("a", CHAR)
    assert parse_expr('"ab"') == Lit("ab")
    assert parse_expr("true") == parse_expr("True") == Lit(True)


def test_method_chains_and_filter_length() -> None:
    to_list = Call("toList", (a,))
    assert parse_expr("a.toList.count x") == Call("count", (to_list, x))
    assert parse_expr("(a.toList.take 3).sum") == Call("sum", (Call("take", (to_list, Lit(3))),))
    assert parse_expr("a[i]!.toNat") == Call("toNat", (get(a, i),))
    fl = parse_expr("(a.toList.filter (fun v ↦ v > 0)).length")
    assert fl == FilterLength(to_list, "v", Binary(">", Var("v"), Lit(0)))
    assert parse_expr("(x : Int)") == parse_expr("↑x") == Call("toInt", (x,))


def test_quantifiers_and_ite() -> None:
    assert parse_expr("∀ i, i < a.size → a[i]! > 0") == Quant(
        "∀", "i", NAT, size(a), Binary(">", get(a, i), Lit(0))
    )
    assert parse_expr("∃ i : Nat, i < n ∧ p") == Quant("∃", "i", NAT, n, Var("p"))
    assert parse_expr("∀ i < n, p") == Quant("∀", "i", NAT, n, Var("p"))
    assert parse_expr("∀ x : Int, x < n → p") == Quant(
        "∀", "x", INT, None, Binary("→", Binary("<", x, n), Var("p"))
    )
    # a quantifier body reaches as far right as possible
    assert parse_expr("∃ k : Nat, k = n ∧ p") == Quant(
        "∃", "k", NAT, None, Binary("∧", Binary("=", Var("k"), n), Var("p"))
    )
    assert parse_expr("if p then a else b + 1") == Ite(Var("p"), a, Binary("+", b, Lit(1)))


def test_several_binders_are_rewritten_to_nested_bounded_quantifiers() -> None:
    body = Binary("≤", get(a, i), get(a, j))
    expected = Quant("∀", "j", NAT, size(a), Quant("∀", "i", NAT, j, body))
    assert parse_expr("∀ i j, i < j → j < a.size → a[i]! ≤ a[j]!") == expected
    assert parse_expr("∀ j, j < a.size → ∀ i, i < j → a[i]! ≤ a[j]!") == expected
    # independent bounds keep the written order
    indep = parse_expr("∀ i j, i < n → j < a.size → a[i]! ≤ a[j]!")
    assert indep == Quant("∀", "i", NAT, n, Quant("∀", "j", NAT, size(a), body))
    ex = parse_expr("∃ i j, i < j ∧ j < n ∧ a[i]! = a[j]!")
    assert ex == Quant("∃", "j", NAT, n, Quant("∃", "i", NAT, j, Binary("=", get(a, i), get(a, j))))
    assert parse_expr("∀ x y : Int, x + y = y + x") == Quant(
        "∀", "x", INT, None, Quant("∀", "y", INT, None, Binary("=", Binary("+", x, y), Binary("+", y, x)))
    )


@pytest.mark.parametrize(
    ("ascii", "unicode"),
    [
        ("forall i, i < n -> a[i]! >= 0 /\\ a[i]! <= 9", "∀ i, i < n → a[i]! ≥ 0 ∧ a[i]! ≤ 9"),
        ("exists i, i < n /\\ a[i]! != x", "∃ i, i < n ∧ a[i]! ≠ x"),
        ("p \\/ q <-> r", "p ∨ q ↔ r"),
        ("(l.filter (fun v => v = x)).length", "(l.filter (fun v ↦ v = x)).length"),
        ("List.Perm l1 l2", "List.Perm l1 l2"),
    ],
)
def test_ascii_input_equals_unicode_input(ascii: str, unicode: str) -> None:
    assert parse_expr(ascii) == parse_expr(unicode)


# ----------------------------------------------------------------------------------------------------------
# Random trees of every node kind: print then parse is the identity
# ----------------------------------------------------------------------------------------------------------


def _random_expr(rng: np.random.Generator, depth: int, avoid: frozenset[str] = frozenset()) -> Expr:
    """A random tree of every node kind the parser builds; no name in ``avoid`` occurs free in it."""
    names = [v for v in ["a", "b", "x", "k", "l", "s", "result"] if v not in avoid]
    if depth == 0 or rng.random() < 0.15:
        kind = int(rng.integers(6))
        if kind == 0:
            return Lit(int(rng.integers(0, 20)))
        if kind == 1:
            return Lit(bool(rng.integers(2)))
        if kind == 2:
            return Lit(str(rng.choice(["a", "'", "\\", "\n"])), CHAR)
        if kind == 3:
            return Lit(int(rng.integers(0, 9)), INT if rng.random() < 0.5 else NAT)
        return Var(str(rng.choice(names)))
    d = depth - 1
    kind = int(rng.integers(12))
    if kind == 0:
        return Unary(str(rng.choice(["¬", "-"])), _random_expr(rng, d, avoid))
    if kind in (1, 2, 3):
        op = str(rng.choice(list("+-*/%=≠<≤>≥∧∨→↔")))
        return Binary(op, _random_expr(rng, d, avoid), _random_expr(rng, d, avoid))
    if kind == 4:
        fn = str(rng.choice(["size", "length", "toList", "sum", "toNat", "natAbs", "toInt"]))
        return Call(fn, (_random_expr(rng, d, avoid),))
    if kind == 5:
        fn = str(rng.choice(["get", "count", "take", "drop", "perm", "min", "max", "helper"]))
        return Call(fn, (_random_expr(rng, d, avoid), _random_expr(rng, d, avoid)))
    if kind == 6:
        return FilterLength(_random_expr(rng, d, avoid), "v", _random_expr(rng, d, avoid))
    if kind == 7:
        return Ite(_random_expr(rng, d, avoid), _random_expr(rng, d, avoid), _random_expr(rng, d, avoid))
    if kind == 8:
        return Unary("-", Lit(int(rng.integers(0, 9)), INT))
    q = str(rng.choice(["∀", "∃"]))
    var = str(rng.choice(["i", "j", "x"]))
    if kind == 9:
        return Quant(q, var, INT if rng.random() < 0.5 else NAT, None, _random_expr(rng, d, avoid))
    return Quant(q, var, NAT, _random_expr(rng, d, avoid | {var}), _random_expr(rng, d, avoid))


def test_print_then_parse_is_identity_on_random_trees() -> None:
    rng = np.random.default_rng(19)
    for _ in range(400):
        e = _random_expr(rng, 4)
        text = print_expr(e)
        assert parse_expr(text) == e, text
        assert parse_expr(print_expr(e, lean=True)) == e


def test_unbounded_nat_quantifier_with_guard_shaped_body_stays_unbounded() -> None:
    e = Quant("∀", "x", NAT, None, Binary("→", Binary("<", x, n), Var("p")))
    assert print_expr(e) == "∀ x : Nat, (x < n → p)"
    assert parse_expr(print_expr(e)) == e


# ----------------------------------------------------------------------------------------------------------
# Errors with positions
# ----------------------------------------------------------------------------------------------------------

BAD_POSTCOND = """def f_precond (a : Array Int) (k : Nat) : Prop :=
  True

def f_postcond (a : Array Int) (n : Nat) (result : Int) (h_precond : f_precond a k) : Prop :=
  True
"""


@pytest.mark.parametrize(
    ("parse", "text", "line", "column", "words"),
    [
        (parse_expr, "(a + b", 1, 7, "unbalanced"),
        (parse_expr, "a + b)", 1, 6, "unexpected"),
        (parse_expr, "a.size $ 2", 1, 8, "unknown token"),
        (parse_spec, "def f_precond (a : Int) : Prop\n  a > 0\n", 2, 3, "':='"),
        (parse_type, "Array Bool", 1, 7, "Array Bool"),
        (parse_spec, "def f_precond (a : Array Bool) : Prop :=\n  True\n", 1, 26, "Array Bool"),
        (parse_spec, BAD_POSTCOND, 4, 33, "(n : Nat)"),
        (parse_expr, "a = b = c", 1, 7, "chain"),
        (parse_expr, "∀ i, a[i]! > 0", 1, 6, "bound"),
        (parse_expr, "(a - b : Int)", 1, 8, "ambiguous"),
        (parse_expr, "a[i]", 1, 5, "a[i]!"),
        (parse_expr, "l.filter (fun v => v > 0)", 1, 3, "filter"),
        (parse_expr, "min a", 1, 1, "min takes 2"),
        (parse_expr, "a.foo", 1, 3, "unknown method"),
        (parse_expr, "'ab'", 1, 1, "one character"),
    ],
)
def test_syntax_errors_carry_line_and_column(parse, text: str, line: int, column: int, words: str) -> None:
    with pytest.raises(SpecSyntaxError) as info:
        parse(text)
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert words in err.message
    assert f"line {line}, column {column}" in str(err)
    assert isinstance(err, ValueError)


@pytest.mark.parametrize(
    ("post_params", "words"),
    [
        ("(a : Array Int) (result : Int)", "h_precond"),
        ("(a : Array Int) (h_precond : f_precond a)", "(result : τ)"),
        ("(result : Int) (h_precond : f_precond a)", "parameter 1"),
        ("(a : Array Int) (result : Int) (h_precond : f_precond b)", "h_precond"),
        ("(a : Array Int) (result : Int) (h_precond : f_precond a) (z : Int)", "extra"),
    ],
)
def test_postcondition_parameters_must_extend_the_precondition(post_params: str, words: str) -> None:
    text = (
        f"def f_precond (a : Array Int) : Prop :=\n  True\n\ndef f_postcond {post_params} : Prop :=\n  True\n"
    )
    with pytest.raises(SpecSyntaxError, match=None) as info:
        parse_spec(text)
    assert words in info.value.message


def test_spec_name_and_helper_errors() -> None:
    with pytest.raises(SpecSyntaxError, match="f_postcond"):
        parse_spec("def f_precond : Prop :=\n  True\n\n"
                   "def g_postcond (result : Int) (h_precond : f_precond) : Prop :=\n  True")  # fmt: skip
    with pytest.raises(SpecSyntaxError, match="unknown function"):
        parse_spec("def f_precond (x : Int) : Prop :=\n  h x\n\ndef f_postcond (x : Int) (result : Int) "
                   "(h_precond : f_precond x) : Prop :=\n  True")  # fmt: skip
    with pytest.raises(SpecSyntaxError, match="takes 1 argument"):
        parse_spec("def h (x : Int) : Prop :=\n  x > 0\n\ndef f_precond (x : Int) : Prop :=\n  h x x\n\n"
                   "def f_postcond (x : Int) (result : Int) (h_precond : f_precond x) : Prop :=\n"
                   "  True")  # fmt: skip
    with pytest.raises(TypeError, match="text"):
        parse_expr(3)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------------------
# Specs, signatures, types
# ----------------------------------------------------------------------------------------------------------

EXAMPLE = """def f_precond (a : Array Int) (k : Nat) : Prop :=
  a.size > 0 ∧ k ≤ a.size

def f_postcond (a : Array Int) (k : Nat) (result : Int) (h_precond : f_precond a k) : Prop :=
  (∃ i, i < a.size ∧ a[i]! = result) ∧ (∀ i, i < a.size → a[i]! ≤ result)
"""


def test_spec_layout_is_verina_and_round_trips() -> None:
    spec = parse_spec(EXAMPLE)
    assert spec.signature == Signature("f", (Param("a", Ty("Array", "Int")), Param("k", NAT)), INT)
    assert spec.helpers == ()
    assert print_spec(spec) == EXAMPLE
    assert parse_spec(print_spec(spec)) == spec


def test_spec_with_helpers_comments_and_attributes_parses() -> None:
    text = (
        "-- a comment\n@[reducible, simp]\ndef pos (x : Int) : Bool :=\n  x > 0 /- inline -/\n\n"
        "def g_precond (l : List Int) : Prop :=\n  True\n\n"
        "def g_postcond (l : List Int) (result : Nat) (h_precond : g_precond l) : Prop :=\n"
        "  result = (l.filter (fun v => pos v)).length\n"
    )
    spec = parse_spec(text)
    assert [h.name for h in spec.helpers] == ["pos"]
    assert spec.helpers[0].ret == Ty("Bool")
    assert parse_spec(print_spec(spec)) == spec


def test_signature_and_types() -> None:
    sig = parse_signature("def f (a : Array Int) (k : Nat) : Int")
    assert sig == Signature("f", (Param("a", Ty("Array", "Int")), Param("k", NAT)), INT)
    assert parse_signature(print_signature(sig)) == sig
    assert parse_signature("def g (s t : String) : Bool :=").params[1] == Param("t", Ty("String"))
    for t in ["Nat", "Int", "Bool", "Char", "String", "List Char", "Array Nat"]:
        assert print_type(parse_type(t)) == t
    with pytest.raises(SpecSyntaxError, match="Prop"):
        parse_signature("def f (a : Int) : Prop")


def test_printer_rejects_bad_nodes() -> None:
    with pytest.raises(TypeError, match="e must be"):
        print_expr("a > 0")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="identifier"):
        print_expr(Var("fun"))
    with pytest.raises(ValueError, match="Nat"):
        print_expr(Quant("∀", "i", INT, n, Lit(True)))
    with pytest.raises(ValueError, match="size takes 1"):
        print_expr(Call("size", (a, b)))
    with pytest.raises(TypeError, match="spec must be"):
        print_spec("spec")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------------------
# Lean export
# ----------------------------------------------------------------------------------------------------------

GOLDEN_SPECS = {
    "max_above_helper": """def isUpperBound (a : Array Int) (x : Int) : Prop :=
  ∀ i, i < a.size → a[i]! ≤ x

def above (x : Int) (t : Int) : Bool :=
  x > t

def maxAbove_precond (a : Array Int) (t : Int) : Prop :=
  a.size > 0

def maxAbove_postcond (a : Array Int) (t : Int) (result : Int) (h_precond : maxAbove_precond a t) : Prop :=
  isUpperBound a result ∧ (∃ i, i < a.size ∧ a[i]! = result) ∧ (if above result t then \
(a.toList.filter (fun v => above v t)).length ≥ 1 else (a.toList.filter (fun v => above v t)).length = 0)
""",
    "perfect_square_unbounded": """def isPerfectSquare_precond (n : Nat) : Prop :=
  True

def isPerfectSquare_postcond (n : Nat) (result : Bool) (h_precond : isPerfectSquare_precond n) : Prop :=
  result = true ↔ ∃ k : Nat, k * k = n
""",
    "sort_array_perm": """def sortArray_precond (a : Array Int) : Prop :=
  True

def sortArray_postcond (a : Array Int) (result : Array Int) (h_precond : sortArray_precond a) : Prop :=
  (∀ i j, i < j → j < result.size → result[i]! ≤ result[j]!) ∧ List.Perm result.toList a.toList
""",
}


@pytest.mark.parametrize("name", sorted(GOLDEN_SPECS))
def test_lean_export_matches_golden_file_and_reads_back(name: str) -> None:
    spec = parse_spec(GOLDEN_SPECS[name])
    text = lean_spec(spec)
    assert text == (GOLDEN / f"{name}.lean").read_text(encoding="utf-8")
    assert parse_spec(text) == spec
    assert "@[reducible, simp]\ndef" in text and "Mathlib" in text and "import" not in text


def test_lean_export_writes_decidable_bounded_binders() -> None:
    text = lean_spec(parse_spec(GOLDEN_SPECS["sort_array_perm"]))
    assert "∀ j : Nat, j < result.size → ∀ i : Nat, i < j → result[i]! ≤ result[j]!" in text
    assert "∃ i : Nat, i < a.size ∧" in lean_spec(parse_spec(GOLDEN_SPECS["max_above_helper"]))


def test_lean_obligations() -> None:
    spec = parse_spec(EXAMPLE)
    assert lean_obligation(spec, "pre_ok", {"a": [1, -2], "k": 1}) == (
        "theorem pre_ok : f_precond #[1, -2] (1 : Nat) := by decide\n"
    )
    assert lean_obligation(spec, "post_bad", {"a": (4,), "k": 0}, result=-3, negate=True, which="post") == (
        "theorem post_bad : ¬ (f_postcond #[4] (0 : Nat) (-3 : Int) (by decide)) := by decide\n"
    )
    assert lean_value(["a", "\n"], Ty("List", "Char")) == "['a', '\\n']"
    assert lean_value("ab", Ty("String")) == '"ab"'
    assert lean_value(True, Ty("Bool")) == "true"
    assert lean_value(np.int64(5), NAT) == "(5 : Nat)"
    assert lean_value([], Ty("Array", "Nat")) == "#[]"


def test_lean_obligation_bad_inputs_name_the_argument() -> None:
    spec = parse_spec(EXAMPLE)
    with pytest.raises(TypeError, match="parameter a"):
        lean_obligation(spec, "t", {"a": "12", "k": 1})
    with pytest.raises(TypeError, match="inputs\\['k'\\]"):
        lean_obligation(spec, "t", {"a": [1], "k": 1.5})
    with pytest.raises(ValueError, match="parameter k"):
        lean_obligation(spec, "t", {"a": [1], "k": -1})
    with pytest.raises(ValueError, match="missing \\['k'\\]"):
        lean_obligation(spec, "t", {"a": [1]})
    with pytest.raises(ValueError, match="which"):
        lean_obligation(spec, "t", {"a": [1], "k": 1}, which="both")
    with pytest.raises(ValueError, match="result"):
        lean_obligation(spec, "t", {"a": [1], "k": 1}, which="post")
    with pytest.raises(TypeError, match="result"):
        lean_obligation(spec, "t", {"a": [1], "k": 1}, result=True, which="post")
    with pytest.raises(ValueError, match="name"):
        lean_obligation(spec, "not an id", {"a": [1], "k": 1})
    with pytest.raises(TypeError, match="spec"):
        lean_obligation("spec", "t", {})  # type: ignore[arg-type]


def test_lean_available_matches_path() -> None:
    assert lean_available() == (shutil.which("lean") is not None)


@pytest.mark.skipif(not lean_available(), reason="no lean on PATH")
def test_golden_files_elaborate_in_lean(tmp_path: Path) -> None:
    obligations = {
        "max_above_helper": lean_obligation(
            parse_spec(GOLDEN_SPECS["max_above_helper"]), "ok", {"a": [1, 5], "t": 2}, result=5, which="post"
        ),
        "perfect_square_unbounded": lean_obligation(
            parse_spec(GOLDEN_SPECS["perfect_square_unbounded"]), "ok", {"n": 16}
        ),
        "sort_array_perm": lean_obligation(
            parse_spec(GOLDEN_SPECS["sort_array_perm"]), "ok", {"a": [2, 1]}, result=[1, 2], which="post"
        ),
    }
    for name, obligation in obligations.items():
        path = tmp_path / f"{name}.lean"
        path.write_text((GOLDEN / f"{name}.lean").read_text(encoding="utf-8") + "\n" + obligation)
        run = subprocess.run(["lean", str(path)], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout + run.stderr


def test_spec_dataclass_round_trip_from_constructed_nodes() -> None:
    spec = Spec(
        Signature("h", (Param("l", Ty("List", "Int")),), Ty("List", "Int")),
        Lit(True),
        Binary(
            "∧",
            Call("perm", (Var("result"), Var("l"))),
            Binary("=", Call("length", (Var("result"),)), Lit(2)),
        ),
    )
    text = print_spec(spec)
    assert "List.Perm result l ∧ result.length = 2" in text
    assert parse_spec(text) == spec
