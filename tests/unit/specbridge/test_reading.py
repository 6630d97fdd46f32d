"""Tests of the shared prose reading of the offline policies."""

from __future__ import annotations

import pytest

from neurips26.specbridge.patterns import SEED_LIBRARY
from neurips26.specbridge.reading import (
    cue_patterns,
    edge_case_phrases,
    element_map,
    element_predicate,
    list_view,
    roles,
    sentences,
    witness_predicate,
)

SIG = "def f (a : Array Int) (k : Int) : Int"


def test_sentences_keep_inner_punctuation():
    text = (
        "Zero counts (it is obtained from k = 0), and a witness k never exceeds n. "
        "So [1, 1, 2] is sorted. 0 too."
    )
    assert sentences(text) == (
        "Zero counts (it is obtained from k = 0), and a witness k never exceeds n.",
        "So [1, 1, 2] is sorted.",
        "0 too.",
    )


@pytest.mark.parametrize(
    ("phrase", "want"),
    [
        ("the entries that are negative", "x < 0"),
        ("every value is positive", "x > 0"),
        ("an element that is even", "x % 2 = 0"),
        ("an element that is odd", "x % 2 = 1"),
        ("an element that is not divisible by 2", "x % 2 = 1"),
        ("one more than an even number", "x % 2 = 1"),
        ("greater than 3", "x > 3"),
        ("strictly greater than zero", "x > 0"),
        ("no larger than -2", "x ≤ -2"),
        ("at most 0", "x ≤ 0"),
        ("greater than `k`", "x > k"),
        ("equal to k", "x = k"),
        ("a multiple of three", "x % 3 = 0"),
        ("different from zero", "x ≠ 0"),
    ],
)
def test_element_predicate(phrase, want):
    assert element_predicate(phrase, SIG) == want


def test_element_predicate_needs_digits_and_parameters():
    assert element_predicate("at least one element", SIG) is None
    assert element_predicate("greater than m", SIG) is None  # m is no parameter
    assert element_predicate("nothing to read here", SIG) is None


def test_witness_and_map():
    assert witness_predicate("is a perfect square", "def f (n : Nat) : Bool") == "x * x = n"
    assert witness_predicate("equals twice some integer", "def f (n : Int) : Bool") == "n = 2 * x"
    assert witness_predicate("whether `d` divides `n`", "def f (d : Int) (n : Int) : Bool") == "n = d * x"
    assert witness_predicate("is a perfect square", "def f (a : Array Int) : Bool") is None
    assert element_map("doubles every element") == "2 * x"
    assert element_map("adds 3 to every element") == "x + 3"
    assert element_map("keeps them") is None


def test_roles_and_views():
    r = roles("def f (l : List Int) (a : Array Int) (k : Nat) (t : Int) : Int")
    assert r.containers == ("l", "a") and r.main == "l"
    assert r.numbers == ("k", "t") and r.bound == "k" and r.result == "Int"
    sig = "def f (l : List Int) (a : Array Int) (s : String) : Int"
    assert [list_view(sig, n) for n in ("l", "a", "s")] == ["l", "a.toList", "s.toList"]


def test_edge_case_phrases():
    text = (
        "Return the index of the first even element. If no element qualifies, return -1. "
        "When several elements qualify, the smallest index is the answer. An empty array is not allowed."
    )
    kinds = {(e.kind, e.outcome) for e in edge_case_phrases(text)}
    assert ("absent", "-1") in kinds
    assert ("ties", "first") in kinds
    assert ("empty", "invalid") in kinds


def test_cue_patterns_sorted_and_filtered():
    hits = cue_patterns("Return the largest element of the array", SEED_LIBRARY)
    assert hits[0][0].name == "max_characterisation" and hits[0][1] >= 1
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True)
    assert cue_patterns("Return the largest element", SEED_LIBRARY, "def f (n : Nat) : Nat") == ()


def test_bad_inputs_are_named():
    with pytest.raises(TypeError, match="description"):
        sentences(3)
    with pytest.raises(TypeError, match="phrase"):
        element_predicate(None, SIG)
    with pytest.raises(ValueError, match="signature"):
        element_predicate("negative", "not a signature")
    with pytest.raises(TypeError, match="library"):
        cue_patterns("largest", ["max"])
    with pytest.raises(TypeError, match="sentence"):
        cue_patterns(1, SEED_LIBRARY)
