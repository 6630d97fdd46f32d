"""The pattern library: seed templates, instantiation on syntax trees, slot reading, cue scores, lookup."""

from __future__ import annotations

import pytest

from neurips26.specbridge.benchmark import PATTERNS
from neurips26.specbridge.minispec.ast import PROP, RESULT, Quant, Var
from neurips26.specbridge.minispec.parser import parse_expr, parse_signature
from neurips26.specbridge.minispec.printer import print_expr
from neurips26.specbridge.minispec.typecheck import elaborate
from neurips26.specbridge.patterns import (
    SEED_LIBRARY,
    SEED_PATTERNS,
    Library,
    Pattern,
    fill_clause,
    instantiate,
    match_cues,
    read_slots,
)

# An example signature and slot values for every seed pattern.
EXAMPLES: dict[str, tuple[str, dict[str, str]]] = {
    "all_satisfy": ("def f (a : Array Int) : Bool", {"a": "a", "p": "x > 0"}),
    "exists_satisfy": ("def f (a : Array Int) : Bool", {"a": "a", "p": "x % 2 = 0"}),
    "first_index_or_sentinel": ("def f (a : Array Int) : Int", {"a": "a", "p": "x < 0"}),
    "max_characterisation": ("def f (a : Array Int) : Int", {"a": "a"}),
    "min_characterisation": ("def f (a : Array Int) : Int", {"a": "a"}),
    "sortedness": ("def f (a : Array Int) : Array Int", {"r": "result"}),
    "permutation": ("def f (a : Array Int) : Array Int", {"r": "result", "a": "a"}),
    "count_matches": ("def f (s : String) : Nat", {"l": "s.toList", "p": "x = 'a' ∨ x = 'e'"}),
    "sum_equals": ("def f (l : List Int) : Int", {"l": "l"}),
    "bool_iff": ("def f (a : Array Int) (x : Int) : Bool", {"c": "∃ i, i < a.size ∧ a[i]! = x"}),
    "bounded_exists_arith": ("def f (n : Nat) : Bool", {"n": "n", "p": "x * x = n"}),
    "prime_like_universal": ("def f (n : Nat) : Bool", {"n": "n"}),
    "nonempty_pre": ("def f (a : Array Int) : Int", {"a": "a"}),
    "index_in_range": ("def f (a : Array Int) (k : Nat) : Int", {"k": "k", "a": "a"}),
    "pointwise_map": ("def f (a : Array Int) : Array Nat", {"a": "a", "f": "x.toNat"}),
    "prefix_take_drop": ("def f (a : Array Int) (k : Nat) : Int", {"l": "a.toList", "k": "k"}),
    "unbounded_int_exists": ("def f (n : Int) : Bool", {"p": "n = 2 * x"}),
}


def test_seed_library_has_one_pattern_per_benchmark_name() -> None:
    assert SEED_LIBRARY.names == PATTERNS
    assert len(SEED_LIBRARY) == 17 and list(SEED_LIBRARY) == list(SEED_PATTERNS)
    assert set(EXAMPLES) == set(PATTERNS)


@pytest.mark.parametrize("name", PATTERNS)
def test_every_seed_template_instantiates_to_a_well_typed_formula(name: str) -> None:
    pattern = SEED_LIBRARY.get(name)
    sig_text, slots = EXAMPLES[name]
    sig = parse_signature(sig_text)
    assert pattern.applies(sig)
    e = instantiate(pattern, slots)
    env = {p.name: p.ty for p in sig.params} | {RESULT: sig.ret}
    assert elaborate(e, env, (), PROP).type == PROP
    assert "⟨" not in print_expr(e) and "__slot" not in print_expr(e)
    # the clause template carries the same slots: fill it, read it back, instantiate again
    text = fill_clause(pattern, slots)
    assert read_slots(pattern, text) == slots
    assert instantiate(pattern, read_slots(pattern, text + ".")) == e  # type: ignore[arg-type]
    assert any(match_cues(pattern, cue) > 0 for cue in pattern.cues)


def test_seed_templates_rebuild_reference_conjuncts_of_benchmark_tasks() -> None:
    lib = SEED_LIBRARY
    iff = lib.get("bool_iff")
    prime = print_expr(instantiate(lib.get("prime_like_universal"), {"n": "n"}))
    assert instantiate(iff, {"c": prime}) == parse_expr(
        "result = true ↔ (2 ≤ n ∧ ∀ k, k < n → 2 ≤ k → n % k ≠ 0)"
    )
    assert instantiate(lib.get("first_index_or_sentinel"), {"a": "a", "p": "x < 0"}) == parse_expr(
        "(result = -1 → ∀ i, i < a.size → ¬ (a[i]! < 0)) ∧ "
        "(result ≠ -1 → 0 ≤ result ∧ result < (a.size : Int) ∧ a[result.toNat]! < 0 ∧ "
        "∀ j, j < result.toNat → ¬ (a[j]! < 0))"
    )
    assert instantiate(lib.get("count_matches"), {"l": "xs.toList", "p": "x % 3 = 0"}) == parse_expr(
        "result = (xs.toList.filter (fun x => x % 3 = 0)).length"
    )
    assert instantiate(lib.get("bounded_exists_arith"), {"n": "n", "p": "x * x = n"}) == parse_expr(
        "∃ k, k < n + 1 ∧ k * k = n"
    )
    assert instantiate(lib.get("unbounded_int_exists"), {"p": "x * x = n"}) == parse_expr(
        "∃ k : Int, k * k = n"
    )
    assert instantiate(lib.get("sortedness"), {"r": "result"}) == parse_expr(
        "∀ i j, i < j → j < result.size → result[i]! ≤ result[j]!"
    )
    assert instantiate(lib.get("max_characterisation"), {"a": "nums"}) == parse_expr(
        "(∃ i, i < nums.size ∧ nums[i]! = result) ∧ (∀ i, i < nums.size → nums[i]! ≤ result)"
    )


def test_instantiation_works_on_trees_not_text() -> None:
    # a compound slot value keeps its meaning without parentheses in the template
    e = instantiate(SEED_LIBRARY.get("index_in_range"), {"k": "k + 1", "a": "a"})
    assert e == parse_expr("k + 1 ≤ a.size")
    e = instantiate(SEED_LIBRARY.get("all_satisfy"), {"a": "a", "p": "x > 0 ∨ x = -1"})
    assert e == parse_expr("∀ i, i < a.size → (a[i]! > 0 ∨ a[i]! = -1)")


def test_template_binders_are_renamed_away_from_slot_variables() -> None:
    # a parameter called k must stay free under the template's ∃ k
    e = instantiate(SEED_LIBRARY.get("unbounded_int_exists"), {"p": "a.toList.sum = (k : Int) * x"})
    assert isinstance(e, Quant) and e.var != "k"
    assert e == parse_expr(f"∃ {e.var} : Int, a.toList.sum = (k : Int) * {e.var}")
    e = instantiate(SEED_LIBRARY.get("all_satisfy"), {"a": "a", "p": "x > i"})
    assert isinstance(e, Quant) and e.var != "i" and Var("i") in _leaves(e.body)


def _leaves(e: object) -> list[object]:
    out: list[object] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Var):
            out.append(x)
        elif hasattr(x, "__dataclass_fields__"):
            stack.extend(getattr(x, f) for f in x.__dataclass_fields__ if f not in ("kind", "ty"))  # type: ignore[union-attr]
        elif isinstance(x, tuple):
            stack.extend(x)
    return out


def test_element_substitution_refuses_capture() -> None:
    with pytest.raises(ValueError, match="slot p"):
        instantiate(SEED_LIBRARY.get("all_satisfy"), {"a": "a", "p": "∃ i, i < 3 ∧ x = i"})


def test_instantiate_names_bad_slots() -> None:
    p = SEED_LIBRARY.get("max_characterisation")
    with pytest.raises(ValueError, match="⟨a⟩"):
        instantiate(p, {})
    with pytest.raises(ValueError, match="⟨a⟩"):
        instantiate(p, {"a": "  "})
    with pytest.raises(ValueError, match="⟨b⟩"):
        instantiate(p, {"a": "a", "b": "c"})
    with pytest.raises(ValueError, match="⟨a⟩.*does not parse"):
        instantiate(p, {"a": "a +"})
    with pytest.raises(TypeError, match="⟨a⟩"):
        instantiate(p, {"a": 3})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="pattern"):
        instantiate("max_characterisation", {"a": "a"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="⟨p⟩"):
        fill_clause(SEED_LIBRARY.get("all_satisfy"), {"a": "a"})


def test_read_slots_rejects_text_off_template() -> None:
    p = SEED_LIBRARY.get("max_characterisation")
    assert read_slots(p, "`result` is an element of `a` and no element of `b` is larger") is None
    assert read_slots(p, "the result is the largest element") is None
    assert (
        read_slots(SEED_LIBRARY.get("sum_equals"), "`result` is the sum of the first `k` elements of `l`")
        is None
    )


def test_applicability_follows_types() -> None:
    sig = parse_signature("def f (n : Int) : Int")
    assert not SEED_LIBRARY.get("bool_iff").applies(sig)
    assert not SEED_LIBRARY.get("max_characterisation").applies(sig)
    assert not SEED_LIBRARY.get("pointwise_map").applies(parse_signature("def f (a : Array Int) : Int"))
    assert SEED_LIBRARY.get("permutation").applies(parse_signature("def f (s : String) (t : String) : Bool"))
    names = {p.name for p in SEED_LIBRARY.applicable(parse_signature("def f (n : Nat) : Bool"))}
    assert {"bool_iff", "prime_like_universal", "bounded_exists_arith"} <= names
    assert "nonempty_pre" not in names


def test_cue_scores_are_lexical_and_whole_phrase() -> None:
    mx, mn = SEED_LIBRARY.get("max_characterisation"), SEED_LIBRARY.get("min_characterisation")
    s = "Return the largest value stored in the integer array `a`."
    assert match_cues(mx, s) > 0 and match_cues(mn, s) == 0.0
    first = SEED_LIBRARY.get("first_index_or_sentinel")
    assert match_cues(first, "Return the index of the first element; -1 if none.") > match_cues(
        first, "Return the index of it."
    )
    count = SEED_LIBRARY.get("count_matches")
    assert match_cues(count, "The COUNT of values") == 1.0
    assert match_cues(count, "It is counted and recounted") == 0.0  # no partial words
    with pytest.raises(TypeError, match="sentence"):
        match_cues(count, None)  # type: ignore[arg-type]


def test_library_lookup_and_validation() -> None:
    lib = Library([SEED_LIBRARY.get("bool_iff"), SEED_LIBRARY.get("sum_equals")])
    assert lib.names == ("bool_iff", "sum_equals") and "sum_equals" in lib and "prime" not in lib
    assert lib.get("sum_equals").spec_template == "result = ⟨l⟩.sum"
    with pytest.raises(ValueError, match="name .*'prime'"):
        lib.get("prime")
    with pytest.raises(ValueError, match="repeated"):
        Library((SEED_PATTERNS[0], SEED_PATTERNS[0]))
    with pytest.raises(TypeError, match="patterns"):
        Library(("bool_iff",))  # type: ignore[arg-type]


def test_pattern_validation_names_the_field() -> None:
    ok = dict(
        name="p", cues=("x",), clause_template="`⟨a⟩` is empty", spec_template="⟨a⟩.size = 0", applies=bool
    )
    assert Pattern(**ok).slots == ("a",)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="same slots"):
        Pattern(**{**ok, "clause_template": "`⟨b⟩` is empty"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="spec_template does not parse"):
        Pattern(**{**ok, "spec_template": "⟨a⟩.size ="})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="name"):
        Pattern(**{**ok, "name": "none"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cues"):
        Pattern(**{**ok, "cues": ("Largest",)})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not closed"):
        Pattern(**{**ok, "spec_template": "⟨a.size = 0"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="applies"):
        Pattern(**{**ok, "applies": None})  # type: ignore[arg-type]
